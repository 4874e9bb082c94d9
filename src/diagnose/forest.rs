//! Random forests: the TsT-RF engine of the diagnose stage.
//!
//! `diagnose` runs "train on the test set": for every cross-validation fold it fits a
//! forest on the non-visual features of the training folds and scores the held-out
//! fold with it. This module is that forest and nothing else; folds, features and
//! scores live next to it in `src/diagnose/`.
//!
//! ```text
//! Matrix (f64, NaN = missing)
//!   ── Binner::fit(training fold) ──▶ Binner
//!   ── Binner::transform(training fold, held-out fold) ──▶ BinnedMatrix (u8, column-major)
//!   ── fit_classifier / fit_regressor(training fold) ──▶ ClassifierForest / RegressorForest
//!   ── predict_proba / predict(held-out fold), feature_importances, permutation_importance
//! ```
//!
//! It mirrors scikit-learn's `RandomForestClassifier` / `RandomForestRegressor` as the
//! TsT release uses them (`tst-protocol-notes.md`, "Forest"): bootstrap samples, a fresh
//! random subset of candidate features at every node (scikit-learn's rule for constant
//! features included), fully grown trees, Gini or squared-error splits, missing values
//! sent to the side that lowers impurity most, leaf class frequencies averaged over
//! trees, impurity-based importances. Its departures, which reports must mention:
//!
//! - Splits are on bins, not raw values: each fold's columns are binned once ([`Binner`],
//!   fit on the training fold only), as scikit-learn's `HistGradientBoosting*` and
//!   LightGBM do. A column with at most [`MAX_VALUE_BINS`] distinct values keeps every
//!   candidate split scikit-learn would consider; a column with more is cut at quantiles.
//!   A split between two bins that hold training rows sends the empty bins between them
//!   half left, half right, where scikit-learn cuts halfway between the two values.
//! - Randomness comes from one `ChaCha8Rng` per tree, not NumPy's generator, so a seed
//!   gives a different (equally valid) forest than scikit-learn's `random_state`: scores
//!   agree in distribution, not bit for bit.
//!
//! Speed comes from working on bins: for each candidate feature a node first checks
//! whether the feature is constant among its rows (cheap, and common deep in a tree);
//! otherwise it sums its rows into a histogram with one bin per code the feature takes
//! in training (a few for most features). A small node marks the bins its rows fall in
//! and visits only those, so a node of 20 rows over a 200-bin feature costs 20 steps,
//! not 200 (nor a sort). The boundaries between occupied bins are scored in one pass
//! with O(1) work each (`Scan`), both missing-value directions at once. A large node's larger child gets a histogram by subtracting its
//! sibling's from the parent's, and a child's statistics are its parent's split sums,
//! exact with integer (bootstrap) weights.
//!
//! Determinism: tree `t` draws everything from a `ChaCha8Rng` seeded by mixing
//! `(seed, t)`, trees are collected in index order and every reduction over trees
//! runs in index order, so results are bit-identical whatever the rayon pool size.

use std::ops::Range;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Bin code of a missing (NaN) value. Observed values use codes below it.
pub const MISSING_BIN: u8 = u8::MAX;

/// Most bins the observed values of one column are spread over (codes `0..MISSING_BIN`).
pub const MAX_VALUE_BINS: usize = MISSING_BIN as usize;

/// Number of distinct bin codes.
const N_BIN_CODES: usize = MAX_VALUE_BINS + 1;

/// A node whose impurity is at most this is pure and becomes a leaf (scikit-learn's `EPSILON`).
const PURE: f64 = f64::EPSILON;

/// Most rows per prediction work item. An item's bins are copied row-major (1024 rows of
/// a hundred features stay in L2) and trees are the outer loop, so one tree's nodes are
/// fetched once per item: deep trees of large training sets do not fit in L1, and
/// fetching them once per 256 rows cost about 25% more than once per 1024 (12,000 rows
/// of 113 features, trees of 48,000 training rows: 134-179 ms against 107-138 ms).
const PREDICT_CHUNK: usize = 1024;

/// Rows that go down a tree together; see `sum_over_trees`. Divides `PREDICT_CHUNK`.
const PREDICT_GROUP: usize = 8;

/// A dense row-major matrix of features; NaN marks a missing value.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    n_rows: usize,
    n_cols: usize,
    data: Vec<f64>,
}

impl Matrix {
    /// Wraps `data`, which holds `n_rows` rows of `n_cols` values each, row after row.
    ///
    /// # Panics
    /// If `data.len()` is not `n_rows * n_cols`.
    pub fn new(n_rows: usize, n_cols: usize, data: Vec<f64>) -> Matrix {
        assert_eq!(
            n_rows.checked_mul(n_cols),
            Some(data.len()),
            "Matrix::new: a {n_rows} x {n_cols} matrix needs {n_rows} * {n_cols} values, got {}",
            data.len()
        );
        Matrix { n_rows, n_cols, data }
    }

    /// Number of rows (samples).
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns (features).
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// The values of row `i`.
    ///
    /// # Panics
    /// If `i >= n_rows`.
    pub fn row(&self, i: usize) -> &[f64] {
        assert!(i < self.n_rows, "row {i} out of range ({} rows)", self.n_rows);
        &self.data[i * self.n_cols..(i + 1) * self.n_cols]
    }

    /// The value at row `i`, column `j`.
    ///
    /// # Panics
    /// If `i` or `j` is out of range.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        assert!(j < self.n_cols, "column {j} out of range ({} columns)", self.n_cols);
        self.row(i)[j]
    }
}

/// Per-column bin thresholds learned from a training matrix.
///
/// Observed value `v` of column `j` goes to bin `b` when
/// `thresholds(j)[b - 1] < v <= thresholds(j)[b]` (open-ended at both ends), so a
/// split `bin <= b` is the split `v <= thresholds(j)[b]`. NaN goes to [`MISSING_BIN`].
#[derive(Debug, Clone, PartialEq)]
pub struct Binner {
    thresholds: Vec<Vec<f64>>,
}

impl Binner {
    /// Learns at most `MAX_VALUE_BINS - 1` thresholds per column from the non-missing
    /// values of `x`: midpoints between consecutive distinct values when a column has at
    /// most [`MAX_VALUE_BINS`] of them, otherwise midpoints at quantiles, so that bins
    /// hold about as many rows each. A column without observed values gets no threshold.
    pub fn fit(x: &Matrix) -> Binner {
        let thresholds = (0..x.n_cols.div_ceil(COLUMN_BLOCK))
            .into_par_iter()
            .flat_map_iter(|block| {
                let columns = block * COLUMN_BLOCK..((block + 1) * COLUMN_BLOCK).min(x.n_cols);
                let mut values = vec![Vec::with_capacity(x.n_rows); columns.len()];
                for i in 0..x.n_rows {
                    for (column, &v) in values.iter_mut().zip(&x.row(i)[columns.clone()]) {
                        column.push(v);
                    }
                }
                values.into_iter().map(column_thresholds)
            })
            .collect();
        Binner { thresholds }
    }

    /// Number of columns the binner was fit on.
    pub fn n_cols(&self) -> usize {
        self.thresholds.len()
    }

    /// The increasing thresholds of column `j`.
    pub fn thresholds(&self, j: usize) -> &[f64] {
        &self.thresholds[j]
    }

    /// Bins every value of `x` with the thresholds learned by [`Binner::fit`].
    ///
    /// # Panics
    /// If `x` does not have the columns the binner was fit on.
    pub fn transform(&self, x: &Matrix) -> BinnedMatrix {
        assert_eq!(
            x.n_cols,
            self.n_cols(),
            "Binner::transform: the binner was fit on {} columns, the matrix has {}",
            self.n_cols(),
            x.n_cols
        );
        let mut bins = vec![0; x.n_rows * x.n_cols];
        if x.n_rows > 0 {
            bins.par_chunks_mut(x.n_rows * COLUMN_BLOCK).enumerate().for_each(|(block, out)| {
                let columns = block * COLUMN_BLOCK..block * COLUMN_BLOCK + out.len() / x.n_rows;
                let thresholds = &self.thresholds[columns.clone()];
                for i in 0..x.n_rows {
                    for ((column, thresholds), &v) in
                        out.chunks_exact_mut(x.n_rows).zip(thresholds).zip(&x.row(i)[columns.clone()])
                    {
                        column[i] = bin_of(thresholds, v);
                    }
                }
            });
        }
        BinnedMatrix { n_rows: x.n_rows, n_cols: x.n_cols, bins }
    }
}

/// Columns binned together: a row's values of the block share a cache line or two, so a
/// pass over the rows reads the row-major matrix once per block, not once per column.
const COLUMN_BLOCK: usize = 8;

/// Thresholds for one column's values (NaN skipped); see [`Binner::fit`].
fn column_thresholds(mut sorted: Vec<f64>) -> Vec<f64> {
    // Adding +0.0 turns -0.0 into 0.0, so the two zeros are one distinct value.
    sorted.retain(|v| !v.is_nan());
    sorted.iter_mut().for_each(|v| *v += 0.0);
    sorted.sort_unstable_by(f64::total_cmp);
    let mut distinct: Vec<(f64, usize)> = Vec::new();
    for v in sorted {
        match distinct.last_mut() {
            Some((last, count)) if *last == v => *count += 1,
            _ => distinct.push((v, 1)),
        }
    }

    let every_value_gets_a_bin = distinct.len() <= MAX_VALUE_BINS;
    let mut remaining: usize = distinct.iter().map(|&(_, count)| count).sum();
    let mut bins_left = MAX_VALUE_BINS;
    let mut in_bin = 0;
    let mut thresholds = Vec::new();
    for pair in distinct.windows(2) {
        if bins_left == 1 {
            break;
        }
        let ((lo, count), (hi, _)) = (pair[0], pair[1]);
        in_bin += count;
        // Close a bin once it holds its fair share of what is left. Recomputing the share
        // after each bin lets a heavy value (say 0 for most rows) take one bin without
        // starving the rest of the range of resolution.
        if every_value_gets_a_bin || in_bin * bins_left >= remaining {
            thresholds.push(midpoint(lo, hi));
            remaining -= in_bin;
            in_bin = 0;
            bins_left -= 1;
        }
    }
    thresholds
}

/// A threshold with `lo <= t < hi`, so `lo` bins low and `hi` bins high. Halves are
/// summed (as scikit-learn does) so huge values cannot overflow; when rounding or
/// infinities defeat that, `lo` itself is the threshold.
fn midpoint(lo: f64, hi: f64) -> f64 {
    let mid = lo / 2.0 + hi / 2.0;
    if lo <= mid && mid < hi { mid } else { lo }
}

fn bin_of(thresholds: &[f64], value: f64) -> u8 {
    if value.is_nan() {
        MISSING_BIN
    } else {
        // At most MAX_VALUE_BINS - 1 thresholds, so the bin index fits below MISSING_BIN.
        thresholds.partition_point(|&t| t < value) as u8
    }
}

/// Bin codes of a matrix, stored column-major so that a histogram over one feature
/// reads one contiguous column.
#[derive(Debug, Clone, PartialEq)]
pub struct BinnedMatrix {
    n_rows: usize,
    n_cols: usize,
    bins: Vec<u8>,
}

impl BinnedMatrix {
    /// Number of rows (samples).
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns (features).
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Bin codes of column `j`, one per row.
    pub fn column(&self, j: usize) -> &[u8] {
        &self.bins[j * self.n_rows..(j + 1) * self.n_rows]
    }

    /// Bin code at row `i`, column `j`.
    ///
    /// # Panics
    /// If `i` or `j` is out of range.
    pub fn get(&self, i: usize, j: usize) -> u8 {
        assert!(i < self.n_rows, "row {i} out of range ({} rows)", self.n_rows);
        self.column(j)[i]
    }

    fn column_mut(&mut self, j: usize) -> &mut [u8] {
        &mut self.bins[j * self.n_rows..(j + 1) * self.n_rows]
    }
}

/// How many features are drawn as split candidates at each node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MaxFeatures {
    /// `floor(sqrt(n_features))`, at least 1 (scikit-learn's `"sqrt"`).
    Sqrt,
    /// Every feature.
    All,
    /// This many, clamped to `1..=n_features`.
    Count(usize),
    /// `floor(fraction * n_features)`, clamped to `1..=n_features`.
    Fraction(f64),
}

impl MaxFeatures {
    fn resolve(self, n_features: usize) -> usize {
        if n_features == 0 {
            return 0;
        }
        let wanted = match self {
            MaxFeatures::Sqrt => (n_features as f64).sqrt() as usize,
            MaxFeatures::All => n_features,
            MaxFeatures::Count(count) => count,
            // `as` saturates, and maps NaN to 0, which the clamp lifts to 1.
            MaxFeatures::Fraction(fraction) => (fraction * n_features as f64) as usize,
        };
        wanted.clamp(1, n_features)
    }
}

/// Settings of a forest, named after scikit-learn's.
#[derive(Debug, Clone, PartialEq)]
pub struct ForestParams {
    /// Number of trees. With 0 the forest predicts uniform probabilities / 0.
    pub n_trees: usize,
    /// Candidate features per node.
    pub max_features: MaxFeatures,
    /// Fewest samples (distinct in-bag rows) in a leaf; values below 1 count as 1.
    pub min_samples_leaf: usize,
    /// Fewest samples a node needs to be split; values below 2 count as 2.
    pub min_samples_split: usize,
    /// Deepest level a node may be split at (the root is depth 0); `None` = unlimited.
    pub max_depth: Option<usize>,
    /// Grow each tree on a bootstrap sample (n draws with replacement) of the rows.
    pub bootstrap: bool,
    /// Seed of every random draw: bootstrap samples and candidate features.
    pub seed: u64,
}

