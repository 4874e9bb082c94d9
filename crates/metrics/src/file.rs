//! `metrics.json` as a type: what [`crate::Report`] writes and what a release
//! reads back (`metrics ─▶ **metrics.json** ─▶ card, page, datasheet`).
//!
//! Field order is the file's key order. Every measured fraction is rounded to
//! 6 decimals ([`r6`]) and is `null` when it is not a finite number; the
//! derived metrics a model's conditions do not support are left out.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::derived::Derived;
use crate::predictions::Imported;
use crate::sample::MraRule;
use crate::{GroupKey, GroupStats, Located, Report};

/// A number for the JSON report: rounded to 6 decimals (what is printed does
/// not depend on the last bits of a sum); `None` (null) when not finite.
pub fn r6(x: f64) -> Option<f64> {
    x.is_finite().then(|| (x * 1e6).round() / 1e6)
}

fn opt(x: Option<f64>) -> Option<f64> {
    x.and_then(r6)
}

fn pair(x: (f64, f64)) -> [Option<f64>; 2] {
    [r6(x.0), r6(x.1)]
}

/// `metrics.json`: settings, import checks, per model × condition statistics,
/// derived metrics and their definitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricsFile {
    pub tool: Tool,
    pub settings: Settings,
    /// Rows scored against (samples and variant rows).
    pub rows: usize,
    pub rows_per_condition: BTreeMap<String, usize>,
    pub import: Import,
    /// Model → its conditions and derived metrics.
    pub models: BTreeMap<String, ModelMetrics>,
    pub definitions: Definitions,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// The settings the metrics were computed with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Settings {
    pub seed: u64,
    /// Bootstrap resamples.
    pub resamples: usize,
    /// How numeric answers are scored: `exact`, `mra` or `tolerance:<rel>`.
    pub numeric: String,
    /// MRA's comparison: `strict` or `inclusive`.
    pub mra: String,
    /// `question_type` or `meta:FIELD`, per breakdown of `groups`.
    pub group_by: Vec<String>,
    /// Model → the model that is its LLM backbone (MMStar leakage).
    pub llm_bases: BTreeMap<String, String>,
    pub strict: bool,
}

/// What was imported and what could not be matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Import {
    pub files: Vec<ImportedFile>,
    /// Predictions read.
    pub predictions: usize,
    /// Predictions whose id names no row.
    pub unknown_ids: Listed,
    /// Second predictions of a model for one id (ignored).
    pub duplicates: Listed,
    /// With `[metrics] reference-answers`: how answers to questions without options were scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_answers: Option<ReferenceScoring>,
}

/// Answers to questions without options scored by VQA accuracy over each question's
/// reference answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReferenceScoring {
    /// The meta field holding the reference answers.
    pub field: String,
    /// Predictions (of questions without options) scored over their question's reference answers.
    pub scored: usize,
    /// Such predictions whose question has none in that field: scored against the gold.
    pub without_references: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportedFile {
    pub file: String,
    pub format: String,
    /// Predictions per model.
    pub models: BTreeMap<String, usize>,
}

/// A count and its first occurrences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Listed {
    pub count: usize,
    pub first: Vec<LocatedPrediction>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LocatedPrediction {
    /// `file:line` of the prediction.
    pub location: String,
    pub model: String,
    pub id: String,
}

/// One model's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelMetrics {
    /// Condition (`original` or a variant kind) → statistics.
    pub conditions: BTreeMap<String, Condition>,
    pub derived: Option<DerivedMetrics>,
}

/// One model × condition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Condition {
    /// Predictions scored.
    pub n: usize,
    /// Sum of scores (MRA counts fractionally).
    pub correct: Option<f64>,
    pub accuracy: Option<f64>,
    /// 2.5th and 97.5th percentiles of the bootstrap accuracies.
    pub ci95: [Option<f64>; 2],
    pub abstained: usize,
    pub abstention_rate: Option<f64>,
    pub unparsed: usize,
    pub empty: usize,
    /// Rows of this condition given but not predicted (null: the condition's
    /// rows were not given and predictions were scored against their parents).
    pub missing: Option<usize>,
    /// Group key (`settings.group_by`) → group → accuracy.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, BTreeMap<String, GroupAccuracy>>,
    /// Answer format → accuracy: what `accuracy` mixes.
    pub formats: BTreeMap<String, GroupAccuracy>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupAccuracy {
    pub n: usize,
    pub accuracy: Option<f64>,
}

