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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Component, Path};

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, RecordBatchReader};
use arrow::datatypes::DataType;
use arrow::row::{RowConverter, SortField};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Location, Problem, Result, display_path, line_col};
use crate::sample::id_cmp;

/// The card of a release.
const CARD: &str = "README.md";
/// Rows decoded at a time.
const BATCH_ROWS: usize = 1024;

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

// ---------------------------------------------------------------- configs

#[derive(Debug, Deserialize)]
struct FrontMatter {
    #[serde(default)]
    configs: Option<Vec<ConfigEntry>>,
}

#[derive(Debug, Deserialize)]
struct ConfigEntry {
    config_name: String,
    #[serde(default)]
    data_files: Option<DataFiles>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum DataFiles {
    One(String),
    Many(Vec<DataFileEntry>),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum DataFileEntry {
    Split { split: String, path: Patterns },
    Path(String),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Patterns {
    One(String),
    Many(Vec<String>),
}

impl Patterns {
    fn list(&self) -> Vec<String> {
        match self {
            Patterns::One(p) => vec![p.clone()],
            Patterns::Many(p) => p.clone(),
        }
    }
}

/// The YAML front matter of a card and the line it starts on (1-based line of
/// its first YAML line), or `None` when the card has none.
fn front_matter(text: &str) -> Option<(&str, u64)> {
    let rest = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], 2));
        }
        offset += line.len();
    }
    None
}

/// The configs and splits of the release in `dir`: from the card's
/// `configs:` list when present, else `data/*.parquet` as config `default`
/// with the split taken from each file name (`{split}-00000-of-00001.parquet`).
pub fn discover_configs(dir: &Path) -> Result<Vec<SplitFiles>> {
    let card = dir.join(CARD);
    let text = match std::fs::read_to_string(&card) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(&card, e)),
    };
    let entries = match text.as_deref().and_then(front_matter) {
        Some((yaml, first_line)) => {
            let fm: FrontMatter = serde_yaml_ng::from_str(yaml).map_err(|e| {
                let loc = match e.location() {
                    Some(l) => Location::line(&card, first_line + l.line() as u64 - 1),
                    None => Location::file(&card),
                };
                Error::one(
                    Problem::new(loc, format!("the card's YAML front matter cannot be read: {e}"))
                        .field("configs")
                        .help("fix the front matter (configs: [{config_name, data_files}]) or rebuild the release"),
                )
            })?;
            fm.configs
        }
        None => None,
    };
    let Some(entries) = entries else {
        return fallback_default(dir);
    };
    let text = text.unwrap_or_default();
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for entry in &entries {
        let at = |needle: &str| match text.find(needle) {
            Some(o) => Location::line(&card, line_col(&text, o).0),
            None => Location::file(&card),
        };
        let field = format!("configs.{}.data_files", entry.config_name);
        let splits: Vec<(String, Vec<String>)> = match &entry.data_files {
            None => {
                problems.push(
                    Problem::new(at(&entry.config_name), "the config lists no data_files")
                        .field(field)
                        .help("give data_files: [{split, path}] for every config"),
                );
                continue;
            }
            Some(DataFiles::One(p)) => vec![("train".into(), vec![p.clone()])],
            Some(DataFiles::Many(list)) => {
                let mut by_split: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for e in list {
                    match e {
                        DataFileEntry::Path(p) => by_split.entry("train".into()).or_default().push(p.clone()),
                        DataFileEntry::Split { split, path } => {
                            by_split.entry(split.clone()).or_default().extend(path.list())
                        }
                    }
                }
                by_split.into_iter().collect()
            }
        };
        for (split, patterns) in splits {
            let mut files = BTreeSet::new();
            for pattern in &patterns {
                match expand(dir, pattern) {
                    Ok(found) if found.is_empty() => problems.push(
                        Problem::new(at(pattern), format!("data_files path \"{pattern}\" matches no file"))
                            .field(field.clone())
                            .help("the release is incomplete: run `blindspot verify` on it, or rebuild it"),
                    ),
                    Ok(found) => files.extend(found),
                    Err(message) => problems.push(
                        Problem::new(at(pattern), message)
                            .field(field.clone())
                            .help("data_files paths are relative to the release folder"),
                    ),
                }
            }
            out.push(SplitFiles { config: entry.config_name.clone(), split, files: files.into_iter().collect() });
        }
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(problems));
    }
    out.sort_by(|a, b| (&a.config, &a.split).cmp(&(&b.config, &b.split)));
    Ok(out)
}

