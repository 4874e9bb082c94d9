//! Generic prediction files: one record per answer with `model`, `id` and
//! `response` (aliases: `prediction`, `output`, `answer`), as JSONL, a JSON
//! array, CSV, TSV or Parquet — read with ingest's own readers, so every
//! record keeps its line (or Parquet row). `model` may be left out when the
//! command line names it (`--predictions MODEL=FILE`); `id` is a sample id or
//! a variant id (`<parent_id>::<kind>`); a JSON object of records keyed by id
//! is named by its keys. [`Fields`] renames the columns (`--id-field`,
//! `--response-field`, `--model-field`) or reads one answer column per model
//! (`--wide COLUMN=MODEL`; a blank cell is no answer). A null or missing
//! response is an empty answer (scored wrong), never an error.

use std::path::Path;

use super::{Fields, Prediction, Response, missing, text_field};
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
    if crate::ingest::Format::infer(path) == Some(crate::ingest::Format::Xlsx) {
        return crate::ingest::xlsx::read_xlsx(path);
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

pub fn read(path: &Path, model: Option<&str>, fields: &Fields) -> Result<Vec<Prediction>> {
    let mut out = Vec::new();
    let mut problems = crate::error::Capped::default();
    let id_fields: Vec<&str> = match &fields.id {
        Some(f) => vec![f.as_str()],
        // A JSON object of records keyed by id (MathVista's results) names them by key.
        None => vec!["id", "_key"],
    };
    let model_fields = [fields.model.as_deref().unwrap_or("model")];
    let response_fields: Vec<&str> = match &fields.response {
        Some(f) => vec![f.as_str()],
        None => RESPONSE_FIELDS.to_vec(),
    };
    for rec in records(path)? {
        let Some(id) = text_field(&rec, &id_fields).filter(|i| !i.is_empty()) else {
            let help = match &fields.id {
                Some(f) => format!("the id field \"{f}\" (--id-field) is missing or empty in this record"),
                None => "every prediction needs the sample id (or variant id <parent_id>::<kind>) it answers; name its column with --id-field".into(),
            };
            problems.push(missing(&rec, id_fields[0], &help));
            continue;
        };
        // One answer column per model: a prediction for each column present.
        if !fields.wide.is_empty() {
            for (column, m) in &fields.wide {
                if let Some(response) = text_field(&rec, &[column.as_str()]).filter(|r| !r.trim().is_empty()) {
                    out.push(Prediction {
                        model: m.clone(),
                        id: id.clone(),
                        response: Response::Text(response),
                        loc: rec.loc.clone(),
                    });
                }
            }
            continue;
        }
        let m = text_field(&rec, &model_fields).filter(|m| !m.is_empty()).or_else(|| model.map(str::to_string));
        let Some(m) = m else {
            problems.push(missing(
                &rec,
                model_fields[0],
                "add a \"model\" column, name the model (--predictions MODEL=FILE), name its column (--model-field), or give one answer column per model (--wide COLUMN=MODEL)",
            ));
            continue;
        };
        let response = text_field(&rec, &response_fields).unwrap_or_default();
        out.push(Prediction { model: m, id, response: Response::Text(response), loc: rec.loc.clone() });
    }
    if problems.is_empty() { Ok(out) } else { Err(Error::Invalid(problems.into_vec())) }
}
