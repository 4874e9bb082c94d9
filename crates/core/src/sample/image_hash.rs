//! Near-duplicate images by perceptual hash: the two 64-bit hashes ingest
//! records in `image_facts` (`phash`, a DCT hash, and `dhash`, a gradient
//! hash), their Hamming distance, and the clustering of a set of images at a
//! distance threshold.
//!
//! Two images are near-duplicates when *both* hashes are within the threshold:
//! the hashes come from different families (frequencies against neighbouring
//! pixels), so two different diagrams that happen to share one hash's low
//! frequencies are told apart by the other. A flat image (solid, blank: a
//! `phash` with fewer than [`MIN_MINORITY_BITS`] bits set or cleared) is near
//! nothing: its hash says only that it has no structure, and every blank page
//! of a benchmark would otherwise be one "image".
//!
//! A cluster is a set of images every two of which are near-duplicates
//! (complete linkage): pairs are merged closest first, and two clusters join
//! only when every image of one is near every image of the other, so a chain
//! of small steps never joins two ends that differ by more than the threshold.
//!
//! The search is exact and sub-quadratic: multi-index hashing (Norouzi et al.,
//! "Fast search in Hamming space with multi-index hashing", CVPR 2012) on the
//! `phash`. A hash is cut into four 16-bit chunks; two hashes at distance ≤ t
//! agree within ⌊t/4⌋ bits on at least one chunk (pigeonhole), so each hash is
//! compared only with the hashes found in the buckets near its own chunks, and
//! every candidate is then checked at full length, on both hashes. The result
//! depends only on the hashes and the threshold, never on the thread count.

use rayon::prelude::*;

/// Default Hamming threshold (of 64 bits) within which two images' `phash`
/// and `dhash` make them near-duplicates. Chosen on the fixture of the shared
/// VQA-RAD images (`tests/real_data/images.rs`): at 6 a resize to half size, a
/// JPEG re-encode at quality 60 and a grayscale copy are all found (recall
/// 1.0) and no distinct radiograph is joined to another; at 8 distinct scans
/// start to join (precision 0.98), at 10 one pair in six is wrong.
pub const DEFAULT_THRESHOLD: u32 = 6;

/// A `phash` with fewer bits than this set, or fewer cleared, is flat. The DCT
/// hash thresholds 64 coefficients at their median, so an image with structure
/// sets about half of them; an image with none (a solid colour, a blank page)
/// has its coefficients tied and sets all or almost none. Eight is a quarter of
/// the half: below it, the hash carries fewer bits than two unrelated images'
/// hashes differ by at the threshold.
pub const MIN_MINORITY_BITS: u32 = 8;

/// The two perceptual hashes of one image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hashes {
    pub phash: u64,
    pub dhash: u64,
}

impl Hashes {
    /// Both hashes as written in `image_facts`; `None` unless both read.
    pub fn read(phash: Option<&str>, dhash: Option<&str>) -> Option<Hashes> {
        Some(Hashes { phash: from_hex(phash?)?, dhash: from_hex(dhash?)? })
    }

    /// Whether the image has no structure to compare ([`MIN_MINORITY_BITS`]).
    pub fn is_flat(self) -> bool {
        is_flat(self.phash)
    }
}

/// Whether a `phash` is flat: fewer than [`MIN_MINORITY_BITS`] bits set or cleared.
pub fn is_flat(phash: u64) -> bool {
    let ones = phash.count_ones();
    ones.min(64 - ones) < MIN_MINORITY_BITS
}

/// Whether two images are near-duplicates at `threshold`: neither is flat and
/// both their `phash` and their `dhash` differ in at most `threshold` bits.
pub fn near(a: Hashes, b: Hashes, threshold: u32) -> bool {
    !a.is_flat() && !b.is_flat() && distance(a.phash, b.phash) <= threshold && distance(a.dhash, b.dhash) <= threshold
}

/// Where a video's frames are sampled for near-duplicate search, as fractions
/// of its duration (of its frame count, for a video given as frames): five
/// points spread evenly, away from the first and last frames (fades, titles).
/// Two videos are compared frame by frame at these points with [`near`].
pub const VIDEO_FRACTIONS: [f64; 5] = [0.1, 0.3, 0.5, 0.7, 0.9];

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

