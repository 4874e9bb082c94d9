//! Near-duplicate videos: the videos of a benchmark clustered by the hashes of
//! frames sampled at fixed fractions of their duration (at
//! [`crate::sample::image_hash::VIDEO_FRACTIONS`], sampled and hashed by the
//! caller with ingest's `video_frames`), with the images' rule frame by frame
//! ([`crate::sample::image_hash::near`]: `phash` and `dhash` both within the
//! threshold) and the images' complete linkage. The video side of `blindspot
//! dups` and of a build's duplicates report, beside [`super::image_dups`].

use std::collections::BTreeMap;

use crate::sample::Sample;
use crate::sample::image_hash::{self, Hashes, complete_linkage};

/// One distinct video (by sha256) and the questions that show it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct VideoEntry {
    pub path: Option<String>,
    pub sha256: Option<String>,
    /// The questions showing it, in input order.
    pub ids: Vec<String>,
}

/// What the video side of `blindspot dups` reports.
#[derive(Debug, Clone, PartialEq)]
pub struct VideoDups {
    pub threshold: u32,
    /// The decoder of video files (`ffmpeg`'s path and version); `None` when
    /// none was found.
    pub decoder: Option<String>,
    /// Distinct videos of the benchmark, and how many were compared.
    pub videos: usize,
    pub checked: usize,
    /// Why the others were not: reason → videos.
    pub not_checked: BTreeMap<String, usize>,
    /// Clusters (≥ 2 distinct videos), each sorted by path; clusters by their first video.
    pub clusters: Vec<Vec<VideoEntry>>,
}

/// Whether two videos' sampled frames are near-duplicates at `threshold`:
/// every sampled frame of one is near the frame sampled at the same point of
/// the other. A point where both frames are flat (a black fade, a blank
/// card) says nothing and is passed over; a video of flat frames only is near
/// nothing, as a blank image is.
pub fn near(a: &[Hashes], b: &[Hashes], threshold: u32) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).any(|(x, y)| !x.is_flat() && !y.is_flat())
        && a.iter().zip(b).all(|(&x, &y)| (x.is_flat() && y.is_flat()) || image_hash::near(x, y, threshold))
}

/// The sum of both hashes' distances over the sampled frames: closest pairs join first.
fn distance(a: &[Hashes], b: &[Hashes]) -> u32 {
    a.iter().zip(b).map(|(x, y)| image_hash::distance(x.phash, y.phash) + image_hash::distance(x.dhash, y.dhash)).sum()
}

/// Clusters the videos of `samples` by their sampled frames' hashes
/// (`frames`: [`crate::sample::VideoRef::key`] → the hashes, or why there are none).
pub fn find(
    samples: &[Sample],
    frames: &BTreeMap<String, Result<Vec<Hashes>, String>>,
    decoder: Option<String>,
    threshold: u32,
) -> VideoDups {
    let mut by_key: BTreeMap<String, VideoEntry> = BTreeMap::new();
    for s in samples {
        for v in &s.videos {
            let Some(key) = v.key() else { continue };
            let e = by_key.entry(key).or_insert_with(|| VideoEntry {
                path: v.path.clone(),
                sha256: v.sha256.clone(),
                ids: Vec::new(),
            });
            if e.ids.last() != Some(&s.id) {
                e.ids.push(s.id.clone());
            }
        }
    }
    let videos = by_key.len();
    let mut not_checked: BTreeMap<String, usize> = BTreeMap::new();
    let mut checked: Vec<(&[Hashes], VideoEntry)> = Vec::new();
    for (key, entry) in by_key {
        match frames.get(&key) {
            Some(Ok(h)) => checked.push((h, entry)),
            Some(Err(why)) => *not_checked.entry(why.clone()).or_default() += 1,
            None => *not_checked.entry("its frames were not sampled".into()).or_default() += 1,
        }
    }
    let mut pairs = Vec::new();
    for i in 0..checked.len() {
        for j in i + 1..checked.len() {
            if near(checked[i].0, checked[j].0, threshold) {
                pairs.push((distance(checked[i].0, checked[j].0), i, j));
            }
        }
    }
    let roots = complete_linkage(checked.len(), pairs, |x, y| near(checked[x].0, checked[y].0, threshold));
    let mut groups: BTreeMap<usize, Vec<VideoEntry>> = BTreeMap::new();
    for (&r, (_, entry)) in roots.iter().zip(&checked) {
        groups.entry(r).or_default().push(entry.clone());
    }
    let mut clusters: Vec<Vec<VideoEntry>> = groups.into_values().filter(|g| g.len() > 1).collect();
    for c in &mut clusters {
        c.sort_by(|a, b| (&a.path, &a.sha256).cmp(&(&b.path, &b.sha256)));
    }
    clusters.sort_by(|a, b| (&a[0].path, &a[0].sha256).cmp(&(&b[0].path, &b[0].sha256)));
    VideoDups { threshold, decoder, videos, checked: checked.len(), not_checked, clusters }
}

impl VideoDups {
    /// The `videos` part of `dups.json`.
    pub fn file(&self) -> VideoDupsFile {
        VideoDupsFile {
            method: format!(
                "frames sampled at {} of each video's duration (of its frame list, for a video given as frames), \
                 each hashed as an image is; two videos are near when every sampled frame is near the other's \
                 frame at the same point (phash and dhash both within the threshold; a point where both frames are \
                 flat is passed over), a cluster when every two of its videos are",
                image_hash::VIDEO_FRACTIONS.map(|f| f.to_string()).join(", ")
            ),
            decoder: self.decoder.clone(),
            threshold_bits: self.threshold,
            videos: self.videos,
            checked: self.checked,
            not_checked: self.not_checked.clone(),
            clusters: self.clusters.len(),
            videos_in_clusters: self.clusters.iter().map(Vec::len).sum(),
            members: self.clusters.clone(),
        }
    }

    /// One clause for a summary line: `3 videos: 1 near-duplicate cluster
    /// (frames decoded by /usr/bin/ffmpeg (ffmpeg version ...))`, or why none were compared.
    pub fn summary(&self) -> String {
        let clusters = match self.clusters.len() {
            1 => "1 near-duplicate cluster".to_string(),
            n => format!("{n} near-duplicate clusters"),
        };
        let mut line = format!("{} videos ({} checked): {clusters}", self.videos, self.checked);
        if let Some(d) = &self.decoder {
            line.push_str(&format!(" (frames decoded by {d})"));
        }
        for (why, n) in &self.not_checked {
            line.push_str(&format!("; {n} near-duplicate videos {why}"));
        }
        line
    }
}

/// Near-duplicate videos in `dups.json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct VideoDupsFile {
    /// How videos are compared.
    pub method: String,
    /// The decoder of video files (path and version); null when none was found.
    pub decoder: Option<String>,
    /// Frames whose hashes are both within this many bits (of 64) are near.
    pub threshold_bits: u32,
    /// Distinct videos of the benchmark, and how many were compared.
    pub videos: usize,
    pub checked: usize,
    /// Why the others were not compared: reason → videos.
    pub not_checked: BTreeMap<String, usize>,
    pub clusters: usize,
    pub videos_in_clusters: usize,
    pub members: Vec<Vec<VideoEntry>>,
}
