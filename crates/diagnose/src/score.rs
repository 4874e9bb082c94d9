//! What a diagnose run produces: one [`ScoreRow`] per held-out prediction,
//! per-group summaries, the [`Diagnosis`] with its bootstrap CI, and the
//! combination of two methods' s(x).

use std::collections::{BTreeMap, HashMap};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::Combine;
use crate::sample::{AnswerFormat, Sample, chance};
use crate::seed::rng_for;

/// One held-out prediction: a sample in one repeat.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ScoreRow {
    pub id: String,
    pub question_type: Option<String>,
    pub format: AnswerFormat,
    pub n_options: usize,
    pub chance: f64,
    pub fold: usize,
    pub repeat: usize,
    /// The blind model's answer (option text, yes/no, number, or `<other>`).
    pub prediction: String,
    /// 1 or 0; for numeric questions the prediction's MRA.
    pub correct: f64,
    /// Bias score: probability of the gold answer (numeric: MRA).
    pub s: f64,
    pub s_minus_chance: f64,
}

impl ScoreRow {
    /// The row of a classified question (multiple choice, yes/no, open) held out in
    /// `(fold, repeat)`: `s_x` is the probability of its gold class.
    pub fn classified(
        s: &Sample,
        format: AnswerFormat,
        (fold, repeat): (usize, usize),
        prediction: String,
        correct: f64,
        s_x: f64,
    ) -> ScoreRow {
        let c = chance(s);
        ScoreRow {
            id: s.id.clone(),
            question_type: s.question_type.clone(),
            format,
            n_options: s.options.len(),
            chance: c,
            fold,
            repeat,
            prediction,
            correct,
            s: s_x,
            s_minus_chance: s_x - c,
        }
    }
}

/// One model's group: a question type in one answer format.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GroupSummary {
    pub question_type: Option<String>,
    pub format: AnswerFormat,
    pub n: usize,
    pub blind_accuracy: f64,
    pub chance: f64,
    /// Accuracy of always answering the training folds' most frequent label.
    pub majority: f64,
    pub mean_s: f64,
    /// Mean decrease in impurity, averaged over folds and repeats, top 10.
    pub top_features: Vec<(String, f64)>,
    /// The pooled group only: the question types it holds, sorted.
    #[serde(default)]
    pub pooled_types: Vec<String>,
    /// The folds the group was cross-validated with: the configured number, or
    /// fewer when the group has fewer questions (or fold groups) than that.
    #[serde(default)]
    pub folds: usize,
    /// Multiple choice: the heaviest option feature as a sentence about the gold, with
    /// how often it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortcut: Option<Shortcut>,
    /// The permutation null's statistic on the real answers, measured by this
    /// diagnosis: the blind accuracy of the first repeat's forests cut to their first
    /// `trees` (numbers: `regression_trees`) trees. Absent when the null's forests are
    /// no smaller than the diagnosis's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_trees: Option<FirstTrees>,
}

/// See [`GroupSummary::first_trees`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FirstTrees {
    pub trees: usize,
    pub regression_trees: usize,
    pub blind_accuracy: f64,
}

/// A multiple-choice shortcut in words: "the gold is the longest option" holds for
/// `gold_share` of the held-out questions where the feature tells the options apart
/// (`n`), against `option_share` for an option drawn at random.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Shortcut {
    /// The feature (a concept of the position-free model, e.g. `opt.length`).
    pub feature: String,
    pub sentence: String,
    pub gold_share: f64,
    pub option_share: f64,
    pub n: usize,
}

/// Which of chance and the majority answer is the bar a blind model must clear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    Majority,
    Chance,
}

impl std::fmt::Display for Baseline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Baseline::Majority => "majority",
            Baseline::Chance => "chance",
        })
    }
}

/// The bar a blind model must clear: the larger of chance and always giving the
/// majority answer, and which of the two it is (the majority on a tie).
pub fn baseline(chance: f64, majority: f64) -> (f64, Baseline) {
    if majority >= chance { (majority, Baseline::Majority) } else { (chance, Baseline::Chance) }
}

impl GroupSummary {
    /// This group's [`baseline`].
    pub fn baseline(&self) -> (f64, Baseline) {
        baseline(self.chance, self.majority)
    }

