//! Command line: one file per subcommand. Each parses nothing itself — clap
//! does — and calls the library.

pub mod build;
pub mod diagnose;
pub mod diff;
pub mod dups;
pub mod embed;
pub mod export;
pub mod filter;
pub mod ingest;
pub mod init;
pub mod input;
pub mod metrics;
pub mod outputs;
pub mod prune;
pub mod schema;
pub mod synth;
pub mod validate;
pub mod variants;
pub mod verify;

use clap::{Parser, Subcommand};

use crate::error::Result;

#[derive(Debug, Parser)]
#[command(
    name = "blindspot",
    version,
    about = "Find the questions of a vision-language benchmark that can be answered without the image, and publish a reproducible debiased release."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// A first pipeline file for your benchmark: the field mapping proposed from its
    /// first records, every section, the datasheet questions; prints the next command.
    Init(init::Args),
    /// Build releases from pipeline files (default: every pipelines/*.toml).
    Build(build::Args),
    /// Parse and check pipeline files without touching data.
    Validate(validate::Args),
    /// Ingest one benchmark (a data file with canonical fields, or a pipeline file) into canonical Parquet.
    Ingest(ingest::Args),
    /// TsT-RF: how much of a benchmark a blind model answers, and a bias score per question.
    Diagnose(diagnose::Args),
    /// Remove the questions a blind model answers: Iterative Bias Pruning, AFLite, or a matched random control.
    Prune(Box<prune::Args>),
    /// Exact and near-duplicate questions, within a benchmark and against a training split.
    Dups(dups::Args),
    /// Sentence embeddings (question, each option, question+options) into one Parquet file.
    Embed(embed::Args),
    /// Stress-test variants (null, phantom, trap families): one Parquet per kind.
    Variants(variants::Args),
    /// Variant Parquet files -> a folder lmms-eval or VLMEvalKit runs unmodified.
    Export(export::Args),
    /// Models' predictions -> accuracy per condition with bootstrap CIs, the papers' metrics, B-Clean.
    Metrics(metrics::Args),
    /// Models' predictions -> the questions they answer without the image (MMStar, MMMU-Pro, EMMA, B-Clean or your rule).
    Filter(filter::Args),
    /// Re-hash a release against its manifest.json; name every missing, extra or changed file.
    Verify(verify::Args),
    /// Compare two releases: ids added and removed per config, changed rows and columns, headline statistics.
    Diff(diff::Args),
    /// A synthetic chest-X-ray-style benchmark with planted shortcuts, its ground truth and a pipeline file.
    Synth(synth::Args),
    /// Write the JSON Schemas generated from blindspot's types.
    #[command(hide = true)]
    Schema(schema::Args),
}

impl Cli {
    pub fn run(self) -> Result<()> {
        match self.command {
            Command::Init(a) => init::run(&a),
            Command::Build(a) => build::run(&a),
            Command::Validate(a) => validate::run(&a),
            Command::Ingest(a) => ingest::run(&a),
            Command::Diagnose(a) => diagnose::run(&a),
            Command::Prune(a) => prune::run(&a),
            Command::Dups(a) => dups::run(&a),
            Command::Embed(a) => embed::run(&a),
            Command::Variants(a) => variants::run(&a),
            Command::Export(a) => export::run(&a),
            Command::Metrics(a) => metrics::run(&a),
            Command::Filter(a) => filter::run(&a),
            Command::Verify(a) => verify::run(&a),
            Command::Diff(a) => diff::run(&a),
            Command::Synth(a) => synth::run(&a),
            Command::Schema(a) => schema::run(&a),
        }
    }
}

pub use crate::spec::plan::pipeline_files;

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub fn say(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}
