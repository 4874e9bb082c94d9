//! Random forests: the TsT-RF engine of the diagnose stage.
//!
//! `diagnose` runs "train on the test set": for every cross-validation fold it fits a
//! forest on the non-visual features of the training folds and scores the held-out
//! fold with it. This module is that forest and nothing else; folds, features and
//! scores live next to it in `crates/diagnose/src/`.
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
//! TsT release uses them (`docs/tst-protocol.md`, "Forest"): bootstrap samples, a fresh
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
//! with O(1) work each (`Scan`), both missing-value directions at once. A large node's
//! larger child gets a histogram by subtracting its sibling's from the parent's, and a
//! child's statistics are its parent's split sums, exact with integer (bootstrap)
//! weights; with such weights a large node also builds its histograms in two halves
//! (alternate rows) so that rows of one bin do not wait on each other. A subtree of at
//! most `LOCAL_ROWS` rows renumbers its rows and copies the columns it reads, so that
//! its bin reads stay in cache. [`fit_classifier_scored`] and [`fit_regressor_scored`]
//! send held-out rows down each tree as it grows, instead of walking the finished trees.
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

/// Largest node whose subtree is grown on local rows (see `grow::Local`). No larger
/// than the nodes that keep histograms (`2 * N_BIN_CODES` rows), so that no node of a
/// local subtree subtracts a sibling outside it.
const LOCAL_ROWS: usize = 2 * N_BIN_CODES;

/// Rows per bin above which a histogram is built as two halves (see `build_hist`).
const PAIRED_ROWS_PER_BIN: usize = 8;

/// Rows that go down a tree together; see `sum_over_trees`. Divides `PREDICT_CHUNK`.
const PREDICT_GROUP: usize = 8;

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

mod binning;
mod criterion;
mod grow;
mod histogram;
mod model;
#[cfg(test)]
mod tests;
mod tree;

pub use binning::*;
use criterion::*;
use grow::*;
use histogram::*;
pub use model::*;
use tree::*;
