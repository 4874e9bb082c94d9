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

pub mod csv;
pub mod images;
pub mod json;
pub mod mapping;
pub mod parquet;
pub mod raw;
pub mod vlmevalkit;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::error::{Error, Location, Problem, Result, did_you_mean, display_path};
use crate::progress;
use crate::sample::{AnswerFormat, Sample, id_cmp};
use crate::spec::{Format, IngestPlan, OnInvalid};
use mapping::{Mapped, Outcome};
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

/// Reads one input into raw records (any format).
fn read_input(path: &Path, format: Format, split: &str, inputs: &mut Vec<InputFile>) -> Result<Vec<RawRecord>> {
    match format {
        Format::Json | Format::Jsonl | Format::Csv | Format::Tsv | Format::Vlmevalkit => {
            let bytes = read_file(path)?;
            inputs.push(hash_file(path, Some(&bytes))?);
            match format {
                Format::Json => json::read_json(path, &bytes),
                Format::Jsonl => json::read_jsonl(path, &bytes),
                Format::Csv => csv::read_delimited(path, &bytes, b','),
                Format::Tsv => csv::read_delimited(path, &bytes, b'\t'),
                _ => vlmevalkit::read_vlmevalkit(path, &bytes),
            }
        }
        Format::Parquet => {
            inputs.push(hash_file(path, None)?);
            parquet::read_parquet(path)
        }
        Format::Hf => {
            let mut all = Vec::new();
            for f in parquet::hf_split_files(path, split)? {
                inputs.push(hash_file(&f, None)?);
                all.extend(parquet::read_parquet(&f)?);
            }
            Ok(all)
        }
        Format::Imagefolder => {
            let jsonl = path.join("metadata.jsonl");
            let meta = if jsonl.is_file() { jsonl } else { path.join("metadata.csv") };
            let bytes = read_file(&meta)?;
            inputs.push(hash_file(&meta, Some(&bytes))?);
            if meta.extension().and_then(|e| e.to_str()) == Some("csv") {
                csv::read_delimited(&meta, &bytes, b',')
            } else {
                json::read_jsonl(&meta, &bytes)
            }
        }
    }
}

/// Runs ingest for a plan. With `on-invalid = "error"`, any invalid sample
/// fails the whole ingest with every problem listed.
pub fn ingest(plan: &IngestPlan) -> Result<Ingested> {
    let mut inputs = Vec::new();
    let mut records = Vec::new();
    let mut formats = Vec::new();
    let spinner = progress::spinner("reading");
    let mut read_problems = Vec::new();
    for input in &plan.inputs {
        spinner.set_message(format!("reading {}", display_path(&input.path)));
        match read_input(&input.path, input.format, &plan.split, &mut inputs) {
            Ok(recs) => {
                formats.extend(std::iter::repeat_n(input.format, recs.len()));
                records.extend(recs);
            }
            Err(Error::Invalid(p)) => read_problems.extend(p),
            Err(e) => return Err(e),
        }
    }
    spinner.finish_and_clear();
    if !read_problems.is_empty() {
        return Err(Error::Invalid(read_problems));
    }
    check_filter_fields(plan, &records)?;

    let bar = progress::bar(records.len() as u64, "mapping");
    let outcomes: Vec<Outcome> = records
        .par_iter()
        .zip(formats.par_iter())
        .map(|(r, f)| {
            let o = mapping::map_record(r, plan, *f);
            bar.inc(1);
            o
        })
        .collect();
    bar.finish_and_clear();

    let mut stats = IngestStats { records: records.len(), ..Default::default() };
    let mut kept: Vec<(usize, Mapped)> = Vec::new();
    let mut invalid: BTreeMap<usize, Vec<Problem>> = BTreeMap::new();
    for (i, o) in outcomes.into_iter().enumerate() {
        match o {
            Outcome::Kept(m) => kept.push((i, *m)),
            Outcome::Filtered => stats.filtered += 1,
            Outcome::Invalid(p) => {
                invalid.insert(i, p);
            }
        }
    }

    // Images: resolve against the image folder (an ImageFolder input is its own).
    let image_dir = plan
        .images_dir
        .clone()
        .or_else(|| plan.inputs.iter().find(|i| i.format == Format::Imagefolder).map(|i| i.path.clone()));
    let mut mapped: Vec<Mapped> = kept.iter().map(|(_, m)| m.clone()).collect();
    for (k, p) in images::resolve(&mut mapped, image_dir.as_deref()) {
        invalid.entry(kept[k].0).or_default().push(p);
    }

    // Unique ids: the first occurrence (in file order) wins.
    let mut first_seen: std::collections::HashMap<&str, &Location> = std::collections::HashMap::new();
    for ((i, _), m) in kept.iter().zip(&mapped) {
        if invalid.contains_key(i) {
            continue;
        }
        if let Some(first) = first_seen.get(m.sample.id.as_str()) {
            invalid.entry(*i).or_default().push(
                Problem::new(m.loc.clone(), format!("duplicate id \"{}\" (first seen at {first})", m.sample.id))
                    .field("id")
                    .help("ids must be unique: map a unique field, or a template like \"{_file}-{id}\""),
            );
        } else {
            first_seen.insert(&m.sample.id, &m.loc);
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
        let id = match kept.iter().position(|(k, _)| k == i) {
            Some(k) => Some(mapped[k].sample.id.clone()),
            None => mapping::best_effort_id(&records[*i], plan, formats[*i]),
        };
        rejected.push(Rejected {
            location: records[*i].loc.to_string(),
            id,
            reasons: problems
                .iter()
                .map(|p| match &p.field {
                    Some(f) => format!("field \"{f}\": {}", p.message),
                    None => p.message.clone(),
                })
                .collect(),
            record: records[*i].value.to_json(),
        });
    }
    stats.rejected = rejected.len();

    let mut samples: Vec<Sample> =
        kept.iter().zip(mapped).filter(|((i, _), _)| !invalid.contains_key(i)).map(|(_, m)| m.sample).collect();
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
fn check_filter_fields(plan: &IngestPlan, records: &[RawRecord]) -> Result<()> {
    let mut problems = Vec::new();
    for f in &plan.filters {
        if records.iter().any(|r| r.field(&f.field).is_some()) {
            continue;
        }
        let names = records.first().map(RawRecord::field_names).unwrap_or_default();
        let mut p = Problem::new(
            Location::file(plan.inputs.first().map_or(Path::new("?"), |i| i.path.as_path())),
            format!("the filter field \"{}\" is in no record", f.field),
        )
        .field("ingest.filter");
        p = match did_you_mean(&f.field, names.iter().copied()) {
            Some(m) => p.help(format!("did you mean \"{m}\"?")),
            None => p.help(format!("fields are: {}", names.join(", "))),
        };
        problems.push(p);
    }
    if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
}
