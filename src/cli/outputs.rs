//! The check that no output lands on an input, or on another output, is a
//! check of a command's settings and lives in `blindspot-spec`
//! ([`crate::spec::overlap`]); the subcommands name it here.

pub use crate::spec::overlap::*;
