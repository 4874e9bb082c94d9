//! AFLite (Le Bras et al. 2020, Algorithm 1) on TsT's non-visual features or
//! on sentence embeddings (`representation = "embeddings"`, the paper's
//! choice: a fixed pre-trained representation and linear probes).
//!
//! The embedding representation of a question: for multiple choice, the
//! question's embedding followed by each option's in position order,
//! zero-padded to the group's most options (so a linear classifier over the
//! gold position can weigh each option's meaning); for yes/no and open
//! questions, the embedding of the question+options text (the question, then
//! each option on its own line). all-MiniLM-L6-v2, 384 dimensions per text,
//! standardised on each partition's training share.
//!
//! ```text
//! while removed < budget:
//!     m random partitions of what remains (per model group: a `t` share trains
//!         a linear probe on features fit to that share, the rest is held out)
//!     predictability(x) = correct held-out predictions of x / times x was held out
//!     remove up to k with predictability >= τ (highest first; ties by id),
//!         never taking a question type below the floor
//!     if fewer than k qualified: stop
//! ```
//! Numeric questions have no classes for a linear classifier: AFLite leaves
//! them in place (they count towards neither the score nor the budget's use).
//! Partitions run in parallel and are merged in partition order, so the
//! result does not depend on the thread count.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rayon::prelude::*;

use super::{Iteration, Method, PruneConfig, Pruned, Removed, Representation, rank_key, split_budget, type_counts};
use crate::diagnose::{DiagnoseConfig, Target, class_of, diagnose_with, group_samples, target};
use crate::embed::SampleEmbeddings;
use crate::error::{Error, Result};
use crate::ml::features::Featurizer;
use crate::ml::forest::Matrix;
use crate::sample::{AnswerFormat, Sample, id_cmp};
use crate::seed::rng_for;

/// The embeddings of the samples, by id, for the embedding representation.
struct EmbRep<'a> {
    e: &'a SampleEmbeddings,
    index: BTreeMap<&'a str, usize>,
}

impl EmbRep<'_> {
    /// Rows of `rows` as a matrix: see the module documentation.
    fn matrix(&self, rows: &[&Sample], format: AnswerFormat, max_options: usize) -> Matrix {
        let dim = self.e.dim;
        let width = if format == AnswerFormat::MultipleChoice { dim * (1 + max_options) } else { dim };
        let mut data = Vec::with_capacity(rows.len() * width);
        for s in rows {
            let start = data.len();
            if let Some(&i) = self.index.get(s.id.as_str()) {
                let r = self.e.get(i);
                if format == AnswerFormat::MultipleChoice {
                    data.extend(r.question.iter().map(|v| f64::from(*v)));
                    for o in r.options.iter().take(max_options) {
                        data.extend(o.iter().map(|v| f64::from(*v)));
                    }
                } else {
                    data.extend(r.question_options.iter().map(|v| f64::from(*v)));
                }
            }
            data.resize(start + width, 0.0);
        }
        Matrix::new(rows.len(), width, data)
    }
}

/// Held-out outcomes of one partition: (id, correct).
fn partition_outcomes(
    current: &[Sample],
    cfg: &PruneConfig,
    dcfg: &DiagnoseConfig,
    rep: Option<&EmbRep<'_>>,
    key: &str,
) -> Vec<(String, bool)> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(rng_for(cfg.seed, "prune.aflite", key));
    let mut out = Vec::new();
    for ((_, format), group) in group_samples(current, dcfg.min_group) {
        if format == AnswerFormat::Numeric || group.len() < 4 {
            continue;
        }
        let mut order: Vec<usize> = (0..group.len()).collect();
        order.shuffle(&mut rng);
        let n_train = ((cfg.aflite.train_fraction * group.len() as f64).round() as usize).clamp(2, group.len() - 1);
        let (mut tr, mut te) = (order[..n_train].to_vec(), order[n_train..].to_vec());
        tr.sort_unstable();
        te.sort_unstable();
        let train: Vec<&Sample> = tr.iter().map(|&i| group[i]).collect();
        let test: Vec<&Sample> = te.iter().map(|&i| group[i]).collect();
        let Target::Classes { labels, names } = target(format, &train, dcfg.features.rare_vocab) else { continue };
        let (x_train, x_test) = match rep {
            Some(rep) => {
                let k = group.iter().map(|s| s.options.len()).max().unwrap_or(0);
                (rep.matrix(&train, format, k), rep.matrix(&test, format, k))
            }
            None => {
                let (featurizer, x_train) = Featurizer::fit_transform(&train, &dcfg.features);
                let x_test = featurizer.transform(&test);
                (x_train, x_test)
            }
        };
        let predicted = crate::ml::linear::fit_predict(&x_train, &labels, &x_test);
        for (s, p) in test.iter().zip(predicted) {
            let gold = class_of(format, s);
            let correct = names.get(p as usize).is_some_and(|n| n.is_some() && *n == gold);
            out.push((s.id.clone(), correct));
        }
    }
    out
}

