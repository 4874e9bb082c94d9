//! B-Clean (*Mirage* §7.9): remove every question some candidate model
//! answers correctly in mirage mode (no image, absence unsaid), so what is
//! left can only be answered by looking (predictions ─▶ metrics · **B-Clean**).
//!
//! 1. Mirage-mode evaluation: per candidate model, the set B_i of questions
//!    it answers correctly in `mirage` mode (score ≥ 0.5: 1 for every format
//!    but numeric, where MRA ≥ 0.5 counts; with several samples, any right
//!    one) — the filter preset `bclean` of [`super::filter`].
//! 2. Removal of the union B_1 ∪ … ∪ B_n.
//! 3. Optional pattern removal: a blind TsT-RF (the diagnose featurizer and
//!    forest, one model per answer format, question type as a feature) is
//!    trained on the compromised questions — the benchmark's training split
//!    is not available to blindspot — and every remaining question it
//!    answers correctly is removed too.
//! 4. Vision-grounded evaluation: each candidate's `original` accuracy before
//!    (all questions it answered) and after (the kept questions it answered),
//!    and the ranking before and after (accuracy descending, ties by name).
//!
//! Candidates default to every model with mirage predictions. The kept list
//! is in dataset order (sorted by id); removed questions carry the reason —
//! the models that answered them in mirage mode, or `step3`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::diagnose::DiagnoseConfig;
use crate::error::{Location, Result};
use crate::filter::Preset;
use crate::metrics::{MetricsConfig, ORIGINAL, score_all};
use crate::ml::features::Featurizer;
use crate::ml::forest::{self, Binner, ForestParams};
use crate::predictions::Prediction;
use crate::predictions::parse::normalize_text;
use crate::sample::{AnswerFormat, Sample, id_cmp};
use crate::seed::rng_for;

/// A mirage-mode score at or above this counts as answered correctly.
pub const CORRECT: f64 = 0.5;

/// Validated B-Clean settings.
#[derive(Debug, Clone)]
pub struct BCleanConfig {
    /// Candidate models; `None` = every model with mirage predictions.
    pub models: Option<Vec<String>>,
    /// The condition whose correct answers compromise a question (`mirage`).
    pub mirage_condition: String,
    /// Step 3 with these TsT-RF settings (trees, seed, MRA rule, features).
    pub step3: Option<DiagnoseConfig>,
    /// Remove the questions without an image too: answerable without looking
    /// by construction, they get no mirage row and so are never compromised.
    pub remove_imageless: bool,
}

impl Default for BCleanConfig {
    fn default() -> Self {
        BCleanConfig { models: None, mirage_condition: "mirage".into(), step3: None, remove_imageless: false }
    }
}

/// One candidate model's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResult {
    pub model: String,
    /// |B_i|: questions answered correctly in mirage mode.
    pub compromised: usize,
    /// Mirage-mode predictions of this model.
    pub mirage_answered: usize,
    /// (n, accuracy) in `original` on every question / on the kept ones.
    pub before: (usize, f64),
    pub after: (usize, f64),
}

/// A removed question and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    pub id: String,
    /// `mirage:<model>,<model>`, `step3` or `no_image`.
    pub reason: String,
}

/// Everything B-Clean decided.
#[derive(Debug, Clone, PartialEq)]
pub struct BCleanReport {
    pub n_questions: usize,
    pub models: Vec<ModelResult>,
    /// |B_1 ∪ … ∪ B_n|.
    pub union: usize,
    /// Removed by step 3 (0 without it).
    pub step3_removed: usize,
    /// Questions without an image (their own class: no mirage row exists for them).
    pub imageless: usize,
    /// Whether they were removed (`imageless = "remove"`) or kept.
    pub imageless_removed: bool,
    /// Kept ids, sorted by id.
    pub kept: Vec<String>,
    /// Removed ids, sorted by id.
    pub removed: Vec<Removed>,
    pub ranking_before: Vec<String>,
    pub ranking_after: Vec<String>,
}

