//! What a pruning run returns: the kept ids, the removals with their reasons,
//! every iteration, and the kept set re-measured on fresh seeds.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::config::{Method, PruneConfig};
use crate::diagnose::{DiagnoseConfig, Diagnosis};
use crate::sample::{AnswerFormat, Sample};

/// One removed question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Removed {
    pub id: String,
    pub question_type: Option<String>,
    pub format: AnswerFormat,
    /// 1-based iteration that removed it.
    pub iteration: usize,
    /// The score it was ranked by (s, s − chance, AFLite predictability; random: s).
    pub score: f64,
    pub reason: String,
}

/// The state at the start of one iteration (the last entry: the final set, or the
/// last batch's when the budget ended an IBP run measured on fresh seeds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iteration {
    pub iteration: usize,
    pub size: usize,
    /// Removed so far, before this iteration.
    pub removed_before: usize,
    pub max_bias: f64,
    pub mean_bias: f64,
    /// TsT-RF blind accuracy of the set (AFLite: the probes' held-out accuracy).
    pub blind_accuracy: f64,
    /// The 95% bootstrap interval (TsT-RF: over questions or fold groups; AFLite: over questions, of the
    /// held-out accuracy).
    pub ci95: Option<(f64, f64)>,
    pub chance: f64,
    /// Removed in this iteration.
    pub removed: usize,
}

/// The result of a pruning run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pruned {
    pub method: Method,
    pub config: PruneConfig,
    /// Budget in questions, per allocation key.
    pub budgets: BTreeMap<String, usize>,
    /// Kept ids in input order.
    pub kept: Vec<String>,
    /// Removed in removal order.
    pub removed: Vec<Removed>,
    pub iterations: Vec<Iteration>,
    /// Why the loop ended.
    pub stop: String,
    /// TsT-RF on the input (before) and on the kept set (after), with the
    /// folds and forests that chose the removals. IBP leaves `after` empty when its
    /// budget is spent and fresh seeds measure the kept set (`after_independent`).
    pub before: Option<Diagnosis>,
    pub after: Option<Diagnosis>,
    /// The kept set re-diagnosed with fresh seeds (no selection effect).
    #[serde(default)]
    pub after_independent: Option<Independent>,
    pub n_input: usize,
    /// What was removed at once ("question", "image", "meta:FIELD").
    #[serde(default)]
    pub unit: String,
    /// Units removed (each whole).
    #[serde(default)]
    pub units_removed: usize,
}

/// The kept set's blind accuracy on fold assignments and forests that did not
/// choose the removals: one diagnose with `seeds.len()` repeats from a seed
/// derived for this purpose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Independent {
    /// The repeats' seeds.
    pub seeds: Vec<u64>,
    pub n_samples: usize,
    pub blind_accuracy: f64,
    pub ci95: (f64, f64),
    pub chance: f64,
    pub majority: f64,
    /// Per diagnosed group of the kept set: its blind accuracy on the fresh seeds
    /// against its own label-permutation null (measured on the first fresh seed).
    #[serde(default)]
    pub groups: Vec<KeptGroup>,
}

/// One group of the kept set after pruning, judged as the verdict judges a group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptGroup {
    pub question_type: Option<String>,
    pub format: crate::sample::AnswerFormat,
    pub n: usize,
    pub blind_accuracy: f64,
    pub majority: f64,
    /// The null's mean (its forests' blind accuracy on permuted answers).
    pub null_mean: f64,
    pub p_value: f64,
    /// Above its null at alpha and above its majority baseline: still blind-answerable.
    pub above: bool,
}

impl KeptGroup {
    /// `"count" (multiple_choice)`: the group as the warnings name it.
    pub fn name(&self) -> String {
        format!("\"{}\" ({})", self.question_type.as_deref().unwrap_or("(no type)"), self.format.as_str())
    }
}

impl Independent {
    /// The groups still above their null after pruning.
    pub fn still_above(&self) -> impl Iterator<Item = &KeptGroup> {
        self.groups.iter().filter(|g| g.above)
    }

    /// One line per group still above its null, for the terminal and the card:
    /// `"count" (multiple_choice) still answers 81.0% blind (null 34.2%, p = 0.001)`.
    pub fn still_above_lines(&self) -> Vec<String> {
        self.still_above()
            .map(|g| {
                format!(
                    "{} still answers {:.1}% blind (null {:.1}%, {})",
                    g.name(),
                    g.blind_accuracy * 100.0,
                    g.null_mean * 100.0,
                    crate::diagnose::verdict::p_text(g.p_value)
                )
            })
            .collect()
    }
}

/// The 95% CI half-width (a fraction) within which one fresh seed measures the
/// kept set as well as more would.
pub const FRESH_SEED_HALF_WIDTH: f64 = 0.005;

