//! Exports read back: VLMEvalKit TSVs parsed (and base64-decoded) reproduce
//! questions, options, gold and images; lmms-eval YAMLs load with Python's
//! `yaml` and name files and functions that exist; the exported `utils.py`
//! scores responses as blindspot does; manifests map every harness row to its
//! blindspot id.
//!
//! The three tests that run Python (`python3`, and PyYAML from it or from the
//! pinned `.venv-interop`) say why they skip when it is missing; with
//! BLINDSPOT_REQUIRE_PYTHON=1 (CI) they fail instead. The one that runs
//! lmms-eval's task loader needs the harness venv (`.venv-harness`, which the
//! harness round trip installs) and fails without it under
//! BLINDSPOT_REQUIRE_HARNESS=1.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use base64::Engine;
use blindspot::export::gold_label;
use blindspot::io::parquet::read_samples;
use blindspot::sample::{AnswerFormat, Sample};
use blindspot::variants::harness_question;
use common::{blindspot, root, venv};

/// Runs `variants` (every kind) on the fixture and exports it for `harness`.
fn export(harness: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let variants = tmp.path().join("variants");
    let out = tmp.path().join(harness);
    let o = blindspot()
        .current_dir(root())
        .args(["variants", "tests/fixtures/good/variants.toml", "-o"])
        .arg(&variants)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = blindspot().arg("export").arg(&variants).args(["--to", harness, "-o"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (tmp, variants, out)
}

/// The rows of an exported config, from the variants folder: `circular` holds
/// every `circular@k` file's rows, in rotation order.
fn rows_of(variants: &Path, config: &str) -> Vec<Sample> {
    if config == "circular" {
        let files = (0..).map(|k| variants.join(format!("circular@{k}.parquet"))).take_while(|f| f.is_file());
        return files.flat_map(|f| read_samples(&f).unwrap()).collect();
    }
    read_samples(&variants.join(format!("{config}.parquet"))).unwrap()
}

fn manifest(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap()
}

#[test]
fn vlmevalkit_tsv_parsed_back_reproduces_questions_options_gold_and_images() {
    let (_tmp, variants, out) = export("vlmevalkit");
    let m = manifest(&out);
    let files = m["files"].as_array().unwrap();
    // 19 kinds, every one with rows on the fixture; circular@0..3 share the `circular` config.
    assert_eq!(files.len(), 16);
    assert!(files.iter().all(|f| !f["config"].as_str().unwrap().starts_with("circular@")));
    let mut checked = 0;
    for f in files {
        let config = f["config"].as_str().unwrap();
        let name = f["file"].as_str().unwrap();
        assert_eq!(name, blindspot::export::vlmevalkit::tsv_name("variants-fixture", config));
        assert!(!name.contains('@'), "{name}: a file-safe name");
        let rows = rows_of(&variants, config);
        let mut rdr = csv::ReaderBuilder::new().delimiter(b'\t').from_path(out.join(name)).unwrap();
        let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
        let col: HashMap<&str, usize> = header.iter().enumerate().map(|(i, h)| (h.as_str(), i)).collect();
        let image_free = rows.iter().all(|r| r.images.is_empty());
        assert_eq!(col.contains_key("image"), !image_free, "{config}: image column only with images");
        for key in ["index", "question", "answer", "category", "blindspot_id"] {
            assert!(col.contains_key(key), "{config}: {key} in {header:?}");
        }
        assert_eq!(col.contains_key("rotation"), config == "circular", "{config}: {header:?}");
        let records: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
        assert_eq!(records.len(), rows.len());
        let index = f["rows"].as_array().unwrap();
        for ((rec, row), entry) in records.iter().zip(&rows).zip(index) {
            let get = |k: &str| rec.get(col[k]).unwrap();
            assert_eq!(get("blindspot_id"), row.id);
            if config == "circular" {
                assert_eq!(get("rotation"), k_of(row).to_string(), "{}", row.id);
            }
            assert_eq!(entry["id"], row.id.as_str(), "manifest maps the index to the id");
            assert_eq!(get("index"), entry["index"].to_string());
            assert_eq!(get("question"), harness_question(row));
            if row.question.contains('\n') || config == "guess" {
                assert!(get("question").contains('\n'), "multi-line questions survive quoting");
            }
            for (i, o) in row.options.iter().enumerate() {
                assert_eq!(get(&((b'A' + i as u8) as char).to_string()), o);
            }
            assert_eq!(get("answer"), gold_label(row));
            if row.answer_format == AnswerFormat::MultipleChoice {
                let letter = get("answer").as_bytes()[0] - b'A';
                assert_eq!(row.options[letter as usize], row.answer, "the letter names the gold");
            }
            if !image_free && row.images.is_empty() {
                assert_eq!(get("image"), "", "{}: a row without image in a config with images", row.id);
            } else if !image_free {
                let bytes = base64::engine::general_purpose::STANDARD.decode(get("image")).unwrap();
                assert_eq!(Some(&bytes), row.images[0].bytes.as_ref());
                assert!(bytes.starts_with(b"\x89PNG"));
            }
            checked += 1;
        }
    }
    assert!(checked > 290, "{checked}");
}

#[test]
fn vlmevalkit_tsv_reads_with_python_csv_when_available() {
    let test = "vlmevalkit_tsv_reads_with_python_csv_when_available";
    let Some(python) = venv::python_or_skip(test, venv::python3()) else { return };
    let (_tmp, variants, out) = export("vlmevalkit");
    let script = r#"
import base64, csv, json, sys
csv.field_size_limit(1 << 30)
rows = list(csv.DictReader(open(sys.argv[1], newline=""), delimiter="\t"))
print(json.dumps([{"q": r["question"], "a": r["answer"], "A": r.get("A"), "img": len(base64.b64decode(r["image"])) if "image" in r else None} for r in rows]))
"#;
    for config in ["option_shuffle", "guess", "white_image"] {
        let o = std::process::Command::new(&python)
            .args(["-c", script])
            .arg(out.join(format!("variants-fixture_{config}.tsv")))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let parsed: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
        let rows = rows_of(&variants, config);
        assert_eq!(parsed.len(), rows.len());
        for (p, r) in parsed.iter().zip(&rows) {
            assert_eq!(p["q"], harness_question(r).as_str());
            assert_eq!(p["a"], gold_label(r).as_str());
            if let Some(first) = r.options.first() {
                assert_eq!(p["A"], first.as_str());
            }
            if let Some(b) = r.images.first().and_then(|i| i.bytes.as_ref()) {
                assert_eq!(p["img"], b.len());
            }
        }
    }
}

/// `key: value` lines of a YAML file this exporter wrote (structure check without a YAML library).
fn yaml_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| l.trim_start().strip_prefix(&format!("{key}: "))).map(|v| v.trim().trim_matches('"'))
}

