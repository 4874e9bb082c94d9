//! VLMEvalKit result files: TSV, CSV or XLSX (the first byte picks), with an
//! export manifest.
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;

use blindspot::predictions::{Manifest, vlmevalkit};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let name =
        ["GPT4o_Bench_no_image.tsv", "GPT4o_Bench_no_image.csv", "GPT4o_Bench_no_image.xlsx"][usize::from(pick % 3)];
    let path = common::file(name, rest);
    let mut manifest = Manifest::default();
    manifest.vlmevalkit.insert("Bench_no_image".into(), vec!["a".into(), "b".into()]);
    common::no_bug(vlmevalkit::read(&path, None, Some(&manifest)));
});
