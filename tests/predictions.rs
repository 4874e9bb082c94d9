//! Predictions import on committed fixtures: real response strings parse,
//! and every importer (generic, lmms-eval, VLMEvalKit, index maps) maps rows
//! to blindspot ids and keeps their locations. The published ScienceQA result
//! files themselves are checked in `tests/real_data/predictions.rs`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use blindspot::metrics::{MetricsConfig, score_all};
use blindspot::predictions::parse::{parse_choice, parse_number, parse_yes_no};
use blindspot::predictions::{Manifest, Response, Source, detect, import_all};
use blindspot::sample::{AnswerFormat, Sample};
use common::{prediction_file as file, root};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/predictions").join(name)
}

fn questions() -> Vec<Sample> {
    blindspot::pipeline::rows::read_rows(&fixture("questions.jsonl")).unwrap()
}

#[test]
fn real_response_strings_parse() {
    // Verbatim from the published ScienceQA result files (pid 4 and 5, and LLaVA-1.5's −1 cases).
    let two = |a: &str, b: &str| vec![a.to_string(), b.to_string()];
    let figures = two("chiasmus", "apostrophe");
    let gpt3 = "The answer is B. BECAUSE: An apostrophe is a figure of speech in which a speaker or writer addresses an absent person, an inanimate object, or a concept.\\nIn the text, the speaker is addressing the goddess. The goddess is absent. So, the figure of speech used in the text is an apostrophe.";
    assert_eq!(parse_choice(gpt3, &figures).map(|c| (c.index, c.explicit)), Some((1, true)));
    let llava = "Assistant: LECTURE: Figures of speech are words or phrases that use language in a nonliteral or unusual way.\nApostrophe is a direct address to an absent person or a nonhuman entity.\nSOLUTION: The text uses apostrophe, a direct address to an absent person or a nonhuman entity.\nSing, O goddess, is a direct address to the goddess Diomedes.\n The answer is B.";
    assert_eq!(parse_choice(llava, &figures).map(|c| c.index), Some(1));
    assert_eq!(parse_choice("B", &figures).map(|c| c.index), Some(1));
    let three = vec!["simile".to_string(), "hyperbole".to_string(), "metaphor".to_string()];
    assert_eq!(parse_choice("C. metaphor", &three).map(|c| c.index), Some(2));
    assert_eq!(parse_choice("C. metaphor", &figures), None, "C is out of range for two options");
    assert_eq!(parse_choice("B is the run-on sentence.", &figures), None);
    let common = two("rare", "common");
    assert_eq!(parse_choice("C. common", &common), None, "LLaVA-1.5 on pid 4871: a label beyond the options");
    // The Mirage paper's prompt format, and yes/no / numeric replies.
    assert_eq!(parse_choice("Looking at the microscopy... [[A]]", &figures).map(|c| c.index), Some(0));
    assert_eq!(parse_yes_no("Yes"), Some((true, true)));
    assert_eq!(parse_number("[[3]]"), Some((3.0, true)));
}

