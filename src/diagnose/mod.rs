//! Diagnose: TsT-RF — k-fold random forests trained *on the test set* with
//! non-visual features only (`../shared/papers/tst-protocol-notes.md`).
//!
//! ```text
//! samples (sorted by id) ─▶ groups (question type × answer format)
//!   └─ per repeat r (seed + r), per fold: features fit on train ─▶ forest ─▶ held-out predictions
//!        ─▶ ScoreRow per (sample, repeat): prediction, correct, s(x), s − chance
//!        ─▶ summary: blind accuracy (weighted, macro, bootstrap CI), chance, majority, importances
//! ```
//! Departures from the authors' release, on purpose: one model per
//! (question type, answer format) pair rather than per type, because real
//! types mix formats (VQA-RAD's PRES has yes/no and open questions) and
//! s(x) is only comparable within one format; open answers are classified
//! over the training folds' vocabulary (answers seen < 2 times pooled into
//! "other", which is never correct); numeric rows count their MRA as accuracy;
//! training rows' answer statistics are cross-fitted within the training
//! folds (`FeatureConfig::cross_fit`, 0 = the release's in-sample statistics).

pub mod embed_features;
pub mod features;
pub mod folds;
pub mod forest;
pub mod plots;
pub mod recipes;
pub mod report;

use std::collections::{BTreeMap, HashMap};

use rand::SeedableRng;
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::ingest::mapping::parse_number;
use crate::sample::{AnswerFormat, Sample};
use crate::seed::rng_for;
use features::{FeatureConfig, Featurizer};
use forest::{Binner, ForestParams, Matrix};

/// How folds keep related questions together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupBy {
    /// Questions on the same image (first image's sha256, else its path).
    Image,
    /// Questions with the same text (and context): contrastive sets ask one
    /// question of two images with opposite answers, and a held-out twin must
    /// not be predicted from its sibling.
    Question,
    /// Questions sharing a `meta` field's value.
    Meta(String),
}

impl GroupBy {
    fn key(&self, s: &Sample) -> String {
        match self {
            GroupBy::Image => s
                .images
                .first()
                .and_then(|i| i.sha256.clone().or_else(|| i.path.clone()))
                .unwrap_or_else(|| format!("id:{}", s.id)),
            GroupBy::Question => {
                format!("{}\u{1f}{}", normalize(&s.question), s.context.as_deref().map(normalize).unwrap_or_default())
            }
            GroupBy::Meta(field) => s.meta.get(field).cloned().unwrap_or_else(|| format!("id:{}", s.id)),
        }
    }
}

/// MRA's comparison: the release's strict `<` or VSI-Bench's own `≤`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MraRule {
    Strict,
    Inclusive,
}

/// Settings of a TsT-RF run (defaults: the protocol's).
#[derive(Debug, Clone)]
pub struct DiagnoseConfig {
    pub folds: usize,
    pub repeats: usize,
    pub seed: u64,
    pub group_by: Option<GroupBy>,
    /// Trees of each classification forest.
    pub trees: usize,
    /// Trees of each regression forest.
    pub regression_trees: usize,
    pub mra: MraRule,
    /// Question types with fewer questions (in one format) share one pooled
    /// model per format, with the type as a feature: k-fold CV on a handful
    /// of questions only measures noise.
    pub min_group: usize,
    pub features: FeatureConfig,
    /// Which blind model scores s(x): TsT-RF, TsT-Embed or both combined.
    pub method: Method,
    /// How `Method::Both` combines the two s(x).
    pub combine: Combine,
}

/// The blind diagnostic of a pipeline (`[diagnose] method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// Random forests on non-visual features.
    #[default]
    TstRf,
    /// A linear probe on sentence-embedding features ([`embed_features`]).
    TstEmbed,
    /// Both; s(x) combined per question by [`Combine`].
    Both,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::TstRf => "tst-rf",
            Method::TstEmbed => "tst-embed",
            Method::Both => "both",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Method, String> {
        match s {
            "tst-rf" => Ok(Method::TstRf),
            "tst-embed" => Ok(Method::TstEmbed),
            "both" => Ok(Method::Both),
            _ => Err(format!("method \"{s}\" is not \"tst-rf\", \"tst-embed\" or \"both\"")),
        }
    }

    /// Whether this method needs sentence embeddings.
    pub fn needs_embeddings(self) -> bool {
        self != Method::TstRf
    }
}