impl ForestParams {
    /// scikit-learn `RandomForestClassifier()` as TsT uses it: 100 trees, sqrt features,
    /// bootstrap, Gini, fully grown.
    pub fn classifier_default() -> ForestParams {
        ForestParams {
            n_trees: 100,
            max_features: MaxFeatures::Sqrt,
            min_samples_leaf: 1,
            min_samples_split: 2,
            max_depth: None,
            bootstrap: true,
            seed: 0,
        }
    }

    /// scikit-learn `RandomForestRegressor()` with TsT's 200 trees: all features,
    /// bootstrap, squared error, fully grown.
    pub fn regressor_default() -> ForestParams {
        ForestParams { n_trees: 200, max_features: MaxFeatures::All, ..ForestParams::classifier_default() }
    }
}

/// A fitted classification forest.
#[derive(Debug, Clone)]
pub struct ClassifierForest {
    trees: Vec<Tree>,
    n_classes: usize,
    n_features: usize,
    importances: Vec<f64>,
}

/// A fitted regression forest.
#[derive(Debug, Clone)]
pub struct RegressorForest {
    trees: Vec<Tree>,
    n_features: usize,
    importances: Vec<f64>,
}

/// Permutation importance of every feature on one data set.
#[derive(Debug, Clone, PartialEq)]
pub struct PermutationImportance {
    /// Score on the unpermuted data: accuracy (classifier) or minus the MSE (regressor).
    pub baseline: f64,
    /// Per feature, mean over repeats of `baseline - score with that column permuted`:
    /// the drop in accuracy, or the rise in MSE.
    pub mean: Vec<f64>,
    /// Per feature, population standard deviation of that difference over repeats.
    pub std: Vec<f64>,
}

/// Fits a Gini random forest to class labels `y` (`0..n_classes`, one per row of `x`).
///
/// `sample_weight` follows scikit-learn 1.9: with `bootstrap` rows are drawn with
/// probability proportional to their weight; without it, weights scale each row's
/// contribution. Rows of weight 0 are never used. Degenerate inputs (no rows, one
/// class, constant or all-missing columns, no columns) give single-leaf trees, never
/// a panic.
///
/// # Panics
/// If `y` or `sample_weight` does not have one entry per row, a label is not below
/// `n_classes`, a weight is negative or not finite, or `x` has more than `u32::MAX` rows.
pub fn fit_classifier(
    x: &BinnedMatrix,
    y: &[u32],
    n_classes: usize,
    sample_weight: Option<&[f64]>,
    params: &ForestParams,
) -> ClassifierForest {
    assert_eq!(y.len(), x.n_rows, "fit_classifier: {} labels for {} rows", y.len(), x.n_rows);
    if let Some(bad) = y.iter().find(|&&label| label as usize >= n_classes) {
        panic!("fit_classifier: label {bad} is not below n_classes = {n_classes}");
    }
    let criterion = Gini { y, n_classes };
    let trees = grow_forest(x, &criterion, sample_weight, params);
    ClassifierForest {
        importances: mean_decrease_in_impurity(&trees, x.n_cols),
        trees,
        n_classes,
        n_features: x.n_cols,
    }
}

/// Fits a squared-error random forest to targets `y` (one per row of `x`); see
/// [`fit_classifier`] for weights and degenerate inputs.
///
/// # Panics
/// If `y` or `sample_weight` does not have one entry per row, a weight is negative or
/// not finite, or `x` has more than `u32::MAX` rows.
pub fn fit_regressor(
    x: &BinnedMatrix,
    y: &[f64],
    sample_weight: Option<&[f64]>,
    params: &ForestParams,
) -> RegressorForest {
    assert_eq!(y.len(), x.n_rows, "fit_regressor: {} targets for {} rows", y.len(), x.n_rows);
    let trees = grow_forest(x, &SquaredError { y }, sample_weight, params);
    RegressorForest { importances: mean_decrease_in_impurity(&trees, x.n_cols), trees, n_features: x.n_cols }
}

impl ClassifierForest {
    /// Number of classes the forest predicts probabilities for.
    pub fn n_classes(&self) -> usize {
        self.n_classes
    }

    /// Class probabilities, row-major `x.n_rows() x n_classes()`: the mean over trees of
    /// the class frequencies in the leaf each row reaches. A forest without trees
    /// predicts the uniform distribution.
    ///
    /// # Panics
    /// If `x` does not have the columns the forest was fit on.
    pub fn predict_proba(&self, x: &BinnedMatrix) -> Vec<f64> {
        check_columns(x, self.n_features);
        let width = self.n_classes;
        if self.trees.is_empty() {
            return vec![1.0 / width as f64; x.n_rows * width];
        }
        let mut proba = sum_over_trees(&self.trees, x, width);
        let n_trees = self.trees.len() as f64;
        proba.iter_mut().for_each(|p| *p /= n_trees);
        proba
    }

    /// Most probable class of each row; ties go to the lowest class index (class 0 when
    /// the forest has no classes).
    ///
    /// # Panics
    /// If `x` does not have the columns the forest was fit on.
    pub fn predict(&self, x: &BinnedMatrix) -> Vec<u32> {
        if self.n_classes == 0 {
            check_columns(x, self.n_features);
            return vec![0; x.n_rows];
        }
        self.predict_proba(x)
            .chunks_exact(self.n_classes)
            .map(|row| {
                let mut best = 0;
                for (class, &p) in row.iter().enumerate() {
                    if p > row[best] {
                        best = class;
                    }
                }
                best as u32
            })
            .collect()
    }

    /// Mean decrease in Gini impurity per feature (scikit-learn's `feature_importances_`),
    /// summing to 1, or all zeros when no tree ever split.
    pub fn feature_importances(&self) -> &[f64] {
        &self.importances
    }

    /// Drop in accuracy on `(x, y)` when one column's bins are shuffled, per feature,
    /// over `n_repeats` shuffles (at least one) seeded by `seed`. Use held-out rows.
    ///
    /// # Panics
    /// If `y` does not have one label per row or `x` does not have the forest's columns.
    pub fn permutation_importance(
        &self,
        x: &BinnedMatrix,
        y: &[u32],
        n_repeats: usize,
        seed: u64,
    ) -> PermutationImportance {
        assert_eq!(y.len(), x.n_rows, "permutation_importance: {} labels for {} rows", y.len(), x.n_rows);
        permutation_importance(x, n_repeats, seed, |x| {
            let correct = self.predict(x).iter().zip(y).filter(|(p, y)| p == y).count();
            mean_or_zero(correct as f64, y.len())
        })
    }
}

impl RegressorForest {
    /// Mean over trees of the weighted mean target in the leaf each row reaches; 0 for
    /// every row when the forest has no trees.
    ///
    /// # Panics
    /// If `x` does not have the columns the forest was fit on.
    pub fn predict(&self, x: &BinnedMatrix) -> Vec<f64> {
        check_columns(x, self.n_features);
        let mut prediction = sum_over_trees(&self.trees, x, 1);
        if !self.trees.is_empty() {
            let n_trees = self.trees.len() as f64;
            prediction.iter_mut().for_each(|p| *p /= n_trees);
        }
        prediction
    }

    /// Mean decrease in squared error per feature (scikit-learn's `feature_importances_`),
    /// summing to 1, or all zeros when no tree ever split.
    pub fn feature_importances(&self) -> &[f64] {
        &self.importances
    }

    /// Rise in mean squared error on `(x, y)` when one column's bins are shuffled, per
    /// feature, over `n_repeats` shuffles (at least one) seeded by `seed`.
    ///
    /// # Panics
    /// If `y` does not have one target per row or `x` does not have the forest's columns.
    pub fn permutation_importance(
        &self,
        x: &BinnedMatrix,
        y: &[f64],
        n_repeats: usize,
        seed: u64,
    ) -> PermutationImportance {
        assert_eq!(y.len(), x.n_rows, "permutation_importance: {} targets for {} rows", y.len(), x.n_rows);
        permutation_importance(x, n_repeats, seed, |x| {
            let squared: f64 = self.predict(x).iter().zip(y).map(|(p, y)| (p - y) * (p - y)).sum();
            -mean_or_zero(squared, y.len())
        })
    }
}

fn check_columns(x: &BinnedMatrix, n_features: usize) {
    assert_eq!(x.n_cols, n_features, "the forest was fit on {n_features} columns, the matrix has {}", x.n_cols);
}

fn mean_or_zero(total: f64, n: usize) -> f64 {
    if n == 0 { 0.0 } else { total / n as f64 }
}

/// Scores `x` once as is, then `n_repeats` times per column with that column shuffled.
/// Each column has its own seeded RNG, so the result does not depend on scheduling.
fn permutation_importance(
    x: &BinnedMatrix,
    n_repeats: usize,
    seed: u64,
    score: impl Fn(&BinnedMatrix) -> f64 + Sync,
) -> PermutationImportance {
    let n_repeats = n_repeats.max(1);
    let baseline = score(x);
    let (mean, std) = (0..x.n_cols)
        .into_par_iter()
        .map(|j| {
            let mut rng = ChaCha8Rng::seed_from_u64(mix(seed, j as u64));
            let mut shuffled = x.clone();
            let drops: Vec<f64> = (0..n_repeats)
                .map(|_| {
                    shuffled.column_mut(j).shuffle(&mut rng);
                    baseline - score(&shuffled)
                })
                .collect();
            let mean = drops.iter().sum::<f64>() / n_repeats as f64;
            let variance = drops.iter().map(|d| (d - mean) * (d - mean)).sum::<f64>() / n_repeats as f64;
            (mean, variance.sqrt())
        })
        .unzip();
    PermutationImportance { baseline, mean, std }
}

/// Sums each row's leaf outputs over all trees, in tree order, into a row-major
/// `n_rows x width` matrix.
fn sum_over_trees(trees: &[Tree], x: &BinnedMatrix, width: usize) -> Vec<f64> {
    let mut sums = vec![0.0; x.n_rows * width];
    if width == 0 {
        return sums;
    }
    // Up to `PREDICT_CHUNK` rows per item, fewer when that leaves threads idle. Each row
    // sums its trees in tree order whatever its item, so the sums do not depend on this.
    let per_thread = x.n_rows.div_ceil(4 * rayon::current_num_threads());
    let chunk_rows = per_thread.next_multiple_of(PREDICT_GROUP).clamp(PREDICT_GROUP, PREDICT_CHUNK);
    sums.par_chunks_mut(chunk_rows * width).enumerate().for_each(|(chunk, block)| {
        let rows = chunk * chunk_rows..chunk * chunk_rows + block.len() / width;
        let mut row_major = vec![0; rows.len() * x.n_cols];
        for j in 0..x.n_cols {
            for (i, &bin) in x.column(j)[rows.clone()].iter().enumerate() {
                row_major[i * x.n_cols + j] = bin;
            }
        }
        let n_cols = x.n_cols;
        for tree in trees {
            // Rows go down the tree in groups, one level per step for the whole group:
            // their paths are independent, so the CPU overlaps them instead of waiting
            // on each node load and mispredicted branch in turn.
            for (group, group_sums) in block.chunks_mut(PREDICT_GROUP * width).enumerate() {
                let n = group_sums.len() / width;
                let rows = &row_major[group * PREDICT_GROUP * n_cols..][..n * n_cols];
                let mut at = [0u32; PREDICT_GROUP];
                let mut outputs = [0u32; PREDICT_GROUP];
                let mut active = (1u32 << n) - 1;
                while active != 0 {
                    for lane in 0..n {
                        if active & (1 << lane) == 0 {
                            continue;
                        }
                        let row = &rows[lane * n_cols..][..n_cols];
                        match tree.nodes[at[lane] as usize].view() {
                            NodeView::Split { feature, threshold, missing_left, left, right } => {
                                let bin = row[feature as usize];
                                at[lane] = if goes_left(bin, threshold, missing_left) { left } else { right };
                            }
                            NodeView::Leaf { output } => {
                                outputs[lane] = output;
                                active &= !(1 << lane);
                            }
                        }
                    }
                }
                for (row_sums, &output) in group_sums.chunks_exact_mut(width).zip(&outputs) {
                    let leaf = &tree.outputs[output as usize..][..width];
                    row_sums.iter_mut().zip(leaf).for_each(|(sum, v)| *sum += v);
                }
            }
        }
    });
    sums
}

/// scikit-learn's forest `feature_importances_`: each tree's total impurity decrease per
/// feature normalised to sum 1, averaged over the trees that split at all, normalised.
fn mean_decrease_in_impurity(trees: &[Tree], n_features: usize) -> Vec<f64> {
    let mut importances = vec![0.0; n_features];
    for tree in trees.iter().filter(|tree| tree.nodes.len() > 1) {
        let total: f64 = tree.importances.iter().sum();
        if total > 0.0 {
            for (sum, decrease) in importances.iter_mut().zip(&tree.importances) {
                *sum += decrease / total;
            }
        }
    }
    let total: f64 = importances.iter().sum();
    if total > 0.0 {
        importances.iter_mut().for_each(|v| *v /= total);
    }
    importances
}

/// splitmix64's finaliser: a cheap bijective mix of 64 bits.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Seed of the stream numbered `index` under `seed` (a tree, a permuted column).
fn mix(seed: u64, index: u64) -> u64 {
    splitmix64(seed ^ splitmix64(index))
}

/// One in-bag row as a tree sees it. Samples sit in a buffer parallel to the row
/// indices and are partitioned with them, so a node reads its samples sequentially.
#[derive(Debug, Clone, Copy)]
struct Sample<T> {
    weight: f64,
    target: T,
}

