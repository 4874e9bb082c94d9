//! A JSON document or JSON-lines file held whole: its records found (an
//! array, an object of records keyed by id, the member `[ingest] records`
//! names, or the one array of records inside a wrapper object).

use std::path::Path;

use super::scan::{LineAt, Scanner, line_spans, number_lines};
use super::{JsonRecords, Span, empty_file, records_of};
use crate::error::{Error, Location, Problem, Result};

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
        None => sc.object_records(root)?,
    };
    if spans.is_empty() {
        return Err(Error::one(Problem::new(Location::file(path), "the file holds no records")));
    }
    number_lines(&bytes, &mut spans, &mut LineAt::start());
    Ok((records_of(path, bytes, spans), note))
}

impl Scanner<'_> {
    /// The records of a top-level object starting at `root`: its members when it is an
    /// object of records (or holds no array of objects); else the elements of its one
    /// array of objects, with a note naming the members left out. Several such arrays
    /// are an error asking for `records`.
    fn object_records(&mut self, root: usize) -> Result<(Vec<Span>, Option<String>)> {
        let members = self.members(root)?;
        let arrays: Vec<&Span> = members.iter().filter(|m| self.is_array_of_objects(m.start)).collect();
        if members.iter().all(|m| self.bytes[m.start] == b'{') || arrays.is_empty() {
            Ok((members, None))
        } else if let [array] = arrays[..] {
            let key = array.key.clone().unwrap_or_default();
            let elements = self.elements(array.start)?;
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
            Ok((elements, Some(note)))
        } else {
            let names: Vec<String> =
                arrays.iter().map(|m| format!("\"{}\"", m.key.as_deref().unwrap_or_default())).collect();
            Err(Error::one(
                self.problem(
                    root,
                    format!("the top-level object holds several arrays of records: {}", list_some(&names)),
                )
                .help(format!("set [ingest] records = {} (the member that holds the questions)", names[0])),
            ))
        }
    }
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
                spans.push(Span { start, end, key: None, line: 0, col: 0 });
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
            spans.push(Span { start, end, key: Some(key), line: 0, col: 0 });
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