/// How `method = "both"` combines TsT-RF's and TsT-Embed's s(x).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Combine {
    /// The larger of the two (a question is as biased as its most telling shortcut).
    #[default]
    Max,
    /// Their mean.
    Mean,
}

impl Combine {
    pub fn as_str(self) -> &'static str {
        match self {
            Combine::Max => "max",
            Combine::Mean => "mean",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Combine, String> {
        match s {
            "max" => Ok(Combine::Max),
            "mean" => Ok(Combine::Mean),
            _ => Err(format!("score \"{s}\" is not \"max\" or \"mean\"")),
        }
    }

    fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Combine::Max => a.max(b),
            Combine::Mean => 0.5 * (a + b),
        }
    }
}

impl Default for DiagnoseConfig {
    fn default() -> Self {
        DiagnoseConfig {
            folds: 5,
            repeats: 1,
            seed: 42,
            group_by: None,
            trees: 100,
            regression_trees: 200,
            mra: MraRule::Strict,
            min_group: 20,
            features: FeatureConfig::default(),
            method: Method::TstRf,
            combine: Combine::Max,
        }
    }
}

/// Mean relative accuracy over thresholds 0.50, 0.55, …, 0.95. A gold of 0
/// has no relative error: only an exact 0 scores.
pub fn mra(pred: f64, gold: f64, rule: MraRule) -> f64 {
    if !pred.is_finite() {
        return 0.0;
    }
    if gold == 0.0 {
        return f64::from(u8::from(pred == 0.0));
    }
    let rel = (pred - gold).abs() / gold.abs();
    let hits = (0u32..10)
        .filter(|t: &u32| {
            // Thresholds as exact hundredths: 1 - θ = 0.50, 0.45, …, 0.05.
            let bound = f64::from(50 - 5 * *t) / 100.0;
            match rule {
                MraRule::Strict => rel < bound,
                MraRule::Inclusive => rel <= bound,
            }
        })
        .count();
    hits as f64 / 10.0
}

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
    pub(crate) fn classified(
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
}

