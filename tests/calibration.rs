//! Calibration that can fail: the verdict and IBP judged on benchmarks whose
//! truth is known.
//!
//! - Random labels, three shapes (4-option multiple choice; 2 to 10 options;
//!   open answers with a skewed distribution), 40 seeds each: the golds carry no
//!   information the question text could give, so at the default alpha (0.01)
//!   the verdict must be "not above" and IBP must remove nothing in at least 39
//!   of 40 seeds of each shape (97.5%: alpha plus two standard errors of 40
//!   seeds allows one).
//! - A planted shortcut: half the questions of one type have their gold as the
//!   only long option. The verdict is "above" with p <= 0.01, and at least 80%
//!   of IBP's removals carry the shortcut; the null of small forests decides it
//!   as the null of the diagnosis's own forests does, and on weaker plants over
//!   several seeds it finds as many as that refit null.

use blindspot::diagnose::DiagnoseConfig;
use blindspot::diagnose::verdict::Verdict;
use blindspot::prune::{Amount, PruneConfig, StopRule, prune};
use blindspot::sample::{AnswerFormat, Sample};
use blindspot::stats::Stopping;
use rand::{Rng, SeedableRng};

const SEEDS: u64 = 40;
const WORDS: [&str; 24] = [
    "cat", "dog", "car", "tree", "cup", "lamp", "bird", "boat", "chair", "clock", "kite", "shoe", "red", "blue",
    "left", "right", "big", "small", "near", "far", "two", "three", "round", "square",
];

fn words(rng: &mut impl Rng, n: usize) -> String {
    (0..n).map(|_| WORDS[rng.random_range(0..WORDS.len())]).collect::<Vec<_>>().join(" ")
}

/// The three random-label shapes.
#[derive(Debug, Clone, Copy)]
enum Shape {
    FourOptions,
    MixedOptions,
    SkewedOpen,
}

/// 240 questions in three types whose golds are drawn independently of everything a
/// blind model sees.
fn random_labels(shape: Shape, seed: u64) -> Vec<Sample> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..240)
        .map(|i| {
            let mut s = Sample::new(format!("q{i:04}"), format!("What is shown: {}?", words(&mut rng, 6)), "");
            s.question_type = Some(["alpha", "beta", "gamma"][i % 3].into());
            match shape {
                Shape::FourOptions | Shape::MixedOptions => {
                    let k = match shape {
                        Shape::FourOptions => 4,
                        _ => rng.random_range(2..=10),
                    };
                    s.answer_format = AnswerFormat::MultipleChoice;
                    s.options = (0..k).map(|_| words(&mut rng, 2)).collect();
                    let gold = rng.random_range(0..k);
                    s.answer_index = Some(gold as i32);
                    s.answer = s.options[gold].clone();
                }
                Shape::SkewedOpen => {
                    // Zipf-like: answer j with weight 1/(j+1), eight answers.
                    let weights: Vec<f64> = (0..8).map(|j| 1.0 / (j + 1) as f64).collect();
                    let total: f64 = weights.iter().sum();
                    let mut u = rng.random::<f64>() * total;
                    let mut j = 0;
                    while u > weights[j] && j < 7 {
                        u -= weights[j];
                        j += 1;
                    }
                    s.answer_format = AnswerFormat::Open;
                    s.answer = WORDS[j].into();
                }
            }
            s
        })
        .collect()
}

fn config() -> (PruneConfig, DiagnoseConfig) {
    let prune = PruneConfig {
        budget: Amount::Count(48),
        batch: Amount::Count(12),
        floor: 10,
        independent_seeds: 0,
        ..Default::default()
    };
    (prune, DiagnoseConfig { trees: 50, min_group: 20, ..Default::default() })
}

