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

pub mod bounded;
pub mod csv;
pub mod images;
pub mod json;
pub mod mapping;
pub mod options;
pub mod parquet;
pub mod plan;
pub mod raw;
pub mod spill;
pub mod vlmevalkit;
pub mod xlsx;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::OnInvalid;
use crate::error::{Error, Location, Problem, Result, did_you_mean, display_path};
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

/// The sha256 and size of an input: of `bytes` when it was read whole, else
/// of the file streamed from disk (a Parquet file or a spreadsheet is hashed
/// without holding it in memory).
fn hash_file(path: &Path, bytes: Option<&[u8]>) -> Result<InputFile> {
    let (sha256, bytes) = match bytes {
        Some(b) => crate::io::hash::content_hash(b),
        None => {
            let d = crate::io::hash::hash_file(path)?;
            (d.sha256, d.bytes)
        }
    };
    Ok(InputFile { path: path.to_path_buf(), sha256, bytes })
}

/// The records of a whole input: JSON is parsed lazily, chunk by chunk, while
/// mapping; other formats arrive parsed.
enum Records {
    Json(json::JsonRecords),
    Parsed(Vec<RawRecord>),
}

impl Records {
    fn len(&self) -> usize {
        match self {
            Records::Json(j) => j.len(),
            Records::Parsed(r) => r.len(),
        }
    }

    fn chunk(&self, range: std::ops::Range<usize>) -> (std::borrow::Cow<'_, [RawRecord]>, Vec<Problem>) {
        match self {
            Records::Json(j) => {
                let (r, p) = j.parse(range);
                (std::borrow::Cow::Owned(r), p)
            }
            Records::Parsed(r) => (std::borrow::Cow::Borrowed(&r[range]), Vec::new()),
        }
    }
}

/// One input, opened: read whole, or parsed a batch at a time (CSV, TSV),
/// or read and parsed block by block (JSON lines, a JSON array).
enum Source {
    Whole(Records),
    Delimited(csv::Delimited),
    Lines(json::JsonLines),
}

