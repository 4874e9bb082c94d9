//! VLMEvalKit result files: `<model>_<dataset>.xlsx` (read with `calamine`,
//! first sheet), or the same table as `.tsv` / `.csv`, with at least
//! `index` and `prediction`. VLMEvalKit keeps the extra columns of the TSV it
//! ran, so a file exported by `blindspot export --to vlmevalkit` carries
//! `blindspot_id`; otherwise the export manifest maps `index` to the id: the
//! manifest's TSV whose stem (`<Name>_<config>`) ends the result's stem.
//!
//! The model is `--predictions MODEL=FILE`'s, else the result stem with the
//! dataset suffix removed (`GPT4o_ScienceQA_no_image.xlsx` → `GPT4o`), else
//! the folder's name.

use std::path::Path;

use calamine::{Data, Reader};

use super::{Manifest, Prediction, Response};
use crate::error::{Error, Location, Pos, Problem, Result, display_path};
use crate::ingest::raw::Raw;

/// One table row: its location and its cells by column name.
struct Row {
    loc: Location,
    cells: Vec<(String, String)>,
}

impl Row {
    fn get(&self, name: &str) -> Option<&str> {
        self.cells.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

fn cell_text(d: &Data) -> String {
    match d {
        Data::Empty => String::new(),
        Data::String(s) => s.clone(),
        Data::Int(i) => i.to_string(),
        Data::Float(f) => crate::ingest::raw::format_float(*f),
        Data::Bool(b) => b.to_string(),
        other => other.to_string(),
    }
}

fn xlsx_rows(path: &Path) -> Result<Vec<Row>> {
    let bad = |msg: String| {
        Error::one(
            Problem::new(Location::file(path), msg).help("give the .xlsx result file VLMEvalKit wrote, complete"),
        )
    };
    let mut book = calamine::open_workbook_auto(path).map_err(|e| bad(format!("not a readable spreadsheet: {e}")))?;
    // calamine's cell-reference arithmetic overflows (a panic in builds with
    // overflow checks) on a crafted sheet; fuzzing found it.
    let range = crate::error::guard_foreign(
        || {
            book.worksheet_range_at(0)
                .ok_or_else(|| bad("the workbook has no sheet".into()))?
                .map_err(|e| bad(format!("cannot read the first sheet: {e}")))
        },
        |why| {
            Problem::new(
                Location::file(path),
                format!("not a readable spreadsheet: its first sheet is corrupt ({why})"),
            )
            .help("give the .xlsx result file VLMEvalKit wrote, complete")
        },
    )?;
    let mut rows = range.rows();
    let header: Vec<String> =
        rows.next().map(|h| h.iter().map(|c| cell_text(c).trim().to_string()).collect()).unwrap_or_default();
    let file: std::sync::Arc<str> = display_path(path).into();
    let start = range.start().map_or(0, |(r, _)| r as u64);
    Ok(rows
        .enumerate()
        .map(|(i, r)| Row {
            // Spreadsheet row numbers as a person sees them (header = first row).
            loc: Location { file: file.clone(), pos: Pos::Row(start + i as u64 + 2) },
            cells: header.iter().cloned().zip(r.iter().map(cell_text)).collect(),
        })
        .collect())
}

fn delimited_rows(path: &Path, delimiter: u8) -> Result<Vec<Row>> {
    let bytes = crate::ingest::bounded::read(path, crate::ingest::bounded::Shape::Lines)?;
    let recs = crate::ingest::csv::read_delimited(path, &bytes, delimiter)?;
    Ok(recs
        .into_iter()
        .map(|r| Row {
            loc: r.loc.clone(),
            cells: match r.value {
                Raw::Map(fields) => fields.into_iter().map(|(k, v)| (k.to_string(), v.to_text())).collect(),
                _ => Vec::new(),
            },
        })
        .collect())
}

/// The manifest entry (TSV stem) a result file belongs to: the longest stem
/// that ends the result's stem.
fn dataset_of<'m>(stem: &str, manifest: Option<&'m Manifest>) -> Option<(&'m str, &'m [String])> {
    manifest?
        .vlmevalkit
        .iter()
        .filter(|(tsv, _)| stem == tsv.as_str() || stem.ends_with(&format!("_{tsv}")))
        .max_by_key(|(tsv, _)| tsv.len())
        .map(|(tsv, ids)| (tsv.as_str(), ids.as_slice()))
}

pub fn read(path: &Path, model: Option<&str>, manifest: Option<&Manifest>) -> Result<Vec<Prediction>> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let rows = match ext.as_str() {
        "tsv" => delimited_rows(path, b'\t')?,
        "csv" => delimited_rows(path, b',')?,
        _ => xlsx_rows(path)?,
    };
    let stem = super::stem_model(path);
    let dataset = dataset_of(&stem, manifest);
    let model = model.map(str::to_string).unwrap_or_else(|| match dataset {
        Some((tsv, _)) if stem.len() > tsv.len() + 1 => stem[..stem.len() - tsv.len() - 1].to_string(),
        _ => path
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .filter(|n| !n.is_empty())
            .map_or_else(|| stem.clone(), str::to_string),
    });
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for row in rows {
        let id = match row.get("blindspot_id").filter(|s| !s.trim().is_empty()) {
            Some(id) => Some(id.trim().to_string()),
            None => {
                let Some(index) = row.get("index").map(str::trim).filter(|s| !s.is_empty()) else {
                    problems.push(
                        Problem::new(row.loc.clone(), "no \"index\" in this row")
                            .field("index")
                            .help("a VLMEvalKit result file has an index column; keep it"),
                    );
                    continue;
                };
                let n = index.parse::<f64>().ok().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as usize);
                n.and_then(|n| dataset.and_then(|(_, ids)| ids.get(n).cloned()))
            }
        };
        let Some(id) = id else {
            let why = if dataset.is_none() {
                "no blindspot_id column and no export manifest entry for this file".to_string()
            } else {
                format!("index {:?} is not in the export manifest", row.get("index").unwrap_or(""))
            };
            problems.push(
                Problem::new(row.loc.clone(), why)
                    .field("index")
                    .help("pass the manifest.json `blindspot export --to vlmevalkit` wrote: --manifest FILE"),
            );
            if problems.len() > crate::error::MAX_SHOWN {
                break;
            }
            continue;
        };
        let response = row.get("prediction").unwrap_or("").to_string();
        out.push(Prediction { model: model.clone(), id, response: Response::Text(response), loc: row.loc });
    }
    if problems.is_empty() { Ok(out) } else { Err(Error::Invalid(problems)) }
}
