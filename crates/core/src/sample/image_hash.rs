//! Near-duplicate images by perceptual hash: the 64-bit hashes ingest records
//! in `image_facts` (`phash`, `dhash`), their Hamming distance, and the
//! clustering of a set of hashes at a distance threshold.
//!
//! The search is exact and sub-quadratic: multi-index hashing (Norouzi et al.,
//! "Fast search in Hamming space with multi-index hashing", CVPR 2012). A hash
//! is cut into four 16-bit chunks; two hashes at distance ≤ t agree within
//! ⌊t/4⌋ bits on at least one chunk (pigeonhole), so each hash is compared
//! only with the hashes found in the buckets near its own chunks, and every
//! candidate is then checked at full length. Clusters are the connected
//! components of the pairs found (union-find), so the result depends only on
//! the hashes and the threshold, never on the thread count.

use rayon::prelude::*;

/// Default Hamming threshold (of 64 bits) at which two images' `phash` make
/// them near-duplicates. Chosen on the fixture of the shared VQA-RAD images
/// (`tests/real_data/images.rs`): at 6 a resize to half size, a JPEG re-encode at
/// quality 60 and a grayscale copy are all found (recall 1.0) and no distinct
/// radiograph is joined to another; at 8 distinct scans start to join
/// (precision 0.98), at 10 one pair in six is wrong.
pub const DEFAULT_THRESHOLD: u32 = 6;

/// The largest threshold accepted: two unrelated 64-bit hashes differ in 32
/// bits on average, and the index's cost grows with ⌊t/4⌋ (at 12 each hash
/// probes 4 × 697 buckets).
pub const MAX_THRESHOLD: u32 = 12;

/// The hash as written in data files: 16 lowercase hex digits, big-endian.
pub fn to_hex(h: u64) -> String {
    format!("{h:016x}")
}

/// Reads a hash written by [`to_hex`] (upper case accepted); `None` unless it
/// is exactly 16 hex digits.
pub fn from_hex(s: &str) -> Option<u64> {
    (s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit())).then(|| u64::from_str_radix(s, 16).ok()).flatten()
}

/// Hamming distance between two hashes.
pub fn distance(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

const CHUNKS: usize = 4;
const CHUNK_BITS: u32 = 16;

fn chunk(h: u64, c: usize) -> usize {
    ((h >> (CHUNK_BITS * c as u32)) & 0xffff) as usize
}

/// Every 16-bit value within `r` bits of `v`, `v` first.
fn neighbours(v: usize, r: u32, out: &mut Vec<usize>) {
    out.clear();
    out.push(v);
    if r >= 1 {
        for a in 0..CHUNK_BITS {
            out.push(v ^ (1 << a));
            if r >= 2 {
                for b in a + 1..CHUNK_BITS {
                    out.push(v ^ (1 << a) ^ (1 << b));
                    if r >= 3 {
                        for c in b + 1..CHUNK_BITS {
                            out.push(v ^ (1 << a) ^ (1 << b) ^ (1 << c));
                        }
                    }
                }
            }
        }
    }
}

/// A multi-index over a fixed list of hashes: per chunk, the rows whose chunk
/// has each of the 65,536 values (bucket offsets and rows, ascending).
pub struct Index<'a> {
    hashes: &'a [u64],
    offsets: Vec<Vec<u32>>,
    rows: Vec<Vec<u32>>,
}

