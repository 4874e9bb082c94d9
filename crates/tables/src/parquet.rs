//! Parquet and Arrow IPC readers (image columns stored as `struct{bytes,
//! path}` read as any struct). Record batches are streamed; each row becomes a
//! [`Raw`] map.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

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
    guard_decoder(path, || read_parquet_unguarded(path)).map(|t| t.records)
}

/// A table file's rows and the names of its `ClassLabel` columns.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub records: Vec<RawRecord>,
    pub class_labels: ClassLabels,
}

/// The names of each Hugging Face `ClassLabel` column, by column name: class
/// `i` is `names[i]`.
pub type ClassLabels = BTreeMap<String, Vec<String>>;

fn read_parquet_unguarded(path: &Path) -> Result<Table> {
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
    let class_labels = class_labels(builder.schema().metadata().get(HF_KEY).map(String::as_str));
    let reader = builder.with_batch_size(4096).build().map_err(not_parquet)?;
    let records = rows_of_batches(path, reader)?;
    if records.is_empty() {
        return Err(Error::one(Problem::new(Location::file(path), "the Parquet file holds no rows")));
    }
    Ok(Table { records, class_labels })
}

/// Reads every row of a Parquet file, or of an Arrow IPC file (`.arrow`, `.feather`).
pub fn read_table_file(path: &Path) -> Result<Vec<RawRecord>> {
    read_table(path).map(|t| t.records)
}

/// [`read_table_file`], with the names of the file's `ClassLabel` columns.
pub fn read_table(path: &Path) -> Result<Table> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("arrow" | "feather") => read_arrow_table(path),
        _ => guard_decoder(path, || read_parquet_unguarded(path)),
    }
}

/// The schema-metadata key under which `datasets` records a file's features.
const HF_KEY: &str = "huggingface";

/// The `ClassLabel` columns that `datasets` records in a file's schema
/// metadata, under the key `huggingface` (`features`): `{"info": {"features": {COLUMN:
/// {"_type": "ClassLabel", "names": [...]}}}}`, or `features` at the top level
/// (as older versions wrote it). Empty without that key or with one that is
/// not such JSON: the file's values are then read as they are.
pub fn class_labels(features: Option<&str>) -> ClassLabels {
    let Some(value) = features.and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok()) else {
        return ClassLabels::new();
    };
    let features = value.get("info").and_then(|i| i.get("features")).or_else(|| value.get("features"));
    let Some(features) = features.and_then(|f| f.as_object()) else { return ClassLabels::new() };
    features
        .iter()
        .filter(|(_, f)| f.get("_type").and_then(|t| t.as_str()) == Some("ClassLabel"))
        .filter_map(|(column, f)| {
            let names = f.get("names")?.as_array()?;
            let names: Option<Vec<String>> = names.iter().map(|n| n.as_str().map(str::to_string)).collect();
            Some((column.clone(), names?))
        })
        .collect()
}

/// Reads every row of an Arrow IPC file: the stream format that Hugging Face
/// `datasets` writes with `save_to_disk` (`data-00000-of-00001.arrow`), or the file
/// format (Feather v2).
pub fn read_arrow(path: &Path) -> Result<Vec<RawRecord>> {
    read_arrow_table(path).map(|t| t.records)
}

fn read_arrow_table(path: &Path) -> Result<Table> {
    crate::error::guard_foreign(
        || read_arrow_unguarded(path),
        |why| {
            Problem::new(Location::file(path), format!("not a readable Arrow file: its data is corrupt ({why})"))
                .help("the file is damaged: save the dataset again")
        },
    )
}

fn read_arrow_unguarded(path: &Path) -> Result<Table> {
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
    let (records, class_labels) = if is_file_format {
        let reader = arrow::ipc::reader::FileReader::try_new(file, None).map_err(not_arrow)?;
        let labels = class_labels(reader.schema().metadata().get(HF_KEY).map(String::as_str));
        (rows_of_batches(path, reader)?, labels)
    } else {
        let reader =
            arrow::ipc::reader::StreamReader::try_new(std::io::BufReader::new(file), None).map_err(not_arrow)?;
        let labels = class_labels(reader.schema().metadata().get(HF_KEY).map(String::as_str));
        (rows_of_batches(path, reader)?, labels)
    };
    if records.is_empty() {
        return Err(Error::one(Problem::new(Location::file(path), "the Arrow file holds no rows")));
    }
    Ok(Table { records, class_labels })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_labels_are_read_from_either_layout() {
        let meta = Some;
        let nested = r#"{"info": {"features": {"answer": {"names": ["no", "yes"], "_type": "ClassLabel"},
            "question": {"dtype": "string", "_type": "Value"}}}}"#;
        assert_eq!(class_labels(meta(nested)), ClassLabels::from([("answer".into(), vec!["no".into(), "yes".into()])]));
        let top = r#"{"features": {"label": {"_type": "ClassLabel", "names": ["a", "b", "c"]}}}"#;
        assert_eq!(class_labels(meta(top))["label"], ["a", "b", "c"]);
        assert!(class_labels(meta("not json")).is_empty());
        assert!(class_labels(None).is_empty());
    }
}
