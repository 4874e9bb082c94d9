//! Fitting one group: its folds run a bounded number at a time, each fold's
//! features and forest fit on the training folds and scored on the held-out
//! one, the folds' results combined in fold order.

use rayon::prelude::*;

use super::groups::{assign_folds, split_fold};
use super::numeric::{best_constant, format_number, nearest, numeric_answers};
use super::target::{Target, class_of, prediction_text, target};
use crate::ml::features::candidates::{CandidateLayout, ExtremeTally};
use crate::ml::features::{self, Featurizer};
use crate::ml::forest;
use crate::ml::forest::{Binner, ForestParams, Matrix};
use crate::par::bounded_map;
use crate::sample::{AnswerFormat, NumericScoring, Sample, parse_number};
use crate::seed::rng_for;
use crate::{DiagnoseConfig, ScoreRow};

pub(crate) struct GroupOut {
    pub(crate) rows: Vec<ScoreRow>,
    pub(super) majority_hits: f64,
    pub(super) importance: Vec<f64>,
    pub(super) names: Vec<String>,
    /// Multiple choice: how the gold sits among the options on each option family,
    /// over the held-out questions of every fold.
    pub(super) tallies: Vec<(String, ExtremeTally)>,
    /// First repeat only: the held-out questions the first `null.trees` trees of each
    /// fold's forest answer (see [`fit_matrices`]).
    pub(super) first_hits: Option<f64>,
}

impl GroupOut {
    /// A copy, its rows (up to 140,000 per group at 700k) cloned in parallel.
    pub(super) fn copy(&self) -> GroupOut {
        GroupOut {
            rows: self.rows.par_iter().cloned().collect(),
            majority_hits: self.majority_hits,
            importance: self.importance.clone(),
            names: self.names.clone(),
            tallies: self.tallies.clone(),
            first_hits: self.first_hits,
        }
    }
}

/// Folds fit at once by one group's diagnosis, whatever the thread count: each holds
/// its feature matrices and featurizer while it runs, so memory grows with this, not
/// with the pool. Four keep two cores busy through the folds' serial stretches
/// (featurizing) and, with trees grown in parallel inside each fold, sixteen as well.
pub(crate) const FOLDS_IN_FLIGHT: usize = 4;

