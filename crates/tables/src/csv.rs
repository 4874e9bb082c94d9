//! CSV and TSV reader: a header row (or the column names `[ingest] columns`
//! gives a headerless file), then one record per row. Every value is text; a
//! ragged row or a non-UTF-8 byte is a located error.

use std::path::Path;

use super::raw::{Raw, RawRecord};
use crate::error::{Error, Location, Problem, Result, display_path};

/// Reads a delimited file with a header row.
pub fn read_delimited(path: &Path, bytes: &[u8], delimiter: u8) -> Result<Vec<RawRecord>> {
    let mut rows = Delimited::open(path, bytes.to_vec(), delimiter, Header::FirstRow)?;
    let mut records = Vec::new();
    while let Some(batch) = rows.next_batch(usize::MAX)? {
        records.extend(batch);
    }
    Ok(records)
}

/// How a delimited file's columns are named.
#[derive(Debug, Clone, Copy)]
pub enum Header<'a> {
    /// By its first row; refused when that row reads as a record (see [`data_in_header`]).
    FirstRow,
    /// By its first row, which the pipeline says is a header (`[ingest] header = true`).
    FirstRowSaid,
    /// By these names, in order: every row is a record (`[ingest] header = false`, `columns`).
    Named(&'a [String]),
}

/// The records of a delimited file, parsed a batch at a time (the bytes are
/// held, the parsed records only per batch).
pub struct Delimited {
    path: std::path::PathBuf,
    reader: csv::Reader<std::io::Cursor<Vec<u8>>>,
    headers: Vec<super::raw::Key>,
    stem: std::sync::Arc<str>,
    file: std::sync::Arc<str>,
    row: u64,
    problems: crate::error::Capped,
    done: bool,
    /// Set when a `.csv` file was read as semicolon-separated (see [`Delimited::open`]).
    pub semicolons: bool,
    /// Per column, whether the header left it without a name (see [`name_columns`]).
    unnamed: Vec<bool>,
    /// The columns are named by `[ingest] columns`: every row is a record.
    headerless: bool,
}

