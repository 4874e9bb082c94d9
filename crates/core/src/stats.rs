//! The statistics every stage reports with, one implementation each: the
//! percentile bootstrap (of a mean, or of a ratio over resampled clusters),
//! Wilson intervals, percentiles, and sequential Monte Carlo permutation
//! p-values. Diagnose, TsT-Embed, pruning, metrics and the card call these,
//! so "95% CI" and "p" mean the same thing in every output.
//!
//! Every random draw comes from a ChaCha8 stream seeded by the caller (a
//! value of [`crate::seed::rng_for`]), so results are a pure function of the
//! data and the seed.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Resamples of every bootstrap interval blindspot reports.
pub const RESAMPLES: usize = 1000;

/// The standard normal quantile of 0.975 (two-sided 95% intervals).
pub const Z95: f64 = 1.959_963_984_540_054;

/// Percentile bootstrap 95% interval of the mean of `values`: `resamples`
/// resamples of `values.len()` draws with replacement from a generator seeded
/// with `seed`; the 2.5th and 97.5th percentiles of the resampled means.
/// `(0, 0)` for no values.
pub fn bootstrap_mean_ci(values: &[f64], resamples: usize, seed: u64) -> (f64, f64) {
    let units: Vec<(f64, f64)> = values.iter().map(|&v| (v, 1.0)).collect();
    bootstrap_ratio_ci(&units, resamples, seed)
}

/// Cluster (block) bootstrap 95% interval of a ratio of sums: each unit is
/// `(sum, weight)` — a cluster's summed scores and its number of questions —
/// and a resample draws `units.len()` units with replacement, its value the
/// drawn sums over the drawn weights. With every weight 1 this is
/// [`bootstrap_mean_ci`]. Questions of one cluster (one image, one fold
/// group) are not independent, so an interval over them resamples clusters.
///
/// A resample depends only on how many draws land on each distinct unit, and
/// those counts are multinomial; they are drawn as successive binomials over
/// the distinct units in a fixed order, at a cost per resample of the number
/// of distinct units (2 for right/wrong questions) instead of the number of
/// units. Percentiles are order statistics: the `ceil(q·R)`-th smallest of R.
pub fn bootstrap_ratio_ci(units: &[(f64, f64)], resamples: usize, seed: u64) -> (f64, f64) {
    if units.is_empty() || resamples == 0 {
        return (0.0, 0.0);
    }
    let mut stats = resampled_ratios(units, resamples, &mut ChaCha8Rng::seed_from_u64(seed));
    stats.sort_by(f64::total_cmp);
    (order_statistic(&stats, 0.025), order_statistic(&stats, 0.975))
}

/// Percentile bootstrap 95% interval of `mean(a) − mean(b)`, the two samples
/// resampled independently from one generator seeded with `seed` (`a`'s
/// resamples first). `(0, 0)` when either is empty.
pub fn bootstrap_difference_ci(a: &[f64], b: &[f64], resamples: usize, seed: u64) -> (f64, f64) {
    if a.is_empty() || b.is_empty() || resamples == 0 {
        return (0.0, 0.0);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let units = |v: &[f64]| -> Vec<(f64, f64)> { v.iter().map(|&x| (x, 1.0)).collect() };
    let ra = resampled_ratios(&units(a), resamples, &mut rng);
    let rb = resampled_ratios(&units(b), resamples, &mut rng);
    let mut stats: Vec<f64> = ra.iter().zip(&rb).map(|(x, y)| x - y).collect();
    stats.sort_by(f64::total_cmp);
    (order_statistic(&stats, 0.025), order_statistic(&stats, 0.975))
}

/// `resamples` bootstrap values of the ratio of sums of `units` (see [`bootstrap_ratio_ci`]), unsorted.
fn resampled_ratios(units: &[(f64, f64)], resamples: usize, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let mut counts: BTreeMap<(u64, u64), (f64, f64, u64)> = BTreeMap::new();
    for &(s, w) in units {
        let e = counts.entry((ordered_bits(s), ordered_bits(w))).or_insert((s, w, 0));
        e.2 += 1;
    }
    let distinct: Vec<(f64, f64, u64)> = counts.into_values().collect();
    let n = units.len() as u64;
    (0..resamples)
        .map(|_| {
            let (mut left, mut left_weight, mut sum, mut weight) = (n, n, 0.0, 0.0);
            for (j, &(s, w, c)) in distinct.iter().enumerate() {
                if left == 0 {
                    break;
                }
                let k = if j + 1 == distinct.len() || c == left_weight {
                    left
                } else {
                    let p = c as f64 / left_weight as f64;
                    rand_distr::Binomial::new(left, p).map_or(0, |b| rng.sample(b))
                };
                sum += s * k as f64;
                weight += w * k as f64;
                left -= k;
                left_weight -= c;
            }
            if weight > 0.0 { sum / weight } else { 0.0 }
        })
        .collect()
}

/// The `ceil(q·n)`-th smallest of `sorted` (the first for q = 0): the
/// percentile rule of every bootstrap interval here.
pub fn order_statistic(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let k = (sorted.len() as f64 * q).ceil() as usize;
    sorted[k.saturating_sub(1).min(sorted.len() - 1)]
}

/// The q-quantile (0 ≤ q ≤ 1) of `sorted` by linear interpolation between
/// order statistics (numpy's default, "type 7"). NaN for no values.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
            let lo = h.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
        }
    }
}

