//! Near-duplicate videos for `blindspot dups` and a build's duplicates report:
//! ingest samples and hashes each video's frames (decoding video files with
//! the `ffmpeg` on PATH, found once), embed clusters them. Without ffmpeg the
//! video files are reported as not checked; nothing fails for its absence.

use crate::embed::video_dups::{self, VideoDups};
use crate::ingest::video_frames::{Ffmpeg, sample_frames};
use crate::sample::Sample;

/// The near-duplicate videos of `samples`; `None` when no question has a video.
pub fn find(samples: &[Sample]) -> Option<VideoDups> {
    if samples.iter().all(|s| s.videos.is_empty()) {
        return None;
    }
    let ffmpeg = Ffmpeg::detect();
    let frames = sample_frames(samples, ffmpeg);
    Some(video_dups::find(samples, &frames, ffmpeg.map(Ffmpeg::describe), crate::sample::image_hash::DEFAULT_THRESHOLD))
}
