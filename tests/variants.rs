//! The variants stage: generated images on the bundled VQA-RAD demo (real
//! images), determinism across runs and thread counts, the trap invariants
//! on ScienceQA and POPE (real-data suite), rendered prompts per kind
//! (snapshots), and bad input: unknown kinds, captions of unknown ids.

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};

use blindspot::sample::{AnswerFormat, Sample};
use blindspot::spec::OnInvalid;
use blindspot::variants::{
    CaptionSource, Kind, KindSel, Variants, VariantsConfig, expand_kinds, generate, harness_question,
};
use common::{blindspot, ingest_pipeline, root};

fn cfg(kinds: &[Kind]) -> VariantsConfig {
    VariantsConfig { kinds: kinds.iter().map(|k| KindSel::One(*k)).collect(), ..Default::default() }
}

fn norm(s: &str) -> String {
    key(s).to_lowercase()
}

/// Option identity: whitespace collapsed, case kept ("Dear Pablo," vs "dear Pablo,").
fn key(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn decode_png(bytes: &[u8]) -> (u32, u32) {
    let r = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("a PNG");
    (r.info().width, r.info().height)
}

fn counts(v: &Variants) -> BTreeMap<String, usize> {
    v.kinds.iter().map(|k| (k.kind.name(), k.rows.len())).collect()
}

fn with_threads<T: Send>(n: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap().install(f)
}

fn demo() -> Vec<Sample> {
    ingest_pipeline(&root().join("pipelines/vqa-rad.toml")).samples
}

#[test]
fn demo_white_and_noise_pngs_have_the_originals_size_and_the_same_bytes_on_every_run() {
    let samples = demo();
    let kinds = cfg(&[Kind::WhiteImage, Kind::NoiseImage]);
    let a = with_threads(1, || generate(&samples, &kinds, 42).unwrap());
    let b = with_threads(2, || generate(&samples, &kinds, 42).unwrap());
    let by_id: HashMap<&str, &Sample> = samples.iter().map(|s| (s.id.as_str(), s)).collect();
    for kind in [Kind::WhiteImage, Kind::NoiseImage] {
        let (ra, rb) = (&a.get(kind).unwrap().rows, &b.get(kind).unwrap().rows);
        assert_eq!(ra.len(), 451, "{kind}");
        assert_eq!(ra, rb, "{kind}: 1 and 2 threads give the same rows and bytes");
        for r in ra {
            let parent = by_id[r.parent_id.as_deref().unwrap()];
            assert_eq!(r.images.len(), parent.images.len());
            for (img, orig) in r.images.iter().zip(&parent.images) {
                let bytes = img.bytes.as_ref().unwrap();
                let dims = decode_png(bytes);
                assert_eq!(dims, (orig.width.unwrap(), orig.height.unwrap()), "{}", r.id);
                assert_eq!((img.width, img.height), (orig.width, orig.height));
                assert_eq!(img.sha256.as_deref().unwrap().len(), 64);
            }
            assert_eq!(r.expected.as_deref(), Some("abstain"));
        }
    }
    // Another seed changes the noise, not the white.
    let c = generate(&samples, &kinds, 43).unwrap();
    assert_eq!(c.get(Kind::WhiteImage).unwrap().rows, a.get(Kind::WhiteImage).unwrap().rows);
    assert_ne!(c.get(Kind::NoiseImage).unwrap().rows[0].images, a.get(Kind::NoiseImage).unwrap().rows[0].images);
}

#[test]
fn demo_visual_substitution_golds_are_distractors_of_the_parent() {
    let samples = demo();
    let v = generate(&samples, &cfg(&[Kind::VisualSubstitution]), 42).unwrap();
    let k = v.get(Kind::VisualSubstitution).unwrap();
    let by_id: HashMap<&str, &Sample> = samples.iter().map(|s| (s.id.as_str(), s)).collect();
    assert!(!k.rows.is_empty(), "{:?}", k.skipped);
    assert_eq!(k.rows.len() + k.skipped.values().sum::<usize>(), samples.len());
    for r in &k.rows {
        let parent = by_id[r.parent_id.as_deref().unwrap()];
        let params: serde_json::Value = serde_json::from_str(r.variant_params.as_deref().unwrap()).unwrap();
        let partner = by_id[params["partner"].as_str().unwrap()];
        // VQA-RAD's closed questions are yes/no: the one distractor is the other answer.
        assert_eq!(parent.answer_format, AnswerFormat::YesNo);
        let distractors: Vec<&str> = ["yes", "no"].into_iter().filter(|a| *a != norm(&parent.answer)).collect();
        assert!(distractors.contains(&norm(&r.answer).as_str()), "{}: {} -> {}", r.id, parent.answer, r.answer);
        assert_eq!(norm(&partner.answer), norm(&r.answer), "the partner's gold is the new gold");
        assert_eq!(r.images, partner.images);
        assert_ne!(r.images, parent.images);
        assert_eq!(norm(&partner.question), norm(&parent.question), "yes/no partners ask the same question");
    }
}

#[test]
fn demo_counts_per_kind() {
    let samples = demo();
    let all = VariantsConfig {
        kinds: KindSel::all().into_iter().filter(|k| *k != KindSel::One(Kind::NoiseImage)).collect(),
        ..Default::default()
    };
    let v = generate(&samples, &all, 42).unwrap();
    let with_image = samples.iter().filter(|s| !s.images.is_empty()).count();
    let mc = samples.iter().filter(|s| s.answer_format == AnswerFormat::MultipleChoice).count();
    let c = counts(&v);
    println!("demo counts: {c:?}");
    assert_eq!(with_image, 451);
    for kind in ["no_image", "white_image", "mirage", "guess", "phantom"] {
        assert_eq!(c[kind], 451, "{kind}");
    }
    assert_eq!(c["phantom0"], 200);
    assert_eq!(c["caption"], 0, "no caption source");
    assert_eq!(mc, 0, "the demo has yes/no and open questions only");
    for kind in ["option_shuffle", "unknown_option", "distractor_swap@1", "gold_removed"] {
        assert_eq!(c[kind], 0, "{kind}");
        assert_eq!(v.kinds.iter().find(|k| k.kind.name() == kind).unwrap().skipped["not multiple choice"], 451);
    }
    assert!(v.warnings.iter().any(|w| w.contains("no caption source")));
}

/// Checks every trap invariant on real data; returns rows per kind.
fn check_traps(samples: &[Sample], v: &Variants) -> BTreeMap<String, usize> {
    let by_id: HashMap<&str, &Sample> = samples.iter().map(|s| (s.id.as_str(), s)).collect();
    for k in &v.kinds {
        assert_eq!(
            k.rows.len() + k.skipped.values().sum::<usize>(),
            if k.kind == Kind::Phantom0 { 200 } else { samples.len() },
            "{}: every sample is a row or a counted skip",
            k.kind
        );
        let mut ids = HashSet::new();
        for r in &k.rows {
            assert!(ids.insert(r.id.clone()), "duplicate id {}", r.id);
            if r.answer_format == AnswerFormat::MultipleChoice {
                let distinct: HashSet<String> = r.options.iter().map(|o| key(o)).collect();
                assert_eq!(distinct.len(), r.options.len(), "{}: an option is duplicated: {:?}", r.id, r.options);
                assert_eq!(r.options[r.answer_index.unwrap() as usize], r.answer, "{}: gold among options", r.id);
            }
            let Some(parent) = r.parent_id.as_deref().and_then(|p| by_id.get(p)) else { continue };
            match k.kind {
                Kind::OptionShuffle => {
                    let mut a = r.options.clone();
                    let mut b = parent.options.clone();
                    a.sort();
                    b.sort();
                    assert_eq!(a, b, "{}: a permutation", r.id);
                    assert_ne!(r.options, parent.options, "{}: not the identity", r.id);
                    assert_eq!(r.answer, parent.answer);
                }
                Kind::UnknownOption => {
                    assert_eq!(r.answer, parent.answer);
                    assert_eq!(r.options.iter().filter(|o| *o == "Unknown").count(), 1);
                }
                Kind::DistractorSwap(n) => {
                    assert_eq!(r.answer, parent.answer);
                    let changed = r.options.iter().zip(&parent.options).filter(|(a, b)| a != b).count();
                    assert_eq!(changed, n as usize, "{}", r.id);
                }
                Kind::GoldRemoved => {
                    assert_eq!(r.answer, "None of the other options");
                    assert!(!r.options.contains(&parent.answer));
                }
                Kind::VisualSubstitution => {
                    assert_ne!(key(&r.answer), key(&parent.answer));
                    if parent.answer_format == AnswerFormat::MultipleChoice {
                        assert!(parent.options.contains(&r.answer), "{}: the new gold is a parent distractor", r.id);
                    }
                }
                _ => {}
            }
        }
    }
    counts(v)
}

fn pipeline(name: &str) -> std::path::PathBuf {
    root().join("tests/pipelines").join(format!("{name}.toml"))
}

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

#[test]
#[cfg_attr(not(blindspot_real_data), ignore = "real data not found: set BLINDSPOT_DATA_DIR (default ../shared/data)")]
fn scienceqa_counts_and_trap_invariants() {
    let samples = ingest_pipeline(&pipeline("scienceqa")).samples;
    let mut cfg = real_kinds();
    cfg.captions = Some(CaptionSource::File {
        path: common::data_dir().join("scienceqa/captions.json"),
        key: Some("captions".into()),
    });
    // captions.json covers train and val too: those ids are unknown here.
    let err = generate(&samples, &cfg, 42).unwrap_err();
    assert!(err.to_string().contains("not a sample id of the benchmark"), "{err}");
    cfg.on_invalid = OnInvalid::Skip;
    let v = with_threads(2, || generate(&samples, &cfg, 42).unwrap());
    let c = check_traps(&samples, &v);
    println!("scienceqa counts: {c:?}\nwarnings: {:?}", v.warnings);
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
    let one = with_threads(1, || generate(&samples, &cfg, 42).unwrap());
    for (a, b) in one.kinds.iter().zip(&v.kinds) {
        assert_eq!(a.rows, b.rows, "{}", a.kind);
    }
}

#[test]
#[cfg_attr(not(blindspot_real_data), ignore = "real data not found: set BLINDSPOT_DATA_DIR (default ../shared/data)")]
fn pope_counts_and_trap_invariants() {
    let samples = ingest_pipeline(&pipeline("pope")).samples;
    let v = generate(&samples, &real_kinds(), 42).unwrap();
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

fn fixture() -> (Vec<Sample>, VariantsConfig) {
    let p = blindspot::spec::Pipeline::load(&root().join("tests/fixtures/good/variants.toml")).unwrap();
    let samples = blindspot::ingest::ingest(&p.ingest).unwrap().samples;
    (samples, p.variants.unwrap())
}

#[test]
fn prompts_of_every_kind_on_three_samples() {
    let (samples, cfg) = fixture();
    let v = generate(&samples, &cfg, 7).unwrap();
    let mut text = String::new();
    // The three samples: multiple choice with context (v1), yes/no (v5),
    // open (v7); kinds that skip some of them show their next rows.
    let preferred = ["v1", "v5", "v7"];
    for k in &v.kinds {
        let mut rows: Vec<&Sample> = k.rows.iter().collect();
        rows.sort_by_key(|r| !preferred.contains(&r.parent_id.as_deref().unwrap_or("")));
        for r in rows.into_iter().take(3) {
            text.push_str(&format!(
                "=== {} [expected {}] params {}\n{}\n--- harness question\n{}\n\n",
                r.id,
                r.expected.as_deref().unwrap(),
                r.variant_params.as_deref().unwrap(),
                r.prompt.as_deref().unwrap(),
                harness_question(r)
            ));
        }
    }
    insta::assert_snapshot!(text);
}

#[test]
fn fixture_every_kind_with_its_skips() {
    let (samples, cfg) = fixture();
    let v = generate(&samples, &cfg, 7).unwrap();
    let c = check_traps(&samples, &v);
    let expected: BTreeMap<String, usize> = [
        ("no_image", 9),
        ("white_image", 10),
        ("noise_image", 10),
        ("caption", 3),
        ("mirage", 9),
        ("guess", 9),
        ("phantom", 9),
        ("phantom0", 200),
        ("option_shuffle", 6),
        ("circular@0", 6),
        ("circular@1", 6),
        ("circular@2", 5),
        ("circular@3", 1),
        ("unknown_option", 5),
        ("distractor_swap@1", 6),
        ("distractor_swap@2", 5),
        ("distractor_swap@3", 1),
        ("visual_substitution", 4),
        ("gold_removed", 6),
    ]
    .into_iter()
    .map(|(k, n)| (k.to_string(), n))
    .collect();
    assert_eq!(c, expected);
    // v8 has no image: white and noise give it one 512 x 512 image.
    let white = v.get(Kind::WhiteImage).unwrap();
    let v8 = white.rows.iter().find(|r| r.parent_id.as_deref() == Some("v8")).unwrap();
    assert_eq!(decode_png(v8.images[0].bytes.as_ref().unwrap()), (512, 512));
    // Captions come from the file's "captions" object.
    let cap = v.get(Kind::Caption).unwrap();
    assert!(cap.rows[0].prompt.as_deref().unwrap().starts_with("Image description: A black cat"));
    assert!(cap.rows.iter().all(|r| r.images.is_empty()));
    // The yes/no pair v5/v6 substitute each other's images.
    let vs = v.get(Kind::VisualSubstitution).unwrap();
    let v5 = vs.rows.iter().find(|r| r.parent_id.as_deref() == Some("v5")).unwrap();
    assert_eq!((v5.answer.as_str(), v5.images[0].path.as_deref()), ("no", Some("blue.png")));
}

#[test]
fn caption_file_naming_unknown_ids_is_a_located_error_or_a_counted_skip() {
    let (samples, mut cfg) = fixture();
    cfg.kinds = vec![KindSel::One(Kind::Caption)];
    cfg.captions =
        Some(CaptionSource::File { path: root().join("tests/fixtures/bad/captions-unknown-id.json"), key: None });
    let err = generate(&samples, &cfg, 7).unwrap_err();
    assert_eq!(err.exit_code(), 1);
    let msg = err.to_string();
    assert!(msg.contains("captions-unknown-id.json:3: field \"variants.captions\""), "{msg}");
    assert!(msg.contains("\"v99\", which is not a sample id"), "{msg}");
    cfg.on_invalid = OnInvalid::Skip;
    let v = generate(&samples, &cfg, 7).unwrap();
    assert_eq!(v.get(Kind::Caption).unwrap().rows.len(), 2);
    assert!(
        v.warnings[0].contains("1 captions") && v.warnings[0].contains("1 name unknown sample ids"),
        "{:?}",
        v.warnings
    );

    // The same through the binary.
    let out = tempfile::tempdir().unwrap();
    let bad = root().join("tests/fixtures/bad/captions-unknown-id.json");
    let run = |extra: &[&str]| {
        blindspot()
            .current_dir(root())
            .args(["variants", "tests/fixtures/good/variants.jsonl", "--kinds", "caption", "-o"])
            .arg(out.path().join("v"))
            .arg("--captions")
            .arg(&bad)
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("captions-unknown-id.json:3:"));
    assert!(!out.path().join("v").exists(), "nothing written");
    let o = run(&["--skip-invalid-captions"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("warning: caption: 1 captions"));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("v/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["kinds"]["caption"]["rows"], 2);
}

#[test]
fn unknown_kinds_exit_1_with_the_valid_kinds() {
    let out = tempfile::tempdir().unwrap();
    let o = blindspot()
        .current_dir(root())
        .args(["variants", "pipelines/vqa-rad.toml", "--kinds", "no_image,white_imag", "-o"])
        .arg(out.path().join("v"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown variant kind \"white_imag\""), "{err}");
    assert!(err.contains("did you mean \"white_image\""), "{err}");
    assert!(err.contains("valid kinds: no_image, white_image, noise_image, caption"), "{err}");
    assert!(!out.path().join("v").exists());

    let o = blindspot()
        .current_dir(root())
        .args(["validate", "tests/fixtures/bad/variants-unknown-kind.toml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("variants-unknown-kind.toml:11:9: field \"variants.kinds\""), "{err}");
    assert!(err.contains("did you mean \"white_image\"") && err.contains("gold_removed"), "{err}");
    assert!(err.contains("distractor_swap@0") && err.contains("2 problems found"), "{err}");

    // A misspelt key in [variants] gets the generic did-you-mean.
    let dir = tempfile::tempdir().unwrap();
    let toml = std::fs::read_to_string(root().join("tests/fixtures/good/variants.toml"))
        .unwrap()
        .replace("[variants]", "[variants]\nkind = [\"no_image\"]")
        .replace("\"variants.jsonl\"", &format!("{:?}", root().join("tests/fixtures/good/variants.jsonl")))
        .replace("\"images\"", &format!("{:?}", root().join("tests/fixtures/good/images")))
        .replace(
            "\"variants-captions.json\"",
            &format!("{:?}", root().join("tests/fixtures/good/variants-captions.json")),
        );
    let file = dir.path().join("p.toml");
    std::fs::write(&file, toml).unwrap();
    let o = blindspot().arg("validate").arg(&file).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("did you mean \"kinds\"?"));
}

#[test]
fn the_cli_writes_one_parquet_per_kind_and_a_summary() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("v");
    let o = blindspot()
        .current_dir(root())
        .args(["variants", "tests/fixtures/good/variants.toml", "--kinds", "option_shuffle,distractor_swap", "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        common::files_below(&dir),
        vec![
            "distractor_swap@1.parquet",
            "distractor_swap@2.parquet",
            "distractor_swap@3.parquet",
            "option_shuffle.parquet",
            "summary.json"
        ]
    );
    let rows = blindspot::io::parquet::read_samples(&dir.join("option_shuffle.parquet")).unwrap();
    let (samples, cfg) = fixture();
    let v = generate(&samples, &VariantsConfig { kinds: vec![KindSel::One(Kind::OptionShuffle)], ..cfg }, 7).unwrap();
    let mut expected = v.kinds[0].rows.clone();
    for r in &mut expected {
        for i in &mut r.images {
            i.bytes = Some(std::fs::read(i.source.take().unwrap()).unwrap());
        }
    }
    assert_eq!(rows, expected, "the file holds generate()'s rows, images embedded");
}

/// CircularEval on ScienceQA: one row per option of every multiple-choice
/// question (rotation k of an n-option question for k < n, ids
/// `<parent>::circular@k`), the gold following its text; a model that always
/// answers "A" is right in exactly one rotation of each question, so its circular
/// accuracy is 0 while its first-rotation accuracy is always-A's 40.08%.
#[test]
#[cfg_attr(not(blindspot_real_data), ignore = "real data not found: set BLINDSPOT_DATA_DIR (default ../shared/data)")]
fn circular_eval_on_scienceqa_defeats_a_position_prior() {
    let samples = ingest_pipeline(&root().join("tests/pipelines/scienceqa.toml")).samples;
    let v =
        generate(&samples, &VariantsConfig { kinds: vec![KindSel::CircularAll], ..Default::default() }, 42).unwrap();
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
