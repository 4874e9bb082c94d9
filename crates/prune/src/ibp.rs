//! Iterative Bias Pruning (`docs/tst-protocol.md`, "Iterative Bias Pruning"), and the
//! matched random control.
//!
//! ```text
//! R = 0
//! while R < B:
//!     s = TsT(D)                      full diagnose on what remains
//!     stop = "null" (default): on the first pass, measure the label-permutation
//!         null; nothing goes unless blind accuracy is above it, only groups
//!         above their own null are pruned, and a group closes once its blind
//!         accuracy reaches its null's 95th percentile; stop when none is open
//!     stop = "chance": stop once the blind accuracy's 95% CI reaches chance
//!     if threshold set and max(s) <= threshold: stop
//!     per allocation key: take up to min(b, B_k - R_k) questions in whole units
//!         (a question, or every question of an image or meta value), units in
//!         descending score (a unit's score: its highest member's; ties: score
//!         rounded to 1e-6, then the first id), skipping any unit whose removal
//!         would take a question type below the floor or overrun a budget
//!     if none taken: stop
//!     D = D minus taken
//!     if every budget is spent and fresh seeds will measure D: stop
//! ```
//! The random control walks the same loop with a seeded order of units in
//! place of the ranking, removing as many questions per allocation key as IBP
//! removed ([`Pruned::matched_control`]), with the same batches and floors.
//!
//! "Full diagnose" is exact but not wasteful: TsT-RF fits one model per question
//! type, from that type's questions alone, so a type no batch took a question from
//! keeps its scores from the iteration before ([`crate::diagnose::GroupCache`]), to
//! the bit. Batches usually take the few types that carry a shortcut. Nor is the set
//! left when the budget is spent diagnosed again at the selection seed when fresh
//! seeds measure it (`independent-seeds` > 0, the default): that figure is biased by
//! the selection and nothing would read it, so the last entry of `iterations` is then
//! the last batch's, and `after` is empty.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    Allocation, Iteration, Method, PruneConfig, Pruned, Rank, Removed, StopRule, rank_key, split_budget, type_counts,
};
use crate::diagnose::{DiagnoseConfig, GroupCache, diagnose_with_cache, group_samples};
use crate::sample::{AnswerFormat, Sample, id_cmp};
use crate::seed::rng_for;
use rayon::prelude::*;

/// A diagnosed group: (question type or the pooled group, answer format).
type GroupKey = (Option<String>, AnswerFormat);

/// The units of `samples`, as the positions of their members; units numbered in
/// order of their first member.
fn units_of(samples: &[Sample], grouping: Option<&crate::diagnose::GroupBy>) -> Vec<Vec<usize>> {
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    let keys = match grouping {
        Some(g) => g.keys(samples),
        None => samples.iter().map(|s| format!("id:{}", s.id)).collect(),
    };
    for (i, key) in keys.into_iter().enumerate() {
        let u = *index.entry(key).or_insert_with(|| {
            members.push(Vec::new());
            members.len() - 1
        });
        members[u].push(i);
    }
    members
}

