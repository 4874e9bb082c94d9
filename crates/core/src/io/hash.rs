//! Content hashes of files and folders.

use std::collections::BTreeMap;
use std::path::Path;

use sha2::Sha256;

use crate::error::{Error, Result};

/// sha256 (hex) and size of a file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    pub sha256: String,
    pub bytes: u64,
}

/// sha256 and size of a file, read as a stream.
pub fn hash_file(path: &Path) -> Result<Digest> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = <Sha256 as sha2::Digest>::new();
    let bytes = std::io::copy(&mut file, &mut hasher).map_err(|e| Error::io(path, e))?;
    Ok(Digest { sha256: hex::encode(sha2::Digest::finalize(hasher)), bytes })
}

/// sha256 (hex) and size of bytes in memory, as [`hash_tree`] records a file.
pub fn content_hash(bytes: &[u8]) -> (String, u64) {
    (hex::encode(<Sha256 as sha2::Digest>::digest(bytes)), bytes.len() as u64)
}

/// sha256 and size of every file below `dir`, by `/`-separated relative path.
pub fn hash_tree(dir: &Path) -> Result<BTreeMap<String, (String, u64)>> {
    let mut out = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| Error::io(dir, e.into()))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(dir).map_err(|e| Error::Bug(e.to_string()))?;
        let rel = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        let bytes = std::fs::read(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
        out.insert(rel, content_hash(&bytes));
    }
    Ok(out)
}
