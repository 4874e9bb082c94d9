//! Predictions: models' answers, imported from evaluation logs, before
//! metrics and B-Clean (`predictions ─▶ metrics · B-Clean` in the flow).
//!
//! One file per source:
//! - [`generic`]: JSONL / JSON / CSV / TSV / Parquet with `model, id, response`;
//! - [`lmms_eval`]: lmms-eval `--log_samples` JSONL, mapped to blindspot ids
//!   by the id `process_results` echoes or by the export manifest;
//! - [`vlmevalkit`]: VLMEvalKit result files (`.xlsx`, `.tsv`, `.csv`) with
//!   `index` + `prediction`, mapped by `blindspot_id` or the export manifest;
//! - [`scienceqa`]: a JSON object `id → option index` (ScienceQA's and
//!   LLaVA's result files: `{"results": {pid: index}}`, −1 = unparsed).
//!
//! Every [`Prediction`] keeps the file and line (or row) it came from, so
//! metrics can name unknown ids where they are. An id is a sample id or a
//! variant id (`<parent_id>::<kind>`); the *condition* of a prediction is the
//! variant kind of its row, `original` for a sample. Answer parsing and
//! abstention detection live in [`parse`] and [`abstain`].
//!
//! A file is read whole, so one over [`MAX_FILE_BYTES`] is refused before it
//! is read; a file given twice, or a model or column named twice, is refused
//! before any is read ([`check_files`]): its answers would count twice.

// The crates below this one, under the module names the code uses.
use blindspot_core::{error, sample};
use blindspot_tables as tables;

pub mod abstain;
pub mod export_manifest;
pub mod generic;
pub mod lmms_eval;
pub mod parse;
pub mod scienceqa;
pub mod vlmevalkit;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Location, Problem, Result, display_path};
use crate::tables::raw::{Raw, RawRecord};
pub use parse::{Outcome, Response};

/// One model's answer to one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub model: String,
    /// A sample id or a variant id (`<parent_id>::<kind>`).
    pub id: String,
    pub response: Response,
    /// Where the prediction was read (file:line, or file: row N).
    pub loc: Location,
}

impl Prediction {
    /// A text response read from line `line` of a file named `test`: the
    /// predictions unit tests build (here and in the crates that score them).
    pub fn text(model: &str, id: &str, response: &str, line: u64) -> Prediction {
        Prediction {
            model: model.into(),
            id: id.into(),
            response: Response::Text(response.into()),
            loc: Location::line("test", line),
        }
    }
}

/// The kind of a prediction file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    Generic,
    LmmsEval,
    VlmEvalKit,
    /// `id → option index` JSON (ScienceQA / LLaVA result files).
    IndexMap,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Generic => "generic",
            Source::LmmsEval => "lmms-eval",
            Source::VlmEvalKit => "vlmevalkit",
            Source::IndexMap => "index-map",
        }
    }

    /// Parses a `--format` value.
    pub fn parse(s: &str) -> std::result::Result<Source, String> {
        match s {
            "generic" => Ok(Source::Generic),
            "lmms-eval" => Ok(Source::LmmsEval),
            "vlmevalkit" => Ok(Source::VlmEvalKit),
            "index-map" | "scienceqa" => Ok(Source::IndexMap),
            _ => Err(format!(
                "prediction format \"{s}\" is not one of generic, lmms-eval, vlmevalkit, index-map (default: detected from the file)"
            )),
        }
    }
}

/// Which columns of a generic file hold what (all optional: the defaults are
/// `id` (or the key of an object of records), `response`/`prediction`/`output`/
/// `answer`, and `model`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields {
    pub id: Option<String>,
    pub response: Option<String>,
    pub model: Option<String>,
    /// One answer column per model, `(column, model)`: each row gives one
    /// prediction per column present.
    pub wide: Vec<(String, String)>,
}

impl Fields {
    /// Parses `--wide COLUMN=MODEL` (the model defaults to the column's name).
    pub fn parse_wide(arg: &str) -> (String, String) {
        match arg.split_once('=') {
            Some((c, m)) if !m.is_empty() => (c.to_string(), m.to_string()),
            Some((c, _)) => (c.to_string(), c.to_string()),
            None => (arg.to_string(), arg.to_string()),
        }
    }

