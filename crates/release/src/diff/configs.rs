//! The configs and splits of a release: from the card's YAML front matter
//! (`configs:` with `config_name` and `data_files`), as Hugging Face reads
//! it, else `data/*.parquet` as config `default`; globs stay inside the release.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path};

use super::SplitFiles;
use crate::card::front_matter::{DataFileEntry, DataFiles, FrontMatter};
use crate::error::{Error, Location, Problem, Result, line_col};

/// The card of a release.
const CARD: &str = "README.md";

/// The YAML front matter of a card and the line it starts on (1-based line of
/// its first YAML line), or `None` when the card has none.
fn front_matter(text: &str) -> Option<(&str, u64)> {
    let rest = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], 2));
        }
        offset += line.len();
    }
    None
}

/// The configs and splits of the release in `dir`: from the card's
/// `configs:` list when present, else `data/*.parquet` as config `default`
/// with the split taken from each file name (`{split}-00000-of-00001.parquet`).
pub fn discover_configs(dir: &Path) -> Result<Vec<SplitFiles>> {
    let card = dir.join(CARD);
    let text = match std::fs::read_to_string(&card) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(&card, e)),
    };
    let entries = match text.as_deref().and_then(front_matter) {
        Some((yaml, first_line)) => {
            let fm: FrontMatter = serde_yaml_ng::from_str(yaml).map_err(|e| {
                let loc = match e.location() {
                    Some(l) => Location::line(&card, first_line + l.line() as u64 - 1),
                    None => Location::file(&card),
                };
                Error::one(
                    Problem::new(loc, format!("the card's YAML front matter cannot be read: {e}"))
                        .field("configs")
                        .help("fix the front matter (configs: [{config_name, data_files}]) or rebuild the release"),
                )
            })?;
            fm.configs
        }
        None => None,
    };
    let Some(entries) = entries else {
        return fallback_default(dir);
    };
    let text = text.unwrap_or_default();
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for entry in &entries {
        let at = |needle: &str| match text.find(needle) {
            Some(o) => Location::line(&card, line_col(&text, o).0),
            None => Location::file(&card),
        };
        let field = format!("configs.{}.data_files", entry.config_name);
        let splits: Vec<(String, Vec<String>)> = match &entry.data_files {
            None => {
                problems.push(
                    Problem::new(at(&entry.config_name), "the config lists no data_files")
                        .field(field)
                        .help("give data_files: [{split, path}] for every config"),
                );
                continue;
            }
            Some(DataFiles::One(p)) => vec![("train".into(), vec![p.clone()])],
            Some(DataFiles::Many(list)) => {
                let mut by_split: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for e in list {
                    match e {
                        DataFileEntry::Path(p) => by_split.entry("train".into()).or_default().push(p.clone()),
                        DataFileEntry::Split { split, path } => {
                            by_split.entry(split.clone()).or_default().extend(path.list())
                        }
                    }
                }
                by_split.into_iter().collect()
            }
        };
        for (split, patterns) in splits {
            let mut files = BTreeSet::new();
            for pattern in &patterns {
                match expand(dir, pattern) {
                    Ok(found) if found.is_empty() => problems.push(
                        Problem::new(at(pattern), format!("data_files path \"{pattern}\" matches no file"))
                            .field(field.clone())
                            .help("the release is incomplete: run `blindspot verify` on it, or rebuild it"),
                    ),
                    Ok(found) => files.extend(found),
                    Err(message) => problems.push(
                        Problem::new(at(pattern), message)
                            .field(field.clone())
                            .help("data_files paths are relative to the release folder"),
                    ),
                }
            }
            out.push(SplitFiles { config: entry.config_name.clone(), split, files: files.into_iter().collect() });
        }
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(problems));
    }
    out.sort_by(|a, b| (&a.config, &a.split).cmp(&(&b.config, &b.split)));
    Ok(out)
}

fn fallback_default(dir: &Path) -> Result<Vec<SplitFiles>> {
    let mut by_split: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in expand(dir, "data/*.parquet").map_err(|m| Error::one(Problem::new(Location::file(dir), m)))? {
        let name = file.rsplit('/').next().unwrap_or(&file);
        let split = name.split_once('-').map_or("train", |(s, _)| s).to_string();
        by_split.entry(split).or_default().push(file);
    }
    if by_split.is_empty() {
        return Err(Error::one(
            Problem::new(Location::file(dir), "no configs in README.md and no data/*.parquet: not a release folder")
                .help("give a folder written by `blindspot build` (releases/<name>/<version>)"),
        ));
    }
    Ok(by_split.into_iter().map(|(split, files)| SplitFiles { config: "default".into(), split, files }).collect())
}

/// The files below `dir` matching the release-relative glob `pattern`,
/// relative and sorted.
fn expand(dir: &Path, pattern: &str) -> std::result::Result<Vec<String>, String> {
    let inside = !pattern.is_empty()
        && !pattern.starts_with('/')
        && Path::new(pattern).components().all(|c| matches!(c, Component::Normal(_)));
    if !inside {
        return Err(format!("data_files path \"{pattern}\" is not inside the release"));
    }
    let full = format!("{}/{pattern}", glob::Pattern::escape(&dir.to_string_lossy()));
    let paths = glob::glob(&full).map_err(|e| format!("data_files path \"{pattern}\" is not a valid glob: {e}"))?;
    let mut out = Vec::new();
    for p in paths {
        let p = p.map_err(|e| format!("data_files path \"{pattern}\": {e}"))?;
        if p.is_file() {
            let rel = p.strip_prefix(dir).unwrap_or(&p);
            out.push(rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"));
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::front_matter::Patterns;

    #[test]
    fn front_matter_is_found() {
        let (yaml, line) = front_matter("---\na: 1\n---\n# x\n").unwrap();
        assert_eq!((yaml, line), ("a: 1\n", 2));
        assert!(front_matter("# no front matter\n").is_none());
        assert!(front_matter("---\nnever closed\n").is_none());
    }

    #[test]
    fn data_files_forms_parse() {
        let yaml = "configs:\n- config_name: default\n  data_files:\n  - split: test\n    path: data/test-*.parquet\n\
                    - config_name: full\n  data_files: full/*.parquet\n\
                    - config_name: two\n  data_files:\n  - split: test\n    path: [a.parquet, b.parquet]\n";
        let fm: FrontMatter = serde_yaml_ng::from_str(yaml).unwrap();
        let c = fm.configs.unwrap();
        assert_eq!(c.len(), 3);
        assert!(
            matches!(&c[0].data_files, Some(DataFiles::Many(v)) if matches!(&v[0], DataFileEntry::Split { split, .. } if split == "test"))
        );
        assert!(matches!(&c[1].data_files, Some(DataFiles::One(p)) if p == "full/*.parquet"));
        assert!(
            matches!(&c[2].data_files, Some(DataFiles::Many(v)) if matches!(&v[0], DataFileEntry::Split { path: Patterns::Many(p), .. } if p.len() == 2))
        );
    }

    #[test]
    fn globs_stay_inside_the_release() {
        let dir = tempfile::tempdir().unwrap();
        assert!(expand(dir.path(), "../x/*.parquet").is_err());
        assert!(expand(dir.path(), "/etc/*.parquet").is_err());
        assert_eq!(expand(dir.path(), "data/*.parquet").unwrap(), Vec::<String>::new());
    }
}
