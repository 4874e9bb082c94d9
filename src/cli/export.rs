//! `blindspot export DIR --to lmms-eval|vlmevalkit -o OUT`: variant (or
//! release) Parquet files → a folder the harness runs unmodified, plus a
//! manifest mapping harness rows back to blindspot ids. OUT is written to a
//! temporary folder and swapped into place.

use std::path::PathBuf;

use crate::error::{Result, display_path};
use crate::pipeline::steps;
use crate::predictions::export_manifest::ExportManifest;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Harness {
    /// A task folder for `lmms_eval --include_path OUT`.
    #[value(name = "lmms-eval")]
    LmmsEval,
    /// `<Name>_<variant>.tsv` files for VLMEvalKit's data root.
    #[value(name = "vlmevalkit")]
    Vlmevalkit,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A folder written by `blindspot variants` (or a release folder).
    pub dir: PathBuf,
    /// The harness to export for.
    #[arg(long = "to", value_enum)]
    pub to: Harness,
    /// Output folder (replaced when it exists).
    #[arg(short = 'o', long = "out", visible_alias = "output")]
    pub output: PathBuf,
    /// Name used in file and task names (default: the rows' benchmark).
    #[arg(long)]
    pub name: Option<String>,
    /// lmms-eval: export rows whose images are not in the data text-only
    /// (default: a located error listing them).
    #[arg(long)]
    pub allow_missing_images: bool,
}

pub fn run(args: &Args) -> Result<()> {
    let mut configs = steps::export_configs(&args.dir)?;
    // A release is read whole (its manifest lists every file); so is a
    // variants folder (every Parquet file in it is a config).
    super::outputs::check(
        &[super::outputs::Input::Whole(args.dir.clone())],
        &[super::outputs::Output::folder("--out", &args.output)],
    )?;
    let to = match args.to {
        Harness::LmmsEval => steps::Harness::LmmsEval,
        Harness::Vlmevalkit => steps::Harness::Vlmevalkit,
    };
    let steps::Exported { manifest, .. } = steps::export(
        &mut configs,
        &args.dir,
        &args.output,
        to,
        args.name.as_deref(),
        args.allow_missing_images,
        |w| eprintln!("{w}"),
    )?;
    let exported = configs.iter().filter(|c| !c.rows.is_empty()).count();
    let empty: Vec<&str> = configs.iter().filter(|c| c.rows.is_empty()).map(|c| c.name.as_str()).collect();
    let rows: usize = configs.iter().map(|c| c.rows.len()).sum();
    let mut msg = format!(
        "{}: {exported} configs, {rows} rows for {}",
        display_path(&args.output),
        match args.to {
            Harness::Vlmevalkit => "VLMEvalKit",
            Harness::LmmsEval => "lmms-eval (--include_path)",
        }
    );
    if !empty.is_empty() {
        msg.push_str(&format!("; empty, not exported: {}", empty.join(", ")));
    }
    super::say(&msg);
    super::say(&how_to_run(&args.output, &manifest));
    Ok(())
}

/// The command that runs the export in its harness, from what it wrote: the
/// lmms-eval group (every task but a release's reference configs), or the
/// VLMEvalKit datasets (each TSV's stem, read from its data root).
fn how_to_run(out: &std::path::Path, manifest: &ExportManifest) -> String {
    let dir = crate::io::escape::shell::word(&display_path(out));
    match manifest {
        ExportManifest::LmmsEval { group, .. } => {
            format!("run: lmms_eval --model MODEL --model_args ... --include_path {dir} --tasks {group}")
        }
        ExportManifest::Vlmevalkit { files, .. } => {
            let datasets: Vec<&str> = files
                .iter()
                .filter(|f| !crate::io::release_dir::REFERENCE_CONFIGS.contains(&f.config.as_str()))
                .map(|f| f.file.strip_suffix(".tsv").unwrap_or(&f.file))
                .collect();
            format!(
                "run: copy {dir}/*.tsv into VLMEvalKit's data root ($LMUData), then: python run.py --model MODEL --data {}",
                datasets.join(" ")
            )
        }
    }
}
