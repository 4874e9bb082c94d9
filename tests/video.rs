//! Video benchmarks: fixtures in the public layouts of Video-MME's annotation
//! file and of VSI-Bench, with tiny generated videos (`tests/fixtures/video`):
//! ingest reads each video's container facts, the folds keep a video's
//! questions together, and the variants and the release carry the videos.

mod common;

use std::path::PathBuf;

use common::{blindspot, ingest_pipeline, root};

fn fixture(rel: &str) -> PathBuf {
    root().join("tests/fixtures/video").join(rel)
}

/// Every Video-MME row names its video by `videoID`; the facts are the
/// generated files': 8 frames at 4 per second, 32 × 32, H.264.
#[test]
fn videomme_layout_ingests_with_container_facts() {
    let got = ingest_pipeline(&fixture("videomme/videomme.toml"));
    assert_eq!(got.samples.len(), 6);
    let first = &got.samples[0];
    assert_eq!(first.id, "001-1");
    assert_eq!(first.videos.len(), 1);
    let v = &first.videos[0];
    assert_eq!(v.path.as_deref(), Some("fFjv93ACGo8.mp4"));
    assert_eq!((v.width, v.height, v.frame_count, v.codec.as_deref()), (Some(32), Some(32), Some(8), Some("avc1")));
    assert_eq!(v.size, Some(std::fs::metadata(fixture("videomme/videos/fFjv93ACGo8.mp4")).unwrap().len()));
    assert!((v.duration.unwrap() - 2.0).abs() < 1e-9 && (v.fps.unwrap() - 4.0).abs() < 1e-9, "{v:?}");
    assert_eq!(first.meta.get("duration").map(String::as_str), Some("short"));
    // group-by = "video": three videos, so three fold groups.
    let keys = blindspot::diagnose::GroupBy::Video.keys(&got.samples);
    let distinct: std::collections::BTreeSet<&String> = keys.iter().collect();
    assert_eq!(distinct.len(), 3);
    assert_eq!(keys[0], keys[2]);
    assert_ne!(keys[0], keys[3]);
}

/// VSI-Bench: numeric answers (scored by MRA) beside multiple choice, the
/// video found under `<dataset>/<scene_name>.mp4`.
#[test]
fn vsibench_layout_ingests_numeric_and_multiple_choice() {
    let got = ingest_pipeline(&fixture("vsibench/vsibench.toml"));
    let formats: Vec<&str> = got.samples.iter().map(|s| s.answer_format.as_str()).collect();
    assert_eq!(formats, ["numeric", "numeric", "multiple_choice", "numeric", "multiple_choice", "numeric"]);
    let paths: Vec<&str> = got.samples.iter().map(|s| s.videos[0].path.as_deref().unwrap()).collect();
    assert_eq!(paths[0], "arkitscenes/41069025.mp4");
    assert_eq!(paths[5], "scannet/scene0050_00.mp4");
    assert_eq!(got.samples[0].videos[0].width, Some(48));
}

/// A video that is not there, and one that is not a video, are errors naming
/// the row, the field and the file; exit 1, nothing written.
#[test]
fn unreadable_videos_are_located_errors() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    std::fs::create_dir(dir.join("videos")).unwrap();
    std::fs::write(dir.join("videos/b.mp4"), "not a video").unwrap();
    std::fs::write(
        dir.join("q.jsonl"),
        "{\"id\": \"1\", \"question\": \"What happens?\", \"answer\": \"x\", \"video\": \"a.mp4\"}\n\
         {\"id\": \"2\", \"question\": \"What happens?\", \"answer\": \"x\", \"video\": \"b.mp4\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("p.toml"),
        "[dataset]\nname = \"v\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n\n[ingest]\npath = \"q.jsonl\"\nvideos = \"videos\"\n",
    )
    .unwrap();
    let out = blindspot().current_dir(dir).args(["build", "p.toml", "--out-dir", "rel"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("q.jsonl:1: field \"videos\": video \"a.mp4\" not found under videos"), "{stderr}");
    assert!(
        stderr.contains(
            "q.jsonl:2: field \"videos\": video \"b.mp4\" is not a video in a container blindspot reads (MP4, MOV, MKV, WebM)"
        ),
        "{stderr}"
    );
    assert!(!dir.join("rel").exists());
}

