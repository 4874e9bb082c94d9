//! Generic prediction files: one record per answer with `model`, `id` and
//! `response` (aliases: `prediction`, `output`, `answer`), as JSONL, a JSON
//! array, CSV, TSV or Parquet — read with the table readers ingest uses too, so every
//! record keeps its line (or Parquet row). `model` may be left out when the
//! command line names it (`--predictions MODEL=FILE`); `id` is a sample id or
//! a variant id (`<parent_id>::<kind>`); a JSON object of records keyed by id
//! is named by its keys. [`Fields`] renames the columns (`--id-field`,
//! `--response-field`, `--model-field`) or reads one answer column per model
//! (`--wide COLUMN=MODEL`; a blank cell is no answer). A null or missing
//! response is an empty answer (scored wrong), never an error; a list of
//! several answers is left unparsed ([`Response::Several`]).

use std::path::Path;

use super::{Fields, Prediction, Response, missing, response_field, text_field};
use crate::error::{Error, Result};
use crate::tables::bounded::Shape;
use crate::tables::raw::RawRecord;

/// Field names accepted for the response, in order (`text`: LLaVA's answer files).
pub const RESPONSE_FIELDS: [&str; 5] = ["response", "prediction", "output", "answer", "text"];

/// Field names accepted for the sample id, in order (`question_id`: the VQA evaluation
/// server's results and LLaVA's answer files; `_key`: an object keyed by id).
const ID_FIELDS: [&str; 3] = ["id", "question_id", "_key"];

/// Field names accepted for the model, in order (`model_id`: LLaVA's answer files).
const MODEL_FIELDS: [&str; 2] = ["model", "model_id"];

/// Reads a file's records with the table reader for its extension.
pub fn records(path: &Path) -> Result<Vec<RawRecord>> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    if matches!(ext.as_str(), "parquet" | "arrow" | "feather") {
        return crate::tables::parquet::read_table_file(path);
    }
    if crate::tables::xlsx::is_spreadsheet(path) {
        return crate::tables::xlsx::read_xlsx(path);
    }
    let shape = if ext == "json" { Shape::Json } else { Shape::Lines };
    let bytes = super::read_bytes(path, shape)?;
    match ext.as_str() {
        "csv" => crate::tables::csv::read_delimited(path, &bytes, b','),
        "tsv" => crate::tables::csv::read_delimited(path, &bytes, b'\t'),
        "jsonl" => crate::tables::json::read_jsonl(path, &bytes),
        _ => crate::tables::json::read_json(path, &bytes),
    }
}

pub fn read(path: &Path, model: Option<&str>, fields: &Fields) -> Result<Vec<Prediction>> {
    let mut out = Vec::new();
    let mut problems = crate::error::Capped::default();
    let id_fields: Vec<&str> = match &fields.id {
        Some(f) => vec![f.as_str()],
        // A JSON object of records keyed by id (MathVista's results) names them by key.
        None => ID_FIELDS.to_vec(),
    };
    let model_fields: Vec<&str> = match &fields.model {
        Some(f) => vec![f.as_str()],
        None => MODEL_FIELDS.to_vec(),
    };
    let response_fields: Vec<&str> = match &fields.response {
        Some(f) => vec![f.as_str()],
        None => RESPONSE_FIELDS.to_vec(),
    };
    let records = records(path)?;
    if records.is_empty() {
        return Ok(Vec::new());
    }
    if !fields.wide.is_empty() {
        check_wide_columns(&records, &fields.wide)?;
    }
    // A record with several fields that could hold the response: scoring one of them
    // would be a guess (a result file's `response` and `prediction` can be different runs).
    if fields.wide.is_empty()
        && let Some((rec, several)) = records.iter().find_map(|r| {
            let here: Vec<&str> = response_fields.iter().copied().filter(|f| r.has(f)).collect();
            (here.len() > 1).then_some((r, here))
        })
    {
        let names = several.iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(", ");
        return Err(Error::one(
            crate::error::Problem::new(
                rec.loc.clone(),
                format!("the record has several fields that could hold the response: {names}"),
            )
            .field(several[0])
            .help(format!(
                "name the one that holds the model's answers with --response-field (response-field in a pipeline), \
                 e.g. --response-field {}",
                several[1]
            )),
        ));
    }
    let present = records.iter().any(|r| response_fields.iter().any(|f| r.has(f)));
    if fields.wide.is_empty() && present {
        check_not_the_questions(&records, &response_fields)?;
    }
    // A file none of whose records has a response field names it otherwise: scoring
    // every answer as empty would report a model wrong on every question.
    if fields.wide.is_empty() && !present {
        let first = &records[0];
        let names = response_fields.iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(", ");
        return Err(Error::one(
            crate::error::Problem::new(
                first.loc.clone(),
                format!("no record of the file has a response field ({names})"),
            )
            .help(format!(
                "name the column that holds the model's answers with --response-field; this record's fields are: {}",
                first.field_names().join(", ")
            )),
        ));
    }
    for rec in records {
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
                let response = response_field(&rec, &[column.as_str()])
                    .filter(|r| !matches!(r, Response::Text(t) if t.trim().is_empty()));
                if let Some(response) = response {
                    out.push(Prediction { model: m.clone(), id: id.clone(), response, loc: rec.loc.clone() });
                }
            }
            continue;
        }
        let column = text_field(&rec, &model_fields).filter(|m| !m.is_empty());
        // A model named twice, by the command line and by the file, names it once only
        // when both agree, or when --model-field says the column wins.
        if let (Some(named), Some(col), None) = (model, column.as_deref(), &fields.model)
            && named != col
        {
            let field = model_fields.iter().find(|f| rec.has(f)).copied().unwrap_or("model");
            problems.push(
                crate::error::Problem::new(
                    rec.loc.clone(),
                    format!(
                        "the model is named \"{named}\" (--predictions {named}=FILE) and \"{col}\" (field \"{field}\")"
                    ),
                )
                .field(field)
                .help(format!(
                    "say which wins: --model-field {field} reads the column (\"{named}\" only where it is empty), or \
                     give the file without \"{named}=\" to read the column alone"
                )),
            );
            continue;
        }
        let m = column.or_else(|| model.map(str::to_string));
        let Some(m) = m else {
            problems.push(missing(
                &rec,
                model_fields[0],
                "add a \"model\" column, name the model (--predictions MODEL=FILE), name its column (--model-field), or give one answer column per model (--wide COLUMN=MODEL)",
            ));
            continue;
        };
        let response = response_field(&rec, &response_fields).unwrap_or(Response::Text(String::new()));
        out.push(Prediction { model: m, id, response, loc: rec.loc.clone() });
    }
    if problems.is_empty() { Ok(out) } else { Err(Error::Invalid(problems.into_vec())) }
}

