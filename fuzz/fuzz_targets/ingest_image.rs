//! Image files: a one-record benchmark whose image is the fuzz input, through
//! the whole of ingest (image resolution, header sniffing, hashing).
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let images = common::scratch().join("images");
    std::fs::create_dir_all(&images).expect("image folder");
    std::fs::write(images.join("x.png"), data).expect("write the image");
    let bench = common::file(
        "bench.jsonl",
        br#"{"id": "1", "question": "Is there a lesion?", "answer": "yes", "images": ["x.png"]}"#,
    );
    let mut plan = blindspot::spec::plan::IngestPlan::for_canonical_input(&bench).expect("plan");
    plan.images_dir = Some(images);
    common::no_bug(blindspot::ingest::ingest(&plan));
});
