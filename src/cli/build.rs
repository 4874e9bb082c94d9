//! `blindspot build [PIPELINE...]`: validate every pipeline first, then run
//! each (ingest → validation → release) and print a summary per release.

use std::path::PathBuf;

use crate::error::{Error, Result, display_path};
use crate::ingest::{Ingested, ingest};
use crate::release::{Written, write_release};
use crate::spec::Pipeline;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Pipeline files (default: pipelines/*.toml).
    pub pipelines: Vec<PathBuf>,
    /// Folder that receives releases/<name>/<version>/.
    #[arg(long, default_value = "releases")]
    pub out_dir: PathBuf,
}

pub fn run(args: &Args) -> Result<()> {
    // Validate all before touching any data.
    let mut pipelines = Vec::new();
    let mut problems = Vec::new();
    for file in super::pipeline_files(&args.pipelines)? {
        match Pipeline::load(&file) {
            Ok(p) => pipelines.push(p),
            Err(Error::Invalid(ps)) => problems.extend(ps),
            Err(e) => return Err(e),
        }
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(problems));
    }
    pipelines.iter().for_each(super::warn_unanswered);
    for p in &pipelines {
        let ingested = ingest(&p.ingest)?;
        let diagnosis = p.run_diagnose.then(|| crate::diagnose::diagnose(&ingested.samples, &p.diagnose));
        let stages = crate::release::Stages { ingested: &ingested, diagnosis: diagnosis.as_ref() };
        let outcome = write_release(p, &stages, &args.out_dir)?;
        super::say(&summary(p, &ingested, diagnosis.as_ref(), &outcome.dir, &outcome.written));
    }
    Ok(())
}

fn summary(
    p: &Pipeline,
    ing: &Ingested,
    diagnosis: Option<&crate::diagnose::Diagnosis>,
    dir: &std::path::Path,
    written: &Written,
) -> String {
    let s = &ing.stats;
    let formats: Vec<String> = ing.format_counts().iter().map(|(f, n)| format!("{} {n}", f.as_str())).collect();
    let state = match written {
        Written::Created => "written",
        Written::UpToDate => "up to date",
    };
    let mut out = format!(
        "{} {}: {} samples ({} records read, {} filtered out, {} rejected) -> {} [{state}]\n  formats: {}",
        p.dataset.name,
        p.dataset.version,
        s.kept,
        s.records,
        s.filtered,
        s.rejected,
        display_path(dir),
        formats.join(", ")
    );
    if let Some(d) = diagnosis {
        out.push_str(&format!(
            "\n  blind accuracy (TsT-RF): {:.1}% (95% CI {:.1}-{:.1}), chance {:.1}%",
            d.weighted * 100.0,
            d.ci95.0 * 100.0,
            d.ci95.1 * 100.0,
            d.chance * 100.0
        ));
    }
    if s.rejected > 0 {
        out.push_str(&format!("\n  rejected rows and reasons: {}/report/rejected.jsonl", display_path(dir)));
    }
    out
}