/// `bclean.json`: what B-Clean decided, as written and read back.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct BCleanFile {
    pub n_questions: usize,
    pub models: Vec<BCleanModel>,
    /// |B_1 ∪ … ∪ B_n|: questions some candidate answered correctly in mirage mode.
    pub union: usize,
    /// Removed by step 3 (0 without it).
    pub step3_removed: usize,
    pub imageless: Imageless,
    pub kept_count: usize,
    /// Candidates by `original` accuracy, descending (ties by name), before and after.
    pub ranking_before: Vec<String>,
    pub ranking_after: Vec<String>,
    /// Kept ids, sorted by id.
    pub kept: Vec<String>,
    /// Removed ids, sorted by id, with the reason.
    pub removed: Vec<BCleanRemoved>,
}

/// One candidate model in `bclean.json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct BCleanModel {
    pub model: String,
    /// Mirage-mode predictions of the model.
    pub mirage_answered: usize,
    /// Questions it answered correctly in mirage mode.
    pub compromised: usize,
    /// `original` accuracy on every question it answered / on the kept ones.
    pub accuracy_before: CountedAccuracy,
    pub accuracy_after: CountedAccuracy,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CountedAccuracy {
    pub n: usize,
    /// Rounded to 6 decimals; null when not a number.
    pub accuracy: Option<f64>,
}

/// The questions without an image: their own class.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Imageless {
    pub n: usize,
    /// `removed` or `kept`.
    pub action: String,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct BCleanRemoved {
    pub id: String,
    /// `mirage:<model>,<model>`, `step3` or `no_image`.
    pub reason: String,
}

impl BCleanReport {
    /// `bclean.json`.
    pub fn file(&self) -> BCleanFile {
        let r = self;
        let acc = |(n, a): (usize, f64)| CountedAccuracy { n, accuracy: crate::metrics::r6(a) };
        BCleanFile {
            n_questions: r.n_questions,
            models: r
                .models
                .iter()
                .map(|m| BCleanModel {
                    model: m.model.clone(),
                    mirage_answered: m.mirage_answered,
                    compromised: m.compromised,
                    accuracy_before: acc(m.before),
                    accuracy_after: acc(m.after),
                })
                .collect(),
            union: r.union,
            step3_removed: r.step3_removed,
            imageless: Imageless {
                n: r.imageless,
                action: if r.imageless_removed { "removed" } else { "kept" }.into(),
                why: "questions without an image get no mirage row, so no model can compromise them; they are answerable without looking by construction".into(),
            },
            kept_count: r.kept.len(),
            ranking_before: r.ranking_before.clone(),
            ranking_after: r.ranking_after.clone(),
            kept: r.kept.clone(),
            removed: r.removed.iter().map(|x| BCleanRemoved { id: x.id.clone(), reason: x.reason.clone() }).collect(),
        }
    }
}

fn ranking(models: &[ModelResult], after: bool) -> Vec<String> {
    let mut v: Vec<(&str, f64)> =
        models.iter().map(|m| (m.model.as_str(), if after { m.after.1 } else { m.before.1 })).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    v.into_iter().map(|(m, _)| m.to_string()).collect()
}

