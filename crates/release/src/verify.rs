//! `blindspot verify DIR`: re-hash every file of a release against its
//! `manifest.json` (the last step of the flow, run by whoever downloads a
//! release). Every difference is reported by file name: missing (listed but
//! absent), extra (present but not listed; `manifest.json` itself excepted)
//! and changed (other sha256 or size). The counts the card states (each
//! config's `num_examples`, the number of questions and of kept questions)
//! are read back and compared with the rows of the data files: a card whose
//! manifest entry was rewritten with it still cannot claim other counts.
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
    /// The card states a count the data files do not hold.
    Count { path: String, what: String },
}

impl Difference {
    pub fn path(&self) -> &str {
        match self {
            Difference::Missing { path }
            | Difference::Extra { path }
            | Difference::Changed { path, .. }
            | Difference::Count { path, .. } => path,
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
    differences.extend(card_counts(dir)?);
    differences.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(Verification { listed: expected.len(), differences })
}

/// The card of a release.
const CARD: &str = "README.md";

/// Every count the card states that its data files contradict. A card
/// without front matter, or a config whose files are missing, is left to the
/// hash comparison.
fn card_counts(dir: &Path) -> Result<Vec<Difference>> {
    // A card or data file that is not a regular file (a pipe would never end)
    // is reported by the hash comparison, not read here.
    let card = dir.join(CARD);
    if !regular(&card) {
        return Ok(Vec::new());
    }
    let Ok(text) = std::fs::read_to_string(&card) else { return Ok(Vec::new()) };
    let Some((front, body)) = text.strip_prefix("---\n").and_then(|t| t.split_once("\n---\n")) else {
        return Ok(Vec::new());
    };
    let Ok(front) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(front) else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    let mut rows: BTreeMap<String, u64> = BTreeMap::new();
    for c in front["configs"].as_sequence().into_iter().flatten() {
        let (Some(name), Some(pattern)) = (c["config_name"].as_str(), c["data_files"][0]["path"].as_str()) else {
            continue;
        };
        if let Some(n) = config_rows(dir, pattern)? {
            rows.insert(name.to_string(), n);
        }
    }
    let mut differ = |what: String| out.push(Difference::Count { path: CARD.into(), what });
    for c in front["dataset_info"].as_sequence().into_iter().flatten() {
        let (Some(name), Some(claimed)) = (c["config_name"].as_str(), c["splits"][0]["num_examples"].as_u64()) else {
            continue;
        };
        if let Some(&actual) = rows.get(name)
            && actual != claimed
        {
            differ(format!("num_examples of config \"{name}\" is {claimed}; its data files hold {actual} rows"));
        }
    }
    // The sentences that count questions: every question (config `full`, or
    // the default config when nothing was removed) and the kept ones.
    let all = rows.get("full").or(rows.get("default")).copied();
    let kept = rows.get("default").copied();
    for (pattern, actual, what) in [
        (r"(?m)^(\d+) questions \(", all, "questions"),
        (r"; (\d+) remain in the default config", kept, "questions in the default config"),
        (r"The default config holds the (\d+) kept questions", kept, "kept questions"),
        (r"so the default config holds (\d+)", kept, "questions in the default config"),
        (r"\(config `full` keeps all (\d+)\)", all, "questions"),
    ] {
        let re = regex::Regex::new(pattern).map_err(|e| Error::Bug(e.to_string()))?;
        for m in re.captures_iter(body) {
            let claimed: u64 = m[1].parse().unwrap_or(u64::MAX);
            if let Some(actual) = actual
                && claimed != actual
            {
                differ(format!("says {claimed} {what}; the data files hold {actual}"));
            }
        }
    }
    Ok(out)
}

/// Whether `path` is a regular file (not a link, a pipe or a folder).
fn regular(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// The rows of a config's data files (`dir/test-*.parquet`, the card's
/// `data_files` path), from their Parquet footers; `None` when it has none.
fn config_rows(dir: &Path, pattern: &str) -> Result<Option<u64>> {
    let Some((folder, file)) = pattern.rsplit_once('/') else { return Ok(None) };
    let Some((prefix, suffix)) = file.split_once('*') else { return Ok(None) };
    if !is_release_relative(folder) {
        return Ok(None);
    }
    let Ok(entries) = std::fs::read_dir(dir.join(folder)) else { return Ok(None) };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.starts_with(prefix) && n.ends_with(suffix) && n.len() >= prefix.len() + suffix.len())
        .collect();
    names.sort();
    if names.is_empty() {
        return Ok(None);
    }
    let mut total = 0u64;
    for n in names {
        let path = dir.join(folder).join(n);
        if !regular(&path) {
            return Ok(None);
        }
        let f = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        let Ok(reader) = parquet::file::reader::SerializedFileReader::new(f) else {
            // Not Parquet: the hash comparison names the file.
            return Ok(None);
        };
        use parquet::file::reader::FileReader;
        total += u64::try_from(reader.metadata().file_metadata().num_rows()).unwrap_or(0);
    }
    Ok(Some(total))
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
                Difference::Count { what, .. } => format!("count: the card {what}"),
                Difference::Changed { expected, actual, .. } => format!(
                    "changed: sha256 {} ({} bytes), manifest.json says {} ({} bytes)",
                    short(&actual.sha256),
                    actual.bytes,
                    short(&expected.sha256),
                    expected.bytes
                ),
            };
            let help = match d {
                Difference::Count { .. } => {
                    "the card and the data disagree although the manifest lists both: one was changed after the \
                     build; rebuild the release with `blindspot build` (or obtain it again)"
                }
                _ => help,
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
                    Difference::Count { .. } => "count",
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
