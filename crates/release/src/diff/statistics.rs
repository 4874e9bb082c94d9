//! The change in the headline statistics between two releases: blind
//! accuracy overall and per group, from each one's `report/diagnose.json`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{Delta, DiagnoseDelta, GroupDelta};
use crate::error::{Error, Location, Problem, Result, display_path};

/// `report/diagnose.json`, when the release has one.
pub(super) fn read_diagnose(dir: &Path) -> Result<Option<serde_json::Value>> {
    let path = dir.join("report/diagnose.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        Error::one(
            Problem::new(
                Location {
                    file: display_path(&path).into(),
                    pos: crate::error::Pos::LineCol(e.line() as u64, e.column() as u64),
                },
                format!("not valid JSON: {e}"),
            )
            .help("run `blindspot verify` on the release: the file may be damaged"),
        )
    })
}

pub(super) fn diagnose_delta(a: &serde_json::Value, b: &serde_json::Value) -> DiagnoseDelta {
    let num = |v: &serde_json::Value, path: &[&str]| -> Option<f64> {
        path.iter().try_fold(v, |v, k| v.get(k)).and_then(serde_json::Value::as_f64)
    };
    let field = |path: &[&str]| Delta::new(num(a, path), num(b, path));
    type Key = (Option<String>, Option<String>);
    let groups = |v: &serde_json::Value| -> BTreeMap<Key, (Option<u64>, Option<f64>)> {
        v.get("groups")
            .and_then(serde_json::Value::as_array)
            .map(|gs| {
                gs.iter()
                    .map(|g| {
                        let s = |k: &str| g.get(k).and_then(serde_json::Value::as_str).map(str::to_string);
                        let n = g.get("n").and_then(serde_json::Value::as_u64);
                        let acc = g.get("blind_accuracy").and_then(serde_json::Value::as_f64);
                        ((s("question_type"), s("format")), (n, acc))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (ga, gb) = (groups(a), groups(b));
    let keys: BTreeSet<&Key> = ga.keys().chain(gb.keys()).collect();
    let groups = keys
        .into_iter()
        .map(|k| {
            let (n_a, acc_a) = ga.get(k).copied().unwrap_or((None, None));
            let (n_b, acc_b) = gb.get(k).copied().unwrap_or((None, None));
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
        n_samples: field(&["n_samples"]),
        weighted: field(&["blind_accuracy", "weighted"]),
        macro_: field(&["blind_accuracy", "macro"]),
        chance: field(&["chance"]),
        groups,
    }
}
