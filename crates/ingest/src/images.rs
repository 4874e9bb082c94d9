//! Image resolution: each sample's image names → files under the pipeline's
//! image folder (found by relative path, else by file name anywhere below it,
//! walked once with `walkdir`), with sha256, width and height, and the
//! perceptual hashes of the decoded pixels (`image_hasher`). The pixel limit
//! is checked on the header's size (`imagesize`), before anything is decoded;
//! the width, height and hashes recorded are the image's upright, with its EXIF
//! orientation applied, as Hugging Face `datasets` and PIL's
//! `ImageOps.exif_transpose` show it (the sha256 stays the file's).
//! A file reached through a symbolic link must lie inside the image folder too.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::mapping::{ImageSpec, Mapped};
use crate::error::{Problem, display_path};
use crate::sample::{ImageRef, image_hash};

/// The largest image blindspot accepts by default, in pixels (a 10,000 × 10,000
/// scan, 400 MB once decoded to RGBA); `[ingest] max-image-pixels` sets another
/// limit.
pub const MAX_PIXELS: u64 = 100_000_000;

/// Facts about one encoded image.
#[derive(Debug, Clone)]
struct Facts {
    sha256: String,
    /// Upright: with the EXIF orientation applied where the image decodes.
    width: u32,
    height: u32,
    /// Why its pixel data does not decode, when its header does.
    body_error: Option<String>,
    /// (phash, dhash) of the decoded image; `None` when it does not decode or
    /// is in a format blindspot reads the header of but cannot decode.
    hashes: Option<(u64, u64)>,
    /// The format, when it is one blindspot cannot decode (no hashes then).
    undecoded_format: Option<String>,
}

/// The perceptual hashes of a decoded image, both 8 × 8 on its grayscale
/// (converted once): DCT thresholded at the median (`phash`) and the row
/// differences (`dhash`), as `image_hasher` computes them.
pub fn perceptual_hashes(img: &image::DynamicImage) -> (u64, u64) {
    use image_hasher::{HashAlg, HasherConfig};
    thread_local! {
        static HASHERS: (image_hasher::Hasher, image_hasher::Hasher) = (
            HasherConfig::new().hash_size(8, 8).hash_alg(HashAlg::Median).preproc_dct().to_hasher(),
            HasherConfig::new().hash_size(8, 8).hash_alg(HashAlg::Gradient).to_hasher(),
        );
    }
    let gray = image::DynamicImage::ImageLuma8(img.to_luma8());
    let word = |h: image_hasher::ImageHash| {
        let b = h.as_bytes();
        b.iter().take(8).fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
    };
    HASHERS.with(|(p, d)| (word(p.hash_image(&gray)), word(d.hash_image(&gray))))
}

/// An image's perceptual hashes and its upright width and height.
type Decoded = ((u64, u64), (u32, u32));

