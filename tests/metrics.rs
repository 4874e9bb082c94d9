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
    let v = blindspot::variants::generate(&samples, &cfg_v, 42).unwrap();
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
