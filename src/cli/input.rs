//! How a command reads a data file given without a pipeline file: `--field`
//! maps a source field onto a canonical one (the keys and values of
//! `[ingest.fields]`), `--images` names the folder image paths are relative to
//! (default: the data file's own folder).

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::spec::IngestPlan;
use crate::spec::plan::InputFlags;

#[derive(Debug, Clone, Default, clap::Args)]
pub struct BareArgs {
    /// Map a source field onto a canonical one, as [ingest.fields] does, for a data
    /// file read without a pipeline: `--field id=question_id`, `--field
    /// question-type=category`, `--field options=A,B,C,D`, `--field answer-kind=index`
    /// (repeat the flag for each field).
    #[arg(long = "field", value_name = "KEY=SOURCE")]
    pub fields: Vec<String>,
    /// The folder the data file's image paths are relative to (default: the data
    /// file's own folder; images not found there are kept as names, counted).
    #[arg(long, value_name = "DIR")]
    pub images: Option<PathBuf>,
}

impl BareArgs {
    /// The ingest plan of INPUT, a data file read without a pipeline.
    pub fn plan(&self, input: &Path) -> Result<IngestPlan> {
        crate::spec::plan::bare_input_plan(input, &self.fields, self.images.as_deref())
    }

    /// INPUT read with these flags (and no `--pipeline`).
    pub fn of(&self, input: &Path) -> InputFlags {
        InputFlags {
            input: input.to_path_buf(),
            pipeline: None,
            fields: self.fields.clone(),
            images: self.images.clone(),
        }
    }
}
