//! Unit tests of the JSON reader: every shape read whole and in blocks of
//! every size, wrapper objects, the records setting, located errors.

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

/// `text`, a top-level array, written to `a.json` in `dir` and read whole; reading it
/// streamed in blocks of every size must give the same ([`streams_like_whole`]). The
/// file, and the whole read's records.
fn array_read_whole_and_streamed(dir: &Path, text: &str) -> (std::path::PathBuf, Vec<RawRecord>) {
    let path = dir.join("a.json");
    std::fs::write(&path, text).unwrap();
    let (whole, _) = split_json(&path, text.as_bytes().to_vec(), None).unwrap();
    let (w_records, w_problems) = whole.parse(0..whole.len());
    streams_like_whole(text, &w_records, &w_problems, || {
        let JsonInput::Stream(lines) = open_json(&path, None).unwrap() else { panic!("an array is streamed") };
        *lines
    });
    (path, w_records)
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

/// A document written on one line (as `json.dump` writes one): each record after the
/// first on a line is located by its character column, read whole or in blocks.
#[test]
fn records_sharing_a_line_are_located_by_column() {
    let text = "[{\"q\": \"caf\u{e9} \u{1F600}\"}, {\"id\": 2},\n{\"id\": 3}, {\"id\": 4}]";
    let dir = tempfile::tempdir().unwrap();
    let (path, w_records) = array_read_whole_and_streamed(dir.path(), text);
    let at: Vec<String> = w_records.iter().map(|r| r.loc.to_string()).collect();
    let file = crate::error::display_path(&path);
    // Characters, not bytes: "é" and the emoji are one column each.
    let want: Vec<String> = ["1", "1:19", "2", "2:12"].iter().map(|p| format!("{file}:{p}")).collect();
    assert_eq!(at, want);
    let keyed = read("{\"a\": {\"id\": 1}, \"b\": {\"id\": 2}}").unwrap();
    assert_eq!(keyed[1].loc.pos, crate::error::Pos::LineCol(1, 23));
}

/// A file read in blocks (of a few bytes here, so that blocks end
/// everywhere) gives the records, lines, rows and problems of the file read whole.
#[test]
fn json_arrays_read_in_blocks_are_the_file_read_whole() {
    let text = "\u{FEFF} [\n{\"id\": 1, \"q\": \"a ] }\"},\n  {\"id\": 2}\r\n, {\"id\": 3, \"q\": [1, {\"x\": \"}\"}]},\n{bad},\n\n{\"id\": 5}\n]\n";
    let dir = tempfile::tempdir().unwrap();
    let (path, w_records) = array_read_whole_and_streamed(dir.path(), text);
    assert_eq!(w_records.len(), 4);
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
    assert!(e.contains("big.json") && e.contains("2147 MB of JSON that is not an array") && e.contains("jq -c"), "{e}");
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
    // The second record starts on the first one's line: its column tells it apart.
    assert_eq!((test.len(), test[1].loc.pos.clone(), note), (2, crate::error::Pos::LineCol(2, 39), None));
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