/// The results of one group in every repeat: `found[repeat]` when given, else fit now
/// (all the repeats' folds `FOLDS_IN_FLIGHT` at a time). `parsed[i]` is `group[i]`
/// parsed. Each repeat ticks `bar` when its results are in.
pub(super) fn fit_group(
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

/// A group's results in one repeat from its `k` folds' (those holding rows), in fold
/// order.
fn combine_folds(k: usize, folds: impl Iterator<Item = FoldOut>) -> GroupOut {
    let mut rows = Vec::new();
    let mut majority_hits = 0.0;
    let mut importance: Vec<f64> = Vec::new();
    let mut names = Vec::new();
    let mut tallies: Vec<(String, ExtremeTally)> = Vec::new();
    let mut first_hits = Vec::new();
    for out in folds {
        first_hits.push(out.first_hits);
        add_tallies(&mut tallies, &out.tallies);
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
    // Fold sums added in fold order, as the null adds its own.
    let first_hits = first_hits.into_iter().sum::<Option<f64>>();
    GroupOut { rows, majority_hits, importance, names, tallies, first_hits }
}

/// Adds `more` into `into`, family by family (by name; new families appended).
pub(super) fn add_tallies(into: &mut Vec<(String, ExtremeTally)>, more: &[(String, ExtremeTally)]) {
    for (name, t) in more {
        match into.iter_mut().find(|(n, _)| n == name) {
            Some((_, sum)) => sum.add(t),
            None => into.push((name.clone(), t.clone())),
        }
    }
}

/// One fold's held-out rows, each with what the majority baseline scores on it, and
/// the fold's feature importances with their names.
pub(crate) struct FoldOut {
    pub(crate) rows: Vec<ScoreRow>,
    majority_hits: Vec<f64>,
    importance: Vec<f64>,
    pub names: Vec<String>,
    tallies: Vec<(String, ExtremeTally)>,
    /// The held-out questions answered by the forest of its first `first_trees` trees.
    first_hits: Option<f64>,
}

/// One fold's scored rows and everything the leak check compares: the training
/// and held-out feature matrices and the model's raw outputs on the held-out rows
/// (class probabilities, row-major, or predicted numbers).
pub(crate) struct FoldFit {
    pub out: FoldOut,
    pub x_train: Matrix,
    pub x_test: Matrix,
    pub raw: Vec<f64>,
}

/// Fits features and a forest on every fold of `group` but `fold` and scores `fold`;
/// `None` when the fold holds no row. `parsed[i]` is `group[i]` parsed.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_fold(
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
    // Training rows get cross-fitted statistics (each from the other
    // blocks of the training folds), so the forest never learns to trust
    // a statistic that contains the row's own answer.
    let (featurizer, x_train) = Featurizer::fit_transform_parsed(&train, &parsed_train, &cfg.features);
    let x_test = featurizer.transform_parsed(&parsed_test);
    let fold = FoldOf { format, qtype, repeat, fold };
    Some(fit_matrices(&train, &test, featurizer.names(), x_train, x_test, &fold, cfg, keep_matrices))
}

/// Which fold of which group a fit is: what seeds its forest and labels its rows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FoldOf<'a> {
    pub(crate) format: AnswerFormat,
    pub(crate) qtype: Option<&'a str>,
    pub(crate) repeat: usize,
    pub(crate) fold: usize,
}

