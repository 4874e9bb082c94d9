//! Seeds derived from (pipeline seed, stage, id): every random choice in
//! blindspot is a pure function of these, whatever the thread count.

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
