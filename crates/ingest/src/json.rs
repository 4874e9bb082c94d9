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

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use super::raw::{Raw, RawRecord};
use crate::error::{Error, Location, Pos, Problem, Result, display_path};

/// One top-level record's bytes, with its key (objects of records) and first line.
struct Span {
    start: usize,
    end: usize,
    key: Option<String>,
    line: u64,
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    path: &'a Path,
}

impl Scanner<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.bytes.len() && matches!(self.bytes[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    fn problem_at(&self, pos: usize, message: impl Into<String>) -> Error {
        Error::one(self.problem(pos, message))
    }

    fn problem(&self, pos: usize, message: impl Into<String>) -> Problem {
        Problem::new(Location::line(self.path, line_of(self.bytes, pos)), message)
    }

    /// End (exclusive) of the string starting at `start` (a `"`).
    fn string_end(&self, start: usize) -> Result<usize> {
        let mut i = start + 1;
        while i < self.bytes.len() {
            match self.bytes[i] {
                b'\\' => i += 2,
                b'"' => return Ok(i + 1),
                _ => i += 1,
            }
        }
        Err(self.problem_at(start, "unterminated string: the file ends inside it (truncated file?)"))
    }

    /// End (exclusive) of the JSON value starting at `self.pos`.
    fn value_end(&self) -> Result<usize> {
        let start = self.pos;
        let Some(&first) = self.bytes.get(start) else {
            return Err(self.problem_at(start, "expected a value, found the end of the file (truncated file?)"));
        };
        match first {
            b'"' => self.string_end(start),
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut i = start;
                while i < self.bytes.len() {
                    match self.bytes[i] {
                        b'"' => {
                            i = self.string_end(i)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Ok(i + 1);
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                Err(self.problem_at(start, "this value is never closed: the file ends inside it (truncated file?)"))
            }
            _ => {
                let mut i = start;
                while i < self.bytes.len()
                    && !matches!(self.bytes[i], b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                {
                    i += 1;
                }
                Ok(i)
            }
        }
    }

    fn expect_sep(&mut self, close: u8) -> Result<bool> {
        self.skip_ws();
        match self.bytes.get(self.pos) {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(&c) if c == close => {
                self.pos += 1;
                Ok(false)
            }
            Some(&c) => Err(self.problem_at(
                self.pos,
                format!("expected ',' or '{}' between records, found '{}'", close as char, c as char),
            )),
            None => Err(self.problem_at(
                self.pos,
                format!("the file ends before the closing '{}' (truncated file?)", close as char),
            )),
        }
    }
}

/// 1-based line of a byte offset.
fn line_of(bytes: &[u8], pos: usize) -> u64 {
    memchr_count(&bytes[..pos.min(bytes.len())]) + 1
}

fn memchr_count(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// Assigns line numbers to spans in one forward pass.
fn number_lines(bytes: &[u8], spans: &mut [Span]) {
    let (mut pos, mut line) = (0usize, 1u64);
    for s in spans.iter_mut() {
        line += memchr_count(&bytes[pos..s.start]);
        pos = s.start;
        s.line = line;
    }
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
                    loc: Location { file: self.file.clone(), pos: Pos::Line(s.line) },
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

/// Finds the records of a `.json` file (array, object of records, or JSON lines).
///
/// With `records` (a dot path of member names), the records are the array, or the
/// object of records keyed by id, found there. Without, they are the top-level value's;
/// but a top-level object that is not an object of records (some member is not an
/// object) and holds exactly one array of objects is a wrapper around that array, as in
/// `{"info": {...}, "questions": [{...}, ...]}`: its records are read, and the note
/// returned says so and names the members left out.
pub fn split_json(path: &Path, bytes: Vec<u8>, records: Option<&str>) -> Result<(JsonRecords, Option<String>)> {
    let mut sc = Scanner { bytes: &bytes, path, pos: 0 };
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        sc.pos = 3;
    }
    sc.skip_ws();
    let Some(&first) = bytes.get(sc.pos) else {
        return Err(Error::one(
            Problem::new(Location::file(path), "the file is empty").help("a benchmark file needs at least one record"),
        ));
    };
    let root = sc.pos;
    if first == b'{' {
        let mut after = Scanner { bytes: &bytes, path, pos: sc.value_end()? };
        after.skip_ws();
        if after.pos < bytes.len() {
            // More after the first object: JSON lines in a .json file.
            if records.is_some() {
                return Err(Error::one(
                    sc.problem(after.pos, "this file holds JSON lines, not one JSON document")
                        .help("[ingest] records names a member of a single JSON document: remove it for JSON lines"),
                ));
            }
            return split_jsonl(path, bytes).map(|r| (r, None));
        }
    } else if first != b'[' {
        return Err(sc.problem_at(
            sc.pos,
            format!("expected a JSON array '[' or object '{{' at the start, found '{}'", first as char),
        ));
    }
    let (mut spans, note) = match records {
        Some(member_path) => (sc.records_at(root, member_path)?, None),
        None if first == b'[' => {
            let elements = sc.elements(root)?;
            sc.skip_ws();
            if sc.pos < bytes.len() {
                return Err(sc.problem_at(sc.pos, "unexpected content after the end of the top-level value"));
            }
            (elements, None)
        }
        None => {
            let members = sc.members(root)?;
            let arrays: Vec<&Span> = members.iter().filter(|m| sc.is_array_of_objects(m.start)).collect();
            if members.iter().all(|m| bytes[m.start] == b'{') || arrays.is_empty() {
                (members, None)
            } else if let [array] = arrays[..] {
                let key = array.key.clone().unwrap_or_default();
                let elements = sc.elements(array.start)?;
                let others: Vec<String> = members
                    .iter()
                    .filter_map(|m| m.key.as_deref())
                    .filter(|k| *k != key)
                    .map(|k| format!("\"{k}\""))
                    .collect();
                let note = format!(
                    "read from the array \"{key}\" of the file's top-level object, the only member holding records; \
                     the other members ({}) hold no questions and are not in the release (set [ingest] records to \
                     choose another member)",
                    list_some(&others)
                );
                (elements, Some(note))
            } else {
                let names: Vec<String> =
                    arrays.iter().map(|m| format!("\"{}\"", m.key.as_deref().unwrap_or_default())).collect();
                return Err(Error::one(
                    sc.problem(
                        root,
                        format!("the top-level object holds several arrays of records: {}", list_some(&names)),
                    )
                    .help(format!("set [ingest] records = {} (the member that holds the questions)", names[0])),
                ));
            }
        }
    };
    if spans.is_empty() {
        return Err(Error::one(Problem::new(Location::file(path), "the file holds no records")));
    }
    number_lines(&bytes, &mut spans);
    Ok((records_of(path, bytes, spans), note))
}

/// `items` joined by commas, at most eight and then how many more.
fn list_some(items: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut text = items.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > SHOWN {
        text.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    text
}

impl Scanner<'_> {
    /// The elements of the array starting at `start`, and the end of the document
    /// checked when the array is the top-level value.
    fn elements(&mut self, start: usize) -> Result<Vec<Span>> {
        let mut spans = Vec::new();
        self.pos = start + 1;
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
        } else {
            loop {
                self.skip_ws();
                let start = self.pos;
                let end = self.value_end()?;
                spans.push(Span { start, end, key: None, line: 0 });
                self.pos = end;
                if !self.expect_sep(b']')? {
                    break;
                }
            }
        }
        Ok(spans)
    }

    /// The members of the object starting at `start`, keyed.
    fn members(&mut self, start: usize) -> Result<Vec<Span>> {
        let bytes = self.bytes;
        let mut spans = Vec::new();
        self.pos = start + 1;
        self.skip_ws();
        if bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(spans);
        }
        loop {
            self.skip_ws();
            if bytes.get(self.pos) != Some(&b'"') {
                return Err(self.problem_at(self.pos, "expected a quoted key of the object of records"));
            }
            let kend = self.string_end(self.pos)?;
            let key: String = serde_json::from_slice(&bytes[self.pos..kend])
                .map_err(|e| self.problem_at(self.pos, format!("invalid key: {e}")))?;
            self.pos = kend;
            self.skip_ws();
            if bytes.get(self.pos) != Some(&b':') {
                return Err(self.problem_at(self.pos, format!("expected ':' after key \"{key}\"")));
            }
            self.pos += 1;
            self.skip_ws();
            let start = self.pos;
            let end = self.value_end()?;
            spans.push(Span { start, end, key: Some(key), line: 0 });
            self.pos = end;
            if !self.expect_sep(b'}')? {
                break;
            }
        }
        Ok(spans)
    }

    /// Whether the value at `start` is a non-empty array whose first element is an object.
    fn is_array_of_objects(&self, start: usize) -> bool {
        if self.bytes[start] != b'[' {
            return false;
        }
        let mut at = Scanner { bytes: self.bytes, path: self.path, pos: start + 1 };
        at.skip_ws();
        self.bytes.get(at.pos) == Some(&b'{')
    }

    /// The records at `member_path` (dot-separated member names) below the top-level
    /// value at `root`: an array's elements, or an object's members keyed.
    fn records_at(&mut self, root: usize, member_path: &str) -> Result<Vec<Span>> {
        let mut at = root;
        let mut walked = String::new();
        for name in member_path.split('.') {
            let here = if walked.is_empty() { "the top-level value".to_string() } else { format!("\"{walked}\"") };
            if self.bytes[at] != b'{' {
                return Err(
                    self.problem_at(at, format!("[ingest] records = \"{member_path}\": {here} is not an object"))
                );
            }
            let members = self.members(at)?;
            let Some(member) = members.iter().find(|m| m.key.as_deref() == Some(name)) else {
                let keys: Vec<String> =
                    members.iter().filter_map(|m| m.key.as_deref()).map(|k| format!("\"{k}\"")).collect();
                return Err(Error::one(
                    self.problem(at, format!("[ingest] records = \"{member_path}\": {here} has no member \"{name}\""))
                        .help(format!("its members are: {}", list_some(&keys))),
                ));
            };
            at = member.start;
            if !walked.is_empty() {
                walked.push('.');
            }
            walked.push_str(name);
        }
        match self.bytes[at] {
            b'[' => self.elements(at),
            b'{' => self.members(at),
            _ => Err(self.problem_at(
                at,
                format!("[ingest] records = \"{member_path}\" is neither an array nor an object of records"),
            )),
        }
    }
}

/// Finds the records of a JSON-lines file: one per non-blank line.
pub fn split_jsonl(path: &Path, bytes: Vec<u8>) -> Result<JsonRecords> {
    let start = if bytes.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    let (spans, _) = line_spans(&bytes, start, 1);
    if spans.is_empty() {
        return Err(empty_file(path));
    }
    Ok(records_of(path, bytes, spans))
}

fn empty_file(path: &Path) -> Error {
    Error::one(
        Problem::new(Location::file(path), "the file is empty").help("a benchmark file needs at least one record"),
    )
}

/// The non-blank lines of `bytes[start..]` as spans, the first numbered
/// `line`; and the number of the line after the last.
fn line_spans(bytes: &[u8], mut start: usize, mut line: u64) -> (Vec<Span>, u64) {
    let mut spans = Vec::new();
    while start < bytes.len() {
        let end = bytes[start..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| start + i);
        let text = &bytes[start..end];
        if text.iter().any(|b| !b.is_ascii_whitespace()) {
            spans.push(Span { start, end, key: None, line });
        }
        start = end + 1;
        line += 1;
    }
    (spans, line)
}

/// A JSON-lines file, or a `.json` file's top-level array, read block by
/// block: each block holds whole records, and only one block's bytes are in
/// memory at a time.
pub struct JsonLines {
    reader: super::bounded::Reader,
    path: std::path::PathBuf,
    /// Bytes read but not yet handed out (the start of an unfinished record).
    carry: Vec<u8>,
    /// The line number of `carry[0]`.
    line: u64,
    rows: u64,
    started: bool,
    eof: bool,
    block: usize,
    /// `Some` for a top-level array: where its scan stands at `carry[0]`.
    array: Option<ArrayAt>,
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
    let mut reader = super::bounded::Reader::open(path, super::bounded::Shape::Json)?;
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
    let mut reader = super::bounded::Reader::open(path, super::bounded::Shape::Lines)?;
    let mut bytes = Vec::new();
    while (bytes.len() as u64) < super::bounded::MAX_RECORD_BYTES {
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

/// End (exclusive) of the JSON value starting at `start`, or `None` when
/// `bytes` end inside it (a scalar running to the end of `bytes` is complete
/// only at the end of the file, `eof`).
fn value_end_partial(bytes: &[u8], start: usize, eof: bool) -> Option<usize> {
    let string_end = |mut i: usize| -> Option<usize> {
        i += 1;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    };
    match bytes[start] {
        b'"' => string_end(start),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        i = string_end(i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let end = bytes[start..]
                .iter()
                .position(|b| matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r'))
                .map(|i| start + i);
            end.or(eof.then_some(bytes.len()))
        }
    }
}

/// Bytes per block of a streamed JSON-lines file.
pub const BLOCK_BYTES: usize = 8 << 20;

impl JsonLines {
    pub fn open(path: &Path) -> Result<JsonLines> {
        let reader = super::bounded::Reader::open(path, super::bounded::Shape::Lines)?;
        Ok(JsonLines::with(reader, path, Vec::new(), None))
    }

    fn with(reader: super::bounded::Reader, path: &Path, carry: Vec<u8>, array: Option<ArrayAt>) -> JsonLines {
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
                            spans.push(Span { start: i, end, key: None, line: 0 });
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
            let base = self.line;
            self.line += memchr_count(&bytes);
            number_lines(&bytes, &mut spans);
            for s in &mut spans {
                s.line += base - 1;
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading `text` through `open()` in blocks of every size gives the records,
    /// problems, sha256 and size of reading it whole.
    fn streams_like_whole(text: &str, w_records: &[RawRecord], w_problems: &[Problem], open: impl Fn() -> JsonLines) {
        for block in [1, 2, 7, 16, 1 << 20] {
            let mut lines = open();
            lines.block = block;
            let (mut records, mut problems) = (Vec::new(), Vec::new());
            while let Some(b) = lines.next_block().unwrap() {
                let (r, p) = b.parse(0..b.len());
                records.extend(r);
                problems.extend(p);
            }
            let got: Vec<_> = records.iter().map(|r| (r.loc.to_string(), r.row, r.value.to_json())).collect();
            let want: Vec<_> = w_records.iter().map(|r| (r.loc.to_string(), r.row, r.value.to_json())).collect();
            assert_eq!(got, want, "block {block}");
            let problems: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
            assert_eq!(problems, w_problems.iter().map(|p| p.to_string()).collect::<Vec<_>>(), "block {block}");
            let (sha, bytes) = lines.finish();
            assert_eq!(bytes, text.len() as u64);
            assert_eq!(sha, hex::encode(sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(text))));
        }
    }

    fn read(text: &str) -> Result<Vec<RawRecord>> {
        read_json(Path::new("t.json"), text.as_bytes())
    }

    #[test]
    fn arrays_objects_and_lines() {
        let a = read("[\n {\"id\": 1},\n {\"id\": \"2\"}\n]").unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a[1].loc.pos, crate::error::Pos::Line(3));
        let o = read("{\"0\": {\"c\": \"x\"}, \"1\": {\"c\": \"y\"}}").unwrap();
        assert_eq!(o[1].key.as_deref(), Some("1"));
        let l = read("{\"a\": 1}\n\n{\"a\": 2}\n").unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[1].loc.pos, crate::error::Pos::Line(3));
    }

    /// A file read in blocks (of a few bytes here, so that blocks end
    /// everywhere) gives the records, lines, rows and problems of the file read whole.
    #[test]
    fn json_arrays_read_in_blocks_are_the_file_read_whole() {
        let text = "\u{FEFF} [\n{\"id\": 1, \"q\": \"a ] }\"},\n  {\"id\": 2}\r\n, {\"id\": 3, \"q\": [1, {\"x\": \"}\"}]},\n{bad},\n\n{\"id\": 5}\n]\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        std::fs::write(&path, text).unwrap();
        let (whole, _) = split_json(&path, text.as_bytes().to_vec(), None).unwrap();
        let (w_records, w_problems) = whole.parse(0..whole.len());
        assert_eq!(w_records.len(), 4);
        streams_like_whole(text, &w_records, &w_problems, || {
            let JsonInput::Stream(lines) = open_json(&path, None).unwrap() else { panic!("an array is streamed") };
            *lines
        });
        // A broken array is located; an object of records is read whole.
        for (bad, want) in [
            ("[{\"id\": 1}\n{\"id\": 2}]", "a.json:2: expected ',' or ']' between records, found '{'"),
            ("[{\"id\": 1},\n{\"id\": 2", "a.json:2: this value is never closed"),
            ("[{\"id\": 1}\n", "a.json:2: the file ends before the closing ']'"),
            ("[{\"id\": 1}] x", "a.json:1: unexpected content after the end of the top-level value"),
            ("[{\"id\": 1},\n]", "a.json:2: expected a record, found ']'"),
            (" [ ] ", "a.json: the file holds no records"),
        ] {
            std::fs::write(&path, bad).unwrap();
            let JsonInput::Stream(mut lines) = open_json(&path, None).unwrap() else { panic!("an array is streamed") };
            let e = loop {
                match lines.next_block() {
                    Ok(Some(_)) => continue,
                    Ok(None) => panic!("{bad} was read"),
                    Err(e) => break e.to_string(),
                }
            };
            assert!(e.contains(want), "{bad}: {e}");
        }
        std::fs::write(&path, "{\"a\": {\"id\": 1}}").unwrap();
        assert!(matches!(open_json(&path, None).unwrap(), JsonInput::Whole(..)));
        std::fs::write(&path, "[{\"id\": 1}]").unwrap();
        assert!(matches!(open_json(&path, Some("x")).unwrap(), JsonInput::Whole(..)));
    }

    /// An object of records too large to read whole is refused before it is
    /// read (a sparse file: its size is all there is).
    #[test]
    fn a_large_json_object_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        let f = std::fs::File::create(&path).unwrap();
        std::io::Write::write_all(&mut &f, b"{\"q1\": {\"id\": 1}, ").unwrap();
        std::io::Write::write_all(&mut &f, &vec![b' '; 2 << 20]).unwrap();
        f.set_len(2 << 30).unwrap();
        let Err(e) = open_json(&path, None) else { panic!("a 2 GB object was opened") };
        let e = e.to_string();
        assert!(
            e.contains("big.json") && e.contains("2147 MB of JSON that is not an array") && e.contains("jq -c"),
            "{e}"
        );
    }

    #[test]
    fn json_lines_read_in_blocks_are_the_file_read_whole() {
        let text =
            "\u{FEFF}{\"id\": 1, \"q\": \"a\"}\n\n  \n{\"id\": 2}\r\n{\"id\": 3, \"q\": [1, 2]}\n{bad}\n\n{\"id\": 5}";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.jsonl");
        std::fs::write(&path, text).unwrap();
        let whole = split_jsonl(&path, text.as_bytes().to_vec()).unwrap();
        let (w_records, w_problems) = whole.parse(0..whole.len());
        streams_like_whole(text, &w_records, &w_problems, || JsonLines::open(&path).unwrap());
        assert_eq!(w_records.len(), 4);
        let empty = dir.path().join("e.jsonl");
        std::fs::write(&empty, "\n \n").unwrap();
        let Err(e) = JsonLines::open(&empty).unwrap().next_block() else { panic!("an empty file was read") };
        let e = e.to_string();
        assert!(e.contains("the file is empty"), "{e}");
    }

    fn split(text: &str, records: Option<&str>) -> Result<(Vec<RawRecord>, Option<String>)> {
        let (found, note) = split_json(Path::new("t.json"), text.as_bytes().to_vec(), records)?;
        Ok((found.parse_all()?, note))
    }

    /// A top-level object around one array of records is read through, with a note
    /// naming what was left out; an object of records keyed by id is not.
    #[test]
    fn records_are_found_in_a_wrapping_object_and_said_so() {
        let text = "{\"info\": {\"version\": 2},\n \"types\": [\"a\", \"b\"],\n \"questions\": [\n  {\"id\": 1},\n  {\"id\": 2}\n ]}";
        let (records, note) = split(text, None).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[1].loc.pos, crate::error::Pos::Line(5));
        assert_eq!(records[0].key, None);
        let note = note.expect("a note");
        assert!(note.contains("\"questions\"") && note.contains("\"info\", \"types\""), "{note}");
        // Keyed records stay keyed, with no note; so does an object without any array of objects.
        let (keyed, note) = split("{\"q1\": {\"id\": 1}, \"q2\": {\"id\": 2}}", None).unwrap();
        assert_eq!((keyed.len(), keyed[1].key.as_deref(), note), (2, Some("q2"), None));
        let (plain, note) = split("{\"n\": 3, \"tags\": [1, 2]}", None).unwrap();
        assert_eq!((plain.len(), note), (2, None));
        // Two candidate arrays: the reader does not guess.
        let e = split("{\"train\": [{\"id\": 1}],\n \"test\": [{\"id\": 2}]}", None).unwrap_err().to_string();
        assert!(e.contains("t.json:1:") && e.contains("several arrays of records: \"train\", \"test\""), "{e}");
        assert!(e.contains("records = \"train\""), "{e}");
    }

    /// `records` names the member, nested or not, array or object of records.
    #[test]
    fn records_reads_the_named_member() {
        let text = "{\"train\": [{\"id\": 1}],\n \"test\": {\"splits\": {\"b\": [{\"id\": 2}, {\"id\": 3}], \"k\": {\"x\": {\"id\": 4}}}}}";
        let (test, note) = split(text, Some("test.splits.b")).unwrap();
        assert_eq!((test.len(), test[1].loc.pos.clone(), note), (2, crate::error::Pos::Line(2), None));
        let (train, _) = split(text, Some("train")).unwrap();
        assert_eq!(train.len(), 1);
        let (keyed, _) = split(text, Some("test.splits.k")).unwrap();
        assert_eq!(keyed[0].key.as_deref(), Some("x"));
        let e = split(text, Some("test.split")).unwrap_err().to_string();
        assert!(e.contains("\"test\" has no member \"split\"") && e.contains("its members are: \"splits\""), "{e}");
        let e = split(text, Some("train.0")).unwrap_err().to_string();
        assert!(e.contains("\"train\" is not an object"), "{e}");
        let e = split("[{\"id\": 1}]", Some("a")).unwrap_err().to_string();
        assert!(e.contains("the top-level value is not an object"), "{e}");
        let e = split("{\"a\": 1}\n{\"a\": 2}", Some("a")).unwrap_err().to_string();
        assert!(e.contains("JSON lines"), "{e}");
    }

    #[test]
    fn truncated_and_bad_records_are_located() {
        let e = read("[\n{\"id\": 1},\n{\"id\": ").unwrap_err().to_string();
        assert!(e.contains("t.json:3"), "{e}");
        let e = read("[\n{\"id\": 1},\n{\"id\" 2}\n]").unwrap_err().to_string();
        assert!(e.contains("t.json:3"), "{e}");
        assert!(read("").unwrap_err().to_string().contains("empty"));
        assert!(read("[]").unwrap_err().to_string().contains("no records"));
    }
}
