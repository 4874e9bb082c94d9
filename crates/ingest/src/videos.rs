//! Video resolution: each sample's video names → files under the pipeline's
//! video folder (found by relative path, else by file name anywhere below it,
//! as images are), with sha256, size and the facts the container's header
//! states: duration, frame rate, frame count, width, height and codec. Nothing
//! is decoded: MP4 and MOV are read with `mp4` (the `moov` box; the media data
//! is skipped, not read), Matroska and WebM with `matroska-demuxer` (the header,
//! then the blocks walked to count the video track's frames). A video given as
//! frames is the ordered list of its frame images, each hashed, its size the
//! first frame's. A file reached through a symbolic link must lie inside the
//! video folder.

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::images::{escapes, index_by_name, link_outside, relative};
use super::mapping::{Mapped, VideoSpec};
use crate::error::{Problem, display_path};
use crate::sample::{ImageRef, VideoRef};

/// What a video container's header states about its video track.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerFacts {
    /// Seconds.
    pub duration: Option<f64>,
    pub fps: Option<f64>,
    pub frame_count: Option<u64>,
    pub width: u32,
    pub height: u32,
    pub codec: String,
}

/// A video file's facts, read from its container; `Err` says why it cannot
/// be read, as the end of a sentence that starts with the file's name.
pub fn container_facts(path: &Path) -> Result<ContainerFacts, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot be read: {e}"))?;
    let size = file.metadata().map_err(|e| format!("cannot be read: {e}"))?.len();
    container_facts_of(file, size)
}

/// [`container_facts`] of a video held in memory (embedded in a data file).
pub fn container_facts_of_bytes(bytes: &[u8]) -> Result<ContainerFacts, String> {
    container_facts_of(std::io::Cursor::new(bytes), bytes.len() as u64)
}

fn container_facts_of<R: Read + Seek>(mut file: R, size: u64) -> Result<ContainerFacts, String> {
    let mut magic = [0u8; 12];
    let n = file.read(&mut magic).map_err(|e| format!("cannot be read: {e}"))?;
    file.rewind().map_err(|e| format!("cannot be read: {e}"))?;
    if n == 0 {
        return Err("is an empty file (0 bytes), not a video".into());
    }
    // A library that panics on a damaged header is caught: the file is the
    // user's to fix, not a bug in blindspot.
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if n >= 8 && &magic[4..8] == b"ftyp" {
            mp4_facts(file, size)
        } else if magic.starts_with(&[0x1a, 0x45, 0xdf, 0xa3]) {
            matroska_facts(file)
        } else {
            Err("is not a video in a container blindspot reads (MP4, MOV, MKV, WebM)".into())
        }
    }));
    read.unwrap_or_else(|_| Err("is a damaged video: its container's header does not parse".into()))
}

fn mp4_facts<R: Read + Seek>(file: R, size: u64) -> Result<ContainerFacts, String> {
    let reader = std::io::BufReader::new(file);
    let mp4 = mp4::Mp4Reader::read_header(reader, size)
        .map_err(|e| format!("is a damaged or truncated MP4: {e} (re-export or re-download it)"))?;
    // The video track with the lowest id: the order of a hash map is not.
    let mut ids: Vec<u32> = mp4.tracks().keys().copied().collect();
    ids.sort_unstable();
    let track = ids
        .iter()
        .map(|id| &mp4.tracks()[id])
        .find(|t| matches!(t.track_type(), Ok(mp4::TrackType::Video)))
        .ok_or_else(|| "is an MP4 without a video track".to_string())?;
    let seconds = track.duration().as_secs_f64();
    let frames = u64::from(track.sample_count());
    // A sample entry the `mp4` crate does not parse (av01, mp4v, ...) is still a video.
    let codec = track.box_type().map_or_else(|_| "unknown".to_string(), |b| b.to_string());
    Ok(ContainerFacts {
        duration: (seconds > 0.0).then_some(seconds),
        fps: (seconds > 0.0 && frames > 0).then(|| frames as f64 / seconds),
        frame_count: Some(frames),
        width: u32::from(track.width()),
        height: u32::from(track.height()),
        codec,
    })
}

