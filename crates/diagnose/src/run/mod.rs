//! The k-fold driver of TsT-RF: groups of (question type × answer format),
//! fold assignment, one forest per fold on features fit on the training
//! folds, held-out predictions scored into [`ScoreRow`]s.

mod fit;
mod groups;
mod numeric;
mod target;

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::score::group_fingerprint;
use super::tst_embed;
use super::{DiagnoseConfig, Diagnosis, GroupSummary, Method, combine_scores};
use crate::ml::features;
use crate::sample::{AnswerFormat, Sample};
use fit::fit_group;
pub(crate) use fit::{FOLDS_IN_FLIGHT, FoldOf, GroupOut, fit_fold, fit_matrices};
pub use groups::{POOLED, assign_folds, folds_used, group_samples, split_fold};
pub use numeric::best_constant;
pub(crate) use numeric::format_number;
pub(crate) use target::normalize;
pub use target::{Target, class_of, target};

/// Runs TsT-RF over every (question type, answer format) group.
pub fn diagnose(samples: &[Sample], cfg: &DiagnoseConfig) -> Diagnosis {
    let refs: Vec<&Sample> = samples.iter().collect();
    let mut d = diagnose_groups(&refs, cfg, None);
    count_image_clusters(&mut d, &refs, cfg);
    d
}

/// With `group-by = "image-cluster"`, how the images of the whole set cluster
/// and, when some cluster joins images, the blind accuracy with folds grouped
/// by image instead (stated by the report and the card).
fn count_image_clusters(d: &mut Diagnosis, samples: &[&Sample], cfg: &DiagnoseConfig) {
    if let Some(super::GroupBy::ImageCluster(t)) = cfg.group_by {
        let mut c = super::config::ImageClusterCount::of(samples, t);
        if c.joining > 0 {
            let by_image = DiagnoseConfig { group_by: Some(super::GroupBy::Image), ..cfg.clone() };
            c.blind_grouped_by_image = Some(diagnose_groups(samples, &by_image, None).weighted);
        }
        d.image_clusters = Some(c);
    }
}

/// The TsT-RF results of groups from earlier runs on a shrinking set (IBP's
/// iterations). A group's results are a pure function of its samples, in order, and of
/// the config: its folds, seeds, features and forests never look outside the group.
/// So a group whose members did not change since the last run (no question of it was
/// removed) is not fit again, and its rows are the same to the bit. One cache serves
/// one config and one set of samples (ids name the same content throughout).
#[derive(Default)]
pub struct GroupCache {
    /// Per (question type, format, repeat): the fingerprint of the group's ids in
    /// order and its results.
    entries: BTreeMap<(Option<String>, AnswerFormat, usize), (String, GroupOut)>,
    /// Groups fit, and groups found unchanged, over the cache's life.
    pub fit: usize,
    pub reused: usize,
}

impl Clone for GroupCache {
    fn clone(&self) -> GroupCache {
        GroupCache {
            entries: self.entries.iter().map(|(k, (ids, out))| (k.clone(), (ids.clone(), out.copy()))).collect(),
            fit: self.fit,
            reused: self.reused,
        }
    }
}

impl GroupCache {
    /// The results under `key` if they were fit on the group `ids` names (a copy).
    fn get(&mut self, key: &(Option<String>, AnswerFormat, usize), ids: &str) -> Option<GroupOut> {
        match self.entries.get(key) {
            Some((seen, out)) if seen == ids => {
                self.reused += 1;
                Some(out.copy())
            }
            _ => None,
        }
    }

    /// Keeps a copy of `out`, fit on the group `ids` names, for the next run.
    fn insert(&mut self, key: (Option<String>, AnswerFormat, usize), ids: &str, out: &GroupOut) {
        self.fit += 1;
        self.entries.insert(key, (ids.to_string(), out.copy()));
    }
}

/// [`diagnose`], reusing the results of groups that `cache` holds unchanged.
pub fn diagnose_cached(samples: &[&Sample], cfg: &DiagnoseConfig, cache: &mut GroupCache) -> Diagnosis {
    diagnose_groups(samples, cfg, Some(cache))
}

