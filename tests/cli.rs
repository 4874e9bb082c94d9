//! The binary on the small committed fixtures and the bundled demo: builds,
//! byte-identical rebuilds, never overwriting a version, the one-step ingest
//! of every reader, rejected rows.

mod common;

use std::path::Path;

use blindspot::sample::AnswerFormat;
use common::{blindspot, files_below, root};

fn read_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_below(dir).into_iter().map(|f| (f.clone(), std::fs::read(dir.join(&f)).unwrap())).collect()
}

/// `rows` as the JSON-lines file `q.jsonl` in a fresh temporary folder.
fn jsonl_file(rows: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("q.jsonl");
    std::fs::write(&data, rows.join("\n")).unwrap();
    (dir, data)
}

/// `blindspot ingest INPUT -o OUT` run as a user runs it: the samples written, and
/// what it printed on stderr (its warnings).
fn ingest_cli(input: &Path) -> (Vec<blindspot::sample::Sample>, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let run = blindspot().arg("ingest").arg(input).arg("-o").arg(&out).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{stderr}");
    (blindspot::io::parquet::read_samples(&out).unwrap(), stderr)
}

/// `blindspot ingest INPUT` exits 1 with every one of `expect` on stderr, and writes nothing.
fn ingest_fails(input: &Path, expect: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let mut assert = blindspot().arg("ingest").arg(input).arg("-o").arg(&out).assert().code(1);
    for e in expect {
        assert = assert.stderr(predicates::str::contains(*e));
    }
    assert!(!out.exists());
}

fn ingest_file(path: &Path) -> blindspot::ingest::Ingested {
    let plan = if path.extension().and_then(|e| e.to_str()) == Some("toml") {
        blindspot::spec::Pipeline::load(path).unwrap().ingest
    } else {
        blindspot::spec::IngestPlan::for_canonical_input(path).unwrap()
    };
    blindspot::ingest::ingest(&plan).unwrap()
}

#[test]
fn every_pipeline_in_pipelines_validates() {
    let output = blindspot().current_dir(root()).arg("validate").output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let n = std::fs::read_dir(root().join("pipelines"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "toml"))
        .count();
    assert_eq!(stdout.lines().filter(|l| l.starts_with("ok: ")).count(), n, "{stdout}");
}

#[test]
fn demo_builds_end_to_end_and_rebuilds_byte_identical() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    // The first build computes every stage and fills the stage cache; the
    // second reads diagnose and prune from it and must write the same bytes.
    let cache = tempfile::tempdir().unwrap();
    for dir in [&a, &b] {
        let out = blindspot()
            .current_dir(root())
            .env("BLINDSPOT_CACHE_DIR", cache.path())
            .args(["build", "--out-dir"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(&format!("vqa-rad {}: 451 samples", common::demo_version())), "{stdout}");
    }
    let ta = read_tree(&a.path().join(common::demo_release()));
    let tb = read_tree(&b.path().join(common::demo_release()));
    let names: Vec<&str> = ta.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "README.md",
            "croissant.json",
            "data/test-00000-of-00001.parquet",
            "manifest.json",
            "report/blind_vs_chance.svg",
            "report/diagnose.json",
            "report/importances.svg",
            "report/index.html",
            "report/kept_ids.txt",
            "report/prune.json",
            "report/prune_curve.svg",
            "report/removed.csv",
            "report/s_histogram.svg",
            "report/scores.parquet",
            "variants/guess/test-00000-of-00001.parquet",
            "variants/mirage/test-00000-of-00001.parquet",
            "variants/no_image/test-00000-of-00001.parquet",
            "variants/phantom/test-00000-of-00001.parquet",
            "variants/phantom0/test-00000-of-00001.parquet",
            "variants/visual_substitution/test-00000-of-00001.parquet",
            "variants/white_image/test-00000-of-00001.parquet",
        ]
    );
    assert!(ta == tb, "two builds differ (the second from the stage cache)");
    // IBP and its random control, one cache entry each (IBP's first iteration is the diagnosis).
    assert_eq!(files_below(&cache.path().join("prune")).len(), 2, "{:?}", files_below(cache.path()));
    // No staging folder left behind; beside the release only the build lock.
    let beside: Vec<String> = files_below(&a.path().join("vqa-rad"));
    assert_eq!(beside.len(), names.len() + 1, "{beside:?}");
    assert!(beside.contains(&".build.lock".to_string()), "{beside:?}");
    // The card reports the diagnosis; the manifest lists every file.
    let card = String::from_utf8(ta[0].1.clone()).unwrap();
    assert!(card.contains("## Blind answerability (TsT-RF)"), "{card}");
    let manifest: serde_json::Value =
        serde_json::from_slice(&ta.iter().find(|(n, _)| n == "manifest.json").unwrap().1).unwrap();
    assert_eq!(manifest["files"].as_object().unwrap().len(), names.len() - 1);

    // Building again into the same folder is a no-op.
    let again = blindspot().current_dir(root()).args(["build", "--out-dir"]).arg(a.path()).output().unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).contains("[up to date]"));
    assert_eq!(read_tree(&a.path().join(common::demo_release())), ta);

    // VQA-RAD's blind accuracy is not above chance (its 95% CI reaches it), so IBP
    // stops before removing anything: the default config is every question, and
    // there is no `full` copy and no empty `removed` config.
    // The release re-ingests to the same samples, images embedded.
    let back = ingest_file(&a.path().join(format!("{}/data/test-00000-of-00001.parquet", common::demo_release())));
    assert_eq!(back.samples.len(), 451);
    assert!(
        back.samples.iter().all(|s| s.images.len() == 1 && s.images[0].bytes.as_ref().is_some_and(|b| b.len() > 1000))
    );
    assert_eq!(back.images.len(), 203);
}

