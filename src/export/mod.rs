//! Exports: variant (or release) Parquet files → folders that evaluation
//! harnesses run unmodified (the last step of the flow, beside release).
//! One file per harness: [`vlmevalkit`] (TSV per config) and [`lmms_eval`]
//! (task folder: YAML per config, Parquet data, `utils.py`). Both write a
//! `manifest.json` mapping every exported row (harness index / doc_id) to
//! blindspot's sample id, so results can be imported back.
//!
//! Input: a folder written by `blindspot variants` (`<kind>.parquet`) or a
//! release (`<config>/*.parquet`); `report/` is not data and is left alone.

pub mod lmms_eval;
pub mod vlmevalkit;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BinaryArray, Int32Array, ListArray, StringArray, StructArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::error::{Error, Location, Problem, Result, display_path};
use crate::sample::{AnswerFormat, ImageRef, Sample};

/// One config (a variant kind, or a release folder) and its rows.
#[derive(Debug, Clone)]
pub struct Config {
    /// `no_image`, `distractor_swap@2`, ... or a release folder's name.
    pub name: String,
    pub files: Vec<PathBuf>,
    pub rows: Vec<Sample>,
}

impl Config {
    /// Whether no row has an image (exporters then drop the image column).
    pub fn image_free(&self) -> bool {
        self.rows.iter().all(|r| r.images.is_empty())
    }
}

/// Reads every config below `dir`: top-level `*.parquet` files (named by
/// their stem) and `*.parquet` in sub-folders (named by the folder), sorted by name.
pub fn read_configs(dir: &Path) -> Result<Vec<Config>> {
    if !dir.is_dir() {
        return Err(Error::one(
            Problem::new(Location::file(dir), "not a folder")
                .help("give the folder `blindspot variants -o DIR` wrote, or a release folder"),
        ));
    }
    let mut by_name: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir).min_depth(1).max_depth(2).sort_by_file_name() {
        let entry = entry.map_err(|e| Error::io(dir, std::io::Error::other(e.to_string())))?;
        let p = entry.path();
        if !entry.file_type().is_file() || p.extension().and_then(|e| e.to_str()) != Some("parquet") {
            continue;
        }
        let rel = p.strip_prefix(dir).unwrap_or(p);
        let mut comps = rel.components().map(|c| c.as_os_str().to_string_lossy().to_string());
        let first = comps.next().unwrap_or_default();
        let name = if entry.depth() == 1 {
            p.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string()
        } else if first == "report" || first.starts_with('.') {
            continue;
        } else {
            first
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
            rows.extend(read_samples(f)?);
        }
        out.push(Config { name, files, rows });
    }
    Ok(out)
}

fn not_canonical(path: &Path, what: String) -> Error {
    Error::one(
        Problem::new(Location::file(path), format!("not a blindspot canonical Parquet file: {what}"))
            .help("export reads the files `blindspot variants` or `blindspot build` wrote"),
    )
}