impl Delimited {
    /// Checks the file's quoting and reads its header row.
    ///
    /// A `.csv` file whose header row holds semicolons and no comma is read as
    /// semicolon-separated, as spreadsheets write CSV where the comma is the decimal
    /// mark: read with commas its header would be one field, and no benchmark has
    /// a single column.
    ///
    /// With [`Header::Named`], the file has no header row: every row is a record and
    /// the columns are named, in order, by those names (`[ingest] header = false`).
    /// With [`Header::FirstRow`], a first row that reads as a record is an error, since
    /// taking it for the header would drop that record and name the columns by its values.
    pub fn open(path: &Path, mut bytes: Vec<u8>, delimiter: u8, header: Header<'_>) -> Result<Delimited> {
        let columns = match header {
            Header::Named(c) => Some(c),
            Header::FirstRow | Header::FirstRowSaid => None,
        };
        if bytes.starts_with(b"\xEF\xBB\xBF") {
            bytes.drain(..3);
        }
        if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
            return Err(Error::one(
                Problem::new(Location::file(path), "the file is UTF-16 text (it begins with a UTF-16 byte-order mark), not UTF-8")
                    .help("re-save it as UTF-8 (Excel: \"CSV UTF-8\"; its \"Unicode Text\" is UTF-16), or convert it: iconv -f UTF-16 -t UTF-8"),
            ));
        }
        let semicolons = delimiter == b','
            && columns.is_none()
            && first_line(&bytes).is_some_and(|header| header.contains(';') && !header.contains(','));
        let delimiter = if semicolons { b';' } else { delimiter };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(Error::one(
                Problem::new(Location::file(path), "the file is empty")
                    .help("a benchmark file needs a header row and at least one record"),
            ));
        }
        if delimiter != b'\t'
            && let Some(open) = unclosed_quote(&bytes, delimiter)
        {
            let mut p = Problem::new(
                Location { file: display_path(path).into(), pos: crate::error::Pos::LineCol(open.line, open.col) },
                "this quote is never closed: the rest of the file would be read as one value",
            )
            .help("close the quote, or double a quote inside a quoted value (\"\")");
            if open.line > 1
                && let Some(name) = first_line(&bytes).and_then(|h| h.split(delimiter as char).nth(open.field))
            {
                p = p.field(name.trim().trim_matches('"'));
            }
            return Err(Error::one(p));
        }
        // CSV is always RFC 4180. A TSV is read with quotes when every value that opens
        // with a quote is quoted as pandas and spreadsheets write them (closed, then a tab
        // or the line's end); otherwise quotes are plain text, as in hand-written TSVs.
        let quoting = delimiter != b'\t' || quotes_are_rfc(&bytes, delimiter);
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .flexible(columns.is_some())
            .has_headers(columns.is_none())
            .quoting(quoting)
            .from_reader(std::io::Cursor::new(bytes));
        // The columns of a headerless file are named, all of them; else the header row.
        let (headers, unnamed, headerless) = if let Some(columns) = columns {
            let headers: Vec<super::raw::Key> = columns.iter().map(|c| super::raw::intern(c.trim())).collect();
            check_header(&headers, || Location::file(path))?;
            let unnamed = vec![false; headers.len()];
            (headers, unnamed, true)
        } else {
            let headers = read_header(&mut reader, path)?;
            if matches!(header, Header::FirstRow) {
                data_in_header(&headers, path)?;
            }
            let unnamed: Vec<bool> = headers.iter().map(|h| h.is_empty()).collect();
            let headers = name_columns(headers);
            check_header(&headers, || Location::line(path, 1))?;
            (headers, unnamed, false)
        };
        Ok(Delimited {
            path: path.to_path_buf(),
            reader,
            headers,
            stem: path.file_stem().and_then(|s| s.to_str()).unwrap_or("").into(),
            file: display_path(path).into(),
            row: 0,
            problems: crate::error::Capped::default(),
            done: false,
            semicolons,
            unnamed,
            headerless,
        })
    }

    /// Up to `max` more records, or `None` after the last. A bad row is an
    /// error at the end, with every other bad row of the file.
    pub fn next_batch(&mut self, max: usize) -> Result<Option<Vec<RawRecord>>> {
        if self.done {
            return Ok(None);
        }
        let path = self.path.as_path();
        let mut records = Vec::with_capacity(max.min(1 << 16));
        let mut rec = csv::ByteRecord::new();
        while records.len() < max {
            match self.reader.read_byte_record(&mut rec) {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    break;
                }
                Err(e) => {
                    self.problems.push(csv_problem_inner(path, &e));
                    continue;
                }
            }
            self.row += 1;
            let line = rec.position().map_or(self.row + u64::from(!self.headerless), |p| p.line());
            if rec.len() != self.headers.len() {
                // Only a headerless file gets here (a header fixes the count for the csv reader).
                self.problems.push(
                    Problem::new(
                        Location::line(path, line),
                        format!("this row has {} fields but [ingest] columns names {}", rec.len(), self.headers.len()),
                    )
                    .help("name every column of the file in [ingest] columns, in order"),
                );
                continue;
            }
            let mut fields = Vec::with_capacity(self.headers.len());
            for (i, value) in rec.iter().enumerate() {
                match std::str::from_utf8(value) {
                    // An unnamed column's empty cells are no field (spreadsheets' empty columns).
                    Ok(s) if self.unnamed[i] && s.trim().is_empty() => {}
                    Ok(s) => fields.push((self.headers[i].clone(), Raw::Str(s.to_string()))),
                    Err(_) => self.problems.push(
                        Problem::new(Location::line(path, line), "the value is not valid UTF-8")
                            .field(self.headers[i].to_string())
                            .help(UTF8_HELP),
                    ),
                }
            }
            records.push(RawRecord {
                loc: Location { file: self.file.clone(), pos: crate::error::Pos::Line(line) },
                value: Raw::Map(fields),
                file_stem: self.stem.clone(),
                key: None,
                row: self.row,
            });
        }
        if self.done {
            if !self.problems.is_empty() {
                return Err(Error::Invalid(std::mem::take(&mut self.problems).into_vec()));
            }
            if self.row == 0 {
                let what =
                    if self.headerless { "the file has no records" } else { "the file has a header but no records" };
                return Err(Error::one(Problem::new(Location::file(path), what)));
            }
        }
        Ok((!records.is_empty()).then_some(records))
    }
}

/// Names the columns a header row leaves without a name as pandas does when it reads
/// them back: `Unnamed: <0-based column>` (pandas writes its row index so), so that
/// their values are kept, in `meta` unless mapped.
pub(super) fn name_columns(headers: Vec<super::raw::Key>) -> Vec<super::raw::Key> {
    headers
        .into_iter()
        .enumerate()
        .map(|(i, h)| if h.is_empty() { super::raw::intern(&format!("Unnamed: {i}")) } else { h })
        .collect()
}

