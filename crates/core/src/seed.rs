//! Seeds derived from (pipeline seed, stage, id): every random choice in
//! blindspot is a pure function of these, whatever the thread count.

use rand::{Rng, RngCore};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

/// A 64-bit seed for one (seed, stage, key) triple.
pub fn rng_for(seed: u64, stage: &str, key: &str) -> u64 {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    h.update((stage.len() as u64).to_le_bytes());
    h.update(stage.as_bytes());
    h.update(key.as_bytes());
    let d = h.finalize();
    u64::from_le_bytes(d[..8].try_into().expect("sha256 has 32 bytes"))
}

/// `rng.random_range(low..high)` of rand 0.9 for `usize`, word for word: when `high`
/// fits in `u32` (always, in practice), one 32-bit word widened by the range and a
/// second word when the first lands in the biased zone, as rand draws them, without
/// its generic path's overhead (the forest draws tens of millions). Tested against
/// `random_range` in `random_below_is_random_range`.
#[inline]
pub fn random_below(rng: &mut ChaCha8Rng, low: usize, high: usize) -> usize {
    debug_assert!(low < high, "empty range {low}..{high}");
    if high > u32::MAX as usize {
        return rng.random_range(low..high);
    }
    let range = (high - low) as u32;
    let wide = u64::from(rng.next_u32()) * u64::from(range);
    let (mut hi, lo) = ((wide >> 32) as u32, wide as u32);
    if lo > range.wrapping_neg() {
        let next = ((u64::from(rng.next_u32()) * u64::from(range)) >> 32) as u32;
        hi += u32::from(lo.checked_add(next).is_none());
    }
    low + hi as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn random_below_is_random_range() {
        let ranges = [
            (0, 1),
            (0, 2),
            (0, 3),
            (5, 12),
            (0, 1000),
            (17, 700_017),
            (0, 1 << 31),
            (3, (1 << 31) + 4),
            (0, u32::MAX as usize - 1),
            (0, u32::MAX as usize),
            (1, u32::MAX as usize),
            (0, u32::MAX as usize + 10),
        ];
        for (low, high) in ranges {
            for seed in 0..3 {
                let mut ours = ChaCha8Rng::seed_from_u64(seed);
                let mut theirs = ours.clone();
                for _ in 0..20_000 {
                    assert_eq!(random_below(&mut ours, low, high), theirs.random_range(low..high), "{low}..{high}");
                }
                // Both consumed the same words.
                assert_eq!(ours.next_u64(), theirs.next_u64(), "{low}..{high}");
            }
        }
    }
}