/// The derived metrics of one model; each is absent when its conditions are.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DerivedMetrics {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visual_dependence: Option<Paired>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caption_substitution: Option<Paired>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_baseline: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modality_differential: Option<ModalityDifferential>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mirage_score: Option<Paired>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mirage_vs_guess: Option<MirageVsGuess>,
    /// Condition → mirage rate.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mirage_rate: BTreeMap<String, MirageRate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub circular_eval: Option<CircularEval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmstar: Option<MmStar>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robustness: Option<Robustness>,
}

impl DerivedMetrics {
    /// No derived metric applies.
    pub fn is_empty(&self) -> bool {
        *self == DerivedMetrics::default()
    }
}

/// A comparison of conditions on the questions all of them answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Paired {
    /// Null when undefined (see `reason`).
    pub value: Option<f64>,
    pub n_paired: usize,
    pub conditions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModalityDifferential {
    pub mean: Option<f64>,
    pub n: usize,
    pub zero_over_zero: usize,
    pub mean_gain_image: Option<f64>,
    pub mean_gain_caption: Option<f64>,
    pub null_conditions: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MirageVsGuess {
    pub n_paired: usize,
    pub mirage: Option<f64>,
    pub guess: Option<f64>,
    pub gap: Option<f64>,
    pub ci95: [Option<f64>; 2],
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MirageRate {
    pub n: usize,
    pub abstained: usize,
    pub empty: usize,
    pub mirages: usize,
    pub rate: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CircularEval {
    pub circular_accuracy: Option<f64>,
    pub n: usize,
    pub first_rotation_accuracy: Option<f64>,
    pub incomplete: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MmStar {
    pub multimodal_gain: Option<f64>,
    pub n_paired: usize,
    pub llm_base: Option<String>,
    pub text_only_accuracy: Option<f64>,
    pub leakage: Option<f64>,
}

/// Robustness R(m) and the stress tests it averages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Robustness {
    #[serde(rename = "R")]
    pub r: Option<f64>,
    pub tests: Vec<StressTest>,
    pub gold_removed: Option<GoldRemoved>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StressTest {
    pub test: String,
    pub conditions: Vec<String>,
    pub n_paired: usize,
    pub fragility: Option<f64>,
    pub robustness: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GoldRemoved {
    pub n_paired: usize,
    pub fragility: Option<f64>,
}

/// What each figure means, written into the file so it explains itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Definitions {
    pub accuracy: String,
    pub abstention_rate: String,
    pub paired: String,
    pub visual_dependence: String,
    pub caption_substitution: String,
    pub null_baseline: String,
    pub modality_differential: String,
    pub mirage_score: String,
    pub mirage_vs_guess: String,
    pub mirage_rate: String,
    pub circular_eval: String,
    pub mmstar: String,
    pub robustness: String,
}

impl Definitions {
    /// The definitions, the accuracy's saying how open answers are scored when each
    /// question's reference answers in meta `references` score them.
    pub fn scored_with(references: Option<&str>) -> Definitions {
        let mut d = Definitions::default();
        if let Some(field) = references {
            d.accuracy.push_str(&format!(
                "; answers to questions without options that have reference answers (meta \"{field}\"; open, \
                 yes/no and numeric) score VQA accuracy over them: for each \
                 reference left out in turn, min(1, matching others / 3), averaged (10 references: 1 match 0.3, 2 \
                 0.6, 3 0.9, 4 or more 1), compared after lowercasing, dropping punctuation and articles and writing \
                 number words as digits (VQA's contraction rewrites are not made); see import.reference_answers"
            ));
        }
        d
    }
}

impl Default for Definitions {
    fn default() -> Self {
        Definitions {
            accuracy: "mean score over the predictions of the condition (1 correct, 0 wrong; numeric answers as settings.numeric says: exact, mra or tolerance:<rel>); abstentions, empty and unparsed responses score 0; ci95 = 2.5th/97.5th percentiles of 1,000 seeded bootstrap resamples of the questions; formats gives the accuracy per answer format, which accuracy mixes weighted by n".into(),
            abstention_rate: "share of responses that say the image is missing, cannot be seen, or refuse (phrase list in crates/predictions/src/abstain.rs), unless an explicit answer marker ([[B]], 'the answer is B') is given".into(),
            paired: "every metric comparing conditions is computed on the questions (parent ids) with a prediction in every condition it uses; n_paired is their number; with none in common the value is null with a reason".into(),
            visual_dependence: "(acc(original) - acc(no_image)) / acc(original), paired".into(),
            caption_substitution: "(acc(original) - acc(caption)) / acc(original), paired".into(),
            null_baseline: "mean accuracy over the null conditions present (no_image, white_image, noise_image)".into(),
            modality_differential: "mean over instances of (g_image - g_caption) / (|g_image| + |g_caption|), g = score - mean null score of the instance; 0/0 (both gains 0) counts as 0".into(),
            mirage_score: "acc(mirage) / acc(original), paired".into(),
            mirage_vs_guess: "acc(mirage) - acc(guess) over questions both answered; paired bootstrap ci95".into(),
            mirage_rate: "share of responses that neither abstain nor are empty".into(),
            circular_eval: "CircularEval (MMBench): a multiple-choice question with n options is asked n times, its options rotated by k = 0..n-1 (conditions circular@k); circular_accuracy = share of the questions with every rotation predicted (n) answered right in all of them; first_rotation_accuracy = accuracy of rotation 0 on the same questions; incomplete = questions with only some rotations predicted, left out".into(),
            mmstar: "multimodal_gain = acc(original) - acc(no_image), paired; leakage = max(0, acc(no_image) - text-only accuracy of the LLM base), both over the no_image questions the base also answered".into(),
            robustness: "R = mean over present tests of 1 - f_i; T1 max(0, acc(original) - acc(no_image)); T2 max(0, acc(no_image) - chance) / (1 - chance); T3 max(0, acc(original) - acc(option_shuffle)); T4 (0.5 max(0, orig - swap) + 0.3 max(0, swap - orig) + 0.2 max(0, unknown_option - orig)) / weights present, swap = largest distractor_swap@k (departure: the paper takes the first and last terms from text-only runs, so here at most one of the first two is non-zero); T5 max(0, acc(original) - acc(visual_substitution)) with the substituted gold; gold_removed reported outside R; T1, T3, T4, T5 and gold_removed paired over their conditions".into(),
        }
    }
}

fn group_accuracy(g: &GroupStats) -> GroupAccuracy {
    GroupAccuracy { n: g.n, accuracy: r6(g.accuracy) }
}

fn listed(count: usize, list: &[Located]) -> Listed {
    Listed {
        count,
        first: list
            .iter()
            .map(|l| LocatedPrediction { location: l.location.clone(), model: l.model.clone(), id: l.id.clone() })
            .collect(),
    }
}

fn paired(p: Option<&crate::derived::Paired>) -> Option<Paired> {
    p.map(|p| Paired {
        value: opt(p.value),
        n_paired: p.n_paired,
        conditions: p.conditions.clone(),
        reason: p.reason.clone(),
    })
}

impl From<&Derived> for DerivedMetrics {
    fn from(d: &Derived) -> Self {
        let rb = &d.robustness;
        DerivedMetrics {
            visual_dependence: paired(d.visual_dependence.as_ref()),
            caption_substitution: paired(d.caption_substitution.as_ref()),
            null_baseline: opt(d.null_baseline),
            modality_differential: d.modality_differential.as_ref().map(|m| ModalityDifferential {
                mean: r6(m.mean),
                n: m.n,
                zero_over_zero: m.zero_over_zero,
                mean_gain_image: r6(m.mean_gain_image),
                mean_gain_caption: r6(m.mean_gain_caption),
                null_conditions: m.null_conditions.clone(),
            }),
            mirage_score: paired(d.mirage_score.as_ref()),
            mirage_vs_guess: d.mirage_vs_guess.as_ref().map(|g| MirageVsGuess {
                n_paired: g.n_paired,
                mirage: r6(g.mirage),
                guess: r6(g.guess),
                gap: r6(g.gap),
                ci95: pair(g.ci95),
            }),
            mirage_rate: d
                .mirage_rate
                .iter()
                .map(|(c, r)| {
                    let rate = MirageRate {
                        n: r.n,
                        abstained: r.abstained,
                        empty: r.empty,
                        mirages: r.mirages,
                        rate: r6(r.rate),
                    };
                    (c.clone(), rate)
                })
                .collect(),
            circular_eval: d.circular.as_ref().map(|c| CircularEval {
                circular_accuracy: r6(c.accuracy),
                n: c.n,
                first_rotation_accuracy: r6(c.first_rotation),
                incomplete: c.incomplete,
            }),
            mmstar: d.mmstar.as_ref().map(|m| MmStar {
                multimodal_gain: r6(m.gain),
                n_paired: m.n_paired,
                llm_base: m.llm_base.clone(),
                text_only_accuracy: opt(m.text_only),
                leakage: opt(m.leakage),
            }),
            robustness: (!rb.tests.is_empty() || rb.gold_removed.is_some()).then(|| Robustness {
                r: opt(rb.r),
                tests: rb
                    .tests
                    .iter()
                    .map(|t| StressTest {
                        test: t.test.to_string(),
                        conditions: t.conditions.clone(),
                        n_paired: t.n_paired,
                        fragility: r6(t.f),
                        robustness: r6(1.0 - t.f),
                    })
                    .collect(),
                gold_removed: rb
                    .gold_removed
                    .as_ref()
                    .map(|g| GoldRemoved { n_paired: g.n_paired, fragility: r6(g.f) }),
            }),
        }
    }
}

impl Report {
    /// `metrics.json` (see [`MetricsFile`]).
    pub fn file(&self, imported: &Imported) -> MetricsFile {
        let cfg = &self.config;
        let models = self
            .cells
            .iter()
            .map(|(m, conds)| {
                let conditions = conds
                    .iter()
                    .map(|(c, s)| {
                        let condition = Condition {
                            n: s.n,
                            correct: r6(s.correct),
                            accuracy: r6(s.accuracy),
                            ci95: pair(s.ci95),
                            abstained: s.abstained,
                            abstention_rate: r6(s.abstention_rate),
                            unparsed: s.unparsed,
                            empty: s.empty,
                            missing: s.missing,
                            groups: s
                                .groups
                                .iter()
                                .map(|(k, gs)| {
                                    (k.clone(), gs.iter().map(|(g, st)| (g.clone(), group_accuracy(st))).collect())
                                })
                                .collect(),
                            formats: s.formats.iter().map(|(f, st)| (f.clone(), group_accuracy(st))).collect(),
                        };
                        (c.clone(), condition)
                    })
                    .collect();
                (m.clone(), ModelMetrics { conditions, derived: self.derived.get(m).map(DerivedMetrics::from) })
            })
            .collect();
        MetricsFile {
            tool: Tool { name: "blindspot".into(), version: env!("CARGO_PKG_VERSION").into() },
            settings: Settings {
                seed: cfg.seed,
                resamples: cfg.resamples,
                numeric: cfg.numeric.name(),
                mra: match cfg.mra {
                    MraRule::Strict => "strict",
                    MraRule::Inclusive => "inclusive",
                }
                .into(),
                group_by: cfg.group_by.iter().map(GroupKey::name).collect(),
                llm_bases: cfg.llm_bases.clone(),
                strict: cfg.strict,
            },
            rows: self.rows,
            rows_per_condition: self.scored.rows_per_condition.clone(),
            import: Import {
                files: imported
                    .files
                    .iter()
                    .map(|f| ImportedFile {
                        file: f.file.clone(),
                        format: f.source.as_str().into(),
                        models: f.models.clone(),
                    })
                    .collect(),
                predictions: self.scored.predictions,
                unknown_ids: listed(self.scored.unknown_count, &self.scored.unknown),
                duplicates: listed(self.scored.duplicate_count, &self.scored.duplicates),
                reference_answers: cfg.reference_answers.as_ref().map(|field| ReferenceScoring {
                    field: field.clone(),
                    scored: self.scored.by_references,
                    without_references: self.scored.without_references,
                }),
            },
            models,
            definitions: Definitions::scored_with(cfg.reference_answers.as_deref()),
        }
    }
}

#[cfg(test)]
mod tests;
