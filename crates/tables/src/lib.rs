//! The table readers: a benchmark's file or a result file, as JSON, JSON
//! lines, CSV, TSV, Parquet, Arrow IPC or a spreadsheet, read into raw
//! records ([`raw::RawRecord`]: the source's own types, each record with its
//! line or row), with a size limit per record ([`bounded`]). Ingest maps these
//! records to samples, predictions to answers; neither owns the readers.

use blindspot_core::{error, io};

pub mod bounded;
pub mod csv;
pub mod json;
pub mod parquet;
pub mod raw;
pub mod xlsx;
