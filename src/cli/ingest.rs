//! `blindspot ingest INPUT|PIPELINE -o OUT.parquet`: the one-step form of
//! ingest. INPUT is a pipeline file (`.toml`) or a data file whose fields
//! already carry the canonical names.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result, display_path};
use crate::ingest::ingest;
use crate::release::parquet::{write_bytes, write_samples};
use crate::sample::Embed;
use crate::spec::{IngestPlan, Pipeline};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A pipeline file, or a benchmark file with canonical field names.
    pub input: PathBuf,
    /// The canonical Parquet file to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Do not embed image bytes (paths and facts only).
    #[arg(long)]
    pub no_embed_images: bool,
}

pub fn run(args: &Args) -> Result<()> {
    let plan = if args.input.extension().and_then(|e| e.to_str()) == Some("toml") {
        Pipeline::load(&args.input)?.ingest
    } else {
        if !args.input.exists() {
            return Err(Error::io(&args.input, std::io::Error::new(std::io::ErrorKind::NotFound, "no such file")));
        }
        IngestPlan::for_canonical_input(&args.input)?
    };
    let ingested = ingest(&plan)?;
    let embed = if args.no_embed_images { Embed::PathsOnly } else { Embed::Images };
    atomic_write(&args.output, |tmp| write_samples(tmp, &ingested.samples, embed).map(|_| ()))?;
    if !ingested.rejected.is_empty() {
        let path = args.output.with_extension("rejected.jsonl");
        let mut text = String::new();
        for r in &ingested.rejected {
            text.push_str(&serde_json::to_string(r).map_err(|e| Error::Bug(e.to_string()))?);
            text.push('\n');
        }
        atomic_write(&path, |tmp| write_bytes(tmp, text.as_bytes()))?;
    }
    let s = &ingested.stats;
    super::say(&format!(
        "{}: {} samples ({} records read, {} filtered out, {} rejected)",
        display_path(&args.output),
        s.kept,
        s.records,
        s.filtered,
        s.rejected
    ));
    Ok(())
}

/// Writes through a temporary file in the same folder, then renames it into place.
pub fn atomic_write(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let dir = existing_parent(path)?;
    let tmp = tempfile::Builder::new().prefix(".blindspot-").tempfile_in(&dir).map_err(|e| Error::io(&dir, e))?;
    write(tmp.path())?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// Fills a temporary folder beside `dir`, then swaps it into place (an
/// existing `dir` is replaced only once the new one is complete).
pub fn atomic_dir(dir: &Path, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let parent = existing_parent(dir)?;
    let tmp = tempfile::Builder::new().prefix(".blindspot-").tempdir_in(&parent).map_err(|e| Error::io(&parent, e))?;
    fill(tmp.path())?;
    if dir.exists() {
        let old = tempfile::Builder::new()
            .prefix(".blindspot-old-")
            .tempdir_in(&parent)
            .map_err(|e| Error::io(&parent, e))?;
        let old_path = old.path().join("old");
        std::fs::rename(dir, &old_path).map_err(|e| Error::io(dir, e))?;
        std::fs::rename(tmp.keep(), dir).map_err(|e| Error::io(dir, e))?;
        drop(old);
    } else {
        std::fs::rename(tmp.keep(), dir).map_err(|e| Error::io(dir, e))?;
    }
    Ok(())
}

/// The folder a path lives in (`.` for a bare name), created if missing:
/// temporary files go there so the final rename stays on one filesystem.
fn existing_parent(path: &Path) -> Result<PathBuf> {
    let parent = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
    Ok(parent)
}
