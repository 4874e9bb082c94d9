//! Every reader's one-step ingest without conversion: canonical files, CSV
//! and TSV as pandas and spreadsheets write them, Hugging Face folders,
//! `save_to_disk` shards, spreadsheets, wrapped JSON; output written
//! atomically and streamed through sorted runs.

use std::path::Path;

use blindspot::sample::AnswerFormat;

use crate::common::{blindspot, files_below, root};
use crate::{ingest_cli, ingest_fails, ingest_file};
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
fn csv_with_one_column_per_option_and_letter_answers() {
    let ing = ingest_file(&root().join("tests/fixtures/good/letters.toml"));
    let s = &ing.samples;
    assert_eq!(s[0].options, vec!["circle", "square", "triangle"]);
    assert_eq!((s[0].answer.as_str(), s[0].answer_index), ("triangle", Some(2)));
    assert_eq!(s[1].options, vec!["red", "green"]);
    assert_eq!((s[1].answer.as_str(), s[1].answer_index), ("green", Some(1)));
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
    // Unsaid, its first row reads as a record (a question), not a header: an error, not
    // a record lost; said to be a header, it is one.
    let unsaid = dir.path().join("unsaid.toml");
    let head = "[dataset]\nname = \"p\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n[ingest]\npath = \"q.tsv\"\n";
    std::fs::write(&unsaid, head).unwrap();
    ingest_fails(&unsaid, &["q.tsv:1", "column 2 is \"Is it a cat?\", a question", "header = false"]);
    let said = dir.path().join("said.toml");
    let names = "[ingest.fields]\nid = \"1\"\nquestion = \"Is it a cat?\"\nanswer = \"yes\"\n";
    std::fs::write(&said, format!("{head}header = true\n{names}")).unwrap();
    let (samples, _) = ingest_cli(&said);
    assert_eq!(samples.len(), 1);
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
