//! Principal axes of embedding rows: TsT-Embed's features and the 2-D
//! projection plot's axes, by one deterministic algorithm.

/// Mean and the top principal axes of rows (f64), by orthogonal iteration
/// from a fixed start: deterministic, no seed.
pub struct Pca {
    pub mean: Vec<f64>,
    /// `k` axes of length `dim`, row-major.
    pub axes: Vec<Vec<f64>>,
}

impl Pca {
    /// The first `k` axes (at most `dim`) of `rows`, each of length `dim`.
    pub fn fit(rows: &[&[f32]], dim: usize, k: usize) -> Pca {
        let (mean, cov) = mean_and_covariance(rows, dim);
        let k = k.min(dim);
        // Start: the k coordinate axes of largest variance.
        let mut diag: Vec<usize> = (0..dim).collect();
        diag.sort_by(|&a, &b| cov[b * dim + b].total_cmp(&cov[a * dim + a]).then(a.cmp(&b)));
        let mut q: Vec<Vec<f64>> = diag[..k]
            .iter()
            .map(|&j| {
                let mut v = vec![0f64; dim];
                v[j] = 1.0;
                v
            })
            .collect();
        for _ in 0..100 {
            let mut z: Vec<Vec<f64>> =
                q.iter().map(|v| (0..dim).map(|a| dot64(&cov[a * dim..(a + 1) * dim], v)).collect()).collect();
            gram_schmidt(&mut z);
            q = z;
        }
        Pca { mean, axes: q }
    }

    /// `v`'s coordinates on the axes, appended to `out`.
    pub fn project(&self, v: &[f32], out: &mut Vec<f64>) {
        for axis in &self.axes {
            out.push(axis.iter().zip(v.iter().zip(&self.mean)).map(|(a, (x, m))| a * (f64::from(*x) - m)).sum());
        }
    }
}

pub(crate) fn dot64(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn gram_schmidt(vs: &mut [Vec<f64>]) {
    for i in 0..vs.len() {
        for j in 0..i {
            let (done, rest) = vs.split_at_mut(i);
            let p = dot64(&rest[0], &done[j]);
            rest[0].iter_mut().zip(&done[j]).for_each(|(x, y)| *x -= p * y);
        }
        let n = dot64(&vs[i], &vs[i]).sqrt();
        if n > 1e-300 {
            vs[i].iter_mut().for_each(|x| *x /= n);
        }
    }
}

/// The first two principal axes of `rows` ([`Pca`]), each signed so that its
/// largest-magnitude coordinate is positive (ties: the lower index): the same
/// picture on every run, whatever the data's sign.
pub fn pca2(rows: &[&[f32]], dim: usize) -> (Vec<f64>, [Vec<f64>; 2]) {
    let Pca { mean, mut axes } = Pca::fit(rows, dim, 2);
    for v in &mut axes {
        let lead = (0..v.len()).fold(0, |best, j| if v[j].abs() > v[best].abs() { j } else { best });
        if v.get(lead).is_some_and(|x| *x < 0.0) {
            v.iter_mut().for_each(|x| *x = -*x);
        }
    }
    axes.resize(2, vec![0.0; dim]);
    let second = axes.pop().unwrap_or_default();
    let first = axes.pop().unwrap_or_default();
    (mean, [first, second])
}

/// Mean and covariance (`dim × dim`, row-major, not normalised by n) of
/// embedding rows, summed in row order so the result is the same on every
/// run; for the principal axes of TsT-Embed's features and the projection plot.
pub fn mean_and_covariance(rows: &[&[f32]], dim: usize) -> (Vec<f64>, Vec<f64>) {
    let n = rows.len().max(1) as f64;
    let mut mean = vec![0f64; dim];
    for r in rows {
        for (m, v) in mean.iter_mut().zip(r.iter()) {
            *m += f64::from(*v);
        }
    }
    mean.iter_mut().for_each(|m| *m /= n);
    // Upper triangle summed row by row, then mirrored.
    let mut cov = vec![0f64; dim * dim];
    let mut centered = vec![0f64; dim];
    for r in rows {
        for j in 0..dim {
            centered[j] = f64::from(r[j]) - mean[j];
        }
        for a in 0..dim {
            let ca = centered[a];
            let row = &mut cov[a * dim..(a + 1) * dim];
            for b in a..dim {
                row[b] += ca * centered[b];
            }
        }
    }
    for a in 0..dim {
        for b in 0..a {
            cov[a * dim + b] = cov[b * dim + a];
        }
    }
    (mean, cov)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pca2_finds_the_spread_axes_with_a_fixed_sign() {
        let rows: Vec<Vec<f32>> =
            (0..50).map(|i| vec![(i as f32) * -0.3, ((i % 7) as f32) * 0.1, 0.01 * (i % 3) as f32]).collect();
        let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
        let (_, [a, b]) = pca2(&refs, 3);
        assert!(a[0] > 0.99, "{a:?}");
        assert!(b[1].abs() > 0.9, "{b:?}");
        let flipped: Vec<Vec<f32>> = rows.iter().map(|r| r.iter().map(|v| -v).collect()).collect();
        let refs: Vec<&[f32]> = flipped.iter().map(Vec::as_slice).collect();
        let (_, [a2, _]) = pca2(&refs, 3);
        assert_eq!(a, a2, "the sign convention does not depend on the data's sign");
    }

    #[test]
    fn the_first_axis_of_a_line_is_the_line() {
        let pca = Pca::fit(&[&[1.0, 0.0][..], &[-1.0, 0.0], &[0.0, 0.1]], 2, 1);
        assert!((pca.axes[0][0].abs() - 1.0).abs() < 1e-9);
    }
}