/// Runs AFLite with `cfg.batch` as the slice size k. `emb`: the samples'
/// embeddings, for the embedding representation and for TsT-Embed (or both)
/// as the before/after diagnostic.
pub fn run(
    samples: &[Sample],
    cfg: &PruneConfig,
    dcfg: &DiagnoseConfig,
    emb: Option<&SampleEmbeddings>,
    first: Option<super::First<'_>>,
) -> Result<Pruned> {
    let rep = match (cfg.aflite.representation, emb) {
        (Representation::Features, _) => None,
        (Representation::Embeddings, Some(e)) => Some(EmbRep { e, index: e.index() }),
        (Representation::Embeddings, None) => {
            return Err(Error::Bug("AFLite on embeddings ran without embeddings".into()));
        }
    };
    let n0 = samples.len();
    let k = cfg.batch.resolve(n0).max(1);
    let mut sizes = BTreeMap::new();
    sizes.insert("all".to_string(), n0);
    let budgets = split_budget(&sizes, cfg.budget.resolve(n0));
    let budget = budgets["all"];
    let mut before = match first {
        Some(f) => f.before(cfg.reads_null()),
        None => diagnose_with(samples, dcfg, emb)?,
    };
    // The verdict decides: a set whose blind accuracy is not above its null loses nothing.
    let gate = super::null_gate(samples, cfg, dcfg, &mut before);
    let mut types = type_counts(samples);
    let mut alive: BTreeMap<&str, bool> = samples.iter().map(|s| (s.id.as_str(), true)).collect();
    let by_id: BTreeMap<&str, &Sample> = samples.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut removed: Vec<Removed> = Vec::new();
    let mut iterations = Vec::new();
    let mut round = 1;
    let stop = loop {
        let current: Vec<Sample> = samples.iter().filter(|s| alive[s.id.as_str()]).cloned().collect();
        let outcomes: Vec<Vec<(String, bool)>> = (0..cfg.aflite.partitions.max(1))
            .into_par_iter()
            .map(|p| partition_outcomes(&current, cfg, dcfg, rep.as_ref(), &format!("{round}/{p}")))
            .collect();
        let mut tally: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for (id, ok) in outcomes.iter().flatten() {
            let e = tally.entry(id.as_str()).or_default();
            e.0 += usize::from(*ok);
            e.1 += 1;
        }
        let scored: Vec<(&str, f64)> = tally.iter().map(|(id, (c, n))| (*id, *c as f64 / *n as f64)).collect();
        let (hits, seen) = tally.values().fold((0, 0), |a, (c, n)| (a.0 + c, a.1 + n));
        let mut record = Iteration {
            iteration: round,
            size: current.len(),
            removed_before: removed.len(),
            max_bias: scored.iter().map(|x| x.1).fold(0.0, f64::max),
            mean_bias: scored.iter().map(|x| x.1).sum::<f64>() / scored.len().max(1) as f64,
            blind_accuracy: hits as f64 / seen.max(1) as f64,
            // Held-out outcomes of one question are not independent (it is held out in
            // about a fifth of the partitions): the interval resamples questions.
            ci95: Some(crate::stats::bootstrap_ratio_ci(
                &tally.values().map(|&(c, n)| (c as f64, n as f64)).collect::<Vec<_>>(),
                crate::stats::RESAMPLES,
                rng_for(cfg.seed, "prune.aflite.bootstrap", &round.to_string()),
            )),
            chance: current.iter().map(crate::sample::chance).sum::<f64>() / current.len().max(1) as f64,
            removed: 0,
        };
        if removed.len() >= budget {
            iterations.push(record);
            break format!("budget reached: {} removed", removed.len());
        }
        if let Some(why) = &gate {
            iterations.push(record);
            break why.clone();
        }
        let mut cands: Vec<(&str, f64)> = scored.into_iter().filter(|(_, p)| *p >= cfg.aflite.tau).collect();
        cands.sort_by(|a, b| rank_key(b.1).cmp(&rank_key(a.1)).then_with(|| id_cmp(a.0, b.0)));
        let qualified = cands.len();
        let room = k.min(budget - removed.len());
        let mut took = 0;
        for (rank, (id, p)) in cands.into_iter().enumerate() {
            if took == room {
                break;
            }
            let s = by_id[id];
            let t = super::type_name(s).to_string();
            if types[&t] <= cfg.floor {
                continue;
            }
            *types.get_mut(&t).expect("type counted") -= 1;
            *alive.get_mut(id).expect("id present") = false;
            took += 1;
            removed.push(Removed {
                id: id.to_string(),
                question_type: s.question_type.clone(),
                format: s.answer_format,
                iteration: round,
                score: p,
                reason: format!(
                    "predictable: {:.4} of its held-out predictions correct over {} partitions of {} (>= tau {}), rank {} of {qualified}",
                    p,
                    cfg.aflite.partitions,
                    cfg.aflite.representation.as_str(),
                    cfg.aflite.tau,
                    rank + 1
                ),
            });
        }
        record.removed = took;
        iterations.push(record);
        if qualified < k {
            break format!("fewer than k = {k} questions reached tau = {} ({qualified})", cfg.aflite.tau);
        }
        if took == 0 {
            break format!("no question can go without taking a question type below the floor of {}", cfg.floor);
        }
        round += 1;
    };
    let kept_samples: Vec<Sample> = samples.iter().filter(|s| alive[s.id.as_str()]).cloned().collect();
    let after = diagnose_with(&kept_samples, dcfg, emb)?;
    Ok(Pruned {
        method: Method::Aflite,
        config: cfg.clone(),
        budgets,
        kept: kept_samples.into_iter().map(|s| s.id).collect(),
        units_removed: removed.len(),
        removed,
        iterations,
        stop,
        before: Some(before),
        after: Some(after),
        after_independent: None,
        n_input: n0,
        unit: "question".into(),
    })
}
