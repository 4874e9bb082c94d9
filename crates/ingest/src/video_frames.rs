//! Frames sampled from a benchmark's videos for near-duplicate search (read
//! by `blindspot dups` and a build's duplicates report, after ingest): the
//! frames at fixed fractions of each video's duration ([`FRACTIONS`]), each
//! hashed as an image is ([`crate::images::perceptual_hashes`]), so two videos
//! are compared frame by frame with the images' rule.
//!
//! Decoding a video file needs a decoder: the `ffmpeg` found on `PATH`,
//! detected once per run ([`Ffmpeg::detect`]). Without one a video file is not
//! checked (said, never an error); a video given as frames needs none, its
//! frame images being read directly.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use rayon::prelude::*;

use crate::sample::image_hash::Hashes;
use crate::sample::{Sample, VideoRef};

/// Where in a video its frames are sampled.
pub use crate::sample::image_hash::VIDEO_FRACTIONS as FRACTIONS;

/// The `ffmpeg` used to decode video files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ffmpeg {
    pub path: PathBuf,
    /// The first line of `ffmpeg -version`.
    pub version: String,
}

impl Ffmpeg {
    /// The first `ffmpeg` on `PATH` that answers `-version`, looked up once
    /// per process.
    pub fn detect() -> Option<&'static Ffmpeg> {
        static FOUND: OnceLock<Option<Ffmpeg>> = OnceLock::new();
        FOUND
            .get_or_init(|| {
                let path = std::env::var_os("PATH")?;
                std::env::split_paths(&path).map(|d| d.join("ffmpeg")).filter(|p| p.is_file()).find_map(|p| {
                    let out = Command::new(&p).arg("-version").stdin(Stdio::null()).output().ok()?;
                    let text = String::from_utf8_lossy(&out.stdout);
                    let version = text.lines().next()?.trim().to_string();
                    out.status.success().then_some(Ffmpeg { path: p, version })
                })
            })
            .as_ref()
    }

    /// How the frames were decoded, for reports: `/usr/bin/ffmpeg (ffmpeg version 5.1 ...)`.
    pub fn describe(&self) -> String {
        let version = self.version.split(" Copyright").next().unwrap_or(&self.version);
        format!("{} ({version})", crate::error::display_path(&self.path))
    }

    /// The PNG of the frame shown at `seconds` into the file `video`.
    fn frame_at(&self, video: &Path, seconds: f64) -> Result<Vec<u8>, String> {
        let out = Command::new(&self.path)
            .args(["-nostdin", "-v", "error", "-ss", &format!("{seconds:.3}"), "-i"])
            .arg(video)
            .args(["-frames:v", "1", "-f", "image2pipe", "-c:v", "png", "-"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("ffmpeg could not be run: {e}"))?;
        if !out.status.success() || out.stdout.is_empty() {
            let why = String::from_utf8_lossy(&out.stderr);
            let why = why.lines().next().unwrap_or("no frame decoded").trim().to_string();
            return Err(format!("ffmpeg decoded no frame at {seconds:.3} s: {why}"));
        }
        Ok(out.stdout)
    }
}

/// Why a video file is not checked when no decoder is found.
pub const NO_FFMPEG: &str = "not checked: ffmpeg not found on PATH (install it, e.g. apt-get install ffmpeg)";

/// The sampled frames' hashes of every distinct video of `samples` (by
/// [`VideoRef::key`]), or why a video's could not be had; in parallel, the
/// result depending on the videos alone.
pub fn sample_frames(samples: &[Sample], ffmpeg: Option<&Ffmpeg>) -> BTreeMap<String, Result<Vec<Hashes>, String>> {
    let mut videos: BTreeMap<String, &VideoRef> = BTreeMap::new();
    for v in samples.iter().flat_map(|s| &s.videos) {
        if let Some(k) = v.key() {
            videos.entry(k).or_insert(v);
        }
    }
    videos.into_par_iter().map(|(k, v)| (k, video_hashes(v, ffmpeg))).collect()
}

fn hash_image(bytes: &[u8]) -> Result<Hashes, String> {
    let img = image::load_from_memory(bytes).map_err(|e| format!("a frame does not decode: {e}"))?;
    let (phash, dhash) = crate::images::perceptual_hashes(&img);
    Ok(Hashes { phash, dhash })
}

/// One video's sampled frames, hashed.
fn video_hashes(v: &VideoRef, ffmpeg: Option<&Ffmpeg>) -> Result<Vec<Hashes>, String> {
    if !v.frames.is_empty() {
        let n = v.frames.len();
        return FRACTIONS
            .iter()
            .map(|f| {
                let frame = &v.frames[((f * n as f64) as usize).min(n - 1)];
                let bytes = match (&frame.bytes, &frame.source) {
                    (Some(b), _) => b.clone(),
                    (None, Some(p)) => std::fs::read(p).map_err(|e| format!("a frame cannot be read: {e}"))?,
                    (None, None) => return Err("its frames' images were not read".to_string()),
                };
                hash_image(&bytes)
            })
            .collect();
    }
    let ffmpeg = ffmpeg.ok_or_else(|| NO_FFMPEG.to_string())?;
    let duration = v.duration.ok_or_else(|| "not checked: its container states no duration".to_string())?;
    // Embedded bytes are decoded from a temporary copy: ffmpeg seeks in a file.
    let copy;
    let file = match (&v.source, &v.bytes) {
        (Some(p), _) => p.as_path(),
        (None, Some(b)) => {
            copy = tempfile::NamedTempFile::new().map_err(|e| format!("no temporary file: {e}"))?;
            std::fs::write(copy.path(), b).map_err(|e| format!("no temporary file: {e}"))?;
            copy.path()
        }
        (None, None) => return Err("its file was not read".to_string()),
    };
    FRACTIONS.iter().map(|f| hash_image(&ffmpeg.frame_at(file, duration * f)?)).collect()
}
