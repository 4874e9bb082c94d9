//! Reading a text input (JSON, JSON lines, CSV, TSV, VLMEvalKit TSV, and the
//! prediction files read with them) whole, with a size limit per record.
//!
//! The readers keep a file's bytes in memory and split it into records, so a
//! file that is one endless record (a whole dataset or a blob on one line, a
//! runaway string) would be read entirely before any check. Here the bytes are
//! scanned as they arrive, and reading stops, with the file, line, column and
//! byte offset, as soon as one record passes [`MAX_RECORD_BYTES`]: memory stays
//! bounded by the limit, whatever the file's size, and pipes (FIFOs) work too.

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Location, Pos, Problem, Result, display_path};

/// The largest record (JSON value, or line of a line-based file) read: far
/// above any benchmark question, base64 image rows of VLMEvalKit included.
pub const MAX_RECORD_BYTES: u64 = 64 << 20;

/// How records are delimited in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One record per line (JSON lines, CSV, TSV): a line is a record.
    Lines,
    /// A JSON document (array or object of records, or JSON lines): a record
    /// is a stretch nested below the top-level array or object, or below an
    /// array that is a member of the top-level object (a wrapper's records).
    Json,
}

/// Reads `path` whole, failing with a located problem when a record is larger
/// than [`MAX_RECORD_BYTES`].
pub fn read(path: &Path, shape: Shape) -> Result<Vec<u8>> {
    read_with_limit(path, shape, MAX_RECORD_BYTES)
}

/// [`read`] with another limit (tests).
pub fn read_with_limit(path: &Path, shape: Shape, limit: u64) -> Result<Vec<u8>> {
    let mut reader = Reader::open_with_limit(path, shape, limit)?;
    // Regular files are allocated once; pipes grow as they are read.
    let mut bytes = Vec::with_capacity(usize::try_from(reader.size_hint.min(1 << 30)).unwrap_or(0));
    while reader.read_chunk(&mut bytes)? {}
    Ok(bytes)
}

/// A text input read piece by piece, each piece checked against the record
/// limit as it arrives, and hashed (sha256, for the manifest) on the way.
pub struct Reader {
    file: std::fs::File,
    path: std::path::PathBuf,
    shape: Shape,
    limit: u64,
    scan: Scan,
    hasher: sha2::Sha256,
    bytes: u64,
    chunk: Vec<u8>,
    /// The file's size when it is a regular file (0 for pipes).
    pub size_hint: u64,
}

impl Reader {
    pub fn open(path: &Path, shape: Shape) -> Result<Reader> {
        Self::open_with_limit(path, shape, MAX_RECORD_BYTES)
    }

    fn open_with_limit(path: &Path, shape: Shape, limit: u64) -> Result<Reader> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let size_hint = file.metadata().ok().filter(|m| m.is_file()).map_or(0, |m| m.len());
        Ok(Reader {
            file,
            path: path.to_path_buf(),
            shape,
            limit,
            scan: Scan::new(shape),
            hasher: sha2::Digest::new(),
            bytes: 0,
            chunk: vec![0u8; 1 << 20],
            size_hint,
        })
    }

    /// Appends the next piece (up to 1 MiB) to `out`; false at the end of the file.
    pub fn read_chunk(&mut self, out: &mut Vec<u8>) -> Result<bool> {
        let n = loop {
            match self.file.read(&mut self.chunk) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(&self.path, e)),
            }
        };
        if n == 0 {
            return Ok(false);
        }
        let piece = &self.chunk[..n];
        if let Some(open) = self.scan.feed(piece, self.limit) {
            let path = self.path.as_path();
            return Err(match self.scan.binary {
                Some(b) => Error::one(
                    Problem::new(
                        Location { file: display_path(path).into(), pos: Pos::LineCol(open.line, open.col) },
                        format!(
                            "byte 0x{b:02X} cannot appear in JSON: the file is binary or corrupt; reading stopped there"
                        ),
                    )
                    .help("give the benchmark's JSON file (a device, an archive or a truncated download is not one)"),
                ),
                None => too_large(path, self.shape, self.limit, &open),
            });
        }
        sha2::Digest::update(&mut self.hasher, piece);
        self.bytes += n as u64;
        out.extend_from_slice(piece);
        Ok(true)
    }

    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// The sha256 (lowercase hex) and size of everything read.
    pub fn finish(self) -> (String, u64) {
        (hex::encode(sha2::Digest::finalize(self.hasher)), self.bytes)
    }
}

