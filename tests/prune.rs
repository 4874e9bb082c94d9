//! Pruning: IBP removes what a blind model answers, the random control
//! matches its budget, AFLite removes predictable items, and all of it is
//! deterministic. Synthetic benchmarks with a planted shortcut, plus
//! ScienceQA from the real-data suite.

mod common;

use std::collections::BTreeSet;

use blindspot::diagnose::DiagnoseConfig;
use blindspot::prune::{Allocation, Amount, Method, PruneConfig, Rank, StopRule, Unit, prune};
use blindspot::sample::{AnswerFormat, Sample};
use common::{blindspot, root};

/// 300 multiple-choice questions in three types. In `tell` the gold option is
/// always the longest (a text-only shortcut); in `fair` and `fair2` option
/// lengths and gold positions are unrelated.
fn planted() -> Vec<Sample> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let words = ["cat", "dog", "car", "tree", "cup", "lamp", "bird", "boat", "chair", "clock", "kite", "shoe"];
    let mut out = Vec::new();
    for i in 0..300 {
        let qtype = ["tell", "fair", "fair2"][i % 3];
        let gold = rng.random_range(0..4usize);
        let options: Vec<String> = (0..4)
            .map(|j| {
                let base = words[rng.random_range(0..words.len())].to_string();
                if qtype == "tell" && j == gold { format!("{base} with a much longer wording") } else { base }
            })
            .collect();
        let mut s =
            Sample::new(format!("q{i:04}"), format!("Which object is in picture {}?", rng.random_range(0..1000)), "");
        s.question_type = Some(qtype.into());
        s.answer_format = AnswerFormat::MultipleChoice;
        s.answer = options[gold].clone();
        s.answer_index = Some(gold as i32);
        s.options = options;
        out.push(s);
    }
    out
}

fn dcfg() -> DiagnoseConfig {
    DiagnoseConfig { trees: 30, ..Default::default() }
}

fn removed_ids(p: &blindspot::prune::Pruned) -> Vec<String> {
    p.removed.iter().map(|r| r.id.clone()).collect()
}

#[test]
fn ibp_removes_the_planted_shortcut_first_and_partitions_the_set() {
    let samples = planted();
    let cfg = PruneConfig {
        budget: Amount::Count(60),
        batch: Amount::Count(20),
        stop: StopRule::Budget,
        ..Default::default()
    };
    let p = prune(&samples, &cfg, &dcfg());
    assert_eq!(p.removed.len(), 60, "{}", p.stop);
    let tell = p.removed.iter().filter(|r| r.question_type.as_deref() == Some("tell")).count();
    assert!(tell >= 50, "only {tell} of 60 removed questions carry the planted shortcut");
    // Kept and removed partition the input; kept keeps input order.
    let removed: BTreeSet<&str> = p.removed.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(removed.len(), 60);
    let expected_kept: Vec<String> =
        samples.iter().filter(|s| !removed.contains(s.id.as_str())).map(|s| s.id.clone()).collect();
    assert_eq!(p.kept, expected_kept);
    // Three iterations removed 20 each. The third spent the budget, so the kept set
    // is measured on fresh seeds only: no fourth diagnosis at the selection seed.
    assert_eq!(p.iterations.iter().map(|i| i.removed).collect::<Vec<_>>(), vec![20, 20, 20]);
    assert_eq!(p.iterations.last().unwrap().size, 260);
    assert!(p.after.is_none() && p.stop.starts_with("budget reached: 60 removed"), "{}", p.stop);
    // Multiple choice is ranked by s(x) - chance by default.
    assert!(p.removed.iter().all(|r| r.reason.starts_with("blind-answerable: s(x) - chance = ")));
    let (before, after) = (p.before.as_ref().unwrap(), p.after_independent.as_ref().unwrap());
    assert_eq!(after.n_samples, 240);
    assert!(after.blind_accuracy < before.weighted, "blind accuracy {} -> {}", before.weighted, after.blind_accuracy);
    // Without fresh seeds the kept set is diagnosed at the selection seed.
    let unmeasured = prune(&samples, &PruneConfig { independent_seeds: 0, ..cfg.clone() }, &dcfg());
    assert_eq!(unmeasured.iterations.iter().map(|i| i.removed).collect::<Vec<_>>(), vec![20, 20, 20, 0]);
    assert_eq!(unmeasured.stop, "budget reached: 60 removed");
    assert_eq!(
        (unmeasured.after.as_ref().map(|a| a.n_samples), unmeasured.after_independent.as_ref()),
        (Some(240), None)
    );
    assert_eq!(removed_ids(&unmeasured), removed_ids(&p));
    // Same inputs, same removal list.
    assert_eq!(removed_ids(&prune(&samples, &cfg, &dcfg())), removed_ids(&p));
}