#[test]
fn an_existing_version_is_never_overwritten_with_different_bytes() {
    let work = common::fixture_workspace();
    let build =
        || blindspot().current_dir(work.path()).args(["build", "canonical.toml", "--out-dir", "rel"]).output().unwrap();
    assert!(build().status.success());
    let before = read_tree(&work.path().join("rel/canonical/1.0.0"));
    // Change the data but not the version.
    let text = std::fs::read_to_string(work.path().join("canonical.jsonl")).unwrap().replace("sleeping", "eating");
    std::fs::write(work.path().join("canonical.jsonl"), text).unwrap();
    let out = build();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("already exists with different content") && stderr.contains("bump [dataset] version"),
        "{stderr}"
    );
    assert_eq!(read_tree(&work.path().join("rel/canonical/1.0.0")), before, "old release untouched");
}

#[test]
fn canonical_jsonl_needs_no_pipeline_and_sorts_ids_naturally() {
    let ing = ingest_file(&root().join("tests/fixtures/good/canonical.jsonl"));
    let ids: Vec<&str> = ing.samples.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, vec!["c1", "c2", "c3", "c10"]);
    let formats: Vec<AnswerFormat> = ing.samples.iter().map(|s| s.answer_format).collect();
    assert_eq!(
        formats,
        vec![AnswerFormat::MultipleChoice, AnswerFormat::YesNo, AnswerFormat::Open, AnswerFormat::Numeric]
    );
    assert_eq!(ing.samples[0].answer_index, Some(2));
    assert_eq!(ing.samples[1].answer, "yes");
    assert_eq!(ing.samples[0].meta.get("source").map(String::as_str), Some("fixture"), "unmapped fields kept in meta");
}

#[test]
fn canonical_with_image_folder_records_facts() {
    let ing = ingest_file(&root().join("tests/fixtures/good/canonical.toml"));
    let img = &ing.samples[0].images[0];
    assert_eq!((img.width, img.height), (Some(1), Some(1)));
    assert_eq!(img.path.as_deref(), Some("cat.png"));
    assert_eq!(img.sha256.as_ref().unwrap().len(), 64);
}

#[test]
fn csv_with_one_column_per_option_and_letter_answers() {
    let ing = ingest_file(&root().join("tests/fixtures/good/letters.toml"));
    let s = &ing.samples;
    assert_eq!(s[0].options, vec!["circle", "square", "triangle"]);
    assert_eq!((s[0].answer.as_str(), s[0].answer_index), ("triangle", Some(2)));
    assert_eq!(s[1].options, vec!["red", "green"]);
    assert_eq!((s[1].answer.as_str(), s[1].answer_index), ("green", Some(1)));
}

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

#[test]
fn hugging_face_folder_vlmevalkit_tsv_and_imagefolder_read() {
    let work = tempfile::tempdir().unwrap();
    // A Hugging Face folder made from our own canonical output.
    let src = ingest_file(&root().join("tests/fixtures/good/canonical.toml"));
    let hf = work.path().join("hf");
    std::fs::create_dir_all(hf.join("data")).unwrap();
    blindspot::io::parquet::write_samples(
        &hf.join("data/test-00000-of-00001.parquet"),
        &src.samples,
        blindspot::sample::Embed::Images,
    )
    .unwrap();
    let back = ingest_file(&hf);
    assert_eq!(back.samples.len(), 4);
    assert_eq!(back.samples[0].images[0].sha256, src.samples[0].images[0].sha256);

    // VLMEvalKit: row 2 reuses row 1's image by index.
    let png = std::fs::read(root().join("tests/fixtures/good/images/cat.png")).unwrap();
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
    let tsv = format!(
        "index\tquestion\thint\tA\tB\tC\tanswer\tcategory\timage\n1\tWhat animal?\tA pet.\tcat\tdog\t\tA\tanimals\t{b64}\n2\tHow many?\t\t1\t2\t3\tA\tcount\t1\n"
    );
    let path = work.path().join("bench.tsv");
    std::fs::write(&path, tsv).unwrap();
    let v = ingest_file(&path);
    assert_eq!(v.samples.len(), 2);
    assert_eq!(v.samples[0].options, vec!["cat", "dog"]);
    assert_eq!(v.samples[0].context.as_deref(), Some("A pet."));
    assert_eq!(v.samples[0].question_type.as_deref(), Some("animals"));
    assert_eq!(v.samples[1].options, vec!["1", "2", "3"]);
    assert_eq!(v.samples[1].images[0].bytes.as_deref(), Some(png.as_slice()), "image reused by index");

    // ImageFolder: images plus metadata.jsonl with file_name.
    let folder = work.path().join("imgs");
    std::fs::create_dir_all(folder.join("train")).unwrap();
    std::fs::write(folder.join("train/a.png"), &png).unwrap();
    std::fs::write(
        folder.join("metadata.jsonl"),
        "{\"file_name\": \"train/a.png\", \"id\": \"a\", \"question\": \"Is it a cat?\", \"answer\": \"yes\"}\n",
    )
    .unwrap();
    let f = ingest_file(&folder);
    assert_eq!(f.samples[0].images[0].path.as_deref(), Some("train/a.png"));
    assert_eq!(f.samples[0].images[0].width, Some(1));
}

