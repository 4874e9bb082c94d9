//! `blindspot verify DIR`: re-hash every file of a release against its
//! `manifest.json` (the last step of the flow, run by whoever downloads a
//! release). Every difference is reported by file name: missing (listed but
//! absent), extra (present but not listed; `manifest.json` itself excepted)
//! and changed (other sha256 or size).
//!
//! Guarantees: reads only; files are hashed as streams, so a release of any
//! size verifies in constant memory; problems are sorted by path, so the
//! first line of the report names the first differing file.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use super::manifest::FILE as MANIFEST;
use crate::error::{Error, Location, Pos, Problem, Result, display_path, line_col};

/// What `manifest.json` says about one file.
pub use crate::io::hash::Digest as Expected;
use crate::io::hash::hash_file;

/// A file that differs from its manifest entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// Listed in the manifest, absent from the release.
    Missing { path: String },
    /// In the release, not listed in the manifest.
    Extra { path: String },
    /// Listed, present, with other content.
    Changed { path: String, expected: Expected, actual: Expected },
}

impl Difference {
    pub fn path(&self) -> &str {
        match self {
            Difference::Missing { path } | Difference::Extra { path } | Difference::Changed { path, .. } => path,
        }
    }
}

/// The result of comparing a release with its manifest.
#[derive(Debug, Clone)]
pub struct Verification {
    /// Files listed in the manifest (the manifest itself not included).
    pub listed: usize,
    /// Sorted by path.
    pub differences: Vec<Difference>,
}

/// Reads the `files` map of `dir/manifest.json`.
pub fn read_manifest(dir: &Path) -> Result<BTreeMap<String, Expected>> {
    let path = dir.join(MANIFEST);
    if !dir.is_dir() {
        return Err(Error::one(
            Problem::new(Location::file(dir), "no such release folder")
                .help("give the folder that holds manifest.json, e.g. releases/<name>/<version>"),
        ));
    }
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::one(
                Problem::new(
                    Location::file(&path),
                    "the release has no manifest.json, so there is nothing to verify against",
                )
                .help("give a folder written by `blindspot build` (releases/<name>/<version>)"),
            ));
        }
        Err(e) => return Err(Error::io(&path, e)),
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        Error::one(
            Problem::new(
                Location { file: display_path(&path).into(), pos: Pos::LineCol(e.line() as u64, e.column() as u64) },
                format!("not valid JSON: {e}"),
            )
            .help("the manifest was damaged after the release was built: restore it or rebuild the release"),
        )
    })?;
    let at = |key: &str| -> Location {
        // Point at the key's line when it can be found in the text.
        match text.find(&format!("\"{key}\"")) {
            Some(offset) => {
                let (line, _) = line_col(&text, offset);
                Location::line(&path, line)
            }
            None => Location::file(&path),
        }
    };
    let Some(files) = value.get("files") else {
        return Err(Error::one(
            Problem::new(Location::file(&path), "no \"files\" map: the manifest does not list the release's files")
                .field("files")
                .help("rebuild the release with `blindspot build` to get a complete manifest"),
        ));
    };
    let Some(files) = files.as_object() else {
        return Err(Error::one(
            Problem::new(at("files"), "must be a map of path -> {sha256, bytes}")
                .field("files")
                .help("rebuild the release with `blindspot build` to get a complete manifest"),
        ));
    };
    let mut out = BTreeMap::new();
    let mut problems = Vec::new();
    for (name, entry) in files {
        let field = format!("files.{name}");
        let sha = entry.get("sha256").and_then(|v| v.as_str());
        let bytes = entry.get("bytes").and_then(|v| v.as_u64());
        let checked = if !is_release_relative(name) {
            Err("is not a path inside the release (absolute, empty or with `..`)".to_string())
        } else if name == MANIFEST {
            Err("lists manifest.json itself, which cannot hold its own hash".to_string())
        } else {
            match (sha, bytes) {
                (Some(s), Some(bytes)) if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    Ok(Expected { sha256: s.to_ascii_lowercase(), bytes })
                }
                (Some(s), Some(_)) => Err(format!("sha256 \"{s}\" is not 64 hex digits")),
                _ => Err("needs {\"sha256\": \"<64 hex digits>\", \"bytes\": <size>}".to_string()),
            }
        };
        match checked {
            Ok(e) => {
                out.insert(name.clone(), e);
            }
            Err(p) => problems.push(
                Problem::new(at(name), p)
                    .field(field)
                    .help("the manifest was damaged after the release was built: restore it or rebuild the release"),
            ),
        }
    }
    if problems.is_empty() { Ok(out) } else { Err(Error::Invalid(problems)) }
}

/// A `/`-separated path that stays inside the release.
fn is_release_relative(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('/')
        && !name.contains('\\')
        && Path::new(name).components().all(|c| matches!(c, Component::Normal(_)))
}

/// Every file below `dir` (not following links) by `/`-separated relative
/// path; anything that is neither a file nor a folder counts as a file, so it
/// is reported rather than skipped, and so does a folder where the manifest
/// lists a file (it is not walked into: the one change is that it is a folder).
fn list_files(dir: &Path, listed: &BTreeMap<String, Expected>) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut walk = walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name().into_iter();
    while let Some(entry) = walk.next() {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(dir).to_path_buf();
            Error::io(path, e.into())
        })?;
        let rel = entry.path().strip_prefix(dir).map_err(|e| Error::Bug(e.to_string()))?;
        let rel = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        if entry.file_type().is_dir() {
            if !listed.contains_key(&rel) {
                continue;
            }
            walk.skip_current_dir();
        }
        out.push(rel);
    }
    Ok(out)
}