fn matroska_facts<R: Read + Seek>(file: R) -> Result<ContainerFacts, String> {
    let mut mkv = matroska_demuxer::MatroskaFile::open(std::io::BufReader::new(file))
        .map_err(|e| format!("is a damaged or truncated Matroska/WebM file: {e} (re-export or re-download it)"))?;
    let track = mkv
        .tracks()
        .iter()
        .find(|t| t.track_type() == matroska_demuxer::TrackType::Video)
        .ok_or_else(|| "is a Matroska/WebM file without a video track".to_string())?;
    let number = track.track_number().get();
    let codec = track.codec_id().to_string();
    let video = track.video().ok_or_else(|| "is a Matroska/WebM file whose video track has no size".to_string())?;
    let (width, height) = (video.pixel_width().get(), video.pixel_height().get());
    // Duration is in units of the timestamp scale (nanoseconds per unit).
    let scale = mkv.info().timestamp_scale().get() as f64;
    let duration = mkv.info().duration().map(|d| d * scale / 1e9).filter(|d| *d > 0.0);
    let mut frame = matroska_demuxer::Frame::default();
    let mut frames = 0u64;
    loop {
        match mkv.next_frame(&mut frame) {
            Ok(true) => frames += u64::from(frame.track == number),
            Ok(false) => break,
            Err(e) => {
                return Err(format!("is a damaged or truncated Matroska/WebM file: {e} (re-export or re-download it)"));
            }
        }
    }
    Ok(ContainerFacts {
        duration,
        fps: duration.filter(|_| frames > 0).map(|d| frames as f64 / d),
        frame_count: Some(frames),
        width: u32::try_from(width).unwrap_or(u32::MAX),
        height: u32::try_from(height).unwrap_or(u32::MAX),
        codec,
    })
}

/// sha256 of a file, read in blocks (a video may be larger than memory).
fn file_sha256(path: &Path) -> Result<(String, u64), String> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("cannot be read: {e}"))?;
    let mut hasher = Sha256::new();
    let size = std::io::copy(&mut file, &mut hasher).map_err(|e| format!("cannot be read: {e}"))?;
    Ok((hex::encode(hasher.finalize()), size))
}

/// A video file's record: its hash and its container's facts.
fn video_file(path: &Path) -> Result<VideoRef, String> {
    let facts = container_facts(path)?;
    let (sha256, size) = file_sha256(path)?;
    Ok(VideoRef { source: Some(path.to_path_buf()), ..with_facts(facts, sha256, size) })
}

/// A video's record from its hash, size and container facts; no path, bytes or frames.
fn with_facts(facts: ContainerFacts, sha256: String, size: u64) -> VideoRef {
    VideoRef {
        path: None,
        bytes: None,
        sha256: Some(sha256),
        size: Some(size),
        duration: facts.duration,
        fps: facts.fps,
        frame_count: facts.frame_count,
        width: Some(facts.width),
        height: Some(facts.height),
        codec: Some(facts.codec),
        frames: Vec::new(),
        source: None,
    }
}

/// A video embedded in a data file read back: its facts read again from the
/// bytes, which it keeps (nothing on disk to read them from later).
fn embedded_video(bytes: &[u8], path: &Option<String>) -> Result<VideoRef, String> {
    let facts = container_facts_of_bytes(bytes)?;
    let record = with_facts(facts, hex::encode(Sha256::digest(bytes)), bytes.len() as u64);
    Ok(VideoRef { path: path.clone(), bytes: Some(bytes.to_vec()), ..record })
}

/// An embedded frame image's record, its bytes kept.
fn embedded_frame(bytes: &[u8], path: &Option<String>) -> Result<ImageRef, String> {
    let size = imagesize::blob_size(bytes).map_err(|_| {
        "is not an image in a format blindspot can read (PNG, JPEG, GIF, WebP, BMP, TIFF, ...)".to_string()
    })?;
    Ok(ImageRef {
        path: path.clone(),
        bytes: Some(bytes.to_vec()),
        sha256: Some(hex::encode(Sha256::digest(bytes))),
        width: u32::try_from(size.width).ok(),
        height: u32::try_from(size.height).ok(),
        ..ImageRef::default()
    })
}