/// Wilson score interval of a proportion `successes / n` at normal quantile
/// `z` (use [`Z95`] for 95%). `(0, 1)` for n = 0.
pub fn wilson(successes: f64, n: f64, z: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let p = successes / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Mean and sample standard deviation (n − 1) of `values`; the deviation is 0
/// for fewer than two values.
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    if n == 0 {
        return (f64::NAN, 0.0);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
    (mean, var.sqrt())
}

/// How a permutation test decides when to stop drawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Stopping {
    /// Sequential (Besag and Clifford, 1991): stop at the h-th null draw that
    /// reaches the observed value, h the fewest exceedances that keep p above alpha
    /// whatever follows (p = h/L after L draws), once a t-fit to the draws puts
    /// the observed value beyond [`FIT_P`] (see [`PermutationTest::clear_by_fit`]),
    /// or once it puts it well inside the null (see [`PermutationTest::futile`]);
    /// at the maximum, p = (1 + exceedances) / (1 + draws).
    Decided,
    /// Every draw up to the maximum; p = (1 + exceedances) / (1 + draws).
    All,
}

/// A one-sided Monte Carlo permutation test of "the observed statistic is
/// larger than the null's": null draws are pushed one at a time until
/// [`PermutationTest::done`]. The p-value is valid (P(p ≤ a) ≤ a under the
/// null) under either stopping rule; a decision by fit assumes the null draws are
/// normal, which `tests/calibration.rs` checks on random labels.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PermutationTest {
    pub observed: f64,
    /// The null draws, in draw order.
    pub draws: Vec<f64>,
    /// Draws at or above the observed value (within 1e-12).
    pub exceed: usize,
    /// The draw (1-based) at which the first exceedance came.
    pub first_exceedance: Option<usize>,
    pub max_draws: usize,
    /// Draws made whatever the decision (for the null's mean and spread).
    pub min_draws: usize,
    pub alpha: f64,
    pub stopping: Stopping,
    /// The step between the statistic's attainable values (a blind accuracy of n
    /// questions moves by 1/n), 0 for a continuous one; see [`PermutationTest::fit_p`].
    pub resolution: f64,
}

impl PermutationTest {
    pub fn new(observed: f64, max_draws: usize, min_draws: usize, alpha: f64, stopping: Stopping) -> PermutationTest {
        PermutationTest {
            observed,
            draws: Vec::new(),
            exceed: 0,
            first_exceedance: None,
            max_draws: max_draws.max(1),
            min_draws: min_draws.min(max_draws.max(1)),
            alpha,
            stopping,
            resolution: 0.0,
        }
    }

    /// The test of a statistic whose attainable values are `resolution` apart.
    pub fn with_resolution(self, resolution: f64) -> PermutationTest {
        PermutationTest { resolution, ..self }
    }

    /// Adds one null draw.
    pub fn push(&mut self, null: f64) {
        self.draws.push(null);
        if null >= self.observed - 1e-12 {
            self.exceed += 1;
            self.first_exceedance.get_or_insert(self.draws.len());
        }
    }

    /// Besag and Clifford's h: the fewest exceedances after which p stays above
    /// alpha whatever the later draws, (h + 1) / (max + 1) > alpha; at least 1.
    pub fn stop_exceedances(&self) -> usize {
        let h = (self.alpha * (self.max_draws + 1) as f64).floor() as usize;
        h.max(1)
    }

