//! `manifest.json`: what a release is made of and from — sha256 of every
//! file, tool version, pipeline hash, input hashes, seed. Paths are relative
//! (to the release, or to the pipeline file's folder) so the manifest is the
//! same on every machine.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde_json::json;

use crate::error::{Error, Result};
use crate::ingest::Ingested;
use crate::spec::Pipeline;

pub const FILE: &str = "manifest.json";

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

/// Renders the manifest for the files already written (`files` excludes the manifest).
pub fn render(p: &Pipeline, ing: &Ingested, files: &BTreeMap<String, (String, u64)>) -> Result<String> {
    let base = p.path.parent().unwrap_or(Path::new("."));
    let inputs: Vec<_> = ing
        .inputs
        .iter()
        .map(|i| json!({"path": relative_to(&i.path, base), "sha256": i.sha256, "bytes": i.bytes}))
        .collect();
    let images_digest = images_digest(ing);
    let files: serde_json::Map<String, serde_json::Value> =
        files.iter().map(|(k, (sha, n))| (k.clone(), json!({"sha256": sha, "bytes": n}))).collect();
    let manifest = json!({
        "name": p.dataset.name,
        "version": p.dataset.version,
        "tool": {"name": "blindspot", "version": env!("CARGO_PKG_VERSION")},
        "pipeline": {"path": relative_to(&p.path, base), "sha256": p.hash},
        "seed": p.dataset.seed,
        "inputs": inputs,
        "images": {"count": ing.images.len(), "sha256_of_list": images_digest},
        "counts": {"records": ing.stats.records, "filtered": ing.stats.filtered, "rejected": ing.stats.rejected, "samples": ing.stats.kept},
        "files": files,
    });
    let mut manifest = manifest;
    if let Some(plan) = &p.metrics {
        manifest["predictions"] = prediction_inputs(plan, base)?;
    }
    let mut text = serde_json::to_string_pretty(&manifest).map_err(|e| Error::Bug(e.to_string()))?;
    text.push('\n');
    Ok(text)
}

/// The prediction files and export manifests a release's metrics were computed
/// from, hashed like the benchmark's inputs (only in releases that score
/// predictions, so other manifests keep their bytes).
fn prediction_inputs(plan: &crate::spec::MetricsPlan, base: &Path) -> Result<serde_json::Value> {
    let mut out = Vec::new();
    for f in &plan.files {
        let h = crate::io::hash::hash_file(&f.path)?;
        out.push(json!({"path": relative_to(&f.path, base), "model": f.model, "sha256": h.sha256, "bytes": h.bytes}));
    }
    for m in &plan.manifests {
        let h = crate::io::hash::hash_file(m)?;
        out.push(json!({"path": relative_to(m, base), "export_manifest": true, "sha256": h.sha256, "bytes": h.bytes}));
    }
    Ok(serde_json::Value::Array(out))
}
