//! `blindspot ingest INPUT|PIPELINE -o OUT.parquet`: the one-step form of
//! ingest. INPUT is a pipeline file (`.toml`) or a data file whose fields
//! already carry the canonical names.

use std::path::PathBuf;

use super::outputs::{self, Output};
use crate::error::{Result, display_path};
use crate::sample::Embed;
use crate::spec::Flags;
use crate::spec::plan::{InputPlan, input_plan};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A pipeline file, or a benchmark file with canonical field names.
    pub input: PathBuf,
    /// The canonical Parquet file to write.
    #[arg(short = 'o', long = "out", visible_alias = "output")]
    pub output: PathBuf,
    #[command(flatten)]
    pub bare: super::input::BareArgs,
    /// Do not embed image bytes (paths and facts only).
    #[arg(long)]
    pub no_embed_images: bool,
}

pub fn run(args: &Args) -> Result<()> {
    let InputPlan { pipeline, ingest: plan } = input_plan(&args.bare.of(&args.input), &Flags::default())?;
    let rejected = args.output.with_extension("rejected.jsonl");
    outputs::check(
        &outputs::inputs_of(pipeline.as_ref(), &plan),
        &[Output::file("--out", &args.output), Output::file("the rejected rows' file", &rejected)],
    )?;
    let embed = if args.no_embed_images { Embed::PathsOnly } else { Embed::Images };
    let ingested = crate::pipeline::steps::ingest_to_file(&plan, &args.output, &rejected, embed)?;
    let s = &ingested.stats;
    super::say(&format!(
        "{}: {} samples ({} records read, {} filtered out, {} rejected)",
        display_path(&args.output),
        s.kept,
        s.records,
        s.filtered,
        s.rejected
    ));
    Ok(())
}
