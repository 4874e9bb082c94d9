//! `[variants]`: the null, phantom and trap families a release carries.

use super::*;

pub(super) fn variants_config(w: &crate::wire::VariantsWire, ctx: &mut Ctx<'_>) -> crate::variants::VariantsConfig {
    use crate::variants::{CaptionSource, VariantsConfig, parse_kind};
    let mut cfg = VariantsConfig { seed: w.seed, on_invalid: w.on_invalid.into(), ..Default::default() };
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
