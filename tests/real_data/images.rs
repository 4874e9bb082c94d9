//! Near-duplicate images on the shared VQA-RAD radiographs: a fixture of known
//! transforms (half size, JPEG quality 60, a 10% crop, a horizontal flip,
//! grayscale) of every image, against all the other images as distinct ones;
//! the precision and recall of the near-duplicate rule (both perceptual hashes
//! within the threshold) at each threshold, and the clusters of the benchmark
//! itself.

use std::io::Cursor;

use blindspot::diagnose::ImageClusterCount;
use blindspot::ingest::images::perceptual_hashes;
use blindspot::sample::image_hash::{DEFAULT_THRESHOLD, Hashes, MAX_THRESHOLD, near};
use image::DynamicImage;
use image::imageops::FilterType;
use rayon::prelude::*;

use crate::common::{data_dir, ingest_pipeline};
use crate::pipeline;

const TRANSFORMS: [&str; 5] = ["resize 0.5", "jpeg q60", "crop 10%", "flip", "grayscale"];

fn transform(img: &DynamicImage, which: &str) -> DynamicImage {
    let (w, h) = (img.width(), img.height());
    match which {
        "resize 0.5" => img.resize_exact(w / 2, h / 2, FilterType::Triangle),
        "jpeg q60" => {
            let mut buf = Cursor::new(Vec::new());
            let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut buf, 60);
            img.to_rgb8().write_with_encoder(enc).unwrap();
            image::load_from_memory(buf.get_ref()).unwrap()
        }
        // 5% off each side: 10% of the width and of the height.
        "crop 10%" => img.crop_imm(w / 20, h / 20, w - 2 * (w / 20), h - 2 * (h / 20)),
        "flip" => img.fliph(),
        "grayscale" => DynamicImage::ImageLuma8(img.to_luma8()),
        other => panic!("no transform {other}"),
    }
}

/// (precision, recall) at `t` of the pairs among originals and their copies:
/// a pair is right when it joins an image to its own copy.
fn precision_recall(orig: &[Hashes], copies: &[Hashes], t: u32) -> (f64, f64) {
    let n = orig.len();
    let all: Vec<Hashes> = orig.iter().chain(copies).copied().collect();
    let (mut tp, mut fp) = (0usize, 0usize);
    for a in 0..all.len() {
        for b in a + 1..all.len() {
            if near(all[a], all[b], t) {
                if b == a + n { tp += 1 } else { fp += 1 }
            }
        }
    }
    let precision = if tp + fp == 0 { 1.0 } else { tp as f64 / (tp + fp) as f64 };
    (precision, tp as f64 / n as f64)
}

fn fixture_measures_the_default_threshold() {
    let dir = data_dir().join("vqa_rad/images");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 315, "{}", dir.display());
    let images: Vec<DynamicImage> = files.par_iter().map(|f| image::open(f).unwrap()).collect();
    let hashes = |i: &DynamicImage| {
        let (phash, dhash) = perceptual_hashes(i);
        Hashes { phash, dhash }
    };
    let orig: Vec<Hashes> = images.par_iter().map(hashes).collect();
    let mut table = String::from("threshold");
    for t in TRANSFORMS {
        table.push_str(&format!(" | {t:>13}"));
    }
    let copies: Vec<Vec<Hashes>> =
        TRANSFORMS.iter().map(|t| images.par_iter().map(|i| hashes(&transform(i, t))).collect()).collect();
    let mut at_default = Vec::new();
    for t in 0..=MAX_THRESHOLD {
        table.push_str(&format!("\n{t:>9}"));
        for (k, c) in copies.iter().enumerate() {
            let (p, r) = precision_recall(&orig, c, t);
            table.push_str(&format!(" | P {p:.3} R {r:.3}"));
            if t == DEFAULT_THRESHOLD {
                at_default.push((TRANSFORMS[k], p, r));
            }
        }
    }
    eprintln!(
        "phash and dhash precision / recall per transform (315 VQA-RAD images, each against all others):\n{table}"
    );
    let get = |name: &str| at_default.iter().find(|(n, _, _)| *n == name).map(|&(_, p, r)| (p, r)).unwrap();
    // Resize and re-encode must be found, and nothing else joined.
    for name in ["resize 0.5", "jpeg q60", "grayscale"] {
        let (p, r) = get(name);
        assert!(p >= 0.95 && r >= 0.9, "{name} at {DEFAULT_THRESHOLD} bits: precision {p:.3}, recall {r:.3}");
    }
    // A 10% crop and a mirror image move a DCT hash by far more than the
    // threshold: measured 0.083 and 0 (a stated limit, pinned so a change shows).
    let (_, crop) = get("crop 10%");
    let (_, flip) = get("flip");
    assert!(crop <= 0.15, "crop recall {crop:.3}, measured 0.083");
    assert!(flip <= 0.02, "flip recall {flip:.3}, measured 0");
}

/// VQA-RAD's own images: every one is hashed, and the clusters at the default
/// threshold are counted (each image once, in the record's `image_facts`).
fn vqa_rad_images_cluster() {
    let ing = ingest_pipeline(&pipeline("vqa-rad-all"));
    let refs: Vec<_> = ing.samples.iter().collect();
    let c = ImageClusterCount::of(&refs, DEFAULT_THRESHOLD);
    eprintln!("VQA-RAD at {DEFAULT_THRESHOLD} bits: {c:?}");
    assert_eq!((c.images, c.hashed), (314, 314), "{c:?}");
    assert!(c.joining <= 3, "{c:?}");
}

pub const TESTS: crate::Tests = &[
    ("fixture_measures_the_default_threshold", fixture_measures_the_default_threshold),
    ("vqa_rad_images_cluster", vqa_rad_images_cluster),
];
