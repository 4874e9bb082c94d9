//! The malformed-input corpus: every case exits 1 with a message naming the
//! file, the line or row, and the field where there is one; writes nothing;
//! never panics.

mod common;

use common::{blindspot, files_below, root};

struct Case {
    /// `ingest` for a data file, `build` for a pipeline file.
    command: &'static str,
    file: &'static str,
    /// Substrings the error output must contain (location first).
    expect: &'static [&'static str],
}

const CASES: &[Case] = &[
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
];

#[test]
fn every_bad_input_exits_1_with_a_located_message_and_writes_nothing() {
    assert!(CASES.len() >= 15);
    let bad = root().join("tests/fixtures/bad");
    for case in CASES {
        let out = tempfile::tempdir().unwrap();
        let mut cmd = blindspot();
        cmd.current_dir(&bad);
        match case.command {
            "ingest" => cmd.args(["ingest", case.file, "-o"]).arg(out.path().join("out.parquet")),
            _ => cmd.args(["build", case.file, "--out-dir"]).arg(out.path().join("releases")),
        };
        let output = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{}: exit {:?}\n{stderr}", case.file, output.status.code());
        for want in case.expect {
            assert!(stderr.contains(want), "{}: expected {want:?} in:\n{stderr}", case.file);
        }
        assert!(!stderr.contains("panicked") && !stderr.contains("internal error"), "{}: {stderr}", case.file);
        let written: Vec<String> =
            files_below(out.path()).into_iter().filter(|f| !f.starts_with("releases/") || !f.ends_with('/')).collect();
        assert!(written.is_empty(), "{}: wrote {written:?}", case.file);
    }
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