/// Runs B-Clean on `questions` (the benchmark's samples, not variant rows)
/// with every imported prediction: step 1 is the filter preset `bclean`
/// ([`super::filter`]), scored as `metrics` scores.
pub fn bclean(
    questions: &[Sample],
    predictions: &[Prediction],
    metrics: &MetricsConfig,
    cfg: &BCleanConfig,
) -> Result<BCleanReport> {
    let mut rule = Preset::Bclean.rule(cfg.models.clone());
    rule.conditions = vec![cfg.mirage_condition.clone()];
    let step1 = crate::filter::apply(questions, predictions, &rule, metrics, &Location::file("bclean"))?;
    let candidates: Vec<String> = step1.models.iter().map(|m| m.model.clone()).collect();
    let compromised_counts: Vec<(usize, usize)> =
        step1.models.iter().map(|m| (m.answered, m.questions_predicted)).collect();
    let scored = score_all(questions, predictions, &MetricsConfig { strict: false, ..metrics.clone() })?;
    let scored = &scored;
    let known: BTreeSet<&str> = questions.iter().map(|s| s.id.as_str()).collect();
    let by_question: BTreeMap<&str, &[String]> =
        step1.removed.iter().map(|r| (r.id.as_str(), r.models.as_slice())).collect();
    let union = by_question.len();
    let mut removed: Vec<Removed> = by_question
        .iter()
        .map(|(id, ms)| Removed { id: id.to_string(), reason: format!("mirage:{}", ms.join(",")) })
        .collect();
    // Step 3: a blind model trained on the compromised questions.
    let mut step3_removed = 0;
    if let Some(dcfg) = &cfg.step3 {
        let train: Vec<&Sample> = questions.iter().filter(|s| by_question.contains_key(s.id.as_str())).collect();
        let rest: Vec<&Sample> = questions.iter().filter(|s| !by_question.contains_key(s.id.as_str())).collect();
        for id in blind_correct(&train, &rest, dcfg) {
            removed.push(Removed { id, reason: "step3".into() });
            step3_removed += 1;
        }
    }
    let imageless: Vec<&Sample> = questions.iter().filter(|s| s.images.is_empty()).collect();
    if cfg.remove_imageless {
        let already: BTreeSet<String> = removed.iter().map(|r| r.id.clone()).collect();
        for s in imageless.iter().filter(|s| !already.contains(&s.id)) {
            removed.push(Removed { id: s.id.clone(), reason: "no_image".into() });
        }
    }
    removed.sort_by(|a, b| id_cmp(&a.id, &b.id));
    let gone: BTreeSet<&str> = removed.iter().map(|r| r.id.as_str()).collect();
    let mut kept: Vec<String> =
        questions.iter().filter(|s| !gone.contains(s.id.as_str())).map(|s| s.id.clone()).collect();
    kept.sort_by(|a, b| id_cmp(a, b));
    // Step 4: accuracy before and after, on `original` predictions.
    let models: Vec<ModelResult> = candidates
        .iter()
        .zip(compromised_counts)
        .map(|(m, (compromised, mirage_answered))| {
            let items: Vec<_> =
                scored.cell(m, ORIGINAL).unwrap_or(&[]).iter().filter(|i| known.contains(i.parent.as_str())).collect();
            let acc = |it: &[&crate::metrics::Item]| {
                let n = it.len();
                (n, if n == 0 { 0.0 } else { it.iter().map(|i| i.outcome.score).sum::<f64>() / n as f64 })
            };
            let after: Vec<_> = items.iter().copied().filter(|i| !gone.contains(i.parent.as_str())).collect();
            ModelResult { model: m.clone(), compromised, mirage_answered, before: acc(&items), after: acc(&after) }
        })
        .collect();
    Ok(BCleanReport {
        n_questions: questions.len(),
        ranking_before: ranking(&models, false),
        ranking_after: ranking(&models, true),
        models,
        union,
        step3_removed,
        imageless: imageless.len(),
        imageless_removed: cfg.remove_imageless,
        kept,
        removed,
    })
}