impl<'a> Index<'a> {
    /// Indexes `hashes` (at most 2³² − 1 of them).
    pub fn new(hashes: &'a [u64]) -> Index<'a> {
        let (offsets, rows) = (0..CHUNKS)
            .into_par_iter()
            .map(|c| {
                let mut offsets = vec![0u32; (1 << CHUNK_BITS) + 1];
                for &h in hashes {
                    offsets[chunk(h, c) + 1] += 1;
                }
                for v in 0..1 << CHUNK_BITS {
                    offsets[v + 1] += offsets[v];
                }
                let mut next = offsets.clone();
                let mut rows = vec![0u32; hashes.len()];
                for (i, &h) in hashes.iter().enumerate() {
                    let v = chunk(h, c);
                    rows[next[v] as usize] = i as u32;
                    next[v] += 1;
                }
                (offsets, rows)
            })
            .unzip();
        Index { hashes, offsets, rows }
    }

    /// Every indexed row within `threshold` of `query`, once each, ascending;
    /// with `after`, only rows greater than it.
    pub fn within(
        &self,
        query: u64,
        threshold: u32,
        after: Option<usize>,
        probe: &mut Vec<usize>,
    ) -> Vec<(usize, u32)> {
        let r = threshold / CHUNKS as u32;
        let mut found = Vec::new();
        for c in 0..CHUNKS {
            neighbours(chunk(query, c), r, probe);
            for &v in probe.iter() {
                let (lo, hi) = (self.offsets[c][v] as usize, self.offsets[c][v + 1] as usize);
                for &j in &self.rows[c][lo..hi] {
                    let j = j as usize;
                    if after.is_some_and(|a| j <= a) {
                        continue;
                    }
                    let h = self.hashes[j];
                    // Reported by the first chunk that brings it: an earlier chunk
                    // within r bits has already found it.
                    if (0..c).any(|e| distance(chunk(query, e) as u64, chunk(h, e) as u64) <= r) {
                        continue;
                    }
                    let d = distance(query, h);
                    if d <= threshold {
                        found.push((j, d));
                    }
                }
            }
        }
        found.sort_unstable();
        found
    }
}

/// Every pair (a < b) of `hashes` within `threshold` bits, with its distance,
/// sorted by (a, b).
pub fn near_pairs(hashes: &[u64], threshold: u32) -> Vec<(usize, usize, u32)> {
    let index = Index::new(hashes);
    hashes
        .par_iter()
        .enumerate()
        .map_init(Vec::new, |probe, (a, &h)| {
            index.within(h, threshold, Some(a), probe).into_iter().map(|(b, d)| (a, b, d)).collect::<Vec<_>>()
        })
        .flatten_iter()
        .collect()
}

/// Every (query row, indexed row, distance) within `threshold`, sorted.
pub fn cross_pairs(queries: &[u64], indexed: &[u64], threshold: u32) -> Vec<(usize, usize, u32)> {
    let index = Index::new(indexed);
    queries
        .par_iter()
        .enumerate()
        .map_init(Vec::new, |probe, (a, &h)| {
            index.within(h, threshold, None, probe).into_iter().map(|(b, d)| (a, b, d)).collect::<Vec<_>>()
        })
        .flatten_iter()
        .collect()
}

/// For each hash, the smallest row of its cluster (connected components of
/// the pairs within `threshold`): rows with one representative are one cluster.
pub fn cluster_roots(hashes: &[u64], threshold: u32) -> Vec<usize> {
    let mut parent: Vec<usize> = (0..hashes.len()).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for (a, b, _) in near_pairs(hashes, threshold) {
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        // The smaller root wins, so a root is its cluster's smallest row.
        if ra < rb {
            parent[rb] = ra;
        } else if rb < ra {
            parent[ra] = rb;
        }
    }
    (0..hashes.len()).map(|i| find(&mut parent, i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn brute(hashes: &[u64], t: u32) -> Vec<(usize, usize, u32)> {
        let mut out = Vec::new();
        for a in 0..hashes.len() {
            for b in a + 1..hashes.len() {
                let d = distance(hashes[a], hashes[b]);
                if d <= t {
                    out.push((a, b, d));
                }
            }
        }
        out
    }

    /// Random hashes with planted copies 0..=t+2 bits away: the index finds
    /// exactly the pairs a brute-force scan finds, at every threshold.
    #[test]
    fn the_index_finds_exactly_the_pairs_within_the_threshold() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut hashes: Vec<u64> = Vec::new();
        for i in 0..3000 {
            if i % 3 == 2 {
                let mut h = hashes[i - 1];
                for _ in 0..rng.random_range(0..15) {
                    h ^= 1 << rng.random_range(0..64);
                }
                hashes.push(h);
            } else {
                hashes.push(rng.random());
            }
        }
        for t in 0..=MAX_THRESHOLD {
            let got = near_pairs(&hashes, t);
            assert_eq!(got, brute(&hashes, t), "threshold {t}");
            assert!(!got.is_empty());
        }
        let cross = cross_pairs(&hashes[..100], &hashes, 5);
        let hs = &hashes;
        let want: Vec<_> = (0..100)
            .flat_map(|a| hs.iter().enumerate().map(move |(b, &h)| (a, b, distance(hs[a], h))))
            .filter(|&(_, _, d)| d <= 5)
            .collect();
        assert_eq!(cross, want);
    }

    #[test]
    fn clusters_are_connected_components_named_by_their_smallest_row() {
        // 0 and 2 are 4 bits apart, 2 and 3 another 4 (0 and 3: 8), 1 is far.
        let hashes = [0u64, u64::MAX, 0xf, 0xff];
        assert_eq!(cluster_roots(&hashes, 4), vec![0, 1, 0, 0]);
        assert_eq!(cluster_roots(&hashes, 3), vec![0, 1, 2, 3]);
    }

    #[test]
    fn hex_round_trips_and_refuses_anything_else() {
        assert_eq!(to_hex(0xab), "00000000000000ab");
        assert_eq!(from_hex("00000000000000AB"), Some(0xab));
        for bad in ["", "ab", "00000000000000ag", "+0000000000000ab", "00000000000000abc"] {
            assert_eq!(from_hex(bad), None, "{bad}");
        }
    }
}
