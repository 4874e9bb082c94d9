//! Shared by the fuzz targets: readers that only take a path get the input
//! written to a file in one temporary folder kept for the whole run, and an
//! `Error::Bug` (exit 2) counts as a crash like a panic does.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use blindspot::Error;

/// The run's scratch folder (removed when the process exits normally).
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temporary folder")).path()
}

/// Writes `data` to `name` in the scratch folder and returns its path.
pub fn file(name: &str, data: &[u8]) -> PathBuf {
    let path = scratch().join(name);
    std::fs::write(&path, data).expect("write the fuzz input");
    path
}

/// Readers may reject any input, but never with a bug.
pub fn no_bug<T>(result: blindspot::Result<T>) {
    if let Err(Error::Bug(msg)) = result {
        panic!("Error::Bug on fuzz input: {msg}");
    }
}