/// One frame image's record: sha256, size in bytes, width and height from its header.
fn frame(path: &Path) -> Result<(ImageRef, u64), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot be read: {e}"))?;
    let size = imagesize::blob_size(&bytes).map_err(|_| {
        "is not an image in a format blindspot can read (PNG, JPEG, GIF, WebP, BMP, TIFF, ...)".to_string()
    })?;
    let image = ImageRef {
        sha256: Some(hex::encode(Sha256::digest(&bytes))),
        width: u32::try_from(size.width).ok(),
        height: u32::try_from(size.height).ok(),
        source: Some(path.to_path_buf()),
        ..ImageRef::default()
    };
    Ok((image, bytes.len() as u64))
}

/// Resolves samples' videos against one video folder, batch after batch.
pub struct VideoResolver {
    dir: Option<PathBuf>,
    real_dir: Option<PathBuf>,
    index: Option<HashMap<String, Vec<PathBuf>>>,
}

impl VideoResolver {
    pub fn new(dir: Option<PathBuf>) -> VideoResolver {
        let real_dir = dir.as_ref().map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone()));
        VideoResolver { dir, real_dir, index: None }
    }

    /// The file a video or frame path names, or the problem with it.
    fn locate(&mut self, p: &str, what: &str, field: &str, loc: &crate::error::Location) -> Result<PathBuf, Problem> {
        let dir = self.dir.clone().ok_or_else(|| {
            Problem::new(loc.clone(), format!("{what} \"{p}\" is named, but no video folder is set"))
                .field(field)
                .help("set [ingest] videos = \"<the folder that holds the videos>\" (relative to the pipeline file)")
        })?;
        if escapes(p) {
            return Err(Problem::new(loc.clone(), format!("{what} path \"{p}\" leads outside the video folder"))
                .field(field)
                .help(
                    "video paths are relative to [ingest] videos (no leading '/', no '..'); move the videos inside it",
                ));
        }
        let direct = dir.join(p);
        let found = if direct.is_file() {
            direct
        } else {
            let name = Path::new(p).file_name().and_then(|n| n.to_str()).unwrap_or(p);
            let idx = self.index.get_or_insert_with(|| index_by_name(&dir));
            match idx.get(name).map(Vec::as_slice) {
                Some([one]) => one.clone(),
                Some(many) => {
                    return Err(Problem::new(
                        loc.clone(),
                        format!("{what} \"{p}\" matches {} files under {}", many.len(), display_path(&dir)),
                    )
                    .field(field)
                    .help("give the video's path relative to the video folder"));
                }
                None => {
                    return Err(Problem::new(
                        loc.clone(),
                        format!("{what} \"{p}\" not found under {}", display_path(&dir)),
                    )
                    .field(field)
                    .help("check [ingest] videos and the video field"));
                }
            }
        };
        let real_dir = self.real_dir.clone().unwrap_or_else(|| dir.clone());
        if let Some((link, target)) = link_outside(&dir, &real_dir, &found) {
            return Err(Problem::new(
                loc.clone(),
                format!(
                    "{what} \"{p}\" is reached through the symbolic link {} to {}, outside the video folder {}",
                    display_path(&link),
                    display_path(&target),
                    display_path(&dir)
                ),
            )
            .field(field)
            .help("copy the video into the video folder, or set [ingest] videos to a folder that holds it"));
        }
        Ok(found)
    }

    /// Resolves every sample's videos in place; returns (sample index, problem) pairs.
    pub fn resolve(&mut self, mapped: &mut [Mapped]) -> Vec<(usize, Problem)> {
        let mut problems = Vec::new();
        // Which file each video (or each frame) is, per sample.
        let mut located: Vec<Vec<Option<Vec<PathBuf>>>> = Vec::with_capacity(mapped.len());
        for (i, m) in mapped.iter().enumerate() {
            let mut row = Vec::with_capacity(m.videos.len());
            for spec in &m.videos {
                let found: Result<Vec<PathBuf>, Problem> = match spec {
                    VideoSpec::File(p) => self.locate(p, "video", "videos", &m.loc).map(|f| vec![f]),
                    VideoSpec::Frames(list) => {
                        list.iter().map(|p| self.locate(p, "video frame", "video-frames", &m.loc)).collect()
                    }
                    // Read from the bytes themselves below.
                    VideoSpec::Embedded { .. } | VideoSpec::EmbeddedFrames(_) => Ok(Vec::new()),
                };
                match found {
                    Ok(files) => row.push(Some(files)),
                    Err(p) => {
                        problems.push((i, p));
                        row.push(None);
                    }
                }
            }
            located.push(row);
        }
        let dir = self.dir.clone().unwrap_or_default();
        // Facts once per distinct file, in parallel.
        let mut files: BTreeMap<PathBuf, bool> = BTreeMap::new();
        for (m, row) in mapped.iter().zip(&located) {
            for (spec, found) in m.videos.iter().zip(row) {
                for f in found.iter().flatten() {
                    files.insert(f.clone(), matches!(spec, VideoSpec::File(_)));
                }
            }
        }
        type Fact = Result<(VideoRef, u64), String>;
        let facts: HashMap<PathBuf, Fact> = files
            .into_par_iter()
            .map(|(p, is_video)| {
                let r = if is_video {
                    video_file(&p).map(|v| (v, 0))
                } else {
                    frame(&p).map(|(img, size)| (VideoRef { frames: vec![img], ..VideoRef::default() }, size))
                };
                (p, r)
            })
            .collect();
        for (i, (m, row)) in mapped.iter_mut().zip(&located).enumerate() {
            let mut refs = Vec::with_capacity(m.videos.len());
            for (spec, found) in m.videos.iter().zip(row) {
                let Some(found) = found else { continue };
                match spec {
                    VideoSpec::File(p) => match &facts[&found[0]] {
                        Ok((v, _)) => refs.push(VideoRef { path: Some(relative(&dir, &found[0])), ..v.clone() }),
                        Err(e) => problems
                            .push((i, Problem::new(m.loc.clone(), format!("video \"{p}\" {e}")).field("videos"))),
                    },
                    VideoSpec::Frames(list) => {
                        let mut frames = Vec::with_capacity(found.len());
                        let mut total = 0u64;
                        let mut ok = true;
                        for (p, f) in list.iter().zip(found) {
                            match &facts[f] {
                                Ok((v, size)) => {
                                    let mut img = v.frames[0].clone();
                                    img.path = Some(relative(&dir, f));
                                    frames.push(img);
                                    total += size;
                                }
                                Err(e) => {
                                    ok = false;
                                    problems.push((
                                        i,
                                        Problem::new(m.loc.clone(), format!("video frame \"{p}\" {e}"))
                                            .field("video-frames"),
                                    ));
                                }
                            }
                        }
                        if ok {
                            refs.push(frames_video(frames, total));
                        }
                    }
                    VideoSpec::Embedded { bytes, path } => match embedded_video(bytes, path) {
                        Ok(v) => refs.push(v),
                        Err(e) => problems.push((
                            i,
                            Problem::new(
                                m.loc.clone(),
                                format!("the video embedded as \"{}\" {e}", path.as_deref().unwrap_or("")),
                            )
                            .field("videos"),
                        )),
                    },
                    VideoSpec::EmbeddedFrames(list) => {
                        let mut frames = Vec::with_capacity(list.len());
                        let mut total = 0u64;
                        for (k, (bytes, path)) in list.iter().enumerate() {
                            match embedded_frame(bytes, path) {
                                Ok(img) => {
                                    total += bytes.len() as u64;
                                    frames.push(img);
                                }
                                Err(e) => problems.push((
                                    i,
                                    Problem::new(m.loc.clone(), format!("embedded video frame {} {e}", k + 1))
                                        .field("video-frames"),
                                )),
                            }
                        }
                        if frames.len() == list.len() {
                            refs.push(frames_video(frames, total));
                        }
                    }
                }
            }
            m.sample.videos = refs;
        }
        problems
    }
}