/// Copies the Video-MME fixture into `dir` with a pipeline that builds a
/// release with variants and carries its videos as `carry` says.
fn videomme_workspace(dir: &std::path::Path, carry: &str) {
    let src = fixture("videomme");
    std::fs::create_dir_all(dir.join("videos")).unwrap();
    for f in std::fs::read_dir(src.join("videos")).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), dir.join("videos").join(f.file_name())).unwrap();
    }
    std::fs::copy(src.join("videomme.jsonl"), dir.join("videomme.jsonl")).unwrap();
    let toml = std::fs::read_to_string(src.join("videomme.toml")).unwrap();
    let toml = toml.split("[diagnose]").next().unwrap().to_string();
    std::fs::write(
        dir.join("videomme.toml"),
        format!("{toml}[variants]\nkinds = [\"no_video\", \"phantom\", \"option_shuffle\"]\n\n[release]\nvideos = \"{carry}\"\n"),
    )
    .unwrap();
}

/// A release carries its videos (here as files beside the Parquet), the card
/// counts them, the variants drop or keep them as their kind says, and
/// `verify` catches one changed byte of a video.
#[test]
fn a_video_release_carries_and_verifies_its_videos() {
    let work = tempfile::tempdir().unwrap();
    videomme_workspace(work.path(), "files");
    let out =
        blindspot().current_dir(work.path()).args(["build", "videomme.toml", "--out-dir", "rel"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rel = work.path().join("rel/videomme-fixture/1.0.0");
    let data = blindspot::io::parquet::read_samples(&rel.join("data/test-00000-of-00001.parquet")).unwrap();
    assert_eq!(data.len(), 6);
    assert_eq!(data[0].videos[0].path.as_deref(), Some("fFjv93ACGo8.mp4"));
    assert_eq!(data[0].videos[0].bytes, None, "carried as a file, not embedded");
    let carried = std::fs::read(rel.join("videos/fFjv93ACGo8.mp4")).unwrap();
    assert_eq!(carried, std::fs::read(work.path().join("videos/fFjv93ACGo8.mp4")).unwrap());
    let no_video =
        blindspot::io::parquet::read_samples(&rel.join("variants/no_video/test-00000-of-00001.parquet")).unwrap();
    assert_eq!(no_video.len(), 6);
    assert!(no_video.iter().all(|s| s.videos.is_empty() && s.expected.as_deref() == Some("abstain")));
    let shuffled =
        blindspot::io::parquet::read_samples(&rel.join("variants/option_shuffle/test-00000-of-00001.parquet")).unwrap();
    assert!(shuffled.iter().all(|s| s.videos.len() == 1));
    let card = std::fs::read_to_string(rel.join("README.md")).unwrap();
    assert!(card.contains("The questions name 6 videos (3 distinct videos), each with its sha256"), "{card}");
    assert!(card.contains("carried beside the Parquet files under `videos/`"), "{card}");
    let croissant = std::fs::read_to_string(rel.join("croissant.json")).unwrap();
    assert!(croissant.contains("sc:VideoObject"));

    // The lmms-eval export writes each video file beside its task data, the
    // rows naming it by path (what `doc_to_visual` hands the model).
    let exp = work.path().join("exp");
    let out = blindspot().arg("export").arg(&rel).args(["--to", "lmms-eval", "--out"]).arg(&exp).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(exp.join("videos/fFjv93ACGo8.mp4")).unwrap(), carried);
    let utils = std::fs::read_to_string(exp.join("utils.py")).unwrap();
    assert!(utils.contains("out.append(os.path.join(VIDEO_DIR, video[\"path\"]))"), "{utils}");

    // VLMEvalKit's TSV has no video column: refused, not written without the videos.
    let vlm = blindspot()
        .arg("export")
        .arg(&rel)
        .args(["--to", "vlmevalkit", "--out"])
        .arg(work.path().join("vlm"))
        .output()
        .unwrap();
    let vlm_err = String::from_utf8_lossy(&vlm.stderr);
    assert_eq!(vlm.status.code(), Some(1), "{vlm_err}");
    assert!(vlm_err.contains("has a video, and blindspot's VLMEvalKit export writes image TSVs only; export the video questions with --to lmms-eval"), "{vlm_err}");

    let ok = blindspot().arg("verify").arg(&rel).output().unwrap();
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    let path = rel.join("videos/fFjv93ACGo8.mp4");
    let mut bytes = carried;
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(&path, bytes).unwrap();
    let bad = blindspot().arg("verify").arg(&rel).output().unwrap();
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("videos/fFjv93ACGo8.mp4: changed: sha256 "), "{stderr}");
}
