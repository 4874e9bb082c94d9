//! The release's self-description: the dataset card with its datasheet, and
//! `croissant.json`, on the demo and on a fixture whose pipeline answers nothing.

mod common;

use std::path::Path;
use std::sync::OnceLock;

use arrow::array::{Array, Float64Array};
use common::{blindspot, root};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use sha2::{Digest, Sha256};

/// The demo release, built once for every test of this file that reads it
/// (the folder holding `vqa-rad/<version>/`).
fn demo() -> &'static Path {
    static DEMO: OnceLock<tempfile::TempDir> = OnceLock::new();
    DEMO.get_or_init(|| {
        let out = tempfile::tempdir().unwrap();
        let run = blindspot()
            .current_dir(root())
            .args(["build", "pipelines/vqa-rad.toml", "--out-dir"])
            .arg(out.path())
            .output();
        let run = run.unwrap();
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        // The demo answers every datasheet question: no warning.
        assert!(!String::from_utf8_lossy(&run.stderr).contains("warning"), "{}", String::from_utf8_lossy(&run.stderr));
        out
    })
    .path()
}

fn pct(v: &serde_json::Value) -> String {
    format!("{:.1}%", v.as_f64().unwrap() * 100.0)
}

/// What the README says of the demo is what the build makes: the version in
/// its first command, the headline blind accuracy with its CI, chance and
/// majority baseline, the fresh-seed figure and the number of variant configs.
#[test]
fn the_readme_states_the_demo_as_built() {
    let pipeline: toml::Table =
        toml::from_str(&std::fs::read_to_string(root().join("pipelines/vqa-rad.toml")).unwrap()).unwrap();
    let version = pipeline["dataset"]["version"].as_str().unwrap();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let line4 = readme.lines().nth(3).unwrap();
    assert!(line4.contains(&format!("releases/vqa-rad/{version}/")), "README line 4 names another version: {line4}");
    let dir = demo().join(format!("vqa-rad/{version}"));
    let read = |f: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("report").join(f)).unwrap()).unwrap()
    };
    let (d, p) = (read("diagnose.json"), read("prune.json"));
    let b = &d["blind_accuracy"];
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let headline = format!(
        "answers {} of it blind (95% CI {}-{}, folds grouped by image), against chance {} and a majority baseline of {}",
        pct(&b["weighted"]),
        pct(&b["ci95"][0]).trim_end_matches('%'),
        pct(&b["ci95"][1]).trim_end_matches('%'),
        pct(&d["chance"]),
        pct(&d["majority"])
    );
    assert!(flat.contains(&headline), "the README's headline is not the build's: want \"{headline}\"");
    let fresh = format!("on three fresh seeds the set scores {}", pct(&p["after_independent"]["blind_accuracy"]));
    assert!(flat.contains(&fresh), "want \"{fresh}\"");
    let words = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
    // Each variant config is a folder under variants/.
    let variants =
        std::fs::read_dir(dir.join("variants")).unwrap().filter(|e| e.as_ref().unwrap().path().is_dir()).count();
    assert!(flat.contains(&format!("{} variant configs", words[variants])), "the demo has {variants} variant configs");
}

#[test]
fn demo_card_front_matter_and_datasheet() {
    let card = std::fs::read_to_string(demo().join(format!("{}/README.md", common::demo_release()))).unwrap();
    let (front, body) = card.strip_prefix("---\n").and_then(|c| c.split_once("\n---\n")).expect("YAML front matter");
    for key in ["pretty_name:", "license:", "task_categories:", "size_categories:", "configs:", "dataset_info:"] {
        assert!(front.lines().any(|l| l.starts_with(key)), "no {key} in {front}");
    }
    assert!(front.contains("num_examples: 451") && front.contains("list: image"), "{front}");
    // Every section and every question of the datasheet, none left unanswered.
    for section in blindspot::release::datasheet::SECTIONS {
        assert!(body.contains(&format!("### {section}\n")), "no section {section}");
    }
    for q in blindspot::release::datasheet::QUESTIONS {
        assert!(body.contains(q.text), "no question {}", q.id);
    }
    assert!(!body.contains("**Unanswered.**"));
    insta::assert_snapshot!("demo_card", card);
}