/// What a tree learns and how it measures impurity. A node's statistics are `stride`
/// f64 slots; slot 0 is always the total weight.
trait Criterion: Sync {
    /// What a tree learns per row: a class index or a number.
    type Target: Copy + Send;
    /// Whether slot 0 (the weight) is the sum of the other slots, so that histograms
    /// need not accumulate it.
    const WEIGHT_IS_SUM: bool;
    fn stride(&self) -> usize;
    fn target(&self, row: usize) -> Self::Target;
    /// Besides its weight, which goes to slot 0, a sample adds one value to one other
    /// slot: returns that slot (at least 1) and value.
    fn slot_value(&self, sample: Sample<Self::Target>) -> (usize, f64);
    /// Impurity of the node holding `samples`, whose statistics are `totals`.
    fn impurity(&self, samples: &[Sample<Self::Target>], totals: &[f64]) -> f64;
    /// The incremental split scorer of this criterion.
    type Scan: Scan<Target = Self::Target>;
    fn scan(&self) -> Self::Scan;
    /// Appends the prediction of a leaf with statistics `totals`.
    fn leaf_output(&self, totals: &[f64], out: &mut Vec<f64>);
    /// The highest split score any split of a node with statistics `totals` can reach,
    /// computed exactly when weights are integers, if the criterion knows it cheaply.
    fn best_possible_score(&self, totals: &[f64]) -> Option<f64>;
}

/// Gini impurity over `n_classes` classes; slots are `[weight, weight of class 0, ...]`.
struct Gini<'a> {
    y: &'a [u32],
    n_classes: usize,
}

impl Criterion for Gini<'_> {
    type Target = u32;
    const WEIGHT_IS_SUM: bool = true;

    fn stride(&self) -> usize {
        1 + self.n_classes
    }

    fn target(&self, row: usize) -> u32 {
        self.y[row]
    }

    fn slot_value(&self, sample: Sample<u32>) -> (usize, f64) {
        (1 + sample.target as usize, sample.weight)
    }

    fn impurity(&self, _samples: &[Sample<u32>], totals: &[f64]) -> f64 {
        let weight = totals[0];
        if weight <= 0.0 {
            return 0.0;
        }
        1.0 - totals[1..].iter().map(|c| (c / weight) * (c / weight)).sum::<f64>()
    }

    type Scan = GiniScan;

    fn scan(&self) -> GiniScan {
        let slots = vec![0.0; 1 + self.n_classes];
        GiniScan {
            node: slots.clone(),
            observed: slots.clone(),
            missing: slots.clone(),
            left: slots,
            ..GiniScan::default()
        }
    }

    fn leaf_output(&self, totals: &[f64], out: &mut Vec<f64>) {
        let weight = totals[0];
        if weight > 0.0 {
            out.extend(totals[1..].iter().map(|c| c / weight));
        } else {
            out.extend(std::iter::repeat_n(1.0 / self.n_classes as f64, self.n_classes));
        }
    }

    /// A child's `sum w_c^2 / w` is at most `w` (a sum of squares is at most the square
    /// of the sum), with equality only when the child is pure: no split scores more
    /// than the node's weight, which a split into pure children reaches.
    fn best_possible_score(&self, totals: &[f64]) -> Option<f64> {
        Some(totals[0])
    }
}

/// Squared error; slots are `[weight, weighted sum of targets]`.
struct SquaredError<'a> {
    y: &'a [f64],
}

impl Criterion for SquaredError<'_> {
    type Target = f64;
    const WEIGHT_IS_SUM: bool = false;

    fn stride(&self) -> usize {
        2
    }

    fn target(&self, row: usize) -> f64 {
        self.y[row]
    }

    fn slot_value(&self, sample: Sample<f64>) -> (usize, f64) {
        (1, sample.weight * sample.target)
    }

    /// Weighted variance around the mean. Computed in two passes rather than scikit-learn's
    /// `E[y^2] - E[y]^2`, whose cancellation can leave a constant node looking impure.
    fn impurity(&self, samples: &[Sample<f64>], totals: &[f64]) -> f64 {
        let weight = totals[0];
        if weight <= 0.0 {
            return 0.0;
        }
        let mean = totals[1] / weight;
        let squared: f64 = samples.iter().map(|s| s.weight * (s.target - mean) * (s.target - mean)).sum();
        squared / weight
    }

    type Scan = SquaredErrorScan;

    fn scan(&self) -> SquaredErrorScan {
        SquaredErrorScan::default()
    }

    fn leaf_output(&self, totals: &[f64], out: &mut Vec<f64>) {
        out.push(if totals[0] > 0.0 { totals[1] / totals[0] } else { 0.0 });
    }

    fn best_possible_score(&self, _totals: &[f64]) -> Option<f64> {
        None
    }
}

/// Scores the splits of one feature incrementally: rows (or whole bins) move to the left
/// child in increasing bin order, and after each bin the split "this bin and those
/// before it go left" is scored in O(1), with missing values on either side.
///
/// A score is the criterion's `proxy_impurity_improvement` (scikit-learn's name) up to
/// a constant: the highest has the lowest weighted child impurity. Splits that leave a
/// child empty get a meaningless score; the caller skips them.
trait Scan: Default {
    type Target: Copy;
    /// The running sums of a scan that change with every row, kept apart from the rest
    /// so that they can live in registers.
    type Sums: Copy;
    /// Prepares scans of a node with statistics `node`.
    fn start_node(&mut self, node: &[f64]);
    /// Starts a scan of one feature, whose missing values (if any) have statistics
    /// `missing`; nothing is left yet.
    fn start(&mut self, missing: Option<&[f64]>) -> Self::Sums;
    /// Moves the rows of one bin, of total weight `weight` and slots 1.. `slots`, to
    /// the left.
    fn add_stats(&mut self, sums: &mut Self::Sums, weight: f64, slots: &[f64]);
    /// Score of the current split with missing values right.
    fn missing_right(&self, sums: &Self::Sums) -> Score;
    /// Score of the current split with missing values left.
    fn missing_left(&self, sums: &Self::Sums) -> Score;
    /// Writes the statistics of the left child so far (missing values excluded) to `out`.
    fn left(&self, sums: &Self::Sums, out: &mut Vec<f64>);
}

/// A split score as the quotient it is computed as, so that a split which cannot beat
/// the best so far is told without the division. perf had a fifth of the scan's samples
/// waiting on the division; without it the scan's share of a 100k diagnose went from
/// 22.2% to 21.0% (the other dependency chains take up most of the wait).
#[derive(Clone, Copy)]
struct Score {
    num: f64,
    den: f64,
}

impl Score {
    /// `num / den` if that quotient, rounded as f64 division rounds it, is above `best`.
    ///
    /// Exact: the quotient is only skipped when `best > 0`, `den > 0` and `num < best *
    /// den * (1 - 1e-12)` in floating point, which bounds the true quotient below
    /// `best * (1 - 1e-12) * (1 + ε)^2 < best * (1 - 1e-13)`; division's rounding (at
    /// most a factor 1 + ε) cannot lift that to `best`. Otherwise (and for NaN) the
    /// quotient is computed and compared as it always was.
    #[inline(always)]
    fn above(self, best: f64) -> Option<f64> {
        if best > 0.0 && self.den > 0.0 && self.num < best * self.den * (1.0 - 1e-12) {
            return None;
        }
        let score = self.num / self.den;
        (score > best).then_some(score)
    }
}

/// `sum_k left_k^2 / w_left + sum_k right_k^2 / w_right`, over one division.
fn gini_score(left_squares: f64, w_left: f64, right_squares: f64, w_right: f64) -> Score {
    Score { num: left_squares * w_right + right_squares * w_left, den: w_left * w_right }
}

/// [`Scan`] for [`Gini`]. With `l`, `o`, `m` the per-class weights of the left child,
/// the observed rows and the missing rows, both children's sums of squared class
/// weights follow from `sum l^2`, `sum l*o` and `sum l*m`, each updated in O(1) per row.
/// With integer weights every sum is an exact integer, so scores do not depend on the
/// order rows are added in.
#[derive(Default)]
struct GiniScan {
    /// `[weight, weight of class 0, ...]` of the node, the observed rows and the
    /// missing rows; the left child's class weights (slot 0 unused).
    node: Vec<f64>,
    observed: Vec<f64>,
    missing: Vec<f64>,
    left: Vec<f64>,
    has_missing: bool,
    /// `sum (o+m)^2` (the node's), `sum o^2`, `sum m^2`.
    node_squares: f64,
    observed_squares: f64,
    missing_squares: f64,
}

/// [`Scan::Sums`] of [`GiniScan`]: the left weight, `sum l^2`, `sum l*o`, `sum l*m`.
#[derive(Clone, Copy, Default)]
struct GiniSums {
    weight: f64,
    squares: f64,
    observed: f64,
    missing: f64,
}

impl GiniScan {
    #[inline(always)]
    fn add_class(&mut self, sums: &mut GiniSums, class: usize, weight: f64) {
        let left = &mut self.left[1 + class];
        sums.squares += weight * (2.0 * *left + weight);
        sums.observed += weight * self.observed[1 + class];
        if self.has_missing {
            sums.missing += weight * self.missing[1 + class];
        }
        *left += weight;
    }
}

fn squares(slots: &[f64]) -> f64 {
    slots.iter().map(|c| c * c).sum()
}

impl Scan for GiniScan {
    type Target = u32;
    type Sums = GiniSums;

    fn start_node(&mut self, node: &[f64]) {
        self.node.clone_from_slice(node);
        self.node_squares = squares(&node[1..]);
    }

    #[inline(always)]
    fn start(&mut self, missing: Option<&[f64]>) -> GiniSums {
        self.left.fill(0.0);
        self.has_missing = missing.is_some();
        match missing {
            None => {
                self.observed.copy_from_slice(&self.node);
                self.observed_squares = self.node_squares;
                self.missing_squares = 0.0;
                self.missing.fill(0.0);
            }
            Some(missing) => {
                self.missing.copy_from_slice(missing);
                self.observed.iter_mut().zip(&self.node).zip(missing).for_each(|((o, n), m)| *o = n - m);
                self.observed_squares = squares(&self.observed[1..]);
                self.missing_squares = squares(&missing[1..]);
            }
        }
        GiniSums::default()
    }

    #[inline(always)]
    fn add_stats(&mut self, sums: &mut GiniSums, weight: f64, slots: &[f64]) {
        // The bin's terms are summed apart and added once, so that consecutive bins do
        // not wait on each other class by class. With integer weights every term and sum
        // is an exact integer, so the grouping does not change a bit of the result.
        let mut bin = GiniSums { weight, ..GiniSums::default() };
        for (class, &weight) in slots.iter().enumerate() {
            self.add_class(&mut bin, class, weight);
        }
        sums.weight += bin.weight;
        sums.squares += bin.squares;
        sums.observed += bin.observed;
        sums.missing += bin.missing;
    }

    #[inline(always)]
    fn missing_right(&self, sums: &GiniSums) -> Score {
        // The right child has `o + m - l`.
        let right_squares = self.node_squares - 2.0 * (sums.observed + sums.missing) + sums.squares;
        gini_score(sums.squares, sums.weight, right_squares, self.node[0] - sums.weight)
    }

    #[inline(always)]
    fn missing_left(&self, sums: &GiniSums) -> Score {
        // The children have `l + m` and `o - l`.
        let left_squares = sums.squares + 2.0 * sums.missing + self.missing_squares;
        let right_squares = self.observed_squares - 2.0 * sums.observed + sums.squares;
        gini_score(left_squares, sums.weight + self.missing[0], right_squares, self.observed[0] - sums.weight)
    }

    fn left(&self, sums: &GiniSums, out: &mut Vec<f64>) {
        out.clone_from(&self.left);
        out[0] = sums.weight;
    }
}

/// [`Scan`] for [`SquaredError`]: sums of weights and weighted targets, `[weight,
/// weighted sum]` for the node, the observed rows and the missing rows; the left
/// child's are the [`Scan::Sums`].
#[derive(Default)]
struct SquaredErrorScan {
    node: [f64; 2],
    observed: [f64; 2],
    missing: [f64; 2],
}

/// `sum_left^2 / w_left + sum_right^2 / w_right`, over one division.
fn squared_error_score([w_left, sum_left]: [f64; 2], [w_right, sum_right]: [f64; 2]) -> Score {
    Score { num: sum_left * sum_left * w_right + sum_right * sum_right * w_left, den: w_left * w_right }
}

impl Scan for SquaredErrorScan {
    type Target = f64;
    type Sums = [f64; 2];

    fn start_node(&mut self, node: &[f64]) {
        self.node = [node[0], node[1]];
    }

    #[inline(always)]
    fn start(&mut self, missing: Option<&[f64]>) -> [f64; 2] {
        self.missing = missing.map_or([0.0; 2], |m| [m[0], m[1]]);
        self.observed = [self.node[0] - self.missing[0], self.node[1] - self.missing[1]];
        [0.0; 2]
    }

    #[inline(always)]
    fn add_stats(&mut self, sums: &mut [f64; 2], weight: f64, slots: &[f64]) {
        sums[0] += weight;
        sums[1] += slots[0];
    }

    #[inline(always)]
    fn missing_right(&self, &[w_left, sum_left]: &[f64; 2]) -> Score {
        squared_error_score([w_left, sum_left], [self.node[0] - w_left, self.node[1] - sum_left])
    }

    #[inline(always)]
    fn missing_left(&self, &[w_left, sum_left]: &[f64; 2]) -> Score {
        let [w_missing, sum_missing] = self.missing;
        let [w_observed, sum_observed] = self.observed;
        squared_error_score(
            [w_left + w_missing, sum_left + sum_missing],
            [w_observed - w_left, sum_observed - sum_left],
        )
    }

    fn left(&self, sums: &[f64; 2], out: &mut Vec<f64>) {
        out.clear();
        out.extend_from_slice(sums);
    }
}

/// One fitted tree, nodes in creation order with the root first.
#[derive(Debug, Clone)]
struct Tree {
    nodes: Vec<Node>,
    /// Leaf outputs, `width` values per leaf.
    outputs: Vec<f64>,
    /// Unnormalised impurity decrease per feature.
    importances: Vec<f64>,
}

/// A tree node in 8 bytes, so that prediction walks half the memory. `link` is a
/// split's left child, its right child being the next node, or a leaf's output offset;
/// `word` packs a split's feature (bits 0-21), threshold (22-29) and missing-left flag
/// (30); bit 31 marks a leaf.
#[derive(Debug, Clone, Copy)]
struct Node {
    link: u32,
    word: u32,
}

