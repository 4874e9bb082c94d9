//! `metrics.json` written from the type is the same bytes as the `json!`
//! literal it replaced (kept here, verbatim, as the oracle), and reads back
//! as the type.

use std::collections::BTreeMap;

use serde_json::{Value as J, json};

use super::MetricsFile;
use crate::derived::{Derived, Paired};
use crate::predictions::{FileSummary, Imported, Prediction, Response, Source};
use crate::sample::{AnswerFormat, MraRule, Sample};
use crate::{GroupKey, Located, MetricsConfig, Report, compute, derived, score_all};

fn r6(x: f64) -> J {
    if x.is_finite() { json!((x * 1e6).round() / 1e6) } else { J::Null }
}

fn located(list: &[Located]) -> J {
    J::Array(list.iter().map(|l| json!({"location": l.location, "model": l.model, "id": l.id})).collect())
}

fn opt(x: Option<f64>) -> J {
    x.map_or(J::Null, r6)
}

fn paired_json(p: Option<&Paired>) -> J {
    p.map_or(J::Null, |p| {
        let mut v = json!({"value": opt(p.value), "n_paired": p.n_paired, "conditions": p.conditions});
        if let Some(why) = &p.reason {
            v["reason"] = json!(why);
        }
        v
    })
}

fn old_derived(d: &Derived) -> J {
    let mut o = serde_json::Map::new();
    let mut put = |k: &str, v: J| {
        if !v.is_null() {
            o.insert(k.to_string(), v);
        }
    };
    put("visual_dependence", paired_json(d.visual_dependence.as_ref()));
    put("caption_substitution", paired_json(d.caption_substitution.as_ref()));
    put("null_baseline", opt(d.null_baseline));
    put(
        "modality_differential",
        d.modality_differential.as_ref().map_or(J::Null, |m| {
            json!({
                "mean": r6(m.mean), "n": m.n, "zero_over_zero": m.zero_over_zero,
                "mean_gain_image": r6(m.mean_gain_image), "mean_gain_caption": r6(m.mean_gain_caption),
                "null_conditions": m.null_conditions,
            })
        }),
    );
    put("mirage_score", paired_json(d.mirage_score.as_ref()));
    put(
        "mirage_vs_guess",
        d.mirage_vs_guess.as_ref().map_or(J::Null, |g| {
            json!({"n_paired": g.n_paired, "mirage": r6(g.mirage), "guess": r6(g.guess), "gap": r6(g.gap), "ci95": [r6(g.ci95.0), r6(g.ci95.1)]})
        }),
    );
    if !d.mirage_rate.is_empty() {
        let m: serde_json::Map<String, J> = d
            .mirage_rate
            .iter()
            .map(|(c, r)| {
                (c.clone(), json!({"n": r.n, "abstained": r.abstained, "empty": r.empty, "mirages": r.mirages, "rate": r6(r.rate)}))
            })
            .collect();
        put("mirage_rate", J::Object(m));
    }
    put(
        "circular_eval",
        d.circular.as_ref().map_or(J::Null, |c| {
            json!({"circular_accuracy": opt(Some(c.accuracy)), "n": c.n, "first_rotation_accuracy": opt(Some(c.first_rotation)), "incomplete": c.incomplete})
        }),
    );
    put(
        "mmstar",
        d.mmstar.as_ref().map_or(J::Null, |m| {
            json!({"multimodal_gain": r6(m.gain), "n_paired": m.n_paired, "llm_base": m.llm_base, "text_only_accuracy": opt(m.text_only), "leakage": opt(m.leakage)})
        }),
    );
    let rb = &d.robustness;
    if !rb.tests.is_empty() || rb.gold_removed.is_some() {
        let tests: Vec<J> = rb
            .tests
            .iter()
            .map(|t| json!({"test": t.test, "conditions": t.conditions, "n_paired": t.n_paired, "fragility": r6(t.f), "robustness": r6(1.0 - t.f)}))
            .collect();
        let gold_removed =
            rb.gold_removed.as_ref().map_or(J::Null, |g| json!({"n_paired": g.n_paired, "fragility": r6(g.f)}));
        put("robustness", json!({"R": opt(rb.r), "tests": tests, "gold_removed": gold_removed}));
    }
    J::Object(o)
}

