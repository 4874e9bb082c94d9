//! Parquet reader, and the Hugging Face dataset folder built on it
//! (`data/<split>-*.parquet`, image columns stored as `struct{bytes, path}`).
//! Record batches are streamed; each row becomes a [`Raw`] map.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{
    DataType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type,
    UInt64Type,
};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::raw::{Raw, RawRecord};
use crate::error::{Error, Location, Pos, Problem, Result, display_path};
use crate::io::parquet::{check_chunk_ranges, guard_decoder};

/// Reads every row of a Parquet file.
pub fn read_parquet(path: &Path) -> Result<Vec<RawRecord>> {
    guard_decoder(path, || read_parquet_unguarded(path))
}

fn read_parquet_unguarded(path: &Path) -> Result<Vec<RawRecord>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let size = file.metadata().map_or(0, |m| m.len());
    let not_parquet = |e: parquet::errors::ParquetError| {
        Error::one(
            Problem::new(Location::file(path), format!("not a readable Parquet file ({size} bytes): {e}"))
                .help("check that the file is complete and really Parquet"),
        )
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(not_parquet)?;
    check_chunk_ranges(path, builder.metadata(), size)?;
    let reader = builder.with_batch_size(4096).build().map_err(not_parquet)?;
    let records = rows_of_batches(path, reader)?;
    if records.is_empty() {
        return Err(Error::one(Problem::new(Location::file(path), "the Parquet file holds no rows")));
    }
    Ok(records)
}

/// Reads every row of a Parquet file, or of an Arrow IPC file (`.arrow`, `.feather`).
pub fn read_table_file(path: &Path) -> Result<Vec<RawRecord>> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("arrow" | "feather") => read_arrow(path),
        _ => read_parquet(path),
    }
}

/// Reads every row of an Arrow IPC file: the stream format that Hugging Face
/// `datasets` writes with `save_to_disk` (`data-00000-of-00001.arrow`), or the file
/// format (Feather v2).
pub fn read_arrow(path: &Path) -> Result<Vec<RawRecord>> {
    crate::error::guard_foreign(
        || read_arrow_unguarded(path),
        |why| {
            Problem::new(Location::file(path), format!("not a readable Arrow file: its data is corrupt ({why})"))
                .help("the file is damaged: save the dataset again")
        },
    )
}

fn read_arrow_unguarded(path: &Path) -> Result<Vec<RawRecord>> {
    use std::io::{Read, Seek};
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut magic = [0u8; 6];
    let is_file_format = file.read_exact(&mut magic).is_ok() && &magic == b"ARROW1";
    file.rewind().map_err(|e| Error::io(path, e))?;
    let not_arrow =
        |e: arrow::error::ArrowError| {
            Error::one(Problem::new(Location::file(path), format!("not a readable Arrow IPC file: {e}")).help(
                "a saved Hugging Face dataset holds Arrow stream files (data-00000-of-00001.arrow): save it again",
            ))
        };
    let records = if is_file_format {
        rows_of_batches(path, arrow::ipc::reader::FileReader::try_new(file, None).map_err(not_arrow)?)?
    } else {
        let reader = std::io::BufReader::new(file);
        rows_of_batches(path, arrow::ipc::reader::StreamReader::try_new(reader, None).map_err(not_arrow)?)?
    };
    if records.is_empty() {
        return Err(Error::one(Problem::new(Location::file(path), "the Arrow file holds no rows")));
    }
    Ok(records)
}

/// The rows of record batches read from `path`, numbered from 1.
fn rows_of_batches(
    path: &Path,
    batches: impl Iterator<Item = std::result::Result<RecordBatch, arrow::error::ArrowError>>,
) -> Result<Vec<RawRecord>> {
    let stem: std::sync::Arc<str> = path.file_stem().and_then(|s| s.to_str()).unwrap_or("").into();
    let file: std::sync::Arc<str> = display_path(path).into();
    let mut records = Vec::new();
    let mut row = 0u64;
    for batch in batches {
        let batch = batch.map_err(|e| {
            Error::one(Problem::new(
                Location { file: file.clone(), pos: Pos::Row(row + 1) },
                format!("cannot decode rows: {e}"),
            ))
        })?;
        for i in 0..batch.num_rows() {
            row += 1;
            let loc = Location { file: file.clone(), pos: Pos::Row(row) };
            let value = row_value(&batch, i).map_err(|msg| Error::one(Problem::new(loc.clone(), msg)))?;
            records.push(RawRecord { loc, value, file_stem: stem.clone(), key: None, row });
        }
    }
    Ok(records)
}

