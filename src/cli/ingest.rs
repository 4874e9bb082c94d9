//! `blindspot ingest INPUT|PIPELINE -o OUT.parquet`: the one-step form of
//! ingest. INPUT is a pipeline file (`.toml`) or a data file whose fields
//! already carry the canonical names.

use std::path::PathBuf;

use super::outputs::{self, Output};
use crate::error::{Error, Result, display_path};
use crate::ingest::ingest_to_parquet;
use crate::io::fs::{atomic_write, write_bytes};
use crate::sample::Embed;
use crate::spec::Pipeline;

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
    let (plan, inputs) = if args.input.extension().and_then(|e| e.to_str()) == Some("toml") {
        args.bare.check_no_pipeline()?;
        let p = Pipeline::load(&args.input)?;
        let inputs = outputs::pipeline_inputs(&p);
        (p.ingest, inputs)
    } else {
        let plan = args.bare.plan(&args.input)?;
        let inputs = outputs::plan_inputs(&plan);
        (plan, inputs)
    };
    let rejected_path = args.output.with_extension("rejected.jsonl");
    outputs::check(
        &inputs,
        &[Output::file("--out", &args.output), Output::file("the rejected rows' file", &rejected_path)],
    )?;
    let embed = if args.no_embed_images { Embed::PathsOnly } else { Embed::Images };
    let mut summary = None;
    atomic_write(&args.output, |tmp| {
        summary = Some(ingest_to_parquet(&plan, tmp, embed)?);
        Ok(())
    })?;
    let ingested = summary.ok_or_else(|| Error::Bug("ingest wrote no summary".into()))?;
    if !ingested.rejected.is_empty() {
        let path = rejected_path;
        let mut text = String::new();
        for r in &ingested.rejected {
            text.push_str(&serde_json::to_string(r).map_err(|e| Error::Bug(e.to_string()))?);
            text.push('\n');
        }
        atomic_write(&path, |tmp| write_bytes(tmp, text.as_bytes()))?;
    }
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
