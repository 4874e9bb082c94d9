//! `blindspot validate [PIPELINE...]`: the dry run. Parses and checks every
//! file, reports every problem of every file, touches no data.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::spec::Pipeline;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Pipeline files (default: pipelines/*.toml).
    pub pipelines: Vec<PathBuf>,
}

pub fn run(args: &Args) -> Result<()> {
    let mut problems = Vec::new();
    for file in super::pipeline_files(&args.pipelines)? {
        match Pipeline::load(&file) {
            Ok(p) => {
                if let Some(w) = crate::spec::datasheet::unanswered_warning(&p) {
                    eprintln!("{w}");
                }
                super::say(&format!(
                    "ok: {} ({} {}, {} input file{})",
                    crate::error::display_path(&file),
                    p.dataset.name,
                    p.dataset.version,
                    p.ingest.inputs.len(),
                    if p.ingest.inputs.len() == 1 { "" } else { "s" }
                ))
            }
            Err(Error::Invalid(ps)) => problems.extend(ps),
            Err(e) => return Err(e),
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
}