/// The demo's report page as a reader sees it: its text, tags dropped, one
/// line per block, entities decoded.
#[test]
fn demo_report_page_text() {
    let html = std::fs::read_to_string(demo().join(format!("{}/report/index.html", common::demo_release()))).unwrap();
    let body = html.split_once("<body>").map_or(html.as_str(), |(_, b)| b);
    let mut text = String::new();
    let mut in_tag = false;
    let mut tag = String::new();
    for c in body.chars() {
        match (in_tag, c) {
            (false, '<') => (in_tag, tag) = (true, String::new()),
            (true, '>') => {
                in_tag = false;
                let name = tag.trim_start_matches('/').split([' ', '/']).next().unwrap_or("").to_string();
                if ["p", "h1", "h2", "h3", "tr", "div", "li", "table", "br", "img"].contains(&name.as_str()) {
                    text.push('\n');
                } else if ["td", "th"].contains(&name.as_str()) && !tag.starts_with('/') {
                    text.push_str(" | ");
                }
                if name == "img" {
                    let alt = tag.split("alt=\"").nth(1).and_then(|a| a.split('"').next()).unwrap_or("");
                    text.push_str(&format!("[image: {alt}]\n"));
                }
            }
            (true, c) => tag.push(c),
            (false, c) => text.push(c),
        }
    }
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    assert!(!text.contains('`'), "Markdown backticks on the page");
    insta::assert_snapshot!("demo_report_page", lines.join("\n"));
    // Independently of the page's own source: its headline blind accuracy is the
    // mean correctness of the held-out predictions in report/scores.parquet.
    let scores = std::fs::File::open(demo().join(format!("{}/report/scores.parquet", common::demo_release()))).unwrap();
    let (mut right, mut n) = (0.0, 0);
    for batch in ParquetRecordBatchReaderBuilder::try_new(scores).unwrap().build().unwrap() {
        let batch = batch.unwrap();
        let correct = batch.column_by_name("correct").unwrap().as_any().downcast_ref::<Float64Array>().unwrap();
        right += correct.values().iter().sum::<f64>();
        n += batch.num_rows();
    }
    assert_eq!(n, 451, "one held-out prediction per demo question");
    let headline = format!("{:.1}%", 100.0 * right / n as f64);
    let at = lines.iter().position(|l| l.starts_with("blind accuracy (TsT-RF)")).expect("a blind accuracy headline");
    assert_eq!(lines[at + 1], headline, "the page's headline is not the mean of scores.parquet's `correct`");
}

#[test]
fn demo_croissant_names_every_parquet_file_with_its_hash() {
    let dir = demo().join(common::demo_release());
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("croissant.json")).unwrap()).unwrap();
    assert_eq!(doc["conformsTo"], "http://mlcommons.org/croissant/1.1");
    assert_eq!(doc["license"], "https://spdx.org/licenses/CC0-1.0.html");
    assert_eq!(doc["prov:wasDerivedFrom"]["@id"], "https://osf.io/89kps/");
    let files = doc["distribution"].as_array().unwrap();
    // The default config (pruning stopped at chance, so no `full` copy and no empty
    // `removed`) and the seven variant configs of the demo.
    assert_eq!(files.len(), 8);
    for f in files {
        let path = f["contentUrl"].as_str().unwrap();
        let bytes = std::fs::read(dir.join(path)).unwrap();
        assert_eq!(f["sha256"], hex::encode(Sha256::digest(&bytes)), "{path}");
        assert_eq!(f["@type"], "cr:FileObject");
    }
    let sets = doc["recordSet"].as_array().unwrap();
    assert_eq!(sets[0]["@id"], "default");
    let names: Vec<&str> = sets.iter().map(|s| s["@id"].as_str().unwrap()).collect();
    for name in ["no_image", "white_image", "phantom0"] {
        assert!(names.contains(&name), "{name} missing: {names:?}");
    }
    let images = sets[0]["field"].as_array().unwrap().iter().find(|f| f["name"] == "images").unwrap();
    assert_eq!(images["dataType"], "sc:ImageObject");
    for key in [
        "rai:dataCollection",
        "rai:dataPreprocessingProtocol",
        "rai:dataBiases",
        "rai:dataLimitations",
        "rai:dataUseCases",
    ] {
        assert!(doc[key].as_str().is_some_and(|t| t.len() > 40), "{key}: {}", doc[key]);
    }
    assert!(
        doc["rai:dataBiases"].as_str().unwrap().contains("without the image")
            || doc["rai:dataBiases"].as_str().unwrap().contains("never sees the images")
    );
}

