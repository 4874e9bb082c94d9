//! Shortcuts planted in a real benchmark: four kinds, each on a seeded 20% of
//! ScienceQA's test split (the fixture is made here from the real questions). The
//! position-free model must answer at least 90% of the planted questions blind
//! (answering them per letter got 79-100%), and the rest of the benchmark as it does
//! without a plant.

use std::collections::BTreeSet;

use blindspot::diagnose::{DiagnoseConfig, diagnose};
use blindspot::sample::Sample;
use rand::{Rng, SeedableRng};

use crate::common::ingest_pipeline;
use crate::pipeline;

#[derive(Debug, Clone, Copy)]
enum Plant {
    /// The gold option's text appended to the question.
    AnswerInQuestion,
    /// The gold option repeated until it is the longest.
    Longest,
    /// A word only gold options carry.
    GoldWord,
    /// Options become lengths in cm; the gold is always near 50, the others far from it.
    NumericPrior,
}

/// ScienceQA with `plant` on a seeded 20% of its questions, and their ids.
fn planted(base: &[Sample], plant: Plant) -> (Vec<Sample>, BTreeSet<String>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let n = base.len() / 5;
    let mut order: Vec<usize> = (0..base.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let chosen: BTreeSet<usize> = order.into_iter().take(n).collect();
    let mut ids = BTreeSet::new();
    let samples = base
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut s = s.clone();
            if !chosen.contains(&i) {
                return s;
            }
            let g = s.answer_index.expect("ScienceQA gives every gold by index") as usize;
            let gold = s.options[g].clone();
            match plant {
                Plant::AnswerInQuestion => s.question = format!("{}\n{gold}", s.question),
                Plant::Longest => {
                    let other = s.options.iter().enumerate().filter(|(j, _)| *j != g).map(|(_, o)| o.len()).max();
                    let mut t = gold.clone();
                    while t.len() <= other.unwrap_or(0) {
                        t = format!("{t} {gold}");
                    }
                    s.options[g] = t;
                }
                Plant::GoldWord => s.options[g] = format!("namely {gold}"),
                Plant::NumericPrior => {
                    let mut others: Vec<u32> = Vec::new();
                    while others.len() + 1 < s.options.len() {
                        let v = rng.random_range(1..=200u32);
                        if !(35..=65).contains(&v) && !others.contains(&v) {
                            others.push(v);
                        }
                    }
                    others.insert(g, rng.random_range(45..=55u32));
                    s.options = others.iter().map(|v| format!("{v} cm")).collect();
                }
            }
            s.answer = s.options[g].clone();
            ids.insert(s.id.clone());
            s
        })
        .collect();
    (samples, ids)
}

fn planted_shortcuts_are_answered_blind() {
    let base = ingest_pipeline(&pipeline("scienceqa")).samples;
    let cfg = DiagnoseConfig::default();
    for plant in [Plant::AnswerInQuestion, Plant::Longest, Plant::GoldWord, Plant::NumericPrior] {
        let (samples, ids) = planted(&base, plant);
        assert_eq!(ids.len(), base.len() / 5);
        let d = diagnose(&samples, &cfg);
        let (mut hit, mut n, mut rest_hit, mut rest_n) = (0.0, 0, 0.0, 0);
        for r in &d.rows {
            if ids.contains(&r.id) {
                hit += r.correct;
                n += 1;
            } else {
                rest_hit += r.correct;
                rest_n += 1;
            }
        }
        let (planted_acc, rest_acc) = (hit / n as f64, rest_hit / rest_n as f64);
        eprintln!("{plant:?}: planted questions answered blind {planted_acc:.4}, the rest {rest_acc:.4}");
        // Measured: 0.968, 0.919, 0.954 and 1.000.
        assert!(planted_acc >= 0.90, "{plant:?}: {planted_acc}");
        // The unplanted 80% score as ScienceQA does unplanted (60.9%), within 3 points.
        assert!((rest_acc - 0.603).abs() <= 0.03, "{plant:?}: the rest {rest_acc}");
    }
}

pub const TESTS: crate::Tests = &[("planted_shortcuts_are_answered_blind", planted_shortcuts_are_answered_blind)];
