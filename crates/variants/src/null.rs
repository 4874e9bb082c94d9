//! The null family (*Seeing is not reasoning*, section 2.3): the image is
//! replaced, the text is not.
//!
//! - `no_image`: images removed, prompt unchanged;
//! - `no_video`: videos removed (and the images, so the text stands alone);
//!   a question without a video is skipped;
//! - `white_image`: a white PNG of each image's width × height (512 × 512
//!   when the size is unknown or the sample has no image);
//! - `noise_image`: uniform RGB noise of the same sizes, seeded by
//!   (seed, sample id, image position) — byte-identical on every run;
//! - `caption`: images and videos removed, a user-supplied caption put in the prompt.
//!
//! On a video question, `white_image` and `noise_image` blank each frame of
//! a video given as frames (white, or noise seeded by (seed, sample id,
//! video, frame)) at the video's size; a video file cannot be blanked without
//! decoding and encoding it, so such a question is skipped (`no_video`
//! removes its video instead).
//!
//! PNGs are encoded with the `png` crate: noise without compression (it is
//! incompressible: deflate would only cost time), white with the `Up`
//! filter and fast deflate (all rows after the first become zeros), cached
//! per size since every white image of a size is the same bytes.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::{Ctx, Kind, Skip, caption_problem, derive, finish};
use crate::error::OnInvalid;
use crate::error::{Error, Location, Pos, Problem, Result, display_path};
use crate::sample::{ImageRef, Sample};
use crate::seed::rng_for;

/// Size of the generated image when the source has none (or its size is unknown).
pub const DEFAULT_SIZE: (u32, u32) = (512, 512);

/// Larger source images (by their header) are skipped, not generated: a
/// corrupt header must not make blindspot allocate gigabytes.
pub const MAX_PIXELS: u64 = 100_000_000;

/// The most noise PNG bytes one run generates (all of one kind's rows are in
/// memory until they are written): noise does not compress, so each image is
/// 3 bytes per pixel of its source. VQA-RAD's 451 questions need 878 MB.
pub const MAX_NOISE_BYTES: u64 = 1 << 30;

/// Refuses `noise_image` over `samples` when its images would pass
/// [`MAX_NOISE_BYTES`], naming the largest source image and its size, before
/// any is generated.
pub fn check_noise_budget(samples: &[&Sample]) -> Result<()> {
    let mut total = 0u64;
    let mut largest: Option<(u64, &Sample, usize, (u32, u32))> = None;
    for s in samples {
        let sizes = sizes(s);
        if too_large(&sizes) {
            continue;
        }
        for (i, &(w, h)) in sizes.iter().enumerate() {
            let bytes = u64::from(w) * u64::from(h) * 3;
            total += bytes;
            if largest.is_none_or(|(b, ..)| bytes > b) {
                largest = Some((bytes, s, i, (w, h)));
            }
        }
    }
    let Some((_, s, i, (w, h))) = largest.filter(|_| total > MAX_NOISE_BYTES) else { return Ok(()) };
    let image = s.images.get(i).and_then(|im| im.path.clone()).unwrap_or_else(|| "(an image of unknown size)".into());
    Err(Error::one(
        Problem::new(
            Location::file(&image),
            format!(
                "noise_image would generate {} MB of noise PNGs for {} questions, more than one run holds in memory \
                 ({} MB): noise is as large as its source image, and this one declares {w}×{h} pixels (question \"{}\")",
                total / 1_000_000,
                samples.len(),
                MAX_NOISE_BYTES / 1_000_000,
                s.id
            ),
        )
        .help("leave noise_image out of the kinds (white_image compresses and stays small), or downscale the source images"),
    ))
}

fn too_large(sizes: &[(u32, u32)]) -> bool {
    sizes.iter().any(|&(w, h)| w as u64 * h as u64 > MAX_PIXELS)
}

