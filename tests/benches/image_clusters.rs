//! `just bench-image-clusters` / `cargo bench --bench image_clusters`:
//! near-duplicate clustering of 1,000,000 synthetic 64-bit perceptual hashes
//! (900,000 uniform random, 100,000 copies of one of them with 0 to 6 bits
//! flipped) at the default threshold, with the multi-index of
//! `blindspot::sample::image_hash`. Prints figures; asserts nothing but that
//! every planted copy joined its original (speed is measured here, never in tests).

use std::time::Instant;

use blindspot::sample::image_hash::{DEFAULT_THRESHOLD, cluster_roots};
use rand::{Rng, SeedableRng};

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let planted = n / 10;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(42);
    let mut hashes: Vec<u64> = (0..n - planted).map(|_| rng.random()).collect();
    let mut pairs = Vec::with_capacity(planted);
    for _ in 0..planted {
        let of = rng.random_range(0..n - planted);
        let mut h = hashes[of];
        for _ in 0..rng.random_range(0..=DEFAULT_THRESHOLD) {
            h ^= 1 << rng.random_range(0..64);
        }
        pairs.push((of, hashes.len()));
        hashes.push(h);
    }
    let threads = rayon::current_num_threads();
    let start = Instant::now();
    let roots = cluster_roots(&hashes, DEFAULT_THRESHOLD);
    let secs = start.elapsed().as_secs_f64();
    let joined = pairs.iter().filter(|&&(a, b)| roots[a] == roots[b]).count();
    let mut sizes = std::collections::HashMap::new();
    for &r in &roots {
        *sizes.entry(r).or_insert(0usize) += 1;
    }
    let clusters = sizes.values().filter(|&&k| k > 1).count();
    println!(
        "{n} hashes, threshold {DEFAULT_THRESHOLD}, {threads} threads: {secs:.2} s; {clusters} clusters of 2 or more; \
         {joined} of {planted} planted copies joined their original"
    );
    assert_eq!(joined, planted);
}
