//! Fingerprints blindspot's own source (every crate's `src/` and the binary's,
//! sorted paths and bytes) into `BLINDSPOT_CODE_FINGERPRINT`, which keys the
//! stage cache: a code change misses every cached stage result, whatever the
//! crate version says.

use std::path::{Path, PathBuf};

/// FNV-1a (128-bit) over each file's relative path and bytes, in sorted order:
/// no dependency is needed in a build script, and this only has to change
/// whenever the code does.
fn fingerprint(root: &Path) -> String {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root.join("src"), &mut files);
    if let Ok(crates) = std::fs::read_dir(root.join("crates")) {
        for c in crates.flatten() {
            walk(&c.path().join("src"), &mut files);
        }
    }
    files.sort();
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u128::from(*b);
            h = h.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
        }
    };
    for f in &files {
        let rel = f.strip_prefix(root).unwrap_or(f);
        eat(rel.to_string_lossy().as_bytes());
        eat(&[0]);
        eat(&std::fs::read(f).unwrap_or_default());
        eat(&[0]);
    }
    format!("{h:032x}")
}

fn main() {
    // This crate is crates/pipeline: the workspace root is two folders up.
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("../..");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=../../src");
    println!("cargo::rerun-if-changed=../../crates");
    println!("cargo::rustc-env=BLINDSPOT_CODE_FINGERPRINT={}", fingerprint(&root));
}
