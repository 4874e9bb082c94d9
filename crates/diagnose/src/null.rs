//! The label-permutation null: the blind accuracy a forest reaches from the
//! answer distribution alone. Golds are permuted among the questions of the
//! same question type, answer format and option count — so the share of each
//! answer (each letter, yes and no, each open answer) is kept while any link
//! between a question's text and its answer is broken — and the same fold
//! assignment (stratified on the permuted golds, as diagnose stratifies on the
//! real ones), features and forests are fit and scored again. An observed blind accuracy
//! is evidence of non-visual shortcuts only where it is above this null:
//! above chance is not enough (a forest learns an imbalanced answer
//! distribution from the training folds, and a finite set is always a little
//! imbalanced).
//!
//! ```text
//! per group (question type × format; a seeded sample of `sample_cap` questions
//!            when larger): observed blind accuracy on the tested questions
//! statistic: the blind accuracy of forests of `trees` (25) trees, same folds and
//!            features; the observed value is theirs on the real golds
//! round j = 1, 2, …: permute each undecided group's golds (seed, group, j),
//!                    fit and score it → group draw; weighted → overall draw
//! stop: every test decided at alpha (Besag-Clifford sequential p-values, a
//!       t-fit to at least 5 draws far beyond them, or a t-fit and the draws both
//!       putting p above 0.1, `stats::PermutationTest`), at most
//!       `max_permutations` rounds
//! ```
//!
//! The verdict, IBP's gate and stop, and the card all read this one null.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rayon::prelude::*;

use super::run::{GroupOut, group_samples, run_group};
use super::{DiagnoseConfig, Diagnosis};
use crate::ml::features;
use crate::sample::{AnswerFormat, Sample, id_cmp};
use crate::seed::{random_below, rng_for};
use crate::stats::{FIT_DRAWS, PermutationTest, Stopping};

/// Settings of the permutation null (`[diagnose] null-*`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NullConfig {
    /// The most permutations of a test (199: p resolves to 0.005).
    pub max_permutations: usize,
    /// Permutations drawn whatever the decision, so the null's mean and
    /// spread are estimated from more than one draw.
    pub min_permutations: usize,
    pub stopping: Stopping,
    /// A group with more questions is tested on a seeded sample of this many
    /// (observed and null alike): the null of a large group is tight, and a
    /// permutation of the whole group would cost a full diagnosis.
    pub sample_cap: usize,
    /// The level the decisions are made at (`[prune] alpha`).
    pub alpha: f64,
    /// Trees of the null's classification and regression forests. The test statistic
    /// is the blind accuracy of these smaller forests, on the real answers and on every
    /// permutation alike, so a draw costs a fraction of a diagnosis; a permutation test
    /// is valid for any statistic computed the same way on both.
    pub trees: usize,
    pub regression_trees: usize,
}

impl Default for NullConfig {
    fn default() -> Self {
        NullConfig {
            max_permutations: 199,
            min_permutations: FIT_DRAWS,
            stopping: Stopping::Decided,
            sample_cap: 2000,
            alpha: 0.01,
            trees: 25,
            regression_trees: 50,
        }
    }
}

fn futile_default() -> f64 {
    crate::stats::FUTILE_P
}

/// The p-value below which outputs call the evidence weak rather than absent, when it
/// does not reach alpha.
pub const WEAK_EVIDENCE: f64 = 0.05;

/// One test's outcome, as the reports carry it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct NullTest {
    /// Blind accuracy of the tested questions (the group's own unless sampled).
    pub observed: f64,
    /// Questions the test ran on.
    pub tested: usize,
    /// Permutations drawn.
    pub permutations: usize,
    /// Draws at or above the observed value.
    pub exceedances: usize,
    /// Mean blind accuracy of the null draws.
    pub mean: f64,
    /// The null's 95th percentile (from 20 draws or more; none when the test was
    /// decided with fewer).
    pub q95: Option<f64>,
    /// Sequential Monte Carlo p-value of the observed value; with `p_by_fit`, the
    /// bound 0.001.
    pub p_value: f64,
    /// No draw reached the observed value, which lies beyond the 99.9% t
    /// prediction bound of the draws (at least 5): decided early, p < 0.001.
    #[serde(default)]
    pub p_by_fit: bool,
    /// Drawing stopped early because neither the draws nor a t-fit to them (at least
    /// 5) put p below the level the outputs use (0.1, or twice alpha): `p_value` is
    /// the Monte Carlo one of the draws made.
    #[serde(default)]
    pub p_futile: bool,
    /// The level of that stop.
    #[serde(default = "futile_default")]
    pub futile_above: f64,
    /// Whether the observed value is above the null (p < alpha).
    pub above: bool,
}

