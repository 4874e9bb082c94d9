//! Binning: a fold's f64 columns cut once into u8 bin codes (the training fold's
//! thresholds), column-major, missing values in their own bin.

use super::*;

/// A dense row-major matrix of features; NaN marks a missing value.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub(super) n_rows: usize,
    pub(super) n_cols: usize,
    pub(super) data: Vec<f64>,
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
    pub(super) thresholds: Vec<Vec<f64>>,
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
pub(super) const COLUMN_BLOCK: usize = 8;

/// Thresholds for one column's values (NaN skipped); see [`Binner::fit`].
pub(super) fn column_thresholds(mut sorted: Vec<f64>) -> Vec<f64> {
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
pub(super) fn midpoint(lo: f64, hi: f64) -> f64 {
    let mid = lo / 2.0 + hi / 2.0;
    if lo <= mid && mid < hi { mid } else { lo }
}

pub(super) fn bin_of(thresholds: &[f64], value: f64) -> u8 {
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
    pub(super) n_rows: usize,
    pub(super) n_cols: usize,
    pub(super) bins: Vec<u8>,
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

    pub(super) fn column_mut(&mut self, j: usize) -> &mut [u8] {
        &mut self.bins[j * self.n_rows..(j + 1) * self.n_rows]
    }
}