/// Features a tree can split on: a node keeps 22 bits of feature index.
const MAX_TREE_FEATURES: usize = 1 << 22;
const LEAF_BIT: u32 = 1 << 31;
const MISSING_LEFT_BIT: u32 = 1 << 30;
const THRESHOLD_SHIFT: u32 = 22;

/// What a [`Node`] holds.
#[derive(Debug, Clone, Copy)]
enum NodeView {
    Split {
        feature: u32,
        /// Observed bins `<= threshold` go left.
        threshold: u8,
        /// Where [`MISSING_BIN`] goes.
        missing_left: bool,
        left: u32,
        right: u32,
    },
    Leaf {
        /// Offset of the leaf's outputs in `Tree::outputs`.
        output: u32,
    },
}

impl Node {
    fn leaf(output: u32) -> Node {
        Node { link: output, word: LEAF_BIT }
    }

    /// A split whose children are nodes `left` and `left + 1`.
    fn split(feature: usize, threshold: u8, missing_left: bool, left: u32) -> Node {
        debug_assert!(feature < MAX_TREE_FEATURES);
        let flag = if missing_left { MISSING_LEFT_BIT } else { 0 };
        Node { link: left, word: feature as u32 | u32::from(threshold) << THRESHOLD_SHIFT | flag }
    }

    #[inline(always)]
    fn view(self) -> NodeView {
        if self.word & LEAF_BIT != 0 {
            NodeView::Leaf { output: self.link }
        } else {
            NodeView::Split {
                feature: self.word & (MAX_TREE_FEATURES as u32 - 1),
                threshold: (self.word >> THRESHOLD_SHIFT) as u8,
                missing_left: self.word & MISSING_LEFT_BIT != 0,
                left: self.link,
                right: self.link + 1,
            }
        }
    }
}

#[inline]
fn goes_left(bin: u8, threshold: u8, missing_left: bool) -> bool {
    if bin == MISSING_BIN { missing_left } else { bin <= threshold }
}

impl Tree {
    /// Outputs of the leaf a row with bins `bins` falls in.
    #[cfg(test)]
    fn leaf(&self, bins: &[u8], width: usize) -> &[f64] {
        let mut node = 0;
        loop {
            match self.nodes[node].view() {
                NodeView::Leaf { output } => {
                    let start = output as usize;
                    return &self.outputs[start..start + width];
                }
                NodeView::Split { feature, threshold, missing_left, left, right } => {
                    let bin = bins[feature as usize];
                    node = if goes_left(bin, threshold, missing_left) { left } else { right } as usize;
                }
            }
        }
    }
}

/// [`ForestParams`] with scikit-learn's lower bounds applied and features resolved.
struct Limits {
    max_features: usize,
    min_samples_leaf: usize,
    min_samples_split: usize,
    max_depth: usize,
    /// Whether histograms count rows: needed for `min_samples_leaf > 1`, and when weights
    /// are not integers, whose sums are then not exact (a bin emptied by subtraction
    /// must be told apart from rounding residue).
    counts: bool,
    /// Whether every row weight is an integer, so that node statistics and split scores
    /// are exact.
    integer_weights: bool,
}

fn grow_forest<C: Criterion>(
    x: &BinnedMatrix,
    criterion: &C,
    sample_weight: Option<&[f64]>,
    params: &ForestParams,
) -> Vec<Tree> {
    grow_forest_marked(x, criterion, sample_weight, params, true)
}

/// [`grow_forest`]; `premark` says whether the trees start knowing the columns that
/// are constant over all of `x` (always, but in the test that this changes nothing).
fn grow_forest_marked<C: Criterion>(
    x: &BinnedMatrix,
    criterion: &C,
    sample_weight: Option<&[f64]>,
    params: &ForestParams,
    premark: bool,
) -> Vec<Tree> {
    assert!(u32::try_from(x.n_rows).is_ok(), "a forest takes at most u32::MAX rows, got {}", x.n_rows);
    assert!(x.n_cols <= MAX_TREE_FEATURES, "a forest takes at most {MAX_TREE_FEATURES} features, got {}", x.n_cols);
    if let Some(weights) = sample_weight {
        assert_eq!(weights.len(), x.n_rows, "{} sample weights for {} rows", weights.len(), x.n_rows);
        if let Some(bad) = weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
            panic!("sample weights must be finite and non-negative, got {bad}");
        }
    }
    let integer = integer_weights(sample_weight, params.bootstrap);
    let limits = Limits {
        max_features: params.max_features.resolve(x.n_cols),
        min_samples_leaf: params.min_samples_leaf.max(1),
        min_samples_split: params.min_samples_split.max(2),
        max_depth: params.max_depth.unwrap_or(usize::MAX),
        counts: params.min_samples_leaf > 1 || !integer,
        integer_weights: integer,
    };
    let mut layout = Layout::new(x, criterion.stride());
    if !premark {
        layout.constant.fill(0);
    }
    // Each rayon job reuses one set of histogram stores from tree to tree: fresh
    // ones (features x bins x slots, up to megabytes) cost more page faults than
    // small trees cost to grow. Stores are zeroed before reuse, so a tree never
    // depends on which job grew the tree before it.
    (0..params.n_trees)
        .into_par_iter()
        .map_init(
            || None::<Stores>,
            |cache, index| {
                let mut rng = ChaCha8Rng::seed_from_u64(mix(params.seed, index as u64));
                let weights = row_weights(x.n_rows, sample_weight, params.bootstrap, &mut rng);
                let stores = match cache.take() {
                    Some(mut stores) => {
                        stores.reset(&layout);
                        stores
                    }
                    None => Stores::new(&layout),
                };
                let (tree, stores) = Grower::new(x, criterion, &limits, &layout, &weights, rng, stores).grow();
                *cache = Some(stores);
                tree
            },
        )
        .collect()
}

/// Whether every row weight of every tree is an integer and their sums are exact: with
/// bootstrap (weights count draws) or without sample weights, or sample weights that
/// are small integers.
fn integer_weights(sample_weight: Option<&[f64]>, bootstrap: bool) -> bool {
    match sample_weight {
        Some(weights) if !bootstrap => {
            weights.iter().all(|w| w.fract() == 0.0) && weights.iter().sum::<f64>() < (1u64 << 52) as f64
        }
        _ => true,
    }
}

/// The histogram stores one tree's growth needs, reusable by the next tree.
struct Stores {
    hist: HistStore,
    parent_hist: HistStore,
    /// One histogram of the widest feature, reused feature after feature by the nodes
    /// that keep none.
    work: Vec<f64>,
}

impl Stores {
    fn new(layout: &Layout) -> Stores {
        Stores {
            hist: HistStore::new(layout),
            parent_hist: HistStore::new(layout),
            work: vec![0.0; layout.max_cells()],
        }
    }

    /// Zeroes every histogram a previous tree built (`work` is zeroed after each use).
    fn reset(&mut self, layout: &Layout) {
        self.hist.clear(layout);
        self.parent_hist.clear(layout);
    }
}

/// Each row's weight in one tree; 0 keeps the row out of it. A bootstrap sample is n
/// draws with replacement (proportional to `sample_weight` if given, as in
/// scikit-learn 1.9) and a row weighs the number of times it was drawn.
fn row_weights(n_rows: usize, sample_weight: Option<&[f64]>, bootstrap: bool, rng: &mut ChaCha8Rng) -> Vec<f64> {
    match (bootstrap, sample_weight) {
        (false, Some(weights)) => weights.to_vec(),
        (false, None) => vec![1.0; n_rows],
        (true, None) => {
            let mut counts = vec![0.0; n_rows];
            for _ in 0..n_rows {
                counts[crate::seed::random_below(rng, 0, n_rows)] += 1.0;
            }
            counts
        }
        (true, Some(weights)) => {
            let cumulative: Vec<f64> = weights
                .iter()
                .scan(0.0, |sum, w| {
                    *sum += w;
                    Some(*sum)
                })
                .collect();
            let mut counts = vec![0.0; n_rows];
            // Rounding can make a draw land on the total; it then counts for the last
            // row of positive weight, not for a trailing row of weight 0.
            if let Some(last) = weights.iter().rposition(|&w| w > 0.0) {
                let total = cumulative[last];
                for _ in 0..n_rows {
                    let u = rng.random::<f64>() * total;
                    // The first row whose cumulative weight exceeds u, so never a row of
                    // weight 0.
                    let row = cumulative.partition_point(|&c| c <= u).min(last);
                    counts[row] += 1.0;
                }
            }
            counts
        }
    }
}

/// The best split of a node found so far.
#[derive(Debug, Clone, Copy)]
struct Split {
    feature: usize,
    threshold: u8,
    missing_left: bool,
    /// Whether the node has rows with a missing value of `feature`; if not,
    /// `missing_left` is settled once the rows are partitioned.
    missing_seen: bool,
    score: f64,
}

/// A node waiting to be grown: its rows are `Grower::rows[rows]`.
struct Task {
    rows: Range<usize>,
    depth: usize,
    node: usize,
    /// Feature the parent split on, whose importance this node's impurity is taken from.
    parent_feature: Option<usize>,
    /// Offset in `Grower::constant_sets` of the bitset of features known to be constant
    /// in this node (found so in an ancestor).
    constant: usize,
    /// For the larger child only: the smaller sibling's rows. The larger child is grown
    /// right after its parent, while the parent's histograms are still in
    /// `Grower::parent_hist`, so a shared feature costs a pass over the sibling only.
    sibling: Option<Range<usize>>,
}

/// Where each feature's histogram sits in a [`HistStore`]. A histogram has one bin per
/// bin code up to the largest the feature takes in the training matrix, then one for
/// missing values, and `width` cells per bin: the number of rows, then the criterion's
/// slots. A feature with few distinct values thus has a histogram of a few bins, cheap
/// to clear and to scan.
struct Layout {
    /// Cells per bin: 1 + the criterion's stride.
    width: usize,
    /// Per feature, the number of bins of its histogram (the missing bin included).
    n_bins: Vec<usize>,
    /// Per feature, the offset of its histogram's cells; the total comes last.
    offsets: Vec<usize>,
    /// The features constant over every row, which every tree's root starts from
    /// (see [`constant_columns`]).
    constant: Vec<u64>,
}

impl Layout {
    fn new(x: &BinnedMatrix, stride: usize) -> Layout {
        let width = 1 + stride;
        let n_bins: Vec<usize> = (0..x.n_cols)
            .map(|j| {
                x.column(j).iter().filter(|&&bin| bin != MISSING_BIN).max().map_or(0, |&max| usize::from(max) + 1) + 1
            })
            .collect();
        let offsets = std::iter::once(0)
            .chain(n_bins.iter().scan(0, |end, n| {
                *end += n * width;
                Some(*end)
            }))
            .collect();
        Layout { width, n_bins, offsets, constant: constant_columns(x) }
    }

    fn cells(&self, feature: usize) -> Range<usize> {
        self.offsets[feature]..self.offsets[feature + 1]
    }

    fn max_cells(&self) -> usize {
        self.n_bins.iter().max().map_or(0, |n| n * self.width)
    }
}

/// One histogram per feature, laid out by a [`Layout`], for the nodes whose children may
/// subtract from them; tracks which were built so that clearing touches only those.
struct HistStore {
    cells: Vec<f64>,
    built: Vec<bool>,
    built_list: Vec<usize>,
}

impl HistStore {
    fn new(layout: &Layout) -> HistStore {
        HistStore {
            cells: vec![0.0; layout.offsets[layout.n_bins.len()]],
            built: vec![false; layout.n_bins.len()],
            built_list: Vec::new(),
        }
    }

    /// Zeroes every histogram built since the last clear.
    fn clear(&mut self, layout: &Layout) {
        while let Some(feature) = self.built_list.pop() {
            self.built[feature] = false;
            self.cells[layout.cells(feature)].fill(0.0);
        }
    }

    /// The (cleared) histogram of `feature`, marked built.
    fn take(&mut self, layout: &Layout, feature: usize) -> &mut [f64] {
        self.built[feature] = true;
        self.built_list.push(feature);
        &mut self.cells[layout.cells(feature)]
    }
}

/// Calls `$f::<C, W>(args)` with the cell width `W` as a constant when it is small (0
/// otherwise, for "read it at run time"), so that per-bin loops are unrolled and keep
/// their sums in registers.
macro_rules! with_width {
    ($width:expr, $f:ident::<$c:ty>($($arg:expr),* $(,)?)) => {
        match $width {
            3 => $f::<$c, 3>($($arg),*),
            4 => $f::<$c, 4>($($arg),*),
            5 => $f::<$c, 5>($($arg),*),
            6 => $f::<$c, 6>($($arg),*),
            7 => $f::<$c, 7>($($arg),*),
            8 => $f::<$c, 8>($($arg),*),
            9 => $f::<$c, 9>($($arg),*),
            _ => $f::<$c, 0>($($arg),*),
        }
    };
}

/// Adds one sample to the cells of its bin.
#[inline(always)]
fn add_to_cell<C: Criterion>(criterion: &C, cell: &mut [f64], sample: Sample<C::Target>, count: bool) {
    let (slot, value) = criterion.slot_value(sample);
    if count {
        cell[0] += 1.0;
    }
    if !C::WEIGHT_IS_SUM {
        cell[1] += sample.weight;
    }
    cell[1 + slot] += value;
}

/// Adds `samples`, whose rows are `rows`, to the (cleared) histogram `cells` over the
/// bins of `column`.
fn build_hist<C: Criterion, const W: usize>(
    criterion: &C,
    width: usize,
    counts: bool,
    cells: &mut [f64],
    column: &[u8],
    rows: &[u32],
    samples: &[Sample<C::Target>],
) {
    let width = if W == 0 { width } else { W };
    let missing = cells.len() / width - 1;
    let mut add = |count: bool| {
        for (&row, &sample) in rows.iter().zip(samples) {
            // Observed codes are below `missing`, MISSING_BIN is not.
            let bin = usize::from(column[row as usize]).min(missing);
            add_to_cell(criterion, &mut cells[bin * width..][..width], sample, count);
        }
    };
    // Counting rows costs a store per row that every row of a bin waits on; only
    // `min_samples_leaf` and non-integer weights need it.
    if counts { add(true) } else { add(false) }
}

