//! The cases whose file is written at test time: too big to commit (deep
//! nesting, long lines) or binary (Parquet, images, devices).

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, ListArray, RecordBatch, StringArray};
use arrow::datatypes::Int32Type;

use crate::{Case, Generated};

pub(crate) const GENERATED: &[Generated] = &[
    Generated {
        case: Case {
            command: "ingest",
            file: "deep-nesting.json",
            expect: &["deep-nesting.json:1:", "recursion limit", "nest deeper than 128"],
        },
        make: |p| {
            let n = 100_000;
            let text = format!(r#"[{{"id": "1", "question": {}{}, "answer": "yes"}}]"#, "[".repeat(n), "]".repeat(n));
            std::fs::write(p, text).unwrap();
        },
    },
    Generated {
        case: Case {
            command: "ingest",
            file: "deep-nesting-unclosed.jsonl",
            expect: &["deep-nesting-unclosed.jsonl:2:", "invalid JSON"],
        },
        make: |p| std::fs::write(p, format!("{{\"id\": \"1\"}}\n{}\n", "[".repeat(100_000))).unwrap(),
    },
    Generated {
        case: Case { command: "build", file: "deep-nesting.toml", expect: &["deep-nesting.toml:3:", "invalid TOML"] },
        make: |p| std::fs::write(p, format!("[dataset]\nname = \"x\"\nx = {}\n", "[".repeat(100_000))).unwrap(),
    },
    Generated {
        case: Case {
            command: "ingest",
            file: "wrong-schema.parquet",
            expect: &[
                "wrong-schema.parquet: rows 1, 2 (2 rows):",
                "field \"question\"",
                "is a list",
                "field \"answer\"",
            ],
        },
        make: |p| {
            let id: ArrayRef = Arc::new(StringArray::from(vec!["1", "2"]));
            let question: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
                Some(vec![Some(1), Some(2)]),
                Some(vec![Some(3)]),
            ]));
            let score: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
            let batch = RecordBatch::try_from_iter([("id", id), ("question", question), ("score", score)]).unwrap();
            std::fs::write(p, parquet_bytes(&batch)).unwrap();
        },
    },
    Generated {
        case: Case {
            command: "ingest",
            file: "truncated.parquet",
            expect: &["truncated.parquet:", "not a readable Parquet file", "bytes"],
        },
        make: |p| {
            let bytes = parquet_bytes(&good_batch());
            std::fs::write(p, &bytes[..bytes.len() / 2]).unwrap();
        },
    },
    // A 60-byte PNG whose header declares 20000 x 10000 pixels (a decode bomb).
    Generated {
        case: Case {
            command: "ingest",
            file: "bomb",
            expect: &["bomb/metadata.jsonl:1:", "declares 20000x10000 pixels (200 megapixels)"],
        },
        make: |p| {
            std::fs::create_dir_all(p).unwrap();
            let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
            png.extend_from_slice(&20000u32.to_be_bytes());
            png.extend_from_slice(&10000u32.to_be_bytes());
            png.extend_from_slice(&[8, 2, 0, 0, 0, 0, 0, 0, 0]);
            png.extend_from_slice(b"\0\0\0\0IEND\xaeB`\x82");
            std::fs::write(p.join("big.png"), png).unwrap();
            std::fs::write(
                p.join("metadata.jsonl"),
                "{\"file_name\": \"big.png\", \"id\": \"1\", \"question\": \"Is it big?\", \"answer\": \"yes\"}\n",
            )
            .unwrap();
        },
    },
    // /dev/zero under a .json name: stopped at its first byte, not read forever.
    Generated {
        case: Case {
            command: "ingest",
            file: "zero.json",
            expect: &["zero.json:1:1", "byte 0x00 cannot appear in JSON"],
        },
        make: |p| std::os::unix::fs::symlink("/dev/zero", p).unwrap(),
    },
    // A VLMEvalKit TSV whose image cell is valid base64 of a PNG cut inside its
    // header: short enough to pass for a row index, but not a number.
    Generated {
        case: Case {
            command: "ingest",
            file: "truncated-image.tsv",
            expect: &["truncated-image.tsv:2:", "is a truncated image: its 20 bytes end inside the header"],
        },
        make: |p| {
            use base64::Engine;
            let png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x10";
            let cell = base64::engine::general_purpose::STANDARD.encode(png);
            std::fs::write(p, format!("index\tquestion\tA\tB\tanswer\timage\n1\tWhat is it?\tcat\tdog\tA\t{cell}\n"))
                .unwrap();
        },
    },
    // An ImageFolder whose metadata.jsonl is a FIFO: named, not waited on.
    Generated {
        case: Case {
            command: "ingest",
            file: "fifo-folder",
            expect: &["fifo-folder/metadata.jsonl", "the ImageFolder's metadata is not a regular file"],
        },
        make: |p| {
            std::fs::create_dir_all(p).unwrap();
            let made = std::process::Command::new("mkfifo").arg(p.join("metadata.jsonl")).status();
            assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
        },
    },
    // A Parquet image column of paths, absolute or with '..', and no [ingest] images.
    Generated {
        case: Case {
            command: "ingest",
            file: "image-path-outside.parquet",
            expect: &[
                "image-path-outside.parquet: row 1:",
                "field \"images\"",
                "image path \"/srv/scans/cat.png\" leads outside the benchmark (absolute)",
                "image-path-outside.parquet: row 2:",
                "image path \"../scans/dog.png\" leads outside the benchmark (with '..')",
                "write the paths relative to it",
            ],
        },
        make: |p| {
            let image: ArrayRef = Arc::new(StringArray::from(vec!["/srv/scans/cat.png", "../scans/dog.png"]));
            let good = good_batch();
            let mut columns: Vec<(String, ArrayRef)> =
                good.schema().fields().iter().map(|f| f.name().clone()).zip(good.columns().iter().cloned()).collect();
            columns.push(("image".into(), image));
            std::fs::write(p, parquet_bytes(&RecordBatch::try_from_iter(columns).unwrap())).unwrap();
        },
    },
    Generated {
        case: Case { command: "ingest", file: "no-rows.parquet", expect: &["no-rows.parquet:", "holds no rows"] },
        make: |p| std::fs::write(p, parquet_bytes(&good_batch().slice(0, 0))).unwrap(),
    },
];

/// A valid canonical table of two questions.
fn good_batch() -> RecordBatch {
    let id: ArrayRef = Arc::new(StringArray::from(vec!["1", "2"]));
    let question: ArrayRef = Arc::new(StringArray::from(vec!["Is there a lesion?", "Is the heart enlarged?"]));
    let answer: ArrayRef = Arc::new(StringArray::from(vec!["yes", "no"]));
    RecordBatch::try_from_iter([("id", id), ("question", question), ("answer", answer)]).unwrap()
}

fn parquet_bytes(batch: &RecordBatch) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    out
}
