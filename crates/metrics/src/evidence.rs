//! What models' own answers say about a pruned release (predictions ─▶
//! metrics ─▶ `report/gap.json`, `report/label_audit.csv`):
//!
//! - **The gap that pruning buys**: per model, accuracy with the image
//!   (`original`) and without it (`no_image`, else `caption`) on the full,
//!   kept and removed sets and on the matched random control's kept set, each
//!   on the questions both conditions answer (paired), with the gap's
//!   bootstrap CI; and whether the kept set's gap exceeds the control's.
//! - **Gold-label audit**: questions where sighted models agree on one answer
//!   that is not the gold — listed, never removed.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::{MetricsConfig, ORIGINAL, Scored, bootstrap_mean_ci};
use crate::sample::{Sample, id_cmp};

/// Blind conditions the gap is measured against, in order of preference.
pub const BLIND_CONDITIONS: [&str; 2] = ["no_image", "caption"];

/// A score at or above this counts as right.
const CORRECT: f64 = 0.5;

/// One model on one set, on the questions both conditions answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GapCell {
    /// `full`, `kept`, `removed` or `control_kept`.
    pub set: String,
    /// Questions of the set.
    pub questions: usize,
    /// Of them, answered by the model in both conditions (every figure's n).
    pub n_paired: usize,
    pub with_image: f64,
    pub without_image: f64,
    /// with_image − without_image.
    pub gap: f64,
    /// Bootstrap 95% CI of the gap (questions resampled, pairs kept together).
    pub gap_ci95: (f64, f64),
}

/// The kept set's gap against the random control's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GapVersusControl {
    /// gap(kept) − gap(control_kept).
    pub difference: f64,
    /// Bootstrap 95% CI, the two sets resampled independently (they share
    /// questions, so the interval is wider than a joint one).
    pub ci95: (f64, f64),
    /// `wider`, `narrower` or `no different` (the CI excludes 0 or not).
    pub verdict: String,
}

/// One model's gaps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModelGap {
    pub model: String,
    /// The blind condition compared with `original`.
    pub blind_condition: String,
    pub sets: Vec<GapCell>,
    pub versus_control: Option<GapVersusControl>,
    /// One sentence for the card.
    pub sentence: String,
}

/// `report/gap.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GapReport {
    pub models: Vec<ModelGap>,
    /// Why there is no model (no blind predictions), and what to run.
    pub missing: Option<String>,
}

/// The sets to measure: name and ids (`None`: every question).
pub struct Sets<'a> {
    pub kept: &'a HashSet<&'a str>,
    /// The matched random control's kept ids, when it ran.
    pub control_kept: Option<&'a HashSet<&'a str>>,
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 }
}

/// Per-question scores of a cell, by question id.
fn by_question<'s>(scored: &'s Scored, model: &str, condition: &str) -> HashMap<&'s str, f64> {
    scored.cell(model, condition).unwrap_or(&[]).iter().map(|i| (i.parent.as_str(), i.outcome.score)).collect()
}