/// Decodes an image (its size already checked against the pixel limit), turns
/// it upright by its EXIF orientation and hashes it: `Ok(None)` for a format
/// blindspot has no decoder for. An orientation tag that does not read leaves
/// the image as stored, as PIL does.
fn decode_and_hash(bytes: &[u8]) -> Result<Option<Decoded>, String> {
    use image::ImageDecoder;
    let reader =
        image::ImageReader::new(std::io::Cursor::new(bytes)).with_guessed_format().map_err(|e| e.to_string())?;
    if reader.format().is_none() {
        return Ok(None);
    }
    let decoded = reader.into_decoder().and_then(|mut decoder| {
        let orientation = decoder.orientation().unwrap_or(image::metadata::Orientation::NoTransforms);
        let mut img = image::DynamicImage::from_decoder(decoder)?;
        img.apply_orientation(orientation);
        Ok(img)
    });
    match decoded {
        Ok(img) => Ok(Some((perceptual_hashes(&img), (img.width(), img.height())))),
        Err(image::ImageError::Unsupported(_)) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Whether a JPEG's data runs to its end-of-image marker. The JPEG decoder
/// fills a scan cut short with grey and reports nothing, so a truncated
/// download would be hashed as another picture. The marker segments are
/// walked to the first scan (an EXIF thumbnail before it carries an end
/// marker of its own); after it, the entropy-coded data escapes every 0xFF, so
/// the bytes FF D9 there are the end marker. A layout this walk does not follow
/// is left to the decoder.
fn jpeg_body_error(bytes: &[u8]) -> Option<String> {
    if !bytes.starts_with(&[0xff, 0xd8]) {
        return None;
    }
    let truncated = || {
        Some(format!(
            "truncated: its {} bytes end before the JPEG's end-of-image marker (re-export or re-download it)",
            bytes.len()
        ))
    };
    let mut i = 2;
    let scan = loop {
        while bytes.get(i) == Some(&0xff) && bytes.get(i + 1) == Some(&0xff) {
            i += 1;
        }
        let (Some(&0xff), Some(&marker)) = (bytes.get(i), bytes.get(i + 1)) else {
            return if i + 1 >= bytes.len() { truncated() } else { None };
        };
        match marker {
            // Markers without a length.
            0x01 | 0xd0..=0xd8 => i += 2,
            0xd9 => return None,
            _ => {
                let (Some(&hi), Some(&lo)) = (bytes.get(i + 2), bytes.get(i + 3)) else { return truncated() };
                let next = i + 2 + usize::from(u16::from_be_bytes([hi, lo]));
                if marker == 0xda {
                    break next;
                }
                i = next;
            }
        }
    };
    match bytes.get(scan..) {
        Some(data) if data.windows(2).any(|w| w == [0xff, 0xd9]) => None,
        _ => truncated(),
    }
}

/// Whether a PNG's pixel data decodes to its end: a truncated or damaged body
/// passes the header check. Other formats are checked by their header.
fn png_body_error(bytes: &[u8]) -> Option<String> {
    if !bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return None;
    }
    let mut reader = match png::Decoder::new(std::io::Cursor::new(bytes)).read_info() {
        Ok(r) => r,
        Err(e) => return Some(e.to_string()),
    };
    let mut buf = vec![0; reader.output_buffer_size()?];
    reader.next_frame(&mut buf).err().map(|e| e.to_string())
}

fn facts(bytes: &[u8], max_pixels: u64) -> Result<Facts, String> {
    if bytes.is_empty() {
        return Err("is an empty file (0 bytes), not an image".to_string());
    }
    let size = imagesize::blob_size(bytes).map_err(|e| match e {
        imagesize::ImageError::NotSupported => {
            "is not an image in a format blindspot can read (PNG, JPEG, GIF, WebP, BMP, TIFF, ...)".to_string()
        }
        imagesize::ImageError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => format!(
            "is a truncated image: its {} bytes end inside the header (re-export or re-download it)",
            bytes.len()
        ),
        other => format!("is not a readable image: {other}"),
    })?;
    // Headers are read, not decoded: a tiny file may declare a huge canvas, which
    // the variants that decode or draw images would then allocate.
    let pixels = (size.width as u64).saturating_mul(size.height as u64);
    if pixels > max_pixels {
        return Err(format!(
            "declares {}x{} pixels ({}), more than the {} blindspot reads ([ingest] max-image-pixels)",
            size.width,
            size.height,
            pixel_count(pixels),
            pixel_count(max_pixels)
        ));
    }
    let mut body_error = png_body_error(bytes).or_else(|| jpeg_body_error(bytes));
    let (mut hashes, mut undecoded_format) = (None, None);
    let (mut width, mut height) =
        (u32::try_from(size.width).unwrap_or(u32::MAX), u32::try_from(size.height).unwrap_or(u32::MAX));
    if body_error.is_none() {
        match decode_and_hash(bytes) {
            Ok(Some((h, upright))) => {
                hashes = Some(h);
                (width, height) = upright;
            }
            Ok(None) => {
                undecoded_format =
                    Some(imagesize::image_type(bytes).map_or_else(|_| "unknown".to_string(), |t| format!("{t:?}")))
            }
            Err(why) => body_error = Some(why),
        }
    }
    Ok(Facts { sha256: hex::encode(Sha256::digest(bytes)), width, height, body_error, hashes, undecoded_format })
}

/// A number of pixels as a person reads it: whole megapixels, else every
/// digit in groups of three (a rounded figure could equal the limit it exceeds).
fn pixel_count(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        return format!("{} megapixels", n / 1_000_000);
    }
    let digits = n.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{grouped} pixels")
}

