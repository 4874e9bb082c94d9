//! Outside scores (`diagnose --export-folds`, `--scores`, `--combine`) on a small
//! committed benchmark: the fold files match the assignment they name, a good
//! scores file is combined and reported, and each bad one exits 1 naming the
//! file, the line and the field, with nothing written.

mod common;

use std::path::{Path, PathBuf};

use common::{blindspot, root};

fn input() -> PathBuf {
    root().join("tests/fixtures/good/shortcut.jsonl")
}

/// Flags that keep a run short; the same in every run, so the folds agree.
const QUICK: &[&str] = &["--trees", "20", "--permutations", "19"];

fn read_jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Exports the folds of the fixture into `dir/folds`; the held-out rows of every fold.
fn export(dir: &Path) -> (serde_json::Value, Vec<serde_json::Value>) {
    let folds = dir.join("folds");
    blindspot()
        .arg("diagnose")
        .arg(input())
        .arg("--out")
        .arg(dir.join("first"))
        .arg("--export-folds")
        .arg(&folds)
        .args(QUICK)
        .assert()
        .success();
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folds.join("folds.json")).unwrap()).unwrap();
    let mut heldout = Vec::new();
    for k in 0..5 {
        heldout.extend(read_jsonl(&folds.join(format!("fold-{k}/heldout.jsonl"))));
    }
    (meta, heldout)
}

/// A scores line for a held-out row, with `score`.
fn line(row: &serde_json::Value, score: f64) -> String {
    serde_json::json!({"id": row["id"], "score": score, "fold": row["fold"], "assignment_hash": row["assignment_hash"]})
        .to_string()
}

fn write_scores(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn folds_are_the_forests_and_every_question_is_held_out_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (meta, heldout) = export(tmp.path());
    assert_eq!(meta["format"], "blindspot-folds/1");
    assert_eq!(meta["k"], 5);
    assert_eq!(meta["seed"], 42);
    assert_eq!(meta["n"], 120);
    let hash = meta["assignment_hash"].as_str().unwrap();
    assert_eq!(hash.len(), 64);
    // Every question held out exactly once, in the fold folds.json gives it.
    assert_eq!(heldout.len(), 120);
    let mut ids: Vec<&str> = heldout.iter().map(|r| r["id"].as_str().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 120);
    let group = &meta["groups"][0];
    for r in &heldout {
        assert_eq!(r["assignment_hash"], hash);
        assert_eq!(group["fold_of"][r["id"].as_str().unwrap()], r["fold"]);
        assert!(r["prompt"].as_str().unwrap().contains("\nA. "), "{}", r["prompt"]);
        assert!(["A", "B", "C"].contains(&r["gold"].as_str().unwrap()), "{}", r["gold"]);
    }
    // A fold's training rows are every other question.
    let train = read_jsonl(&tmp.path().join("folds/fold-0/train.jsonl"));
    let held0 = heldout.iter().filter(|r| r["fold"] == 0).count();
    assert_eq!(train.len() + held0, 120);
    assert!(train.iter().all(|r| r["fold"] != 0));
    // The hash is the one the documented serialisation gives.
    let mut rows: Vec<(String, u64)> =
        heldout.iter().map(|r| (r["id"].as_str().unwrap().to_string(), r["fold"].as_u64().unwrap())).collect();
    rows.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for (id, fold) in rows {
        h.update(serde_json::json!([id, null, "multiple_choice", fold]).to_string().as_bytes());
        h.update(b"\n");
    }
    assert_eq!(hex::encode(h.finalize()), hash);
}