    /// The one-sided p-value of the observed value under a normal fit to the draws:
    /// Student's t prediction of the next draw, `1 - T_{L-1}((observed - mean) /
    /// (sd · sqrt(1 + 1/L)))`; `None` with fewer than [`FIT_DRAWS`] draws, or a spread
    /// of less than one step of the statistic (`resolution`): draws that take one or two
    /// values (a small group's null piled at 0%, one draw at 5%) are no normal
    /// distribution, and a fit to them would put any value a step above them beyond
    /// p = 0.001.
    pub fn fit_p(&self) -> Option<f64> {
        let l = self.draws.len();
        if l < FIT_DRAWS {
            return None;
        }
        let (mean, sd) = mean_sd(&self.draws);
        if sd <= 0.0 || sd < self.resolution {
            return None;
        }
        let t = (self.observed - mean) / (sd * (1.0 + 1.0 / l as f64).sqrt());
        Some(student_t_sf(t, (l - 1) as f64))
    }

    /// Whether, in sequential mode, no draw has reached the observed value and a
    /// normal fit to the draws (at least [`FIT_DRAWS`]) puts it beyond [`FIT_P`]: the
    /// test is decided early, and its p-value is reported as that bound.
    pub fn clear_by_fit(&self) -> bool {
        self.stopping == Stopping::Decided && self.exceed == 0 && self.fit_p().is_some_and(|p| p <= FIT_P)
    }

    /// Whether, in sequential mode, more draws could not make the observed value
    /// significant in any sense the outputs use: a t-fit to the draws (at least
    /// [`FIT_DRAWS`]) gives p above [`FUTILE_P`] and so does the Monte Carlo p-value,
    /// (1 + exceedances) / (1 + draws), which is then the one reported. Stopping early
    /// here can only keep a test from rejecting, so the level of the test is kept; what
    /// it costs is power at the edge (a group whose p is near alpha is sometimes given
    /// up after five draws), which `tests/calibration.rs` measures.
    pub fn futile(&self) -> bool {
        let l = self.draws.len();
        self.stopping == Stopping::Decided
            && (1 + self.exceed) as f64 / (1 + l) as f64 > self.futile_p()
            && self.fit_p().is_some_and(|p| p > self.futile_p())
    }

    /// [`FUTILE_P`], or five times alpha where that is larger (a t-fit to five draws
    /// is wide: at p = alpha it often reads twice alpha or more).
    pub fn futile_p(&self) -> f64 {
        FUTILE_P.max(5.0 * self.alpha)
    }

    /// Whether the decision at alpha is made.
    pub fn decided(&self) -> bool {
        match self.stopping {
            Stopping::All => self.draws.len() >= self.max_draws,
            Stopping::Decided => {
                self.exceed >= self.stop_exceedances()
                    || self.draws.len() >= self.max_draws
                    || self.clear_by_fit()
                    || self.futile()
            }
        }
    }

    /// Whether no more draws are needed: decided, and the minimum drawn.
    pub fn done(&self) -> bool {
        self.draws.len() >= self.max_draws || (self.decided() && self.draws.len() >= self.min_draws)
    }

    /// The p-value (1 with no draws): Besag and Clifford's h / L when stopped at the
    /// h-th exceedance, [`FIT_P`] when decided by fit, else (1 + exceedances) /
    /// (1 + draws).
    pub fn p_value(&self) -> f64 {
        let l = self.draws.len();
        if l == 0 {
            return 1.0;
        }
        match self.stopping {
            Stopping::Decided if self.clear_by_fit() => FIT_P,
            Stopping::Decided if self.exceed >= self.stop_exceedances() && l < self.max_draws => {
                self.exceed as f64 / l as f64
            }
            _ => (1 + self.exceed) as f64 / (1 + l) as f64,
        }
    }

    /// Whether the observed value is above the null at alpha (p ≤ alpha).
    pub fn above(&self) -> bool {
        !self.draws.is_empty() && self.p_value() <= self.alpha
    }

    /// Mean of the null draws.
    pub fn mean(&self) -> f64 {
        mean_sd(&self.draws).0
    }

    /// The null's 95th percentile: from the draws when there are at least 20, else
    /// the t prediction bound of a normal fit to at least [`FIT_DRAWS`] of them
    /// (`None` with fewer).
    pub fn q95(&self) -> Option<f64> {
        let l = self.draws.len();
        if l >= 20 {
            let mut sorted = self.draws.clone();
            sorted.sort_by(f64::total_cmp);
            return Some(percentile(&sorted, 0.95));
        }
        if l < FIT_DRAWS {
            return None;
        }
        let (mean, sd) = mean_sd(&self.draws);
        Some(mean + student_t_quantile(0.95, (l - 1) as f64) * sd * (1.0 + 1.0 / l as f64).sqrt())
    }
}