/// Index of every file below the image folder by file name.
pub(crate) fn index_by_name(dir: &Path) -> HashMap<String, Vec<PathBuf>> {
    let mut by_name: HashMap<String, Vec<PathBuf>> = HashMap::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name().into_iter().flatten() {
        // A link to a file is indexed too: where it leads is checked when it is used.
        if (entry.file_type().is_file() || (entry.path_is_symlink() && entry.path().is_file()))
            && let Some(name) = entry.file_name().to_str()
        {
            by_name.entry(name.to_string()).or_default().push(entry.into_path());
        }
    }
    by_name
}

/// `path` relative to `dir`, with `/` separators (never absolute in data files).
pub(crate) fn relative(dir: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(dir).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// Whether an image path is absolute or climbs with `..`: it would name a file
/// outside whatever folder it is relative to.
pub(crate) fn escapes(p: &str) -> bool {
    Path::new(p).components().any(|c| {
        matches!(c, std::path::Component::ParentDir | std::path::Component::RootDir | std::path::Component::Prefix(_))
    })
}

/// Resolves samples' images against one image folder, batch after batch; the
/// folder is indexed by file name once, when a path first needs it.
pub struct Resolver {
    dir: Option<PathBuf>,
    /// The folder with every link resolved, once: what a file must lie under.
    real_dir: Option<PathBuf>,
    index: Option<HashMap<String, Vec<PathBuf>>>,
    /// Paths without an image folder are kept as names (else they are errors).
    names_only: bool,
    /// The folder is the input's own: paths are looked up as written, and one
    /// not found there is kept as its name (noted).
    beside: bool,
    max_pixels: u64,
    /// Images whose header reads but whose pixel data does not decode, with why.
    pub undecodable: BTreeMap<String, String>,
    /// Images in a format whose header reads but which is not decoded (so not
    /// hashed), with the format.
    pub unhashed: BTreeMap<String, String>,
}

impl Resolver {
    pub fn new(dir: Option<PathBuf>, names_only: bool, max_pixels: u64) -> Resolver {
        let real_dir = dir.as_ref().map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone()));
        Resolver {
            dir,
            real_dir,
            index: None,
            names_only,
            beside: false,
            max_pixels,
            undecodable: BTreeMap::new(),
            unhashed: BTreeMap::new(),
        }
    }

    /// The folder is the input file's own (see [`crate::plan::IngestPlan::images_beside`]).
    pub fn beside(mut self, beside: bool) -> Resolver {
        self.beside = beside;
        self
    }

    /// Resolves every sample's images in place; returns (sample index, problem) pairs.
    pub fn resolve(&mut self, mapped: &mut [Mapped]) -> Vec<(usize, Problem)> {
        resolve(mapped, self)
    }
}

/// When `file` (below `dir`) leads outside `real_dir` through a symbolic link: the
/// link (the file itself or a folder on its way) and where it leads.
pub(crate) fn link_outside(dir: &Path, real_dir: &Path, file: &Path) -> Option<(PathBuf, PathBuf)> {
    let real = std::fs::canonicalize(file).ok()?;
    if real.starts_with(real_dir) {
        return None;
    }
    let rel = file.strip_prefix(dir).unwrap_or(file);
    let mut at = dir.to_path_buf();
    for c in rel.components() {
        at.push(c);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            let target = std::fs::read_link(&at).unwrap_or_else(|_| real.clone());
            return Some((at, target));
        }
    }
    Some((file.to_path_buf(), real))
}

