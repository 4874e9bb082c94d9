//! The embedding cache: one file per (model fingerprint, set of unique texts),
//! named by the sha256 of both, under `.blindspot/cache/embed/`. A rerun on
//! the same content reads the file instead of running the model. Files are
//! written to a temporary name and renamed, so a reader never sees half a
//! file; one that does not match its expected size is ignored (recomputed).
//!
//! Layout: `BSEMB001`, then n and dim as little-endian u64, then n × dim
//! little-endian f32.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::Embeddings;
use crate::error::{Error, Result};

const MAGIC: &[u8; 8] = b"BSEMB001";

/// `.blindspot/cache/embed`, relative to the working directory.
pub fn default_dir() -> PathBuf {
    PathBuf::from(".blindspot/cache/embed")
}

/// sha256 of the fingerprint and the texts (each length-prefixed).
pub fn key(fingerprint: &str, texts: &[&str]) -> String {
    let mut h = Sha256::new();
    h.update((fingerprint.len() as u64).to_le_bytes());
    h.update(fingerprint.as_bytes());
    for t in texts {
        h.update((t.len() as u64).to_le_bytes());
        h.update(t.as_bytes());
    }
    hex::encode(h.finalize())
}

fn path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.bin"))
}

/// The cached embeddings, if a complete file of the expected shape exists.
pub fn read(dir: &Path, key: &str, n: usize, dim: usize) -> Option<Embeddings> {
    let bytes = std::fs::read(path(dir, key)).ok()?;
    if bytes.len() != 24 + n * dim * 4 || &bytes[..8] != MAGIC {
        return None;
    }
    let rd = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8])) as usize;
    if rd(8) != n || rd(16) != dim {
        return None;
    }
    let data = bytes[24..].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    Some(Embeddings::new(dim, data))
}

/// Writes the embeddings under `key`, atomically.
pub fn write(dir: &Path, key: &str, e: &Embeddings) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|err| Error::io(dir, err))?;
    let mut bytes = Vec::with_capacity(24 + e.data.len() * 4);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(e.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&(e.dim as u64).to_le_bytes());
    for v in &e.data {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    let tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir).map_err(|err| Error::io(dir, err))?;
    crate::io::fs::write_bytes(tmp.path(), &bytes)?;
    let target = path(dir, key);
    tmp.persist(&target).map_err(|err| Error::io(&target, err.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_other_shapes() {
        let tmp = tempfile::tempdir().unwrap();
        let e = Embeddings::new(3, vec![0.5, -0.25, 1.0, 0.0, 1e-7, -3.5]);
        let k = key("m", &["a", "b"]);
        assert_ne!(k, key("m", &["ab"]), "texts are length-prefixed");
        assert_ne!(k, key("m2", &["a", "b"]));
        assert!(read(tmp.path(), &k, 2, 3).is_none());
        write(tmp.path(), &k, &e).unwrap();
        assert_eq!(read(tmp.path(), &k, 2, 3), Some(e));
        assert!(read(tmp.path(), &k, 3, 2).is_none());
        std::fs::write(path(tmp.path(), &k), b"BSEMB001short").unwrap();
        assert!(read(tmp.path(), &k, 2, 3).is_none());
    }
}
