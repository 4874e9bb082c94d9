//! `blindspot prune INPUT [--pipeline F] --out DIR`: Iterative Bias Pruning,
//! AFLite or the matched random control on one benchmark, by hand.

use std::path::PathBuf;

use super::diagnose::{InputArgs, TstArgs, flag_error, resolve_input};
use crate::error::{Result, display_path};
use crate::ingest::ingest;
use crate::pipeline::steps;
use crate::prune::{Method, report};
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
    let (pipeline, plan, settings) = resolve_input(&args.input, &args.tst.flags(Some(&args.prune)))?;
    let mut inputs = super::outputs::inputs_of(pipeline.as_ref(), &plan);
    inputs.extend(args.model_dir.iter().map(|d| super::outputs::Input::Folder(d.clone())));
    let (dcfg, crate::spec::PrunePlan { config: cfg, control }) = settings.for_pruning();
    inputs.extend(dcfg.outside_source.iter().map(|o| super::outputs::Input::File(o.path.clone())));
    super::outputs::check(&inputs, &[super::outputs::Output::folder("--out", &args.out)])?;
    if cfg.method == Method::Bclean {
        return Err(flag_error(
            "B-Clean needs model predictions: run `blindspot metrics --bclean`, or use a pipeline with [predictions] and `blindspot build`".into(),
        ));
    }
    // The model before the data: without it nothing is read.
    let model = if crate::prune::needs_embeddings(&cfg, &dcfg) {
        let flag = args.model_dir.clone().or_else(|| pipeline.as_ref().and_then(|p| p.embed.model_dir.clone()));
        let dir = crate::embed::model::resolve_model_dir(flag.as_deref())?;
        let max_length = pipeline.as_ref().and_then(|p| p.embed.max_length);
        Some(crate::embed::minilm::MiniLm::load(&dir, max_length)?)
    } else {
        None
    };
    let ingested = ingest(&plan)?;
    let unit_at = match (&pipeline, &args.prune.unit) {
        (Some(p), None) => crate::error::Location::file(&p.path),
        _ => crate::error::Location::file("command line"),
    };
    cfg.unit.check_rows(&ingested.samples, &unit_at)?;
    let dcfg =
        steps::check_diagnose(&dcfg, &ingested.samples, &super::diagnose::settings_at(pipeline.as_ref(), &args.tst))?;
    let emb = match &model {
        Some(m) => Some(crate::embed::embed_samples(&ingested.samples, m, &crate::embed::EmbedSettings::default())?),
        None => None,
    };
    let steps::PruneRuns { pruned: run, control: ctl } =
        steps::prune(&ingested.samples, &cfg, control, &dcfg, emb.as_ref(), None)?;
    crate::io::fs::atomic_dir(&args.out, |tmp| report::write_report(tmp, &run, ctl.as_ref()))?;
    super::say(&run.summary());
    if let Some(c) = &ctl {
        super::say(&c.summary());
    }
    super::say(&format!("  -> {}", display_path(&args.out)));
    Ok(())
}