/// Ids of `test` questions a TsT-RF trained on `train` answers correctly,
/// one model per answer format (a format with fewer than 2 training
/// questions removes nothing), in `test` order.
pub fn blind_correct(train: &[&Sample], test: &[&Sample], cfg: &DiagnoseConfig) -> Vec<String> {
    let mut out = Vec::new();
    for format in AnswerFormat::ALL {
        let tr: Vec<&Sample> = train.iter().copied().filter(|s| s.answer_format == format).collect();
        let te: Vec<&Sample> = test.iter().copied().filter(|s| s.answer_format == format).collect();
        if tr.len() < 2 || te.is_empty() {
            continue;
        }
        let (featurizer, x_train) = Featurizer::fit_transform(&tr, &cfg.features);
        let x_test = featurizer.transform(&te);
        let binner = Binner::fit(&x_train);
        let (bx_train, bx_test) = (binner.transform(&x_train), binner.transform(&x_test));
        let seed = rng_for(cfg.seed, "prune.bclean.step3", format.as_str());
        let key = |s: &Sample| normalize_text(&s.answer);
        match format {
            AnswerFormat::Numeric => {
                let num = |s: &Sample| crate::sample::parse_number(&s.answer);
                let keep: Vec<usize> = (0..tr.len()).filter(|&i| num(tr[i]).is_some()).collect();
                if keep.len() < 2 {
                    continue;
                }
                let y: Vec<f64> = keep.iter().filter_map(|&i| num(tr[i])).collect();
                let mut data = Vec::with_capacity(keep.len() * x_train.n_cols());
                for &i in &keep {
                    data.extend_from_slice(x_train.row(i));
                }
                let xk = binner.transform(&forest::Matrix::new(keep.len(), x_train.n_cols(), data));
                let params = ForestParams { n_trees: cfg.regression_trees, seed, ..ForestParams::regressor_default() };
                let model = forest::fit_regressor(&xk, &y, None, &params);
                for (s, p) in te.iter().zip(model.predict(&bx_test)) {
                    if num(s).is_some_and(|g| cfg.numeric.score(p, g, cfg.mra) >= CORRECT) {
                        out.push(s.id.clone());
                    }
                }
            }
            _ => {
                // Classes: option index (multiple choice) or the normalized answer text.
                let class_names: Vec<String> = if format == AnswerFormat::MultipleChoice {
                    let n = tr.iter().chain(&te).map(|s| s.options.len()).max().unwrap_or(2).max(2);
                    (0..n).map(|i| i.to_string()).collect()
                } else {
                    tr.iter().map(|s| key(s)).collect::<BTreeSet<_>>().into_iter().collect()
                };
                let index: HashMap<&str, u32> =
                    class_names.iter().enumerate().map(|(i, n)| (n.as_str(), i as u32)).collect();
                let class_of = |s: &Sample| -> Option<u32> {
                    if format == AnswerFormat::MultipleChoice {
                        s.answer_index.and_then(|i| u32::try_from(i).ok()).filter(|&i| (i as usize) < class_names.len())
                    } else {
                        index.get(key(s).as_str()).copied()
                    }
                };
                let labels: Vec<u32> = tr.iter().map(|s| class_of(s).unwrap_or(0)).collect();
                let params = ForestParams { n_trees: cfg.trees, seed, ..ForestParams::classifier_default() };
                let model = forest::fit_classifier(&bx_train, &labels, class_names.len(), None, &params);
                for (s, pred) in te.iter().zip(model.predict(&bx_test)) {
                    if class_of(s) == Some(pred) {
                        out.push(s.id.clone());
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricsConfig;
    use crate::predictions::Prediction;

    fn mc(id: &str) -> Sample {
        let mut s = Sample::new(id, format!("Question {id}?"), "a");
        s.answer_format = AnswerFormat::MultipleChoice;
        s.options = vec!["a".into(), "b".into()];
        s.answer_index = Some(0);
        s
    }

    fn pred(model: &str, id: &str, letter: &str) -> Prediction {
        Prediction::text(model, id, letter, 1)
    }

    #[test]
    fn union_kept_and_rankings() {
        let qs: Vec<Sample> = (1..=6).map(|i| mc(&i.to_string())).collect();
        let mut preds = vec![pred("x", "1::mirage", "A"), pred("x", "2::mirage", "B"), pred("y", "2::mirage", "A")];
        preds.push(pred("y", "3::mirage", "A"));
        for i in 1..=6 {
            preds.push(pred("x", &i.to_string(), if i <= 4 { "A" } else { "B" }));
            preds.push(pred("y", &i.to_string(), if i <= 3 || i == 6 { "A" } else { "B" }));
        }
        let r = bclean(&qs, &preds, &MetricsConfig::default(), &BCleanConfig::default()).unwrap();
        assert_eq!(r.union, 3);
        assert_eq!(r.kept, vec!["4", "5", "6"]);
        assert_eq!(r.removed[1], Removed { id: "2".into(), reason: "mirage:y".into() });
        assert_eq!((r.models[0].compromised, r.models[1].compromised), (1, 2));
        assert_eq!(r.models[0].before, (6, 4.0 / 6.0));
        assert_eq!(r.models[0].after, (3, 1.0 / 3.0));
        assert_eq!(r.models[1].after, (3, 1.0 / 3.0));
        assert_eq!(r.ranking_before, vec!["x", "y"]);
        assert_eq!(r.ranking_after, vec!["x", "y"], "ties go by name");
        let bad = BCleanConfig { models: Some(vec!["z".into()]), ..Default::default() };
        assert!(bclean(&qs, &preds, &MetricsConfig::default(), &bad).is_err());
    }

    #[test]
    fn questions_without_an_image_are_their_own_class() {
        // q1, q2 have an image; q3, q4 do not. x answers q1 right in mirage mode.
        let qs: Vec<Sample> = (1..=4)
            .map(|i| {
                let mut s = mc(&format!("q{i}"));
                if i <= 2 {
                    s.images.push(crate::sample::ImageRef { path: Some(format!("{i}.png")), ..Default::default() });
                }
                s
            })
            .collect();
        let preds = vec![pred("x", "q1::mirage", "A"), pred("x", "q2::mirage", "B")];
        let kept = bclean(&qs, &preds, &MetricsConfig::default(), &BCleanConfig::default()).unwrap();
        assert_eq!((kept.union, kept.imageless, kept.imageless_removed), (1, 2, false));
        assert_eq!(kept.kept, vec!["q2", "q3", "q4"]);
        assert_eq!(kept.file().imageless.action, "kept");
        let cfg = BCleanConfig { remove_imageless: true, ..Default::default() };
        let removed = bclean(&qs, &preds, &MetricsConfig::default(), &cfg).unwrap();
        assert_eq!(removed.kept, vec!["q2"]);
        let reasons: Vec<(&str, &str)> = removed.removed.iter().map(|r| (r.id.as_str(), r.reason.as_str())).collect();
        assert_eq!(reasons, vec![("q1", "mirage:x"), ("q3", "no_image"), ("q4", "no_image")]);
    }

    #[test]
    fn step3_removes_what_a_blind_model_learns_from_the_compromised_questions() {
        // 40 questions whose gold is always "Paris" (at varying positions), 10 whose gold is
        // a one-off text. Model x answers 30 of the Paris ones in mirage mode.
        let mut qs = Vec::new();
        for i in 0..50 {
            let mut s = Sample::new(format!("q{i}"), format!("Which city is shown in picture {i}?"), "");
            s.answer_format = AnswerFormat::MultipleChoice;
            let gold = if i < 40 { "Paris".to_string() } else { format!("Town{i}") };
            let mut opts = vec![gold.clone(), format!("Rome{i}"), format!("Oslo{i}")];
            opts.rotate_right(i % 3);
            s.answer_index = opts.iter().position(|o| *o == gold).map(|p| p as i32);
            s.options = opts;
            s.answer = gold;
            qs.push(s);
        }
        let preds: Vec<Prediction> = (0..30)
            .map(|i| {
                let letter = ["A", "B", "C"][qs[i].answer_index.unwrap() as usize];
                pred("x", &format!("q{i}::mirage"), letter)
            })
            .collect();
        let plain = bclean(&qs, &preds, &MetricsConfig::default(), &BCleanConfig::default()).unwrap();
        assert_eq!((plain.union, plain.step3_removed, plain.kept.len()), (30, 0, 20));
        let cfg = BCleanConfig { step3: Some(DiagnoseConfig::default()), ..Default::default() };
        let r = bclean(&qs, &preds, &MetricsConfig::default(), &cfg).unwrap();
        let step3: Vec<&str> = r.removed.iter().filter(|x| x.reason == "step3").map(|x| x.id.as_str()).collect();
        let paris = step3.iter().filter(|id| id[1..].parse::<usize>().unwrap() < 40).count();
        assert!(paris >= 8, "the blind model finds the Paris prior: {step3:?}");
        // One-off golds fall only to its fallback guess (1 in 3 by position), not to the prior.
        assert!(step3.len() - paris <= 4, "{step3:?}");
        assert_eq!(r.step3_removed, step3.len());
        assert_eq!(r.kept.len(), 20 - step3.len());
        assert_eq!(bclean(&qs, &preds, &MetricsConfig::default(), &cfg).unwrap(), r, "deterministic");
    }
}