/// Draws before a sequential test may decide by a fit to them.
pub const FIT_DRAWS: usize = 5;
/// The p-value above which a sequential test gives up ([`PermutationTest::futile`]):
/// twice the level below which outputs speak of weak evidence (0.05), or five times
/// alpha where that is larger.
pub const FUTILE_P: f64 = 0.1;
/// The p-value bound a decision by fit reports: a tenth of the default alpha, so that
/// an error of the normal fit in the far tail cannot move a decision at alpha.
pub const FIT_P: f64 = 0.001;

/// Student's t survival function P(T > t) with `df` degrees of freedom.
pub fn student_t_sf(t: f64, df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |d| d.sf(t))
}

/// Student's t quantile of `p` with `df` degrees of freedom.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |d| d.inverse_cdf(p))
}

/// Bits of `x` whose unsigned order is the numeric order.
fn ordered_bits(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values computed once, offline, with scipy 1.17.1, statsmodels
    // 0.15.0 and numpy 2.4.6 (the calls are quoted beside each).

    #[test]
    fn wilson_matches_statsmodels() {
        // statsmodels.stats.proportion.proportion_confint(k, n, alpha=0.05, method="wilson")
        let cases = [
            (7.0, 20.0, (0.18119182410108203, 0.5671457233147638)),
            (0.0, 10.0, (0.0, 0.27753279986288926)),
            (50.0, 50.0, (0.9286524008666412, 1.0)),
            (431.0, 1000.0, (0.4006284437674723, 0.4618996489035343)),
        ];
        for (k, n, (lo, hi)) in cases {
            let (a, b) = wilson(k, n, Z95);
            assert!((a - lo).abs() < 1e-9 && (b - hi).abs() < 1e-9, "{k}/{n}: {a} {b} vs {lo} {hi}");
        }
        assert_eq!(wilson(0.0, 0.0, Z95), (0.0, 1.0));
    }

    #[test]
    fn percentile_matches_numpy() {
        // numpy.percentile([1, 2, 3, 4, 10], q) (linear interpolation, the default)
        let x = [1.0, 2.0, 3.0, 4.0, 10.0];
        for (q, want) in [(0.95, 8.799999999999999), (0.5, 3.0), (0.1, 1.4)] {
            assert!((percentile(&x, q) - want).abs() < 1e-12, "{q}");
        }
        assert!(percentile(&[], 0.5).is_nan());
        assert_eq!(percentile(&[2.5], 0.9), 2.5);
        assert_eq!(order_statistic(&[1.0, 2.0, 3.0, 4.0], 0.25), 1.0);
        assert_eq!(order_statistic(&[1.0, 2.0, 3.0, 4.0], 0.975), 4.0);
    }

    #[test]
    fn bootstrap_of_a_mean_matches_scipy() {
        // scipy.stats.bootstrap((vals,), numpy.mean, n_resamples=200000,
        // method="percentile", random_state=1) → (0.45300, 0.54050), vals[i] = ((37 i) mod 11) / 10.
        // With 1,000 resamples the percentiles carry a Monte Carlo error of about
        // 0.002 (one standard error): the interval must be within 0.008 of scipy's.
        let vals: Vec<f64> = (0..200).map(|i| f64::from((i * 37) % 11) / 10.0).collect();
        for seed in [1, 2, 3] {
            let (lo, hi) = bootstrap_mean_ci(&vals, RESAMPLES, seed);
            assert!((lo - 0.45300).abs() < 0.008 && (hi - 0.54050).abs() < 0.008, "seed {seed}: {lo} {hi}");
        }
        assert_eq!(bootstrap_mean_ci(&vals, RESAMPLES, 9), bootstrap_mean_ci(&vals, RESAMPLES, 9));
        assert_eq!(bootstrap_mean_ci(&[0.3; 10], RESAMPLES, 1), (0.3, 0.3));
        assert_eq!(bootstrap_mean_ci(&[], RESAMPLES, 1), (0.0, 0.0));
    }

    #[test]
    fn cluster_bootstrap_matches_resampling_clusters_in_numpy() {
        // units[i] = (((13 i) mod 7) / 7 · ((i mod 5) + 1), (i mod 5) + 1), 150 clusters;
        // numpy: 200,000 resamples of the clusters (rng default_rng(3)), the ratio of
        // the drawn sums, percentiles 2.5 and 97.5 → (0.384369, 0.485533).
        let units: Vec<(f64, f64)> = (0..150)
            .map(|i| {
                let w = f64::from(i % 5 + 1);
                (f64::from((i * 13) % 7) / 7.0 * w, w)
            })
            .collect();
        for seed in [1, 2, 3] {
            let (lo, hi) = bootstrap_ratio_ci(&units, RESAMPLES, seed);
            assert!((lo - 0.384369).abs() < 0.01 && (hi - 0.485533).abs() < 0.01, "seed {seed}: {lo} {hi}");
        }
    }

    /// The share of null experiments with p ≤ alpha: each draws the observed value
    /// and the permutation draws from one continuous distribution.
    fn null_rejections(stopping: Stopping, alpha: f64, experiments: u64) -> f64 {
        let mut rejected = 0;
        for e in 0..experiments {
            let mut rng = ChaCha8Rng::seed_from_u64(e);
            let mut t = PermutationTest::new(rng.random::<f64>(), 199, 3, alpha, stopping);
            while !t.done() {
                t.push(rng.random::<f64>());
            }
            rejected += usize::from(t.above());
        }
        rejected as f64 / experiments as f64
    }

    #[test]
    fn permutation_p_values_are_valid_under_the_null() {
        // Under the null P(p <= alpha) is exactly floor(alpha * 200) / 200 with 199
        // draws, sequential (Besag and Clifford) or not; 4,000 experiments measure it
        // within three standard errors.
        let seq = null_rejections(Stopping::Decided, 0.05, 4000);
        assert!((seq - 0.05).abs() < 0.011, "{seq}");
        let seq = null_rejections(Stopping::Decided, 0.01, 4000);
        assert!((seq - 0.01).abs() < 0.0048, "{seq}");
        let all = null_rejections(Stopping::All, 0.05, 1000);
        assert!((all - 0.05).abs() < 0.021, "{all}");
    }

    #[test]
    fn a_value_far_above_five_draws_is_decided_by_fit() {
        // Draws 0.50 ± 0.0158 (sd): 0.80 is 17 prediction SDs above, past t(0.999, 4).
        let draws = [0.48, 0.50, 0.52, 0.49, 0.51];
        let mut t = PermutationTest::new(0.80, 199, 2, 0.05, Stopping::Decided);
        for d in draws {
            assert!(!t.done());
            t.push(d);
        }
        assert!(t.done() && t.clear_by_fit() && t.above());
        assert_eq!((t.draws.len(), t.p_value()), (5, FIT_P));
        // 0.58 is 4.6 prediction SDs above: not decided by fit, the Monte Carlo rule goes on.
        let mut near = PermutationTest::new(0.58, 199, 2, 0.05, Stopping::Decided);
        draws.iter().for_each(|d| near.push(*d));
        assert!(!near.clear_by_fit() && !near.done());
        // Never when every draw is recorded, nor after a draw reached the value.
        let mut all = PermutationTest::new(0.80, 199, 2, 0.05, Stopping::All);
        draws.iter().for_each(|d| all.push(*d));
        assert!(!all.clear_by_fit());
        let mut reached = PermutationTest::new(0.80, 199, 2, 0.05, Stopping::Decided);
        draws.iter().chain([0.81].iter()).for_each(|d| reached.push(*d));
        assert!(!reached.clear_by_fit());
    }

    /// A small group's null piles at a few values (20 questions: steps of 5%). Seven
    /// draws at 0% and one at 5% fit a normal of sd 1.8%, which puts 10% beyond p =
    /// 0.001; with the statistic's step given, no fit is made and the draws decide.
    #[test]
    fn draws_spread_less_than_one_step_are_not_fit() {
        let draws = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.05, 0.0];
        let mut coarse = PermutationTest::new(0.10, 199, 5, 0.01, Stopping::Decided);
        draws.iter().for_each(|d| coarse.push(*d));
        assert!(coarse.clear_by_fit(), "without a resolution the fit decides: {:?}", coarse.fit_p());
        let mut stepped = PermutationTest::new(0.10, 199, 5, 0.01, Stopping::Decided).with_resolution(1.0 / 20.0);
        draws.iter().for_each(|d| stepped.push(*d));
        assert_eq!(stepped.fit_p(), None);
        assert!(!stepped.clear_by_fit() && !stepped.done());
        // A spread of a step or more is fit as before.
        let mut wide = PermutationTest::new(0.80, 199, 2, 0.05, Stopping::Decided).with_resolution(0.01);
        [0.48, 0.50, 0.52, 0.49, 0.51].iter().for_each(|d| wide.push(*d));
        assert!(wide.clear_by_fit());
    }

    #[test]
    fn a_value_inside_the_null_is_given_up_after_five_draws() {
        // Draws 0.50 ± 0.0158 (sd): 0.525 is 1.44 prediction SDs above their mean, no
        // draw reaches it, and a t-fit puts p between 0.1 and 0.2: given up, p the Monte
        // Carlo 1/6.
        let draws = [0.48, 0.50, 0.52, 0.49, 0.51];
        let mut t = PermutationTest::new(0.525, 199, 2, 0.01, Stopping::Decided);
        draws.iter().for_each(|d| t.push(*d));
        assert!(t.fit_p().is_some_and(|p| p > 0.1 && p < 0.2), "{:?}", t.fit_p());
        assert!(t.futile() && t.done() && !t.above() && !t.clear_by_fit());
        assert!((t.p_value() - 1.0 / 6.0).abs() < 1e-12);
        // Four draws are too few to fit; and a value a fit puts below 0.1 goes on.
        let mut four = PermutationTest::new(0.525, 199, 2, 0.01, Stopping::Decided);
        draws[..4].iter().for_each(|d| four.push(*d));
        assert!(!four.futile() && !four.done());
        let mut near = PermutationTest::new(0.545, 199, 2, 0.01, Stopping::Decided);
        draws.iter().for_each(|d| near.push(*d));
        assert!(near.fit_p().is_some_and(|p| p < 0.1) && !near.futile() && !near.done());
        // At alpha 0.05 the level given up at is 0.25, five times alpha.
        let mut loose = PermutationTest::new(0.525, 199, 2, 0.05, Stopping::Decided);
        draws.iter().for_each(|d| loose.push(*d));
        assert!(!loose.futile() && (loose.futile_p() - 0.25).abs() < 1e-12);
        // Never when every draw is recorded.
        let mut all = PermutationTest::new(0.525, 199, 2, 0.01, Stopping::All);
        draws.iter().for_each(|d| all.push(*d));
        assert!(!all.futile() && !all.done());
    }

    #[test]
    fn a_sequential_test_stops_when_decided() {
        // Above every draw but with no spread to fit: every permutation is drawn,
        // p = 1/200, finer than alpha.
        let mut t = PermutationTest::new(0.9, 199, 3, 0.01, Stopping::Decided);
        while !t.done() {
            t.push(0.5);
        }
        assert_eq!(t.draws.len(), 199);
        assert!((t.p_value() - 1.0 / 200.0).abs() < 1e-12 && t.above());
        // At the null: at alpha 0.01 the second draw reaching it decides (h = 2: p
        // stays above 0.01 whatever follows), p = h / L.
        let mut t = PermutationTest::new(0.5, 199, 3, 0.01, Stopping::Decided);
        assert_eq!(t.stop_exceedances(), 2);
        t.push(0.6);
        assert!(!t.decided());
        t.push(0.4);
        t.push(0.5);
        assert!(t.done() && !t.above());
        assert!((t.p_value() - 2.0 / 3.0).abs() < 1e-12);
        assert!((t.mean() - 0.5).abs() < 1e-12);
        // The null's 95th percentile from a t-fit before 20 draws.
        let q = t.q95();
        assert!(q.is_none(), "three draws are too few to fit");
        // Every draw: p = (1 + exceedances) / (1 + draws).
        let mut t = PermutationTest::new(0.5, 9, 3, 0.05, Stopping::All);
        for v in [0.1, 0.6, 0.2, 0.3, 0.4, 0.55, 0.1, 0.2, 0.3] {
            assert!(!t.done());
            t.push(v);
        }
        assert!(t.done());
        assert!((t.p_value() - 3.0 / 10.0).abs() < 1e-12);
    }

    #[test]
    fn student_t_matches_scipy() {
        // scipy.stats.t.sf(2.0, 9) = 0.0382764; t.ppf(0.95, 4) = 2.1318468 (scipy 1.17)
        assert!((student_t_sf(2.0, 9.0) - 0.038_276_4).abs() < 1e-6);
        assert!((student_t_quantile(0.95, 4.0) - 2.131_847).abs() < 1e-5);
    }
}