fn old_definitions() -> J {
    json!({
        "accuracy": "mean score over the predictions of the condition (1 correct, 0 wrong; numeric answers as settings.numeric says: exact, mra or tolerance:<rel>); abstentions, empty and unparsed responses score 0; ci95 = 2.5th/97.5th percentiles of 1,000 seeded bootstrap resamples of the questions; formats gives the accuracy per answer format, which accuracy mixes weighted by n",
        "abstention_rate": "share of responses that say the image is missing, cannot be seen, or refuse (phrase list in crates/predictions/src/abstain.rs), unless an explicit answer marker ([[B]], 'the answer is B') is given",
        "paired": "every metric comparing conditions is computed on the questions (parent ids) with a prediction in every condition it uses; n_paired is their number; with none in common the value is null with a reason",
        "visual_dependence": "(acc(original) - acc(no_image)) / acc(original), paired",
        "caption_substitution": "(acc(original) - acc(caption)) / acc(original), paired",
        "null_baseline": "mean accuracy over the null conditions present (no_image, white_image, noise_image)",
        "modality_differential": "mean over instances of (g_image - g_caption) / (|g_image| + |g_caption|), g = score - mean null score of the instance; 0/0 (both gains 0) counts as 0",
        "mirage_score": "acc(mirage) / acc(original), paired",
        "mirage_vs_guess": "acc(mirage) - acc(guess) over questions both answered; paired bootstrap ci95",
        "mirage_rate": "share of responses that neither abstain nor are empty",
        "circular_eval": "CircularEval (MMBench): a multiple-choice question with n options is asked n times, its options rotated by k = 0..n-1 (conditions circular@k); circular_accuracy = share of the questions with every rotation predicted (n) answered right in all of them; first_rotation_accuracy = accuracy of rotation 0 on the same questions; incomplete = questions with only some rotations predicted, left out",
        "mmstar": "multimodal_gain = acc(original) - acc(no_image), paired; leakage = max(0, acc(no_image) - text-only accuracy of the LLM base), both over the no_image questions the base also answered",
        "robustness": "R = mean over present tests of 1 - f_i; T1 max(0, acc(original) - acc(no_image)); T2 max(0, acc(no_image) - chance) / (1 - chance); T3 max(0, acc(original) - acc(option_shuffle)); T4 (0.5 max(0, orig - swap) + 0.3 max(0, swap - orig) + 0.2 max(0, unknown_option - orig)) / weights present, swap = largest distractor_swap@k (departure: the paper takes the first and last terms from text-only runs, so here at most one of the first two is non-zero); T5 max(0, acc(original) - acc(visual_substitution)) with the substituted gold; gold_removed reported outside R; T1, T3, T4, T5 and gold_removed paired over their conditions",
    })
}

/// The `json!` literal `metrics.json` was written with before it was a type.
fn old_to_json(report: &Report, imported: &Imported) -> J {
    let cfg = &report.config;
    let files: Vec<J> = imported
        .files
        .iter()
        .map(|f| json!({"file": f.file, "format": f.source.as_str(), "models": f.models}))
        .collect();
    let mut models = serde_json::Map::new();
    for (m, conds) in &report.cells {
        let mut cj = serde_json::Map::new();
        for (c, s) in conds {
            let groups: serde_json::Map<String, J> = s
                .groups
                .iter()
                .map(|(k, gs)| {
                    let inner: serde_json::Map<String, J> =
                        gs.iter().map(|(g, st)| (g.clone(), json!({"n": st.n, "accuracy": r6(st.accuracy)}))).collect();
                    (k.clone(), J::Object(inner))
                })
                .collect();
            let mut o = json!({
                "n": s.n,
                "correct": r6(s.correct),
                "accuracy": r6(s.accuracy),
                "ci95": [r6(s.ci95.0), r6(s.ci95.1)],
                "abstained": s.abstained,
                "abstention_rate": r6(s.abstention_rate),
                "unparsed": s.unparsed,
                "empty": s.empty,
                "missing": s.missing,
            });
            if !groups.is_empty() {
                o["groups"] = J::Object(groups);
            }
            o["formats"] = J::Object(
                s.formats.iter().map(|(f, st)| (f.clone(), json!({"n": st.n, "accuracy": r6(st.accuracy)}))).collect(),
            );
            cj.insert(c.clone(), o);
        }
        let d = report.derived.get(m).map_or(J::Null, old_derived);
        models.insert(m.clone(), json!({"conditions": cj, "derived": d}));
    }
    json!({
        "tool": {"name": "blindspot", "version": env!("CARGO_PKG_VERSION")},
        "settings": {
            "seed": cfg.seed,
            "resamples": cfg.resamples,
            "numeric": cfg.numeric.name(),
            "mra": match cfg.mra { MraRule::Strict => "strict", MraRule::Inclusive => "inclusive" },
            "group_by": cfg.group_by.iter().map(GroupKey::name).collect::<Vec<_>>(),
            "llm_bases": cfg.llm_bases,
            "strict": cfg.strict,
        },
        "rows": report.rows,
        "rows_per_condition": report.scored.rows_per_condition,
        "import": {
            "files": files,
            "predictions": report.scored.predictions,
            "unknown_ids": {"count": report.scored.unknown_count, "first": located(&report.scored.unknown)},
            "duplicates": {"count": report.scored.duplicate_count, "first": located(&report.scored.duplicates)},
        },
        "models": models,
        "definitions": old_definitions(),
    })
}

