//! TsT-RF on the committed fixtures: the leak check, the meta-field audit,
//! fold counts, determinism whatever the thread count, the outputs. Blind
//! accuracies on the real benchmarks are in `tests/real_data/diagnose.rs`.

mod common;

use std::path::PathBuf;

use common::{blindspot, files_below, root};

#[test]
fn same_bytes_with_one_or_two_threads() {
    let out = tempfile::tempdir().unwrap();
    let input = root().join("tests/fixtures/good/shortcut.jsonl");
    for threads in ["1", "2"] {
        let o = blindspot()
            .env("RAYON_NUM_THREADS", threads)
            .args(["diagnose"])
            .arg(&input)
            .arg("--out")
            .arg(out.path().join(threads))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let files = files_below(&out.path().join("1"));
    assert_eq!(
        files,
        vec!["blind_vs_chance.svg", "diagnose.json", "importances.svg", "s_histogram.svg", "scores.parquet"]
    );
    for f in &files {
        assert_eq!(
            std::fs::read(out.path().join("1").join(f)).unwrap(),
            std::fs::read(out.path().join("2").join(f)).unwrap(),
            "{f} differs between 1 and 2 threads"
        );
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("1/diagnose.json")).unwrap()).unwrap();
    assert_eq!(json["n_samples"], 120);
    assert_eq!(json["settings"]["folds"], 5);
}

#[test]
fn export_features_writes_every_fold() {
    let out = tempfile::tempdir().unwrap();
    let o = blindspot()
        .args(["diagnose"])
        .arg(root().join("tests/fixtures/good/shortcut.jsonl"))
        .arg("--out")
        .arg(out.path().join("d"))
        .arg("--export-features")
        .arg(out.path().join("f"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let files = files_below(&out.path().join("f"));
    assert_eq!(files.len(), 20, "{files:?}");
    assert!(files.contains(&"all__multiple_choice/r0_f4_test.parquet".to_string()), "{files:?}");
    // The position-free rows: one per option (every question of the fixture has 3),
    // exactly one gold per question, the option features named once, not per position.
    let read = |name: &str| {
        let file = std::fs::File::open(out.path().join("f/all__multiple_choice").join(name)).unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
        reader.map(Result::unwrap).collect::<Vec<_>>()
    };
    let questions: usize = read("r0_f4_test.parquet").iter().map(|b| b.num_rows()).sum();
    let options = read("r0_f4_test_options.parquet");
    let rows: usize = options.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 3 * questions);
    let golds: f64 = options
        .iter()
        .map(|b| {
            let col = b.column_by_name("is_gold").unwrap();
            let v = col.as_any().downcast_ref::<arrow::array::Float64Array>().unwrap();
            v.iter().flatten().sum::<f64>()
        })
        .sum();
    assert_eq!(golds, questions as f64);
    let schema = options[0].schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert!(names.contains(&"opt.is_longest") && !names.iter().any(|n| n.starts_with("opt0.")), "{names:?}");
}

#[test]
fn bad_group_by_is_a_located_error() {
    let o = blindspot()
        .args(["diagnose"])
        .arg(root().join("tests/fixtures/good/shortcut.jsonl"))
        .args(["--out", "/nonexistent/never", "--group-by", "imgae"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "\"imgae\" is not \"image\", \"image-cluster\", \"image-cluster:BITS\", \"video\", \"question\" or \"meta:FIELD\""
        ),
        "{err}"
    );
}

/// Folds grouped by a field with one value: the forest would train on
/// nothing and call the blind accuracy chance. Refused before any forest is
/// fit, naming the setting, the group and the count; nothing is written.
#[test]
fn one_fold_group_for_five_folds_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let rows: String = std::fs::read_to_string(root().join("tests/fixtures/good/shortcut.jsonl"))
        .unwrap()
        .lines()
        .map(|l| format!("{}, \"site\": \"A\"}}\n", l.trim_end().trim_end_matches('}')))
        .collect();
    let input = dir.path().join("one_site.jsonl");
    std::fs::write(&input, rows).unwrap();
    let out = dir.path().join("d");
    let o = blindspot()
        .args(["diagnose"])
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .args(["--group-by", "meta:site"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "error: command line: field \"diagnose.group-by\": group-by = \"meta:site\": the group without a \
             question type (multiple_choice, 120 questions) has 1 distinct value of site, 5 folds need at least 5"
        ),
        "{err}"
    );
    assert!(!out.exists());
}

