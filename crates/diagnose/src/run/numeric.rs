//! Numeric answers: the distinct values seen in training, the constant that
//! scores best there (the majority baseline), the nearest seen value (exact
//! scoring), and numbers written as predictions.

use crate::sample::NumericScoring;

/// The distinct values of `y` in ascending order, each with its count.
pub(super) fn numeric_answers(y: &[f64]) -> Vec<(f64, usize)> {
    let mut sorted: Vec<f64> = y.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut out: Vec<(f64, usize)> = Vec::new();
    for v in sorted {
        match out.last_mut() {
            Some(last) if last.0 == v => last.1 += 1,
            _ => out.push((v, 1)),
        }
    }
    out
}

/// Candidate constants [`best_constant`] tries: the most common answers.
const CONSTANT_CANDIDATES: usize = 256;

/// The constant answer that scores best on the training answers `seen`
/// (ascending, with counts) under `scoring`, and its mean score there. The
/// candidates are the most common answers (and, for partial credit, the
/// median); ties go to the more common, then the smaller value. NaN and 0
/// without answers.
pub fn best_constant(seen: &[(f64, usize)], scoring: NumericScoring, rule: crate::sample::MraRule) -> (f64, f64) {
    let total: usize = seen.iter().map(|v| v.1).sum();
    if total == 0 {
        return (f64::NAN, 0.0);
    }
    let mut by_count: Vec<(f64, usize)> = seen.to_vec();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.total_cmp(&b.0)));
    by_count.truncate(CONSTANT_CANDIDATES);
    if scoring != NumericScoring::Exact {
        // The median: the best constant under a symmetric error, often not itself an answer.
        let mut below = 0;
        let half = total.div_ceil(2);
        if let Some(m) = seen.iter().find(|v| {
            below += v.1;
            below >= half
        }) && !by_count.iter().any(|c| c.0 == m.0)
        {
            by_count.push((m.0, 0));
        }
    }
    let mean_score =
        |c: f64| -> f64 { seen.iter().map(|&(y, n)| scoring.score(c, y, rule) * n as f64).sum::<f64>() / total as f64 };
    let mut best = (f64::NAN, -1.0, 0usize);
    for &(c, n) in &by_count {
        let v = mean_score(c);
        let better = v > best.1 + 1e-12 || ((v - best.1).abs() <= 1e-12 && (n > best.2 || (n == best.2 && c < best.0)));
        if better {
            best = (c, v, n);
        }
    }
    (best.0, best.1.max(0.0))
}

/// The value of `seen` (ascending) nearest to `x`, ties to the smaller.
pub(super) fn nearest(seen: &[(f64, usize)], x: f64) -> f64 {
    if seen.is_empty() || !x.is_finite() {
        return f64::NAN;
    }
    let i = seen.partition_point(|v| v.0 < x);
    match (i.checked_sub(1).map(|j| seen[j].0), seen.get(i).map(|v| v.0)) {
        (Some(lo), Some(hi)) => {
            if x - lo <= hi - x {
                lo
            } else {
                hi
            }
        }
        (Some(lo), None) => lo,
        (None, Some(hi)) => hi,
        (None, None) => f64::NAN,
    }
}

pub(crate) fn format_number(v: f64) -> String {
    if v.is_finite() {
        format!("{:.4}", v).trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        "NaN".into()
    }
}
