//! Images on ingest: facts recorded, path labels outside the benchmark,
//! names without a folder, links out of the folder, the pixel limit, and
//! `dups` on near-duplicate images.

use std::path::Path;

use crate::common::{self, blindspot, files_below, root};
use crate::{canonical_pipeline, ingest_cli, ingest_fails, ingest_file};
#[test]
fn canonical_with_image_folder_records_facts() {
    let ing = ingest_file(&root().join("tests/fixtures/good/canonical.toml"));
    let img = &ing.samples[0].images[0];
    assert_eq!((img.width, img.height), (Some(1), Some(1)));
    assert_eq!(img.path.as_deref(), Some("cat.png"));
    assert_eq!(img.sha256.as_ref().unwrap().len(), 64);
}

/// Embedded image bytes whose path label is absolute or climbs with '..' (as a
/// `datasets` export from someone's machine can hold) keep the bytes and only the
/// label's file name, and the ingest summary counts them.
#[test]
fn embedded_images_keep_only_the_file_name_of_a_label_outside_the_benchmark() {
    use arrow::array::{ArrayRef, BinaryArray, RecordBatch, StringArray, StructArray};
    use arrow::datatypes::{DataType, Field};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let png = std::fs::read(root().join("tests/fixtures/bad/images/ok.png")).unwrap();
    let bytes: ArrayRef = Arc::new(BinaryArray::from(vec![png.as_slice(), png.as_slice(), png.as_slice()]));
    let paths: ArrayRef = Arc::new(StringArray::from(vec!["/home/alice/scans/cat.png", "../scans/dog.png", "cow.png"]));
    let image: ArrayRef = Arc::new(StructArray::from(vec![
        (Arc::new(Field::new("bytes", DataType::Binary, true)), bytes),
        (Arc::new(Field::new("path", DataType::Utf8, true)), paths),
    ]));
    let id: ArrayRef = Arc::new(StringArray::from(vec!["1", "2", "3"]));
    let question: ArrayRef = Arc::new(StringArray::from(vec!["Is it a cat?", "Is it a dog?", "Is it a cow?"]));
    let answer: ArrayRef = Arc::new(StringArray::from(vec!["yes", "no", "yes"]));
    let batch =
        RecordBatch::try_from_iter([("id", id), ("question", question), ("answer", answer), ("image", image)]).unwrap();
    let input = dir.path().join("test.parquet");
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&input).unwrap(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let out = dir.path().join("out.parquet");
    let run = blindspot().arg("ingest").arg(&input).arg("-o").arg(&out).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("warning: ingest: 2 rows: embedded images' path labels were absolute"), "{stderr}");
    let s = blindspot::io::parquet::read_samples(&out).unwrap();
    let labels: Vec<_> = s.iter().map(|s| s.images[0].path.as_deref()).collect();
    assert_eq!(labels, [Some("cat.png"), Some("dog.png"), Some("cow.png")]);
    assert!(s.iter().all(|s| s.images[0].bytes.as_deref() == Some(png.as_slice())));
}

#[test]
fn images_named_without_a_folder_fail_ingest_and_build_and_a_built_card_counts_them() {
    // The image column is found by its canonical name; no [ingest] images folder.
    let (work, no_folder) = canonical_pipeline("[ingest]\npath = \"canonical.jsonl\"\n");
    ingest_fails(
        &no_folder,
        &[
            "canonical.jsonl: lines 1, 2, 3, 4 (4 lines): field \"images\": image \"cat.png\" is named by path, but no image folder is set",
            "set [ingest] images = \"<the folder that holds the images>\"",
        ],
    );
    let releases = work.path().join("releases");
    let build =
        |pipeline: &Path| blindspot().arg("build").arg(pipeline).arg("--out-dir").arg(&releases).output().unwrap();
    let o = build(&no_folder);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(files_below(&releases).is_empty());
    // Declared names only: diagnose-style ingest keeps them (counted); build refuses.
    let (_w, names) = canonical_pipeline("[ingest]\npath = \"canonical.jsonl\"\nimage-names-only = true\n");
    let (samples, stderr) = ingest_cli(&names);
    assert!(samples.iter().all(|s| s.images[0].path.as_deref() == Some("cat.png") && s.images[0].bytes.is_none()));
    assert!(stderr.contains("warning: ingest: 4 rows: images named by path were kept as names only"), "{stderr}");
    blindspot().arg("build").arg(&names).arg("--out-dir").arg(&releases).assert().code(1).stderr(
        predicates::str::contains(
            "p.toml: field \"ingest.image-names-only\": a release cannot be built from image names only",
        ),
    );
    assert!(files_below(&releases).is_empty());
    // Found and embedded: the card says so from what it holds.
    let (_w, found) = canonical_pipeline("[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\n");
    let o = build(&found);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let card = std::fs::read_to_string(releases.join("p/1.0.0/README.md")).unwrap();
    assert!(
        card.contains(
            "Self-contained: the default config's 4 images (1 distinct image) are embedded in the Parquet files."
        ),
        "{card}"
    );
}

