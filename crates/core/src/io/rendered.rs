//! Files a stage renders and another writes: the diagnose and prune steps
//! hand their report files over as data, and the release (or a subcommand's
//! output folder) writes them, so a build enters each stage once and the
//! release renders nothing of theirs.

use std::path::Path;

use crate::error::{Error, Result};
use crate::io::fs::{mkdir_for, write_bytes};
use crate::io::parquet::write_batch;

/// What a rendered file holds.
#[derive(Debug, Clone)]
pub enum Content {
    /// Text or an image, as written.
    Bytes(Vec<u8>),
    /// A table, written as the canonical Parquet of [`write_batch`].
    Table(arrow::array::RecordBatch),
}

/// One file of a report, named relative to the folder it is written into.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub name: String,
    pub content: Content,
}

impl Rendered {
    pub fn bytes(name: &str, bytes: impl Into<Vec<u8>>) -> Rendered {
        Rendered { name: name.into(), content: Content::Bytes(bytes.into()) }
    }

    /// `value` as pretty JSON with a final newline, as every JSON file of a release.
    pub fn json<T: serde::Serialize + ?Sized>(name: &str, value: &T) -> Result<Rendered> {
        let mut text = serde_json::to_string_pretty(value).map_err(|e| Error::Bug(e.to_string()))?;
        text.push('\n');
        Ok(Rendered::bytes(name, text))
    }

    pub fn table(name: &str, batch: arrow::array::RecordBatch) -> Rendered {
        Rendered { name: name.into(), content: Content::Table(batch) }
    }
}

/// Writes `files` under `dir` (created when missing).
pub fn write_all(dir: &Path, files: &[Rendered]) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    for f in files {
        let path = dir.join(&f.name);
        mkdir_for(&path)?;
        match &f.content {
            Content::Bytes(b) => write_bytes(&path, b)?,
            Content::Table(t) => write_batch(&path, t)?,
        }
    }
    Ok(())
}
