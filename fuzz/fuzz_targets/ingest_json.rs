//! `.json` reader: arrays, objects of records, JSON lines in a `.json` file.
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    common::no_bug(blindspot::ingest::json::read_json(Path::new("fuzz.json"), data));
});
