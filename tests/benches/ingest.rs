//! `just bench` / `cargo bench --bench ingest`: ingest and Parquet-writing
//! throughput on a synthetic JSONL benchmark (and the bundled demo).
//! Prints figures; asserts nothing (speed is measured here, never in tests).

use std::io::Write;
#[path = "support.rs"]
mod support;

use support::best_of;

use blindspot::ingest::ingest;
use blindspot::io::parquet::write_samples;
use blindspot::sample::{Embed, to_record_batch};
use blindspot::spec::IngestPlan;

const QUESTIONS: usize = 500_000;

fn synthetic_jsonl(path: &std::path::Path, n: usize) -> u64 {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let organs = ["lung", "heart", "liver", "kidney", "brain", "spleen", "bladder", "colon"];
    let skills = ["presence", "location", "negation", "differential", "geometry"];
    for i in 0..n {
        let o = |k: usize| organs[(i * 7 + k * 3) % organs.len()];
        writeln!(
            f,
            r#"{{"id": {i}, "question": "Which finding is seen in the {} on this chest radiograph, question {i}?", "options": ["{} opacity", "{} nodule", "{} effusion", "no finding"], "answer": "{}", "question_type": "{}", "source": "synthetic"}}"#,
            o(0),
            o(1),
            o(2),
            o(3),
            ["A", "B", "C", "D"][i % 4],
            skills[i % skills.len()]
        )
        .unwrap();
    }
    f.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("synthetic.jsonl");
    let bytes = synthetic_jsonl(&input, QUESTIONS);
    let plan = IngestPlan::for_canonical_input(&input).unwrap();
    let threads = rayon::current_num_threads();

    let (secs, ing) = best_of(3, || ingest(&plan).unwrap());
    assert_eq!(ing.samples.len(), QUESTIONS);
    println!(
        "ingest JSONL: {QUESTIONS} questions ({:.1} MB) in {:.3} s = {:.0} questions/s, {:.0} MB/s ({threads} threads)",
        bytes as f64 / 1e6,
        secs,
        QUESTIONS as f64 / secs,
        bytes as f64 / 1e6 / secs
    );

    let arrow_bytes: usize =
        ing.samples.chunks(1024).map(|c| to_record_batch(c, Embed::PathsOnly).unwrap().get_array_memory_size()).sum();
    let out = dir.path().join("out.parquet");
    let (secs, written) = best_of(3, || write_samples(&out, &ing.samples, Embed::PathsOnly).unwrap());
    println!(
        "write Parquet (zstd): {:.1} MB of Arrow data -> {:.1} MB file in {:.3} s = {:.0} MB/s of Arrow data",
        arrow_bytes as f64 / 1e6,
        written as f64 / 1e6,
        secs,
        arrow_bytes as f64 / 1e6 / secs
    );

    // The bundled demo: 451 questions, 203 JPEGs embedded.
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/vqa-rad.toml");
    let pipeline = blindspot::spec::Pipeline::load(&demo).unwrap();
    let (secs, ing) = best_of(5, || ingest(&pipeline.ingest).unwrap());
    println!("ingest demo (VQA-RAD, 2,248 records, 451 kept, images hashed): {:.3} s", secs);
    let out = dir.path().join("demo.parquet");
    let (secs, written) = best_of(5, || write_samples(&out, &ing.samples, Embed::Images).unwrap());
    println!(
        "write demo Parquet with embedded images: {:.1} MB in {:.3} s = {:.0} MB/s",
        written as f64 / 1e6,
        secs,
        written as f64 / 1e6 / secs
    );
}
