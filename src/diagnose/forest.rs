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
//! Speed comes from histograms: a node sums its rows per bin for each candidate feature
//! and scans the boundaries between its at most 255 occupied bins instead of sorting
//! values; a large node's larger child gets a histogram by subtracting its sibling's
//! from the parent's.
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

/// Number of distinct bin codes, the length of every per-feature histogram.
const N_BIN_CODES: usize = MAX_VALUE_BINS + 1;

/// A node whose impurity is at most this is pure and becomes a leaf (scikit-learn's `EPSILON`).
const PURE: f64 = f64::EPSILON;

/// Rows per prediction work item. An item's bins are copied row-major (a few KiB, so
/// they stay in L1) and trees are the outer loop, so one tree's nodes stay in cache
/// while it routes the whole item.
const PREDICT_CHUNK: usize = 256;

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
        let thresholds = (0..x.n_cols)
            .into_par_iter()
            .map(|j| column_thresholds((0..x.n_rows).map(|i| x.data[i * x.n_cols + j])))
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
            bins.par_chunks_mut(x.n_rows).zip(&self.thresholds).enumerate().for_each(|(j, (column, thresholds))| {
                for (i, bin) in column.iter_mut().enumerate() {
                    *bin = bin_of(thresholds, x.data[i * x.n_cols + j]);
                }
            });
        }
        BinnedMatrix { n_rows: x.n_rows, n_cols: x.n_cols, bins }
    }
}

