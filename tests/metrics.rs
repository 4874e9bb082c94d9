//! Metrics and B-Clean through the binary: the papers' published arithmetic
//! reproduced from synthetic prediction files built to their counts, bad
//! input reported where it is, and identical bytes whatever the thread count.

mod common;

use std::path::{Path, PathBuf};

use blindspot::error::Location;
use blindspot::metrics::{MetricsConfig, compute, score_all};
use blindspot::predictions::{Prediction, Response};
use blindspot::sample::Sample;
use common::blindspot;

/// `n` multiple-choice questions with `k` options, gold = i mod k.
fn write_questions(path: &Path, prefix: &str, n: usize, k: usize) {
    let mut text = String::new();
    for i in 0..n {
        let options: Vec<String> = (0..k).map(|j| format!("option {j} of {prefix}{i}")).collect();
        let q = serde_json::json!({
            "id": format!("{prefix}{i}"),
            "question": format!("Question {i} about the image?"),
            "options": options,
            "answer": options[i % k],
        });
        text.push_str(&q.to_string());
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

fn letter(i: usize) -> String {
    ((b'A' + i as u8) as char).to_string()
}

/// A prediction line answering question `i` right or wrong.
fn line(model: &str, id: &str, i: usize, k: usize, right: bool) -> String {
    let gold = i % k;
    let pick = if right { gold } else { (gold + 1) % k };
    serde_json::json!({"model": model, "id": id, "response": format!("[[{}]]", letter(pick))}).to_string() + "\n"
}

fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn pct1(x: &serde_json::Value) -> f64 {
    (x.as_f64().unwrap() * 1000.0).round() / 10.0
}

/// `blindspot metrics --samples Q --predictions P -o OUT`, which must succeed.
fn metrics_cli(q: &Path, p: &Path, out: &Path) {
    blindspot().args(["metrics", "--samples"]).arg(q).arg("--predictions").arg(p).arg("-o").arg(out).assert().success();
}

#[test]
fn visual_dependence_of_refcoco_from_the_seeing_is_not_reasoning_table() {
    // RefCOCO: acc(original) 73.5, acc(no_images) 1.6 -> Visual Dependence 97.8%.
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("refcoco.jsonl");
    write_questions(&q, "r", 1000, 4);
    let mut preds = String::new();
    for i in 0..1000 {
        preds.push_str(&line("vlm", &format!("r{i}"), i, 4, i < 735));
        preds.push_str(&line("vlm", &format!("r{i}::no_image"), i, 4, i < 16));
    }
    let p = dir.path().join("preds.jsonl");
    std::fs::write(&p, preds).unwrap();
    let out = dir.path().join("out");
    metrics_cli(&q, &p, &out);
    let m = read_json(&out.join("metrics.json"));
    let vlm = &m["models"]["vlm"];
    assert_eq!(pct1(&vlm["conditions"]["original"]["accuracy"]), 73.5);
    assert_eq!(pct1(&vlm["conditions"]["no_image"]["accuracy"]), 1.6);
    assert_eq!(pct1(&vlm["derived"]["visual_dependence"]["value"]), 97.8);
    assert_eq!(vlm["derived"]["visual_dependence"]["n_paired"], 1000);
    assert_eq!(vlm["derived"]["mmstar"]["multimodal_gain"].as_f64().unwrap(), 0.719);
    assert_eq!(vlm["conditions"]["no_image"]["missing"], serde_json::Value::Null, "scored against the parents");
    assert_eq!(vlm["conditions"]["original"]["missing"], 0);
    let ci = &vlm["conditions"]["original"]["ci95"];
    assert!(ci[0].as_f64().unwrap() < 0.735 && 0.735 < ci[1].as_f64().unwrap());
}

const MICROVQA: usize = 1042;
// Mirage, §5: mirage-mode correct answers on MicroVQA, and the original accuracy
// before -> after B-Clean, as counts over 1,042 and the 240 kept questions.
const MODELS: [(&str, std::ops::Range<usize>, usize, usize); 3] =
    [("GPT-5.1", 0..456, 641, 37), ("Gemini-2.5-Pro", 334..802, 662, 53), ("Gemini-3-Pro", 0..335, 717, 56)];

/// MicroVQA-shaped questions and predictions; returns (questions, predictions).
fn microvqa(dir: &Path) -> (PathBuf, PathBuf) {
    let q = dir.join("microvqa.jsonl");
    write_questions(&q, "m", MICROVQA, 5);
    let mut preds = String::new();
    for (model, mirage_right, before, kept_right) in MODELS {
        for i in 0..MICROVQA {
            preds.push_str(&line(model, &format!("m{i}::mirage"), i, 5, mirage_right.contains(&i)));
            // Kept questions are 802..1042: the first `kept_right` of them right,
            // the rest of the correct answers among the removed ones.
            let right = if i >= 802 { i - 802 < kept_right } else { i < before - kept_right };
            preds.push_str(&line(model, &format!("m{i}"), i, 5, right));
        }
    }
    let p = dir.join("preds.jsonl");
    std::fs::write(&p, preds).unwrap();
    (q, p)
}

fn run_metrics(q: &Path, p: &Path, out: &Path, threads: &str) {
    blindspot()
        .env("RAYON_NUM_THREADS", threads)
        .args(["metrics", "--bclean", "--samples"])
        .arg(q)
        .arg("--predictions")
        .arg(p)
        .arg("-o")
        .arg(out)
        .assert()
        .success();
}

#[test]
fn bclean_arithmetic_of_microvqa_from_the_mirage_paper() {
    let dir = tempfile::tempdir().unwrap();
    let (q, p) = microvqa(dir.path());
    let out = dir.path().join("out");
    run_metrics(&q, &p, &out, "2");
    let b = read_json(&out.join("bclean.json"));
    assert_eq!(b["n_questions"], 1042);
    assert_eq!(b["union"], 802);
    assert_eq!(b["kept_count"], 240, "MicroVQA: 240 of 1,042 kept");
    assert_eq!((802.0f64 / 1042.0 * 1000.0).round() / 10.0, 77.0, "77.0% removed");
    let model = |name: &str| b["models"].as_array().unwrap().iter().find(|m| m["model"] == name).unwrap().clone();
    let expect = [
        // (model, compromised, before %, after %) — the paper: 456/468/335; 61.5->15.4,
        // 63.5->22.1, 68.8->23.2 (no count of 240 rounds to 23.2: 56/240 = 23.3).
        ("GPT-5.1", 456, 61.5, 15.4),
        ("Gemini-2.5-Pro", 468, 63.5, 22.1),
        ("Gemini-3-Pro", 335, 68.8, 23.3),
    ];
    for (name, compromised, before, after) in expect {
        let m = model(name);
        assert_eq!(m["compromised"], compromised, "{name}");
        assert_eq!(m["mirage_answered"], 1042);
        assert_eq!(pct1(&m["accuracy_before"]["accuracy"]), before, "{name}");
        assert_eq!(pct1(&m["accuracy_after"]["accuracy"]), after, "{name}");
        assert_eq!(m["accuracy_after"]["n"], 240);
    }
    let order = serde_json::json!(["Gemini-3-Pro", "Gemini-2.5-Pro", "GPT-5.1"]);
    assert_eq!(b["ranking_before"], order);
    assert_eq!(b["ranking_after"], order, "MicroVQA's ranking holds after cleaning (Fig. 5c)");
    assert_eq!(b["kept"][0], "m802");
    assert_eq!(b["removed"][0], serde_json::json!({"id": "m0", "reason": "mirage:GPT-5.1,Gemini-3-Pro"}));
    // The mirage score of metrics.json from the same files: acc(mirage) / acc(original).
    let m = read_json(&out.join("metrics.json"));
    let g = &m["models"]["GPT-5.1"]["derived"];
    assert_eq!(g["mirage_score"]["value"].as_f64().unwrap(), ((456.0 / 641.0) * 1e6f64).round() / 1e6);
    assert_eq!(g["mirage_score"]["n_paired"], 1042);
}

#[test]
fn outputs_are_identical_on_reruns_and_with_one_or_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (q, p) = microvqa(dir.path());
    let runs = [("a", "1"), ("b", "2"), ("c", "2")];
    for (name, threads) in runs {
        run_metrics(&q, &p, &dir.path().join(name), threads);
    }
    for f in ["metrics.json", "bclean.json"] {
        let a = std::fs::read(dir.path().join("a").join(f)).unwrap();
        for name in ["b", "c"] {
            assert!(a == std::fs::read(dir.path().join(name).join(f)).unwrap(), "{f} differs in run {name}");
        }
    }
    // And the bootstrap does change with the seed (it is really seeded).
    let out = dir.path().join("d");
    blindspot()
        .args(["metrics", "--seed", "7", "--samples"])
        .arg(&q)
        .arg("--predictions")
        .arg(&p)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let ci = |p: PathBuf| read_json(&p).pointer("/models/GPT-5.1/conditions/original/ci95").cloned().unwrap();
    assert_ne!(ci(out.join("metrics.json")), ci(dir.path().join("a/metrics.json")));
}

#[test]
fn unknown_ids_are_counted_and_located_and_strict_makes_them_errors() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.jsonl");
    write_questions(&q, "x", 20, 3);
    let mut preds = String::new();
    for i in 0..20 {
        preds.push_str(&line("m", &format!("x{i}"), i, 3, true));
    }
    for i in 0..12 {
        preds.push_str(&line("m", &format!("typo{i}"), i, 3, true));
    }
    let p = dir.path().join("p.jsonl");
    std::fs::write(&p, &preds).unwrap();
    let out = dir.path().join("out");
    let ok = blindspot()
        .args(["metrics", "--samples"])
        .arg(&q)
        .arg("--predictions")
        .arg(&p)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&ok.get_output().stderr).to_string();
    assert!(stderr.contains("12 predictions name ids that are not in the given rows"), "{stderr}");
    assert!(stderr.contains("p.jsonl:21: model \"m\", id \"typo0\""), "{stderr}");
    assert!(!stderr.contains("typo10"), "only the first 10 are listed: {stderr}");
    let m = read_json(&out.join("metrics.json"));
    assert_eq!(m["import"]["unknown_ids"]["count"], 12);
    assert_eq!(m["import"]["unknown_ids"]["first"].as_array().unwrap().len(), 10);
    assert_eq!(m["models"]["m"]["conditions"]["original"]["accuracy"], 1.0);

    let strict = dir.path().join("strict");
    let fail = blindspot()
        .args(["metrics", "--strict", "--samples"])
        .arg(&q)
        .arg("--predictions")
        .arg(&p)
        .arg("-o")
        .arg(&strict)
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&fail.get_output().stderr).to_string();
    assert!(
        stderr.contains("p.jsonl:21: field \"id\": \"typo0\" (model \"m\") is not the id of any given sample"),
        "{stderr}"
    );
    assert!(stderr.contains("help: check that the predictions belong to this benchmark"), "{stderr}");
    assert!(stderr.contains("12 problems found"), "{stderr}");
    assert!(!strict.exists(), "nothing written on error");
    // A missing prediction file and a bad flag are located errors too (exit 1).
    let missing = blindspot()
        .args(["metrics", "--samples"])
        .arg(&q)
        .args(["--predictions", "nope.jsonl", "-o"])
        .arg(&strict)
        .assert()
        .code(1);
    assert!(String::from_utf8_lossy(&missing.get_output().stderr).contains("nope.jsonl: no such prediction file"));
    blindspot()
        .args(["metrics", "--group-by", "colour", "--samples"])
        .arg(&q)
        .arg("--predictions")
        .arg(&p)
        .arg("-o")
        .arg(&strict)
        .assert()
        .code(1);
}