/// Runs IBP (or, with `Method::Random`, the matched random control).
/// `emb`: the samples' embeddings, for TsT-Embed (or both) as the diagnostic.
pub fn run(
    samples: &[Sample],
    cfg: &PruneConfig,
    dcfg: &DiagnoseConfig,
    emb: Option<&crate::embed::SampleEmbeddings>,
    mut first: Option<super::First<'_>>,
) -> crate::error::Result<Pruned> {
    let n0 = samples.len();
    let batch = cfg.batch.resolve(n0).max(1);
    // Each sample's allocation key, once.
    let keys: Vec<String> = samples.iter().map(|s| cfg.allocation.key(s)).collect();
    let mut sizes: BTreeMap<String, usize> = BTreeMap::new();
    for key in &keys {
        *sizes.entry(key.clone()).or_default() += 1;
    }
    // The matched control removes what the run it matches removed, key by key.
    let budgets = match &cfg.matched {
        Some(m) => sizes.keys().map(|k| (k.clone(), m.get(k).copied().unwrap_or(0).min(sizes[k]))).collect(),
        None => split_budget(&sizes, cfg.budget.resolve(n0)),
    };
    let grouping = cfg.unit.grouping(dcfg);
    let members = units_of(samples, grouping.as_ref());
    let group_of = groups_of(samples, dcfg);
    let mut taken = Taken::new(samples, &keys, &budgets, &members);
    let mut iterations: Vec<Iteration> = Vec::new();
    let mut before: Option<crate::diagnose::Diagnosis> = None;
    // Under the null rule: each prunable group's threshold (its null's 95th percentile).
    let mut open_groups: Option<BTreeMap<GroupKey, f64>> = None;
    let stop;
    let after;
    let mut iteration = 1;
    // A batch often takes questions of a few types only: the others' TsT-RF results
    // are reused, bit for bit, in the next iteration.
    let mut cache = first.as_mut().map(|f| std::mem::take(&mut f.groups)).unwrap_or_default();
    // At most one iteration per batch, and the last diagnose.
    let most = budgets.values().sum::<usize>().div_ceil(batch) + 1;
    let name = if cfg.method == Method::Random { "random control" } else { "ibp" };
    let null_rule = cfg.reads_null();
    loop {
        let _stage = crate::progress::stage(format!("{name} {iteration}/≤{most}"));
        let current: Vec<&Sample> = taken.current().collect();
        let mut d = match first.take() {
            Some(f) => f.before(null_rule),
            None => diagnose_iteration(&current, dcfg, emb, &mut cache, iteration)?,
        };
        if null_rule && before.is_none() {
            // The one null: the verdict's, measured on the whole set before anything goes
            // (unless the first diagnosis came with it).
            if d.null.is_none() {
                d.null = Some(crate::diagnose::null::measure(&current, dcfg, &d, &dcfg.null));
            }
            open_groups = Some(groups_above_their_null(&d));
        }
        let per_id = d.sample_scores();
        let score_of = |s: &Sample| -> f64 {
            let (sx, chance) = per_id.get(s.id.as_str()).copied().unwrap_or((0.0, 0.0));
            match (cfg.rank, s.answer_format) {
                (Rank::SMinusChance, AnswerFormat::MultipleChoice) => sx - chance,
                _ => sx,
            }
        };
        // Every alive sample's score, by position in `samples` (NaN for the removed).
        let score_at: Vec<f64> =
            samples.par_iter().zip(&taken.alive).map(|(s, a)| if *a { score_of(s) } else { f64::NAN }).collect();
        let scores: Vec<f64> = score_at.iter().zip(&taken.alive).filter(|(_, a)| **a).map(|(v, _)| *v).collect();
        let max_bias = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut record = Iteration {
            iteration,
            size: current.len(),
            removed_before: taken.removed.len(),
            max_bias: if max_bias.is_finite() { max_bias } else { 0.0 },
            mean_bias: scores.iter().sum::<f64>() / scores.len().max(1) as f64,
            blind_accuracy: d.weighted,
            ci95: Some(d.ci95),
            chance: d.chance,
            removed: 0,
        };
        if before.is_none() {
            before = Some(d.clone());
        }
        // Under the null rule: the groups still above their null's 95th percentile.
        let prunable = open_groups.as_ref().map(|open| still_open(&d, open, samples, &group_of));
        let before_d = before.as_ref().expect("set above");
        if let Some(reason) = stop_before_batch(cfg, &d, before_d, &taken, prunable.as_ref(), max_bias) {
            stop = reason;
            iterations.push(record);
            after = Some(d);
            break;
        }
        let eligible = |i: usize| prunable.as_ref().is_none_or(|p| p.contains(&group_of[i]));
        let unit_rank = unit_scores(samples, &members, &taken.unit_alive, &score_at, eligible);
        let took = taken.take_batch(cfg, iteration, batch, &unit_rank, &score_at, prunable.as_ref());
        record.removed = took;
        iterations.push(record);
        if took == 0 {
            stop = format!(
                "no unit can go without taking a question type below the floor of {} or overrunning a budget ({} removed)",
                cfg.floor,
                taken.removed.len()
            );
            after = Some(d);
            break;
        }
        // The batch spent the budget: what remains is measured on fresh seeds (see
        // `Independent`), so a diagnosis at the selection seed, which only the stop
        // tests above would read and which the selection biases, is not run.
        let kept_any = taken.alive.iter().any(|a| *a);
        if cfg.independent_seeds > 0 && kept_any && taken.open_keys().is_empty() {
            stop = format!(
                "budget reached: {} removed (the kept set is measured on fresh seeds, not re-diagnosed at the \
                 selection seed)",
                taken.removed.len()
            );
            after = None;
            break;
        }
        // Freed in parallel: freeing 700,000 score rows one by one keeps a thread waiting.
        drop(per_id);
        drop(current);
        d.rows.into_par_iter().for_each(drop);
        iteration += 1;
    }
    let kept = samples.iter().zip(&taken.alive).filter(|(_, a)| **a).map(|(s, _)| s.id.clone()).collect();
    let Taken { removed, units_removed, .. } = taken;
    Ok(Pruned {
        method: cfg.method,
        config: cfg.clone(),
        budgets,
        kept,
        removed,
        iterations,
        stop,
        before,
        after,
        after_independent: None,
        n_input: n0,
        unit: cfg.unit.describe(dcfg),
        units_removed,
    })
}

