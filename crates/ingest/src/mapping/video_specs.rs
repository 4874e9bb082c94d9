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
    if super::canonical::is_canonical_input(plan) && m.has(FACTS) {
        return canonical_videos(m);
    }
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

/// The column a blindspot data file states its videos' facts in: its
/// presence marks the three video columns blindspot writes.
const FACTS: &str = "video_facts";

/// The videos of a blindspot data file read back (a release's folder or one of
/// its Parquet files): one per entry of the `videos` column, a file embedded
/// (bytes) or carried beside the data (its path, resolved against the
/// release's `videos/` folder), or, where the entry is empty, the frames of
/// the same entry of `video_frames`. The stated `video_facts` are read again
/// from the bytes, as `image_facts` are.
fn canonical_videos(m: &mut Mapper<'_>) -> Vec<VideoSpec> {
    let _ = m.get(FACTS);
    let files = m.get("videos");
    let frames = m.get("video_frames");
    let files: &[Raw] = match files.as_deref() {
        Some(Raw::List(items)) => items,
        _ => &[],
    };
    let frames: &[Raw] = match frames.as_deref() {
        Some(Raw::List(items)) => items,
        _ => &[],
    };
    let mut out = Vec::new();
    for j in 0..files.len().max(frames.len()) {
        let file = files.get(j).unwrap_or(&Raw::Null);
        let path = file.get("path").and_then(Raw::scalar_text).filter(|p| !p.is_empty());
        match (file.get("bytes"), path) {
            (Some(Raw::Bytes(b)), path) => out.push(VideoSpec::Embedded { bytes: b.clone(), path: label(m, path) }),
            (_, Some(path)) => out.push(VideoSpec::File(path)),
            (_, None) => {
                let items: &[Raw] = match frames.get(j) {
                    Some(Raw::List(items)) => items,
                    _ => &[],
                };
                let path_of = |f: &Raw| f.get("path").and_then(Raw::scalar_text).filter(|p| !p.is_empty());
                if items.is_empty() {
                    m.problem("videos", format!("video {} has neither bytes, a path nor frames", j + 1)).help =
                        Some("the row's `videos` and `video_frames` columns were emptied; rebuild the release".into());
                } else if let Some(embedded) = items
                    .iter()
                    .map(|f| match f.get("bytes") {
                        Some(Raw::Bytes(b)) => Some((b.clone(), path_of(f))),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()
                {
                    let embedded = embedded.into_iter().map(|(b, p)| (b, label(m, p))).collect();
                    out.push(VideoSpec::EmbeddedFrames(embedded));
                } else {
                    match items.iter().map(path_of).collect::<Option<Vec<String>>>() {
                        Some(paths) => out.push(VideoSpec::Frames(paths)),
                        None => {
                            m.problem(
                                "video-frames",
                                format!("a frame of video {} has neither bytes nor a path", j + 1),
                            );
                        }
                    }
                }
            }
        }
    }
    out
}

/// The path label of embedded bytes: never opened, but a release carrying the
/// video as a file writes it there, so one that leaves its root keeps its file
/// name only (counted), as embedded images' labels do.
fn label(m: &mut Mapper<'_>, path: Option<String>) -> Option<String> {
    match path {
        Some(p) if crate::images::escapes(&p) => {
            m.notes.push(Cow::Borrowed(super::NOTE_VIDEO_LABEL_NAME));
            std::path::Path::new(&p).file_name().map(|n| n.to_string_lossy().into_owned())
        }
        other => other,
    }
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
