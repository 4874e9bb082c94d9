//! `blindspot filter --samples F... | --release DIR --predictions [MODEL=]FILE... (--preset P | --conditions C...) -o DIR`:
//! the questions models answer without the image, by a published preset or a
//! rule of your own. Writes `filter.json` and `kept_ids.txt` into DIR, atomically.

use std::fmt::Write as _;

use crate::error::{Location, Result, display_path};
use crate::metrics::MetricsConfig;
use crate::prune::filter::{MinCorrect, MinModels, Preset, Rule, apply};

use super::metrics::{Inputs, flag};

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

pub fn run(args: &Args) -> Result<()> {
    crate::predictions::check_models(&args.models, "--models").map_err(flag)?;
    let models = (!args.models.is_empty()).then(|| args.models.clone());
    let rule = match &args.preset {
        Some(p) => Preset::parse(p).map_err(flag)?.rule(models),
        None => {
            Rule::check_conditions(&args.conditions).map_err(flag)?;
            let min_correct = MinCorrect::parse(&args.min_correct).map_err(flag)?;
            if let MinCorrect::Count(m) = min_correct
                && let Some(v) = crate::spec::bounds::check_count(&crate::spec::bounds::MIN_CORRECT, m)
            {
                return Err(flag(v.for_flag()));
            }
            Rule {
                preset: None,
                models,
                conditions: args.conditions.clone(),
                min_models: MinModels::parse(&args.min_models).map_err(flag)?,
                min_correct,
            }
        }
    };
    let (numeric, mra) = args.inputs.scoring()?;
    let cfg = MetricsConfig { numeric, mra, ..MetricsConfig::default() };
    let (rows, imported) = args.inputs.load(&args.out)?;
    let questions: Vec<_> = rows.into_iter().filter(|r| r.variant.is_none()).collect();
    let report = apply(&questions, &imported.predictions, &rule, &cfg, &Location::file("command line"))?;
    let gone = report.removed_ids();
    let mut kept = String::new();
    for s in questions.iter().filter(|s| !gone.contains(s.id.as_str())) {
        let _ = writeln!(kept, "{}", s.id);
    }
    crate::io::fs::atomic_dir(&args.out, |tmp| {
        crate::io::fs::write_json(&tmp.join("filter.json"), &report)?;
        crate::io::fs::write_bytes(&tmp.join("kept_ids.txt"), kept.as_bytes())
    })?;
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
