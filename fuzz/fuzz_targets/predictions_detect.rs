//! `--predictions` without a source: detection from the extension and first
//! record, then whichever importer it picks (index maps included), and the
//! export manifest reader on the same bytes.
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;

use blindspot::predictions::{Manifest, PredictionFile, import_all};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let name = ["preds.json", "preds.jsonl", "preds.csv", "preds.tsv"][usize::from(pick % 4)];
    let path = common::file(name, rest);
    let file = PredictionFile { path, model: None, source: None };
    common::no_bug(import_all(&[file], None));
    let manifest = common::file("manifest.json", rest);
    common::no_bug(Manifest::load(&manifest));
});