/// Checks a header row (CSV, TSV or spreadsheet): a name given to two columns would
/// keep one of their values per record, so it is an error.
pub(super) fn check_header(headers: &[super::raw::Key], at: impl Fn() -> Location) -> Result<()> {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, name) in headers.iter().enumerate() {
        if let Some(first) = seen.insert(name, i) {
            return Err(Error::one(
                Problem::new(
                    at(),
                    format!("the header names column {} and column {} both \"{name}\"", first + 1, i + 1),
                )
                .help("rename one of them: a record keeps one value per field name"),
            ));
        }
    }
    Ok(())
}

/// File extensions of images and videos: a column name ending in one is a value (a
/// file name), not a name.
const MEDIA_EXTENSIONS: &[&str] =
    &["png", "jpg", "jpeg", "gif", "bmp", "webp", "tif", "tiff", "mp4", "mov", "mkv", "webm", "avi"];

/// Refuses a header row that reads as a record: a column "named" by an image or video
/// file name, or by a question (three words or more ending in a question mark). Taken
/// for the header, that row's record would be dropped without a word.
fn data_in_header(headers: &[super::raw::Key], path: &Path) -> Result<()> {
    let Some((i, h, what)) = reads_as_record(headers) else { return Ok(()) };
    let shown: String = h.chars().take(60).collect();
    Err(Error::one(
        Problem::new(
            Location::line(path, 1),
            format!(
                "the first row reads as a record, not a header: column {} is \"{shown}\", {what}; read as the \
                 header, that record would be lost",
                i + 1
            ),
        )
        .help(format!(
            "a file without a header row is read with [ingest] header = false and columns = [...] naming its {} \
             columns in order; if the first row is the header, set header = true",
            headers.len()
        )),
    ))
}

/// The number of columns of a delimited file whose first row reads as a record, not a
/// header (see [`data_in_header`]), with the cell that says so and why; `None` when
/// it reads as a header.
pub fn first_row_reads_as_record(path: &Path, bytes: Vec<u8>, delimiter: u8) -> Result<Option<(usize, String)>> {
    let rows = Delimited::open(path, bytes, delimiter, Header::FirstRowSaid)?;
    Ok(reads_as_record(&rows.headers)
        .map(|(i, h, what)| (rows.headers.len(), format!("column {} is \"{h}\", {what}", i + 1))))
}

/// The first column "named" by a value: an image or video file name, or a question.
fn reads_as_record(headers: &[super::raw::Key]) -> Option<(usize, &super::raw::Key, &'static str)> {
    let why = |h: &str| {
        let media = h.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty() && MEDIA_EXTENSIONS.iter().any(|e| ext.eq_ignore_ascii_case(e))
        });
        if media {
            Some("an image or video file name")
        } else if h.ends_with('?') && h.split_whitespace().count() >= 3 {
            Some("a question")
        } else {
            None
        }
    };
    headers.iter().enumerate().find_map(|(i, h)| why(h).map(|w| (i, h, w)))
}

/// Where a quoted value that runs to the end of the file opens.
struct OpenQuote {
    line: u64,
    col: u64,
    /// 0-based column of the table.
    field: usize,
}

/// The quote that opens a value and is never closed, if any (RFC 4180: a
/// quote opens a value only at its start; `""` inside is an escaped quote).
fn unclosed_quote(bytes: &[u8], delimiter: u8) -> Option<OpenQuote> {
    let (mut line, mut line_start, mut field) = (1u64, 0usize, 0usize);
    let mut at_start = true;
    let mut open: Option<OpenQuote> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if open.is_some() {
            if b == b'"' {
                if bytes.get(i + 1) == Some(&b'"') {
                    i += 2;
                    continue;
                }
                open = None;
            } else if b == b'\n' {
                line += 1;
                line_start = i + 1;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' if at_start => {
                open = Some(OpenQuote { line, col: (i - line_start) as u64 + 1, field });
                at_start = false;
            }
            d if d == delimiter => {
                field += 1;
                at_start = true;
            }
            b'\n' => {
                line += 1;
                line_start = i + 1;
                field = 0;
                at_start = true;
            }
            b'\r' => {}
            _ => at_start = false,
        }
        i += 1;
    }
    open
}

