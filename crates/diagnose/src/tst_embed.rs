//! TsT-Embed: the TsT protocol with sentence-embedding features and a linear
//! probe — the meaning-level shortcuts hand-made features cannot see.
//!
//! ```text
//! samples + SampleEmbeddings ─▶ groups and folds exactly as TsT-RF (group_samples, assign_folds)
//!   per fold: PCA fit on the training folds' embeddings only
//!     multiple choice: per option [cos(option, question), mean and max cos to the
//!                      other options, the option's first PCs] ─▶ conditional logit
//!                      (softmax over the options, one shared weight vector)
//!     yes/no:          [the question's first PCs] ─▶ logistic regression
//!   ─▶ s(x) = held-out probability of the gold answer; blind accuracy
//! ```
//! Open and numeric questions have no candidate set to score and are left out
//! (counted in [`TstEmbed::skipped`]). The probe is L2-regularised (λ = 1 on
//! standardised features, scikit-learn's `C = 1`): `blindspot_ml`'s conditional
//! logit, fit by Newton's method with sums in a fixed order: no seed, the same
//! bytes on any thread count.
//! The output is a [`Diagnosis`], so the report, the plots and IBP take it as
//! they take TsT-RF's.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::{DiagnoseConfig, Diagnosis, GroupSummary, ScoreRow, assign_folds, group_samples, split_fold};
use crate::embed::{SampleEmbeddings, dot};
use crate::error::{Error, Result};
use crate::ml::linear::{ConditionalLogit, Item};
use crate::ml::pca::Pca;
use crate::sample::{AnswerFormat, Sample};

/// Settings of the probe.
#[derive(Debug, Clone, PartialEq)]
pub struct TstEmbedConfig {
    /// Principal components of the option (or question) embedding used as features.
    pub components: usize,
    /// L2 penalty on standardised features.
    pub l2: f64,
    /// Newton iterations at most.
    pub max_iter: usize,
}

impl Default for TstEmbedConfig {
    fn default() -> Self {
        TstEmbedConfig { components: 64, l2: 1.0, max_iter: 50 }
    }
}

/// The result: a [`Diagnosis`] over the covered samples, and what was left out.
#[derive(Debug, Clone)]
pub struct TstEmbed {
    pub diagnosis: Diagnosis,
    /// Samples of formats the probe does not score (open, numeric), by format.
    pub skipped: BTreeMap<AnswerFormat, usize>,
}

impl TstEmbed {
    /// (id, s(x)) per covered sample, averaged over repeats, in id order.
    pub fn scores(&self) -> Vec<(String, f64)> {
        let mut scores: Vec<(String, f64)> =
            self.diagnosis.sample_scores().into_iter().map(|(id, (s, _))| (id.to_string(), s)).collect();
        scores.sort_by(|a, b| a.0.cmp(&b.0));
        scores
    }
    /// Weighted blind accuracy over covered samples.
    pub fn blind_accuracy(&self) -> f64 {
        self.diagnosis.weighted
    }
}

// ------------------------------------------------------------------ features

fn option_names(pcs: usize) -> Vec<String> {
    let mut n = vec!["cos_question".to_string(), "cos_others_mean".to_string(), "cos_others_max".to_string()];
    n.extend((0..pcs).map(|k| format!("option_pc{k}")));
    n
}

/// Per option: cosines to the question and the other options, then PCs.
fn option_items(samples: &[&Sample], emb: &[usize], e: &SampleEmbeddings, pca: &Pca) -> Vec<Item> {
    samples
        .iter()
        .zip(emb)
        .map(|(s, &i)| {
            let row = e.get(i);
            let x = row
                .options
                .iter()
                .enumerate()
                .map(|(j, o)| {
                    let others: Vec<f64> =
                        row.options.iter().enumerate().filter(|(k, _)| *k != j).map(|(_, p)| dot(o, p)).collect();
                    let mut f = vec![
                        dot(o, &row.question),
                        others.iter().sum::<f64>() / others.len().max(1) as f64,
                        others.iter().copied().fold(f64::NEG_INFINITY, f64::max).max(-1.0),
                    ];
                    pca.project(o, &mut f);
                    f
                })
                .collect();
            let gold = s.answer_index.and_then(|g| usize::try_from(g).ok()).filter(|g| *g < row.options.len());
            Item { x, gold }
        })
        .collect()
}

/// Yes/no: candidate "no" is the zero vector, "yes" the question's PCs and a bias.
fn yes_no_items(samples: &[&Sample], emb: &[usize], e: &SampleEmbeddings, pca: &Pca) -> Vec<Item> {
    samples
        .iter()
        .zip(emb)
        .map(|(s, &i)| {
            let mut yes = vec![1.0];
            pca.project(&e.get(i).question, &mut yes);
            let no = vec![0.0; yes.len()];
            Item { x: vec![no, yes], gold: Some(usize::from(s.answer == "yes")) }
        })
        .collect()
}

