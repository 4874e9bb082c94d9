//! The videos a record names ([`VideoSpec`]s): a file's path (or several), or
//! the ordered frame images of one video; resolved later, against the video
//! folder, by the videos module. Nothing is read unless a video folder is set
//! (`[ingest] videos`): without one a `video` field stays a meta string, as it
//! was before blindspot knew videos.

use std::borrow::Cow;

use super::VideoSpec;
use super::mapper::{Mapper, default_accessor};
use crate::options::parse_list_literal;
use crate::plan::Accessor;
use crate::raw::Raw;

/// The videos of the record, from the mapped fields or the canonical names.
pub(super) fn map_videos(m: &mut Mapper<'_>) -> Vec<VideoSpec> {
    let plan = m.plan;
    if plan.videos_dir.is_none() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some(acc) = &plan.fields.video_frames {
        let value = match acc {
            Accessor::Path(p) => m.get(p),
            Accessor::Template(_) => m.text("video-frames", acc).map(|t| Cow::Owned(Raw::Str(t))),
        };
        if let Some(v) = value {
            let mut frames = Vec::new();
            collect_paths(m, "video-frames", &v, &mut frames);
            if frames.is_empty() {
                m.problem("video-frames", "the video's frame list is empty").help =
                    Some("list the video's frame images in order, as paths relative to [ingest] videos".into());
            } else {
                out.push(VideoSpec::Frames(frames));
            }
        }
        if plan.fields.videos.is_none() {
            return out;
        }
    }
    let accs: Vec<&Accessor> = match &plan.fields.videos {
        Some(a) => a.iter().collect(),
        None => ["videos", "video"].iter().find(|d| m.has(d)).map(|d| vec![default_accessor(d)]).unwrap_or_default(),
    };
    for acc in accs {
        let value = match acc {
            Accessor::Path(p) => m.get(p),
            Accessor::Template(_) => m.text("videos", acc).map(|t| Cow::Owned(Raw::Str(t))),
        };
        if let Some(v) = value {
            let mut files = Vec::new();
            collect_paths(m, "videos", &v, &mut files);
            out.extend(files.into_iter().map(VideoSpec::File));
        }
    }
    out
}

/// Paths from a string, a list literal of strings, a list, or `{path}` structs.
fn collect_paths(m: &mut Mapper<'_>, field: &str, v: &Raw, out: &mut Vec<String>) {
    match v {
        Raw::Str(s) => {
            let s = s.trim();
            if s.starts_with('[')
                && let Some(items) = parse_list_literal(s)
            {
                out.extend(items);
                return;
            }
            if !s.is_empty() {
                out.push(s.to_string());
            }
        }
        Raw::List(items) => {
            for i in items {
                if !m.is_missing(i) {
                    collect_paths(m, field, i, out);
                }
            }
        }
        Raw::Map(_) => match v.get("path").and_then(Raw::scalar_text).filter(|s| !s.is_empty()) {
            Some(p) => out.push(p),
            None => {
                m.problem(field, "a video struct has no path").help = Some(
                    "give the video as a path relative to [ingest] videos (embedded video bytes are not read)".into(),
                );
            }
        },
        Raw::Null => {}
        other => {
            m.problem(field, format!("a video is {}, expected a path or a list of paths", other.kind()));
        }
    }
}