/// The gap report from predictions scored against the full set (`full`).
pub fn gap(full: &[Sample], scored: &Scored, sets: &Sets<'_>, cfg: &MetricsConfig) -> GapReport {
    let mut models = Vec::new();
    for model in scored.cells.keys() {
        let with = by_question(scored, model, ORIGINAL);
        if with.is_empty() {
            continue;
        }
        let Some(blind) =
            BLIND_CONDITIONS.iter().find(|c| scored.cell(model, c).is_some_and(|items| !items.is_empty()))
        else {
            continue;
        };
        let without = by_question(scored, model, blind);
        let diffs = |member: &dyn Fn(&str) -> bool| -> (usize, Vec<(f64, f64)>) {
            let mut questions = 0;
            let mut pairs = Vec::new();
            for s in full.iter().filter(|s| member(&s.id)) {
                questions += 1;
                if let (Some(a), Some(b)) = (with.get(s.id.as_str()), without.get(s.id.as_str())) {
                    pairs.push((*a, *b));
                }
            }
            (questions, pairs)
        };
        let cell = |set: &str, member: &dyn Fn(&str) -> bool| -> (GapCell, Vec<f64>) {
            let (questions, pairs) = diffs(member);
            let d: Vec<f64> = pairs.iter().map(|(a, b)| a - b).collect();
            let a: Vec<f64> = pairs.iter().map(|p| p.0).collect();
            let b: Vec<f64> = pairs.iter().map(|p| p.1).collect();
            let ci = bootstrap_mean_ci(&d, cfg.resamples, cfg.seed, "metrics.gap", &format!("{model}/{set}"));
            let c = GapCell {
                set: set.into(),
                questions,
                n_paired: pairs.len(),
                with_image: mean(&a),
                without_image: mean(&b),
                gap: mean(&d),
                gap_ci95: ci,
            };
            (c, d)
        };
        let kept = sets.kept;
        let (full_c, _) = cell("full", &|_| true);
        let (kept_c, kept_d) = cell("kept", &|id| kept.contains(id));
        let (removed_c, _) = cell("removed", &|id| !kept.contains(id));
        let mut cells = vec![full_c, kept_c.clone(), removed_c];
        let mut versus = None;
        if let Some(control) = sets.control_kept {
            let (control_c, control_d) = cell("control_kept", &|id| control.contains(id));
            if !kept_d.is_empty() && !control_d.is_empty() {
                let seed = crate::seed::rng_for(cfg.seed, "metrics.gap.versus", model);
                let diffs = crate::stats::bootstrap_difference_ci(&kept_d, &control_d, cfg.resamples, seed);
                let difference = kept_c.gap - control_c.gap;
                let verdict = if diffs.0 > 0.0 {
                    "wider"
                } else if diffs.1 < 0.0 {
                    "narrower"
                } else {
                    "no different"
                };
                versus = Some(GapVersusControl { difference, ci95: diffs, verdict: verdict.into() });
            }
            cells.push(control_c);
        }
        let pct = |v: f64| format!("{:.1}", v * 100.0);
        let sentence = match &versus {
            Some(v) => format!(
                "{model}: the gap with and without the image is {} points on the kept set vs {} on the full set and {} on a matched random removal; pruning left it {} ({:+.1} points, 95% CI {:+.1} to {:+.1}).",
                pct(cells[1].gap),
                pct(cells[0].gap),
                pct(cells[3].gap),
                if v.verdict == "no different" {
                    "no wider than random removal did".to_string()
                } else {
                    format!("{} than random removal did, beyond the CI", v.verdict)
                },
                v.difference * 100.0,
                v.ci95.0 * 100.0,
                v.ci95.1 * 100.0
            ),
            None => format!(
                "{model}: the gap with and without the image is {} points on the kept set vs {} on the full set; no matched random removal to compare with (set `control = true` in [prune]).",
                pct(cells[1].gap),
                pct(cells[0].gap)
            ),
        };
        models.push(ModelGap {
            model: model.clone(),
            blind_condition: blind.to_string(),
            sets: cells,
            versus_control: versus,
            sentence,
        });
    }
    let missing = models.is_empty().then(|| {
        "no model has predictions both with the image (original) and without it (no_image or caption): add \"no_image\" \
         to [variants] kinds, run `blindspot export` on the release, and import the models' answers in [predictions]"
            .to_string()
    });
    GapReport { models, missing }
}

/// A question sighted models answer alike, but not with the gold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AuditRow {
    pub id: String,
    pub gold: String,
    /// The answer the models agree on, as read from their responses.
    pub agreed: String,
    /// Models giving it, and models that answered at all.
    pub agreeing: usize,
    pub answered: usize,
    /// `kept` or `removed` (pruning or the filter).
    pub set: String,
    /// model → its response as given.
    pub responses: BTreeMap<String, String>,
}

/// How many sighted models must agree on one wrong answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditRule {
    /// Every model that answered, and at least this many.
    All { at_least: usize },
    /// At least this many models on one answer.
    AtLeast(usize),
}

impl Default for AuditRule {
    fn default() -> Self {
        AuditRule::All { at_least: 3 }
    }
}

impl AuditRule {
    /// `all` or a whole number from 2.
    pub fn parse(s: &str) -> std::result::Result<AuditRule, String> {
        match s {
            "all" => Ok(AuditRule::default()),
            _ => match s.parse::<usize>() {
                Ok(k) if k >= 2 => Ok(AuditRule::AtLeast(k)),
                _ => {
                    Err(format!("audit-agree \"{s}\" is not \"all\" or a whole number from 2 (models that must agree)"))
                }
            },
        }
    }

    pub fn describe(self) -> String {
        match self {
            AuditRule::All { at_least } => format!("all sighted models that answered (at least {at_least})"),
            AuditRule::AtLeast(k) => format!("at least {k} sighted models"),
        }
    }
}

