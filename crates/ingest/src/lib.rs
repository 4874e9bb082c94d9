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

// The crates below this one, under the module names the code uses.
use blindspot_core::{context, error, io, progress, sample, seed};
use blindspot_tables as tables;
// The table readers (shared with predictions), under the module names
// ingest's code uses.
pub use blindspot_tables::{bounded, csv, json, raw, xlsx};

mod checks;
mod chunk;
mod ids;
pub mod images;
pub mod join;
pub mod mapping;
pub mod options;
pub mod parquet;
pub mod plan;
mod rejected;
mod run;
mod source;
pub mod spill;
pub mod survey;
pub mod video_frames;
pub mod videos;
pub mod vlmevalkit;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::sample::{AnswerFormat, Sample, id_cmp};
pub use plan::{Format, IngestPlan};
pub use rejected::rejected_summary;
use run::ingest_into;

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
    pub what: std::borrow::Cow<'static, str>,
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

/// What ingest found, apart from the samples.
pub struct Summary {
    pub rejected: Vec<Rejected>,
    pub inputs: Vec<InputFile>,
    pub images: BTreeMap<String, String>,
    pub stats: IngestStats,
}

/// Runs ingest for a plan. With `on-invalid = "error"`, any invalid sample
/// fails the whole ingest with every problem listed.
pub fn ingest(plan: &IngestPlan) -> Result<Ingested> {
    let mut samples = Vec::new();
    let s = ingest_into(plan, &mut |batch| {
        samples.extend(batch);
        Ok(())
    })?;
    samples.sort_by(|a, b| id_cmp(&a.id, &b.id));
    Ok(Ingested { samples, rejected: s.rejected, inputs: s.inputs, images: s.images, stats: s.stats })
}

/// [`ingest`] straight into a canonical Parquet file at `out`, in memory
/// bounded by the batch size whatever the number of questions: batches are
/// sorted into run files in a hidden folder beside `out` (removed after),
/// then merged into the writer. The file is the one [`ingest`] followed by
/// [`write_samples`](crate::io::parquet::write_samples) would write.
pub fn ingest_to_parquet(plan: &IngestPlan, out: &Path, embed: crate::sample::Embed) -> Result<Summary> {
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut runs = spill::Runs::new_in(&dir);
    let mut total_bytes = 0usize;
    let mut videos = false;
    let summary = ingest_into(plan, &mut |batch| {
        total_bytes += batch.iter().map(crate::io::parquet::estimated_row_bytes).sum::<usize>();
        videos |= crate::sample::has_videos(&batch);
        runs.push(batch)
    })?;
    let rows = usize::try_from(runs.len()).unwrap_or(usize::MAX);
    let bar = progress::bar(rows as u64, "writing");
    let merged = runs.merge()?.inspect(|_| bar.inc(1));
    crate::io::parquet::write_sample_stream(out, rows, total_bytes, merged, embed, videos)?;
    bar.finish_and_clear();
    Ok(summary)
}
