//! Outside scores (`diagnose --export-folds`, `--scores`, `--combine`) on a small
//! committed benchmark: the fold files match the assignment they name and hold
//! out the held-out golds, a good scores file is combined and reported, a scorer
//! right implausibly often is warned about, and each bad file exits 1 naming the
//! file, the line and the field, with nothing written.

mod common;

use std::path::{Path, PathBuf};

use common::{blindspot, root};

fn input() -> PathBuf {
    root().join("tests/fixtures/good/shortcut.jsonl")
}

/// Flags that keep a run short; the same in every run, so the folds agree.
const QUICK: &[&str] = &["--trees", "20", "--permutations", "99"];

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

/// The gold option's position of every question of the fixture, read from the
/// benchmark itself: the held-out rows carry none.
fn gold_index(id: &str) -> usize {
    static GOLDS: std::sync::OnceLock<std::collections::HashMap<String, usize>> = std::sync::OnceLock::new();
    GOLDS.get_or_init(|| {
        read_jsonl(&input())
            .iter()
            .map(|q| {
                let options = q["options"].as_array().unwrap();
                (q["id"].as_str().unwrap().to_string(), options.iter().position(|o| *o == q["answer"]).unwrap())
            })
            .collect()
    })[id]
}

/// A scores line for a held-out row with these option probabilities (A, B, C).
fn line_with(row: &serde_json::Value, probabilities: serde_json::Value) -> String {
    serde_json::json!({
        "id": row["id"], "probabilities": probabilities, "fold": row["fold"], "assignment_hash": row["assignment_hash"]
    })
    .to_string()
}

