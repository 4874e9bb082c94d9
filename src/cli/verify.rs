//! `blindspot verify DIR`: re-hash a release against its manifest and check
//! the card's counts against the data files. Exit 0 with "verified N files",
//! or 1 with every missing, extra and changed file and every count the data
//! contradicts named (the first line names the first one, in path order).

use std::path::PathBuf;

use crate::error::{Result, display_path};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A release folder (releases/<name>/<version>).
    pub dir: PathBuf,
}

pub fn run(args: &Args) -> Result<()> {
    let n = crate::release::verify::verify_or_problems(&args.dir)?;
    super::say(&format!("verified {n} files in {} against manifest.json", display_path(&args.dir)));
    Ok(())
}
