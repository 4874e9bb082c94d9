//! The malformed-input corpus: every case exits 1 with a message naming the
//! file, the line or row, and the field where there is one; writes nothing;
//! never panics. Most cases are small files in `tests/fixtures/bad/`; the
//! large or binary ones (deep nesting, Parquet) are generated at test time,
//! and the 2 GB single-line JSON streams through a FIFO in its own test.

mod common;

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, ListArray, RecordBatch, StringArray};
use arrow::datatypes::Int32Type;
use common::{blindspot, files_below, root};

struct Case {
    /// `ingest` for a data file, `build` for a pipeline file, `metrics` for a
    /// prediction file (scored against `tests/fixtures/predictions/questions.jsonl`).
    command: &'static str,
    file: &'static str,
    /// Substrings the error output must contain (location first).
    expect: &'static [&'static str],
}

/// A case whose file is written at test time (too big, or binary).
struct Generated {
    case: Case,
    make: fn(&Path),
}

const CASES: &[Case] = &[
    Case {
        command: "ingest",
        file: "lone-surrogate.jsonl",
        expect: &["lone-surrogate.jsonl:1:", "a lone UTF-16 surrogate escape"],
    },
    // Integrity: nothing outside its folder, no unchecked field, no abort.
    Case {
        command: "build",
        file: "release-name-dotdot.toml",
        expect: &["release-name-dotdot.toml:2:", "\"..\" is not a valid release name"],
    },
    Case {
        command: "build",
        file: "dataset-fields.toml",
        expect: &[
            "\"01.0.0\" is not a MAJOR.MINOR.PATCH version",
            "is not an SPDX licence expression",
            "\"javascript:alert(1)\" is not an http(s) URL",
            "\"2026-13-45\" is not a YYYY-MM-DD date",
        ],
    },
    Case {
        command: "build",
        file: "leakage-self.toml",
        expect: &["leakage-self.toml:", "read again by a pipeline it reads"],
    },
    Case {
        command: "build",
        file: "huge-trees.toml",
        expect: &[
            "huge-trees.toml:10:",
            "must be at most 10000",
            "huge-trees.toml:11:",
            "must be at most 100; found 1000",
        ],
    },
    Case {
        command: "ingest",
        file: "imagefolder-escape",
        expect: &[
            "imagefolder-escape/metadata.jsonl:1:",
            "image path \"../imagefolder-fake/scan.png\" leads outside the image folder",
            "imagefolder-escape/metadata.jsonl:2:",
        ],
    },
    // Silent changes to a question, each now a located error.
    Case {
        command: "ingest",
        file: "option-absent-in-middle.jsonl",
        expect: &[
            "option-absent-in-middle.jsonl:2:",
            "field \"options\"",
            "option B (source element 2 of \"options\") is absent but a later option is present",
        ],
    },
    Case {
        command: "ingest",
        file: "option-absent-in-middle.tsv",
        expect: &[
            "option-absent-in-middle.tsv:3:",
            "field \"options\"",
            "option B (source field \"B\") is absent",
            "re-letter",
        ],
    },
    Case {
        command: "ingest",
        file: "answer-contradicts-index.jsonl",
        expect: &[
            "answer-contradicts-index.jsonl:2:",
            "field \"answer_index\"",
            "answer \"b\" is option B but answer_index 2 is option C (\"c\")",
        ],
    },
    Case {
        command: "ingest",
        file: "index-without-options.jsonl",
        expect: &["index-without-options.jsonl:1:", "given as an option index (0) but the question has no options"],
    },
    Case {
        command: "ingest",
        file: "duplicate-key.jsonl",
        expect: &["duplicate-key.jsonl:2:", "the field \"id\" appears twice in one object"],
    },
    Case {
        command: "ingest",
        file: "id-too-large.jsonl",
        expect: &["id-too-large.jsonl:1:", "field \"id\"", "too large to read exactly", "as strings"],
    },
    Case {
        command: "ingest",
        file: "id-control-char.jsonl",
        expect: &["id-control-char.jsonl:1:", "field \"id\"", "control character U+000A"],
    },
    Case {
        command: "ingest",
        file: "id-nfc-twins.jsonl",
        expect: &["id-nfc-twins.jsonl:2:", "duplicate id", "another Unicode normalization"],
    },
    Case {
        command: "ingest",
        file: "repeated-gold-text.jsonl",
        expect: &[
            "repeated-gold-text.jsonl:1:",
            "field \"options\"",
            "the answer \"red\" is the text of more than one option",
            "by letter or index",
        ],
    },
    Case { command: "ingest", file: "truncated.json", expect: &["truncated.json:3:", "truncated file"] },
    Case {
        command: "ingest",
        file: "wrong-type.jsonl",
        expect: &["wrong-type.jsonl:2:", "field \"question\"", "is an object"],
    },
    Case {
        command: "ingest",
        file: "duplicate-ids.jsonl",
        expect: &[
            "duplicate-ids.jsonl:3:",
            "field \"id\"",
            "duplicate id \"1\"",
            "first seen at",
            "duplicate-ids.jsonl:1",
        ],
    },
    Case {
        command: "ingest",
        file: "answer-letter-outside.jsonl",
        expect: &[
            "answer-letter-outside.jsonl:2:",
            "field \"answer\"",
            "the answer is \"E\" but the question has 4 options (A-D)",
        ],
    },
    Case {
        command: "ingest",
        file: "answer-not-an-option.jsonl",
        expect: &["answer-not-an-option.jsonl:2:", "field \"answer\"", "not among the options"],
    },
    Case { command: "ingest", file: "non-utf8.jsonl", expect: &["non-utf8.jsonl:2:", "UTF-8"] },
    Case { command: "ingest", file: "empty.jsonl", expect: &["empty.jsonl:", "the file is empty"] },
    Case { command: "ingest", file: "ragged.csv", expect: &["ragged.csv:3:", "4 fields but the header has 3"] },
    Case {
        command: "ingest",
        file: "empty-question.jsonl",
        expect: &["empty-question.jsonl:2:", "field \"question\"", "the question is empty"],
    },
    Case { command: "ingest", file: "missing-id.jsonl", expect: &["missing-id.jsonl:2:", "field \"id\"", "no id"] },
    Case { command: "ingest", file: "not-records.json", expect: &["not-records.json:1:", "expected a JSON array"] },
    Case { command: "ingest", file: "garbage.parquet", expect: &["garbage.parquet:", "not a readable Parquet file"] },
    Case {
        command: "ingest",
        file: "broken-base64.tsv",
        expect: &["broken-base64.tsv:3:", "field \"image\"", "broken base64"],
    },
    Case {
        command: "build",
        file: "missing-image.toml",
        expect: &["rows-missing-image.jsonl:2:", "field \"images\"", "\"missing.png\" not found"],
    },
    // Without [ingest] images a path is kept as given: absolute or '..' paths are refused.
    Case {
        command: "ingest",
        file: "image-path-outside.jsonl",
        expect: &[
            "image-path-outside.jsonl:2:",
            "field \"images\"",
            "image path \"/srv/scans/dog.png\" leads outside the benchmark (absolute), and no [ingest] images folder is set",
            "image-path-outside.jsonl:3:",
            "image path \"../scans/bird.png\" leads outside the benchmark (with '..')",
            "give [ingest] images = \"<folder>\"",
        ],
    },
    Case {
        command: "ingest",
        file: "image-path-outside.csv",
        expect: &[
            "image-path-outside.csv:2:",
            "image path \"/scans/cat.png\" leads outside the benchmark (absolute)",
            "image-path-outside.csv:3:",
            "image path \"scans/../../dog.png\" leads outside the benchmark (with '..')",
        ],
    },
    Case {
        command: "build",
        file: "fake-image.toml",
        expect: &["rows-fake-image.jsonl:2:", "field \"images\"", "\"fake.png\" is not an image"],
    },
    Case {
        command: "build",
        file: "unknown-key.toml",
        expect: &[
            "unknown-key.toml:7:1:",
            "unknown key \"pahts\"",
            "did you mean \"path\"",
            "unknown-key.toml:8:14:",
            "unknown value \"ignore\"",
            "unknown-key.toml:12:1:",
            "did you mean \"answer\"",
            "4 problems found",
        ],
    },
    Case {
        command: "build",
        file: "wrong-types.toml",
        expect: &[
            "wrong-types.toml:3:11:",
            "field \"dataset.version\"",
            "expected a string; found an integer",
            "wrong-types.toml:5:8:",
            "wrong-types.toml:9:19:",
        ],
    },
    Case { command: "build", file: "syntax.toml", expect: &["syntax.toml:3:", "invalid TOML"] },
    Case {
        command: "build",
        file: "missing-license.toml",
        expect: &["missing-license.toml:", "field \"dataset.license\"", "missing \"license\""],
    },
    Case {
        command: "build",
        file: "filter-typo.toml",
        expect: &["canonical.jsonl", "\"questoin_type\" is in no record", "did you mean \"question_type\""],
    },
    Case {
        command: "build",
        file: "yes-no.toml",
        expect: &["not-yes-no.jsonl:2:", "field \"answer\"", "\"maybe\" is not yes or no"],
    },
    Case {
        command: "build",
        file: "variants-unknown-kind.toml",
        expect: &[
            "variants-unknown-kind.toml:11:9:",
            "field \"variants.kinds\"",
            "unknown variant kind \"white_imag\"; valid kinds: no_image, white_image",
            "did you mean \"white_image\"?",
        ],
    },
    Case {
        command: "ingest",
        file: "unbalanced-quotes.csv",
        expect: &["unbalanced-quotes.csv:3:3:", "field \"question\"", "quote is never closed"],
    },
    Case { command: "ingest", file: "ragged.tsv", expect: &["ragged.tsv:3:", "4 fields but the header has 3"] },
    Case {
        command: "ingest",
        file: "non-utf8.csv",
        expect: &["non-utf8.csv:3:", "field \"question\"", "not valid UTF-8"],
    },
    Case {
        command: "ingest",
        file: "trailing-content.json",
        expect: &["trailing-content.json:2:", "unexpected content after the end"],
    },
    Case {
        command: "ingest",
        file: "option-column-gap.tsv",
        expect: &[
            "option-column-gap.tsv:2:",
            "field \"options\"",
            "column \"D\" holds an option but there is no column \"C\"",
        ],
    },
    Case {
        command: "ingest",
        file: "sheet-missing.toml",
        expect: &["two-sheets.xlsx:", "the workbook has no sheet \"Qs\"", "its sheets are: \"About\", \"Questions\""],
    },
    Case {
        command: "validate",
        file: "sheet-not-spreadsheet.toml",
        expect: &["sheet-not-spreadsheet.toml:8:", "field \"ingest.sheet\"", "ragged.csv is not a spreadsheet"],
    },
    // The first sheet is not the questions: the failure says which sheet was read.
    Case {
        command: "ingest",
        file: "two-sheets.xlsx",
        expect: &[
            "two-sheets.xlsx: row 2: field \"id\"",
            "note: ",
            "first sheet (\"About\"); its other sheets (\"Questions\")",
        ],
    },
    // A header naming two columns alike would keep one value of each record.
    Case {
        command: "ingest",
        file: "header-twice.csv",
        expect: &["header-twice.csv:1:", "the header names column 3 and column 4 both \"answer\""],
    },
    Case {
        command: "ingest",
        file: "header-twice.xlsx",
        expect: &["header-twice.xlsx: row 1:", "the header names column 2 and column 4 both \"question\""],
    },
    // Questions nested one object deeper: the records setting that reads them is named.
    Case {
        command: "ingest",
        file: "nested-records.json",
        expect: &["nested-records.json:3:", "field \"id\"", "set [ingest] records = \"data.questions\""],
    },
    Case {
        command: "ingest",
        file: "several-record-arrays.json",
        expect: &[
            "several-record-arrays.json:1:",
            "several arrays of records: \"train\", \"test\"",
            "records = \"train\"",
        ],
    },
    Case {
        command: "ingest",
        file: "records-missing.toml",
        expect: &["several-record-arrays.json:1:", "records = \"validation\"", "its members are: \"train\", \"test\""],
    },
    Case {
        command: "validate",
        file: "records-not-json.toml",
        expect: &["records-not-json.toml:8:", "field \"ingest.records\"", "ragged.csv is not a .json file"],
    },
    Case {
        command: "ingest",
        file: "object-bad-key.json",
        expect: &["object-bad-key.json:2:", "expected a quoted key"],
    },
    Case { command: "ingest", file: "binary.jsonl", expect: &["binary.jsonl:1:1:", "invalid JSON", "UTF-8"] },
    Case {
        command: "ingest",
        file: "base64-not-image.tsv",
        expect: &["base64-not-image.tsv:3:", "field \"images\"", "embedded image is not an image"],
    },
    Case {
        command: "ingest",
        file: "vlmevalkit-no-question.tsv",
        expect: &["vlmevalkit-no-question.tsv:2:", "field \"question\"", "no question"],
    },
    Case {
        command: "ingest",
        file: "imagefolder-fake",
        expect: &["imagefolder-fake/metadata.jsonl:1:", "field \"images\"", "\"scan.png\" is an empty file"],
    },
    Case {
        command: "metrics",
        file: "mixed-encodings.jsonl",
        expect: &["mixed-encodings.jsonl:2:", "field \"response\"", "byte 0xE9 is not valid UTF-8", "mixes encodings"],
    },
    Case {
        command: "metrics",
        file: "not-a-zip.xlsx",
        expect: &["not-a-zip.xlsx:", "not a readable spreadsheet", "Zip"],
    },
    // Fuzz find: calamine's cell-reference arithmetic overflowed (a panic
    // with overflow checks, the dev profile the tests run in).
    Case {
        command: "metrics",
        file: "fuzz-cell-overflow.xlsx",
        expect: &["fuzz-cell-overflow.xlsx:", "not a readable spreadsheet"],
    },
    Case {
        command: "metrics",
        file: "m_samples_missing_doc_id.jsonl",
        expect: &["m_samples_missing_doc_id.jsonl:2:", "field \"doc_id\"", "no blindspot id"],
    },
    Case { command: "metrics", file: "preds-no-id.csv", expect: &["preds-no-id.csv:2:", "field \"id\"", "no \"id\""] },
    Case {
        command: "metrics",
        file: "preds-unbalanced-quotes.csv",
        expect: &["preds-unbalanced-quotes.csv:3:6:", "field \"response\"", "quote is never closed"],
    },
    Case {
        command: "metrics",
        file: "index-map-truncated.json",
        expect: &["index-map-truncated.json:5:", "invalid JSON"],
    },
    // Found by fuzzing (ingest_parquet): the parquet crate panicked on a
    // negative column chunk range in the footer.
    Case {
        command: "ingest",
        file: "fuzz-negative-range.parquet",
        expect: &["fuzz-negative-range.parquet:", "not a readable Parquet file", "outside the file"],
    },
    // Found by fuzzing (ingest_parquet, second run): arrow-buffer asserted on
    // an out-of-bounds definition-level bitmap in a corrupt page.
    Case {
        command: "ingest",
        file: "fuzz-bitmap-out-of-bounds.parquet",
        expect: &["fuzz-bitmap-out-of-bounds.parquet:", "not a readable Parquet file", "corrupt"],
    },
    Case { command: "build", file: "non-utf8.toml", expect: &["non-utf8.toml:2:12:", "not valid UTF-8"] },
    // A gold that reads as two options is an error naming answer-kind, never a choice.
    Case {
        command: "ingest",
        file: "gold-letter-or-text.jsonl",
        expect: &[
            "gold-letter-or-text.jsonl:1: field \"answer\": the answer \"B\" names two options: as option text it is \
             option A (\"B\"), as a letter it is option B (\"C\")",
            "set [ingest.fields] answer-kind to the way the source writes its answers (\"text\" or \"letter\")",
        ],
    },
    Case {
        command: "ingest",
        file: "gold-index-or-text.jsonl",
        expect: &[
            "gold-index-or-text.jsonl:1: field \"answer\": the answer \"2\" names two options: as option text it is \
             option B (\"2\"), as a 0-based index it is option C (\"3\")",
        ],
    },
    Case {
        command: "ingest",
        file: "gold-case-twins.jsonl",
        expect: &[
            "gold-case-twins.jsonl:1: field \"answer\": the answer \"YES\" is the text of options A (\"Yes\") and B \
             (\"yes\") once case and Unicode normalization are ignored",
        ],
    },
    Case {
        command: "ingest",
        file: "options-nfc-twins.jsonl",
        expect: &[
            "options-nfc-twins.jsonl:1: field \"options\": options A (\"caf\u{e9}\") and B (\"cafe\u{301}\") are the \
             same text once case and Unicode normalization are ignored, and the answer is given as text",
        ],
    },
    Case {
        command: "ingest",
        file: "gold-two-readings.jsonl",
        expect: &[
            "gold-two-readings.jsonl:1: field \"answer-kind\": no one reading of the gold answers fits every row: \
             gold-two-readings.jsonl:1 reads only as option text; gold-two-readings.jsonl:2 reads only as a letter",
        ],
    },
    Case {
        command: "ingest",
        file: "id-invisible-twins.jsonl",
        expect: &[
            "id-invisible-twins.jsonl:2: field \"id\": duplicate id \"a\\u{200b}b\" (first seen at \
             id-invisible-twins.jsonl:1, written \"ab\": the same text in another Unicode normalization, or with \
             invisible characters",
            "id-invisible-twins.jsonl:4: field \"id\": duplicate id \"c d\" (first seen at id-invisible-twins.jsonl:3",
            "id-invisible-twins.jsonl:5: field \"id\": the id \"e::no_image\" contains \"::\"",
        ],
    },
];

