//! The binary on the small committed fixtures and the bundled demo: builds,
//! byte-identical rebuilds, never overwriting a version, the one-step ingest
//! of every reader, rejected rows.

#[path = "../common/mod.rs"]
mod common;

mod build;
mod images;
mod options;
mod readers;
mod settings;

use std::path::Path;

use common::{blindspot, files_below};

fn read_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_below(dir).into_iter().map(|f| (f.clone(), std::fs::read(dir.join(&f)).unwrap())).collect()
}

/// `rows` as the JSON-lines file `q.jsonl` in a fresh temporary folder.
fn jsonl_file(rows: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("q.jsonl");
    std::fs::write(&data, rows.join("\n")).unwrap();
    (dir, data)
}

/// `blindspot ingest INPUT -o OUT` run as a user runs it: the samples written, and
/// what it printed on stderr (its warnings).
fn ingest_cli(input: &Path) -> (Vec<blindspot::sample::Sample>, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let run = blindspot().arg("ingest").arg(input).arg("-o").arg(&out).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{stderr}");
    (blindspot::io::parquet::read_samples(&out).unwrap(), stderr)
}

/// `blindspot ingest INPUT` exits 1 with every one of `expect` on stderr, and writes nothing.
fn ingest_fails(input: &Path, expect: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let mut assert = blindspot().arg("ingest").arg(input).arg("-o").arg(&out).assert().code(1);
    for e in expect {
        assert = assert.stderr(predicates::str::contains(*e));
    }
    assert!(!out.exists());
}

fn ingest_file(path: &Path) -> blindspot::ingest::Ingested {
    let plan = if path.extension().and_then(|e| e.to_str()) == Some("toml") {
        blindspot::spec::Pipeline::load(path).unwrap().ingest
    } else {
        blindspot::spec::IngestPlan::for_canonical_input(path).unwrap()
    };
    blindspot::ingest::ingest(&plan).unwrap()
}

/// `pipeline` (the text after `[dataset]`) as `p.toml` beside a copy of the canonical
/// fixture (its data, and its image under `images/`).
fn canonical_pipeline(pipeline: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let work = common::fixture_workspace();
    let path = work.path().join("p.toml");
    let text = format!("[dataset]\nname = \"p\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n\n{pipeline}");
    std::fs::write(&path, text).unwrap();
    (work, path)
}
