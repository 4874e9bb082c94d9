//! The cases whose file is committed in `tests/fixtures/bad/`: the command
//! run on it and what its error must say.

use crate::Case;

pub(crate) const CASES: &[Case] = &[
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
    Case {
        command: "metrics",
        file: "preds-no-id.csv",
        expect: &["preds-no-id.csv: lines 2, 3 (2 lines):", "field \"id\"", "no \"id\""],
    },
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