/// `--wide` columns that no record has name nothing: importing nothing and
/// exiting 0 would report the model as never having answered.
fn check_wide_columns(records: &[RawRecord], wide: &[(String, String)]) -> Result<()> {
    let names: Vec<String> = records[0].field_names().into_iter().map(String::from).collect();
    let problems: Vec<crate::error::Problem> = wide
        .iter()
        .filter(|(column, _)| !records.iter().any(|r| r.has(column)))
        .map(|(column, model)| {
            let help = match crate::error::did_you_mean(column, names.iter().map(String::as_str)) {
                Some(m) => format!("did you mean --wide {m}={model}?"),
                None => format!("the first record's fields are: {}", names.join(", ")),
            };
            crate::error::Problem::new(
                records[0].loc.clone(),
                format!("--wide {column}={model}: no record has the column \"{column}\""),
            )
            .field(column.clone())
            .help(help)
        })
        .collect();
    if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
}

/// Fields that hold a benchmark's gold answer in the files people pass around.
const GOLD_FIELDS: [&str; 5] = ["answer", "gt_answer", "gold", "label", "ground_truth"];

/// A file whose rows are questions (a `question` field) and whose gold field
/// equals the response on more than 95% of them is the benchmark itself, or its
/// answers copied: scoring it would report a perfect model.
fn check_not_the_questions(records: &[RawRecord], response_fields: &[&str]) -> Result<()> {
    if !records.iter().any(|r| r.has("question")) {
        return Ok(());
    }
    let norm = |s: &str| s.trim().to_lowercase();
    for gold in GOLD_FIELDS {
        let pairs: Vec<(&str, String, String)> = records
            .iter()
            .filter_map(|r| {
                let field = response_fields.iter().copied().find(|f| r.has(f))?;
                Some((field, text_field(r, &[gold])?, text_field(r, &[field])?))
            })
            .filter(|(_, g, _)| !g.trim().is_empty())
            .collect();
        let same = pairs.iter().filter(|(_, g, r)| norm(g) == norm(r)).count();
        if !pairs.is_empty() && same * 100 > pairs.len() * 95 {
            let response = pairs[0].0;
            let what = if gold == response {
                format!("the response field \"{response}\" is their gold field")
            } else {
                format!("the response field \"{response}\" equals the gold field \"{gold}\"")
            };
            return Err(Error::one(
                crate::error::Problem::new(
                    records[0].loc.clone(),
                    format!(
                        "these rows look like the questions, not a model's predictions: they hold a question, and {what} \
                         on {same} of {} rows",
                        pairs.len()
                    ),
                )
                .field(response)
                .help("pass the model's result file (--predictions MODEL=FILE), or name the field holding its answers with --response-field"),
            ));
        }
    }
    Ok(())
}