fn fallback_default(dir: &Path) -> Result<Vec<SplitFiles>> {
    let mut by_split: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in expand(dir, "data/*.parquet").map_err(|m| Error::one(Problem::new(Location::file(dir), m)))? {
        let name = file.rsplit('/').next().unwrap_or(&file);
        let split = name.split_once('-').map_or("train", |(s, _)| s).to_string();
        by_split.entry(split).or_default().push(file);
    }
    if by_split.is_empty() {
        return Err(Error::one(
            Problem::new(Location::file(dir), "no configs in README.md and no data/*.parquet: not a release folder")
                .help("give a folder written by `blindspot build` (releases/<name>/<version>)"),
        ));
    }
    Ok(by_split.into_iter().map(|(split, files)| SplitFiles { config: "default".into(), split, files }).collect())
}

/// The files below `dir` matching the release-relative glob `pattern`,
/// relative and sorted.
fn expand(dir: &Path, pattern: &str) -> std::result::Result<Vec<String>, String> {
    let inside = !pattern.is_empty()
        && !pattern.starts_with('/')
        && Path::new(pattern).components().all(|c| matches!(c, Component::Normal(_)));
    if !inside {
        return Err(format!("data_files path \"{pattern}\" is not inside the release"));
    }
    let full = format!("{}/{pattern}", glob::Pattern::escape(&dir.to_string_lossy()));
    let paths = glob::glob(&full).map_err(|e| format!("data_files path \"{pattern}\" is not a valid glob: {e}"))?;
    let mut out = Vec::new();
    for p in paths {
        let p = p.map_err(|e| format!("data_files path \"{pattern}\": {e}"))?;
        if p.is_file() {
            let rel = p.strip_prefix(dir).unwrap_or(&p);
            out.push(rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"));
        }
    }
    out.sort();
    Ok(out)
}

// ---------------------------------------------------------------- rows

type Cell = [u8; 16];

/// One split of one config, read for comparison: per id, a digest per column.
struct Table {
    columns: Vec<String>,
    rows: HashMap<String, Vec<Cell>>,
}

fn bad_parquet(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::one(
        Problem::new(Location::file(path), format!("not a readable Parquet file: {e}"))
            .help("run `blindspot verify` on the release: the file may be damaged"),
    )
}

/// Digest of every cell of `column`, one per row.
fn cell_digests(column: &ArrayRef, path: &Path) -> Result<Vec<Cell>> {
    let digest = |bytes: &[u8]| -> Cell {
        let h = Sha256::digest(bytes);
        let mut out = [0u8; 16];
        out.copy_from_slice(&h[..16]);
        out
    };
    // Dictionary-encoded columns compare by value.
    let column = match column.data_type() {
        DataType::Dictionary(_, value) => {
            arrow::compute::cast(column, value).map_err(|e| Error::Bug(format!("{}: {e}", display_path(path))))?
        }
        _ => column.clone(),
    };
    let field = SortField::new(column.data_type().clone());
    if RowConverter::supports_fields(std::slice::from_ref(&field)) {
        let converter = RowConverter::new(vec![field]).map_err(|e| bad_parquet(path, e))?;
        let rows = converter.convert_columns(&[column]).map_err(|e| bad_parquet(path, e))?;
        return Ok(rows.iter().map(|r| digest(r.as_ref())).collect());
    }
    // Types the row format cannot encode: their displayed value, with nulls apart.
    let options = arrow::util::display::FormatOptions::default();
    let formatter =
        arrow::util::display::ArrayFormatter::try_new(column.as_ref(), &options).map_err(|e| bad_parquet(path, e))?;
    Ok((0..column.len())
        .map(|i| {
            if column.is_null(i) {
                digest(b"\x00null")
            } else {
                digest(format!("\x01{}", formatter.value(i)).as_bytes())
            }
        })
        .collect())
}

fn read_table(dir: &Path, split: &SplitFiles) -> Result<Table> {
    let first = split.files.first().map_or_else(|| dir.to_path_buf(), |f| dir.join(f));
    crate::io::parquet::guard_decoder(&first, || read_table_unguarded(dir, split))
}

fn read_table_unguarded(dir: &Path, split: &SplitFiles) -> Result<Table> {
    let mut columns: Option<Vec<String>> = None;
    let mut rows: HashMap<String, Vec<Cell>> = HashMap::new();
    let mut first_row: HashMap<String, (String, u64)> = HashMap::new();
    for rel in &split.files {
        let path = dir.join(rel);
        let file = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        let size = file.metadata().map_or(0, |m| m.len());
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| bad_parquet(&path, e))?;
        crate::io::parquet::check_chunk_ranges(&path, builder.metadata(), size)?;
        let reader = builder.with_batch_size(BATCH_ROWS).build().map_err(|e| bad_parquet(&path, e))?;
        let names: Vec<String> = reader.schema().fields().iter().map(|f| f.name().clone()).collect();
        match &columns {
            None => columns = Some(names.clone()),
            Some(c) if *c != names => {
                return Err(Error::one(
                    Problem::new(
                        Location::file(&path),
                        format!(
                            "its columns differ from the other files of config \"{}\" split \"{}\"",
                            split.config, split.split
                        ),
                    )
                    .help("every shard of a split has one schema: rebuild the release"),
                ));
            }
            Some(_) => {}
        }
        let id_col = names.iter().position(|n| n == "id").ok_or_else(|| {
            Error::one(
                Problem::new(Location::file(&path), "no \"id\" column: rows cannot be matched between releases")
                    .field("id")
                    .help("diff compares canonical samples, which always have an id"),
            )
        })?;
        let mut row_number: u64 = 0;
        for batch in reader {
            let batch: RecordBatch = batch.map_err(|e| bad_parquet(&path, e))?;
            let ids = ids_of(batch.column(id_col), &path)?;
            let per_column: Vec<Vec<Cell>> =
                batch.columns().iter().map(|c| cell_digests(c, &path)).collect::<Result<_>>()?;
            for (i, id) in ids.into_iter().enumerate() {
                row_number += 1;
                let Some(id) = id else {
                    return Err(Error::one(
                        Problem::new(Location::row(&path, row_number), "the id is null")
                            .field("id")
                            .help("every row needs an id: rebuild the release"),
                    ));
                };
                if let Some((file, row)) = first_row.get(&id) {
                    return Err(Error::one(
                        Problem::new(
                            Location::row(&path, row_number),
                            format!("duplicate id \"{id}\" (first at {file}: row {row})"),
                        )
                        .field("id")
                        .help("ids are unique within a split; diff matches rows by id"),
                    ));
                }
                first_row.insert(id.clone(), (rel.clone(), row_number));
                rows.insert(id, per_column.iter().map(|c| c[i]).collect());
            }
        }
    }
    Ok(Table { columns: columns.unwrap_or_default(), rows })
}

