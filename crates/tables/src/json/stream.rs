//! JSON read block by block: JSON lines, and a `.json` file's top-level
//! array, in bounded memory whatever the file's size; other `.json` shapes
//! are read whole up to [`MAX_WHOLE_JSON_BYTES`].

use std::path::Path;

use super::scan::{LineAt, line_spans, memchr_count, number_lines, value_end_partial};
use super::{JsonRecords, Span, empty_file, records_of};
use crate::error::{Error, Location, Problem, Result};

/// A JSON-lines file, or a `.json` file's top-level array, read block by
/// block: each block holds whole records, and only one block's bytes are in
/// memory at a time.
pub struct JsonLines {
    reader: crate::bounded::Reader,
    path: std::path::PathBuf,
    /// Bytes read but not yet handed out (the start of an unfinished record).
    carry: Vec<u8>,
    /// The line number of `carry[0]`.
    line: u64,
    rows: u64,
    started: bool,
    eof: bool,
    pub(super) block: usize,
    /// `Some` for a top-level array: where its scan stands at `carry[0]`.
    array: Option<ArrayAt>,
    /// A top-level array's records: where `carry[0]` stands in its line.
    at: LineAt,
}

/// Where the scan of a top-level array stands, between two records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArrayAt {
    /// Before the `[`.
    Open,
    /// After the `[`: a record or the `]`.
    First,
    /// After a `,`: a record.
    Value,
    /// After a record: a `,` or the `]`.
    Sep,
    /// After the `]`: nothing but whitespace.
    Done,
}

/// The largest `.json` file read whole (an object of records, a wrapper
/// object, JSON lines without a record on the first line): larger files in
/// those shapes are refused before they are read. Arrays and JSON lines are
/// streamed, whatever their size.
pub const MAX_WHOLE_JSON_BYTES: u64 = 256 << 20;

/// A `.json` input, opened: streamed block by block, or read whole.
pub enum JsonInput {
    Stream(Box<JsonLines>),
    /// The bytes, their sha256 and size.
    Whole(Vec<u8>, String, u64),
}

/// Opens a `.json` file: a top-level array (unless `records` names a member
/// to read) and JSON lines are streamed; any other shape is read whole, and
/// refused when the file is larger than [`MAX_WHOLE_JSON_BYTES`].
pub fn open_json(path: &Path, records: Option<&str>) -> Result<JsonInput> {
    let mut reader = crate::bounded::Reader::open(path, crate::bounded::Shape::Json)?;
    let mut carry = Vec::new();
    // Read until the first byte of the document is known.
    let first = loop {
        let start = if carry.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
        if let Some(b) = carry.get(start..).and_then(|c| c.iter().find(|b| !b.is_ascii_whitespace())) {
            break Some(*b);
        }
        if !reader.read_chunk(&mut carry)? {
            break None;
        }
    };
    if first == Some(b'[') && records.is_none() {
        return Ok(JsonInput::Stream(Box::new(JsonLines::with(reader, path, carry, Some(ArrayAt::Open)))));
    }
    let size = reader.size_hint;
    if size > MAX_WHOLE_JSON_BYTES {
        if first == Some(b'{') && records.is_none() && first_value_is_a_line(path)? {
            // JSON lines in a .json file: each line a record, streamed.
            return Ok(JsonInput::Stream(Box::new(JsonLines::open(path)?)));
        }
        return Err(Error::one(
            Problem::new(
                Location::file(path),
                format!(
                    "the file is {} MB of JSON that is not an array of records (an object of records, or a wrapper \
                     around them), which is read whole; blindspot reads such files up to {} MB",
                    size / 1_000_000,
                    MAX_WHOLE_JSON_BYTES / 1_000_000
                ),
            )
            .help("convert it to JSON lines (one record per line, read in bounded memory), e.g. `jq -c '.[]'` for an object of records, or `jq -c '.questions[]'` for a wrapper"),
        ));
    }
    while reader.read_chunk(&mut carry)? {}
    let (sha256, bytes) = reader.finish();
    Ok(JsonInput::Whole(carry, sha256, bytes))
}