/// Questions of `full` where sighted models (the `original` condition) agree
/// on one answer that scores as wrong, in id order.
pub fn label_audit(full: &[Sample], scored: &Scored, kept: &HashSet<&str>, rule: AuditRule) -> Vec<AuditRow> {
    /// A model's answer: (model, answer read, response as given, right).
    type Answer<'a> = (&'a str, Option<&'a str>, &'a str, bool);
    let mut per_q: BTreeMap<&str, Vec<Answer<'_>>> = BTreeMap::new();
    for (model, conds) in &scored.cells {
        for it in conds.get(ORIGINAL).map(Vec::as_slice).unwrap_or(&[]) {
            per_q.entry(it.parent.as_str()).or_default().push((
                model.as_str(),
                it.outcome.answer.as_deref(),
                it.response.as_str(),
                it.outcome.score >= CORRECT,
            ));
        }
    }
    let index: HashMap<&str, &Sample> = full.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut rows = Vec::new();
    for (id, answers) in per_q {
        let Some(s) = index.get(id) else { continue };
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, a, _, right) in &answers {
            if let (Some(a), false) = (a, right) {
                *counts.entry(a).or_default() += 1;
            }
        }
        let Some((agreed, n)) = counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0))) else {
            continue;
        };
        let flagged = match rule {
            AuditRule::All { at_least } => n == answers.len() && n >= at_least,
            AuditRule::AtLeast(k) => n >= k,
        };
        if flagged {
            rows.push(AuditRow {
                id: id.to_string(),
                gold: gold_text(s),
                agreed: agreed.to_string(),
                agreeing: n,
                answered: answers.len(),
                set: if kept.contains(id) { "kept" } else { "removed" }.into(),
                responses: answers.iter().map(|(m, _, r, _)| (m.to_string(), r.to_string())).collect(),
            });
        }
    }
    rows.sort_by(|a, b| id_cmp(&a.id, &b.id));
    rows
}

/// The gold as a reader checks it: `B (red)` for an option, the answer otherwise.
fn gold_text(s: &Sample) -> String {
    match s.answer_index.and_then(|i| usize::try_from(i).ok()) {
        Some(i) if i < s.options.len() => {
            format!("{} ({})", crate::sample::option_letter(i), s.options[i])
        }
        _ => s.answer.clone(),
    }
}

