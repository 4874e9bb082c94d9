//! `blindspot diagnose INPUT [--pipeline F] --out DIR`: TsT-RF on one
//! benchmark, by hand, before (or without) writing a pipeline.

use std::path::PathBuf;

use super::outputs::{self, Output};
use crate::diagnose::{DiagnoseConfig, GroupBy, check_leakage, diagnose, report};
use crate::error::{Error, Location, Problem, Result, display_path};
use crate::ingest::ingest;
use crate::sample::MraRule;
use crate::spec::{IngestPlan, Pipeline};

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
    /// Also write each fold's feature matrices as Parquet into this folder.
    #[arg(long)]
    pub export_features: Option<PathBuf>,
    /// Also write the fold assignment and each fold's training and held-out
    /// questions (JSON lines, with their prompts) for an outside scorer.
    #[arg(long)]
    pub export_folds: Option<PathBuf>,
}

/// The benchmark a command reads, and how.
#[derive(Debug, clap::Args)]
pub struct InputArgs {
    /// A benchmark file with canonical fields, or a pipeline file (.toml).
    pub input: PathBuf,
    /// A pipeline whose field mapping and stage settings apply to INPUT.
    #[arg(long)]
    pub pipeline: Option<PathBuf>,
}

/// TsT-RF settings that override the pipeline's `[diagnose]`.
#[derive(Debug, clap::Args)]
pub struct TstArgs {
    /// Cross-validation folds (default 5, or the pipeline's).
    #[arg(long)]
    pub folds: Option<usize>,
    /// Repeats with seeds seed, seed+1, ... (default 1).
    #[arg(long)]
    pub repeats: Option<usize>,
    /// Seed of folds and forests (default 42).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Trees per classification forest (default 100).
    #[arg(long)]
    pub trees: Option<usize>,
    /// Keep questions of one group in one fold: `image`, `image-cluster[:BITS]` (near-duplicate
    /// images), `question` or `meta:FIELD`.
    #[arg(long)]
    pub group_by: Option<String>,
    /// Scoring of numeric questions: `exact` (default, or the pipeline's [dataset]
    /// numeric), `mra` or `tolerance:<rel>`.
    #[arg(long)]
    pub numeric: Option<String>,
    /// MRA comparison for numeric answers: `strict` (<) or `inclusive` (<=).
    #[arg(long)]
    pub mra: Option<String>,
    /// Blocks in which training rows' answer statistics are cross-fitted (default 5;
    /// 0: in-sample statistics, as the TsT release).
    #[arg(long)]
    pub cross_fit: Option<usize>,
    /// Meta fields used as categorical features, comma-separated (default: none, or the
    /// pipeline's [diagnose] meta-features). Every meta field is audited either way.
    #[arg(long, value_delimiter = ',')]
    pub meta_features: Option<Vec<String>>,
    /// Most label permutations of the null (default 199; 19 to 9999).
    #[arg(long)]
    pub permutations: Option<usize>,
    /// `decided` (default: stop once p is decided at 0.05) or `all`.
    #[arg(long)]
    pub permutation_stop: Option<String>,
    /// Outside scores to combine into s(x): JSON lines of the held-out probability
    /// of the gold per question, made on the folds `--export-folds` writes.
    #[arg(long)]
    pub scores: Option<PathBuf>,
    /// How outside scores combine with TsT-RF's s(x): `max` (default) or `mean`.
    #[arg(long)]
    pub combine: Option<String>,
}

/// A command-line mistake, located at "command line".
pub fn flag_error(msg: String) -> Error {
    Error::one(Problem::new(Location::file("command line"), msg))
}

/// Where the meta fields a run names were written: the command line when a flag
/// names one, else the pipeline file.
pub fn settings_at(pipeline: Option<&Pipeline>, args: &TstArgs) -> Location {
    match pipeline {
        Some(p) if args.group_by.is_none() && args.meta_features.is_none() => Location::file(&p.path),
        _ => Location::file("command line"),
    }
}

