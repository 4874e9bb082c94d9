//! The linear probe of AFLite: multinomial logistic regression
//! (`linfa-logistic`, L-BFGS) on standardized features.
//!
//! linfa-logistic converges in at most 50 L-BFGS iterations on ScienceQA-sized
//! groups, which keeps AFLite's 64 partitions a round at a few seconds; it is
//! seeded by nothing (a deterministic optimizer), so equal inputs give equal
//! predictions.

use linfa::prelude::*;
use linfa_logistic::MultiLogisticRegression;
use ndarray::{Array1, Array2};

use crate::forest::Matrix;

/// Column means and standard deviations of training rows (NaN ignored).
struct Scaler {
    mean: Vec<f64>,
    scale: Vec<f64>,
}

impl Scaler {
    fn fit(x: &Matrix) -> Scaler {
        let d = x.n_cols();
        let (mut sum, mut sq, mut n) = (vec![0.0; d], vec![0.0; d], vec![0usize; d]);
        for i in 0..x.n_rows() {
            for (j, &v) in x.row(i).iter().enumerate() {
                if v.is_finite() {
                    sum[j] += v;
                    sq[j] += v * v;
                    n[j] += 1;
                }
            }
        }
        let mean: Vec<f64> = (0..d).map(|j| if n[j] > 0 { sum[j] / n[j] as f64 } else { 0.0 }).collect();
        let scale = (0..d)
            .map(|j| {
                let var = if n[j] > 0 { (sq[j] / n[j] as f64 - mean[j] * mean[j]).max(0.0) } else { 0.0 };
                if var > 1e-12 { var.sqrt() } else { 0.0 }
            })
            .collect();
        Scaler { mean, scale }
    }

    /// Standardized rows; missing values and constant columns become 0 (the mean).
    fn transform(&self, x: &Matrix) -> Array2<f64> {
        Array2::from_shape_fn((x.n_rows(), x.n_cols()), |(i, j)| {
            let v = x.get(i, j);
            if v.is_finite() && self.scale[j] > 0.0 { (v - self.mean[j]) / self.scale[j] } else { 0.0 }
        })
    }
}

/// Fits a logistic regression on `(x_train, labels)` and predicts the class
/// of each row of `x_test`. With a single training class, predicts it.
pub fn fit_predict(x_train: &Matrix, labels: &[u32], x_test: &Matrix) -> Vec<u32> {
    let first = labels.first().copied().unwrap_or(0);
    if labels.iter().all(|&l| l == first) || x_test.n_rows() == 0 {
        return vec![first; x_test.n_rows()];
    }
    let scaler = Scaler::fit(x_train);
    let train = Dataset::new(scaler.transform(x_train), Array1::from_iter(labels.iter().copied()));
    // sklearn's default C = 1 as an L2 penalty per sample.
    let fitted = MultiLogisticRegression::default().alpha(1.0 / labels.len() as f64).max_iterations(50).fit(&train);
    match fitted {
        Ok(model) => model.predict(&scaler.transform(x_test)).to_vec(),
        // The optimizer gave up (degenerate data): fall back to the majority class.
        Err(_) => vec![majority(labels); x_test.n_rows()],
    }
}

fn majority(labels: &[u32]) -> u32 {
    let mut counts: std::collections::BTreeMap<u32, usize> = std::collections::BTreeMap::new();
    for &l in labels {
        *counts.entry(l).or_default() += 1;
    }
    counts.into_iter().max_by_key(|&(l, c)| (c, std::cmp::Reverse(l))).map_or(0, |(l, _)| l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separable_classes_are_learned() {
        // Class = which of three columns is largest, plus a constant and a NaN column.
        let mut data = Vec::new();
        let mut labels = Vec::new();
        for i in 0..300 {
            let c = i % 3;
            let mut row = [0.0, 0.0, 0.0, 7.0, f64::NAN];
            row[c] = 1.0 + (i % 7) as f64 / 10.0;
            data.extend_from_slice(&row);
            labels.push(c as u32);
        }
        let x = Matrix::new(300, 5, data);
        let pred = fit_predict(&x, &labels, &x);
        let acc = pred.iter().zip(&labels).filter(|(a, b)| a == b).count();
        assert!(acc >= 295, "{acc}/300");
    }

    #[test]
    fn one_class_predicts_it() {
        let x = Matrix::new(3, 1, vec![1.0, 2.0, 3.0]);
        assert_eq!(fit_predict(&x, &[2, 2, 2], &x), vec![2, 2, 2]);
    }
}
