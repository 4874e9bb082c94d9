//! The whole of ingest on a canonical JSONL file: reader, field mapping,
//! answer checks, options parsing, duplicate ids.
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = common::file("canonical.jsonl", data);
    let plan = blindspot::spec::plan::IngestPlan::for_canonical_input(&path).expect("plan");
    common::no_bug(blindspot::ingest::ingest(&plan));
});
