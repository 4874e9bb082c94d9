//! blindspot: find the questions of a vision-language benchmark that a model
//! can answer without the image, remove them, and publish a versioned,
//! documented, debiased release that anyone can rebuild byte for byte.
//!
//! ```text
//! pipelines/<name>.toml ──validate──▶ plan                         (spec)
//!   ingest ─▶ samples ─┬─▶ variants (null · phantom · trap)        (ingest, core)
//!                      ├─▶ features ─▶ diagnose (k-fold TsT-RF) ─▶ scores     (ml, diagnose)
//!                      │                                   └──── prune (IBP)
//!   predictions ───────┴─▶ metrics · B-Clean
//!                                   ▼
//!              release (versioned, HF layout, card, manifest)   (release)
//! ```
//! Every stage is a pure function of its inputs' content, its config, the
//! seed and the tool version. Each stage is a crate in `crates/`, using only
//! the crates before it; this crate is the command line, and re-exports them
//! under their module names.

pub mod cli;
pub mod synth;

pub use blindspot_core::{Error, Problem, Result, context, error, io, memory, par, progress, sample, seed, stats};
pub use blindspot_diagnose as diagnose;
pub use blindspot_embed as embed;
pub use blindspot_export as export;
pub use blindspot_filter as filter;
pub use blindspot_ingest as ingest;
pub use blindspot_metrics as metrics;
pub use blindspot_ml as ml;
pub use blindspot_outputs as outputs;
pub use blindspot_pipeline as pipeline;
pub use blindspot_plots as plots;
pub use blindspot_predictions as predictions;
pub use blindspot_prune as prune;
pub use blindspot_release as release;
pub use blindspot_spec as spec;
pub use blindspot_tables as tables;
pub use blindspot_variants as variants;
