//! `blindspot verify DIR`: re-hash every file of a release against its
//! `manifest.json` (the last step of the flow, run by whoever downloads a
//! release). Every difference is reported by file name: missing (listed but
//! absent), extra (present but not listed; `manifest.json` itself excepted)
//! and changed (other sha256 or size). The counts the card states (each
//! config's `num_examples`, the number of questions and of kept questions)
//! are read back and compared with the rows of the data files: a card whose
//! manifest entry was rewritten with it still cannot claim other counts.
//! What the release's own files state about the others is checked the same
//! way, since a manifest rewritten after an edit covers the edit: every
//! config the card's front matter lists has data files; every file
//! `croissant.json` lists exists with the sha256 it states, and every data
//! file of a config is listed there; every embedded image hashes to its
//! row's `image_facts.sha256`.
//!
//! Guarantees: reads only; files are hashed as streams, so a release of any
//! size verifies in constant memory; problems are sorted by path, so the
//! first line of the report names the first differing file.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use super::manifest::{FILE as MANIFEST, Manifest, missing_field, without_position};
use crate::card::front_matter::FrontMatter;
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
    /// A file of the release states something about another (a config, a
    /// hash) that the other's bytes contradict; `path` is the file whose
    /// statement is wrong, or the data file whose own facts disagree.
    Stated { path: String, what: String },
}