fn ids_of(column: &ArrayRef, path: &Path) -> Result<Vec<Option<String>>> {
    let column = match column.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => column.clone(),
        // Integer ids compare as their text, as ingest writes them.
        _ => arrow::compute::cast(column, &DataType::Utf8).map_err(|_| {
            Error::one(
                Problem::new(Location::file(path), format!("the id column has type {}", column.data_type()))
                    .field("id")
                    .help("ids are strings in a blindspot release"),
            )
        })?,
    };
    let column = arrow::compute::cast(&column, &DataType::Utf8).map_err(|e| bad_parquet(path, e))?;
    let strings = column.as_string::<i32>();
    Ok((0..strings.len()).map(|i| strings.is_valid(i).then(|| strings.value(i).to_string())).collect())
}

fn sorted_ids(mut ids: Vec<String>) -> Ids {
    ids.sort_by(|a, b| id_cmp(a, b));
    Ids { count: ids.len(), ids }
}

fn compare(config: &str, split: &str, a: Option<&Table>, b: Option<&Table>) -> SplitDiff {
    let presence = match (a.is_some(), b.is_some()) {
        (true, false) => Presence::OnlyA,
        (false, true) => Presence::OnlyB,
        _ => Presence::Both,
    };
    let mut out = SplitDiff {
        config: config.to_string(),
        split: split.to_string(),
        presence,
        rows_a: a.map(|t| t.rows.len()),
        rows_b: b.map(|t| t.rows.len()),
        columns_only_in_a: Vec::new(),
        columns_only_in_b: Vec::new(),
        added: Ids::default(),
        removed: Ids::default(),
        changed: Changed::default(),
        unchanged: 0,
    };
    let (Some(a), Some(b)) = (a, b) else { return out };
    out.columns_only_in_a = a.columns.iter().filter(|c| !b.columns.contains(c)).cloned().collect();
    out.columns_only_in_b = b.columns.iter().filter(|c| !a.columns.contains(c)).cloned().collect();
    // Common columns, in A's order: (name, index in A, index in B).
    let common: Vec<(&str, usize, usize)> = a
        .columns
        .iter()
        .enumerate()
        .filter_map(|(ia, c)| b.columns.iter().position(|x| x == c).map(|ib| (c.as_str(), ia, ib)))
        .collect();
    out.added = sorted_ids(b.rows.keys().filter(|id| !a.rows.contains_key(*id)).cloned().collect());
    out.removed = sorted_ids(a.rows.keys().filter(|id| !b.rows.contains_key(*id)).cloned().collect());
    let mut changed = Vec::new();
    for (id, cells_a) in &a.rows {
        let Some(cells_b) = b.rows.get(id) else { continue };
        let mut any = false;
        for (name, ia, ib) in &common {
            if cells_a[*ia] != cells_b[*ib] {
                *out.changed.columns.entry((*name).to_string()).or_default() += 1;
                any = true;
            }
        }
        if any {
            changed.push(id.clone());
        } else {
            out.unchanged += 1;
        }
    }
    let ids = sorted_ids(changed);
    out.changed.count = ids.count;
    out.changed.ids = ids.ids;
    out
}

