//! Prune: remove the questions a blind model answers, reproducibly.
//!
//! ```text
//! samples ─▶ IBP     (re-run TsT-RF on what remains, drop the top-s batch, repeat)
//!         ─▶ random  (the same budget, batches and floors, seeded: the control)
//!         ─▶ AFLite  (linear probes on random partitions, drop predictable items)
//! predictions (mirage mode) ─▶ B-Clean (the union of what models answer without the image)
//!   ─▶ Pruned { kept (input order), removed (removal order, with reasons), iterations }
//! ```
//! Settings and the loop follow `docs/tst-protocol.md`;
//! every choice is a function of (seed, stage, id), never of thread count.

// The crates below this one, under the module names the code uses.
use blindspot_core::{context, error, io, progress, sample, seed, stats};
use blindspot_diagnose as diagnose;
use blindspot_embed as embed;
use blindspot_filter as filter;
use blindspot_metrics as metrics;
use blindspot_ml as ml;
use blindspot_predictions as predictions;

pub mod aflite;
pub mod bclean;
mod budget;
mod config;
pub mod ibp;
mod pruned;
pub mod report;

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnose::{DiagnoseConfig, Diagnosis};
use crate::sample::Sample;
pub(crate) use budget::{rank_key, type_counts};
pub use budget::{split_budget, type_name};
pub use config::{AfliteConfig, Allocation, Amount, Method, PruneConfig, Rank, Representation, StopRule, Unit};
pub use pruned::{
    FRESH_SEED_HALF_WIDTH, Independent, Iteration, KeptGroup, Pruned, Removed, fresh_seed_count, fresh_seeds,
};

/// The diagnosis of the whole set a pruner runs on, made by its caller with
/// the pruner's diagnose settings: the pruner's first iteration and its
/// `before`, not measured again. `groups` holds the TsT-RF groups fit for it
/// (empty when the diagnosis was read from a cache), for IBP's second
/// iteration to reuse where its first batch left a group unchanged.
pub struct First<'a> {
    pub diagnosis: &'a Diagnosis,
    pub groups: crate::diagnose::GroupCache,
}

impl First<'_> {
    /// The run's `before`: the diagnosis, with its label-permutation null only
    /// when the run reads it (`reads_null`, the null stop rule); a run that does
    /// not read it reports the set it pruned without it, as one that measured
    /// its own first iteration does.
    fn before(&self, reads_null: bool) -> Diagnosis {
        let mut d = self.diagnosis.clone();
        if !reads_null {
            d.null = None;
        }
        d
    }
}

/// Under `stop = "null"`, measures the label-permutation null of `before`
/// (the diagnosis of `samples`) into it and returns why nothing may be removed
/// when blind accuracy is not above it; `None` when pruning may go on (or
/// another stop rule is set).
pub fn null_gate(
    samples: &[Sample],
    cfg: &PruneConfig,
    dcfg: &DiagnoseConfig,
    before: &mut Diagnosis,
) -> Option<String> {
    if cfg.stop != StopRule::Null {
        return None;
    }
    if before.null.is_none() {
        let refs: Vec<&Sample> = samples.iter().collect();
        before.null = Some(crate::diagnose::null::measure(&refs, dcfg, before, &dcfg.null));
    }
    let v = crate::diagnose::verdict::Verdict::of(before);
    (!v.above).then(|| {
        format!(
            "not above the null: {} Nothing is removed from a set its own verdict calls clean (`stop = \"budget\"` \
             prunes anyway)",
            v.sentence
        )
    })
}

/// Whether a pruning run needs sentence embeddings (with `diagnose`'s method).
pub fn needs_embeddings(cfg: &PruneConfig, diagnose: &DiagnoseConfig) -> bool {
    match cfg.method {
        Method::Ibp | Method::Random => diagnose.method.needs_embeddings(),
        Method::Aflite => cfg.aflite.representation == Representation::Embeddings || diagnose.method.needs_embeddings(),
        Method::Bclean => false,
    }
}

/// Runs the configured pruner with TsT-RF and the features representation.
/// B-Clean needs model predictions: use [`bclean_pruned`] for it.
pub fn prune(samples: &[Sample], cfg: &PruneConfig, diagnose: &DiagnoseConfig) -> Pruned {
    match prune_with(samples, cfg, diagnose, None, None) {
        Ok(p) => p,
        // Without embeddings only the embedding settings can fail: run TsT-RF on features.
        Err(_) => {
            let mut c = cfg.clone();
            c.aflite.representation = Representation::Features;
            let d = DiagnoseConfig { method: crate::diagnose::Method::TstRf, ..diagnose.clone() };
            prune_with(samples, &c, &d, None, None).unwrap_or_else(|e| unreachable!("TsT-RF pruning cannot fail: {e}"))
        }
    }
}