/// `report/label_audit.csv`: one row per flagged question, text from the data
/// and the models defused for spreadsheets.
pub fn audit_csv(rows: &[AuditRow]) -> String {
    use crate::io::escape::csv::cell;
    let header = ["id", "gold", "agreed_answer", "models_agreeing", "models_answered", "set", "responses"];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in rows {
        let responses = serde_json::Value::Object(
            r.responses.iter().map(|(m, v)| (m.clone(), serde_json::Value::String(v.clone()))).collect(),
        )
        .to_string();
        table.push(vec![
            cell(&r.id).into_owned(),
            cell(&r.gold).into_owned(),
            cell(&r.agreed).into_owned(),
            r.agreeing.to_string(),
            r.answered.to_string(),
            r.set.clone(),
            cell(&responses).into_owned(),
        ]);
    }
    crate::io::escape::csv::document(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predictions::Prediction;
    use crate::sample::AnswerFormat;
    use crate::score_all;

    fn mc(id: &str) -> Sample {
        let mut s = Sample::new(id, format!("Question {id}?"), "red");
        s.answer_format = AnswerFormat::MultipleChoice;
        s.options = vec!["red".into(), "blue".into(), "green".into()];
        s.answer_index = Some(0);
        s
    }

    fn p(model: &str, id: &str, r: &str) -> Prediction {
        Prediction::text(model, id, r, 1)
    }

    #[test]
    fn gaps_are_paired_per_set_and_compared_with_the_control() {
        // 40 questions q0..q39. With the image m is right on all; without it, right on q0..q19.
        // Kept: q20..q39 (blind-wrong): gap 100 points. Control kept: q0..q9 and q30..q39: gap 50.
        let qs: Vec<Sample> = (0..40).map(|i| mc(&format!("q{i}"))).collect();
        let mut preds = Vec::new();
        for i in 0..40 {
            preds.push(p("m", &format!("q{i}"), "A"));
            preds.push(p("m", &format!("q{i}::no_image"), if i < 20 { "A" } else { "B" }));
        }
        // q39 has no blind answer: it leaves every paired n.
        preds.pop();
        let cfg = MetricsConfig { resamples: 500, ..MetricsConfig::default() };
        let scored = score_all(&qs, &preds, &cfg).unwrap();
        let kept: HashSet<&str> = qs[20..].iter().map(|s| s.id.as_str()).collect();
        let control: HashSet<&str> = qs[..10].iter().chain(&qs[30..]).map(|s| s.id.as_str()).collect();
        let g = gap(&qs, &scored, &Sets { kept: &kept, control_kept: Some(&control) }, &cfg);
        let m = &g.models[0];
        assert_eq!(m.blind_condition, "no_image");
        let by: BTreeMap<&str, &GapCell> = m.sets.iter().map(|c| (c.set.as_str(), c)).collect();
        assert_eq!((by["full"].questions, by["full"].n_paired), (40, 39));
        assert!((by["full"].gap - 19.0 / 39.0).abs() < 1e-12);
        assert_eq!((by["kept"].n_paired, by["kept"].gap), (19, 1.0));
        assert_eq!(by["kept"].gap_ci95, (1.0, 1.0), "no spread: every pair differs by 1");
        assert_eq!((by["removed"].n_paired, by["removed"].gap), (20, 0.0));
        assert_eq!(by["control_kept"].n_paired, 19);
        assert!((by["control_kept"].gap - 9.0 / 19.0).abs() < 1e-12);
        let v = m.versus_control.as_ref().unwrap();
        assert!((v.difference - 10.0 / 19.0).abs() < 1e-12);
        // The control's gap is a mean of 9 ones among 19: its bootstrap SE is about 0.115,
        // so the difference's interval is about 0.53 ± 0.23.
        assert!(v.ci95.0 > 0.25 && v.ci95.0 < 0.4 && v.ci95.1 > 0.7 && v.ci95.1 <= 1.0, "{:?}", v.ci95);
        assert_eq!(v.verdict, "wider");
        assert!(m.sentence.contains("wider than random removal did, beyond the CI (+52.6 points"), "{}", m.sentence);
        // Without blind predictions the report says what to run.
        let only: Vec<Prediction> = preds.iter().filter(|p| !p.id.contains("::")).cloned().collect();
        let g = gap(&qs, &score_all(&qs, &only, &cfg).unwrap(), &Sets { kept: &kept, control_kept: None }, &cfg);
        assert!(g.models.is_empty() && g.missing.as_deref().unwrap().contains("blindspot export"));
    }

    #[test]
    fn the_audit_lists_questions_sighted_models_agree_against_the_gold() {
        let qs: Vec<Sample> = (0..4).map(|i| mc(&format!("q{i}"))).collect();
        let mut preds = Vec::new();
        // q0: three models say B → listed. q1: two say B, one says C → not all agree.
        // q2: three say A (the gold) → fine. q3: only two models answered → too few for "all".
        for (m, r0, r1, r2) in [("a", "B", "B", "A"), ("b", "(B) blue", "B", "A"), ("c", "Answer: B", "C", "A")] {
            preds.push(p(m, "q0", r0));
            preds.push(p(m, "q1", r1));
            preds.push(p(m, "q2", r2));
        }
        preds.push(p("a", "q3", "C"));
        preds.push(p("b", "q3", "C"));
        let scored = score_all(&qs, &preds, &MetricsConfig::default()).unwrap();
        let kept: HashSet<&str> = ["q1", "q2", "q3"].into_iter().collect();
        let rows = label_audit(&qs, &scored, &kept, AuditRule::default());
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!((rows[0].id.as_str(), rows[0].agreed.as_str(), rows[0].gold.as_str()), ("q0", "B", "A (red)"));
        assert_eq!((rows[0].agreeing, rows[0].answered, rows[0].set.as_str()), (3, 3, "removed"));
        let two = label_audit(&qs, &scored, &kept, AuditRule::AtLeast(2));
        let ids: Vec<&str> = two.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["q0", "q1", "q3"]);
        let csv = audit_csv(&rows);
        assert!(csv.starts_with("id,gold,agreed_answer,models_agreeing,models_answered,set,responses\n"), "{csv}");
        assert!(csv.contains("q0,A (red),B,3,3,removed,"), "{csv}");
        assert_eq!(
            AuditRule::parse("1").unwrap_err(),
            "audit-agree \"1\" is not \"all\" or a whole number from 2 (models that must agree)"
        );
    }
}
