//! `blindspot prune INPUT [--pipeline F] --out DIR`: Iterative Bias Pruning,
//! AFLite or the matched random control on one benchmark, by hand.

use std::path::PathBuf;

use super::diagnose::{InputArgs, TstArgs, bounds_error, flag_error, resolve_input, tst_config};
use crate::error::{Result, display_path};
use crate::ingest::ingest;
use crate::prune::{Allocation, Amount, Method, PruneConfig, Rank, prune_with, report};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// Folder for prune.json, removed.csv, kept_ids.txt and prune_curve.svg.
    #[arg(short = 'o', long = "out", visible_alias = "output")]
    pub out: PathBuf,
    /// `ibp` (default), `aflite` or `random` (the matched control).
    #[arg(long)]
    pub method: Option<String>,
    /// Questions to remove: a count (`800`) or a percentage (`20%`). Default 10%.
    #[arg(long)]
    pub budget: Option<String>,
    /// Removed per iteration (IBP's b, AFLite's k): a count or a percentage of the input. Default 50.
    #[arg(long)]
    pub batch: Option<String>,
    /// Fewest questions any question type keeps (default 10).
    #[arg(long)]
    pub floor: Option<usize>,
    /// IBP stops once the largest score is at or below this.
    #[arg(long)]
    pub threshold: Option<f64>,
    /// `per-format` (default: each answer format ranked on its own), `global` or `per-type`.
    #[arg(long)]
    pub allocation: Option<String>,
    /// When IBP stops before the budget: `null` (default: nothing goes unless blind
    /// accuracy is above its label-permutation null, and each group stops at its
    /// null), `chance` (once the 95% CI reaches chance) or `budget`.
    #[arg(long)]
    pub stop: Option<String>,
    /// What is removed at once: `question`, `image` or `meta:FIELD` (default: the
    /// fold group when --group-by is set, else the question).
    #[arg(long)]
    pub unit: Option<String>,
    /// Most fresh seeds on which the kept set is re-diagnosed after pruning (default 3;
    /// one when its CI is within ±0.5 points; 0 skips).
    #[arg(long)]
    pub independent_seeds: Option<usize>,
    /// Rank multiple-choice questions by `s` (default) or `s-minus-chance`.
    #[arg(long)]
    pub rank: Option<String>,
    /// Also run the matched random control and put its curve beside the run's.
    #[arg(long)]
    pub control: bool,
    /// AFLite: random partitions per round (default 64).
    #[arg(long)]
    pub partitions: Option<usize>,
    /// AFLite: predictability threshold tau (default 0.75).
    #[arg(long)]
    pub tau: Option<f64>,
    /// AFLite: what the linear probes see, `features` (default) or `embeddings`
    /// (sentence embeddings of the question and options; needs the model, `just model`).
    #[arg(long)]
    pub representation: Option<String>,
    /// Folder of the embedding model, when embeddings are used (default: the pipeline's
    /// [embed] model-dir, else $BLINDSPOT_MODEL_DIR, else .blindspot/models/all-MiniLM-L6-v2).
    #[arg(long)]
    pub model_dir: Option<PathBuf>,
    #[command(flatten)]
    pub tst: TstArgs,
}

/// The pipeline's `[prune]` (or the defaults) with the flags applied.
fn prune_config(pipeline: Option<&crate::spec::Pipeline>, args: &Args, seed: u64) -> Result<(PruneConfig, bool)> {
    let (mut cfg, mut control) = match pipeline.and_then(|p| p.prune.clone()) {
        Some(p) => (p.config, p.control),
        None => (PruneConfig { seed, ..Default::default() }, false),
    };
    if let Some(m) = &args.method {
        cfg.method = Method::parse(m).map_err(flag_error)?;
    }
    if let Some(b) = &args.budget {
        cfg.budget = Amount::parse(b).map_err(|e| flag_error(format!("--budget: {e}")))?;
    }
    if let Some(b) = &args.batch {
        cfg.batch = Amount::parse(b).map_err(|e| flag_error(format!("--batch: {e}")))?;
    }
    if let Some(f) = args.floor {
        cfg.floor = f;
    }
    if let Some(r) = &args.stop {
        cfg.stop = crate::prune::StopRule::parse(r).map_err(|e| flag_error(format!("--stop: {e}")))?;
    }
    if let Some(u) = &args.unit {
        cfg.unit = crate::prune::Unit::parse(u).map_err(|e| flag_error(format!("--unit: {e}")))?;
    }
    if let Some(n) = args.independent_seeds {
        cfg.independent_seeds = n;
    }
    if args.threshold.is_some() {
        cfg.threshold = args.threshold;
    }
    if let Some(a) = &args.allocation {
        cfg.allocation = Allocation::parse(a).map_err(flag_error)?;
    }
    if let Some(r) = &args.rank {
        cfg.rank = Rank::parse(r).map_err(flag_error)?;
    }
    if let Some(m) = args.partitions {
        cfg.aflite.partitions = m;
    }
    if let Some(t) = args.tau {
        cfg.aflite.tau = t;
    }
    if let Some(r) = &args.representation {
        cfg.aflite.representation = crate::prune::Representation::parse(r).map_err(flag_error)?;
    }
    if let Some(s) = args.tst.seed {
        cfg.seed = s;
    }
    control |= args.control;
    bounds_error(crate::spec::bounds::prune(&cfg))?;
    Ok((cfg, control))
}

pub fn run(args: &Args) -> Result<()> {
    let (pipeline, plan) = resolve_input(&args.input)?;
    let mut inputs = super::outputs::inputs_of(pipeline.as_ref(), &plan);
    inputs.extend(args.model_dir.iter().map(|d| super::outputs::Input::Folder(d.clone())));
    let mut dcfg = tst_config(pipeline.as_ref(), &args.tst)?;
    inputs.extend(dcfg.outside_source.iter().map(|o| super::outputs::Input::File(o.path.clone())));
    super::outputs::check(&inputs, &[super::outputs::Output::Folder(args.out.clone())])?;
    let (cfg, control) = prune_config(pipeline.as_ref(), args, dcfg.seed)?;
    if cfg.method == Method::Bclean {
        return Err(flag_error(
            "B-Clean needs model predictions: run `blindspot metrics --bclean`, or use a pipeline with [predictions] and `blindspot build`".into(),
        ));
    }
    if control && cfg.method == Method::Random {
        return Err(flag_error("--control adds a random run; the method is random already".into()));
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
    dcfg.check_folds(ingested.samples.len())?;
    dcfg.check_meta_fields(&ingested.samples, &super::diagnose::settings_at(pipeline.as_ref(), &args.tst))?;
    dcfg.load_outside(&ingested.samples)?;
    let emb = match &model {
        Some(m) => Some(crate::embed::embed_samples(&ingested.samples, m, &crate::embed::EmbedSettings::default())?),
        None => None,
    };
    let run = prune_with(&ingested.samples, &cfg, &dcfg, emb.as_ref())?;
    let ctl = match control {
        true => Some(prune_with(&ingested.samples, &run.matched_control(), &dcfg, emb.as_ref())?),
        false => None,
    };
    crate::io::fs::atomic_dir(&args.out, |tmp| report::write_report(tmp, &run, ctl.as_ref()))?;
    super::say(&run.summary());
    if let Some(c) = &ctl {
        super::say(&c.summary());
    }
    super::say(&format!("  -> {}", display_path(&args.out)));
    Ok(())
}
