//! The variants stage: generated images on the bundled VQA-RAD demo (real
//! images), determinism across runs and thread counts, the trap invariants
//! on ScienceQA and POPE (real-data suite), rendered prompts per kind
//! (snapshots), and bad input: unknown kinds, captions of unknown ids.

mod common;

use std::collections::{BTreeMap, HashMap};

use blindspot::sample::{AnswerFormat, Sample};
use blindspot::spec::OnInvalid;
use blindspot::variants::{CaptionSource, Kind, KindSel, VariantsConfig, generate, harness_question};
use common::traps::{check_traps, counts, key};
use common::{blindspot, ingest_pipeline, root, with_threads};

fn cfg(kinds: &[Kind]) -> VariantsConfig {
    VariantsConfig { kinds: kinds.iter().map(|k| KindSel::One(*k)).collect(), ..Default::default() }
}

fn norm(s: &str) -> String {
    key(s).to_lowercase()
}

fn decode_png(bytes: &[u8]) -> (u32, u32) {
    let r = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("a PNG");
    (r.info().width, r.info().height)
}

fn demo() -> Vec<Sample> {
    ingest_pipeline(&root().join("pipelines/vqa-rad.toml")).samples
}

#[test]
fn demo_white_and_noise_pngs_have_the_originals_size_and_the_same_bytes_on_every_run() {
    let samples = demo();
    let kinds = cfg(&[Kind::WhiteImage, Kind::NoiseImage]);
    let a = with_threads(1, || generate(&samples, &kinds).unwrap());
    let b = with_threads(2, || generate(&samples, &kinds).unwrap());
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
    let c = generate(&samples, &VariantsConfig { seed: 43, ..kinds.clone() }).unwrap();
    assert_eq!(c.get(Kind::WhiteImage).unwrap().rows, a.get(Kind::WhiteImage).unwrap().rows);
    assert_ne!(c.get(Kind::NoiseImage).unwrap().rows[0].images, a.get(Kind::NoiseImage).unwrap().rows[0].images);
}

#[test]
fn demo_visual_substitution_golds_are_distractors_of_the_parent() {
    let samples = demo();
    let v = generate(&samples, &cfg(&[Kind::VisualSubstitution])).unwrap();
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
    let v = generate(&samples, &all).unwrap();
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

fn fixture() -> (Vec<Sample>, VariantsConfig) {
    let p = blindspot::spec::Pipeline::load(&root().join("tests/fixtures/good/variants.toml")).unwrap();
    let samples = blindspot::ingest::ingest(&p.ingest).unwrap().samples;
    (samples, p.variants.unwrap())
}

#[test]
fn prompts_of_every_kind_on_three_samples() {
    let (samples, cfg) = fixture();
    let v = generate(&samples, &cfg).unwrap();
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
    // Independently of the snapshot: an option_shuffle row's gold is where its
    // `order` (new position -> the parent's option) puts the parent's gold,
    // and its prompt gives that letter the parent's gold text.
    let parents: HashMap<&str, &Sample> = samples.iter().map(|s| (s.id.as_str(), s)).collect();
    let shuffled = &v.kinds.iter().find(|k| k.kind.name() == "option_shuffle").unwrap().rows;
    assert_eq!(shuffled.len(), samples.iter().filter(|s| s.answer_format == AnswerFormat::MultipleChoice).count());
    for r in shuffled {
        let parent = parents[r.parent_id.as_deref().unwrap()];
        let params: serde_json::Value = serde_json::from_str(r.variant_params.as_deref().unwrap()).unwrap();
        let order: Vec<i64> = params["order"].as_array().unwrap().iter().map(|o| o.as_i64().unwrap()).collect();
        let gold = order.iter().position(|&o| Some(o) == parent.answer_index.map(i64::from)).unwrap();
        assert_eq!(r.answer_index, Some(gold as i32), "{}: order {order:?}", r.id);
        let line = format!("{}. {}", char::from(b'A' + gold as u8), parent.answer);
        assert!(r.prompt.as_deref().unwrap().lines().any(|l| l == line), "{}: no line \"{line}\"", r.id);
    }
}

#[test]
fn fixture_every_kind_with_its_skips() {
    let (samples, cfg) = fixture();
    let v = generate(&samples, &cfg).unwrap();
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
    let err = generate(&samples, &cfg).unwrap_err();
    assert_eq!(err.exit_code(), 1);
    let msg = err.to_string();
    assert!(msg.contains("captions-unknown-id.json:3: field \"variants.captions\""), "{msg}");
    assert!(msg.contains("\"v99\", which is not a sample id"), "{msg}");
    cfg.on_invalid = OnInvalid::Skip;
    let v = generate(&samples, &cfg).unwrap();
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
    let v = generate(&samples, &VariantsConfig { kinds: vec![KindSel::One(Kind::OptionShuffle)], ..cfg }).unwrap();
    let mut expected = v.kinds[0].rows.clone();
    for r in &mut expected {
        for i in &mut r.images {
            i.bytes = Some(std::fs::read(i.source.take().unwrap()).unwrap());
        }
    }
    assert_eq!(rows, expected, "the file holds generate()'s rows, images embedded");
}
