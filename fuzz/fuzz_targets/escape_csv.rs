//! The CSV writer: a row of any cells, read back with the csv crate, gives
//! each cell back (defused with a leading `'` where a spreadsheet would read
//! a formula), and no cell read back is a formula.
#![no_main]
use libfuzzer_sys::fuzz_target;

use blindspot::io::escape::csv as escape;

fuzz_target!(|cells: Vec<String>| {
    if cells.is_empty() {
        return;
    }
    let defused: Vec<String> = cells.iter().map(|c| escape::cell(c).into_owned()).collect();
    let text = escape::document([defused.clone()]);
    let mut r = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    let back: Vec<String> = r.records().next().expect("one record").expect("valid CSV").iter().map(str::to_string).collect();
    // A lone empty cell is an empty line, which a CSV reader skips.
    if cells.len() == 1 && cells[0].is_empty() {
        return;
    }
    assert_eq!(back, defused);
    for (c, d) in cells.iter().zip(&back) {
        assert!(!escape::is_formula(d), "{d:?}");
        assert_eq!(d.strip_prefix('\'').filter(|_| escape::is_formula(c)).unwrap_or(d), c);
    }
});