/// A meta field that copies the gold answer is named as a suspect feature, in
/// `diagnose.json` and as a warning, whether or not it is used as a feature.
#[test]
fn a_meta_field_equal_to_the_gold_is_a_suspect_feature() {
    let dir = tempfile::tempdir().unwrap();
    let input = leaky_bench(dir.path());
    let out = dir.path().join("d");
    let run = blindspot().arg("diagnose").arg(&input).arg("--out").arg(&out).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("meta field \"finding\"") && stderr.contains("predicts the gold answer"), "{stderr}");
    assert!(!stderr.contains("\"scanner\""), "{stderr}");
    let bytes = std::fs::read(out.join("diagnose.json")).unwrap();
    // The file reads back as the type that wrote it.
    let typed: blindspot::diagnose::report::DiagnoseReport = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(typed.suspect_features.as_ref().map(Vec::len), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let suspects = json["suspect_features"].as_array().unwrap();
    assert_eq!(suspects.len(), 1, "{suspects:?}");
    assert_eq!(suspects[0]["name"], "finding");
    assert_eq!(suspects[0]["solo_blind_accuracy"], 1.0);
    // The majority baseline: "no" on two questions in three, within a fold's noise.
    let majority = suspects[0]["majority"].as_f64().unwrap();
    assert!((majority - 2.0 / 3.0).abs() < 0.05, "{majority}");
}

/// Rows whose `finding` meta field spells the gold answer.
fn leaky_bench(dir: &std::path::Path) -> PathBuf {
    let input = dir.join("bench.jsonl");
    let mut text = String::new();
    for i in 0..60 {
        let answer = if i % 3 == 0 { "yes" } else { "no" };
        let row = serde_json::json!({
            "id": format!("q{i:02}"),
            "question": format!("Is there a lesion in scan {i}?"),
            "answer": answer,
            "finding": answer,
            "scanner": format!("s{}", i % 4),
        });
        text.push_str(&row.to_string());
        text.push('\n');
    }
    std::fs::write(&input, text).unwrap();
    input
}

/// The leak check runs the whole fold again on samples whose held-out answers
/// changed: a listed meta field that spells the gold moves its column and the
/// held-out predictions, and the check fails naming it; unlisted, it passes.
#[test]
fn the_leak_check_fails_on_a_planted_leak() {
    let dir = tempfile::tempdir().unwrap();
    let input = leaky_bench(dir.path());
    let run = |extra: &[&str]| {
        blindspot()
            .arg("diagnose")
            .arg(&input)
            .arg("--out")
            .arg(dir.path().join("d"))
            .arg("--check-leakage")
            .args(extra)
            .output()
            .unwrap()
    };
    let leaky = run(&["--meta-features", "finding,scanner"]);
    assert_eq!(leaky.status.code(), Some(1), "{}", String::from_utf8_lossy(&leaky.stderr));
    let stderr = String::from_utf8_lossy(&leaky.stderr);
    assert!(stderr.contains("held-out feature column `meta.finding` changed"), "{stderr}");
    assert!(stderr.contains("held-out predictions changed"), "{stderr}");
    assert!(!stderr.contains("`meta.scanner`"), "{stderr}");
    assert!(!dir.path().join("d").exists(), "nothing is written when the check fails");
    let clean = run(&["--meta-features", "scanner"]);
    assert!(clean.status.success(), "{}", String::from_utf8_lossy(&clean.stderr));
    assert!(String::from_utf8_lossy(&clean.stdout).contains("leak check: no feature column"));
}

/// The check's perturbation reaches every place a sample spells its gold.
#[test]
fn perturbing_an_answer_changes_it_everywhere_it_is_spelled() {
    let mut s = blindspot::sample::Sample::new("1", "Which?", "cat");
    s.answer_format = blindspot::sample::AnswerFormat::MultipleChoice;
    s.options = vec!["dog".into(), "cat".into(), "cow".into()];
    s.answer_index = Some(1);
    s.meta.insert("gold_letter".into(), "B".into());
    s.meta.insert("gold_text".into(), "Cat".into());
    s.meta.insert("source".into(), "web".into());
    let p = blindspot::diagnose::perturb_answer(&s);
    assert_eq!((p.answer.as_str(), p.answer_index), ("cow", Some(2)));
    assert_eq!(p.meta["gold_letter"], "C");
    assert_eq!(p.meta["gold_text"], "cow");
    assert_eq!(p.meta["source"], "web");
}

