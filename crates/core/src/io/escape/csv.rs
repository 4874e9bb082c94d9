//! CSV files meant to be opened in a spreadsheet (`report/removed.csv`,
//! `truth.csv`).
//!
//! Records are written by the `csv` crate (quoted where a cell holds a comma,
//! a quote or a line break). A text cell that starts with `=`, `+`, `-`, `@`,
//! a tab or a carriage return, which a spreadsheet reads as a formula, is
//! defused as OWASP advises: a `'` is put before it, so the cell shows as
//! text. Numbers blindspot computes are written as they are (a negative
//! number is not a formula); only text from the data goes through [`cell`].

/// The characters that make a spreadsheet read a cell as a formula.
const FORMULA_START: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A text cell a spreadsheet shows as text: `s`, or `'s` when `s` would be read
/// as a formula.
pub fn cell(s: &str) -> std::borrow::Cow<'_, str> {
    if s.starts_with(FORMULA_START) { format!("'{s}").into() } else { s.into() }
}

/// Whether a spreadsheet would read `s` as a formula.
pub fn is_formula(s: &str) -> bool {
    s.starts_with(FORMULA_START)
}

/// A CSV document from its rows (the first the header), each cell written as
/// given: text cells go through [`cell`] first.
pub fn document<R, C>(rows: impl IntoIterator<Item = R>) -> String
where
    R: IntoIterator<Item = C>,
    C: AsRef<[u8]>,
{
    let mut w = ::csv::WriterBuilder::new().flexible(true).from_writer(Vec::new());
    for row in rows {
        // Writing into a Vec cannot fail.
        w.write_record(row).expect("CSV into memory");
    }
    let bytes = w.into_inner().expect("CSV into memory");
    String::from_utf8(bytes).expect("CSV of UTF-8 cells is UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_defused() {
        for (s, want) in [
            ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
            ("+1", "'+1"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("q-01", "q-01"),
            ("", ""),
            ("plain", "plain"),
        ] {
            assert_eq!(cell(s), want);
            assert!(!is_formula(&cell(s)));
        }
    }

    #[test]
    fn cells_read_back_with_their_quotes_and_line_breaks() {
        let cells = ["id", "a,b", "say \"hi\"", "two\nlines", "'=x"];
        let text = document([cells]);
        let mut r = ::csv::ReaderBuilder::new().has_headers(false).from_reader(text.as_bytes());
        let back: Vec<String> = r.records().next().unwrap().unwrap().iter().map(str::to_string).collect();
        assert_eq!(back, cells);
        assert_eq!(document([["order", "id"], ["1", "q1"]]), "order,id\n1,q1\n");
    }
}