/// How many fresh seeds re-measure a kept set of `n` questions whose blind
/// accuracy on the first fresh seed is `accuracy` with 95% CI `ci`: 1 when the
/// wider of that interval and the Wilson interval of `n` questions has a
/// half-width of at most [`FRESH_SEED_HALF_WIDTH`], else `max`. (The Wilson
/// interval keeps a small set whose bootstrap interval is degenerate, all
/// right or all wrong, from passing for a precise one.)
pub fn fresh_seed_count(max: usize, first: Option<(f64, (f64, f64), usize)>) -> usize {
    let Some((accuracy, (lo, hi), n)) = first else { return max };
    let (wlo, whi) = crate::stats::wilson(accuracy * n as f64, n as f64, 1.959_963_984_540_054);
    let half_width = ((hi - lo) / 2.0).max((whi - wlo) / 2.0);
    if max > 0 && half_width <= FRESH_SEED_HALF_WIDTH { 1 } else { max }
}

/// "1 fresh seed", "3 fresh seeds".
pub fn fresh_seeds(n: usize) -> String {
    format!("{n} fresh seed{}", if n == 1 { "" } else { "s" })
}

impl Independent {
    /// Re-diagnoses `kept` with fresh repeats (None when `max` is 0 or nothing is
    /// kept): one, then up to `max` in all when [`fresh_seed_count`] finds the first
    /// one's interval wider than [`FRESH_SEED_HALF_WIDTH`] (more seeds would narrow
    /// nothing a reader can see once it is narrow: it is dominated by which questions
    /// were asked, not by the forests' seed). The first seed's results are reused, to
    /// the bit, by the run of all of them, which is the diagnosis a run of `max`
    /// repeats gives.
    pub fn measure(
        kept: &[&Sample],
        dcfg: &DiagnoseConfig,
        seed: u64,
        max: usize,
        emb: Option<&crate::embed::SampleEmbeddings>,
    ) -> crate::error::Result<Option<Independent>> {
        if max == 0 || kept.is_empty() {
            return Ok(None);
        }
        let fresh = crate::seed::rng_for(seed, "prune.independent", "");
        let mut cache = crate::diagnose::GroupCache::default();
        let first = DiagnoseConfig { seed: fresh, repeats: 1, ..dcfg.clone() };
        let mut d = crate::progress::timed(&format!("after pruning: diagnose with {}", fresh_seeds(1)), || {
            crate::diagnose::diagnose_with_cache(kept, &first, emb, &mut cache)
        })?;
        // Say what is left: each group of the kept set against its own null.
        d.null = Some(crate::diagnose::null::measure(kept, &first, &d, &dcfg.null));
        let null = d.null.clone();
        let n = fresh_seed_count(max, Some((d.weighted, d.ci95, d.n_samples)));
        let d = if n <= 1 {
            d
        } else {
            let all = DiagnoseConfig { repeats: n, ..first };
            let label = format!(
                "after pruning: {} more fresh seed(s) (the first's 95% CI is wider than ±{} points)",
                n - 1,
                FRESH_SEED_HALF_WIDTH * 100.0
            );
            crate::progress::timed(&label, || crate::diagnose::diagnose_with_cache(kept, &all, emb, &mut cache))?
        };
        let mut d = d;
        d.null = null;
        let groups = d
            .groups
            .iter()
            .map(|g| {
                let test = d.null.as_ref().and_then(|n| n.group(g.question_type.as_deref(), g.format));
                KeptGroup {
                    question_type: g.question_type.clone(),
                    format: g.format,
                    n: g.n,
                    blind_accuracy: g.blind_accuracy,
                    majority: g.majority,
                    null_mean: test.map_or(f64::NAN, |t| t.test.mean),
                    p_value: test.map_or(1.0, |t| t.test.p_value),
                    above: crate::diagnose::verdict::group_above(&d, g),
                }
            })
            .collect();
        Ok(Some(Independent {
            seeds: (0..n as u64).map(|r| fresh.wrapping_add(r)).collect(),
            n_samples: d.n_samples,
            blind_accuracy: d.weighted,
            ci95: d.ci95,
            chance: d.chance,
            majority: d.majority,
            groups,
        }))
    }
}

impl Pruned {
    /// The matched random control of this run: the same settings, removing
    /// exactly as many questions per allocation key as this run did.
    pub fn matched_control(&self) -> PruneConfig {
        let mut per_key: BTreeMap<String, usize> = self.budgets.keys().map(|k| (k.clone(), 0)).collect();
        for r in &self.removed {
            *per_key.entry(self.config.allocation.key_of(r.question_type.as_deref(), r.format)).or_default() += 1;
        }
        PruneConfig { method: Method::Random, matched: Some(per_key), ..self.config.clone() }
    }

