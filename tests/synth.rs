//! `blindspot synth`: the scale benchmark is deterministic, and `blindspot
//! diagnose` finds the shortcuts it plants while the shortcut-free skills stay
//! at chance.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use arrow::array::{Array, Float64Array, StringArray};
use common::blindspot;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn synth(n: usize, seed: u64, dir: &Path) {
    blindspot()
        .args(["synth", "--questions", &n.to_string(), "--seed", &seed.to_string(), "-o"])
        .arg(dir)
        .assert()
        .success();
}

const FILES: [&str; 4] = ["questions.jsonl", "truth.csv", "synth.toml", "synth.json"];

#[test]
fn same_questions_and_seed_give_the_same_bytes() {
    let work = tempfile::tempdir().unwrap();
    let (a, b, c) = (work.path().join("a"), work.path().join("b"), work.path().join("c"));
    synth(3000, 7, &a);
    synth(3000, 7, &b);
    synth(3000, 8, &c);
    for f in FILES {
        assert_eq!(std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap(), "{f} differs");
    }
    assert_ne!(std::fs::read(a.join("questions.jsonl")).unwrap(), std::fs::read(c.join("questions.jsonl")).unwrap());
    let text = std::fs::read_to_string(a.join("questions.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 3000);
    let truth = std::fs::read_to_string(a.join("truth.csv")).unwrap();
    assert_eq!(truth.lines().count(), 3001);
    // The pipeline it writes is valid.
    blindspot().arg("validate").arg(a.join("synth.toml")).assert().success();
}

/// (id → (skill, planted)) from truth.csv.
fn truth(dir: &Path) -> BTreeMap<String, (String, bool)> {
    let text = std::fs::read_to_string(dir.join("truth.csv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), (f[1].to_string(), f[3] == "1"))
        })
        .collect()
}

/// One scored question: id, s(x), correct.
type Scored = (String, f64, f64);

/// (id, s, correct) from scores.parquet.
fn scores(path: &Path) -> Vec<Scored> {
    let file = std::fs::File::open(path).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let col = |name: &str| batch.column(batch.schema().index_of(name).unwrap()).clone();
        let ids = col("id");
        let ids = ids.as_any().downcast_ref::<StringArray>().unwrap();
        let s = col("s");
        let s = s.as_any().downcast_ref::<Float64Array>().unwrap();
        let correct = col("correct");
        let correct = correct.as_any().downcast_ref::<Float64Array>().unwrap();
        for i in 0..batch.num_rows() {
            out.push((ids.value(i).to_string(), s.value(i), correct.value(i)));
        }
    }
    out
}

#[test]
fn diagnose_finds_the_planted_shortcuts_and_nothing_else() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("synth");
    synth(6000, 42, &data);
    let out = work.path().join("diagnose");
    blindspot().arg("diagnose").arg(data.join("synth.toml")).arg("--out").arg(&out).assert().success();
    let truth = truth(&data);
    let mut rows = scores(&out.join("scores.parquet"));
    assert_eq!(rows.len(), 6000);
    let base = truth.values().filter(|(_, p)| *p).count() as f64 / truth.len() as f64;

    // The top decile of s(x) (ties: id) is mostly planted items.
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let decile = rows.len() / 10;
    let top = &rows[..decile];
    let planted_top = top.iter().filter(|r| truth[&r.0].1).count();
    let precision = planted_top as f64 / decile as f64;
    eprintln!("top decile: {planted_top}/{decile} planted ({:.1}%), base rate {:.1}%", precision * 100.0, base * 100.0);
    assert!(precision >= 0.8, "top decile {precision:.3} planted, base rate {base:.3}");

    // Within each shortcut skill, planted items score well above the others, and
    // the skill's own top decile is planted far above the skill's rate.
    let mut by_skill: BTreeMap<&str, Vec<(&Scored, bool)>> = BTreeMap::new();
    for r in &rows {
        let (skill, planted) = &truth[&r.0];
        by_skill.entry(skill.as_str()).or_default().push((r, *planted));
    }
    for skill in ["presence", "location", "differential"] {
        let items = &by_skill[skill];
        let mean = |want: bool| {
            let xs: Vec<f64> = items.iter().filter(|(_, p)| *p == want).map(|(r, _)| r.1).collect();
            xs.iter().sum::<f64>() / xs.len() as f64
        };
        let (with, without) = (mean(true), mean(false));
        let rate = items.iter().filter(|(_, p)| *p).count() as f64 / items.len() as f64;
        let k = items.len() / 10;
        let top_rate = items[..k].iter().filter(|(_, p)| *p).count() as f64 / k as f64;
        eprintln!(
            "{skill}: mean s planted {with:.3} vs {without:.3}; skill top decile {top_rate:.3} planted (rate {rate:.3})"
        );
        assert!(with - without >= 0.2, "{skill}: mean s planted {with:.3} vs {without:.3}");
        assert!(top_rate >= 0.8, "{skill}: top decile {top_rate:.3} planted (rate {rate:.3})");
    }

    // The shortcut-free skills stay near chance (25%).
    for skill in ["negation", "geometry"] {
        let items = &by_skill[skill];
        let acc = items.iter().map(|(r, _)| r.2).sum::<f64>() / items.len() as f64;
        eprintln!("{skill}: blind accuracy {acc:.3}");
        assert!((acc - 0.25).abs() <= 0.04, "{skill}: blind accuracy {acc:.3}");
    }
}
