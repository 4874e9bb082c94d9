//! Exports: variant (or release) Parquet files → folders that evaluation
//! harnesses run unmodified (the last step of the flow, beside release).
//! One file per harness: [`vlmevalkit`] (TSV per config) and [`lmms_eval`]
//! (task folder: YAML per config, Parquet data, `utils.py`). Both write a
//! `manifest.json` mapping every exported row (harness index / doc_id) to
//! blindspot's sample id, so results can be imported back.
//!
//! Input: a folder written by `blindspot variants` (`<kind>.parquet`) or a
//! release (`<config>/*.parquet`); `report/` is not data and is left alone.

// The crates below this one, under the module names the code uses.
use blindspot_core::{error, io, sample};
use blindspot_predictions as predictions;
use blindspot_variants as variants;

pub mod lmms_eval;
pub mod vlmevalkit;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::{Error, Location, Problem, Result, display_path};
use crate::io::release_dir::Config;
use crate::sample::{AnswerFormat, Sample};

/// Images the rows name without carrying their bytes, as (config, id, path):
/// a harness that reads images from the data fails on them only when it
/// reaches the row.
pub fn images_without_bytes(configs: &[Config]) -> Vec<(String, String, String)> {
    configs
        .iter()
        .flat_map(|c| {
            c.rows.iter().flat_map(move |r| {
                r.images
                    .iter()
                    .filter(|i| i.bytes.is_none())
                    .map(move |i| (c.name.clone(), r.id.clone(), i.path.clone().unwrap_or_else(|| "(no path)".into())))
            })
        })
        .collect()
}

/// Drops the images that carry no bytes (`--allow-missing-images`: those rows
/// are exported text-only). Returns how many rows lost an image.
pub fn drop_images_without_bytes(configs: &mut [Config]) -> usize {
    let mut rows = 0;
    for r in configs.iter_mut().flat_map(|c| c.rows.iter_mut()) {
        let before = r.images.len();
        r.images.retain(|i| i.bytes.is_some());
        rows += usize::from(r.images.len() < before);
    }
    rows
}

/// Whether `c` is the CircularEval config: rows that are all rotations
/// (`circular@k`). Its exports carry each row's rotation in a `rotation` column.
/// Fills in the bytes of videos a release carries as files (`videos/<path>`
/// beside its Parquet files), so an export holds what the release holds. A
/// video named but not there stays a path (the export then names it only).
pub fn load_carried_videos(configs: &mut [Config], release: &std::path::Path) -> Result<()> {
    let folder = release.join("videos");
    if !folder.is_dir() {
        return Ok(());
    }
    for v in configs.iter_mut().flat_map(|c| c.rows.iter_mut()).flat_map(|r| r.videos.iter_mut()) {
        let Some(path) = &v.path else { continue };
        // A path from the data file never leads out of the release.
        if std::path::Path::new(path).components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
            continue;
        }
        let file = folder.join(path);
        if v.bytes.is_none() && file.is_file() {
            v.bytes = Some(std::fs::read(&file).map_err(|e| crate::error::Error::io(&file, e))?);
        }
    }
    Ok(())
}

pub fn has_rotations(c: &Config) -> bool {
    !c.rows.is_empty() && c.rows.iter().all(|r| crate::variants::rotation(r).is_some())
}

/// Every CircularEval rotation in one `circular` config, as a release has it:
/// the configs whose rows are all rotations (`circular@k.parquet` of a
/// variants folder, or the `circular-k` configs of a release built before the
/// rotations shared a config) become one, its rows in rotation order, where
/// the first of them was. A row id held by two of them is an error.
pub fn merge_rotations(configs: Vec<Config>) -> Result<Vec<Config>> {
    let mut out: Vec<Config> = Vec::with_capacity(configs.len());
    let mut merged: Option<usize> = None;
    let mut seen: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for c in configs {
        if !has_rotations(&c) {
            out.push(c);
            continue;
        }
        for r in &c.rows {
            if let Some(first) = seen.insert(r.id.clone(), c.name.clone()) {
                return Err(config_problem(
                    &c,
                    format!(
                        "row \"{}\" is also in config \"{first}\": both hold CircularEval rotations, which are exported as one `{}` config",
                        r.id,
                        crate::variants::CIRCULAR_CONFIG
                    ),
                ));
            }
        }
        match merged {
            Some(i) => {
                out[i].files.extend(c.files);
                out[i].rows.extend(c.rows);
            }
            None => {
                merged = Some(out.len());
                out.push(Config { name: crate::variants::CIRCULAR_CONFIG.into(), ..c });
            }
        }
    }
    if let Some(i) = merged {
        out[i].rows.sort_by_key(crate::variants::rotation);
    }
    Ok(out)
}

/// The columns an exported data file has after the canonical ones: `rotation`
/// for the CircularEval config.
pub fn extra_columns(c: &Config) -> &'static [crate::io::parquet::IntColumn] {
    if has_rotations(c) { crate::variants::CIRCULAR_COLUMNS } else { &[] }
}

/// The benchmark name exports are named after: `name` if given, else the
/// most common benchmark of the rows (the bundled probes aside).
pub fn export_name(configs: &[Config], name: Option<&str>) -> String {
    if let Some(n) = name {
        return n.to_string();
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in configs.iter().flat_map(|c| &c.rows) {
        if !crate::variants::phantom::is_probe_benchmark(&r.benchmark) && !r.benchmark.is_empty() {
            *counts.entry(r.benchmark.as_str()).or_default() += 1;
        }
    }
    counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0))).map_or("blindspot".into(), |(n, _)| n.into())
}

/// `s` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
pub fn file_safe(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// The letter of option `i` (A, B, ...).
pub fn letter(i: usize) -> String {
    crate::variants::prompt::option_label(i)
}

/// The gold as a harness scores it: the letter for multiple choice, else the text.
pub fn gold_label(s: &Sample) -> String {
    match (s.answer_format, s.answer_index) {
        (AnswerFormat::MultipleChoice, Some(i)) if i >= 0 => letter(i as usize),
        _ => s.answer.clone(),
    }
}

/// A located problem for a config that cannot be exported.
pub fn config_problem(c: &Config, msg: impl Into<String>) -> Error {
    let file = c.files.first().map(|f| display_path(f)).unwrap_or_default();
    Error::one(Problem::new(Location { file: Arc::from(file), pos: crate::error::Pos::File }, msg))
}