// ------------------------------------------------------------------ driver

/// Runs TsT-Embed with TsT-RF's groups and folds (`cfg`: folds, repeats,
/// seed, group-by, min-group). Every sample must have embeddings in `e`.
pub fn tst_embed(
    samples: &[&Sample],
    e: &SampleEmbeddings,
    cfg: &DiagnoseConfig,
    ecfg: &TstEmbedConfig,
) -> Result<TstEmbed> {
    let index = e.index();
    let mut skipped: BTreeMap<AnswerFormat, usize> = BTreeMap::new();
    let mut rows: Vec<ScoreRow> = Vec::new();
    let mut groups = Vec::new();
    let mut majority_hits = 0.0;
    for ((qtype, format), group) in group_samples(samples.iter().copied(), cfg.min_group) {
        if !matches!(format, AnswerFormat::MultipleChoice | AnswerFormat::YesNo) {
            *skipped.entry(format).or_default() += group.len();
            continue;
        }
        let emb: Vec<usize> = group
            .iter()
            .map(|s| {
                index.get(s.id.as_str()).copied().ok_or_else(|| {
                    Error::Bug(format!("sample {} has no embeddings (embeddings of other samples given)", s.id))
                })
            })
            .collect::<Result<_>>()?;
        let pos: BTreeMap<&str, usize> = group.iter().enumerate().map(|(k, s)| (s.id.as_str(), k)).collect();
        let repeats = cfg.repeats.max(1);
        let per_repeat: Vec<(Vec<ScoreRow>, f64, Vec<f64>)> = (0..repeats)
            .into_par_iter()
            .map(|repeat| {
                let fold_of = assign_folds(&group, format, repeat, cfg);
                let k = fold_of.iter().copied().max().map_or(0, |m| m + 1);
                let folds: Vec<(Vec<ScoreRow>, f64, Vec<f64>)> = (0..k)
                    .into_par_iter()
                    .map(|fold| {
                        let (train, test) = split_fold(&group, &fold_of, fold);
                        let emb_of = |v: &[&Sample]| v.iter().map(|s| emb[pos[s.id.as_str()]]).collect::<Vec<_>>();
                        let (train_e, test_e) = (emb_of(&train), emb_of(&test));
                        run_fold(&train, &test, &train_e, &test_e, e, format, fold, repeat, ecfg)
                    })
                    .collect();
                let mut out = (Vec::new(), 0.0, Vec::new());
                for (r, m, w) in folds {
                    out.0.extend(r);
                    out.1 += m;
                    if out.2.len() < w.len() {
                        out.2.resize(w.len(), 0.0);
                    }
                    out.2.iter_mut().zip(&w).for_each(|(a, b)| *a += b.abs() / k as f64);
                }
                out
            })
            .collect();
        let mut group_rows = Vec::new();
        let mut group_majority = 0.0;
        let mut weight = Vec::new();
        for (r, m, w) in per_repeat {
            group_rows.extend(r);
            group_majority += m;
            if weight.len() < w.len() {
                weight.resize(w.len(), 0.0);
            }
            weight.iter_mut().zip(&w).for_each(|(a, b)| *a += b / repeats as f64);
        }
        let names = match format {
            AnswerFormat::MultipleChoice => option_names(ecfg.components),
            _ => std::iter::once("yes_bias".to_string())
                .chain((0..ecfg.components).map(|k| format!("question_pc{k}")))
                .collect(),
        };
        let features = names.into_iter().zip(weight).collect();
        let mut summary = GroupSummary::from_rows(qtype, format, group.len(), &group_rows, group_majority, features);
        summary.folds = super::folds_used(&group, format, cfg);
        groups.push(summary);
        majority_hits += group_majority;
        rows.extend(group_rows);
    }
    rows.sort_by(|a, b| crate::sample::id_cmp(&a.id, &b.id).then(a.repeat.cmp(&b.repeat)));
    let n = rows.len().max(1) as f64;
    let (weighted, macro_by_type) = super::score::accuracies(&rows);
    let covered: Vec<&Sample> = {
        let ids: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        samples.iter().filter(|s| ids.contains(s.id.as_str())).copied().collect()
    };
    let diagnosis = Diagnosis {
        weighted,
        macro_by_type,
        ci95: super::score::interval(&rows, samples, cfg),
        chance: rows.iter().map(|r| r.chance).sum::<f64>() / n,
        majority: majority_hits / n,
        fingerprint: super::score::group_fingerprint(&covered),
        n_samples: covered.len(),
        rows,
        groups,
        tst_embed: None,
        outside: None,
        audit: Vec::new(),
        null: None,
        image_clusters: None,
    };
    Ok(TstEmbed { diagnosis, skipped })
}