/// Where the record over the limit starts.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Open {
    line: u64,
    col: u64,
    offset: u64,
}

/// The incremental scanner: line numbers, and for JSON the nesting depth and
/// whether it is inside a string.
struct Scan {
    shape: Shape,
    offset: u64,
    line: u64,
    line_start: u64,
    depth: u64,
    /// Whether the top-level value is an object, and the value at depth 2 an array.
    top_object: bool,
    inner_array: bool,
    in_string: bool,
    escaped: bool,
    /// Start of the current record (offset, line, column), and its length so far.
    start: Open,
    len: u64,
    /// A control byte JSON never holds (NUL, ...), when one stopped the scan.
    binary: Option<u8>,
}

impl Scan {
    fn new(shape: Shape) -> Scan {
        Scan {
            shape,
            offset: 0,
            line: 1,
            line_start: 0,
            depth: 0,
            top_object: false,
            inner_array: false,
            in_string: false,
            escaped: false,
            start: Open { line: 1, col: 1, offset: 0 },
            len: 0,
            binary: None,
        }
    }

    /// Scans the next bytes; `Some` when a record passes `limit`.
    fn feed(&mut self, bytes: &[u8], limit: u64) -> Option<Open> {
        match self.shape {
            Shape::Lines => self.feed_lines(bytes, limit),
            Shape::Json => self.feed_json(bytes, limit),
        }
    }

    fn feed_lines(&mut self, bytes: &[u8], limit: u64) -> Option<Open> {
        let mut rest = bytes;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            if self.len + i as u64 > limit {
                return Some(self.start.clone());
            }
            self.offset += i as u64 + 1;
            self.line += 1;
            self.start = Open { line: self.line, col: 1, offset: self.offset };
            self.len = 0;
            rest = &rest[i + 1..];
        }
        self.len += rest.len() as u64;
        self.offset += rest.len() as u64;
        (self.len > limit).then(|| self.start.clone())
    }

    fn feed_json(&mut self, bytes: &[u8], limit: u64) -> Option<Open> {
        for &b in bytes {
            // No JSON text holds a raw control byte other than whitespace, in a
            // string or out of one: a device or a binary file stops here, not at EOF.
            if b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r') {
                self.binary = Some(b);
                return Some(Open { line: self.line, col: self.offset - self.line_start + 1, offset: self.offset });
            }
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
            } else {
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => {
                        self.depth += 1;
                        match self.depth {
                            1 => self.top_object = b == b'{',
                            2 => self.inner_array = b == b'[',
                            _ => {}
                        }
                    }
                    b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                    _ => {}
                }
            }
            let between =
                !self.in_string && (self.depth <= 1 || (self.depth == 2 && self.top_object && self.inner_array));
            if between {
                self.len = 0;
            } else {
                if self.len == 0 {
                    self.start = Open { line: self.line, col: self.offset - self.line_start + 1, offset: self.offset };
                }
                self.len += 1;
                if self.len > limit {
                    return Some(self.start.clone());
                }
            }
            self.offset += 1;
            if b == b'\n' {
                self.line += 1;
                self.line_start = self.offset;
            }
        }
        None
    }
}