#[test]
fn unanswered_datasheet_questions_warn_and_are_marked() {
    let work = common::fixture_workspace();
    let pipeline = work.path().join("canonical.toml");
    let text = std::fs::read_to_string(&pipeline).unwrap();
    std::fs::write(&pipeline, format!("{text}\n[datasheet]\npurpose = \"A fixture.\"\n")).unwrap();
    let out =
        blindspot().current_dir(work.path()).args(["build", "canonical.toml", "--out-dir", "rel"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let open = blindspot::release::datasheet::QUESTIONS.iter().filter(|q| !q.computed).count() - 1;
    assert!(
        stderr.contains(&format!("warning: canonical.toml: {open} datasheet questions are unanswered")),
        "{stderr}"
    );
    assert!(stderr.contains("creators") && !stderr.contains("purpose,"), "{stderr}");
    let card = std::fs::read_to_string(work.path().join("rel/canonical/1.0.0/README.md")).unwrap();
    assert_eq!(card.matches("**Unanswered.**").count(), open);
    assert!(card.contains("A fixture."));

    // A key that is no datasheet question is an error where it is written.
    std::fs::write(&pipeline, format!("{text}\n[datasheet]\nfundng = \"x\"\n")).unwrap();
    let out = blindspot().current_dir(work.path()).args(["validate", "canonical.toml"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("canonical.toml:") && stderr.contains("did you mean \"funding\""), "{stderr}");
}

#[test]
fn the_lock_file_proves_a_rebuild() {
    let work = common::fixture_workspace();
    let run = |args: &[&str]| blindspot().current_dir(work.path()).args(args).output().unwrap();
    // No lock yet: --check says how to get one.
    let out = run(&["build", "canonical.toml", "--check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("canonical.lock.json: no lock file"));
    // Building into another folder writes no lock; into releases/ it does.
    assert!(run(&["build", "canonical.toml", "--out-dir", "elsewhere"]).status.success());
    assert!(!work.path().join("canonical.lock.json").exists());
    assert!(run(&["build", "canonical.toml"]).status.success());
    let lock: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.path().join("canonical.lock.json")).unwrap()).unwrap();
    let release = work.path().join("releases/canonical/1.0.0");
    let files = common::files_below(&release);
    assert_eq!(lock["outputs"].as_object().unwrap().keys().cloned().collect::<Vec<_>>(), files);
    let out = run(&["build", "canonical.toml", "--check"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("rebuilt {} files, identical", files.len())));
    // A changed input: the check fails, names what differs, and writes nothing.
    let data = work.path().join("canonical.jsonl");
    std::fs::write(&data, std::fs::read_to_string(&data).unwrap().replace("sleeping", "eating")).unwrap();
    let before = common::files_below(work.path());
    let out = run(&["build", "canonical.toml", "--check"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("does not match the lock: the build's inputs differ"), "{stderr}");
    assert_eq!(common::files_below(work.path()), before);
}

/// `--check` of several pipelines names every missing lock file at once,
/// before any pipeline is rebuilt.
#[test]
fn a_check_names_every_missing_lock_file_before_rebuilding() {
    let work = common::fixture_workspace();
    let text = std::fs::read_to_string(work.path().join("canonical.toml")).unwrap();
    std::fs::write(work.path().join("other.toml"), text.replace("name = \"canonical\"", "name = \"other\"")).unwrap();
    let out = blindspot()
        .current_dir(work.path())
        .args(["build", "canonical.toml", "other.toml", "--check"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("canonical.lock.json: no lock file to check against"), "{stderr}");
    assert!(stderr.contains("other.lock.json: no lock file to check against"), "{stderr}");
}

/// `[predictions]` in a pipeline: `build` scores the files against the
/// release and writes `report/metrics.json`, with the pipeline's own paths
/// (never the build machine's) and unknown ids counted.
#[test]
fn predictions_in_a_pipeline_give_report_metrics() {
    let work = common::fixture_workspace();
    let preds = [
        r#"{"model": "m1", "id": "c1", "response": "The answer is C."}"#,
        r#"{"model": "m1", "id": "c2", "response": "yes"}"#,
        r#"{"model": "m1", "id": "c10", "response": "2"}"#,
        r#"{"model": "m1", "id": "c3", "response": "sleeping"}"#,
        r#"{"model": "m1", "id": "nope", "response": "A"}"#,
    ];
    std::fs::create_dir(work.path().join("preds")).unwrap();
    std::fs::write(work.path().join("preds/m1.jsonl"), preds.join("\n") + "\n").unwrap();
    let toml = std::fs::read_to_string(work.path().join("canonical.toml")).unwrap();
    std::fs::write(
        work.path().join("canonical.toml"),
        format!("{toml}\n[predictions]\nfiles = [{{ path = \"preds/m1.jsonl\" }}]\n\n[metrics]\nresamples = 200\n"),
    )
    .unwrap();
    let out =
        blindspot().current_dir(work.path()).args(["build", "canonical.toml", "--out-dir", "rel"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(work.path().join("rel/canonical/1.0.0/report/metrics.json")).unwrap();
    let per_question = work.path().join("rel/canonical/1.0.0/report/per_question.parquet");
    let rows: usize = parquet::file::reader::SerializedFileReader::new(std::fs::File::open(&per_question).unwrap())
        .map(|r| parquet::file::reader::FileReader::metadata(&r).file_metadata().num_rows() as usize)
        .unwrap();
    let scored: u64 = serde_json::from_str::<serde_json::Value>(&text).unwrap()["models"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|m| m["conditions"].as_object().unwrap().values().map(|c| c["n"].as_u64().unwrap()))
        .sum();
    assert_eq!(rows as u64, scored, "one per_question row per scored prediction");
    let m: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(text.contains("\"preds/m1.jsonl\""), "{text}");
    assert!(!text.contains(&work.path().display().to_string()), "an absolute path leaked: {text}");
    assert_eq!(text.matches("\"nope\"").count(), 1, "the unknown id is listed once: {text}");
    // Three of four right (c10 answers 2 for 1); the unknown id is counted.
    let cell = &m["models"]["m1"]["conditions"]["original"];
    assert_eq!((cell["n"].as_u64(), cell["accuracy"].as_f64()), (Some(4), Some(0.75)), "{m:#}");
    assert_eq!(m["import"]["unknown_ids"]["count"], 1, "{m:#}");
    assert_eq!(m["settings"]["resamples"], 200);
    // The card shows the results and the datasheet points at them.
    let card = std::fs::read_to_string(work.path().join("rel/canonical/1.0.0/README.md")).unwrap();
    assert!(card.contains("## Model results"), "{card}");
    assert!(card.contains("| m1 | original | 4 | 75.0% ("), "{card}");
    assert!(card.contains("predictions of 1 model(s) (`m1`)"), "{card}");
    // The prediction file is an input of the release: hashed in the manifest.
    let manifest = std::fs::read_to_string(work.path().join("rel/canonical/1.0.0/manifest.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    let bytes = std::fs::read(work.path().join("preds/m1.jsonl")).unwrap();
    use sha2::Digest;
    let sha = hex::encode(sha2::Sha256::digest(&bytes));
    assert_eq!(manifest["predictions"][0]["path"], "preds/m1.jsonl", "{manifest:#}");
    assert_eq!(manifest["predictions"][0]["sha256"], sha.as_str(), "{manifest:#}");

    // A missing prediction file is a located error at validate time.
    std::fs::write(
        work.path().join("bad.toml"),
        format!("{toml}\n[predictions]\nfiles = [{{ path = \"preds/none.jsonl\", format = \"csvv\" }}]\n"),
    )
    .unwrap();
    let out = blindspot().current_dir(work.path()).args(["validate", "bad.toml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("predictions.files[0].format") && err.contains("csvv"), "{err}");
}

/// `[prune] method = "bclean"`: the questions any model answers correctly in
/// mirage mode go to the `removed` config with their reason; the rest is the
/// default config; `report/bclean.json` has the per-model counts.
#[test]
fn bclean_in_a_pipeline_removes_what_models_answer_without_the_image() {
    let work = common::fixture_workspace();
    let preds = [
        // m1 answers c1 right without the image, m2 answers c2 right; c3 is wrong for both.
        r#"{"model": "m1", "id": "c1::mirage", "response": "C"}"#,
        r#"{"model": "m1", "id": "c2::mirage", "response": "no"}"#,
        r#"{"model": "m1", "id": "c3::mirage", "response": "eating"}"#,
        r#"{"model": "m2", "id": "c1::mirage", "response": "A"}"#,
        r#"{"model": "m2", "id": "c2::mirage", "response": "yes"}"#,
        r#"{"model": "m1", "id": "c1", "response": "C"}"#,
        r#"{"model": "m2", "id": "c1", "response": "C"}"#,
    ];
    std::fs::write(work.path().join("preds.jsonl"), preds.join("\n") + "\n").unwrap();
    let toml = std::fs::read_to_string(work.path().join("canonical.toml")).unwrap();
    std::fs::write(
        work.path().join("canonical.toml"),
        format!("{toml}\n[prune]\nmethod = \"bclean\"\n\n[predictions]\nfiles = [{{ path = \"preds.jsonl\" }}]\n"),
    )
    .unwrap();
    let out =
        blindspot().current_dir(work.path()).args(["build", "canonical.toml", "--out-dir", "rel"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rel = work.path().join("rel/canonical/1.0.0");
    let b: serde_json::Value = serde_json::from_slice(&std::fs::read(rel.join("report/bclean.json")).unwrap()).unwrap();
    assert_eq!(b["union"], 2, "{b:#}");
    assert_eq!(b["kept_count"], 2, "{b:#}");
    let p: serde_json::Value = serde_json::from_slice(&std::fs::read(rel.join("report/prune.json")).unwrap()).unwrap();
    let removed: Vec<&str> = p["removed"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(removed, ["c1", "c2"]);
    assert!(p["removed"][0]["reason"].as_str().unwrap().contains("m1"), "{p:#}");
    let kept = std::fs::read_to_string(rel.join("report/kept_ids.txt")).unwrap();
    assert_eq!(kept.lines().collect::<Vec<_>>(), ["c3", "c10"]);
    assert!(rel.join("removed/test-00000-of-00001.parquet").is_file());

    // Without predictions B-Clean is a located validation error.
    std::fs::write(work.path().join("bad.toml"), format!("{toml}\n[prune]\nmethod = \"bclean\"\n")).unwrap();
    let out = blindspot().current_dir(work.path()).args(["validate", "bad.toml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("prune.method") && err.contains("predictions"), "{err}");
}

/// `[filter] preset = "emma"`: a question any model answers from its text alone or
/// from its text and a caption leaves the default config for `removed`, with the
/// models that answered it in `report/filter.json` and the rule on the card.
#[test]
fn a_filter_preset_in_a_pipeline_removes_what_blind_models_answer() {
    let work = common::fixture_workspace();
    let preds = [
        // c1: m1 right with a caption; c2: m2 right from the text alone in one of two tries
        // (no majority: kept), c3: m2 right in both tries; c10: right only with the image.
        r#"{"model": "m1", "id": "c1::caption", "response": "C"}"#,
        r#"{"model": "m2", "id": "c2::no_image", "response": "no"}"#,
        r#"{"model": "m2", "id": "c2::no_image", "response": "yes"}"#,
        r#"{"model": "m2", "id": "c3::no_image", "response": "sleeping"}"#,
        r#"{"model": "m2", "id": "c3::no_image", "response": "sleeping"}"#,
        r#"{"model": "m1", "id": "c10", "response": "7"}"#,
    ];
    std::fs::write(work.path().join("preds.jsonl"), preds.join("\n") + "\n").unwrap();
    let toml = std::fs::read_to_string(work.path().join("canonical.toml")).unwrap();
    std::fs::write(
        work.path().join("canonical.toml"),
        format!("{toml}\n[filter]\npreset = \"emma\"\n\n[predictions]\nfiles = [{{ path = \"preds.jsonl\" }}]\n"),
    )
    .unwrap();
    let out =
        blindspot().current_dir(work.path()).args(["build", "canonical.toml", "--out-dir", "rel"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rel = work.path().join("rel/canonical/1.0.0");
    let f: serde_json::Value = serde_json::from_slice(&std::fs::read(rel.join("report/filter.json")).unwrap()).unwrap();
    let removed: Vec<(&str, &str)> = f["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r["models"][0].as_str().unwrap()))
        .collect();
    assert_eq!(removed, [("c1", "m1"), ("c3", "m2")], "{f:#}");
    assert_eq!((f["n_questions"].as_u64(), f["kept_count"].as_u64()), (Some(4), Some(2)), "{f:#}");
    let card = std::fs::read_to_string(rel.join("README.md")).unwrap();
    assert!(card.contains("## Blind-model filter"), "{card}");
    assert!(card.contains("2 of 4 questions removed before pruning: removed when any of the 2 models"), "{card}");
    assert!(card.contains("config_name: \"removed\""), "{card}");
    let ingested = blindspot::io::parquet::read_samples(&rel.join("removed/test-00000-of-00001.parquet")).unwrap();
    let ids: Vec<&str> = ingested.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["c1", "c3"]);
    let kept = blindspot::io::parquet::read_samples(&rel.join("data/test-00000-of-00001.parquet")).unwrap();
    assert_eq!(kept.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["c2", "c10"]);

    // A preset with a threshold of its own, and a filter without predictions, are located errors.
    std::fs::write(work.path().join("bad.toml"), format!("{toml}\n[filter]\npreset = \"mmmu-pro\"\nmin-models = 2\n"))
        .unwrap();
    let out = blindspot().current_dir(work.path()).args(["validate", "bad.toml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("filter.min-models") && err.contains("fixes"), "{err}");
    assert!(err.contains("a filter needs model predictions"), "{err}");
}

/// A question type that is one 1 MB word: the card shows its first 200
/// characters, an ellipsis and its length, so neither the card nor the page
/// grows by its size; the data file keeps it whole.
#[test]
fn a_huge_token_is_shortened_in_the_card_and_the_page() {
    let work = common::fixture_workspace();
    let token = "t".repeat(1_048_576);
    let data = std::fs::read_to_string(work.path().join("canonical.jsonl")).unwrap();
    std::fs::write(work.path().join("canonical.jsonl"), data.replace("\"color\"", &format!("\"{token}\""))).unwrap();
    let out =
        blindspot().current_dir(work.path()).args(["build", "canonical.toml", "--out-dir", "rel"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rel = work.path().join("rel/canonical/1.0.0");
    let shown = format!("{}… (1,048,576 characters)", "t".repeat(200));
    let card = std::fs::read_to_string(rel.join("README.md")).unwrap();
    assert!(card.contains(&shown), "{card}");
    assert!(card.len() < 100_000, "the card is {} bytes", card.len());
    let page = std::fs::read_to_string(rel.join("report/index.html")).unwrap();
    assert!(page.len() < 100_000, "the page is {} bytes", page.len());
    let rows = blindspot::io::parquet::read_samples(&rel.join("data/test-00000-of-00001.parquet")).unwrap();
    assert!(rows.iter().any(|r| r.question_type.as_deref() == Some(token.as_str())));
}

/// Hostile text in the description, the citation and a datasheet answer reaches the
/// card as text: HTML escaped, a link that would run script shown without its link
/// syntax, and a citation holding a code fence kept inside a longer fence.
#[test]
fn hostile_text_in_the_card_stays_text() {
    let work = common::fixture_workspace();
    let pipeline = work.path().join("canonical.toml");
    let text = std::fs::read_to_string(&pipeline).unwrap();
    let hostile = text.replacen(
        "license = \"CC0-1.0\"\n",
        "license = \"CC0-1.0\"\n\
         description = \"See <script>alert(1)</script> and [this](javascript:alert(2)).\"\n\
         citation = \"@misc{x,\\n```\\n<img src=x onerror=alert(3)>\\n}\"\n",
        1,
    );
    assert_ne!(hostile, text, "the fixture's [dataset] table changed: update this test");
    std::fs::write(&pipeline, format!("{hostile}\n[datasheet]\npurpose = \"Tables | break <b>here</b>.\"\n")).unwrap();
    let out =
        blindspot().current_dir(work.path()).args(["build", "canonical.toml", "--out-dir", "rel"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let card = std::fs::read_to_string(work.path().join("rel/canonical/1.0.0/README.md")).unwrap();
    let body = card.splitn(3, "---\n").nth(2).expect("front matter, then the body");
    for raw in ["<script>", "<b>", "](javascript:"] {
        assert!(!body.contains(raw), "{raw:?} reached the card body:\n{body}");
    }
    assert!(body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{body}");
    // The citation's own ``` sits inside a fence of four or more backticks.
    let citation = body.split("## Citation").nth(1).expect("a citation section");
    let fence = citation.lines().find(|l| !l.trim().is_empty()).expect("a fenced citation");
    assert!(fence.trim_end().chars().take_while(|&c| c == '`').count() >= 4, "fence {fence:?}:\n{body}");
    assert!(body.contains("<img src=x onerror=alert(3)>"), "inside the fence the citation is verbatim:\n{body}");
}

/// Every CircularEval rotation is one `circular` config whose `rotation`
/// column is the k of each row's `circular@k`, and the card's front matter,
/// croissant.json and the file agree on it (counted from the rows here).
#[test]
fn circular_rotations_are_one_config_with_a_rotation_column() {
    let tmp = tempfile::tempdir().unwrap();
    let release = common::variants_fixture_release(tmp.path());
    let file = release.join("variants/circular/test-00000-of-00001.parquet");
    let rows = blindspot::io::parquet::read_samples(&file).unwrap();
    let ks: Vec<i32> = rows
        .iter()
        .map(|r| r.variant.as_deref().and_then(|v| v.strip_prefix("circular@")).unwrap().parse().unwrap())
        .collect();
    // The fixture's six multiple-choice questions: 6 + 6 + 5 + 1 rotations, in rotation order.
    assert_eq!(ks, [vec![0; 6], vec![1; 6], vec![2; 5], vec![3]].concat());
    let reader =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&file).unwrap()).unwrap().build().unwrap();
    let mut column = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let col = batch.column_by_name("rotation").expect("a rotation column");
        let ints = col.as_any().downcast_ref::<arrow::array::Int32Array>().expect("rotation is int32");
        assert_eq!(ints.null_count(), 0);
        column.extend(ints.values().iter().copied());
    }
    assert_eq!(column, ks);
    let dirs: Vec<String> = std::fs::read_dir(release.join("variants"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("circular"))
        .collect();
    assert_eq!(dirs, ["circular"], "no per-rotation configs");

    let card = std::fs::read_to_string(release.join("README.md")).unwrap();
    let front: serde_yaml_ng::Value = serde_yaml_ng::from_str(card.split("---\n").nth(1).unwrap()).unwrap();
    let names: Vec<&str> =
        front["configs"].as_sequence().unwrap().iter().map(|c| c["config_name"].as_str().unwrap()).collect();
    assert!(names.contains(&"circular") && !names.iter().any(|n| n.starts_with("circular-")), "{names:?}");
    let info = front["dataset_info"].as_sequence().unwrap().iter().find(|c| c["config_name"] == "circular").unwrap();
    assert_eq!(info["splits"][0]["num_examples"].as_u64(), Some(ks.len() as u64));
    let features = info["features"].as_sequence().unwrap();
    let rotation = features.iter().find(|f| f["name"] == "rotation").expect("rotation in dataset_info");
    assert_eq!(rotation["dtype"], "int32");
    assert_eq!(features.len(), 19, "the 18 canonical columns and rotation");
    for k in 0..4 {
        assert!(
            card.contains(&format!("| `circular@{k}` | `circular` |")),
            "the variants table names the config of circular@{k}"
        );
    }

    let croissant: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(release.join("croissant.json")).unwrap()).unwrap();
    let set = croissant["recordSet"].as_array().unwrap().iter().find(|s| s["@id"] == "circular").unwrap();
    let field = set["field"].as_array().unwrap().iter().find(|f| f["@id"] == "circular/rotation").unwrap();
    assert_eq!(field["dataType"], "sc:Integer");
    assert_eq!(field["source"]["fileObject"]["@id"], "variants/circular/test-00000-of-00001.parquet");
    assert!(!croissant.to_string().contains("circular-"), "no per-rotation record set or file");
    blindspot().arg("verify").arg(&release).assert().success();
}

/// Near-duplicate images in a build: a radiograph and its half-size JPEG copy
/// are one cluster, and the report page shows both as thumbnails (PNG files
/// under `report/thumbnails/`, no side over 96 pixels) with their questions;
/// the image shown by no cluster gets no thumbnail.
#[test]
fn the_report_page_shows_near_duplicate_images_as_thumbnails() {
    let tmp = tempfile::tempdir().unwrap();
    common::near_duplicate_image_bench(tmp.path(), "\n[leakage]\nexact-only = true\n");
    let out = blindspot().current_dir(tmp.path()).args(["build", "bench.toml", "--out-dir", "rel"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = tmp.path().join("rel/t/0.1.0/report");
    let page = std::fs::read_to_string(report.join("index.html")).unwrap();
    let thumbs: Vec<&str> = page.match_indices("<img src=\"thumbnails/").map(|(i, _)| &page[i..]).collect();
    assert_eq!(thumbs.len(), 2, "{page}");
    for t in thumbs {
        let file = &t["<img src=\"".len()..t["<img src=\"".len()..].find('"').unwrap() + "<img src=\"".len()];
        let img = image::open(report.join(file)).unwrap();
        assert!(img.width().max(img.height()) <= 96 && img.width().min(img.height()) >= 48, "{file}: {img:?}");
    }
    assert!(page.contains("<code>a-small.jpg</code><br>2") && page.contains("<code>a.png</code><br>1"), "{page}");
    assert!(!page.contains("b.jpg"), "b.jpg joins no cluster: {page}");
    assert_eq!(std::fs::read_dir(report.join("thumbnails")).unwrap().count(), 2);
}