impl GroupSummary {
    /// The summary of one group's scored rows; `features` are (name, weight)
    /// pairs of which the 10 heaviest are kept (ties by name).
    pub(crate) fn from_rows(
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
}

impl Diagnosis {
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
fn group_fingerprint(samples: &[&Sample]) -> String {
    let mut h = Sha256::new();
    for s in samples {
        h.update(s.id.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

/// The name of the pooled group of small question types.
pub const POOLED: &str = "(small types pooled)";

/// The model groups of a sample set, in a fixed order: one per (question
/// type, answer format), with types under `min_group` questions pooled per format.
pub fn group_samples(samples: &[Sample], min_group: usize) -> BTreeMap<(Option<String>, AnswerFormat), Vec<&Sample>> {
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

/// Chance of a sample: 1/options, 1/2 for yes/no, 0 for open and numeric.
pub fn chance(s: &Sample) -> f64 {
    match s.answer_format {
        AnswerFormat::MultipleChoice => 1.0 / s.options.len().max(1) as f64,
        AnswerFormat::YesNo => 0.5,
        AnswerFormat::Numeric | AnswerFormat::Open => 0.0,
    }
}

fn normalize(answer: &str) -> String {
    answer.trim().to_lowercase()
}

/// Labels for folding (stratification): gold index, yes/no, or the answer
/// text's rank in sorted order; `None` for numeric (plain shuffled folds).
fn strata(group: &[&Sample], format: AnswerFormat) -> Option<Vec<u32>> {
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
pub(crate) enum Target {
    /// Class labels; `names[c]` is class c's answer text (`None` = "other").
    Classes {
        labels: Vec<u32>,
        names: Vec<Option<String>>,
    },
    Numbers(Vec<f64>),
}

pub(crate) fn class_of(format: AnswerFormat, s: &Sample) -> Option<String> {
    match format {
        AnswerFormat::MultipleChoice => s.answer_index.map(|i| i.to_string()),
        AnswerFormat::YesNo => Some(s.answer.clone()),
        _ => Some(normalize(&s.answer)),
    }
}

pub(crate) fn target(format: AnswerFormat, train: &[&Sample], rare_vocab: usize) -> Target {
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
fn prediction_text(format: AnswerFormat, s: &Sample, name: Option<&str>) -> String {
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
    diagnose_groups(samples, cfg, None)
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
pub fn diagnose_cached(samples: &[Sample], cfg: &DiagnoseConfig, cache: &mut GroupCache) -> Diagnosis {
    diagnose_groups(samples, cfg, Some(cache))
}

/// [`diagnose`], through `cache` when given (a run without one keeps no copies).
fn diagnose_groups(samples: &[Sample], cfg: &DiagnoseConfig, mut cache: Option<&mut GroupCache>) -> Diagnosis {
    let mut rows = Vec::with_capacity(samples.len() * cfg.repeats.max(1));
    let mut groups = Vec::new();
    let mut majority_hits = 0.0;
    let grouped: Vec<_> = group_samples(samples, cfg.min_group).into_iter().collect();
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
    // The others are fit side by side, groups and repeats as well as folds: each is a
    // pure function of its group, so one group's serial stretches (parsing, the
    // featurizer's tables) overlap another's trees. Results are taken in group order.
    // Per (group, repeat): its results, and whether they were fit now.
    let outs: Vec<Vec<(GroupOut, bool)>> = grouped
        .par_iter()
        .zip(found)
        .map(|(((qtype, format), group), found)| {
            found
                .into_par_iter()
                .enumerate()
                .map(|(repeat, found)| {
                    let out = match found {
                        Some(out) => (out, false),
                        None => (run_group(group, *format, qtype.as_deref(), repeat, cfg), true),
                    };
                    bar.inc(1);
                    out
                })
                .collect()
        })
        .collect();
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
        groups.push(GroupSummary::from_rows(qtype, format, group.len(), &group_rows, group_majority, features));
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
    let ci95 = bootstrap_ci(&rows, cfg.seed);
    Diagnosis {
        weighted,
        macro_by_type,
        ci95,
        chance: rows.iter().map(|r| r.chance).sum::<f64>() / n,
        majority: majority_hits / n,
        fingerprint: fingerprint(samples),
        n_samples: samples.len(),
        rows,
        groups,
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
    diagnose_with_cache(samples, cfg, emb, &mut GroupCache::default())
}

/// [`diagnose_with`], with TsT-RF's groups reused from `cache` where unchanged (see
/// [`GroupCache`]); TsT-Embed is always run.
pub fn diagnose_with_cache(
    samples: &[Sample],
    cfg: &DiagnoseConfig,
    emb: Option<&crate::embed::SampleEmbeddings>,
    cache: &mut GroupCache,
) -> crate::error::Result<Diagnosis> {
    let embed = |e: &crate::embed::SampleEmbeddings| {
        embed_features::tst_embed(samples, e, cfg, &embed_features::TstEmbedConfig::default())
    };
    let need = || crate::error::Error::Bug(format!("diagnose method {} ran without embeddings", cfg.method.as_str()));
    match cfg.method {
        Method::TstRf => Ok(diagnose_cached(samples, cfg, cache)),
        Method::TstEmbed => Ok(embed(emb.ok_or_else(need)?)?.diagnosis),
        Method::Both => {
            let e = embed(emb.ok_or_else(need)?)?;
            let mut d = diagnose_cached(samples, cfg, cache);
            combine_scores(&mut d, &e.diagnosis, cfg.combine);
            Ok(d)
        }
    }
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
    for g in &mut d.groups {
        let rows: Vec<&ScoreRow> =
            d.rows.iter().filter(|r| r.question_type == g.question_type && r.format == g.format).collect();
        if !rows.is_empty() {
            g.mean_s = rows.iter().map(|r| r.s).sum::<f64>() / rows.len() as f64;
        }
    }
}

/// 95% percentile interval of the weighted blind accuracy over 1,000 seeded
/// resamples of questions (each question's correctness averaged over repeats).
///
/// The draws are those of `rng.random_range(0..n)` on one ChaCha8 stream (see
/// [`crate::seed::random_below`]). When every question is simply right or wrong (one repeat), a
/// resample's sum is a count, kept exactly whatever the order, and the questions are
/// read from a bit set that stays in cache: at 700,000 questions the 700 million
/// draws take about a third of the time of summing `f64` values fetched from memory.
pub fn bootstrap_ci(rows: &[ScoreRow], seed: u64) -> (f64, f64) {
    // Questions in id (byte) order, each with its rows in row order.
    let mut pairs: Vec<(&str, f64)> = rows.iter().map(|r| (r.id.as_str(), r.correct)).collect();
    pairs.par_sort_by(|a, b| a.0.cmp(b.0));
    let values: Vec<f64> = pairs
        .chunk_by(|a, b| a.0 == b.0)
        .map(|question| question.iter().fold(0.0, |sum, (_, c)| sum + c) / question.len() as f64)
        .collect();
    let n = values.len();
    if n == 0 {
        return (0.0, 0.0);
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(rng_for(seed, "diagnose.bootstrap", ""));
    let index = |rng: &mut rand_chacha::ChaCha8Rng| crate::seed::random_below(rng, 0, n);
    let mut means: Vec<f64> = if values.iter().all(|&v| v == 0.0 || v == 1.0) {
        let mut right = vec![0u64; n.div_ceil(64)];
        for (i, _) in values.iter().enumerate().filter(|(_, v)| **v == 1.0) {
            right[i / 64] |= 1 << (i % 64);
        }
        (0..1000)
            .map(|_| {
                let hits: u64 = (0..n)
                    .map(|_| {
                        let i = index(&mut rng);
                        (right[i / 64] >> (i % 64)) & 1
                    })
                    .sum();
                hits as f64 / n as f64
            })
            .collect()
    } else {
        (0..1000).map(|_| (0..n).map(|_| values[index(&mut rng)]).sum::<f64>() / n as f64).collect()
    };
    means.sort_by(f64::total_cmp);
    (means[24], means[974])
}

struct GroupOut {
    rows: Vec<ScoreRow>,
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
        (Some(g), _) => folds::grouped(&group.iter().map(|s| g.key(s)).collect::<Vec<_>>(), k, seed),
        (None, Some(labels)) => folds::stratified(&labels, k, seed),
        (None, None) => folds::shuffled(group.len(), k, seed),
    }
}

/// The training and held-out samples of one fold, each in group order.
pub fn split_fold<T: Copy>(group: &[T], fold_of: &[usize], fold: usize) -> (Vec<T>, Vec<T>) {
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for (s, f) in group.iter().zip(fold_of) {
        if *f == fold { test.push(*s) } else { train.push(*s) }
    }
    (train, test)
}

fn run_group(
    group: &[&Sample],
    format: AnswerFormat,
    qtype: Option<&str>,
    repeat: usize,
    cfg: &DiagnoseConfig,
) -> GroupOut {
    let fold_of = assign_folds(group, format, repeat, cfg);
    let k = fold_of.iter().copied().max().map_or(0, |m| m + 1);
    // Folds are independent: they run side by side (each forest is parallel too), so
    // one fold's serial featurizing overlaps another's trees. Results are combined in
    // fold order, so the bytes do not depend on the thread count.
    // Reading the questions depends on no fold: done once, shared by all.
    let parsed_owned = features::parse(group, &cfg.features);
    let parsed: Vec<&features::Parsed<'_>> = parsed_owned.iter().collect();
    let folds: Vec<FoldOut> = (0..k)
        .into_par_iter()
        .filter_map(|fold| run_fold(group, &parsed, format, qtype, repeat, cfg, &fold_of, fold))
        .collect();
    // Freeing a large group's parsed questions one by one would keep one thread busy
    // while the other waits.
    drop(parsed);
    parsed_owned.into_par_iter().for_each(drop);
    let mut rows = Vec::with_capacity(group.len());
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
struct FoldOut {
    rows: Vec<ScoreRow>,
    majority_hits: Vec<f64>,
    importance: Vec<f64>,
    names: Vec<String>,
}

/// Fits features and a forest on every fold of `group` but `fold` and scores `fold`;
/// `None` when the fold holds no row. `parsed[i]` is `group[i]` parsed.
#[allow(clippy::too_many_arguments)]
fn run_fold(
    group: &[&Sample],
    parsed: &[&features::Parsed<'_>],
    format: AnswerFormat,
    qtype: Option<&str>,
    repeat: usize,
    cfg: &DiagnoseConfig,
    fold_of: &[usize],
    fold: usize,
) -> Option<FoldOut> {
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
    let forest_seed =
        rng_for(cfg.seed.wrapping_add(repeat as u64), "diagnose.forest", &format!("{qtype:?}/{format:?}/{fold}"));
    let fold_importance = match target(format, &train, cfg.features.rare_vocab) {
        Target::Classes { labels, names: class_names } => {
            let params = ForestParams { n_trees: cfg.trees, seed: forest_seed, ..ForestParams::classifier_default() };
            let n_classes = class_names.len();
            let model = forest::fit_classifier(&bx_train, &labels, n_classes, None, &params);
            let proba = model.predict_proba(&bx_test);
            let majority_class = majority(&labels, n_classes);
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
                rows.push(ScoreRow::classified(s, format, (fold, repeat), prediction, correct, s_x));
            }
            model.feature_importances().to_vec()
        }
        Target::Numbers(y) => {
            // Rows whose answer is not a number cannot train a regressor.
            let keep: Vec<usize> = (0..y.len()).filter(|&i| y[i].is_finite()).collect();
            let x_keep = select_rows(&x_train, &keep);
            let y_keep: Vec<f64> = keep.iter().map(|&i| y[i]).collect();
            let bx_keep = binner.transform(&x_keep);
            let params =
                ForestParams { n_trees: cfg.regression_trees, seed: forest_seed, ..ForestParams::regressor_default() };
            let model = forest::fit_regressor(&bx_keep, &y_keep, None, &params);
            let predicted = model.predict(&bx_test);
            let mean = y_keep.iter().sum::<f64>() / y_keep.len().max(1) as f64;
            for (j, s) in test.iter().enumerate() {
                let gold = parse_number(&s.answer).unwrap_or(f64::NAN);
                let score = mra(predicted[j], gold, cfg.mra);
                majority_hits.push(mra(mean, gold, cfg.mra));
                rows.push(ScoreRow {
                    id: s.id.clone(),
                    question_type: s.question_type.clone(),
                    format,
                    n_options: 0,
                    chance: 0.0,
                    fold,
                    repeat,
                    prediction: format_number(predicted[j]),
                    correct: score,
                    s: score,
                    s_minus_chance: score,
                });
            }
            model.feature_importances().to_vec()
        }
    };
    let names = featurizer.names().to_vec();
    Some(FoldOut { rows, majority_hits, importance: fold_importance, names })
}

fn majority(labels: &[u32], n_classes: usize) -> usize {
    let mut counts = vec![0usize; n_classes];
    for &l in labels {
        counts[l as usize] += 1;
    }
    // Ties go to the lowest class, as the forest's argmax.
    (0..n_classes).max_by_key(|&c| (counts[c], std::cmp::Reverse(c))).unwrap_or(0)
}

fn select_rows(x: &Matrix, rows: &[usize]) -> Matrix {
    let mut data = Vec::with_capacity(rows.len() * x.n_cols());
    for &i in rows {
        data.extend_from_slice(x.row(i));
    }
    Matrix::new(rows.len(), x.n_cols(), data)
}

fn format_number(v: f64) -> String {
    if v.is_finite() {
        format!("{:.4}", v).trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        "NaN".into()
    }
}

/// Label-invariance check: fit on training folds, featurize held-out rows,
/// change only the held-out answers, featurize again. Returns every
/// (group, column) whose values changed: those features read held-out answers.
pub fn check_leakage(samples: &[Sample], cfg: &DiagnoseConfig) -> Vec<String> {
    let mut leaks = Vec::new();
    for ((qtype, format), group) in group_samples(samples, cfg.min_group) {
        let fold_of = assign_folds(&group, format, 0, cfg);
        let (train, test) = split_fold(&group, &fold_of, 0);
        let test: Vec<Sample> = test.into_iter().cloned().collect();
        if train.is_empty() || test.is_empty() {
            continue;
        }
        let f = Featurizer::fit(&train, &cfg.features);
        let before = f.transform(&test.iter().collect::<Vec<_>>());
        let changed: Vec<Sample> = test.iter().map(perturb_answer).collect();
        let after = f.transform(&changed.iter().collect::<Vec<_>>());
        for j in 0..before.n_cols() {
            if (0..before.n_rows()).any(|i| before.get(i, j).to_bits() != after.get(i, j).to_bits()) {
                leaks.push(format!(
                    "{} / {}: {}",
                    qtype.as_deref().unwrap_or("(no type)"),
                    format.as_str(),
                    f.names()[j]
                ));
            }
        }
    }
    leaks
}

/// The same question with a different gold answer.
pub fn perturb_answer(s: &Sample) -> Sample {
    let mut c = s.clone();
    match s.answer_format {
        AnswerFormat::MultipleChoice if !s.options.is_empty() => {
            let i = (s.answer_index.unwrap_or(0) as usize + 1) % s.options.len();
            c.answer_index = Some(i as i32);
            c.answer = s.options[i].clone();
        }
        AnswerFormat::YesNo => c.answer = if s.answer == "yes" { "no".into() } else { "yes".into() },
        AnswerFormat::Numeric => c.answer = format_number(parse_number(&s.answer).unwrap_or(0.0) * 2.0 + 1.0),
        _ => c.answer = format!("{} (changed)", s.answer),
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn row(id: &str, repeat: usize, correct: f64) -> ScoreRow {
        ScoreRow {
            id: id.into(),
            question_type: None,
            format: AnswerFormat::MultipleChoice,
            n_options: 4,
            chance: 0.25,
            fold: 0,
            repeat,
            prediction: String::new(),
            correct,
            s: correct,
            s_minus_chance: correct - 0.25,
        }
    }

    /// The resampling `bootstrap_ci` must reproduce: values per id in byte order, each
    /// resample drawn with `random_range` and summed in draw order.
    fn plain_bootstrap(rows: &[ScoreRow], seed: u64) -> (f64, f64) {
        let mut per_id: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
        for r in rows {
            let e = per_id.entry(r.id.as_str()).or_default();
            e.0 += r.correct;
            e.1 += 1;
        }
        let values: Vec<f64> = per_id.values().map(|(c, n)| c / *n as f64).collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(rng_for(seed, "diagnose.bootstrap", ""));
        let mut means: Vec<f64> = (0..1000)
            .map(|_| {
                (0..values.len()).map(|_| values[rng.random_range(0..values.len())]).sum::<f64>() / values.len() as f64
            })
            .collect();
        means.sort_by(f64::total_cmp);
        (means[24], means[974])
    }

    #[test]
    fn bootstrap_ci_is_the_plain_resampling() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        // Right or wrong, one repeat, ids out of order (and "q10" before "q9" by bytes).
        let binary: Vec<ScoreRow> =
            (0..3000).rev().map(|i| row(&format!("q{i}"), 0, f64::from(u8::from(rng.random_bool(0.6))))).collect();
        // Two repeats that disagree on some questions: averages of 0.5.
        let halves: Vec<ScoreRow> = (0..2)
            .flat_map(|repeat| {
                (0..1500).map(move |i| row(&format!("q{i}"), repeat, f64::from(u8::from(i % 3 == 0 || repeat == 1))))
            })
            .collect();
        // Numeric scores (MRA) in [0, 1].
        let graded: Vec<ScoreRow> = (0..2000).map(|i| row(&format!("q{i}"), 0, f64::from(i % 11) / 10.0)).collect();
        for (name, rows) in [("binary", &binary), ("halves", &halves), ("graded", &graded)] {
            for seed in [0, 42] {
                let ci = bootstrap_ci(rows, seed);
                assert_eq!(ci, plain_bootstrap(rows, seed), "{name}, seed {seed}");
                assert!(ci.0 < ci.1, "{name}: {ci:?}");
            }
        }
        assert_eq!(bootstrap_ci(&[], 42), (0.0, 0.0));
    }

    #[test]
    fn mra_matches_the_definition() {
        assert_eq!(mra(10.0, 10.0, MraRule::Strict), 1.0);
        // 4% off: passes thresholds with bound > 0.04 → θ ≤ 0.95 except 0.95 (bound 0.05 > 0.04 passes too).
        assert_eq!(mra(10.4, 10.0, MraRule::Strict), 1.0);
        // exactly 5% off: strict fails θ = 0.95, inclusive passes.
        assert_eq!(mra(10.5, 10.0, MraRule::Strict), 0.9);
        assert_eq!(mra(10.5, 10.0, MraRule::Inclusive), 1.0);
        assert_eq!(mra(20.0, 10.0, MraRule::Strict), 0.0);
        assert_eq!(mra(0.0, 0.0, MraRule::Strict), 1.0);
        assert_eq!(mra(f64::NAN, 1.0, MraRule::Strict), 0.0);
    }
}
