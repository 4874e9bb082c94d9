//! The label-permutation null: the blind accuracy a forest reaches from the
//! answer distribution alone. Golds are permuted among the questions of the
//! same question type, answer format and option count — so the share of each
//! answer (each letter, yes and no, each open answer) is kept while any link
//! between a question's text and its answer is broken — and features and forests
//! are fit and scored again. The folds are those of the real golds (stratified on
//! them, as diagnose makes them) and golds move only among the questions of one
//! fold, so every fold holds the same answers under every permutation as it does
//! under the real golds: what a forest learns from its training folds' answer
//! shares is the same in every draw, and everything that does not read an answer
//! (templates, vocabularies, each question's keys) is fit once per fold
//! (`features::Relabel`). A permutation restricted to a subgroup is as valid as a
//! free one: under the null hypothesis the golds of a fold are exchangeable
//! among its questions. An observed blind accuracy
//! is evidence of non-visual shortcuts only where it is above this null:
//! above chance is not enough (a forest learns an imbalanced answer
//! distribution from the training folds, and a finite set is always a little
//! imbalanced).
//!
//! ```text
//! per group (question type × format; a seeded sample of `sample_cap` questions
//!            when larger): observed blind accuracy on the tested questions
//! statistic: the blind accuracy of forests of `trees` (25) trees, features as
//!            diagnose makes them, on the folds of the first repeat; the observed
//!            value is theirs on the real golds (for a group tested whole, the
//!            diagnosis's forests cut to their first `trees` trees, which are these
//!            forests: `GroupSummary::first_trees`)
//! round j = 1, 2, …: permute each undecided group's golds within each fold and
//!                    stratum (seed, group, j), refit the answer statistics and
//!                    forests, score → group draw; weighted → overall draw
//! stop: every test decided at alpha (Besag-Clifford sequential p-values, a
//!       t-fit to at least 5 draws far beyond them, or a t-fit and the draws both
//!       putting p above 0.1, `stats::PermutationTest`), at most
//!       `max_permutations` rounds; a test whose blind accuracy is not above the
//!       majority baseline (not above its null whatever p) at `moot_permutations`
//! ```
//!
//! The verdict, IBP's gate and stop, and the card all read this one null.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rayon::prelude::*;

use super::run::{FOLDS_IN_FLIGHT, FoldOf, assign_folds, fit_matrices, group_samples, split_fold};
use super::{DiagnoseConfig, Diagnosis};
use crate::ml::features::{self, Relabel};
use crate::par::bounded_map;
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
    /// Permutations of a test that no draw can decide (its blind accuracy is not above
    /// the majority baseline, so it is not above its null whatever p): they only
    /// estimate the null's mean and spread for the outputs, and no decision reads them.
    pub moot_permutations: usize,
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
            moot_permutations: MOOT_DRAWS,
            stopping: Stopping::Decided,
            sample_cap: 2000,
            alpha: 0.01,
            trees: 25,
            regression_trees: 50,
        }
    }
}