#[test]
fn ibp_stops_at_chance_and_is_re_measured_on_fresh_seeds() {
    // 100 of the 300 questions carry the shortcut; a budget of 200 would take fair
    // questions too once the shortcut is gone. The chance rule ends the loop when
    // blind accuracy's 95% CI reaches chance.
    let samples = planted();
    let cfg = PruneConfig {
        budget: Amount::Count(200),
        batch: Amount::Count(20),
        stop: StopRule::Chance,
        ..Default::default()
    };
    let p = prune(&samples, &cfg, &dcfg());
    assert!(p.stop.starts_with("at chance"), "{}", p.stop);
    assert!((40..200).contains(&p.removed.len()), "{} removed: {}", p.removed.len(), p.stop);
    let tell = p.removed.iter().filter(|r| r.question_type.as_deref() == Some("tell")).count();
    assert!(tell * 10 >= p.removed.len() * 8, "{tell} of {} removed carry the shortcut", p.removed.len());
    let last = p.iterations.last().unwrap();
    assert!(last.ci95.unwrap().0 <= last.chance, "{last:?}");
    // The kept set on fresh seeds: near chance (0.25), on both sides.
    let ind = p.after_independent.clone().expect("re-diagnosed on fresh seeds");
    assert_eq!(ind.seeds.len(), 3);
    assert_eq!(ind.n_samples, 300 - p.removed.len());
    // The chance rule reads the whole set's interval: it can stop with a group
    // still above its own null, and the after-pruning check names it.
    assert!((ind.blind_accuracy - ind.chance).abs() <= 0.15, "{ind:?}");
    let left: Vec<_> = ind.still_above().filter_map(|g| g.question_type.as_deref()).collect();
    let tell_left = 100 - tell;
    assert!(left.is_empty() || (left == ["tell"] && tell_left > 0), "{ind:?}");
    assert!(!ind.seeds.contains(&cfg.seed), "fresh seeds, not the selection's");

    // Without the stop rule the budget is spent.
    let all = prune(&samples, &PruneConfig { stop: StopRule::Budget, ..cfg.clone() }, &dcfg());
    assert_eq!(all.removed.len(), 200, "{}", all.stop);

    // The matched control removes exactly as many, per answer format, at random.
    let ctl = prune(&samples, &p.matched_control(), &dcfg());
    assert_eq!(ctl.method, Method::Random);
    assert_eq!(ctl.removed.len(), p.removed.len());
    let ctl_tell = ctl.removed.iter().filter(|r| r.question_type.as_deref() == Some("tell")).count();
    assert!(ctl_tell * 2 < ctl.removed.len(), "random removal is not drawn to the shortcut: {ctl_tell}");
}

