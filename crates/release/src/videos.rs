//! How a release carries its videos: embedded in the Parquet files as images
//! are, or copied beside them under `videos/` (the Parquet keeping each
//! video's path relative to that folder), by `[release] videos`; `auto`
//! embeds while the distinct videos add up to at most [`EMBED_LIMIT`] bytes,
//! since one Parquet file of many gigabytes of video serves nobody. Either
//! way every video byte is in a file the manifest hashes, so `verify`
//! catches a changed one.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::sample::Sample;
use crate::spec::wire::VideoCarryWire;

/// The most video bytes `auto` embeds: 64 MiB.
pub const EMBED_LIMIT: u64 = 64 * 1024 * 1024;

/// The folder of a release that holds carried video files.
pub const FOLDER: &str = "videos";

/// Where a release's videos go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carry {
    Embed,
    Files,
}

/// Where a carried file's bytes are: in memory (a video read back from a
/// release that embedded it) or in the file ingest read.
#[derive(Clone, Copy)]
enum Bytes<'a> {
    Memory(&'a [u8]),
    File(&'a Path),
    Unread,
}

fn bytes_of<'a>(bytes: &'a Option<Vec<u8>>, source: &'a Option<std::path::PathBuf>) -> Bytes<'a> {
    match (bytes, source) {
        (Some(b), _) => Bytes::Memory(b),
        (None, Some(p)) => Bytes::File(p),
        (None, None) => Bytes::Unread,
    }
}

/// Every distinct video file (and frame image) of `samples`: its path relative
/// to the video folder → where to read it and its size.
fn distinct_files(samples: &[Sample]) -> BTreeMap<String, (Bytes<'_>, u64)> {
    let mut out = BTreeMap::new();
    for v in samples.iter().flat_map(|s| &s.videos) {
        if let Some(p) = &v.path {
            out.insert(p.clone(), (bytes_of(&v.bytes, &v.source), v.size.unwrap_or(0)));
        }
        for f in &v.frames {
            if let Some(p) = &f.path {
                let size = match (&f.bytes, &f.source) {
                    (Some(b), _) => b.len() as u64,
                    (None, source) => source.as_ref().and_then(|s| std::fs::metadata(s).ok()).map_or(0, |m| m.len()),
                };
                out.insert(p.clone(), (bytes_of(&f.bytes, &f.source), size));
            }
        }
    }
    out
}

/// The carry a setting comes to for these samples.
pub fn carry(setting: VideoCarryWire, samples: &[Sample]) -> Carry {
    match setting {
        VideoCarryWire::Embed => Carry::Embed,
        VideoCarryWire::Files => Carry::Files,
        VideoCarryWire::Auto => {
            let total: u64 = distinct_files(samples).values().map(|(_, n)| n).sum();
            if total <= EMBED_LIMIT { Carry::Embed } else { Carry::Files }
        }
    }
}

/// Copies every video file and frame of `samples` to `dir/videos/<path>`.
pub fn copy_files(samples: &[Sample], dir: &Path) -> Result<()> {
    for (rel, (bytes, _)) in distinct_files(samples) {
        let to = dir.join(FOLDER).join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        match bytes {
            Bytes::Memory(b) => std::fs::write(&to, b).map_err(|e| Error::io(&to, e))?,
            Bytes::File(source) => {
                std::fs::copy(source, &to).map_err(|e| Error::io(source, e))?;
            }
            Bytes::Unread => {
                return Err(Error::Bug(format!("the video {rel:?} is to be carried but ingest did not read it")));
            }
        }
    }
    Ok(())
}

/// The card's sentence on the videos of the default config's `samples`.
pub fn card_sentence(samples: &[&Sample], carry: Carry) -> Option<String> {
    let videos: Vec<&crate::sample::VideoRef> = samples.iter().flat_map(|s| &s.videos).collect();
    if videos.is_empty() {
        return None;
    }
    let distinct: std::collections::BTreeSet<&str> = videos.iter().filter_map(|v| v.sha256.as_deref()).collect();
    let frames = videos.iter().filter(|v| !v.frames.is_empty()).count();
    let count = |n: usize, one: &str, many: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {many}") };
    let what = format!(
        "The questions name {} ({}{}), each with its sha256, size, duration, frame rate, frame count, size in pixels \
         and codec in `video_facts`",
        count(videos.len(), "video", "videos"),
        count(distinct.len(), "distinct video", "distinct videos"),
        if frames > 0 { format!(", {} given as frames", count(frames, "video", "videos")) } else { String::new() },
    );
    Some(match carry {
        Carry::Embed => format!("{what}; their bytes are embedded in the Parquet files (`videos`, `video_frames`)."),
        Carry::Files => format!(
            "{what}; the files are carried beside the Parquet files under `{FOLDER}/`, each at the path its row \
             names (`[release] videos = \"files\"`), and hashed in `manifest.json`."
        ),
    })
}
