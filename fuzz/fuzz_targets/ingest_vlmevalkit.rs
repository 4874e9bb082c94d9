//! VLMEvalKit benchmark TSV reader (base64 images inline).
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    common::no_bug(blindspot::ingest::vlmevalkit::read_vlmevalkit(Path::new("fuzz.tsv"), data));
});
