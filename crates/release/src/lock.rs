//! The lock file next to each pipeline, `pipelines/<name>.lock.json`: what the
//! pipeline was built from (its own hash, the inputs' hashes, the tool version,
//! the seed) and the sha256 of every file it produced. Committed with the
//! pipeline, it lets `blindspot build --check` prove on any machine that the
//! pipeline still rebuilds the published bytes.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Location, Problem, Result, display_path};
use crate::manifest::{FileEntry, Images, InputEntry, Manifest, PipelineFile, PredictionInput, Tool, without_position};

/// A lock file as written and read back. Its provenance fields are the
/// manifest's own types, so `build --check` compares like with like.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lock {
    pub name: String,
    pub version: String,
    pub tool: Tool,
    pub pipeline: PipelineFile,
    pub seed: u64,
    pub inputs: Vec<InputEntry>,
    pub images: Images,
    /// Every file of the release, `manifest.json` included.
    pub outputs: BTreeMap<String, FileEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predictions: Option<Vec<PredictionInput>>,
}

/// The lock of a built release: its manifest's provenance and every file's hash
/// (the manifest's own included).
pub fn render(release_files: &BTreeMap<String, (String, u64)>, manifest: &Manifest) -> Result<String> {
    let lock = Lock {
        name: manifest.name.clone(),
        version: manifest.version.clone(),
        tool: manifest.tool.clone(),
        pipeline: manifest.pipeline.clone(),
        seed: manifest.seed,
        inputs: manifest.inputs.clone(),
        images: manifest.images.clone(),
        outputs: release_files
            .iter()
            .map(|(k, (sha, n))| (k.clone(), FileEntry { sha256: sha.clone(), bytes: *n }))
            .collect(),
        predictions: manifest.predictions.clone(),
    };
    let mut text = serde_json::to_string_pretty(&lock).map_err(|e| Error::Bug(e.to_string()))?;
    text.push('\n');
    Ok(text)
}

/// A release's `manifest.json`, as written by this build (a manifest that does
/// not read back is a bug).
pub fn manifest_of(dir: &Path) -> Result<Manifest> {
    let path = dir.join(super::manifest::FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::Bug(format!("{}: {e}", path.display())))
}
/// Reads a lock file; a missing, malformed or foreign one is a located error.
pub fn read(path: &Path) -> Result<Lock> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::one(crate::spec::plan::no_lock_file(path))
        } else {
            Error::io(path, e)
        }
    })?;
    serde_json::from_str(&text).map_err(|e| {
        let at = Location {
            file: display_path(path).into(),
            pos: crate::error::Pos::LineCol(e.line() as u64, e.column() as u64),
        };
        let problem = if e.is_data() {
            Problem::new(at, format!("the lock file is not one `blindspot build` writes: {}", without_position(&e)))
                .help("delete it and run `blindspot build` to write a new one")
        } else {
            Problem::new(at, format!("the lock file is not valid JSON: {e}"))
        };
        Error::one(problem)
    })
}

/// `"key": value` of two provenance fields, in words, when they differ.
fn differs<T: PartialEq + Serialize>(key: &str, lock: &T, now: &T) -> Option<String> {
    let json = |v: &T| serde_json::to_string(v).unwrap_or_default();
    (lock != now)
        .then(|| format!("the build's {key} differ from the lock's (lock: {}, now: {})", json(lock), json(now)))
}

/// The first difference between a lock and a fresh build, in words; `None` when the
/// build matches the lock byte for byte.
pub fn first_difference(lock: &Lock, manifest: &Manifest, files: &BTreeMap<String, (String, u64)>) -> Option<String> {
    differs("pipeline", &lock.pipeline, &manifest.pipeline)
        .or_else(|| differs("inputs", &lock.inputs, &manifest.inputs))
        .or_else(|| differs("images", &lock.images, &manifest.images))
        .or_else(|| differs("predictions", &lock.predictions, &manifest.predictions))
        .or_else(|| differs("tool", &lock.tool, &manifest.tool))
        .or_else(|| differs("seed", &lock.seed, &manifest.seed))
        .or_else(|| {
            let names: std::collections::BTreeSet<&String> = lock.outputs.keys().chain(files.keys()).collect();
            names.into_iter().find_map(|name| {
                let locked = lock.outputs.get(name).map(|o| o.sha256.as_str());
                let built = files.get(name).map(|(sha, _)| sha.as_str());
                (locked != built).then(|| match (locked, built) {
                    (Some(l), Some(b)) => format!("{name} differs (lock sha256 {l}, rebuilt {b})"),
                    (Some(_), None) => format!("{name} is in the lock but was not rebuilt"),
                    _ => format!("{name} was rebuilt but is not in the lock"),
                })
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Counts;

    fn manifest() -> Manifest {
        Manifest {
            name: "t".into(),
            version: "1.0.0".into(),
            tool: Tool { name: "blindspot".into(), version: "0".into() },
            pipeline: PipelineFile { path: "t.toml".into(), sha256: "a".repeat(64) },
            seed: 7,
            inputs: vec![InputEntry { path: "../data/t.jsonl".into(), sha256: "b".repeat(64), bytes: 10 }],
            images: Images { count: 0, sha256_of_list: "c".repeat(64) },
            counts: Counts { records: 1, filtered: 0, rejected: 0, samples: 1 },
            files: BTreeMap::new(),
            predictions: None,
        }
    }

    #[test]
    fn a_lock_reads_back_and_names_the_first_difference() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.lock.json");
        let files = BTreeMap::from([("README.md".to_string(), ("d".repeat(64), 5))]);
        std::fs::write(&path, render(&files, &manifest()).unwrap()).unwrap();
        let lock = read(&path).unwrap();
        assert_eq!(lock.outputs["README.md"].bytes, 5);
        assert_eq!(first_difference(&lock, &manifest(), &files), None);

        let mut other = manifest();
        other.seed = 8;
        assert_eq!(
            first_difference(&lock, &other, &files).unwrap(),
            "the build's seed differ from the lock's (lock: 7, now: 8)"
        );
        other = manifest();
        other.inputs[0].bytes = 11;
        let diff = first_difference(&lock, &other, &files).unwrap();
        assert!(
            diff.starts_with("the build's inputs differ from the lock's (lock: [{\"path\":\"../data/t.jsonl\""),
            "{diff}"
        );
    }

    #[test]
    fn a_lock_without_outputs_is_located() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.lock.json");
        let text = render(&BTreeMap::new(), &manifest()).unwrap().replace("\"outputs\"", "\"outputz\"");
        std::fs::write(&path, text).unwrap();
        let err = read(&path).unwrap_err().to_string();
        assert!(
            err.contains(
                "t.lock.json:25:1: the lock file is not one `blindspot build` writes: missing field `outputs`"
            ),
            "{err}"
        );
    }
}
