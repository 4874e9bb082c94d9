//! `blindspot embed INPUT [--pipeline F] -o embeddings.parquet`: sentence
//! embeddings of every question, option and question+options, from a model
//! installed beforehand (`just model`); cached by content under
//! `.blindspot/cache/embed/`.

use std::path::{Path, PathBuf};

use crate::embed::minilm::MiniLm;
use crate::embed::model::resolve_model_dir;
use crate::embed::{EmbedSettings, embed_samples, output};
use crate::error::{Result, display_path};
use crate::ingest::{Ingested, ingest};
use crate::spec::{IngestPlan, Pipeline};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A benchmark file with canonical fields, or a pipeline file (.toml).
    pub input: PathBuf,
    /// A pipeline whose field mapping applies to INPUT.
    #[arg(long)]
    pub pipeline: Option<PathBuf>,
    #[command(flatten)]
    pub bare: super::input::BareArgs,
    /// The Parquet file to write.
    #[arg(short = 'o', long = "out", visible_alias = "output")]
    pub output: PathBuf,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// Options shared by the commands that run the embedding model.
#[derive(Debug, Clone, clap::Args)]
pub struct ModelArgs {
    /// Folder of all-MiniLM-L6-v2 (default: $BLINDSPOT_MODEL_DIR, else .blindspot/models/all-MiniLM-L6-v2).
    #[arg(long)]
    pub model_dir: Option<PathBuf>,
    /// Truncate texts at this many tokens (default: the model's 256).
    #[arg(long)]
    pub max_length: Option<usize>,
    /// Always compute; neither read nor write .blindspot/cache/embed.
    #[arg(long)]
    pub no_cache: bool,
}

impl ModelArgs {
    /// Loads the model, or explains how to obtain it (exit 1).
    pub fn load(&self) -> Result<MiniLm> {
        if let Some(v) =
            self.max_length.and_then(|n| crate::spec::bounds::check_count(&crate::spec::bounds::MAX_LENGTH, n))
        {
            return Err(super::diagnose::flag_error(v.for_flag()));
        }
        let dir = resolve_model_dir(self.model_dir.as_deref())?;
        MiniLm::load(&dir, self.max_length)
    }
    pub fn settings(&self) -> EmbedSettings {
        if self.no_cache { EmbedSettings { cache_dir: None } } else { EmbedSettings::default() }
    }
}

/// Ingests INPUT: a pipeline file, a data file read through `--pipeline`'s
/// mapping, or a data file with canonical fields.
pub fn ingest_input(input: &Path, pipeline: Option<&Path>) -> Result<Ingested> {
    ingest(&input_plan(input, pipeline, &super::input::BareArgs::default())?.1)
}

/// How INPUT is read (see [`ingest_input`]), and the pipeline file that says so.
pub fn input_plan(
    input: &Path,
    pipeline: Option<&Path>,
    bare: &super::input::BareArgs,
) -> Result<(Option<Pipeline>, IngestPlan)> {
    let is_toml = input.extension().and_then(|e| e.to_str()) == Some("toml");
    if pipeline.is_some() || is_toml {
        bare.check_no_pipeline()?;
    }
    Ok(match (pipeline, is_toml) {
        (Some(p), false) => {
            let p = Pipeline::load(p)?;
            let mut plan = p.ingest.clone();
            let format = crate::spec::Format::infer(input).unwrap_or(crate::spec::Format::Json);
            plan.inputs = vec![crate::spec::Input { path: input.to_path_buf(), format }];
            (Some(p), plan)
        }
        (_, true) => {
            let p = Pipeline::load(input)?;
            let plan = p.ingest.clone();
            (Some(p), plan)
        }
        (None, false) => (None, bare.plan(input)?),
    })
}

pub fn run(args: &Args) -> Result<()> {
    // The model first: without it nothing is read or written.
    let (pipeline, plan) = input_plan(&args.input, args.pipeline.as_deref(), &args.bare)?;
    super::outputs::check(
        &super::outputs::inputs_of(pipeline.as_ref(), &plan),
        &[super::outputs::Output::file("--out", &args.output)],
    )?;
    let model = args.model.load()?;
    let ingested = ingest(&plan)?;
    let start = std::time::Instant::now();
    let e = embed_samples(&ingested.samples, &model, &args.model.settings())?;
    crate::io::fs::atomic_write(&args.output, |tmp| output::write(tmp, &e))?;
    let texts: usize = ingested.samples.iter().map(|s| s.options.len() + 2).sum();
    super::say(&format!(
        "{}: {} samples, {} texts embedded with {} in {:.1}s",
        display_path(&args.output),
        e.ids.len(),
        texts,
        e.model,
        start.elapsed().as_secs_f64()
    ));
    Ok(())
}
