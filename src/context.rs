//! The run context, captured once per run and handed to every stage that
//! needs it: the seed every random choice derives from, the tool's version
//! and a fingerprint of the code that computes the stages (for cache keys).

/// The seed of a pipeline that names none (`[dataset] seed`), and of every
/// stage config's default.
pub const DEFAULT_SEED: u64 = 42;

/// sha256 of blindspot's own source files, computed when it was compiled:
/// any change to the code changes it, whatever the crate version says.
pub const CODE_FINGERPRINT: &str = env!("BLINDSPOT_CODE_FINGERPRINT");

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunContext {
    /// Every random choice derives from (seed, stage, id).
    pub seed: u64,
    /// `CARGO_PKG_VERSION`, written into manifests.
    pub tool_version: &'static str,
    /// [`CODE_FINGERPRINT`]: keys the stage cache.
    pub code: &'static str,
}

impl RunContext {
    pub fn new(seed: u64) -> RunContext {
        RunContext { seed, tool_version: env!("CARGO_PKG_VERSION"), code: CODE_FINGERPRINT }
    }
}

impl Default for RunContext {
    fn default() -> RunContext {
        RunContext::new(DEFAULT_SEED)
    }
}