fn pred(model: &str, id: &str, text: &str) -> Prediction {
    Prediction {
        model: model.into(),
        id: id.into(),
        response: Response::Text(text.into()),
        loc: Location::line("p.jsonl", 1),
    }
}

fn mc_samples(n: usize) -> Vec<Sample> {
    (0..n)
        .map(|i| {
            let mut s = Sample::new(format!("s{i}"), format!("Which one {i}?"), "b");
            s.answer_format = blindspot::sample::AnswerFormat::MultipleChoice;
            s.options = vec!["a".into(), "b".into(), "c".into(), "d".into()];
            s.answer_index = Some(1);
            s.images.push(blindspot::sample::ImageRef { path: Some(format!("{i}.png")), ..Default::default() });
            s
        })
        .collect()
}

#[test]
fn modality_differential_follows_the_formula_and_the_zero_over_zero_rule() {
    let samples = mc_samples(4);
    let mut preds = Vec::new();
    // s0: image helps, caption not -> +1; s1: both help -> 0; s2: nothing moves -> 0/0 -> 0;
    // s3: caption helps, image not -> -1. Null baseline: no_image only.
    let table = [("B", "A", "A"), ("B", "B", "A"), ("A", "A", "A"), ("A", "B", "A")];
    for (i, (orig, cap, null)) in table.iter().enumerate() {
        preds.push(pred("m", &format!("s{i}"), orig));
        preds.push(pred("m", &format!("s{i}::caption"), cap));
        preds.push(pred("m", &format!("s{i}::no_image"), null));
    }
    let cfg = MetricsConfig::default();
    let report = compute(&samples, score_all(&samples, &preds, &cfg).unwrap(), &cfg);
    let md = report.derived["m"].modality_differential.clone().unwrap();
    assert_eq!((md.n, md.zero_over_zero), (4, 1));
    assert_eq!(md.mean, 0.0, "(+1 + 0 + 0 - 1) / 4");
    assert_eq!(md.mean_gain_image, 0.5);
    let cs = report.derived["m"].caption_substitution.clone().unwrap();
    assert_eq!(cs.value, Some(0.0), "acc 0.5 with image and with caption");
    assert_eq!(blindspot::metrics::derived::modality_differential_i(0.5, -0.5), (1.0, false));
}

