//! The k-fold driver of TsT-RF: groups of (question type × answer format),
//! fold assignment, one forest per fold on features fit on the training
//! folds, held-out predictions scored into [`ScoreRow`]s.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::score::group_fingerprint;
use super::{DiagnoseConfig, Diagnosis, GroupSummary, Method, ScoreRow, combine_scores};
use super::{folds, tst_embed};
use crate::ml::features::{self, Featurizer};
use crate::ml::forest;
use crate::ml::forest::{Binner, ForestParams, Matrix};
use crate::sample::{AnswerFormat, NumericScoring, Sample, parse_number};
use crate::seed::rng_for;

/// The name of the pooled group of small question types.
pub const POOLED: &str = "(small types pooled)";

/// The model groups of a sample set, in a fixed order: one per (question
/// type, answer format), with types under `min_group` questions pooled per format.
pub fn group_samples<'a>(
    samples: impl IntoIterator<Item = &'a Sample>,
    min_group: usize,
) -> BTreeMap<(Option<String>, AnswerFormat), Vec<&'a Sample>> {
    let mut groups: BTreeMap<(Option<String>, AnswerFormat), Vec<&Sample>> = BTreeMap::new();
    for s in samples {
        groups.entry((s.question_type.clone(), s.answer_format)).or_default().push(s);
    }
    let small: Vec<_> = groups.iter().filter(|(_, v)| v.len() < min_group).map(|(k, _)| k.clone()).collect();
    if small.len() < 2 {
        return groups;
    }
    for key in small {
        let rows = groups.remove(&key).unwrap_or_default();
        groups.entry((Some(POOLED.to_string()), key.1)).or_default().extend(rows);
    }
    // Pooled rows back in canonical id order, as folding expects.
    for rows in groups.values_mut() {
        rows.sort_by(|a, b| crate::sample::id_cmp(&a.id, &b.id));
    }
    groups
}

pub(super) fn normalize(answer: &str) -> String {
    answer.trim().to_lowercase()
}

/// Labels for folding (stratification): gold index, yes/no, or the answer
/// text's rank in sorted order; `None` for numeric (plain shuffled folds).
pub(super) fn strata(group: &[&Sample], format: AnswerFormat) -> Option<Vec<u32>> {
    match format {
        AnswerFormat::MultipleChoice => Some(group.iter().map(|s| s.answer_index.unwrap_or(0).max(0) as u32).collect()),
        AnswerFormat::YesNo => Some(group.iter().map(|s| u32::from(s.answer == "yes")).collect()),
        AnswerFormat::Open => {
            let vocab: BTreeMap<String, u32> = group
                .iter()
                .map(|s| normalize(&s.answer))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .enumerate()
                .map(|(i, a)| (a, i as u32))
                .collect();
            Some(group.iter().map(|s| vocab[&normalize(&s.answer)]).collect())
        }
        AnswerFormat::Numeric => None,
    }
}

/// A fold's training targets and how to read predictions back.
pub enum Target {
    /// Class labels; `names[c]` is class c's answer text (`None` = "other").
    Classes {
        labels: Vec<u32>,
        names: Vec<Option<String>>,
    },
    Numbers(Vec<f64>),
}

pub fn class_of(format: AnswerFormat, s: &Sample) -> Option<String> {
    match format {
        AnswerFormat::MultipleChoice => s.answer_index.map(|i| i.to_string()),
        AnswerFormat::YesNo => Some(s.answer.clone()),
        _ => Some(normalize(&s.answer)),
    }
}

pub fn target(format: AnswerFormat, train: &[&Sample], rare_vocab: usize) -> Target {
    match format {
        AnswerFormat::Numeric => {
            Target::Numbers(train.iter().map(|s| parse_number(&s.answer).unwrap_or(f64::NAN)).collect())
        }
        AnswerFormat::MultipleChoice => {
            let n = train.iter().map(|s| s.options.len()).max().unwrap_or(2).max(2);
            Target::Classes {
                labels: train.iter().map(|s| s.answer_index.unwrap_or(0).max(0) as u32).collect(),
                names: (0..n).map(|i| Some(i.to_string())).collect(),
            }
        }
        AnswerFormat::YesNo => Target::Classes {
            labels: train.iter().map(|s| u32::from(s.answer == "yes")).collect(),
            names: vec![Some("no".into()), Some("yes".into())],
        },
        AnswerFormat::Open => {
            let mut counts: BTreeMap<String, usize> = BTreeMap::new();
            for s in train {
                *counts.entry(normalize(&s.answer)).or_default() += 1;
            }
            let mut names: Vec<Option<String>> =
                counts.into_iter().filter(|(_, c)| *c >= rare_vocab).map(|(a, _)| Some(a)).collect();
            names.push(None);
            let other = (names.len() - 1) as u32;
            let index: BTreeMap<&str, u32> =
                names.iter().enumerate().filter_map(|(i, n)| Some((n.as_deref()?, i as u32))).collect();
            let labels =
                train.iter().map(|s| index.get(normalize(&s.answer).as_str()).copied().unwrap_or(other)).collect();
            Target::Classes { labels, names }
        }
    }
}

