//! Diagnose: TsT-RF — k-fold random forests trained *on the test set* with
//! non-visual features only (`docs/tst-protocol.md`).
//!
//! ```text
//! samples (sorted by id) ─▶ groups (question type × answer format)
//!   └─ per repeat r (seed + r), per fold: features fit on train ─▶ forest ─▶ held-out predictions
//!        ─▶ ScoreRow per (sample, repeat): prediction, correct, s(x), s − chance
//!        ─▶ summary: blind accuracy (weighted, macro, bootstrap CI), chance, majority, importances
//! ```
//! Departures from the authors' release, on purpose: one model per
//! (question type, answer format) pair rather than per type, because real
//! types mix formats (VQA-RAD's PRES has yes/no and open questions) and
//! s(x) is only comparable within one format; open answers are classified
//! over the training folds' vocabulary (answers seen < 2 times pooled into
//! "other", which is never correct); numeric rows count their MRA as accuracy;
//! training rows' answer statistics are cross-fitted within the training
//! folds (`FeatureConfig::cross_fit`, 0 = the release's in-sample statistics).

pub mod audit;
mod config;
pub mod features;
pub mod folds;
pub mod forest;
mod leakage;
pub mod plots;
pub mod recipes;
pub mod report;
mod run;
mod score;
pub mod tst_embed;

pub use config::{Combine, DiagnoseConfig, FoldsGiven, GroupBy, Method};
pub use leakage::{check_leakage, perturb_answer};
pub use run::*;
pub use score::*;

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand::SeedableRng;

    use super::*;
    use crate::sample::{AnswerFormat, MraRule, Sample, mra};
    use crate::seed::rng_for;
    use rand::Rng;

    fn row(id: &str, repeat: usize, correct: f64) -> ScoreRow {
        ScoreRow {
            id: id.into(),
            question_type: None,
            format: AnswerFormat::MultipleChoice,
            n_options: 4,
            chance: 0.25,
            fold: 0,
            repeat,
            prediction: String::new(),
            correct,
            s: correct,
            s_minus_chance: correct - 0.25,
        }
    }

    /// The resampling `bootstrap_ci` must reproduce: values per id in byte order, each
    /// resample drawn with `random_range` and summed in draw order.
    fn plain_bootstrap(rows: &[ScoreRow], seed: u64) -> (f64, f64) {
        let mut per_id: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
        for r in rows {
            let e = per_id.entry(r.id.as_str()).or_default();
            e.0 += r.correct;
            e.1 += 1;
        }
        let values: Vec<f64> = per_id.values().map(|(c, n)| c / *n as f64).collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(rng_for(seed, "diagnose.bootstrap", ""));
        let mut means: Vec<f64> = (0..1000)
            .map(|_| {
                (0..values.len()).map(|_| values[rng.random_range(0..values.len())]).sum::<f64>() / values.len() as f64
            })
            .collect();
        means.sort_by(f64::total_cmp);
        (means[24], means[974])
    }

    #[test]
    fn bootstrap_ci_is_the_plain_resampling() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        // Right or wrong, one repeat, ids out of order (and "q10" before "q9" by bytes).
        let binary: Vec<ScoreRow> =
            (0..3000).rev().map(|i| row(&format!("q{i}"), 0, f64::from(u8::from(rng.random_bool(0.6))))).collect();
        // Two repeats that disagree on some questions: averages of 0.5.
        let halves: Vec<ScoreRow> = (0..2)
            .flat_map(|repeat| {
                (0..1500).map(move |i| row(&format!("q{i}"), repeat, f64::from(u8::from(i % 3 == 0 || repeat == 1))))
            })
            .collect();
        // Numeric scores (MRA) in [0, 1].
        let graded: Vec<ScoreRow> = (0..2000).map(|i| row(&format!("q{i}"), 0, f64::from(i % 11) / 10.0)).collect();
        for (name, rows) in [("binary", &binary), ("halves", &halves), ("graded", &graded)] {
            for seed in [0, 42] {
                let ci = bootstrap_ci(rows, seed);
                assert_eq!(ci, plain_bootstrap(rows, seed), "{name}, seed {seed}");
                assert!(ci.0 < ci.1, "{name}: {ci:?}");
            }
        }
        assert_eq!(bootstrap_ci(&[], 42), (0.0, 0.0));
    }

    #[test]
    fn exact_numeric_scoring_guesses_an_answer_seen_in_training() {
        // Golds 3 or 7 by a word in the question: the forest's mean snaps to the
        // answer, so exact scoring counts the tell as a blind hit; the majority
        // baseline is the most common training answer.
        let samples: Vec<Sample> = (0..60)
            .map(|i| {
                let (word, gold) = if i % 3 == 0 { ("red", "7") } else { ("blue", "3") };
                let mut s = Sample::new(format!("q{i:02}"), format!("How many {word} cubes are in scene {i}?"), gold);
                s.answer_format = AnswerFormat::Numeric;
                s
            })
            .collect();
        let exact = DiagnoseConfig { numeric: crate::sample::NumericScoring::Exact, ..Default::default() };
        let d = diagnose(&samples, &exact);
        assert!(d.weighted > 0.95, "{}", d.weighted);
        assert!(d.rows.iter().all(|r| r.prediction == "3" || r.prediction == "7"), "{:?}", &d.rows[..3]);
        assert!((d.majority - 40.0 / 60.0).abs() < 1e-9, "{}", d.majority);
        let report = report::DiagnoseReport::of(&d, &exact, None);
        assert_eq!(report.settings.numeric, "exact");
        assert_eq!(report.by_format.len(), 1);
        assert!(report.departures.iter().any(|x| x.contains("scored exact")), "{:?}", report.departures);
    }

    #[test]
    fn mra_matches_the_definition() {
        assert_eq!(mra(10.0, 10.0, MraRule::Strict), 1.0);
        // 4% off: passes thresholds with bound > 0.04 → θ ≤ 0.95 except 0.95 (bound 0.05 > 0.04 passes too).
        assert_eq!(mra(10.4, 10.0, MraRule::Strict), 1.0);
        // exactly 5% off: strict fails θ = 0.95, inclusive passes.
        assert_eq!(mra(10.5, 10.0, MraRule::Strict), 0.9);
        assert_eq!(mra(10.5, 10.0, MraRule::Inclusive), 1.0);
        assert_eq!(mra(20.0, 10.0, MraRule::Strict), 0.0);
        assert_eq!(mra(0.0, 0.0, MraRule::Strict), 1.0);
        assert_eq!(mra(f64::NAN, 1.0, MraRule::Strict), 0.0);
    }
}
