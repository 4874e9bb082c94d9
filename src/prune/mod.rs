//! Prune: remove the questions a model answers without looking.
//! [`bclean`]: B-Clean from models' mirage-mode predictions.

pub mod bclean;
