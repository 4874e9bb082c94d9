//! Declarative recipes end to end: the VSI-Bench example pipeline
//! (`pipelines/examples/vsi-bench.toml`) validated and run on a VSI-Bench-shaped
//! file with planted priors (the data set itself is not public here), and recipe
//! mistakes reported where they are written.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use common::{blindspot, root};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn example() -> PathBuf {
    root().join("pipelines/examples/vsi-bench.toml")
}

/// Writes a VSI-Bench-shaped JSON lines file: the release's question templates, its
/// fields (`id, dataset, scene_name, question_type, question, options, ground_truth`,
/// multiple-choice options labelled "A. ..." with a letter as ground truth), and
/// priors planted where the TsT release found them: counts and sizes that depend on
/// the object, distances that depend on the pair, and a favourite closest object per
/// reference object.
fn write_vsi_like(path: &Path, scenes: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    // object, typical count, typical size (cm)
    let objects = [
        ("chair", 6.0, 90.0),
        ("table", 2.0, 160.0),
        ("lamp", 2.0, 60.0),
        ("sofa", 1.0, 210.0),
        ("bed", 1.0, 200.0),
        ("tv", 1.0, 120.0),
        ("pillow", 5.0, 50.0),
        ("door", 3.0, 210.0),
        ("window", 4.0, 150.0),
        ("trash can", 2.0, 40.0),
    ];
    let datasets = ["scannet", "scannetpp", "arkitscenes"];
    let mut out = String::new();
    let mut id = 0;
    let mut push =
        |out: &mut String, scene: usize, qtype: &str, question: String, options: Option<Vec<String>>, gt: String| {
            let row = serde_json::json!({
                "id": id,
                "dataset": datasets[scene % 3],
                "scene_name": format!("scene{scene:04}"),
                "question_type": qtype,
                "question": question,
                "options": options,
                "ground_truth": gt,
            });
            id += 1;
            writeln!(out, "{row}").unwrap();
        };
    let noisy = |rng: &mut ChaCha8Rng, v: f64| (v * rng.random_range(0.8..1.25)).max(0.1);
    for scene in 0..scenes {
        for _ in 0..3 {
            let (o, count, _) = objects[rng.random_range(0..objects.len())];
            let n = noisy(&mut rng, count).round().max(1.0);
            push(&mut out, scene, "object_counting", format!("How many {o}(s) are in this room?"), None, n.to_string());
            let (o, _, size) = objects[rng.random_range(0..objects.len())];
            let q = format!(
                "What is the length of the longest dimension (length, width, or height) of the {o}, measured in centimeters?"
            );
            push(&mut out, scene, "object_size_estimation", q, None, format!("{:.0}", noisy(&mut rng, size)));
            let a = rng.random_range(0..objects.len());
            let b = (a + rng.random_range(1..objects.len())) % objects.len();
            let q = format!(
                "Measuring from the closest point of each object, what is the direct distance between the {} and the {} (in meters)?",
                objects[a].0, objects[b].0
            );
            let d = 0.5 + ((a * 7 + b * 3) % 10) as f64 * 0.4;
            push(&mut out, scene, "object_abs_distance", q, None, format!("{:.1}", noisy(&mut rng, d)));
            let target = rng.random_range(0..4);
            let mut candidates: Vec<usize> = (4..objects.len()).collect();
            for i in (1..candidates.len()).rev() {
                candidates.swap(i, rng.random_range(0..=i));
            }
            candidates.truncate(4);
            // Each reference object has a favourite closest candidate 70% of the time.
            let favourite = 4 + target;
            let gold = match candidates.iter().position(|&c| c == favourite) {
                Some(p) if rng.random_bool(0.7) => p,
                _ => rng.random_range(0..4),
            };
            let names: Vec<&str> = candidates.iter().map(|&c| objects[c].0).collect();
            let q = format!(
                "Measuring from the closest point of each object, which of these objects ({}) is the closest to the {}?",
                names.join(", "),
                objects[target].0
            );
            let options = names.iter().enumerate().map(|(k, n)| format!("{}. {n}", (b'A' + k as u8) as char)).collect();
            push(&mut out, scene, "object_rel_distance", q, Some(options), ((b'A' + gold as u8) as char).to_string());
        }
    }
    std::fs::write(path, out).unwrap();
}