/// A video given as frames: its hash is of its frames' hashes, in order (so
/// reordering the frames makes another video), its size their sizes added up,
/// its width and height the first frame's.
fn frames_video(frames: Vec<ImageRef>, size: u64) -> VideoRef {
    let sha256 = VideoRef::frames_sha256(&frames);
    let (width, height) = frames.first().map_or((None, None), |f| (f.width, f.height));
    // Frames keep what the data file records of them: path, sha256, where to
    // read them (or their bytes, read back from a data file).
    let frames: Vec<ImageRef> = frames
        .into_iter()
        .map(|f| ImageRef { path: f.path, bytes: f.bytes, sha256: f.sha256, source: f.source, ..ImageRef::default() })
        .collect();
    VideoRef {
        path: None,
        bytes: None,
        sha256: Some(sha256),
        size: Some(size),
        duration: None,
        fps: None,
        frame_count: Some(frames.len() as u64),
        width,
        height,
        codec: Some("frames".into()),
        frames,
        source: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/video").join(rel)
    }

    /// The facts of the generated fixtures, as ffmpeg made them: 8 frames at
    /// 4 per second, from the header alone.
    #[test]
    fn container_facts_of_mp4_and_webm() {
        let mp4 = container_facts(&fixture("videomme/videos/fFjv93ACGo8.mp4")).unwrap();
        assert_eq!((mp4.width, mp4.height, mp4.frame_count, mp4.codec.as_str()), (32, 32, Some(8), "avc1"));
        assert!((mp4.duration.unwrap() - 2.0).abs() < 1e-9, "{:?}", mp4.duration);
        assert!((mp4.fps.unwrap() - 4.0).abs() < 1e-9, "{:?}", mp4.fps);
        let mkv = container_facts(&fixture("mkv/clip.mkv")).unwrap();
        assert_eq!((mkv.width, mkv.height, mkv.frame_count, mkv.codec.as_str()), (32, 24, Some(8), "V_VP9"));
        assert!((mkv.duration.unwrap() - 2.0).abs() < 0.01, "{:?}", mkv.duration);
    }

    /// A file that is no video, an empty one and a cut one are errors that say
    /// what the file is, never a panic.
    #[test]
    fn unreadable_videos_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("a.mp4");
        std::fs::write(&text, "not a video").unwrap();
        assert_eq!(
            container_facts(&text).unwrap_err(),
            "is not a video in a container blindspot reads (MP4, MOV, MKV, WebM)"
        );
        let empty = dir.path().join("e.mp4");
        std::fs::write(&empty, "").unwrap();
        assert_eq!(container_facts(&empty).unwrap_err(), "is an empty file (0 bytes), not a video");
        let whole = std::fs::read(fixture("videomme/videos/fFjv93ACGo8.mp4")).unwrap();
        let cut = dir.path().join("cut.mp4");
        std::fs::write(&cut, &whole[..whole.len() / 3]).unwrap();
        let e = container_facts(&cut).unwrap_err();
        assert!(e.starts_with("is a damaged or truncated MP4: "), "{e}");
        assert!(e.ends_with("(re-export or re-download it)"), "{e}");
    }

    /// Frames make one video whose hash follows their order.
    #[test]
    fn a_frame_video_hashes_its_frames_in_order() {
        let frames: Vec<ImageRef> =
            (1..=4).map(|k| frame(&fixture(&format!("frames/videos/clip1_{k:02}.png"))).unwrap().0).collect();
        let v = frames_video(frames.clone(), 1);
        let mut reversed = frames;
        reversed.reverse();
        let r = frames_video(reversed, 1);
        assert_eq!(
            (v.frame_count, v.width, v.height, v.codec.as_deref()),
            (Some(4), Some(16), Some(16), Some("frames"))
        );
        assert_ne!(v.sha256, r.sha256);
    }
}
