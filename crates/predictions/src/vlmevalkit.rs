//! VLMEvalKit result files: `<model>_<dataset>.xlsx` (read with `calamine`,
//! first sheet), or the same table as `.tsv` / `.csv`, with at least
//! `index` and `prediction`. VLMEvalKit keeps the extra columns of the TSV it
//! ran, so a file exported by `blindspot export --to vlmevalkit` carries
//! `blindspot_id`; otherwise the export manifest maps `index` to the id: the
//! manifest's TSV whose stem (`<Name>_<config>`) ends the result's stem.
//!
//! Without `blindspot_id` or a manifest, `index` is the id (the benchmark's own
//! index, as VLMEvalKit's TSVs keep it).
//!
//! The model is `--predictions MODEL=FILE`'s, else the result stem with the
//! manifest's dataset suffix removed (`GPT4o_ScienceQA_no_image.xlsx` →
//! `GPT4o`), else the folder's name when it starts the stem (VLMEvalKit's
//! `outputs/<model>/<model>_<dataset>.xlsx`), else the whole stem.

use std::path::Path;

use super::{Manifest, Prediction, Response};
use crate::error::{Error, Location, Problem, Result};
use crate::tables::raw::Raw;

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

/// The rows of a result table: `.tsv`, `.csv`, or a spreadsheet's first sheet.
fn table_rows(path: &Path, ext: &str) -> Result<Vec<Row>> {
    let recs = match ext {
        "tsv" | "csv" => {
            let bytes = super::read_bytes(path, crate::tables::bounded::Shape::Lines)?;
            crate::tables::csv::read_delimited(path, &bytes, if ext == "tsv" { b'\t' } else { b',' })?
        }
        _ => crate::tables::xlsx::read_xlsx(path)?,
    };
    Ok(recs
        .into_iter()
        .map(|r| Row {
            loc: r.loc.clone(),
            cells: match r.value {
                Raw::Map(fields) => fields
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), if matches!(v, Raw::Null) { String::new() } else { v.to_text() }))
                    .collect(),
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
    let rows = table_rows(path, &ext)?;
    let stem = super::stem_model(path);
    let dataset = dataset_of(&stem, manifest);
    // VLMEvalKit writes `outputs/<model>/<model>_<dataset>.xlsx`: the manifest's dataset
    // suffix, else a folder name that starts the stem, names the model; else the stem.
    let folder = path.parent().and_then(|p| p.file_name()).and_then(|n| n.to_str()).filter(|n| !n.is_empty());
    let model = model.map(str::to_string).unwrap_or_else(|| match (dataset, folder) {
        (Some((tsv, _)), _) if stem.len() > tsv.len() + 1 => stem[..stem.len() - tsv.len() - 1].to_string(),
        (_, Some(f)) if stem.starts_with(&format!("{f}_")) => f.to_string(),
        _ => stem.clone(),
    });
    let mut out = Vec::new();
    let mut problems = crate::error::Capped::default();
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
                match dataset {
                    Some((_, ids)) => {
                        let n = index.parse::<f64>().ok().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as usize);
                        n.and_then(|n| ids.get(n).cloned())
                    }
                    // No manifest: the benchmark's own index is its id (VLMEvalKit's TSVs
                    // carry the source index); ids that name no row are counted by metrics.
                    None => Some(index.to_string()),
                }
            }
        };
        let Some(id) = id else {
            let why = format!("index {:?} is not in the export manifest", row.get("index").unwrap_or(""));
            problems.push(
                Problem::new(row.loc.clone(), why)
                    .field("index")
                    .help("pass the manifest.json `blindspot export --to vlmevalkit` wrote: --manifest FILE"),
            );
            continue;
        };
        let response = row.get("prediction").unwrap_or("").to_string();
        out.push(Prediction { model: model.clone(), id, response: Response::Text(response), loc: row.loc });
    }
    if problems.is_empty() { Ok(out) } else { Err(Error::Invalid(problems.into_vec())) }
}
