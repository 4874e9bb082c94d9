//! Pipeline files: `pipelines/<name>.toml` → [`Pipeline`].
//!
//! Two layers (`docs/conventions.md`, "Settings have two forms"): [`wire`]
//! is what a user writes, checked structurally against its own generated JSON
//! Schema by [`check`] so every problem is reported at once; [`plan`] holds
//! the validated domain types.

// The crates below this one, under the module names the code uses.
use blindspot_core::{context, error, sample, stats};
use blindspot_diagnose as diagnose;
use blindspot_embed as embed;
use blindspot_filter as filter;
use blindspot_ingest as ingest;
use blindspot_metrics as metrics;
use blindspot_ml as ml;
use blindspot_predictions as predictions;
use blindspot_prune as prune;
use blindspot_variants as variants;

pub mod bounds;
pub mod check;
pub mod datasheet;
pub mod flags;
pub mod init;
pub mod overlap;
pub mod plan;
pub mod wire;

pub use crate::error::OnInvalid;
pub use flags::{DatasetFlags, Flags};
pub use plan::AnswerKind;
pub use plan::{
    Accessor, Dataset, FieldMap, Filter, Format, IngestPlan, Input, MetaKeep, MetricsPlan, Pipeline, PrunePlan,
    TemplatePart,
};
pub use wire::PipelineWire;