/// Thresholds for one column's values (NaN skipped); see [`Binner::fit`].
fn column_thresholds(values: impl Iterator<Item = f64>) -> Vec<f64> {
    // Adding +0.0 turns -0.0 into 0.0, so the two zeros are one distinct value.
    let mut sorted: Vec<f64> = values.filter(|v| !v.is_nan()).map(|v| v + 0.0).collect();
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
    sums.par_chunks_mut(PREDICT_CHUNK * width).enumerate().for_each(|(chunk, block)| {
        let rows = chunk * PREDICT_CHUNK..chunk * PREDICT_CHUNK + block.len() / width;
        let mut row_major = vec![0; rows.len() * x.n_cols];
        for j in 0..x.n_cols {
            for (i, &bin) in x.column(j)[rows.clone()].iter().enumerate() {
                row_major[i * x.n_cols + j] = bin;
            }
        }
        let n_cols = x.n_cols;
        for tree in trees {
            for (i, row_sums) in block.chunks_exact_mut(width).enumerate() {
                let leaf = tree.leaf(&row_major[i * n_cols..(i + 1) * n_cols], width);
                row_sums.iter_mut().zip(leaf).for_each(|(sum, v)| *sum += v);
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
    fn stride(&self) -> usize;
    fn target(&self, row: usize) -> Self::Target;
    /// Besides its weight, which goes to slot 0, a sample adds one value to one other
    /// slot: returns that slot (at least 1) and value.
    fn slot_value(&self, sample: Sample<Self::Target>) -> (usize, f64);
    /// Impurity of the node holding `samples`, whose statistics are `totals`.
    fn impurity(&self, samples: &[Sample<Self::Target>], totals: &[f64]) -> f64;
    /// Scores splitting a node with statistics `total` at `scores.len()` thresholds,
    /// the left child of threshold `i` having statistics `left[i * stride..][..stride]`.
    /// The highest score has the lowest weighted child impurity: it is scikit-learn's
    /// `proxy_impurity_improvement` up to a constant. Thresholds leaving a child empty
    /// get a meaningless score; the caller skips them.
    fn split_scores(&self, left: &[f64], total: &[f64], scores: &mut [f64]);
    /// Appends the prediction of a leaf with statistics `totals`.
    fn leaf_output(&self, totals: &[f64], out: &mut Vec<f64>);
}

/// Gini impurity over `n_classes` classes; slots are `[weight, weight of class 0, ...]`.
struct Gini<'a> {
    y: &'a [u32],
    n_classes: usize,
}

impl Criterion for Gini<'_> {
    type Target = u32;

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

    /// `sum_k left_k^2 / w_left + sum_k right_k^2 / w_right`, over one division.
    fn split_scores(&self, left: &[f64], total: &[f64], scores: &mut [f64]) {
        for (score, left) in scores.iter_mut().zip(left.chunks_exact(total.len())) {
            let (mut left_squares, mut right_squares) = (0.0, 0.0);
            for (l, t) in left[1..].iter().zip(&total[1..]) {
                left_squares += l * l;
                right_squares += (t - l) * (t - l);
            }
            let (w_left, w_right) = (left[0], total[0] - left[0]);
            *score = (left_squares * w_right + right_squares * w_left) / (w_left * w_right);
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
}

/// Squared error; slots are `[weight, weighted sum of targets]`.
struct SquaredError<'a> {
    y: &'a [f64],
}

impl Criterion for SquaredError<'_> {
    type Target = f64;

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

    /// `sum_left^2 / w_left + sum_right^2 / w_right`, over one division.
    fn split_scores(&self, left: &[f64], total: &[f64], scores: &mut [f64]) {
        for (score, left) in scores.iter_mut().zip(left.chunks_exact(2)) {
            let (w_left, w_right) = (left[0], total[0] - left[0]);
            let (sum_left, sum_right) = (left[1], total[1] - left[1]);
            *score = (sum_left * sum_left * w_right + sum_right * sum_right * w_left) / (w_left * w_right);
        }
    }

    fn leaf_output(&self, totals: &[f64], out: &mut Vec<f64>) {
        out.push(if totals[0] > 0.0 { totals[1] / totals[0] } else { 0.0 });
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

#[derive(Debug, Clone, Copy)]
enum Node {
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

#[inline]
fn goes_left(bin: u8, threshold: u8, missing_left: bool) -> bool {
    if bin == MISSING_BIN { missing_left } else { bin <= threshold }
}

impl Tree {
    /// Outputs of the leaf a row with bins `bins` falls in.
    fn leaf(&self, bins: &[u8], width: usize) -> &[f64] {
        let mut node = 0;
        loop {
            match self.nodes[node] {
                Node::Leaf { output } => {
                    let start = output as usize;
                    return &self.outputs[start..start + width];
                }
                Node::Split { feature, threshold, missing_left, left, right } => {
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
}

fn grow_forest<C: Criterion>(
    x: &BinnedMatrix,
    criterion: &C,
    sample_weight: Option<&[f64]>,
    params: &ForestParams,
) -> Vec<Tree> {
    assert!(u32::try_from(x.n_rows).is_ok(), "a forest takes at most u32::MAX rows, got {}", x.n_rows);
    if let Some(weights) = sample_weight {
        assert_eq!(weights.len(), x.n_rows, "{} sample weights for {} rows", weights.len(), x.n_rows);
        if let Some(bad) = weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
            panic!("sample weights must be finite and non-negative, got {bad}");
        }
    }
    let limits = Limits {
        max_features: params.max_features.resolve(x.n_cols),
        min_samples_leaf: params.min_samples_leaf.max(1),
        min_samples_split: params.min_samples_split.max(2),
        max_depth: params.max_depth.unwrap_or(usize::MAX),
    };
    // Each rayon job reuses one set of histogram stores from tree to tree: fresh
    // ones (features x 256 bins x slots, megabytes) cost more page faults than
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
                        stores.reset();
                        stores
                    }
                    None => Stores::new(x.n_cols, criterion.stride()),
                };
                let (tree, stores) = Grower::new(x, criterion, &limits, &weights, rng, stores).grow();
                *cache = Some(stores);
                tree
            },
        )
        .collect()
}

/// The histogram stores one tree's growth needs, reusable by the next tree.
struct Stores {
    hist: HistStore,
    parent_hist: HistStore,
    single_hist: HistStore,
}

impl Stores {
    fn new(n_cols: usize, stride: usize) -> Stores {
        Stores {
            hist: HistStore::new(n_cols, stride),
            parent_hist: HistStore::new(n_cols, stride),
            single_hist: HistStore::new(1, stride),
        }
    }

    /// Zeroes every histogram a previous tree built.
    fn reset(&mut self) {
        self.hist.clear();
        self.parent_hist.clear();
        self.single_hist.clear();
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
                counts[rng.random_range(0..n_rows)] += 1.0;
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

/// Numbered histograms, by feature in a node's per-feature store: for every bin code,
/// the criterion slots and the number of rows, plus a bitmap of the occupied bins.
/// Only occupied bins are ever visited, which keeps small deep nodes cheap.
///
/// Slots are planar, `[slot][bin]`: clearing one bin is then `stride` scattered
/// stores, where the `[bin][slot]` layout would make it a `memset` call.
struct HistStore {
    stride: usize,
    slots: Vec<f64>,
    counts: Vec<u32>,
    occupied: Vec<[u64; 4]>,
    built: Vec<bool>,
    built_list: Vec<usize>,
}

/// A read-only view of one histogram.
#[derive(Clone, Copy)]
struct Hist<'a> {
    /// `slots[slot * N_BIN_CODES + bin]`.
    slots: &'a [f64],
    counts: &'a [u32],
    occupied: [u64; 4],
}

/// Indices of the set bits of a 256-bit bitmap, in increasing order.
fn set_bits(words: [u64; 4]) -> impl Iterator<Item = usize> {
    words.into_iter().enumerate().flat_map(|(w, mut bits)| {
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                // Below 256, which lets indexing a bin array skip its bounds check.
                usize::from((w * 64 + bit) as u8)
            })
        })
    })
}

fn count_bits(words: [u64; 4]) -> usize {
    words.iter().map(|w| w.count_ones() as usize).sum()
}

impl HistStore {
    fn new(n_histograms: usize, stride: usize) -> HistStore {
        HistStore {
            stride,
            slots: vec![0.0; n_histograms * N_BIN_CODES * stride],
            counts: vec![0; n_histograms * N_BIN_CODES],
            occupied: vec![[0; 4]; n_histograms],
            built: vec![false; n_histograms],
            built_list: Vec::new(),
        }
    }

    /// Slots and counts of histogram `index`.
    fn parts_mut(&mut self, index: usize) -> (&mut [f64], &mut [u32]) {
        let size = N_BIN_CODES * self.stride;
        (
            &mut self.slots[index * size..(index + 1) * size],
            &mut self.counts[index * N_BIN_CODES..(index + 1) * N_BIN_CODES],
        )
    }

    fn view(&self, index: usize) -> Hist<'_> {
        let size = N_BIN_CODES * self.stride;
        Hist {
            slots: &self.slots[index * size..(index + 1) * size],
            counts: &self.counts[index * N_BIN_CODES..(index + 1) * N_BIN_CODES],
            occupied: self.occupied[index],
        }
    }

    /// Zeroes every histogram built since the last clear.
    fn clear(&mut self) {
        let stride = self.stride;
        while let Some(index) = self.built_list.pop() {
            self.built[index] = false;
            let occupied = std::mem::take(&mut self.occupied[index]);
            let (slots, counts) = self.parts_mut(index);
            // Past a quarter of the bins, one bulk fill is cheaper than bin by bin.
            if count_bits(occupied) > N_BIN_CODES / 4 {
                slots.fill(0.0);
                counts.fill(0);
            } else {
                for bin in set_bits(occupied) {
                    for slot in 0..stride {
                        slots[slot * N_BIN_CODES + bin] = 0.0;
                    }
                    counts[bin] = 0;
                }
            }
        }
    }

    /// Adds `samples`, whose rows are `rows`, to the (cleared) histogram `index` over
    /// the bins of `column`.
    fn build<C: Criterion>(
        &mut self,
        index: usize,
        column: &[u8],
        rows: &[u32],
        samples: &[Sample<C::Target>],
        criterion: &C,
    ) {
        let (slots, counts) = self.parts_mut(index);
        for (&row, &sample) in rows.iter().zip(samples) {
            let bin = column[row as usize] as usize;
            let (slot, value) = criterion.slot_value(sample);
            counts[bin] += 1;
            slots[bin] += sample.weight;
            slots[slot * N_BIN_CODES + bin] += value;
        }
        // Marking bins inside the loop above would chain every iteration through one
        // bitmap word; a separate pass is cheaper: over the rows for small nodes, over
        // the bins for large ones.
        let mut occupied = [0; 4];
        if rows.len() < N_BIN_CODES / 4 {
            for &row in rows {
                let bin = column[row as usize] as usize;
                occupied[bin >> 6] |= 1 << (bin & 63);
            }
        } else {
            for (bin, &count) in counts.iter().enumerate() {
                occupied[bin >> 6] |= u64::from(count != 0) << (bin & 63);
            }
        }
        self.occupied[index] = occupied;
        self.built[index] = true;
        self.built_list.push(index);
    }

    /// Turns histogram `index`, built on a node's smaller sibling, into the node's own:
    /// the parent's histogram `parent_index` minus the sibling's.
    fn subtract_from(&mut self, index: usize, parent: &HistStore, parent_index: usize) {
        let stride = self.stride;
        let parent_view = parent.view(parent_index);
        let (slots, counts) = self.parts_mut(index);
        let mut occupied = [0; 4];
        // The sibling's bins are a subset of the parent's, so this visits all of them.
        for bin in set_bits(parent_view.occupied) {
            counts[bin] = parent_view.counts[bin] - counts[bin];
            for at in (0..stride).map(|slot| slot * N_BIN_CODES + bin) {
                // Exactly zero when the node has no row there, not a rounding residue.
                slots[at] = if counts[bin] == 0 { 0.0 } else { parent_view.slots[at] - slots[at] };
            }
            if counts[bin] != 0 {
                occupied[bin >> 6] |= 1 << (bin & 63);
            }
        }
        self.occupied[index] = occupied;
    }
}

