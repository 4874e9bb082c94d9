//! The lock file next to each pipeline, `pipelines/<name>.lock.json`: what the
//! pipeline was built from (its own hash, the inputs' hashes, the tool version,
//! the seed) and the sha256 of every file it produced. Committed with the
//! pipeline, it lets `blindspot build --check` prove on any machine that the
//! pipeline still rebuilds the published bytes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::error::{Error, Location, Problem, Result, display_path};

/// `pipelines/vqa-rad.toml` → `pipelines/vqa-rad.lock.json`.
pub fn path_for(pipeline: &Path) -> PathBuf {
    let stem = pipeline.file_stem().map_or("pipeline".into(), |s| s.to_string_lossy().to_string());
    pipeline.with_file_name(format!("{stem}.lock.json"))
}

/// The lock of a built release: its manifest's provenance and every file's hash
/// (the manifest's own included).
pub fn render(release_files: &BTreeMap<String, (String, u64)>, manifest: &Value) -> Result<String> {
    let outputs: serde_json::Map<String, Value> =
        release_files.iter().map(|(k, (sha, n))| (k.clone(), json!({"sha256": sha, "bytes": n}))).collect();
    let lock = json!({
        "name": manifest["name"],
        "version": manifest["version"],
        "tool": manifest["tool"],
        "pipeline": manifest["pipeline"],
        "seed": manifest["seed"],
        "inputs": manifest["inputs"],
        "images": manifest["images"],
        "outputs": outputs,
    });
    let mut lock = lock;
    if !manifest["predictions"].is_null() {
        lock["predictions"] = manifest["predictions"].clone();
    }
    let mut text = serde_json::to_string_pretty(&lock).map_err(|e| Error::Bug(e.to_string()))?;
    text.push('\n');
    Ok(text)
}

/// A release's `manifest.json`, as JSON.
pub fn manifest_of(dir: &Path) -> Result<Value> {
    let path = dir.join(super::manifest::FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::Bug(format!("{}: {e}", path.display())))
}
/// Reads a lock file; a missing or malformed one is a located error.
pub fn read(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::one(
                Problem::new(Location::file(path), "no lock file to check against")
                    .help("run `blindspot build` once (into the default releases/ folder) to write it, and commit it"),
            )
        } else {
            Error::io(path, e)
        }
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        Error::one(Problem::new(
            Location {
                file: display_path(path).into(),
                pos: crate::error::Pos::LineCol(e.line() as u64, e.column() as u64),
            },
            format!("the lock file is not valid JSON: {e}"),
        ))
    })?;
    if !value["outputs"].is_object() {
        return Err(Error::one(
            Problem::new(Location::file(path), "the lock file has no \"outputs\" table")
                .help("delete it and run `blindspot build` to write a new one"),
        ));
    }
    Ok(value)
}

/// The first difference between a lock and a fresh build, in words; `None` when the
/// build matches the lock byte for byte.
pub fn first_difference(lock: &Value, manifest: &Value, files: &BTreeMap<String, (String, u64)>) -> Option<String> {
    for key in ["pipeline", "inputs", "images", "predictions", "tool", "seed"] {
        if lock[key] != manifest[key] {
            return Some(format!(
                "the build's {key} differ from the lock's (lock: {}, now: {})",
                lock[key], manifest[key]
            ));
        }
    }
    let outputs = lock["outputs"].as_object()?;
    let names: std::collections::BTreeSet<&String> = outputs.keys().chain(files.keys()).collect();
    for name in names {
        let locked = outputs.get(name).and_then(|o| o["sha256"].as_str());
        let built = files.get(name).map(|(sha, _)| sha.as_str());
        if locked != built {
            return Some(match (locked, built) {
                (Some(l), Some(b)) => format!("{name} differs (lock sha256 {l}, rebuilt {b})"),
                (Some(_), None) => format!("{name} is in the lock but was not rebuilt"),
                _ => format!("{name} was rebuilt but is not in the lock"),
            });
        }
    }
    None
}