/// Each sample's diagnosed group, fixed from the whole set (small types pooled as
/// diagnose pools them).
fn groups_of(samples: &[Sample], dcfg: &DiagnoseConfig) -> Vec<GroupKey> {
    let mut at: std::collections::HashMap<&str, GroupKey> = std::collections::HashMap::new();
    for (key, group) in group_samples(samples, dcfg.min_group) {
        for s in group {
            at.insert(s.id.as_str(), key.clone());
        }
    }
    samples.iter().map(|s| at[s.id.as_str()].clone()).collect()
}

/// One iteration's diagnosis of what remains, through `cache`, timed and reported.
fn diagnose_iteration(
    current: &[&Sample],
    dcfg: &DiagnoseConfig,
    emb: Option<&crate::embed::SampleEmbeddings>,
    cache: &mut GroupCache,
    iteration: usize,
) -> crate::error::Result<crate::diagnose::Diagnosis> {
    let (fit, reused) = (cache.fit, cache.reused);
    let (d, _, _) = crate::progress::timed_labelled(
        || {
            let d = diagnose_with_cache(current, dcfg, emb, cache);
            (d, cache.fit - fit, cache.reused - reused)
        },
        |(_, fit, reused)| {
            format!(
                "  IBP iteration {iteration}: diagnose on {} ({fit} question-type models fit, {reused} unchanged and reused)",
                current.len()
            )
        },
    );
    d
}

/// The groups IBP may prune under the null rule, with the level each closes at (its
/// null's 95th percentile): those above their null, when the set's verdict is above.
fn groups_above_their_null(d: &crate::diagnose::Diagnosis) -> BTreeMap<GroupKey, f64> {
    let v = crate::diagnose::verdict::Verdict::of(d);
    if !v.above {
        return BTreeMap::new();
    }
    let null = d.null.as_ref().expect("measured");
    d.groups
        .iter()
        .filter(|g| crate::diagnose::verdict::group_above(d, g))
        .filter_map(|g| null.group(g.question_type.as_deref(), g.format))
        // A group above its null was drawn at least 20 times: its 95th percentile exists.
        .map(|g| ((g.question_type.clone(), g.format), g.test.q95.unwrap_or(g.test.mean)))
        .collect()
}