#[test]
fn vsi_bench_example_recipes_run_on_a_vsi_shaped_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("test.jsonl");
    write_vsi_like(&data, 200);
    blindspot()
        .env("VSI_BENCH", &data)
        .arg("validate")
        .arg(example())
        .assert()
        .success()
        .stdout(predicates::str::contains("ok: "));
    let out = dir.path().join("diagnose");
    let features = dir.path().join("features");
    blindspot()
        .env("VSI_BENCH", &data)
        .args(["diagnose", "--check-leakage", "--export-features"])
        .arg(&features)
        .arg("--out")
        .arg(&out)
        .arg(example())
        .assert()
        .success();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("diagnose.json")).unwrap()).unwrap();
    let types = report["groups"].as_array().unwrap_or_else(|| panic!("no groups in {report}"));
    let group = |t: &str| types.iter().find(|g| g["question_type"] == t).unwrap_or_else(|| panic!("no {t}: {report}"));
    // Every recipe's columns reach its own type's model, and only that one.
    let header = |t: &str| -> Vec<String> {
        let dir = std::fs::read_dir(&features)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(t))
            .unwrap_or_else(|| panic!("no exported matrices for {t}"));
        let file = std::fs::File::open(dir.join("r0_f0_train.parquet")).unwrap();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        reader.schema().fields().iter().map(|f| f.name().clone()).collect()
    };
    for (t, recipe) in [
        ("object_counting", "recipe.counting.object.mean"),
        ("object_size_estimation", "recipe.size.object.log_mean"),
        ("object_abs_distance", "recipe.abs-distance.object1+object2.mean"),
        ("object_rel_distance", "recipe.rel-distance.candidate.opt0.gold_ratio"),
    ] {
        let names = header(t);
        assert!(names.iter().any(|n| n == recipe), "{t}: no {recipe} in {names:?}");
        let others: Vec<&String> =
            names.iter().filter(|n| n.starts_with("recipe.") && !n.starts_with(&recipe[..12])).collect();
        assert!(others.iter().all(|n| n.split('.').nth(1) == recipe.split('.').nth(1)), "{t}: {others:?}");
    }
    // The planted priors are found: per-object counts and sizes, per-pair distances
    // (MRA well above what the global mean scores), the favourite closest object.
    // Measured values, each within 5 points either way (a few hundred questions
    // per type): a lost recipe fails, and so does one that leaks.
    for (t, measured) in [("object_counting", 0.918), ("object_size_estimation", 0.809), ("object_abs_distance", 0.784)]
    {
        let blind = group(t)["blind_accuracy"].as_f64().unwrap();
        assert!((blind - measured).abs() <= 0.05, "{t}: blind MRA {blind}, measured {measured} ± 0.05");
    }
    let rel = group("object_rel_distance")["blind_accuracy"].as_f64().unwrap();
    assert!(
        (rel - 0.577).abs() <= 0.05,
        "object_rel_distance: blind accuracy {rel}, measured 0.577 ± 0.05 (chance 0.25)"
    );
    let top: Vec<&str> = group("object_counting")["top_features"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["feature"].as_str())
        .collect();
    assert!(top.iter().any(|f| f.starts_with("recipe.counting.")), "counting top features {top:?}");
}

#[test]
fn recipe_mistakes_are_located() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("d.jsonl"), "{\"id\":\"1\",\"question\":\"q?\",\"answer\":\"yes\"}\n").unwrap();
    let pipeline = dir.path().join("p.toml");
    std::fs::write(
        &pipeline,
        r#"[dataset]
name = "x"
version = "1.0.0"
license = "CC0-1.0"

[ingest]
path = "d.jsonl"

[[diagnose.recipes]]
name = "counting"
extract = [{ regex = 'how many (?<object>.+' }]
stats = [{ key = "objekt", families = ["count", "averages"] }]
"#,
    )
    .unwrap();
    let out = blindspot().arg("validate").arg(&pipeline).assert().code(1).get_output().stderr.clone();
    let err = String::from_utf8(out).unwrap();
    // The family is checked by the schema first; both problems name their line.
    assert!(err.contains("p.toml:12:") && err.contains("averages"), "{err}");
    std::fs::write(&pipeline, std::fs::read_to_string(&pipeline).unwrap().replace("\"averages\"", "\"moments\""))
        .unwrap();
    let out = blindspot().arg("validate").arg(&pipeline).assert().code(1).get_output().stderr.clone();
    let err = String::from_utf8(out).unwrap();
    assert!(err.contains("p.toml:11:") && err.contains("invalid regular expression"), "{err}");
    assert!(err.contains("p.toml:12:") && err.contains("no field \"objekt\""), "{err}");
}
