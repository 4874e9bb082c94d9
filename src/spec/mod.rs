//! Pipeline files: `pipelines/<name>.toml` → [`Pipeline`].
//!
//! Two layers (`docs/conventions.md`, "Settings have two forms"): [`wire`]
//! is what a user writes, checked structurally against its own generated JSON
//! Schema by [`check`] so every problem is reported at once; [`plan`] holds
//! the validated domain types.

pub mod bounds;
pub mod check;
pub mod datasheet;
pub mod plan;
pub mod wire;

pub use crate::error::OnInvalid;
pub use plan::AnswerKind;
pub use plan::{
    Accessor, Dataset, FieldMap, Filter, Format, IngestPlan, Input, MetaKeep, MetricsPlan, Pipeline, PrunePlan,
    TemplatePart,
};
pub use wire::PipelineWire;