impl NullTest {
    /// The p-value for a table cell: "0.250", or "< 0.001" when decided by fit.
    pub fn p_cell(&self) -> String {
        if self.p_by_fit { format!("< {}", crate::stats::FIT_P) } else { format!("{:.3}", self.p_value) }
    }

    /// "p = 0.250", or "p < 0.001 (t-fit to 5 permutations)".
    pub fn p_text(&self) -> String {
        if self.p_by_fit {
            format!("p < {} (t-fit to {} permutations, none reaching it)", crate::stats::FIT_P, self.permutations)
        } else if self.p_futile {
            format!(
                "{} (drawing stopped after {} permutations: a t-fit to them puts p above {})",
                super::verdict::p_text(self.p_value),
                self.permutations,
                self.futile_above
            )
        } else {
            super::verdict::p_text(self.p_value)
        }
    }

    fn of(t: &PermutationTest, tested: usize) -> NullTest {
        NullTest {
            observed: t.observed,
            tested,
            permutations: t.draws.len(),
            exceedances: t.exceed,
            mean: t.mean(),
            q95: t.q95(),
            p_value: t.p_value(),
            p_by_fit: t.clear_by_fit(),
            p_futile: !t.clear_by_fit() && t.exceed < t.stop_exceedances() && t.futile(),
            futile_above: t.futile_p(),
            above: t.above(),
        }
    }
}

/// One diagnosed group's null.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct GroupNull {
    pub question_type: Option<String>,
    pub format: AnswerFormat,
    /// Questions of the group.
    pub n: usize,
    #[serde(flatten)]
    pub test: NullTest,
}

/// The null of a diagnosis: overall and per group.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Null {
    /// Overall: the groups' tested questions pooled (a weighted mean of groups).
    pub overall: NullTest,
    pub groups: Vec<GroupNull>,
    pub max_permutations: usize,
    /// `decided` (sequential) or `all`.
    pub stopping: String,
    pub alpha: f64,
    /// Groups larger than this were tested on a seeded sample of this many questions.
    pub sample_cap: usize,
    /// Trees of the null's forests (the statistic: their blind accuracy, observed and
    /// permuted alike; `observed` values are theirs, not the diagnosis's).
    #[serde(default)]
    pub trees: usize,
}

impl Null {
    /// The null of the group of this type and format.
    pub fn group(&self, question_type: Option<&str>, format: AnswerFormat) -> Option<&GroupNull> {
        self.groups.iter().find(|g| g.question_type.as_deref() == question_type && g.format == format)
    }

    /// The groups tested on a sample, as (type, format, n, tested).
    pub fn sampled(&self) -> impl Iterator<Item = &GroupNull> {
        self.groups.iter().filter(|g| g.test.tested < g.n)
    }
}

/// The questions a group is tested on: all of them, or a seeded sample of
/// `cap` (in canonical order) when it has more.
fn tested_questions<'a>(group: &[&'a Sample], cap: usize, seed: u64) -> Vec<&'a Sample> {
    if group.len() <= cap.max(2) {
        return group.to_vec();
    }
    let mut keyed: Vec<(u64, &Sample)> =
        group.iter().map(|s| (rng_for(seed, "diagnose.null.sample", &s.id), *s)).collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| id_cmp(&a.1.id, &b.1.id)));
    let mut out: Vec<&Sample> = keyed.into_iter().take(cap).map(|(_, s)| s).collect();
    out.sort_by(|a, b| id_cmp(&a.id, &b.id));
    out
}

/// A copy of `group` with golds permuted among questions of the same type,
/// format and option count (images left out: the featurizer never reads them).
/// Multiple choice permutes the gold's position, so each question's gold is
/// one of its own options.
fn permuted(group: &[&Sample], seed: u64, key: &str) -> Vec<Sample> {
    let mut strata: BTreeMap<(Option<&str>, AnswerFormat, usize), Vec<usize>> = BTreeMap::new();
    for (i, s) in group.iter().enumerate() {
        strata.entry((s.question_type.as_deref(), s.answer_format, s.options.len())).or_default().push(i);
    }
    let mut out: Vec<Sample> = group.iter().map(|s| Sample { images: Vec::new(), ..(*s).clone() }).collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(rng_for(seed, "diagnose.null.permute", key));
    for members in strata.values() {
        // Fisher-Yates over the stratum's positions.
        let mut order = members.clone();
        for i in (1..order.len()).rev() {
            let j = random_below(&mut rng, 0, i + 1);
            order.swap(i, j);
        }
        for (&to, &from) in members.iter().zip(&order) {
            let src = group[from];
            let dst = &mut out[to];
            match (dst.answer_format, src.answer_index) {
                (AnswerFormat::MultipleChoice, Some(k)) => {
                    dst.answer_index = Some(k);
                    dst.answer = usize::try_from(k).ok().and_then(|k| dst.options.get(k).cloned()).unwrap_or_default();
                }
                _ => {
                    dst.answer = src.answer.clone();
                    dst.answer_index = src.answer_index;
                }
            }
        }
    }
    out
}

