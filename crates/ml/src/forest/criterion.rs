//! Split criteria: Gini for classes, squared error for numbers, and the one-pass
//! scans that score every boundary between a feature's occupied bins.

/// One in-bag row as a tree sees it. Samples sit in a buffer parallel to the row
/// indices and are partitioned with them, so a node reads its samples sequentially.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sample<T> {
    pub(super) weight: f64,
    pub(super) target: T,
}

/// What a tree learns and how it measures impurity. A node's statistics are `stride`
/// f64 slots; slot 0 is always the total weight.
pub(super) trait Criterion: Sync {
    /// What a tree learns per row: a class index or a number.
    type Target: Copy + Send;
    /// Whether slot 0 (the weight) is the sum of the other slots, so that histograms
    /// need not accumulate it.
    const WEIGHT_IS_SUM: bool;
    /// Whether every slot a sample adds to is a sum of weights, so that with integer
    /// weights every statistic is an exact integer whatever order rows are added in.
    const EXACT_SUMS: bool;
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
pub(super) struct Gini<'a> {
    pub(super) y: &'a [u32],
    pub(super) n_classes: usize,
}

impl Criterion for Gini<'_> {
    type Target = u32;
    const WEIGHT_IS_SUM: bool = true;
    const EXACT_SUMS: bool = true;

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
pub(super) struct SquaredError<'a> {
    pub(super) y: &'a [f64],
}

impl Criterion for SquaredError<'_> {
    type Target = f64;
    const WEIGHT_IS_SUM: bool = false;
    const EXACT_SUMS: bool = false;

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
pub(super) trait Scan: Default {
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
/// the best so far is told without the division (the scan's slowest instruction).
#[derive(Clone, Copy)]
pub(super) struct Score {
    pub(super) num: f64,
    pub(super) den: f64,
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
    pub(super) fn above(self, best: f64) -> Option<f64> {
        if best > 0.0 && self.den > 0.0 && self.num < best * self.den * (1.0 - 1e-12) {
            return None;
        }
        let score = self.num / self.den;
        (score > best).then_some(score)
    }
}

/// `sum_k left_k^2 / w_left + sum_k right_k^2 / w_right`, over one division.
pub(super) fn gini_score(left_squares: f64, w_left: f64, right_squares: f64, w_right: f64) -> Score {
    Score { num: left_squares * w_right + right_squares * w_left, den: w_left * w_right }
}

/// [`Scan`] for [`Gini`]. With `l`, `o`, `m` the per-class weights of the left child,
/// the observed rows and the missing rows, both children's sums of squared class
/// weights follow from `sum l^2`, `sum l*o` and `sum l*m`, each updated in O(1) per row.
/// With integer weights every sum is an exact integer, so scores do not depend on the
/// order rows are added in.
#[derive(Default)]
pub(super) struct GiniScan {
    /// `[weight, weight of class 0, ...]` of the node, the observed rows and the
    /// missing rows; the left child's class weights (slot 0 unused).
    pub(super) node: Vec<f64>,
    pub(super) observed: Vec<f64>,
    pub(super) missing: Vec<f64>,
    pub(super) left: Vec<f64>,
    pub(super) has_missing: bool,
    /// `sum (o+m)^2` (the node's), `sum o^2`, `sum m^2`.
    pub(super) node_squares: f64,
    pub(super) observed_squares: f64,
    pub(super) missing_squares: f64,
}

/// [`Scan::Sums`] of [`GiniScan`]: the left weight, `sum l^2`, `sum l*o`, `sum l*m`.
#[derive(Clone, Copy, Default)]
pub(super) struct GiniSums {
    pub(super) weight: f64,
    pub(super) squares: f64,
    pub(super) observed: f64,
    pub(super) missing: f64,
}

impl GiniScan {
    #[inline(always)]
    pub(super) fn add_class(&mut self, sums: &mut GiniSums, class: usize, weight: f64) {
        let left = &mut self.left[1 + class];
        sums.squares += weight * (2.0 * *left + weight);
        sums.observed += weight * self.observed[1 + class];
        if self.has_missing {
            sums.missing += weight * self.missing[1 + class];
        }
        *left += weight;
    }
}

pub(super) fn squares(slots: &[f64]) -> f64 {
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
pub(super) struct SquaredErrorScan {
    pub(super) node: [f64; 2],
    pub(super) observed: [f64; 2],
    pub(super) missing: [f64; 2],
}

/// `sum_left^2 / w_left + sum_right^2 / w_right`, over one division.
pub(super) fn squared_error_score([w_left, sum_left]: [f64; 2], [w_right, sum_right]: [f64; 2]) -> Score {
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