/// A scores line for a held-out row: `gold` for its gold option, the rest shared
/// evenly by the other two.
fn line(row: &serde_json::Value, gold: f64) -> String {
    let g = gold_index(row["id"].as_str().unwrap());
    let mut p = serde_json::Map::new();
    for (i, letter) in ["A", "B", "C"].iter().enumerate() {
        p.insert(letter.to_string(), serde_json::json!(if i == g { gold } else { (1.0 - gold) / 2.0 }));
    }
    line_with(row, serde_json::Value::Object(p))
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
        // A held-out row carries no gold: a scorer could otherwise score it from the answer.
        let fields: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            fields,
            ["id", "group", "answer_format", "fold", "prompt", "question", "options", "assignment_hash"],
            "{r}"
        );
    }
    // A fold's training rows are every other question, each with its gold.
    let train = read_jsonl(&tmp.path().join("folds/fold-0/train.jsonl"));
    let held0 = heldout.iter().filter(|r| r["fold"] == 0).count();
    assert_eq!(train.len() + held0, 120);
    assert!(train.iter().all(|r| r["fold"] != 0));
    for r in &train {
        let g = gold_index(r["id"].as_str().unwrap());
        assert_eq!(r["gold_index"], g, "{r}");
        assert_eq!(r["gold"], ["A", "B", "C"][g], "{r}");
    }
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
    // Every option at 0.5: read as a third each, a three-way tie at the top.
    let good: Vec<String> =
        heldout.iter().map(|r| line_with(r, serde_json::json!({"A": 0.5, "B": 0.5, "C": 0.5}))).collect();
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

    // Uniform scores, combined by max and by mean.
    let (o, out) = run("good", &good, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("warning: diagnose: the outside scores"), "{err}");
    let d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("diagnose.json")).unwrap()).unwrap();
    let os = &d["outside_scores"];
    assert_eq!(os["combine"], "max");
    assert_eq!(os["sha256"].as_str().unwrap().len(), 64);
    // The values are divided by their sum: 0.5 of 1.5.
    assert!((os["outside"]["mean_gold_probability"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-6, "{os}");
    // A three-way tie at the top counts a third.
    assert!((os["outside"]["accuracy"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-6, "{os}");
    assert_eq!(os["outside"]["by_format"][0]["format"], "multiple_choice");
    assert!(os["warning"].is_null(), "{os}");
    assert_eq!(os["verdict"], "not above");
    // The forest's own figures are unchanged by the outside scores.
    assert_eq!(os["forest_blind_accuracy"], forest["blind_accuracy"]["weighted"]);
    assert_eq!(d["blind_accuracy"], forest["blind_accuracy"]);
    assert_eq!(d["verdict"], forest["verdict"]);
    let forest_mean_s = os["forest_mean_s"].as_f64().unwrap();
    assert!(os["combined_mean_s"].as_f64().unwrap() >= forest_mean_s.max(1.0 / 3.0) - 1e-6, "{os}");
    let (o, out) = run("good-mean", &good, &["--combine", "mean"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("diagnose.json")).unwrap()).unwrap();
    let mean = d["outside_scores"]["combined_mean_s"].as_f64().unwrap();
    assert!((mean - 0.5 * (forest_mean_s + 1.0 / 3.0)).abs() < 2e-6, "{mean} vs {forest_mean_s}");

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
        (
            "above-one",
            with(2, line_with(&heldout[2], serde_json::json!({"A": 1.5}))),
            vec![":3:".into(), "\"probabilities\"".into(), "the probability of \"A\" is 1.5, outside [0, 1]".into()],
        ),
        (
            "nan",
            with(4, good[4].replacen("0.5", "NaN", 1)),
            vec![":5:".into(), "\"probabilities\"".into(), "NaN".into()],
        ),
        (
            "old-score",
            with(
                5,
                serde_json::json!({"id": heldout[5]["id"], "score": 0.9, "fold": heldout[5]["fold"],
                    "assignment_hash": heldout[5]["assignment_hash"]})
                .to_string(),
            ),
            vec![
                ":6:".into(),
                "\"probabilities\"".into(),
                "no \"probabilities\" field, and \"score\" (the gold's probability) is no longer read: held-out \
                 rows carry no gold"
                    .into(),
                "in place of \"score\"".into(),
            ],
        ),
        (
            "not-an-option",
            with(6, line_with(&heldout[6], serde_json::json!({"A": 0.5, "D": 0.5}))),
            vec![
                ":7:".into(),
                "\"probabilities\"".into(),
                format!("\"D\" is not an option of {}, whose options are A-C", heldout[6]["id"]),
            ],
        ),
        (
            "all-zero",
            with(8, line_with(&heldout[8], serde_json::json!({"A": 0, "B": 0.0}))),
            vec![":9:".into(), "\"probabilities\"".into(), "every probability is 0".into()],
        ),
        (
            "unknown-id",
            with(
                0,
                line_with(
                    &serde_json::json!({"id": "nope", "fold": 0, "assignment_hash": heldout[0]["assignment_hash"]}),
                    serde_json::json!({"A": 0.5}),
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

/// Scores made from the benchmark's golds, right on 112 of 120 questions where the
/// forest finds nothing to learn: warned about on stderr and in `diagnose.json`.
#[test]
fn scores_made_from_the_golds_are_warned_about() {
    let tmp = tempfile::tempdir().unwrap();
    // Three options in random order, the gold at a random place: nothing to learn blind.
    let colours = ["red", "blue", "green", "yellow", "black", "white"];
    let mut state = 7u64;
    let mut next = move |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) % n) as usize
    };
    let mut bench = String::new();
    let mut gold = std::collections::HashMap::new();
    for i in 0..120 {
        let first = next(6);
        let options: Vec<&str> = (0..3).map(|k| colours[(first + 2 * k) % 6]).collect();
        let g = next(3);
        gold.insert(format!("r{i}"), g);
        bench.push_str(
            &serde_json::json!({"id": format!("r{i}"), "question": format!("What colour is thing {i}?"),
                "options": options, "answer": options[g]})
            .to_string(),
        );
        bench.push('\n');
    }
    let input = tmp.path().join("random.jsonl");
    std::fs::write(&input, bench).unwrap();
    let diagnose = |out: &str, extra: &[&std::ffi::OsStr]| {
        let o = blindspot()
            .arg("diagnose")
            .arg(&input)
            .arg("--out")
            .arg(tmp.path().join(out))
            .args(QUICK)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let d: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(tmp.path().join(out).join("diagnose.json")).unwrap())
                .unwrap();
        (d, String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let folds = tmp.path().join("folds");
    let (forest, _) = diagnose("forest", &["--export-folds".as_ref(), folds.as_os_str()]);
    let forest_accuracy = forest["blind_accuracy"]["weighted"].as_f64().unwrap();
    let mut heldout = Vec::new();
    for k in 0..5 {
        heldout.extend(read_jsonl(&folds.join(format!("fold-{k}/heldout.jsonl"))));
    }
    let letters = ["A", "B", "C"];
    let leaked: Vec<String> = heldout
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let g = gold[r["id"].as_str().unwrap()];
            let pick = if i % 15 == 0 { (g + 1) % 3 } else { g };
            line_with(r, serde_json::json!({letters[pick]: 0.8, letters[(pick + 1) % 3]: 0.2}))
        })
        .collect();
    let scores = tmp.path().join("leaked.jsonl");
    write_scores(&scores, &leaked);
    let (d, err) = diagnose("leaked", &["--scores".as_ref(), scores.as_os_str()]);
    let os = &d["outside_scores"];
    assert!((os["outside"]["accuracy"].as_f64().unwrap() - 112.0 / 120.0).abs() < 1e-6, "{os}");
    let prior = os["outside"]["answer_prior_accuracy"].as_f64().unwrap();
    assert!(forest_accuracy < 0.6 && prior < 0.6, "{os}");
    let warning = format!(
        "the outside scores of {} answer 93.3% of the 120 questions right, more than 20 points above the better of \
         TsT-RF's blind accuracy ({:.1}%) and the training folds' most frequent answer ({:.1}%): a blind scorer that \
         far ahead has most likely seen held-out answers; check that it trained on fold-K/train.jsonl alone and read \
         no gold of the held-out questions (nor the benchmark's own answers)",
        scores.display(),
        forest_accuracy * 100.0,
        prior * 100.0
    );
    assert!(err.contains(&format!("warning: diagnose: {warning}")), "{err}");
    assert_eq!(os["warning"], warning.as_str());
    assert!(os["verdict_text"].as_str().unwrap().contains("is right on 93.3% of the 120 questions"), "{os}");
}

/// A scores path at an endless or huge file is refused after a bounded read:
/// `/dev/zero` (no newline: its first line is too long) and a file of blank lines
/// past the per-question bound.
#[test]
fn an_endless_or_huge_scores_file_is_refused_fast() {
    let tmp = tempfile::tempdir().unwrap();
    let diagnose = |scores: &Path, out: &str| {
        let start = std::time::Instant::now();
        let o = blindspot()
            .arg("diagnose")
            .arg(input())
            .arg("--out")
            .arg(tmp.path().join(out))
            .arg("--scores")
            .arg(scores)
            .args(QUICK)
            .output()
            .unwrap();
        (o, start.elapsed(), tmp.path().join(out).exists())
    };
    let (o, took, written) = diagnose(Path::new("/dev/zero"), "zero");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("/dev/zero:1: the line is longer than 1048576 bytes: not a line of a scores file")
            && err.contains("help: give the scores file the scorer wrote: one JSON object per line"),
        "{err}"
    );
    assert!(!written);
    // Before the bound, reading /dev/zero whole never ended; now it stops at one MiB.
    assert!(took.as_secs_f64() < 30.0, "{took:?}");
    // 120 questions: 120 x 64 KiB + 1 MiB = 8,912,896 bytes at most.
    let huge = tmp.path().join("huge.jsonl");
    std::fs::write(&huge, vec![b'\n'; 9_000_000]).unwrap();
    let (o, _, written) = diagnose(&huge, "huge");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "{}: more than 8912896 bytes (64 KiB per question for the 120 questions diagnosed): too large for their \
             scores",
            huge.display()
        )),
        "{err}"
    );
    assert!(!written);
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
             [diagnose]\ntrees = 20\npermutations = 99\n{diagnose}",
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
    // The scorer's accuracy beside the forest's: 0.25 for the gold, 0.375 for each other option.
    assert!(
        card.contains(
            "The outside scorer's most probable answer is right on 0.0% of the 120 questions, the forest's on "
        ),
        "{card}"
    );
    assert!(!card.contains("**Warning:**"), "{card}");
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
