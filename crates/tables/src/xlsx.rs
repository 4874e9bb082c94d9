//! Spreadsheets (`.xlsx`, `.xlsm`, `.xls`, `.ods`, read with `calamine`): the
//! first sheet or the one named, its first row the header, one record per further row. Cells
//! keep their type (text, integer, number, boolean); an empty cell is absent.
//! Locations are spreadsheet rows as a person sees them (the header is row 1
//! when the sheet starts at the top).
//!
//! An `.xlsx` / `.ods` file is a zip archive, and calamine inflates a sheet
//! whole: a small file can inflate to gigabytes. Every member is measured
//! first, by its declared size and then by inflating it into a counter, and
//! the file is refused past [`MAX_MEMBER_BYTES`] per member or
//! [`MAX_INFLATED_BYTES`] in all, before calamine opens it.

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

/// The largest member of a spreadsheet's archive read, inflated (a sheet of
/// about a million short rows).
pub const MAX_MEMBER_BYTES: u64 = 256 << 20;

/// The most a spreadsheet's archive may inflate to, all members together.
pub const MAX_INFLATED_BYTES: u64 = 512 << 20;

/// The extensions read as spreadsheets.
pub const EXTENSIONS: [&str; 4] = ["xlsx", "xlsm", "xls", "ods"];

/// Whether `path` names a spreadsheet, by its extension (any case).
pub fn is_spreadsheet(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// Refuses a zip-based spreadsheet one of whose members inflates past
/// `member_limit` bytes, or whose members together pass `total_limit`, naming
/// the member and its size. The declared sizes are checked first; each member
/// is then inflated into a counter (declared sizes can lie), never into
/// memory. A file that is not a zip archive (`.xls`), or that the zip reader
/// cannot open, is left to calamine.
pub fn check_inflated_size(path: &Path, member_limit: u64, total_limit: u64) -> Result<()> {
    let Ok(file) = std::fs::File::open(path) else { return Ok(()) };
    let mut head = [0u8; 4];
    if std::io::Read::read_exact(&mut &file, &mut head).is_err() || &head != b"PK\x03\x04" {
        return Ok(());
    }
    let too_large = |member: &str, size: u64, limit: u64, what: &str| {
        Error::one(
            Problem::new(
                Location::file(path),
                format!(
                    "{what} {member} inflates to {size} bytes ({:.1} MB), more than blindspot reads from a spreadsheet \
                     ({limit} bytes)",
                    size as f64 / 1e6
                ),
            )
            .help("export the sheet as CSV or JSON lines, which blindspot reads in bounded memory (a small file that inflates this much is a zip bomb)"),
        )
    };
    crate::error::guard_foreign(
        || {
            let Ok(mut zip) = zip::ZipArchive::new(std::io::BufReader::new(file)) else { return Ok(()) };
            let mut total = 0u64;
            for i in 0..zip.len() {
                let Ok(mut member) = zip.by_index(i) else { return Ok(()) };
                let name = member.name().to_string();
                if member.size() > member_limit {
                    return Err(too_large(&name, member.size(), member_limit, "the member"));
                }
                if total + member.size() > total_limit {
                    return Err(too_large(&name, total + member.size(), total_limit, "the archive, up to its member"));
                }
                let mut limited = std::io::Read::take(&mut member, member_limit + 1);
                let Ok(n) = std::io::copy(&mut limited, &mut std::io::sink()) else { return Ok(()) };
                if n > member_limit {
                    return Err(too_large(&name, n, member_limit, "the member (past its declared size)"));
                }
                total += n;
                if total > total_limit {
                    return Err(too_large(&name, total, total_limit, "the archive, up to its member"));
                }
            }
            Ok(())
        },
        |why| {
            Problem::new(
                Location::file(path),
                format!("not a readable spreadsheet: its zip archive is corrupt ({why})"),
            )
            .help("re-save the workbook, or export the sheet as CSV")
        },
    )
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
    check_inflated_size(path, MAX_MEMBER_BYTES, MAX_INFLATED_BYTES)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn zip_with(member: &str, bytes: &[u8]) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        let mut w = zip::ZipWriter::new(&mut out);
        let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        w.start_file(member, opts).unwrap();
        std::io::Write::write_all(&mut w, bytes).unwrap();
        w.finish().unwrap();
        out.into_inner()
    }

    /// Sets the declared inflated size of every entry of `zip` to `size`.
    fn declare(zip: &mut [u8], size: u32) {
        for (sig, at) in [(b"PK\x03\x04", 22), (b"PK\x01\x02", 24)] {
            let starts: Vec<usize> = zip.windows(4).enumerate().filter(|(_, w)| w == sig).map(|(i, _)| i).collect();
            for i in starts {
                zip[i + at..i + at + 4].copy_from_slice(&size.to_le_bytes());
            }
        }
    }

    #[test]
    fn members_past_the_limit_are_refused_by_declared_and_by_actual_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.xlsx");
        let zeros = vec![0u8; 200_000];
        std::fs::write(&path, zip_with("xl/worksheets/sheet1.xml", &zeros)).unwrap();
        check_inflated_size(&path, 200_000, 400_000).unwrap();
        let e = check_inflated_size(&path, 100_000, 400_000).unwrap_err().to_string();
        assert!(e.contains("b.xlsx") && e.contains("xl/worksheets/sheet1.xml inflates to 200000 bytes"), "{e}");
        let e = check_inflated_size(&path, 200_000, 150_000).unwrap_err().to_string();
        assert!(e.contains("the archive, up to its member xl/worksheets/sheet1.xml"), "{e}");
        // A header that understates the size does not get past the counter.
        let mut lying = zip_with("xl/worksheets/sheet1.xml", &zeros);
        declare(&mut lying, 1_000);
        std::fs::write(&path, lying).unwrap();
        let e = check_inflated_size(&path, 100_000, 400_000).unwrap_err().to_string();
        assert!(e.contains("past its declared size"), "{e}");
        // Not a zip archive: left to calamine.
        std::fs::write(&path, b"not a zip").unwrap();
        check_inflated_size(&path, 1, 1).unwrap();
    }
}