fn row_value(batch: &RecordBatch, i: usize) -> std::result::Result<Raw, String> {
    let schema = batch.schema();
    let mut fields = Vec::with_capacity(batch.num_columns());
    for (f, col) in schema.fields().iter().zip(batch.columns()) {
        let v = value(col.as_ref(), i).map_err(|m| format!("column \"{}\": {m}", f.name()))?;
        fields.push((super::raw::intern(f.name()), v));
    }
    Ok(Raw::Map(fields))
}

/// One Arrow value as [`Raw`].
fn value(a: &dyn Array, i: usize) -> std::result::Result<Raw, String> {
    if a.is_null(i) {
        return Ok(Raw::Null);
    }
    Ok(match a.data_type() {
        DataType::Null => Raw::Null,
        DataType::Boolean => Raw::Bool(a.as_boolean().value(i)),
        DataType::Int8 => Raw::Int(a.as_primitive::<Int8Type>().value(i).into()),
        DataType::Int16 => Raw::Int(a.as_primitive::<Int16Type>().value(i).into()),
        DataType::Int32 => Raw::Int(a.as_primitive::<Int32Type>().value(i).into()),
        DataType::Int64 => Raw::Int(a.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => Raw::Int(a.as_primitive::<UInt8Type>().value(i).into()),
        DataType::UInt16 => Raw::Int(a.as_primitive::<UInt16Type>().value(i).into()),
        DataType::UInt32 => Raw::Int(a.as_primitive::<UInt32Type>().value(i).into()),
        DataType::UInt64 => {
            let v = a.as_primitive::<UInt64Type>().value(i);
            i64::try_from(v).map_or_else(|_| Raw::Str(v.to_string()), Raw::Int)
        }
        DataType::Float32 => Raw::Float(a.as_primitive::<Float32Type>().value(i).into()),
        DataType::Float64 => Raw::Float(a.as_primitive::<Float64Type>().value(i)),
        DataType::Utf8 => Raw::Str(a.as_string::<i32>().value(i).to_string()),
        DataType::LargeUtf8 => Raw::Str(a.as_string::<i64>().value(i).to_string()),
        DataType::Utf8View => Raw::Str(a.as_string_view().value(i).to_string()),
        DataType::Binary => Raw::Bytes(a.as_binary::<i32>().value(i).to_vec()),
        DataType::LargeBinary => Raw::Bytes(a.as_binary::<i64>().value(i).to_vec()),
        DataType::BinaryView => Raw::Bytes(a.as_binary_view().value(i).to_vec()),
        DataType::FixedSizeBinary(_) => Raw::Bytes(a.as_fixed_size_binary().value(i).to_vec()),
        DataType::List(_) => list(a.as_list::<i32>().value(i).as_ref())?,
        DataType::LargeList(_) => list(a.as_list::<i64>().value(i).as_ref())?,
        DataType::FixedSizeList(..) => list(a.as_fixed_size_list().value(i).as_ref())?,
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let mut out = Vec::with_capacity(fields.len());
            for (f, col) in fields.iter().zip(s.columns()) {
                out.push((super::raw::intern(f.name()), value(col.as_ref(), i)?));
            }
            Raw::Map(out)
        }
        DataType::Map(..) => {
            let m = a.as_map();
            let entries = m.value(i);
            let (keys, vals) = (entries.column(0), entries.column(1));
            let mut out = Vec::with_capacity(entries.len());
            for j in 0..entries.len() {
                let k = value(keys.as_ref(), j)?.to_text();
                out.push((super::raw::intern(&k), value(vals.as_ref(), j)?));
            }
            Raw::Map(out)
        }
        other => {
            // Dictionaries, dates, decimals, ...: their text form is what a mapping wants.
            let cast = arrow::compute::cast(&a.slice(i, 1), &DataType::Utf8)
                .map_err(|e| format!("unsupported type {other}: {e}"))?;
            Raw::Str(cast.as_string::<i32>().value(0).to_string())
        }
    })
}

fn list(a: &dyn Array) -> std::result::Result<Raw, String> {
    (0..a.len()).map(|j| value(a, j)).collect::<std::result::Result<Vec<_>, _>>().map(Raw::List)
}

