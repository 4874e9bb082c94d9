//! `prune.json`'s document: settings, stop reason, the per-iteration curve,
//! removed questions with reasons, before/after blind accuracy. The release
//! crate renders it and the other report files (`removed.csv`,
//! `kept_ids.txt`, `prune_curve.svg`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Method, Pruned};
use crate::diagnose::Diagnosis;
use crate::io::r6;

/// A finite number rounded for JSON; None (null) otherwise.
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then(|| r6(v))
}

/// `prune.json`: one pruning run, and its matched random control beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PruneReport {
    pub method: String,
    pub settings: Settings,
    /// Budget in questions per allocation key.
    pub budgets: BTreeMap<String, usize>,
    pub n_input: usize,
    pub n_kept: usize,
    pub n_removed: usize,
    /// Units removed, each whole.
    #[serde(default)]
    pub units_removed: usize,
    /// Why the loop ended.
    pub stop: String,
    /// TsT-RF on the input, with the folds and forests that chose the removals.
    pub before: Option<DiagnosisSummary>,
    /// TsT-RF on the kept set, with the same seed as the selection: biased
    /// downward by the selection itself.
    pub after: Option<DiagnosisSummary>,
    /// The kept set re-diagnosed on fresh seeds that chose nothing.
    pub after_independent: Option<IndependentSummary>,
    pub removed_per_type: BTreeMap<String, usize>,
    pub iterations: Vec<IterationRow>,
    pub removed: Vec<RemovedRow>,
    /// The matched random control (same removals per allocation key, random order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<Box<PruneReport>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Settings {
    pub method: String,
    pub budget: String,
    pub batch: String,
    pub floor: usize,
    pub threshold: Option<f64>,
    pub allocation: String,
    pub rank: String,
    pub seed: u64,
    /// When IBP stops before its budget: `null`, `chance` or `budget`.
    pub stop: String,
    /// What is removed at once: `question`, `image`, `question text` or `meta:FIELD`.
    pub unit: String,
    pub independent_seeds: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aflite: Option<AfliteSettings>,
    /// Outside scores combined into the s(x) IBP ranks by, when given: the file,
    /// its sha256 and the rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_scores: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AfliteSettings {
    pub partitions: usize,
    pub train_fraction: f64,
    pub tau: f64,
    pub probe: String,
}

/// Headline figures of one diagnosis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DiagnosisSummary {
    pub n: usize,
    pub blind_accuracy: f64,
    #[serde(rename = "macro")]
    pub macro_by_type: f64,
    pub ci95: [f64; 2],
    pub chance: f64,
    pub majority: f64,
    pub ids_fingerprint: String,
    /// The label-permutation null, when measured (IBP's first pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null: Option<crate::diagnose::null::Null>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndependentSummary {
    /// The fresh seeds (one fold assignment and forest set each).
    pub seeds: Vec<u64>,
    pub n: usize,
    pub blind_accuracy: f64,
    pub ci95: [f64; 2],
    pub chance: f64,
    pub majority: f64,
    /// Per group of the kept set: blind accuracy on the fresh seeds against the group's
    /// own null; `above` groups are still blind-answerable (the set is not debiased).
    #[serde(default)]
    pub groups: Vec<KeptGroupRow>,
}