/// (seeds whose verdict is "not above", seeds where IBP removed nothing).
fn calibrate(shape: Shape, stop: StopRule) -> (u64, u64) {
    let (mut cfg, dcfg) = config();
    cfg.stop = stop;
    let (mut clean, mut untouched) = (0, 0);
    for seed in 0..SEEDS {
        let samples = random_labels(shape, 1000 + seed);
        let p = prune(&samples, &cfg, &dcfg);
        let before = p.before.as_ref().expect("IBP diagnoses first");
        let mut d = before.clone();
        if d.null.is_none() {
            let refs: Vec<&Sample> = samples.iter().collect();
            let full = blindspot::diagnose::diagnose(&samples, &dcfg);
            d.null = Some(blindspot::diagnose::null::measure(&refs, &dcfg, &full, &dcfg.null));
        }
        clean += u64::from(!Verdict::of(&d).above);
        untouched += u64::from(p.removed.is_empty());
    }
    (clean, untouched)
}

fn assert_calibrated(shape: Shape) {
    let (clean, untouched) = calibrate(shape, StopRule::Null);
    eprintln!("{shape:?}: verdict clean in {clean}/{SEEDS}, IBP removed nothing in {untouched}/{SEEDS}");
    // At most alpha + 2 SE of 40 seeds (0.01 + 0.031) may be called above: one.
    assert!(clean >= 39, "{shape:?}: the verdict called {} of {SEEDS} random-label sets clean", clean);
    assert!(untouched >= 39, "{shape:?}: IBP removed nothing from only {} of {SEEDS} random-label sets", untouched);
}

#[test]
fn random_labels_with_four_options_are_clean() {
    assert_calibrated(Shape::FourOptions);
}

#[test]
fn random_labels_with_two_to_ten_options_are_clean() {
    assert_calibrated(Shape::MixedOptions);
}

#[test]
fn random_skewed_open_answers_are_clean() {
    assert_calibrated(Shape::SkewedOpen);
}

/// 240 four-option questions in three types; in type `tell`, every other question
/// has its gold as the only long option (the shortcut), the rest are random.
fn planted() -> (Vec<Sample>, std::collections::BTreeSet<String>) {
    plant_where(11, |i| (i / 3) % 2 == 0)
}

/// 240 four-option questions in types `tell`, `fair`, `fair2` (in turn); question `i`
/// of `tell` has its gold as the only long option when `carries(i)`. Returns the
/// questions and the carriers' ids.
fn plant_where(seed: u64, carries: impl Fn(usize) -> bool) -> (Vec<Sample>, std::collections::BTreeSet<String>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut carriers = std::collections::BTreeSet::new();
    let samples = (0..240)
        .map(|i| {
            let qtype = ["tell", "fair", "fair2"][i % 3];
            let planted = qtype == "tell" && carries(i);
            let gold = rng.random_range(0..4usize);
            let mut s = Sample::new(format!("q{i:04}"), format!("Which one: {}?", words(&mut rng, 5)), "");
            s.options = (0..4)
                .map(|j| {
                    let base = WORDS[rng.random_range(0..12)].to_string();
                    if planted && j == gold { format!("{base} with a much longer wording") } else { base }
                })
                .collect();
            s.question_type = Some(qtype.into());
            s.answer_format = AnswerFormat::MultipleChoice;
            s.answer_index = Some(gold as i32);
            s.answer = s.options[gold].clone();
            if planted {
                carriers.insert(s.id.clone());
            }
            s
        })
        .collect();
    (samples, carriers)
}

