//! `blindspot build [PIPELINE...]`: validate every pipeline first, then run
//! each through [`crate::pipeline::build`] and print a summary per release.

use std::path::{Path, PathBuf};

use crate::error::{Result, display_path};
use crate::pipeline::cache::{StageCache, default_dir};

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

const DEFAULT_OUT: &str = "releases";

pub fn run(args: &Args) -> Result<()> {
    // Validate all before touching any data.
    let pipelines = crate::pipeline::load_all(&super::pipeline_files(&args.pipelines)?)?;
    if args.timings {
        crate::progress::enable_timings();
    }
    if args.check {
        // A check recomputes everything: it must not trust earlier results.
        for line in crate::pipeline::check(&pipelines)? {
            super::say(&line);
        }
        return Ok(());
    }
    // Each pipeline's outputs against its inputs, then every output against
    // every other: one pipeline's release must not replace another's (same
    // name and version) or its lock file.
    let mut all = Vec::new();
    for p in &pipelines {
        let of = display_path(&p.path);
        let mut written = vec![super::outputs::Output::folder(
            format!("the release of {of}"),
            args.out_dir.join(&p.dataset.name).join(&p.dataset.version),
        )];
        if args.out_dir == Path::new(DEFAULT_OUT) {
            written.push(super::outputs::Output::file(
                format!("the lock file of {of}"),
                crate::release::lock::path_for(&p.path),
            ));
        }
        super::outputs::check(&super::outputs::pipeline_inputs(p), &written)?;
        all.extend(written);
    }
    super::outputs::check(&[], &all)?;
    let cache = if args.no_cache { StageCache::disabled() } else { StageCache::new(default_dir()) };
    for p in &pipelines {
        let lock = args.out_dir == Path::new(DEFAULT_OUT);
        super::say(&crate::pipeline::build(p, &args.out_dir, &cache, lock)?);
    }
    Ok(())
}