/// Which file each image named by path is, per sample (`None` for an image given
/// otherwise, one that escapes its folder, or one not found); what is wrong with a
/// path goes to `problems`, and paths kept as names because they are not beside the
/// input to `unread` (sample index, spec index).
fn locate(
    mapped: &[Mapped],
    r: &mut Resolver,
    problems: &mut Vec<(usize, Problem)>,
    unread: &mut std::collections::BTreeSet<(usize, usize)>,
) -> Vec<Vec<Option<PathBuf>>> {
    let dir = r.dir.clone();
    let dir = dir.as_deref();
    let beside = r.beside;
    let mut located: Vec<Vec<Option<PathBuf>>> = Vec::with_capacity(mapped.len());
    for (i, m) in mapped.iter().enumerate() {
        let mut row = Vec::new();
        for (k, spec) in m.images.iter().enumerate() {
            let ImageSpec::Path(p) = spec else {
                row.push(None);
                continue;
            };
            // An image path names a file inside the image folder, never outside it;
            // without a folder it is kept as given, so it must already be relative
            // and free of '..' (the canonical record's paths never leave their root).
            let escapes = escapes(p);
            // The input's own folder was not chosen: the path leaves the benchmark.
            match (escapes, dir.filter(|_| !beside)) {
                (true, Some(_)) => problems.push((
                    i,
                    Problem::new(mapped[i].sample_loc(), format!("image path \"{p}\" leads outside the image folder"))
                        .field("images")
                        .help("image paths are relative to [ingest] images (no leading '/', no '..'); move the images inside it"),
                )),
                (true, None) => problems.push((
                    i,
                    Problem::new(
                        mapped[i].sample_loc(),
                        format!(
                            "image path \"{p}\" leads outside the benchmark ({}), and no [ingest] images folder is set",
                            if Path::new(p).has_root() { "absolute" } else { "with '..'" }
                        ),
                    )
                    .field("images")
                    .help(
                        "a release keeps image paths relative: give [ingest] images = \"<folder>\" and write the paths \
                         relative to it (no leading '/', no '..')",
                    ),
                )),
                (false, _) => {}
            }
            let (false, Some(dir)) = (escapes, dir) else {
                row.push(None);
                continue;
            };
            let direct = dir.join(p);
            let found = if direct.is_file() {
                Some(direct)
            } else if beside {
                // A name found elsewhere below the input's folder could be another
                // file of that name: only a path as written counts.
                unread.insert((i, k));
                None
            } else {
                let name = Path::new(p).file_name().and_then(|n| n.to_str()).unwrap_or(p);
                let idx = r.index.get_or_insert_with(|| index_by_name(dir));
                match idx.get(name).map(Vec::as_slice) {
                    Some([one]) => Some(one.clone()),
                    Some(many) => {
                        problems.push((
                            i,
                            Problem::new(
                                mapped[i].sample_loc(),
                                format!("image \"{p}\" matches {} files under {}", many.len(), display_path(dir)),
                            )
                            .field("images")
                            .help("give the image's path relative to the image folder"),
                        ));
                        None
                    }
                    None => {
                        problems.push((
                            i,
                            Problem::new(
                                mapped[i].sample_loc(),
                                format!("image \"{p}\" not found under {}", display_path(dir)),
                            )
                            .field("images")
                            .help("check [ingest] images and the image field"),
                        ));
                        None
                    }
                }
            };
            // A link may stay inside the folder; one that leads out of it would
            // publish a file the benchmark does not hold.
            let real_dir = r.real_dir.as_deref().unwrap_or(dir);
            match found.as_deref().and_then(|f| link_outside(dir, real_dir, f)) {
                Some((link, target)) => {
                    problems.push((
                        i,
                        Problem::new(
                            mapped[i].sample_loc(),
                            format!(
                                "image \"{p}\" is reached through the symbolic link {} to {}, outside the image \
                                 folder {}",
                                display_path(&link),
                                display_path(&target),
                                display_path(dir)
                            ),
                        )
                        .field("images")
                        .help("copy the image into the image folder, or set [ingest] images to a folder that holds it"),
                    ));
                    row.push(None);
                }
                None => row.push(found),
            }
        }
        located.push(row);
    }
    located
}