/// Of the `open` groups, those still open in `d`: blind accuracy above the group's
/// null's 95th percentile and above its current majority baseline.
fn still_open(
    d: &crate::diagnose::Diagnosis,
    open: &BTreeMap<GroupKey, f64>,
    samples: &[Sample],
    group_of: &[GroupKey],
) -> BTreeSet<GroupKey> {
    let mut acc: BTreeMap<&GroupKey, (f64, usize)> = BTreeMap::new();
    let pos: std::collections::HashMap<&str, usize> =
        samples.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect();
    for r in &d.rows {
        if let Some(&i) = pos.get(r.id.as_str()) {
            let e = acc.entry(&group_of[i]).or_default();
            e.0 += r.correct;
            e.1 += 1;
        }
    }
    let majority =
        |g: &GroupKey| d.groups.iter().find(|s| s.question_type == g.0 && s.format == g.1).map_or(0.0, |s| s.majority);
    open.iter()
        .filter(|(g, q95)| acc.get(g).is_some_and(|(c, n)| *n > 0 && c / *n as f64 > q95.max(majority(g))))
        .map(|(g, _)| g.clone())
        .collect()
}

/// Why IBP stops before taking a batch from `d`, if it does: the budget is spent, no
/// group is left above its null, the blind accuracy reaches chance, or no score is
/// above the threshold. `before` is the first diagnosis.
fn stop_before_batch(
    cfg: &PruneConfig,
    d: &crate::diagnose::Diagnosis,
    before: &crate::diagnose::Diagnosis,
    taken: &Taken<'_>,
    prunable: Option<&BTreeSet<GroupKey>>,
    max_bias: f64,
) -> Option<String> {
    let removed = taken.removed.len();
    if taken.open_keys().is_empty() {
        return Some(format!("budget reached: {removed} removed"));
    }
    if prunable.is_some_and(BTreeSet::is_empty) {
        return Some(if removed == 0 {
            let v = crate::diagnose::verdict::Verdict::of(before);
            if v.above {
                format!(
                    "at the null: no group's blind accuracy is above its own null's 95th percentile, so nothing \
                     is removed (`stop = \"budget\"` prunes anyway). {}",
                    v.sentence
                )
            } else {
                format!(
                    "not above the null: {} Nothing is removed from a set its own verdict calls clean \
                     (`stop = \"budget\"` prunes anyway)",
                    v.sentence
                )
            }
        } else {
            format!(
                "at the null: every group IBP pruned has reached its label-permutation null's 95th percentile \
                 or its majority baseline ({removed} removed; `stop = \"budget\"` prunes to the budget)"
            )
        });
    }
    if cfg.method == Method::Ibp && cfg.stop == StopRule::Chance && d.ci95.0 <= d.chance {
        return Some(format!(
            "at chance: the 95% CI of blind accuracy {:.1}% ({:.1}-{:.1}) reaches chance {:.1}% ({removed} removed; \
             `stop = \"budget\"` prunes to the budget)",
            d.weighted * 100.0,
            d.ci95.0 * 100.0,
            d.ci95.1 * 100.0,
            d.chance * 100.0,
        ));
    }
    if let Some(t) = cfg.threshold
        && max_bias <= t
    {
        let max_bias = if max_bias.is_finite() { max_bias } else { 0.0 };
        return Some(format!("threshold: the largest score {max_bias:.6} is at or below {t}"));
    }
    None
}

/// What IBP has taken so far: the questions and units gone, each allocation key's
/// spent budget and each question type's count towards its floor.
struct Taken<'a> {
    samples: &'a [Sample],
    keys: &'a [String],
    budgets: &'a BTreeMap<String, usize>,
    members: &'a [Vec<usize>],
    per_key: BTreeMap<String, usize>,
    types: BTreeMap<String, usize>,
    alive: Vec<bool>,
    unit_alive: Vec<bool>,
    removed: Vec<Removed>,
    units_removed: usize,
}