#[test]
fn good_scores_are_combined_and_reported_bad_ones_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, heldout) = export(tmp.path());
    let forest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("first/diagnose.json")).unwrap()).unwrap();
    let good: Vec<String> = heldout.iter().map(|r| line(r, 0.9)).collect();
    let run = |name: &str, lines: &[String], extra: &[&str]| {
        let scores = tmp.path().join(format!("{name}.jsonl"));
        write_scores(&scores, lines);
        let out = tmp.path().join(format!("out-{name}"));
        let o = blindspot()
            .arg("diagnose")
            .arg(input())
            .arg("--out")
            .arg(&out)
            .arg("--scores")
            .arg(&scores)
            .args(QUICK)
            .args(extra)
            .output()
            .unwrap();
        (o, out)
    };

    // Every question at 0.9, combined by max and by mean.
    let (o, out) = run("good", &good, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("diagnose.json")).unwrap()).unwrap();
    let os = &d["outside_scores"];
    assert_eq!(os["combine"], "max");
    assert_eq!(os["sha256"].as_str().unwrap().len(), 64);
    assert!((os["outside"]["mean_gold_probability"].as_f64().unwrap() - 0.9).abs() < 1e-9, "{os}");
    // Three options: accuracy does not follow from the gold's probability.
    assert_eq!(os["outside"]["accuracy_n"], 0);
    assert!(os["outside"]["accuracy"].is_null());
    assert_eq!(os["verdict"], "above");
    // The forest's own figures are unchanged by the outside scores.
    assert_eq!(os["forest_blind_accuracy"], forest["blind_accuracy"]["weighted"]);
    assert_eq!(d["blind_accuracy"], forest["blind_accuracy"]);
    assert_eq!(d["verdict"], forest["verdict"]);
    let forest_mean_s = os["forest_mean_s"].as_f64().unwrap();
    assert!(os["combined_mean_s"].as_f64().unwrap() >= forest_mean_s.max(0.9) - 1e-6, "{os}");
    let (o, out) = run("good-mean", &good, &["--combine", "mean"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("diagnose.json")).unwrap()).unwrap();
    let mean = d["outside_scores"]["combined_mean_s"].as_f64().unwrap();
    assert!((mean - 0.5 * (forest_mean_s + 0.9)).abs() < 2e-6, "{mean} vs {forest_mean_s}");

    // Each refusal: exit 1, file:line, the field, what to do; nothing written.
    let other_fold = |r: &serde_json::Value| {
        let mut v: serde_json::Value = serde_json::from_str(&line(r, 0.5)).unwrap();
        v["fold"] = serde_json::json!((r["fold"].as_u64().unwrap() + 1) % 5);
        v.to_string()
    };
    let with = |i: usize, bad: String| {
        let mut l = good.clone();
        l[i] = bad;
        l
    };
    let mut dup = good.clone();
    dup.push(good[3].clone());
    let cases: Vec<(&str, Vec<String>, Vec<String>)> = vec![
        ("above-one", with(2, line(&heldout[2], 1.5)), vec![":3:".into(), "\"score\"".into(), "outside [0, 1]".into()]),
        ("nan", with(4, good[4].replace("0.9", "NaN")), vec![":5:".into(), "\"score\"".into(), "NaN".into()]),
        (
            "unknown-id",
            with(
                0,
                line(
                    &serde_json::json!({"id": "nope", "fold": 0, "assignment_hash": heldout[0]["assignment_hash"]}),
                    0.5,
                ),
            ),
            vec![":1:".into(), "\"id\"".into(), "\"nope\" is not among the questions".into()],
        ),
        ("duplicate", dup, vec![":121:".into(), "\"id\"".into(), "scored twice (first on line 4)".into()]),
        (
            "leak",
            with(7, other_fold(&heldout[7])),
            vec![":8:".into(), "\"fold\"".into(), "a leak".into(), "fold-".into()],
        ),
        (
            "other-hash",
            with(9, good[9].replace(heldout[9]["assignment_hash"].as_str().unwrap(), &"0".repeat(64))),
            vec![":10:".into(), "\"assignment_hash\"".into(), "another fold assignment".into()],
        ),
        (
            "missing",
            good[..100].to_vec(),
            vec![
                "missing.jsonl".into(),
                "20 of the 120 questions diagnosed have no score".into(),
                "heldout.jsonl".into(),
            ],
        ),
    ];
    // Every case is run, and every one that fails is named.
    let mut failed = Vec::new();
    for (name, lines, expect) in cases {
        let (o, out) = run(name, &lines, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        let mut wrong = Vec::new();
        if o.status.code() != Some(1) {
            wrong.push(format!("exit {:?}", o.status.code()));
        }
        for e in expect.iter().chain([&format!("{name}.jsonl")]) {
            if !err.contains(e.as_str()) {
                wrong.push(format!("no {e:?}"));
            }
        }
        // A question on a refused line is that line's problem, not also an unscored one
        // (the unknown id replaced a question, which is then unscored indeed).
        if err.contains("have no score") != matches!(name, "missing" | "unknown-id") {
            wrong.push("unscored questions miscounted".into());
        }
        if out.exists() {
            wrong.push("an output was written".into());
        }
        if !wrong.is_empty() {
            failed.push(format!("{name}: {}; stderr:\n{err}", wrong.join(", ")));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // --combine without scores is a usage mistake.
    let o = blindspot()
        .arg("diagnose")
        .arg(input())
        .arg("--out")
        .arg(tmp.path().join("no-scores"))
        .args(["--combine", "mean"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("command line: field \"--combine\": `combine` says how outside scores combine"), "{err}");
    assert!(err.contains("or --scores FILE), or remove `combine`"), "{err}");
}

#[test]
fn a_pipeline_names_scores_relative_to_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, heldout) = export(tmp.path());
    let sub = tmp.path().join("bench");
    std::fs::create_dir_all(&sub).unwrap();
    write_scores(&sub.join("scores.jsonl"), &heldout.iter().map(|r| line(r, 0.25)).collect::<Vec<_>>());
    let toml = |diagnose: &str| {
        format!(
            "[dataset]\nname = \"shortcut\"\nversion = \"0.1.0\"\nlicense = \"CC0-1.0\"\n\n[ingest]\npath = {:?}\n\n\
             [diagnose]\ntrees = 20\npermutations = 19\n{diagnose}",
            input().display().to_string()
        )
    };
    std::fs::write(sub.join("p.toml"), toml("scores = \"scores.jsonl\"\ncombine = \"mean\"\n")).unwrap();
    let out = tmp.path().join("out");
    blindspot().arg("diagnose").arg(sub.join("p.toml")).arg("--out").arg(&out).assert().success();
    let d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("diagnose.json")).unwrap()).unwrap();
    assert_eq!(d["outside_scores"]["combine"], "mean");
    assert!(d["outside_scores"]["file"].as_str().unwrap().ends_with("scores.jsonl"));
    assert!((d["outside_scores"]["outside"]["mean_gold_probability"].as_f64().unwrap() - 0.25).abs() < 1e-9);
    // A release built from the pipeline reports the file as the pipeline writes it.
    let o = blindspot().current_dir(&sub).args(["build", "p.toml", "--out-dir", "rel"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let release = sub.join("rel/shortcut/0.1.0");
    let card = std::fs::read_to_string(release.join("README.md")).unwrap();
    assert!(card.contains("Outside scores from `scores.jsonl` (sha256 `"), "{card}");
    let page = std::fs::read_to_string(release.join("report/index.html")).unwrap();
    assert!(page.contains("Outside scores from <code>scores.jsonl</code>") && page.contains("25.0% against"), "{page}");
    let text = std::fs::read_to_string(release.join("report/diagnose.json")).unwrap();
    let d: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(d["outside_scores"]["file"], "scores.jsonl");
    assert_eq!(d["outside_scores"]["combine"], "mean");
    // `combine` alone combines nothing.
    std::fs::write(sub.join("q.toml"), toml("combine = \"max\"\n")).unwrap();
    let o = blindspot().arg("validate").arg(sub.join("q.toml")).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("q.toml:")
            && err.contains("diagnose.combine")
            && err.contains("(scores = \"path/to/scores.jsonl\" in [diagnose]"),
        "{err}"
    );
}
