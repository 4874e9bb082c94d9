//! Options and gold answers as benchmarks write them: inline in the question,
//! with their letters, keyed by letter, under another name, absent or past
//! 26; invalid rows rejected with their reasons.

use blindspot::sample::AnswerFormat;

use crate::common::{blindspot, root};
use crate::{ingest_cli, ingest_fails, ingest_file, jsonl_file};
#[test]
fn skip_rejects_invalid_rows_with_reasons_and_counts_them() {
    let work = tempfile::tempdir().unwrap();
    let out = blindspot()
        .current_dir(root().join("tests/fixtures/good"))
        .args(["build", "skip-invalid.toml", "--out-dir"])
        .arg(work.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("1 samples (2 records read, 0 filtered out, 1 rejected)"), "{stdout}");
    let rejected = std::fs::read_to_string(work.path().join("skip-invalid/1.0.0/report/rejected.jsonl")).unwrap();
    let row: serde_json::Value = serde_json::from_str(rejected.lines().next().unwrap()).unwrap();
    assert_eq!(row["id"], "q2");
    assert!(row["location"].as_str().unwrap().ends_with("answer-letter-outside.jsonl:2"));
    assert!(row["reasons"][0].as_str().unwrap().contains("4 options (A-D)"));
    assert_eq!(row["record"]["answer"], "E", "the raw record is kept");
}