#[test]
fn generic_files_in_every_format_keep_their_locations() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("preds.jsonl");
    std::fs::write(
        &jsonl,
        "{\"model\": \"m1\", \"id\": \"q1\", \"response\": \"(B)\"}\n\n{\"model\": \"m1\", \"id\": \"q2\", \"prediction\": \"Answer: B\"}\n{\"model\": \"m1\", \"id\": \"nope\", \"response\": \"A\"}\n",
    )
    .unwrap();
    let csv = dir.path().join("preds.csv");
    std::fs::write(&csv, "model,id,response\nm2,q3,\"No, it is clear.\"\nm2,q4,twelve\nm2,q4,13\n").unwrap();
    let imported = import_all(&[file(&jsonl, None), file(&csv, None)], None).unwrap();
    assert_eq!(imported.predictions.len(), 6);
    assert_eq!(imported.predictions[1].loc.to_string(), format!("{}:3", blindspot::error::display_path(&jsonl)));
    assert_eq!(imported.predictions[4].loc.to_string(), format!("{}:3", blindspot::error::display_path(&csv)));
    let scored = score_all(&questions(), &imported.predictions, &MetricsConfig::default()).unwrap();
    assert_eq!(scored.unknown_count, 1);
    assert!(scored.unknown[0].location.ends_with("preds.jsonl:4"), "{:?}", scored.unknown);
    assert_eq!(scored.duplicate_count, 1);
    let s = |m: &str| scored.cell(m, "original").unwrap().iter().map(|i| i.outcome.score).collect::<Vec<_>>();
    assert_eq!(s("m1"), vec![1.0, 1.0]);
    assert_eq!(s("m2"), vec![0.0, 1.0], "q3 is yes; 'twelve' is 12 (the repeated 13 is ignored)");
    // Without a model column the command line names it; without either it is a located error.
    let nomodel = dir.path().join("nomodel.jsonl");
    std::fs::write(&nomodel, "{\"id\": \"q1\", \"response\": \"B\"}\n").unwrap();
    assert_eq!(import_all(&[file(&nomodel, Some("gpt"))], None).unwrap().predictions[0].model, "gpt");
    let err = import_all(&[file(&nomodel, None)], None).unwrap_err().to_string();
    assert!(err.contains("nomodel.jsonl:1") && err.contains("\"model\"") && err.contains("MODEL=FILE"), "{err}");
}

