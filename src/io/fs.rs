//! Writing files so that a failed or interrupted run leaves nothing
//! half-written: durable writes, writes through a temporary file renamed into
//! place, folders filled beside their target and swapped in.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Writes `bytes` to `path` durably.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = File::create(path).map_err(|e| Error::io(path, e))?;
    f.write_all(bytes).map_err(|e| Error::io(path, e))?;
    f.sync_all().map_err(|e| Error::io(path, e))
}

/// Writes `value` as pretty JSON (with a final newline) durably.
pub fn write_json<T: serde::Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(|e| Error::Bug(e.to_string()))?;
    text.push('\n');
    write_bytes(path, text.as_bytes())
}

/// Writes through a temporary file in the same folder, then renames it into place.
pub fn atomic_write(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let dir = existing_parent(path)?;
    let tmp = tempfile::Builder::new().prefix(".blindspot-").tempfile_in(&dir).map_err(|e| Error::io(&dir, e))?;
    write(tmp.path())?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// Fills a temporary folder beside `dir`, then swaps it into place (an
/// existing `dir` is replaced only once the new one is complete).
pub fn atomic_dir(dir: &Path, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let parent = existing_parent(dir)?;
    let tmp = tempfile::Builder::new().prefix(".blindspot-").tempdir_in(&parent).map_err(|e| Error::io(&parent, e))?;
    fill(tmp.path())?;
    if dir.exists() {
        let old = tempfile::Builder::new()
            .prefix(".blindspot-old-")
            .tempdir_in(&parent)
            .map_err(|e| Error::io(&parent, e))?;
        let old_path = old.path().join("old");
        std::fs::rename(dir, &old_path).map_err(|e| Error::io(dir, e))?;
        std::fs::rename(tmp.keep(), dir).map_err(|e| Error::io(dir, e))?;
        drop(old);
    } else {
        std::fs::rename(tmp.keep(), dir).map_err(|e| Error::io(dir, e))?;
    }
    Ok(())
}

/// The folder a path lives in (`.` for a bare name), created if missing:
/// temporary files go there so the final rename stays on one filesystem.
fn existing_parent(path: &Path) -> Result<PathBuf> {
    let parent = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
    Ok(parent)
}

/// Creates the folder `path` will live in.
pub fn mkdir_for(path: &Path) -> Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))
}

/// Makes a rename durable where the platform allows it.
pub fn sync_dir(dir: &Path) {
    if let Ok(f) = std::fs::File::open(dir) {
        let _ = f.sync_all();
    }
}