/// IBP reuses the TsT-RF results of types no batch touched; every iteration must
/// still be what a fresh diagnose of its set gives, to the bit.
#[test]
fn reused_groups_give_the_same_iterations_as_a_fresh_diagnose() {
    use blindspot::diagnose::{GroupCache, diagnose, diagnose_cached};
    let samples = planted();
    let cfg = PruneConfig {
        budget: Amount::Count(60),
        batch: Amount::Count(20),
        stop: StopRule::Budget,
        ..Default::default()
    };
    // Without fresh seeds, so that the final set is diagnosed too.
    let p = prune(&samples, &PruneConfig { independent_seeds: 0, ..cfg }, &dcfg());
    for it in &p.iterations {
        let gone: BTreeSet<&str> =
            p.removed.iter().filter(|r| r.iteration < it.iteration).map(|r| r.id.as_str()).collect();
        let set: Vec<Sample> = samples.iter().filter(|s| !gone.contains(s.id.as_str())).cloned().collect();
        let fresh = diagnose(&set, &dcfg());
        assert_eq!(it.size, set.len());
        assert_eq!(it.blind_accuracy.to_bits(), fresh.weighted.to_bits(), "iteration {}", it.iteration);
        // The score IBP ranks by: s(x) - chance for these multiple-choice questions.
        let max = fresh.rows.iter().map(|r| r.s_minus_chance).fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(it.max_bias.to_bits(), max.to_bits(), "iteration {}", it.iteration);
    }
    let kept: Vec<Sample> = samples.iter().filter(|s| p.kept.contains(&s.id)).cloned().collect();
    assert_eq!(p.after.as_ref().unwrap().rows, diagnose(&kept, &dcfg()).rows);

    // The cache itself: remove two `tell` questions, and only `tell` is fit again.
    let mut cache = GroupCache::default();
    let first = diagnose_cached(&samples.iter().collect::<Vec<_>>(), &dcfg(), &mut cache);
    assert_eq!((cache.fit, cache.reused), (3, 0));
    assert_eq!(first.rows, diagnose(&samples, &dcfg()).rows);
    let fewer: Vec<Sample> = samples.iter().filter(|s| s.id != "q0000" && s.id != "q0003").cloned().collect();
    let second = diagnose_cached(&fewer.iter().collect::<Vec<_>>(), &dcfg(), &mut cache);
    assert_eq!((cache.fit, cache.reused), (4, 2));
    let fresh = diagnose(&fewer, &dcfg());
    assert_eq!(second.rows, fresh.rows);
    assert_eq!((second.weighted, second.ci95, second.fingerprint), (fresh.weighted, fresh.ci95, fresh.fingerprint));
}

#[test]
fn the_null_rule_prunes_only_groups_above_their_null() {
    // Default settings: only `tell` is above its label-permutation null, so the
    // fair types lose nothing however large the budget.
    let samples = planted();
    let cfg = PruneConfig { budget: Amount::Count(150), batch: Amount::Count(20), ..Default::default() };
    let p = prune(&samples, &cfg, &dcfg());
    let null = p.before.as_ref().and_then(|d| d.null.as_ref()).expect("the null rule measures the null");
    assert!(null.overall.above, "{:?}", null.overall);
    let above: Vec<&str> =
        null.groups.iter().filter(|g| g.test.above).filter_map(|g| g.question_type.as_deref()).collect();
    assert_eq!(above, ["tell"]);
    assert!(!p.removed.is_empty(), "{}", p.stop);
    assert!(p.removed.iter().all(|r| r.question_type.as_deref() == Some("tell")), "{:?}", p.removed_per_type());
    // Every `tell` question carries the shortcut: it stays above its null until the
    // floor (10) stops it; the budget of 150 is never reached.
    assert_eq!(p.removed.len(), 90, "{}", p.stop);
    assert!(p.stop.contains("floor"), "{}", p.stop);
}

/// 200 yes/no questions asked in pairs of one image (opposite answers); in type
/// `tell` the word "definitely" gives the answer away.
fn pairs() -> Vec<Sample> {
    let mut out = Vec::new();
    for img in 0..100 {
        for (k, answer) in ["yes", "no"].into_iter().enumerate() {
            let qtype = if img % 2 == 0 { "tell" } else { "fair" };
            let tell = qtype == "tell" && answer == "yes";
            let text = format!("Is there a {} thing {} in scene {img}?", if tell { "definitely" } else { "maybe" }, k);
            let mut s = Sample::new(format!("p{img:03}-{k}"), text, answer);
            s.answer_format = AnswerFormat::YesNo;
            s.question_type = Some(qtype.into());
            s.images = vec![blindspot::sample::ImageRef { path: Some(format!("img{img}.png")), ..Default::default() }];
            out.push(s);
        }
    }
    out
}

