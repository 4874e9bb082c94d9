//! `blindspot diff DIR_A DIR_B`: what changed from release A to release B —
//! ids added and removed per config, changed rows with the columns that
//! changed, and the headline statistics. Exit 0 whether or not they differ
//! (1 only when a release cannot be read).

use std::path::PathBuf;

use crate::error::Result;
use crate::release::diff::{diff, render_json, render_text};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The old release folder (releases/<name>/<version>).
    pub a: PathBuf,
    /// The new release folder.
    pub b: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Ids listed per added / removed / changed list (0 = all).
    #[arg(long, default_value_t = 10)]
    pub max_ids: usize,
}

pub fn run(args: &Args) -> Result<()> {
    let d = diff(&args.a, &args.b)?;
    let text = if args.json { render_json(&d, args.max_ids)? } else { render_text(&d, args.max_ids) };
    super::say(text.trim_end());
    Ok(())
}
