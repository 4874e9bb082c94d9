//! Spreadsheets (`.xlsx`, `.xlsm`, `.xls`, `.ods`, read with `calamine`): the
//! first sheet or the one named, its first row the header, one record per further row. Cells
//! keep their type (text, integer, number, boolean); an empty cell is absent.
//! Locations are spreadsheet rows as a person sees them (the header is row 1
//! when the sheet starts at the top).

use std::path::Path;

use calamine::{Data, Reader};

use super::raw::{Raw, RawRecord, intern};
use crate::error::{Error, Location, Pos, Problem, Result, display_path};

fn cell(d: &Data) -> Raw {
    match d {
        Data::Empty => Raw::Null,
        Data::String(s) => Raw::Str(s.clone()),
        Data::Int(i) => Raw::Int(*i),
        Data::Float(f) => Raw::Float(*f),
        Data::Bool(b) => Raw::Bool(*b),
        other => Raw::Str(other.to_string()),
    }
}

/// Reads the first sheet of a workbook into records.
pub fn read_xlsx(path: &Path) -> Result<Vec<RawRecord>> {
    read_sheet(path, None).map(|(records, _)| records)
}

/// Reads the sheet named `sheet` (default: the first) of a workbook into records. When
/// the workbook has other sheets and none was named, also returns a note saying which
/// sheet was read and which were not.
pub fn read_sheet(path: &Path, sheet: Option<&str>) -> Result<(Vec<RawRecord>, Option<String>)> {
    let bad = |msg: String| {
        Error::one(Problem::new(Location::file(path), msg).help(
                "give a complete spreadsheet: blindspot reads its first sheet (or [ingest] sheet), whose first row names the columns",
            ))
    };
    let mut book = calamine::open_workbook_auto(path).map_err(|e| bad(format!("not a readable spreadsheet: {e}")))?;
    let names = book.sheet_names();
    let quoted = |names: &[String]| names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ");
    let index = match sheet {
        Some(name) => names.iter().position(|n| n == name).ok_or_else(|| {
            Error::one(
                Problem::new(Location::file(path), format!("the workbook has no sheet \"{name}\""))
                    .help(format!("its sheets are: {}", quoted(&names))),
            )
        })?,
        None => 0,
    };
    let note = (sheet.is_none() && names.len() > 1).then(|| {
        format!(
            "read from the workbook's first sheet (\"{}\"); its other sheets ({}) are not read (set [ingest] sheet to \
             choose one)",
            names[0],
            quoted(&names[1..])
        )
    });
    let which = if sheet.is_some() { "the sheet" } else { "the first sheet" };
    // calamine's cell-reference arithmetic overflows (a panic in builds with
    // overflow checks) on a crafted sheet; fuzzing found it.
    let range = crate::error::guard_foreign(
        || {
            book.worksheet_range_at(index)
                .ok_or_else(|| bad("the workbook has no sheet".into()))?
                .map_err(|e| bad(format!("cannot read {which}: {e}")))
        },
        |why| {
            Problem::new(Location::file(path), format!("not a readable spreadsheet: {which} is corrupt ({why})"))
                .help("re-save the workbook, or export the sheet as CSV")
        },
    )?;
    let mut rows = range.rows();
    let header: Vec<super::raw::Key> =
        rows.next().map(|h| h.iter().map(|c| intern(cell(c).to_text().trim())).collect()).unwrap_or_default();
    if header.is_empty() {
        return Err(bad(format!("{which} is empty")));
    }
    let file: std::sync::Arc<str> = display_path(path).into();
    let stem: std::sync::Arc<str> = path.file_stem().and_then(|s| s.to_str()).unwrap_or("").into();
    let start = range.start().map_or(0, |(r, _)| u64::from(r));
    let unnamed: Vec<bool> = header.iter().map(|h| h.is_empty()).collect();
    let header = super::csv::name_columns(header);
    super::csv::check_header(&header, || Location { file: file.clone(), pos: Pos::Row(start + 1) })?;
    let records: Vec<RawRecord> = rows
        .enumerate()
        .filter(|(_, r)| r.iter().any(|c| !matches!(c, Data::Empty)))
        .map(|(i, r)| {
            let loc = Location { file: file.clone(), pos: Pos::Row(start + i as u64 + 2) };
            // An unnamed column's empty cells are no field.
            let fields = header
                .iter()
                .zip(r)
                .zip(&unnamed)
                .filter(|((_, c), unnamed)| !(**unnamed && matches!(c, Data::Empty)))
                .map(|((name, c), _)| (name.clone(), cell(c)))
                .collect();
            RawRecord { loc, value: Raw::Map(fields), file_stem: stem.clone(), key: None, row: i as u64 + 1 }
        })
        .collect();
    if records.is_empty() {
        return Err(bad(format!("{which} has a header but no records")));
    }
    Ok((records, note))
}
