//! `[variants]`: the null, phantom and trap families a release carries.

use super::*;

/// The settings of `[variants]`; `seed` is `[dataset] seed` unless the section
/// gives its own, resolved here once.
pub(super) fn variants_config(
    w: &crate::wire::VariantsWire,
    seed: u64,
    ctx: &mut Ctx<'_>,
) -> crate::variants::VariantsConfig {
    use crate::variants::{CaptionSource, VariantsConfig, parse_kind};
    let mut cfg =
        VariantsConfig { seed: w.seed.unwrap_or(seed), on_invalid: w.on_invalid.into(), ..Default::default() };
    if let Some(kinds) = &w.kinds {
        if kinds.is_empty() {
            ctx.err("variants.kinds", "no kinds listed").help =
                Some(format!("list some, or remove the key for all: {}", crate::variants::valid_kinds()));
        }
        cfg.kinds.clear();
        for k in kinds {
            match parse_kind(k) {
                Ok(sel) => cfg.kinds.push(sel),
                Err(e) => {
                    ctx.err("variants.kinds", e);
                }
            }
        }
    }
    if let Some(c) = &w.captions {
        match (&c.path, &c.meta) {
            (Some(raw), None) => {
                if let Some(path) = ctx.resolve("variants.captions.path", raw) {
                    if !path.is_file() {
                        ctx.err(
                            "variants.captions.path",
                            format!("caption file {} does not exist", display_path(&path)),
                        )
                        .help = Some("paths are relative to the pipeline file's folder".into());
                    }
                    cfg.captions = Some(CaptionSource::File { path, key: c.key.clone() });
                }
            }
            (None, Some(field)) if c.key.is_none() => cfg.captions = Some(CaptionSource::Meta(field.clone())),
            (None, Some(_)) => {
                ctx.err("variants.captions.key", "key applies to a caption file, not to a meta field");
            }
            (Some(_), Some(_)) => {
                ctx.err("variants.captions", "both path and meta are set").help = Some("keep one source".into());
            }
            (None, None) => {
                ctx.err("variants.captions", "no caption source").help =
                    Some("set path (a JSON file of {id: caption}) or meta (a meta field)".into());
            }
        }
    }
    cfg
}

/// `blindspot variants`' command line, in `[variants]`' terms.
#[derive(Debug, Clone, Default)]
pub struct VariantsFlags {
    /// `--kinds` (empty: the pipeline's, else every kind).
    pub kinds: Vec<crate::variants::KindSel>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--captions FILE` and `--captions-key`.
    pub captions: Option<(PathBuf, Option<String>)>,
    /// `--skip-invalid-captions`.
    pub skip_invalid_captions: bool,
}

/// The settings `blindspot variants` runs with.
#[derive(Debug, Clone)]
pub struct VariantsSettings {
    /// Its `seed` is the resolved seed of every random choice.
    pub config: crate::variants::VariantsConfig,
}

/// The settings `blindspot variants` runs with, resolved once: the pipeline's
/// `[variants]` (or the defaults) with the flags laid over it, and the seed of
/// every random choice: `--seed`, else the section's `seed`, else `[dataset]
/// seed`, else 42.
pub fn variants_settings(pipeline: Option<&Pipeline>, flags: &VariantsFlags) -> Result<VariantsSettings> {
    use crate::variants::CaptionSource;
    // A pipeline's `[variants]` seed is resolved already (its own, else the dataset's).
    let mut cfg = match pipeline {
        Some(p) => {
            p.variants.clone().unwrap_or(crate::variants::VariantsConfig { seed: p.dataset.seed, ..Default::default() })
        }
        None => crate::variants::VariantsConfig::default(),
    };
    if !flags.kinds.is_empty() {
        cfg.kinds = flags.kinds.clone();
    }
    if let Some((path, key)) = &flags.captions {
        if !path.is_file() {
            return Err(Error::one(
                Problem::new(
                    Location::file("command line"),
                    format!("--captions: {} is not a file", display_path(path)),
                )
                .help("give a JSON file of {\"<sample id>\": \"<caption>\", ...}"),
            ));
        }
        cfg.captions = Some(CaptionSource::File { path: path.clone(), key: key.clone() });
    }
    if flags.skip_invalid_captions {
        cfg.on_invalid = OnInvalid::Skip;
    }
    if let Some(seed) = flags.seed {
        cfg.seed = seed;
    }
    Ok(VariantsSettings { config: cfg })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pipeline with `[dataset] seed = 7` and, when given, `[variants] seed`.
    fn pipeline(dir: &Path, variants_seed: Option<u64>) -> Pipeline {
        std::fs::write(dir.join("b.jsonl"), "{\"id\": \"q1\", \"question\": \"Q?\", \"answer\": \"yes\"}\n").unwrap();
        let variants = variants_seed.map_or(String::new(), |s| format!("\n[variants]\nseed = {s}\n"));
        let text = format!(
            "[dataset]\nname = \"b\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\nseed = 7\n\n[ingest]\npath = \
             \"b.jsonl\"\n{variants}"
        );
        let path = dir.join("p.toml");
        std::fs::write(&path, text).unwrap();
        Pipeline::load(&path).unwrap()
    }

    /// The variants seed is resolved once, where the settings are: `[variants]
    /// seed`, else `[dataset] seed` in a pipeline; `--seed`, else the
    /// pipeline's, else 42 on the command line.
    #[test]
    fn the_variants_seed_resolves_once_from_flag_section_dataset_default() {
        let dir = tempfile::tempdir().unwrap();
        let own = pipeline(dir.path(), Some(11));
        assert_eq!(own.variants.as_ref().unwrap().seed, 11);
        let inherited = pipeline(dir.path(), Some(7)).variants.unwrap().seed;
        assert_eq!(inherited, 7);
        let resolve = |p: Option<&Pipeline>, seed: Option<u64>| {
            variants_settings(p, &VariantsFlags { seed, ..Default::default() }).unwrap().config.seed
        };
        assert_eq!(resolve(Some(&own), Some(3)), 3);
        assert_eq!(resolve(Some(&own), None), 11);
        let without = pipeline(dir.path(), None);
        assert!(without.variants.is_none());
        assert_eq!(resolve(Some(&without), None), 7);
        assert_eq!(resolve(None, None), DEFAULT_SEED);
    }
}