/// Whether the file's first top-level value ends within the first record's
/// size limit and is followed by another record on a later line (JSON lines).
fn first_value_is_a_line(path: &Path) -> Result<bool> {
    let mut reader = crate::bounded::Reader::open(path, crate::bounded::Shape::Lines)?;
    let mut bytes = Vec::new();
    while (bytes.len() as u64) < crate::bounded::MAX_RECORD_BYTES {
        if !reader.read_chunk(&mut bytes)? {
            break;
        }
        let start = if bytes.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
        let Some(first) = bytes[start..].iter().position(|b| !b.is_ascii_whitespace()) else { continue };
        let Some(end) = value_end_partial(&bytes, start + first, false) else { continue };
        return Ok(bytes[end..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{'));
    }
    Ok(false)
}

/// Bytes per block of a streamed JSON-lines file.
pub const BLOCK_BYTES: usize = 8 << 20;

impl JsonLines {
    pub fn open(path: &Path) -> Result<JsonLines> {
        let reader = crate::bounded::Reader::open(path, crate::bounded::Shape::Lines)?;
        Ok(JsonLines::with(reader, path, Vec::new(), None))
    }

    fn with(reader: crate::bounded::Reader, path: &Path, carry: Vec<u8>, array: Option<ArrayAt>) -> JsonLines {
        JsonLines {
            reader,
            path: path.to_path_buf(),
            carry,
            line: 1,
            rows: 0,
            started: false,
            eof: false,
            block: BLOCK_BYTES,
            array,
            at: LineAt::start(),
        }
    }

    /// The next block's records (at least one), or `None` after the last.
    pub fn next_block(&mut self) -> Result<Option<JsonRecords>> {
        if self.array.is_some() {
            return self.next_array_block();
        }
        loop {
            while !self.eof && (self.carry.len() < self.block || !self.carry.contains(&b'\n')) {
                self.eof = !self.reader.read_chunk(&mut self.carry)?;
            }
            if self.carry.is_empty() {
                return if self.rows == 0 { Err(empty_file(&self.path)) } else { Ok(None) };
            }
            let cut = if self.eof {
                self.carry.len()
            } else {
                self.carry.iter().rposition(|&b| b == b'\n').map_or(self.carry.len(), |i| i + 1)
            };
            let rest = self.carry.split_off(cut);
            let bytes = std::mem::replace(&mut self.carry, rest);
            let start = if !self.started && bytes.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
            self.started = true;
            let (spans, next_line) = line_spans(&bytes, start, self.line);
            // A block ends at a newline, so the next starts on a new line.
            self.line = if bytes.ends_with(b"\n") { next_line } else { next_line - 1 };
            if spans.is_empty() {
                continue;
            }
            let mut records = records_of(&self.path, bytes, spans);
            records.row_base = self.rows;
            self.rows += records.len() as u64;
            return Ok(Some(records));
        }
    }

    /// [`JsonLines::next_block`] for a top-level array: the records whose end
    /// has been read, up to the block size.
    fn next_array_block(&mut self) -> Result<Option<JsonRecords>> {
        loop {
            while !self.eof && self.carry.len() < self.block {
                self.eof = !self.reader.read_chunk(&mut self.carry)?;
            }
            let mut at = self.array.unwrap_or(ArrayAt::Done);
            let b = &self.carry;
            let mut i = if !self.started && b.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
            let mut consumed = i;
            let mut spans = Vec::new();
            let problem = |pos: usize, message: String| {
                let line = self.line + memchr_count(&b[..pos.min(b.len())]);
                Error::one(Problem::new(Location::line(&self.path, line), message))
            };
            loop {
                while i < b.len() && b[i].is_ascii_whitespace() {
                    i += 1;
                }
                if i == b.len() {
                    consumed = i;
                    break;
                }
                match at {
                    ArrayAt::Open if b[i] == b'[' => at = ArrayAt::First,
                    ArrayAt::Open => {
                        return Err(problem(i, format!("expected a JSON array '[', found '{}'", b[i] as char)));
                    }
                    ArrayAt::First if b[i] == b']' => at = ArrayAt::Done,
                    ArrayAt::First | ArrayAt::Value => match value_end_partial(b, i, self.eof) {
                        Some(end) if end > i => {
                            spans.push(Span { start: i, end, key: None, line: 0, col: 0 });
                            at = ArrayAt::Sep;
                            i = end;
                            consumed = i;
                            if consumed >= self.block {
                                break;
                            }
                            continue;
                        }
                        Some(_) => return Err(problem(i, format!("expected a record, found '{}'", b[i] as char))),
                        None if self.eof => {
                            return Err(problem(
                                i,
                                "this value is never closed: the file ends inside it (truncated file?)".into(),
                            ));
                        }
                        None => break,
                    },
                    ArrayAt::Sep if b[i] == b',' => at = ArrayAt::Value,
                    ArrayAt::Sep if b[i] == b']' => at = ArrayAt::Done,
                    ArrayAt::Sep => {
                        return Err(problem(
                            i,
                            format!("expected ',' or ']' between records, found '{}'", b[i] as char),
                        ));
                    }
                    ArrayAt::Done => {
                        return Err(problem(i, "unexpected content after the end of the top-level value".into()));
                    }
                }
                i += 1;
                consumed = i;
            }
            self.started = true;
            self.array = Some(at);
            if spans.is_empty() {
                if !self.eof {
                    // No record ends in what is held: read on (a record is at most the record limit).
                    self.block = self.block.max(self.carry.len() + 1);
                    continue;
                }
                if at != ArrayAt::Done {
                    let line = self.line + memchr_count(&self.carry);
                    return Err(Error::one(Problem::new(
                        Location::line(&self.path, line),
                        "the file ends before the closing ']' (truncated file?)",
                    )));
                }
                if self.rows == 0 {
                    return Err(Error::one(Problem::new(Location::file(&self.path), "the file holds no records")));
                }
                return Ok(None);
            }
            self.block = BLOCK_BYTES;
            let rest = self.carry.split_off(consumed);
            let bytes = std::mem::replace(&mut self.carry, rest);
            self.at.line = self.line;
            number_lines(&bytes, &mut spans, &mut self.at);
            self.line = self.at.line;
            let mut records = records_of(&self.path, bytes, spans);
            records.row_base = self.rows;
            self.rows += records.len() as u64;
            return Ok(Some(records));
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size, when it is a regular file (0 for a pipe).
    pub fn size_hint(&self) -> u64 {
        self.reader.size_hint
    }

    pub fn bytes_read(&self) -> u64 {
        self.reader.bytes_read()
    }

    /// The sha256 (lowercase hex) and size of the whole file.
    pub fn finish(self) -> (String, u64) {
        self.reader.finish()
    }
}
