//! Pipeline settings checked against the data and their bounds: mapped
//! fields and group-by fields no record has, release names, out-of-bound
//! values, and `filter` run by hand.

use crate::common::{self, blindspot};
use crate::{canonical_pipeline, ingest_cli, ingest_fails};

#[test]
fn a_mapped_field_no_record_has_is_an_error_and_one_some_lack_is_counted() {
    // A typo in a mapping used to turn every multiple-choice question into an open one.
    let (_work, typo) = canonical_pipeline(
        "[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\n\n[ingest.fields]\noptions = \"option\"\n\
         question-type = \"categroy\"\n",
    );
    ingest_fails(
        &typo,
        &[
            "canonical.jsonl: field \"ingest.fields.options\": the source field \"option\" is in no record",
            "did you mean \"options\"? (set [ingest.fields] options)",
            "field \"ingest.fields.question-type\": the source field \"categroy\" is in no record",
            "the first record's fields are: id, question, options, answer, question_type, image, source",
        ],
    );
    // A meta field three of four records lack: kept where it is, the rest counted.
    let (_work, sparse) = canonical_pipeline(
        "[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\n\n[ingest.fields]\nmeta = [\"source\"]\n",
    );
    let (samples, stderr) = ingest_cli(&sparse);
    assert_eq!(samples.iter().filter(|s| s.meta.contains_key("source")).count(), 1);
    assert!(
        stderr.contains("warning: ingest: 3 rows: the mapped source field \"source\" ([ingest.fields] meta) is absent")
            && stderr.contains("canonical.jsonl:2)"),
        "{stderr}"
    );
}

#[test]
fn grouping_by_a_meta_field_no_question_has_is_an_error() {
    let (work, pipeline) = canonical_pipeline(
        "[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\n\n[diagnose]\ngroup-by = \"meta:sorce\"\n",
    );
    let out = work.path().join("d");
    blindspot()
        .arg("diagnose")
        .arg(&pipeline)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "p.toml: field \"diagnose.group-by\": no question has the meta field \"sorce\"",
        ))
        .stderr(predicates::str::contains("did you mean \"source\"?"));
    assert!(!out.exists());
    blindspot()
        .arg("diagnose")
        .arg(work.path().join("canonical.jsonl"))
        .args(["--group-by", "meta:nonexistent", "--meta-features", "source,colour", "-o"])
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "command line: field \"diagnose.group-by\": no question has the meta field \"nonexistent\"",
        ))
        .stderr(predicates::str::contains(
            "field \"diagnose.meta-features\": no question has the meta field \"colour\"",
        ));
    assert!(!out.exists());
}

#[test]
fn a_release_name_over_100_characters_is_refused_by_validate() {
    let (work, _) = canonical_pipeline("");
    let pipeline = work.path().join("long.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[dataset]\nname = \"{}\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n[ingest]\npath = \"canonical.jsonl\"\n\
             images = \"images\"\n",
            "a".repeat(300)
        ),
    )
    .unwrap();
    blindspot()
        .arg("validate")
        .arg(&pipeline)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("field \"dataset.name\": \"aaaa"))
        .stderr(predicates::str::contains("is not a valid release name"))
        .stderr(predicates::str::contains("100 characters at most"));
}

#[test]
fn settings_out_of_their_bounds_are_refused_by_validate_and_the_command_line() {
    let (work, pipeline) = canonical_pipeline(
        "[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\n\n[prune]\nbudget = 1.0\nbatch = 0\n\
         threshold = nan\nindependent-seeds = 100000\n",
    );
    blindspot()
        .arg("validate")
        .arg(&pipeline)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "p.toml:11:10: field \"prune.budget\": 1 is neither a count nor a percentage: is it 1 questions or 100% of \
             them?",
        ))
        .stderr(predicates::str::contains("field \"prune.batch\": is 0: a batch of 0 removes nothing"))
        .stderr(predicates::str::contains("field \"prune.threshold\": must be between 0 and 1; found NaN"))
        .stderr(predicates::str::contains("field \"prune.independent-seeds\": must be at most 20; found 100000"));
    let data = work.path().join("canonical.jsonl");
    let out = work.path().join("out");
    for (flags, expect) in [
        (&["--batch", "0"][..], "command line: field \"--batch\": is 0: a batch of 0 removes nothing"),
        (&["--budget", "1.0"], "command line: field \"--budget\": 1 is neither a count nor a percentage"),
        (&["--threshold", "nan"], "command line: field \"--threshold\": must be between 0 and 1; found NaN"),
        (&["--independent-seeds", "100000"], "command line: field \"--independent-seeds\": must be between 0 and 20"),
        (&["--folds", "1"], "command line: field \"--folds\": must be between 2 and 100"),
    ] {
        blindspot()
            .arg("prune")
            .arg(&data)
            .args(flags)
            .arg("-o")
            .arg(&out)
            .assert()
            .code(1)
            .stderr(predicates::str::contains(expect));
        assert!(!out.exists());
    }
}

