//! The rows predictions are scored against, read back from files
//! (`blindspot metrics` and `blindspot filter`): canonical Parquet (a
//! release's configs, `blindspot variants`' kinds), a pipeline file, or a data
//! file with canonical fields; a row that two files give is read once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::{Capped, Error, Location, Problem, Result, display_path};
use crate::sample::{Sample, id_cmp};
use crate::spec::{IngestPlan, Pipeline};

/// Reads one rows file: canonical Parquet, a pipeline, or canonical-field data.
pub fn read_rows(path: &Path) -> Result<Vec<Sample>> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("parquet") => crate::io::parquet::read_samples(path),
        Some("toml") => Ok(crate::ingest::ingest(&Pipeline::load(path)?.ingest)?.samples),
        _ => {
            if !path.exists() {
                return Err(Error::io(path, std::io::Error::new(std::io::ErrorKind::NotFound, "no such file")));
            }
            Ok(crate::ingest::ingest(&IngestPlan::for_canonical_input(path)?)?.samples)
        }
    }
}

/// Rows of every file, sorted by id. A row given by two files (a release's
/// `full` config repeats `data`'s rows) is read once when both copies agree on
/// what scoring and grouping read; copies that differ are an error, since
/// which gold to score against is unknown.
pub fn load_rows(files: &[PathBuf]) -> Result<Vec<Sample>> {
    let mut seen: HashMap<String, (usize, usize)> = HashMap::new();
    let mut rows = Vec::new();
    let mut problems = Capped::default();
    for (f, file) in files.iter().enumerate() {
        for s in read_rows(file)? {
            match seen.get(&s.id).copied() {
                None => {
                    seen.insert(s.id.clone(), (f, rows.len()));
                    rows.push(s);
                }
                Some((first_file, at)) => {
                    if let Some((field, a, b)) = first_difference(&rows[at], &s) {
                        problems.push(
                            Problem::new(
                                Location::file(file),
                                format!(
                                    "id \"{}\" is also in {}, with another {field}: {a} there, {b} here; which one \
                                     to score against is unknown",
                                    s.id,
                                    display_path(&files[first_file])
                                ),
                            )
                            .field(field)
                            .help("give each question once: drop the stale file, or give the files of one version"),
                        );
                    }
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(problems.into_vec()));
    }
    rows.sort_by(|a, b| id_cmp(&a.id, &b.id));
    Ok(rows)
}

/// The first field two copies of one row disagree on, among those scoring,
/// grouping and the audit read, with both values as JSON.
fn first_difference(a: &Sample, b: &Sample) -> Option<(&'static str, String, String)> {
    fn json<T: serde::Serialize>(v: &T) -> String {
        serde_json::to_string(v).unwrap_or_default()
    }
    let pairs: [(&'static str, String, String); 10] = [
        ("answer", json(&a.answer), json(&b.answer)),
        ("answer_index", json(&a.answer_index), json(&b.answer_index)),
        ("options", json(&a.options), json(&b.options)),
        ("answer_format", json(&a.answer_format), json(&b.answer_format)),
        ("question", json(&a.question), json(&b.question)),
        ("context", json(&a.context), json(&b.context)),
        ("question_type", json(&a.question_type), json(&b.question_type)),
        ("meta", json(&a.meta), json(&b.meta)),
        ("parent_id", json(&a.parent_id), json(&b.parent_id)),
        ("variant", json(&a.variant), json(&b.variant)),
    ];
    pairs.into_iter().find(|(_, x, y)| x != y)
}

/// What `blindspot metrics` and `blindspot filter` read: rows files, a
/// release folder, prediction files and `blindspot export` manifests.
pub struct Sources<'a> {
    pub samples: &'a [PathBuf],
    /// A release (or `blindspot variants` output) folder: every Parquet file below it.
    pub release: Option<&'a Path>,
    pub predictions: &'a [crate::predictions::PredictionFile],
    pub manifests: &'a [PathBuf],
}

/// The rows (sorted by id) and the predictions that answer them; the list of
/// prediction files is checked before any row is read.
pub fn load(sources: &Sources<'_>) -> Result<(Vec<Sample>, crate::predictions::Imported)> {
    let mut files: Vec<PathBuf> = sources.samples.to_vec();
    if let Some(dir) = sources.release {
        files.extend(crate::io::release_dir::data_files(dir)?);
    }
    crate::predictions::check_files(sources.predictions)?;
    let rows = load_rows(&files)?;
    let mut manifest: Option<crate::predictions::Manifest> = None;
    for m in sources.manifests {
        manifest.get_or_insert_with(Default::default).merge(crate::predictions::Manifest::load(m)?);
    }
    let imported = crate::predictions::import_all(sources.predictions, manifest.as_ref())?;
    Ok((rows, imported))
}