#[test]
fn mirage_rate_mirage_vs_guess_and_robustness() {
    let samples = mc_samples(10);
    let kinds = ["option_shuffle", "unknown_option", "distractor_swap", "gold_removed", "phantom0"];
    let sel = kinds.iter().map(|k| blindspot::variants::parse_kind(k).unwrap()).collect();
    let cfg_v = blindspot::variants::VariantsConfig { kinds: sel, ..Default::default() };
    let v = blindspot::variants::generate(&samples, &cfg_v).unwrap();
    let mut rows = samples.clone();
    for k in &v.kinds {
        rows.extend(k.rows.iter().cloned());
    }
    let mut preds = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        preds.push(pred("m", &s.id, "B"));
        preds.push(pred("m", &format!("{}::mirage", s.id), if i < 6 { "[[B]]" } else { "[[A]]" }));
        preds.push(pred("m", &format!("{}::guess", s.id), if i < 3 { "My best guess is B." } else { "A" }));
        preds.push(pred("m", &format!("{}::no_image", s.id), if i < 5 { "B" } else { "I cannot see the image." }));
    }
    // Traps: right on half of the shuffled rows, always right with "Unknown", always picks the removed gold's slot wrongly.
    for k in &v.kinds {
        for (j, r) in k.rows.iter().enumerate() {
            let gold = r.answer_index.map(|g| letter(g as usize)).unwrap_or_default();
            let text = match k.kind.name().as_str() {
                "option_shuffle" if j % 2 == 0 => gold,
                "option_shuffle" => "(Z)".into(),
                "unknown_option" => gold,
                n if n.starts_with("distractor_swap") => gold,
                "gold_removed" => "none".into(),
                _ if j < 150 => "Based on the visual evidence, this is a Neo-Gothic building.".into(),
                _ if j < 190 => "No image was included, hence no diagnosis can be made.".into(),
                _ => String::new(),
            };
            preds.push(pred("m", &r.id, &text));
        }
    }
    let cfg = MetricsConfig::default();
    let report = compute(&rows, score_all(&rows, &preds, &cfg).unwrap(), &cfg);
    let d = &report.derived["m"];
    let rate = &d.mirage_rate["phantom0"];
    assert_eq!((rate.n, rate.mirages, rate.abstained, rate.empty), (200, 150, 40, 10));
    assert_eq!(rate.rate, 0.75);
    let ms = d.mirage_score.clone().unwrap();
    assert_eq!((ms.value, ms.n_paired), (Some(0.6), 10));
    let g = d.mirage_vs_guess.clone().unwrap();
    assert_eq!((g.n_paired, g.mirage, g.guess), (10, 0.6, 0.3));
    assert!((g.gap - 0.3).abs() < 1e-12 && g.ci95.0 <= g.gap && g.gap <= g.ci95.1);
    assert_eq!(report.cells["m"]["no_image"].abstention_rate, 0.5);
    let f = |t: &str| d.robustness.tests.iter().find(|x| x.test == t).map(|x| x.f);
    assert_eq!(f("T1_modality_sensitivity"), Some(0.5), "1.0 - 0.5");
    assert!((f("T2_modality_necessity").unwrap() - (0.5 - 0.25) / 0.75).abs() < 1e-12);
    assert_eq!(f("T3_format"), Some(0.5));
    assert_eq!(f("T4_distractors"), Some(0.0), "no change with swapped distractors or Unknown");
    assert_eq!(f("T5_visual_substitution"), None, "no visual_substitution rows");
    let r = d.robustness.r.unwrap();
    assert!((r - (0.5 + (1.0 - 0.25 / 0.75) + 0.5 + 1.0) / 4.0).abs() < 1e-12, "{r}");
    let g = d.robustness.gold_removed.clone().unwrap();
    assert_eq!((g.f, g.n_paired), (1.0, 10));
}

