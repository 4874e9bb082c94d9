//! Pipeline files (`pipelines/*.toml`): TOML parsing, the schema check with
//! spans, and validation into a plan. `${NAME}` expands to a fixed value.
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;

use blindspot::spec::plan::Pipeline;

fuzz_target!(|data: &[u8]| {
    let path = common::file("pipeline.toml", data);
    common::no_bug(Pipeline::load_with(&path, &|name| (name == "DATA").then(|| "data".to_string())));
});
