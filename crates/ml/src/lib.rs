#![doc = include_str!("../README.md")]

// The crate below this one, under the module names the code uses.
use blindspot_core::{par, sample, seed};

pub mod features;
pub mod forest;
pub mod linear;
pub mod pca;
pub mod recipes;