    /// What was removed and why it stopped, then a short table of blind accuracy
    /// before and after (fresh seeds first: the figure to quote).
    pub fn summary(&self) -> String {
        let p = self;
        let units = if p.unit.is_empty() || p.unit == "question" {
            String::new()
        } else {
            format!(", {} whole unit(s) of one {}", p.units_removed, p.unit)
        };
        let mut text = format!(
            "{}: removed {} of {}{units} in {} iteration(s), stop rule {}: {}",
            p.method.as_str(),
            p.removed.len(),
            p.n_input,
            p.iterations.iter().filter(|i| i.removed > 0).count(),
            p.config.stop.as_str(),
            p.stop,
        );
        let line = |text: &mut String, name: &str, n: usize, acc: f64, ci: (f64, f64), chance: f64| {
            text.push_str(&format!(
                "\n    {name:<24} {n:>8}  {:>6.2}% ({:.2}-{:.2})  {:>6.2}%",
                acc * 100.0,
                ci.0 * 100.0,
                ci.1 * 100.0,
                chance * 100.0
            ));
        };
        text.push_str(&format!(
            "\n    {:<24} {:>8}  {:<22} {:>7}",
            "blind accuracy", "questions", "(95% CI)", "chance"
        ));
        if let Some(d) = &p.before {
            line(&mut text, "before", d.n_samples, d.weighted, d.ci95, d.chance);
        }
        if let Some(i) = &p.after_independent {
            line(
                &mut text,
                &format!("after, {}", fresh_seeds(i.seeds.len())),
                i.n_samples,
                i.blind_accuracy,
                i.ci95,
                i.chance,
            );
        }
        if let Some(d) = &p.after {
            line(&mut text, "after, selection seed", d.n_samples, d.weighted, d.ci95, d.chance);
        }
        if let Some(i) = &p.after_independent {
            for l in i.still_above_lines() {
                text.push_str(&format!("\n  warning: not debiased: {l}; {}", p.stopped_short()));
            }
        }
        text
    }

    /// Why a group can be left above its null: what stopped pruning short of it.
    pub fn stopped_short(&self) -> String {
        if self.stop.starts_with("budget reached") {
            "the budget was spent before it reached its null (raise `budget`)".to_string()
        } else if self.stop.starts_with("no unit can go") {
            format!("the floor of {} questions per type stopped pruning (lower `floor`)", self.config.floor)
        } else {
            format!("pruning stopped: {}", self.stop)
        }
    }

    pub fn removed_ids(&self) -> BTreeSet<&str> {
        self.removed.iter().map(|r| r.id.as_str()).collect()
    }

    /// Whether this run partitions `input` as a run on it does: every removed
    /// id once and in the input, `kept` the other ids in input order, and
    /// `n_input` their number. Why not, otherwise (a cached run that does not
    /// belong to this input).
    pub fn check_partition(&self, input: &[crate::sample::Sample]) -> std::result::Result<(), String> {
        let removed = self.removed_ids();
        if removed.len() != self.removed.len() {
            return Err("a question is removed twice".into());
        }
        if self.n_input != input.len() {
            return Err(format!("it was run on {} questions, not {}", self.n_input, input.len()));
        }
        let found = input.iter().filter(|s| removed.contains(s.id.as_str())).count();
        if found != removed.len() {
            return Err(format!("{} removed ids are not among the questions", removed.len() - found));
        }
        let kept = input.iter().map(|s| s.id.as_str()).filter(|id| !removed.contains(id));
        if !kept.eq(self.kept.iter().map(String::as_str)) {
            return Err(format!(
                "it keeps {} questions where {} are not removed",
                self.kept.len(),
                input.len() - removed.len()
            ));
        }
        Ok(())
    }

    /// The fresh seeds' figure when it is the only measurement of the kept set (a
    /// run the budget ended is not re-diagnosed at the selection seed).
    pub fn fresh_only(&self) -> Option<&Independent> {
        self.after.is_none().then_some(self.after_independent.as_ref()).flatten()
    }

    /// Removed counts per (question type, reason kind).
    pub fn removed_per_type(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for r in &self.removed {
            *m.entry(r.question_type.clone().unwrap_or_else(|| "(no type)".into())).or_default() += 1;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_fresh_seed_only_when_the_interval_is_already_narrow() {
        // 90,000 questions at 45.5%, CI ±0.3 points: one seed.
        assert_eq!(fresh_seed_count(3, Some((0.455, (0.452, 0.458), 90_000))), 1);
        // CI ±0.6 points: the configured maximum.
        assert_eq!(fresh_seed_count(3, Some((0.455, (0.449, 0.461), 90_000))), 3);
        // A degenerate interval of 12 questions, all right: Wilson's ±12 points decides.
        assert_eq!(fresh_seed_count(3, Some((1.0, (1.0, 1.0), 12))), 3);
        // A narrow bootstrap interval on 10,000 questions: Wilson's ±1 point decides.
        assert_eq!(fresh_seed_count(3, Some((0.5, (0.499, 0.501), 10_000))), 3);
        assert_eq!(fresh_seed_count(3, None), 3);
        assert_eq!(fresh_seed_count(0, Some((0.5, (0.5, 0.5), 1_000_000))), 0);
    }
}