#[test]
fn ingest_writes_the_output_atomically() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("sub/out.parquet");
    let o = blindspot()
        .args(["ingest"])
        .arg(root().join("tests/fixtures/good/canonical.jsonl"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(files_below(&work.path().join("sub")), vec!["out.parquet"]);
}

/// A pandas-written VLMEvalKit TSV: absent options as `nan` or empty cells at the
/// end are dropped with a counted warning; a repeated option text is kept when the
/// gold is a letter; no option is re-lettered.
#[test]
fn pandas_tsv_keeps_every_letter_and_counts_what_it_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let tsv = dir.path().join("bench.tsv");
    std::fs::write(
        &tsv,
        "index\tquestion\tA\tB\tC\tD\tanswer\tcategory\n\
         1\tWhich colour is the sky?\tred\tblue\tnan\tnan\tB\tcolour\n\
         2\tWhich is a fruit?\tcar\tpear\tdesk\tlamp\tB\tobject\n\
         3\tWhich label is right?\tsame\tsame\tother\t\tA\tlabel\n",
    )
    .unwrap();
    let (s, stderr) = ingest_cli(&tsv);
    assert!(stderr.contains("warning: ingest: 2 rows: absent option cells"), "{stderr}");
    assert!(stderr.contains("warning: ingest: 1 row: options repeat a text"), "{stderr}");
    assert_eq!(s[0].options, ["red", "blue"]);
    assert_eq!((s[0].answer.as_str(), s[0].answer_index), ("blue", Some(1)));
    assert_eq!(s[1].options.len(), 4);
    assert_eq!(s[2].options, ["same", "same", "other"]);
    assert_eq!(s[2].answer_index, Some(0));
}

/// pandas writes its row index as a first column without a name (`to_csv` with the
/// default `index=True`); spreadsheets leave empty columns without one. Such a column
/// is kept under pandas' own name for it, `Unnamed: <column>`, where it holds a value.
#[test]
fn unnamed_columns_keep_their_values_under_pandas_names() {
    let dir = tempfile::tempdir().unwrap();
    let tsv = dir.path().join("bench.tsv");
    std::fs::write(&tsv, "\tid\tquestion\tanswer\t\n0\tq1\tIs it red?\tyes\t\n1\tq2\tIs it blue?\tno\tchecked\n")
        .unwrap();
    let ing = ingest_file(&tsv);
    let meta: Vec<Vec<(String, String)>> =
        ing.samples.iter().map(|s| s.meta.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()).collect();
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    assert_eq!(meta, [vec![pair("Unnamed: 0", "0")], vec![pair("Unnamed: 0", "1"), pair("Unnamed: 4", "checked")]]);
    assert_eq!(ing.samples[1].answer, "no");
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

/// A question sheet kept in a spreadsheet ingests as it is: the first sheet, a
/// header row, numeric ids as written, list-literal options.
#[test]
fn a_spreadsheet_of_questions_ingests_without_conversion() {
    let ing = ingest_file(&root().join("tests/fixtures/good/benchmark.xlsx"));
    let ids: Vec<&str> = ing.samples.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["3", "10", "12345678901"]);
    assert_eq!(ing.samples[0].options, ["red", "blue", "green"]);
    assert_eq!((ing.samples[0].answer.as_str(), ing.samples[0].answer_index), ("blue", Some(1)));
    assert_eq!(ing.samples[0].context.as_deref(), Some("Look up."));
    assert_eq!(ing.samples[2].answer_format, AnswerFormat::YesNo);
    // Questions on another sheet than the first: `[ingest] sheet` names it.
    let ing = ingest_file(&root().join("tests/fixtures/good/two-sheets.toml"));
    let got: Vec<(&str, &[String], &str)> =
        ing.samples.iter().map(|s| (s.id.as_str(), &s.options[..], s.answer.as_str())).collect();
    let colours = |n: usize| ["blood", "grass", "sky"][..n].iter().map(|c| c.to_string()).collect::<Vec<_>>();
    assert_eq!(got, [("1", &colours(3)[..], "blood"), ("2", &colours(2)[..], "grass")]);
}

/// Writes `rows` of (id, question, options, answer) as an Arrow IPC stream, as
/// `datasets`' `save_to_disk` writes its shards.
fn write_arrow_shard(path: &Path, rows: &[(&str, &str, &[&str], &str)]) {
    use arrow::array::{ListBuilder, StringArray, StringBuilder};
    use std::sync::Arc;
    let mut options = ListBuilder::new(StringBuilder::new());
    for (_, _, opts, _) in rows {
        for o in *opts {
            options.values().append_value(o);
        }
        options.append(true);
    }
    let column = |values: Vec<&str>| Arc::new(StringArray::from_iter_values(values)) as arrow::array::ArrayRef;
    let batch = arrow::array::RecordBatch::try_from_iter([
        ("id", column(rows.iter().map(|r| r.0).collect())),
        ("question", column(rows.iter().map(|r| r.1).collect())),
        ("options", Arc::new(options.finish()) as arrow::array::ArrayRef),
        ("answer", column(rows.iter().map(|r| r.3).collect())),
    ])
    .unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut writer =
        arrow::ipc::writer::StreamWriter::try_new(std::fs::File::create(path).unwrap(), &batch.schema()).unwrap();
    writer.write(&batch).unwrap();
    writer.finish().unwrap();
}

