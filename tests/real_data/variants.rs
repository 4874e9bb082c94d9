//! The trap invariants on ScienceQA and POPE, and CircularEval against a
//! position prior.

use std::collections::{BTreeMap, HashMap, HashSet};

use blindspot::sample::Sample;
use blindspot::spec::OnInvalid;
use blindspot::variants::{CaptionSource, Kind, KindSel, VariantsConfig, expand_kinds, generate};

use crate::common::traps::{check_traps, key};
use crate::common::{data_dir, ingest_pipeline, root, with_threads};
use crate::pipeline;

/// Every kind but the two that make a 512 × 512 image per question.
fn real_kinds() -> VariantsConfig {
    VariantsConfig {
        kinds: KindSel::all()
            .into_iter()
            .filter(|k| !matches!(k, KindSel::One(Kind::WhiteImage | Kind::NoiseImage)))
            .collect(),
        ..Default::default()
    }
}

fn scienceqa_counts_and_trap_invariants() {
    let samples = ingest_pipeline(&pipeline("scienceqa")).samples;
    let mut cfg = real_kinds();
    cfg.captions =
        Some(CaptionSource::File { path: data_dir().join("scienceqa/captions.json"), key: Some("captions".into()) });
    // captions.json covers train and val too: those ids are unknown here.
    let err = generate(&samples, &cfg).unwrap_err();
    assert!(err.to_string().contains("not a sample id of the benchmark"), "{err}");
    cfg.on_invalid = OnInvalid::Skip;
    let v = with_threads(2, || generate(&samples, &cfg).unwrap());
    let c = check_traps(&samples, &v);
    println!("scienceqa counts: {c:?}; {} warnings", v.warnings.len());
    let with_image = samples.iter().filter(|s| !s.images.is_empty()).count();
    assert_eq!(with_image, 2017);
    for kind in ["no_image", "mirage", "guess", "phantom"] {
        assert_eq!(c[kind], with_image, "{kind}");
    }
    let repeats = samples
        .iter()
        .filter(|s| s.options.iter().map(|o| key(o)).collect::<HashSet<_>>().len() != s.options.len())
        .count();
    assert_eq!(c["option_shuffle"], 4241 - repeats);
    assert_eq!(c["gold_removed"] + v.get(Kind::GoldRemoved).unwrap().skipped.values().sum::<usize>(), 4241);
    // distractor_swap@k for k = 1..4 (5 options at most), fewer rows as k grows.
    let swaps: Vec<usize> = (1..=4).map(|k| c[&format!("distractor_swap@{k}")]).collect();
    assert!(swaps.windows(2).all(|w| w[0] >= w[1]) && swaps[0] > 3000, "{swaps:?}");
    assert!(c["visual_substitution"] > 0 && c["caption"] > 0);
    let mut matches: BTreeMap<String, usize> = BTreeMap::new();
    for r in &v.get(Kind::VisualSubstitution).unwrap().rows {
        let p: serde_json::Value = serde_json::from_str(r.variant_params.as_deref().unwrap()).unwrap();
        *matches.entry(p["match"].as_str().unwrap().to_string()).or_default() += 1;
    }
    println!("scienceqa visual_substitution by match: {matches:?}");
    assert!(matches.get("options").is_some_and(|&n| n > 0), "{matches:?}");
    assert!(v.warnings.iter().any(|w| w.contains("unknown sample ids")));
    // Same rows with one thread.
    let one = with_threads(1, || generate(&samples, &cfg).unwrap());
    for (a, b) in one.kinds.iter().zip(&v.kinds) {
        assert_eq!(a.rows, b.rows, "{}", a.kind);
    }
}