/// Opens one input (any format). Inputs read whole are hashed here; streamed
/// ones when they have been read to the end.
///
/// A JSON file's records are found as `plan.records` says, a spreadsheet's sheet as
/// `plan.sheet` says. When a file is not read in its plain shape (a JSON wrapper's
/// member, the first of several sheets, semicolons in a CSV), a note saying how is
/// added to `notes`.
fn open_input(
    path: &Path,
    format: Format,
    plan: &IngestPlan,
    inputs: &mut Vec<InputFile>,
    notes: &mut Vec<String>,
) -> Result<Source> {
    let split = plan.split.as_str();
    let whole = |records| Ok(Source::Whole(records));
    match format {
        Format::Jsonl => Ok(Source::Lines(json::JsonLines::open(path)?)),
        Format::Csv | Format::Tsv => {
            let bytes = bounded::read(path, bounded::Shape::Lines)?;
            inputs.push(hash_file(path, Some(&bytes))?);
            let delimiter = if format == Format::Csv { b',' } else { b'\t' };
            let rows = csv::Delimited::open(path, bytes, delimiter, plan.columns.as_deref())?;
            if rows.semicolons {
                notes.push(
                    "read as semicolon-separated: the CSV's header row holds semicolons and no comma (as spreadsheets \
                     write CSV where the comma is the decimal mark)"
                        .into(),
                );
            }
            Ok(Source::Delimited(rows))
        }
        Format::Json => match json::open_json(path, plan.records.as_deref())? {
            json::JsonInput::Stream(lines) => Ok(Source::Lines(*lines)),
            json::JsonInput::Whole(bytes, sha256, size) => {
                inputs.push(InputFile { path: path.to_path_buf(), sha256, bytes: size });
                let (records, note) = json::split_json(path, bytes, plan.records.as_deref())?;
                notes.extend(note);
                whole(Records::Json(records))
            }
        },
        Format::Vlmevalkit => {
            let bytes = bounded::read(path, bounded::Shape::Lines)?;
            inputs.push(hash_file(path, Some(&bytes))?);
            whole(Records::Parsed(vlmevalkit::read_vlmevalkit(path, &bytes)?))
        }
        Format::Parquet => {
            inputs.push(hash_file(path, None)?);
            whole(Records::Parsed(parquet::read_table_file(path)?))
        }
        Format::Xlsx => {
            inputs.push(hash_file(path, None)?);
            let (records, note) = xlsx::read_sheet(path, plan.sheet.as_deref())?;
            notes.extend(note);
            whole(Records::Parsed(records))
        }
        Format::Hf => {
            let mut all = Vec::new();
            for f in parquet::hf_split_files(path, split)? {
                inputs.push(hash_file(&f, None)?);
                all.extend(parquet::read_table_file(&f)?);
            }
            whole(Records::Parsed(all))
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
            if meta.extension().and_then(|e| e.to_str()) == Some("csv") {
                let bytes = bounded::read(&meta, bounded::Shape::Lines)?;
                inputs.push(hash_file(&meta, Some(&bytes))?);
                Ok(Source::Delimited(csv::Delimited::open(&meta, bytes, b',', None)?))
            } else {
                Ok(Source::Lines(json::JsonLines::open(&meta)?))
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
    /// Per optional mapped source field ([`plan::FieldMap::optional_sources`]).
    sources_seen: Vec<SourceSeen>,
}

/// Whether the records hold one mapped source field: any of them, and how many
/// of those the filters keep lack it, with the first.
#[derive(Debug, Clone, Default)]
struct SourceSeen {
    any: bool,
    absent: usize,
    first_absent: Option<Location>,
}

impl SourceSeen {
    /// Adds what a later part of the input saw.
    fn merge(&mut self, later: SourceSeen) {
        self.any |= later.any;
        self.absent += later.absent;
        if self.first_absent.is_none() {
            self.first_absent = later.first_absent;
        }
    }
}

fn process_chunk(
    records: &Records,
    range: std::ops::Range<usize>,
    format: Format,
    plan: &IngestPlan,
    sources: &[(&'static str, String)],
) -> ChunkOut {
    let (records, parse_problems) = records.chunk(range);
    let filter_seen = plan.filters.iter().map(|f| records.iter().any(|r| r.has(&f.field))).collect();
    let mut sources_seen = vec![SourceSeen::default(); sources.len()];
    let items = records
        .iter()
        .map(|r| {
            let outcome = mapping::map_record(r, plan, format);
            let kept = !matches!(outcome, Outcome::Filtered);
            for ((_, field), seen) in sources.iter().zip(&mut sources_seen) {
                if r.has(field) {
                    seen.any = true;
                } else if kept {
                    seen.absent += 1;
                    seen.first_absent.get_or_insert_with(|| r.loc.clone());
                }
            }
            let invalid_raw = matches!(outcome, Outcome::Invalid(_)).then(|| (r.clone(), format));
            Item { outcome, invalid_raw }
        })
        .collect();
    ChunkOut { items, parse_problems, filter_seen, sources_seen }
}

/// Records mapped at a time: the unit of memory, whatever the input's size
/// (two chunks per thread, at least four).
fn batch_size() -> usize {
    json::CHUNK * (2 * rayon::current_num_threads()).max(4)
}

/// Every id kept so far, compared in Unicode NFC, each with where it was first
/// seen: ids live end to end in one string, so a million ids take tens of MB.
struct IdSet {
    text: String,
    entries: Vec<(usize, u32, Location)>,
    table: hashbrown::HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

/// An id as compared: composed and decomposed forms of the same text are one id,
/// and so are ids that differ only by invisible characters (zero-width and other
/// format characters, bidi marks) or by the kind of space (no-break, thin, ...).
fn id_key(id: &str) -> std::borrow::Cow<'_, str> {
    if id.is_ascii() {
        std::borrow::Cow::Borrowed(id)
    } else {
        use unicode_categories::UnicodeCategories;
        use unicode_normalization::UnicodeNormalization;
        std::borrow::Cow::Owned(
            id.nfc().filter(|c| !c.is_other_format()).map(|c| if c.is_separator_space() { ' ' } else { c }).collect(),
        )
    }
}

impl IdSet {
    fn new() -> IdSet {
        IdSet {
            text: String::new(),
            entries: Vec::new(),
            table: hashbrown::HashTable::new(),
            hasher: Default::default(),
        }
    }

    fn written(&self, e: u32) -> &str {
        let (start, len, _) = &self.entries[e as usize];
        &self.text[*start..*start + *len as usize]
    }

    /// Adds `id`; when an equal id was added before, returns it as written and
    /// where it was, and adds nothing.
    fn insert(&mut self, id: &str, loc: &Location) -> Option<(&str, &Location)> {
        use std::hash::BuildHasher;
        let key = id_key(id);
        let hash = self.hasher.hash_one(key.as_ref());
        let found = self.table.find(hash, |&e| id_key(self.written(e)) == key).copied();
        if let Some(e) = found {
            return Some((self.written(e), &self.entries[e as usize].2));
        }
        let e = u32::try_from(self.entries.len()).unwrap_or(u32::MAX);
        self.entries.push((self.text.len(), id.len() as u32, loc.clone()));
        self.text.push_str(id);
        let (entries, text, hasher) = (&self.entries, &self.text, &self.hasher);
        self.table.insert_unique(hash, e, |&x| {
            let (start, len, _) = &entries[x as usize];
            hasher.hash_one(id_key(&text[*start..*start + *len as usize]).as_ref())
        });
        None
    }
}

/// What ingest found, apart from the samples.
pub struct Summary {
    pub rejected: Vec<Rejected>,
    pub inputs: Vec<InputFile>,
    pub images: BTreeMap<String, String>,
    pub stats: IngestStats,
}

/// Ingest's state across batches.
struct Run<'p> {
    plan: &'p IngestPlan,
    resolver: images::Resolver,
    filter_seen: Vec<bool>,
    /// The optional source fields the mapping names, and what the records held of them.
    sources: Vec<(&'static str, String)>,
    sources_seen: Vec<SourceSeen>,
    parse_problems: Vec<Problem>,
    /// Every problem of an invalid sample, in record order (on-invalid = "error").
    invalid: Vec<Problem>,
    rejected: Vec<Rejected>,
    ids: IdSet,
    notes: BTreeMap<std::borrow::Cow<'static, str>, (usize, String)>,
    /// How inputs were read when not in their plain shape (wrapper object, sheet, ...).
    read_notes: Vec<String>,
    images: BTreeMap<String, String>,
    stats: IngestStats,
    /// `answer-kind = "auto"`: the readings of the gold every row so far allows,
    /// and the first row of each combination of readings met.
    readings: u8,
    reading_rows: BTreeMap<u8, Location>,
}

impl Run<'_> {
    /// Maps records `range` of one input and hands its valid samples to `sink`.
    fn batch(
        &mut self,
        records: &Records,
        range: std::ops::Range<usize>,
        format: Format,
        sink: &mut dyn FnMut(Vec<Sample>) -> Result<()>,
    ) -> Result<()> {
        let plan = self.plan;
        let units: Vec<std::ops::Range<usize>> =
            range.clone().step_by(json::CHUNK).map(|a| a..(a + json::CHUNK).min(range.end)).collect();
        let sources = &self.sources;
        let chunks: Vec<ChunkOut> =
            units.into_par_iter().map(|r| process_chunk(records, r, format, plan, sources)).collect();
        let mut items = Vec::with_capacity(range.len());
        for c in chunks {
            self.parse_problems.extend(c.parse_problems);
            for (seen, s) in self.filter_seen.iter_mut().zip(c.filter_seen) {
                *seen |= s;
            }
            for (seen, s) in self.sources_seen.iter_mut().zip(c.sources_seen) {
                seen.merge(s);
            }
            items.extend(c.items);
        }
        self.stats.records += items.len();

        // Record index (in this batch) of each mapped sample, and the samples themselves.
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
                Outcome::Filtered => self.stats.filtered += 1,
                Outcome::Invalid(p) => {
                    invalid.insert(i, p);
                }
            }
            if let Some(raw) = item.invalid_raw {
                raws.insert(i, raw);
            }
        }
        for (k, p) in self.resolver.resolve(&mut mapped) {
            invalid.entry(kept[k]).or_default().push(p);
        }

        // Unique ids: the first occurrence (in file order) wins.
        for (i, m) in kept.iter().zip(&mapped) {
            if invalid.contains_key(i) {
                continue;
            }
            let id = m.sample.id.as_str();
            if let Some((first_id, first)) = self.ids.insert(id, &m.loc) {
                let same = if first_id == id {
                    String::new()
                } else {
                    format!(
                        ", written \"{}\": the same text in another Unicode normalization, or with invisible \
                         characters (zero-width, no-break spaces, bidi marks)",
                        first_id.escape_debug()
                    )
                };
                let p = Problem::new(
                    m.loc.clone(),
                    format!("duplicate id \"{}\" (first seen at {first}{same})", id.escape_debug()),
                )
                .field("id")
                .help("ids must be unique: map a unique field, or a template like \"{_file}-{id}\"");
                invalid.entry(*i).or_default().push(p);
            }
        }

        if plan.on_invalid == OnInvalid::Error {
            self.invalid.extend(invalid.values().flatten().cloned());
        } else {
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
                self.rejected.push(Rejected {
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
        }

        let mut samples = Vec::with_capacity(mapped.len());
        for (i, m) in kept.iter().zip(mapped) {
            if invalid.contains_key(i) {
                continue;
            }
            for what in &m.notes {
                self.notes.entry(what.clone()).or_insert_with(|| (0, m.loc.to_string())).0 += 1;
            }
            if m.readings != 0 {
                self.readings &= m.readings;
                self.reading_rows.entry(m.readings).or_insert_with(|| m.loc.clone());
            }
            for im in &m.sample.images {
                if let (Some(p), Some(h)) = (&im.path, &im.sha256) {
                    self.images.insert(p.clone(), h.clone());
                }
            }
            samples.push(m.sample);
        }
        self.stats.kept += samples.len();
        // Once a sample is invalid, ingest fails: what is left only needs checking.
        if self.invalid.is_empty() && !samples.is_empty() {
            sink(samples)?;
        }
        Ok(())
    }
}

impl Run<'_> {
    /// Maps every block of records `next` reads, a batch at a time. A problem
    /// reading the input ends it and joins `read_problems`.
    fn blocks(
        &mut self,
        mut next: impl FnMut() -> Result<Option<Records>>,
        format: Format,
        sink: &mut dyn FnMut(Vec<Sample>) -> Result<()>,
        read_problems: &mut Vec<Problem>,
    ) -> Result<()> {
        loop {
            let records = match next() {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(()),
                Err(Error::Invalid(p)) => {
                    read_problems.extend(p);
                    return Ok(());
                }
                Err(e) => return Err(e),
            };
            let batch = batch_size();
            for start in (0..records.len()).step_by(batch) {
                self.batch(&records, start..(start + batch).min(records.len()), format, sink)?;
            }
        }
    }
}

/// Runs ingest for a plan, handing the valid samples to `sink` batch by batch,
/// in file order. With `on-invalid = "error"`, any invalid sample fails the
/// whole ingest with every problem listed (what the sink got is then void).
fn ingest_into(plan: &IngestPlan, sink: &mut dyn FnMut(Vec<Sample>) -> Result<()>) -> Result<Summary> {
    // Images: resolve against the image folder (an ImageFolder input is its own).
    let image_dir = plan
        .images_dir
        .clone()
        .or_else(|| plan.inputs.iter().find(|i| i.format == Format::Imagefolder).map(|i| i.path.clone()));
    let sources = plan.fields.optional_sources();
    let mut run = Run {
        plan,
        resolver: images::Resolver::new(image_dir, plan.image_names_only, plan.max_image_pixels),
        filter_seen: vec![false; plan.filters.len()],
        sources_seen: vec![SourceSeen::default(); sources.len()],
        sources,
        parse_problems: Vec::new(),
        invalid: Vec::new(),
        rejected: Vec::new(),
        ids: IdSet::new(),
        notes: BTreeMap::new(),
        read_notes: Vec::new(),
        images: BTreeMap::new(),
        stats: IngestStats::default(),
        readings: u8::MAX,
        reading_rows: BTreeMap::new(),
    };
    let mut inputs = Vec::new();
    let mut read_problems = Vec::new();
    for input in &plan.inputs {
        let spinner = progress::spinner(&format!("reading {}", display_path(&input.path)));
        let mut found_at = Vec::new();
        let opened = open_input(&input.path, input.format, plan, &mut inputs, &mut found_at);
        spinner.finish_and_clear();
        let source = match opened {
            Ok(s) => s,
            Err(Error::Invalid(p)) => {
                read_problems.extend(p);
                continue;
            }
            Err(e) => return Err(e),
        };
        let records_before = run.stats.records;
        match source {
            Source::Whole(records) => {
                let bar = progress::bar(records.len() as u64, "mapping");
                let batch = batch_size();
                for start in (0..records.len()).step_by(batch) {
                    let range = start..(start + batch).min(records.len());
                    bar.inc(range.len() as u64);
                    run.batch(&records, range, input.format, sink)?;
                }
                bar.finish_and_clear();
            }
            Source::Delimited(mut rows) => {
                let bar = progress::spinner("mapping");
                let next = || {
                    let batch = rows.next_batch(batch_size())?;
                    bar.inc(batch.as_ref().map_or(0, Vec::len) as u64);
                    Ok(batch.map(Records::Parsed))
                };
                run.blocks(next, input.format, sink, &mut read_problems)?;
                bar.finish_and_clear();
            }
            Source::Lines(mut lines) => {
                let bar = progress::bar(lines.size_hint(), "mapping (bytes)");
                let next = || {
                    let block = lines.next_block()?.map(Records::Json);
                    bar.set_position(lines.bytes_read());
                    Ok(block)
                };
                run.blocks(next, input.format, sink, &mut read_problems)?;
                bar.finish_and_clear();
                let path = lines.path().to_path_buf();
                let (sha256, bytes) = lines.finish();
                inputs.push(InputFile { path, sha256, bytes });
            }
        }
        // How the file was read, when that is not its plain shape: for every record of it.
        for note in found_at {
            let file = display_path(&input.path);
            run.read_notes.push(format!("{file}: {note}"));
            run.notes.entry(std::borrow::Cow::Owned(note)).or_insert((0, file)).0 += run.stats.records - records_before;
        }
    }
    if !read_problems.is_empty() {
        return Err(Error::Invalid(read_problems));
    }
    if !run.parse_problems.is_empty() {
        return Err(Error::Invalid(run.parse_problems));
    }
    check_filter_fields(plan, &run.filter_seen)?;
    check_mapped_sources(plan, &run.sources, &run.sources_seen, &mut run.notes)?;
    check_one_reading(&run)?;

    if !run.invalid.is_empty() {
        let mut problems = run.invalid;
        if let Some(last) = problems.last_mut() {
            // Rows that do not fit the mapping may come from the wrong part of a file.
            let mut help = last.help.take();
            for note in &run.read_notes {
                let read = format!("note: {note}");
                help = Some(match help {
                    Some(h) => format!("{h}\n  help: {read}"),
                    None => read,
                });
            }
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
    let mut stats = run.stats;
    stats.rejected = run.rejected.len();
    for line in rejected_summary(&run.rejected) {
        eprintln!("warning: ingest: {line}");
    }
    let undecodable = &run.resolver.undecodable;
    if !undecodable.is_empty() {
        let names: Vec<String> = undecodable.iter().take(10).map(|(f, why)| format!("{f} ({why})")).collect();
        eprintln!(
            "warning: ingest: {} image{} do not decode past their header: {}{}",
            undecodable.len(),
            if undecodable.len() == 1 { "" } else { "s" },
            names.join(", "),
            if undecodable.len() > 10 { ", ..." } else { "" }
        );
    }
    let unhashed = &run.resolver.unhashed;
    if !unhashed.is_empty() {
        let names: Vec<String> = unhashed.iter().take(10).map(|(f, format)| format!("{f} ({format})")).collect();
        eprintln!(
            "warning: ingest: {} image{} in a format blindspot reads the size of but does not decode, so without a \
             perceptual hash (near-duplicate search and group-by \"image-cluster\" treat each as unique): {}{}",
            unhashed.len(),
            if unhashed.len() == 1 { "" } else { "s" },
            names.join(", "),
            if unhashed.len() > 10 { ", ..." } else { "" }
        );
    }
    stats.notes = run.notes.into_iter().map(|(what, (rows, first))| IngestNote { what, rows, first }).collect();
    for n in &stats.notes {
        eprintln!(
            "warning: ingest: {} row{}: {} (first: {})",
            n.rows,
            if n.rows == 1 { "" } else { "s" },
            n.what,
            n.first
        );
    }
    if stats.kept == 0 {
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
    Ok(Summary { rejected: run.rejected, inputs, images: run.images, stats })
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
    let summary = ingest_into(plan, &mut |batch| {
        total_bytes += batch.iter().map(crate::io::parquet::estimated_row_bytes).sum::<usize>();
        runs.push(batch)
    })?;
    let rows = usize::try_from(runs.len()).unwrap_or(usize::MAX);
    let bar = progress::bar(rows as u64, "writing");
    let merged = runs.merge()?.inspect(|_| bar.inc(1));
    crate::io::parquet::write_sample_stream(out, rows, total_bytes, merged, embed)?;
    bar.finish_and_clear();
    Ok(summary)
}

/// Rows left out under `on-invalid = "skip"`, counted per reason (a reason with its
/// values blanked), each with its first three rows: a count alone says nothing of
/// what to fix.
pub fn rejected_summary(rejected: &[Rejected]) -> Vec<String> {
    let mut by_reason: BTreeMap<String, (usize, Vec<&str>)> = BTreeMap::new();
    for r in rejected {
        for reason in &r.reasons {
            let e = by_reason.entry(reason_kind(reason)).or_default();
            e.0 += 1;
            if e.1.len() < 3 {
                e.1.push(&r.location);
            }
        }
    }
    let mut lines: Vec<(usize, String)> = by_reason
        .into_iter()
        .map(|(reason, (n, first))| {
            (n, format!("{n} rejected row{}: {reason} (first: {})", if n == 1 { "" } else { "s" }, first.join(", ")))
        })
        .collect();
    // Most frequent first; ties in reason order.
    lines.sort_by_key(|l| std::cmp::Reverse(l.0));
    lines.into_iter().map(|(_, l)| l).collect()
}

/// A rejection reason with its values blanked (quoted text and numbers after the
/// field name), so that rows rejected for one cause count together.
fn reason_kind(reason: &str) -> String {
    let (field, rest) = match reason.strip_prefix("field \"").and_then(|r| r.split_once("\": ")) {
        Some((f, rest)) => (format!("field \"{f}\": "), rest),
        None => (String::new(), reason),
    };
    let mut out = field;
    let mut in_quote = false;
    let mut last_digit = false;
    for c in rest.chars() {
        match c {
            '"' => {
                if !in_quote {
                    out.push_str("\"…");
                }
                in_quote = !in_quote;
                if !in_quote {
                    out.push('"');
                }
            }
            _ if in_quote => {}
            d if d.is_ascii_digit() => {
                if !last_digit {
                    out.push('N');
                }
                last_digit = true;
                continue;
            }
            other => out.push(other),
        }
        last_digit = false;
    }
    out
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

/// A mapped optional field that no record has is a typo: without this check the
/// questions would silently lose their options, type, context or meta. One that
/// only some records lack is a counted note naming the first of them.
fn check_mapped_sources(
    plan: &IngestPlan,
    sources: &[(&'static str, String)],
    seen: &[SourceSeen],
    notes: &mut BTreeMap<std::borrow::Cow<'static, str>, (usize, String)>,
) -> Result<()> {
    let mut problems = Vec::new();
    let mut names: Option<Vec<String>> = None;
    for ((key, field), s) in sources.iter().zip(seen) {
        if !s.any {
            let names = names.get_or_insert_with(|| first_record_fields(plan));
            let p = Problem::new(
                Location::file(plan.inputs.first().map_or(Path::new("?"), |i| i.path.as_path())),
                format!("the source field \"{field}\" is in no record"),
            )
            .field(format!("ingest.fields.{key}"));
            let help = match did_you_mean(field, names.iter().map(String::as_str)) {
                Some(m) => format!("did you mean \"{m}\"? (set [ingest.fields] {key})"),
                None => format!("the first record's fields are: {}; fix [ingest.fields] {key}", names.join(", ")),
            };
            problems.push(p.help(help));
        } else if let (n @ 1.., Some(first)) = (s.absent, &s.first_absent) {
            let what = format!("the mapped source field \"{field}\" ([ingest.fields] {key}) is absent");
            let entry = notes.entry(std::borrow::Cow::Owned(what)).or_insert((0, first.to_string()));
            entry.0 += n;
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
}

/// `answer-kind = "auto"` decides once for the whole dataset: some reading of
/// the gold (option text, letter, index) must fit every row. Rows that each
/// read one way only, and not the same way, are an error naming the setting.
fn check_one_reading(run: &Run<'_>) -> Result<()> {
    if run.reading_rows.is_empty() || run.readings != 0 {
        return Ok(());
    }
    let rows: Vec<String> = run
        .reading_rows
        .iter()
        .map(|(mask, loc)| format!("{loc} reads only as {}", mapping::reading_names(*mask)))
        .collect();
    let first = run.reading_rows.values().min().cloned().unwrap_or_else(|| Location::file("?"));
    Err(Error::one(
        Problem::new(first, format!("no one reading of the gold answers fits every row: {}", rows.join("; ")))
            .field("answer-kind")
            .help(
                "set [ingest.fields] answer-kind = \"text\", \"letter\" or \"index\" to the way the source writes its \
             answers, and fix the rows written another way",
            ),
    ))
}

/// Field names of the first record of the first input (for "did you mean").
fn first_record_fields(plan: &IngestPlan) -> Vec<String> {
    let Some(input) = plan.inputs.first() else { return Vec::new() };
    let mut ignored = Vec::new();
    let records = match open_input(&input.path, input.format, plan, &mut ignored, &mut Vec::new()) {
        Ok(Source::Whole(r)) => r,
        Ok(Source::Lines(mut lines)) => match lines.next_block() {
            Ok(Some(block)) => Records::Json(block),
            _ => return Vec::new(),
        },
        Ok(Source::Delimited(mut rows)) => match rows.next_batch(1) {
            Ok(Some(batch)) => Records::Parsed(batch),
            _ => return Vec::new(),
        },
        Err(_) => return Vec::new(),
    };
    if records.len() == 0 {
        return Vec::new();
    }
    records.chunk(0..1).0.first().map(|r| r.field_names().into_iter().map(String::from).collect()).unwrap_or_default()
}

/// A mapped sample as JSON, for the rejected file.
fn sample_json(s: &Sample) -> serde_json::Value {
    serde_json::to_value(s).unwrap_or(serde_json::Value::Null)
}