/// A benchmark kept as `datasets` saves it (`save_to_disk`: Arrow shards and a
/// state.json, alone or one folder per split of a DatasetDict) ingests as it is.
#[test]
fn a_dataset_saved_to_disk_ingests_without_conversion() {
    let dir = tempfile::tempdir().unwrap();
    // A DatasetDict: dataset_dict.json and one folder per split.
    let dict = dir.path().join("dict");
    std::fs::create_dir_all(&dict).unwrap();
    std::fs::write(dict.join("dataset_dict.json"), r#"{"splits": ["train", "test"]}"#).unwrap();
    write_arrow_shard(&dict.join("train/data-00000-of-00001.arrow"), &[("t1", "Train?", &["a", "b"], "a")]);
    write_arrow_shard(
        &dict.join("test/data-00000-of-00001.arrow"),
        &[("2", "Which is red?", &["sky", "blood"], "blood"), ("1", "Is it wet?", &[], "yes")],
    );
    let ing = ingest_file(&dict);
    let got: Vec<(&str, &[String], &str)> =
        ing.samples.iter().map(|s| (s.id.as_str(), &s.options[..], s.answer.as_str())).collect();
    assert_eq!(got, [("1", &[][..], "yes"), ("2", &["sky".to_string(), "blood".to_string()][..], "blood")]);
    // A single Dataset: its shards as state.json lists them; its split must be the one asked for.
    let single = dir.path().join("single");
    write_arrow_shard(&single.join("data-00000-of-00002.arrow"), &[("a", "First?", &["x", "y"], "y")]);
    write_arrow_shard(&single.join("data-00001-of-00002.arrow"), &[("b", "Second?", &["x", "y"], "x")]);
    let state = r#"{"_data_files": [{"filename": "data-00000-of-00002.arrow"}, {"filename": "data-00001-of-00002.arrow"}], "_split": "test"}"#;
    std::fs::write(single.join("state.json"), state).unwrap();
    let ing = ingest_file(&single);
    let got: Vec<(&str, &str)> = ing.samples.iter().map(|s| (s.id.as_str(), s.answer.as_str())).collect();
    assert_eq!(got, [("a", "y"), ("b", "x")]);
    // One shard on its own is a table file, as a Parquet file is.
    let shard = ingest_file(&single.join("data-00001-of-00002.arrow"));
    assert_eq!((shard.samples.len(), shard.samples[0].id.as_str()), (1, "b"));
    std::fs::write(single.join("state.json"), state.replace("\"test\"", "\"validation\"")).unwrap();
    ingest_fails(&single, &["state.json: this saved dataset holds split \"validation\", not \"test\""]);
}

/// A CSV as a spreadsheet writes it where the comma is the decimal mark (semicolons,
/// a byte-order mark, CRLF) with one column per option and letter answers ingests
/// without a pipeline: option columns A, B, ... are found as in a VLMEvalKit TSV.
#[test]
fn a_semicolon_csv_with_option_columns_needs_no_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bench.csv");
    std::fs::write(
        &csv,
        "\u{FEFF}id;question;A;B;C;answer;note\r\n1;Which is red?;apple;sky;grass;A;\"a; b\"\r\n2;Which is blue?;apple;sky;;B;0,5\r\n",
    )
    .unwrap();
    let (s, stderr) = ingest_cli(&csv);
    assert!(stderr.contains("warning: ingest: 2 rows: read as semicolon-separated"), "{stderr}");
    assert!(stderr.contains("warning: ingest: 2 rows: options read from the columns A, B, ..."), "{stderr}");
    assert_eq!(s[0].options, ["apple", "sky", "grass"]);
    assert_eq!((s[0].answer.as_str(), s[0].answer_index), ("apple", Some(0)));
    assert_eq!(s[1].options, ["apple", "sky"]);
    assert_eq!((s[1].answer.as_str(), s[1].answer_index), ("sky", Some(1)));
    assert_eq!(s[0].meta.get("note").map(|v| v.to_string()).as_deref(), Some("a; b"));
    assert_eq!(s[1].meta.get("note").map(|v| v.to_string()).as_deref(), Some("0,5"));
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

/// A JSON file whose questions are one array inside a top-level object (SEED-Bench's
/// published layout) ingests as it is, and the release says what was left out.
#[test]
fn questions_wrapped_in_a_top_level_object_ingest_with_a_note() {
    let ing = ingest_file(&root().join("tests/fixtures/good/wrapped-questions.toml"));
    let got: Vec<(&str, &str, usize, Option<&str>)> = ing
        .samples
        .iter()
        .map(|s| (s.id.as_str(), s.answer.as_str(), s.options.len(), s.question_type.as_deref()))
        .collect();
    assert_eq!(
        got,
        [("101669", "two", 4, Some("5")), ("101670", "a dog", 4, Some("2")), ("101671", "white", 4, Some("3"))]
    );
    let [note] = &ing.stats.notes[..] else { panic!("one note expected: {:?}", ing.stats.notes) };
    assert_eq!(note.rows, 3);
    assert!(note.what.contains("\"questions\"") && note.what.contains("(\"question_type\")"), "{}", note.what);
    assert!(note.first.ends_with("wrapped-questions.json"), "{}", note.first);
    let (_, stderr) = ingest_cli(&root().join("tests/fixtures/good/wrapped-questions.toml"));
    assert!(stderr.contains("warning: ingest: 3 rows: read from the array \"questions\""), "{stderr}");
}

/// `blindspot ingest` streams: more records than one batch (65,536) and one
/// JSON-lines block (8 MiB), sorted through run files, give the file that
/// ingest-in-memory then one write gives, byte for byte, with the same
/// rejected rows; ids equal under the id order ("7", "07") keep file order.
#[test]
fn a_large_ingest_streams_through_sorted_runs_to_the_same_bytes() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let n = 140_000usize;
    // Ids in a scrambled order, a tie under the id order, a duplicate and a
    // record without an answer (both rejected under on-invalid = "skip").
    let id = |i: usize| match i {
        17 => "07".to_string(),
        99_000 => "7".to_string(),
        120_000 => "q-5".to_string(),
        _ => format!("q-{}", (i * 7_919) % n),
    };
    let jsonl = dir.path().join("big.jsonl");
    let csv = dir.path().join("big.csv");
    let mut j = std::io::BufWriter::new(std::fs::File::create(&jsonl).unwrap());
    let mut c = std::io::BufWriter::new(std::fs::File::create(&csv).unwrap());
    writeln!(c, "id,question,options,answer,question_type").unwrap();
    for i in 0..n {
        let answer = if i == 130_000 { String::new() } else { ["A", "B", "C"][i % 3].to_string() };
        let q = format!("Which of these is in picture {i}, as seen from the left side of the frame?");
        writeln!(
            j,
            r#"{{"id": "{}", "question": "{q}", "options": ["cat {i}", "dog", "bird"], "answer": "{answer}", "question_type": "t{}"}}"#,
            id(i),
            i % 5
        )
        .unwrap();
        writeln!(c, r#"{},"{q}","[""cat {i}"", ""dog"", ""bird""]",{answer},t{}"#, id(i), i % 5).unwrap();
    }
    j.flush().unwrap();
    c.flush().unwrap();
    drop((j, c));
    assert!(std::fs::metadata(&jsonl).unwrap().len() > 8 << 20);
    for input in [&jsonl, &csv] {
        let mut plan = blindspot::spec::IngestPlan::for_canonical_input(input).unwrap();
        plan.on_invalid = blindspot::error::OnInvalid::Skip;
        let whole = blindspot::ingest::ingest(&plan).unwrap();
        assert_eq!(whole.samples.len(), n - 2);
        let at = |id: &str| whole.samples.iter().position(|s| s.id == id).unwrap();
        assert_eq!(at("07") + 1, at("7"), "a tie keeps file order");
        let expected = dir.path().join("whole.parquet");
        blindspot::io::parquet::write_samples(&expected, &whole.samples, blindspot::sample::Embed::Images).unwrap();
        let out = dir.path().join("streamed.parquet");
        let summary = blindspot::ingest::ingest_to_parquet(&plan, &out, blindspot::sample::Embed::Images).unwrap();
        assert!(std::fs::read(&out).unwrap() == std::fs::read(&expected).unwrap(), "{}", input.display());
        assert_eq!(summary.stats.kept, n - 2);
        assert_eq!(summary.stats.rejected, 2);
        let reasons = |r: &[blindspot::ingest::Rejected]| {
            r.iter().map(|r| (r.location.clone(), r.reasons.clone())).collect::<Vec<_>>()
        };
        assert_eq!(reasons(&summary.rejected), reasons(&whole.rejected));
        assert_eq!(summary.inputs[0].sha256, whole.inputs[0].sha256);
        // The run files are gone.
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.iter().all(|f| !f.to_string_lossy().starts_with(".blindspot")), "{left:?}");
    }
}