/// Published result files in their own shapes: LLaVA's answer files (`question_id`,
/// `text`, `model_id`) and the VQA evaluation server's results (`question_id`,
/// `answer`) import as they are; a file where no record has a response field is an
/// error, not a model scored wrong on every question.
#[test]
fn llava_answer_files_and_vqa_results_import_as_published() {
    let dir = tempfile::tempdir().unwrap();
    let llava = dir.path().join("answers.jsonl");
    std::fs::write(
        &llava,
        "{\"question_id\": \"q1\", \"prompt\": \"Which?\", \"text\": \"B\", \"answer_id\": \"x7\", \"model_id\": \"llava-v1.5-7b\", \"metadata\": {}}\n\
         {\"question_id\": \"q2\", \"prompt\": \"Which?\", \"text\": \"A\", \"answer_id\": \"x8\", \"model_id\": \"llava-v1.5-7b\", \"metadata\": {}}\n",
    )
    .unwrap();
    let vqa = dir.path().join("results.json");
    std::fs::write(&vqa, r#"[{"question_id": "q3", "answer": "no"}, {"question_id": "q4", "answer": "12"}]"#).unwrap();
    let imported = import_all(&[file(&llava, None), file(&vqa, Some("server"))], None).unwrap();
    let got: Vec<(&str, &str, String)> =
        imported.predictions.iter().map(|p| (p.model.as_str(), p.id.as_str(), format!("{:?}", p.response))).collect();
    assert_eq!(
        got,
        [
            ("llava-v1.5-7b", "q1", format!("{:?}", Response::Text("B".into()))),
            ("llava-v1.5-7b", "q2", format!("{:?}", Response::Text("A".into()))),
            ("server", "q3", format!("{:?}", Response::Text("no".into()))),
            ("server", "q4", format!("{:?}", Response::Text("12".into()))),
        ]
    );
    let scored = score_all(&questions(), &imported.predictions, &MetricsConfig::default()).unwrap();
    let s = |m: &str| scored.cell(m, "original").unwrap().iter().map(|i| i.outcome.score).collect::<Vec<_>>();
    assert_eq!(s("llava-v1.5-7b"), vec![1.0, 0.0]);
    let other = dir.path().join("other.jsonl");
    std::fs::write(&other, "{\"question_id\": \"q1\", \"pred\": \"B\", \"model\": \"m\"}\n").unwrap();
    let err = import_all(&[file(&other, None)], None).unwrap_err().to_string();
    assert!(err.contains("other.jsonl:1") && err.contains("no record of the file has a response field"), "{err}");
    assert!(err.contains("--response-field") && err.contains("question_id, pred, model"), "{err}");
}

#[test]
fn parquet_predictions_import() {
    use arrow::array::{RecordBatch, StringArray};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.parquet");
    let batch = RecordBatch::try_from_iter([
        ("model", Arc::new(StringArray::from(vec!["m", "m"])) as _),
        ("id", Arc::new(StringArray::from(vec!["q1", "q2"])) as _),
        ("response", Arc::new(StringArray::from(vec![Some("[[B]]"), None])) as _),
    ])
    .unwrap();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let imported = import_all(&[file(&path, None)], None).unwrap();
    assert_eq!(imported.files[0].source, Source::Generic);
    assert_eq!(imported.predictions[1].response, Response::Text(String::new()), "a null response is empty");
    assert!(imported.predictions[1].loc.to_string().ends_with("p.parquet: row 2"));
    let scored = score_all(&questions(), &imported.predictions, &MetricsConfig::default()).unwrap();
    let items = scored.cell("m", "original").unwrap();
    assert_eq!((items[0].outcome.score, items[1].outcome.empty), (1.0, true));
}

/// Variant rows of the fixture questions and a harness export of them.
fn exported(harness: &str, out: &Path) -> (Vec<Sample>, blindspot::predictions::export_manifest::ExportManifest) {
    let qs = questions();
    let kinds = vec![
        blindspot::variants::KindSel::One(blindspot::variants::Kind::OptionShuffle),
        blindspot::variants::KindSel::One(blindspot::variants::Kind::GoldRemoved),
    ];
    let cfg = blindspot::variants::VariantsConfig { kinds, ..Default::default() };
    let v = blindspot::variants::generate(&qs, &cfg).unwrap();
    let mut configs =
        vec![blindspot::io::release_dir::Config { name: "original".into(), files: vec![], rows: qs.clone() }];
    let mut rows = qs;
    for k in &v.kinds {
        configs.push(blindspot::io::release_dir::Config { name: k.kind.name(), files: vec![], rows: k.rows.clone() });
        rows.extend(k.rows.iter().cloned());
    }
    std::fs::create_dir_all(out).unwrap();
    let manifest = match harness {
        "vlmevalkit" => blindspot::export::vlmevalkit::export(&configs, "Fix", out).unwrap(),
        _ => blindspot::export::lmms_eval::export(&configs, "fix", out).unwrap(),
    };
    (rows, manifest)
}

#[test]
fn vlmevalkit_results_map_through_the_manifest_or_blindspot_id() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, _) = exported("vlmevalkit", dir.path());
    let manifest = Manifest::load(&dir.path().join("manifest.json")).unwrap();
    assert!(manifest.vlmevalkit.contains_key("Fix_option_shuffle"));
    // A result TSV as VLMEvalKit writes it: <model>_<dataset>.tsv, index + prediction, no blindspot_id.
    let shuffle_rows: Vec<&Sample> = rows.iter().filter(|r| r.variant.as_deref() == Some("option_shuffle")).collect();
    let mut tsv = String::from("index\tquestion\tanswer\tprediction\n");
    for (i, r) in shuffle_rows.iter().enumerate() {
        let gold = (b'A' + r.answer_index.unwrap() as u8) as char;
        tsv.push_str(&format!("{i}\tq\t{gold}\tThe answer is {gold}.\n"));
    }
    tsv.push_str("99\tq\tA\tA\n");
    let result = dir.path().join("GPT4o_Fix_option_shuffle.tsv");
    std::fs::write(&result, &tsv).unwrap();
    assert_eq!(detect(&result).unwrap(), Source::VlmEvalKit);
    let err = import_all(&[file(&result, None)], Some(&manifest)).unwrap_err().to_string();
    assert!(err.contains("GPT4o_Fix_option_shuffle.tsv:") && err.contains("index \"99\""), "{err}");
    std::fs::write(&result, tsv.lines().filter(|l| !l.starts_with("99")).collect::<Vec<_>>().join("\n")).unwrap();
    let imported = import_all(&[file(&result, None)], Some(&manifest)).unwrap();
    assert_eq!(imported.predictions[0].model, "GPT4o", "the model is the result name without the dataset");
    let scored = score_all(&rows, &imported.predictions, &MetricsConfig::default()).unwrap();
    let cell = scored.cell("GPT4o", "option_shuffle").unwrap();
    assert_eq!(cell.len(), shuffle_rows.len());
    assert!(cell.iter().all(|i| i.outcome.score == 1.0), "scored against the shuffled row's own gold");
    // Without the manifest the index is taken as the id: here it names no row, so the
    // rows are counted as unknown, and --strict says to pass the manifest.
    let imported = import_all(&[file(&result, None)], None).unwrap();
    let scored = score_all(&rows, &imported.predictions, &MetricsConfig::default()).unwrap();
    assert_eq!(scored.unknown_count, shuffle_rows.len());
    let strict = MetricsConfig { strict: true, ..MetricsConfig::default() };
    let err = score_all(&rows, &imported.predictions, &strict).unwrap_err().to_string();
    assert!(err.contains("--manifest"), "{err}");
}