    pub fn is_default(&self) -> bool {
        *self == Fields::default()
    }

    /// A `--wide` column or model given twice: a column read as two models, or
    /// two columns read as one model, would count each row's answer twice.
    pub fn check_wide(&self) -> std::result::Result<(), String> {
        let quoted = |names: Vec<&str>| names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(" and ");
        if let Some(c) = first_repeat(self.wide.iter().map(|(c, _)| c.as_str())) {
            let models = self.wide.iter().filter(|(x, _)| x == c).map(|(_, m)| m.as_str()).collect();
            return Err(format!(
                "the answer column \"{c}\" is given twice (models {}): its answers would count twice",
                quoted(models)
            ));
        }
        if let Some(m) = first_repeat(self.wide.iter().map(|(_, m)| m.as_str())) {
            let columns = self.wide.iter().filter(|(_, x)| x == m).map(|(c, _)| c.as_str()).collect();
            return Err(format!(
                "the model \"{m}\" is named by two answer columns ({}): each row would count as two of its answers",
                quoted(columns)
            ));
        }
        Ok(())
    }
}

/// The first name `names` gives twice, in order.
pub fn first_repeat<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut seen = std::collections::BTreeSet::new();
    names.into_iter().find(|n| !seen.insert(*n))
}

/// A list of models (`--models`, `models = [...]`) naming one twice: its
/// answers would count twice towards a rule's number of models. `what` names
/// the list in the message.
pub fn check_models(models: &[String], what: &str) -> std::result::Result<(), String> {
    match first_repeat(models.iter().map(String::as_str)) {
        Some(m) => Err(format!(
            "{what} names the model \"{m}\" twice: its answers would count as two models'; list each model once"
        )),
        None => Ok(()),
    }
}

/// One prediction file to import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PredictionFile {
    pub path: PathBuf,
    /// The model's name; required where the file does not say it (index maps
    /// default to the file stem, lmms-eval to the folder, VLMEvalKit to the
    /// result name's prefix).
    pub model: Option<String>,
    /// `None`: detected from the extension and the first record.
    pub source: Option<Source>,
    /// Column names of a generic file (a mapping makes the file generic).
    pub fields: Fields,
}

impl PredictionFile {
    /// Parses the command line's `[MODEL=]FILE`.
    pub fn parse(arg: &str) -> PredictionFile {
        match arg.split_once('=') {
            Some((model, path)) if !model.is_empty() && !model.contains(['/', '\\']) => PredictionFile {
                path: PathBuf::from(path),
                model: Some(model.to_string()),
                source: None,
                fields: Fields::default(),
            },
            _ => PredictionFile { path: PathBuf::from(arg), model: None, source: None, fields: Fields::default() },
        }
    }
}

/// What one file contributed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSummary {
    pub file: String,
    pub source: Source,
    /// Predictions per model.
    pub models: BTreeMap<String, usize>,
}

/// Every prediction of the files, in file order then record order.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    pub predictions: Vec<Prediction>,
    pub files: Vec<FileSummary>,
}

impl Imported {
    /// The warning for responses that are lists of several answers (left
    /// unparsed: scored 0 and counted as unparsed), if any, with the first's location.
    pub fn several_warning(&self) -> Option<String> {
        let mut lists = self.predictions.iter().filter(|p| matches!(p.response, Response::Several(_)));
        let first = lists.next()?;
        let n = 1 + lists.count();
        Some(format!(
            "warning: {n} response{} {} a list of several answers (the first at {}, model \"{}\", id \"{}\"); \
             which one the model meant is unknown, so {} left unparsed (scored 0, counted as unparsed)",
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" },
            first.loc,
            first.model,
            first.id,
            if n == 1 { "it is" } else { "they are" },
        ))
    }
}

/// The export manifest `blindspot export` wrote: harness row → blindspot id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// VLMEvalKit: TSV stem (`<Name>_<config>`) → ids by `index`.
    pub vlmevalkit: BTreeMap<String, Vec<String>>,
    /// lmms-eval: task name → ids by `doc_id`.
    pub lmms_eval: BTreeMap<String, Vec<String>>,
}