fn encode_png(
    width: u32,
    height: u32,
    rgb: &[u8],
    compression: png::Compression,
    filter: png::Filter,
    capacity: usize,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(capacity);
    let mut enc = png::Encoder::new(&mut out, width, height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(compression);
    enc.set_filter(filter);
    // Writing into a Vec cannot fail; the sizes come from u32 dimensions.
    let mut w = enc.write_header().expect("PNG header into memory");
    w.write_image_data(rgb).expect("PNG data into memory has the header's size");
    w.finish().expect("PNG end into memory");
    out
}

/// A white RGB PNG of `width` × `height`.
pub fn white_png(width: u32, height: u32) -> Vec<u8> {
    let rgb = vec![255u8; width as usize * height as usize * 3];
    encode_png(width, height, &rgb, png::Compression::Fast, png::Filter::Up, 4096)
}

thread_local! {
    /// Each thread's pixel buffer, reused from image to image: a fresh
    /// whole-image buffer per image doubled the page faults (measured).
    static PIXELS: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A uniform-noise RGB PNG of `width` × `height`, a pure function of `seed`.
pub fn noise_png(width: u32, height: u32, seed: u64) -> Vec<u8> {
    PIXELS.with_borrow_mut(|rgb| {
        rgb.resize(width as usize * height as usize * 3, 0);
        ChaCha8Rng::seed_from_u64(seed).fill_bytes(rgb);
        let capacity = rgb.len() + rgb.len() / 1024 + 4096;
        encode_png(width, height, rgb, png::Compression::NoCompression, png::Filter::NoFilter, capacity)
    })
}

fn image_ref(bytes: Vec<u8>, (width, height): (u32, u32)) -> ImageRef {
    ImageRef {
        path: None,
        sha256: Some(hex::encode(Sha256::digest(&bytes))),
        bytes: Some(bytes),
        width: Some(width),
        height: Some(height),
        // A drawn image is nobody's near-duplicate: not hashed.
        phash: None,
        dhash: None,
        source: None,
    }
}

/// The sizes of the images a null variant replaces: each image's own, the
/// default when unknown, one default image when the sample has none.
fn sizes(s: &Sample) -> Vec<(u32, u32)> {
    if s.images.is_empty() && !s.videos.is_empty() {
        // A video question's visual evidence is its video: no image is added.
        return Vec::new();
    }
    if s.images.is_empty() {
        return vec![DEFAULT_SIZE];
    }
    s.images
        .iter()
        .map(|i| match (i.width, i.height) {
            (Some(w), Some(h)) if w > 0 && h > 0 => (w, h),
            _ => DEFAULT_SIZE,
        })
        .collect()
}

fn size_params(sizes: &[(u32, u32)]) -> serde_json::Value {
    serde_json::json!({"sizes": sizes.iter().map(|(w, h)| [*w, *h]).collect::<Vec<_>>()})
}

/// The frame size of a video given as frames.
fn frame_size(v: &crate::sample::VideoRef) -> (u32, u32) {
    match (v.width, v.height) {
        (Some(w), Some(h)) if w > 0 && h > 0 => (w, h),
        _ => DEFAULT_SIZE,
    }
}

/// Why a video question cannot have its frames blanked.
pub(crate) const VIDEO_FILE_SKIP: &str = "a video file cannot be blanked without decoding it (no_video removes it)";

/// Replaces every frame of `r`'s videos by `frame(video, frame, size)`, and
/// the video's hash and size by the new frames'.
fn blank_frames(r: &mut Sample, mut frame: impl FnMut(usize, usize, (u32, u32)) -> ImageRef) {
    for (j, v) in r.videos.iter_mut().enumerate() {
        let wh = frame_size(v);
        v.frames = (0..v.frames.len()).map(|k| frame(j, k, wh)).collect();
        v.sha256 = Some(crate::sample::VideoRef::frames_sha256(&v.frames));
        v.size = Some(v.frames.iter().map(|f| f.bytes.as_ref().map_or(0, Vec::len) as u64).sum());
        v.path = None;
        v.source = None;
    }
}

fn frame_params(s: &Sample, sizes: &[(u32, u32)]) -> serde_json::Value {
    let mut p = size_params(sizes);
    if !s.videos.is_empty() {
        p["frames"] = s
            .videos
            .iter()
            .map(|v| {
                let (w, h) = frame_size(v);
                serde_json::json!([w, h, v.frames.len()])
            })
            .collect();
    }
    p
}

pub fn no_video(s: &Sample) -> std::result::Result<Sample, Skip> {
    if s.videos.is_empty() {
        return Err("the question has no video to remove");
    }
    let mut r = derive(s, Kind::NoVideo, serde_json::json!({}));
    r.videos.clear();
    r.images.clear();
    Ok(finish(r))
}

pub fn no_image(s: &Sample) -> std::result::Result<Sample, Skip> {
    if s.images.is_empty() {
        return Err("the question has no image to remove");
    }
    let mut r = derive(s, Kind::NoImage, serde_json::json!({}));
    r.images.clear();
    Ok(finish(r))
}

/// White PNGs by size, made once.
pub struct WhiteCache(HashMap<(u32, u32), ImageRef>);

impl WhiteCache {
    pub fn new(samples: &[&Sample]) -> Self {
        let sizes: BTreeSet<(u32, u32)> = samples
            .iter()
            .map(|s| sizes(s).into_iter().chain(s.videos.iter().map(frame_size)).collect::<Vec<_>>())
            .filter(|s| !too_large(s))
            .flatten()
            .collect();
        let sizes: Vec<(u32, u32)> = sizes.into_iter().collect();
        WhiteCache(sizes.par_iter().map(|&(w, h)| ((w, h), image_ref(white_png(w, h), (w, h)))).collect())
    }
}

pub fn white_image(s: &Sample, cache: &WhiteCache) -> std::result::Result<Sample, Skip> {
    let sizes = sizes(s);
    if too_large(&sizes) {
        return Err("an image larger than 100 MPixel");
    }
    if s.videos.iter().any(|v| v.frames.is_empty()) {
        return Err(VIDEO_FILE_SKIP);
    }
    if s.videos.iter().any(|v| too_large(&[frame_size(v)])) {
        return Err("a video frame larger than 100 MPixel");
    }
    let mut r = derive(s, Kind::WhiteImage, frame_params(s, &sizes));
    let white = |wh: &(u32, u32)| cache.0.get(wh).cloned().expect("cache holds every sample's sizes");
    r.images = sizes.iter().map(white).collect();
    blank_frames(&mut r, |_, _, wh| white(&wh));
    Ok(finish(r))
}

pub fn noise_image(s: &Sample, ctx: &Ctx<'_>) -> std::result::Result<Sample, Skip> {
    let sizes = sizes(s);
    if too_large(&sizes) {
        return Err("an image larger than 100 MPixel");
    }
    if s.videos.iter().any(|v| v.frames.is_empty()) {
        return Err(VIDEO_FILE_SKIP);
    }
    if s.videos.iter().any(|v| too_large(&[frame_size(v)])) {
        return Err("a video frame larger than 100 MPixel");
    }
    let stage = Kind::NoiseImage.stage();
    let mut r = derive(s, Kind::NoiseImage, frame_params(s, &sizes));
    r.images = sizes
        .iter()
        .enumerate()
        .map(|(i, &(w, h))| image_ref(noise_png(w, h, rng_for(ctx.seed, &stage, &format!("{}#{i}", s.id))), (w, h)))
        .collect();
    blank_frames(&mut r, |j, k, (w, h)| {
        image_ref(noise_png(w, h, rng_for(ctx.seed, &stage, &format!("{}#video{j}#frame{k}", s.id))), (w, h))
    });
    Ok(finish(r))
}

pub fn caption(s: &Sample, ctx: &Ctx<'_>) -> std::result::Result<Sample, Skip> {
    if !ctx.caption_source {
        return Err("no caption source given ([variants.captions])");
    }
    let Some(text) = ctx.captions.get(&s.id) else { return Err("no caption for this sample") };
    let mut r = derive(s, Kind::Caption, serde_json::json!({"caption": text}));
    r.images.clear();
    r.videos.clear();
    Ok(finish(r))
}

/// Reads the captions `src` names, checked against the samples' ids: a
/// caption of an unknown id or one that is not text is a located problem —
/// all of them reported at once, or (`on-invalid = "skip"`) left out and
/// counted in `warnings`.
pub fn load_captions(
    src: &super::CaptionSource,
    samples: &[&Sample],
    on_invalid: OnInvalid,
    warnings: &mut Vec<String>,
) -> Result<HashMap<String, String>> {
    match src {
        super::CaptionSource::Meta(field) => Ok(samples
            .iter()
            .filter_map(|s| s.meta.get(field).filter(|c| !c.trim().is_empty()).map(|c| (s.id.clone(), c.clone())))
            .collect()),
        super::CaptionSource::File { path, key } => {
            load_caption_file(path, key.as_deref(), samples, on_invalid, warnings)
        }
    }
}

fn load_caption_file(
    path: &Path,
    key: Option<&str>,
    samples: &[&Sample],
    on_invalid: OnInvalid,
    warnings: &mut Vec<String>,
) -> Result<HashMap<String, String>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        let loc = Location { file: display_path(path).into(), pos: Pos::LineCol(e.line() as u64, e.column() as u64) };
        Error::one(caption_problem(loc, format!("invalid JSON: {e}")))
    })?;
    let mut obj = &doc;
    if let Some(key) = key {
        for part in key.split('.') {
            obj = obj.get(part).ok_or_else(|| {
                Error::one(
                    caption_problem(Location::file(path), format!("no \"{part}\" in the caption file (key \"{key}\")"))
                        .help("set [variants.captions] key to the dotted path of the object {id: caption}"),
                )
            })?;
        }
    }
    let Some(map) = obj.as_object() else {
        let what = key.map_or("the file".to_string(), |k| format!("\"{k}\""));
        return Err(Error::one(
            caption_problem(Location::file(path), format!("{what} is not a JSON object of {{sample id: caption}}"))
                .help("captions are read as {\"<id>\": \"<caption>\", ...}; set key to where that object sits"),
        ));
    };
    let known: std::collections::HashSet<&str> = samples.iter().map(|s| s.id.as_str()).collect();
    let mut captions = HashMap::new();
    let mut bad: Vec<(&str, String)> = Vec::new();
    let (mut unknown, mut not_text) = (0usize, 0usize);
    for (id, v) in map {
        match v.as_str().filter(|c| !c.trim().is_empty()) {
            None => {
                not_text += 1;
                bad.push((id, format!("the caption of \"{id}\" is not a non-empty string")));
            }
            Some(_) if !known.contains(id.as_str()) => {
                unknown += 1;
                bad.push((id, format!("caption for \"{id}\", which is not a sample id of the benchmark")));
            }
            Some(c) => {
                captions.insert(id.clone(), c.to_string());
            }
        }
    }
    if bad.is_empty() {
        return Ok(captions);
    }
    if on_invalid == OnInvalid::Skip {
        warnings.push(format!(
            "caption: {} captions in {} left out ({unknown} name unknown sample ids, {not_text} are not text)",
            bad.len(),
            display_path(path)
        ));
        return Ok(captions);
    }
    let lines = key_lines(&text);
    let problems: Vec<Problem> = bad
        .into_iter()
        .map(|(id, msg)| {
            let loc = match lines.get(id) {
                Some(&l) => Location::line(path, l),
                None => Location::file(path),
            };
            caption_problem(loc, msg)
                .help("fix the id, or set [variants] on-invalid = \"skip\" to leave such captions out with a count")
        })
        .collect();
    Err(Error::Invalid(problems))
}