/// The data files of `split` in a Hugging Face dataset folder, sorted: Parquet files
/// as the Hub lays them out (`<split>-*.parquet` or `<split>.parquet` anywhere below
/// it, or any Parquet file inside a folder named `<split>`), or the Arrow files that
/// `datasets`' `save_to_disk` writes: a `DatasetDict`'s `<split>/data-*.arrow`, or a
/// single `Dataset`'s files as its `state.json` lists them (its split, when recorded,
/// must be `split`).
pub fn hf_split_files(dir: &Path, split: &str) -> Result<Vec<PathBuf>> {
    if let Some(files) = default_config_files(dir, split)? {
        return Ok(files);
    }
    let mut files = Vec::new();
    let mut seen_splits = std::collections::BTreeSet::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry =
            entry.map_err(|e| Error::one(Problem::new(Location::file(dir), format!("cannot list the folder: {e}"))))?;
        let p = entry.path();
        if !matches!(p.extension().and_then(|e| e.to_str()), Some("parquet" | "arrow")) {
            continue;
        }
        let name = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let file_split = name.split(['-', '.']).next().unwrap_or(name);
        let parent = p.parent().and_then(|d| d.file_name()).and_then(|s| s.to_str()).unwrap_or("");
        seen_splits.insert(file_split.to_string());
        if file_split == split || parent == split {
            files.push(p.to_path_buf());
        }
    }
    if files.is_empty() && dir.join("state.json").is_file() {
        return saved_dataset_files(dir, split);
    }
    if files.is_empty() {
        let found: Vec<String> = seen_splits.into_iter().collect();
        let help = if found.is_empty() {
            "a Hugging Face folder holds data/<split>-00000-of-00001.parquet files, or what save_to_disk wrote"
                .to_string()
        } else {
            format!("splits found: {}; set [ingest] split", found.join(", "))
        };
        return Err(Error::one(
            Problem::new(Location::file(dir), format!("no Parquet or Arrow file for split \"{split}\"")).help(help),
        ));
    }
    Ok(files)
}