/// `blindspot filter` by hand: a written rule over the canonical fixture's
/// predictions writes the removals with their models and the kept ids; a preset
/// with a threshold of its own is refused by the command line.
#[test]
fn filter_writes_what_a_rule_removes_and_what_it_keeps() {
    let work = common::fixture_workspace();
    let preds = [
        // c1 and c3: both models right from the text alone; c2: only m1 right.
        r#"{"model": "m1", "id": "c1::no_image", "response": "C"}"#,
        r#"{"model": "m2", "id": "c1::no_image", "response": "ginger"}"#,
        r#"{"model": "m1", "id": "c2::no_image", "response": "yes"}"#,
        r#"{"model": "m2", "id": "c2::no_image", "response": "no"}"#,
        r#"{"model": "m1", "id": "c3::no_image", "response": "sleeping"}"#,
        r#"{"model": "m2", "id": "c3::no_image", "response": "Sleeping."}"#,
    ];
    std::fs::write(work.path().join("preds.jsonl"), preds.join("\n") + "\n").unwrap();
    let out = blindspot()
        .current_dir(work.path())
        .args(["filter", "--samples", "canonical.toml", "--predictions", "preds.jsonl"])
        .args(["--conditions", "no_image", "--min-models", "all", "-o", "f"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let f: serde_json::Value =
        serde_json::from_slice(&std::fs::read(work.path().join("f/filter.json")).unwrap()).unwrap();
    let removed: Vec<&str> = f["removed"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(removed, ["c1", "c3"], "{f:#}");
    assert_eq!(f["rule"]["min_models"], 2, "{f:#}");
    assert_eq!(f["unpredicted"], 1, "c10 has no prediction: {f:#}");
    let kept = std::fs::read_to_string(work.path().join("f/kept_ids.txt")).unwrap();
    assert_eq!(kept.lines().collect::<Vec<_>>(), ["c2", "c10"]);
    let out = blindspot()
        .current_dir(work.path())
        .args(["filter", "--samples", "canonical.toml", "--predictions", "preds.jsonl"])
        .args(["--preset", "mmstar", "--min-models", "2", "-o", "g"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--min-models") && err.contains("--preset"), "{err}");
    assert!(!work.path().join("g").exists(), "nothing written");
}

#[test]
fn a_model_or_file_named_twice_and_degenerate_shares_are_refused_by_validate() {
    let (work, pipeline) = canonical_pipeline(
        "[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\n\n[predictions]\nfiles = [\n  \
         { path = \"canonical.jsonl\", wide = { answer = \"L1\", question = \"L1\" } },\n  \
         { path = \"canonical.jsonl\", model = \"L2\" },\n]\n\n[filter]\nconditions = [\"no_image\"]\n\
         models = [\"L1\", \"L2\", \"L1\"]\nmin-correct = 1000000\n\n[prune]\nmethod = \"aflite\"\n\
         train-fraction = 1e-9\n",
    );
    let out = blindspot().arg("validate").arg(&pipeline).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for want in [
        "field \"predictions.files[0].wide\": the model \"L1\" is named by two answer columns (\"answer\" and \
         \"question\"): each row would count as two of its answers",
        "field \"predictions.files[1].path\": \"canonical.jsonl\" is also files[0]: its answers would count twice; \
         give each file once",
        "field \"filter.models\": `models` names the model \"L1\" twice: its answers would count as two models'; \
         list each model once",
        "field \"filter.min-correct\": must be between 1 and 1000 (a model's samples (tries) for one question); \
         found 1000000",
        "field \"prune.train-fraction\": must be between 0.1 and 0.9 (each partition trains on this share of a \
         group and scores the rest: outside it one side is a handful of questions, e.g. 0.8); found 0.000000001",
    ] {
        assert!(stderr.contains(want), "{want}\nnot in:\n{stderr}");
    }
    // The command line's share is held to the same bound.
    let data = work.path().join("canonical.jsonl");
    let dir = work.path().join("out");
    blindspot()
        .arg("prune")
        .arg(&data)
        .args(["--method", "aflite", "--train-fraction", "0.95", "-o"])
        .arg(&dir)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("command line: field \"--train-fraction\": must be between 0.1 and 0.9"));
    assert!(!dir.exists());
}

#[test]
fn pruning_by_a_meta_field_needs_it_on_every_question() {
    let (work, pipeline) = canonical_pipeline(
        "[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\n\n[ingest.fields]\nmeta = [\"source\"]\n\n\
         [prune]\nunit = \"meta:source\"\n",
    );
    let out = work.path().join("out");
    blindspot().arg("prune").arg(&pipeline).arg("-o").arg(&out).assert().code(1).stderr(predicates::str::contains(
        "p.toml: field \"prune.unit\": unit \"meta:source\": 3 of 4 questions have no meta field \"source\"",
    ));
    assert!(!out.exists());
    blindspot()
        .arg("prune")
        .arg(work.path().join("canonical.jsonl"))
        .args(["--unit", "meta:source", "-o"])
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "command line: field \"prune.unit\": unit \"meta:source\": 3 of 4 questions have no meta field \"source\" \
             (\"c2\", \"c3\", \"c10\")",
        ));
    assert!(!out.exists());
}