impl<'a> Taken<'a> {
    fn new(
        samples: &'a [Sample],
        keys: &'a [String],
        budgets: &'a BTreeMap<String, usize>,
        members: &'a [Vec<usize>],
    ) -> Taken<'a> {
        Taken {
            samples,
            keys,
            budgets,
            members,
            per_key: budgets.keys().map(|k| (k.clone(), 0)).collect(),
            types: type_counts(samples),
            alive: vec![true; samples.len()],
            unit_alive: vec![true; members.len()],
            removed: Vec::new(),
            units_removed: 0,
        }
    }

    /// The samples not taken, in input order.
    fn current(&self) -> impl Iterator<Item = &'a Sample> + '_ {
        self.samples.iter().zip(&self.alive).filter(|(_, a)| **a).map(|(s, _)| s)
    }

    /// The allocation keys with budget left.
    fn open_keys(&self) -> Vec<&'a String> {
        self.budgets.keys().filter(|k| self.per_key[*k] < self.budgets[*k]).collect()
    }

    /// Takes one batch: per open key, up to `batch` questions in whole units, in
    /// removal order, skipping any unit that would take a type below the floor or
    /// overrun a budget. Returns how many questions went.
    fn take_batch(
        &mut self,
        cfg: &PruneConfig,
        iteration: usize,
        batch: usize,
        unit_rank: &[UnitScore],
        score_at: &[f64],
        prunable: Option<&BTreeSet<GroupKey>>,
    ) -> usize {
        let (samples, keys) = (self.samples, self.keys);
        let mut took = 0;
        for key in self.open_keys() {
            let room = (self.budgets[key] - self.per_key[key]).min(batch);
            // Candidate units whose primary member is of this key.
            let cands: Vec<UnitScore> =
                unit_rank.iter().copied().filter(|&(u, _, i)| self.unit_alive[u] && keys[i] == *key).collect();
            let cands = in_removal_order(cfg, iteration, samples, cands);
            let n_cands = cands.len();
            let scope = scope(cfg, key, prunable);
            let mut here = 0;
            for (rank, (u, score, _)) in cands.into_iter().enumerate() {
                if here >= room {
                    break;
                }
                let m: Vec<usize> = self.members[u].iter().copied().filter(|&i| self.alive[i]).collect();
                if !self.fits(&m, key, here, room, cfg.floor) {
                    continue;
                }
                self.unit_alive[u] = false;
                self.units_removed += 1;
                for &i in &m {
                    let s = &samples[i];
                    *self.types.get_mut(super::type_name(s)).expect("type counted") -= 1;
                    self.alive[i] = false;
                    if keys[i] == *key {
                        here += 1;
                    } else {
                        *self.per_key.get_mut(&keys[i]).expect("key present") += 1;
                        took += 1;
                    }
                    self.removed.push(Removed {
                        id: s.id.clone(),
                        question_type: s.question_type.clone(),
                        format: s.answer_format,
                        iteration,
                        score: score_at[i],
                        reason: reason(cfg, s, score_at[i], (rank + 1, n_cands), &scope, (m.len(), score)),
                    });
                }
            }
            *self.per_key.get_mut(key).expect("key present") += here;
            took += here;
        }
        took
    }

    /// Whether the unit of alive members `m` can go now, `here` questions already taken
    /// from `key` in this batch of `room`: every member charged to its own key, no key
    /// past its budget, no type below `floor`.
    fn fits(&self, m: &[usize], key: &str, here: usize, room: usize, floor: usize) -> bool {
        let mut per_key: BTreeMap<&str, usize> = BTreeMap::new();
        let mut per_type: BTreeMap<&str, usize> = BTreeMap::new();
        for &i in m {
            *per_key.entry(self.keys[i].as_str()).or_default() += 1;
            *per_type.entry(super::type_name(&self.samples[i])).or_default() += 1;
        }
        let fits = per_key.iter().all(|(k, n)| {
            let extra = if *k == key { here } else { 0 };
            self.per_key[*k] + extra + n <= self.budgets[*k] && (*k != key || here + n <= room)
        });
        fits && per_type.iter().all(|(t, n)| self.types[*t] >= floor + n)
    }
}

