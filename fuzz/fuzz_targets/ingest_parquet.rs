//! Parquet reader (takes a path: the input is written to a scratch file).
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = common::file("fuzz.parquet", data);
    common::no_bug(blindspot::ingest::parquet::read_parquet(&path));
});