#[test]
fn vlmevalkit_xlsx_is_read_with_its_rows() {
    let path = fixture("vlmevalkit_result.xlsx");
    assert_eq!(detect(&path).unwrap(), Source::VlmEvalKit);
    let imported = import_all(&[file(&path, Some("GPT4o"))], None).unwrap();
    assert_eq!(imported.predictions.len(), 5);
    assert_eq!(imported.predictions[1].response, Response::Text("The answer is (B).".into()));
    let scored = score_all(&questions(), &imported.predictions, &MetricsConfig::default()).unwrap();
    assert_eq!(scored.unknown_count, 1);
    assert!(scored.unknown[0].location.ends_with("vlmevalkit_result.xlsx: row 6"), "{:?}", scored.unknown[0]);
    let cell = scored.cell("GPT4o", "original").unwrap();
    let got: Vec<(f64, bool)> = cell.iter().map(|i| (i.outcome.score, i.outcome.abstained)).collect();
    assert_eq!(got, vec![(1.0, false), (1.0, false), (0.0, true), (1.0, false)]);
}

/// A spreadsheet without VLMEvalKit's `index` column is a generic table of
/// predictions (model, id, response), as a CSV with those columns is.
#[test]
fn a_generic_xlsx_is_read_as_a_generic_table() {
    let path = fixture("generic_predictions.xlsx");
    assert_eq!(detect(&path).unwrap(), Source::Generic);
    let imported = import_all(&[file(&path, None)], None).unwrap();
    let got: Vec<(String, String, Response)> =
        imported.predictions.iter().map(|p| (p.model.clone(), p.id.clone(), p.response.clone())).collect();
    assert_eq!(
        got,
        [
            ("m1".to_string(), "q1".to_string(), Response::Text("(B)".into())),
            ("m1".to_string(), "q2".to_string(), Response::Text("Answer: A".into())),
            ("m1".to_string(), "q3".to_string(), Response::Text("No, it is clear.".into())),
        ]
    );
    assert!(
        imported.predictions[2].loc.to_string().ends_with("generic_predictions.xlsx: row 4"),
        "{}",
        imported.predictions[2].loc
    );
    let scored = score_all(&questions(), &imported.predictions, &MetricsConfig::default()).unwrap();
    let cell = scored.cell("m1", "original").unwrap();
    let got: Vec<f64> = cell.iter().map(|i| i.outcome.score).collect();
    assert_eq!(got, vec![1.0, 0.0, 0.0]);
}