/// Writes predictions of `model` for question indices `which` in `condition`
/// (`original` for the questions themselves), right where `right(i)`.
fn lines_for(model: &str, condition: &str, which: std::ops::Range<usize>, right: impl Fn(usize) -> bool) -> String {
    which
        .map(|i| {
            let id = if condition == "original" { format!("q{i}") } else { format!("q{i}::{condition}") };
            line(model, &id, i, 4, right(i))
        })
        .collect()
}

#[test]
fn derived_metrics_compare_conditions_on_the_questions_both_answered() {
    // 20 questions, of which 10 (q10..q19) have an image and so a no_image row.
    // The model is right on every text-only question, and on 5 of the 10 image
    // questions both with and without the image: the image changes nothing.
    // Whole cells would give (15/20 - 5/10) / (15/20) = 33.3%; paired, it is 0.
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.jsonl");
    write_questions(&q, "q", 20, 4);
    let mut preds = lines_for("vlm", "original", 0..20, |i| i < 15);
    preds.push_str(&lines_for("vlm", "no_image", 10..20, |i| i < 15));
    // A second model whose no_image rows share no question with its originals.
    preds.push_str(&lines_for("apart", "original", 0..5, |_| true));
    preds.push_str(&lines_for("apart", "no_image", 10..15, |_| false));
    let p = dir.path().join("preds.jsonl");
    std::fs::write(&p, preds).unwrap();
    let out = dir.path().join("out");
    metrics_cli(&q, &p, &out);
    let m = read_json(&out.join("metrics.json"));
    let d = &m["models"]["vlm"]["derived"];
    assert_eq!(m["models"]["vlm"]["conditions"]["original"]["accuracy"], 0.75, "the whole cell is unchanged");
    assert_eq!(d["visual_dependence"]["value"], 0.0);
    assert_eq!(d["visual_dependence"]["n_paired"], 10);
    assert_eq!(d["mmstar"]["multimodal_gain"], 0.0);
    assert_eq!(d["mmstar"]["n_paired"], 10);
    let t1 = d["robustness"]["tests"].as_array().unwrap().iter().find(|t| t["test"] == "T1_modality_sensitivity");
    assert_eq!(t1.unwrap()["fragility"], 0.0);
    assert_eq!(t1.unwrap()["n_paired"], 10);
    let apart = &m["models"]["apart"]["derived"]["visual_dependence"];
    assert_eq!(apart["value"], serde_json::Value::Null, "no question in common: no number");
    assert_eq!(apart["n_paired"], 0);
    assert!(apart["reason"].as_str().unwrap().contains("no question has a prediction in every one of"), "{apart}");
}

