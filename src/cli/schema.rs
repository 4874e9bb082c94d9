//! `blindspot schema --out schemas/`: writes the JSON Schemas generated from
//! the Rust types (the canonical sample, the pipeline file and the report
//! files). A test fails when the committed files are stale.

use std::path::PathBuf;

use crate::error::{Error, Result};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder to write the `*.schema.json` files into.
    #[arg(short = 'o', long = "out", visible_alias = "output", default_value = "schemas")]
    pub out: PathBuf,
}

/// (file name, pretty JSON) of every generated schema.
pub fn generated() -> Vec<(&'static str, String)> {
    let render = |s: schemars::Schema| {
        let mut t = serde_json::to_string_pretty(&s).unwrap_or_default();
        t.push('\n');
        t
    };
    vec![
        ("sample.schema.json", render(schemars::schema_for!(crate::sample::Sample))),
        ("pipeline.schema.json", render(schemars::schema_for!(crate::spec::PipelineWire))),
        ("diagnose.schema.json", render(schemars::schema_for!(crate::diagnose::report::DiagnoseReport))),
        ("prune.schema.json", render(schemars::schema_for!(crate::prune::report::PruneReport))),
        ("metrics.schema.json", render(schemars::schema_for!(crate::metrics::MetricsFile))),
        ("bclean.schema.json", render(schemars::schema_for!(crate::prune::bclean::BCleanFile))),
        ("filter.schema.json", render(schemars::schema_for!(crate::filter::FilterReport))),
        ("duplicates.schema.json", render(schemars::schema_for!(crate::embed::dups::DupsFile))),
        ("fold-row.schema.json", render(schemars::schema_for!(crate::diagnose::outside::FoldRow<'static>))),
        ("outside-scores.schema.json", render(schemars::schema_for!(crate::diagnose::outside::ScoreLine))),
    ]
}

pub fn run(args: &Args) -> Result<()> {
    std::fs::create_dir_all(&args.out).map_err(|e| Error::io(&args.out, e))?;
    for (name, text) in generated() {
        let path = args.out.join(name);
        crate::io::fs::atomic_write(&path, |tmp| crate::io::fs::write_bytes(tmp, text.as_bytes()))?;
        super::say(&format!("wrote {}", crate::error::display_path(&path)));
    }
    Ok(())
}
