//! `blindspot diff DIR_A DIR_B`: what changed between two releases (usually
//! two versions of one benchmark) — per config and split, the ids added and
//! removed, the rows whose content changed (naming the columns), and the
//! change in the headline statistics (row counts; blind accuracy from
//! `report/diagnose.json` when both releases have one).
//!
//! Configs are read from the card's YAML front matter (`configs:` with
//! `config_name` and `data_files`), as Hugging Face does; a release without
//! one falls back to `data/*.parquet` as config `default`. Rows are matched by
//! `id` and compared column by column through a digest of each cell's value
//! (Arrow's row encoding, which is injective), so two releases of any size are
//! compared in memory proportional to rows × columns × 16 bytes, images
//! included: a changed image is a changed row.

mod configs;
mod rows;
mod statistics;
mod text;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Location, Problem, Result, display_path};
pub use configs::discover_configs;
use rows::{compare, read_table};
use statistics::{diagnose_delta, read_diagnose};
pub use text::{render_json, render_text};

/// One split of one config: its data files, relative to the release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitFiles {
    pub config: String,
    pub split: String,
    pub files: Vec<String>,
}

/// Which side(s) a config and split exists in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    Both,
    OnlyA,
    OnlyB,
}

/// Ids, in id order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Ids {
    pub count: usize,
    pub ids: Vec<String>,
}

/// Rows with the same id and different content.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Changed {
    pub count: usize,
    pub ids: Vec<String>,
    /// Column → how many of the changed rows differ in it.
    pub columns: BTreeMap<String, usize>,
}

/// The difference of one split of one config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SplitDiff {
    pub config: String,
    pub split: String,
    pub presence: Presence,
    pub rows_a: Option<usize>,
    pub rows_b: Option<usize>,
    pub columns_only_in_a: Vec<String>,
    pub columns_only_in_b: Vec<String>,
    pub added: Ids,
    pub removed: Ids,
    pub changed: Changed,
    pub unchanged: usize,
    /// The default config's added and removed ids that `full` gained or lost
    /// too: edits of the source, told apart from what pruning and filters kept
    /// or removed (absent unless both releases have `full`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_source: Option<FromSource>,
}

/// Of the default config's added and removed ids, those the source gained or
/// lost (added to or removed from `full` as well).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FromSource {
    pub added: usize,
    pub removed: usize,
}

/// A number on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Delta {
    pub a: Option<f64>,
    pub b: Option<f64>,
    pub delta: Option<f64>,
}

impl Delta {
    fn new(a: Option<f64>, b: Option<f64>) -> Self {
        let delta = a.zip(b).map(|(a, b)| round6(b - a));
        Delta { a, b, delta }
    }
}

fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

/// Blind accuracy of one (question type, answer format) group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupDelta {
    pub question_type: Option<String>,
    pub format: Option<String>,
    pub n_a: Option<u64>,
    pub n_b: Option<u64>,
    pub blind_accuracy: Delta,
}

/// The headline numbers of `report/diagnose.json`, when both releases have one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiagnoseDelta {
    pub n_samples: Delta,
    pub weighted: Delta,
    #[serde(rename = "macro")]
    pub macro_: Delta,
    pub chance: Delta,
    pub groups: Vec<GroupDelta>,
}

/// What one side is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Side {
    pub path: String,
    pub name: Option<String>,
    pub version: Option<String>,
    pub has_diagnose: bool,
}

/// Everything `blindspot diff` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReleaseDiff {
    pub a: Side,
    pub b: Side,
    pub splits: Vec<SplitDiff>,
    pub diagnose: Option<DiagnoseDelta>,
}

impl ReleaseDiff {
    /// No row, id, column or statistic differs.
    pub fn is_empty(&self) -> bool {
        self.splits.iter().all(|s| {
            s.presence == Presence::Both
                && s.added.count == 0
                && s.removed.count == 0
                && s.changed.count == 0
                && s.columns_only_in_a.is_empty()
                && s.columns_only_in_b.is_empty()
        }) && self.diagnose.as_ref().is_none_or(|d| {
            let same = |d: &Delta| d.delta.is_none_or(|x| x == 0.0) && d.a.is_some() == d.b.is_some();
            [&d.n_samples, &d.weighted, &d.macro_, &d.chance].into_iter().all(same)
                && d.groups.iter().all(|g| same(&g.blind_accuracy) && g.n_a == g.n_b)
        })
    }

    /// The same report with at most `max` ids per list (0 = all).
    pub fn truncated(&self, max: usize) -> ReleaseDiff {
        let mut out = self.clone();
        if max > 0 {
            for s in &mut out.splits {
                s.added.ids.truncate(max);
                s.removed.ids.truncate(max);
                s.changed.ids.truncate(max);
            }
        }
        out
    }
}

fn side(dir: &Path, has_diagnose: bool) -> Side {
    let manifest: Option<serde_json::Value> =
        std::fs::read_to_string(dir.join(crate::manifest::FILE)).ok().and_then(|t| serde_json::from_str(&t).ok());
    let get = |k: &str| manifest.as_ref().and_then(|m| m.get(k)).and_then(|v| v.as_str()).map(str::to_string);
    Side { path: display_path(dir), name: get("name"), version: get("version"), has_diagnose }
}

/// Compares release `a` (the old one) with release `b` (the new one).
pub fn diff(a: &Path, b: &Path) -> Result<ReleaseDiff> {
    for dir in [a, b] {
        if !dir.is_dir() {
            return Err(Error::one(
                Problem::new(Location::file(dir), "no such release folder")
                    .help("give two folders written by `blindspot build` (releases/<name>/<version>)"),
            ));
        }
    }
    let (ca, cb) = (discover_configs(a)?, discover_configs(b)?);
    let key = |s: &SplitFiles| (s.config.clone(), s.split.clone());
    let ma: BTreeMap<_, _> = ca.iter().map(|s| (key(s), s)).collect();
    let mb: BTreeMap<_, _> = cb.iter().map(|s| (key(s), s)).collect();
    let keys: BTreeSet<&(String, String)> = ma.keys().chain(mb.keys()).collect();
    let mut splits = Vec::new();
    for k in keys {
        let ta = ma.get(k).map(|s| read_table(a, s)).transpose()?;
        let tb = mb.get(k).map(|s| read_table(b, s)).transpose()?;
        splits.push(compare(&k.0, &k.1, ta.as_ref(), tb.as_ref()));
    }
    if let (Some(d), Some(f)) = (
        splits.iter().position(|s| s.config == "default"),
        splits.iter().position(|s| s.config == "full" && s.presence == Presence::Both),
    ) && splits[d].presence == Presence::Both
    {
        let (full_added, full_removed): (BTreeSet<&String>, BTreeSet<&String>) =
            (splits[f].added.ids.iter().collect(), splits[f].removed.ids.iter().collect());
        let added = splits[d].added.ids.iter().filter(|i| full_added.contains(i)).count();
        let removed = splits[d].removed.ids.iter().filter(|i| full_removed.contains(i)).count();
        splits[d].from_source = Some(FromSource { added, removed });
    }
    // "default" first, then by name.
    splits.sort_by_key(|s| (s.config != "default", s.config.clone(), s.split.clone()));
    let (da, db) = (read_diagnose(a)?, read_diagnose(b)?);
    let diagnose = da.as_ref().zip(db.as_ref()).map(|(x, y)| diagnose_delta(x, y));
    Ok(ReleaseDiff { a: side(a, da.is_some()), b: side(b, db.is_some()), splits, diagnose })
}
