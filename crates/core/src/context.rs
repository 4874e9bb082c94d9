//! The run context, captured once per run and handed to every stage that
//! needs it: the seed every random choice derives from, the tool's version
//! and a fingerprint of the code that computes the stages (for cache keys).

/// The seed of a pipeline that names none (`[dataset] seed`), and of every
/// stage config's default.
pub const DEFAULT_SEED: u64 = 42;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunContext {
    /// Every random choice derives from (seed, stage, id).
    pub seed: u64,
    /// `CARGO_PKG_VERSION`, written into manifests.
    pub tool_version: &'static str,
    /// A fingerprint of the code that computes the stages, keying the stage
    /// cache (the pipeline crate's `CODE_FINGERPRINT`; empty where nothing is cached).
    pub code: &'static str,
}

impl RunContext {
    pub fn new(seed: u64) -> RunContext {
        RunContext { seed, tool_version: env!("CARGO_PKG_VERSION"), code: "" }
    }
}

impl Default for RunContext {
    fn default() -> RunContext {
        RunContext::new(DEFAULT_SEED)
    }
}
