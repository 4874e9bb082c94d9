//! lmms-eval `--log_samples` output: one JSON record per doc
//! (`<date>_samples_<task>.jsonl`, or a `.json` with a `logs` list) holding
//! `doc_id`, `resps` / `filtered_resps` and whatever `process_results`
//! returned. The task folder `blindspot export --to lmms-eval` writes makes
//! `process_results` echo `blindspot: {id, prediction, ...}`; without it the
//! id comes from the record's `doc.id`, or from the export manifest
//! (`task` → `doc_id` → id; the task is read from the file name after
//! `_samples_`, or from the record's `task_name`).
//!
//! The model is `--predictions MODEL=FILE`'s, else the folder lmms-eval wrote
//! the file into (it names that folder after the model).

use std::path::Path;

use super::{Manifest, Prediction, Response, response_of, text_field};
use crate::error::{Error, Location, Problem, Result};
use crate::tables::bounded::Shape;
use crate::tables::raw::{Raw, RawRecord};

/// The task a samples file belongs to, from its name.
pub fn task_of_file(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    stem.split_once("_samples_").map(|(_, t)| t.to_string())
}

fn model_of(path: &Path, model: Option<&str>) -> String {
    if let Some(m) = model {
        return m.to_string();
    }
    path.parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty())
        .map_or_else(|| super::stem_model(path), str::to_string)
}

fn records(path: &Path) -> Result<Vec<RawRecord>> {
    let is_jsonl = path.extension().and_then(|e| e.to_str()) == Some("jsonl");
    let shape = if is_jsonl { Shape::Lines } else { Shape::Json };
    let bytes = super::read_bytes(path, shape)?;
    let recs = if is_jsonl {
        crate::tables::json::read_jsonl(path, &bytes)?
    } else {
        crate::tables::json::read_json(path, &bytes)?
    };
    // A `.json` results file: {"logs": [...], ...} is one record holding the list.
    if recs.len() > 1 || recs.first().is_some_and(|r| r.value.get("doc_id").is_some()) {
        return Ok(recs);
    }
    let mut out = Vec::new();
    for r in recs {
        if r.key.as_deref() == Some("logs")
            && let Raw::List(items) = r.value
        {
            for (i, v) in items.into_iter().enumerate() {
                out.push(RawRecord {
                    loc: r.loc.clone(),
                    value: v,
                    file_stem: r.file_stem.clone(),
                    key: None,
                    row: i as u64 + 1,
                });
            }
        }
    }
    Ok(out)
}

pub fn read(path: &Path, model: Option<&str>, manifest: Option<&Manifest>) -> Result<Vec<Prediction>> {
    let model = model_of(path, model);
    let file_task = task_of_file(path);
    let mut out = Vec::new();
    let mut problems = crate::error::Capped::default();
    let recs = records(path)?;
    if recs.is_empty() {
        return Err(Error::one(
            Problem::new(
                Location::file(path),
                "no samples found (neither JSON lines with \"doc_id\" nor a \"logs\" list)",
            )
            .help("give the *_samples_<task>.jsonl file lmms-eval writes with --log_samples"),
        ));
    }
    for rec in recs {
        let echoed = rec.field("blindspot.id").and_then(|v| v.scalar_text());
        let id = echoed.or_else(|| rec.field("doc.id").and_then(|v| v.scalar_text())).or_else(|| {
            let task = text_field(&rec, &["task_name", "task"]).or_else(|| file_task.clone())?;
            let doc = rec.field("doc_id")?.scalar_text()?.parse::<usize>().ok()?;
            manifest?.lmms_eval.get(&task)?.get(doc).cloned()
        });
        let Some(id) = id.filter(|i| !i.is_empty()) else {
            let task = file_task.clone().unwrap_or_else(|| "?".into());
            problems.push(
                Problem::new(rec.loc.clone(), format!("no blindspot id for this doc (task \"{task}\")"))
                    .field("doc_id")
                    .help("run the task folder `blindspot export --to lmms-eval` wrote (it echoes the id), or pass its manifest: --manifest DIR/manifest.json"),
            );
            continue;
        };
        let response = rec
            .field("blindspot.prediction")
            .or_else(|| rec.field("filtered_resps"))
            .or_else(|| rec.field("resps"))
            .map_or(Response::Text(String::new()), |v| response_of(&v));
        out.push(Prediction { model: model.clone(), id, response, loc: rec.loc.clone() });
    }
    if problems.is_empty() { Ok(out) } else { Err(Error::Invalid(problems.into_vec())) }
}