/// [`diagnose`], through `cache` when given (a run without one keeps no copies).
pub(super) fn diagnose_groups(
    samples: &[&Sample],
    cfg: &DiagnoseConfig,
    mut cache: Option<&mut GroupCache>,
) -> Diagnosis {
    let mut rows = Vec::with_capacity(samples.len() * cfg.repeats.max(1));
    let mut groups = Vec::new();
    let mut majority_hits = 0.0;
    let grouped: Vec<_> = group_samples(samples.iter().copied(), cfg.min_group).into_iter().collect();
    let repeats = cfg.repeats.max(1);
    let bar = crate::progress::bar((grouped.len() * repeats) as u64, "diagnose");
    // Per (group, repeat): its results if the cache holds them unchanged.
    let ids: Vec<Option<String>> =
        grouped.iter().map(|(_, group)| cache.is_some().then(|| group_fingerprint(group))).collect();
    let found: Vec<Vec<Option<GroupOut>>> = grouped
        .iter()
        .zip(&ids)
        .map(|(((qtype, format), _), ids)| {
            (0..repeats)
                .map(|repeat| match (cache.as_deref_mut(), ids) {
                    (Some(cache), Some(ids)) => cache.get(&(qtype.clone(), *format, repeat), ids),
                    _ => None,
                })
                .collect()
        })
        .collect();
    // The others are fit group after group, the next group's questions parsed while
    // this one's folds run; a group's folds (of every repeat it needs) run
    // `FOLDS_IN_FLIGHT` at a time, each forest parallel over its trees. So a run holds
    // two groups' parsed questions and that many folds whatever the thread count: run
    // side by side, every group, repeat and fold at once, their memory grew with it.
    // Each fit is a pure function of its group; results are taken in group order.
    // Per (group, repeat): its results, and whether they were fit now.
    let parse_for = |i: usize, found: &[Option<GroupOut>]| {
        if found.iter().any(Option::is_none) { features::parse(&grouped[i].1, &cfg.features) } else { Vec::new() }
    };
    let mut outs: Vec<Vec<(GroupOut, bool)>> = Vec::with_capacity(grouped.len());
    let mut found = found.into_iter().enumerate().peekable();
    let mut parsed_next = found.peek().map(|(i, f)| parse_for(*i, f)).unwrap_or_default();
    while let Some((i, found_here)) = found.next() {
        let parsed_owned = std::mem::take(&mut parsed_next);
        let ((qtype, format), group) = &grouped[i];
        let (group_outs, next) = rayon::join(
            || {
                let parsed: Vec<&features::Parsed<'_>> = parsed_owned.iter().collect();
                fit_group(group, &parsed, *format, qtype.as_deref(), found_here, cfg, &bar)
            },
            || found.peek().map(|(i, f)| parse_for(*i, f)).unwrap_or_default(),
        );
        parsed_next = next;
        // Freeing a large group's parsed questions one by one would keep one
        // thread busy while the other waits.
        parsed_owned.into_par_iter().for_each(drop);
        outs.push(group_outs);
        crate::memory::release_idle();
    }
    for ((((qtype, format), group), ids), outs) in grouped.into_iter().zip(&ids).zip(outs) {
        let mut importance: Vec<f64> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut group_rows = Vec::new();
        let mut group_majority = 0.0;
        let mut tallies = Vec::new();
        let mut first_trees = None;
        for (repeat, (out, fresh)) in outs.into_iter().enumerate() {
            fit::add_tallies(&mut tallies, &out.tallies);
            if let Some(hits) = out.first_hits.filter(|_| repeat == 0) {
                first_trees = Some(super::FirstTrees {
                    trees: cfg.null.trees,
                    regression_trees: cfg.null.regression_trees,
                    blind_accuracy: hits / group.len().max(1) as f64,
                });
            }
            if let (true, Some(cache), Some(ids)) = (fresh, cache.as_deref_mut(), ids) {
                cache.insert((qtype.clone(), format, repeat), ids, &out);
            }
            group_majority += out.majority_hits;
            if importance.len() < out.importance.len() {
                importance.resize(out.importance.len(), 0.0);
                names = out.names;
            }
            for (a, b) in importance.iter_mut().zip(&out.importance) {
                *a += b;
            }
            group_rows.extend(out.rows);
        }
        let mut features: Vec<(String, f64)> =
            names.into_iter().zip(importance.iter().map(|v| v / repeats as f64)).collect();
        if format == AnswerFormat::MultipleChoice {
            features = by_concept(features);
        }
        let mut summary = GroupSummary::from_rows(qtype, format, group.len(), &group_rows, group_majority, features);
        summary.shortcut = summary.top_features.iter().find_map(|(concept, _)| {
            let (sentence, gold_share, option_share, n) = features::candidates::shortcut_sentence(concept, &tallies)?;
            Some(super::Shortcut { feature: concept.clone(), sentence, gold_share, option_share, n })
        });
        summary.folds = folds_used(&group, format, cfg);
        summary.first_trees = first_trees;
        if summary.question_type.as_deref() == Some(POOLED) {
            let types: std::collections::BTreeSet<&str> =
                group.iter().map(|s| s.question_type.as_deref().unwrap_or("(none)")).collect();
            summary.pooled_types = types.into_iter().map(str::to_string).collect();
        }
        groups.push(summary);
        majority_hits += group_majority;
        rows.extend(group_rows);
    }
    bar.finish_and_clear();
    // A stable sort, so its result is unique: the same, in parallel or not.
    rows.par_sort_by(|a, b| crate::sample::id_cmp(&a.id, &b.id).then(a.repeat.cmp(&b.repeat)));
    let n = rows.len().max(1) as f64;
    let (weighted, macro_by_type) = super::score::accuracies(&rows);
    let ci95 = super::score::interval(&rows, samples, cfg);
    Diagnosis {
        weighted,
        macro_by_type,
        ci95,
        chance: rows.iter().map(|r| r.chance).sum::<f64>() / n,
        majority: majority_hits / n,
        fingerprint: group_fingerprint(samples),
        n_samples: samples.len(),
        rows,
        groups,
        tst_embed: None,
        outside: None,
        audit: Vec::new(),
        null: None,
        image_clusters: None,
    }
}

