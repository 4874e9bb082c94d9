//! The change in the headline statistics between two releases: blind
//! accuracy overall and per group, from each one's `report/diagnose.json`,
//! read as [`DiagnoseReport`] (a release written before a field existed
//! still reads: such fields have defaults).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{Delta, DiagnoseDelta, GroupDelta};
use crate::diagnose::report::DiagnoseReport;
use crate::error::{Error, Location, Problem, Result, display_path};

/// `report/diagnose.json`, when the release has one.
pub(super) fn read_diagnose(dir: &Path) -> Result<Option<DiagnoseReport>> {
    let path = dir.join("report/diagnose.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        let what = if e.is_data() { "not a diagnose.json" } else { "not valid JSON" };
        Error::one(
            Problem::new(
                Location {
                    file: display_path(&path).into(),
                    pos: crate::error::Pos::LineCol(e.line() as u64, e.column() as u64),
                },
                format!("{what}: {e}"),
            )
            .help("run `blindspot verify` on the release: the file may be damaged"),
        )
    })
}

pub(super) fn diagnose_delta(a: &DiagnoseReport, b: &DiagnoseReport) -> DiagnoseDelta {
    let field = |f: &dyn Fn(&DiagnoseReport) -> f64| Delta::new(Some(f(a)), Some(f(b)));
    type Key = (Option<String>, Option<String>);
    let groups = |r: &DiagnoseReport| -> BTreeMap<Key, (u64, f64)> {
        r.groups
            .iter()
            .map(|g| ((g.question_type.clone(), Some(g.format.clone())), (g.n as u64, g.blind_accuracy)))
            .collect()
    };
    let (ga, gb) = (groups(a), groups(b));
    let keys: BTreeSet<&Key> = ga.keys().chain(gb.keys()).collect();
    let groups = keys
        .into_iter()
        .map(|k| {
            let (n_a, acc_a) = ga.get(k).map(|&(n, acc)| (Some(n), Some(acc))).unwrap_or_default();
            let (n_b, acc_b) = gb.get(k).map(|&(n, acc)| (Some(n), Some(acc))).unwrap_or_default();
            GroupDelta {
                question_type: k.0.clone(),
                format: k.1.clone(),
                n_a,
                n_b,
                blind_accuracy: Delta::new(acc_a, acc_b),
            }
        })
        .collect();
    DiagnoseDelta {
        n_samples: field(&|r| r.n_samples as f64),
        weighted: field(&|r| r.blind_accuracy.weighted),
        macro_: field(&|r| r.blind_accuracy.macro_by_type),
        chance: field(&|r| r.chance),
        groups,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `diagnose.json` as an early release wrote it: the headline and the
    /// groups, without the verdict, the null, the settings, the per-format
    /// table or the groups' features.
    const OLDER: &str = r#"{
  "method": "tst-rf",
  "n_samples": 10,
  "blind_accuracy": {"weighted": 0.6, "macro": 0.55},
  "chance": 0.5,
  "groups": [
    {"question_type": "color", "format": "yes_no", "n": 6, "blind_accuracy": 0.7},
    {"question_type": null, "format": "open", "n": 4, "blind_accuracy": 0.45}
  ]
}
"#;

    fn release(diagnose: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("report")).unwrap();
        std::fs::write(dir.path().join("report/diagnose.json"), diagnose).unwrap();
        dir
    }

    #[test]
    fn an_older_diagnose_json_without_later_fields_still_diffs() {
        let old = release(OLDER);
        let a = read_diagnose(old.path()).unwrap().unwrap();
        assert_eq!((a.n_samples, a.groups.len(), a.verdict.as_str()), (10, 2, ""));
        let mut b = a.clone();
        b.blind_accuracy.weighted = 0.5;
        b.groups[0].blind_accuracy = 0.65;
        b.groups.pop();
        let d = diagnose_delta(&a, &b);
        assert_eq!(d.weighted.delta, Some(-0.1));
        assert_eq!(d.n_samples.delta, Some(0.0));
        let color = d.groups.iter().find(|g| g.question_type.as_deref() == Some("color")).unwrap();
        assert_eq!((color.n_a, color.n_b, color.blind_accuracy.delta), (Some(6), Some(6), Some(-0.05)));
        let open = d.groups.iter().find(|g| g.question_type.is_none()).unwrap();
        assert_eq!((open.n_a, open.n_b, open.blind_accuracy.b), (Some(4), None, None));
    }

    #[test]
    fn a_malformed_diagnose_json_is_an_error_naming_the_file_and_line() {
        let bad = release(&OLDER.replace("\"n_samples\": 10", "\"n_samples\": \"ten\""));
        let err = read_diagnose(bad.path()).unwrap_err().to_string();
        assert!(err.contains("report/diagnose.json:3:") && err.contains("not a diagnose.json"), "{err}");
        let broken = release("{\"n_samples\": ");
        let err = read_diagnose(broken.path()).unwrap_err().to_string();
        assert!(err.contains("report/diagnose.json:1:") && err.contains("not valid JSON"), "{err}");
    }
}
