//! Linear models on standardised features: AFLite's probe, a multinomial
//! logistic regression (`linfa-logistic`, L-BFGS), and TsT-Embed's, a
//! conditional logit over candidates (which linfa does not fit), sharing one
//! [`Standardiser`].
//!
//! linfa-logistic converges in at most 50 L-BFGS iterations on ScienceQA-sized
//! groups, which keeps AFLite's 64 partitions a round at a few seconds; it is
//! seeded by nothing (a deterministic optimizer), so equal inputs give equal
//! predictions.

use linfa::prelude::*;
use linfa_logistic::MultiLogisticRegression;
use ndarray::{Array1, Array2};

use crate::forest::Matrix;
use crate::pca::dot64;

/// Column means and standard deviations of training rows (NaN ignored): the
/// one standardiser of both linear models. A missing value, and any value of a
/// column constant in training, standardises to 0 (the mean).
pub struct Standardiser {
    mean: Vec<f64>,
    scale: Vec<f64>,
}

impl Standardiser {
    /// Fits `d` columns on `rows`, in the order given.
    pub fn fit<'a>(rows: impl IntoIterator<Item = &'a [f64]>, d: usize) -> Standardiser {
        let (mut sum, mut sq, mut n) = (vec![0.0; d], vec![0.0; d], vec![0usize; d]);
        for row in rows {
            for (j, &v) in row.iter().enumerate().take(d) {
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
        Standardiser { mean, scale }
    }

    /// Value `v` of column `j`, standardised.
    pub fn value(&self, j: usize, v: f64) -> f64 {
        if v.is_finite() && self.scale[j] > 0.0 { (v - self.mean[j]) / self.scale[j] } else { 0.0 }
    }

    /// A row, standardised.
    pub fn standardise(&self, row: &[f64]) -> Vec<f64> {
        row.iter().enumerate().map(|(j, &v)| self.value(j, v)).collect()
    }

    /// Rows of a matrix, standardised.
    fn transform(&self, x: &Matrix) -> Array2<f64> {
        Array2::from_shape_fn((x.n_rows(), x.n_cols()), |(i, j)| self.value(j, x.get(i, j)))
    }
}

/// Fits a logistic regression on `(x_train, labels)` and predicts the class
/// of each row of `x_test`. With a single training class, predicts it.
pub fn fit_predict(x_train: &Matrix, labels: &[u32], x_test: &Matrix) -> Vec<u32> {
    let first = labels.first().copied().unwrap_or(0);
    if labels.iter().all(|&l| l == first) || x_test.n_rows() == 0 {
        return vec![first; x_test.n_rows()];
    }
    let scaler = Standardiser::fit((0..x_train.n_rows()).map(|i| x_train.row(i)), x_train.n_cols());
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

/// One question's candidates: a feature row per candidate, and the gold's position.
pub struct Item {
    /// One feature row per candidate.
    pub x: Vec<Vec<f64>>,
    /// The chosen candidate (`None`: not used in fitting).
    pub gold: Option<usize>,
}

/// Conditional logit (McFadden): P(candidate c) ∝ exp(w · x_c), one weight
/// vector for every candidate of every item, so items may have different
/// numbers of candidates (a multinomial logistic regression, as `linfa` fits
/// for [`fit_predict`], has one weight vector per class instead). Features are
/// standardised on the training items; L2 penalty; Newton's method with
/// backtracking and sums in a fixed order.
pub struct ConditionalLogit {
    scaler: Standardiser,
    w: Vec<f64>,
}

impl ConditionalLogit {
    pub fn fit(items: &[Item], l2: f64, max_iter: usize) -> ConditionalLogit {
        let d = items.iter().find_map(|it| it.x.first().map(Vec::len)).unwrap_or(0);
        let scaler = Standardiser::fit(items.iter().flat_map(|it| it.x.iter().map(Vec::as_slice)), d);
        let mut model = ConditionalLogit { scaler, w: vec![0f64; d] };
        let std_items: Vec<(Vec<Vec<f64>>, usize)> = items
            .iter()
            .filter_map(|it| Some((it.x.iter().map(|r| model.scaler.standardise(r)).collect(), it.gold?)))
            .collect();
        let objective = |w: &[f64]| -> f64 {
            let mut f = 0.5 * l2 * dot64(w, w);
            for (x, g) in &std_items {
                let z: Vec<f64> = x.iter().map(|r| dot64(r, w)).collect();
                f += log_sum_exp(&z) - z[*g];
            }
            f
        };
        let mut f = objective(&model.w);
        for _ in 0..max_iter {
            let mut grad: Vec<f64> = model.w.iter().map(|v| l2 * v).collect();
            let mut hess = vec![0f64; d * d];
            for j in 0..d {
                hess[j * d + j] = l2;
            }
            for (x, g) in &std_items {
                let p = softmax(&x.iter().map(|r| dot64(r, &model.w)).collect::<Vec<_>>());
                let xbar: Vec<f64> = (0..d).map(|j| x.iter().zip(&p).map(|(r, pc)| pc * r[j]).sum()).collect();
                for j in 0..d {
                    grad[j] += xbar[j] - x[*g][j];
                }
                // Hessian: Σ_c p_c (x_c − x̄)(x_c − x̄)ᵀ.
                for (r, pc) in x.iter().zip(&p) {
                    let dv: Vec<f64> = (0..d).map(|j| r[j] - xbar[j]).collect();
                    for a in 0..d {
                        let pa = pc * dv[a];
                        for b in a..d {
                            hess[a * d + b] += pa * dv[b];
                        }
                    }
                }
            }
            for a in 0..d {
                for b in 0..a {
                    hess[a * d + b] = hess[b * d + a];
                }
            }
            let Some(step) = cholesky_solve(&hess, &grad, d) else { break };
            // Backtracking: Newton's step, halved until the objective falls.
            let mut t = 1.0;
            let mut improved = false;
            for _ in 0..30 {
                let cand: Vec<f64> = model.w.iter().zip(&step).map(|(w, s)| w - t * s).collect();
                let fc = objective(&cand);
                if fc <= f {
                    let gain = f - fc;
                    model.w = cand;
                    f = fc;
                    improved = gain > 1e-10 * f.abs().max(1.0);
                    break;
                }
                t *= 0.5;
            }
            if !improved {
                break;
            }
        }
        model
    }

    /// The fitted weights, one per feature (of the standardised features).
    pub fn weights(&self) -> &[f64] {
        &self.w
    }

    /// The probability of each candidate of one item.
    pub fn predict(&self, x: &[Vec<f64>]) -> Vec<f64> {
        softmax(&x.iter().map(|r| dot64(&self.scaler.standardise(r), &self.w)).collect::<Vec<_>>())
    }
}

fn log_sum_exp(z: &[f64]) -> f64 {
    let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    m + z.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
}

fn softmax(z: &[f64]) -> Vec<f64> {
    let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = z.iter().map(|v| (v - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|v| v / s).collect()
}

/// Solves H x = g for symmetric positive definite H (d × d).
fn cholesky_solve(h: &[f64], g: &[f64], d: usize) -> Option<Vec<f64>> {
    let mut l = vec![0f64; d * d];
    for i in 0..d {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i * d + k] * l[j * d + k]).sum();
            if i == j {
                let v = h[i * d + i] - s;
                if v <= 0.0 || !v.is_finite() {
                    return None;
                }
                l[i * d + i] = v.sqrt();
            } else {
                l[i * d + j] = (h[i * d + j] - s) / l[j * d + j];
            }
        }
    }
    let mut y = vec![0f64; d];
    for i in 0..d {
        y[i] = (g[i] - (0..i).map(|k| l[i * d + k] * y[k]).sum::<f64>()) / l[i * d + i];
    }
    let mut x = vec![0f64; d];
    for i in (0..d).rev() {
        x[i] = (y[i] - (i + 1..d).map(|k| l[k * d + i] * x[k]).sum::<f64>()) / l[i * d + i];
    }
    Some(x)
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

    #[test]
    fn newton_matches_the_closed_form_of_a_separable_pair() {
        // Two candidates, one feature: w minimises Σ log(1 + e^{-w·Δ}) + w²/2 with Δ = ±1 standardised.
        let items: Vec<Item> =
            (0..10).map(|i| Item { x: vec![vec![0.0], vec![1.0]], gold: Some(usize::from(i < 8)) }).collect();
        let m = ConditionalLogit::fit(&items, 1.0, 50);
        // Gradient at the optimum is zero.
        let w = m.w[0];
        let sd = m.scaler.scale[0];
        let z = 1.0 / sd * w;
        let p1 = 1.0 / (1.0 + (-z).exp());
        let grad = w + (0..10).map(|i| (p1 - f64::from(u8::from(i < 8))) / sd).sum::<f64>();
        assert!(grad.abs() < 1e-8, "grad {grad}, w {w}");
    }
}