/// Buffers reused by every split scan of a tree.
struct Scratch {
    /// Statistics of the node (all bins of the scanned feature).
    total: Vec<f64>,
    /// Statistics of the node's rows with a missing value.
    missing: Vec<f64>,
    /// Per candidate threshold (an occupied bin, observed values up to it going left):
    /// the bin, the rows left of it, the statistics left of it, its score.
    bins: Vec<u8>,
    n_left: Vec<usize>,
    left: Vec<f64>,
    scores: Vec<f64>,
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
    single_hist: HistStore,
    feature_order: Vec<usize>,
    /// Arena of bitsets of constant features, one word per 64 features; see `Task`.
    constant_sets: Vec<u64>,
    scratch: Scratch,
    totals: Vec<f64>,
    tree: Tree,
}

impl<'a, C: Criterion> Grower<'a, C> {
    fn new(
        x: &'a BinnedMatrix,
        criterion: &'a C,
        limits: &'a Limits,
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
            single_hist: stores.single_hist,
            feature_order: (0..x.n_cols).collect(),
            constant_sets: vec![0; x.n_cols.div_ceil(64)],
            scratch: Scratch {
                total: vec![0.0; stride],
                missing: vec![0.0; stride],
                bins: Vec::with_capacity(MAX_VALUE_BINS),
                n_left: Vec::with_capacity(MAX_VALUE_BINS),
                left: Vec::with_capacity(MAX_VALUE_BINS * stride),
                scores: Vec::with_capacity(MAX_VALUE_BINS),
            },
            totals: vec![0.0; stride],
            tree: Tree { nodes: vec![Node::Leaf { output: 0 }], outputs: Vec::new(), importances: vec![0.0; x.n_cols] },
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
        while let Some(task) = stack.pop() {
            self.grow_node(task, &mut stack);
        }
        (self.tree, Stores { hist: self.hist, parent_hist: self.parent_hist, single_hist: self.single_hist })
    }

