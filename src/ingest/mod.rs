//! Ingest: any benchmark file(s) → canonical [`Sample`]s, validated, sorted by id.
//!
//! ```text
//! reader (one file per format) ─▶ RawRecord ─▶ filters ─▶ mapping ─▶ images ─▶ checks ─▶ samples
//!                                                                   └──────────────▶ rejected (on-invalid = "skip")
//! ```
//! Guarantees of [`ingest`]: ids unique and non-empty, questions non-empty,
//! every multiple-choice gold among its options, every image found and read,
//! samples sorted by [`crate::sample::id_cmp`]. A sample that breaks one of
//! these is an error (default) or rejected with its reasons — never dropped silently.

pub mod bounded;
pub mod csv;
pub mod images;
pub mod json;
pub mod mapping;
pub mod options;
pub mod parquet;
pub mod plan;
pub mod raw;
pub mod vlmevalkit;
pub mod xlsx;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::error::OnInvalid;
use crate::error::{Error, Location, Problem, Result, did_you_mean, display_path};
use crate::progress;
use crate::sample::{AnswerFormat, Sample, id_cmp};
use mapping::{Mapped, Outcome};
pub use plan::{Format, IngestPlan};
use raw::RawRecord;

/// A sample left out under `on-invalid = "skip"`, with why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rejected {
    pub location: String,
    pub id: Option<String>,
    pub reasons: Vec<String>,
    pub record: serde_json::Value,
}

/// One input file read, with its hash (for the manifest).
#[derive(Debug, Clone)]
pub struct InputFile {
    pub path: PathBuf,
    pub sha256: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, Default)]
pub struct IngestStats {
    pub records: usize,
    pub filtered: usize,
    pub rejected: usize,
    pub kept: usize,
    /// Data-quality notes on kept samples, one per kind, in a fixed order.
    pub notes: Vec<IngestNote>,
}

/// One kind of data-quality note: how many kept rows it concerns, and the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestNote {
    pub what: &'static str,
    pub rows: usize,
    pub first: String,
}

/// What ingest produced.
#[derive(Debug, Clone)]
pub struct Ingested {
    pub samples: Vec<Sample>,
    pub rejected: Vec<Rejected>,
    pub inputs: Vec<InputFile>,
    /// sha256 and size of every image file used, by relative path.
    pub images: BTreeMap<String, String>,
    pub stats: IngestStats,
}