/// Embedded image bytes whose path label is absolute or climbs with '..' (as a
/// `datasets` export from someone's machine can hold) keep the bytes and only the
/// label's file name, and the ingest summary counts them.
#[test]
fn embedded_images_keep_only_the_file_name_of_a_label_outside_the_benchmark() {
    use arrow::array::{ArrayRef, BinaryArray, RecordBatch, StringArray, StructArray};
    use arrow::datatypes::{DataType, Field};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let png = std::fs::read(root().join("tests/fixtures/bad/images/ok.png")).unwrap();
    let bytes: ArrayRef = Arc::new(BinaryArray::from(vec![png.as_slice(), png.as_slice(), png.as_slice()]));
    let paths: ArrayRef = Arc::new(StringArray::from(vec!["/home/alice/scans/cat.png", "../scans/dog.png", "cow.png"]));
    let image: ArrayRef = Arc::new(StructArray::from(vec![
        (Arc::new(Field::new("bytes", DataType::Binary, true)), bytes),
        (Arc::new(Field::new("path", DataType::Utf8, true)), paths),
    ]));
    let id: ArrayRef = Arc::new(StringArray::from(vec!["1", "2", "3"]));
    let question: ArrayRef = Arc::new(StringArray::from(vec!["Is it a cat?", "Is it a dog?", "Is it a cow?"]));
    let answer: ArrayRef = Arc::new(StringArray::from(vec!["yes", "no", "yes"]));
    let batch =
        RecordBatch::try_from_iter([("id", id), ("question", question), ("answer", answer), ("image", image)]).unwrap();
    let input = dir.path().join("test.parquet");
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&input).unwrap(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let out = dir.path().join("out.parquet");
    let run = blindspot().arg("ingest").arg(&input).arg("-o").arg(&out).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("warning: ingest: 2 rows: embedded images' path labels were absolute"), "{stderr}");
    let s = blindspot::io::parquet::read_samples(&out).unwrap();
    let labels: Vec<_> = s.iter().map(|s| s.images[0].path.as_deref()).collect();
    assert_eq!(labels, [Some("cat.png"), Some("dog.png"), Some("cow.png")]);
    assert!(s.iter().all(|s| s.images[0].bytes.as_deref() == Some(png.as_slice())));
}

/// `pipeline` (the text after `[dataset]`) as `p.toml` beside a copy of the canonical
/// fixture (its data, and its image under `images/`).
fn canonical_pipeline(pipeline: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let work = common::fixture_workspace();
    let path = work.path().join("p.toml");
    let text = format!("[dataset]\nname = \"p\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n\n{pipeline}");
    std::fs::write(&path, text).unwrap();
    (work, path)
}

