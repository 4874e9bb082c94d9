//! `blindspot prune INPUT [--pipeline F] --out DIR`: Iterative Bias Pruning,
//! AFLite or the matched random control on one benchmark, by hand.

use std::path::PathBuf;

use super::diagnose::{InputArgs, TstArgs};
use crate::error::{Result, display_path};
use crate::pipeline::steps;
use crate::spec::plan::prune_settings;
use crate::spec::wire::PruneWire;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// Folder for prune.json, removed.csv, kept_ids.txt and prune_curve.svg.
    #[arg(short = 'o', long = "out", visible_alias = "output")]
    pub out: PathBuf,
    /// IBP, AFLite or the random control: each flag is a key of the pipeline's
    /// `[prune]` (`--budget` is `budget`), validated with the file.
    #[command(flatten)]
    pub prune: PruneWire,
    /// Folder of the embedding model, when embeddings are used (default: the pipeline's
    /// [embed] model-dir, else $BLINDSPOT_MODEL_DIR, else .blindspot/models/all-MiniLM-L6-v2).
    #[arg(long)]
    pub model_dir: Option<PathBuf>,
    #[command(flatten)]
    pub tst: TstArgs,
}

pub fn run(args: &Args) -> Result<()> {
    let settings = prune_settings(&args.input.flags(), &args.tst.flags(Some(&args.prune)), args.model_dir.clone())?;
    let input = &settings.input;
    let mut inputs = super::outputs::inputs_of(input.pipeline.as_ref(), &input.ingest);
    inputs.extend(args.model_dir.iter().map(|d| super::outputs::Input::Folder(d.clone())));
    inputs.extend(settings.diagnose.outside_source.iter().map(|o| super::outputs::Input::File(o.path.clone())));
    super::outputs::check(&inputs, &[super::outputs::Output::folder("--out", &args.out)])?;
    let steps::PrunedByHand { runs: steps::PruneRuns { pruned: run, control: ctl }, report } =
        steps::prune_by_hand(&settings)?;
    crate::io::fs::atomic_dir(&args.out, |tmp| crate::io::rendered::write_all(tmp, &report))?;
    super::say(&run.summary());
    if let Some(c) = &ctl {
        super::say(&c.summary());
    }
    super::say(&format!("  -> {}", display_path(&args.out)));
    Ok(())
}