/// First line of every object key in a JSON text (keys without escapes).
fn key_lines(text: &str) -> HashMap<&str, u64> {
    let b = text.as_bytes();
    let mut out = HashMap::new();
    let (mut i, mut line) = (0usize, 1u64);
    while i < b.len() {
        match b[i] {
            b'\n' => line += 1,
            b'"' => {
                let start = i + 1;
                let mut j = start;
                let mut escaped = false;
                while j < b.len() && b[j] != b'"' {
                    if b[j] == b'\\' {
                        escaped = true;
                        j += 1;
                    } else if b[j] == b'\n' {
                        line += 1;
                    }
                    j += 1;
                }
                let end = j.min(b.len());
                let mut k = end + 1;
                while k < b.len() && matches!(b[k], b' ' | b'\t' | b'\r') {
                    k += 1;
                }
                if !escaped && k < b.len() && b[k] == b':' {
                    out.entry(&text[start..end]).or_insert(line);
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let dec = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut r = dec.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        (info.width, info.height, buf[..info.buffer_size()].to_vec())
    }

    #[test]
    fn white_and_noise_decode_to_their_size() {
        let (w, h, px) = decode(&white_png(7, 3));
        assert_eq!((w, h), (7, 3));
        assert!(px.iter().all(|&p| p == 255));
        let a = noise_png(5, 4, 1);
        let (w, h, px) = decode(&a);
        assert_eq!((w, h, px.len()), (5, 4, 60));
        assert_eq!(a, noise_png(5, 4, 1), "same seed, same bytes");
        assert_ne!(a, noise_png(5, 4, 2));
    }

    #[test]
    fn noise_past_the_budget_is_refused_before_any_is_made() {
        let big = |id: &str| {
            let mut s = Sample::new(id, "q", "a");
            s.images.push(ImageRef {
                path: Some("big.png".into()),
                width: Some(8000),
                height: Some(5000),
                ..Default::default()
            });
            s
        };
        let few: Vec<Sample> = (0..8).map(|i| big(&format!("q{i}"))).collect();
        check_noise_budget(&few.iter().collect::<Vec<_>>()).unwrap();
        let many: Vec<Sample> = (0..9).map(|i| big(&format!("q{i}"))).collect();
        let e = check_noise_budget(&many.iter().collect::<Vec<_>>()).unwrap_err().to_string();
        assert!(e.contains("big.png: noise_image would generate 1080 MB"), "{e}");
        assert!(e.contains("8000×5000") && e.contains("\"q0\""), "{e}");
    }

    #[test]
    fn absurd_sizes_are_skipped_not_allocated() {
        let mut s = Sample::new("1", "q", "a");
        s.images.push(ImageRef { width: Some(100_000), height: Some(100_000), ..Default::default() });
        let cache = WhiteCache::new(&[&s]);
        assert_eq!(white_image(&s, &cache).unwrap_err(), "an image larger than 100 MPixel");
    }

    #[test]
    fn key_lines_finds_keys() {
        let t = "{\n \"captions\": {\n  \"1\": \"a \\\"b\\\"\",\n  \"2\" : \"c\"\n }\n}";
        let l = key_lines(t);
        assert_eq!((l["captions"], l["1"], l["2"]), (2, 3, 4));
        assert!(!l.contains_key("c"));
    }
}