#[test]
fn lmms_eval_samples_map_by_echoed_id_or_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, manifest_json) = exported("lmms-eval", dir.path());
    let manifest = Manifest::load(&dir.path().join("manifest.json")).unwrap();
    let blindspot::predictions::export_manifest::ExportManifest::LmmsEval { tasks, .. } = manifest_json else {
        panic!("an lmms-eval manifest")
    };
    let task = tasks[1].task.clone();
    let ids = &manifest.lmms_eval[&task];
    let model_dir = dir.path().join("llava-onevision");
    std::fs::create_dir_all(&model_dir).unwrap();
    // Plain lmms-eval records: doc_id + resps (mapped by the manifest) ...
    let by_id: BTreeMap<&str, &Sample> = rows.iter().map(|r| (r.id.as_str(), r)).collect();
    let mut lines = String::new();
    for (doc, id) in ids.iter().enumerate() {
        let gold = (b'A' + by_id[id.as_str()].answer_index.unwrap() as u8) as char;
        lines.push_str(&serde_json::json!({"doc_id": doc, "target": gold.to_string(), "resps": [[format!("{gold}")]], "filtered_resps": [format!("{gold}")]}).to_string());
        lines.push('\n');
    }
    // ... and one with blindspot's echoed id (the exported utils.py).
    lines.push_str(&serde_json::json!({"doc_id": 0, "blindspot": {"id": "q2", "prediction": "[[B]]"}}).to_string());
    lines.push('\n');
    let path = model_dir.join(format!("20260101_120000_samples_{task}.jsonl"));
    std::fs::write(&path, lines).unwrap();
    assert_eq!(detect(&path).unwrap(), Source::LmmsEval);
    let imported = import_all(&[file(&path, None)], Some(&manifest)).unwrap();
    assert_eq!(imported.predictions.len(), ids.len() + 1);
    assert!(imported.predictions.iter().all(|p| p.model == "llava-onevision"), "the folder names the model");
    let scored = score_all(&rows, &imported.predictions, &MetricsConfig::default()).unwrap();
    let kind = tasks[1].config.as_str();
    assert!(scored.cell("llava-onevision", kind).unwrap().iter().all(|i| i.outcome.score == 1.0));
    assert_eq!(scored.cell("llava-onevision", "original").unwrap()[0].outcome.score, 1.0);
    // Without manifest or echoed id: a located error.
    let err = import_all(&[file(&path, None)], None).unwrap_err().to_string();
    assert!(err.contains("_samples_") && err.contains("--manifest"), "{err}");
}

#[test]
fn unparseable_responses_are_wrong_never_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junk.jsonl");
    let long = "Z".repeat(200_000);
    let junk = [
        "",
        "   ",
        "\u{1F600}\u{1F600}",
        "[[",
        "]]][[[",
        "(((((",
        "answer is",
        "The answer is Q.",
        &long,
        "-",
        "1e309",
        "NaN",
    ];
    let mut text = String::new();
    for (i, j) in junk.iter().enumerate() {
        for id in ["q1", "q3", "q4", "q5"] {
            text.push_str(&serde_json::json!({"model": format!("m{i}"), "id": id, "response": j}).to_string());
            text.push('\n');
        }
    }
    text.push_str("{\"model\": \"n\", \"id\": \"q4\", \"response\": 12}\n");
    std::fs::write(&path, text).unwrap();
    let imported = import_all(&[file(&path, None)], None).unwrap();
    let scored = score_all(&questions(), &imported.predictions, &MetricsConfig::default()).unwrap();
    for (m, conds) in &scored.cells {
        for it in &conds["original"] {
            if m != "n" {
                assert!(it.outcome.score <= f64::EPSILON || it.id == "q4", "{m} {}: {:?}", it.id, it.outcome);
            }
        }
    }
    assert_eq!(scored.cell("n", "original").unwrap()[0].outcome.score, 1.0, "a numeric JSON response is text 12");
    let q4 = samples_by_format(AnswerFormat::Numeric);
    assert_eq!(q4, vec!["q4"]);
}