#[test]
fn whole_units_go_together_and_a_pair_is_never_split() {
    let samples = pairs();
    let dcfg = DiagnoseConfig { group_by: Some(blindspot::diagnose::GroupBy::Image), ..dcfg() };
    // Default unit: the fold group (the image).
    let cfg = PruneConfig {
        budget: Amount::Count(40),
        batch: Amount::Count(10),
        stop: StopRule::Budget,
        ..Default::default()
    };
    let p = prune(&samples, &cfg, &dcfg);
    assert_eq!(p.unit, "image");
    assert_eq!(p.removed.len(), 40, "{}", p.stop);
    assert_eq!(p.units_removed, 20);
    let removed: BTreeSet<&str> = p.removed.iter().map(|r| r.id.as_str()).collect();
    for img in 0..100 {
        let a = removed.contains(format!("p{img:03}-0").as_str());
        let b = removed.contains(format!("p{img:03}-1").as_str());
        assert_eq!(a, b, "image {img}: one question of its pair removed without the other");
    }
    // One question at a time splits pairs.
    let single = prune(&samples, &PruneConfig { unit: Unit::Question, ..cfg.clone() }, &dcfg);
    assert_eq!(single.unit, "question");
    let split = (0..100)
        .filter(|img| {
            let ids = single.removed_ids();
            ids.contains(format!("p{img:03}-0").as_str()) != ids.contains(format!("p{img:03}-1").as_str())
        })
        .count();
    assert!(split > 0, "removing questions one by one should split some pairs");
}

#[test]
fn the_floor_and_per_type_allocation_hold() {
    let samples = planted();
    let cfg = PruneConfig {
        budget: Amount::Fraction(0.5),
        batch: Amount::Count(40),
        floor: 90,
        allocation: Allocation::PerType,
        rank: Rank::SMinusChance,
        stop: StopRule::Budget,
        ..Default::default()
    };
    let p = prune(&samples, &cfg, &dcfg());
    // Each type has 100 and may lose at most 10 with a floor of 90; the budget (150) cannot be met.
    for t in ["tell", "fair", "fair2"] {
        let n = p.removed.iter().filter(|r| r.question_type.as_deref() == Some(t)).count();
        assert_eq!(n, 10, "{t}: {n} removed");
    }
    assert!(p.stop.contains("floor"), "{}", p.stop);
    assert_eq!(p.budgets.values().sum::<usize>(), 150);
}

#[test]
fn the_threshold_stops_ibp() {
    let samples = planted();
    let cfg = PruneConfig { budget: Amount::Count(200), threshold: Some(1.0), ..Default::default() };
    let p = prune(&samples, &cfg, &dcfg());
    assert!(p.removed.is_empty());
    assert!(p.stop.starts_with("threshold"), "{}", p.stop);
}

#[test]
fn random_control_matches_the_budget_and_batches_but_not_the_choice() {
    let samples = planted();
    let cfg = PruneConfig {
        budget: Amount::Count(60),
        batch: Amount::Count(20),
        stop: StopRule::Budget,
        ..Default::default()
    };
    let ibp = prune(&samples, &cfg, &dcfg());
    let random = prune(&samples, &PruneConfig { method: Method::Random, ..cfg.clone() }, &dcfg());
    assert_eq!(random.removed.len(), ibp.removed.len());
    assert_eq!(
        random.iterations.iter().map(|i| i.removed).collect::<Vec<_>>(),
        ibp.iterations.iter().map(|i| i.removed).collect::<Vec<_>>()
    );
    let tell = random.removed.iter().filter(|r| r.question_type.as_deref() == Some("tell")).count();
    assert!(tell < 35, "random removal took {tell} of 60 from the planted type");
    let fresh = |p: &blindspot::prune::Pruned| p.after_independent.as_ref().map(|i| i.blind_accuracy);
    assert!(fresh(&ibp).unwrap() < fresh(&random).unwrap(), "{:?} vs {:?}", fresh(&ibp), fresh(&random));
}

