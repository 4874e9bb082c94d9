//! blindspot: find the questions of a vision-language benchmark that a model
//! can answer without the image, remove them, and publish a versioned,
//! documented, debiased release that anyone can rebuild byte for byte.
//!
//! ```text
//! pipelines/<name>.toml ──validate──▶ plan                         (spec)
//!   ingest ─▶ samples ─┬─▶ variants (null · phantom · trap)        (ingest, sample)
//!                      ├─▶ features ─▶ diagnose (k-fold TsT-RF) ─▶ scores
//!                      │                                   └──── prune (IBP)
//!   predictions ───────┴─▶ metrics · B-Clean
//!                                   ▼
//!              release (versioned, HF layout, card, manifest)   (release)
//! ```
//! Every stage is a pure function of its inputs' content, its config, the
//! seed and the tool version.

pub mod cli;
pub mod context;
pub mod diagnose;
pub mod embed;
pub mod error;
pub mod export;
pub mod ingest;
pub mod io;
pub mod metrics;
pub mod pipeline;
pub mod predictions;
pub mod progress;
pub mod prune;
pub mod release;
pub mod sample;
pub mod seed;
pub mod spec;
pub mod stats;
pub mod synth;
pub mod variants;

pub use error::{Error, Problem, Result};