fn samples_by_format(f: AnswerFormat) -> Vec<String> {
    questions().into_iter().filter(|s| s.answer_format == f).map(|s| s.id).collect()
}

/// Where a file could mean two things, the import stops and names the flag
/// that says which: two response fields, two model names, the questions file
/// itself, a `--wide` column that is not there.
#[test]
fn prediction_import_never_guesses_a_field_a_model_or_a_column() {
    let dir = tempfile::tempdir().unwrap();
    // A text-only baseline's file holding two runs, `response` and `prediction`.
    let two = dir.path().join("two.jsonl");
    std::fs::write(
        &two,
        "{\"id\": \"q1\", \"response\": \"A\", \"prediction\": \"B\"}\n{\"id\": \"q2\", \"response\": \"A\", \"prediction\": \"B\"}\n",
    )
    .unwrap();
    let err = import_all(&[file(&two, Some("m"))], None).unwrap_err().to_string();
    assert!(
        err.contains(
            "two.jsonl:1: field \"response\": the record has several fields that could hold the response: \
             \"response\", \"prediction\""
        ) && err.contains("--response-field prediction"),
        "{err}"
    );
    let mut chosen = file(&two, Some("m"));
    chosen.fields.response = Some("prediction".into());
    let imported = import_all(&[chosen], None).unwrap();
    assert_eq!(imported.predictions[0].response, Response::Text("B".into()));
    let scored = score_all(&questions(), &imported.predictions, &MetricsConfig::default()).unwrap();
    let s: Vec<f64> = scored.cell("m", "original").unwrap().iter().map(|i| i.outcome.score).collect();
    assert_eq!(s, [1.0, 1.0], "B is the gold of q1 and q2");

    // MODEL= on the command line and a model column that names another model.
    let named = dir.path().join("named.jsonl");
    std::fs::write(&named, "{\"model\": \"llava\", \"id\": \"q1\", \"response\": \"B\"}\n").unwrap();
    let err = import_all(&[file(&named, Some("gpt"))], None).unwrap_err().to_string();
    assert!(
        err.contains(
            "named.jsonl:1: field \"model\": the model is named \"gpt\" (--predictions gpt=FILE) and \"llava\" (field \
             \"model\")"
        ) && err.contains("--model-field model"),
        "{err}"
    );
    assert_eq!(import_all(&[file(&named, Some("llava"))], None).unwrap().predictions[0].model, "llava");
    let mut column_wins = file(&named, Some("gpt"));
    column_wins.fields.model = Some("model".into());
    assert_eq!(import_all(&[column_wins], None).unwrap().predictions[0].model, "llava");

    // The questions file passed as predictions: its gold would score 100%.
    let err = import_all(&[file(&fixture("questions.jsonl"), Some("m"))], None).unwrap_err().to_string();
    assert!(
        err.contains(
            "questions.jsonl:1: field \"answer\": these rows look like the questions, not a model's predictions"
        ) && err.contains("on 5 of 5 rows"),
        "{err}"
    );

    // One answer column per model, one of them misspelt.
    let wide = dir.path().join("wide.csv");
    std::fs::write(&wide, "id,gpt4o,llava\nq1,B,A\n").unwrap();
    let mut w = file(&wide, None);
    w.fields.wide = vec![("gpt4".into(), "GPT".into()), ("llava".into(), "LLaVA".into())];
    let err = import_all(&[w], None).unwrap_err().to_string();
    assert!(
        err.contains("wide.csv:2: field \"gpt4\": --wide gpt4=GPT: no record has the column \"gpt4\"")
            && err.contains("did you mean --wide gpt4o=GPT?"),
        "{err}"
    );
}