/// Compares the release in `dir` with its manifest.
pub fn verify(dir: &Path) -> Result<Verification> {
    let expected = read_manifest(dir)?;
    let present = list_files(dir, &expected)?;
    let mut differences = Vec::new();
    for path in &present {
        if path == MANIFEST {
            continue;
        }
        match expected.get(path) {
            None => differences.push(Difference::Extra { path: path.clone() }),
            Some(want) => {
                let full = dir.join(path);
                if !full.symlink_metadata().map_err(|e| Error::io(&full, e))?.is_file() {
                    // A link or special file in place of a data file is a change.
                    let actual = Expected { sha256: "(not a regular file)".into(), bytes: 0 };
                    differences.push(Difference::Changed { path: path.clone(), expected: want.clone(), actual });
                    continue;
                }
                let actual = hash_file(&full)?;
                if &actual != want {
                    differences.push(Difference::Changed { path: path.clone(), expected: want.clone(), actual });
                }
            }
        }
    }
    let present: std::collections::BTreeSet<&str> = present.iter().map(String::as_str).collect();
    for path in expected.keys() {
        if !present.contains(path.as_str()) {
            differences.push(Difference::Missing { path: path.clone() });
        }
    }
    differences.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(Verification { listed: expected.len(), differences })
}

/// `Ok(n files verified)` or every difference as a located problem.
pub fn verify_or_problems(dir: &Path) -> Result<usize> {
    let v = verify(dir)?;
    if v.differences.is_empty() {
        return Ok(v.listed);
    }
    let help =
        "the release no longer matches its manifest: restore the file or rebuild the release with `blindspot build`";
    let problems = v
        .differences
        .iter()
        .map(|d| {
            let loc = Location::file(dir.join(d.path()));
            let message = match d {
                Difference::Missing { .. } => "missing: listed in manifest.json but not in the release".to_string(),
                Difference::Extra { .. } => "extra: in the release but not listed in manifest.json".to_string(),
                Difference::Changed { expected, actual, .. } if actual.sha256.starts_with('(') => format!(
                    "changed: {} where manifest.json lists a file (sha256 {}, {} bytes)",
                    actual.sha256.trim_matches(['(', ')']),
                    short(&expected.sha256),
                    expected.bytes
                ),
                Difference::Changed { expected, actual, .. } => format!(
                    "changed: sha256 {} ({} bytes), manifest.json says {} ({} bytes)",
                    short(&actual.sha256),
                    actual.bytes,
                    short(&expected.sha256),
                    expected.bytes
                ),
            };
            Problem::new(loc, message).help(help)
        })
        .collect();
    Err(Error::Invalid(problems))
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut map = serde_json::Map::new();
        for (name, bytes) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, bytes).unwrap();
            let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(bytes));
            map.insert(name.to_string(), serde_json::json!({"sha256": sha, "bytes": bytes.len()}));
        }
        let manifest = serde_json::json!({"name": "t", "files": map});
        std::fs::write(dir.path().join(MANIFEST), serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
        dir
    }

    #[test]
    fn a_clean_release_verifies() {
        let dir = release(&[("README.md", b"card"), ("data/a.parquet", b"rows")]);
        assert_eq!(verify_or_problems(dir.path()).unwrap(), 2);
    }

    #[test]
    fn every_difference_is_named_in_path_order() {
        let dir = release(&[("README.md", b"card"), ("data/a.parquet", b"rows"), ("report/x.json", b"{}")]);
        std::fs::write(dir.path().join("data/a.parquet"), b"rowz").unwrap();
        std::fs::remove_file(dir.path().join("report/x.json")).unwrap();
        std::fs::write(dir.path().join("data/b.parquet"), b"new").unwrap();
        let v = verify(dir.path()).unwrap();
        let got: Vec<(&str, &str)> = v
            .differences
            .iter()
            .map(|d| {
                let kind = match d {
                    Difference::Missing { .. } => "missing",
                    Difference::Extra { .. } => "extra",
                    Difference::Changed { .. } => "changed",
                };
                (d.path(), kind)
            })
            .collect();
        assert_eq!(got, vec![("data/a.parquet", "changed"), ("data/b.parquet", "extra"), ("report/x.json", "missing")]);
        let text = verify_or_problems(dir.path()).unwrap_err().to_string();
        assert!(text.lines().next().unwrap().contains("data/a.parquet: changed"), "{text}");
        assert!(text.contains("3 problems found"), "{text}");
    }

    #[test]
    fn a_damaged_manifest_is_located() {
        let dir = release(&[("README.md", b"card")]);
        std::fs::write(dir.path().join(MANIFEST), "{\n  \"files\": {\n    \"README.md\": \n}").unwrap();
        let text = read_manifest(dir.path()).unwrap_err().to_string();
        assert!(text.contains("manifest.json:4:1: not valid JSON"), "{text}");

        std::fs::write(dir.path().join(MANIFEST), "{\"name\": \"t\"}").unwrap();
        let text = read_manifest(dir.path()).unwrap_err().to_string();
        assert!(text.contains("field \"files\": no \"files\" map"), "{text}");

        std::fs::write(dir.path().join(MANIFEST), "{\n\"files\": {\n\"../x\": {\"sha256\": \"ab\", \"bytes\": 1}}}")
            .unwrap();
        let text = read_manifest(dir.path()).unwrap_err().to_string();
        assert!(text.contains("manifest.json:3: field \"files.../x\": is not a path inside the release"), "{text}");
    }
}