impl Ingested {
    /// Counts per answer format, in a fixed order.
    pub fn format_counts(&self) -> Vec<(AnswerFormat, usize)> {
        AnswerFormat::ALL
            .iter()
            .map(|f| (*f, self.samples.iter().filter(|s| s.answer_format == *f).count()))
            .filter(|(_, n)| *n > 0)
            .collect()
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

fn hash_file(path: &Path, bytes: Option<&[u8]>) -> Result<InputFile> {
    let owned;
    let b = match bytes {
        Some(b) => b,
        None => {
            owned = read_file(path)?;
            &owned
        }
    };
    Ok(InputFile { path: path.to_path_buf(), sha256: hex::encode(Sha256::digest(b)), bytes: b.len() as u64 })
}

/// The records of one input: JSON is parsed lazily, chunk by chunk, while
/// mapping; other formats arrive parsed.
enum Source {
    Json(json::JsonRecords),
    Parsed(Vec<RawRecord>),
}

impl Source {
    fn len(&self) -> usize {
        match self {
            Source::Json(j) => j.len(),
            Source::Parsed(r) => r.len(),
        }
    }

    fn chunk(&self, range: std::ops::Range<usize>) -> (std::borrow::Cow<'_, [RawRecord]>, Vec<Problem>) {
        match self {
            Source::Json(j) => {
                let (r, p) = j.parse(range);
                (std::borrow::Cow::Owned(r), p)
            }
            Source::Parsed(r) => (std::borrow::Cow::Borrowed(&r[range]), Vec::new()),
        }
    }
}

/// Reads one input (any format).
fn read_input(path: &Path, format: Format, split: &str, inputs: &mut Vec<InputFile>) -> Result<Source> {
    match format {
        Format::Json | Format::Jsonl | Format::Csv | Format::Tsv | Format::Vlmevalkit => {
            let shape = if format == Format::Json { bounded::Shape::Json } else { bounded::Shape::Lines };
            let bytes = bounded::read(path, shape)?;
            inputs.push(hash_file(path, Some(&bytes))?);
            Ok(match format {
                Format::Json => Source::Json(json::split_json(path, bytes)?),
                Format::Jsonl => Source::Json(json::split_jsonl(path, bytes)?),
                Format::Csv => Source::Parsed(csv::read_delimited(path, &bytes, b',')?),
                Format::Tsv => Source::Parsed(csv::read_delimited(path, &bytes, b'\t')?),
                _ => Source::Parsed(vlmevalkit::read_vlmevalkit(path, &bytes)?),
            })
        }
        Format::Parquet => {
            inputs.push(hash_file(path, None)?);
            Ok(Source::Parsed(parquet::read_parquet(path)?))
        }
        Format::Xlsx => {
            inputs.push(hash_file(path, None)?);
            Ok(Source::Parsed(xlsx::read_xlsx(path)?))
        }
        Format::Hf => {
            let mut all = Vec::new();
            for f in parquet::hf_split_files(path, split)? {
                inputs.push(hash_file(&f, None)?);
                all.extend(parquet::read_parquet(&f)?);
            }
            Ok(Source::Parsed(all))
        }
        Format::Imagefolder => {
            let jsonl = path.join("metadata.jsonl");
            let meta = if jsonl.exists() { jsonl } else { path.join("metadata.csv") };
            // Opening a FIFO with no writer would wait for ever.
            if std::fs::metadata(&meta).is_ok_and(|m| !m.is_file()) {
                return Err(Error::one(
                    Problem::new(Location::file(&meta), "the ImageFolder's metadata is not a regular file")
                        .help("metadata.jsonl or metadata.csv must be a file (not a pipe, device or folder)"),
                ));
            }
            let bytes = bounded::read(&meta, bounded::Shape::Lines)?;
            inputs.push(hash_file(&meta, Some(&bytes))?);
            if meta.extension().and_then(|e| e.to_str()) == Some("csv") {
                Ok(Source::Parsed(csv::read_delimited(&meta, &bytes, b',')?))
            } else {
                Ok(Source::Json(json::split_jsonl(&meta, bytes)?))
            }
        }
    }
}

/// One record after mapping. The raw record is kept only when it is invalid
/// (for the rejected file); valid ones are dropped as soon as they are mapped.
struct Item {
    outcome: Outcome,
    invalid_raw: Option<(RawRecord, Format)>,
}

/// What one chunk of records produced.
struct ChunkOut {
    items: Vec<Item>,
    parse_problems: Vec<Problem>,
    /// Per filter: whether any record of the chunk has its field.
    filter_seen: Vec<bool>,
}

fn process_chunk(source: &Source, range: std::ops::Range<usize>, format: Format, plan: &IngestPlan) -> ChunkOut {
    let (records, parse_problems) = source.chunk(range);
    let filter_seen = plan.filters.iter().map(|f| records.iter().any(|r| r.has(&f.field))).collect();
    let items = records
        .iter()
        .map(|r| {
            let outcome = mapping::map_record(r, plan, format);
            let invalid_raw = matches!(outcome, Outcome::Invalid(_)).then(|| (r.clone(), format));
            Item { outcome, invalid_raw }
        })
        .collect();
    ChunkOut { items, parse_problems, filter_seen }
}

/// Runs ingest for a plan. With `on-invalid = "error"`, any invalid sample
/// fails the whole ingest with every problem listed.
pub fn ingest(plan: &IngestPlan) -> Result<Ingested> {
    let mut inputs = Vec::new();
    let mut sources = Vec::new();
    let spinner = progress::spinner("reading");
    let mut read_problems = Vec::new();
    for input in &plan.inputs {
        spinner.set_message(format!("reading {}", display_path(&input.path)));
        match read_input(&input.path, input.format, &plan.split, &mut inputs) {
            Ok(source) => sources.push((source, input.format)),
            Err(Error::Invalid(p)) => read_problems.extend(p),
            Err(e) => return Err(e),
        }
    }
    spinner.finish_and_clear();
    if !read_problems.is_empty() {
        return Err(Error::Invalid(read_problems));
    }

    let total: usize = sources.iter().map(|(s, _)| s.len()).sum();
    let bar = progress::bar(total as u64, "mapping");
    let units: Vec<(usize, std::ops::Range<usize>)> = sources
        .iter()
        .enumerate()
        .flat_map(|(k, (s, _))| (0..s.len()).step_by(json::CHUNK).map(move |a| (k, a..(a + json::CHUNK).min(s.len()))))
        .collect();
    let chunks: Vec<ChunkOut> = units
        .into_par_iter()
        .map(|(k, range)| {
            let n = range.len() as u64;
            let out = process_chunk(&sources[k].0, range, sources[k].1, plan);
            bar.inc(n);
            out
        })
        .collect();
    bar.finish_and_clear();
    drop(sources);

    let mut filter_seen = vec![false; plan.filters.len()];
    let mut parse_problems = Vec::new();
    let mut items = Vec::with_capacity(total);
    for c in chunks {
        parse_problems.extend(c.parse_problems);
        for (seen, s) in filter_seen.iter_mut().zip(c.filter_seen) {
            *seen |= s;
        }
        items.extend(c.items);
    }
    if !parse_problems.is_empty() {
        return Err(Error::Invalid(parse_problems));
    }
    check_filter_fields(plan, &filter_seen)?;

    let mut stats = IngestStats { records: items.len(), ..Default::default() };
    // Record index of each mapped sample, and the samples themselves.
    let mut kept: Vec<usize> = Vec::new();
    let mut mapped: Vec<Mapped> = Vec::new();
    let mut invalid: BTreeMap<usize, Vec<Problem>> = BTreeMap::new();
    let mut raws: BTreeMap<usize, (RawRecord, Format)> = BTreeMap::new();
    for (i, item) in items.into_iter().enumerate() {
        match item.outcome {
            Outcome::Kept(m) => {
                kept.push(i);
                mapped.push(*m);
            }
            Outcome::Filtered => stats.filtered += 1,
            Outcome::Invalid(p) => {
                invalid.insert(i, p);
            }
        }
        if let Some(raw) = item.invalid_raw {
            raws.insert(i, raw);
        }
    }

    // Images: resolve against the image folder (an ImageFolder input is its own).
    let image_dir = plan
        .images_dir
        .clone()
        .or_else(|| plan.inputs.iter().find(|i| i.format == Format::Imagefolder).map(|i| i.path.clone()));
    for (k, p) in images::resolve(&mut mapped, image_dir.as_deref()) {
        invalid.entry(kept[k]).or_default().push(p);
    }

    // Unique ids: the first occurrence (in file order) wins. Ids are compared in
    // Unicode NFC, so the same text typed composed and decomposed is one id.
    let mut first_seen: std::collections::HashMap<std::borrow::Cow<'_, str>, (&str, &Location)> =
        std::collections::HashMap::new();
    for (i, m) in kept.iter().zip(&mapped) {
        if invalid.contains_key(i) {
            continue;
        }
        let id = m.sample.id.as_str();
        let key: std::borrow::Cow<'_, str> = if id.is_ascii() {
            std::borrow::Cow::Borrowed(id)
        } else {
            use unicode_normalization::UnicodeNormalization;
            std::borrow::Cow::Owned(id.nfc().collect())
        };
        if let Some((first_id, first)) = first_seen.get(&key) {
            let same = if *first_id == id {
                String::new()
            } else {
                format!(", written \"{first_id}\": the same text in another Unicode normalization")
            };
            invalid.entry(*i).or_default().push(
                Problem::new(m.loc.clone(), format!("duplicate id \"{id}\" (first seen at {first}{same})"))
                    .field("id")
                    .help("ids must be unique: map a unique field, or a template like \"{_file}-{id}\""),
            );
        } else {
            first_seen.insert(key, (id, &m.loc));
        }
    }

    if !invalid.is_empty() && plan.on_invalid == OnInvalid::Error {
        let mut problems: Vec<Problem> = invalid.into_values().flatten().collect();
        if let Some(last) = problems.last_mut() {
            let help = last.help.take();
            last.help = Some(match help {
                Some(h) => format!(
                    "{h}\n  help: or set [ingest] on-invalid = \"skip\" to reject invalid rows into the release's rejected file"
                ),
                None => {
                    "set [ingest] on-invalid = \"skip\" to reject invalid rows into the release's rejected file".into()
                }
            });
        }
        return Err(Error::Invalid(problems));
    }

    let mut rejected = Vec::new();
    for (i, problems) in &invalid {
        let (location, id, record) = match (kept.binary_search(i).ok(), raws.get(i)) {
            // Valid as a record, invalid as a sample (image, duplicate id).
            (Some(k), _) => {
                (mapped[k].loc.to_string(), Some(mapped[k].sample.id.clone()), sample_json(&mapped[k].sample))
            }
            (None, Some((raw, format))) => {
                (raw.loc.to_string(), mapping::best_effort_id(raw, plan, *format), raw.value.to_json())
            }
            (None, None) => return Err(Error::Bug(format!("invalid record {i} kept neither raw nor mapped"))),
        };
        rejected.push(Rejected {
            location,
            id,
            reasons: problems
                .iter()
                .map(|p| match &p.field {
                    Some(f) => format!("field \"{f}\": {}", p.message),
                    None => p.message.clone(),
                })
                .collect(),
            record,
        });
    }
    stats.rejected = rejected.len();

    let mut notes: BTreeMap<&'static str, (usize, String)> = BTreeMap::new();
    for (i, m) in kept.iter().zip(&mapped) {
        if invalid.contains_key(i) {
            continue;
        }
        for what in &m.notes {
            notes.entry(what).or_insert_with(|| (0, m.loc.to_string())).0 += 1;
        }
    }
    stats.notes = notes.into_iter().map(|(what, (rows, first))| IngestNote { what, rows, first }).collect();
    for n in &stats.notes {
        eprintln!(
            "warning: ingest: {} row{}: {} (first: {})",
            n.rows,
            if n.rows == 1 { "" } else { "s" },
            n.what,
            n.first
        );
    }
    let mut samples: Vec<Sample> =
        kept.iter().zip(mapped).filter(|(i, _)| !invalid.contains_key(i)).map(|(_, m)| m.sample).collect();
    samples.sort_by(|a, b| id_cmp(&a.id, &b.id));
    stats.kept = samples.len();
    if samples.is_empty() {
        return Err(Error::one(
            Problem::new(
                Location::file(plan.inputs.first().map_or(Path::new("?"), |i| i.path.as_path())),
                format!(
                    "no samples left: {} records read, {} filtered out, {} rejected",
                    stats.records, stats.filtered, stats.rejected
                ),
            )
            .help("check [[ingest.filter]] values and the rejected reasons"),
        ));
    }
    let images = samples
        .iter()
        .flat_map(|s| s.images.iter())
        .filter_map(|im| Some((im.path.clone()?, im.sha256.clone()?)))
        .collect();
    Ok(Ingested { samples, rejected, inputs, images, stats })
}

/// A filter on a field that no record has is a typo, not an empty result.
fn check_filter_fields(plan: &IngestPlan, seen: &[bool]) -> Result<()> {
    let mut problems = Vec::new();
    for (f, _) in plan.filters.iter().zip(seen).filter(|(_, s)| !**s) {
        let names = first_record_fields(plan);
        let mut p = Problem::new(
            Location::file(plan.inputs.first().map_or(Path::new("?"), |i| i.path.as_path())),
            format!("the filter field \"{}\" is in no record", f.field),
        )
        .field("ingest.filter");
        p = match did_you_mean(&f.field, names.iter().map(String::as_str)) {
            Some(m) => p.help(format!("did you mean \"{m}\"?")),
            None => p.help(format!("fields are: {}", names.join(", "))),
        };
        problems.push(p);
    }
    if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
}

/// Field names of the first record of the first input (for "did you mean").
fn first_record_fields(plan: &IngestPlan) -> Vec<String> {
    let Some(input) = plan.inputs.first() else { return Vec::new() };
    let mut ignored = Vec::new();
    match read_input(&input.path, input.format, &plan.split, &mut ignored) {
        Ok(source) if source.len() > 0 => source
            .chunk(0..1)
            .0
            .first()
            .map(|r| r.field_names().into_iter().map(String::from).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// A mapped sample as JSON, for the rejected file.
fn sample_json(s: &Sample) -> serde_json::Value {
    serde_json::to_value(s).unwrap_or(serde_json::Value::Null)
}