#[test]
fn a_list_of_several_answers_is_left_unparsed_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("lists.jsonl");
    std::fs::write(
        &p,
        "{\"id\": \"q1\", \"response\": [\"B\", \"A\"]}\n{\"id\": \"q2\", \"response\": [[\"B\"]]}\n\
         {\"id\": \"q3\", \"response\": [\"yes\", \"no\"]}\n{\"id\": \"q4\", \"response\": []}\n",
    )
    .unwrap();
    let imported = import_all(&[file(&p, Some("m"))], None).unwrap();
    let responses: Vec<&Response> = imported.predictions.iter().map(|x| &x.response).collect();
    assert_eq!(
        responses,
        [
            &Response::Several(vec!["B".into(), "A".into()]),
            &Response::Text("B".into()),
            &Response::Several(vec!["yes".into(), "no".into()]),
            &Response::Text(String::new()),
        ]
    );
    // q1's gold is B: the list's first element, which must not be scored.
    let scored = score_all(&questions(), &imported.predictions, &MetricsConfig::default()).unwrap();
    let cell = scored.cell("m", "original").unwrap();
    let seen: Vec<(&str, f64, bool)> =
        cell.iter().map(|i| (i.id.as_str(), i.outcome.score, i.outcome.parsed)).collect();
    assert_eq!(seen, [("q1", 0.0, false), ("q2", 1.0, true), ("q3", 0.0, false), ("q4", 0.0, false)]);
    assert_eq!(cell[0].response, "[\"B\",\"A\"]");
    assert_eq!(
        imported.several_warning().unwrap(),
        format!(
            "warning: 2 responses are a list of several answers (the first at {}:1, model \"m\", id \"q1\"); which \
             one the model meant is unknown, so they are left unparsed (scored 0, counted as unparsed)",
            blindspot::error::display_path(&p)
        )
    );
    // lmms-eval's own nesting of one answer is that answer; several filtered answers are a list.
    let lm = dir.path().join("m_samples_t.jsonl");
    std::fs::write(
        &lm,
        "{\"doc_id\": 0, \"doc\": {\"id\": \"q1\"}, \"resps\": [[\"B\"]], \"filtered_resps\": [\"B\"]}\n\
         {\"doc_id\": 1, \"doc\": {\"id\": \"q2\"}, \"resps\": [[\"B\", \"A\"]], \"filtered_resps\": [\"B\", \"A\"]}\n",
    )
    .unwrap();
    let lm = import_all(&[file(&lm, None)], None).unwrap();
    assert_eq!(lm.predictions[0].response, Response::Text("B".into()));
    assert_eq!(lm.predictions[1].response, Response::Several(vec!["B".into(), "A".into()]));
}

#[test]
fn an_index_map_giving_an_id_twice_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("llava.json");
    std::fs::write(
        &p,
        "{\n  \"acc\": 50.0,\n  \"results\": {\n    \"q1\": 1,\n    \"q2\": 0,\n    \"q1\": 0\n  }\n}\n",
    )
    .unwrap();
    let err = import_all(&[file(&p, None)], None).unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "{}:6: id \"q1\" is given twice (first at line 4): which answer counts is unknown",
            blindspot::error::display_path(&p)
        )),
        "{err}"
    );
}

#[test]
fn a_byte_order_mark_does_not_hide_a_harness_result_file() {
    let csv = fixture("bom/GPT4o_MyBench.csv");
    let lm = fixture("bom/llava-v1.5-7b/20260101_120000_samples_mybench.jsonl");
    assert!(std::fs::read(&csv).unwrap().starts_with(b"\xEF\xBB\xBF"));
    assert!(std::fs::read(&lm).unwrap().starts_with(b"\xEF\xBB\xBF"));
    assert_eq!(detect(&csv).unwrap(), Source::VlmEvalKit);
    assert_eq!(detect(&lm).unwrap(), Source::LmmsEval);
    let imported = import_all(&[file(&csv, None), file(&lm, None)], None).unwrap();
    let got: Vec<(String, String, String)> =
        imported.predictions.iter().map(|p| (p.model.clone(), p.id.clone(), format!("{:?}", p.response))).collect();
    let text = |s: &str| format!("{:?}", Response::Text(s.into()));
    assert_eq!(
        got,
        [
            ("GPT4o_MyBench".to_string(), "q1".to_string(), text("B")),
            ("GPT4o_MyBench".into(), "q2".into(), text("The answer is A.")),
            ("llava-v1.5-7b".into(), "q3".into(), text("Yes")),
            ("llava-v1.5-7b".into(), "q4".into(), text("12")),
        ]
    );
    let scored = score_all(&questions(), &imported.predictions, &MetricsConfig::default()).unwrap();
    let right = |m: &str| scored.cell(m, "original").unwrap().iter().map(|i| i.outcome.score).sum::<f64>();
    assert_eq!((right("GPT4o_MyBench"), right("llava-v1.5-7b")), (1.0, 2.0));
}