#[test]
fn aflite_removes_predictable_questions() {
    let samples = planted();
    let cfg = PruneConfig {
        method: Method::Aflite,
        budget: Amount::Count(60),
        batch: Amount::Count(30),
        ..Default::default()
    };
    let p = prune(&samples, &cfg, &dcfg());
    assert!(!p.removed.is_empty(), "{}", p.stop);
    let tell = p.removed.iter().filter(|r| r.question_type.as_deref() == Some("tell")).count();
    // With 64 partitions each question is held out ~13 times; a fair question reaches
    // tau = 0.75 only by luck.
    assert!(tell * 10 >= p.removed.len() * 8, "{tell} of {} removed carry the shortcut", p.removed.len());
    assert!(p.removed.iter().all(|r| r.score >= 0.75));
    assert_eq!(removed_ids(&prune(&samples, &cfg, &dcfg())), removed_ids(&p));
}

#[test]
fn prune_cli_writes_its_report_and_rejects_bad_flags() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("p");
    blindspot()
        .current_dir(root())
        .args(["prune", "tests/fixtures/good/canonical.toml", "--budget", "1", "--batch", "1", "--floor", "0"])
        .args(["--stop", "budget", "--out"])
        .arg(&dir)
        .assert()
        .success();
    for f in ["prune.json", "removed.csv", "kept_ids.txt", "prune_curve.svg"] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("prune.json")).unwrap()).unwrap();
    assert_eq!(json["n_removed"], 1);
    // The file reads back as the type that wrote it.
    let typed: blindspot::prune::report::PruneReport =
        serde_json::from_slice(&std::fs::read(dir.join("prune.json")).unwrap()).unwrap();
    assert_eq!((typed.n_removed, typed.after_independent.map(|i| i.seeds.len())), (1, Some(3)));
    let out2 = blindspot()
        .current_dir(root())
        .args(["prune", "tests/fixtures/good/canonical.toml", "--budget", "150%", "--out"])
        .arg(out.path().join("q"))
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out2.get_output().stderr).to_string();
    assert!(err.contains("--budget") && err.contains("150%"), "{err}");
    assert!(!out.path().join("q").exists(), "nothing is written on error");
}

#[test]
fn a_bad_prune_section_is_located() {
    let dir = tempfile::tempdir().unwrap();
    let good = root().join("tests/fixtures/good");
    let text = std::fs::read_to_string(good.join("canonical.toml")).unwrap();
    std::fs::copy(good.join("canonical.jsonl"), dir.path().join("canonical.jsonl")).unwrap();
    let bad = format!("{text}\n[prune]\nmethod = \"ibpp\"\nbudget = \"lots\"\n");
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, &bad).unwrap();
    let out = blindspot().args(["validate"]).arg(&path).assert().code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("prune.method") && err.contains("ibpp"), "{err}");
    assert!(err.contains("prune.budget") && err.contains("lots"), "{err}");
    let line = bad.lines().position(|l| l.starts_with("method")).unwrap() + 1;
    assert!(err.contains(&format!("bad.toml:{line}")), "no line {line} in {err}");
}

/// A key that moved says where it went and the value that keeps its old
/// behaviour, at its line, rather than "unknown key".
#[test]
fn moved_keys_say_where_they_went() {
    let dir = tempfile::tempdir().unwrap();
    let good = root().join("tests/fixtures/good");
    let text = std::fs::read_to_string(good.join("canonical.toml")).unwrap();
    std::fs::copy(good.join("canonical.jsonl"), dir.path().join("canonical.jsonl")).unwrap();
    let bad = format!("{text}\n[diagnose]\nnumeric = \"mra\"\n\n[prune]\nstop-at-chance = true\n");
    let path = dir.path().join("moved.toml");
    std::fs::write(&path, &bad).unwrap();
    let out = blindspot().args(["validate"]).arg(&path).assert().code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(!err.contains("unknown key"), "{err}");
    assert!(err.contains("write stop = \"chance\" instead"), "{err}");
    assert!(err.contains("move it to [dataset]: numeric = \"mra\""), "{err}");
}