/// What a removal's rank counts among: the budget's key (none when global)
/// and, under the null rule, only the groups still above their null, named, so
/// that "rank 1 of 100" is not read as 1 of every question of the key.
/// An alive unit as IBP ranks it: (unit, score, primary member).
type UnitScore = (usize, f64, usize);

/// Each alive unit's score, its highest eligible member's (a member in a group still
/// above its null), with that member as the unit's primary; ties go to the first id.
fn unit_scores(
    samples: &[Sample],
    members: &[Vec<usize>],
    unit_alive: &[bool],
    score_at: &[f64],
    eligible: impl Fn(usize) -> bool,
) -> Vec<UnitScore> {
    let mut out = Vec::new();
    for (u, m) in members.iter().enumerate() {
        if !unit_alive[u] {
            continue;
        }
        let best = m.iter().copied().filter(|&i| eligible(i)).max_by(|&a, &b| {
            rank_key(score_at[a]).cmp(&rank_key(score_at[b])).then_with(|| id_cmp(&samples[b].id, &samples[a].id))
        });
        if let Some(i) = best {
            out.push((u, score_at[i], i));
        }
    }
    out
}

/// Candidate units in the order they are taken: descending score (ties: the first
/// id), or for the random control a seeded order of the iteration.
fn in_removal_order(
    cfg: &PruneConfig,
    iteration: usize,
    samples: &[Sample],
    mut cands: Vec<UnitScore>,
) -> Vec<UnitScore> {
    match cfg.method {
        Method::Random => {
            let stage = format!("prune.random/{iteration}");
            let mut ordered: Vec<(u64, UnitScore)> =
                cands.par_iter().map(|&c| (rng_for(cfg.seed, &stage, &samples[c.2].id), c)).collect();
            ordered.par_sort_by(|a, b| a.0.cmp(&b.0).then_with(|| id_cmp(&samples[a.1.2].id, &samples[b.1.2].id)));
            ordered.into_iter().map(|(_, c)| c).collect()
        }
        _ => {
            cands.par_sort_by(|a, b| {
                rank_key(b.1).cmp(&rank_key(a.1)).then_with(|| id_cmp(&samples[a.2].id, &samples[b.2].id))
            });
            cands
        }
    }
}

fn scope(cfg: &PruneConfig, key: &str, prunable: Option<&BTreeSet<GroupKey>>) -> String {
    let within = match cfg.allocation {
        Allocation::Global => String::new(),
        _ => format!(" within {key}"),
    };
    let Some(groups) = prunable else { return within };
    let names: Vec<String> = groups
        .iter()
        .filter(|(t, f)| match cfg.allocation {
            Allocation::Global => true,
            Allocation::PerFormat => f.as_str() == key,
            Allocation::PerType => t.as_deref().unwrap_or("(no type)") == key,
        })
        .map(|(t, f)| format!("{} ({})", t.as_deref().unwrap_or("(no type)"), f.as_str()))
        .collect();
    const SHOWN: usize = 3;
    let mut list = names.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        list.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    let groups = if names.len() == 1 { "group" } else { "groups" };
    format!("{within}, in the {groups} still above the null: {list}")
}

fn reason(
    cfg: &PruneConfig,
    s: &Sample,
    score: f64,
    (rank, n): (usize, usize),
    within: &str,
    (unit_size, unit_score): (usize, f64),
) -> String {
    let unit = if unit_size > 1 {
        format!(" (removed with its unit of {unit_size} questions, whose highest score is {unit_score:.4})")
    } else {
        String::new()
    };
    match cfg.method {
        Method::Random => {
            format!("random control (matched to IBP's budget and batches); its s(x) was {score:.4}{unit}")
        }
        _ => {
            let what = match (cfg.rank, s.answer_format) {
                (Rank::SMinusChance, AnswerFormat::MultipleChoice) => "s(x) - chance",
                _ => "s(x)",
            };
            format!("blind-answerable: {what} = {score:.4}, rank {rank} of {n}{within}{unit}")
        }
    }
}
