//! `blindspot dups INPUT [--train FILE] [--hashes FILE] -o DIR`: exact and
//! near-duplicate questions within a benchmark and against a training split,
//! and near-duplicate images (perceptual hash) within it, against the training
//! split's images and against a published list of hashes, and near-duplicate
//! videos (sampled frames, decoded by ffmpeg when it is installed); writes
//! `dups.json` and `pairs.parquet`. `--exact-only` needs no model.

use std::path::PathBuf;

use super::embed::{ModelArgs, input_plan};
use crate::embed::dups::{self, DEFAULT_THRESHOLD, NearInput};
use crate::embed::{Embedder, embed_texts, question_with_options};
use crate::error::{Error, Location, Problem, Result, display_path};
use crate::sample::Sample;

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

fn texts(samples: &[Sample]) -> Vec<String> {
    samples.iter().map(question_with_options).collect()
}

pub fn run(args: &Args) -> Result<()> {
    if let Some(v) = crate::spec::bounds::check_share("leakage.threshold", args.threshold) {
        return Err(Error::one(
            Problem::new(Location::file("command line"), v.for_flag()).help("a cosine similarity threshold, e.g. 0.85"),
        ));
    }
    if args.image_threshold > crate::sample::image_hash::MAX_THRESHOLD {
        return Err(Error::one(
            Problem::new(
                Location::file("command line"),
                format!(
                    "--image-threshold {} is more than {} bits: unrelated images would join",
                    args.image_threshold,
                    crate::sample::image_hash::MAX_THRESHOLD
                ),
            )
            .help(format!(
                "give 0 to {} (default {})",
                crate::sample::image_hash::MAX_THRESHOLD,
                crate::sample::image_hash::DEFAULT_THRESHOLD
            )),
        ));
    }
    let (pipeline, plan) = input_plan(&args.input, args.pipeline.as_deref(), &args.bare)?;
    let mut inputs = super::outputs::inputs_of(pipeline.as_ref(), &plan);
    let train_plan = match &args.train {
        Some(p) => {
            let (train_pipeline, train_plan) =
                input_plan(p, args.train_pipeline.as_deref(), &super::input::BareArgs::default())?;
            inputs.extend(super::outputs::inputs_of(train_pipeline.as_ref(), &train_plan));
            Some(train_plan)
        }
        None => None,
    };
    super::outputs::check(&inputs, &[super::outputs::Output::folder("--out", &args.output)])?;
    let listed = args.hashes.as_deref().map(crate::embed::image_dups::HashList::read).transpose()?;
    let model = if args.exact_only { None } else { Some(args.model.load()?) };
    let test = crate::ingest::ingest(&plan)?.samples;
    let train = match &train_plan {
        Some(plan) => Some(crate::ingest::ingest(plan)?.samples),
        None => None,
    };
    let settings = args.model.settings();
    let (test_e, train_e) = match &model {
        Some(m) => {
            let t = texts(&test);
            let te = embed_texts(m, &t.iter().map(String::as_str).collect::<Vec<_>>(), &settings, "embed")?;
            let tr = match &train {
                Some(tr) => {
                    let t = texts(tr);
                    Some(embed_texts(m, &t.iter().map(String::as_str).collect::<Vec<_>>(), &settings, "embed train")?)
                }
                None => None,
            };
            (Some(te), tr)
        }
        None => (None, None),
    };
    let near = match (&model, &test_e) {
        (Some(m), Some(te)) => Some(NearInput {
            test: te,
            train: train_e.as_ref(),
            threshold: args.threshold,
            model: m.fingerprint().into(),
        }),
        _ => None,
    };
    let mut report = dups::find(&test, train.as_deref(), near)?;
    let images = crate::embed::image_dups::find(&test, train.as_deref(), listed.as_ref(), args.image_threshold);
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
    report.images = Some(images);
    if let Some(videos) = crate::pipeline::video_dups::find(&test) {
        line.push_str(&format!("; {}", videos.summary()));
        report.videos = Some(videos);
    }
    crate::io::fs::atomic_dir(&args.output, |tmp| report.write(tmp))?;
    super::say(&format!("{line} -> {}", display_path(&args.output)));
    Ok(())
}