    /// The summary of one group's scored rows; `features` are (name, weight)
    /// pairs of which the 10 heaviest are kept (ties by name).
    pub fn from_rows(
        question_type: Option<String>,
        format: AnswerFormat,
        n: usize,
        rows: &[ScoreRow],
        majority_hits: f64,
        features: Vec<(String, f64)>,
    ) -> GroupSummary {
        let n_rows = rows.len().max(1) as f64;
        let mut top = features;
        top.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        top.truncate(10);
        GroupSummary {
            question_type,
            format,
            n,
            blind_accuracy: rows.iter().map(|r| r.correct).sum::<f64>() / n_rows,
            chance: rows.iter().map(|r| r.chance).sum::<f64>() / n_rows,
            majority: majority_hits / n_rows,
            mean_s: rows.iter().map(|r| r.s).sum::<f64>() / n_rows,
            top_features: top,
            pooled_types: Vec::new(),
            folds: 0,
            shortcut: None,
            first_trees: None,
        }
    }
}

/// The result of a TsT-RF run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Diagnosis {
    /// Sorted by (id, repeat).
    pub rows: Vec<ScoreRow>,
    pub groups: Vec<GroupSummary>,
    pub weighted: f64,
    pub macro_by_type: f64,
    pub ci95: (f64, f64),
    pub chance: f64,
    pub majority: f64,
    /// sha256 of the ordered ids folded (canonical order).
    pub fingerprint: String,
    pub n_samples: usize,
    /// With `method = "both"`: TsT-Embed's own diagnosis, whose s(x) was
    /// combined into this one's (reported beside it, never recomputed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tst_embed: Option<Box<Diagnosis>>,
    /// The audit of answer-bearing meta fields ([`super::audit`]), when run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audit: Vec<super::audit::FieldAudit>,
    /// The label-permutation null ([`super::null`]), when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null: Option<super::null::Null>,
    /// With `group-by = "image-cluster"`: how near-duplicate images joined the
    /// questions diagnosed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_clusters: Option<super::config::ImageClusterCount>,
    /// Outside scores combined into s(x) ([`super::outside`]), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside: Option<super::outside::OutsideApplied>,
}

impl Diagnosis {
    /// Whether this diagnosis is of `input`: at most its questions, and rows
    /// only of its ids. Why not, otherwise (a cached run that does not belong
    /// to this input).
    pub fn check_samples(&self, input: &[Sample]) -> std::result::Result<(), String> {
        if self.n_samples > input.len() {
            return Err(format!("it diagnosed {} questions, not {}", self.n_samples, input.len()));
        }
        let ids: std::collections::HashSet<&str> = input.iter().map(|s| s.id.as_str()).collect();
        match self.rows.iter().find(|r| !ids.contains(r.id.as_str())) {
            Some(r) => Err(format!("it scores \"{}\", which is not among the questions", r.id)),
            None => Ok(()),
        }
    }

    /// Per sample id: s(x) averaged over repeats (summed in row order), and chance.
    /// A hash map: IBP looks up every sample of a 700,000-question set in it, each
    /// iteration.
    pub fn sample_scores(&self) -> ScoreMap<'_> {
        let mut acc: HashMap<&str, (f64, f64, usize), foldhash::fast::FixedState> = HashMap::default();
        for r in &self.rows {
            let e = acc.entry(r.id.as_str()).or_insert((0.0, r.chance, 0));
            e.0 += r.s;
            e.2 += 1;
        }
        acc.into_iter().map(|(k, (s, c, n))| (k, (s / n as f64, c))).collect()
    }
}

/// [`Diagnosis::sample_scores`]: id -> (mean s(x), chance).
pub type ScoreMap<'a> = HashMap<&'a str, (f64, f64), foldhash::fast::FixedState>;

/// sha256 of ids in order, newline-separated.
pub fn fingerprint(samples: &[Sample]) -> String {
    group_fingerprint(&samples.iter().collect::<Vec<_>>())
}