/// Whether every value that opens with a quote is a well-formed RFC 4180 quoted
/// value (`""` escapes a quote; the closing quote is followed by the delimiter, a
/// line end or the end of the file), and at least one does.
fn quotes_are_rfc(bytes: &[u8], delimiter: u8) -> bool {
    let (mut i, mut at_start, mut any) = (0usize, true, false);
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'"' && at_start {
            any = true;
            i += 1;
            loop {
                match bytes.get(i) {
                    None => return false,
                    Some(b'"') if bytes.get(i + 1) == Some(&b'"') => i += 2,
                    Some(b'"') => break,
                    Some(_) => i += 1,
                }
            }
            i += 1;
            match bytes.get(i) {
                None => return true,
                Some(&c) if c == delimiter || c == b'\n' || c == b'\r' => {}
                Some(_) => return false,
            }
            continue;
        }
        at_start = b == delimiter || b == b'\n';
        i += 1;
    }
    any
}

fn first_line(bytes: &[u8]) -> Option<&str> {
    let end = bytes.iter().position(|&b| b == b'\n').unwrap_or(bytes.len());
    std::str::from_utf8(&bytes[..end]).ok().map(|l| l.trim_end_matches('\r'))
}

fn csv_problem(path: &Path, e: &csv::Error) -> Error {
    Error::one(csv_problem_inner(path, e))
}

fn csv_problem_inner(path: &Path, e: &csv::Error) -> Problem {
    match e.kind() {
        csv::ErrorKind::UnequalLengths { pos, expected_len, len } => Problem::new(
            Location::line(path, pos.as_ref().map_or(0, csv::Position::line)),
            format!("this row has {len} fields but the header has {expected_len}"),
        )
        .help("quote values that contain the delimiter, or fix the row"),
        csv::ErrorKind::Utf8 { pos, err } => Problem::new(
            Location::line(path, pos.as_ref().map_or(0, csv::Position::line)),
            format!("field {} is not valid UTF-8", err.field() + 1),
        )
        .help(UTF8_HELP),
        _ => Problem::new(Location::file(path), format!("cannot read the file: {e}")),
    }
}

/// What to do with a file that is not UTF-8.
const UTF8_HELP: &str = "the file is not UTF-8 (a spreadsheet's \"CSV\" is often Windows-1252): re-save it as UTF-8 \
                         (Excel: \"CSV UTF-8\"), or convert it: iconv -f windows-1252 -t utf-8";

