//! Iterative Bias Pruning (`docs/tst-protocol.md`, "Iterative Bias Pruning"), and the
//! matched random control.
//!
//! ```text
//! R = 0
//! while R < B:
//!     s = TsT(D)                      full diagnose on what remains
//!     if stop-at-chance and the blind accuracy's 95% CI reaches chance: stop
//!     if threshold set and max(s) <= threshold: stop
//!     per allocation key: take up to min(b, B_k - R_k) in descending score
//!         (ties: score rounded to 1e-6, then id), skipping any question whose
//!         type would fall below the floor
//!     if none taken: stop
//!     D = D minus taken
//! ```
//! The random control walks the same loop with a seeded order in place of
//! the ranking, removing exactly what IBP removed per allocation key
//! ([`Pruned::matched_control`]), with the same batches and floors.
//!
//! "Full diagnose" is exact but not wasteful: TsT-RF fits one model per question
//! type, from that type's questions alone, so a type no batch took a question from
//! keeps its scores from the iteration before ([`crate::diagnose::GroupCache`]), to
//! the bit. Batches usually take the few types that carry a shortcut.

use std::collections::BTreeMap;

use super::{Allocation, Iteration, Method, PruneConfig, Pruned, Rank, Removed, rank_key, split_budget, type_counts};
use crate::diagnose::{DiagnoseConfig, GroupCache, diagnose_with_cache};
use crate::sample::{AnswerFormat, Sample, id_cmp};
use crate::seed::rng_for;
use rayon::prelude::*;

