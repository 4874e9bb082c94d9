//! The Hugging Face dataset folder (`data/<split>-*.parquet`, the card's
//! `configs`, `save_to_disk`'s Arrow files): which files hold a split. The
//! files themselves are read with the table readers
//! (`blindspot_tables::parquet`), re-exported here.

use std::path::{Path, PathBuf};

use crate::error::{Error, Location, Problem, Result};
pub use crate::tables::parquet::{ClassLabels, Table, read_arrow, read_parquet, read_table, read_table_file};

/// The data files of `split` in a Hugging Face dataset folder, sorted: Parquet files
/// as the Hub lays them out (`<split>-*.parquet` or `<split>.parquet` anywhere below
/// it, or any Parquet file inside a folder named `<split>`), or the Arrow files that
/// `datasets`' `save_to_disk` writes: a `DatasetDict`'s `<split>/data-*.arrow`, or a
/// single `Dataset`'s files as its `state.json` lists them (its split, when recorded,
/// must be `split`).
pub fn hf_split_files(dir: &Path, split: &str) -> Result<Vec<PathBuf>> {
    if let Some(files) = default_config_files(dir, split)? {
        return Ok(files);
    }
    let mut files = Vec::new();
    let mut seen_splits = std::collections::BTreeSet::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry =
            entry.map_err(|e| Error::one(Problem::new(Location::file(dir), format!("cannot list the folder: {e}"))))?;
        let p = entry.path();
        if !matches!(p.extension().and_then(|e| e.to_str()), Some("parquet" | "arrow")) {
            continue;
        }
        let name = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let file_split = name.split(['-', '.']).next().unwrap_or(name);
        let parent = p.parent().and_then(|d| d.file_name()).and_then(|s| s.to_str()).unwrap_or("");
        seen_splits.insert(file_split.to_string());
        if file_split == split || parent == split {
            files.push(p.to_path_buf());
        }
    }
    if files.is_empty() && dir.join("state.json").is_file() {
        return saved_dataset_files(dir, split);
    }
    if files.is_empty() {
        let found: Vec<String> = seen_splits.into_iter().collect();
        let help = if found.is_empty() {
            "a Hugging Face folder holds data/<split>-00000-of-00001.parquet files, or what save_to_disk wrote"
                .to_string()
        } else {
            format!("splits found: {}; set [ingest] split", found.join(", "))
        };
        return Err(Error::one(
            Problem::new(Location::file(dir), format!("no Parquet or Arrow file for split \"{split}\"")).help(help),
        ));
    }
    Ok(files)
}

