//! `blindspot init FILE [-o pipeline.toml]`: a first pipeline for a benchmark of
//! one's own (`spec::init` proposes it), written and shown with the next
//! command.

use std::path::PathBuf;

use super::outputs::{self, Output};
use crate::error::{Result, display_path};
use crate::io::fs::{atomic_write, write_bytes};
use crate::spec::init::{InitFlags, InitPlan, init_plan, propose_pipeline};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The benchmark: a data file (JSON, JSON lines, CSV, TSV, spreadsheet,
    /// Parquet) or a Hugging Face folder.
    pub input: PathBuf,
    /// The pipeline file to write (default: `<file name>.toml` in the working folder).
    #[arg(short = 'o', long = "out", visible_alias = "output")]
    pub output: Option<PathBuf>,
    /// Map a source field yourself (`--field id=question_id`), as [ingest.fields]
    /// does; init proposes the rest.
    #[arg(long = "field", value_name = "KEY=SOURCE")]
    pub fields: Vec<String>,
    /// The folder the file's image paths are relative to (default: the file's own folder).
    #[arg(long, value_name = "DIR")]
    pub images: Option<PathBuf>,
    /// The folder the file's videos are in (default: the file's own folder or its
    /// `videos` folder), where init looks for the files a field or template names.
    #[arg(long, value_name = "DIR")]
    pub videos: Option<PathBuf>,
    /// A file whose records complete the questions' (VQA's annotations beside its
    /// questions), joined on the field init finds both hold (repeat for more).
    #[arg(long = "join", value_name = "FILE")]
    pub joins: Vec<PathBuf>,
    /// Overwrite the pipeline file when it exists.
    #[arg(long)]
    pub force: bool,
}

impl Args {
    /// The flags in the plan's terms.
    fn flags(&self) -> InitFlags {
        InitFlags {
            input: self.input.clone(),
            output: self.output.clone(),
            fields: self.fields.clone(),
            images: self.images.clone(),
            videos: self.videos.clone(),
            joins: self.joins.clone(),
            force: self.force,
        }
    }
}

pub fn run(args: &Args) -> Result<()> {
    let plan: InitPlan = init_plan(&args.flags())?;
    let out = &plan.out;
    outputs::check(&outputs::plan_inputs(&plan.ingest), &[Output::file("--out", out)])?;
    let mut proposal = propose_pipeline(&plan)?;
    atomic_write(out, |tmp| write_bytes(tmp, proposal.text.as_bytes()))?;
    // Grouping folds by image is checked on the written pipeline's questions;
    // where it fails the key is left commented with diagnose's own reason.
    if proposal.groups_by_image()
        && let Some(why) = crate::pipeline::steps::init_group_by(out)?
    {
        proposal.leave_group_by_unset(&why);
        atomic_write(out, |tmp| write_bytes(tmp, proposal.text.as_bytes()))?;
        super::say(&format!("  group-by          not set: {why}"));
    }
    for j in &plan.joined {
        super::say(&format!("  {:<14} <- {} on \"{}\" ({})", "join", display_path(&j.path), j.on, j.why));
    }
    let lines = &proposal.lines;
    for l in lines {
        let shown = match &l.value {
            Some(v) => format!("{:<14} <- \"{v}\" ({})", l.key, l.why),
            None if !l.columns.is_empty() => {
                let columns: Vec<String> = l.columns.iter().map(|c| format!("\"{c}\"")).collect();
                format!("{:<14} <- {} ({})", l.key, columns.join(", "), l.why)
            }
            None => format!("{:<14}    not mapped: {}", l.key, l.why),
        };
        super::say(&format!("  {shown}"));
    }
    let open: Vec<&str> =
        lines.iter().filter(|l| l.value.is_none() && l.why.contains("choose")).map(|l| l.key).collect();
    super::say(&format!(
        "{}: a pipeline for {} ({} records read, {} fields){}",
        display_path(out),
        display_path(&args.input),
        proposal.records,
        proposal.fields,
        if open.is_empty() { String::new() } else { format!("; choose: {}", open.join(", ")) }
    ));
    super::say(&format!("next: blindspot validate {} && blindspot build {}", display_path(out), display_path(out)));
    Ok(())
}