fn pred(model: &str, id: &str, text: &str, line: u64) -> Prediction {
    Prediction {
        model: model.into(),
        id: id.into(),
        response: Response::Text(text.into()),
        loc: crate::error::Location::line("p.jsonl", line),
    }
}

/// A variant row of `s` of `kind` with `options` and the gold at `gold`.
fn variant(s: &Sample, kind: &str, options: &[&str], gold: usize) -> Sample {
    let mut v = s.clone();
    v.id = format!("{}::{kind}", s.id);
    v.parent_id = Some(s.id.clone());
    v.variant = Some(kind.into());
    v.options = options.iter().map(|o| o.to_string()).collect();
    v.answer_index = Some(gold as i32);
    v.answer = options[gold].into();
    v
}

/// Questions of three formats, variant rows of the trap and rotation kinds, and
/// three models whose predictions give every derived metric a value (and one a
/// null with its reason), unknown ids and a duplicate.
fn report() -> (Report, Imported) {
    let mut rows = Vec::new();
    let mut questions = Vec::new();
    for i in 0..12 {
        let mut s = Sample::new(format!("s{i}"), format!("Which one {i}?"), "b");
        s.answer_format = AnswerFormat::MultipleChoice;
        s.options = vec!["a".into(), "b".into(), "c".into()];
        s.answer_index = Some(1);
        s.question_type = Some(if i % 3 == 0 { "color" } else { "count" }.into());
        s.meta.insert("organ".into(), if i % 2 == 0 { "head" } else { "chest" }.into());
        questions.push(s);
    }
    let mut yn = Sample::new("y0", "Is it?", "yes");
    yn.answer_format = AnswerFormat::YesNo;
    yn.meta.insert("organ".into(), "head".into());
    let mut num = Sample::new("n0", "How many?", "3");
    num.answer_format = AnswerFormat::Numeric;
    num.meta.insert("organ".into(), "chest".into());
    for s in &questions {
        for k in 0..3 {
            let opts = [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]][k];
            rows.push(variant(s, &format!("circular@{k}"), &opts, (3 + 1 - k) % 3));
        }
        rows.push(variant(s, "option_shuffle", &["c", "b", "a"], 1));
        rows.push(variant(s, "unknown_option", &["a", "b", "Unknown"], 1));
        rows.push(variant(s, "distractor_swap@1", &["x", "b", "c"], 1));
        rows.push(variant(s, "gold_removed", &["a", "c", "None of the above"], 2));
        rows.push(variant(s, "visual_substitution", &["a", "b", "c"], 0));
        rows.push(variant(s, "phantom0", &["a", "b", "c"], 1));
    }
    rows.extend(questions.iter().cloned());
    rows.push(yn);
    rows.push(num);
    rows.sort_by(|a, b| crate::sample::id_cmp(&a.id, &b.id));

    let letters = ["A", "B", "C"];
    let mut preds = Vec::new();
    let mut line = 0;
    let mut p = |model: &str, id: String, text: &str| {
        line += 1;
        preds.push(pred(model, &id, text, line));
    };
    for (i, s) in questions.iter().enumerate() {
        let id = &s.id;
        // vlm: right on the original, weaker without the image, mixed elsewhere.
        p("vlm", id.clone(), if i % 5 == 4 { "A" } else { "B" });
        p("vlm", format!("{id}::no_image"), if i % 2 == 0 { "B" } else { "I cannot see the image." });
        p("vlm", format!("{id}::white_image"), if i % 3 == 0 { "B" } else { "C" });
        p("vlm", format!("{id}::caption"), if i % 4 == 0 { "A" } else { "B" });
        p("vlm", format!("{id}::mirage"), if i < 7 { "[[B]]" } else { "[[C]]" });
        p("vlm", format!("{id}::guess"), if i < 4 { "My best guess is B." } else { "A" });
        for k in 0..3 {
            // Rotation k puts the gold at (4 - k) % 3; rotation 2 of the last four is left unpredicted.
            if k == 2 && i >= 8 {
                continue;
            }
            let right = letters[(4 - k) % 3];
            p("vlm", format!("{id}::circular@{k}"), if i % 3 == 1 && k == 1 { "A" } else { right });
        }
        p("vlm", format!("{id}::option_shuffle"), if i % 2 == 0 { "B" } else { "C" });
        p("vlm", format!("{id}::unknown_option"), "B");
        p("vlm", format!("{id}::distractor_swap@1"), if i % 3 == 0 { "A" } else { "B" });
        p("vlm", format!("{id}::gold_removed"), if i % 2 == 0 { "C" } else { "A" });
        p("vlm", format!("{id}::visual_substitution"), if i % 2 == 0 { "A" } else { "B" });
        p(
            "vlm",
            format!("{id}::phantom0"),
            match i % 4 {
                0 => "No image was included, hence no diagnosis can be made.",
                1 => "",
                _ => "It shows a fracture.",
            },
        );
        // llm: the VLM's text-only backbone.
        p("llm", format!("{id}::no_image"), if i % 3 == 0 { "B" } else { "A" });
        // blind: never right on the original, so its relative drops are undefined.
        p("blind", id.clone(), "C");
        p("blind", format!("{id}::no_image"), "C");
        p("blind", format!("{id}::caption"), "C");
    }
    p("vlm", "y0".into(), "yes");
    p("vlm", "n0".into(), "3.0");
    p("vlm", "n0".into(), "4");
    p("vlm", "ghost".into(), "A");
    p("llm", "s99::no_image".into(), "A");
    let cfg = MetricsConfig {
        group_by: vec![GroupKey::QuestionType, GroupKey::Meta("organ".into())],
        llm_bases: BTreeMap::from([("vlm".to_string(), "llm".to_string())]),
        resamples: 200,
        ..MetricsConfig::default()
    };
    let scored = score_all(&rows, &preds, &cfg).unwrap();
    let report = compute(&rows, scored, &cfg);
    let models = |m: &[(&str, usize)]| m.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let imported = Imported {
        predictions: preds,
        files: vec![
            FileSummary {
                file: "p.jsonl".into(),
                source: Source::Generic,
                models: models(&[("blind", 36), ("vlm", 231)]),
            },
            FileSummary { file: "llm.jsonl".into(), source: Source::LmmsEval, models: models(&[("llm", 13)]) },
        ],
    };
    (report, imported)
}

