//! Finds the real-data suite (`BLINDSPOT_DATA_DIR`, default `../shared/data`).
//! When present, tests are compiled with `cfg(blindspot_real_data)`; when not,
//! the real-data tests are `#[ignore]`d, so `cargo test` shows how many were
//! skipped instead of failing on a plain clone.

use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(blindspot_real_data)");
    println!("cargo::rerun-if-env-changed=BLINDSPOT_DATA_DIR");
    println!("cargo::rerun-if-changed=tests/support/build.rs");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dir = match std::env::var("BLINDSPOT_DATA_DIR") {
        Ok(d) if !d.is_empty() => manifest.join(d),
        _ => manifest.join("../shared/data"),
    };
    if dir.join("scienceqa").is_dir() {
        let dir = dir.canonicalize().unwrap_or(dir);
        println!("cargo::rustc-cfg=blindspot_real_data");
        println!("cargo::rustc-env=BLINDSPOT_DATA_DIR_FOUND={}", dir.display());
    }
}