#[test]
fn a_mapped_field_no_record_has_is_an_error_and_one_some_lack_is_counted() {
    // A typo in a mapping used to turn every multiple-choice question into an open one.
    let (_work, typo) = canonical_pipeline(
        "[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\n\n[ingest.fields]\noptions = \"option\"\n\
         question-type = \"categroy\"\n",
    );
    ingest_fails(
        &typo,
        &[
            "canonical.jsonl: field \"ingest.fields.options\": the source field \"option\" is in no record",
            "did you mean \"options\"? (set [ingest.fields] options)",
            "field \"ingest.fields.question-type\": the source field \"categroy\" is in no record",
            "the first record's fields are: id, question, options, answer, question_type, image, source",
        ],
    );
    // A meta field three of four records lack: kept where it is, the rest counted.
    let (_work, sparse) = canonical_pipeline(
        "[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\n\n[ingest.fields]\nmeta = [\"source\"]\n",
    );
    let (samples, stderr) = ingest_cli(&sparse);
    assert_eq!(samples.iter().filter(|s| s.meta.contains_key("source")).count(), 1);
    assert!(
        stderr.contains("warning: ingest: 3 rows: the mapped source field \"source\" ([ingest.fields] meta) is absent")
            && stderr.contains("canonical.jsonl:2)"),
        "{stderr}"
    );
}

#[test]
fn grouping_by_a_meta_field_no_question_has_is_an_error() {
    let (work, pipeline) = canonical_pipeline(
        "[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\n\n[diagnose]\ngroup-by = \"meta:sorce\"\n",
    );
    let out = work.path().join("d");
    blindspot()
        .arg("diagnose")
        .arg(&pipeline)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "p.toml: field \"diagnose.group-by\": no question has the meta field \"sorce\"",
        ))
        .stderr(predicates::str::contains("did you mean \"source\"?"));
    assert!(!out.exists());
    blindspot()
        .arg("diagnose")
        .arg(work.path().join("canonical.jsonl"))
        .args(["--group-by", "meta:nonexistent", "--meta-features", "source,colour", "-o"])
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "command line: field \"diagnose.group-by\": no question has the meta field \"nonexistent\"",
        ))
        .stderr(predicates::str::contains(
            "field \"diagnose.meta-features\": no question has the meta field \"colour\"",
        ));
    assert!(!out.exists());
}

#[test]
fn images_named_without_a_folder_fail_ingest_and_build_and_a_built_card_counts_them() {
    // The image column is found by its canonical name; no [ingest] images folder.
    let (work, no_folder) = canonical_pipeline("[ingest]\npath = \"canonical.jsonl\"\n");
    ingest_fails(
        &no_folder,
        &[
            "canonical.jsonl:1: field \"images\": image \"cat.png\" is named by path, but no image folder is set",
            "set [ingest] images = \"<the folder that holds the images>\"",
        ],
    );
    let releases = work.path().join("releases");
    let build =
        |pipeline: &Path| blindspot().arg("build").arg(pipeline).arg("--out-dir").arg(&releases).output().unwrap();
    let o = build(&no_folder);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(files_below(&releases).is_empty());
    // Declared names only: diagnose-style ingest keeps them (counted); build refuses.
    let (_w, names) = canonical_pipeline("[ingest]\npath = \"canonical.jsonl\"\nimage-names-only = true\n");
    let (samples, stderr) = ingest_cli(&names);
    assert!(samples.iter().all(|s| s.images[0].path.as_deref() == Some("cat.png") && s.images[0].bytes.is_none()));
    assert!(stderr.contains("warning: ingest: 4 rows: images named by path were kept as names only"), "{stderr}");
    blindspot().arg("build").arg(&names).arg("--out-dir").arg(&releases).assert().code(1).stderr(
        predicates::str::contains(
            "p.toml: field \"ingest.image-names-only\": a release cannot be built from image names only",
        ),
    );
    assert!(files_below(&releases).is_empty());
    // Found and embedded: the card says so from what it holds.
    let (_w, found) = canonical_pipeline("[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\n");
    let o = build(&found);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let card = std::fs::read_to_string(releases.join("p/1.0.0/README.md")).unwrap();
    assert!(
        card.contains("Self-contained: the questions' 4 images (1 distinct file) are embedded in the Parquet files."),
        "{card}"
    );
}