/// Loads the pipeline (if any) and the ingest plan for INPUT.
pub fn resolve_input(args: &InputArgs) -> Result<(Option<Pipeline>, IngestPlan)> {
    let is_toml = |p: &PathBuf| p.extension().and_then(|e| e.to_str()) == Some("toml");
    let pipeline = match (&args.pipeline, is_toml(&args.input)) {
        (Some(p), _) => Some(Pipeline::load(p)?),
        (None, true) => Some(Pipeline::load(&args.input)?),
        (None, false) => None,
    };
    let plan = match &pipeline {
        Some(p) if !is_toml(&args.input) => {
            let mut plan = p.ingest.clone();
            let format = crate::spec::Format::infer(&args.input).unwrap_or(crate::spec::Format::Json);
            plan.inputs = vec![crate::spec::Input { path: args.input.clone(), format }];
            plan
        }
        Some(p) => p.ingest.clone(),
        None => {
            if !args.input.exists() {
                return Err(Error::io(&args.input, std::io::Error::new(std::io::ErrorKind::NotFound, "no such file")));
            }
            IngestPlan::for_canonical_input(&args.input)?
        }
    };
    Ok((pipeline, plan))
}

/// The pipeline's `[diagnose]` settings (or the defaults) with the flags applied.
pub fn tst_config(pipeline: Option<&Pipeline>, args: &TstArgs) -> Result<DiagnoseConfig> {
    let mut cfg = pipeline.map(|p| p.diagnose.clone()).unwrap_or_default();
    if let Some(k) = args.folds {
        cfg.folds = k;
        cfg.folds_given = Some(crate::diagnose::FoldsGiven::Flag);
    }
    if let Some(r) = args.repeats {
        cfg.repeats = r;
    }
    if let Some(s) = args.seed {
        cfg.seed = s;
    }
    if let Some(t) = args.trees {
        cfg.trees = t;
    }
    if let Some(g) = &args.group_by {
        cfg.group_by = Some(GroupBy::parse(g).map_err(flag_error)?);
    }
    if let Some(n) = &args.numeric {
        cfg.numeric = crate::sample::NumericScoring::parse(n).map_err(flag_error)?;
    }
    if let Some(m) = &args.mra {
        cfg.mra = MraRule::parse(m).map_err(flag_error)?;
    }
    if let Some(c) = args.cross_fit {
        cfg.features.cross_fit = c;
    }
    if let Some(m) = &args.meta_features {
        cfg.features.meta_fields = Some(m.clone());
    }
    if let Some(n) = args.permutations {
        cfg.null.max_permutations = n;
    }
    if let Some(r) = &args.permutation_stop {
        cfg.null.stopping = match r.as_str() {
            "decided" => crate::stats::Stopping::Decided,
            "all" => crate::stats::Stopping::All,
            _ => return Err(flag_error(format!("--permutation-stop \"{r}\" is not \"decided\" or \"all\""))),
        };
    }
    if let Some(path) = &args.scores {
        let combine = cfg.outside_source.as_ref().map(|o| o.combine).unwrap_or_default();
        cfg.outside_source = Some(crate::diagnose::outside::OutsideSource {
            path: path.clone(),
            written: path.display().to_string(),
            combine,
        });
    }
    if let Some(c) = &args.combine {
        let combine = crate::diagnose::Combine::parse(c)
            .map_err(|_| flag_error(format!("--combine \"{c}\" is not \"max\" or \"mean\"")))?;
        match &mut cfg.outside_source {
            Some(o) => o.combine = combine,
            None => {
                return Err(flag_error(
                    "--combine says how outside scores combine with TsT-RF's s(x), and no scores are given: add \
                     --scores FILE (or [diagnose] scores in the pipeline), or remove --combine"
                        .into(),
                ));
            }
        }
    }
    // The same bounds a pipeline's [diagnose] is checked against (its own values
    // passed when it was loaded: what fails here, a flag set).
    bounds_error(crate::spec::bounds::diagnose(&cfg))?;
    Ok(cfg)
}

