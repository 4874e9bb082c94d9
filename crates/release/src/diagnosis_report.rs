//! The diagnosis's report files: `scores.parquet` (a row per question and
//! repeat), `diagnose.json` ([`crate::diagnose::report::DiagnoseReport`]) and
//! its plots ([`figures`]). A release writes them under `report/`, `blindspot
//! diagnose` into its output folder.

pub mod figures;

use std::collections::BTreeSet;

use crate::diagnose::report::{DiagnoseReport, scores_batch};
use crate::diagnose::{DiagnoseConfig, Diagnosis, Method};
use crate::error::Result;
use crate::io::rendered::Rendered;

/// `d`'s report files, rendered with the settings it was measured with
/// (`cfg`: the departures, the outside scores). `embed`: TsT-Embed's own
/// diagnosis with `method = "both"`. `removed`: the questions pruning
/// removed, when it ran (a release); the s(x) histogram then marks them.
pub fn render(
    d: &Diagnosis,
    cfg: &DiagnoseConfig,
    embed: Option<&Diagnosis>,
    removed: Option<&BTreeSet<&str>>,
) -> Result<Vec<Rendered>> {
    let mut files = vec![
        Rendered::table("scores.parquet", scores_batch(d)?),
        Rendered::json("diagnose.json", &DiagnoseReport::of(d, cfg, embed))?,
    ];
    let model = match cfg.method {
        Method::TstEmbed => "TsT-Embed",
        // With both, the rows' predictions and accuracy are TsT-RF's.
        Method::TstRf | Method::Both => "TsT-RF",
    };
    files.extend(figures::render_all(d, model, removed)?);
    Ok(files)
}