/// Folds the user set may not outnumber the questions diagnosed: a located
/// error naming the setting, nothing written. The default 5 folds are lowered
/// to a smaller group's size instead, and diagnose.json and the card say so.
#[test]
fn folds_beyond_the_questions_are_an_error_when_set_and_stated_when_defaulted() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("tests/fixtures/good/shortcut.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(dir.path().join("five.jsonl"), lines[..5].join("\n") + "\n").unwrap();
    std::fs::write(dir.path().join("three.jsonl"), lines[..3].join("\n") + "\n").unwrap();
    let pipeline = |name: &str, diagnose: &str| {
        let text = format!(
            "[dataset]\nname = \"{name}\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n\n[ingest]\npath = \
             \"{name}.jsonl\"\n\n[diagnose]\n{diagnose}\n"
        );
        std::fs::write(dir.path().join(format!("{name}.toml")), text).unwrap();
    };
    let run = |args: &[&str]| {
        let o = blindspot().current_dir(dir.path()).args(args).output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };

    let (code, stderr) = run(&["diagnose", "five.jsonl", "--folds", "50", "--out", "d"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("command line: --folds 50 is more than the 5 questions diagnosed"), "{stderr}");
    assert!(stderr.contains("set --folds to at most 5, or leave it out"), "{stderr}");
    assert!(!dir.path().join("d").exists());

    pipeline("five", "trees = 20\nfolds = 50");
    let (code, stderr) = run(&["build", "five.toml", "--out-dir", "rel"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("five.toml:11:")
            && stderr
                .contains("field \"diagnose.folds\": must be at most the number of questions diagnosed (5); found 50"),
        "{stderr}"
    );
    assert!(stderr.contains("set folds to at most 5, or leave it out"), "{stderr}");
    assert!(!dir.path().join("rel/five/1.0.0").exists());
    pipeline("five", "trees = 20\nfolds = 5");
    let (code, stderr) = run(&["build", "five.toml", "--out-dir", "rel"]);
    assert_eq!(code, Some(0), "{stderr}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("rel/five/1.0.0/report/diagnose.json")).unwrap())
            .unwrap();
    assert!(json["groups"].as_array().unwrap().iter().all(|g| g.get("folds").is_none()), "{json:#}");

    // The default 5 folds on 3 questions: 3 folds, said per group.
    pipeline("three", "trees = 20");
    let (code, stderr) = run(&["build", "three.toml", "--out-dir", "rel"]);
    assert_eq!(code, Some(0), "{stderr}");
    let release = dir.path().join("rel/three/1.0.0");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(release.join("report/diagnose.json")).unwrap()).unwrap();
    assert_eq!(json["settings"]["folds"], 5);
    let groups = json["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{json:#}");
    assert_eq!((&groups[0]["n"], &groups[0]["folds"]), (&serde_json::json!(3), &serde_json::json!(3)), "{json:#}");
    let card = std::fs::read_to_string(release.join("README.md")).unwrap();
    assert!(
        card.contains(
            "Groups with fewer questions (or fold groups) than 5 were cross-validated with fewer folds: (none) \
             (multiple_choice, 3 questions) 3-fold."
        ),
        "{card}"
    );
    let (code, stderr) = run(&["diagnose", "three.jsonl", "--out", "d3"]);
    assert_eq!(code, Some(0), "{stderr}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("d3/diagnose.json")).unwrap()).unwrap();
    assert_eq!(json["groups"][0]["folds"], 3, "{json:#}");
}

#[test]
fn the_meta_audit_flags_an_annotators_copy_of_the_gold_and_ablates_listed_fields() {
    // Open questions whose gold an annotator field repeats on 9 of 10 (its values are
    // too varied for the per-value lookup), and a listed yes/no clue that gives the gold.
    let mut rows = Vec::new();
    for i in 0..120 {
        let gold = format!("organ number {i}");
        let annotator = if i % 10 == 0 { "unsure".to_string() } else { format!("Organ number {i}.") };
        rows.push(serde_json::json!({"id": format!("o{i}"), "question": format!("What organ is shown in scan {i}?"),
            "answer": gold, "annotator": annotator}));
        let yes = i % 2 == 0;
        rows.push(serde_json::json!({"id": format!("y{i}"), "question": "Is there a fracture?",
            "answer": if yes { "yes" } else { "no" }, "clue": if yes { "c1" } else { "c0" }}));
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("q.jsonl");
    std::fs::write(&data, rows.iter().map(|r| r.to_string()).collect::<Vec<_>>().join("\n")).unwrap();
    let out = dir.path().join("d");
    let run =
        blindspot().arg("diagnose").arg(&data).args(["--meta-features", "clue", "-o"]).arg(&out).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains("meta field \"annotator\" is the gold answer on 90.0% of the questions carrying it"),
        "{stderr}"
    );
    assert!(stderr.contains("meta field \"clue\" raises blind accuracy from"), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("diagnose.json")).unwrap()).unwrap();
    let fields = report["meta_audit"]["fields"].as_array().unwrap();
    let clue = fields.iter().find(|f| f["name"] == "clue").unwrap();
    let a = &clue["ablation"];
    assert!(a["ci95"][0].as_f64().unwrap() > 0.0, "{clue}");
    assert!(
        (a["with"].as_f64().unwrap() - a["without"].as_f64().unwrap() - a["difference"].as_f64().unwrap()).abs() < 1e-5
    );
    let annotator = fields.iter().find(|f| f["name"] == "annotator").unwrap();
    assert_eq!((annotator["gold_equal"].as_f64(), annotator["suspect"].as_bool()), (Some(0.9), Some(true)));
}

/// A flag of `diagnose` and `prune` is the pipeline key it names, laid over the
/// file before the one validation both go through: the same rule refuses both,
/// each located where it was written, and a flag's valid value replaces the
/// file's invalid one before anything is checked.
#[test]
fn a_flag_and_its_pipeline_key_are_validated_once_by_the_same_rule() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join("tests/fixtures/good/shortcut.jsonl"), dir.path().join("b.jsonl")).unwrap();
    std::fs::write(
        dir.path().join("p.toml"),
        "[dataset]\nname = \"b\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n\n[ingest]\npath = \"b.jsonl\"\n\n\
         [diagnose]\ntrees = 10\npermutation-stop = \"maybe\"\n\n[prune]\nmethod = \"random\"\ncontrol = true\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let o = blindspot().current_dir(dir.path()).args(args).output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };

    // The file's values, refused at their lines.
    let (code, err) = run(&["prune", "p.toml", "--out", "o"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("p.toml:11:") && err.contains("field \"diagnose.permutation-stop\": \"maybe\" is not"),
        "{err}"
    );
    assert!(
        err.contains("p.toml:15:") && err.contains("field \"prune.control\": the matched random control is for IBP"),
        "{err}"
    );

    // The same values as flags on a canonical file: the same rules and texts, at the flags.
    let (code, err) =
        run(&["prune", "b.jsonl", "--out", "o", "--permutation-stop", "maybe", "--method", "random", "--control"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("command line: field \"--permutation-stop\": \"maybe\" is not \"decided\" or \"all\""),
        "{err}"
    );
    assert!(
        err.contains("command line: field \"--control\": the matched random control is for IBP and AFLite"),
        "{err}"
    );
    assert!(!dir.path().join("o").exists());

    // Flags over the file replace what they set, then the whole is validated: the
    // file's control now joins the flag's IBP, and the file's tree count stays.
    let (code, err) = run(&[
        "prune",
        "p.toml",
        "--out",
        "o",
        "--permutation-stop",
        "all",
        "--permutations",
        "19",
        "--alpha",
        "0.05",
        "--method",
        "ibp",
        "--budget",
        "4",
        "--independent-seeds",
        "0",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("o/prune.json")).unwrap()).unwrap();
    assert_eq!(report["settings"]["method"], "ibp", "{report:#}");
    assert_eq!(report["settings"]["budget"], "4", "{report:#}");
    assert_eq!(report["control"]["settings"]["method"], "random", "{report:#}");
}