    fn grow_node(&mut self, mut task: Task, stack: &mut Vec<Task>) {
        let samples = &self.samples[task.rows.clone()];
        node_totals(self.criterion, samples, &mut self.totals);
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
            self.tree.nodes[task.node] = Node::Leaf { output };
            return;
        };

        let n_left = partition(
            &mut self.rows[task.rows.clone()],
            &mut self.samples[task.rows.clone()],
            self.x.column(split.feature),
            &split,
        );
        self.tree.importances[split.feature] += weighted_impurity;
        let left = self.tree.nodes.len();
        self.tree.nodes.extend([Node::Leaf { output: 0 }; 2]);
        self.tree.nodes[task.node] = Node::Split {
            feature: split.feature as u32,
            threshold: split.threshold,
            missing_left: split.missing_left,
            left: left as u32,
            right: left as u32 + 1,
        };

        let middle = task.rows.start + n_left;
        let mut children = [(task.rows.start..middle, left), (middle..task.rows.end, left + 1)];
        // Smaller child first on the stack, so the larger one is grown next and can
        // subtract the smaller one's histograms from this node's.
        children.sort_by_key(|(rows, _)| rows.len());
        let [(small_rows, small_node), (large_rows, large_node)] = children;
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
        self.hist.clear();
        let keep = node.0.len() > 2 * N_BIN_CODES;
        let n_features = self.feature_order.len();
        let mut best = None;
        let mut drawn = 0;
        let mut varying = 0;
        while drawn < n_features && (drawn < self.limits.max_features || varying == 0) {
            let pick = self.rng.random_range(drawn..n_features);
            self.feature_order.swap(drawn, pick);
            let feature = self.feature_order[drawn];
            drawn += 1;
            let (word, bit) = (feature / 64, 1 << (feature % 64));
            if self.constant_sets[*constant + word] & bit != 0 {
                continue;
            }
            let column = self.x.column(feature);
            // Only a node large enough for its children to subtract from keeps one
            // histogram per feature; smaller ones reuse a single one, which stays in cache.
            let (store, index) = if keep { (&mut self.hist, feature) } else { (&mut self.single_hist, 0) };
            match sibling {
                // Subtraction costs a pass over the sibling's rows and one over the
                // parent's occupied bins; it only pays when that is less than a pass over
                // this node's rows.
                Some((rows, samples))
                    if self.parent_hist.built[feature]
                        && rows.len() + count_bits(self.parent_hist.occupied[feature]) < node.0.len() =>
                {
                    store.build(index, column, rows, samples, self.criterion);
                    store.subtract_from(index, &self.parent_hist, feature);
                }
                _ => store.build(index, column, node.0, node.1, self.criterion),
            }
            let varies = scan_feature(
                self.criterion,
                store.view(index),
                feature,
                self.limits.min_samples_leaf,
                &mut self.scratch,
                &mut best,
            );
            if !keep {
                store.clear();
            }
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

/// Scores every threshold of one feature's histogram, in both missing-value directions
/// when the node has missing values, and updates `best` with any strictly better split
/// leaving at least `min_leaf` rows on each side. Returns false if the feature is
/// constant in the node (one occupied bin, the missing bin included), which makes it
/// a known constant for the node's descendants.
fn scan_feature(
    criterion: &impl Criterion,
    hist: Hist<'_>,
    feature: usize,
    min_leaf: usize,
    scratch: &mut Scratch,
    best: &mut Option<Split>,
) -> bool {
    let missing = MISSING_BIN as usize;
    let n_missing = hist.counts[missing] as usize;
    let mut value_bins = hist.occupied;
    value_bins[missing / 64] &= !(1 << (missing % 64));
    let n_value_bins = count_bits(value_bins);
    if n_value_bins + usize::from(n_missing > 0) <= 1 {
        return false;
    }

    // Gather the left statistics of every threshold first and score them all in one
    // tight loop: the scores are independent, so the CPU can overlap their divisions.
    let stride = criterion.stride();
    let Scratch { total, missing: missing_slots, bins, n_left, left, scores } = scratch;
    bins.resize(n_value_bins, 0);
    n_left.resize(n_value_bins, 0);
    left.resize(n_value_bins * stride, 0.0);
    let mut count = 0;
    for ((bin, threshold), n_left) in set_bits(value_bins).zip(bins.iter_mut()).zip(n_left.iter_mut()) {
        count += hist.counts[bin] as usize;
        *threshold = bin as u8;
        *n_left = count;
    }
    running_totals(hist.slots, bins, total, left);
    for (slot, (total, missing_slot)) in total.iter_mut().zip(missing_slots.iter_mut()).enumerate() {
        *missing_slot = hist.slots[slot * N_BIN_CODES + missing];
        *total += *missing_slot;
    }
    let n_node = count + n_missing;
    scores.resize(n_value_bins, 0.0);

    let best_before = best.map_or(f64::NEG_INFINITY, |b| b.score);
    // Missing values right. The last threshold sends all observed values left, which is
    // only a split when there are missing values; the row counts rule it out otherwise.
    criterion.split_scores(left, total, scores);
    let (mut best_score, mut best_index) = best_valid(scores, n_left, 0, n_node, min_leaf, best_before);
    let mut missing_left = false;
    if n_missing > 0 {
        // Missing values left.
        for left in left.chunks_exact_mut(stride) {
            add_slots(left, missing_slots);
        }
        criterion.split_scores(left, total, scores);
        let (score, index) = best_valid(scores, n_left, n_missing, n_node, min_leaf, best_score);
        if index.is_some() {
            (best_score, best_index, missing_left) = (score, index, true);
        }
    } else if let Some(i) = best_index {
        // Without missing values in training, missing values at prediction time follow
        // the majority of the node's rows, as in scikit-learn.
        missing_left = n_left[i] > n_node - n_left[i];
    }
    if let Some(i) = best_index {
        // Bins no training row of the node fell in are split halfway, as scikit-learn
        // puts its threshold halfway between two values. After the last observed bin
        // (missing values alone on the right) every observed bin goes left.
        let threshold = match bins.get(i + 1) {
            Some(&next) => bins[i] + (next - bins[i]) / 2,
            None => MISSING_BIN - 1,
        };
        *best = Some(Split { feature, threshold, missing_left, score: best_score });
    }
    true
}

/// The first threshold whose score beats `to_beat` and every threshold before it,
/// among those leaving `min_leaf` rows on each side; `n_left` excludes `extra_left`
/// rows that also go left. Returns the best score and that threshold, if any.
fn best_valid(
    scores: &[f64],
    n_left: &[usize],
    extra_left: usize,
    n_node: usize,
    min_leaf: usize,
    to_beat: f64,
) -> (f64, Option<usize>) {
    let (mut best_score, mut best_index) = (to_beat, usize::MAX);
    for (i, (&score, &n_left)) in scores.iter().zip(n_left).enumerate() {
        let n_left = n_left + extra_left;
        let better = n_left >= min_leaf && n_node - n_left >= min_leaf && score > best_score;
        // Selects rather than branches: new bests come at unpredictable thresholds.
        best_score = if better { score } else { best_score };
        best_index = if better { i } else { best_index };
    }
    (best_score, (best_index != usize::MAX).then_some(best_index))
}

/// Sums the samples' slots into `totals`.
fn node_totals<C: Criterion>(criterion: &C, samples: &[Sample<C::Target>], totals: &mut [f64]) {
    // As in `running_totals`, a fixed stride keeps the sums in registers.
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

/// Writes the running totals of the histogram's slots over `bins`, in order, to `left`
/// (`stride` values per bin) and the last of them to `total`.
fn running_totals(slots: &[f64], bins: &[u8], total: &mut [f64], left: &mut [f64]) {
    let (planes, _) = slots.as_chunks::<N_BIN_CODES>();
    // A fixed stride keeps the running totals in registers; through memory, each bin
    // would wait for the previous one's store.
    match planes.len() {
        2 => running_totals_of::<2>(planes, bins, total, left),
        3 => running_totals_of::<3>(planes, bins, total, left),
        4 => running_totals_of::<4>(planes, bins, total, left),
        5 => running_totals_of::<5>(planes, bins, total, left),
        6 => running_totals_of::<6>(planes, bins, total, left),
        7 => running_totals_of::<7>(planes, bins, total, left),
        8 => running_totals_of::<8>(planes, bins, total, left),
        stride => {
            total.fill(0.0);
            for (&bin, left) in bins.iter().zip(left.chunks_exact_mut(stride)) {
                for ((total, left), plane) in total.iter_mut().zip(left).zip(planes) {
                    *total += plane[usize::from(bin)];
                    *left = *total;
                }
            }
        }
    }
}

fn running_totals_of<const STRIDE: usize>(
    planes: &[[f64; N_BIN_CODES]],
    bins: &[u8],
    total: &mut [f64],
    left: &mut [f64],
) {
    let planes: &[[f64; N_BIN_CODES]; STRIDE] = planes.try_into().expect("STRIDE planes");
    let mut running = [0.0; STRIDE];
    for (&bin, left) in bins.iter().zip(left.as_chunks_mut::<STRIDE>().0) {
        for slot in 0..STRIDE {
            running[slot] += planes[slot][usize::from(bin)];
        }
        *left = running;
    }
    total.copy_from_slice(&running);
}

fn add_slots(into: &mut [f64], slots: &[f64]) {
    into.iter_mut().zip(slots).for_each(|(a, b)| *a += b);
}

/// Moves the rows (and their samples) that `split` sends left to the front; returns
/// how many there are.
fn partition<T>(rows: &mut [u32], samples: &mut [Sample<T>], column: &[u8], split: &Split) -> usize {
    let (mut i, mut j) = (0, rows.len());
    while i < j {
        if goes_left(column[rows[i] as usize], split.threshold, split.missing_left) {
            i += 1;
        } else {
            j -= 1;
            rows.swap(i, j);
            samples.swap(i, j);
        }
    }
    i
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
                let Node::Split { feature, threshold, missing_left, .. } = tree.nodes[0] else {
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
        let mut parent = HistStore::new(1, 4);
        parent.build(0, binned.column(0), &rows, &samples, &criterion);
        let mut derived = HistStore::new(1, 4);
        derived.build(0, binned.column(0), &rows[..small], &samples[..small], &criterion);
        derived.subtract_from(0, &parent, 0);
        let mut direct = HistStore::new(1, 4);
        direct.build(0, binned.column(0), &rows[large.clone()], &samples[large], &criterion);
        let (derived, direct) = (derived.view(0), direct.view(0));
        assert_eq!(derived.occupied, direct.occupied);
        assert_eq!(derived.counts, direct.counts);
        assert_eq!(derived.slots, direct.slots);
    }
}
