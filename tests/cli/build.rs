//! The demo built end to end and rebuilt byte for byte, and a version never
//! overwritten with different bytes.

use crate::common::{self, blindspot, files_below, root};
use crate::{ingest_file, read_tree};

#[test]
fn every_pipeline_in_pipelines_validates() {
    let output = blindspot().current_dir(root()).arg("validate").output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let n = std::fs::read_dir(root().join("pipelines"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "toml"))
        .count();
    assert_eq!(stdout.lines().filter(|l| l.starts_with("ok: ")).count(), n, "{stdout}");
}

#[test]
fn demo_builds_end_to_end_and_rebuilds_byte_identical() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    // The first build computes every stage and fills the stage cache; the
    // second reads diagnose and prune from it and must write the same bytes.
    let cache = tempfile::tempdir().unwrap();
    for dir in [&a, &b] {
        let out = blindspot()
            .current_dir(root())
            .env("BLINDSPOT_CACHE_DIR", cache.path())
            .args(["build", "--out-dir"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(&format!("vqa-rad {}: 451 samples", common::demo_version())), "{stdout}");
    }
    let ta = read_tree(&a.path().join(common::demo_release()));
    let tb = read_tree(&b.path().join(common::demo_release()));
    let names: Vec<&str> = ta.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "README.md",
            "croissant.json",
            "data/test-00000-of-00001.parquet",
            "manifest.json",
            "report/blind_vs_chance.svg",
            "report/diagnose.json",
            "report/importances.svg",
            "report/index.html",
            "report/kept_ids.txt",
            "report/prune.json",
            "report/prune_curve.svg",
            "report/removed.csv",
            "report/s_histogram.svg",
            "report/scores.parquet",
            "variants/guess/test-00000-of-00001.parquet",
            "variants/mirage/test-00000-of-00001.parquet",
            "variants/no_image/test-00000-of-00001.parquet",
            "variants/phantom/test-00000-of-00001.parquet",
            "variants/phantom0/test-00000-of-00001.parquet",
            "variants/visual_substitution/test-00000-of-00001.parquet",
            "variants/white_image/test-00000-of-00001.parquet",
        ]
    );
    assert!(ta == tb, "two builds differ (the second from the stage cache)");
    // IBP and its random control, one cache entry each (IBP's first iteration is the diagnosis).
    assert_eq!(files_below(&cache.path().join("prune")).len(), 2, "{:?}", files_below(cache.path()));
    // No staging folder left behind; beside the release only the build lock.
    let beside: Vec<String> = files_below(&a.path().join("vqa-rad"));
    assert_eq!(beside.len(), names.len() + 1, "{beside:?}");
    assert!(beside.contains(&".build.lock".to_string()), "{beside:?}");
    // The card reports the diagnosis; the manifest lists every file.
    let card = String::from_utf8(ta[0].1.clone()).unwrap();
    assert!(card.contains("## Blind answerability (TsT-RF)"), "{card}");
    let manifest: serde_json::Value =
        serde_json::from_slice(&ta.iter().find(|(n, _)| n == "manifest.json").unwrap().1).unwrap();
    assert_eq!(manifest["files"].as_object().unwrap().len(), names.len() - 1);

    // Building again into the same folder is a no-op.
    let again = blindspot().current_dir(root()).args(["build", "--out-dir"]).arg(a.path()).output().unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).contains("[up to date]"));
    assert_eq!(read_tree(&a.path().join(common::demo_release())), ta);

    // VQA-RAD's blind accuracy is not above chance (its 95% CI reaches it), so IBP
    // stops before removing anything: the default config is every question, and
    // there is no `full` copy and no empty `removed` config.
    // The release re-ingests to the same samples, images embedded.
    let back = ingest_file(&a.path().join(format!("{}/data/test-00000-of-00001.parquet", common::demo_release())));
    assert_eq!(back.samples.len(), 451);
    assert!(
        back.samples.iter().all(|s| s.images.len() == 1 && s.images[0].bytes.as_ref().is_some_and(|b| b.len() > 1000))
    );
    assert_eq!(back.images.len(), 203);
}

#[test]
fn an_existing_version_is_never_overwritten_with_different_bytes() {
    let work = common::fixture_workspace();
    let build =
        || blindspot().current_dir(work.path()).args(["build", "canonical.toml", "--out-dir", "rel"]).output().unwrap();
    assert!(build().status.success());
    let before = read_tree(&work.path().join("rel/canonical/1.0.0"));
    // Change the data but not the version.
    let text = std::fs::read_to_string(work.path().join("canonical.jsonl")).unwrap().replace("sleeping", "eating");
    std::fs::write(work.path().join("canonical.jsonl"), text).unwrap();
    let out = build();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("already exists with different content") && stderr.contains("bump [dataset] version"),
        "{stderr}"
    );
    assert_eq!(read_tree(&work.path().join("rel/canonical/1.0.0")), before, "old release untouched");
}
