//! JSON and JSON-lines reader.
//!
//! A `.json` file may be an array of records, an object of records keyed by id
//! (SugarCrepe), or JSON lines (POPE's COCO files end in `.json`). A small
//! structural splitter finds each top-level record's byte range first, so that
//! records are parsed in parallel and every error names the record's own line.
//!
//! JSON lines and a top-level array are streamed block by block ([`JsonLines`],
//! [`open_json`]): memory holds one block, whatever the file's size. Other
//! shapes (an object of records, a wrapper object) are read whole, and a
//! file in such a shape larger than [`MAX_WHOLE_JSON_BYTES`] is refused before
//! it is read.

mod scan;
mod stream;
#[cfg(test)]
mod tests;
mod whole;

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use super::raw::{Raw, RawRecord};
use crate::error::{Error, Location, Pos, Problem, Result, display_path};
pub use stream::{BLOCK_BYTES, JsonInput, JsonLines, MAX_WHOLE_JSON_BYTES, open_json};
pub use whole::{split_json, split_jsonl};

/// One top-level record's bytes, with its key (objects of records) and first line.
struct Span {
    start: usize,
    end: usize,
    key: Option<String>,
    line: u64,
    /// 1-based column, for a record that starts on the line of the record before it;
    /// 0 otherwise (the line says where it is).
    col: u64,
}

/// Records of one JSON or JSON-lines file, found but not yet parsed: ingest
/// parses them chunk by chunk while mapping, so the raw values of a large file
/// never all live in memory at once.
pub struct JsonRecords {
    file: Arc<str>,
    stem: Arc<str>,
    bytes: Vec<u8>,
    spans: Vec<Span>,
    /// Records of the file before these (a block of a streamed file).
    row_base: u64,
}

impl JsonRecords {
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Parses records `range` (in file order); bad records become problems.
    pub fn parse(&self, range: Range<usize>) -> (Vec<RawRecord>, Vec<Problem>) {
        let mut records = Vec::with_capacity(range.len());
        let mut problems = Vec::new();
        for i in range {
            let s = &self.spans[i];
            let slice = &self.bytes[s.start..s.end];
            match serde_json::from_slice::<Raw>(slice) {
                Ok(value) => records.push(RawRecord {
                    loc: Location {
                        file: self.file.clone(),
                        pos: if s.col > 0 { Pos::LineCol(s.line, s.col) } else { Pos::Line(s.line) },
                    },
                    value,
                    file_stem: self.stem.clone(),
                    key: s.key.clone(),
                    row: self.row_base + i as u64 + 1,
                }),
                Err(e) => {
                    let line = s.line + e.line().saturating_sub(1) as u64;
                    let mut msg = e.to_string();
                    if let Some(cut) = msg.find(" at line ") {
                        msg.truncate(cut);
                    }
                    let mut p = Problem::new(
                        Location { file: self.file.clone(), pos: Pos::LineCol(line, (e.column() as u64).max(1)) },
                        format!("invalid JSON: {msg}"),
                    );
                    if let Err(bad) = std::str::from_utf8(slice) {
                        let byte = slice[bad.valid_up_to()];
                        p.message = format!("byte 0x{byte:02X} is not valid UTF-8 (invalid JSON: {msg})");
                        if let Some(f) = field_with_bad_utf8(slice) {
                            p = p.field(f);
                        }
                        p = p.help(
                            "the file is not UTF-8, or mixes encodings (e.g. Latin-1 lines among UTF-8 ones): \
                             re-save it as UTF-8 (e.g. iconv -f latin1 -t utf-8)",
                        );
                    } else if msg.contains("hex escape") && has_surrogate_escape(slice) {
                        p.message = "invalid JSON: a lone UTF-16 surrogate escape (\\uD800-\\uDFFF without its pair) is not a character".into();
                        p = p.help(
                            "the text was cut inside a surrogate pair or converted wrongly: fix or remove the escape",
                        );
                    } else if msg.contains("recursion limit") {
                        p = p.help("values nest deeper than 128 levels: no benchmark record does; check the file");
                    }
                    problems.push(p);
                }
            }
        }
        (records, problems)
    }

    /// Parses every record, in parallel; any bad record fails the file.
    pub fn parse_all(&self) -> Result<Vec<RawRecord>> {
        let chunks: Vec<(Vec<RawRecord>, Vec<Problem>)> = (0..self.len())
            .step_by(CHUNK)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|start| self.parse(start..(start + CHUNK).min(self.len())))
            .collect();
        let mut records = Vec::with_capacity(self.len());
        let mut problems = Vec::new();
        for (r, p) in chunks {
            records.extend(r);
            problems.extend(p);
        }
        if problems.is_empty() { Ok(records) } else { Err(Error::Invalid(problems)) }
    }
}

/// The top-level field of a record whose value holds the first invalid UTF-8
/// byte (read back with the byte replaced), for locating mixed encodings.
fn field_with_bad_utf8(slice: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(slice);
    let serde_json::Value::Object(map) = serde_json::from_str::<serde_json::Value>(&text).ok()? else {
        return None;
    };
    map.iter().find(|(k, v)| k.contains('\u{FFFD}') || v.to_string().contains('\u{FFFD}')).map(|(k, _)| k.clone())
}

/// Records parsed per task.
pub const CHUNK: usize = 4096;

/// Reads a `.json` file (array, object of records, or JSON lines).
pub fn read_json(path: &Path, bytes: &[u8]) -> Result<Vec<RawRecord>> {
    split_json(path, bytes.to_vec(), None)?.0.parse_all()
}

/// Reads JSON lines: one record per non-blank line.
pub fn read_jsonl(path: &Path, bytes: &[u8]) -> Result<Vec<RawRecord>> {
    split_jsonl(path, bytes.to_vec())?.parse_all()
}

fn records_of(path: &Path, bytes: Vec<u8>, spans: Vec<Span>) -> JsonRecords {
    JsonRecords {
        file: display_path(path).into(),
        stem: path.file_stem().and_then(|s| s.to_str()).unwrap_or("").into(),
        bytes,
        spans,
        row_base: 0,
    }
}

fn empty_file(path: &Path) -> Error {
    Error::one(
        Problem::new(Location::file(path), "the file is empty").help("a benchmark file needs at least one record"),
    )
}

/// Whether `bytes` hold a `\uD800`-`\uDFFF` escape (half of a UTF-16 pair).
fn has_surrogate_escape(bytes: &[u8]) -> bool {
    bytes.windows(6).any(|w| {
        w[0] == b'\\'
            && w[1] == b'u'
            && matches!(w[2], b'd' | b'D')
            && matches!(w[3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
            && w[4].is_ascii_hexdigit()
            && w[5].is_ascii_hexdigit()
    })
}