/// The data files of the default config when the folder's dataset card
/// (`README.md`) lists its configs in the front matter, as the Hub and a
/// blindspot release do: the config marked `default: true`, else the one named
/// `default`. Other configs (a release's `full/`, `removed/`, variants) hold
/// the same ids again and are not the dataset. None when the card lists no
/// configs or no default one.
fn default_config_files(dir: &Path, split: &str) -> Result<Option<Vec<PathBuf>>> {
    let card = dir.join("README.md");
    if !card.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&card).map_err(|e| Error::io(&card, e))?;
    let Some(front) = text.strip_prefix("---\n").and_then(|t| t.split_once("\n---").map(|(f, _)| f)) else {
        return Ok(None);
    };
    let Ok(front) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(front) else { return Ok(None) };
    let configs: Vec<&serde_yaml_ng::Value> = front["configs"].as_sequence().into_iter().flatten().collect();
    let Some(config) = configs
        .iter()
        .find(|c| c["default"].as_bool() == Some(true))
        .or_else(|| configs.iter().find(|c| c["config_name"].as_str() == Some("default")))
    else {
        return Ok(None);
    };
    let name = config["config_name"].as_str().unwrap_or("default");
    // `data_files` is a pattern, a list of patterns, or a list of {split, path}.
    let mut patterns = Vec::new();
    let mut splits = Vec::new();
    match &config["data_files"] {
        serde_yaml_ng::Value::String(p) => patterns.push(p.clone()),
        serde_yaml_ng::Value::Sequence(items) => {
            for it in items {
                match (it.as_str(), it["split"].as_str()) {
                    (Some(p), _) => patterns.push(p.to_string()),
                    (None, Some(s)) => {
                        splits.push(s.to_string());
                        if s == split {
                            match &it["path"] {
                                serde_yaml_ng::Value::String(p) => patterns.push(p.clone()),
                                serde_yaml_ng::Value::Sequence(ps) => {
                                    patterns.extend(ps.iter().filter_map(|p| p.as_str().map(String::from)))
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => return Ok(None),
    }
    let at = Location::file(&card);
    if patterns.is_empty() {
        return Err(Error::one(
            Problem::new(at, format!("the default config \"{name}\" has no data files for split \"{split}\""))
                .help(format!("splits it lists: {}; set [ingest] split", splits.join(", "))),
        ));
    }
    let mut files = Vec::new();
    for pattern in &patterns {
        files.extend(matching_files(dir, pattern)?);
    }
    files.sort();
    files.dedup();
    if files.is_empty() {
        return Err(Error::one(
            Problem::new(
                at,
                format!("the default config \"{name}\" names {}, but no file matches", patterns.join(", ")),
            )
            .help("the card's front matter lists the data files of each config: check the folder is complete"),
        ));
    }
    Ok(Some(files))
}

/// The files below `dir` a data-files pattern (`data/test-*.parquet`) names:
/// `*` matches within a file or folder name, `**` any folders.
fn matching_files(dir: &Path, pattern: &str) -> Result<Vec<PathBuf>> {
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry =
            entry.map_err(|e| Error::one(Problem::new(Location::file(dir), format!("cannot list the folder: {e}"))))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(dir) else { continue };
        let names: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
        if path_matches(&parts, &names) {
            out.push(entry.path().to_path_buf());
        }
    }
    Ok(out)
}

fn path_matches(pattern: &[&str], names: &[&str]) -> bool {
    match (pattern.first(), names.first()) {
        (None, None) => true,
        (Some(&"**"), _) => {
            path_matches(&pattern[1..], names) || (!names.is_empty() && path_matches(pattern, &names[1..]))
        }
        (Some(p), Some(n)) => name_matches(p.as_bytes(), n.as_bytes()) && path_matches(&pattern[1..], &names[1..]),
        _ => false,
    }
}

/// `*` matches any run of characters (none included); everything else itself.
fn name_matches(p: &[u8], n: &[u8]) -> bool {
    match p.split_first() {
        None => n.is_empty(),
        Some((b'*', rest)) => (0..=n.len()).any(|i| name_matches(rest, &n[i..])),
        Some((c, rest)) => n.first() == Some(c) && name_matches(rest, &n[1..]),
    }
}

/// The Arrow files of a `Dataset` saved with `save_to_disk`, in the order its
/// `state.json` lists them.
fn saved_dataset_files(dir: &Path, split: &str) -> Result<Vec<PathBuf>> {
    let state_path = dir.join("state.json");
    let bad = |why: String| {
        Error::one(
            Problem::new(Location::file(&state_path), why)
                .help("a folder written by datasets' save_to_disk has a state.json listing its Arrow files"),
        )
    };
    let text = std::fs::read(&state_path).map_err(|e| Error::io(&state_path, e))?;
    let state: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| bad(format!("not a readable state.json: {e}")))?;
    if let Some(saved) = state.get("_split").and_then(|s| s.as_str())
        && saved != split
    {
        return Err(Error::one(
            Problem::new(
                Location::file(&state_path),
                format!("this saved dataset holds split \"{saved}\", not \"{split}\""),
            )
            .help(format!("set [ingest] split = \"{saved}\"")),
        ));
    }
    let listed =
        state.get("_data_files").and_then(|f| f.as_array()).ok_or_else(|| bad("no \"_data_files\" list".into()))?;
    let mut files = Vec::with_capacity(listed.len());
    for entry in listed {
        let name = entry
            .get("filename")
            .and_then(|f| f.as_str())
            .ok_or_else(|| bad("a data file without \"filename\"".into()))?;
        let path = Path::new(name);
        if path.is_absolute() || path.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
            return Err(bad(format!("data file \"{name}\" is not a plain name inside the folder")));
        }
        files.push(dir.join(path));
    }
    if files.is_empty() {
        return Err(bad("\"_data_files\" is empty".into()));
    }
    Ok(files)
}

#[cfg(test)]
mod pattern_tests {
    use super::{name_matches, path_matches};

    #[test]
    fn data_files_patterns() {
        assert!(name_matches(b"test-*.parquet", b"test-00000-of-00001.parquet"));
        assert!(!name_matches(b"test-*.parquet", b"train-00000-of-00001.parquet"));
        assert!(path_matches(&["data", "test-*.parquet"], &["data", "test-00000-of-00001.parquet"]));
        assert!(!path_matches(&["data", "test-*.parquet"], &["full", "test-00000-of-00001.parquet"]));
        assert!(path_matches(&["**", "*.parquet"], &["a", "b", "x.parquet"]));
    }
}
