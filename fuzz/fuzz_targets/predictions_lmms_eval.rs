//! lmms-eval `--log_samples` files, with and without an export manifest.
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;

use blindspot::predictions::{Manifest, lmms_eval};

fuzz_target!(|data: &[u8]| {
    let path = common::file("m_samples_vqa_rad.jsonl", data);
    let mut manifest = Manifest::default();
    manifest.lmms_eval.insert("vqa_rad".into(), vec!["a".into(), "b".into()]);
    common::no_bug(lmms_eval::read(&path, None, None));
    common::no_bug(lmms_eval::read(&path, Some("m"), Some(&manifest)));
});