/// The data files of the default config when the folder's dataset card
/// (`README.md`) lists its configs in the front matter, as the Hub and a
/// blindspot release do: the config marked `default: true`, else the one named
/// `default`. Other configs (a release's `full/`, `removed/`, variants) hold
/// the same ids again and are not the dataset. None when the card lists no
/// configs or no default one.
fn default_config_files(dir: &Path, split: &str) -> Result<Option<Vec<PathBuf>>> {
    let card = dir.join("README.md");
    if !card.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&card).map_err(|e| Error::io(&card, e))?;
    let Some(front) = text.strip_prefix("---\n").and_then(|t| t.split_once("\n---").map(|(f, _)| f)) else {
        return Ok(None);
    };
    let Ok(front) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(front) else { return Ok(None) };
    let configs: Vec<&serde_yaml_ng::Value> = front["configs"].as_sequence().into_iter().flatten().collect();
    let Some(config) = configs
        .iter()
        .find(|c| c["default"].as_bool() == Some(true))
        .or_else(|| configs.iter().find(|c| c["config_name"].as_str() == Some("default")))
    else {
        return Ok(None);
    };
    let name = config["config_name"].as_str().unwrap_or("default");
    // `data_files` is a pattern, a list of patterns, or a list of {split, path}.
    let mut patterns = Vec::new();
    let mut splits = Vec::new();
    match &config["data_files"] {
        serde_yaml_ng::Value::String(p) => patterns.push(p.clone()),
        serde_yaml_ng::Value::Sequence(items) => {
            for it in items {
                match (it.as_str(), it["split"].as_str()) {
                    (Some(p), _) => patterns.push(p.to_string()),
                    (None, Some(s)) => {
                        splits.push(s.to_string());
                        if s == split {
                            match &it["path"] {
                                serde_yaml_ng::Value::String(p) => patterns.push(p.clone()),
                                serde_yaml_ng::Value::Sequence(ps) => {
                                    patterns.extend(ps.iter().filter_map(|p| p.as_str().map(String::from)))
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => return Ok(None),
    }
    let at = Location::file(&card);
    if patterns.is_empty() {
        return Err(Error::one(
            Problem::new(at, format!("the default config \"{name}\" has no data files for split \"{split}\""))
                .help(format!("splits it lists: {}; set [ingest] split", splits.join(", "))),
        ));
    }
    let mut files = Vec::new();
    for pattern in &patterns {
        files.extend(matching_files(dir, pattern)?);
    }
    files.sort();
    files.dedup();
    if files.is_empty() {
        return Err(Error::one(
            Problem::new(
                at,
                format!("the default config \"{name}\" names {}, but no file matches", patterns.join(", ")),
            )
            .help("the card's front matter lists the data files of each config: check the folder is complete"),
        ));
    }
    Ok(Some(files))
}

/// The files below `dir` a data-files pattern (`data/test-*.parquet`) names:
/// `*` matches within a file or folder name, `**` any folders.
fn matching_files(dir: &Path, pattern: &str) -> Result<Vec<PathBuf>> {
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry =
            entry.map_err(|e| Error::one(Problem::new(Location::file(dir), format!("cannot list the folder: {e}"))))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(dir) else { continue };
        let names: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
        if path_matches(&parts, &names) {
            out.push(entry.path().to_path_buf());
        }
    }
    Ok(out)
}

fn path_matches(pattern: &[&str], names: &[&str]) -> bool {
    match (pattern.first(), names.first()) {
        (None, None) => true,
        (Some(&"**"), _) => {
            path_matches(&pattern[1..], names) || (!names.is_empty() && path_matches(pattern, &names[1..]))
        }
        (Some(p), Some(n)) => name_matches(p.as_bytes(), n.as_bytes()) && path_matches(&pattern[1..], &names[1..]),
        _ => false,
    }
}

/// `*` matches any run of characters (none included); everything else itself.
fn name_matches(p: &[u8], n: &[u8]) -> bool {
    match p.split_first() {
        None => n.is_empty(),
        Some((b'*', rest)) => (0..=n.len()).any(|i| name_matches(rest, &n[i..])),
        Some((c, rest)) => n.first() == Some(c) && name_matches(rest, &n[1..]),
    }
}

/// The Arrow files of a `Dataset` saved with `save_to_disk`, in the order its
/// `state.json` lists them.
fn saved_dataset_files(dir: &Path, split: &str) -> Result<Vec<PathBuf>> {
    let state_path = dir.join("state.json");
    let bad = |why: String| {
        Error::one(
            Problem::new(Location::file(&state_path), why)
                .help("a folder written by datasets' save_to_disk has a state.json listing its Arrow files"),
        )
    };
    let text = std::fs::read(&state_path).map_err(|e| Error::io(&state_path, e))?;
    let state: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| bad(format!("not a readable state.json: {e}")))?;
    if let Some(saved) = state.get("_split").and_then(|s| s.as_str())
        && saved != split
    {
        return Err(Error::one(
            Problem::new(
                Location::file(&state_path),
                format!("this saved dataset holds split \"{saved}\", not \"{split}\""),
            )
            .help(format!("set [ingest] split = \"{saved}\"")),
        ));
    }
    let listed =
        state.get("_data_files").and_then(|f| f.as_array()).ok_or_else(|| bad("no \"_data_files\" list".into()))?;
    let mut files = Vec::with_capacity(listed.len());
    for entry in listed {
        let name = entry
            .get("filename")
            .and_then(|f| f.as_str())
            .ok_or_else(|| bad("a data file without \"filename\"".into()))?;
        let path = Path::new(name);
        if path.is_absolute() || path.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
            return Err(bad(format!("data file \"{name}\" is not a plain name inside the folder")));
        }
        files.push(dir.join(path));
    }
    if files.is_empty() {
        return Err(bad("\"_data_files\" is empty".into()));
    }
    Ok(files)
}

#[cfg(test)]
mod pattern_tests {
    use super::{name_matches, path_matches};

    #[test]
    fn data_files_patterns() {
        assert!(name_matches(b"test-*.parquet", b"test-00000-of-00001.parquet"));
        assert!(!name_matches(b"test-*.parquet", b"train-00000-of-00001.parquet"));
        assert!(path_matches(&["data", "test-*.parquet"], &["data", "test-00000-of-00001.parquet"]));
        assert!(!path_matches(&["data", "test-*.parquet"], &["full", "test-00000-of-00001.parquet"]));
        assert!(path_matches(&["**", "*.parquet"], &["a", "b", "x.parquet"]));
    }
}