impl Difference {
    pub fn path(&self) -> &str {
        match self {
            Difference::Missing { path }
            | Difference::Extra { path }
            | Difference::Changed { path, .. }
            | Difference::Count { path, .. }
            | Difference::Stated { path, .. } => path,
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
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| {
        let at = Location { file: display_path(&path).into(), pos: Pos::LineCol(e.line() as u64, e.column() as u64) };
        let damaged = "the manifest was damaged after the release was built: restore it or rebuild the release";
        Error::one(if !e.is_data() {
            Problem::new(at, format!("not valid JSON: {e}")).help(damaged)
        } else if let Some(field) = missing_field(&e) {
            Problem::new(at, "missing: the manifest is not one `blindspot build` writes").field(field).help(damaged)
        } else {
            Problem::new(at, format!("not the form `blindspot build` writes: {}", without_position(&e))).help(damaged)
        })
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
    let mut out = BTreeMap::new();
    let mut problems = Vec::new();
    for (name, entry) in manifest.files {
        let field = format!("files.{name}");
        let checked = if !is_release_relative(&name) {
            Err("is not a path inside the release (absolute, empty or with `..`)".to_string())
        } else if name == MANIFEST {
            Err("lists manifest.json itself, which cannot hold its own hash".to_string())
        } else if entry.sha256.len() == 64 && entry.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(Expected { sha256: entry.sha256.to_ascii_lowercase(), bytes: entry.bytes })
        } else {
            Err(format!("sha256 \"{}\" is not 64 hex digits", entry.sha256))
        };
        match checked {
            Ok(e) => {
                out.insert(name, e);
            }
            Err(p) => problems.push(
                Problem::new(at(&name), p)
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
    // The sha256 of every regular file read, for the statements checked after.
    let mut hashed: BTreeMap<String, String> = BTreeMap::new();
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
                hashed.insert(path.clone(), actual.sha256.clone());
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
    let configs = card_configs(dir)?;
    differences.extend(card_counts(dir, &configs)?);
    // A file whose hash already differs from the manifest is named once, as changed.
    let changed: std::collections::BTreeSet<String> = differences
        .iter()
        .filter(|d| matches!(d, Difference::Changed { .. } | Difference::Missing { .. }))
        .map(|d| d.path().to_string())
        .collect();
    differences.extend(config_files(dir, &configs, &changed)?);
    differences.extend(croissant_hashes(dir, &configs, &hashed, &changed)?);
    differences.extend(image_facts(dir, &configs, &changed)?);
    differences.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(Verification { listed: expected.len(), differences })
}

/// The card of a release.
const CARD: &str = "README.md";

/// A config as the card's front matter lists it, with the files its
/// `data_files` pattern finds.
struct CardConfig {
    name: String,
    /// As written: `data/test-*.parquet`.
    pattern: String,
    /// Release-relative paths, sorted.
    files: Vec<String>,
    /// Rows of the files, when every one is a readable Parquet file.
    rows: Option<u64>,
}

/// The card's front matter (`None` without one) and body, read only when
/// the card is a regular file (a pipe would never end; the hash comparison
/// names it).
fn card_text(dir: &Path) -> Option<(FrontMatter, String)> {
    let card = dir.join(CARD);
    if !regular(&card) {
        return None;
    }
    let text = std::fs::read_to_string(&card).ok()?;
    let (front, body) = text.strip_prefix("---\n").and_then(|t| t.split_once("\n---\n"))?;
    let front = serde_yaml_ng::from_str::<FrontMatter>(front).ok()?;
    Some((front, body.to_string()))
}

/// The configs the card's front matter lists, in its order.
fn card_configs(dir: &Path) -> Result<Vec<CardConfig>> {
    let Some((front, _)) = card_text(dir) else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for c in front.configs.iter().flatten() {
        let Some(pattern) = c.first_pattern() else { continue };
        let files = config_files_of(dir, pattern);
        let rows = if files.is_empty() { None } else { config_rows(dir, &files)? };
        out.push(CardConfig { name: c.config_name.clone(), pattern: pattern.to_string(), files, rows });
    }
    Ok(out)
}

/// Every config the card lists without a data file, and every config its
/// `dataset_info` states a size for that `configs` does not list.
fn config_files(
    dir: &Path,
    configs: &[CardConfig],
    changed: &std::collections::BTreeSet<String>,
) -> Result<Vec<Difference>> {
    let mut out = Vec::new();
    for c in configs {
        if c.files.is_empty() {
            out.push(Difference::Stated {
                path: CARD.into(),
                what: format!(
                    "lists config \"{}\" with data files {}, but the release has no such file",
                    c.name, c.pattern
                ),
            });
        } else if c.rows.is_none() {
            for f in c.files.iter().filter(|f| !changed.contains(*f)) {
                if parquet_rows(&dir.join(f))?.is_none() {
                    out.push(Difference::Stated {
                        path: f.clone(),
                        what: format!("not a readable Parquet file, though the card lists it in config \"{}\"", c.name),
                    });
                }
            }
        }
    }
    if let Some((front, _)) = card_text(dir) {
        for name in front.dataset_info.iter().map(|c| &c.config_name) {
            if !configs.iter().any(|k| k.name == *name) {
                out.push(Difference::Stated {
                    path: CARD.into(),
                    what: format!("dataset_info states the size of config \"{name}\", which its configs do not list"),
                });
            }
        }
    }
    Ok(out)
}

/// The Croissant file's statements about the data files: each `cr:FileObject`
/// names a file of the release whose sha256 is the one it states, and every
/// data file of a config the card lists is one of them. A release without
/// `croissant.json` (or with one that is not a regular file) has nothing to
/// check here; a file already named as changed or missing is not named again.
fn croissant_hashes(
    dir: &Path,
    configs: &[CardConfig],
    hashed: &BTreeMap<String, String>,
    changed: &std::collections::BTreeSet<String>,
) -> Result<Vec<Difference>> {
    const CROISSANT: &str = "croissant.json";
    let path = dir.join(CROISSANT);
    if !regular(&path) || changed.contains(CROISSANT) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mut differ = |what: String| out.push(Difference::Stated { path: CROISSANT.into(), what });
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let doc: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            differ(format!("not valid JSON ({e}), so the files it describes cannot be checked"));
            return Ok(out);
        }
    };
    let mut listed = std::collections::BTreeSet::new();
    for f in doc["distribution"].as_array().into_iter().flatten() {
        if f["@type"].as_str() != Some("cr:FileObject") {
            continue;
        }
        let Some(url) = f["contentUrl"].as_str() else { continue };
        listed.insert(url.to_string());
        let Some(stated) = f["sha256"].as_str() else {
            differ(format!("lists {url} without its sha256"));
            continue;
        };
        if !is_release_relative(url) {
            differ(format!("lists {url}, which is not a path inside the release"));
            continue;
        }
        if changed.contains(url) {
            continue;
        }
        match hashed.get(url) {
            None if !dir.join(url).exists() => differ(format!("lists {url}, which is not in the release")),
            // Present but not a regular file: the comparison with the manifest names it.
            None => {}
            Some(actual) if !actual.eq_ignore_ascii_case(stated) => {
                differ(format!("states sha256 {} for {url}, but the file's sha256 is {}", short(stated), short(actual)))
            }
            Some(_) => {}
        }
    }
    for c in configs {
        for f in c.files.iter().filter(|f| !listed.contains(*f)) {
            differ(format!("does not list {f}, a data file of config \"{}\"", c.name));
        }
    }
    Ok(out)
}

/// Every embedded image of a config's data files whose bytes are not the
/// sha256 its row's `image_facts` states (the first one of a file named, and
/// how many more there are). Files whose hash already differs from the
/// manifest, or that are not readable Parquet, are named once elsewhere.
fn image_facts(
    dir: &Path,
    configs: &[CardConfig],
    changed: &std::collections::BTreeSet<String>,
) -> Result<Vec<Difference>> {
    let mut out = Vec::new();
    let files: std::collections::BTreeSet<&String> = configs.iter().flat_map(|c| &c.files).collect();
    for f in files {
        let path = dir.join(f);
        if changed.contains(f) || !regular(&path) || parquet_rows(&path)?.is_none() {
            continue;
        }
        let found = match crate::io::parquet::image_hash_mismatches(&path) {
            Ok(Some(found)) => found,
            // No image columns (a duplicates config): nothing to compare.
            Ok(None) => continue,
            Err(e) => {
                out.push(Difference::Stated {
                    path: f.clone(),
                    what: format!("its images cannot be read to check their hashes: {e}"),
                });
                continue;
            }
        };
        let Some(first) = found.first() else { continue };
        let more = match found.len() - 1 {
            0 => String::new(),
            n => format!(" ({n} more image(s) of this file likewise)"),
        };
        out.push(Difference::Stated {
            path: f.clone(),
            what: format!(
                "row {} (id \"{}\"), image {}: image_facts.sha256 is {} but the embedded image's sha256 is {}{more}",
                first.row,
                first.id,
                first.image + 1,
                short(&first.stated),
                short(&first.actual)
            ),
        });
    }
    Ok(out)
}

/// Every count the card states that its data files contradict. A card
/// without front matter, or a config whose files are missing, is left to the
/// checks of the files themselves.
fn card_counts(dir: &Path, configs: &[CardConfig]) -> Result<Vec<Difference>> {
    let Some((front, body)) = card_text(dir) else { return Ok(Vec::new()) };
    let body = body.as_str();
    let mut out = Vec::new();
    let rows: BTreeMap<String, u64> = configs.iter().filter_map(|c| Some((c.name.clone(), c.rows?))).collect();
    let mut differ = |what: String| out.push(Difference::Count { path: CARD.into(), what });
    for c in &front.dataset_info {
        let Some(claimed) = c.info.splits.first().map(|s| s.num_examples as u64) else { continue };
        let name = &c.config_name;
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

/// The release-relative files a config's `data_files` path
/// (`data/test-*.parquet`) finds, sorted; none when the path is not of that
/// shape or leaves the release.
fn config_files_of(dir: &Path, pattern: &str) -> Vec<String> {
    let Some((folder, file)) = pattern.rsplit_once('/') else { return Vec::new() };
    if !is_release_relative(folder) {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(dir.join(folder)) else { return Vec::new() };
    let matches = |n: &str| match file.split_once('*') {
        Some((prefix, suffix)) => {
            n.starts_with(prefix) && n.ends_with(suffix) && n.len() >= prefix.len() + suffix.len()
        }
        None => n == file,
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| matches(n))
        .map(|n| format!("{folder}/{n}"))
        .collect();
    names.sort();
    names
}

/// The rows of a config's data files, from their Parquet footers; `None`
/// when one is not a readable regular Parquet file.
fn config_rows(dir: &Path, files: &[String]) -> Result<Option<u64>> {
    let mut total = 0u64;
    for f in files {
        match parquet_rows(&dir.join(f))? {
            Some(n) => total += n,
            None => return Ok(None),
        }
    }
    Ok(Some(total))
}

/// The rows of one Parquet file from its footer; `None` when it is not a
/// regular file or not Parquet.
fn parquet_rows(path: &Path) -> Result<Option<u64>> {
    if !regular(path) {
        return Ok(None);
    }
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let Ok(reader) = parquet::file::reader::SerializedFileReader::new(f) else { return Ok(None) };
    use parquet::file::reader::FileReader;
    Ok(Some(u64::try_from(reader.metadata().file_metadata().num_rows()).unwrap_or(0)))
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
                Difference::Stated { what, .. } => format!("disagrees: {what}"),
                Difference::Changed { expected, actual, .. } => format!(
                    "changed: sha256 {} ({} bytes), manifest.json says {} ({} bytes)",
                    short(&actual.sha256),
                    actual.bytes,
                    short(&expected.sha256),
                    expected.bytes
                ),
            };
            let help = match d {
                Difference::Count { .. } | Difference::Stated { .. } => {
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
    use crate::manifest::{self, FileEntry};

    fn release(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut map = BTreeMap::new();
        for (name, bytes) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, bytes).unwrap();
            let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(bytes));
            map.insert(name.to_string(), FileEntry { sha256: sha, bytes: bytes.len() as u64 });
        }
        std::fs::write(dir.path().join(MANIFEST), manifest::to_text(&manifest_of(map)).unwrap()).unwrap();
        dir
    }

    /// A manifest listing `files`, the rest made up.
    fn manifest_of(files: BTreeMap<String, FileEntry>) -> Manifest {
        Manifest {
            name: "t".into(),
            version: "1.0.0".into(),
            tool: manifest::Tool { name: "blindspot".into(), version: "0".into() },
            pipeline: manifest::PipelineFile { path: "t.toml".into(), sha256: "0".repeat(64) },
            seed: 1,
            inputs: Vec::new(),
            images: manifest::Images { count: 0, sha256_of_list: "0".repeat(64) },
            counts: manifest::Counts { records: 0, filtered: 0, rejected: 0, samples: 0 },
            files,
            predictions: None,
        }
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
                    Difference::Stated { .. } => "stated",
                };
                (d.path(), kind)
            })
            .collect();
        assert_eq!(got, vec![("data/a.parquet", "changed"), ("data/b.parquet", "extra"), ("report/x.json", "missing")]);
        let text = verify_or_problems(dir.path()).unwrap_err().to_string();
        assert!(text.lines().next().unwrap().contains("data/a.parquet: changed"), "{text}");
        assert!(text.contains("3 problems found"), "{text}");
    }

    /// A config whose `data_files` is one pattern (the short form the Hub
    /// reads too) is checked like one with a list.
    #[test]
    fn a_config_in_the_short_form_is_checked() {
        let card = b"---\nconfigs:\n- config_name: full\n  data_files: full/*.parquet\n---\n# card\n";
        let dir = release(&[("README.md", card)]);
        let v = verify(dir.path()).unwrap();
        let stated: Vec<String> = v
            .differences
            .iter()
            .filter_map(|d| match d {
                Difference::Stated { what, .. } => Some(what.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            stated,
            vec!["lists config \"full\" with data files full/*.parquet, but the release has no such file".to_string()]
        );
    }

    #[test]
    fn a_damaged_manifest_is_located() {
        let dir = release(&[("README.md", b"card")]);
        std::fs::write(dir.path().join(MANIFEST), "{\n  \"files\": {\n    \"README.md\": \n}").unwrap();
        let text = read_manifest(dir.path()).unwrap_err().to_string();
        assert!(text.contains("manifest.json:4:1: not valid JSON"), "{text}");

        let full = manifest::to_text(&manifest_of(BTreeMap::new())).unwrap();
        std::fs::write(dir.path().join(MANIFEST), full.replace("\"files\"", "\"filez\"")).unwrap();
        let text = read_manifest(dir.path()).unwrap_err().to_string();
        assert!(text.contains("manifest.json:25:1: field \"files\": missing: the manifest is not one"), "{text}");

        std::fs::write(dir.path().join(MANIFEST), full.replace("\"seed\": 1", "\"seed\": \"one\"")).unwrap();
        let text = read_manifest(dir.path()).unwrap_err().to_string();
        assert!(
            text.contains("manifest.json:12:15: not the form `blindspot build` writes: invalid type: string \"one\""),
            "{text}"
        );

        let entry = FileEntry { sha256: "ab".repeat(32), bytes: 1 };
        let bad = manifest_of(BTreeMap::from([("../x".to_string(), entry)]));
        std::fs::write(dir.path().join(MANIFEST), manifest::to_text(&bad).unwrap()).unwrap();
        let text = read_manifest(dir.path()).unwrap_err().to_string();
        assert!(text.contains("manifest.json:25: field \"files.../x\": is not a path inside the release"), "{text}");
    }
}