/// One group of the kept set after pruning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KeptGroupRow {
    pub question_type: Option<String>,
    pub format: String,
    pub n: usize,
    pub blind_accuracy: f64,
    pub majority: f64,
    pub null_mean: Option<f64>,
    pub p_value: f64,
    pub above: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IterationRow {
    pub iteration: usize,
    pub size: usize,
    pub removed_before: usize,
    pub fraction_removed: f64,
    pub max_bias: Option<f64>,
    pub mean_bias: Option<f64>,
    pub blind_accuracy: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    pub chance: Option<f64>,
    pub removed: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RemovedRow {
    pub id: String,
    pub question_type: Option<String>,
    pub format: String,
    pub iteration: usize,
    pub score: Option<f64>,
    pub reason: String,
}

fn diagnosis_summary(d: &Diagnosis) -> DiagnosisSummary {
    DiagnosisSummary {
        n: d.n_samples,
        blind_accuracy: r6(d.weighted),
        macro_by_type: r6(d.macro_by_type),
        ci95: [r6(d.ci95.0), r6(d.ci95.1)],
        chance: r6(d.chance),
        majority: r6(d.majority),
        ids_fingerprint: d.fingerprint.clone(),
        null: d.null.clone(),
    }
}

impl PruneReport {
    /// The report of one run.
    pub fn of(p: &Pruned) -> PruneReport {
        let c = &p.config;
        PruneReport {
            method: p.method.as_str().into(),
            settings: Settings {
                method: p.method.as_str().into(),
                budget: c.budget.describe(),
                batch: c.batch.describe(),
                floor: c.floor,
                threshold: c.threshold,
                allocation: c.allocation.as_str().into(),
                rank: c.rank.as_str().into(),
                seed: c.seed,
                stop: c.stop.as_str().into(),
                unit: p.unit.clone(),
                independent_seeds: c.independent_seeds,
                aflite: (p.method == Method::Aflite).then(|| AfliteSettings {
                    partitions: c.aflite.partitions,
                    train_fraction: c.aflite.train_fraction,
                    tau: c.aflite.tau,
                    probe: "multinomial logistic regression (linfa-logistic, L2 = 1/n, 50 L-BFGS iterations) on \
                            standardized TsT features"
                        .into(),
                }),
                outside_scores: p.before.as_ref().and_then(|d| d.outside.as_ref()).map(|o| {
                    format!(
                        "s(x) is the {} of TsT-RF's and the outside scores of {} (sha256 {}); the forests are refit \
                         each iteration on what remains, each question's outside score stays fixed",
                        o.combine.as_str(),
                        o.file,
                        o.sha256
                    )
                }),
            },
            budgets: p.budgets.clone(),
            n_input: p.n_input,
            n_kept: p.kept.len(),
            n_removed: p.removed.len(),
            units_removed: p.units_removed,
            stop: p.stop.clone(),
            before: p.before.as_ref().map(diagnosis_summary),
            after: p.after.as_ref().map(diagnosis_summary),
            after_independent: p.after_independent.as_ref().map(|i| IndependentSummary {
                seeds: i.seeds.clone(),
                n: i.n_samples,
                blind_accuracy: r6(i.blind_accuracy),
                ci95: [r6(i.ci95.0), r6(i.ci95.1)],
                chance: r6(i.chance),
                majority: r6(i.majority),
                groups: i
                    .groups
                    .iter()
                    .map(|g| KeptGroupRow {
                        question_type: g.question_type.clone(),
                        format: g.format.as_str().to_string(),
                        n: g.n,
                        blind_accuracy: r6(g.blind_accuracy),
                        majority: r6(g.majority),
                        null_mean: finite(g.null_mean).map(r6),
                        p_value: r6(g.p_value),
                        above: g.above,
                    })
                    .collect(),
            }),
            removed_per_type: p.removed_per_type(),
            iterations: p
                .iterations
                .iter()
                .map(|it| IterationRow {
                    iteration: it.iteration,
                    size: it.size,
                    removed_before: it.removed_before,
                    fraction_removed: r6(it.removed_before as f64 / p.n_input.max(1) as f64),
                    max_bias: finite(it.max_bias),
                    mean_bias: finite(it.mean_bias),
                    blind_accuracy: finite(it.blind_accuracy),
                    ci95: it.ci95.map(|(lo, hi)| [r6(lo), r6(hi)]),
                    chance: finite(it.chance),
                    removed: it.removed,
                })
                .collect(),
            removed: p
                .removed
                .iter()
                .map(|r| RemovedRow {
                    id: r.id.clone(),
                    question_type: r.question_type.clone(),
                    format: r.format.as_str().into(),
                    iteration: r.iteration,
                    score: finite(r.score),
                    reason: r.reason.clone(),
                })
                .collect(),
            control: None,
        }
    }

    /// `prune.json`: the run, with its matched random control when there is one.
    pub fn with_control(p: &Pruned, control: Option<&Pruned>) -> PruneReport {
        PruneReport { control: control.map(|c| Box::new(PruneReport::of(c))), ..PruneReport::of(p) }
    }
}