/// Every pair (a < b) of `hashes` that are near-duplicates ([`near`]), with
/// their `phash` distance, sorted by (a, b).
pub fn near_pairs(hashes: &[Hashes], threshold: u32) -> Vec<(usize, usize, u32)> {
    let phashes: Vec<u64> = hashes.iter().map(|h| h.phash).collect();
    let index = Index::new(&phashes);
    hashes
        .par_iter()
        .enumerate()
        .filter(|(_, h)| !h.is_flat())
        .map_init(Vec::new, |probe, (a, &h)| {
            index
                .within(h.phash, threshold, Some(a), probe)
                .into_iter()
                .filter(|&(b, _)| near(h, hashes[b], threshold))
                .map(|(b, d)| (a, b, d))
                .collect::<Vec<_>>()
        })
        .flatten_iter()
        .collect()
}

/// Every (query row, indexed row, `phash` distance) of near-duplicates
/// ([`near`]), sorted.
pub fn cross_pairs(queries: &[Hashes], indexed: &[Hashes], threshold: u32) -> Vec<(usize, usize, u32)> {
    let phashes: Vec<u64> = indexed.iter().map(|h| h.phash).collect();
    let index = Index::new(&phashes);
    queries
        .par_iter()
        .enumerate()
        .filter(|(_, h)| !h.is_flat())
        .map_init(Vec::new, |probe, (a, &h)| {
            index
                .within(h.phash, threshold, None, probe)
                .into_iter()
                .filter(|&(b, _)| near(h, indexed[b], threshold))
                .map(|(b, d)| (a, b, d))
                .collect::<Vec<_>>()
        })
        .flatten_iter()
        .collect()
}

/// Every (query row, listed row, distance) of a query image's `phash` within
/// `threshold` of a listed `phash` (a published list carries that hash alone,
/// so it is the only check); flat hashes on either side match nothing.
pub fn cross_pairs_phash(queries: &[Hashes], listed: &[u64], threshold: u32) -> Vec<(usize, usize, u32)> {
    let index = Index::new(listed);
    queries
        .par_iter()
        .enumerate()
        .filter(|(_, h)| !h.is_flat())
        .map_init(Vec::new, |probe, (a, &h)| {
            index
                .within(h.phash, threshold, None, probe)
                .into_iter()
                .filter(|&(b, _)| !is_flat(listed[b]))
                .map(|(b, d)| (a, b, d))
                .collect::<Vec<_>>()
        })
        .flatten_iter()
        .collect()
}

/// For each image, the smallest row of its cluster: complete linkage over the
/// near-duplicate pairs, closest pair first (by the two distances' sum, then
/// rows), two clusters joining only when every cross pair is near. Rows with
/// one representative are one cluster; a flat image is always alone.
pub fn cluster_roots(hashes: &[Hashes], threshold: u32) -> Vec<usize> {
    let pairs: Vec<(u32, usize, usize)> = near_pairs(hashes, threshold)
        .into_iter()
        .map(|(a, b, d)| (d + distance(hashes[a].dhash, hashes[b].dhash), a, b))
        .collect();
    complete_linkage(hashes.len(), pairs, |x, y| near(hashes[x], hashes[y], threshold))
}

