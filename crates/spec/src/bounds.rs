//! Every bound of a numeric setting, in one place. A pipeline file and the
//! command line both resolve into the stages' settings ([`DiagnoseConfig`],
//! [`PruneConfig`], ...), and both check those settings here: a pipeline's
//! violation is reported at its key, a flag's at the flag (the key's last part). The pipeline
//! schema's ranges are generated from the same constants.

use crate::diagnose::DiagnoseConfig;
use crate::prune::{Amount, PruneConfig};

/// The allowed range of a count setting, and where it is written.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    /// The pipeline key (`diagnose.folds`); its last part is the command
    /// line's flag (`--folds`) where a command takes it.
    pub key: &'static str,
    pub min: u64,
    pub max: u64,
    /// Why the limit, for the message.
    pub why: &'static str,
}

/// Cross-validation folds.
pub const FOLDS: Bound = Bound { key: "diagnose.folds", min: 2, max: 100, why: "each fold fits its own forests" };
/// Repeats of the whole cross-validation.
pub const REPEATS: Bound = Bound { key: "diagnose.repeats", min: 1, max: 100, why: "each repeat is a full TsT-RF run" };
/// Trees per classification forest.
pub const TREES: Bound = Bound { key: "diagnose.trees", min: 1, max: 10_000, why: "trees cost time linearly" };
/// Trees per regression forest.
pub const REGRESSION_TREES: Bound =
    Bound { key: "diagnose.regression-trees", min: 1, max: 10_000, why: "trees cost time linearly" };
/// Blocks of cross-fitted training statistics (0: in-sample).
pub const CROSS_FIT: Bound =
    Bound { key: "diagnose.cross-fit", min: 0, max: 100, why: "each block refits the statistics" };
/// Fresh-seed re-diagnoses of the kept set after pruning.
pub const INDEPENDENT_SEEDS: Bound =
    Bound { key: "prune.independent-seeds", min: 0, max: 20, why: "each seed is a full TsT-RF run on the kept set" };
/// AFLite's random partitions per round.
pub const PARTITIONS: Bound = Bound {
    key: "prune.partitions",
    min: 1,
    max: 1000,
    why: "each partition fits a probe per model group; 1000 already take minutes on a few hundred questions",
};
/// Trees of the null's forests.
pub const NULL_TREES: Bound =
    Bound { key: "diagnose.null-trees", min: 1, max: 10_000, why: "each permutation fits forests of this many trees" };
/// Label permutations of the blind-accuracy null.
pub const PERMUTATIONS: Bound = Bound {
    key: "diagnose.permutations",
    min: 19,
    max: 9999,
    why: "19 is the fewest that can resolve p <= 0.05 (99 for the default alpha, 0.01); each one refits the null's forests",
};
/// Bootstrap resamples per accuracy.
pub const RESAMPLES: Bound =
    Bound { key: "metrics.resamples", min: 1, max: 100_000, why: "each resample re-scores every cell" };
/// Tokens an embedded text is truncated at (the model has 512 positions).
pub const MAX_LENGTH: Bound = Bound { key: "embed.max-length", min: 8, max: 512, why: "the model has 512 positions" };
/// Pixels an image may declare.
pub const MAX_IMAGE_PIXELS: Bound = Bound {
    key: "ingest.max-image-pixels",
    min: 1,
    max: 1_000_000_000,
    why: "variants decode and draw images of this size",
};

/// AFLite's training share: each partition trains its probes on this share of
/// a group and scores the rest, so each side keeps at least a tenth of it.
pub const TRAIN_FRACTION: (f64, f64) = (0.1, 0.9);
/// Samples of one model for one question a filter's `min-correct` may ask for
/// (MMMU-Pro: 10 tries): a threshold above every model's samples removes nothing.
pub const MIN_CORRECT: Bound =
    Bound { key: "filter.min-correct", min: 1, max: 1000, why: "a model's samples (tries) for one question" };

/// Characters a release or export name may hold: it names a folder and the
/// files inside it, whose paths the file system limits.
pub const NAME_LENGTH: usize = 100;

/// One setting out of its bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub key: &'static str,
    /// What is wrong, without the setting's name ("must be between 2 and 100; found 500").
    pub message: String,
}

impl Violation {
    /// The message as the command line reads it: the flag named first.
    pub fn for_flag(&self) -> String {
        format!("--{} {}", self.key.rsplit('.').next().unwrap_or(self.key), self.message)
    }
}

fn count(b: &Bound, v: usize, out: &mut Vec<Violation>) {
    let v = v as u64;
    if v < b.min || v > b.max {
        out.push(Violation {
            key: b.key,
            message: format!("must be between {} and {} ({}); found {v}", b.min, b.max, b.why),
        });
    }
}

