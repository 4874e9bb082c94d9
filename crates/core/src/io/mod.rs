//! The layer below every stage: durable and atomic writes ([`fs`]), content
//! hashes ([`hash`]), the canonical Parquet codec ([`parquet`]), the
//! reader of folders of canonical files ([`release_dir`]) and the escaping
//! writers of every generated syntax ([`escape`]). It knows the
//! canonical record (`sample`) and errors, nothing of any stage.

pub mod escape;
pub mod fs;
pub mod hash;
pub mod parquet;
pub mod release_dir;
pub mod rendered;

/// Rounds for readable, stable JSON (6 decimals; a non-finite value is 0).
pub fn r6(v: f64) -> f64 {
    if v.is_finite() { (v * 1e6).round() / 1e6 } else { 0.0 }
}
