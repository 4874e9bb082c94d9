//! `just bench-image-clusters` / `cargo bench --bench image_clusters`:
//! near-duplicate clustering of 1,000,000 synthetic images' pairs of 64-bit
//! perceptual hashes (900,000 uniform random, a copy of 100,000 of them with
//! 0 to 6 bits of each hash flipped) at the default threshold, with the
//! multi-index and complete linkage of `blindspot::sample::image_hash`.
//! Prints figures; asserts nothing but that every planted copy joined its
//! original (speed is measured here, never in tests).

use std::time::Instant;

use blindspot::sample::image_hash::{DEFAULT_THRESHOLD, Hashes, cluster_roots};
use rand::{Rng, SeedableRng};

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let planted = n / 10;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(42);
    let mut hashes: Vec<Hashes> =
        (0..n - planted).map(|_| Hashes { phash: rng.random(), dhash: rng.random() }).collect();
    let mut pairs = Vec::with_capacity(planted);
    // One copy of each of the first originals (random already): two copies of
    // one image may differ by twice the threshold, and complete linkage rightly
    // keeps such a pair apart.
    for of in 0..planted {
        let mut h = hashes[of];
        for _ in 0..rng.random_range(0..=DEFAULT_THRESHOLD) {
            h.phash ^= 1 << rng.random_range(0..64);
        }
        for _ in 0..rng.random_range(0..=DEFAULT_THRESHOLD) {
            h.dhash ^= 1 << rng.random_range(0..64);
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
