//! `blindspot variants INPUT -o DIR [--kinds a,b,...]`: the variants stage by
//! hand. INPUT is a pipeline file (its `[variants]` section applies) or a data
//! file with canonical field names. DIR receives `<kind>.parquet` per kind and
//! `summary.json` (rows, skips by reason, warnings), written to a temporary
//! folder and swapped into place.

use std::path::PathBuf;

use crate::error::{Result, display_path};
use crate::pipeline::steps::{self, VariantsWritten};
use crate::sample::Embed;
use crate::variants::{CaptionSource, KindSel, parse_kind};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A pipeline file (.toml), or a benchmark file with canonical field names.
    pub input: PathBuf,
    #[command(flatten)]
    pub bare: super::input::BareArgs,
    /// Folder for `<kind>.parquet` files and `summary.json` (replaced when it exists).
    #[arg(short = 'o', long = "out", visible_alias = "output")]
    pub output: PathBuf,
    /// Comma-separated kinds (default: the pipeline's [variants] kinds, else all):
    /// no_image, no_video, white_image, noise_image, caption, mirage, guess, phantom, phantom0, phantom0_video,
    /// option_shuffle,
    /// unknown_option, distractor_swap (every k) or distractor_swap@k, visual_substitution, gold_removed.
    #[arg(long, value_delimiter = ',', value_parser = parse_kind)]
    pub kinds: Vec<KindSel>,
    /// Seed of every random choice (default: the pipeline's, else 42).
    #[arg(long)]
    pub seed: Option<u64>,
    /// A JSON file of {sample id: caption} for the `caption` kind.
    #[arg(long)]
    pub captions: Option<PathBuf>,
    /// Dotted path of the caption object inside that file (e.g. `captions`).
    #[arg(long, requires = "captions")]
    pub captions_key: Option<String>,
    /// Leave out (and count) captions of unknown ids instead of stopping.
    #[arg(long)]
    pub skip_invalid_captions: bool,
    /// Do not embed image bytes of the source images (generated images are always embedded).
    #[arg(long)]
    pub no_embed_images: bool,
}

pub fn run(args: &Args) -> Result<()> {
    let crate::spec::plan::InputPlan { pipeline, ingest: plan } =
        crate::spec::plan::input_plan(&args.bare.of(&args.input), &crate::spec::Flags::default())?;
    let flags = crate::spec::plan::VariantsFlags {
        kinds: args.kinds.clone(),
        seed: args.seed,
        captions: args.captions.clone().map(|path| (path, args.captions_key.clone())),
        skip_invalid_captions: args.skip_invalid_captions,
    };
    let crate::spec::plan::VariantsSettings { config: cfg } =
        crate::spec::plan::variants_settings(pipeline.as_ref(), &flags)?;
    let seed = cfg.seed;
    let mut inputs = super::outputs::inputs_of(pipeline.as_ref(), &plan);
    if let Some(CaptionSource::File { path, .. }) = &cfg.captions {
        inputs.push(super::outputs::Input::File(path.clone()));
    }
    super::outputs::check(&inputs, &[super::outputs::Output::folder("--out", &args.output)])?;
    let embed = if args.no_embed_images { Embed::PathsOnly } else { Embed::Images };
    let VariantsWritten { questions, kinds_asked, kinds: written, warnings } =
        steps::variants_to_dir(&plan, &cfg, &args.output, embed)?;
    let lines: Vec<String> = written
        .iter()
        .map(|(kind, k)| {
            let mut line = format!("  {kind}: {} rows, {} skipped", k.rows, k.skipped);
            for (reason, n) in &k.skipped_by_reason {
                line.push_str(&format!("\n      {n} {reason}"));
            }
            line
        })
        .collect();
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    super::say(&format!(
        "{}: {} kinds from {} samples (seed {seed})\n{}",
        display_path(&args.output),
        kinds_asked,
        questions,
        lines.join("\n")
    ));
    Ok(())
}
