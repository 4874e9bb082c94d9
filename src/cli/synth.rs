//! `blindspot synth --questions N --seed S -o DIR`: a synthetic chest-X-ray-style
//! benchmark with planted shortcuts (`crate::synth`), for scale tests and for
//! checking that diagnose finds what was planted.

use std::path::PathBuf;

use crate::error::{Result, display_path};
use crate::synth::{SynthConfig, write};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Number of questions.
    #[arg(long, default_value_t = 10_000)]
    pub questions: usize,
    /// Seed: the same questions and seed give the same bytes.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Share of a shortcut skill's items that carry its shortcut.
    #[arg(long, default_value_t = 0.6)]
    pub rate: f64,
    /// Folder for questions.jsonl, truth.csv, synth.toml and synth.json (created if missing).
    #[arg(short = 'o', long = "out", visible_alias = "output")]
    pub output: PathBuf,
}

pub fn run(args: &Args) -> Result<()> {
    if !(0.0..=1.0).contains(&args.rate) {
        return Err(crate::error::Error::one(crate::error::Problem::new(
            crate::error::Location::file(&args.output),
            format!("--rate {} is not a share between 0 and 1", args.rate),
        )));
    }
    let cfg = SynthConfig { questions: args.questions, seed: args.seed, rate: args.rate };
    let s = write(&cfg, &args.output)?;
    let planted: Vec<String> = s
        .skills
        .iter()
        .filter(|c| c.shortcut != "none")
        .map(|c| format!("{} {}/{}", c.skill, c.planted, c.items))
        .collect();
    super::say(&format!(
        "{} questions -> {} (questions.jsonl, truth.csv, synth.toml, synth.json); planted: {}",
        s.questions,
        display_path(&args.output),
        planted.join(", ")
    ));
    Ok(())
}
