//! Generic prediction files: one record per answer with `model`, `id` and
//! `response` (aliases: `prediction`, `output`, `answer`), as JSONL, a JSON
//! array, CSV, TSV or Parquet — read with ingest's own readers, so every
//! record keeps its line (or Parquet row). `model` may be left out when the
//! command line names it (`--predictions MODEL=FILE`); `id` is a sample id or
//! a variant id (`<parent_id>::<kind>`). A null or missing response is an
//! empty answer (scored wrong), never an error.

use std::path::Path;

use super::{Prediction, Response, missing, text_field};
use crate::error::{Error, Result};
use crate::ingest::bounded::{self, Shape};
use crate::ingest::raw::RawRecord;

/// Field names accepted for the response, in order.
pub const RESPONSE_FIELDS: [&str; 4] = ["response", "prediction", "output", "answer"];

/// Reads a file's records with ingest's reader for its extension.
pub fn records(path: &Path) -> Result<Vec<RawRecord>> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    if ext == "parquet" {
        return crate::ingest::parquet::read_parquet(path);
    }
    let shape = if ext == "json" { Shape::Json } else { Shape::Lines };
    let bytes = bounded::read(path, shape)?;
    match ext.as_str() {
        "csv" => crate::ingest::csv::read_delimited(path, &bytes, b','),
        "tsv" => crate::ingest::csv::read_delimited(path, &bytes, b'\t'),
        "jsonl" => crate::ingest::json::read_jsonl(path, &bytes),
        _ => crate::ingest::json::read_json(path, &bytes),
    }
}

pub fn read(path: &Path, model: Option<&str>) -> Result<Vec<Prediction>> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for rec in records(path)? {
        let m = text_field(&rec, &["model"]).filter(|m| !m.is_empty()).or_else(|| model.map(str::to_string));
        let Some(m) = m else {
            problems.push(missing(
                &rec,
                "model",
                "add a \"model\" column, or name the model: --predictions MODEL=FILE",
            ));
            continue;
        };
        let Some(id) = text_field(&rec, &["id"]).filter(|i| !i.is_empty()) else {
            problems.push(missing(
                &rec,
                "id",
                "every prediction needs the sample id (or variant id <parent_id>::<kind>) it answers",
            ));
            continue;
        };
        let response = text_field(&rec, &RESPONSE_FIELDS).unwrap_or_default();
        out.push(Prediction { model: m, id, response: Response::Text(response), loc: rec.loc.clone() });
        if problems.len() > crate::error::MAX_SHOWN {
            break;
        }
    }
    if problems.is_empty() { Ok(out) } else { Err(Error::Invalid(problems)) }
}
