//! `blindspot diagnose INPUT [--pipeline F] --out DIR`: TsT-RF on one
//! benchmark, by hand, before (or without) writing a pipeline.

use std::path::PathBuf;

use super::outputs::{self, Output};
use crate::diagnose::report;
use crate::error::{Location, Result, display_path};
use crate::pipeline::steps;
use crate::spec::plan::{DiagnoseSettings, InputFlags, diagnose_settings};
use crate::spec::wire::{DiagnoseWire, PruneWire};
use crate::spec::{DatasetFlags, Flags};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// Folder for scores.parquet, diagnose.json and the plots.
    #[arg(short = 'o', long = "out", visible_alias = "output")]
    pub out: PathBuf,
    #[command(flatten)]
    pub tst: TstArgs,
    /// Check that no feature reads held-out answers; exit 1 naming any that does.
    #[arg(long)]
    pub check_leakage: bool,
    /// Also write each fold's feature matrices as Parquet into this folder (multiple
    /// choice also one row per option, as the position-free forest sees them:
    /// `*_options.parquet`).
    #[arg(long)]
    pub export_features: Option<PathBuf>,
    /// Also write the fold assignment and each fold's training and held-out
    /// questions (JSON lines, with their prompts) for an outside scorer.
    #[arg(long)]
    pub export_folds: Option<PathBuf>,
    /// Print the wall time, CPU time and peak RSS of ingest, the diagnosis and the
    /// null on stderr.
    #[arg(long)]
    pub timings: bool,
}

/// The benchmark a command reads, and how.
#[derive(Debug, clap::Args)]
pub struct InputArgs {
    /// A benchmark file with canonical fields, or a pipeline file (.toml).
    pub input: PathBuf,
    /// A pipeline whose field mapping and stage settings apply to INPUT.
    #[arg(long)]
    pub pipeline: Option<PathBuf>,
    #[command(flatten)]
    pub bare: super::input::BareArgs,
}

/// TsT-RF settings that override the pipeline's: each flag is a key of the
/// pipeline file (`--folds` is `[diagnose] folds`, `--seed` is `[dataset] seed`),
/// validated with the file.
#[derive(Debug, clap::Args)]
pub struct TstArgs {
    #[command(flatten)]
    pub dataset: DatasetFlags,
    #[command(flatten)]
    pub diagnose: DiagnoseWire,
}

impl TstArgs {
    /// The flags, section by section, with `prune`'s when the command prunes.
    pub fn flags(&self, prune: Option<&PruneWire>) -> Flags {
        Flags { dataset: self.dataset.clone(), diagnose: self.diagnose.clone(), prune: prune.cloned() }
    }
}

impl InputArgs {
    /// INPUT as the settings take it.
    pub fn flags(&self) -> InputFlags {
        InputFlags { pipeline: self.pipeline.clone(), ..self.bare.of(&self.input) }
    }
}

pub fn run(args: &Args) -> Result<()> {
    if args.timings {
        crate::progress::enable_timings();
    }
    let settings = diagnose_settings(&args.input.flags(), &args.tst.flags(None))?;
    let DiagnoseSettings { input, config: cfg, .. } = &settings;
    let mut written = vec![Output::folder("--out", &args.out)];
    written.extend(args.export_features.iter().map(|d| Output::folder("--export-features", d)));
    written.extend(args.export_folds.iter().map(|d| Output::folder("--export-folds", d)));
    let mut inputs = outputs::inputs_of(input.pipeline.as_ref(), &input.ingest);
    inputs.extend(cfg.outside_source.iter().map(|o| outputs::Input::File(o.path.clone())));
    outputs::check(&inputs, &written)?;
    let leak_at = args.check_leakage.then(|| Location::file(&args.input.input));
    let outs = steps::DiagnoseOutputs {
        out: &args.out,
        check_leakage: leak_at.as_ref(),
        export_features: args.export_features.as_deref(),
        export_folds: args.export_folds.as_deref(),
    };
    let steps::DiagnosedByHand { diagnosis: d, config: cfg, warnings, folds } =
        steps::diagnose_by_hand(&settings, &outs)?;
    if args.check_leakage {
        super::say(
            "leak check: no feature column and no held-out prediction changed when the held-out answers changed (every group, repeat and fold)",
        );
    }
    for w in &warnings {
        eprintln!("warning: diagnose: {w}");
    }
    if let (Some(f), Some(dir)) = (&folds, &args.export_folds) {
        super::say(&format!(
            "folds: {} questions in {} folds (assignment {}) -> {}",
            f.questions,
            f.folds,
            &f.hash[..12],
            display_path(dir)
        ));
    }
    super::say(&format!(
        "{} questions: blind accuracy {:.2}% (95% CI {:.2}-{:.2}), macro {:.2}%, chance {:.2}%, majority {:.2}% -> {}",
        d.n_samples,
        d.weighted * 100.0,
        d.ci95.0 * 100.0,
        d.ci95.1 * 100.0,
        d.macro_by_type * 100.0,
        d.chance * 100.0,
        d.majority * 100.0,
        display_path(&args.out)
    ));
    let formats = report::DiagnoseReport::of(&d, &cfg, None).by_format;
    if formats.len() > 1 {
        let parts: Vec<String> = formats
            .iter()
            .map(|f| {
                format!("{} {:.2}% (n {}, chance {:.2}%)", f.format, f.blind_accuracy * 100.0, f.n, f.chance * 100.0)
            })
            .collect();
        super::say(&format!("  blind accuracy mixes: {} (numeric scored {})", parts.join(", "), cfg.numeric.name()));
    }
    for g in &d.groups {
        let null =
            d.null.as_ref().and_then(|n| n.group(g.question_type.as_deref(), g.format)).map_or_else(String::new, |n| {
                format!(
                    ", null {:.2}%{} ({}{})",
                    n.test.mean * 100.0,
                    n.test.q95.map_or(String::new(), |q| format!(", 95th pct {:.2}%", q * 100.0)),
                    n.test.p_text(),
                    if n.test.tested < n.n { format!(", on a sample of {}", n.test.tested) } else { String::new() }
                )
            });
        super::say(&format!(
            "  {} / {}: n {}, blind {:.2}%, chance {:.2}%, majority {:.2}%{null}",
            g.question_type.as_deref().unwrap_or("(no type)"),
            g.format.as_str(),
            g.n,
            g.blind_accuracy * 100.0,
            g.chance * 100.0,
            g.majority * 100.0
        ));
    }
    super::say(&format!("verdict: {}", crate::diagnose::verdict::Verdict::of(&d).sentence));
    if let Some(o) = &d.outside {
        let r = report::OutsideReport::of(&d, o);
        super::say(&format!(
            "outside scores {} (sha256 {}): s(x) = {} with TsT-RF's; TsT-RF's blind accuracy alone {:.2}%, mean s(x) \
             {:.4} alone, {:.4} combined",
            r.file,
            &r.sha256[..12],
            r.combine,
            r.forest_blind_accuracy * 100.0,
            r.forest_mean_s,
            r.combined_mean_s
        ));
        super::say(&format!("  {}", r.verdict_text));
        if let Some(w) = &r.warning {
            eprintln!("warning: diagnose: {w}");
        }
    }
    Ok(())
}
