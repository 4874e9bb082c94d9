//! The structural scanner: finds where each JSON value starts and ends
//! without parsing it (strings, nesting, separators), and numbers lines, so
//! that records are parsed in parallel and an error names its own line.

use std::path::Path;

use super::Span;
use crate::error::{Error, Location, Problem, Result};

pub(super) struct Scanner<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    pub(super) path: &'a Path,
}

impl Scanner<'_> {
    pub(super) fn skip_ws(&mut self) {
        while self.pos < self.bytes.len() && matches!(self.bytes[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    pub(super) fn problem_at(&self, pos: usize, message: impl Into<String>) -> Error {
        Error::one(self.problem(pos, message))
    }

    pub(super) fn problem(&self, pos: usize, message: impl Into<String>) -> Problem {
        Problem::new(Location::line(self.path, line_of(self.bytes, pos)), message)
    }

    /// End (exclusive) of the string starting at `start` (a `"`).
    pub(super) fn string_end(&self, start: usize) -> Result<usize> {
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
    pub(super) fn value_end(&self) -> Result<usize> {
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

    pub(super) fn expect_sep(&mut self, close: u8) -> Result<bool> {
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

pub(super) fn memchr_count(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// Where a scan stands in a file's lines: the line, how many characters into it, and
/// the line the last record started on.
#[derive(Debug, Clone, Copy)]
pub(super) struct LineAt {
    pub(super) line: u64,
    pub(super) col: u64,
    pub(super) last: u64,
}

impl LineAt {
    /// The start of a file.
    pub(super) fn start() -> LineAt {
        LineAt { line: 1, col: 0, last: 0 }
    }
}

/// Assigns line numbers to spans in one forward pass over `bytes`, which start at `at`
/// (left at their end). A span that starts on the line of the record before it also
/// gets its 1-based character column, so that the records of a file written on one
/// line (a JSON document without newlines) are told apart.
pub(super) fn number_lines(bytes: &[u8], spans: &mut [Span], at: &mut LineAt) {
    let mut pos = 0usize;
    let mut advance = |to: usize, at: &mut LineAt| {
        let gap = &bytes[pos..to];
        match gap.iter().rposition(|&b| b == b'\n') {
            Some(last) => {
                at.line += memchr_count(gap);
                at.col = chars(&gap[last + 1..]);
            }
            None => at.col += chars(gap),
        }
        pos = to;
    };
    for s in spans.iter_mut() {
        advance(s.start, at);
        s.line = at.line;
        s.col = if at.line == at.last { at.col + 1 } else { 0 };
        at.last = at.line;
    }
    advance(bytes.len(), at);
}

/// Characters of UTF-8 `bytes` (those that do not continue a character).
fn chars(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64
}

/// The non-blank lines of `bytes[start..]` as spans, the first numbered
/// `line`; and the number of the line after the last.
pub(super) fn line_spans(bytes: &[u8], mut start: usize, mut line: u64) -> (Vec<Span>, u64) {
    let mut spans = Vec::new();
    while start < bytes.len() {
        let end = bytes[start..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| start + i);
        let text = &bytes[start..end];
        if text.iter().any(|b| !b.is_ascii_whitespace()) {
            spans.push(Span { start, end, key: None, line, col: 0 });
        }
        start = end + 1;
        line += 1;
    }
    (spans, line)
}

/// End (exclusive) of the JSON value starting at `start`, or `None` when
/// `bytes` end inside it (a scalar running to the end of `bytes` is complete
/// only at the end of the file, `eof`).
pub(super) fn value_end_partial(bytes: &[u8], start: usize, eof: bool) -> Option<usize> {
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