impl Manifest {
    /// Reads a `manifest.json` of either harness (several may be merged).
    pub fn load(path: &Path) -> Result<Manifest> {
        use export_manifest::ExportManifest;
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let bad = |msg: String| {
            Error::one(
                Problem::new(Location::file(path), msg)
                    .help("give the manifest.json that `blindspot export` wrote beside the exported files"),
            )
        };
        let read: ExportManifest =
            serde_json::from_str(&text).map_err(|e| bad(format!("not an export manifest: {e}")))?;
        // Row i of a file or task is the id at `index` / `doc_id` i; each
        // position named once, none past the end.
        let ids = |rows: Vec<(usize, String)>, key: &str| -> Result<Vec<String>> {
            let mut out: Vec<Option<String>> = vec![None; rows.len()];
            for (i, id) in rows {
                let slot = out.get_mut(i).ok_or_else(|| bad(format!("{key} {i} is out of range")))?;
                if slot.replace(id).is_some() {
                    return Err(bad(format!("{key} {i} is listed twice")));
                }
            }
            Ok(out.into_iter().map(Option::unwrap_or_default).collect())
        };
        let mut m = Manifest::default();
        match read {
            ExportManifest::Vlmevalkit { files, .. } => {
                for f in files {
                    let stem = f.file.strip_suffix(".tsv").unwrap_or(&f.file).to_string();
                    m.vlmevalkit.insert(stem, ids(f.rows.into_iter().map(|r| (r.index, r.id)).collect(), "index")?);
                }
            }
            ExportManifest::LmmsEval { tasks, .. } => {
                for t in tasks {
                    m.lmms_eval.insert(t.task, ids(t.rows.into_iter().map(|r| (r.doc_id, r.id)).collect(), "doc_id")?);
                }
            }
        }
        Ok(m)
    }

    pub fn merge(&mut self, other: Manifest) {
        self.vlmevalkit.extend(other.vlmevalkit);
        self.lmms_eval.extend(other.lmms_eval);
    }
}

/// The largest prediction file read. A file is read whole and its records
/// held while they are checked, which takes several times the file's size in
/// memory (a 246 MiB JSON-lines file peaks at 1.13 GB): past this size the
/// file is refused before it is read, with what to do, so an import stays
/// under 1 GB instead of running out of memory. Far above one model's answers
/// to a benchmark (100,000 questions with 1 kB answers are 100 MB).
pub const MAX_FILE_BYTES: u64 = 192 << 20;

/// The refusal of a prediction file over `cap` bytes (`size`: its size when known).
fn too_large(path: &Path, size: Option<u64>, cap: u64) -> Error {
    let shown = |b: u64| {
        if b < 1 << 20 { format!("{b} bytes") } else { format!("{:.0} MiB", b as f64 / f64::from(1u32 << 20)) }
    };
    let what = match size {
        Some(n) => format!("the file is {}", shown(n)),
        None => format!("the stream passed {}", shown(cap)),
    };
    Error::one(
        Problem::new(
            Location::file(path),
            format!(
                "{what}, more than the {} a prediction file may hold: its answers are read whole, which would need \
                 several times that in memory",
                shown(cap)
            ),
        )
        .help(
            "split it into several files (one per model or per condition, each given to --predictions), and keep \
             only the columns read (id, model, response)",
        ),
    )
}

/// The size of a regular file, checked against [`MAX_FILE_BYTES`] before anything is read.
pub fn check_size(path: &Path, cap: u64) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() > cap => Err(too_large(path, Some(m.len()), cap)),
        _ => Ok(()),
    }
}

/// Reads a prediction file whole, each record within ingest's record limit,
/// and refused past `cap` bytes: up front for a regular file, as soon as the
/// count passes it for a pipe.
pub fn read_capped(path: &Path, shape: crate::tables::bounded::Shape, cap: u64) -> Result<Vec<u8>> {
    check_size(path, cap)?;
    let mut reader = crate::tables::bounded::Reader::open(path, shape)?;
    let mut bytes = Vec::with_capacity(usize::try_from(reader.size_hint.min(cap)).unwrap_or(0));
    while reader.read_chunk(&mut bytes)? {
        if bytes.len() as u64 > cap {
            return Err(too_large(path, None, cap));
        }
    }
    Ok(bytes)
}

