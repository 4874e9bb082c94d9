//! Generic prediction files as JSONL, JSON, CSV or TSV (the first byte picks).
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let name = ["preds.jsonl", "preds.json", "preds.csv", "preds.tsv"][usize::from(pick % 4)];
    let path = common::file(name, rest);
    common::no_bug(blindspot::predictions::generic::read(&path, None));
    common::no_bug(blindspot::predictions::generic::read(&path, Some("m")));
});
