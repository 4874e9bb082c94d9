//! The images a record names ([`ImageSpec`]s): paths, list literals of
//! paths, embedded bytes, `{bytes, path}` structs; resolved later, against
//! the image folder, by the images module.

use std::borrow::Cow;

use super::ImageSpec;
use super::mapper::{Mapper, default_accessor};
use crate::options::parse_list_literal;
use crate::plan::Accessor;
use crate::raw::Raw;

/// The images of the record, from the mapped fields or the canonical names.
pub(super) fn map_images(m: &mut Mapper<'_>) -> Vec<ImageSpec> {
    let plan = m.plan;
    let accs: Vec<&Accessor> = match &plan.fields.images {
        Some(a) => a.iter().collect(),
        None => ["images", "image", "file_name"]
            .iter()
            .find(|d| m.has(d))
            .map(|d| vec![default_accessor(d)])
            .unwrap_or_default(),
    };
    let mut out = Vec::new();
    for acc in accs {
        let value = match acc {
            Accessor::Path(p) => m.get(p),
            Accessor::Template(_) => m.text("images", acc).map(|t| Cow::Owned(Raw::Str(t))),
        };
        if let Some(v) = value {
            collect_images(m, &v, &mut out);
        }
    }
    out
}

fn collect_images(m: &mut Mapper<'_>, v: &Raw, out: &mut Vec<ImageSpec>) {
    match v {
        Raw::Str(s) => {
            let s = s.trim();
            if s.starts_with('[')
                && let Some(items) = parse_list_literal(s)
            {
                out.extend(items.into_iter().map(ImageSpec::Path));
                return;
            }
            out.push(ImageSpec::Path(s.to_string()));
        }
        Raw::Bytes(b) => out.push(ImageSpec::Bytes { bytes: b.clone(), path: None }),
        Raw::List(items) => {
            for i in items {
                if !m.is_missing(i) {
                    collect_images(m, i, out);
                }
            }
        }
        Raw::Map(_) => {
            let path = v.get("path").and_then(Raw::scalar_text).filter(|s| !s.is_empty());
            match v.get("bytes") {
                Some(Raw::Bytes(b)) => out.push(ImageSpec::Bytes { bytes: b.clone(), path }),
                _ => match path {
                    Some(p) => out.push(ImageSpec::Path(p)),
                    None => {
                        m.problem("images", "an image struct has neither bytes nor path");
                    }
                },
            }
        }
        Raw::Null => {}
        other => {
            m.problem("images", format!("an image is {}, expected a path, bytes or {{bytes, path}}", other.kind()));
        }
    }
}
