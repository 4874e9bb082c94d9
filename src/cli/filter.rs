//! `blindspot filter --samples F... | --release DIR --predictions [MODEL=]FILE... (--preset P | --conditions C...) -o DIR`:
//! the questions models answer without the image, by a published preset or a
//! rule of your own. Writes `filter.json` and `kept_ids.txt` into DIR, atomically.

use super::metrics::Inputs;
use crate::error::{Result, display_path};
use crate::spec::plan::{FilterFlags, filter_settings};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub inputs: Inputs,
    /// A published filter: mmstar, mmmu-pro, emma or bclean (fixes conditions and thresholds).
    #[arg(long, conflicts_with_all = ["conditions", "min_models", "min_correct"])]
    pub preset: Option<String>,
    /// Conditions whose predictions count: no_image, caption, mirage, guess, white_image, noise_image, original.
    #[arg(long, value_delimiter = ',', required_unless_present = "preset")]
    pub conditions: Vec<String>,
    /// Models whose predictions count (default: every model with predictions under the conditions).
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// A question is removed when at least this many models answer it: a number or `all`.
    #[arg(long, default_value = "1")]
    pub min_models: String,
    /// A model answers a question when right in at least this many of its samples: a number, any, majority, all.
    #[arg(long, default_value = "majority")]
    pub min_correct: String,
    /// Folder for filter.json and kept_ids.txt.
    #[arg(short = 'o', long = "out", visible_alias = "output")]
    pub out: std::path::PathBuf,
}

impl Args {
    /// The flags in the settings' terms, for spec to resolve.
    fn flags(&self) -> FilterFlags {
        FilterFlags {
            preset: self.preset.clone(),
            conditions: self.conditions.clone(),
            models: self.models.clone(),
            min_models: self.min_models.clone(),
            min_correct: self.min_correct.clone(),
            numeric: self.inputs.numeric.clone(),
            mra: self.inputs.mra.clone(),
        }
    }
}

pub fn run(args: &Args) -> Result<()> {
    let settings = filter_settings(&args.flags())?;
    let (rows, imported) = args.inputs.load(&args.out)?;
    let filtered = crate::pipeline::steps::filter(rows, &imported, &settings)?;
    filtered.write(&args.out)?;
    let report = &filtered.report;
    for m in &report.models {
        super::say(&format!(
            "{}: {} questions predicted ({}-{} samples each), {} answered by the rule",
            m.model, m.questions_predicted, m.samples_min, m.samples_max, m.answered
        ));
    }
    super::say(&report.summary());
    if let Some(w) = report.unknown_warning() {
        eprintln!("{w}");
    }
    if report.unpredicted > 0 {
        super::say(&format!(
            "{} question(s) had no prediction under {} and were kept",
            report.unpredicted,
            report.rule.conditions.join(" or ")
        ));
    }
    super::say(&format!("-> {}", display_path(&args.out.join("filter.json"))));
    Ok(())
}
