//! `.jsonl` reader: one record per non-blank line.
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    common::no_bug(blindspot::ingest::json::read_jsonl(Path::new("fuzz.jsonl"), data));
});