// ---------------------------------------------------------------- statistics

/// `report/diagnose.json`, when the release has one.
fn read_diagnose(dir: &Path) -> Result<Option<serde_json::Value>> {
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

fn diagnose_delta(a: &serde_json::Value, b: &serde_json::Value) -> DiagnoseDelta {
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

fn side(dir: &Path, has_diagnose: bool) -> Side {
    let manifest: Option<serde_json::Value> =
        std::fs::read_to_string(dir.join(super::manifest::FILE)).ok().and_then(|t| serde_json::from_str(&t).ok());
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
    // "default" first, then by name.
    splits.sort_by_key(|s| (s.config != "default", s.config.clone(), s.split.clone()));
    let (da, db) = (read_diagnose(a)?, read_diagnose(b)?);
    let diagnose = da.as_ref().zip(db.as_ref()).map(|(x, y)| diagnose_delta(x, y));
    Ok(ReleaseDiff { a: side(a, da.is_some()), b: side(b, db.is_some()), splits, diagnose })
}

// ---------------------------------------------------------------- text

fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{:.1}%", v * 100.0))
}

fn pts(d: &Delta) -> String {
    match d.delta {
        Some(x) => format!("{:+.1} pts", x * 100.0),
        None => "n/a".to_string(),
    }
}

fn id_list(ids: &Ids) -> String {
    let mut s = ids.ids.join(", ");
    if ids.count > ids.ids.len() {
        s.push_str(&format!(", ... ({} more)", ids.count - ids.ids.len()));
    }
    s
}

fn label(s: &Side) -> String {
    match (&s.name, &s.version) {
        (Some(n), Some(v)) => format!("{} ({n} {v})", s.path),
        _ => s.path.clone(),
    }
}

/// The human-readable report, at most `max_ids` ids per list (0 = all).
pub fn render_text(d: &ReleaseDiff, max_ids: usize) -> String {
    let d = d.truncated(max_ids);
    let mut out = format!("a: {}\nb: {}\n", label(&d.a), label(&d.b));
    for s in &d.splits {
        let name = format!("config {} split {}", s.config, s.split);
        match s.presence {
            Presence::OnlyA => {
                out.push_str(&format!("\n{name}: only in a ({} rows)\n", s.rows_a.unwrap_or(0)));
                continue;
            }
            Presence::OnlyB => {
                out.push_str(&format!("\n{name}: only in b ({} rows)\n", s.rows_b.unwrap_or(0)));
                continue;
            }
            Presence::Both => {}
        }
        let (ra, rb) = (s.rows_a.unwrap_or(0), s.rows_b.unwrap_or(0));
        out.push_str(&format!("\n{name}: {ra} -> {rb} rows ({:+})\n", rb as i64 - ra as i64));
        if !s.columns_only_in_a.is_empty() {
            out.push_str(&format!("  columns only in a: {}\n", s.columns_only_in_a.join(", ")));
        }
        if !s.columns_only_in_b.is_empty() {
            out.push_str(&format!("  columns only in b: {}\n", s.columns_only_in_b.join(", ")));
        }
        out.push_str(&format!("  added: {}", s.added.count));
        if s.added.count > 0 {
            out.push_str(&format!(": {}", id_list(&s.added)));
        }
        out.push_str(&format!("\n  removed: {}", s.removed.count));
        if s.removed.count > 0 {
            out.push_str(&format!(": {}", id_list(&s.removed)));
        }
        out.push_str(&format!("\n  changed: {}", s.changed.count));
        if s.changed.count > 0 {
            let ids = Ids { count: s.changed.count, ids: s.changed.ids.clone() };
            out.push_str(&format!(": {}", id_list(&ids)));
            let cols: Vec<String> = s.changed.columns.iter().map(|(c, n)| format!("{c} {n}")).collect();
            out.push_str(&format!("\n    columns: {}", cols.join(", ")));
        }
        out.push_str(&format!("\n  unchanged: {}\n", s.unchanged));
    }
    match &d.diagnose {
        Some(g) => {
            out.push_str("\nblind accuracy (TsT-RF, report/diagnose.json):\n");
            for (name, v) in [("weighted", &g.weighted), ("macro", &g.macro_), ("chance", &g.chance)] {
                out.push_str(&format!("  {name:<9}{} -> {} ({})\n", pct(v.a), pct(v.b), pts(v)));
            }
            let changed: Vec<&GroupDelta> =
                g.groups.iter().filter(|x| x.blind_accuracy.delta != Some(0.0) || x.n_a != x.n_b).collect();
            if !changed.is_empty() {
                out.push_str("  per group (question type / format: questions a -> b, blind a -> b):\n");
                for x in changed {
                    let n = |v: Option<u64>| v.map_or("-".into(), |v| v.to_string());
                    out.push_str(&format!(
                        "    {} / {}: {} -> {}, {} -> {} ({})\n",
                        x.question_type.as_deref().unwrap_or("(none)"),
                        x.format.as_deref().unwrap_or("?"),
                        n(x.n_a),
                        n(x.n_b),
                        pct(x.blind_accuracy.a),
                        pct(x.blind_accuracy.b),
                        pts(&x.blind_accuracy)
                    ));
                }
            }
        }
        None => {
            let which = match (d.a.has_diagnose, d.b.has_diagnose) {
                (false, false) => "neither release has",
                (true, false) => "b has no",
                (false, true) => "a has no",
                (true, true) => "",
            };
            out.push_str(&format!("\nblind accuracy: not compared ({which} report/diagnose.json)\n"));
        }
    }
    if d.is_empty() {
        out.push_str("\nno differences\n");
    }
    out
}

/// The machine-readable report, at most `max_ids` ids per list (0 = all).
pub fn render_json(d: &ReleaseDiff, max_ids: usize) -> Result<String> {
    let mut text = serde_json::to_string_pretty(&d.truncated(max_ids)).map_err(|e| Error::Bug(e.to_string()))?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn front_matter_is_found() {
        let (yaml, line) = front_matter("---\na: 1\n---\n# x\n").unwrap();
        assert_eq!((yaml, line), ("a: 1\n", 2));
        assert!(front_matter("# no front matter\n").is_none());
        assert!(front_matter("---\nnever closed\n").is_none());
    }

    #[test]
    fn data_files_forms_parse() {
        let yaml = "configs:\n- config_name: default\n  data_files:\n  - split: test\n    path: data/test-*.parquet\n\
                    - config_name: full\n  data_files: full/*.parquet\n\
                    - config_name: two\n  data_files:\n  - split: test\n    path: [a.parquet, b.parquet]\n";
        let fm: FrontMatter = serde_yaml_ng::from_str(yaml).unwrap();
        let c = fm.configs.unwrap();
        assert_eq!(c.len(), 3);
        assert!(
            matches!(&c[0].data_files, Some(DataFiles::Many(v)) if matches!(&v[0], DataFileEntry::Split { split, .. } if split == "test"))
        );
        assert!(matches!(&c[1].data_files, Some(DataFiles::One(p)) if p == "full/*.parquet"));
        assert!(
            matches!(&c[2].data_files, Some(DataFiles::Many(v)) if matches!(&v[0], DataFileEntry::Split { path: Patterns::Many(p), .. } if p.len() == 2))
        );
    }

    #[test]
    fn globs_stay_inside_the_release() {
        let dir = tempfile::tempdir().unwrap();
        assert!(expand(dir.path(), "../x/*.parquet").is_err());
        assert!(expand(dir.path(), "/etc/*.parquet").is_err());
        assert_eq!(expand(dir.path(), "data/*.parquet").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn cells_compare_by_value() {
        use arrow::array::{BinaryArray, StringArray};
        let p = Path::new("x.parquet");
        let s: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None, Some("a"), Some("")]));
        let d = cell_digests(&s, p).unwrap();
        assert_eq!(d[0], d[2]);
        assert_ne!(d[0], d[1]);
        assert_ne!(d[1], d[3], "null and empty differ");
        let b: ArrayRef = Arc::new(BinaryArray::from(vec![&b"\x89PNG1"[..], &b"\x89PNG2"[..]]));
        let d = cell_digests(&b, p).unwrap();
        assert_ne!(d[0], d[1]);
    }
}
