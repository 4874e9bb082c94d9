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

/// Writes `rows` rows in the public layout of `layout` ("videomme" or
/// "vsibench") beside a pipeline grouping the folds by video (three videos,
/// so three folds); every row names
/// one of the fixture's three tiny videos, read from the fixture's folder.
/// Planted in the text, as a benchmark's own shortcuts would be: a
/// Video-MME "Information Synopsis" gold is always the longest option (its
/// "Temporal Perception" gold is uniform over four options of one length),
/// and a VSI-Bench count is the object's typical count give or take 20%
/// (its left/right questions are a coin toss).
fn video_tst_workspace(dir: &std::path::Path, layout: &str, rows: usize) -> PathBuf {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(55);
    let mut out = String::new();
    let (data, fields) = match layout {
        "videomme" => {
            let videos = ["fFjv93ACGo8", "KQ8ubrBWmlc", "q0vB0r6aBNk"];
            let filler = ["a kitchen", "a street", "a stage", "a field", "a river", "a market"];
            for i in 0..rows {
                let video = videos[i % 3];
                let (task, options, gold) = if i % 2 == 0 {
                    let gold = rng.random_range(0..4);
                    let first = rng.random_range(0..filler.len());
                    let options: Vec<String> = (0..4)
                        .map(|k| {
                            let place = filler[(first + k) % filler.len()];
                            if k == gold {
                                format!("A long walk through {place}, then a meal with friends at dusk.")
                            } else {
                                format!("A walk through {place}.")
                            }
                        })
                        .collect();
                    ("Information Synopsis", options, gold)
                } else {
                    let options = ["The start.", "The middle.", "The end.", "Twice."].map(String::from).to_vec();
                    ("Temporal Perception", options, rng.random_range(0..4))
                };
                let letters = ["A", "B", "C", "D"];
                let row = serde_json::json!({
                    "video_id": format!("{:03}", i % 3 + 1), "duration": "short", "domain": "Life Record",
                    "sub_category": "Travel", "url": format!("https://www.youtube.com/watch?v={video}"),
                    "videoID": video, "question_id": format!("{:03}-{}", i % 3 + 1, i / 3 + 1), "task_type": task,
                    "question": if task == "Temporal Perception" { "When does the counter reset?" } else { "What is the video mainly about?" },
                    "options": options.iter().zip(letters).map(|(o, l)| format!("{l}. {o}")).collect::<Vec<_>>(),
                    "answer": letters[gold],
                });
                out.push_str(&format!("{row}\n"));
            }
            ("videomme.jsonl", "id = \"question_id\"\nquestion-type = \"task_type\"\nvideos = \"{videoID}.mp4\"\n")
        }
        _ => {
            let scenes = [("arkitscenes", "41069025"), ("scannet", "scene0011_00"), ("scannet", "scene0050_00")];
            let objects = [("chair", 6.0), ("sofa", 1.0), ("pillow", 4.0), ("window", 3.0), ("lamp", 2.0)];
            for i in 0..rows {
                let (dataset, scene) = scenes[i % 3];
                let (qtype, question, options, gt) = if i % 2 == 0 {
                    let (o, typical) = objects[rng.random_range(0..objects.len())];
                    let n: f64 = (typical * rng.random_range(0.8..1.2_f64)).round().max(1.0);
                    ("object_counting", format!("How many {o}(s) are in this room?"), None, n.to_string())
                } else {
                    let (a, _) = objects[rng.random_range(0..objects.len())];
                    let q =
                        format!("If I am standing by the door and facing the {a}, is the bed to my left or my right?");
                    let gt = if rng.random_bool(0.5) { "A" } else { "B" };
                    ("object_rel_direction_easy", q, Some(vec!["A. left", "B. right"]), gt.to_string())
                };
                let row = serde_json::json!({
                    "id": i, "dataset": dataset, "scene_name": scene, "question_type": qtype,
                    "question": question, "options": options, "ground_truth": gt,
                });
                out.push_str(&format!("{row}\n"));
            }
            ("test.jsonl", "answer = \"ground_truth\"\nvideos = \"{dataset}/{scene_name}.mp4\"\n")
        }
    };
    std::fs::write(dir.join(data), out).unwrap();
    let videos = fixture(&format!("{layout}/videos"));
    let toml = format!(
        "[dataset]\nname = \"{layout}-tst\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\nnumeric = \"mra\"\n\n\
         [ingest]\npath = \"{data}\"\nvideos = {videos:?}\n\n[ingest.fields]\n{fields}\n\
         [diagnose]\ngroup-by = \"video\"\nfolds = 3\n",
    );
    let path = dir.join(format!("{layout}.toml"));
    std::fs::write(&path, toml).unwrap();
    path
}