/// [`build_hist`] that also marks, in `occupied`, the bins the rows fall in, so a
/// small node's scan visits those bins only (see [`scan_hist`]).
#[allow(clippy::too_many_arguments)]
fn build_sparse_hist<C: Criterion, const W: usize>(
    criterion: &C,
    width: usize,
    counts: bool,
    cells: &mut [f64],
    column: &[u8],
    rows: &[u32],
    samples: &[Sample<C::Target>],
    occupied: &mut [u64; N_BIN_CODES / 64],
) {
    let width = if W == 0 { width } else { W };
    let missing = cells.len() / width - 1;
    for (&row, &sample) in rows.iter().zip(samples) {
        let bin = usize::from(column[row as usize]).min(missing);
        occupied[bin / 64] |= 1 << (bin % 64);
        add_to_cell(criterion, &mut cells[bin * width..][..width], sample, counts);
    }
}

/// The weight of a histogram cell.
#[inline(always)]
fn cell_weight<C: Criterion>(cell: &[f64]) -> f64 {
    if C::WEIGHT_IS_SUM { cell[2..].iter().sum() } else { cell[1] }
}

/// Turns `cells`, the histogram of a node's smaller sibling, into the node's own: the
/// parent's histogram minus the sibling's.
fn subtract_hist<C: Criterion>(cells: &mut [f64], parent: &[f64], width: usize, counts: bool) {
    for (cell, parent) in cells.chunks_exact_mut(width).zip(parent.chunks_exact(width)) {
        let empty = if counts { parent[0] == cell[0] } else { cell_weight::<C>(parent) == cell_weight::<C>(cell) };
        if empty {
            // Exactly zero when the node has no row there, not a rounding residue.
            cell.fill(0.0);
        } else {
            cell.iter_mut().zip(parent).for_each(|(c, p)| *c = p - *c);
        }
    }
}

/// Buffers reused by every split scan of a tree.
struct Scratch {
    /// Statistics of the node's rows with a missing value.
    missing: Vec<f64>,
    /// Per missing-value direction, the left statistics of a feature's best split.
    left: [Vec<f64>; 2],
    /// Statistics of the best split's left child and of the node.
    best_left: Vec<f64>,
    best_total: Vec<f64>,
}

/// Grows one tree depth-first over buffers of in-bag row indices and their samples that
/// every split partitions in place, so a node's rows are always one contiguous range.
struct Grower<'a, C: Criterion> {
    x: &'a BinnedMatrix,
    criterion: &'a C,
    limits: &'a Limits,
    rng: ChaCha8Rng,
    rows: Vec<u32>,
    samples: Vec<Sample<C::Target>>,
    /// This node's histograms, per feature, when its children may subtract from them.
    hist: HistStore,
    /// The parent's, while its larger child is grown.
    parent_hist: HistStore,
    /// A single histogram, reused feature after feature by smaller nodes.
    work: Vec<f64>,
    layout: &'a Layout,
    feature_order: Vec<usize>,
    /// Arena of bitsets of constant features, one word per 64 features; see `Task`.
    constant_sets: Vec<u64>,
    scratch: Scratch,
    scan: C::Scan,
    /// Scratch space of `partition`.
    spare: Vec<(u32, Sample<C::Target>)>,
    totals: Vec<f64>,
    tree: Tree,
}

impl<'a, C: Criterion> Grower<'a, C> {
    fn new(
        x: &'a BinnedMatrix,
        criterion: &'a C,
        limits: &'a Limits,
        layout: &'a Layout,
        weights: &[f64],
        rng: ChaCha8Rng,
        stores: Stores,
    ) -> Self {
        let stride = criterion.stride();
        let rows: Vec<u32> = (0..x.n_rows as u32).filter(|&row| weights[row as usize] > 0.0).collect();
        let samples = rows
            .iter()
            .map(|&row| Sample { weight: weights[row as usize], target: criterion.target(row as usize) })
            .collect();
        Grower {
            x,
            criterion,
            limits,
            rng,
            rows,
            samples,
            hist: stores.hist,
            parent_hist: stores.parent_hist,
            work: stores.work,
            layout,
            feature_order: (0..x.n_cols).collect(),
            constant_sets: layout.constant.clone(),
            scratch: Scratch {
                missing: vec![0.0; stride],
                left: [Vec::with_capacity(stride), Vec::with_capacity(stride)],
                best_left: Vec::with_capacity(stride),
                best_total: vec![0.0; stride],
            },
            scan: criterion.scan(),
            spare: Vec::new(),
            totals: vec![0.0; stride],
            tree: Tree { nodes: vec![Node::leaf(0)], outputs: Vec::new(), importances: vec![0.0; x.n_cols] },
        }
    }

    /// Grows the tree; hands back the histogram stores for the next tree.
    fn grow(mut self) -> (Tree, Stores) {
        let mut stack = vec![Task {
            rows: 0..self.rows.len(),
            depth: 0,
            node: 0,
            parent_feature: None,
            constant: 0,
            sibling: None,
        }];
        // Statistics of the nodes on the stack, `stride` values each, in stack order.
        let mut stack_totals = Vec::new();
        node_totals(self.criterion, &self.samples, &mut self.totals);
        stack_totals.extend_from_slice(&self.totals);
        let stride = self.totals.len();
        while let Some(task) = stack.pop() {
            let at = stack_totals.len() - stride;
            self.totals.copy_from_slice(&stack_totals[at..]);
            stack_totals.truncate(at);
            self.grow_node(task, &mut stack, &mut stack_totals);
        }
        (self.tree, Stores { hist: self.hist, parent_hist: self.parent_hist, work: self.work })
    }

    /// Grows the node of `task`, whose statistics are in `self.totals`; pushes its
    /// children, if any, on `stack` and their statistics on `stack_totals`.
    fn grow_node(&mut self, mut task: Task, stack: &mut Vec<Task>, stack_totals: &mut Vec<f64>) {
        let samples = &self.samples[task.rows.clone()];
        if self.limits.counts {
            // Sums of non-integer weights depend on their order: sum the node's own.
            node_totals(self.criterion, samples, &mut self.totals);
        }
        let impurity = self.criterion.impurity(samples, &self.totals);
        let weighted_impurity = self.totals[0] * impurity;
        if let Some(feature) = task.parent_feature {
            self.tree.importances[feature] -= weighted_impurity;
        }

        let n = samples.len();
        let limits = self.limits;
        let may_split = n >= limits.min_samples_split
            && n >= 2 * limits.min_samples_leaf
            && task.depth < limits.max_depth
            && impurity > PURE;
        let split =
            if may_split { self.find_split(task.rows.clone(), task.sibling.clone(), &mut task.constant) } else { None };
        let Some(split) = split else {
            let output = self.tree.outputs.len() as u32;
            self.criterion.leaf_output(&self.totals, &mut self.tree.outputs);
            self.tree.nodes[task.node] = Node::leaf(output);
            return;
        };

        let n_left = partition(
            &mut self.rows[task.rows.clone()],
            &mut self.samples[task.rows.clone()],
            self.x.column(split.feature),
            &split,
            &mut self.spare,
        );
        // Without missing values in training, missing values at prediction time follow
        // the majority of the node's rows, as in scikit-learn.
        let missing_left = if split.missing_seen { split.missing_left } else { n_left > n - n_left };
        self.tree.importances[split.feature] += weighted_impurity;
        let left = self.tree.nodes.len();
        self.tree.nodes.extend([Node::leaf(0); 2]);
        self.tree.nodes[task.node] = Node::split(split.feature, split.threshold, missing_left, left as u32);

        let middle = task.rows.start + n_left;
        let mut children = [(task.rows.start..middle, left), (middle..task.rows.end, left + 1)];
        // Smaller child first on the stack, so the larger one is grown next and can
        // subtract the smaller one's histograms from this node's.
        children.sort_by_key(|(rows, _)| rows.len());
        let [(small_rows, small_node), (large_rows, large_node)] = children;
        // The children's statistics, exact since weights are integers (otherwise
        // recomputed by each child): the split's left sums, and the rest.
        let Scratch { best_left, best_total, .. } = &self.scratch;
        let right = best_total.iter().zip(best_left).map(|(t, l)| t - l);
        if small_node == left {
            stack_totals.extend_from_slice(best_left);
            stack_totals.extend(right);
        } else {
            stack_totals.extend(right);
            stack_totals.extend_from_slice(best_left);
        }
        stack.push(Task {
            rows: small_rows.clone(),
            depth: task.depth + 1,
            node: small_node,
            parent_feature: Some(split.feature),
            constant: task.constant,
            sibling: None,
        });
        stack.push(Task {
            rows: large_rows,
            depth: task.depth + 1,
            node: large_node,
            parent_feature: Some(split.feature),
            constant: task.constant,
            sibling: Some(small_rows),
        });
        std::mem::swap(&mut self.hist, &mut self.parent_hist);
    }

    /// Draws candidate features and returns the best split of the node holding
    /// `self.rows[rows]` over them, if any is valid. If it finds features constant in
    /// the node, it points `constant` to a new set that includes them, for the children.
    ///
    /// Candidates are drawn without replacement until `max_features` are visited and at
    /// least one of them is not constant in the node. Features known to be constant
    /// count as visited but cost nothing (scikit-learn's rule).
    fn find_split(&mut self, rows: Range<usize>, sibling: Option<Range<usize>>, constant: &mut usize) -> Option<Split> {
        let inherited = *constant;
        let node = (&self.rows[rows.clone()], &self.samples[rows]);
        let sibling = sibling.map(|range| (&self.rows[range.clone()], &self.samples[range]));
        let layout = self.layout;
        let width = layout.width;
        let counts = self.limits.counts;
        self.hist.clear(layout);
        self.scan.start_node(&self.totals);
        let keep = node.0.len() > 2 * N_BIN_CODES;
        let n_features = self.feature_order.len();
        let mut best: Option<Split> = None;
        // Once a split reaches the best possible score, later features can only tie it,
        // and ties keep the earlier feature: they are still drawn, which keeps the
        // random stream and the feature order those of a full search, but not scanned.
        let unbeatable =
            if self.limits.integer_weights { self.criterion.best_possible_score(&self.totals) } else { None };
        let mut drawn = 0;
        let mut varying = 0;
        while drawn < n_features && (drawn < self.limits.max_features || varying == 0) {
            let pick = crate::seed::random_below(&mut self.rng, drawn, n_features);
            self.feature_order.swap(drawn, pick);
            let feature = self.feature_order[drawn];
            drawn += 1;
            if let (Some(best), Some(unbeatable)) = (best, unbeatable)
                && best.score >= unbeatable
            {
                continue;
            }
            let (word, bit) = (feature / 64, 1 << (feature % 64));
            if self.constant_sets[*constant + word] & bit != 0 {
                continue;
            }
            let column = self.x.column(feature);
            let n_node = node.0.len();
            let min_leaf = self.limits.min_samples_leaf;
            let totals = &self.totals;
            let varies = if is_constant(column, node.0) {
                false
            } else if keep {
                // A node large enough for its children to subtract from keeps one
                // histogram per feature.
                let cells = self.hist.take(layout, feature);
                match sibling {
                    // Subtraction costs a pass over the sibling's rows and one over the
                    // parent's bins; it only pays when that is less than a pass over
                    // this node's rows.
                    Some((rows, samples))
                        if self.parent_hist.built[feature] && rows.len() + layout.n_bins[feature] < n_node =>
                    {
                        with_width!(
                            width,
                            build_hist::<C>(self.criterion, width, counts, cells, column, rows, samples)
                        );
                        subtract_hist::<C>(cells, &self.parent_hist.cells[layout.cells(feature)], width, counts);
                    }
                    _ => with_width!(
                        width,
                        build_hist::<C>(self.criterion, width, counts, cells, column, node.0, node.1)
                    ),
                }
                with_width!(
                    width,
                    scan_hist::<C>(
                        &mut self.scan,
                        counts,
                        None,
                        cells,
                        totals,
                        n_node,
                        feature,
                        min_leaf,
                        &mut self.scratch,
                        &mut best
                    )
                );
                true
            } else {
                // Smaller ones share one histogram, which stays in cache, and visit only
                // the bins their rows occupy (a node of 20 rows may spread over 200 bins).
                let cells = &mut self.work[..layout.n_bins[feature] * width];
                let mut occupied = [0u64; N_BIN_CODES / 64];
                with_width!(
                    width,
                    build_sparse_hist::<C>(self.criterion, width, counts, cells, column, node.0, node.1, &mut occupied)
                );
                with_width!(
                    width,
                    scan_hist::<C>(
                        &mut self.scan,
                        counts,
                        Some(&occupied),
                        cells,
                        totals,
                        n_node,
                        feature,
                        min_leaf,
                        &mut self.scratch,
                        &mut best
                    )
                );
                true
            };
            if varies {
                varying += 1;
            } else {
                if *constant == inherited {
                    // Sets are shared by the nodes below the one that made them, so
                    // copy before adding. The arena only grows, by one set per node at
                    // most, and dies with the tree.
                    *constant = self.constant_sets.len();
                    let words = self.x.n_cols.div_ceil(64);
                    self.constant_sets.extend_from_within(inherited..inherited + words);
                }
                self.constant_sets[*constant + word] |= bit;
            }
        }
        best
    }
}

