//! IBP on ScienceQA against matched random removal.

use crate::common::{blindspot, root};

/// IBP on ScienceQA (budget 20%, batch 50, floor 10)
/// brings blind accuracy toward chance and below matched random removal; the
/// removal list is the same on two runs and with 1 or 2 threads.
fn scienceqa_ibp_beats_random_removal_and_is_deterministic() {
    let out = tempfile::tempdir().unwrap();
    let run = |threads: &str, name: &str| -> serde_json::Value {
        let dir = out.path().join(name);
        blindspot()
            .current_dir(root())
            .env("RAYON_NUM_THREADS", threads)
            .args(["prune", "tests/pipelines/scienceqa.toml", "--budget", "20%", "--batch", "50", "--floor", "10"])
            .args(if name == "two" { vec!["--control"] } else { vec![] })
            .arg("--out")
            .arg(&dir)
            .assert()
            .success();
        serde_json::from_slice(&std::fs::read(dir.join("prune.json")).unwrap()).unwrap()
    };
    let two = run("2", "two");
    let one = run("1", "one");
    let ids = |v: &serde_json::Value| -> Vec<String> {
        v["removed"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(two["n_removed"], 848);
    assert_eq!(ids(&two), ids(&one), "removal lists differ between 1 and 2 threads");
    // The budget ends both runs, so their kept sets are measured on fresh seeds only.
    let acc = |v: &serde_json::Value, when: &str| v[when]["blind_accuracy"].as_f64().unwrap();
    let fresh = "after_independent";
    let (before, after, chance) = (acc(&two, "before"), acc(&two, fresh), two[fresh]["chance"].as_f64().unwrap());
    let random_after = acc(&two["control"], fresh);
    eprintln!("ScienceQA IBP: {before:.4} -> {after:.4} (chance {chance:.4}); random control -> {random_after:.4}");
    assert!(after < before - 0.05, "IBP: {before} -> {after}");
    assert!(after - chance < (before - chance) / 2.0, "IBP did not bring {after} toward chance {chance}");
    assert!(after < random_after - 0.03, "IBP {after} vs random {random_after}");
    // The per-iteration curve: mean bias falls.
    let its = two["iterations"].as_array().unwrap();
    assert!(its.len() >= 17, "{} iterations", its.len());
    let mean = |i: usize| its[i]["mean_bias"].as_f64().unwrap();
    assert!(mean(its.len() - 1) < mean(0));
}

pub const TESTS: crate::Tests = &[(
    "scienceqa_ibp_beats_random_removal_and_is_deterministic",
    scienceqa_ibp_beats_random_removal_and_is_deterministic,
)];