fn column<'a, T: 'static>(path: &Path, batch: &'a arrow::array::RecordBatch, name: &str) -> Result<&'a T> {
    let col = batch.column_by_name(name).ok_or_else(|| not_canonical(path, format!("no column \"{name}\"")))?;
    col.as_any().downcast_ref::<T>().ok_or_else(|| not_canonical(path, format!("column \"{name}\" has another type")))
}

fn str_at(a: &StringArray, i: usize) -> Option<String> {
    (!a.is_null(i)).then(|| a.value(i).to_string())
}

fn struct_field<'a, T: 'static>(path: &Path, st: &'a StructArray, name: &str) -> Result<&'a T> {
    st.column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| not_canonical(path, format!("struct field \"{name}\" missing or of another type")))
}

fn list_values(list: &ListArray, i: usize) -> ArrayRef {
    list.value(i)
}

/// Row `i` of a list-of-structs column, as its struct array.
fn struct_list(path: &Path, list: &ListArray, i: usize, column: &str) -> Result<StructArray> {
    list_values(list, i)
        .as_any()
        .downcast_ref::<StructArray>()
        .cloned()
        .ok_or_else(|| not_canonical(path, format!("{column} is not a list of structs")))
}

/// Reads a canonical Parquet file back into samples (image bytes in memory).
pub fn read_samples(path: &Path) -> Result<Vec<Sample>> {
    crate::ingest::parquet::guard_decoder(path, || read_samples_unguarded(path))
}

fn read_samples_unguarded(path: &Path) -> Result<Vec<Sample>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let size = file.metadata().map_or(0, |m| m.len());
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| not_canonical(path, e.to_string()))?;
    crate::ingest::parquet::check_chunk_ranges(path, builder.metadata(), size)?;
    let reader = builder.build().map_err(|e| not_canonical(path, e.to_string()))?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| Error::io(path, std::io::Error::other(e.to_string())))?;
        let id = column::<StringArray>(path, &batch, "id")?;
        let benchmark = column::<StringArray>(path, &batch, "benchmark")?;
        let split = column::<StringArray>(path, &batch, "split")?;
        let qtype = column::<StringArray>(path, &batch, "question_type")?;
        let question = column::<StringArray>(path, &batch, "question")?;
        let context = column::<StringArray>(path, &batch, "context")?;
        let options = column::<ListArray>(path, &batch, "options")?;
        let answer = column::<StringArray>(path, &batch, "answer")?;
        let answer_index = column::<Int32Array>(path, &batch, "answer_index")?;
        let answer_format = column::<StringArray>(path, &batch, "answer_format")?;
        let images = column::<ListArray>(path, &batch, "images")?;
        let image_facts = column::<ListArray>(path, &batch, "image_facts")?;
        let meta = column::<ListArray>(path, &batch, "meta")?;
        let parent_id = column::<StringArray>(path, &batch, "parent_id")?;
        let variant = column::<StringArray>(path, &batch, "variant")?;
        let variant_params = column::<StringArray>(path, &batch, "variant_params")?;
        let prompt = column::<StringArray>(path, &batch, "prompt")?;
        let expected = column::<StringArray>(path, &batch, "expected")?;
        for i in 0..batch.num_rows() {
            let fmt = answer_format.value(i);
            let Some(format) = AnswerFormat::ALL.iter().copied().find(|f| f.as_str() == fmt) else {
                return Err(not_canonical(path, format!("answer_format \"{fmt}\" in row {}", out.len() + 1)));
            };
            let opts = list_values(options, i);
            let opts = opts
                .as_any()
                .downcast_ref::<StringArray>()
                .ok_or_else(|| not_canonical(path, "options are not strings".into()))?;
            let imgs = &struct_list(path, images, i, "images")?;
            let bytes = struct_field::<BinaryArray>(path, imgs, "bytes")?;
            let ipath = struct_field::<StringArray>(path, imgs, "path")?;
            let facts = &struct_list(path, image_facts, i, "image_facts")?;
            let sha = struct_field::<StringArray>(path, facts, "sha256")?;
            let width = struct_field::<Int32Array>(path, facts, "width")?;
            let height = struct_field::<Int32Array>(path, facts, "height")?;
            let m = &struct_list(path, meta, i, "meta")?;
            let mk = struct_field::<StringArray>(path, m, "key")?;
            let mv = struct_field::<StringArray>(path, m, "value")?;
            out.push(Sample {
                id: id.value(i).to_string(),
                benchmark: benchmark.value(i).to_string(),
                split: split.value(i).to_string(),
                question_type: str_at(qtype, i),
                question: question.value(i).to_string(),
                context: str_at(context, i),
                options: (0..opts.len()).map(|j| opts.value(j).to_string()).collect(),
                answer: answer.value(i).to_string(),
                answer_index: (!answer_index.is_null(i)).then(|| answer_index.value(i)),
                answer_format: format,
                images: (0..imgs.len())
                    .map(|j| ImageRef {
                        path: str_at(ipath, j),
                        bytes: (!bytes.is_null(j)).then(|| bytes.value(j).to_vec()),
                        sha256: str_at(sha, j),
                        width: (!width.is_null(j)).then(|| width.value(j) as u32),
                        height: (!height.is_null(j)).then(|| height.value(j) as u32),
                        source: None,
                    })
                    .collect(),
                meta: (0..m.len()).map(|j| (mk.value(j).to_string(), mv.value(j).to_string())).collect(),
                parent_id: str_at(parent_id, i),
                variant: str_at(variant, i),
                variant_params: str_at(variant_params, i),
                prompt: str_at(prompt, i),
                expected: str_at(expected, i),
            });
        }
    }
    Ok(out)
}

/// The benchmark name exports are named after: `name` if given, else the
/// most common benchmark of the rows (phantom0 probes aside).
pub fn export_name(configs: &[Config], name: Option<&str>) -> String {
    if let Some(n) = name {
        return n.to_string();
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in configs.iter().flat_map(|c| &c.rows) {
        if r.benchmark != crate::variants::phantom::PHANTOM0_BENCHMARK && !r.benchmark.is_empty() {
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

/// Writes pretty JSON durably.
pub(crate) fn write_json(path: &Path, value: &serde_json::Value) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(|e| Error::Bug(e.to_string()))?;
    text.push('\n');
    crate::release::parquet::write_bytes(path, text.as_bytes())
}

/// A located problem for a config that cannot be exported.
pub(crate) fn config_problem(c: &Config, msg: impl Into<String>) -> Error {
    let file = c.files.first().map(|f| display_path(f)).unwrap_or_default();
    Error::one(Problem::new(Location { file: Arc::from(file), pos: crate::error::Pos::File }, msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_parquet_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Sample::new("a", "Which?", "y");
        s.answer_format = AnswerFormat::MultipleChoice;
        s.options = vec!["x".into(), "y".into()];
        s.answer_index = Some(1);
        s.meta.insert("k".into(), "v".into());
        s.images.push(ImageRef {
            path: None,
            bytes: Some(vec![1, 2, 3]),
            sha256: Some("h".into()),
            width: Some(2),
            height: Some(1),
            source: None,
        });
        s.variant = Some("option_shuffle".into());
        s.prompt = Some("p".into());
        let path = dir.path().join("x.parquet");
        crate::release::parquet::write_samples(&path, std::slice::from_ref(&s), crate::sample::Embed::Images).unwrap();
        assert_eq!(read_samples(&path).unwrap(), vec![s]);
    }
}