#[test]
fn a_planted_shortcut_is_above_its_null_and_ibp_removes_it() {
    let (samples, carriers) = planted();
    let (cfg, mut dcfg) = config();
    // Every permutation, so the p-value resolves below 0.01 (1/200 at best).
    dcfg.null.stopping = Stopping::All;
    let p = prune(&samples, &cfg, &dcfg);
    let before = p.before.as_ref().expect("IBP diagnoses first");
    let v = Verdict::of(before);
    let null = before.null.as_ref().expect("the null rule measures the null");
    assert!(v.above, "{}", v.sentence);
    assert!(v.p_value.is_some_and(|x| x < 0.01), "p = {:?}", v.p_value);
    assert_eq!(null.overall.permutations, 199);
    let tell = null.groups.iter().find(|g| g.question_type.as_deref() == Some("tell")).expect("group tell");
    assert!(tell.test.above && tell.test.q95.is_some_and(|q| tell.test.observed > q + 0.1), "{tell:?}");
    // The fair types are not above their null, so IBP leaves them alone.
    for g in null.groups.iter().filter(|g| g.question_type.as_deref() != Some("tell")) {
        assert!(!g.test.above, "{g:?}");
    }
    assert!(!p.removed.is_empty(), "{}", p.stop);
    let carrying = p.removed.iter().filter(|r| carriers.contains(&r.id)).count();
    assert!(
        carrying * 10 >= p.removed.len() * 8,
        "only {carrying} of {} removals carry the planted shortcut ({})",
        p.removed.len(),
        p.stop
    );
    // Sequential stopping decides the same: the planted group by a t-fit to its first
    // draws (p <= 0.001) or after every permutation (p = 1/200), the fair groups at
    // their second draw reaching them (Besag and Clifford's h at alpha 0.01).
    let (cfg2, dcfg2) = config();
    let q = prune(&samples, &cfg2, &dcfg2);
    let n2 = q.before.as_ref().and_then(|d| d.null.as_ref()).expect("null measured");
    let tell2 = n2.groups.iter().find(|g| g.question_type.as_deref() == Some("tell")).expect("group tell");
    assert!(tell2.test.above, "{tell2:?}");
    let expected = if tell2.test.p_by_fit { 0.001 } else { 1.0 / 200.0 };
    assert!((tell2.test.p_value - expected).abs() < 1e-12, "{tell2:?}");
    assert!(n2.overall.above, "{:?}", n2.overall);
    for g in n2.groups.iter().filter(|g| g.question_type.as_deref() != Some("tell")) {
        assert!(!g.test.above && !g.test.p_by_fit, "{g:?}");
        assert!(g.test.permutations < 199, "a fair group should be decided early: {g:?}");
    }
}

/// A weaker plant: `carriers` of the 80 questions of type `tell` have their gold as
/// the only long option.
fn weakly_planted(carriers: usize, seed: u64) -> Vec<Sample> {
    plant_where(seed, |i| i / 3 < carriers).0
}

#[test]
fn the_null_of_small_forests_is_as_powerful_as_the_refit_null() {
    // Over 10 seeds of a plant on 16 of 80 questions of one type, the null of 25-tree
    // forests (the default) calls the type above its null as often as a null refit
    // with the diagnosis's own 50-tree forests, within two seeds; and its sequential
    // stops (Besag-Clifford, a t-fit's early decisions either way) as often as the same
    // null drawing all of 99 permutations.
    let (_, dcfg) = config();
    let refit = DiagnoseConfig {
        null: blindspot::diagnose::null::NullConfig { trees: dcfg.trees, ..dcfg.null.clone() },
        ..dcfg.clone()
    };
    let every_draw = DiagnoseConfig {
        null: blindspot::diagnose::null::NullConfig {
            max_permutations: 99,
            stopping: blindspot::stats::Stopping::All,
            ..dcfg.null.clone()
        },
        ..dcfg.clone()
    };
    let found = |cfg: &DiagnoseConfig, samples: &[Sample]| {
        let refs: Vec<&Sample> = samples.iter().collect();
        let d = blindspot::diagnose::diagnose(samples, cfg);
        let null = blindspot::diagnose::null::measure(&refs, cfg, &d, &cfg.null);
        null.groups.iter().any(|g| g.question_type.as_deref() == Some("tell") && g.test.above)
    };
    let (mut small, mut full, mut all) = (0, 0, 0);
    for seed in 0..10 {
        let samples = weakly_planted(16, 500 + seed);
        small += usize::from(found(&dcfg, &samples));
        full += usize::from(found(&refit, &samples));
        all += usize::from(found(&every_draw, &samples));
    }
    eprintln!(
        "weak plant found in {small}/10 seeds by the 25-tree null, {full}/10 by the refit null, \
         {all}/10 drawing all 99 permutations"
    );
    assert!(small + 2 >= full, "the small-forest null found {small}/10, the refit null {full}/10");
    assert!(small + 2 >= all, "the sequential null found {small}/10, drawing every permutation {all}/10");
    assert!(full >= 3, "the plant is too weak to compare power: the refit null found it in {full}/10 seeds");
}