/// [`read_capped`] at [`MAX_FILE_BYTES`].
pub fn read_bytes(path: &Path, shape: crate::tables::bounded::Shape) -> Result<Vec<u8>> {
    read_capped(path, shape, MAX_FILE_BYTES)
}

/// A table's source by its (lower-cased) column names: VLMEvalKit's result
/// has `index` and `prediction` and no `model`.
fn vlmevalkit_or_generic(cols: &[String]) -> Source {
    let has = |c: &str| cols.iter().any(|x| x == c);
    if has("index") && has("prediction") && !has("model") { Source::VlmEvalKit } else { Source::Generic }
}

/// Detects a file's source from its extension and first record.
pub fn detect(path: &Path) -> Result<Source> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        // A spreadsheet is VLMEvalKit's result when its header is, as a CSV's is
        // below; any other is a generic table (model, id, response).
        "xlsx" | "xls" | "xlsm" | "ods" => {
            let records = crate::tables::xlsx::read_xlsx(path)?;
            let cols: Vec<String> = records
                .first()
                .map(|r| r.field_names().into_iter().map(str::to_ascii_lowercase).collect())
                .unwrap_or_default();
            return Ok(vlmevalkit_or_generic(&cols));
        }
        "parquet" => return Ok(Source::Generic),
        _ => {}
    }
    let shape = if matches!(ext.as_str(), "csv" | "tsv" | "jsonl") {
        crate::tables::bounded::Shape::Lines
    } else {
        crate::tables::bounded::Shape::Json
    };
    let text = read_bytes(path, shape)?;
    // A byte-order mark (spreadsheets and Windows editors write one) is not
    // part of the first column's name or the first record; the readers skip it too.
    let body = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&text);
    let head = String::from_utf8_lossy(&body[..body.len().min(1 << 16)]).to_string();
    match ext.as_str() {
        "csv" | "tsv" => {
            let header = head.lines().next().unwrap_or("");
            let cols: Vec<String> =
                header.split([',', '\t']).map(|c| c.trim().trim_matches('"').to_ascii_lowercase()).collect();
            Ok(vlmevalkit_or_generic(&cols))
        }
        _ => {
            let first = head.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
            if first.starts_with('{') && first.ends_with('}') && first.contains("\"doc_id\"") {
                return Ok(Source::LmmsEval);
            }
            if first == "{" {
                // A pretty-printed object: an index map when it has "results" or int values.
                let v: serde_json::Value = serde_json::from_slice(body).map_err(|e| {
                    Error::one(Problem::new(Location::line(path, e.line() as u64), format!("invalid JSON: {e}")))
                })?;
                if v.get("logs").is_some() {
                    return Ok(Source::LmmsEval);
                }
                if scienceqa::index_object(&v).is_some() {
                    return Ok(Source::IndexMap);
                }
            }
            Ok(Source::Generic)
        }
    }
}