/// Draws of a moot test: a mean and a spread with a degree of freedom to spare. Fewer
/// than [`FIT_DRAWS`], so no 95th percentile is fitted to them.
pub const MOOT_DRAWS: usize = 3;

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
    /// Drawing stopped at 3 permutations, which estimate the null's mean, because the
    /// blind accuracy is not above the majority baseline: such a group (or set) is not
    /// above its null whatever p, so no draw could change a decision. `p_value` is the
    /// Monte Carlo one of the draws made (valid, and coarse). Sequential stopping only:
    /// `permutation-stop = "all"` draws every permutation.
    #[serde(default)]
    pub p_moot: bool,
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
        } else if self.p_moot {
            format!(
                "{} (drawing stopped after {} permutations: the blind accuracy is not above the majority baseline, so \
                 no p-value would make it above)",
                super::verdict::p_text(self.p_value),
                self.permutations
            )
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

    /// The outcome of `t`, run on `tested` questions; `moot` when its draws were capped
    /// at the fewest because the blind accuracy is not above the majority baseline.
    fn of(t: &PermutationTest, tested: usize, moot: bool) -> NullTest {
        let p_futile = !t.clear_by_fit() && t.exceed < t.stop_exceedances() && t.futile();
        NullTest {
            observed: t.observed,
            tested,
            permutations: t.draws.len(),
            exceedances: t.exceed,
            mean: t.mean(),
            q95: t.q95(),
            p_value: t.p_value(),
            p_by_fit: t.clear_by_fit(),
            p_futile,
            futile_above: t.futile_p(),
            p_moot: moot && !t.clear_by_fit() && !p_futile,
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

/// A copy of `group` with golds permuted among questions of the same fold
/// (`fold_of[i]`: `group[i]`'s), type, format and option count (images left out: the
/// featurizer never reads them). Multiple choice permutes the gold's position, so
/// each question's gold is one of its own options.
fn permuted(group: &[&Sample], fold_of: &[usize], seed: u64, key: &str) -> Vec<Sample> {
    let mut strata: BTreeMap<(usize, Option<&str>, AnswerFormat, usize), Vec<usize>> = BTreeMap::new();
    for (i, s) in group.iter().enumerate() {
        strata.entry((fold_of[i], s.question_type.as_deref(), s.answer_format, s.options.len())).or_default().push(i);
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

/// Groups whose null is drawn at once: each holds its folds' featurizers (a few KB per
/// tested question and fold) while it draws, so memory grows with this, not with the
/// number of groups.
const GROUPS_IN_FLIGHT: usize = 4;

/// One group as the null tests it.
struct Tested<'a> {
    key: (Option<String>, AnswerFormat),
    n: usize,
    samples: Vec<&'a Sample>,
    /// The fold of each tested question: stratified on the real golds, kept by every
    /// permutation.
    fold_of: Vec<usize>,
}

/// A group's test and every draw made for it: its own test takes them until it is
/// done, the overall test may need more.
#[derive(Clone)]
struct Drawn {
    test: PermutationTest,
    draws: Vec<f64>,
}

impl<'a> Tested<'a> {
    /// Per fold, its featurizer fitted on the real golds and ready to be relabelled;
    /// `None` for a fold without held-out questions. `parsed[i]` is `samples[i]` parsed.
    fn folds<'p>(&self, parsed: &'p [features::Parsed<'p>], cfg: &DiagnoseConfig) -> Vec<Option<Relabel<'p>>> {
        let k = self.fold_of.iter().copied().max().map_or(0, |m| m + 1);
        let parsed: Vec<&features::Parsed<'_>> = parsed.iter().collect();
        bounded_map(k, FOLDS_IN_FLIGHT, |fold| {
            let (train, test) = split_fold(&self.samples, &self.fold_of, fold);
            if test.is_empty() {
                return None;
            }
            let (parsed_train, parsed_test) = split_fold(&parsed, &self.fold_of, fold);
            Some(Relabel::new(&train, &parsed_train, &parsed_test, &cfg.features))
        })
    }

    /// The statistic on `samples` (the tested questions, relabelled): blind accuracy
    /// over every fold.
    fn accuracy(&self, folds: &[Option<Relabel<'_>>], samples: &[&Sample], cfg: &DiagnoseConfig) -> f64 {
        let fits = bounded_map(folds.len(), FOLDS_IN_FLIGHT, |fold| {
            let relabel = folds[fold].as_ref()?;
            let (train, test) = split_fold(samples, &self.fold_of, fold);
            let (x_train, x_test) = relabel.matrices(&train);
            let at = FoldOf { format: self.key.1, qtype: self.key.0.as_deref(), repeat: 0, fold };
            let fit = fit_matrices(&train, &test, relabel.names(), x_train, x_test, &at, cfg, false);
            Some(fit.out.rows.iter().map(|r| r.correct).sum::<f64>())
        });
        fits.into_iter().flatten().sum::<f64>() / samples.len().max(1) as f64
    }

    /// This group's draws, continued from `so_far` (or started: the observed value is
    /// `observed`, else measured, and its test made by `new_test`) until its own test is
    /// done and `need` draws are made, at most `max` in all. Round `j`'s permutation
    /// is seeded by the group and `j` alone, so the draws are the same whichever
    /// groups are drawn beside it and however often it is resumed.
    #[allow(clippy::too_many_arguments)]
    fn draw(
        &self,
        so_far: Option<&Drawn>,
        need: usize,
        max: usize,
        observed: Option<f64>,
        new_test: impl Fn(f64) -> PermutationTest,
        cfg: &DiagnoseConfig,
    ) -> Drawn {
        let parsed = features::parse(&self.samples, &cfg.features);
        let folds = self.folds(&parsed, cfg);
        let mut g = match so_far {
            Some(g) => g.clone(),
            None => {
                let observed = observed.unwrap_or_else(|| self.accuracy(&folds, &self.samples, cfg));
                Drawn { test: new_test(observed), draws: Vec::new() }
            }
        };
        while (!g.test.done() || g.draws.len() < need) && g.draws.len() < max {
            let round = g.draws.len() + 1;
            let key = format!("{:?}/{:?}/{round}", self.key.0, self.key.1);
            let perm = permuted(&self.samples, &self.fold_of, cfg.seed, &key);
            let refs: Vec<&Sample> = perm.iter().collect();
            let v = self.accuracy(&folds, &refs, cfg);
            if !g.test.done() {
                g.test.push(v);
            }
            g.draws.push(v);
        }
        g
    }
}

/// The permutation null of `d`, the diagnosis of `samples` under `cfg`.
/// Groups are those of the diagnosis; a group whose tested questions are all
/// its own takes its observed accuracy from `d`'s first repeat when `d`'s forests are
/// the null's.
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
    // The statistic: blind accuracy of the null's smaller forests, folds and features
    // as diagnose makes them.
    let diagnosis_cfg = cfg;
    let null_cfg = DiagnoseConfig { trees: null.trees, regression_trees: null.regression_trees, ..cfg.clone() };
    let cfg = &null_cfg;
    let same_forests = cfg.trees == diagnosis_cfg.trees && cfg.regression_trees == diagnosis_cfg.regression_trees;
    let groups: Vec<_> = group_samples(samples.iter().copied(), cfg.min_group).into_iter().collect();
    let _stage = crate::progress::stage("null (label permutations)".to_string());
    let tested: Vec<Tested<'_>> = groups
        .into_par_iter()
        .map(|((qtype, format), group)| {
            let chosen = tested_questions(&group, null.sample_cap, cfg.seed);
            let fold_of = assign_folds(&chosen, format, 0, cfg);
            Tested { key: (qtype, format), n: group.len(), samples: chosen, fold_of }
        })
        .collect();
    // A group whose blind accuracy is not above its majority baseline is not above its
    // null whatever p (the verdict, IBP and the after-pruning check all ask for both):
    // its test stops at `moot_permutations`, which estimate the null's mean and spread
    // (unless every permutation is asked for: `permutation-stop = "all"`).
    let sequential = null.stopping == Stopping::Decided;
    let moot: Vec<bool> = tested
        .iter()
        .map(|t| {
            sequential
                && d.groups
                    .iter()
                    .find(|g| g.question_type == t.key.0 && g.format == t.key.1)
                    .is_some_and(|g| g.blind_accuracy <= g.majority)
        })
        .collect();
    let draws_for = |moot: bool| if moot { null.moot_permutations } else { null.max_permutations };
    // A group tested whole takes its observed value from the diagnosis's first repeat:
    // its forests when they are the null's, else their first trees, which are the
    // null's forests (`GroupSummary::first_trees`).
    let observed_in_d = |t: &Tested<'_>| {
        if t.samples.len() != t.n {
            return None;
        }
        if same_forests {
            let rows: Vec<f64> = d
                .rows
                .iter()
                .filter(|r| r.repeat == 0 && r.question_type == t.key.0 && r.format == t.key.1)
                .map(|r| r.correct)
                .collect();
            return Some(rows.iter().sum::<f64>() / rows.len().max(1) as f64);
        }
        let group = d.groups.iter().find(|g| g.question_type == t.key.0 && g.format == t.key.1)?;
        let first = group.first_trees.as_ref()?;
        (first.trees == cfg.trees && first.regression_trees == cfg.regression_trees).then_some(first.blind_accuracy)
    };
    let total_rows: usize = tested.iter().map(|t| t.samples.len()).sum();
    let weighted = |values: &mut dyn Iterator<Item = f64>| {
        values.zip(&tested).map(|(v, t)| v * t.samples.len() as f64).sum::<f64>() / total_rows.max(1) as f64
    };
    let overall_moot = sequential && d.weighted <= d.majority;
    // Group by group, a few at a time: each draws until its own test is done; the
    // overall test then takes round j's weighted draw while it is undecided, and where
    // it needs rounds a group did not draw, those groups draw on. The draws are those
    // of drawing every group round by round.
    let mut drawn: Vec<Option<Drawn>> = vec![None; tested.len()];
    let mut need = 0;
    let overall = loop {
        let jobs: Vec<usize> = (0..tested.len())
            .filter(|&i| drawn[i].as_ref().is_none_or(|g| !g.test.done() || g.draws.len() < need))
            .collect();
        let fresh = bounded_map(jobs.len(), GROUPS_IN_FLIGHT, |j| {
            let i = jobs[j];
            let t = &tested[i];
            let new_test = |observed| {
                PermutationTest::new(observed, draws_for(moot[i]), null.min_permutations, null.alpha, null.stopping)
                    .with_resolution(1.0 / t.samples.len().max(1) as f64)
            };
            t.draw(drawn[i].as_ref(), need, null.max_permutations, observed_in_d(t), new_test, cfg)
        });
        for (i, g) in jobs.into_iter().zip(fresh) {
            drawn[i] = Some(g);
        }
        let all: Vec<&Drawn> = drawn.iter().flatten().collect();
        let observed = weighted(&mut all.iter().map(|g| g.test.observed));
        let mut overall =
            PermutationTest::new(observed, draws_for(overall_moot), null.min_permutations, null.alpha, null.stopping)
                .with_resolution(1.0 / total_rows.max(1) as f64);
        let available = all.iter().map(|g| g.draws.len()).min().unwrap_or(null.max_permutations);
        let mut round = 0;
        while !overall.done() && round < available.min(null.max_permutations) {
            overall.push(weighted(&mut all.iter().map(|g| g.draws[round])));
            round += 1;
        }
        if overall.done() || round >= null.max_permutations {
            break overall;
        }
        // Resumed groups refit their folds' featurizers: ask for rounds in doubling blocks.
        need = (round + 1).max(2 * round).min(null.max_permutations);
    };
    let tests: Vec<&PermutationTest> = drawn.iter().flatten().map(|g| &g.test).collect();
    Null {
        overall: NullTest::of(&overall, total_rows, overall_moot),
        groups: tested
            .iter()
            .zip(&tests)
            .zip(&moot)
            .map(|((t, test), &moot)| GroupNull {
                question_type: t.key.0.clone(),
                format: t.key.1,
                n: t.n,
                test: NullTest::of(test, t.samples.len(), moot),
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
        let folds = vec![0; refs.len()];
        let p = permuted(&refs, &folds, 42, "k");
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
        assert_eq!(permuted(&refs, &folds, 42, "k"), p);
        assert_ne!(permuted(&refs, &folds, 42, "other"), p);
    }

    /// A group whose blind accuracy is not above its majority baseline cannot be above
    /// its null, so its test stops at the fewest draws and says why; a group with a
    /// shortcut is tested to its decision. Yes/no questions of random words: type `t`
    /// answers yes exactly when its question is long, type `m` is yes nine times in ten
    /// whatever it says.
    #[test]
    fn a_group_not_above_its_majority_stops_at_three_draws() {
        use rand::Rng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let words = ["red", "blue", "cat", "dog", "car", "tree", "lamp", "cup"];
        let samples: Vec<Sample> = (0..160)
            .map(|i| {
                let (kind, yes) = if i < 80 { ("t", i % 2 == 0) } else { ("m", rng.random_range(0..10) < 9) };
                let length = if kind == "t" && yes { 12 } else { 4 };
                let question: Vec<&str> = (0..length).map(|_| words[rng.random_range(0..words.len())]).collect();
                let mut s = Sample::new(format!("q{i:03}"), question.join(" "), if yes { "yes" } else { "no" });
                s.answer_format = AnswerFormat::YesNo;
                s.question_type = Some(kind.into());
                s
            })
            .collect();
        let cfg = DiagnoseConfig::default();
        let d = crate::run::diagnose(&samples, &cfg);
        let refs: Vec<&Sample> = samples.iter().collect();
        let null = measure(&refs, &cfg, &d, &cfg.null);
        let summary = |t: &str| d.groups.iter().find(|g| g.question_type.as_deref() == Some(t)).expect("a group");
        let test = |t: &str| &null.group(Some(t), AnswerFormat::YesNo).expect("a null").test;
        let m = summary("m");
        assert!(m.blind_accuracy <= m.majority, "{m:?}");
        assert_eq!(test("m").permutations, 3, "{:?}", test("m"));
        assert!(test("m").q95.is_none(), "no t-fit to 3 draws: {:?}", test("m"));
        assert!(test("m").p_moot && !test("m").above, "{:?}", test("m"));
        assert!(test("m").p_text().contains("not above the majority baseline"), "{}", test("m").p_text());
        let t = summary("t");
        assert!(t.blind_accuracy > t.majority, "{t:?}");
        assert!(test("t").above && !test("t").p_moot, "{:?}", test("t"));
        // Every permutation, when every permutation is asked for.
        let every = NullConfig { max_permutations: 12, stopping: Stopping::All, ..cfg.null.clone() };
        let all = measure(&refs, &cfg, &d, &every);
        let m_all = &all.group(Some("m"), AnswerFormat::YesNo).expect("a null").test;
        assert_eq!((m_all.permutations, m_all.p_moot), (12, false), "{m_all:?}");
    }

    /// The observed value the null takes from the diagnosis (its forests' first trees)
    /// is, bit for bit, the one it would fit itself, in every answer format.
    #[test]
    fn the_diagnosis_first_trees_are_the_null_fit_on_the_real_answers() {
        use rand::Rng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let words = ["red", "blue", "cat", "dog", "car", "tree", "lamp", "cup", "sun"];
        let samples: Vec<Sample> = (0..800)
            .map(|i| {
                let length = rng.random_range(2..10);
                let question: Vec<&str> = (0..length).map(|_| words[rng.random_range(0..words.len())]).collect();
                let mut s = Sample::new(format!("q{i:03}"), question.join(" "), "");
                match i % 4 {
                    0 => {
                        s.answer_format = AnswerFormat::MultipleChoice;
                        s.options = (0..4).map(|j| words[(i + j * 2) % words.len()].repeat(1 + (i + j) % 3)).collect();
                        let gold = if length > 7 { 1 } else { rng.random_range(0..4) };
                        s.answer_index = Some(gold as i32);
                        s.answer = s.options[gold].clone();
                    }
                    1 => {
                        s.answer_format = AnswerFormat::YesNo;
                        s.answer = if length > 5 || rng.random_range(0..2) == 0 { "yes" } else { "no" }.into();
                    }
                    2 => {
                        s.answer_format = AnswerFormat::Open;
                        s.answer = words[(length + rng.random_range(0..2)) % 4].into();
                    }
                    _ => {
                        s.answer_format = AnswerFormat::Numeric;
                        s.answer = (length * 3 + rng.random_range(0..3)).to_string();
                    }
                }
                s
            })
            .collect();
        let cfg = DiagnoseConfig::default();
        assert!(cfg.null.trees < cfg.trees && cfg.null.regression_trees < cfg.regression_trees);
        let d = crate::run::diagnose(&samples, &cfg);
        let null_cfg =
            DiagnoseConfig { trees: cfg.null.trees, regression_trees: cfg.null.regression_trees, ..cfg.clone() };
        let refs: Vec<&Sample> = samples.iter().collect();
        let groups = group_samples(refs.iter().copied(), cfg.min_group);
        assert_eq!(groups.len(), 4);
        for ((qtype, format), group) in groups {
            let fold_of = assign_folds(&group, format, 0, &null_cfg);
            let tested = Tested { key: (qtype.clone(), format), n: group.len(), samples: group.clone(), fold_of };
            let parsed = features::parse(&tested.samples, &null_cfg.features);
            let folds = tested.folds(&parsed, &null_cfg);
            let refit = tested.accuracy(&folds, &tested.samples, &null_cfg);
            let summary = d.groups.iter().find(|g| g.question_type == qtype && g.format == format).expect("a group");
            let first = summary.first_trees.as_ref().expect("the first trees' accuracy");
            assert_eq!((first.trees, first.regression_trees), (cfg.null.trees, cfg.null.regression_trees));
            assert_eq!(first.blind_accuracy.to_bits(), refit.to_bits(), "{format:?}: {first:?} against {refit}");
            assert!(refit > 0.0 && refit < 1.0, "{format:?}: {refit}");
        }
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