/// Reads a Parquet file into (column name → the column's values as strings).
fn parquet_columns(path: &Path) -> std::collections::BTreeMap<String, Vec<String>> {
    use arrow::array::Array;
    let file = std::fs::File::open(path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
    let mut out: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
    for batch in reader {
        let batch = batch.unwrap();
        for (f, col) in batch.schema().fields().iter().zip(batch.columns()) {
            let shown = arrow::util::display::ArrayFormatter::try_new(col.as_ref(), &Default::default()).unwrap();
            let v = out.entry(f.name().clone()).or_default();
            v.extend(
                (0..col.len()).map(|i| if col.is_null(i) { "null".to_string() } else { shown.value(i).to_string() }),
            );
        }
    }
    out
}

/// Numeric answers are scored as the setting says (exact by default, as
/// published scorers), the headline says what it mixes, and every scored
/// response is in `per_question.parquet` with the answer read from it.
#[test]
fn numeric_scoring_is_a_setting_and_every_response_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.jsonl");
    let mut text = String::new();
    for i in 0..4 {
        let options: Vec<String> = (0..4).map(|j| format!("choice {j}")).collect();
        text.push_str(&serde_json::json!({"id": format!("m{i}"), "question": "Which?", "options": options, "answer": options[i % 4]}).to_string());
        text.push('\n');
        let gold = 10 * (i + 1);
        text.push_str(&serde_json::json!({"id": format!("n{i}"), "question": "How many?", "answer": gold.to_string(), "answer_format": "numeric"}).to_string());
        text.push('\n');
    }
    std::fs::write(&q, text).unwrap();
    // Multiple choice: 2 of 4 right. Numeric: golds 10, 20, 30, 40 answered 10,
    // 21 (5% off), 33 (10%), 48 (20%).
    let mut preds = String::new();
    for (i, r) in ["[[A]]", "[[B]]", "[[A]]", "[[A]]"].iter().enumerate() {
        preds.push_str(&(serde_json::json!({"model": "m", "id": format!("m{i}"), "response": r}).to_string() + "\n"));
    }
    for (i, r) in ["10", "It is 21.", "33", "48"].iter().enumerate() {
        preds.push_str(&(serde_json::json!({"model": "m", "id": format!("n{i}"), "response": r}).to_string() + "\n"));
    }
    let p = dir.path().join("p.jsonl");
    std::fs::write(&p, preds).unwrap();
    let run = |numeric: Option<&str>| {
        let out = dir.path().join(numeric.unwrap_or("default").replace(':', "_"));
        let mut cmd = blindspot();
        cmd.args(["metrics", "--samples"]).arg(&q).arg("--predictions").arg(&p).arg("-o").arg(&out);
        if let Some(n) = numeric {
            cmd.args(["--numeric", n]);
        }
        cmd.assert().success();
        (read_json(&out.join("metrics.json")), out)
    };
    // Exact: numeric 1/4; overall (2 + 1) / 8.
    let (exact, out) = run(None);
    let cell = &exact["models"]["m"]["conditions"]["original"];
    assert_eq!(exact["settings"]["numeric"], "exact");
    assert_eq!(cell["accuracy"], 0.375);
    assert_eq!(cell["formats"]["multiple_choice"]["accuracy"], 0.5);
    assert_eq!(cell["formats"]["numeric"]["accuracy"], 0.25);
    assert_eq!(cell["formats"]["numeric"]["n"], 4);
    // MRA (strict): 1.0, 0.9, 0.8, 0.6 -> 0.825; overall (2 + 3.3) / 8.
    let (mra, _) = run(Some("mra"));
    let cell = &mra["models"]["m"]["conditions"]["original"];
    assert!((cell["formats"]["numeric"]["accuracy"].as_f64().unwrap() - 0.825).abs() < 1e-6, "{cell}");
    assert!((cell["accuracy"].as_f64().unwrap() - 5.3 / 8.0).abs() < 1e-6, "{cell}");
    // Within 6%: 10 and 21.
    let (tol, _) = run(Some("tolerance:0.06"));
    assert_eq!(tol["models"]["m"]["conditions"]["original"]["formats"]["numeric"]["accuracy"], 0.5);
    blindspot()
        .args(["metrics", "--samples"])
        .arg(&q)
        .arg("--predictions")
        .arg(&p)
        .args(["-o", "/nonexistent/x", "--numeric", "close"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("\"exact\", \"mra\" or \"tolerance:<rel>\""));
    let cols = parquet_columns(&out.join("per_question.parquet"));
    assert_eq!(cols["id"], ["m0", "m1", "m2", "m3", "n0", "n1", "n2", "n3"]);
    assert_eq!(cols["condition"], vec!["original"; 8]);
    assert_eq!(cols["parsed_answer"], ["A", "B", "A", "A", "10", "21", "33", "48"]);
    assert_eq!(cols["score"], ["1.0", "1.0", "0.0", "0.0", "1.0", "0.0", "0.0", "0.0"]);
    assert_eq!(cols["response"][5], "It is 21.");
    assert_eq!(cols["unparsed"], vec!["false"; 8]);
}

/// Accuracy of `model`'s `original` cell in a metrics.json.
fn accuracy_of(m: &serde_json::Value, model: &str) -> (f64, u64) {
    let c = &m["models"][model]["conditions"]["original"];
    (c["accuracy"].as_f64().unwrap_or_else(|| panic!("no {model} in {m}")), c["n"].as_u64().unwrap())
}

/// Result files in the shapes they are published in import with no conversion,
/// and score what a hand count gives: a VLMEvalKit result `.xlsx` without
/// blindspot's columns (`outputs/<model>/<model>_<dataset>.xlsx`), a JSON object
/// keyed by id with reasoning responses (MathVista's layout), and a table with
/// one answer column per model and per human annotator.
#[test]
fn published_result_files_import_as_they_are() {
    let fixtures = common::root().join("tests/fixtures/predictions");
    let q = fixtures.join("questions.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let runs = std::cell::Cell::new(0);
    let run = |preds: &[&str], extra: &[&str]| {
        runs.set(runs.get() + 1);
        let out = dir.path().join(format!("out{}", runs.get()));
        let mut cmd = blindspot();
        cmd.args(["metrics", "--samples"]).arg(&q).arg("--predictions").args(preds).args(extra).arg("-o").arg(&out);
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        read_json(&out.join("metrics.json"))
    };
    // VLMEvalKit: index = the benchmark's id; the model from the folder. Right: q1, q3, q4.
    let xlsx = fixtures.join("GPT4o/GPT4o_MyBench.xlsx");
    let m = run(&[xlsx.to_str().unwrap()], &[]);
    assert_eq!(accuracy_of(&m, "GPT4o"), (0.6, 5));
    assert_eq!(m["import"]["unknown_ids"]["count"], 0);
    // Keyed by id, reasoning responses with their final answers: q1 B (right), q2 C
    // (wrong), q3 yes, q4 boxed 12, q5 liver (right) -> 4/5. The extraction column
    // (--response-field) holds the benchmark's own extracted answers -> 3/5.
    let keyed = dir.path().join("mathvista_style.json");
    let rec = |pid: &str, response: &str, extraction: &str| serde_json::json!({"pid": pid, "response": response, "extraction": extraction});
    let doc = serde_json::json!({
        "q1": rec("q1", "The text addresses the goddess directly. The answer is B.", "B"),
        "q2": rec("q2", "'will print' is future, but wait... the answer is (C).", "C"),
        "q3": rec("q3", "Yes, clouds cover most of the sky.", "yes"),
        "q4": rec("q4", "Counting left to right gives \\boxed{12}", "11"),
        "q5": rec("q5", "The shape and position point to the liver.\nAnswer: liver", "liver"),
    });
    std::fs::write(&keyed, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let arg = format!("cot={}", keyed.display());
    assert_eq!(accuracy_of(&run(&[&arg], &[]), "cot"), (0.8, 5));
    assert_eq!(accuracy_of(&run(&[&arg], &["--response-field", "extraction"]), "cot"), (0.6, 5));
    // One answer column per model; a blank cell is no answer.
    let wide = dir.path().join("wide.csv");
    std::fs::write(
        &wide,
        "id,GPT_0_SHOT,GEM_4_SHOT,HUMAN_ANSWER_1\nq1,B,A,B\nq2,B,B,\nq3,no,yes,yes\nq4,12,13,12\nq5,liver,liver,kidney\n",
    )
    .unwrap();
    let m = run(
        &[wide.to_str().unwrap()],
        &["--wide", "GPT_0_SHOT=gpt", "--wide", "GEM_4_SHOT=gemini", "--wide", "HUMAN_ANSWER_1=human"],
    );
    assert_eq!(accuracy_of(&m, "gpt"), (0.8, 5));
    assert_eq!(accuracy_of(&m, "gemini"), (0.6, 5));
    assert_eq!(accuracy_of(&m, "human"), (0.75, 4));
}

/// Runs `blindspot ARGS`, expecting exit `code`; returns stderr.
fn run_expecting(args: &[std::ffi::OsString], code: i32) -> String {
    let out = blindspot().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    stderr
}

#[test]
fn metrics_refuses_a_group_field_no_row_has_and_rows_files_that_disagree() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.jsonl");
    write_questions(&q, "x", 10, 3);
    let mut preds = String::new();
    for i in 0..10 {
        preds.push_str(&line("m", &format!("x{i}"), i, 3, true));
    }
    let p = dir.path().join("p.jsonl");
    std::fs::write(&p, &preds).unwrap();
    let out = dir.path().join("out");
    let os = |s: &str| std::ffi::OsString::from(s);
    let base = |extra: &[&str]| -> Vec<std::ffi::OsString> {
        let mut v: Vec<std::ffi::OsString> = vec![os("metrics")];
        v.extend(extra.iter().map(|s| os(s)));
        v.extend([os("--predictions"), p.clone().into(), os("-o"), out.clone().into()]);
        v
    };
    let q_s = q.to_str().unwrap();
    let stderr = run_expecting(&(base(&["--group-by", "meta:nonexistent", "--samples", q_s])), 1);
    assert!(
        stderr
            .contains("[metrics] group-by (--group-by): field \"group-by\": no row has the meta field \"nonexistent\"")
            && stderr.contains("the rows carry no meta field"),
        "{stderr}"
    );
    assert!(!out.exists());

    // The same question in two rows files with another gold: which to score against is unknown.
    let q2 = dir.path().join("q2.jsonl");
    let text = std::fs::read_to_string(&q).unwrap();
    std::fs::write(&q2, text.replace("\"answer\":\"option 0 of x3\"", "\"answer\":\"option 1 of x3\"")).unwrap();
    assert_ne!(std::fs::read_to_string(&q2).unwrap(), text, "the copy changes x3's gold");
    let stderr = run_expecting(&(base(&["--samples", q_s, q2.to_str().unwrap()])), 1);
    assert!(
        stderr.contains(&format!(
            "{}: field \"answer\": id \"x3\" is also in {}, with another answer: \"option 0 of x3\" there, \"option 1 \
             of x3\" here; which one to score against is unknown",
            blindspot::error::display_path(&q2),
            blindspot::error::display_path(&q)
        )),
        "{stderr}"
    );
    assert!(!out.exists());
    // An identical copy (a release's `full` config repeats `data`'s rows) is read once.
    let q3 = dir.path().join("q3.jsonl");
    std::fs::write(&q3, &text).unwrap();
    run_expecting(&(base(&["--samples", q_s, q3.to_str().unwrap()])), 0);
    let m = read_json(&out.join("metrics.json"));
    assert_eq!(m["models"]["m"]["conditions"]["original"]["n"], 10);
    assert_eq!(m["rows"], 10);
}

#[test]
fn filter_counts_each_model_once_bounds_min_correct_and_warns_of_unknown_ids() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.jsonl");
    write_questions(&q, "x", 10, 3);
    let mut preds = String::new();
    for m in ["L1", "L2"] {
        for i in 0..10 {
            preds.push_str(&line(m, &format!("x{i}::no_image"), i, 3, i < 4));
        }
    }
    preds.push_str(&line("L1", "typo1::no_image", 1, 3, true));
    preds.push_str(&line("L2", "typo2::no_image", 2, 3, true));
    let p = dir.path().join("p.jsonl");
    std::fs::write(&p, &preds).unwrap();
    let out = dir.path().join("out");
    let args = |extra: &[&str]| -> Vec<std::ffi::OsString> {
        let mut v: Vec<std::ffi::OsString> = ["filter", "--samples"].iter().map(Into::into).collect();
        v.extend([q.clone().into(), "--predictions".into(), p.clone().into(), "-o".into(), out.clone().into()]);
        v.extend(extra.iter().map(Into::into));
        v
    };
    let run = |extra: &[&str], code: i32| run_expecting(&args(extra), code);
    let stderr = run(&["--conditions", "no_image", "--models", "L1,L2,L1", "--min-models", "2"], 1);
    assert!(
        stderr.contains(
            "command line: --models names the model \"L1\" twice: its answers would count as two models'; list each \
             model once"
        ),
        "{stderr}"
    );
    let stderr = run(&["--preset", "mmstar", "--models", "L1,L2,L2,L2"], 1);
    assert!(stderr.contains("--models names the model \"L2\" twice"), "{stderr}");
    let stderr = run(&["--conditions", "no_image", "--min-correct", "1000000"], 1);
    assert!(
        stderr.contains(
            "--min-correct must be between 1 and 1000 (a model's samples (tries) for one question); found 1000000"
        ),
        "{stderr}"
    );
    let stderr = run(&["--conditions", "no_image", "--min-correct", "2"], 1);
    assert!(
        stderr.contains(
            "field \"min-correct\": min-correct 2 asks a model to be right in 2 of its samples for a question, but no \
             model has more than 1 for one question under no_image: the rule could remove nothing"
        ),
        "{stderr}"
    );
    assert!(!out.exists());
    let stderr = run(&["--conditions", "no_image", "--min-models", "2"], 0);
    let shown = blindspot::error::display_path(&p);
    assert!(
        stderr.contains(&format!(
            "warning: 2 predictions under no_image name ids that are not among the questions (skipped; results of a \
             `blindspot export` map to ids through --manifest):\n  {shown}:21: model \"L1\", id \"typo1::no_image\"\n  \
             {shown}:22: model \"L2\", id \"typo2::no_image\""
        )),
        "{stderr}"
    );
    let f = read_json(&out.join("filter.json"));
    assert_eq!((f["unknown_predictions"].as_u64(), f["removed"].as_array().unwrap().len()), (Some(2), 4));
}