#[test]
fn an_image_linked_from_outside_its_folder_is_an_error_and_a_link_inside_is_not() {
    let work = common::fixture_workspace();
    let outside = work.path().join("elsewhere");
    std::fs::create_dir(&outside).unwrap();
    std::fs::copy(work.path().join("images/cat.png"), outside.join("secret.png")).unwrap();
    let images = work.path().join("images");
    std::fs::remove_file(images.join("cat.png")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.png"), images.join("cat.png")).unwrap();
    let pipeline = work.path().join("p.toml");
    std::fs::write(
        &pipeline,
        "[dataset]\nname = \"p\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n[ingest]\npath = \"canonical.jsonl\"\n\
         images = \"images\"\n",
    )
    .unwrap();
    ingest_fails(
        &pipeline,
        &[
            "canonical.jsonl:1: field \"images\": image \"cat.png\" is reached through the symbolic link",
            "images/cat.png to ",
            "elsewhere/secret.png, outside the image folder",
        ],
    );
    // A link that stays inside the folder is an image like any other.
    std::fs::remove_file(images.join("cat.png")).unwrap();
    std::fs::rename(outside.join("secret.png"), images.join("real.png")).unwrap();
    std::os::unix::fs::symlink("real.png", images.join("cat.png")).unwrap();
    let (samples, _) = ingest_cli(&pipeline);
    assert_eq!(samples[0].images[0].path.as_deref(), Some("cat.png"));
    assert_eq!(samples[0].images[0].width, Some(1));
}

#[test]
fn the_pixel_limit_is_a_setting_and_names_the_file_and_its_size() {
    let (_work, small) =
        canonical_pipeline("[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\nmax-image-pixels = 1\n");
    let (samples, _) = ingest_cli(&small);
    assert_eq!(samples.len(), 4);
    let big = tempfile::tempdir().unwrap();
    std::fs::create_dir(big.path().join("images")).unwrap();
    // A PNG header declaring 3 x 2 pixels, with a limit of 5.
    let mut png = std::fs::read(root().join("tests/fixtures/good/images/cat.png")).unwrap();
    png[16..24].copy_from_slice(&[0, 0, 0, 3, 0, 0, 0, 2]);
    std::fs::write(big.path().join("images/wide.png"), png).unwrap();
    std::fs::write(
        big.path().join("q.jsonl"),
        r#"{"id": "1", "question": "q?", "answer": "yes", "image": "wide.png"}"#,
    )
    .unwrap();
    let pipeline = big.path().join("p.toml");
    std::fs::write(
        &pipeline,
        "[dataset]\nname = \"p\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n[ingest]\npath = \"q.jsonl\"\n\
         images = \"images\"\nmax-image-pixels = 5\n",
    )
    .unwrap();
    ingest_fails(
        &pipeline,
        &["q.jsonl:1: field \"images\": image \"wide.png\" declares 3x2 pixels (6 pixels), more than the 5 pixels \
           blindspot reads ([ingest] max-image-pixels)"],
    );
    // Decoded once: a PNG whose header reads but whose pixel data is damaged is kept, counted and named.
    let mut damaged = std::fs::read(root().join("tests/fixtures/good/images/cat.png")).unwrap();
    let at = damaged.len() - 20;
    damaged[at] ^= 0xff;
    std::fs::write(big.path().join("images/wide.png"), damaged).unwrap();
    let (samples, stderr) = ingest_cli(&pipeline);
    assert_eq!(samples[0].images[0].width, Some(1));
    assert!(stderr.contains("warning: ingest: 1 row: images whose header reads but whose pixel data does not decode"));
    assert!(stderr.contains("warning: ingest: 1 image do not decode past their header: wide.png ("), "{stderr}");
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

#[test]
fn a_release_name_over_100_characters_is_refused_by_validate() {
    let (work, _) = canonical_pipeline("");
    let pipeline = work.path().join("long.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[dataset]\nname = \"{}\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n[ingest]\npath = \"canonical.jsonl\"\n\
             images = \"images\"\n",
            "a".repeat(300)
        ),
    )
    .unwrap();
    blindspot()
        .arg("validate")
        .arg(&pipeline)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("field \"dataset.name\": \"aaaa"))
        .stderr(predicates::str::contains("is not a valid release name"))
        .stderr(predicates::str::contains("100 characters at most"));
}

#[test]
fn settings_out_of_their_bounds_are_refused_by_validate_and_the_command_line() {
    let (work, pipeline) = canonical_pipeline(
        "[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\n\n[prune]\nbudget = 1.0\nbatch = 0\n\
         threshold = nan\nindependent-seeds = 100000\n",
    );
    blindspot()
        .arg("validate")
        .arg(&pipeline)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "p.toml:11:10: field \"prune.budget\": 1 is neither a count nor a percentage: is it 1 questions or 100% of \
             them?",
        ))
        .stderr(predicates::str::contains("field \"prune.batch\": is 0: a batch of 0 removes nothing"))
        .stderr(predicates::str::contains("field \"prune.threshold\": must be between 0 and 1; found NaN"))
        .stderr(predicates::str::contains("field \"prune.independent-seeds\": must be at most 20; found 100000"));
    let data = work.path().join("canonical.jsonl");
    let out = work.path().join("out");
    for (flags, expect) in [
        (&["--batch", "0"][..], "command line: field \"--batch\": is 0: a batch of 0 removes nothing"),
        (&["--budget", "1.0"], "command line: field \"--budget\": 1 is neither a count nor a percentage"),
        (&["--threshold", "nan"], "command line: field \"--threshold\": must be between 0 and 1; found NaN"),
        (&["--independent-seeds", "100000"], "command line: field \"--independent-seeds\": must be between 0 and 20"),
        (&["--folds", "1"], "command line: field \"--folds\": must be between 2 and 100"),
    ] {
        blindspot()
            .arg("prune")
            .arg(&data)
            .args(flags)
            .arg("-o")
            .arg(&out)
            .assert()
            .code(1)
            .stderr(predicates::str::contains(expect));
        assert!(!out.exists());
    }
}

