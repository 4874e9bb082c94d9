//! `blindspot export DIR --to lmms-eval|vlmevalkit -o OUT`: variant (or
//! release) Parquet files → a folder the harness runs unmodified, plus a
//! manifest mapping harness rows back to blindspot ids. OUT is written to a
//! temporary folder and swapped into place.

use std::path::PathBuf;

use crate::error::{Result, display_path};
use crate::export::{export_name, lmms_eval, vlmevalkit};
use crate::io::release_dir::read_configs;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Harness {
    /// A task folder for `lmms_eval --include_path OUT`.
    #[value(name = "lmms-eval")]
    LmmsEval,
    /// `<Name>_<variant>.tsv` files for VLMEvalKit's data root.
    #[value(name = "vlmevalkit")]
    Vlmevalkit,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A folder written by `blindspot variants` (or a release folder).
    pub dir: PathBuf,
    /// The harness to export for.
    #[arg(long = "to", value_enum)]
    pub to: Harness,
    /// Output folder (replaced when it exists).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Name used in file and task names (default: the rows' benchmark).
    #[arg(long)]
    pub name: Option<String>,
}

pub fn run(args: &Args) -> Result<()> {
    let configs = read_configs(&args.dir)?;
    let name = export_name(&configs, args.name.as_deref());
    let mut manifest = serde_json::Value::Null;
    crate::io::fs::atomic_dir(&args.output, |tmp| {
        manifest = match args.to {
            Harness::Vlmevalkit => vlmevalkit::export(&configs, &name, tmp)?,
            Harness::LmmsEval => lmms_eval::export(&configs, &name, tmp, &args.output)?,
        };
        Ok(())
    })?;
    let exported = configs.iter().filter(|c| !c.rows.is_empty()).count();
    let empty: Vec<&str> = configs.iter().filter(|c| c.rows.is_empty()).map(|c| c.name.as_str()).collect();
    let rows: usize = configs.iter().map(|c| c.rows.len()).sum();
    let mut msg = format!(
        "{}: {exported} configs, {rows} rows for {}",
        display_path(&args.output),
        match args.to {
            Harness::Vlmevalkit => "VLMEvalKit",
            Harness::LmmsEval => "lmms-eval (--include_path)",
        }
    );
    if !empty.is_empty() {
        msg.push_str(&format!("; empty, not exported: {}", empty.join(", ")));
    }
    super::say(&msg);
    Ok(())
}