#[test]
fn a_file_column_or_model_given_twice_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.jsonl");
    std::fs::write(&p, "{\"id\": \"q1\", \"response\": \"B\"}\n").unwrap();
    let shown = p.display().to_string();
    let err = import_all(&[file(&p, Some("L1")), file(&p, Some("L1"))], None).unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "the prediction file is given twice (--predictions L1={shown} and L1={shown}): its answers would count twice"
        )),
        "{err}"
    );
    // Two spellings of one file are one file.
    let dotted = dir.path().join(".").join("m.jsonl");
    assert!(import_all(&[file(&p, Some("L1")), file(&dotted, Some("L2"))], None).is_err());
    // Two different files of one model are its samples (tries).
    let q = dir.path().join("m2.jsonl");
    std::fs::write(&q, "{\"id\": \"q1\", \"response\": \"A\"}\n").unwrap();
    assert_eq!(import_all(&[file(&p, Some("L1")), file(&q, Some("L1"))], None).unwrap().predictions.len(), 2);

    let wide = dir.path().join("wide.csv");
    std::fs::write(&wide, "id,a,b\nq1,B,A\n").unwrap();
    let mut w = file(&wide, None);
    w.fields.wide = vec![("a".into(), "L1".into()), ("b".into(), "L1".into())];
    let err = import_all(&[w.clone()], None).unwrap_err().to_string();
    assert!(
        err.contains(
            "field \"wide\": the model \"L1\" is named by two answer columns (\"a\" and \"b\"): each row would count \
             as two of its answers"
        ),
        "{err}"
    );
    w.fields.wide = vec![("a".into(), "L1".into()), ("a".into(), "L2".into())];
    let err = import_all(&[w], None).unwrap_err().to_string();
    assert!(
        err.contains(
            "the answer column \"a\" is given twice (models \"L1\" and \"L2\"): its answers would count twice"
        ),
        "{err}"
    );
}

#[test]
fn a_prediction_file_over_the_cap_is_refused_before_it_is_read() {
    use blindspot::ingest::bounded::Shape;
    use blindspot::predictions::{MAX_FILE_BYTES, read_capped};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.jsonl");
    std::fs::write(&p, "{\"id\": \"q1\", \"response\": \"B\"}\n".repeat(100)).unwrap();
    assert_eq!(read_capped(&p, Shape::Lines, 3000).unwrap().len(), 3000);
    let err = read_capped(&p, Shape::Lines, 2999).unwrap_err().to_string();
    assert!(
        err.contains("big.jsonl: the file is 3000 bytes, more than the 2999 bytes a prediction file may hold"),
        "{err}"
    );
    // A sparse file over the limit: refused from its size, nothing read.
    assert_eq!(MAX_FILE_BYTES, 192 << 20);
    let huge = dir.path().join("huge.jsonl");
    std::fs::File::create(&huge).unwrap().set_len(300 << 20).unwrap();
    let err = import_all(&[file(&huge, Some("m"))], None).unwrap_err().to_string();
    assert!(
        err.contains(
            "huge.jsonl: the file is 300 MiB, more than the 192 MiB a prediction file may hold: its answers are read \
             whole, which would need several times that in memory"
        ) && err.contains("split it into several files"),
        "{err}"
    );
}