/// The features whose every row has one bin, as a set of `Grower::constant_sets`: the
/// root of every tree starts from it. Such a feature is constant in every node, so a
/// node that draws it would find so and pass it over; marked once per forest, it costs
/// nothing when drawn, where each subtree would otherwise find it again with a pass
/// over its rows (the synthetic scale benchmark's matrices have many: about half of
/// their 113 columns are constant within a question type; ScienceQA's 6 of 141). The
/// draws are unchanged, so the trees are the same.
fn constant_columns(x: &BinnedMatrix) -> Vec<u64> {
    let mut set = vec![0; x.n_cols.div_ceil(64)];
    for j in 0..x.n_cols {
        if let Some((&first, rest)) = x.column(j).split_first()
            && rest.iter().all(|&bin| bin == first)
        {
            set[j / 64] |= 1 << (j % 64);
        }
    }
    set
}

/// Whether every row of the node has the same bin in `column`. Much cheaper than a
/// histogram, and deep nodes meet many such features.
fn is_constant(column: &[u8], rows: &[u32]) -> bool {
    let first = column[rows[0] as usize];
    // Eight rows per test: a varying feature usually shows it within the first few.
    let mut chunks = rows.chunks_exact(8);
    for chunk in &mut chunks {
        if chunk.iter().fold(0, |differ, &row| differ | (column[row as usize] ^ first)) != 0 {
            return false;
        }
    }
    chunks.remainder().iter().all(|&row| column[row as usize] == first)
}

/// The best split of one feature found so far in each missing-value direction, while a
/// [`Scan`] runs over its bins; see [`FeatureScan::finish`].
struct FeatureScan<'s> {
    min_leaf: usize,
    /// Rows of the node, and of those with a missing value.
    n_node: usize,
    n_missing: usize,
    /// Per direction (missing right, missing left): best score, its bin and the next
    /// occupied observed bin (none: every observed bin goes left).
    best: [(f64, u8, Option<u8>); 2],
    found: [bool; 2],
    /// Per direction, the left child's statistics at the best split, missing excluded.
    left: &'s mut [Vec<f64>; 2],
}

impl<'s> FeatureScan<'s> {
    fn new(min_leaf: usize, n_node: usize, n_missing: usize, best: Option<Split>, left: &'s mut [Vec<f64>; 2]) -> Self {
        let to_beat = best.map_or(f64::NEG_INFINITY, |b| b.score);
        FeatureScan { min_leaf, n_node, n_missing, best: [(to_beat, 0, None); 2], found: [false; 2], left }
    }

    /// Scores the split after `bin`, with `n_left` observed rows left of it and `next`
    /// the next occupied observed bin.
    #[inline(always)]
    fn consider<S: Scan>(&mut self, scan: &S, sums: &S::Sums, bin: u8, next: Option<u8>, n_left: usize) {
        let min_leaf = self.min_leaf;
        let valid = |n_left: usize| n_left >= min_leaf && self.n_node - n_left >= min_leaf;
        if let Some(missing_right) = scan.missing_right(sums).above(self.best[0].0)
            && valid(n_left)
        {
            self.best[0] = (missing_right, bin, next);
            self.found[0] = true;
            scan.left(sums, &mut self.left[0]);
        }
        // After the last observed bin, missing values left would leave nothing right.
        if self.n_missing == 0 || next.is_none() {
            return;
        }
        if let Some(missing_left) = scan.missing_left(sums).above(self.best[1].0)
            && valid(n_left + self.n_missing)
        {
            self.best[1] = (missing_left, bin, next);
            self.found[1] = true;
            scan.left(sums, &mut self.left[1]);
        }
    }

    /// Updates `best` with this feature's best split if it beats it. Missing values go
    /// left only if that is strictly better than the best split sending them right, so
    /// ties resolve as if every split with missing values right came first. Returns the
    /// direction (index into `left`) of the new best, if any.
    fn finish(self, feature: usize, best: &mut Option<Split>) -> Option<usize> {
        let direction = if self.found[1] && self.best[1].0 > self.best[0].0 {
            1
        } else if self.found[0] {
            0
        } else {
            return None;
        };
        let (score, bin, next) = self.best[direction];
        // Bins no training row of the node fell in are split halfway, as scikit-learn
        // puts its threshold halfway between two values. After the last observed bin
        // (missing values alone on the right) every observed bin goes left.
        let threshold = match next {
            Some(next) => bin + (next - bin) / 2,
            None => MISSING_BIN - 1,
        };
        let missing_seen = self.n_missing > 0;
        *best = Some(Split { feature, threshold, missing_left: direction == 1, missing_seen, score });
        Some(direction)
    }
}

impl Scratch {
    /// Records the statistics of a new best split found in direction `direction`, in a
    /// node with statistics `node`, whose missing rows have `self.missing`.
    fn keep_best(&mut self, direction: Option<usize>, node: &[f64]) {
        if let Some(direction) = direction {
            self.best_left.clone_from(&self.left[direction]);
            if direction == 1 {
                add_slots(&mut self.best_left, &self.missing);
            }
            self.best_total.clone_from_slice(node);
        }
    }
}

/// Finds the best split of a feature that is not constant in the node from its
/// histogram `cells` and updates `best` (see [`FeatureScan`]); the node has `n_node`
/// rows and statistics `node`. With `occupied` (the bins that hold rows, from
/// [`build_sparse_hist`]), visits only those bins and leaves `cells` zeroed; without,
/// visits every bin and leaves `cells` as they are (kept for the children).
///
/// Without `counts` the histogram has no row counts; bins are then told occupied by
/// their weight and, as `min_samples_leaf` is 1, a side with a bin has enough rows.
#[allow(clippy::too_many_arguments)]
fn scan_hist<C: Criterion, const W: usize>(
    scan: &mut C::Scan,
    counts: bool,
    occupied: Option<&[u64; N_BIN_CODES / 64]>,
    cells: &mut [f64],
    node: &[f64],
    n_node: usize,
    feature: usize,
    min_leaf: usize,
    scratch: &mut Scratch,
    best: &mut Option<Split>,
) {
    let width = if W == 0 { node.len() + 1 } else { W };
    let clear = occupied.is_some();
    // A cell's row count, weight and slots 1...
    let parts = |cell: &[f64]| {
        let weight = cell_weight::<C>(cell);
        let rows = if counts { cell[0] as usize } else { usize::from(weight > 0.0) };
        (rows, weight)
    };
    let (cells, missing_cell) = cells.split_at_mut(cells.len() - width);
    let (n_missing, missing_weight) = parts(missing_cell);
    let mut sums = if n_missing > 0 {
        let missing = &mut scratch.missing;
        missing[0] = missing_weight;
        missing[1..].copy_from_slice(&missing_cell[2..width]);
        scan.start(Some(missing))
    } else {
        scan.start(None)
    };
    if clear {
        missing_cell.fill(0.0);
    }
    let n_node = if counts { n_node } else { usize::MAX / 2 };
    let mut feature_scan = FeatureScan::new(min_leaf, n_node, n_missing, *best, &mut scratch.left);
    let mut n_left = 0;
    let mut previous = None;
    let n_observed = cells.len() / width;
    for bin in Bins::new(occupied, n_observed) {
        let cell = &mut cells[bin * width..][..width];
        let (rows, weight) = parts(cell);
        if rows == 0 {
            continue;
        }
        if let Some(previous) = previous {
            feature_scan.consider(scan, &sums, previous, Some(bin as u8), n_left);
        }
        scan.add_stats(&mut sums, weight, &cell[2..width]);
        if clear {
            cell.fill(0.0);
        }
        n_left += rows;
        previous = Some(bin as u8);
    }
    if let (Some(previous), true) = (previous, n_missing > 0) {
        feature_scan.consider(scan, &sums, previous, None, n_left);
    }
    let direction = feature_scan.finish(feature, best);
    scratch.keep_best(direction, node);
}

/// The observed bins a histogram scan visits, in increasing order: all of them, or the
/// set bits of an occupancy set (the missing bin, the last, left out).
struct Bins<'a> {
    words: Option<&'a [u64; N_BIN_CODES / 64]>,
    /// The word being read (set bits not yet visited) and its index.
    word: u64,
    at: usize,
    next: usize,
    n_observed: usize,
}

impl<'a> Bins<'a> {
    fn new(words: Option<&'a [u64; N_BIN_CODES / 64]>, n_observed: usize) -> Self {
        Bins { words, word: words.map_or(0, |w| w[0]), at: 0, next: 0, n_observed }
    }
}

impl Iterator for Bins<'_> {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        let Some(words) = self.words else {
            let bin = self.next;
            self.next += 1;
            return (bin < self.n_observed).then_some(bin);
        };
        loop {
            if self.word != 0 {
                let bin = self.at * 64 + self.word.trailing_zeros() as usize;
                self.word &= self.word - 1;
                return (bin < self.n_observed).then_some(bin);
            }
            self.at += 1;
            self.word = *words.get(self.at)?;
        }
    }
}

/// Sums the samples' slots into `totals`.
fn node_totals<C: Criterion>(criterion: &C, samples: &[Sample<C::Target>], totals: &mut [f64]) {
    // A fixed stride keeps the sums in registers.
    match totals.len() {
        2 => node_totals_of::<C, 2>(criterion, samples, totals),
        3 => node_totals_of::<C, 3>(criterion, samples, totals),
        4 => node_totals_of::<C, 4>(criterion, samples, totals),
        5 => node_totals_of::<C, 5>(criterion, samples, totals),
        6 => node_totals_of::<C, 6>(criterion, samples, totals),
        7 => node_totals_of::<C, 7>(criterion, samples, totals),
        8 => node_totals_of::<C, 8>(criterion, samples, totals),
        _ => {
            totals.fill(0.0);
            for &sample in samples {
                let (slot, value) = criterion.slot_value(sample);
                totals[0] += sample.weight;
                totals[slot] += value;
            }
        }
    }
}

fn node_totals_of<C: Criterion, const STRIDE: usize>(criterion: &C, samples: &[Sample<C::Target>], totals: &mut [f64]) {
    let mut sums = [0.0; STRIDE];
    for &sample in samples {
        let (slot, value) = criterion.slot_value(sample);
        sums[0] += sample.weight;
        // Adding to every slot, zero to all but one, avoids indexing by `slot`, which
        // would force the sums into memory.
        for (s, sum) in sums.iter_mut().enumerate().skip(1) {
            *sum += if s == slot { value } else { 0.0 };
        }
    }
    totals.copy_from_slice(&sums);
}

fn add_slots(into: &mut [f64], slots: &[f64]) {
    into.iter_mut().zip(slots).for_each(|(a, b)| *a += b);
}