/// The fresh seeds past the first reuse its results: the kept set measured on one
/// seed, then on three, is the three-repeat diagnosis to the bit.
#[test]
fn fresh_seeds_past_the_first_reuse_it_to_the_bit() {
    let samples = planted();
    let refs: Vec<&Sample> = samples.iter().collect();
    let ind = blindspot::prune::Independent::measure(&refs, &dcfg(), 42, 3, None).unwrap().unwrap();
    // 300 questions: the Wilson interval alone is about ±5 points, so all three run.
    assert_eq!(ind.seeds.len(), 3);
    let d = blindspot::diagnose::diagnose(&samples, &DiagnoseConfig { seed: ind.seeds[0], repeats: 3, ..dcfg() });
    let bits = |a: f64, (lo, hi): (f64, f64)| (a.to_bits(), lo.to_bits(), hi.to_bits());
    assert_eq!(bits(ind.blind_accuracy, ind.ci95), bits(d.weighted, d.ci95));
    assert_eq!(ind.n_samples, 300);
}

#[test]
fn a_group_left_above_its_null_is_named_and_its_shortcut_said_once() {
    // A newcomer's 300 questions: in `tell` the gold is always the longest option.
    let samples = planted();
    let d = blindspot::diagnose::diagnose(&samples, &dcfg());
    let tell = d.groups.iter().find(|g| g.question_type.as_deref() == Some("tell")).expect("group tell");
    // The shortcut is named once, as one concept, not once per letter.
    let names: Vec<&str> = tell.top_features.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.iter().all(|n| !n.contains("opt0") && !n.contains("opt1")), "{names:?}");
    let length = names
        .iter()
        .filter(|n| n.starts_with("opt.") && (n.contains("length") || n.contains("chars") || n.contains("longest")))
        .count();
    assert_eq!(length, 1, "{names:?}");
    let shortcut = tell.shortcut.as_ref().expect("the tell group's shortcut in words");
    assert_eq!(shortcut.sentence, "the gold is the longest option");
    assert!(shortcut.gold_share > 0.99 && (shortcut.option_share - 0.25).abs() < 0.02, "{shortcut:?}");
    // A 20% budget removes 60 of its 100 questions: the 40 left still carry it.
    let cfg =
        PruneConfig { budget: Amount::Count(60), batch: Amount::Count(20), independent_seeds: 1, ..Default::default() };
    let p = prune(&samples, &cfg, &dcfg());
    assert_eq!(p.removed.len(), 60, "{}", p.stop);
    assert!(p.removed.iter().all(|r| r.question_type.as_deref() == Some("tell")));
    // A rank counts among the questions of the groups still above the null,
    // and says so: 100 of the key's 300.
    assert!(
        p.removed[0].reason.ends_with(
            "rank 1 of 100 within multiple_choice, in the group still above the null: tell (multiple_choice)"
        ),
        "{}",
        p.removed[0].reason
    );
    let fresh = p.after_independent.as_ref().expect("fresh seeds");
    let left: Vec<_> = fresh.still_above().collect();
    assert_eq!(left.len(), 1, "{:?}", fresh.groups);
    assert_eq!(left[0].question_type.as_deref(), Some("tell"));
    assert!(left[0].blind_accuracy > 0.9 && left[0].null_mean < 0.5, "{:?}", left[0]);
    for g in fresh.groups.iter().filter(|g| g.question_type.as_deref() != Some("tell")) {
        assert!(!g.above, "{g:?}");
    }
    let summary = p.summary();
    assert!(
        summary.contains("warning: not debiased: \"tell\" (multiple_choice) still answers")
            && summary.contains("the budget was spent before it reached its null (raise `budget`)"),
        "{summary}"
    );
}
