//! `manifest.json`: what a release is made of and from — sha256 of every
//! file, tool version, pipeline hash, input hashes, seed. Paths are relative
//! (to the release, or to the pipeline file's folder) so the manifest is the
//! same on every machine.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::ingest::Ingested;
use crate::spec::Pipeline;

pub const FILE: &str = "manifest.json";

/// `manifest.json` as written and read back: the same type on both sides, so a
/// key cannot be renamed on one alone. Field order is the file's key order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    pub tool: Tool,
    pub pipeline: PipelineFile,
    pub seed: u64,
    pub inputs: Vec<InputEntry>,
    pub images: Images,
    pub counts: Counts,
    /// Every file of the release but the manifest, by `/`-separated path.
    pub files: BTreeMap<String, FileEntry>,
    /// Only in releases that score predictions, so other manifests keep their bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predictions: Option<Vec<PredictionInput>>,
}

/// The program that wrote the release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// The pipeline file, relative to its own folder, and its hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineFile {
    pub path: String,
    pub sha256: String,
}

/// A benchmark file the release was read from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputEntry {
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
}

/// The images the samples use: their number and the digest of their list
/// ([`images_digest`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Images {
    pub count: usize,
    pub sha256_of_list: String,
}

/// What ingest read, filtered out, rejected and kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub records: usize,
    pub filtered: usize,
    pub rejected: usize,
    pub samples: usize,
}

/// sha256 (hex) and size of one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    pub sha256: String,
    pub bytes: u64,
}

/// A prediction file or an export manifest the metrics were computed from.
/// Untagged: an export manifest says `"export_manifest": true` and has no
/// model, a prediction file states its model (`null` where the file names it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PredictionInput {
    // First: a prediction file's entry has no `export_manifest` key, so it
    // cannot be read as this one.
    ExportManifest { path: String, export_manifest: bool, sha256: String, bytes: u64 },
    File { path: String, model: Option<String>, sha256: String, bytes: u64 },
}

/// `path` relative to `base`, with `..` where needed; both made absolute first.
pub fn relative_to(path: &Path, base: &Path) -> String {
    let abs = |p: &Path| -> PathBuf {
        let p = std::fs::canonicalize(p).unwrap_or_else(|_| std::env::current_dir().unwrap_or_default().join(p));
        p.components().filter(|c| !matches!(c, Component::CurDir)).collect()
    };
    let (p, b) = (abs(path), abs(base));
    let pc: Vec<_> = p.components().collect();
    let bc: Vec<_> = b.components().collect();
    let common = pc.iter().zip(&bc).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = std::iter::repeat_n("..".to_string(), bc.len() - common).collect();
    parts.extend(pc[common..].iter().map(|c| c.as_os_str().to_string_lossy().to_string()));
    parts.join("/")
}

/// The sha256 of the image list: each image's path, a NUL, its sha256 and a
/// newline, in path order.
pub fn images_digest(ing: &Ingested) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (path, sha) in &ing.images {
        h.update(path.as_bytes());
        h.update([0]);
        h.update(sha.as_bytes());
        h.update([b'\n']);
    }
    hex::encode(h.finalize())
}

/// The manifest for the files already written (`files` excludes the manifest).
pub fn build(p: &Pipeline, ing: &Ingested, files: &BTreeMap<String, (String, u64)>) -> Result<Manifest> {
    let base = p.path.parent().unwrap_or(Path::new("."));
    Ok(Manifest {
        name: p.dataset.name.clone(),
        version: p.dataset.version.clone(),
        tool: Tool { name: "blindspot".into(), version: env!("CARGO_PKG_VERSION").into() },
        pipeline: PipelineFile { path: relative_to(&p.path, base), sha256: p.hash.clone() },
        seed: p.dataset.seed,
        inputs: ing
            .inputs
            .iter()
            .map(|i| InputEntry { path: relative_to(&i.path, base), sha256: i.sha256.clone(), bytes: i.bytes })
            .collect(),
        images: Images { count: ing.images.len(), sha256_of_list: images_digest(ing) },
        counts: Counts {
            records: ing.stats.records,
            filtered: ing.stats.filtered,
            rejected: ing.stats.rejected,
            samples: ing.stats.kept,
        },
        files: files.iter().map(|(k, (sha, n))| (k.clone(), FileEntry { sha256: sha.clone(), bytes: *n })).collect(),
        predictions: p.metrics.as_ref().map(|plan| prediction_inputs(plan, base)).transpose()?,
    })
}

/// Renders the manifest for the files already written (`files` excludes the manifest).
pub fn render(p: &Pipeline, ing: &Ingested, files: &BTreeMap<String, (String, u64)>) -> Result<String> {
    to_text(&build(p, ing, files)?)
}

/// Pretty JSON with a final newline, as every JSON file of a release.
pub fn to_text(m: &Manifest) -> Result<String> {
    let mut text = serde_json::to_string_pretty(m).map_err(|e| Error::Bug(e.to_string()))?;
    text.push('\n');
    Ok(text)
}

/// The prediction files and export manifests a release's metrics were computed
/// from, hashed like the benchmark's inputs.
fn prediction_inputs(plan: &crate::spec::MetricsPlan, base: &Path) -> Result<Vec<PredictionInput>> {
    let mut out = Vec::new();
    for f in &plan.files {
        let h = crate::io::hash::hash_file(&f.path)?;
        out.push(PredictionInput::File {
            path: relative_to(&f.path, base),
            model: f.model.clone(),
            sha256: h.sha256,
            bytes: h.bytes,
        });
    }
    for m in &plan.manifests {
        let h = crate::io::hash::hash_file(m)?;
        out.push(PredictionInput::ExportManifest {
            path: relative_to(m, base),
            export_manifest: true,
            sha256: h.sha256,
            bytes: h.bytes,
        });
    }
    Ok(out)
}

/// The field a serde error says is missing.
pub(crate) fn missing_field(e: &serde_json::Error) -> Option<String> {
    let text = e.to_string();
    let rest = text.strip_prefix("missing field `")?;
    Some(rest[..rest.find('`')?].to_string())
}

/// serde_json's message without its trailing " at line L column C" (the
/// location says it).
pub(crate) fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}
