//! The rows of one split read for comparison (a digest per cell, by id) and
//! two splits compared: ids added and removed, rows changed and in which columns.

use std::collections::HashMap;
use std::path::Path;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, RecordBatchReader};
use arrow::datatypes::DataType;
use arrow::row::{RowConverter, SortField};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use sha2::{Digest, Sha256};

use super::{Changed, Ids, Presence, SplitDiff, SplitFiles};
use crate::error::{Error, Location, Problem, Result, display_path};
use crate::sample::id_cmp;

/// Rows decoded at a time.
const BATCH_ROWS: usize = 1024;

type Cell = [u8; 16];

/// One split of one config, read for comparison: per id, a digest per column.
pub(super) struct Table {
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

pub(super) fn read_table(dir: &Path, split: &SplitFiles) -> Result<Table> {
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

pub(super) fn compare(config: &str, split: &str, a: Option<&Table>, b: Option<&Table>) -> SplitDiff {
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
        from_source: None,
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

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
