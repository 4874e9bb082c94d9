//! `blindspot build [PIPELINE...]`: one call into [`crate::pipeline::build`],
//! which validates every pipeline first, then builds (or, with `--check`,
//! rebuilds and compares) each; this prints what it reports.

use std::path::PathBuf;

use crate::error::Result;
use crate::spec::plan::{BuildFlags, DEFAULT_OUT};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Pipeline files (default: pipelines/*.toml).
    pub pipelines: Vec<PathBuf>,
    /// Folder that receives <name>/<version>/ for each pipeline. Building into the
    /// default folder also writes each pipeline's lock file (`<name>.lock.json` beside it).
    #[arg(long, default_value = DEFAULT_OUT)]
    pub out_dir: PathBuf,
    /// Rebuild in a temporary folder and compare with each pipeline's lock file;
    /// fail naming the first differing file. Writes nothing.
    #[arg(long)]
    pub check: bool,
    /// Recompute every stage instead of reusing unchanged results from the stage
    /// cache (`.blindspot/cache/`, or BLINDSPOT_CACHE_DIR).
    #[arg(long)]
    pub no_cache: bool,
    /// Print each stage's wall time, CPU time (every thread) and the peak RSS so far on stderr.
    #[arg(long)]
    pub timings: bool,
}

pub fn run(args: &Args) -> Result<()> {
    if args.timings {
        crate::progress::enable_timings();
    }
    let flags = BuildFlags {
        files: super::pipeline_files(&args.pipelines)?,
        out_dir: args.out_dir.clone(),
        check: args.check,
        no_cache: args.no_cache,
    };
    crate::pipeline::build(&flags, |line| super::say(&line))
}