/// The diagnosis's report of a video workspace: `blindspot diagnose`, folds
/// grouped by video.
fn diagnose_video(pipeline: &std::path::Path) -> serde_json::Value {
    let out_dir = pipeline.parent().unwrap().join("diag");
    let out = blindspot().arg("diagnose").arg(pipeline).arg("-o").arg(&out_dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&std::fs::read_to_string(out_dir.join("diagnose.json")).unwrap()).unwrap()
}

fn group_accuracy(report: &serde_json::Value, question_type: &str) -> f64 {
    let groups = report["groups"].as_array().unwrap();
    let g = groups.iter().find(|g| g["question_type"] == question_type).unwrap_or_else(|| panic!("{report}"));
    g["blind_accuracy"].as_f64().unwrap()
}

/// TsT-RF on both video layouts, folds grouped by video (three videos, so
/// three folds: no video's questions are both trained on and scored): the
/// planted shortcuts are found (the longest option, 1.000; the typical counts,
/// MRA 0.897) and the uniform golds are not (0.167 against chance 0.25; the
/// left/right coin toss 0.600 against 0.5). Measured values, each within
/// 0.10 either way (60 questions, 30 per type).
#[test]
fn tst_rf_finds_the_planted_shortcuts_of_both_video_layouts_grouped_by_video() {
    let work = tempfile::tempdir().unwrap();
    let mme = work.path().join("mme");
    std::fs::create_dir(&mme).unwrap();
    let report = diagnose_video(&video_tst_workspace(&mme, "videomme", 60));
    assert_eq!(report["settings"]["group_by"], "video", "{report}");
    assert_eq!(report["n_samples"], 60);
    for (qtype, measured) in [("Information Synopsis", 1.0), ("Temporal Perception", 0.167)] {
        let got = group_accuracy(&report, qtype);
        assert!((got - measured).abs() <= 0.10, "{qtype}: blind accuracy {got}, measured {measured} ± 0.10");
    }

    let vsi = work.path().join("vsi");
    std::fs::create_dir(&vsi).unwrap();
    let report = diagnose_video(&video_tst_workspace(&vsi, "vsibench", 60));
    assert_eq!(report["settings"]["numeric"], "mra", "{report}");
    for (qtype, measured) in [("object_counting", 0.897), ("object_rel_direction_easy", 0.6)] {
        let got = group_accuracy(&report, qtype);
        assert!((got - measured).abs() <= 0.10, "{qtype}: blind accuracy {got}, measured {measured} ± 0.10");
    }
}

/// A video release read back as input (its folder, or its default config's
/// data file) has the videos the original ingest had, carried as files or
/// embedded: the same hashes, paths and container facts, nothing left in
/// `meta`, and so the same folds by video and the same blind accuracy.
#[test]
fn a_video_release_read_back_restores_its_videos() {
    let work = tempfile::tempdir().unwrap();
    let pipeline = video_tst_workspace(work.path(), "videomme", 60);
    let original = ingest_pipeline(&pipeline).samples;
    let diagnosed = diagnose_video(&pipeline);
    let accuracy = |r: &serde_json::Value| r["blind_accuracy"]["weighted"].as_f64().unwrap();
    // What ingest states of each video: hash, path, size and container facts.
    let facts = |s: &blindspot::sample::Sample| -> Vec<String> {
        let f = |v: &blindspot::sample::VideoRef| {
            format!(
                "{:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                v.sha256, v.path, v.size, v.duration, v.frame_count, v.width, v.codec
            )
        };
        s.videos.iter().map(f).collect()
    };
    for carry in ["files", "embed"] {
        let toml = std::fs::read_to_string(&pipeline).unwrap();
        let carried = work.path().join(format!("{carry}.toml"));
        std::fs::write(&carried, format!("{toml}\n[release]\nvideos = \"{carry}\"\n")).unwrap();
        let out = blindspot()
            .current_dir(work.path())
            .arg("build")
            .arg(&carried)
            .args(["--out-dir", carry])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let rel = work.path().join(carry).join("videomme-tst/1.0.0");
        for input in [rel.clone(), rel.join("data/test-00000-of-00001.parquet")] {
            let plan = blindspot::spec::plan::bare_input_plan(&input, &[], None).unwrap();
            let back = blindspot::ingest::ingest(&plan).unwrap_or_else(|e| panic!("{}: {e}", input.display())).samples;
            assert_eq!(back.len(), original.len(), "{carry}: {}", input.display());
            for (a, b) in original.iter().zip(&back) {
                assert_eq!(facts(a), facts(b), "{carry}: {}: {}", input.display(), a.id);
                let listed = ["videos", "video_frames", "video_facts"];
                assert!(listed.iter().all(|k| !b.meta.contains_key(*k)), "{carry}: {:?}", b.meta);
            }
            let diag = work.path().join(format!("diag-{carry}"));
            let out = blindspot()
                .arg("diagnose")
                .arg(&input)
                .args(["--group-by", "video", "--folds", "3", "-o"])
                .arg(&diag)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let report: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(diag.join("diagnose.json")).unwrap()).unwrap();
            assert_eq!(accuracy(&report), accuracy(&diagnosed), "{carry}: {}", input.display());
        }
    }
}

