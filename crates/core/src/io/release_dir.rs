//! Reading back a folder of canonical Parquet files: a release
//! (`<config>/*.parquet`) or what `blindspot variants` wrote (`<kind>.parquet`);
//! `report/` is not data and is left alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Location, Problem, Result};
use crate::sample::Sample;

/// One config (a variant kind, or a release folder) and its rows.
#[derive(Debug, Clone)]
pub struct Config {
    /// `no_image`, `distractor_swap@2`, ... or a release folder's name.
    pub name: String,
    pub files: Vec<PathBuf>,
    pub rows: Vec<Sample>,
}

/// A release's configs kept for reference rather than evaluation: every
/// question before pruning (`full`), the pruned ones (`removed`) and the
/// near-duplicates found (`duplicates`). Scoring a model on them beside the
/// default config counts the kept questions twice.
pub const REFERENCE_CONFIGS: [&str; 3] = ["full", "removed", "duplicates"];

impl Config {
    /// Whether no row has an image (exporters then drop the image column).
    pub fn image_free(&self) -> bool {
        self.rows.iter().all(|r| r.images.is_empty())
    }

    /// Whether this is one of a release's [`REFERENCE_CONFIGS`].
    pub fn is_reference(&self) -> bool {
        REFERENCE_CONFIGS.contains(&self.name.as_str())
    }
}

/// Reads every config below `dir`: top-level `*.parquet` files (named by
/// their stem), `*.parquet` in sub-folders (named by the folder), and a
/// release's variant configs `variants/<kind>/*.parquet` (named by the kind),
/// sorted by name.
///
/// A symbolic link where a config's file or folder would be is an error, not
/// followed and not skipped: a release is checked byte for byte against its
/// manifest (`verify` names a link as a change), so a link would bring in
/// bytes from outside it, and skipping it would drop a config silently.
pub fn read_configs(dir: &Path) -> Result<Vec<Config>> {
    if !dir.is_dir() {
        return Err(Error::one(
            Problem::new(Location::file(dir), "not a folder")
                .help("give the folder `blindspot variants -o DIR` wrote, or a release folder"),
        ));
    }
    let mut by_name: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir).min_depth(1).max_depth(3).sort_by_file_name() {
        let entry = entry.map_err(|e| Error::io(dir, std::io::Error::other(e.to_string())))?;
        let p = entry.path();
        let rel = p.strip_prefix(dir).unwrap_or(p);
        let mut comps = rel.components().map(|c| c.as_os_str().to_string_lossy().to_string());
        let first = comps.next().unwrap_or_default();
        let second = comps.next().unwrap_or_default();
        if entry.file_type().is_symlink() && first != "report" && !first.starts_with('.') {
            return Err(Error::one(
                Problem::new(
                    Location::file(p),
                    "a symbolic link inside the folder: configs are read only from its own files, so it is neither \
                     followed nor skipped",
                )
                .help("replace the link with a copy of the file it points to, then check the release with `blindspot verify`"),
            ));
        }
        if !entry.file_type().is_file() || p.extension().and_then(|e| e.to_str()) != Some("parquet") {
            continue;
        }
        let name = if entry.depth() == 1 {
            p.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string()
        } else if first == "report" || first.starts_with('.') {
            continue;
        } else if entry.depth() == 3 && first == "variants" {
            second
        } else if entry.depth() == 2 {
            first
        } else {
            continue;
        };
        by_name.entry(name).or_default().push(p.to_path_buf());
    }
    if by_name.is_empty() {
        return Err(Error::one(
            Problem::new(Location::file(dir), "no Parquet files found")
                .help("run `blindspot variants INPUT -o DIR` first and export DIR"),
        ));
    }
    let mut out = Vec::new();
    for (name, files) in by_name {
        let mut rows = Vec::new();
        for f in &files {
            rows.extend(super::parquet::read_samples(f)?);
        }
        out.push(Config { name, files, rows });
    }
    Ok(out)
}

/// Every Parquet file below `dir`, at any depth, but for `report/` and hidden
/// folders, sorted: the rows a release (or `blindspot variants`' folder)
/// holds, for scoring predictions against.
pub fn data_files(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Err(Error::one(
            Problem::new(Location::file(dir), "not a folder")
                .help("give a release folder or `blindspot variants -o DIR`'s folder"),
        ));
    }
    let mut files = Vec::new();
    for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let e = e.map_err(|e| Error::io(dir, std::io::Error::other(e.to_string())))?;
        let rel = e.path().strip_prefix(dir).unwrap_or(e.path());
        let hidden = rel.components().any(|c| {
            let s = c.as_os_str().to_string_lossy();
            s == "report" || s.starts_with('.')
        });
        if e.file_type().is_file() && !hidden && e.path().extension().and_then(|x| x.to_str()) == Some("parquet") {
            files.push(e.path().to_path_buf());
        }
    }
    if files.is_empty() {
        return Err(Error::one(Problem::new(Location::file(dir), "no Parquet files found below this folder")));
    }
    Ok(files)
}