fn too_large(path: &Path, shape: Shape, limit: u64, open: &Open) -> Error {
    let mib = limit >> 20;
    let (what, help) = match shape {
        Shape::Lines => (
            "line",
            "a line of a JSON-lines, CSV or TSV file is one record: this one is a whole dataset or a blob on one line \
             (a JSON array belongs in a .json file; images belong in image files), or the file is corrupt",
        ),
        Shape::Json => (
            "record",
            "no benchmark record is this large: check that the file is complete and not one runaway value \
             (an unclosed string or bracket), and keep images in image files rather than inline",
        ),
    };
    Error::one(
        Problem::new(
            Location { file: display_path(path).into(), pos: Pos::LineCol(open.line, open.col) },
            format!(
                "this {what} is larger than the {mib} MiB limit per record (it starts at byte offset {} and \
                 is still open {mib} MiB later); reading stopped there",
                open.offset
            ),
        )
        .help(help),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(shape: Shape, chunks: &[&[u8]], limit: u64) -> Option<Open> {
        let mut s = Scan::new(shape);
        chunks.iter().find_map(|c| s.feed(c, limit))
    }

    #[test]
    fn lines_over_the_limit_are_located_across_chunks() {
        assert_eq!(scan(Shape::Lines, &[b"abc\nde", b"f\n"], 3), None);
        assert_eq!(scan(Shape::Lines, &[b"abc\nde", b"fg\n"], 3), Some(Open { line: 2, col: 1, offset: 4 }));
        assert_eq!(scan(Shape::Lines, &[b"a\nb\n", b"cdefg"], 3), Some(Open { line: 3, col: 1, offset: 4 }));
    }

    #[test]
    fn json_records_are_measured_below_the_top_level() {
        // Many small records on one line are fine; one big one is not.
        let ok = br#"[{"a": 1}, {"a": 2}, {"a": 3}]"#;
        assert_eq!(scan(Shape::Json, &[ok], 10), None);
        let big = b"[{\"a\": 1},\n {\"a\": \"0123456789\"}]";
        assert_eq!(scan(Shape::Json, &[&big[..12], &big[12..]], 10), Some(Open { line: 2, col: 2, offset: 12 }));
        // A top-level string that never ends, and brackets inside strings.
        assert!(scan(Shape::Json, &[b"[\"abcdefghijkl"], 10).is_some());
        assert_eq!(scan(Shape::Json, &[br#"["]]]]", "\"{{", 1]"#], 10), None);
        // The records of an array inside a top-level object are measured one by one;
        // an array inside a top-level array, or an object member, is one record.
        let wrapped = br#"{"info": {"v": 1}, "questions": [{"a": 1}, {"a": 2}, {"a": 3}]}"#;
        assert_eq!(scan(Shape::Json, &[wrapped], 10), None);
        assert!(scan(Shape::Json, &[br#"[[{"a": 1}, {"a": 2}, {"a": 3}]]"#], 10).is_some());
        assert!(scan(Shape::Json, &[br#"{"k": {"a": 1, "b": 2, "c": 3}}"#], 10).is_some());
        assert!(scan(Shape::Json, &[br#"{"q": [{"a": "0123456789"}]}"#], 10).is_some());
    }

    #[test]
    fn binary_bytes_stop_a_json_read_at_once() {
        let mut s = Scan::new(Shape::Json);
        assert_eq!(s.feed(b"[{\"a\": 1},\n\0\0\0", 1 << 20), Some(Open { line: 2, col: 1, offset: 11 }));
        assert_eq!(s.binary, Some(0));
    }

    #[test]
    fn reading_stops_at_the_limit_with_the_location() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.jsonl");
        std::fs::write(&p, "{}\n{\"q\": \"0123456789\"}\n").unwrap();
        assert!(read_with_limit(&p, Shape::Lines, 100).is_ok());
        let e = read_with_limit(&p, Shape::Lines, 10).unwrap_err().to_string();
        assert!(e.contains("x.jsonl:2:1") && e.contains("byte offset 3"), "{e}");
    }
}