#[test]
fn an_image_linked_from_outside_its_folder_is_an_error_and_a_link_inside_is_not() {
    let work = common::fixture_workspace();
    let outside = work.path().join("elsewhere");
    std::fs::create_dir(&outside).unwrap();
    std::fs::copy(work.path().join("images/cat.png"), outside.join("secret.png")).unwrap();
    let images = work.path().join("images");
    std::fs::remove_file(images.join("cat.png")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.png"), images.join("cat.png")).unwrap();
    let pipeline = work.path().join("p.toml");
    std::fs::write(
        &pipeline,
        "[dataset]\nname = \"p\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n[ingest]\npath = \"canonical.jsonl\"\n\
         images = \"images\"\n",
    )
    .unwrap();
    ingest_fails(
        &pipeline,
        &[
            "canonical.jsonl: lines 1, 2, 3, 4 (4 lines): field \"images\": image \"cat.png\" is reached through the symbolic link",
            "images/cat.png to ",
            "elsewhere/secret.png, outside the image folder",
        ],
    );
    // A link that stays inside the folder is an image like any other.
    std::fs::remove_file(images.join("cat.png")).unwrap();
    std::fs::rename(outside.join("secret.png"), images.join("real.png")).unwrap();
    std::os::unix::fs::symlink("real.png", images.join("cat.png")).unwrap();
    let (samples, _) = ingest_cli(&pipeline);
    assert_eq!(samples[0].images[0].path.as_deref(), Some("cat.png"));
    assert_eq!(samples[0].images[0].width, Some(1));
}

#[test]
fn the_pixel_limit_is_a_setting_and_names_the_file_and_its_size() {
    let (_work, small) =
        canonical_pipeline("[ingest]\npath = \"canonical.jsonl\"\nimages = \"images\"\nmax-image-pixels = 1\n");
    let (samples, _) = ingest_cli(&small);
    assert_eq!(samples.len(), 4);
    let big = tempfile::tempdir().unwrap();
    std::fs::create_dir(big.path().join("images")).unwrap();
    // A PNG header declaring 3 x 2 pixels, with a limit of 5.
    let mut png = std::fs::read(root().join("tests/fixtures/good/images/cat.png")).unwrap();
    png[16..24].copy_from_slice(&[0, 0, 0, 3, 0, 0, 0, 2]);
    std::fs::write(big.path().join("images/wide.png"), png).unwrap();
    std::fs::write(
        big.path().join("q.jsonl"),
        r#"{"id": "1", "question": "q?", "answer": "yes", "image": "wide.png"}"#,
    )
    .unwrap();
    let pipeline = big.path().join("p.toml");
    std::fs::write(
        &pipeline,
        "[dataset]\nname = \"p\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n[ingest]\npath = \"q.jsonl\"\n\
         images = \"images\"\nmax-image-pixels = 5\n",
    )
    .unwrap();
    ingest_fails(
        &pipeline,
        &["q.jsonl:1: field \"images\": image \"wide.png\" declares 3x2 pixels (6 pixels), more than the 5 pixels \
           blindspot reads ([ingest] max-image-pixels)"],
    );
    // Decoded once: a PNG whose header reads but whose pixel data is damaged is kept, counted and named.
    let mut damaged = std::fs::read(root().join("tests/fixtures/good/images/cat.png")).unwrap();
    let at = damaged.len() - 20;
    damaged[at] ^= 0xff;
    std::fs::write(big.path().join("images/wide.png"), damaged).unwrap();
    let (samples, stderr) = ingest_cli(&pipeline);
    assert_eq!(samples[0].images[0].width, Some(1));
    assert!(stderr.contains("warning: ingest: 1 row: images whose header reads but whose pixel data does not decode"));
    assert!(stderr.contains("warning: ingest: 1 image do not decode past their header: wide.png ("), "{stderr}");
}

/// A radiograph (as PNG), its half-size JPEG copy and another radiograph: `dups` clusters the copy
/// with its original (other bytes, other format), matches the listed hash of
/// the other scan, and a list with a line that is no hash is refused with its
/// file and line, writing nothing.
#[test]
fn dups_clusters_near_duplicate_images_and_checks_a_hash_list() {
    let tmp = tempfile::tempdir().unwrap();
    common::near_duplicate_image_bench(tmp.path(), "");
    let ing = ingest_file(&tmp.path().join("bench.toml"));
    let phash = |i: usize| ing.samples[i].images[0].phash.clone().unwrap();
    std::fs::write(tmp.path().join("hashes.txt"), format!("# training set\n{}\n", phash(2))).unwrap();
    let out = blindspot()
        .current_dir(tmp.path())
        .args(["dups", "bench.toml", "--exact-only", "--hashes", "hashes.txt", "-o", "out"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("out/dups.json")).unwrap()).unwrap();
    let im = &j["images"];
    assert_eq!(
        (im["images"].as_u64(), im["hashed"].as_u64(), im["clusters"].as_u64()),
        (Some(3), Some(3), Some(1)),
        "{im:#}"
    );
    let ids: Vec<&serde_json::Value> = im["members"][0].as_array().unwrap().iter().map(|e| &e["ids"]).collect();
    // Members sorted by path: the copy, then the original.
    assert_eq!(ids, [&serde_json::json!(["2"]), &serde_json::json!(["1"])], "{im:#}");
    assert_eq!(im["hashes"]["images_with_match"], 1, "{im:#}");
    assert_eq!(im["hashes"]["matches"][0]["image"]["path"], "b.jpg", "{im:#}");
    assert_eq!(im["hashes"]["matches"][0]["listed"][1], 2, "{im:#}");

    std::fs::write(tmp.path().join("bad.txt"), format!("{}\n{}x\n", phash(2), phash(2))).unwrap();
    let out = blindspot()
        .current_dir(tmp.path())
        .args(["dups", "bench.toml", "--exact-only", "--hashes", "bad.txt", "-o", "out2"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("bad.txt:2") && stderr.contains("is not a perceptual hash"), "{stderr}");
    assert!(!tmp.path().join("out2").exists());
}
