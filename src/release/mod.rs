//! Release: a versioned, Hugging Face-compatible folder
//! `releases/<name>/<version>/` (DESIGN.md, "Release layout").
//!
//! Guarantees: written to a temporary folder beside the target and renamed
//! into place (never a partial release); an existing version is never
//! overwritten with different bytes; rebuilding an identical release is a
//! no-op; no clock time in any file; rows sorted by id.

pub mod card;
pub mod croissant;
pub mod datasheet;
pub mod lock;
pub mod manifest;
pub mod parquet;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Location, Problem, Result, display_path};
use crate::ingest::Ingested;
use crate::sample::Embed;
use crate::spec::Pipeline;

/// What happened to the release folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// A new version was written.
    Created,
    /// The version existed with identical bytes: nothing changed.
    UpToDate,
}

#[derive(Debug, Clone)]
pub struct ReleaseOutcome {
    pub dir: PathBuf,
    pub written: Written,
    /// Relative path → (sha256, bytes) of every file.
    pub files: BTreeMap<String, (String, u64)>,
}

/// The data file of the default config.
pub const DEFAULT_DATA_FILE: &str = "data/test-00000-of-00001.parquet";

/// What the stages before the release produced.
pub struct Stages<'a> {
    pub ingested: &'a Ingested,
    pub diagnosis: Option<&'a crate::diagnose::Diagnosis>,
}

/// Builds the release of `pipeline` under `out_root`.
pub fn write_release(pipeline: &Pipeline, stages: &Stages<'_>, out_root: &Path) -> Result<ReleaseOutcome> {
    let ingested = stages.ingested;
    let ds = &pipeline.dataset;
    let parent = out_root.join(&ds.name);
    let target = parent.join(&ds.version);
    std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{}-building-", ds.version))
        .tempdir_in(&parent)
        .map_err(|e| Error::io(&parent, e))?;
    let dir = staging.path();

    let embed = if pipeline.release.embed_images { Embed::Images } else { Embed::PathsOnly };
    let data = dir.join(DEFAULT_DATA_FILE);
    mkdir_for(&data)?;
    parquet::write_samples(&data, &ingested.samples, embed)?;

    if !ingested.rejected.is_empty() {
        let path = dir.join("report/rejected.jsonl");
        mkdir_for(&path)?;
        let mut text = String::new();
        for r in &ingested.rejected {
            text.push_str(&serde_json::to_string(r).map_err(|e| Error::Bug(e.to_string()))?);
            text.push('\n');
        }
        parquet::write_bytes(&path, text.as_bytes())?;
    }
    if let Some(d) = stages.diagnosis {
        crate::diagnose::report::write_report(&dir.join("report"), d, &pipeline.diagnose)?;
    }
    parquet::write_bytes(&dir.join("README.md"), card::render(pipeline, stages).as_bytes())?;
    let data_sha = hash_tree(&dir.join("data"))?;
    let data_files: Vec<(String, String)> =
        data_sha.into_iter().map(|(path, (sha, _))| (format!("data/{path}"), sha)).collect();
    let configs = [croissant::Config {
        name: "default",
        description: "Every question of the release.".into(),
        files: data_files.iter().map(|(p, s)| (p.as_str(), s.as_str())).collect(),
    }];
    parquet::write_bytes(&dir.join(croissant::FILE), croissant::render(pipeline, stages, &configs)?.as_bytes())?;

    let files = hash_tree(dir)?;
    let manifest = manifest::render(pipeline, ingested, &files)?;
    parquet::write_bytes(&dir.join(manifest::FILE), manifest.as_bytes())?;
    let files = hash_tree(dir)?;

    if target.exists() {
        let existing = hash_tree(&target)?;
        if existing == files {
            return Ok(ReleaseOutcome { dir: target, written: Written::UpToDate, files });
        }
        let differing = files
            .keys()
            .chain(existing.keys())
            .find(|k| files.get(*k) != existing.get(*k))
            .cloned()
            .unwrap_or_default();
        return Err(Error::one(
            Problem::new(
                Location::file(&target),
                format!(
                    "release {}/{} already exists with different content (first difference: {differing})",
                    ds.name, ds.version
                ),
            )
            .help(format!(
                "a published version is never overwritten: bump [dataset] version in {}",
                display_path(&pipeline.path)
            )),
        ));
    }
    let kept = staging.keep();
    std::fs::rename(&kept, &target).map_err(|e| {
        let _ = std::fs::remove_dir_all(&kept);
        Error::io(&target, e)
    })?;
    sync_dir(&parent);
    Ok(ReleaseOutcome { dir: target, written: Written::Created, files })
}

fn mkdir_for(path: &Path) -> Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))
}

/// Makes a rename durable where the platform allows it.
fn sync_dir(dir: &Path) {
    if let Ok(f) = std::fs::File::open(dir) {
        let _ = f.sync_all();
    }
}

/// sha256 and size of every file below `dir`, by `/`-separated relative path.
pub fn hash_tree(dir: &Path) -> Result<BTreeMap<String, (String, u64)>> {
    let mut out = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| Error::io(dir, e.into()))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(dir).map_err(|e| Error::Bug(e.to_string()))?;
        let rel = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        let bytes = std::fs::read(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
        out.insert(rel, (hex::encode(Sha256::digest(&bytes)), bytes.len() as u64));
    }
    Ok(out)
}
