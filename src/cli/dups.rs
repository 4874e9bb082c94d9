//! `blindspot dups INPUT [--train FILE] [--hashes FILE] -o DIR`: exact and
//! near-duplicate questions within a benchmark and against a training split,
//! and near-duplicate images (perceptual hash) within it, against the training
//! split's images and against a published list of hashes, and near-duplicate
//! videos (sampled frames, decoded by ffmpeg when it is installed); writes
//! `dups.json` and `pairs.parquet`. `--exact-only` needs no model.

use std::path::PathBuf;

use super::embed::ModelArgs;
use crate::embed::dups::DEFAULT_THRESHOLD;
use crate::error::{Result, display_path};
use crate::spec::plan::{DupsFlags, DupsSettings, InputFlags, dups_settings};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A benchmark file with canonical fields, or a pipeline file (.toml).
    pub input: PathBuf,
    /// A pipeline whose field mapping applies to INPUT.
    #[arg(long)]
    pub pipeline: Option<PathBuf>,
    #[command(flatten)]
    pub bare: super::input::BareArgs,
    /// A training split to check the benchmark against (canonical fields, or a pipeline file).
    #[arg(long)]
    pub train: Option<PathBuf>,
    /// A pipeline whose field mapping applies to --train.
    #[arg(long)]
    pub train_pipeline: Option<PathBuf>,
    /// Folder for dups.json and pairs.parquet.
    #[arg(short = 'o', long = "out", visible_alias = "output")]
    pub output: PathBuf,
    /// Cosine similarity at or above which two questions are near-duplicates.
    #[arg(long, default_value_t = DEFAULT_THRESHOLD)]
    pub threshold: f64,
    /// A published list of image hashes to check the benchmark's images against:
    /// one 16-hex-digit `phash` a line (as in a release's `image_facts`).
    #[arg(long)]
    pub hashes: Option<PathBuf>,
    /// Hamming distance (bits of 64) at or below which two images' phash make
    /// them near-duplicates (0 to 12).
    #[arg(long, default_value_t = crate::sample::image_hash::DEFAULT_THRESHOLD)]
    pub image_threshold: u32,
    /// Exact (normalised-text) duplicates only: no embedding model needed.
    #[arg(long)]
    pub exact_only: bool,
    #[command(flatten)]
    pub model: ModelArgs,
}

impl Args {
    /// The command line in the settings' terms, for spec to resolve.
    fn flags(&self) -> DupsFlags {
        DupsFlags {
            input: InputFlags { pipeline: self.pipeline.clone(), ..self.bare.of(&self.input) },
            train: self.train.as_ref().map(|t| InputFlags {
                input: t.clone(),
                pipeline: self.train_pipeline.clone(),
                ..Default::default()
            }),
            threshold: self.threshold,
            image_threshold: self.image_threshold,
        }
    }
}

pub fn run(args: &Args) -> Result<()> {
    let DupsSettings { input, train, threshold, image_threshold } = dups_settings(&args.flags())?;
    let mut inputs = super::outputs::inputs_of(input.pipeline.as_ref(), &input.ingest);
    if let Some(t) = &train {
        inputs.extend(super::outputs::inputs_of(t.pipeline.as_ref(), &t.ingest));
    }
    super::outputs::check(&inputs, &[super::outputs::Output::folder("--out", &args.output)])?;
    let listed = args.hashes.as_deref().map(crate::embed::image_dups::HashList::read).transpose()?;
    let model = if args.exact_only { None } else { Some(args.model.load()?) };
    let report = crate::pipeline::steps::dups(&crate::pipeline::steps::DupsInputs {
        test: &input.ingest,
        train: train.as_ref().map(|t| &t.ingest),
        listed: listed.as_ref(),
        model: model.as_ref().map(|m| m as &dyn crate::embed::Embedder),
        embed: &args.model.settings(),
        threshold,
        image_threshold,
    })?;
    let summary = report.summary();
    let mut line = format!(
        "{} questions: {} exact-duplicate clusters ({} questions)",
        report.n_samples, summary.exact.clusters, summary.exact.samples_in_clusters
    );
    if let (Some(t), Some(near)) = (report.threshold, &summary.near) {
        line.push_str(&format!(", {} near-duplicate pairs at cosine >= {t} in {} clusters", near.pairs, near.clusters));
    }
    if let Some(n) = report.n_train {
        line.push_str(&format!(
            "; against {n} training questions: {} with an exact copy",
            summary.train.as_ref().map_or(0, |t| t.samples_with_exact_copy)
        ));
        if let Some(n) = summary.train.as_ref().and_then(|t| t.samples_with_near_copy) {
            line.push_str(&format!(", {n} with a near copy"));
        }
    }
    if let Some(images) = &report.images {
        line.push_str(&format!(
            "; {} images ({} hashed): {} near-duplicate clusters at phash distance <= {}",
            images.images,
            images.hashed,
            images.clusters.len(),
            images.threshold
        ));
        if let Some((n, m)) = &images.train {
            line.push_str(&format!(", {} pairs with the {n} training images", m.len()));
        }
        if let Some((_, n, m)) = &images.listed {
            line.push_str(&format!(", {} pairs with the {n} listed hashes", m.len()));
        }
    }
    if let Some(videos) = &report.videos {
        line.push_str(&format!("; {}", videos.summary()));
    }
    crate::io::fs::atomic_dir(&args.output, |tmp| report.write(tmp))?;
    super::say(&format!("{line} -> {}", display_path(&args.output)));
    Ok(())
}
