//! `blindspot embed INPUT [--pipeline F] -o embeddings.parquet`: sentence
//! embeddings of every question, option and question+options, from a model
//! installed beforehand (`just model`); cached by content under
//! `.blindspot/cache/embed/`.

use std::path::PathBuf;

use crate::embed::EmbedSettings;
use crate::embed::minilm::MiniLm;
use crate::error::{Result, display_path};
use crate::spec::Flags;
use crate::spec::plan::{InputFlags, InputPlan, input_plan, model_plan};

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

impl Args {
    /// INPUT as the plan takes it.
    fn input_flags(&self) -> InputFlags {
        InputFlags { pipeline: self.pipeline.clone(), ..self.bare.of(&self.input) }
    }
}

impl ModelArgs {
    /// Loads the model, or explains how to obtain it (exit 1).
    pub fn load(&self) -> Result<MiniLm> {
        crate::pipeline::steps::load_model(&model_plan(self.model_dir.clone(), self.max_length)?)
    }
    pub fn settings(&self) -> EmbedSettings {
        if self.no_cache { EmbedSettings { cache_dir: None } } else { EmbedSettings::default() }
    }
}

pub fn run(args: &Args) -> Result<()> {
    // The model first: without it nothing is read or written.
    let InputPlan { pipeline, ingest: plan } = input_plan(&args.input_flags(), &Flags::default())?;
    super::outputs::check(
        &super::outputs::inputs_of(pipeline.as_ref(), &plan),
        &[super::outputs::Output::file("--out", &args.output)],
    )?;
    let model = args.model.load()?;
    let crate::pipeline::steps::EmbeddedFile { embeddings: e, texts, seconds } =
        crate::pipeline::steps::embed_to_file(&plan, &model, &args.model.settings(), &args.output)?;
    super::say(&format!(
        "{}: {} samples, {} texts embedded with {} in {:.1}s",
        display_path(&args.output),
        e.ids.len(),
        texts,
        e.model,
        seconds
    ));
    Ok(())
}