/// `blindspot dups` on a video benchmark: `dups.json`'s video part and the
/// summary line, with PATH as given.
fn video_dups(dir: &std::path::Path, path_var: Option<&str>) -> (serde_json::Value, String) {
    let mut cmd = blindspot();
    cmd.current_dir(dir).args(["dups", "p.toml", "--exact-only", "-o", "dups"]);
    if let Some(p) = path_var {
        cmd.env("PATH", p);
    }
    let _ = std::fs::remove_dir_all(dir.join("dups"));
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("dups/dups.json")).unwrap()).unwrap();
    (report["videos"].clone(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Writes a one-question-per-video benchmark over the files in `dir/videos`.
fn one_question_per_video(dir: &std::path::Path, names: &[&str]) {
    let rows: String = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            format!("{{\"id\": \"{i}\", \"question\": \"What is shown?\", \"answer\": \"x\", \"video\": \"{n}\"}}\n")
        })
        .collect();
    std::fs::write(dir.join("q.jsonl"), rows).unwrap();
    std::fs::write(
        dir.join("p.toml"),
        "[dataset]\nname = \"v\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n\n[ingest]\npath = \"q.jsonl\"\nvideos = \"videos\"\n",
    )
    .unwrap();
}

/// Near-duplicate videos: with ffmpeg on PATH, a re-encoded and a resized copy
/// of a generated video join it in one cluster and an unrelated video joins
/// nothing, the summary naming the ffmpeg used; without it (PATH emptied for
/// the command) every video file is "not checked", and the command succeeds.
#[test]
fn near_duplicate_videos_are_found_with_ffmpeg_and_not_checked_without() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    std::fs::create_dir(dir.join("videos")).unwrap();
    let ffmpeg = std::process::Command::new("ffmpeg").arg("-version").output().is_ok_and(|o| o.status.success());
    let names: Vec<&str> = if ffmpeg {
        let make = |args: &[&str], to: &str| {
            let out = std::process::Command::new("ffmpeg")
                .current_dir(dir.join("videos"))
                .args(["-nostdin", "-v", "error", "-y"])
                .args(args)
                .args(["-pix_fmt", "yuv420p", to])
                .output()
                .unwrap();
            assert!(out.status.success(), "ffmpeg {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        make(
            &["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=8", "-t", "2", "-c:v", "libx264", "-crf", "18"],
            "orig.mp4",
        );
        make(&["-i", "orig.mp4", "-c:v", "mpeg4", "-q:v", "8"], "reencoded.mp4");
        make(&["-i", "orig.mp4", "-vf", "scale=48:32", "-c:v", "libx264", "-crf", "28"], "resized.mp4");
        make(&["-f", "lavfi", "-i", "mandelbrot=size=96x64:rate=8", "-t", "2", "-c:v", "libx264"], "other.mp4");
        vec!["orig.mp4", "reencoded.mp4", "resized.mp4", "other.mp4"]
    } else {
        for f in ["fFjv93ACGo8.mp4", "KQ8ubrBWmlc.mp4", "q0vB0r6aBNk.mp4"] {
            std::fs::copy(fixture(&format!("videomme/videos/{f}")), dir.join("videos").join(f)).unwrap();
        }
        vec!["fFjv93ACGo8.mp4", "KQ8ubrBWmlc.mp4", "q0vB0r6aBNk.mp4"]
    };
    one_question_per_video(dir, &names);
    if ffmpeg {
        let (videos, stdout) = video_dups(dir, None);
        assert_eq!(videos["checked"], 4, "{videos}");
        let members: Vec<Vec<&str>> = videos["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_array().unwrap().iter().map(|v| v["path"].as_str().unwrap()).collect())
            .collect();
        assert_eq!(members, [["orig.mp4", "reencoded.mp4", "resized.mp4"]], "{videos}");
        assert!(videos["decoder"].as_str().unwrap().contains("ffmpeg version"), "{videos}");
        assert!(stdout.contains("4 videos (4 checked): 1 near-duplicate cluster (frames decoded by "), "{stdout}");
        // The build's duplicates report ([leakage]) and its card say the same.
        let toml = std::fs::read_to_string(dir.join("p.toml")).unwrap();
        std::fs::write(dir.join("b.toml"), format!("{toml}\n[leakage]\nexact-only = true\n")).unwrap();
        let out = blindspot().current_dir(dir).args(["build", "b.toml", "--out-dir", "rel"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let rel = dir.join("rel/v/1.0.0");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(rel.join("report/duplicates.json")).unwrap()).unwrap();
        assert_eq!(report["videos"]["clusters"], 1, "{report}");
        assert_eq!(report["videos"]["videos_in_clusters"], 3, "{report}");
        let card = std::fs::read_to_string(rel.join("README.md")).unwrap();
        assert!(
            card.contains("Videos: 1 near-duplicate cluster of 4 distinct videos (frames at 0.1, 0.3, 0.5, 0.7, 0.9 of each video's duration, both perceptual hashes within 6 bits of 64 at every one; 4 videos compared, decoded by ffmpeg); `orig.mp4` (0) ~ `reencoded.mp4` (1) ~ `resized.mp4` (2)."),
            "{card}"
        );
    }
    let (videos, stdout) = video_dups(dir, Some(""));
    let n = names.len();
    assert_eq!(videos["checked"], 0, "{videos}");
    assert_eq!(videos["decoder"], serde_json::Value::Null);
    assert_eq!(
        videos["not_checked"]["not checked: ffmpeg not found on PATH (install it, e.g. apt-get install ffmpeg)"],
        n
    );
    assert!(
        stdout.contains(&format!(
            "{n} videos (0 checked): 0 near-duplicate clusters; {n} near-duplicate videos not checked: ffmpeg not found on PATH"
        )),
        "{stdout}"
    );
}

/// A video given as frames comes back from a release as the same frames in
/// the same order, embedded or carried as files: the same video hash (of
/// its frames' hashes, in order), frame count and size.
#[test]
fn a_frames_video_release_read_back_restores_its_frames() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    std::fs::create_dir(dir.join("videos")).unwrap();
    let frames: Vec<String> = (1..=4).map(|k| format!("clip1_{k:02}.png")).collect();
    for f in &frames {
        std::fs::copy(fixture(&format!("frames/videos/{f}")), dir.join("videos").join(f)).unwrap();
    }
    let row = serde_json::json!({"id": "1", "question": "What moves?", "answer": "x", "frames": frames});
    std::fs::write(dir.join("q.jsonl"), format!("{row}\n")).unwrap();
    let head = "[dataset]\nname = \"f\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n\n[ingest]\npath = \"q.jsonl\"\n\
                videos = \"videos\"\n\n[ingest.fields]\nvideo-frames = \"frames\"\n\n[variants]\nkinds = [\"no_video\"]\n";
    let original = {
        std::fs::write(dir.join("p.toml"), head).unwrap();
        ingest_pipeline(&dir.join("p.toml")).samples
    };
    let want = &original[0].videos[0];
    assert_eq!((want.frames.len(), want.codec.as_deref()), (4, Some("frames")));
    for carry in ["embed", "files"] {
        std::fs::write(dir.join("p.toml"), format!("{head}\n[release]\nvideos = \"{carry}\"\n")).unwrap();
        let out = blindspot().current_dir(dir).args(["build", "p.toml", "--out-dir", carry]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let rel = dir.join(carry).join("f/1.0.0");
        let plan = blindspot::spec::plan::bare_input_plan(&rel, &[], None).unwrap();
        let back = blindspot::ingest::ingest(&plan).unwrap().samples;
        let got = &back[0].videos[0];
        assert_eq!(
            (&got.sha256, got.frame_count, got.size, got.width, got.codec.as_deref()),
            (&want.sha256, want.frame_count, want.size, want.width, Some("frames")),
            "{carry}"
        );
        let paths: Vec<Option<&str>> = got.frames.iter().map(|f| f.path.as_deref()).collect();
        assert_eq!(paths, frames.iter().map(|f| Some(f.as_str())).collect::<Vec<_>>(), "{carry}");
    }
}

/// A designer's video benchmark with no pipeline: `init` finds the video each record
/// names, by a field of video file names (MVBench's `video`) or by a template of its
/// fields that names a file in the data file's folder or its `videos` folder
/// (`{videoID}.mp4`, `{dataset}/{scene_name}.mp4`), and writes the folder, the video
/// variants and no image ones. Read as proposed, each question has the hand pipeline's
/// video; `ground_truth` is proposed as the answer.
#[test]
fn init_finds_the_videos_of_both_layouts() {
    let tmp = tempfile::tempdir().unwrap();
    for (layout, data, template, extra) in [
        ("videomme", "videomme.jsonl", "{videoID}.mp4", "answer-kind = \"letter\""),
        ("vsibench", "test.jsonl", "{dataset}/{scene_name}.mp4", "answer = \"ground_truth\""),
    ] {
        let dir = tmp.path().join(layout);
        common::copy_dir(&fixture(layout), &dir);
        std::fs::remove_file(dir.join(format!("{layout}.toml"))).unwrap();
        let out = blindspot().current_dir(&dir).args(["init", data, "-o", "proposed.toml"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let toml = std::fs::read_to_string(dir.join("proposed.toml")).unwrap();
        for line in [format!("videos = \"{template}\""), "videos = \"videos\"".into(), extra.into()] {
            assert!(toml.lines().any(|l| l.starts_with(&line)), "{layout}: no line {line:?} in\n{toml}");
        }
        let kinds = toml.lines().find(|l| l.starts_with("kinds = ")).unwrap();
        assert!(kinds.contains("\"no_video\"") && !kinds.contains("\"no_image\""), "{kinds}");
        let proposed = ingest_pipeline(&dir.join("proposed.toml"));
        let hand = ingest_pipeline(&fixture(&format!("{layout}/{layout}.toml")));
        assert_eq!(proposed.samples.len(), hand.samples.len());
        for (p, h) in proposed.samples.iter().zip(&hand.samples) {
            assert_eq!((&p.id, &p.answer, p.answer_index), (&h.id, &h.answer, h.answer_index), "{layout}");
            let sha = |s: &blindspot::sample::Sample| s.videos.iter().map(|v| v.sha256.clone()).collect::<Vec<_>>();
            assert_eq!(sha(p), sha(h), "{layout} {}", p.id);
            assert!(!sha(p).is_empty());
        }
    }
    // MVBench: a field naming the video files, which lie beside the data file.
    let dir = tmp.path().join("mvbench");
    std::fs::create_dir(&dir).unwrap();
    let mut records = Vec::new();
    for (i, name) in ["fFjv93ACGo8", "KQ8ubrBWmlc", "q0vB0r6aBNk"].iter().enumerate() {
        std::fs::copy(fixture(&format!("videomme/videos/{name}.mp4")), dir.join(format!("clip_{i}.mp4"))).unwrap();
        records.push(serde_json::json!({"video": format!("clip_{i}.mp4"), "question": "What is shown?",
            "candidates": ["bars", "a cat", "nothing"], "answer": "bars"}));
    }
    std::fs::write(dir.join("action.json"), serde_json::to_string(&records).unwrap()).unwrap();
    let out = blindspot().current_dir(&dir).args(["init", "action.json", "--field", "id=_row"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let toml = std::fs::read_to_string(dir.join("action.toml")).unwrap();
    for line in ["videos = \"video\"", "videos = \".\"", "options = \"candidates\""] {
        assert!(toml.lines().any(|l| l.starts_with(line)), "no line {line:?} in\n{toml}");
    }
    let proposed = ingest_pipeline(&dir.join("action.toml"));
    assert!(proposed.samples.iter().all(|s| s.videos.len() == 1 && s.videos[0].frame_count == Some(8)));
    // The videos kept elsewhere: found with --videos, and that folder written; a
    // folder that does not exist is an error.
    let data = tmp.path().join("elsewhere");
    std::fs::create_dir(&data).unwrap();
    std::fs::copy(dir.join("action.json"), data.join("action.json")).unwrap();
    let out = blindspot().current_dir(&data).args(["init", "action.json", "--field", "id=_row"]).output().unwrap();
    let toml = std::fs::read_to_string(data.join("action.toml")).unwrap();
    assert!(out.status.success() && toml.contains("# videos = \"...\""), "{toml}");
    let out = blindspot()
        .current_dir(&data)
        .args(["init", "action.json", "--field", "id=_row", "--videos", "../mvbench", "-o", "given.toml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let toml = std::fs::read_to_string(data.join("given.toml")).unwrap();
    assert!(toml.lines().any(|l| l.starts_with("videos = \"../mvbench\"")), "{toml}");
    assert_eq!(ingest_pipeline(&data.join("given.toml")).samples.len(), 3);
    let out = blindspot()
        .current_dir(&data)
        .args(["init", "action.json", "--videos", "nowhere", "-o", "x.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--videos nowhere: no such folder"));
}