#[test]
fn lmms_eval_task_folder_names_existing_files_and_functions() {
    let (tmp, variants, exported) = export("lmms-eval");
    // The folder works wherever it is moved: every path in it is relative to it.
    let out = tmp.path().join("moved/elsewhere");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    std::fs::rename(&exported, &out).unwrap();
    let m = manifest(&out);
    let tasks = m["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 16);
    let utils = std::fs::read_to_string(out.join("utils.py")).unwrap();
    for t in tasks {
        let yaml = std::fs::read_to_string(out.join(t["yaml"].as_str().unwrap())).unwrap();
        assert_eq!(yaml_value(&yaml, "task"), t["task"].as_str());
        let named = yaml_value(&yaml, "test").unwrap();
        assert_eq!(named, t["data"].as_str().unwrap(), "data_files name the data file relative to the task file");
        let data = out.join(named);
        assert!(data.is_file(), "{} (moved from {})", data.display(), exported.display());
        for line in yaml.lines().filter(|l| l.contains("!function utils.")) {
            let f = line.rsplit("utils.").next().unwrap().trim();
            assert!(utils.contains(&format!("def {f}(")), "utils.py defines {f}");
        }
        // The data file holds the variant rows; doc_id is the row position.
        let config = t["config"].as_str().unwrap();
        let rows = read_samples(&data).unwrap();
        assert_eq!(rows, rows_of(&variants, config));
        for (i, e) in t["rows"].as_array().unwrap().iter().enumerate() {
            assert_eq!(e["doc_id"], i);
            assert_eq!(e["id"], rows[i].id.as_str());
        }
    }
    let group = std::fs::read_to_string(out.join("blindspot_variants_fixture.yaml")).unwrap();
    assert_eq!(group.lines().filter(|l| l.starts_with("  - ")).count(), 16);
}

#[test]
fn lmms_eval_yaml_loads_with_python_yaml_and_utils_echo_the_id() {
    let test = "lmms_eval_yaml_loads_with_python_yaml_and_utils_echo_the_id";
    let Some(python) = venv::python_or_skip(test, venv::python_with_yaml()) else { return };
    let (tmp, _variants, out) = export("lmms-eval");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let script = r#"
import glob, json, os, sys
import yaml
class Loader(yaml.SafeLoader):
    pass
Loader.add_constructor("!function", lambda loader, node: {"function": loader.construct_scalar(node)})
out = sys.argv[1]
sys.path.insert(0, out)
import utils
found = []
for path in sorted(glob.glob(os.path.join(out, "*.yaml"))):
    cfg = yaml.load(open(path), Loader=Loader)
    if "group" in cfg:
        assert all(os.path.isfile(os.path.join(out, t + ".yaml")) for t in cfg["task"]), cfg
        continue
    data = cfg["dataset_kwargs"]["data_files"]["test"]
    assert not os.path.isabs(data) and os.path.isfile(os.path.join(os.path.dirname(path), data)), (path, data)
    for key in ("doc_to_visual", "doc_to_text", "doc_to_target", "process_results"):
        name = cfg[key]["function"].split(".", 1)[1]
        assert callable(getattr(utils, name)), name
    assert callable(getattr(utils, cfg["metric_list"][0]["aggregation"]["function"].split(".", 1)[1]))
    found.append(cfg["task"])
doc = {"id": "v1::option_shuffle", "variant": "option_shuffle", "expected": "answer", "prompt": "p",
       "answer_format": "multiple_choice", "options": ["dog", "cat", "horse"], "answer_index": 1, "answer": "cat", "images": []}
r = utils.process_results(doc, ["The answer is B."])["blindspot"]
yn = dict(doc, answer_format="yes_no", options=[], answer_index=None, answer="no")
print(json.dumps({"tasks": found, "echo": r, "target": utils.doc_to_target(doc),
                  "wrong": utils.score(doc, "A"), "yes_no": utils.score(yn, "No, there is none."),
                  "visual": utils.doc_to_visual(doc), "agg": utils.aggregate([r, dict(r, score=0)])}))
"#;
    // Run from another folder: nothing may depend on the working directory.
    let o =
        std::process::Command::new(&python).current_dir(&elsewhere).args(["-c", script]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["tasks"].as_array().unwrap().len(), 16);
    assert_eq!(v["echo"]["id"], "v1::option_shuffle");
    assert_eq!(v["echo"]["score"], 1);
    assert_eq!(v["target"], "B");
    assert_eq!((v["wrong"].as_i64(), v["yes_no"].as_i64()), (Some(0), Some(1)));
    assert_eq!(v["visual"], serde_json::json!([]));
    assert_eq!(v["agg"], 0.5);
}

/// lmms-eval's own task-file loader (`lmms_eval.utils.load_yaml_config`, from
/// the harness venv) on an export moved after it was written, run from
/// another folder: every task's data file is found, and `datasets` loads it
/// as lmms-eval does (`load_dataset(dataset_path, **dataset_kwargs)`) with the
/// manifest's rows. Skips without the harness venv (the harness round trip
/// installs it); BLINDSPOT_REQUIRE_HARNESS=1 makes that a failure.
#[test]
fn lmms_eval_loads_every_task_of_a_moved_export_from_another_folder() {
    let test = "lmms_eval_loads_every_task_of_a_moved_export_from_another_folder";
    let python = match venv::harness_python() {
        Ok(p) => p,
        Err(why) if common::required("BLINDSPOT_REQUIRE_HARNESS") => {
            panic!("BLINDSPOT_REQUIRE_HARNESS=1 but {test} cannot run: {why}")
        }
        Err(why) => {
            eprintln!("skipping {test}: {why} (BLINDSPOT_REQUIRE_HARNESS=1 makes this a failure)");
            return;
        }
    };
    let (tmp, _variants, exported) = export("lmms-eval");
    let out = tmp.path().join("moved/tasks");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    std::fs::rename(&exported, &out).unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let script = r#"
import json, os, sys
import datasets
from lmms_eval.utils import load_yaml_config
out = sys.argv[1]
manifest = json.load(open(os.path.join(out, "manifest.json")))
rows = {}
for t in manifest["tasks"]:
    cfg = load_yaml_config(os.path.join(out, t["yaml"]), mode="full")
    kwargs = dict(cfg["dataset_kwargs"])
    ds = datasets.load_dataset(cfg["dataset_path"], split=cfg["test_split"], **kwargs)
    rows[t["task"]] = [len(ds), len(t["rows"]), kwargs["data_files"]["test"]]
print(json.dumps(rows))
"#;
    let o = std::process::Command::new(&python)
        .current_dir(&elsewhere)
        .args(["-c", script])
        .arg(&out)
        .env("HF_HOME", tmp.path().join("hf-home"))
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_DATASETS_OFFLINE", "1")
        .env("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let tasks = v.as_object().unwrap();
    assert_eq!(tasks.len(), manifest(&out)["tasks"].as_array().unwrap().len());
    for (task, r) in tasks {
        assert_eq!(r[0], r[1], "{task}: datasets loaded {} rows, the manifest has {}", r[0], r[1]);
        let resolved = PathBuf::from(r[2].as_str().unwrap());
        assert!(resolved.starts_with(&out) && resolved.is_file(), "{task}: lmms-eval resolved {}", resolved.display());
    }
}

#[test]
fn exporting_a_folder_without_variants_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let o = blindspot()
        .arg("export")
        .arg(tmp.path())
        .args(["--to", "vlmevalkit", "-o"])
        .arg(tmp.path().join("x"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no Parquet files found"));
    let o = blindspot()
        .arg("export")
        .arg(tmp.path())
        .args(["--to", "lm-eval", "-o"])
        .arg(tmp.path().join("x"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("lmms-eval"));
    std::fs::write(tmp.path().join("junk.parquet"), b"not parquet").unwrap();
    let o = blindspot()
        .arg("export")
        .arg(tmp.path())
        .args(["--to", "vlmevalkit", "-o"])
        .arg(tmp.path().join("x"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("junk.parquet") && err.contains("not a blindspot canonical Parquet"), "{err}");
    assert!(!tmp.path().join("x").exists());
}

/// A release exports whole: its default config and every variant config, each
/// row with the text to send and its image bytes; rows whose images are not in
/// the data are a located error unless exported text-only on request.
#[test]
fn a_release_exports_every_config_with_prompts_and_images() {
    let tmp = tempfile::tempdir().unwrap();
    let o = blindspot()
        .current_dir(root())
        .args(["build", "pipelines/vqa-rad.toml", "--out-dir"])
        .arg(tmp.path().join("rel"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let release = tmp.path().join("rel").join(common::demo_release());
    let out = tmp.path().join("lmms");
    // The export says how to run it.
    blindspot().arg("export").arg(&release).args(["--to", "lmms-eval", "-o"]).arg(&out).assert().success().stdout(
        predicates::str::contains(format!(
            "run: lmms_eval --model MODEL --model_args ... --include_path {} --tasks blindspot_vqa_rad",
            out.display()
        )),
    );
    let vlm = tmp.path().join("vlm");
    blindspot().arg("export").arg(&release).args(["--to", "vlmevalkit", "-o"]).arg(&vlm).assert().success().stdout(
        predicates::str::contains(format!(
            "run: copy {}/*.tsv into VLMEvalKit's data root ($LMUData), then: python run.py --model MODEL --data \
             vqa-rad_data vqa-rad_guess",
            vlm.display()
        )),
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let configs: Vec<&str> =
        manifest["tasks"].as_array().unwrap().iter().map(|t| t["config"].as_str().unwrap()).collect();
    assert_eq!(
        configs,
        ["data", "guess", "mirage", "no_image", "phantom", "phantom0", "visual_substitution", "white_image"]
    );
    for t in manifest["tasks"].as_array().unwrap() {
        let rows = read_samples(&out.join(t["data"].as_str().unwrap())).unwrap();
        assert!(!rows.is_empty());
        assert!(rows.iter().all(|r| r.prompt.as_deref().is_some_and(|p| !p.trim().is_empty())), "{t}");
        assert!(rows.iter().flat_map(|r| &r.images).all(|i| i.bytes.is_some()), "{t}: an image without bytes");
    }
    // A variants folder made without the image folder names images it does not hold.
    let variants = tmp.path().join("variants");
    let q = tmp.path().join("q.jsonl");
    std::fs::write(
        &q,
        r#"{"id": "1", "question": "Which organ?", "options": ["liver", "lung"], "answer": "lung", "images": ["scan1.png"]}"#,
    )
    .unwrap();
    blindspot().arg("variants").arg(&q).args(["--kinds", "option_shuffle", "-o"]).arg(&variants).assert().success();
    let o = blindspot()
        .arg("export")
        .arg(&variants)
        .args(["--to", "lmms-eval", "-o"])
        .arg(tmp.path().join("x"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("named by path but not stored in the data") && stderr.contains("scan1.png"), "{stderr}");
    blindspot()
        .arg("export")
        .arg(&variants)
        .args(["--to", "lmms-eval", "--allow-missing-images", "-o"])
        .arg(tmp.path().join("x"))
        .assert()
        .success()
        .stderr(predicates::str::contains("exported without their images"));
}

/// The exported `utils.py` scores responses as blindspot does: the same cases
/// as `predictions::parse`'s unit test, run through Python.
#[test]
fn exported_utils_py_scores_the_shared_cases_like_blindspot() {
    let test = "exported_utils_py_scores_the_shared_cases_like_blindspot";
    let Some(python) = venv::python_or_skip(test, venv::python3()) else { return };
    let (_tmp, _variants, out) = export("lmms-eval");
    let script = r#"
import json, sys
sys.path.insert(0, sys.argv[1])
import utils
wrong = []
for line in open(sys.argv[2], encoding="utf-8"):
    c = json.loads(line)
    doc = {"answer_format": c["format"], "options": c.get("options"), "answer_index": c.get("answer_index"),
           "answer": c.get("answer") if "options" not in c else c["options"][c["answer_index"]]}
    got = utils.score(doc, c["response"])
    if got != c["score"]:
        wrong.append((c["response"], got, c["score"]))
print(json.dumps(wrong))
sys.exit(1 if wrong else 0)
"#;
    let o = std::process::Command::new(&python)
        .args(["-c", script])
        .arg(&out)
        .arg(root().join("tests/fixtures/parse_cases.jsonl"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "utils.py disagrees with blindspot on: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A name is in every file and task name an export writes: one longer than 100
/// characters is refused before anything is written, never a raw OS error.
/// A release whose config file is a symbolic link (to a copy outside it):
/// refused naming the link, exit 1, nothing written, rather than exporting
/// the other configs and skipping that one.
#[test]
fn a_release_with_a_linked_data_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let release = common::variants_fixture_release(tmp.path());
    let file = release.join("data/test-00000-of-00001.parquet");
    let outside = tmp.path().join("outside.parquet");
    std::fs::rename(&file, &outside).unwrap();
    std::os::unix::fs::symlink(&outside, &file).unwrap();
    for harness in ["lmms-eval", "vlmevalkit"] {
        let out = tmp.path().join(format!("exp-{harness}"));
        let o = blindspot()
            .arg("export")
            .arg(&release)
            .args(["--to", harness, "--allow-missing-images", "-o"])
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{harness}: {err}");
        assert!(
            err.contains(
                "data/test-00000-of-00001.parquet: a symbolic link inside the folder: configs are read only \
                 from its own files"
            ),
            "{harness}: {err}"
        );
        assert!(!out.exists(), "{harness}: an export was written");
    }
}

#[test]
fn an_export_name_over_100_characters_is_refused() {
    let (tmp, variants, _) = export("vlmevalkit");
    let out = tmp.path().join("long");
    for harness in ["vlmevalkit", "lmms-eval"] {
        let o = blindspot()
            .arg("export")
            .arg(&variants)
            .args(["--to", harness, "--name", &"a".repeat(300), "-o"])
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{harness}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            stderr.contains("command line: --name has 300 characters, more than the 100 a file name may take"),
            "{harness}: {stderr}"
        );
        assert!(!out.exists(), "{harness}");
    }
}

/// The `rotation` column of a Parquet file, row by row (None: no such column).
fn rotation_column(path: &Path) -> Option<Vec<i32>> {
    use arrow::array::{Array, Int32Array};
    let file = std::fs::File::open(path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let col = batch.column_by_name("rotation")?;
        let ints = col.as_any().downcast_ref::<Int32Array>().expect("rotation is int32");
        assert_eq!(ints.null_count(), 0, "{}: a row without rotation", path.display());
        out.extend(ints.values().iter().copied());
    }
    Some(out)
}

/// k of a `circular@k` row, read from the variant name.
fn k_of(r: &Sample) -> i32 {
    r.variant.as_deref().and_then(|v| v.strip_prefix("circular@")).and_then(|k| k.parse().ok()).unwrap()
}

/// Expected CircularEval figures of `answers` (row id → letter) over `rows`:
/// (questions, right in every rotation, right in rotation 0).
fn circular_expected(rows: &[Sample], answers: &HashMap<String, String>) -> (usize, usize, usize) {
    let mut by_parent: std::collections::BTreeMap<&str, Vec<(i32, bool)>> = Default::default();
    for r in rows {
        let gold = ((b'A' + r.answer_index.unwrap() as u8) as char).to_string();
        by_parent.entry(r.parent_id.as_deref().unwrap()).or_default().push((k_of(r), answers[&r.id] == gold));
    }
    let all = by_parent.values().filter(|v| v.iter().all(|(_, ok)| *ok)).count();
    let first = by_parent.values().filter(|v| v.iter().any(|(k, ok)| *k == 0 && *ok)).count();
    (by_parent.len(), all, first)
}

/// CircularEval is one `circular` task whose rows carry their rotation, and
/// it still scores: lmms-eval logs of that task (mapped by the manifest), and
/// logs of the per-rotation tasks earlier exports wrote (one task per
/// `circular@k`, ids echoed by utils.py), give `metrics.json` the same
/// circular accuracy, computed here from the rows.
#[test]
fn circular_rotations_export_as_one_task_and_score_from_its_logs_and_from_per_rotation_logs() {
    let tmp = tempfile::tempdir().unwrap();
    let variants = tmp.path().join("variants");
    let o = blindspot()
        .current_dir(root())
        .args(["variants", "tests/fixtures/good/variants.toml", "--kinds", "circular,no_image", "-o"])
        .arg(&variants)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = tmp.path().join("lmms");
    blindspot().arg("export").arg(&variants).args(["--to", "lmms-eval", "-o"]).arg(&out).assert().success();
    let m = manifest(&out);
    let configs: Vec<&str> = m["tasks"].as_array().unwrap().iter().map(|t| t["config"].as_str().unwrap()).collect();
    assert_eq!(configs, ["circular", "no_image"]);
    let task = &m["tasks"][0];
    let data = out.join(task["data"].as_str().unwrap());
    let rows = read_samples(&data).unwrap();
    // The fixture's rotations: 6 + 6 + 5 + 1 rows (circular@0..3), in rotation order.
    let per_file: Vec<Vec<Sample>> = (0..4).map(|k| rows_of(&variants, &format!("circular@{k}"))).collect();
    assert_eq!(per_file.iter().map(Vec::len).collect::<Vec<_>>(), [6, 6, 5, 1]);
    assert_eq!(rows, per_file.concat());
    assert_eq!(rotation_column(&data).unwrap(), rows.iter().map(k_of).collect::<Vec<_>>());
    let yaml = std::fs::read_to_string(out.join(task["yaml"].as_str().unwrap())).unwrap();
    assert_eq!(yaml_value(&yaml, "blindspot_variant"), Some("circular"));
    assert_eq!(rotation_column(&out.join("data/no_image.parquet")), None, "only the circular config has rotations");

    // Answers: parents in id order; the first third right everywhere, the
    // second third wrong in their last rotation, the rest always "A".
    let parents: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.parent_id.as_deref().unwrap()).collect();
    let parents: Vec<&str> = parents.into_iter().collect();
    let last: HashMap<&str, i32> = parents
        .iter()
        .map(|p| (*p, rows.iter().filter(|r| r.parent_id.as_deref() == Some(p)).map(k_of).max().unwrap()))
        .collect();
    let answers: HashMap<String, String> = rows
        .iter()
        .map(|r| {
            let p = r.parent_id.as_deref().unwrap();
            let gold = (b'A' + r.answer_index.unwrap() as u8) as char;
            let wrong = (b'A' + ((r.answer_index.unwrap() + 1) % r.options.len() as i32) as u8) as char;
            let answer = match parents.iter().position(|q| *q == p).unwrap() % 3 {
                0 => gold,
                1 if k_of(r) == last[p] => wrong,
                1 => gold,
                _ => 'A',
            };
            (r.id.clone(), answer.to_string())
        })
        .collect();
    let (n, all, first) = circular_expected(&rows, &answers);
    assert!(n == 6 && all > 0 && all < n, "the answers must separate right and wrong questions: {all} of {n}");

    let metrics = |files: &[PathBuf], manifest: Option<&Path>, tag: &str| -> serde_json::Value {
        let dest = tmp.path().join(format!("metrics-{tag}"));
        let mut cmd = blindspot();
        cmd.args(["metrics", "--release"]).arg(&variants).arg("--predictions").args(files);
        if let Some(mf) = manifest {
            cmd.arg("--manifest").arg(mf);
        }
        let o = cmd.args(["--strict", "-o"]).arg(&dest).output().unwrap();
        assert!(o.status.success(), "{tag}: {}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&std::fs::read(dest.join("metrics.json")).unwrap()).unwrap()
    };
    let check = |v: &serde_json::Value, tag: &str| {
        let ce = &v["models"]["model-x"]["derived"]["circular_eval"];
        assert_eq!(ce["n"], n, "{tag}: {ce}");
        assert_eq!(ce["incomplete"], 0, "{tag}: {ce}");
        let acc = ce["circular_accuracy"].as_f64().unwrap();
        assert!((acc - all as f64 / n as f64).abs() < 1e-6, "{tag}: circular accuracy {acc}, expected {all}/{n}");
        let first_acc = ce["first_rotation_accuracy"].as_f64().unwrap();
        assert!(
            (first_acc - first as f64 / n as f64).abs() < 1e-6,
            "{tag}: first rotation {first_acc}, expected {first}/{n}"
        );
    };

    // Logs of the one circular task: doc_id + response, mapped by the manifest.
    let logs = tmp.path().join("logs/model-x");
    std::fs::create_dir_all(&logs).unwrap();
    let file = logs.join(format!("20261127_samples_{}.jsonl", task["task"].as_str().unwrap()));
    let lines: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(doc, r)| serde_json::json!({"doc_id": doc, "filtered_resps": [answers[&r.id]]}).to_string())
        .collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    check(&metrics(&[file], Some(&out.join("manifest.json")), "one-task"), "one circular task");

    // Logs as the per-rotation tasks of earlier exports wrote them: one file
    // per `circular@k` task, the id echoed by utils.py's process_results.
    let old = tmp.path().join("old/model-x");
    std::fs::create_dir_all(&old).unwrap();
    let mut files = Vec::new();
    for (k, rotation) in per_file.iter().enumerate() {
        let file = old.join(format!("20261101_samples_blindspot_variants_fixture_circular_{k}.jsonl"));
        let lines: Vec<String> = rotation
            .iter()
            .enumerate()
            .map(|(doc, r)| {
                let a = &answers[&r.id];
                serde_json::json!({"doc_id": doc, "filtered_resps": [a], "blindspot": {"id": r.id, "variant": r.variant, "prediction": a}})
                    .to_string()
            })
            .collect();
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        files.push(file);
    }
    check(&metrics(&files, None, "per-rotation"), "per-rotation logs");
}