/// Runs IBP (or, with `Method::Random`, the matched random control).
/// `emb`: the samples' embeddings, for TsT-Embed (or both) as the diagnostic.
pub fn run(
    samples: &[Sample],
    cfg: &PruneConfig,
    dcfg: &DiagnoseConfig,
    emb: Option<&crate::embed::SampleEmbeddings>,
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
    let mut taken_per_key: BTreeMap<String, usize> = budgets.keys().map(|k| (k.clone(), 0)).collect();
    let mut types = type_counts(samples);
    let mut alive = vec![true; n0];
    let mut removed: Vec<Removed> = Vec::new();
    let mut iterations: Vec<Iteration> = Vec::new();
    let mut before = None;
    let stop;
    let after;
    let mut iteration = 1;
    // A batch often takes questions of a few types only: the others' TsT-RF results
    // are reused, bit for bit, in the next iteration.
    let mut cache = GroupCache::default();
    // At most one iteration per batch, and the last diagnose.
    let most = budgets.values().sum::<usize>().div_ceil(batch) + 1;
    let name = if cfg.method == Method::Random { "random control" } else { "ibp" };
    loop {
        let _stage = crate::progress::stage(format!("{name} {iteration}/≤{most}"));
        let current: Vec<&Sample> = samples.iter().zip(&alive).filter(|(_, a)| **a).map(|(s, _)| s).collect();
        let (fit, reused) = (cache.fit, cache.reused);
        let (d, _, _) = crate::progress::timed_labelled(
            || {
                let d = diagnose_with_cache(&current, dcfg, emb, &mut cache);
                (d, cache.fit - fit, cache.reused - reused)
            },
            |(_, fit, reused)| {
                format!(
                    "  IBP iteration {iteration}: diagnose on {} ({fit} question-type models fit, {reused} unchanged and reused)",
                    current.len()
                )
            },
        );
        let d = d?;
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
            samples.par_iter().zip(&alive).map(|(s, a)| if *a { score_of(s) } else { f64::NAN }).collect();
        let scores: Vec<f64> = score_at.iter().zip(&alive).filter(|(_, a)| **a).map(|(v, _)| *v).collect();
        let max_bias = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean_bias = scores.iter().sum::<f64>() / scores.len().max(1) as f64;
        let mut record = Iteration {
            iteration,
            size: current.len(),
            removed_before: removed.len(),
            max_bias: if max_bias.is_finite() { max_bias } else { 0.0 },
            mean_bias,
            blind_accuracy: d.weighted,
            ci95: Some(d.ci95),
            chance: d.chance,
            removed: 0,
        };
        if before.is_none() {
            before = Some(d.clone());
        }
        let open_keys: Vec<&String> = budgets.keys().filter(|k| taken_per_key[*k] < budgets[*k]).collect();
        if open_keys.is_empty() {
            stop = format!("budget reached: {} removed", removed.len());
            iterations.push(record);
            after = d;
            break;
        }
        if cfg.method == Method::Ibp && cfg.stop_at_chance && d.ci95.0 <= d.chance {
            stop = format!(
                "at chance: the 95% CI of blind accuracy {:.1}% ({:.1}-{:.1}) reaches chance {:.1}%, so \
                 further removals would take questions a blind model does not answer ({} removed; \
                 `stop-at-chance = false` prunes to the budget)",
                d.weighted * 100.0,
                d.ci95.0 * 100.0,
                d.ci95.1 * 100.0,
                d.chance * 100.0,
                removed.len()
            );
            iterations.push(record);
            after = d;
            break;
        }
        if let Some(t) = cfg.threshold
            && max_bias <= t
        {
            stop = format!("threshold: the largest score {:.6} is at or below {t}", record.max_bias);
            iterations.push(record);
            after = d;
            break;
        }
        let mut took = 0;
        for key in open_keys {
            let room = (budgets[key] - taken_per_key[key]).min(batch);
            // Candidates of this key: (position in samples, score).
            let mut cands: Vec<(usize, f64)> =
                (0..n0).filter(|&i| alive[i] && keys[i] == *key).map(|i| (i, score_at[i])).collect();
            match cfg.method {
                Method::Random => {
                    let stage = format!("prune.random/{iteration}");
                    let mut ordered: Vec<(u64, usize, f64)> = cands
                        .par_iter()
                        .map(|&(i, score)| (rng_for(cfg.seed, &stage, &samples[i].id), i, score))
                        .collect();
                    ordered.par_sort_by(|a, b| a.0.cmp(&b.0).then_with(|| id_cmp(&samples[a.1].id, &samples[b.1].id)));
                    cands = ordered.into_iter().map(|(_, i, score)| (i, score)).collect();
                }
                _ => cands.par_sort_by(|a, b| {
                    rank_key(b.1).cmp(&rank_key(a.1)).then_with(|| id_cmp(&samples[a.0].id, &samples[b.0].id))
                }),
            }
            let n_cands = cands.len();
            let mut here = 0;
            for (rank, (i, score)) in cands.into_iter().enumerate() {
                if here == room {
                    break;
                }
                let s = &samples[i];
                let t = super::type_name(s).to_string();
                if types[&t] <= cfg.floor {
                    continue;
                }
                *types.get_mut(&t).expect("type counted") -= 1;
                alive[i] = false;
                here += 1;
                removed.push(Removed {
                    id: s.id.clone(),
                    question_type: s.question_type.clone(),
                    format: s.answer_format,
                    iteration,
                    score,
                    reason: reason(cfg, s, score, rank + 1, n_cands, key),
                });
            }
            *taken_per_key.get_mut(key).expect("key present") += here;
            took += here;
        }
        record.removed = took;
        iterations.push(record);
        if took == 0 {
            stop = format!(
                "no question can go without taking a question type below the floor of {} ({} removed)",
                cfg.floor,
                removed.len()
            );
            after = d;
            break;
        }
        // Freed in parallel: freeing 700,000 score rows one by one keeps a thread waiting.
        drop(per_id);
        drop(current);
        d.rows.into_par_iter().for_each(drop);
        iteration += 1;
    }
    let kept = samples.iter().zip(&alive).filter(|(_, a)| **a).map(|(s, _)| s.id.clone()).collect();
    Ok(Pruned {
        method: cfg.method,
        config: cfg.clone(),
        budgets,
        kept,
        removed,
        iterations,
        stop,
        before,
        after: Some(after),
        after_independent: None,
        n_input: n0,
    })
}

fn reason(cfg: &PruneConfig, s: &Sample, score: f64, rank: usize, n: usize, key: &str) -> String {
    let within = match cfg.allocation {
        Allocation::Global => String::new(),
        _ => format!(" within {key}"),
    };
    match cfg.method {
        Method::Random => format!("random control (matched to IBP's budget and batches); its s(x) was {score:.4}"),
        _ => {
            let what = match (cfg.rank, s.answer_format) {
                (Rank::SMinusChance, AnswerFormat::MultipleChoice) => "s(x) - chance",
                _ => "s(x)",
            };
            format!("blind-answerable: {what} = {score:.4}, rank {rank} of {n}{within}")
        }
    }
}