/// Moves the rows (and their samples) that `split` sends left to the front, keeping
/// the order of each side; returns how many go left. `spare` is scratch space.
fn partition<T: Copy>(
    rows: &mut [u32],
    samples: &mut [Sample<T>],
    column: &[u8],
    split: &Split,
    spare: &mut Vec<(u32, Sample<T>)>,
) -> usize {
    // Every row is written to both sides and the side's end moves on for one of them:
    // no branch on the (unpredictable) side.
    spare.clear();
    spare.resize(rows.len(), (0, samples[0]));
    let (mut left, mut right) = (0, 0);
    for i in 0..rows.len() {
        let (row, sample) = (rows[i], samples[i]);
        let goes_left = goes_left(column[row as usize], split.threshold, split.missing_left);
        // `left <= i`: row `i` has been read already.
        rows[left] = row;
        samples[left] = sample;
        spare[right] = (row, sample);
        left += usize::from(goes_left);
        right += usize::from(!goes_left);
    }
    for (i, &(row, sample)) in spare[..right].iter().enumerate() {
        rows[left + i] = row;
        samples[left + i] = sample;
    }
    left
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A matrix of `n_rows` rows drawn by `row`, which gets the row's own RNG.
    fn matrix(n_rows: usize, n_cols: usize, seed: u64, mut row: impl FnMut(&mut ChaCha8Rng) -> Vec<f64>) -> Matrix {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let data: Vec<f64> = (0..n_rows).flat_map(|_| row(&mut rng)).collect();
        Matrix::new(n_rows, n_cols, data)
    }

    fn uniform_rows(n_rows: usize, n_cols: usize, seed: u64) -> Matrix {
        matrix(n_rows, n_cols, seed, |rng| (0..n_cols).map(|_| rng.random::<f64>()).collect())
    }

    fn labels(x: &Matrix, label: impl Fn(&[f64]) -> u32) -> Vec<u32> {
        (0..x.n_rows()).map(|i| label(x.row(i))).collect()
    }

    fn accuracy(predicted: &[u32], y: &[u32]) -> f64 {
        predicted.iter().zip(y).filter(|(p, y)| p == y).count() as f64 / y.len() as f64
    }

    /// One unbagged tree over all features: a deterministic, fully grown CART tree.
    fn single_tree() -> ForestParams {
        ForestParams {
            n_trees: 1,
            max_features: MaxFeatures::All,
            bootstrap: false,
            ..ForestParams::classifier_default()
        }
    }

    fn xor(row: &[f64]) -> u32 {
        u32::from((row[0] > 0.5) != (row[1] > 0.5))
    }

    #[test]
    fn matrix_gives_rows_and_values() {
        let x = Matrix::new(2, 3, vec![1.0, 2.0, 3.0, 4.0, 5.0, f64::NAN]);
        assert_eq!((x.n_rows(), x.n_cols()), (2, 3));
        assert_eq!(x.row(1)[..2], [4.0, 5.0]);
        assert_eq!(x.get(0, 2), 3.0);
        assert!(x.get(1, 2).is_nan());
    }

    #[test]
    #[should_panic(expected = "needs 2 * 3 values, got 5")]
    fn matrix_rejects_a_wrong_length() {
        Matrix::new(2, 3, vec![0.0; 5]);
    }

    #[test]
    fn binner_gives_few_distinct_values_a_bin_each() {
        let values = [3.0, -1.0, 0.0, -0.0, 7.5, 3.0, f64::NAN, 7.5, 1e300, f64::NEG_INFINITY];
        let x = Matrix::new(values.len(), 1, values.to_vec());
        let binner = Binner::fit(&x);
        // Distinct: -inf, -1, 0 (both zeros), 3, 7.5, 1e300.
        assert_eq!(binner.thresholds(0).len(), 5);
        let binned = binner.transform(&x);
        assert_eq!(binned.column(0), [3, 1, 2, 2, 4, 3, MISSING_BIN, 4, 5, 0]);
        // Unseen values fall into the bin of the interval they lie in.
        let unseen = Matrix::new(3, 1, vec![-5.0, 100.0, f64::INFINITY]);
        assert_eq!(binner.transform(&unseen).column(0), [1, 4, 5]);
    }

    #[test]
    fn binner_spreads_many_values_over_at_most_255_even_bins() {
        let x = matrix(20_000, 1, 1, |rng| vec![rng.random::<f64>().powi(3)]);
        let binner = Binner::fit(&x);
        assert_eq!(binner.thresholds(0).len(), MAX_VALUE_BINS - 1);
        let mut counts = vec![0; MAX_VALUE_BINS];
        for &bin in binner.transform(&x).column(0) {
            counts[bin as usize] += 1;
        }
        let expected = 20_000 / MAX_VALUE_BINS;
        assert!(counts.iter().all(|&c| c >= expected / 2 && c <= 2 * expected), "{counts:?}");
    }

    #[test]
    fn binner_gives_a_heavy_value_one_bin_and_resolution_to_the_rest() {
        let x = matrix(10_000, 1, 2, |rng| vec![if rng.random::<f64>() < 0.9 { 0.0 } else { rng.random() }]);
        let thresholds = Binner::fit(&x).thresholds(0).to_vec();
        assert!(thresholds.len() > 200, "only {} thresholds", thresholds.len());
        assert!(thresholds.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn binner_handles_columns_without_values() {
        let x = Matrix::new(3, 2, vec![f64::NAN, 1.0, f64::NAN, 1.0, f64::NAN, 1.0]);
        let binner = Binner::fit(&x);
        assert!(binner.thresholds(0).is_empty() && binner.thresholds(1).is_empty());
        let binned = binner.transform(&x);
        assert_eq!(binned.column(0), [MISSING_BIN; 3]);
        assert_eq!(binned.column(1), [0; 3]);
        let empty = Binner::fit(&Matrix::new(0, 2, vec![]));
        assert_eq!(empty.transform(&x).column(1), [0; 3]);
    }

    #[test]
    fn nodes_keep_what_they_are_given() {
        for (feature, threshold, missing_left, left) in
            [(0, 0, false, 1), (MAX_TREE_FEATURES - 1, MISSING_BIN - 1, true, u32::MAX - 1), (140, 17, true, 2)]
        {
            let NodeView::Split { feature: f, threshold: t, missing_left: m, left: l, right: r } =
                Node::split(feature, threshold, missing_left, left).view()
            else {
                panic!("a split read back as a leaf");
            };
            assert_eq!((f as usize, t, m, l, r), (feature, threshold, missing_left, left, left + 1));
        }
        for output in [0, 5, u32::MAX] {
            assert!(matches!(Node::leaf(output).view(), NodeView::Leaf { output: o } if o == output));
        }
    }

    #[test]
    fn midpoint_separates_any_two_values() {
        let pairs = [
            (0.0, 1.0),
            (1.0, f64::from_bits(1.0f64.to_bits() + 1)),
            (f64::MIN_POSITIVE / 4.0, f64::MIN_POSITIVE / 2.0),
            (0.0, f64::from_bits(1)),
            (-f64::MAX, f64::MAX),
            (f64::MAX / 2.0, f64::MAX),
            (f64::NEG_INFINITY, 0.0),
            (0.0, f64::INFINITY),
            (f64::NEG_INFINITY, f64::INFINITY),
        ];
        for (lo, hi) in pairs {
            let t = midpoint(lo, hi);
            assert!(lo <= t && t < hi, "midpoint({lo}, {hi}) = {t}");
        }
    }

    #[test]
    fn max_features_resolves_like_scikit_learn() {
        assert_eq!(MaxFeatures::Sqrt.resolve(30), 5);
        assert_eq!(MaxFeatures::Sqrt.resolve(1), 1);
        assert_eq!(MaxFeatures::All.resolve(7), 7);
        assert_eq!(MaxFeatures::Count(0).resolve(7), 1);
        assert_eq!(MaxFeatures::Count(99).resolve(7), 7);
        assert_eq!(MaxFeatures::Fraction(0.5).resolve(7), 3);
        assert_eq!(MaxFeatures::Fraction(f64::NAN).resolve(7), 1);
        assert_eq!(MaxFeatures::Sqrt.resolve(0), 0);
    }

    #[test]
    fn defaults_are_scikit_learns() {
        let classifier = ForestParams::classifier_default();
        assert_eq!(classifier.n_trees, 100);
        assert_eq!(classifier.max_features, MaxFeatures::Sqrt);
        assert!(classifier.bootstrap && classifier.max_depth.is_none());
        assert_eq!((classifier.min_samples_leaf, classifier.min_samples_split), (1, 2));
        let regressor = ForestParams::regressor_default();
        assert_eq!((regressor.n_trees, regressor.max_features), (200, MaxFeatures::All));
    }

    #[test]
    fn learns_an_xor_interaction() {
        let train = uniform_rows(2000, 4, 3);
        let test = uniform_rows(1000, 4, 4);
        let binner = Binner::fit(&train);
        let forest = fit_classifier(
            &binner.transform(&train),
            &labels(&train, xor),
            2,
            None,
            &ForestParams::classifier_default(),
        );
        let acc = accuracy(&forest.predict(&binner.transform(&test)), &labels(&test, xor));
        assert!(acc > 0.93, "held-out accuracy {acc}");
    }

    #[test]
    fn fits_separable_training_data_perfectly() {
        let x = uniform_rows(500, 3, 5);
        let y = labels(&x, |r| u32::from(r[0] + r[1] > 1.0) + 2 * u32::from(r[2] > 0.3));
        let binned = Binner::fit(&x).transform(&x);
        for params in [single_tree(), ForestParams::classifier_default()] {
            let forest = fit_classifier(&binned, &y, 4, None, &params);
            assert_eq!(accuracy(&forest.predict(&binned), &y), 1.0);
        }
    }

    #[test]
    fn probabilities_are_distributions_over_the_classes() {
        let x = uniform_rows(300, 5, 6);
        let y = labels(&x, |r| (r[0] * 3.0) as u32);
        let binned = Binner::fit(&x).transform(&x);
        let forest = fit_classifier(&binned, &y, 3, None, &ForestParams::classifier_default());
        let test = Binner::fit(&x).transform(&uniform_rows(200, 5, 7));
        let proba = forest.predict_proba(&test);
        assert_eq!(proba.len(), 200 * 3);
        for row in proba.chunks_exact(3) {
            assert!(row.iter().all(|p| (0.0..=1.0).contains(p)));
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{row:?}");
        }
    }

    #[test]
    fn regression_beats_predicting_the_mean() {
        let target = |r: &[f64]| (6.0 * r[0]).sin() * 3.0 + 2.0 * r[1];
        let train = uniform_rows(1500, 4, 8);
        let test = uniform_rows(500, 4, 9);
        let y: Vec<f64> = (0..train.n_rows()).map(|i| target(train.row(i))).collect();
        let y_test: Vec<f64> = (0..test.n_rows()).map(|i| target(test.row(i))).collect();
        let binner = Binner::fit(&train);
        let params = ForestParams { n_trees: 50, ..ForestParams::regressor_default() };
        let forest = fit_regressor(&binner.transform(&train), &y, None, &params);
        let mse = |p: &[f64]| p.iter().zip(&y_test).map(|(p, y)| (p - y) * (p - y)).sum::<f64>() / p.len() as f64;
        let mean = y.iter().sum::<f64>() / y.len() as f64;
        let forest_mse = mse(&forest.predict(&binner.transform(&test)));
        let mean_mse = mse(&vec![mean; test.n_rows()]);
        assert!(forest_mse < 0.05 * mean_mse, "forest {forest_mse} vs mean {mean_mse}");
    }

    #[test]
    fn a_single_regression_tree_interpolates_its_training_data() {
        let x = uniform_rows(300, 2, 10);
        let y: Vec<f64> = (0..300).map(|i| x.get(i, 0) * 10.0 - x.get(i, 1)).collect();
        let binned = Binner::fit(&x).transform(&x);
        let forest = fit_regressor(&binned, &y, None, &single_tree());
        for (p, y) in forest.predict(&binned).iter().zip(&y) {
            assert!((p - y).abs() < 1e-9, "{p} vs {y}");
        }
    }

    #[test]
    fn results_are_bit_identical_for_any_thread_count() {
        let x = matrix(3000, 8, 11, |rng| {
            (0..8).map(|j| if j == 3 && rng.random::<f64>() < 0.2 { f64::NAN } else { rng.random() }).collect()
        });
        let y = labels(&x, |r| u32::from(r[0] > 0.4) + u32::from(r[1] + r[2] > 1.2) + u32::from(r[3].is_nan()));
        let targets: Vec<f64> = (0..x.n_rows()).map(|i| x.get(i, 0) * 3.0 + x.get(i, 4)).collect();
        let binned = Binner::fit(&x).transform(&x);
        let params = ForestParams { n_trees: 24, ..ForestParams::classifier_default() };
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let classifier = fit_classifier(&binned, &y, 4, None, &params);
                let regressor = fit_regressor(&binned, &targets, None, &params);
                let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                let importance = classifier.permutation_importance(&binned, &y, 2, 5);
                (
                    bits(&classifier.predict_proba(&binned)),
                    bits(classifier.feature_importances()),
                    bits(&regressor.predict(&binned)),
                    bits(regressor.feature_importances()),
                    bits(&importance.mean),
                )
            })
        };
        let one = run(1);
        assert_eq!(one, run(2));
        assert_eq!(one, run(4));
        let reseeded = ForestParams { seed: 1, ..params };
        let other = fit_classifier(&binned, &y, 4, None, &reseeded).predict_proba(&binned);
        assert_ne!(one.0, other.iter().map(|f| f.to_bits()).collect::<Vec<_>>());
    }

    #[test]
    fn missingness_itself_is_learnable() {
        // Feature 0 is missing exactly for class 1; the other features are noise.
        let make = |seed| {
            let x = matrix(1000, 3, seed, |rng| {
                let class_one = rng.random::<bool>();
                vec![if class_one { f64::NAN } else { rng.random() }, rng.random(), rng.random()]
            });
            let y = labels(&x, |r| u32::from(r[0].is_nan()));
            (x, y)
        };
        let (train, y) = make(12);
        let (test, y_test) = make(13);
        let binner = Binner::fit(&train);
        let forest = fit_classifier(&binner.transform(&train), &y, 2, None, &ForestParams::classifier_default());
        assert_eq!(accuracy(&forest.predict(&binner.transform(&test)), &y_test), 1.0);
    }

    #[test]
    fn missing_values_unseen_in_training_follow_the_larger_child() {
        let x = uniform_rows(1000, 1, 14);
        let stump = ForestParams { max_depth: Some(1), ..single_tree() };
        let binner = Binner::fit(&x);
        let nan = binner.transform(&Matrix::new(1, 1, vec![f64::NAN]));
        for (cut, majority) in [(0.8, 0), (0.2, 1)] {
            let y = labels(&x, |r| u32::from(r[0] > cut));
            let forest = fit_classifier(&binner.transform(&x), &y, 2, None, &stump);
            assert_eq!(forest.predict(&nan), [majority], "cut {cut}");
        }
    }

    #[test]
    fn degenerate_inputs_give_trivial_forests() {
        let params = ForestParams::classifier_default();
        // No rows: uniform probabilities, regression predicts 0.
        let empty = Binner::fit(&Matrix::new(0, 2, vec![])).transform(&Matrix::new(0, 2, vec![]));
        let some = Binner::fit(&Matrix::new(0, 2, vec![])).transform(&uniform_rows(2, 2, 15));
        let forest = fit_classifier(&empty, &[], 3, None, &params);
        assert!(forest.predict_proba(&some).iter().all(|p| (p - 1.0 / 3.0).abs() < 1e-12));
        assert_eq!(forest.predict(&some), [0, 0]);
        assert_eq!(forest.feature_importances(), [0.0, 0.0]);
        assert_eq!(fit_regressor(&empty, &[], None, &params).predict(&some), [0.0, 0.0]);
        assert!(forest.predict_proba(&empty).is_empty());

        // One class, and more classes than the labels use.
        let x = uniform_rows(50, 2, 16);
        let binned = Binner::fit(&x).transform(&x);
        let one_class = fit_classifier(&binned, &[0; 50], 1, None, &params);
        assert!(one_class.predict_proba(&binned).iter().all(|&p| p == 1.0));
        let y = labels(&x, |r| u32::from(r[0] > 0.5));
        let proba = fit_classifier(&binned, &y, 5, None, &params).predict_proba(&binned);
        assert!(proba.chunks_exact(5).all(|row| row[2..] == [0.0; 3]));

        // Nothing to split on: constant and all-missing columns, or no column at all.
        let flat = Matrix::new(50, 2, [1.0, f64::NAN].repeat(50));
        let flat = Binner::fit(&flat).transform(&flat);
        let forest = fit_classifier(&flat, &y, 2, None, &params);
        let share = y.iter().filter(|&&c| c == 1).count() as f64 / 50.0;
        let proba = forest.predict_proba(&flat);
        assert!((proba[1] - share).abs() < 0.1, "{} vs {share}", proba[1]);
        assert_eq!(forest.feature_importances(), [0.0, 0.0]);
        let no_columns = Binner::fit(&Matrix::new(50, 0, vec![])).transform(&Matrix::new(50, 0, vec![]));
        let forest = fit_classifier(&no_columns, &y, 2, None, &params);
        assert_eq!(forest.predict(&no_columns).len(), 50);
        assert!(forest.feature_importances().is_empty());
        let regressor = fit_regressor(&no_columns, &vec![2.0; 50], None, &params);
        assert_eq!(regressor.predict(&no_columns), vec![2.0; 50]);

        // No trees, no depth.
        let none = fit_classifier(&binned, &y, 2, None, &ForestParams { n_trees: 0, ..params.clone() });
        assert_eq!(none.predict_proba(&binned), vec![0.5; 100]);
        let stumpless = ForestParams { max_depth: Some(0), ..single_tree() };
        let root_only = fit_classifier(&binned, &y, 2, None, &stumpless).predict_proba(&binned);
        assert!(root_only.chunks_exact(2).all(|row| row == &root_only[..2]));
    }

    #[test]
    #[should_panic(expected = "label 2 is not below n_classes = 2")]
    fn labels_must_fit_n_classes() {
        let x = Binner::fit(&uniform_rows(3, 1, 17)).transform(&uniform_rows(3, 1, 17));
        fit_classifier(&x, &[0, 1, 2], 2, None, &single_tree());
    }

    #[test]
    fn importances_single_out_the_informative_feature() {
        let train = uniform_rows(2000, 4, 18);
        let test = uniform_rows(1000, 4, 19);
        let rule = |r: &[f64]| u32::from(r[2] > 0.5);
        let binner = Binner::fit(&train);
        let forest = fit_classifier(
            &binner.transform(&train),
            &labels(&train, rule),
            2,
            None,
            &ForestParams::classifier_default(),
        );
        let mdi = forest.feature_importances();
        assert!((mdi.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(mdi[2] > 0.9, "{mdi:?}");

        let held_out = binner.transform(&test);
        let importance = forest.permutation_importance(&held_out, &labels(&test, rule), 5, 0);
        assert!(importance.baseline > 0.99);
        assert!(importance.mean[2] > 0.4, "{importance:?}");
        for j in [0, 1, 3] {
            assert!(importance.mean[j].abs() < 0.02, "{importance:?}");
        }
        assert!(importance.std.iter().all(|&s| s >= 0.0));
    }

    #[test]
    fn regression_importances_rise_with_the_mse() {
        let x = uniform_rows(1000, 3, 20);
        let y: Vec<f64> = (0..1000).map(|i| 5.0 * x.get(i, 1)).collect();
        let binned = Binner::fit(&x).transform(&x);
        let params = ForestParams { n_trees: 20, ..ForestParams::regressor_default() };
        let forest = fit_regressor(&binned, &y, None, &params);
        assert!(forest.feature_importances()[1] > 0.95);
        let importance = forest.permutation_importance(&binned, &y, 3, 1);
        assert!(importance.baseline > -0.01 && importance.baseline <= 0.0);
        assert!(importance.mean[1] > 1.0 && importance.mean[0].abs() < 0.01, "{importance:?}");
    }

    /// With integer weights a node stops scanning features once a split reaches the
    /// best possible score; with weights of 0.5 it never does (they are not integers),
    /// yet halving every weight is exact and changes no comparison. The two must grow
    /// the same trees: coarse features and noisy labels give many perfect splits and
    /// many ties between features.
    #[test]
    fn stopping_at_an_unbeatable_split_changes_nothing() {
        let x = matrix(600, 12, 5, |rng| (0..12).map(|_| f64::from(rng.random_range(0..4u8))).collect());
        let y: Vec<u32> =
            (0..600).map(|i| (x.get(i, 0) as u32 + x.get(i, 1) as u32 + (i % 7 == 0) as u32) % 3).collect();
        let binned = Binner::fit(&x).transform(&x);
        let params = ForestParams { n_trees: 8, bootstrap: false, ..ForestParams::classifier_default() };
        let fit = |weight: f64| fit_classifier(&binned, &y, 3, Some(&vec![weight; 600]), &params);
        let (whole, halves) = (fit(1.0), fit(0.5));
        for (a, b) in whole.trees.iter().zip(&halves.trees) {
            let splits = |tree: &Tree| tree.nodes.iter().map(|n| (n.link, n.word)).collect::<Vec<_>>();
            assert!(a.nodes.len() > 100, "trees this small test little: {}", a.nodes.len());
            assert_eq!(splits(a), splits(b));
        }
        let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&whole.predict_proba(&binned)), bits(&halves.predict_proba(&binned)));
        assert_eq!(bits(whole.feature_importances()), bits(halves.feature_importances()));
    }

    #[test]
    fn a_score_skipped_without_dividing_would_not_have_won() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let plain = |s: Score, best: f64| {
            let score = s.num / s.den;
            (score > best).then_some(score)
        };
        let mut cases = vec![
            (Score { num: 1.0, den: 0.0 }, 2.0),
            (Score { num: 0.0, den: 0.0 }, 2.0),
            (Score { num: -1.0, den: 2.0 }, -3.0),
            (Score { num: f64::NAN, den: 1.0 }, 1.0),
            (Score { num: 3.0, den: 1.0 }, f64::NEG_INFINITY),
            (Score { num: 3.0, den: 1.0 }, 3.0),
        ];
        for _ in 0..100_000 {
            // Integer sums as bootstrap weights make them, then near-ties: `best` within a
            // few ulps of the quotient, or the quotient of another split.
            let den = f64::from(rng.random_range(1..10_000u32)) * f64::from(rng.random_range(1..10_000u32));
            let num = f64::from(rng.random_range(0..1u32 << 30)) * f64::from(rng.random_range(1..64u32));
            let quotient = num / den;
            let best = match rng.random_range(0..4u8) {
                0 => quotient,
                1 => f64::from_bits(quotient.to_bits().wrapping_add(rng.random_range(0..8))),
                2 => f64::from_bits(quotient.to_bits().wrapping_sub(rng.random_range(0..8))),
                _ => quotient * (1.0 + (rng.random::<f64>() - 0.5) * 1e-9),
            };
            cases.push((Score { num, den }, best));
        }
        for (score, best) in cases {
            let bits = |v: Option<f64>| v.map(f64::to_bits);
            assert_eq!(
                bits(score.above(best)),
                bits(plain(score, best)),
                "{} / {} against {best}",
                score.num,
                score.den
            );
        }
    }

    #[test]
    fn constant_columns_marked_up_front_change_nothing() {
        // Columns 1, 4 and 6 are constant (6 all missing); the others vary.
        let x = matrix(500, 7, 9, |rng| {
            let v = |rng: &mut ChaCha8Rng| f64::from(rng.random_range(0..5u8));
            vec![v(rng), 3.0, v(rng), v(rng), -1.0, v(rng), f64::NAN]
        });
        let y: Vec<u32> =
            (0..500).map(|i| (x.get(i, 0) as u32 + x.get(i, 3) as u32 + (i % 5 == 0) as u32) % 3).collect();
        let binned = Binner::fit(&x).transform(&x);
        assert_eq!(constant_columns(&binned), vec![0b101_0010]);
        let params = ForestParams { n_trees: 8, seed: 3, ..ForestParams::classifier_default() };
        let criterion = Gini { y: &y, n_classes: 3 };
        let marked = grow_forest_marked(&binned, &criterion, None, &params, true);
        let found = grow_forest_marked(&binned, &criterion, None, &params, false);
        let splits = |tree: &Tree| tree.nodes.iter().map(|n| (n.link, n.word)).collect::<Vec<_>>();
        let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        for (a, b) in marked.iter().zip(&found) {
            assert!(a.nodes.len() > 50, "trees this small test little: {}", a.nodes.len());
            assert_eq!(splits(a), splits(b));
            assert_eq!(bits(&a.outputs), bits(&b.outputs));
            assert_eq!(bits(&a.importances), bits(&b.importances));
        }
    }

    #[test]
    fn rows_of_weight_zero_are_ignored() {
        let x = uniform_rows(400, 3, 21);
        let y = labels(&x, |r| u32::from(r[0] > 0.5));
        let weights: Vec<f64> = (0..400).map(|i| if i % 4 == 0 { 0.0 } else { 1.0 + (i % 3) as f64 }).collect();
        let scrambled: Vec<u32> = y.iter().enumerate().map(|(i, &c)| if i % 4 == 0 { 1 - c } else { c }).collect();
        let binned = Binner::fit(&x).transform(&x);
        for bootstrap in [true, false] {
            let params = ForestParams { n_trees: 10, bootstrap, ..ForestParams::classifier_default() };
            let clean = fit_classifier(&binned, &y, 2, Some(&weights), &params).predict_proba(&binned);
            let noisy = fit_classifier(&binned, &scrambled, 2, Some(&weights), &params).predict_proba(&binned);
            assert_eq!(clean, noisy, "bootstrap {bootstrap}");
        }
    }

    #[test]
    fn leaves_keep_min_samples_leaf_rows() {
        let x = uniform_rows(500, 3, 22);
        let y = labels(&x, xor);
        let binned = Binner::fit(&x).transform(&x);
        let params = ForestParams { min_samples_leaf: 20, ..single_tree() };
        let forest = fit_classifier(&binned, &y, 2, None, &params);
        let tree = &forest.trees[0];
        let mut rows_per_leaf = std::collections::HashMap::new();
        for row in 0..binned.n_rows() {
            let bins: Vec<u8> = (0..binned.n_cols()).map(|j| binned.get(row, j)).collect();
            let leaf = tree.leaf(&bins, 2).as_ptr();
            *rows_per_leaf.entry(leaf).or_insert(0) += 1;
        }
        assert!(rows_per_leaf.len() > 5);
        assert!(rows_per_leaf.values().all(|&n| n >= 20), "{:?}", rows_per_leaf.values());
    }

    /// Weighted impurity of the children of a split of all rows, by brute force.
    fn children_impurity(
        binned: &BinnedMatrix,
        y: &[f64],
        classes: bool,
        feature: usize,
        threshold: u8,
        missing_left: bool,
    ) -> f64 {
        let (mut left, mut right) = (Vec::new(), Vec::new());
        for (row, &bin) in binned.column(feature).iter().enumerate() {
            if goes_left(bin, threshold, missing_left) {
                left.push(y[row]);
            } else {
                right.push(y[row]);
            }
        }
        let impurity = |side: &[f64]| {
            let n = side.len() as f64;
            if classes {
                let ones = side.iter().filter(|&&v| v == 1.0).count() as f64;
                n * (1.0 - (ones / n).powi(2) - (1.0 - ones / n).powi(2))
            } else {
                let mean = side.iter().sum::<f64>() / n;
                side.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>()
            }
        };
        if left.is_empty() || right.is_empty() { f64::INFINITY } else { impurity(&left) + impurity(&right) }
    }

    #[test]
    fn the_root_split_is_the_best_of_all_splits() {
        for seed in 0..20 {
            let x = matrix(200, 3, 100 + seed, |rng| {
                (0..3)
                    .map(|_| if rng.random::<f64>() < 0.15 { f64::NAN } else { (rng.random::<f64>() * 12.0).floor() })
                    .collect()
            });
            let binned = Binner::fit(&x).transform(&x);
            let classes: Vec<u32> = labels(&x, |r| u32::from(r[0].is_nan() || r[1] + r[2] > 12.0));
            let numbers: Vec<f64> =
                (0..200).map(|i| x.get(i, 1).max(3.0) + if x.get(i, 2).is_nan() { 5.0 } else { 0.0 }).collect();
            let stump = ForestParams { max_depth: Some(1), ..single_tree() };
            let classifier = fit_classifier(&binned, &classes, 2, None, &stump);
            let regressor = fit_regressor(&binned, &numbers, None, &stump);
            let as_f64: Vec<f64> = classes.iter().map(|&c| f64::from(c)).collect();
            for (tree, y, is_classes) in [(&classifier.trees[0], &as_f64, true), (&regressor.trees[0], &numbers, false)]
            {
                let NodeView::Split { feature, threshold, missing_left, .. } = tree.nodes[0].view() else {
                    panic!("seed {seed}: the root did not split");
                };
                let chosen = children_impurity(&binned, y, is_classes, feature as usize, threshold, missing_left);
                let mut best = f64::INFINITY;
                for feature in 0..3 {
                    for threshold in 0..MISSING_BIN {
                        for missing_left in [false, true] {
                            best =
                                best.min(children_impurity(&binned, y, is_classes, feature, threshold, missing_left));
                        }
                    }
                }
                assert!(chosen <= best + 1e-9, "seed {seed}: chose {chosen}, best is {best}");
            }
        }
    }

    #[test]
    fn subtracting_a_sibling_histogram_equals_building_directly() {
        let x = matrix(300, 1, 23, |rng| vec![if rng.random::<f64>() < 0.1 { f64::NAN } else { rng.random() }]);
        let y: Vec<u32> = (0..300).map(|i| (i % 3) as u32).collect();
        let binned = Binner::fit(&x).transform(&x);
        let criterion = Gini { y: &y, n_classes: 3 };
        let rows: Vec<u32> = (0..300).collect();
        let samples: Vec<_> =
            rows.iter().map(|&r| Sample { weight: 1.0 + f64::from(r % 2), target: y[r as usize] }).collect();
        let (small, large) = (100, 100..300);
        let layout = Layout::new(&binned, criterion.stride());
        let width = layout.width;
        for counts in [true, false] {
            let build = |rows: &[u32], samples: &[Sample<u32>]| {
                let mut store = HistStore::new(&layout);
                let cells = store.take(&layout, 0);
                build_hist::<_, 0>(&criterion, width, counts, cells, binned.column(0), rows, samples);
                cells.to_vec()
            };
            let parent = build(&rows, &samples);
            let mut derived = build(&rows[..small], &samples[..small]);
            subtract_hist::<Gini>(&mut derived, &parent, width, counts);
            let direct = build(&rows[large.clone()], &samples[large.clone()]);
            assert_eq!(derived, direct, "counts {counts}");
            assert!(parent.chunks_exact(width).filter(|cell| cell[2..].iter().sum::<f64>() > 0.0).count() > 10);
        }
    }
}