fn resolve(mapped: &mut [Mapped], r: &mut Resolver) -> Vec<(usize, Problem)> {
    let dir = r.dir.clone();
    let dir = dir.as_deref();
    let (names_only, max_pixels) = (r.names_only, r.max_pixels);
    let mut problems = Vec::new();
    // Paths kept as names: not found beside the input (sample index, spec index).
    let mut unread: std::collections::BTreeSet<(usize, usize)> = std::collections::BTreeSet::new();
    // Which file each path-named image is, per sample.
    let located = locate(mapped, r, &mut problems, &mut unread);

    // Facts once per distinct file, in parallel.
    let files: BTreeMap<PathBuf, ()> = located.iter().flatten().flatten().map(|p| (p.clone(), ())).collect();
    let file_facts: HashMap<PathBuf, Result<Facts, String>> = files
        .into_par_iter()
        .map(|(p, ())| {
            let r = std::fs::read(&p).map_err(|e| format!("cannot be read: {e}")).and_then(|b| facts(&b, max_pixels));
            (p, r)
        })
        .collect();

    for (i, (m, row)) in mapped.iter_mut().zip(&located).enumerate() {
        let mut refs = Vec::with_capacity(m.images.len());
        for (k, (spec, file)) in m.images.iter().zip(row).enumerate() {
            match (spec, file) {
                (ImageSpec::Path(p), None) if unread.contains(&(i, k)) => {
                    m.notes.push(std::borrow::Cow::Borrowed(super::mapping::NOTE_IMAGE_NOT_BESIDE));
                    refs.push(ImageRef { path: Some(p.clone()), ..Default::default() });
                }
                (ImageSpec::Path(p), Some(file)) => match &file_facts[file] {
                    Ok(f) => {
                        if let Some(why) = &f.body_error {
                            m.notes.push(std::borrow::Cow::Borrowed(super::mapping::NOTE_UNDECODABLE));
                            r.undecodable
                                .entry(relative(dir.unwrap_or(Path::new("")), file))
                                .or_insert_with(|| why.clone());
                        }
                        if let Some(format) = &f.undecoded_format {
                            r.unhashed
                                .entry(relative(dir.unwrap_or(Path::new("")), file))
                                .or_insert_with(|| format.clone());
                        }
                        refs.push(ImageRef {
                            path: Some(relative(dir.unwrap_or(Path::new("")), file)),
                            bytes: None,
                            sha256: Some(f.sha256.clone()),
                            width: Some(f.width),
                            height: Some(f.height),
                            phash: f.hashes.map(|h| image_hash::to_hex(h.0)),
                            dhash: f.hashes.map(|h| image_hash::to_hex(h.1)),
                            source: Some(file.clone()),
                        })
                    }
                    Err(e) => {
                        problems.push((i, Problem::new(m.sample_loc(), format!("image \"{p}\" {e}")).field("images")))
                    }
                },
                (ImageSpec::Path(p), None) => {
                    if dir.is_none() && !escapes(p) {
                        if names_only {
                            m.notes.push(std::borrow::Cow::Borrowed(super::mapping::NOTE_IMAGE_NAMES_ONLY));
                            refs.push(ImageRef { path: Some(p.clone()), ..Default::default() });
                        } else {
                            problems.push((
                                i,
                                Problem::new(
                                    m.sample_loc(),
                                    format!("image \"{p}\" is named by path, but no image folder is set"),
                                )
                                .field("images")
                                .help(
                                    "set [ingest] images = \"<the folder that holds the images>\" (relative to the \
                                     pipeline file); if the image files are not at hand, set [ingest] \
                                     image-names-only = true to keep their names (no release can be built then)",
                                ),
                            ));
                        }
                    }
                }
                (ImageSpec::Bytes { bytes, path }, _) => match facts(bytes, max_pixels) {
                    Ok(f) => refs.push({
                        if let Some(why) = &f.body_error {
                            m.notes.push(std::borrow::Cow::Borrowed(super::mapping::NOTE_UNDECODABLE));
                            let name = format!("{} (embedded)", m.loc);
                            r.undecodable.entry(name).or_insert_with(|| why.clone());
                        }
                        if let Some(format) = &f.undecoded_format {
                            r.unhashed.entry(format!("{} (embedded)", m.loc)).or_insert_with(|| format.clone());
                        }
                        ImageRef {
                            // The path of embedded bytes is a label, never opened; one that
                            // leaves its root keeps its file name only, as Hugging Face
                            // `datasets` does when it embeds image files.
                            path: match path {
                                Some(p) if escapes(p) => {
                                    m.notes.push(std::borrow::Cow::Borrowed(super::mapping::NOTE_IMAGE_LABEL_NAME));
                                    Path::new(p).file_name().map(|n| n.to_string_lossy().into_owned())
                                }
                                other => other.clone(),
                            },
                            bytes: Some(bytes.clone()),
                            sha256: Some(f.sha256),
                            width: Some(f.width),
                            height: Some(f.height),
                            phash: f.hashes.map(|h| image_hash::to_hex(h.0)),
                            dhash: f.hashes.map(|h| image_hash::to_hex(h.1)),
                            source: None,
                        }
                    }),
                    Err(e) => {
                        problems.push((i, Problem::new(m.sample_loc(), format!("embedded image {e}")).field("images")))
                    }
                },
            }
        }
        m.sample.images = refs;
    }
    problems
}

