//! Shortcuts planted in a real benchmark: four kinds, each on a seeded 20% of
//! ScienceQA's test split (the fixture is made here from the real questions). The
//! position-free model must answer at least 90% of the planted questions blind
//! (answering them per letter got 79-100%), and the rest of the benchmark as it does
//! without a plant. IBP, given a budget the size of a plant, must draw its removals
//! from the plant; that is measured on ScienceQA debiased first (pruned to its null),
//! since ScienceQA carries shortcuts of its own that IBP rightly removes too.

use std::collections::BTreeSet;

use blindspot::diagnose::{DiagnoseConfig, diagnose};
use blindspot::prune::{Amount, PruneConfig, StopRule, prune};
use blindspot::sample::Sample;
use rand::{Rng, SeedableRng};

use crate::common::ingest_pipeline;
use crate::pipeline;

#[derive(Debug, Clone, Copy)]
enum Plant {
    /// The gold option's text appended to the question.
    AnswerInQuestion,
    /// The gold option's text repeated (at least once) until it is the longest: every
    /// planted question is changed, none left as it was because its gold happened to
    /// be the longest already.
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
                    let mut t = format!("{gold} {gold}");
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
        // Measured: 0.953, 0.988, 1.000 and 1.000.
        assert!(planted_acc >= 0.90, "{plant:?}: {planted_acc}");
        // The unplanted 80% score as ScienceQA does unplanted (60.9%), within 3 points.
        assert!((rest_acc - 0.603).abs() <= 0.03, "{plant:?}: the rest {rest_acc}");
    }
}

/// IBP at a budget equal to the plant's size, pruning to the budget, on ScienceQA
/// debiased first: the share of its removals that are planted questions.
fn ibp_draws_its_removals_from_the_plant() {
    let base = ingest_pipeline(&pipeline("scienceqa")).samples;
    let diagnose_cfg = DiagnoseConfig::default();
    // Pruned to its null (removing 1,400 questions in batches of 200): what is left
    // answers at its null blind, so a plant is the only shortcut left to find.
    let debias = PruneConfig {
        budget: Amount::Fraction(0.7),
        batch: Amount::Count(200),
        independent_seeds: 0,
        ..PruneConfig::default()
    };
    let removed: BTreeSet<String> = prune(&base, &debias, &diagnose_cfg).removed.into_iter().map(|r| r.id).collect();
    let kept: Vec<_> = base.into_iter().filter(|s| !removed.contains(&s.id)).collect();
    eprintln!("debiased ScienceQA: {} questions kept of {}", kept.len(), kept.len() + removed.len());
    assert_eq!(kept.len(), 2841);
    // Measured with the default ranking, s(x) - chance for multiple choice; ranked
    // by s(x) as the TsT release does, the first two drew 0.819 and 0.621.
    let expected = [
        (Plant::AnswerInQuestion, 0.833),
        (Plant::Longest, 0.711),
        (Plant::GoldWord, 0.847),
        (Plant::NumericPrior, 0.954),
    ];
    for (plant, measured) in expected {
        let (samples, ids) = planted(&kept, plant);
        let cfg = PruneConfig {
            budget: Amount::Count(ids.len()),
            stop: StopRule::Budget,
            independent_seeds: 0,
            ..PruneConfig::default()
        };
        let p = prune(&samples, &cfg, &diagnose_cfg);
        assert_eq!(p.removed.len(), ids.len());
        let share = p.removed.iter().filter(|r| ids.contains(&r.id)).count() as f64 / ids.len() as f64;
        eprintln!("{plant:?}: {} removed, {share:.3} of them planted", p.removed.len());
        if let Plant::Longest = plant {
            // How far the padded gold stands out: planted questions whose gold is less
            // than 1.5 times the longest other option look like the unplanted questions
            // whose gold is naturally the longest.
            let removed: BTreeSet<&str> = p.removed.iter().map(|r| r.id.as_str()).collect();
            let (mut close, mut close_removed) = (0, 0);
            for s in samples.iter().filter(|s| ids.contains(&s.id)) {
                let g = s.answer_index.unwrap_or_default() as usize;
                let other = s.options.iter().enumerate().filter(|(j, _)| *j != g).map(|(_, o)| o.len()).max();
                if (s.options[g].len() as f64) < 1.5 * other.unwrap_or(0) as f64 {
                    close += 1;
                    close_removed += usize::from(removed.contains(s.id.as_str()));
                }
            }
            eprintln!(
                "{plant:?}: {close} planted golds under 1.5 times the longest other option, {close_removed} of them removed"
            );
            // The unplanted questions removed: how many carry the planted rule by nature
            // (the gold already the longest option, by 1.5 times or more), and how many
            // such questions the set holds.
            let natural = |s: &Sample| {
                let g = s.answer_index.unwrap_or_default() as usize;
                let other = s.options.iter().enumerate().filter(|(j, _)| *j != g).map(|(_, o)| o.len()).max();
                s.options.len() > 1 && s.options[g].len() as f64 >= 1.5 * other.unwrap_or(0) as f64
            };
            let unplanted: Vec<&Sample> = samples.iter().filter(|s| !ids.contains(&s.id)).collect();
            let held = unplanted.iter().filter(|s| natural(s)).count();
            let taken = unplanted.iter().filter(|s| removed.contains(s.id.as_str()) && natural(s)).count();
            let taken_all = unplanted.iter().filter(|s| removed.contains(s.id.as_str())).count();
            eprintln!(
                "{plant:?}: {taken_all} unplanted questions removed, {taken} of them with the gold naturally 1.5 times the \
                 longest other option ({held} such unplanted questions in the set)"
            );
            // The rule itself as the ranking: the questions whose gold is longest by the
            // widest factor over the longest other option, as many as were removed. The
            // unplanted questions whose gold is naturally longest are ranked with the
            // plant, so this is what knowing the shortcut exactly draws from the plant.
            let factor = |s: &Sample| {
                let g = s.answer_index.unwrap_or_default() as usize;
                let other = s.options.iter().enumerate().filter(|(j, _)| *j != g).map(|(_, o)| o.len()).max();
                s.options[g].len() as f64 / other.unwrap_or(0).max(1) as f64
            };
            let mut by_rule: Vec<&Sample> = samples.iter().collect();
            by_rule.sort_by(|a, b| factor(b).total_cmp(&factor(a)).then_with(|| a.id.cmp(&b.id)));
            let rule_share =
                by_rule.iter().take(ids.len()).filter(|s| ids.contains(&s.id)).count() as f64 / ids.len() as f64;
            eprintln!("{plant:?}: ranked by the rule itself, {rule_share:.3} of as many questions are planted");
            // Measured: 0.729, against IBP's 0.711. The forest finds the plant about as
            // well as the rule does; the 80% the plant was meant to show is out of reach
            // of any ranking by option length on this set.
            assert!((rule_share - 0.729).abs() <= 0.01, "ranked by the rule: {rule_share}");
            assert!(share >= rule_share - 0.04, "IBP {share} against the rule's {rule_share}");
        }
        assert!(
            (share - measured).abs() <= 0.04,
            "{plant:?}: planted share of IBP's removals {share}, measured {measured}"
        );
    }
}

pub const TESTS: crate::Tests = &[
    ("planted_shortcuts_are_answered_blind", planted_shortcuts_are_answered_blind),
    ("ibp_draws_its_removals_from_the_plant", ibp_draws_its_removals_from_the_plant),
];
