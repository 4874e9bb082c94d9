//! The fitted forests: classifier and regressor, their parameters, prediction,
//! impurity and permutation importances.

use super::*;

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
    pub(super) fn resolve(self, n_features: usize) -> usize {
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
    pub(super) trees: Vec<Tree>,
    pub(super) n_classes: usize,
    pub(super) n_features: usize,
    pub(super) importances: Vec<f64>,
}

/// A fitted regression forest.
#[derive(Debug, Clone)]
pub struct RegressorForest {
    pub(super) trees: Vec<Tree>,
    pub(super) n_features: usize,
    pub(super) importances: Vec<f64>,
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
    check_labels(x, y, n_classes);
    let criterion = Gini { y, n_classes };
    let trees = grow_forest(x, &criterion, sample_weight, params);
    ClassifierForest {
        importances: mean_decrease_in_impurity(split_importances(&trees), x.n_cols),
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
    RegressorForest {
        importances: mean_decrease_in_impurity(split_importances(&trees), x.n_cols),
        trees,
        n_features: x.n_cols,
    }
}

/// A forest's predictions on held-out rows and its feature importances, from a fit
/// that sent those rows down each tree as it grew ([`fit_classifier_scored`],
/// [`fit_regressor_scored`]). The predictions are bit for bit those of fitting, then
/// predicting; the trees are not kept.
#[derive(Debug, Clone)]
pub struct Scored {
    /// What `predict_proba` (classifier, row-major) or `predict` (regressor) returns.
    pub predictions: Vec<f64>,
    /// What `feature_importances` returns.
    pub importances: Vec<f64>,
    /// When asked for `first` trees (`0 < first < n_trees`): the predictions of the
    /// forest of the first `first` trees alone, bit for bit those of a fit with
    /// `n_trees = first` (a tree's draws depend on the seed and its index only);
    /// empty otherwise.
    pub first: Vec<f64>,
}

/// [`fit_classifier`] and [`ClassifierForest::predict_proba`] on `held_out` in one pass;
/// with `0 < first < n_trees`, also the first `first` trees' ([`Scored::first`]).
///
/// # Panics
/// As [`fit_classifier`], and if `held_out` does not have the columns of `x`.
pub fn fit_classifier_scored(
    x: &BinnedMatrix,
    y: &[u32],
    n_classes: usize,
    sample_weight: Option<&[f64]>,
    params: &ForestParams,
    held_out: &BinnedMatrix,
    first: usize,
) -> Scored {
    check_labels(x, y, n_classes);
    // A forest without trees predicts the uniform distribution.
    let uniform = 1.0 / n_classes as f64;
    scored(x, &Gini { y, n_classes }, sample_weight, params, (held_out, first), n_classes, uniform)
}

/// [`fit_regressor`] and [`RegressorForest::predict`] on `held_out` in one pass; with
/// `0 < first < n_trees`, also the first `first` trees' ([`Scored::first`]).
///
/// # Panics
/// As [`fit_regressor`], and if `held_out` does not have the columns of `x`.
pub fn fit_regressor_scored(
    x: &BinnedMatrix,
    y: &[f64],
    sample_weight: Option<&[f64]>,
    params: &ForestParams,
    held_out: &BinnedMatrix,
    first: usize,
) -> Scored {
    assert_eq!(y.len(), x.n_rows, "fit_regressor: {} targets for {} rows", y.len(), x.n_rows);
    scored(x, &SquaredError { y }, sample_weight, params, (held_out, first), 1, 0.0)
}

/// Panics unless `y` has one label per row of `x`, each below `n_classes`.
fn check_labels(x: &BinnedMatrix, y: &[u32], n_classes: usize) {
    assert_eq!(y.len(), x.n_rows, "fit_classifier: {} labels for {} rows", y.len(), x.n_rows);
    if let Some(bad) = y.iter().find(|&&label| label as usize >= n_classes) {
        panic!("fit_classifier: label {bad} is not below n_classes = {n_classes}");
    }
}

/// The forest of `criterion` with `held_out` routed down its trees: `width` outputs
/// per held-out row, `empty` each when the forest has no trees.
///
/// Each tree is reduced to its held-out rows' outputs as soon as it is grown and added
/// to the sums once every tree before it is (see [`TreeOrderSums`]), so the fit keeps
/// a few trees at a time, not the forest (trees of large folds are megabytes each).
fn scored<C: Criterion>(
    x: &BinnedMatrix,
    criterion: &C,
    sample_weight: Option<&[f64]>,
    params: &ForestParams,
    (held_out, first): (&BinnedMatrix, usize),
    width: usize,
    empty: f64,
) -> Scored {
    check_columns(held_out, x.n_cols);
    let mut sums = TreeOrderSums::new(held_out.n_rows, width, params.n_trees);
    if first > 0 && first < params.n_trees {
        sums.first = first;
    }
    let sums = std::sync::Mutex::new(sums);
    grow_each(x, criterion, sample_weight, params, Speedups::ALL, Some(held_out), |index, tree, leaves| {
        let importances = (tree.nodes.len() > 1).then_some(tree.importances);
        let add = |sums: &mut TreeOrderSums| sums.add(index, &tree.outputs, &leaves, importances);
        add(&mut sums.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    });
    let sums = sums.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    let importances = mean_decrease_in_impurity(sums.importances.iter().flatten().map(Vec::as_slice), x.n_cols);
    let mean = |mut sums: Vec<f64>, n_trees: usize| {
        sums.iter_mut().for_each(|p| *p /= n_trees as f64);
        sums
    };
    let first = if sums.first > 0 { mean(sums.first_sums, sums.first) } else { Vec::new() };
    let predictions =
        if params.n_trees == 0 { vec![empty; held_out.n_rows * width] } else { mean(sums.sums, params.n_trees) };
    Scored { importances, predictions, first }
}

/// Per held-out row, its leaf outputs summed over the trees in tree order (as
/// [`sum_over_trees`] sums them) while trees arrive in any order: a tree that comes
/// before its predecessors waits as its rows' outputs (`width` values a row), and
/// is added when they are.
pub(super) struct TreeOrderSums {
    width: usize,
    /// Index of the next tree to add.
    next: usize,
    pub(super) sums: Vec<f64>,
    /// Trees grown ahead of `next`: their rows' outputs, row-major.
    pub(super) waiting: std::collections::BTreeMap<usize, Vec<f64>>,
    /// Most trees that waited at once.
    pub(super) most_waiting: usize,
    /// Per tree, its unnormalised importances if it split at all.
    pub(super) importances: Vec<Option<Vec<f64>>>,
    /// With `first` above 0: `sums` as they stood once the first `first` trees were in.
    pub(super) first: usize,
    pub(super) first_sums: Vec<f64>,
}

impl TreeOrderSums {
    pub(super) fn new(n_rows: usize, width: usize, n_trees: usize) -> Self {
        TreeOrderSums {
            width,
            next: 0,
            sums: vec![0.0; n_rows * width],
            waiting: std::collections::BTreeMap::new(),
            most_waiting: 0,
            importances: vec![None; n_trees],
            first: 0,
            first_sums: Vec::new(),
        }
    }

    /// Adds tree `index`, whose leaf outputs are `outputs` and whose held-out row `i`
    /// reached the leaf at offset `leaves[i]`.
    pub(super) fn add(&mut self, index: usize, outputs: &[f64], leaves: &[u32], importances: Option<Vec<f64>>) {
        self.importances[index] = importances;
        let width = self.width;
        if index != self.next {
            let mut rows = vec![0.0; leaves.len() * width];
            for (row, &leaf) in rows.chunks_exact_mut(width.max(1)).zip(leaves) {
                row.copy_from_slice(&outputs[leaf as usize..][..width]);
            }
            self.waiting.insert(index, rows);
            self.most_waiting = self.most_waiting.max(self.waiting.len());
            return;
        }
        for (row_sums, &leaf) in self.sums.chunks_exact_mut(width.max(1)).zip(leaves) {
            let outputs = &outputs[leaf as usize..][..width];
            row_sums.iter_mut().zip(outputs).for_each(|(sum, v)| *sum += v);
        }
        self.advance();
        while let Some(rows) = self.waiting.remove(&self.next) {
            self.sums.iter_mut().zip(&rows).for_each(|(sum, v)| *sum += v);
            self.advance();
        }
    }

    /// One more tree is in the sums.
    fn advance(&mut self) {
        self.next += 1;
        if self.next == self.first {
            self.first_sums = self.sums.clone();
        }
    }
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

pub(super) fn check_columns(x: &BinnedMatrix, n_features: usize) {
    assert_eq!(x.n_cols, n_features, "the forest was fit on {n_features} columns, the matrix has {}", x.n_cols);
}

pub(super) fn mean_or_zero(total: f64, n: usize) -> f64 {
    if n == 0 { 0.0 } else { total / n as f64 }
}

/// Scores `x` once as is, then `n_repeats` times per column with that column shuffled.
/// Each column has its own seeded RNG, so the result does not depend on scheduling.
pub(super) fn permutation_importance(
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
pub(super) fn sum_over_trees(trees: &[Tree], x: &BinnedMatrix, width: usize) -> Vec<f64> {
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
/// feature normalised to sum 1, averaged over the trees that split at all (their
/// unnormalised decreases, in tree order), normalised.
pub(super) fn mean_decrease_in_impurity<'t>(
    split_trees: impl IntoIterator<Item = &'t [f64]>,
    n_features: usize,
) -> Vec<f64> {
    let mut importances = vec![0.0; n_features];
    for tree in split_trees {
        let total: f64 = tree.iter().sum();
        if total > 0.0 {
            for (sum, decrease) in importances.iter_mut().zip(tree) {
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

/// The unnormalised importances of the trees that split at all, in tree order.
pub(super) fn split_importances(trees: &[Tree]) -> impl Iterator<Item = &[f64]> {
    trees.iter().filter(|tree| tree.nodes.len() > 1).map(|tree| &tree.importances[..])
}

/// splitmix64's finaliser: a cheap bijective mix of 64 bits.
pub(super) fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Seed of the stream numbered `index` under `seed` (a tree, a permuted column).
pub(super) fn mix(seed: u64, index: u64) -> u64 {
    splitmix64(seed ^ splitmix64(index))
}