/// Readable prediction text for a class.
pub(super) fn prediction_text(format: AnswerFormat, s: &Sample, name: Option<&str>) -> String {
    match (format, name) {
        (_, None) => "<other>".to_string(),
        (AnswerFormat::MultipleChoice, Some(i)) => {
            i.parse::<usize>().ok().and_then(|i| s.options.get(i).cloned()).unwrap_or_else(|| format!("<option {i}>"))
        }
        (_, Some(n)) => n.to_string(),
    }
}

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
    }
    for ((((qtype, format), group), ids), outs) in grouped.into_iter().zip(&ids).zip(outs) {
        let mut importance: Vec<f64> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut group_rows = Vec::new();
        let mut group_majority = 0.0;
        for (repeat, (out, fresh)) in outs.into_iter().enumerate() {
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
        let features = names.into_iter().zip(importance.iter().map(|v| v / repeats as f64)).collect();
        let mut summary = GroupSummary::from_rows(qtype, format, group.len(), &group_rows, group_majority, features);
        summary.folds = folds_used(&group, format, cfg);
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
    let weighted = rows.iter().map(|r| r.correct).sum::<f64>() / n;
    let mut by_type: BTreeMap<Option<&str>, (f64, usize)> = BTreeMap::new();
    for r in &rows {
        let e = by_type.entry(r.question_type.as_deref()).or_default();
        e.0 += r.correct;
        e.1 += 1;
    }
    let macro_by_type = by_type.values().map(|(c, k)| c / *k as f64).sum::<f64>() / by_type.len().max(1) as f64;
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
    let refs: Vec<&Sample> = samples.iter().collect();
    let mut d = diagnose_with_cache(&refs, cfg, emb, &mut GroupCache::default())?;
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

pub(super) struct GroupOut {
    pub(super) rows: Vec<ScoreRow>,
    majority_hits: f64,
    importance: Vec<f64>,
    names: Vec<String>,
}

impl GroupOut {
    /// A copy, its rows (up to 140,000 per group at 700k) cloned in parallel.
    fn copy(&self) -> GroupOut {
        GroupOut {
            rows: self.rows.par_iter().cloned().collect(),
            majority_hits: self.majority_hits,
            importance: self.importance.clone(),
            names: self.names.clone(),
        }
    }
}

/// Fold assignment of one group in one repeat.
pub fn assign_folds(group: &[&Sample], format: AnswerFormat, repeat: usize, cfg: &DiagnoseConfig) -> Vec<usize> {
    let k = cfg.folds.clamp(2, group.len().max(2));
    let seed = cfg.seed.wrapping_add(repeat as u64);
    match (&cfg.group_by, strata(group, format)) {
        (Some(g), _) => folds::grouped(&g.keys(group.iter().copied()), k, seed),
        (None, Some(labels)) => folds::stratified(&labels, k, seed),
        (None, None) => folds::shuffled(group.len(), k, seed),
    }
}

/// How many folds [`assign_folds`] makes of `group`: `cfg.folds`, or fewer when
/// the group has fewer questions (or, with `group_by`, fewer fold groups). The
/// same in every repeat: only which question lands in which fold changes.
pub fn folds_used(group: &[&Sample], format: AnswerFormat, cfg: &DiagnoseConfig) -> usize {
    let fold_of = assign_folds(group, format, 0, cfg);
    fold_of.iter().collect::<std::collections::BTreeSet<_>>().len()
}

/// The training and held-out samples of one fold, each in group order.
pub fn split_fold<T: Copy>(group: &[T], fold_of: &[usize], fold: usize) -> (Vec<T>, Vec<T>) {
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for (s, f) in group.iter().zip(fold_of) {
        if *f == fold { test.push(*s) } else { train.push(*s) }
    }
    (train, test)
}

/// The results of one group in one repeat; `parsed[i]` is `group[i]` parsed.
pub(super) fn run_group(
    group: &[&Sample],
    parsed: &[&features::Parsed<'_>],
    format: AnswerFormat,
    qtype: Option<&str>,
    repeat: usize,
    cfg: &DiagnoseConfig,
) -> GroupOut {
    let fold_of = assign_folds(group, format, repeat, cfg);
    run_group_with_folds(group, parsed, format, qtype, repeat, cfg, &fold_of)
}

/// Folds fit at once by one group's diagnosis, whatever the thread count: each holds
/// its feature matrices and featurizer while it runs, so memory grows with this, not
/// with the pool. Four keep two cores busy through the folds' serial stretches
/// (featurizing) and, with trees grown in parallel inside each fold, sixteen as well.
pub(super) const FOLDS_IN_FLIGHT: usize = 4;

/// `job(i)` for every `i` in `0..n`, results in index order, with at most `width` jobs
/// started and not finished at any time: `width` workers take the next index as
/// they finish one. A job may itself run in parallel.
pub(super) fn bounded_map<R: Send>(n: usize, width: usize, job: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<R>>> = std::sync::Mutex::new((0..n).map(|_| None).collect());
    (0..width.min(n)).into_par_iter().for_each(|_| {
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if i >= n {
                break;
            }
            let out = job(i);
            results.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[i] = Some(out);
        }
    });
    let results = results.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    results.into_iter().map(|out| out.expect("every job index is taken once")).collect()
}

/// The results of one group in every repeat: `found[repeat]` when given, else fit now
/// (all the repeats' folds `FOLDS_IN_FLIGHT` at a time). `parsed[i]` is `group[i]`
/// parsed. Each repeat ticks `bar` when its results are in.
fn fit_group(
    group: &[&Sample],
    parsed: &[&features::Parsed<'_>],
    format: AnswerFormat,
    qtype: Option<&str>,
    found: Vec<Option<GroupOut>>,
    cfg: &DiagnoseConfig,
    bar: &indicatif::ProgressBar,
) -> Vec<(GroupOut, bool)> {
    let fold_ofs: Vec<Option<Vec<usize>>> = found
        .iter()
        .enumerate()
        .map(|(repeat, found)| found.is_none().then(|| assign_folds(group, format, repeat, cfg)))
        .collect();
    let n_folds = |fold_of: &[usize]| fold_of.iter().copied().max().map_or(0, |m| m + 1);
    let jobs: Vec<(usize, usize)> = fold_ofs
        .iter()
        .enumerate()
        .filter_map(|(repeat, fold_of)| Some((repeat, fold_of.as_deref()?)))
        .flat_map(|(repeat, fold_of)| (0..n_folds(fold_of)).map(move |fold| (repeat, fold)))
        .collect();
    let mut fits = bounded_map(jobs.len(), FOLDS_IN_FLIGHT, |j| {
        let (repeat, fold) = jobs[j];
        let fold_of = fold_ofs[repeat].as_deref().unwrap_or_default();
        fit_fold(group, parsed, format, qtype, repeat, cfg, fold_of, fold, false).map(|f| f.out)
    })
    .into_iter();
    found
        .into_iter()
        .zip(&fold_ofs)
        .map(|(found, fold_of)| {
            let out = match (found, fold_of) {
                (Some(out), _) => (out, false),
                (None, fold_of) => {
                    let k = n_folds(fold_of.as_deref().unwrap_or_default());
                    (combine_folds(k, fits.by_ref().take(k).flatten()), true)
                }
            };
            bar.inc(1);
            out
        })
        .collect()
}

/// [`run_group`] on a given fold assignment (`fold_of[i]`: the fold of `group[i]`).
fn run_group_with_folds(
    group: &[&Sample],
    parsed: &[&features::Parsed<'_>],
    format: AnswerFormat,
    qtype: Option<&str>,
    repeat: usize,
    cfg: &DiagnoseConfig,
    fold_of: &[usize],
) -> GroupOut {
    let k = fold_of.iter().copied().max().map_or(0, |m| m + 1);
    // Folds are independent: they run side by side (each forest is parallel too), so
    // one fold's serial featurizing overlaps another's trees. Results are combined in
    // fold order, so the bytes do not depend on the thread count.
    let folds = bounded_map(k, FOLDS_IN_FLIGHT, |fold| {
        fit_fold(group, parsed, format, qtype, repeat, cfg, fold_of, fold, false).map(|f| f.out)
    });
    combine_folds(k, folds.into_iter().flatten())
}

/// A group's results in one repeat from its `k` folds' (those holding rows), in fold
/// order.
fn combine_folds(k: usize, folds: impl Iterator<Item = FoldOut>) -> GroupOut {
    let mut rows = Vec::new();
    let mut majority_hits = 0.0;
    let mut importance: Vec<f64> = Vec::new();
    let mut names = Vec::new();
    for out in folds {
        for (row, hit) in out.rows.into_iter().zip(out.majority_hits) {
            rows.push(row);
            majority_hits += hit;
        }
        if importance.len() < out.importance.len() {
            importance.resize(out.importance.len(), 0.0);
            names = out.names;
        }
        for (a, b) in importance.iter_mut().zip(&out.importance) {
            *a += b / k as f64;
        }
    }
    GroupOut { rows, majority_hits, importance, names }
}

/// One fold's held-out rows, each with what the majority baseline scores on it, and
/// the fold's feature importances with their names.
pub(super) struct FoldOut {
    rows: Vec<ScoreRow>,
    majority_hits: Vec<f64>,
    importance: Vec<f64>,
    pub names: Vec<String>,
}

/// One fold's scored rows and everything the leak check compares: the training
/// and held-out feature matrices and the model's raw outputs on the held-out rows
/// (class probabilities, row-major, or predicted numbers).
pub(super) struct FoldFit {
    pub out: FoldOut,
    pub x_train: Matrix,
    pub x_test: Matrix,
    pub raw: Vec<f64>,
}

/// Fits features and a forest on every fold of `group` but `fold` and scores `fold`;
/// `None` when the fold holds no row. `parsed[i]` is `group[i]` parsed.
#[allow(clippy::too_many_arguments)]
pub(super) fn fit_fold(
    group: &[&Sample],
    parsed: &[&features::Parsed<'_>],
    format: AnswerFormat,
    qtype: Option<&str>,
    repeat: usize,
    cfg: &DiagnoseConfig,
    fold_of: &[usize],
    fold: usize,
    keep_matrices: bool,
) -> Option<FoldFit> {
    let (train, test) = split_fold(group, fold_of, fold);
    if test.is_empty() {
        return None;
    }
    let (parsed_train, parsed_test) = split_fold(parsed, fold_of, fold);
    let mut rows = Vec::with_capacity(test.len());
    let mut majority_hits = Vec::with_capacity(test.len());
    // Training rows get cross-fitted statistics (each from the other
    // blocks of the training folds), so the forest never learns to trust
    // a statistic that contains the row's own answer.
    let (featurizer, x_train) = Featurizer::fit_transform_parsed(&train, &parsed_train, &cfg.features);
    let x_test = featurizer.transform_parsed(&parsed_test);
    let binner = Binner::fit(&x_train);
    let (bx_train, bx_test) = (binner.transform(&x_train), binner.transform(&x_test));
    /// What the forest is fit on: class labels, or the numeric answers and their rows.
    enum Fit {
        Classes { labels: Vec<u32>, class_names: Vec<Option<String>> },
        Numbers { bx_keep: forest::BinnedMatrix, y_keep: Vec<f64> },
    }
    let fit = match target(format, &train, cfg.features.rare_vocab) {
        Target::Classes { labels, names } => Fit::Classes { labels, class_names: names },
        Target::Numbers(y) => {
            // Rows whose answer is not a number cannot train a regressor.
            let keep: Vec<usize> = (0..y.len()).filter(|&i| y[i].is_finite()).collect();
            let y_keep: Vec<f64> = keep.iter().map(|&i| y[i]).collect();
            Fit::Numbers { bx_keep: binner.transform(&select_rows(&x_train, &keep)), y_keep }
        }
    };
    // The unbinned matrices (eight bytes a value, a fold of a large group
    // holds hundreds of MB) are only the leak check's: gone before the forest.
    let (x_train, x_test) = if keep_matrices {
        (x_train, x_test)
    } else {
        let n_cols = x_train.n_cols();
        (Matrix::new(0, n_cols, Vec::new()), Matrix::new(0, n_cols, Vec::new()))
    };
    let forest_seed =
        rng_for(cfg.seed.wrapping_add(repeat as u64), "diagnose.forest", &format!("{qtype:?}/{format:?}/{fold}"));
    let raw: Vec<f64>;
    let fold_importance = match fit {
        Fit::Classes { labels, class_names } => {
            let params = ForestParams { n_trees: cfg.trees, seed: forest_seed, ..ForestParams::classifier_default() };
            let n_classes = class_names.len();
            let scored = forest::fit_classifier_scored(&bx_train, &labels, n_classes, None, &params, &bx_test);
            let proba = scored.predictions;
            // The majority baseline answers the most common answer seen in training;
            // the pooled "other" class (rare open answers) is no answer at all.
            let majority_class = majority(&labels, n_classes, |c| class_names[c].is_some());
            // Open answers have no options to guess among: their chance is what
            // answering the training folds' most common answer gets there.
            let open_chance = (format == AnswerFormat::Open).then(|| {
                labels.iter().filter(|&&l| l as usize == majority_class).count() as f64 / labels.len().max(1) as f64
            });
            for (j, s) in test.iter().enumerate() {
                let gold = class_of(format, s);
                let gold_class = class_names.iter().position(|n| n.is_some() && *n == gold);
                let p = &proba[j * n_classes..(j + 1) * n_classes];
                // argmax, ties to the lowest class (as the forest's own predict).
                let pred = (0..n_classes).fold(0, |best, c| if p[c] > p[best] { c } else { best });
                let correct = f64::from(u8::from(Some(pred) == gold_class));
                let s_x = gold_class.map_or(0.0, |c| p[c]);
                majority_hits.push(f64::from(u8::from(Some(majority_class) == gold_class)));
                let prediction = prediction_text(format, s, class_names[pred].as_deref());
                let mut row = ScoreRow::classified(s, format, (fold, repeat), prediction, correct, s_x);
                if let Some(c) = open_chance {
                    row.chance = c;
                    row.s_minus_chance = s_x - c;
                }
                rows.push(row);
            }
            raw = proba;
            scored.importances
        }
        Fit::Numbers { bx_keep, y_keep } => {
            let params =
                ForestParams { n_trees: cfg.regression_trees, seed: forest_seed, ..ForestParams::regressor_default() };
            let scored = forest::fit_regressor_scored(&bx_keep, &y_keep, None, &params, &bx_test);
            let mut predicted = scored.predictions;
            let seen = numeric_answers(&y_keep);
            if cfg.numeric == NumericScoring::Exact {
                // Exact scoring: a blind guess is one of the answers seen in training
                // (the nearest to the forest's mean).
                for p in &mut predicted {
                    *p = nearest(&seen, *p);
                }
            }
            // The majority baseline answers the constant that scores best on the
            // training folds under the benchmark's own scorer (exact: the most common
            // answer); chance is what that constant scores there.
            let (baseline, chance) = best_constant(&seen, cfg.numeric, cfg.mra);
            for (j, s) in test.iter().enumerate() {
                let gold = parse_number(&s.answer).unwrap_or(f64::NAN);
                let score = cfg.numeric.score(predicted[j], gold, cfg.mra);
                majority_hits.push(cfg.numeric.score(baseline, gold, cfg.mra));
                rows.push(ScoreRow {
                    id: s.id.clone(),
                    question_type: s.question_type.clone(),
                    format,
                    n_options: 0,
                    chance,
                    fold,
                    repeat,
                    prediction: format_number(predicted[j]),
                    correct: score,
                    s: score,
                    s_minus_chance: score - chance,
                });
            }
            raw = predicted;
            scored.importances
        }
    };
    let names = featurizer.names().to_vec();
    Some(FoldFit { out: FoldOut { rows, majority_hits, importance: fold_importance, names }, x_train, x_test, raw })
}

/// The distinct values of `y` in ascending order, each with its count.
fn numeric_answers(y: &[f64]) -> Vec<(f64, usize)> {
    let mut sorted: Vec<f64> = y.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut out: Vec<(f64, usize)> = Vec::new();
    for v in sorted {
        match out.last_mut() {
            Some(last) if last.0 == v => last.1 += 1,
            _ => out.push((v, 1)),
        }
    }
    out
}

/// Candidate constants [`best_constant`] tries: the most common answers.
const CONSTANT_CANDIDATES: usize = 256;

/// The constant answer that scores best on the training answers `seen`
/// (ascending, with counts) under `scoring`, and its mean score there. The
/// candidates are the most common answers (and, for partial credit, the
/// median); ties go to the more common, then the smaller value. NaN and 0
/// without answers.
pub fn best_constant(seen: &[(f64, usize)], scoring: NumericScoring, rule: crate::sample::MraRule) -> (f64, f64) {
    let total: usize = seen.iter().map(|v| v.1).sum();
    if total == 0 {
        return (f64::NAN, 0.0);
    }
    let mut by_count: Vec<(f64, usize)> = seen.to_vec();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.total_cmp(&b.0)));
    by_count.truncate(CONSTANT_CANDIDATES);
    if scoring != NumericScoring::Exact {
        // The median: the best constant under a symmetric error, often not itself an answer.
        let mut below = 0;
        let half = total.div_ceil(2);
        if let Some(m) = seen.iter().find(|v| {
            below += v.1;
            below >= half
        }) && !by_count.iter().any(|c| c.0 == m.0)
        {
            by_count.push((m.0, 0));
        }
    }
    let mean_score =
        |c: f64| -> f64 { seen.iter().map(|&(y, n)| scoring.score(c, y, rule) * n as f64).sum::<f64>() / total as f64 };
    let mut best = (f64::NAN, -1.0, 0usize);
    for &(c, n) in &by_count {
        let v = mean_score(c);
        let better = v > best.1 + 1e-12 || ((v - best.1).abs() <= 1e-12 && (n > best.2 || (n == best.2 && c < best.0)));
        if better {
            best = (c, v, n);
        }
    }
    (best.0, best.1.max(0.0))
}

/// The value of `seen` (ascending) nearest to `x`, ties to the smaller.
fn nearest(seen: &[(f64, usize)], x: f64) -> f64 {
    if seen.is_empty() || !x.is_finite() {
        return f64::NAN;
    }
    let i = seen.partition_point(|v| v.0 < x);
    match (i.checked_sub(1).map(|j| seen[j].0), seen.get(i).map(|v| v.0)) {
        (Some(lo), Some(hi)) => {
            if x - lo <= hi - x {
                lo
            } else {
                hi
            }
        }
        (Some(lo), None) => lo,
        (None, Some(hi)) => hi,
        (None, None) => f64::NAN,
    }
}

/// The most common of the classes `allowed` accepts (ties to the lowest class,
/// as the forest's argmax).
pub(super) fn majority(labels: &[u32], n_classes: usize, allowed: impl Fn(usize) -> bool) -> usize {
    let mut counts = vec![0usize; n_classes];
    for &l in labels {
        counts[l as usize] += 1;
    }
    (0..n_classes).filter(|&c| allowed(c)).max_by_key(|&c| (counts[c], std::cmp::Reverse(c))).unwrap_or(0)
}

pub(super) fn select_rows(x: &Matrix, rows: &[usize]) -> Matrix {
    let mut data = Vec::with_capacity(rows.len() * x.n_cols());
    for &i in rows {
        data.extend_from_slice(x.row(i));
    }
    Matrix::new(rows.len(), x.n_cols(), data)
}

pub(super) fn format_number(v: f64) -> String {
    if v.is_finite() {
        format!("{:.4}", v).trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        "NaN".into()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    use super::*;

    #[test]
    fn bounded_map_runs_at_most_width_jobs_at_once_whatever_the_pool() {
        // Jobs that are parallel inside, as a fold's forest is: a thread waiting on
        // its own job's parts steals whatever it finds, other jobs included.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(16).build().unwrap();
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let out = pool.install(|| {
            bounded_map(40, FOLDS_IN_FLIGHT, |i| {
                most.fetch_max(running.fetch_add(1, SeqCst) + 1, SeqCst);
                let parts: usize = (0..64)
                    .into_par_iter()
                    .map(|part| {
                        std::thread::sleep(std::time::Duration::from_micros(200));
                        part
                    })
                    .sum();
                running.fetch_sub(1, SeqCst);
                i * parts
            })
        });
        assert_eq!(out, (0..40).map(|i| i * (0..64).sum::<usize>()).collect::<Vec<_>>());
        let most = most.load(SeqCst);
        assert!((2..=FOLDS_IN_FLIGHT).contains(&most), "{most} jobs ran at once, width {FOLDS_IN_FLIGHT}");
    }
}