fn pope_counts_and_trap_invariants() {
    let samples = ingest_pipeline(&pipeline("pope")).samples;
    let v = generate(&samples, &real_kinds()).unwrap();
    let c = check_traps(&samples, &v);
    println!("pope counts: {c:?}");
    for kind in ["no_image", "mirage", "guess", "phantom"] {
        assert_eq!(c[kind], 27_000, "{kind}");
    }
    assert_eq!(expand_kinds(&[KindSel::DistractorSwapAll], &samples), vec![Kind::DistractorSwap(1)]);
    for kind in ["option_shuffle", "unknown_option", "distractor_swap@1", "gold_removed"] {
        assert_eq!(c[kind], 0, "{kind}: POPE is yes/no");
    }
    // POPE asks each object question of many images with both answers.
    let vs = v.get(Kind::VisualSubstitution).unwrap();
    assert!(vs.rows.len() > 20_000, "{:?}", vs.skipped);
    let by_id: HashMap<&str, &Sample> = samples.iter().map(|s| (s.id.as_str(), s)).collect();
    for r in &vs.rows {
        let parent = by_id[r.parent_id.as_deref().unwrap()];
        assert_eq!(r.question, parent.question);
        assert_eq!(r.question_type, parent.question_type, "a partner of the same file");
    }
}

/// CircularEval on ScienceQA: one row per option of every multiple-choice
/// question (rotation k of an n-option question for k < n, ids
/// `<parent>::circular@k`), the gold following its text; a model that always
/// answers "A" is right in exactly one rotation of each question, so its circular
/// accuracy is 0 while its first-rotation accuracy is always-A's 40.08%.
fn circular_eval_on_scienceqa_defeats_a_position_prior() {
    let samples = ingest_pipeline(&root().join("tests/pipelines/scienceqa.toml")).samples;
    let v = generate(&samples, &VariantsConfig { kinds: vec![KindSel::CircularAll], ..Default::default() }).unwrap();
    let expected_rows: usize = samples.iter().map(|s| s.options.len()).sum();
    let rows: Vec<Sample> = v.kinds.iter().flat_map(|k| k.rows.clone()).collect();
    assert_eq!(rows.len(), expected_rows);
    assert_eq!(expected_rows, 2 * 2228 + 3 * 971 + 4 * 1004 + 5 * 38);
    let by_id: HashMap<&str, &Sample> = samples.iter().map(|s| (s.id.as_str(), s)).collect();
    for r in &rows {
        let parent = by_id[r.parent_id.as_deref().unwrap()];
        let k: usize = r.variant.as_deref().unwrap().strip_prefix("circular@").unwrap().parse().unwrap();
        assert_eq!(r.id, format!("{}::circular@{k}", parent.id));
        assert_eq!(r.options[0], parent.options[k % parent.options.len()]);
        assert_eq!(r.options[r.answer_index.unwrap() as usize], parent.answer, "{}", r.id);
    }
    let preds: Vec<blindspot::predictions::Prediction> = rows
        .iter()
        .map(|r| blindspot::predictions::Prediction {
            model: "always-a".into(),
            id: r.id.clone(),
            response: blindspot::predictions::Response::Text("A".into()),
            loc: blindspot::error::Location::file("stub"),
        })
        .collect();
    let mut all = samples.clone();
    all.extend(rows);
    all.sort_by(|a, b| blindspot::sample::id_cmp(&a.id, &b.id));
    let cfg = blindspot::metrics::MetricsConfig::default();
    let scored = blindspot::metrics::score_all(&all, &preds, &cfg).unwrap();
    let report = blindspot::metrics::compute(&all, scored, &cfg);
    let c = report.derived["always-a"].circular.clone().unwrap();
    assert_eq!((c.n, c.incomplete), (4241, 0));
    assert_eq!(c.accuracy, 0.0);
    assert!((c.first_rotation - 0.4008).abs() < 0.0001, "{}", c.first_rotation);
    // Every rotation puts the gold at each position once: always-A scores 1/n per question.
    let per_rotation = &report.cells["always-a"];
    assert!((per_rotation["circular@0"].accuracy - 0.4008).abs() < 0.0001);
}

pub const TESTS: crate::Tests = &[
    ("scienceqa_counts_and_trap_invariants", scienceqa_counts_and_trap_invariants),
    ("pope_counts_and_trap_invariants", pope_counts_and_trap_invariants),
    ("circular_eval_on_scienceqa_defeats_a_position_prior", circular_eval_on_scienceqa_defeats_a_position_prior),
];