/// The header row of `reader`: each column name trimmed, as UTF-8.
fn read_header<R: std::io::Read>(reader: &mut csv::Reader<R>, path: &Path) -> Result<Vec<super::raw::Key>> {
    reader
        .byte_headers()
        .map_err(|e| csv_problem(path, &e))?
        .iter()
        .enumerate()
        .map(|(i, h)| {
            std::str::from_utf8(h).map(|s| super::raw::intern(s.trim())).map_err(|_| {
                Error::one(
                    Problem::new(Location::line(path, 1), format!("header column {} is not valid UTF-8", i + 1))
                        .help(UTF8_HELP),
                )
            })
        })
        .collect::<Result<Vec<super::raw::Key>>>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// UTF-16 text (Excel's "Unicode Text") is refused as such, saying how to convert it.
    #[test]
    fn utf16_text_is_refused_with_how_to_convert_it() {
        let text = "id\tquestion\tanswer\r\n1\tIs the café open?\tyes\r\n";
        let mut bytes = vec![0xFF, 0xFE];
        bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        let Err(e) = Delimited::open(Path::new("u.txt"), bytes, b'\t', Header::FirstRow) else { panic!("read") };
        let shown = e.to_string();
        assert!(shown.contains("u.txt: the file is UTF-16 text") && shown.contains("iconv -f UTF-16"), "{shown}");
    }

    /// A TSV without a header row, as MME's files are written: its first row is a
    /// record, refused as a header; read as the pipeline says, every row is kept.
    #[test]
    fn a_first_row_that_reads_as_a_record_is_no_header() {
        let text = b"0001.jpg\tIs there a dog in the image?\tYes\n0002.jpg\tIs there a cat?\tNo\n";
        let e = Delimited::open(Path::new("t.tsv"), text.to_vec(), b'\t', Header::FirstRow).err().expect("refused");
        let e = e.to_string();
        assert!(e.contains("t.tsv:1") && e.contains("column 1 is \"0001.jpg\", an image or video file name"), "{e}");
        assert!(e.contains("header = false") && e.contains("its 3 columns"), "{e}");
        let question = b"id\tIs there a dog in the image?\tanswer\n1\tx\ty\n";
        let e = Delimited::open(Path::new("t.tsv"), question.to_vec(), b'\t', Header::FirstRow).err().expect("refused");
        assert!(e.to_string().contains("column 2 is \"Is there a dog in the image?\", a question"), "{e}");
        // Names that only look alike are names: `image` and `correct?` are headers.
        let fine = b"id\timage\tcorrect?\n1\ta.png\tyes\n";
        assert!(Delimited::open(Path::new("t.tsv"), fine.to_vec(), b'\t', Header::FirstRow).is_ok());
        // Said to be a header, the first row is one; named columns keep both rows.
        let mut said = Delimited::open(Path::new("t.tsv"), text.to_vec(), b'\t', Header::FirstRowSaid).unwrap();
        assert_eq!(said.next_batch(10).unwrap().unwrap().len(), 1);
        let names = ["image".to_string(), "question".into(), "answer".into()];
        let mut named = Delimited::open(Path::new("t.tsv"), text.to_vec(), b'\t', Header::Named(&names)).unwrap();
        let rows = named.next_batch(10).unwrap().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].value.get("image").and_then(Raw::scalar_text).as_deref(), Some("0001.jpg"));
    }

    #[test]
    fn an_unclosed_quote_is_located_with_its_column() {
        let e = read_delimited(Path::new("t.csv"), b"id,q,a\n1,x,y\n2,\"open,n\n3,z,w\n", b',').unwrap_err();
        let e = e.to_string();
        assert!(e.contains("t.csv:3:3") && e.contains("field \"q\"") && e.contains("never closed"), "{e}");
        // Escaped and multi-line quotes that do close are fine.
        let ok = read_delimited(Path::new("t.csv"), b"id,q\n1,\"a \"\"b\"\"\nc\"\n2,5\" screen\n", b',').unwrap();
        assert_eq!(ok.len(), 2);
    }

    fn values(path: &str, bytes: &[u8]) -> Vec<Vec<String>> {
        read_delimited(Path::new(path), bytes, b'\t')
            .unwrap()
            .iter()
            .map(|r| match &r.value {
                Raw::Map(f) => f.iter().map(|(_, v)| v.to_text()).collect(),
                _ => Vec::new(),
            })
            .collect()
    }

    /// Rows parsed a batch at a time are the rows of the file parsed whole;
    /// bad rows fail the file at its end, all of them listed.
    #[test]
    fn batches_are_the_file_read_whole() {
        let text = b"id,question\n1,\"a\nb\"\n2,c\n3,d\n4,e\n5,f\n";
        let whole = read_delimited(Path::new("t.csv"), text, b',').unwrap();
        let mut rows = Delimited::open(Path::new("t.csv"), text.to_vec(), b',', Header::FirstRow).unwrap();
        let mut batched = Vec::new();
        while let Some(b) = rows.next_batch(2).unwrap() {
            assert!(b.len() <= 2);
            batched.extend(b);
        }
        let key = |r: &RawRecord| (r.loc.to_string(), r.row, r.value.to_json());
        assert_eq!(batched.iter().map(key).collect::<Vec<_>>(), whole.iter().map(key).collect::<Vec<_>>());
        assert_eq!(whole[1].loc.to_string(), "t.csv:4");

        let bad = b"id,question\n1,a\n2\n3,c\n4,d,x\n";
        let mut rows = Delimited::open(Path::new("t.csv"), bad.to_vec(), b',', Header::FirstRow).unwrap();
        let first = rows.next_batch(1).unwrap().unwrap();
        assert_eq!(first.len(), 1);
        let e = loop {
            match rows.next_batch(1) {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("bad rows were not reported"),
                Err(e) => break e.to_string(),
            }
        };
        assert!(e.contains("t.csv:3") && e.contains("t.csv:5"), "{e}");
    }

    #[test]
    fn a_pandas_tsv_keeps_quoted_tabs_and_newlines() {
        // pandas' to_csv(sep="\t"): values with a tab, a newline or a quote are quoted.
        let v = values("p.tsv", b"id\tq\n1\t\"a\tb\"\n2\t\"line1\nline2\"\n3\t\"say \"\"hi\"\"\"\n4\tplain\n");
        assert_eq!(v, [["1", "a\tb"], ["2", "line1\nline2"], ["3", "say \"hi\""], ["4", "plain"]]);
        // A hand-written TSV whose quotes are text keeps them.
        let v = values("h.tsv", b"id\tq\n1\t\"Hello\" said Bob\n2\t5\" screen\n");
        assert_eq!(v, [["1", "\"Hello\" said Bob"], ["2", "5\" screen"]]);
    }
}