/// Checks the list of files before any is read: a file given twice would
/// count each of its answers twice (as two samples of its model, or as two
/// models), and so would a `--wide` column or model given twice.
pub fn check_files(files: &[PredictionFile]) -> Result<()> {
    let mut problems = Vec::new();
    let mut seen: BTreeMap<PathBuf, &PredictionFile> = BTreeMap::new();
    let label = |f: &PredictionFile| match &f.model {
        Some(m) => format!("{m}={}", f.path.display()),
        None => f.path.display().to_string(),
    };
    for f in files {
        // The same file under two spellings (`a.jsonl`, `./a.jsonl`) is the same file.
        let key = std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone());
        if let Some(first) = seen.get(&key) {
            problems.push(
                Problem::new(
                    Location::file(&f.path),
                    format!(
                        "the prediction file is given twice (--predictions {} and {}): its answers would count twice",
                        label(first),
                        label(f)
                    ),
                )
                .help("give each prediction file once (several tries of one model go in different files)"),
            );
            continue;
        }
        seen.insert(key, f);
        if let Err(m) = f.fields.check_wide() {
            problems.push(
                Problem::new(Location::file(&f.path), m).field("wide").help("give each column and each model once"),
            );
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
}

/// Imports every file in order, with the manifest (if any) for harness files.
pub fn import_all(files: &[PredictionFile], manifest: Option<&Manifest>) -> Result<Imported> {
    check_files(files)?;
    let mut out = Imported::default();
    let mut problems = Vec::new();
    for f in files {
        if !f.path.exists() {
            problems.push(
                Problem::new(Location::file(&f.path), "no such prediction file")
                    .help("check the path given to --predictions"),
            );
            continue;
        }
        // Spreadsheets and Parquet files are not read through `read_bytes`: their size is checked here.
        if let Err(Error::Invalid(p)) = check_size(&f.path, MAX_FILE_BYTES) {
            problems.extend(p);
            continue;
        }
        let source = match f.source {
            Some(s) => s,
            // A column mapping describes a generic table.
            None if !f.fields.is_default() => Source::Generic,
            None => detect(&f.path)?,
        };
        let preds = match source {
            Source::Generic => generic::read(&f.path, f.model.as_deref(), &f.fields),
            Source::LmmsEval => lmms_eval::read(&f.path, f.model.as_deref(), manifest),
            Source::VlmEvalKit => vlmevalkit::read(&f.path, f.model.as_deref(), manifest),
            Source::IndexMap => scienceqa::read(&f.path, f.model.as_deref()),
        };
        match preds {
            Ok(p) => {
                let mut models = BTreeMap::new();
                for x in &p {
                    *models.entry(x.model.clone()).or_insert(0) += 1;
                }
                out.files.push(FileSummary { file: display_path(&f.path), source, models });
                out.predictions.extend(p);
            }
            Err(Error::Invalid(p)) => problems.extend(p),
            Err(e) => return Err(e),
        }
    }
    if problems.is_empty() { Ok(out) } else { Err(Error::Invalid(problems)) }
}

/// The model name from a path's stem (index maps, generic files without a
/// `model` column).
pub fn stem_model(path: &Path) -> String {
    path.file_stem().and_then(|s| s.to_str()).unwrap_or("model").to_string()
}

/// The response a record's first present, non-null field of `names` holds.
pub fn response_field(rec: &RawRecord, names: &[&str]) -> Option<Response> {
    names.iter().find_map(|n| match rec.field(n)?.as_ref() {
        Raw::Null => None,
        other => Some(response_of(other)),
    })
}

/// A response value as imported: a list of one element is that element
/// (lmms-eval's `resps` is `[["text"]]`), an empty list or null is an empty
/// answer, and a list of several is [`Response::Several`]: taking its first
/// element would score an answer the model may not have meant.
pub fn response_of(v: &Raw) -> Response {
    match v {
        Raw::List(items) if items.len() == 1 => response_of(&items[0]),
        Raw::List(items) if items.len() > 1 => Response::Several(items.iter().map(first_text).collect()),
        other => Response::Text(first_text(other)),
    }
}

/// A text field of a record: scalars as text, `None` when absent or null.
pub fn text_field(rec: &RawRecord, names: &[&str]) -> Option<String> {
    names.iter().find_map(|n| match rec.field(n)?.as_ref() {
        Raw::Null => None,
        Raw::List(items) => items.first().map(first_text),
        other => Some(first_text(other)),
    })
}

/// The first string inside nested lists (`[["text"]]` → `text`), or the value as text.
pub fn first_text(v: &Raw) -> String {
    match v {
        Raw::List(items) => items.first().map(first_text).unwrap_or_default(),
        Raw::Null => String::new(),
        other => other.to_text(),
    }
}

/// A located problem with a missing field, saying what to do.
pub fn missing(rec: &RawRecord, field: &str, help: &str) -> Problem {
    Problem::new(rec.loc.clone(), format!("no \"{field}\" in this record")).field(field).help(help)
}
