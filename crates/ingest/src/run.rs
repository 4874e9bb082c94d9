//! Ingest's run over every input: batches mapped in parallel, images
//! resolved, ids checked unique, invalid samples failed or rejected, valid
//! ones handed on; then the whole-input checks and the warnings.

use std::collections::BTreeMap;
use std::path::Path;

use rayon::prelude::*;

use super::{IngestNote, IngestStats, InputFile, Rejected, Summary, images, rejected_summary};
use crate::checks::{check_filter_fields, check_mapped_sources, check_one_reading};
use crate::chunk::{ChunkOut, SourceSeen, batch_size, process_chunk};
use crate::error::OnInvalid;
use crate::error::{Error, Location, Problem, Result, display_path};
use crate::ids::IdSet;
use crate::json;
use crate::mapping::{self, Mapped, Outcome};
use crate::plan::{Format, IngestPlan};
use crate::progress;
use crate::raw::RawRecord;
use crate::rejected::sample_json;
use crate::sample::Sample;
use crate::source::{Records, Source, open_input};

/// Ingest's state across batches.
pub(crate) struct Run<'p> {
    plan: &'p IngestPlan,
    resolver: images::Resolver,
    video_resolver: crate::videos::VideoResolver,
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
    pub(crate) readings: u8,
    pub(crate) reading_rows: BTreeMap<u8, Location>,
    /// The files each record is completed from (`[[ingest.join]]`).
    joins: Vec<crate::join::Joined>,
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
        let (sources, joins) = (&self.sources, &self.joins);
        let chunks: Vec<ChunkOut> =
            units.into_par_iter().map(|r| process_chunk(records, r, format, plan, sources, joins)).collect();
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
        for (k, p) in self.video_resolver.resolve(&mut mapped) {
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
pub(crate) fn ingest_into(plan: &IngestPlan, sink: &mut dyn FnMut(Vec<Sample>) -> Result<()>) -> Result<Summary> {
    let mut run = Run::new(plan);
    let mut inputs = Vec::new();
    run.joins = crate::join::load_all(plan, &mut inputs)?;
    for (what, records, file) in crate::join::read_notes(&run.joins) {
        run.notes.insert(std::borrow::Cow::Owned(what), (records, file));
    }
    let mut read_problems = Vec::new();
    for input in &plan.inputs {
        run.read_input(input, sink, &mut inputs, &mut read_problems)?;
    }
    for (file, left, first) in crate::join::unmatched(&run.joins) {
        let what = format!(
            "records of the joined file {file} that no question matched: they are in no sample (a joined file may \
             hold more than the questions read, e.g. after a filter)"
        );
        run.notes.insert(std::borrow::Cow::Owned(what), (left, first.to_string()));
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
        return Err(invalid_rows(run.invalid, &run.read_notes));
    }
    let mut stats = run.stats;
    stats.rejected = run.rejected.len();
    for line in rejected_summary(&run.rejected) {
        eprintln!("warning: ingest: {line}");
    }
    warn_unread_images(&run.resolver);
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

impl<'p> Run<'p> {
    /// A run over `plan`, nothing read yet. Images resolve against the image
    /// folder (an ImageFolder input is its own).
    fn new(plan: &'p IngestPlan) -> Run<'p> {
        let image_dir = plan
            .images_dir
            .clone()
            .or_else(|| plan.inputs.iter().find(|i| i.format == Format::Imagefolder).map(|i| i.path.clone()));
        let sources = plan.fields.optional_sources();
        Run {
            plan,
            resolver: images::Resolver::new(image_dir, plan.image_names_only, plan.max_image_pixels)
                .beside(plan.images_beside),
            video_resolver: crate::videos::VideoResolver::new(plan.videos_dir.clone()),
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
            joins: Vec::new(),
        }
    }

    /// Reads one input file into `sink`: a file that cannot be read adds its
    /// problems to `read_problems`, and the files read as a stream are listed in
    /// `inputs` with their hash.
    fn read_input(
        &mut self,
        input: &crate::plan::Input,
        sink: &mut dyn FnMut(Vec<Sample>) -> Result<()>,
        inputs: &mut Vec<InputFile>,
        read_problems: &mut Vec<Problem>,
    ) -> Result<()> {
        let plan = self.plan;
        let spinner = progress::spinner(&format!("reading {}", display_path(&input.path)));
        let mut found_at = Vec::new();
        let opened = open_input(&input.path, input.format, plan, inputs, &mut found_at);
        spinner.finish_and_clear();
        let source = match opened {
            Ok(s) => s,
            Err(Error::Invalid(p)) => {
                read_problems.extend(p);
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let records_before = self.stats.records;
        match source {
            Source::Whole(records) => {
                let bar = progress::bar(records.len() as u64, "mapping");
                let batch = batch_size();
                for start in (0..records.len()).step_by(batch) {
                    let range = start..(start + batch).min(records.len());
                    bar.inc(range.len() as u64);
                    self.batch(&records, range, input.format, sink)?;
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
                self.blocks(next, input.format, sink, read_problems)?;
                bar.finish_and_clear();
            }
            Source::Lines(mut lines) => {
                let bar = progress::bar(lines.size_hint(), "mapping (bytes)");
                let next = || {
                    let block = lines.next_block()?.map(Records::Json);
                    bar.set_position(lines.bytes_read());
                    Ok(block)
                };
                self.blocks(next, input.format, sink, read_problems)?;
                bar.finish_and_clear();
                let path = lines.path().to_path_buf();
                let (sha256, bytes) = lines.finish();
                inputs.push(InputFile { path, sha256, bytes });
            }
        }
        // How the file was read, when that is not its plain shape: for every record of it.
        for note in found_at {
            let file = display_path(&input.path);
            self.read_notes.push(format!("{file}: {note}"));
            self.notes.entry(std::borrow::Cow::Owned(note)).or_insert((0, file)).0 +=
                self.stats.records - records_before;
        }
        Ok(())
    }
}

/// The error for rows that do not fit the mapping: every row's problem, the last
/// with how the files were read (the rows may come from the wrong part of a file)
/// and how to reject such rows instead.
fn invalid_rows(mut problems: Vec<Problem>, read_notes: &[String]) -> Error {
    if let Some(last) = problems.last_mut() {
        // Rows that do not fit the mapping may come from the wrong part of a file.
        let mut help = last.help.take();
        for note in read_notes {
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
            None => "set [ingest] on-invalid = \"skip\" to reject invalid rows into the release's rejected file".into(),
        });
    }
    Error::Invalid(problems)
}

/// Warns of images that do not decode past their header and of images in a
/// format without a perceptual hash, ten named of each.
fn warn_unread_images(resolver: &images::Resolver) {
    let undecodable = &resolver.undecodable;
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
    let unhashed = &resolver.unhashed;
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
}
