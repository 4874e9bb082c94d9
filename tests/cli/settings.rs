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