/// Mean correctness of a group's rows over every repeat.
fn accuracy(outs: &[GroupOut]) -> (f64, usize) {
    let (sum, n) = outs.iter().flat_map(|o| o.rows.iter()).fold((0.0, 0usize), |(s, n), r| (s + r.correct, n + 1));
    (if n == 0 { 0.0 } else { sum / n as f64 }, n)
}

/// One group as the null tests it.
struct Tested<'a> {
    key: (Option<String>, AnswerFormat),
    n: usize,
    samples: Vec<&'a Sample>,
    /// The tested questions parsed; the parse never reads an answer, so it serves
    /// every permutation of them.
    parsed: Vec<features::Parsed<'a>>,
    test: PermutationTest,
    /// Rows scored per draw (questions × repeats).
    rows: usize,
}

/// The permutation null of `d`, the diagnosis of `samples` under `cfg`.
/// Groups are those of the diagnosis; a group whose tested questions are all
/// its own takes its observed accuracy from `d`.
pub fn measure(samples: &[&Sample], cfg: &DiagnoseConfig, d: &Diagnosis, null: &NullConfig) -> Null {
    crate::progress::timed_labelled(
        || measure_rounds(samples, cfg, d, null),
        |n| {
            format!(
                "null (label permutations): {} round(s) over {} group(s), {} questions tested",
                n.overall.permutations,
                n.groups.len(),
                n.overall.tested
            )
        },
    )
}