#[test]
fn a_headerless_tsv_is_read_with_named_columns_and_skipped_rows_give_their_reasons() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("q.tsv"), "1\tIs it a cat?\tyes\n2\tIs it a dog?\tno\n").unwrap();
    let pipeline = dir.path().join("p.toml");
    std::fs::write(
        &pipeline,
        "[dataset]\nname = \"p\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n[ingest]\npath = \"q.tsv\"\n\
         header = false\ncolumns = [\"id\", \"question\", \"answer\"]\n",
    )
    .unwrap();
    let (samples, _) = ingest_cli(&pipeline);
    assert_eq!(samples.iter().map(|s| s.question.as_str()).collect::<Vec<_>>(), ["Is it a cat?", "Is it a dog?"]);
    // on-invalid = "skip": each reason counted, with its first three rows.
    let mut lines = vec![r#"{"id": "ok", "question": "Is it?", "answer": "yes"}"#.to_string()];
    for i in 0..4 {
        lines.push(format!(r#"{{"id": "e{i}", "question": "Which?", "options": ["a", "b"], "answer": "E"}}"#));
    }
    lines.push(r#"{"id": "q", "question": "", "answer": "yes"}"#.to_string());
    std::fs::write(dir.path().join("bad.jsonl"), lines.join("\n")).unwrap();
    let skip = dir.path().join("skip.toml");
    std::fs::write(
        &skip,
        "[dataset]\nname = \"p\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n[ingest]\npath = \"bad.jsonl\"\n\
         on-invalid = \"skip\"\n",
    )
    .unwrap();
    let (samples, stderr) = ingest_cli(&skip);
    assert_eq!(samples.len(), 1);
    let reasons: Vec<&str> = stderr.lines().filter(|l| l.contains("rejected row")).collect();
    assert_eq!(reasons.len(), 2, "{stderr}");
    assert!(
        reasons[0].starts_with(
            "warning: ingest: 4 rejected rows: field \"answer\": the answer is \"…\" but the question has N options \
             (A-B) (first: "
        ) && reasons[0].contains("bad.jsonl:2, ")
            && reasons[0].contains("bad.jsonl:3, ")
            && reasons[0].ends_with("bad.jsonl:4)"),
        "{stderr}"
    );
    assert!(
        reasons[1].contains("1 rejected row: field \"question\": the question is empty (source field \"…\") (first: ")
            && reasons[1].ends_with("bad.jsonl:6)"),
        "{stderr}"
    );
}

/// A radiograph (as PNG), its half-size JPEG copy and another radiograph: `dups` clusters the copy
/// with its original (other bytes, other format), matches the listed hash of
/// the other scan, and a list with a line that is no hash is refused with its
/// file and line, writing nothing.
#[test]
fn dups_clusters_near_duplicate_images_and_checks_a_hash_list() {
    let tmp = tempfile::tempdir().unwrap();
    common::near_duplicate_image_bench(tmp.path(), "");
    let ing = ingest_file(&tmp.path().join("bench.toml"));
    let phash = |i: usize| ing.samples[i].images[0].phash.clone().unwrap();
    std::fs::write(tmp.path().join("hashes.txt"), format!("# training set\n{}\n", phash(2))).unwrap();
    let out = blindspot()
        .current_dir(tmp.path())
        .args(["dups", "bench.toml", "--exact-only", "--hashes", "hashes.txt", "-o", "out"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("out/dups.json")).unwrap()).unwrap();
    let im = &j["images"];
    assert_eq!(
        (im["images"].as_u64(), im["hashed"].as_u64(), im["clusters"].as_u64()),
        (Some(3), Some(3), Some(1)),
        "{im:#}"
    );
    let ids: Vec<&serde_json::Value> = im["members"][0].as_array().unwrap().iter().map(|e| &e["ids"]).collect();
    // Members sorted by path: the copy, then the original.
    assert_eq!(ids, [&serde_json::json!(["2"]), &serde_json::json!(["1"])], "{im:#}");
    assert_eq!(im["hashes"]["images_with_match"], 1, "{im:#}");
    assert_eq!(im["hashes"]["matches"][0]["image"]["path"], "b.jpg", "{im:#}");
    assert_eq!(im["hashes"]["matches"][0]["listed"][1], 2, "{im:#}");

    std::fs::write(tmp.path().join("bad.txt"), format!("{}\n{}x\n", phash(2), phash(2))).unwrap();
    let out = blindspot()
        .current_dir(tmp.path())
        .args(["dups", "bench.toml", "--exact-only", "--hashes", "bad.txt", "-o", "out2"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("bad.txt:2") && stderr.contains("is not a perceptual hash"), "{stderr}");
    assert!(!tmp.path().join("out2").exists());
}

/// `blindspot filter` by hand: a written rule over the canonical fixture's
/// predictions writes the removals with their models and the kept ids; a preset
/// with a threshold of its own is refused by the command line.
#[test]
fn filter_writes_what_a_rule_removes_and_what_it_keeps() {
    let work = common::fixture_workspace();
    let preds = [
        // c1 and c3: both models right from the text alone; c2: only m1 right.
        r#"{"model": "m1", "id": "c1::no_image", "response": "C"}"#,
        r#"{"model": "m2", "id": "c1::no_image", "response": "ginger"}"#,
        r#"{"model": "m1", "id": "c2::no_image", "response": "yes"}"#,
        r#"{"model": "m2", "id": "c2::no_image", "response": "no"}"#,
        r#"{"model": "m1", "id": "c3::no_image", "response": "sleeping"}"#,
        r#"{"model": "m2", "id": "c3::no_image", "response": "Sleeping."}"#,
    ];
    std::fs::write(work.path().join("preds.jsonl"), preds.join("\n") + "\n").unwrap();
    let out = blindspot()
        .current_dir(work.path())
        .args(["filter", "--samples", "canonical.toml", "--predictions", "preds.jsonl"])
        .args(["--conditions", "no_image", "--min-models", "all", "-o", "f"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let f: serde_json::Value =
        serde_json::from_slice(&std::fs::read(work.path().join("f/filter.json")).unwrap()).unwrap();
    let removed: Vec<&str> = f["removed"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(removed, ["c1", "c3"], "{f:#}");
    assert_eq!(f["rule"]["min_models"], 2, "{f:#}");
    assert_eq!(f["unpredicted"], 1, "c10 has no prediction: {f:#}");
    let kept = std::fs::read_to_string(work.path().join("f/kept_ids.txt")).unwrap();
    assert_eq!(kept.lines().collect::<Vec<_>>(), ["c2", "c10"]);
    let out = blindspot()
        .current_dir(work.path())
        .args(["filter", "--samples", "canonical.toml", "--predictions", "preds.jsonl"])
        .args(["--preset", "mmstar", "--min-models", "2", "-o", "g"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--min-models") && err.contains("--preset"), "{err}");
    assert!(!work.path().join("g").exists(), "nothing written");
}