/// Runs the configured pruner; `emb` holds the samples' embeddings when the
/// diagnose method is TsT-Embed or both, or AFLite's representation is
/// embeddings (an error without them). `first`: the diagnosis of `samples`
/// with `diagnose`, when the caller made it (see [`First`]).
pub fn prune_with(
    samples: &[Sample],
    cfg: &PruneConfig,
    diagnose: &DiagnoseConfig,
    emb: Option<&crate::embed::SampleEmbeddings>,
    first: Option<First<'_>>,
) -> crate::error::Result<Pruned> {
    if needs_embeddings(cfg, diagnose) && emb.is_none() {
        return Err(crate::error::Error::Bug(format!(
            "{} pruning with diagnose method {} and representation {} ran without embeddings",
            cfg.method.as_str(),
            diagnose.method.as_str(),
            cfg.aflite.representation.as_str()
        )));
    }
    let mut pruned = match cfg.method {
        Method::Ibp | Method::Random => ibp::run(samples, cfg, diagnose, emb, first)?,
        Method::Aflite => aflite::run(samples, cfg, diagnose, emb, first)?,
        Method::Bclean => Pruned {
            method: Method::Bclean,
            config: cfg.clone(),
            budgets: BTreeMap::new(),
            kept: samples.iter().map(|s| s.id.clone()).collect(),
            removed: Vec::new(),
            iterations: Vec::new(),
            stop: "B-Clean needs model predictions: nothing removed (see bclean_pruned)".into(),
            before: None,
            after: None,
            after_independent: None,
            n_input: samples.len(),
            unit: "question".into(),
            units_removed: 0,
        },
    };
    if cfg.method != Method::Bclean {
        let kept: BTreeSet<&str> = pruned.kept.iter().map(String::as_str).collect();
        let kept: Vec<&Sample> = samples.iter().filter(|s| kept.contains(s.id.as_str())).collect();
        pruned.after_independent = Independent::measure(&kept, diagnose, cfg.seed, cfg.independent_seeds, emb)?;
    }
    Ok(pruned)
}

/// B-Clean's decision as a pruning run: every removal in one step, with
/// TsT-RF on the set before and after (when `diagnose` is given; `first`, the
/// diagnosis of `samples` with it, when the caller made it).
pub fn bclean_pruned(
    samples: &[Sample],
    report: &bclean::BCleanReport,
    cfg: &PruneConfig,
    diagnose: Option<&DiagnoseConfig>,
    first: Option<First<'_>>,
) -> Pruned {
    let reasons: BTreeMap<&str, &str> = report.removed.iter().map(|r| (r.id.as_str(), r.reason.as_str())).collect();
    let removed: Vec<Removed> = samples
        .iter()
        .filter_map(|s| {
            reasons.get(s.id.as_str()).map(|why| Removed {
                id: s.id.clone(),
                question_type: s.question_type.clone(),
                format: s.answer_format,
                iteration: 1,
                score: 1.0,
                reason: if *why == "no_image" {
                    "has no image: answerable without looking by construction".to_string()
                } else {
                    format!("answered correctly without the image: {why}")
                },
            })
        })
        .collect();
    let kept: Vec<Sample> = samples.iter().filter(|s| !reasons.contains_key(s.id.as_str())).cloned().collect();
    let before = match first {
        Some(f) => diagnose.map(|_| f.before(false)),
        None => diagnose.map(|d| crate::diagnose::diagnose(samples, d)),
    };
    let after = diagnose.map(|d| crate::diagnose::diagnose(&kept, d));
    let point =
        |d: Option<&Diagnosis>, size: usize, removed_before: usize, removed: usize, iteration: usize| Iteration {
            iteration,
            size,
            removed_before,
            max_bias: f64::NAN,
            mean_bias: f64::NAN,
            blind_accuracy: d.map_or(f64::NAN, |d| d.weighted),
            ci95: d.map(|d| d.ci95),
            chance: d.map_or(f64::NAN, |d| d.chance),
            removed,
        };
    let iterations = vec![
        point(before.as_ref(), samples.len(), 0, removed.len(), 1),
        point(after.as_ref(), kept.len(), removed.len(), 0, 2),
    ];
    let mut budgets = BTreeMap::new();
    budgets.insert("all".to_string(), removed.len());
    Pruned {
        method: Method::Bclean,
        config: cfg.clone(),
        budgets,
        kept: kept.into_iter().map(|s| s.id).collect(),
        stop: format!(
            "B-Clean removes the union of {} candidate model(s)' mirage-correct questions{}",
            report.models.len(),
            if report.step3_removed > 0 {
                format!(" and {} found by step 3", report.step3_removed)
            } else {
                String::new()
            },
        ) + &match (report.imageless, report.imageless_removed) {
            (0, _) => String::new(),
            (n, true) => {
                format!("; the {n} questions without an image are removed (answerable without looking by construction)")
            }
            (n, false) => format!(
                "; the {n} questions without an image are kept (no mirage row exists for them; `imageless = \"remove\"` removes them)"
            ),
        },
        removed,
        iterations,
        before,
        after,
        after_independent: None,
        n_input: samples.len(),
        unit: "question".into(),
        units_removed: reasons.len(),
    }
}