/// One fold: PCA and probe on the training samples, scores for the held-out ones.
/// Returns the rows, majority hits and the probe's weights.
#[allow(clippy::too_many_arguments)]
fn run_fold(
    train: &[&Sample],
    test: &[&Sample],
    train_e: &[usize],
    test_e: &[usize],
    e: &SampleEmbeddings,
    format: AnswerFormat,
    fold: usize,
    repeat: usize,
    ecfg: &TstEmbedConfig,
) -> (Vec<ScoreRow>, f64, Vec<f64>) {
    let (train_items, test_items) = match format {
        AnswerFormat::MultipleChoice => {
            let rows: Vec<&[f32]> = train_e.iter().flat_map(|&i| e.get(i).options.iter().map(Vec::as_slice)).collect();
            let pca = Pca::fit(&rows, e.dim, ecfg.components);
            (option_items(train, train_e, e, &pca), option_items(test, test_e, e, &pca))
        }
        _ => {
            let rows: Vec<&[f32]> = train_e.iter().map(|&i| e.get(i).question.as_slice()).collect();
            let pca = Pca::fit(&rows, e.dim, ecfg.components);
            (yes_no_items(train, train_e, e, &pca), yes_no_items(test, test_e, e, &pca))
        }
    };
    let model = ConditionalLogit::fit(&train_items, ecfg.l2, ecfg.max_iter);
    // Majority: the most frequent gold position (yes/no: answer) on training items.
    let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
    for it in &train_items {
        if let Some(g) = it.gold {
            *counts.entry(g).or_default() += 1;
        }
    }
    let majority = counts.iter().max_by_key(|(g, c)| (**c, std::cmp::Reverse(**g))).map(|(g, _)| *g);
    let mut rows = Vec::with_capacity(test.len());
    let mut majority_hits = 0.0;
    for (s, it) in test.iter().zip(&test_items) {
        let p = if it.x.is_empty() { Vec::new() } else { model.predict(&it.x) };
        let pred = (0..p.len()).fold(0, |best, c| if p[c] > p[best] { c } else { best });
        let correct = f64::from(u8::from(it.gold == Some(pred) && !p.is_empty()));
        let s_x = it.gold.and_then(|g| p.get(g).copied()).unwrap_or(0.0);
        majority_hits += f64::from(u8::from(it.gold.is_some() && it.gold == majority));
        let prediction = match format {
            AnswerFormat::MultipleChoice => s.options.get(pred).cloned().unwrap_or_default(),
            _ => if pred == 1 { "yes" } else { "no" }.to_string(),
        };
        rows.push(ScoreRow::classified(s, format, (fold, repeat), prediction, correct, s_x));
    }
    (rows, majority_hits, model.weights().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::SampleEmbedding;

    fn unit(v: Vec<f32>) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    /// Two-option items whose gold option carries a planted direction: the
    /// probe finds it; with the direction removed it is at chance.
    fn planted(signal: f32) -> (Vec<Sample>, SampleEmbeddings) {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let dim = 24;
        let mut samples = Vec::new();
        let mut rows = Vec::new();
        for i in 0..400 {
            let gold = rng.random_range(0..2usize);
            let options: Vec<Vec<f32>> = (0..2)
                .map(|j| {
                    let mut v: Vec<f32> = (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect();
                    if j == gold {
                        v[5] += signal;
                    }
                    unit(v)
                })
                .collect();
            let mut s = Sample::new(format!("{i}"), "Which caption?", format!("o{gold}"));
            s.options = vec!["o0".into(), "o1".into()];
            s.answer_index = Some(gold as i32);
            s.answer_format = AnswerFormat::MultipleChoice;
            samples.push(s);
            let q = unit((0..dim).map(|k| if k == 0 { 1.0 } else { 0.0 }).collect());
            rows.push(SampleEmbedding { question: q.clone(), options, question_options: q });
        }
        let e =
            SampleEmbeddings { ids: samples.iter().map(|s| s.id.clone()).collect(), rows, dim, model: "test".into() };
        (samples, e)
    }

    #[test]
    fn the_probe_finds_a_planted_direction_and_nothing_without_it() {
        let cfg = DiagnoseConfig::default();
        let ecfg = TstEmbedConfig { components: 8, ..Default::default() };
        let (s, e) = planted(2.0);
        let r = tst_embed(&s.iter().collect::<Vec<_>>(), &e, &cfg, &ecfg).unwrap();
        assert!(r.blind_accuracy() > 0.9, "{}", r.blind_accuracy());
        assert_eq!(r.scores().len(), 400);
        let (s0, e0) = planted(0.0);
        let r0 = tst_embed(&s0.iter().collect::<Vec<_>>(), &e0, &cfg, &ecfg).unwrap();
        assert!((r0.blind_accuracy() - 0.5).abs() < 0.08, "{}", r0.blind_accuracy());
        // Deterministic: the same bytes again.
        let again = tst_embed(&s.iter().collect::<Vec<_>>(), &e, &cfg, &ecfg).unwrap();
        assert_eq!(r.diagnosis.rows, again.diagnosis.rows);
    }
}