/// `options-in-question` reads inline option lists, and says so when a row has none.
#[test]
fn inline_options_are_split_and_a_row_without_any_is_an_error() {
    let rows = [
        r#"{"id": "1", "question": "Question: What is shown? Options: A: a cat, B: a dog, C: a cow", "answer": "B"}"#,
        r#"{"id": "2", "question": "What is shown? (A) a cat (B) a dog", "answer": "A"}"#,
    ];
    let (dir, data) = jsonl_file(&rows);
    let toml = dir.path().join("p.toml");
    std::fs::write(
        &toml,
        "[dataset]\nname = \"inline\"\nversion = \"0.1.0\"\nlicense = \"CC0-1.0\"\n\n[ingest]\npath = \"q.jsonl\"\n\
         options-in-question = true\n\n[ingest.fields]\nanswer-kind = \"letter\"\n",
    )
    .unwrap();
    let ing = ingest_file(&toml);
    assert_eq!(ing.samples[0].question, "What is shown?");
    assert_eq!(ing.samples[0].options, ["a cat", "a dog", "a cow"]);
    assert_eq!(ing.samples[0].answer, "a dog");
    assert_eq!(ing.samples[1].options, ["a cat", "a dog"]);
    std::fs::write(&data, r#"{"id": "3", "question": "What is shown?", "answer": "A"}"#).unwrap();
    ingest_fails(&toml, &["q.jsonl:1:", "options-in-question is set but no options were found in the question"]);
}

/// A gold written as a letter and its option's text ("B. dog", "(C) cow") and options
/// stored as one text of lettered options ("A. cat\nB. dog", "(A) cat (B) dog") read
/// as the options they name; a letter and a text that disagree are an error.
#[test]
fn golds_and_options_written_with_their_letters() {
    let rows = [
        r#"{"id": "1", "question": "Q?", "options": ["cat", "dog", "cow"], "answer": "B. dog"}"#,
        r#"{"id": "2", "question": "Q?", "options": ["cat", "dog", "cow"], "answer": "(C) cow"}"#,
        r#"{"id": "3", "question": "Q?", "options": "A. cat\nB. dog\nC. cow", "answer": "B"}"#,
        r#"{"id": "4", "question": "Q?", "options": "(A) cat (B) dog", "answer": "a: cat"}"#,
    ];
    let (_dir, data) = jsonl_file(&rows);
    let ing = ingest_file(&data);
    let got: Vec<(usize, &str, Option<i32>)> =
        ing.samples.iter().map(|s| (s.options.len(), s.answer.as_str(), s.answer_index)).collect();
    assert_eq!(got, [(3, "dog", Some(1)), (3, "cow", Some(2)), (3, "dog", Some(1)), (2, "cat", Some(0))]);
    for (row, expect) in [
        (
            r#"{"id": "1", "question": "Q?", "options": ["cat", "dog", "cow"], "answer": "B. cow"}"#,
            "the answer \"B. cow\" gives letter B but the text of option C",
        ),
        (
            r#"{"id": "1", "question": "Q?", "options": "Pick A. or B.", "answer": "A"}"#,
            "source field \"options\" is a string that is not a list",
        ),
    ] {
        std::fs::write(&data, row).unwrap();
        ingest_fails(&data, &["q.jsonl:1: field", expect]);
    }
}

/// Options under a name ingest does not know are not guessed: the questions stay as
/// mapped, and a counted warning names the list field that holds the gold.
#[test]
fn a_list_holding_the_gold_under_another_name_is_pointed_out() {
    let rows = [
        r#"{"id": "1", "question": "What is shown?", "candidates": ["a cat", "a dog"], "answer": "a dog"}"#,
        r#"{"id": "2", "question": "Which colour?", "candidates": ["red", "blue"], "answer": "red"}"#,
        r#"{"id": "3", "question": "Any tags?", "tags": ["x", "y"], "answer": "no"}"#,
    ];
    let (_dir, data) = jsonl_file(&rows);
    let (samples, stderr) = ingest_cli(&data);
    assert!(samples.iter().all(|s| s.options.is_empty()));
    assert!(
        stderr.contains("warning: ingest: 2 rows: no options field is mapped, but the list field \"candidates\"")
            && stderr.contains("options = \"candidates\" (first: "),
        "{stderr}"
    );
    assert!(!stderr.contains("\"tags\""), "{stderr}");
}

/// Options given as an object keyed by letter keep their letters, whatever the key
/// order; a skipped or repeated letter, or keys that are not letters, is an error,
/// as an absent option before a present one is.
#[test]
fn options_keyed_by_letter_keep_their_letters() {
    let rows = [
        r#"{"id": "1", "question": "Which is a pet?", "choices": {"B": "a dog", "A": "a rock", "C": null}, "answer": "B"}"#,
        r#"{"id": "2", "question": "Which is red?", "choices": {"a": "blood", "b": "grass"}, "answer": "a"}"#,
    ];
    let (_dir, data) = jsonl_file(&rows);
    let ing = ingest_file(&data);
    let got: Vec<(&[String], &str, Option<i32>)> =
        ing.samples.iter().map(|s| (&s.options[..], s.answer.as_str(), s.answer_index)).collect();
    assert_eq!(got[0], (&["a rock".to_string(), "a dog".to_string()][..], "a dog", Some(1)));
    assert_eq!(got[1], (&["blood".to_string(), "grass".to_string()][..], "blood", Some(0)));
    assert_eq!(ing.stats.notes.len(), 1, "the dropped trailing C is counted: {:?}", ing.stats.notes);
    for (choices, expect) in [
        (r#"{"A": "x", "C": "y"}"#, r#"keys are not the option letters A-B ("A", "C")"#),
        (r#"{"1": "x", "2": "y"}"#, r#"keys are not the option letters A-B ("1", "2")"#),
        (r#"{"A": "x", "a": "y"}"#, r#"keys name option A twice ("a")"#),
        (r#"{"A": "x", "B": "", "C": "y"}"#, r#"option B (source key "B" of "choices") is absent"#),
    ] {
        std::fs::write(&data, format!(r#"{{"id": "1", "question": "Q?", "choices": {choices}, "answer": "A"}}"#))
            .unwrap();
        ingest_fails(&data, &["q.jsonl:1: field \"options\"", expect]);
    }
}

/// Options as labelled objects, in the two layouts the Hub and ARC-style sets use: a
/// list of `{label, text}` objects and one object of parallel lists. The texts are read
/// in order, each under its own letter; labels that do not run A, B, ... (or 1, 2, ...)
/// in list order are an error, since reading in order would move an option to another
/// letter.
#[test]
fn options_as_labelled_objects_keep_their_letters() {
    let rows = [
        r#"{"id": "1", "question": "Which is a pet?", "choices": [{"label": "A", "text": "a rock"}, {"label": "B", "text": "a dog"}], "answer": "B"}"#,
        r#"{"id": "2", "question": "Which is red?", "choices": {"text": ["blood", "grass", "sky"], "label": ["1", "2", "3"]}, "answer": "A"}"#,
        r#"{"id": "3", "question": "Which is wet?", "choices": [{"text": "sand"}, {"text": "water"}], "answer": "B"}"#,
    ];
    let (_dir, data) = jsonl_file(&rows);
    let ing = ingest_file(&data);
    let got: Vec<(&[String], Option<i32>)> = ing.samples.iter().map(|s| (&s.options[..], s.answer_index)).collect();
    let texts = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(got[0], (&texts(&["a rock", "a dog"])[..], Some(1)));
    assert_eq!(got[1], (&texts(&["blood", "grass", "sky"])[..], Some(0)));
    assert_eq!(got[2], (&texts(&["sand", "water"])[..], Some(1)));
    for (choices, expect) in [
        (r#"[{"label": "B", "text": "x"}, {"label": "A", "text": "y"}]"#, r#"are labelled "B", "A", not A, B, C"#),
        (r#"{"text": ["x", "y"], "label": ["A", "C"]}"#, r#"are labelled "A", "C", not A, B, C"#),
        (r#"[{"label": "A", "text": "x"}, {"text": "y"}]"#, "label some options and not others"),
        (r#"{"text": ["x", "y"], "label": ["A"]}"#, "a label list that is not one label per option"),
    ] {
        std::fs::write(&data, format!(r#"{{"id": "1", "question": "Q?", "choices": {choices}, "answer": "A"}}"#))
            .unwrap();
        ingest_fails(&data, &["q.jsonl:1: field \"options\"", expect]);
    }
}

#[test]
fn options_absent_inline_are_dropped_past_26_refused_and_drawn_ones_declared() {
    // `missing` applies to options written in the question as to any other.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("q.jsonl"),
        [
            r#"{"id": "1", "question": "Is it a cat? A. yes B. no C. N/A D. N/A", "answer": "A"}"#,
            r#"{"id": "2", "question": "Is it a dog? A. yes B. no C. nan D. nan", "answer": "B"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let pipeline = dir.path().join("p.toml");
    std::fs::write(
        &pipeline,
        "[dataset]\nname = \"p\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n[ingest]\npath = \"q.jsonl\"\n\
         options-in-question = true\nmissing = [\"N/A\"]\n",
    )
    .unwrap();
    let (samples, stderr) = ingest_cli(&pipeline);
    assert!(samples.iter().all(|s| s.options == ["yes", "no"]), "{:?}", samples[0].options);
    assert!(stderr.contains("warning: ingest: 2 rows: absent option cells"), "{stderr}");
    // More options than letters.
    let many: Vec<String> = (0..27).map(|i| format!("\"o{i}\"")).collect();
    let (_d, data) = jsonl_file(&[&format!(
        r#"{{"id": "1", "question": "Which?", "options": [{}], "answer": "o3"}}"#,
        many.join(", ")
    )]);
    ingest_fails(&data, &["q.jsonl:1: field \"options\": the question has 27 options, more than the 26 letters A-Z"]);
    // Options drawn in the image: only the letter is in the file.
    std::fs::write(
        dir.path().join("drawn.jsonl"),
        r#"{"id": "1", "question": "Which shape is red? Choose A-D.", "answer": "C"}"#,
    )
    .unwrap();
    let drawn = dir.path().join("drawn.toml");
    std::fs::write(
        &drawn,
        "[dataset]\nname = \"p\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n[ingest]\npath = \"drawn.jsonl\"\n\
         [ingest.fields]\noptions = { letters = 4 }\n",
    )
    .unwrap();
    let (samples, _) = ingest_cli(&drawn);
    assert_eq!((samples[0].options.join(""), samples[0].answer_index), ("ABCD".to_string(), Some(2)));
    assert_eq!(samples[0].answer_format, AnswerFormat::MultipleChoice);
    let prompt = blindspot::variants::prompt::render_prompt(&samples[0]);
    assert!(prompt.contains("Options A-D are shown in the image.") && !prompt.contains("A. A"), "{prompt}");
}
