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

// The crates below this one, under the module names the code uses.
use blindspot_core::{context, error, io, memory, par, progress, sample, seed, stats};
use blindspot_embed as embed;
use blindspot_ml as ml;

pub mod audit;
mod config;
pub mod folds;
mod leakage;
pub mod null;
pub mod outside;
pub mod report;
mod run;
mod score;
pub mod tst_embed;
pub mod verdict;

/// What each feature measures, in words: the diagnosis names its top features
/// by column, and whoever reports them describes them from here.
pub use crate::ml::features::glossary;
pub use config::{Combine, DiagnoseConfig, FoldsGiven, GroupBy, ImageClusterCount, Method};
pub use leakage::{check_leakage, perturb_answer};
pub use run::*;
pub use score::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::{AnswerFormat, MraRule, Sample, mra};

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

    #[test]
    fn bootstrap_ci_resamples_questions_and_clusters() {
        // 600 questions, 40% right: the interval is the binomial one, about ±3.9 pts
        // (normal approximation 1.96·sqrt(0.24/600) = 0.0392).
        let rows: Vec<ScoreRow> =
            (0..600).map(|i| row(&format!("q{i:03}"), 0, f64::from(u8::from(i % 5 < 2)))).collect();
        let (lo, hi) = bootstrap_ci(&rows, 42);
        assert!((lo - (0.4 - 0.0392)).abs() < 0.008 && (hi - (0.4 + 0.0392)).abs() < 0.008, "{lo} {hi}");
        // The same questions in clusters that are all right or all wrong: only
        // 120 units (60 right of 4 questions, 60 wrong of 6): the delta method gives an
        // interval 2.2 times wider.
        let cluster_of: std::collections::HashMap<&str, String> = rows
            .iter()
            .map(|r| {
                let i: usize = r.id[1..].parse().unwrap_or(0);
                (r.id.as_str(), format!("c{}", (i % 5 < 2) as usize * 1000 + i / 10))
            })
            .collect();
        let (clo, chi) = cluster_bootstrap_ci(&rows, 42, &cluster_of);
        assert!((chi - clo) > 1.8 * (hi - lo), "{clo} {chi} vs {lo} {hi}");
        assert!(clo < 0.4 && chi > 0.4);
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
