//! Principal axes of embedding rows: the 2-D projection plot's axes.

/// The first two principal axes of `rows` (covariance power iteration from a
/// fixed start, no seed), each signed so that its largest-magnitude
/// coordinate is positive (ties: the lower index): the same picture on every run.
pub fn pca2(rows: &[&[f32]], dim: usize) -> (Vec<f64>, [Vec<f64>; 2]) {
    let (mean, cov) = mean_and_covariance(rows, dim);
    let dotv = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let mut axes: Vec<Vec<f64>> = Vec::new();
    for k in 0..2 {
        // Start: a fixed dense vector (1, 1/2, 1/3, ...), rotated by k.
        let mut v: Vec<f64> = (0..dim).map(|j| 1.0 / (1 + (j + k) % dim) as f64).collect();
        for _ in 0..300 {
            let mut w: Vec<f64> = (0..dim).map(|a| dotv(&cov[a * dim..(a + 1) * dim], &v)).collect();
            for prev in &axes {
                let p = dotv(&w, prev);
                w.iter_mut().zip(prev).for_each(|(x, y)| *x -= p * y);
            }
            let norm = dotv(&w, &w).sqrt();
            if norm < 1e-300 {
                break;
            }
            w.iter_mut().for_each(|x| *x /= norm);
            v = w;
        }
        let lead = (0..dim).fold(0, |best, j| if v[j].abs() > v[best].abs() { j } else { best });
        if v.get(lead).is_some_and(|x| *x < 0.0) {
            v.iter_mut().for_each(|x| *x = -*x);
        }
        axes.push(v);
    }
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
}
