//! CSV and TSV reader (the first byte picks the delimiter).
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let (name, delimiter) = if pick & 1 == 0 { ("fuzz.csv", b',') } else { ("fuzz.tsv", b'\t') };
    common::no_bug(blindspot::ingest::csv::read_delimited(Path::new(name), rest, delimiter));
});