/// Fits a forest on the training questions `train` (feature matrix `x_train`, columns
/// `names`) and scores the held-out `test` (`x_test`).
///
/// In the first repeat it also counts the held-out questions that the forest of its
/// first `null.trees` trees (`null.regression_trees` for numbers) answers: that forest
/// is the one the permutation null fits on the real answers (same folds, features and
/// seeds), so the null takes its observed value from here instead of fitting it again.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_matrices(
    train: &[&Sample],
    test: &[&Sample],
    names: &[String],
    x_train: Matrix,
    x_test: Matrix,
    at: &FoldOf<'_>,
    cfg: &DiagnoseConfig,
    keep_matrices: bool,
) -> FoldFit {
    let FoldOf { format, qtype, repeat, fold } = *at;
    if format == AnswerFormat::MultipleChoice {
        return fit_candidates(train, test, names, x_train, x_test, qtype, repeat, cfg, fold, keep_matrices);
    }
    let binner = Binner::fit(&x_train);
    let (bx_train, bx_test) = (binner.transform(&x_train), binner.transform(&x_test));
    /// What the forest is fit on: class labels, or the numeric answers and their rows.
    enum Fit {
        Classes { labels: Vec<u32>, class_names: Vec<Option<String>> },
        Numbers { bx_keep: forest::BinnedMatrix, y_keep: Vec<f64> },
    }
    let fit = match target(format, train, cfg.features.rare_vocab) {
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
    let scored = match fit {
        Fit::Classes { labels, class_names } => {
            fit_classes(&bx_train, &bx_test, &labels, &class_names, test, at, forest_seed, cfg)
        }
        Fit::Numbers { bx_keep, y_keep } => fit_numbers(&bx_keep, &bx_test, &y_keep, test, at, forest_seed, cfg),
    };
    FoldFit {
        out: FoldOut {
            rows: scored.rows,
            majority_hits: scored.majority_hits,
            importance: scored.importance,
            names: names.to_vec(),
            tallies: Vec::new(),
            first_hits: scored.first_hits,
        },
        x_train,
        x_test,
        raw: scored.raw,
    }
}

/// The trees whose forest the null fits on the real answers, to be counted apart by a
/// fit of the first repeat (see [`fit_matrices`]); none in other repeats.
fn null_first_trees(repeat: usize, null_trees: usize) -> usize {
    if repeat == 0 { null_trees } else { 0 }
}

/// A fold's held-out rows as a forest scored them.
struct Scoring {
    rows: Vec<ScoreRow>,
    majority_hits: Vec<f64>,
    /// The forest's raw outputs on the held-out rows (what the leak check compares).
    raw: Vec<f64>,
    first_hits: Option<f64>,
    importance: Vec<f64>,
}

/// A classification fold (yes/no, open answers): the forest predicts the answer's
/// class; the majority baseline answers the training folds' most common answer.
#[allow(clippy::too_many_arguments)]
fn fit_classes(
    bx_train: &forest::BinnedMatrix,
    bx_test: &forest::BinnedMatrix,
    labels: &[u32],
    class_names: &[Option<String>],
    test: &[&Sample],
    at: &FoldOf<'_>,
    seed: u64,
    cfg: &DiagnoseConfig,
) -> Scoring {
    let FoldOf { format, repeat, fold, .. } = *at;
    let params = ForestParams { n_trees: cfg.trees, seed, ..ForestParams::classifier_default() };
    let n_classes = class_names.len();
    let first = null_first_trees(repeat, cfg.null.trees);
    let scored = forest::fit_classifier_scored(bx_train, labels, n_classes, None, &params, bx_test, first);
    let proba = scored.predictions;
    let gold_classes: Vec<Option<usize>> = test
        .iter()
        .map(|s| {
            let gold = class_of(format, s);
            class_names.iter().position(|n| n.is_some() && *n == gold)
        })
        .collect();
    // argmax, ties to the lowest class (as the forest's own predict).
    let pick = |proba: &[f64], j: usize| {
        let p = &proba[j * n_classes..(j + 1) * n_classes];
        (0..n_classes).fold(0, |best, c| if p[c] > p[best] { c } else { best })
    };
    let hit = |pred: usize, j: usize| f64::from(u8::from(Some(pred) == gold_classes[j]));
    let first_hits =
        (!scored.first.is_empty()).then(|| (0..test.len()).map(|j| hit(pick(&scored.first, j), j)).sum::<f64>());
    // The majority baseline answers the most common answer seen in training;
    // the pooled "other" class (rare open answers) is no answer at all.
    let majority_class = majority(labels, n_classes, |c| class_names[c].is_some());
    // Open answers have no options to guess among: their chance is what
    // answering the training folds' most common answer gets there.
    let open_chance = (format == AnswerFormat::Open)
        .then(|| labels.iter().filter(|&&l| l as usize == majority_class).count() as f64 / labels.len().max(1) as f64);
    let mut rows = Vec::with_capacity(test.len());
    let mut majority_hits = Vec::with_capacity(test.len());
    for (j, s) in test.iter().enumerate() {
        let gold_class = gold_classes[j];
        let pred = pick(&proba, j);
        let correct = hit(pred, j);
        let s_x = gold_class.map_or(0.0, |c| proba[j * n_classes + c]);
        majority_hits.push(f64::from(u8::from(Some(majority_class) == gold_class)));
        let prediction = prediction_text(format, s, class_names[pred].as_deref());
        let mut row = ScoreRow::classified(s, format, (fold, repeat), prediction, correct, s_x);
        if let Some(c) = open_chance {
            row.chance = c;
            row.s_minus_chance = s_x - c;
        }
        rows.push(row);
    }
    Scoring { rows, majority_hits, raw: proba, first_hits, importance: scored.importances }
}

/// A numeric fold: a regression forest on the training rows whose answer is a number
/// (`bx_keep`, `y_keep`), scored by the benchmark's own numeric scorer.
fn fit_numbers(
    bx_keep: &forest::BinnedMatrix,
    bx_test: &forest::BinnedMatrix,
    y_keep: &[f64],
    test: &[&Sample],
    at: &FoldOf<'_>,
    seed: u64,
    cfg: &DiagnoseConfig,
) -> Scoring {
    let FoldOf { format, repeat, fold, .. } = *at;
    let params = ForestParams { n_trees: cfg.regression_trees, seed, ..ForestParams::regressor_default() };
    let first = null_first_trees(repeat, cfg.null.regression_trees);
    let scored = forest::fit_regressor_scored(bx_keep, y_keep, None, &params, bx_test, first);
    let seen = numeric_answers(y_keep);
    let guesses = |mut predicted: Vec<f64>| {
        if cfg.numeric == NumericScoring::Exact {
            // Exact scoring: a blind guess is one of the answers seen in training
            // (the nearest to the forest's mean).
            for p in &mut predicted {
                *p = nearest(&seen, *p);
            }
        }
        predicted
    };
    let golds: Vec<f64> = test.iter().map(|s| parse_number(&s.answer).unwrap_or(f64::NAN)).collect();
    let first_hits = (!scored.first.is_empty()).then(|| {
        let first = guesses(scored.first);
        first.iter().zip(&golds).map(|(&p, &gold)| cfg.numeric.score(p, gold, cfg.mra)).sum::<f64>()
    });
    let predicted = guesses(scored.predictions);
    // The majority baseline answers the constant that scores best on the
    // training folds under the benchmark's own scorer (exact: the most common
    // answer); chance is what that constant scores there.
    let (baseline, chance) = best_constant(&seen, cfg.numeric, cfg.mra);
    let mut rows = Vec::with_capacity(test.len());
    let mut majority_hits = Vec::with_capacity(test.len());
    for (j, s) in test.iter().enumerate() {
        let gold = golds[j];
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
    Scoring { rows, majority_hits, raw: predicted, first_hits, importance: scored.importances }
}

/// A multiple-choice fold, position-free (`features::candidates`): every option of a
/// question is a row, the forest learns whether an option is the gold, and a
/// question's answer is its highest-scored option. s(x) is the gold's score over the
/// sum of its question's scores (uniform when every option scores 0).
#[allow(clippy::too_many_arguments)]
fn fit_candidates(
    train: &[&Sample],
    test: &[&Sample],
    names: &[String],
    x_train: Matrix,
    x_test: Matrix,
    qtype: Option<&str>,
    repeat: usize,
    cfg: &DiagnoseConfig,
    fold: usize,
    keep_matrices: bool,
) -> FoldFit {
    let layout = CandidateLayout::of(names);
    let n_train: Vec<usize> = train.iter().map(|s| s.options.len()).collect();
    let n_test: Vec<usize> = test.iter().map(|s| s.options.len()).collect();
    let (c_train, c_test) = (layout.expand(&x_train, &n_train), layout.expand(&x_test, &n_test));
    drop((x_train, x_test));
    let gold = |s: &Sample| s.answer_index.and_then(|g| usize::try_from(g).ok());
    let labels: Vec<u32> = train
        .iter()
        .flat_map(|s| {
            let g = gold(s);
            (0..s.options.len()).map(move |j| u32::from(g == Some(j)))
        })
        .collect();
    let binner = Binner::fit(&c_train);
    let (bx_train, bx_test) = (binner.transform(&c_train), binner.transform(&c_test));
    let forest_seed = rng_for(
        cfg.seed.wrapping_add(repeat as u64),
        "diagnose.forest",
        &format!("{qtype:?}/{:?}/{fold}", AnswerFormat::MultipleChoice),
    );
    let params = ForestParams { n_trees: cfg.trees, seed: forest_seed, ..ForestParams::classifier_default() };
    let first = null_first_trees(repeat, cfg.null.trees);
    let scored = forest::fit_classifier_scored(&bx_train, &labels, 2, None, &params, &bx_test, first);
    // Per held-out question, its options' scores over their sum (uniform when every
    // option scores 0) and the top-scored option (ties to the lowest position).
    let pick = |predictions: &[f64], at: usize, k: usize| {
        let p: Vec<f64> = (0..k).map(|j| predictions[(at + j) * 2 + 1]).collect();
        let total: f64 = p.iter().sum();
        let share: Vec<f64> =
            if total > 0.0 { p.iter().map(|v| v / total).collect() } else { vec![1.0 / k.max(1) as f64; k] };
        let pred = (0..k).fold(0, |best, j| if share[j] > share[best] { j } else { best });
        (share, pred)
    };
    let hit = |s: &Sample, pred: usize| f64::from(u8::from(!s.options.is_empty() && Some(pred) == gold(s)));
    let first_hits = (!scored.first.is_empty()).then(|| {
        let mut at = 0;
        test.iter()
            .map(|s| {
                let (_, pred) = pick(&scored.first, at, s.options.len());
                at += s.options.len();
                hit(s, pred)
            })
            .sum::<f64>()
    });
    // The majority baseline answers the gold position most common in training.
    let widest = n_train.iter().chain(&n_test).copied().max().unwrap_or(0);
    let mut position_counts = vec![0usize; widest.max(1)];
    for g in train.iter().filter_map(|s| gold(s)) {
        if g < position_counts.len() {
            position_counts[g] += 1;
        }
    }
    let majority_position = (0..position_counts.len()).max_by_key(|&j| (position_counts[j], std::cmp::Reverse(j)));
    let mut rows = Vec::with_capacity(test.len());
    let mut majority_hits = Vec::with_capacity(test.len());
    // Per held-out question, its options' normalised scores padded to `widest`: what
    // the leak check compares.
    let mut raw = Vec::with_capacity(test.len() * widest);
    let mut at = 0;
    for s in test {
        let k = s.options.len();
        let (share, pred) = pick(&scored.predictions, at, k);
        at += k;
        let g = gold(s);
        let correct = hit(s, pred);
        let s_x = g.and_then(|g| share.get(g)).copied().unwrap_or(0.0);
        majority_hits.push(f64::from(u8::from(g.is_some() && majority_position == g)));
        let prediction = s.options.get(pred).cloned().unwrap_or_default();
        rows.push(ScoreRow::classified(s, AnswerFormat::MultipleChoice, (fold, repeat), prediction, correct, s_x));
        raw.extend(share.iter().copied().chain(std::iter::repeat_n(0.0, widest.saturating_sub(k))));
    }
    let golds: Vec<Option<usize>> = test.iter().map(|s| gold(s)).collect();
    let tallies = layout.tally(&c_test, &n_test, &golds);
    let (x_train, x_test) = if keep_matrices {
        (c_train, c_test)
    } else {
        let n_cols = c_train.n_cols();
        (Matrix::new(0, n_cols, Vec::new()), Matrix::new(0, n_cols, Vec::new()))
    };
    let names = layout.names().to_vec();
    FoldFit {
        out: FoldOut { rows, majority_hits, importance: scored.importances, names, tallies, first_hits },
        x_train,
        x_test,
        raw,
    }
}

/// The most common of the classes `allowed` accepts (ties to the lowest class,
/// as the forest's argmax).
fn majority(labels: &[u32], n_classes: usize, allowed: impl Fn(usize) -> bool) -> usize {
    let mut counts = vec![0usize; n_classes];
    for &l in labels {
        counts[l as usize] += 1;
    }
    (0..n_classes).filter(|&c| allowed(c)).max_by_key(|&c| (counts[c], std::cmp::Reverse(c))).unwrap_or(0)
}

fn select_rows(x: &Matrix, rows: &[usize]) -> Matrix {
    let mut data = Vec::with_capacity(rows.len() * x.n_cols());
    for &i in rows {
        data.extend_from_slice(x.row(i));
    }
    Matrix::new(rows.len(), x.n_cols(), data)
}