/// Importances of candidate columns summed per concept
/// ([`features::candidates::concept`]), in order of first appearance: one shortcut
/// learnt through a family's value, rank and gap is named once.
fn by_concept(features: Vec<(String, f64)>) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for (name, w) in features {
        let c = features::candidates::concept(&name);
        match out.iter_mut().find(|(n, _)| *n == c) {
            Some((_, sum)) => *sum += w,
            None => out.push((c, w)),
        }
    }
    out
}

/// Runs the configured blind diagnostic: TsT-RF, TsT-Embed (needs `emb`, the
/// embeddings of every sample or of a superset), or both with s(x) combined
/// per question. With `both`, the rows are TsT-RF's (its predictions, blind
/// accuracy and interval) with `s` replaced by the combination wherever
/// TsT-Embed scores the question (multiple choice and yes/no); the ranking
/// IBP uses is that combined s(x).
pub fn diagnose_with(
    samples: &[Sample],
    cfg: &DiagnoseConfig,
    emb: Option<&crate::embed::SampleEmbeddings>,
) -> crate::error::Result<Diagnosis> {
    diagnose_keeping(samples, cfg, emb, &mut GroupCache::default())
}

/// [`diagnose_with`], keeping TsT-RF's groups in `cache`: a pruner handed this
/// diagnosis and `cache` as its first iteration refits only the groups its
/// first batch changed.
pub fn diagnose_keeping(
    samples: &[Sample],
    cfg: &DiagnoseConfig,
    emb: Option<&crate::embed::SampleEmbeddings>,
    cache: &mut GroupCache,
) -> crate::error::Result<Diagnosis> {
    let refs: Vec<&Sample> = samples.iter().collect();
    let mut d = diagnose_with_cache(&refs, cfg, emb, cache)?;
    count_image_clusters(&mut d, &refs, cfg);
    Ok(d)
}

/// [`diagnose_with`], with TsT-RF's groups reused from `cache` where unchanged (see
/// [`GroupCache`]); TsT-Embed is always run.
pub fn diagnose_with_cache(
    samples: &[&Sample],
    cfg: &DiagnoseConfig,
    emb: Option<&crate::embed::SampleEmbeddings>,
    cache: &mut GroupCache,
) -> crate::error::Result<Diagnosis> {
    let embed = |e: &crate::embed::SampleEmbeddings| {
        tst_embed::tst_embed(samples, e, cfg, &tst_embed::TstEmbedConfig::default())
    };
    let need = || crate::error::Error::Bug(format!("diagnose method {} ran without embeddings", cfg.method.as_str()));
    let mut d = match cfg.method {
        Method::TstRf => diagnose_cached(samples, cfg, cache),
        Method::TstEmbed => embed(emb.ok_or_else(need)?)?.diagnosis,
        Method::Both => {
            let e = embed(emb.ok_or_else(need)?)?;
            let mut d = diagnose_cached(samples, cfg, cache);
            combine_scores(&mut d, &e.diagnosis, cfg.combine);
            d.tst_embed = Some(Box::new(e.diagnosis));
            d
        }
    };
    // Outside scores are fixed per question: IBP's every iteration combines the same
    // score of a question with its forest's s(x) of that iteration.
    if let Some(o) = &cfg.outside {
        super::outside::apply(&mut d, o);
    }
    Ok(d)
}