#[test]
fn the_type_writes_the_bytes_of_the_json_literal_it_replaced() {
    let (report, imported) = report();
    // The report exercises every part of the file.
    let d = &report.derived["vlm"];
    assert!(d.visual_dependence.is_some() && d.caption_substitution.is_some() && d.modality_differential.is_some());
    assert!(d.mirage_score.is_some() && d.mirage_vs_guess.is_some() && d.circular.is_some());
    assert!(d.mmstar.as_ref().is_some_and(|m| m.leakage.is_some()), "{:?}", d.mmstar);
    assert!(d.robustness.tests.len() == 5 && d.robustness.gold_removed.is_some(), "{:?}", d.robustness);
    assert_eq!(d.mirage_rate.len(), 2, "phantom0 and mirage");
    assert!(report.derived["blind"].visual_dependence.as_ref().is_some_and(|p| p.reason.is_some()));
    assert!(report.derived["llm"].mmstar.is_none());
    assert_eq!((report.scored.unknown_count, report.scored.duplicate_count), (2, 1));
    assert!(report.cells["vlm"]["original"].formats.len() == 3 && report.cells["vlm"]["original"].groups.len() == 2);
    assert_eq!(report.cells["vlm"]["no_image"].missing, None, "no_image scored against the parents");
    assert_eq!(report.cells["vlm"]["option_shuffle"].missing, Some(0));

    let old = serde_json::to_string_pretty(&old_to_json(&report, &imported)).unwrap();
    let file = report.file(&imported);
    let new = serde_json::to_string_pretty(&file).unwrap();
    assert!(old == new, "metrics.json differs from the json! literal:\n--- old\n{old}\n--- new\n{new}");
    // And what is written reads back as the type.
    let back: MetricsFile = serde_json::from_str(&new).unwrap();
    assert_eq!(back, file);
    assert_eq!(back.models["vlm"].conditions["original"].n, 14);
}

#[test]
fn a_non_finite_figure_is_null_and_reads_back_as_none() {
    let (report, imported) = report();
    let mut report = report;
    report.cells.get_mut("vlm").unwrap().get_mut("original").unwrap().accuracy = f64::NAN;
    let old = serde_json::to_string_pretty(&old_to_json(&report, &imported)).unwrap();
    let text = serde_json::to_string_pretty(&report.file(&imported)).unwrap();
    assert_eq!(old, text);
    let back: MetricsFile = serde_json::from_str(&text).unwrap();
    assert_eq!(back.models["vlm"].conditions["original"].accuracy, None);
    assert_eq!(derived::NULL_CONDITIONS.len(), 3);
}