/// A share in `(0, 1]` (or `[0, 1]` with `zero`), finite.
fn share(key: &'static str, v: f64, zero: bool, out: &mut Vec<Violation>) {
    let ok = v.is_finite() && v <= 1.0 && (v > 0.0 || (zero && v == 0.0));
    if !ok {
        let range = if zero { "between 0 and 1" } else { "above 0 and at most 1" };
        out.push(Violation { key, message: format!("must be {range}; found {v}") });
    }
}

/// Every bound of the diagnose settings.
pub fn diagnose(cfg: &DiagnoseConfig) -> Vec<Violation> {
    let mut out = Vec::new();
    count(&FOLDS, cfg.folds, &mut out);
    count(&REPEATS, cfg.repeats, &mut out);
    count(&TREES, cfg.trees, &mut out);
    count(&REGRESSION_TREES, cfg.regression_trees, &mut out);
    count(&CROSS_FIT, cfg.features.cross_fit, &mut out);
    count(&PERMUTATIONS, cfg.null.max_permutations, &mut out);
    count(&NULL_TREES, cfg.null.trees, &mut out);
    out
}

/// Every bound of the pruning settings.
pub fn prune(cfg: &PruneConfig) -> Vec<Violation> {
    let mut out = Vec::new();
    count(&INDEPENDENT_SEEDS, cfg.independent_seeds, &mut out);
    count(&PARTITIONS, cfg.aflite.partitions, &mut out);
    if let Amount::Fraction(f) = cfg.budget {
        share("prune.budget", f, true, &mut out);
    }
    match cfg.batch {
        Amount::Count(0) => out.push(Violation {
            key: "prune.batch",
            message: "is 0: a batch of 0 removes nothing (write at least 1)".into(),
        }),
        Amount::Fraction(f) => share("prune.batch", f, false, &mut out),
        Amount::Count(_) => {}
    }
    if let Some(t) = cfg.threshold {
        // s(x) is a probability (or an MRA): a threshold outside [0, 1] stops nothing or everything.
        share("prune.threshold", t, true, &mut out);
    }
    share("prune.tau", cfg.aflite.tau, false, &mut out);
    let (lo, hi) = TRAIN_FRACTION;
    let t = cfg.aflite.train_fraction;
    if !(t.is_finite() && (lo..=hi).contains(&t)) {
        out.push(Violation {
            key: "prune.train-fraction",
            message: format!(
                "must be between {lo} and {hi} (each partition trains on this share of a group and scores the rest: \
                 outside it one side is a handful of questions, e.g. 0.8); found {t}"
            ),
        });
    }
    out
}

/// The bounds of a count setting given on its own (`--resamples`, `max-length`, ...).
pub fn check_count(b: &Bound, v: usize) -> Option<Violation> {
    let mut out = Vec::new();
    count(b, v, &mut out);
    out.pop()
}

/// The bound of a share given on its own (`[leakage] threshold`, `dups --threshold`).
pub fn check_share(key: &'static str, v: f64) -> Option<Violation> {
    let mut out = Vec::new();
    share(key, v, false, &mut out);
    out.pop()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_bounds_settings_are_named() {
        let cfg = DiagnoseConfig { folds: 1, trees: 20_000, ..Default::default() };
        let v = diagnose(&cfg);
        assert_eq!(v.iter().map(|v| v.key).collect::<Vec<_>>(), ["diagnose.folds", "diagnose.trees"]);
        assert_eq!(v[0].for_flag(), "--folds must be between 2 and 100 (each fold fits its own forests); found 1");
        let mut few = DiagnoseConfig::default();
        few.null.max_permutations = 5;
        assert_eq!(
            diagnose(&few)[0].for_flag(),
            "--permutations must be between 19 and 9999 (19 is the fewest that can resolve p <= 0.05 (99 for the \
             default alpha, 0.01); each one refits the null's forests); found 5"
        );
        let p = PruneConfig {
            independent_seeds: 100_000,
            batch: Amount::Count(0),
            threshold: Some(f64::NAN),
            ..Default::default()
        };
        let keys: Vec<&str> = prune(&p).iter().map(|v| v.key).collect();
        assert_eq!(keys, ["prune.independent-seeds", "prune.batch", "prune.threshold"]);
        // AFLite's partitions stop where a run takes minutes on a few hundred
        // questions (10,000 took over 9 minutes on 240).
        let mut p = PruneConfig::default();
        p.aflite.partitions = 10_000;
        assert_eq!(
            prune(&p)[0].for_flag(),
            "--partitions must be between 1 and 1000 (each partition fits a probe per model group; 1000 already \
             take minutes on a few hundred questions); found 10000"
        );
        p.aflite.partitions = 1000;
        assert!(prune(&p).is_empty());
        assert!(prune(&PruneConfig::default()).is_empty());
        assert!(diagnose(&DiagnoseConfig::default()).is_empty());
    }
}