/// [`fingerprint`] of a group of samples.
pub(super) fn group_fingerprint(samples: &[&Sample]) -> String {
    let mut h = Sha256::new();
    for s in samples {
        h.update(s.id.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

/// Replaces each row's s (and s − chance) of `d` by its combination with
/// `other`'s s(x) for the same question (averaged over repeats).
pub fn combine_scores(d: &mut Diagnosis, other: &Diagnosis, how: Combine) {
    let theirs: BTreeMap<String, f64> =
        other.sample_scores().into_iter().map(|(id, (s, _))| (id.to_string(), s)).collect();
    for r in &mut d.rows {
        if let Some(&t) = theirs.get(&r.id) {
            r.s = how.apply(r.s, t);
            r.s_minus_chance = r.s - r.chance;
        }
    }
    refresh_group_means(d);
}

/// Each group's mean s(x) from its rows, after s(x) changed.
pub(super) fn refresh_group_means(d: &mut Diagnosis) {
    for g in &mut d.groups {
        let rows: Vec<&ScoreRow> =
            d.rows.iter().filter(|r| r.question_type == g.question_type && r.format == g.format).collect();
        if !rows.is_empty() {
            g.mean_s = rows.iter().map(|r| r.s).sum::<f64>() / rows.len() as f64;
        }
    }
}

/// Blind accuracy over score rows: weighted (every row counts once) and the
/// macro average over question types.
pub fn accuracies(rows: &[ScoreRow]) -> (f64, f64) {
    let n = rows.len().max(1) as f64;
    let weighted = rows.iter().map(|r| r.correct).sum::<f64>() / n;
    let mut by_type: BTreeMap<Option<&str>, (f64, usize)> = BTreeMap::new();
    for r in rows {
        let e = by_type.entry(r.question_type.as_deref()).or_default();
        e.0 += r.correct;
        e.1 += 1;
    }
    let macro_by_type = by_type.values().map(|(c, k)| c / *k as f64).sum::<f64>() / by_type.len().max(1) as f64;
    (weighted, macro_by_type)
}

/// The 95% interval of blind accuracy of `rows` (the held-out predictions of
/// `samples`): a cluster bootstrap over fold groups when `cfg` groups folds,
/// else a bootstrap over questions. TsT-RF and TsT-Embed both report this one.
pub fn interval(rows: &[ScoreRow], samples: &[&Sample], cfg: &super::DiagnoseConfig) -> (f64, f64) {
    match &cfg.group_by {
        Some(g) => {
            let cluster_of: HashMap<&str, String> =
                samples.iter().map(|s| s.id.as_str()).zip(g.keys(samples.iter().copied())).collect();
            cluster_bootstrap_ci(rows, cfg.seed, &cluster_of)
        }
        None => bootstrap_ci(rows, cfg.seed),
    }
}

/// The 95% interval of blind accuracy when folds keep groups together
/// (`group-by`): the groups are resampled, not the questions, since questions of
/// one group are not independent (a cluster bootstrap, [`crate::stats::bootstrap_ratio_ci`]).
/// Each question counts with its mean over repeats. Without groups, [`bootstrap_ci`].
pub fn cluster_bootstrap_ci(rows: &[ScoreRow], seed: u64, cluster_of: &HashMap<&str, String>) -> (f64, f64) {
    let mut clusters: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for (id, v) in per_question(rows) {
        let key = cluster_of.get(id).map_or(id, String::as_str);
        let e = clusters.entry(key).or_default();
        e.0 += v;
        e.1 += 1.0;
    }
    let units: Vec<(f64, f64)> = clusters.into_values().collect();
    crate::stats::bootstrap_ratio_ci(&units, crate::stats::RESAMPLES, rng_for(seed, "diagnose.bootstrap.cluster", ""))
}

/// 95% percentile interval of the weighted blind accuracy over 1,000 seeded
/// resamples of questions, each question's correctness averaged over repeats
/// ([`crate::stats::bootstrap_mean_ci`]).
pub fn bootstrap_ci(rows: &[ScoreRow], seed: u64) -> (f64, f64) {
    let values: Vec<f64> = per_question(rows).into_iter().map(|(_, v)| v).collect();
    crate::stats::bootstrap_mean_ci(&values, crate::stats::RESAMPLES, rng_for(seed, "diagnose.bootstrap", ""))
}

/// Each question's correctness averaged over its rows (repeats), in id (byte) order.
fn per_question(rows: &[ScoreRow]) -> Vec<(&str, f64)> {
    let mut pairs: Vec<(&str, f64)> = rows.iter().map(|r| (r.id.as_str(), r.correct)).collect();
    pairs.par_sort_by(|a, b| a.0.cmp(b.0));
    pairs
        .chunk_by(|a, b| a.0 == b.0)
        .map(|q| (q[0].0, q.iter().fold(0.0, |sum, (_, c)| sum + c) / q.len() as f64))
        .collect()
}
