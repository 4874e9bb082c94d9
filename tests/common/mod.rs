//! Shared helpers of the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The project root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The real-data folder found at build time (see build.rs).
pub fn data_dir() -> PathBuf {
    PathBuf::from(option_env!("BLINDSPOT_DATA_DIR_FOUND").unwrap_or("../shared/data"))
}

/// The blindspot binary, with BLINDSPOT_DATA_DIR set for the test pipelines.
pub fn blindspot() -> Command {
    let mut cmd = Command::cargo_bin("blindspot").expect("binary built");
    cmd.env("BLINDSPOT_DATA_DIR", data_dir());
    cmd
}

/// Every file below `dir`, relative, sorted.
/// Every file below `dir` (relative, sorted), but the marker blindspot leaves in
/// each output folder it writes.
pub fn files_below(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walk(dir)
        .iter()
        .filter(|p| p.file_name().is_none_or(|n| n != blindspot::io::fs::OUTPUT_MARKER))
        .map(|p| p.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
        }
    }
    out
}

/// Loads a pipeline (with `${BLINDSPOT_DATA_DIR}` set to the data folder) and runs ingest.
pub fn ingest_pipeline(path: &Path) -> blindspot::ingest::Ingested {
    let data = data_dir().display().to_string();
    let vars = move |name: &str| (name == "BLINDSPOT_DATA_DIR").then(|| data.clone());
    let p = blindspot::spec::Pipeline::load_with(path, &vars).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    blindspot::ingest::ingest(&p.ingest).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A copy of the `canonical` fixture pipeline (with its data and image) in a
/// temporary folder, for tests that build, change and rebuild it.
pub fn fixture_workspace() -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    let good = root().join("tests/fixtures/good");
    for f in ["canonical.jsonl", "canonical.toml"] {
        std::fs::copy(good.join(f), work.path().join(f)).unwrap();
    }
    std::fs::create_dir(work.path().join("images")).unwrap();
    std::fs::copy(good.join("images/cat.png"), work.path().join("images/cat.png")).unwrap();
    work
}