/// Settings out of their bounds, as a command-line error naming each flag.
pub fn bounds_error(violations: Vec<crate::spec::bounds::Violation>) -> Result<()> {
    if violations.is_empty() {
        return Ok(());
    }
    Err(Error::Invalid(violations.iter().map(|v| Problem::new(Location::file("command line"), v.for_flag())).collect()))
}

pub fn run(args: &Args) -> Result<()> {
    let (pipeline, plan) = resolve_input(&args.input)?;
    let mut written = vec![Output::Folder(args.out.clone())];
    written.extend(args.export_features.iter().map(|d| Output::Folder(d.clone())));
    written.extend(args.export_folds.iter().map(|d| Output::Folder(d.clone())));
    let mut cfg = tst_config(pipeline.as_ref(), &args.tst)?;
    let mut inputs = outputs::inputs_of(pipeline.as_ref(), &plan);
    inputs.extend(cfg.outside_source.iter().map(|o| outputs::Input::File(o.path.clone())));
    outputs::check(&inputs, &written)?;
    // This command is TsT-RF; TsT-Embed (`[diagnose] method`) runs in `build` and `prune`.
    cfg.method = crate::diagnose::Method::TstRf;
    let ingested = ingest(&plan)?;
    cfg.check_folds(ingested.samples.len())?;
    cfg.check_meta_fields(&ingested.samples, &settings_at(pipeline.as_ref(), &args.tst))?;
    // Outside scores are checked against this run's folds before any forest is fit.
    cfg.load_outside(&ingested.samples)?;
    if args.check_leakage {
        let leaks = check_leakage(&ingested.samples, &cfg);
        if !leaks.is_empty() {
            let at = crate::error::Location::file(&args.input.input);
            return Err(Error::Invalid(
                leaks
                    .iter()
                    .map(|l| {
                        crate::error::Problem::new(at.clone(), format!("leak: {l} when only the held-out answers changed"))
                            .help("a feature reads the answer: drop the meta field or recipe it comes from (meta-features, recipes), or report a bug if it is a built-in feature")
                    })
                    .collect(),
            ));
        }
        super::say(
            "leak check: no feature column and no held-out prediction changed when the held-out answers changed (every group, repeat and fold)",
        );
    }
    let mut d = diagnose(&ingested.samples, &cfg);
    if let Some(o) = &cfg.outside {
        crate::diagnose::outside::apply(&mut d, o);
    }
    let refs: Vec<&crate::sample::Sample> = ingested.samples.iter().collect();
    d.null = Some(crate::diagnose::null::measure(&refs, &cfg, &d, &cfg.null));
    for w in crate::diagnose::audit::attach(&mut d, &ingested.samples, &cfg) {
        eprintln!("warning: diagnose: {w}");
    }
    crate::io::fs::atomic_dir(&args.out, |tmp| report::write_report(tmp, &d, &cfg, None, None))?;
    if let Some(dir) = &args.export_features {
        crate::io::fs::atomic_dir(dir, |tmp| report::export_features(tmp, &ingested.samples, &cfg).map(|_| ()))?;
    }
    if let Some(dir) = &args.export_folds {
        let a = crate::diagnose::outside::Assignment::of(&ingested.samples, &cfg);
        let mut k = 0;
        crate::io::fs::atomic_dir(dir, |tmp| {
            k = crate::diagnose::outside::write_folds(tmp, &a, &cfg, &crate::variants::render_prompt)?;
            Ok(())
        })?;
        super::say(&format!(
            "folds: {} questions in {k} folds (assignment {}) -> {}",
            a.rows.len(),
            &a.hash[..12],
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
    }
    Ok(())
}