/// For each of `n` items, the smallest row of its cluster: complete linkage
/// over the near `pairs` (distance, a, b), closest first, two clusters joining
/// only when `near` holds for every cross pair. The rule of
/// [`cluster_roots`], for items compared by more than one pair of hashes (a
/// video's sampled frames).
pub fn complete_linkage(
    n: usize,
    mut pairs: Vec<(u32, usize, usize)>,
    near: impl Fn(usize, usize) -> bool,
) -> Vec<usize> {
    pairs.sort_unstable();
    let mut root: Vec<usize> = (0..n).collect();
    let mut members: std::collections::HashMap<usize, Vec<usize>> = std::collections::HashMap::new();
    for (_, a, b) in pairs {
        let (ra, rb) = (root[a], root[b]);
        if ra == rb {
            continue;
        }
        let (keep, gone) = (ra.min(rb), ra.max(rb));
        let joins = {
            let of = |r: usize| members.get(&r).map_or_else(|| vec![r], Clone::clone);
            let (xs, ys) = (of(keep), of(gone));
            xs.iter().all(|&x| ys.iter().all(|&y| near(x, y)))
        };
        if !joins {
            continue;
        }
        // The smaller root stays, so a root is its cluster's smallest row.
        let moved = members.remove(&gone).unwrap_or_else(|| vec![gone]);
        for &m in &moved {
            root[m] = keep;
        }
        members.entry(keep).or_insert_with(|| vec![keep]).extend(moved);
    }
    root
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn brute(hashes: &[Hashes], t: u32) -> Vec<(usize, usize, u32)> {
        let mut out = Vec::new();
        for a in 0..hashes.len() {
            for b in a + 1..hashes.len() {
                if near(hashes[a], hashes[b], t) {
                    out.push((a, b, distance(hashes[a].phash, hashes[b].phash)));
                }
            }
        }
        out
    }

    /// Random hashes with planted copies 0..=t+2 bits away (in each hash): the
    /// index finds exactly the pairs a brute-force scan finds, at every threshold.
    #[test]
    fn the_index_finds_exactly_the_pairs_within_the_threshold() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut hashes: Vec<Hashes> = Vec::new();
        for i in 0..3000 {
            if i % 3 == 2 {
                let mut h = hashes[i - 1];
                for _ in 0..rng.random_range(0..15) {
                    h.phash ^= 1 << rng.random_range(0..64);
                }
                for _ in 0..rng.random_range(0..15) {
                    h.dhash ^= 1 << rng.random_range(0..64);
                }
                hashes.push(h);
            } else {
                hashes.push(Hashes { phash: rng.random(), dhash: rng.random() });
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
            .flat_map(|a| hs.iter().enumerate().map(move |(b, &h)| (a, b, h)))
            .filter(|&(a, _, h)| near(hs[a], h, 5))
            .map(|(a, b, h)| (a, b, distance(hs[a].phash, h.phash)))
            .collect();
        assert_eq!(cross, want);
    }

    /// Hashes with the same bits in both families.
    fn both(h: u64) -> Hashes {
        Hashes { phash: h, dhash: h }
    }

    const BASE: u64 = 0x5a5a_5a5a_5a5a_5a5a;

    /// A chain whose neighbours are 4 bits apart and whose ends 8 apart: at 6
    /// bits the ends are never in one cluster; a pair within 4 bits and a third
    /// image near only one of them stays apart; a far image is alone.
    #[test]
    fn clusters_are_complete_linkage_never_chains() {
        let hashes = [both(BASE), both(u64::MAX ^ BASE), both(BASE ^ 0xf), both(BASE ^ 0xff)];
        let roots = cluster_roots(&hashes, 6);
        assert_eq!(roots[1], 1);
        assert_ne!(roots[0], roots[3], "{roots:?}");
        // The closest pairs (0-2 and 2-3 both at 4 + 4) merge first in row order.
        assert_eq!(roots, vec![0, 1, 0, 3]);
        // At 8 bits every pair is near: one cluster.
        assert_eq!(cluster_roots(&hashes, 8), vec![0, 1, 0, 0]);
        assert_eq!(cluster_roots(&hashes, 3), vec![0, 1, 2, 3]);
    }

    /// Both hashes must agree: a pair near in `phash` alone, or `dhash` alone, is not a pair.
    #[test]
    fn a_pair_needs_both_hashes_within_the_threshold() {
        let a = both(BASE);
        let p_only = Hashes { phash: BASE ^ 1, dhash: !BASE };
        let d_only = Hashes { phash: !BASE, dhash: BASE ^ 1 };
        assert!(near(a, both(BASE ^ 0x3f), 6));
        assert!(!near(a, p_only, 6));
        assert!(!near(a, d_only, 6));
        assert_eq!(near_pairs(&[a, p_only, d_only], 12), vec![]);
    }

    /// A solid or blank image's hash (all bits, or all but a few, set or
    /// cleared) is near nothing, not even an identical one.
    #[test]
    fn flat_hashes_never_pair() {
        for h in [0u64, u64::MAX, 0x7f, !0x7f, 1 << 40] {
            assert!(is_flat(h), "{h:016x}");
            assert_eq!(near_pairs(&[both(h), both(h)], 12), vec![], "{h:016x}");
            assert_eq!(cluster_roots(&[both(h), both(h)], 12), vec![0, 1]);
        }
        for h in [0xffu64, !0xff, BASE] {
            assert!(!is_flat(h), "{h:016x}");
        }
        assert_eq!(cross_pairs_phash(&[both(0), both(BASE)], &[0, BASE ^ 1], 6), vec![(1, 1, 1)]);
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