impl Mapped {
    fn sample_loc(&self) -> crate::error::Location {
        self.loc.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_header_gives_dimensions() {
        // 1×1 PNG
        let png = base64_png();
        let f = facts(&png, MAX_PIXELS).unwrap();
        assert_eq!((f.width, f.height), (1, 1));
        assert!(facts(b"not an image at all", MAX_PIXELS).is_err());
        assert_eq!(f.body_error, None);
        // A damaged body behind a good header: its pixel data does not decode.
        let mut damaged = png.clone();
        let at = damaged.len() - 20;
        damaged[at] ^= 0xff;
        assert!(facts(&damaged, MAX_PIXELS).unwrap().body_error.is_some());
        let e = facts(&png, 0).unwrap_err();
        assert_eq!(
            e,
            "declares 1x1 pixels (1 pixels), more than the 0 pixels blindspot reads ([ingest] max-image-pixels)"
        );
    }

    /// The default limit is 100 megapixels: a header declaring one pixel more is
    /// refused, by its declared size, without decoding anything.
    #[test]
    fn the_default_pixel_limit_is_100_megapixels() {
        let mut png = base64_png();
        png[16..24].copy_from_slice(&[0, 0, 0x27, 0x10, 0, 0, 0x27, 0x10]);
        assert_eq!((facts(&png, MAX_PIXELS).unwrap().width, facts(&png, MAX_PIXELS).unwrap().height), (10_000, 10_000));
        png[16..24].copy_from_slice(&[0, 0, 0x27, 0x11, 0, 0, 0x27, 0x10]);
        assert_eq!(
            facts(&png, MAX_PIXELS).unwrap_err(),
            "declares 10001x10000 pixels (100,010,000 pixels), more than the 100 megapixels blindspot reads ([ingest] \
             max-image-pixels)"
        );
    }

    /// A link to a folder is no image: a file of the same name elsewhere in the
    /// image folder is found by its name alone.
    #[test]
    fn a_link_to_a_folder_is_not_indexed_as_an_image() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        std::fs::create_dir_all(dir.path().join("b")).unwrap();
        std::fs::write(dir.path().join("a/x.png"), base64_png()).unwrap();
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("b/x.png")).unwrap();
        let idx = index_by_name(dir.path());
        assert_eq!(idx["x.png"], [dir.path().join("a/x.png")]);
    }

    /// A 64 x 32 JPEG of a diagonal gradient with a dark square near one corner.
    fn jpeg(exif_orientation: Option<u8>) -> (Vec<u8>, image::DynamicImage) {
        let img = image::DynamicImage::ImageRgb8(image::RgbImage::from_fn(64, 32, |x, y| {
            let v = if x < 12 && y < 12 { 20 } else { (x * 3 + y * 2) as u8 };
            image::Rgb([v, v / 2, 255 - v])
        }));
        let mut out = std::io::Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Jpeg).unwrap();
        let mut bytes = out.into_inner();
        if let Some(o) = exif_orientation {
            // APP1 "Exif" with a little-endian TIFF header and one IFD entry:
            // Orientation (0x0112), SHORT, count 1, value o.
            let mut app1 = vec![0xff, 0xe1, 0, 34];
            app1.extend_from_slice(b"Exif\0\0II\x2a\0\x08\0\0\0\x01\0\x12\x01\x03\0\x01\0\0\0");
            app1.extend_from_slice(&[o, 0, 0, 0, 0, 0, 0, 0]);
            assert_eq!(app1.len(), 36);
            bytes.splice(2..2, app1);
        }
        (bytes, img)
    }

    /// A JPEG cut short decodes without complaint (the decoder fills the rest
    /// with grey), so it is caught by its missing end marker and warned about
    /// as a damaged PNG is; the whole file is not.
    #[test]
    fn a_truncated_jpeg_is_undecodable() {
        let (whole, _) = jpeg(None);
        let f = facts(&whole, MAX_PIXELS).unwrap();
        assert_eq!((f.body_error, f.hashes.is_some(), f.width, f.height), (None, true, 64, 32));
        // Cut inside the scan: a cut inside the header tables already failed to decode.
        let cut = &whole[..whole.len() - 100];
        let f = facts(cut, MAX_PIXELS).unwrap();
        assert_eq!(
            f.body_error,
            Some(format!(
                "truncated: its {} bytes end before the JPEG's end-of-image marker (re-export or re-download it)",
                cut.len()
            ))
        );
        assert_eq!(f.hashes, None);
        // An EXIF segment before the scan does not hide the cut.
        let (tagged, _) = jpeg(Some(1));
        assert_eq!(facts(&tagged, MAX_PIXELS).unwrap().body_error, None);
        assert!(facts(&tagged[..tagged.len() - 100], MAX_PIXELS).unwrap().body_error.is_some());
    }

    /// A JPEG stored sideways with EXIF orientation 6 (rotate 90° clockwise)
    /// is recorded as it is shown: 32 x 64, with the hashes of the rotated
    /// pixels; its sha256 stays the file's.
    #[test]
    fn exif_orientation_is_applied_before_hashing_and_measuring() {
        let (plain, _) = jpeg(None);
        let (rotated, _) = jpeg(Some(6));
        let (p, r) = (facts(&plain, MAX_PIXELS).unwrap(), facts(&rotated, MAX_PIXELS).unwrap());
        assert_eq!((r.width, r.height), (32, 64));
        let upright = image::load_from_memory(&plain).unwrap().rotate90();
        assert_eq!(r.hashes, Some(perceptual_hashes(&upright)));
        assert_ne!(r.hashes, p.hashes);
        assert_eq!(r.sha256, hex::encode(Sha256::digest(&rotated)));
        // Orientation 1 changes nothing.
        let (one, _) = jpeg(Some(1));
        let o = facts(&one, MAX_PIXELS).unwrap();
        assert_eq!((o.width, o.height, o.hashes), (64, 32, p.hashes));
    }

    fn base64_png() -> Vec<u8> {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
            .unwrap()
    }
}