const GENERATED: &[Generated] = &[
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
            expect: &["wrong-schema.parquet: row 1:", "field \"question\"", "is a list", "field \"answer\""],
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

/// Runs one case in `dir` and checks exit code, message and that nothing was written.
fn check(case: &Case, dir: &Path) -> Result<(), String> {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = blindspot();
    cmd.current_dir(dir);
    match case.command {
        "ingest" => cmd.args(["ingest", case.file, "-o"]).arg(out.path().join("out.parquet")),
        "metrics" => cmd
            .args(["metrics", "--samples"])
            .arg(root().join("tests/fixtures/predictions/questions.jsonl"))
            .args(["--predictions", case.file, "-o"])
            .arg(out.path().join("metrics")),
        _ => cmd.args(["build", case.file, "--out-dir"]).arg(out.path().join("releases")),
    };
    let output = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{}: exit {:?}\n{stderr}", case.file, output.status);
    for want in case.expect {
        if !stderr.contains(want) {
            return Err(format!("{}: expected {want:?} in:\n{stderr}", case.file));
        }
    }
    assert!(!stderr.contains("panicked") && !stderr.contains("internal error"), "{}: {stderr}", case.file);
    let written: Vec<String> =
        files_below(out.path()).into_iter().filter(|f| !f.starts_with("releases/") || !f.ends_with('/')).collect();
    assert!(written.is_empty(), "{}: wrote {written:?}", case.file);
    Ok(())
}

#[test]
fn every_bad_input_exits_1_with_a_located_message_and_writes_nothing() {
    assert!(CASES.len() + GENERATED.len() >= 40, "{} cases", CASES.len() + GENERATED.len());
    let bad = root().join("tests/fixtures/bad");
    let mut wrong: Vec<String> = CASES.iter().filter_map(|case| check(case, &bad).err()).collect();
    let work = tempfile::tempdir().unwrap();
    for g in GENERATED {
        (g.make)(&work.path().join(g.case.file));
        wrong.extend(check(&g.case, work.path()).err());
    }
    assert!(wrong.is_empty(), "{} cases with the wrong message:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn validate_reports_problems_of_every_file_at_once() {
    let bad = root().join("tests/fixtures/bad");
    let output =
        blindspot().current_dir(&bad).args(["validate", "unknown-key.toml", "wrong-types.toml"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr.contains("unknown-key.toml:7:1") && stderr.contains("wrong-types.toml:3:11"), "{stderr}");
    assert!(stderr.contains("7 problems found"), "{stderr}");
}

#[test]
fn unknown_subcommand_or_flag_is_a_usage_error_not_a_bug() {
    let output = blindspot().args(["build", "--no-such-flag"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
}

/// A 2 GB JSON file on one line, one record holding a runaway string, streamed
/// through a FIFO (nothing lands on disk): rejected at the per-record limit
/// with the file, line, column and byte offset, under a 3 GB address-space
/// limit, having read only about the limit's worth of the stream.
#[test]
fn a_2gb_single_line_json_is_rejected_in_bounded_memory() {
    const TOTAL: u64 = 2 << 30;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("huge.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: mkfifo is not available");
        return;
    }
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            let mut sent = 0u64;
            let head = br#"[{"id": "1", "question": ""#;
            if f.write_all(head).is_err() {
                return sent;
            }
            sent += head.len() as u64;
            let chunk = vec![b'a'; 1 << 20];
            while sent < TOTAL {
                if f.write_all(&chunk).is_err() {
                    return sent; // the reader stopped: a broken pipe
                }
                sent += chunk.len() as u64;
            }
            let _ = f.write_all(br#"", "answer": "yes"}]"#);
            sent
        })
    };
    let out = dir.path().join("out");
    let bin = assert_cmd::cargo::cargo_bin("blindspot");
    let time = Path::new("/usr/bin/time").exists();
    let script = if time {
        r#"ulimit -v 3000000; exec /usr/bin/time -f "peak RSS %M KB, %e s" "$0" "$@""#
    } else {
        r#"ulimit -v 3000000; exec "$0" "$@""#
    };
    let start = std::time::Instant::now();
    let output = std::process::Command::new("sh")
        .current_dir(dir.path())
        .args(["-c", script])
        .arg(&bin)
        .args(["ingest", "huge.json", "-o"])
        .arg(out.join("out.parquet"))
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    if !writer.is_finished() {
        // The binary never opened the FIFO: open it so the writer ends.
        drop(std::fs::File::open(&fifo));
    }
    let sent = writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("2 GB single-line JSON: {elapsed:.2?}, {} MiB streamed before the stop; {stderr}", sent >> 20);
    assert_eq!(output.status.code(), Some(1), "exit {:?}\n{stderr}", output.status);
    for want in ["huge.json:1:2:", "larger than the 64 MiB limit", "byte offset 1", "runaway value"] {
        assert!(stderr.contains(want), "expected {want:?} in:\n{stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(sent < TOTAL / 4, "read {sent} bytes of the stream: reading is not bounded");
    assert!(!out.exists(), "wrote {:?}", files_below(&out));
}

/// Outputs are written only where they belong: a device is never replaced, a
/// symbolic link is written through, and a folder blindspot did not write is
/// never emptied.
#[test]
fn outputs_replace_only_what_blindspot_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let input = root().join("tests/fixtures/good/shortcut.jsonl");
    // A character device.
    let o = blindspot().arg("ingest").arg(&input).args(["-o", "/dev/null"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("the output is a character device"), "{o:?}");
    {
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }
    // A symbolic link: the file it points at is written, the link stays.
    let target = dir.path().join("target.parquet");
    std::fs::write(&target, b"old").unwrap();
    let link = dir.path().join("link.parquet");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    blindspot().arg("ingest").arg(&input).arg("-o").arg(&link).assert().success();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::read(&target).unwrap().starts_with(b"PAR1"));
    // A folder holding someone's files is not emptied; one blindspot wrote is replaced.
    let out = dir.path().join("mine");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("notes.txt"), b"keep me").unwrap();
    let run = || blindspot().arg("diagnose").arg(&input).arg("--out").arg(&out).output().unwrap();
    let o = run();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("holds files blindspot did not write"), "{o:?}");
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"keep me");
    std::fs::remove_file(out.join("notes.txt")).unwrap();
    assert!(run().status.success(), "an empty folder is filled");
    assert!(run().status.success(), "a folder blindspot wrote is replaced");
    assert!(out.join("diagnose.json").is_file());
    // The working folder, empty: refused by name (".", never an empty path), nothing written.
    let here = dir.path().join("here");
    std::fs::create_dir(&here).unwrap();
    for out in [".", "./"] {
        let o = blindspot().current_dir(&here).arg("diagnose").arg(&input).args(["--out", out]).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(stderr.starts_with("error: .: the output folder is the working folder"), "{stderr}");
    }
    let o = blindspot().current_dir(&here).args(["ingest", ".", "-o", "../x.parquet"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.starts_with("error: .: "), "{stderr}");
    assert_eq!(std::fs::read_dir(&here).unwrap().count(), 0);
}

/// A file that is not there is named with what to do, not the raw OS error.
#[test]
fn a_missing_file_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&["build", "nowhere.toml"][..], &["validate", "nowhere.toml"]] {
        let o = blindspot().current_dir(dir.path()).args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains("nowhere.toml: no such file or folder (check the path"), "{stderr}");
        assert!(!stderr.contains("os error"), "{stderr}");
    }
}
