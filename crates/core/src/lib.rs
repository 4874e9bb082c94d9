//! blindspot's foundation, used by every stage: errors that name the file,
//! row and field; the canonical sample; file, hash and Parquet I/O; the seed
//! every random choice derives from; statistics; progress; the run context.

pub mod context;
pub mod error;
pub mod io;
pub mod memory;
pub mod par;
pub mod progress;
pub mod sample;
pub mod seed;
pub mod stats;

pub use error::{Error, Problem, Result};