fn measure_rounds(samples: &[&Sample], cfg: &DiagnoseConfig, d: &Diagnosis, null: &NullConfig) -> Null {
    let repeats = cfg.repeats.max(1);
    // The statistic: blind accuracy of the null's smaller forests, folds and features
    // as diagnose makes them.
    let diagnosis_cfg = cfg;
    let null_cfg = DiagnoseConfig { trees: null.trees, regression_trees: null.regression_trees, ..cfg.clone() };
    let cfg = &null_cfg;
    let same_forests = cfg.trees == diagnosis_cfg.trees && cfg.regression_trees == diagnosis_cfg.regression_trees;
    let groups: Vec<_> = group_samples(samples.iter().copied(), cfg.min_group).into_iter().collect();
    let _stage = crate::progress::stage("null (label permutations)".to_string());
    let mut tested: Vec<Tested<'_>> = groups
        .into_par_iter()
        .map(|((qtype, format), group)| {
            let chosen = tested_questions(&group, null.sample_cap, cfg.seed);
            let parsed = features::parse(&chosen, &cfg.features);
            let observed = if chosen.len() == group.len() && same_forests {
                let rows: Vec<f64> = d
                    .rows
                    .iter()
                    .filter(|r| r.question_type == qtype && r.format == format)
                    .map(|r| r.correct)
                    .collect();
                rows.iter().sum::<f64>() / rows.len().max(1) as f64
            } else {
                let refs: Vec<&features::Parsed<'_>> = parsed.iter().collect();
                let outs: Vec<GroupOut> =
                    (0..repeats).map(|r| run_group(&chosen, &refs, format, qtype.as_deref(), r, cfg)).collect();
                accuracy(&outs).0
            };
            let test =
                PermutationTest::new(observed, null.max_permutations, null.min_permutations, null.alpha, null.stopping);
            Tested { key: (qtype, format), n: group.len(), rows: chosen.len() * repeats, samples: chosen, parsed, test }
        })
        .collect();
    let total_rows: usize = tested.iter().map(|t| t.rows).sum();
    let overall_observed =
        tested.iter().map(|t| t.test.observed * t.rows as f64).sum::<f64>() / total_rows.max(1) as f64;
    let mut overall =
        PermutationTest::new(overall_observed, null.max_permutations, null.min_permutations, null.alpha, null.stopping);
    let mut round = 0;
    while !(overall.done() && tested.iter().all(|t| t.test.done())) && round < null.max_permutations {
        round += 1;
        let need_all = !overall.done();
        let draws: Vec<Option<f64>> = tested
            .par_iter()
            .map(|t| {
                if !need_all && t.test.done() {
                    return None;
                }
                let key = format!("{:?}/{:?}/{round}", t.key.0, t.key.1);
                let perm = permuted(&t.samples, cfg.seed, &key);
                let perm_refs: Vec<&Sample> = perm.iter().collect();
                let parsed: Vec<&features::Parsed<'_>> = t.parsed.iter().collect();
                // Folds as diagnose makes them: stratified on the (permuted) golds. Folds
                // stratified on the real golds would spread the permuted ones unevenly,
                // and a forest that learns the training folds' answer shares would then
                // score below what it scores on stratified folds.
                let outs: Vec<GroupOut> =
                    (0..repeats).map(|r| run_group(&perm_refs, &parsed, t.key.1, t.key.0.as_deref(), r, cfg)).collect();
                Some(accuracy(&outs).0)
            })
            .collect();
        for (t, draw) in tested.iter_mut().zip(&draws) {
            if let Some(v) = draw
                && !t.test.done()
            {
                t.test.push(*v);
            }
        }
        if need_all {
            let draw = tested.iter().zip(&draws).map(|(t, v)| v.unwrap_or(0.0) * t.rows as f64).sum::<f64>()
                / total_rows.max(1) as f64;
            overall.push(draw);
        }
    }
    let overall_tested: usize = tested.iter().map(|t| t.samples.len()).sum();
    Null {
        overall: NullTest::of(&overall, overall_tested),
        groups: tested
            .iter()
            .map(|t| GroupNull {
                question_type: t.key.0.clone(),
                format: t.key.1,
                n: t.n,
                test: NullTest::of(&t.test, t.samples.len()),
            })
            .collect(),
        max_permutations: null.max_permutations,
        stopping: match null.stopping {
            Stopping::Decided => "decided".into(),
            Stopping::All => "all".into(),
        },
        alpha: null.alpha,
        sample_cap: null.sample_cap,
        trees: null.trees,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permuting_keeps_each_strata_answers_and_options() {
        let samples: Vec<Sample> = (0..40)
            .map(|i| {
                let mut s = Sample::new(format!("q{i:02}"), format!("question {i}"), "");
                s.answer_format = AnswerFormat::MultipleChoice;
                let k = if i % 2 == 0 { 2 } else { 4 };
                s.options = (0..k).map(|j| format!("o{i}-{j}")).collect();
                let gold = (i * 7) % k;
                s.answer_index = Some(gold as i32);
                s.answer = s.options[gold].clone();
                s.question_type = Some(if i < 20 { "a" } else { "b" }.into());
                s
            })
            .collect();
        let refs: Vec<&Sample> = samples.iter().collect();
        let p = permuted(&refs, 42, "k");
        // Per stratum, the multiset of gold positions is the same.
        let positions = |v: &[&Sample], ty: &str, k: usize| {
            let mut x: Vec<i32> = v
                .iter()
                .filter(|s| s.question_type.as_deref() == Some(ty) && s.options.len() == k)
                .map(|s| s.answer_index.unwrap_or(-1))
                .collect();
            x.sort();
            x
        };
        let prefs: Vec<&Sample> = p.iter().collect();
        for ty in ["a", "b"] {
            for k in [2, 4] {
                assert_eq!(positions(&refs, ty, k), positions(&prefs, ty, k), "{ty}/{k}");
            }
        }
        // Each gold is still one of the question's own options, at its index.
        for s in &p {
            assert_eq!(s.options[s.answer_index.unwrap_or(0) as usize], s.answer);
        }
        // Something moved, and the same seed gives the same permutation.
        assert!(p.iter().zip(&samples).any(|(a, b)| a.answer_index != b.answer_index));
        assert_eq!(permuted(&refs, 42, "k"), p);
        assert_ne!(permuted(&refs, 42, "other"), p);
    }

    #[test]
    fn a_sample_is_seeded_and_in_canonical_order() {
        let samples: Vec<Sample> = (0..50).map(|i| Sample::new(format!("q{i}"), "x", "y")).collect();
        let refs: Vec<&Sample> = samples.iter().collect();
        let a = tested_questions(&refs, 10, 1);
        assert_eq!(a.len(), 10);
        assert!(a.windows(2).all(|w| id_cmp(&w[0].id, &w[1].id).is_lt()));
        assert_eq!(
            a.iter().map(|s| &s.id).collect::<Vec<_>>(),
            tested_questions(&refs, 10, 1).iter().map(|s| &s.id).collect::<Vec<_>>()
        );
        assert_eq!(tested_questions(&refs, 100, 1).len(), 50);
    }
}
