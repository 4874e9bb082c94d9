//! One input opened as its format reads it: whole (parsed records, or JSON
//! parsed lazily chunk by chunk), a batch at a time (CSV, TSV) or block by
//! block (JSON lines, a JSON array); inputs hashed for the manifest.

use std::path::Path;

use super::{InputFile, bounded, csv, json, parquet, vlmevalkit, xlsx};
use crate::error::{Error, Location, Problem, Result};
use crate::plan::{Format, IngestPlan};
use crate::raw::RawRecord;
use crate::tables::parquet::ClassLabels;

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
pub(crate) enum Records {
    Json(json::JsonRecords),
    Parsed(Vec<RawRecord>),
    /// Parquet or Arrow: rows with their columns' types, `ClassLabel` names included.
    Table(crate::tables::parquet::Table),
}

impl Records {
    pub(crate) fn len(&self) -> usize {
        match self {
            Records::Json(j) => j.len(),
            Records::Parsed(r) => r.len(),
            Records::Table(t) => t.records.len(),
        }
    }

    /// The names of the input's `ClassLabel` columns (none but in a typed table).
    pub(crate) fn class_labels(&self) -> &ClassLabels {
        static NONE: ClassLabels = ClassLabels::new();
        match self {
            Records::Table(t) => &t.class_labels,
            _ => &NONE,
        }
    }

    pub(crate) fn chunk(&self, range: std::ops::Range<usize>) -> (std::borrow::Cow<'_, [RawRecord]>, Vec<Problem>) {
        match self {
            Records::Json(j) => {
                let (r, p) = j.parse(range);
                (std::borrow::Cow::Owned(r), p)
            }
            Records::Parsed(r) => (std::borrow::Cow::Borrowed(&r[range]), Vec::new()),
            Records::Table(t) => (std::borrow::Cow::Borrowed(&t.records[range]), Vec::new()),
        }
    }
}

/// One input, opened: read whole, or parsed a batch at a time (CSV, TSV),
/// or read and parsed block by block (JSON lines, a JSON array).
pub(crate) enum Source {
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
pub(crate) fn open_input(
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
            let header = match (&plan.columns, plan.header_said) {
                (Some(columns), _) => csv::Header::Named(columns),
                (None, true) => csv::Header::FirstRowSaid,
                (None, false) => csv::Header::FirstRow,
            };
            let rows = csv::Delimited::open(path, bytes, delimiter, header)?;
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
            whole(Records::Table(parquet::read_table(path)?))
        }
        Format::Xlsx => {
            inputs.push(hash_file(path, None)?);
            let (records, note) = xlsx::read_sheet(path, plan.sheet.as_deref())?;
            notes.extend(note);
            whole(Records::Parsed(records))
        }
        Format::Hf => {
            let mut all = crate::tables::parquet::Table::default();
            for f in parquet::hf_split_files(path, split)? {
                inputs.push(hash_file(&f, None)?);
                let table = parquet::read_table(&f)?;
                for (column, names) in table.class_labels {
                    match all.class_labels.get(&column) {
                        Some(first) if *first != names => {
                            return Err(Error::one(
                                Problem::new(
                                    Location::file(&f),
                                    format!(
                                        "the ClassLabel column \"{column}\" names its classes otherwise than in the \
                                         split's first file ({} here, {} there)",
                                        names.len(),
                                        first.len()
                                    ),
                                )
                                .field(column.as_str())
                                .help("the split's files must share one set of features: export the dataset again"),
                            ));
                        }
                        Some(_) => {}
                        None => {
                            all.class_labels.insert(column, names);
                        }
                    }
                }
                all.records.extend(table.records);
            }
            whole(Records::Table(all))
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
                Ok(Source::Delimited(csv::Delimited::open(&meta, bytes, b',', csv::Header::FirstRow)?))
            } else {
                Ok(Source::Lines(json::JsonLines::open(&meta)?))
            }
        }
    }
}

/// The first `max` records of one input, every problem reading them an error.
pub(crate) fn read_records(
    path: &Path,
    format: Format,
    plan: &IngestPlan,
    max: usize,
    inputs: &mut Vec<InputFile>,
    notes: &mut Vec<String>,
) -> Result<Vec<RawRecord>> {
    let mut records: Vec<RawRecord> = Vec::new();
    let take = |r: &Records, records: &mut Vec<RawRecord>| -> Result<()> {
        let (chunk, problems) = r.chunk(0..r.len().min(max - records.len()));
        if !problems.is_empty() {
            return Err(Error::Invalid(problems));
        }
        records.extend(chunk.iter().cloned());
        Ok(())
    };
    match open_input(path, format, plan, inputs, notes)? {
        Source::Whole(r) => take(&r, &mut records)?,
        Source::Lines(mut lines) => {
            while records.len() < max {
                let Some(block) = lines.next_block()? else { break };
                take(&Records::Json(block), &mut records)?;
            }
            if records.len() < max {
                let path = lines.path().to_path_buf();
                let (sha256, bytes) = lines.finish();
                inputs.push(InputFile { path, sha256, bytes });
            }
        }
        Source::Delimited(mut rows) => {
            while records.len() < max {
                let Some(batch) = rows.next_batch(max - records.len())? else { break };
                records.extend(batch);
            }
        }
    }
    Ok(records)
}

/// Field names of the first record of the first input (for "did you mean").
pub(crate) fn first_record_fields(plan: &IngestPlan) -> Vec<String> {
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
