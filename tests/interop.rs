//! Interop and robustness of releases, on the bundled demo:
//! - the release loads unmodified in Hugging Face `datasets`, `pyarrow` and
//!   (when it has croissant.json) `mlcroissant`, from a pinned virtual
//!   environment at `.venv-interop` (tests/python/requirements.txt); so do a
//!   text-only release with a `duplicates` config and the variant fixture's
//!   (every variant kind, the `circular` config with its `rotation` column);
//! - a rebuild with RAYON_NUM_THREADS=1 and =2 gives byte-identical trees;
//! - a build SIGKILLed at seeded random points leaves the release absent or
//!   complete (it verifies), and the next build completes.
//!
//! A custom harness (libtest-mimic), because whether Python can run is only
//! known at run time: without `python3` (>= 3.10) or, when the venv is not yet
//! installed, without PyPI, the Python check is reported as `ignored` with the
//! reason — unless BLINDSPOT_REQUIRE_PYTHON=1 (CI), which turns that into a
//! failure. BLINDSPOT_REQUIRE_CROISSANT=1 makes croissant.json mandatory.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::venv::PinnedVenv;
use libtest_mimic::{Arguments, Failed, Trial};
use rand::{Rng, SeedableRng};

const PYTHON_TRIAL: &str = "python_datasets_pyarrow_mlcroissant_load_the_demo_release";

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_blindspot")
}

fn root() -> PathBuf {
    common::root()
}

/// `blindspot build pipelines/vqa-rad.toml --out-dir OUT`, run from the project root.
fn build_command(out: &Path) -> Command {
    let mut cmd = Command::new(bin());
    // --no-cache: every build here must compute for real (threads, kill points).
    cmd.current_dir(root()).args(["build", "--no-cache", "pipelines/vqa-rad.toml", "--out-dir"]).arg(out);
    cmd
}

fn build(out: &Path, threads: Option<usize>) -> Result<Duration, String> {
    let mut cmd = build_command(out);
    if let Some(n) = threads {
        cmd.env("RAYON_NUM_THREADS", n.to_string());
    }
    let start = Instant::now();
    let o = cmd.output().map_err(|e| format!("cannot run {}: {e}", bin()))?;
    if !o.status.success() {
        return Err(format!("build failed ({}):\n{}", o.status, String::from_utf8_lossy(&o.stderr)));
    }
    Ok(start.elapsed())
}

fn release(out: &Path) -> PathBuf {
    out.join(common::demo_release())
}

/// `blindspot verify DIR`: Ok(stdout) or Err(stderr).
fn verify(dir: &Path) -> Result<String, String> {
    let o = Command::new(bin()).arg("verify").arg(dir).output().map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(format!("exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr)))
    }
}

fn read_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    common::files_below(dir).into_iter().map(|f| (f.clone(), std::fs::read(dir.join(&f)).unwrap_or_default())).collect()
}

/// The first file that differs between two trees, if any.
fn first_difference(a: &[(String, Vec<u8>)], b: &[(String, Vec<u8>)]) -> Option<String> {
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    if names(a) != names(b) {
        return Some(format!("file lists differ: {:?} vs {:?}", names(a), names(b)));
    }
    a.iter().zip(b).find(|(x, y)| x.1 != y.1).map(|(x, _)| x.0.clone())
}

fn rebuild_with_1_and_2_threads_is_byte_identical() -> Result<(), Failed> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (one, two) = (tmp.path().join("t1"), tmp.path().join("t2"));
    build(&one, Some(1))?;
    build(&two, Some(2))?;
    let (a, b) = (read_tree(&release(&one)), read_tree(&release(&two)));
    if a.is_empty() {
        return Err("the build wrote no release".into());
    }
    if let Some(f) = first_difference(&a, &b) {
        return Err(format!("RAYON_NUM_THREADS=1 and =2 give different bytes: {f}").into());
    }
    verify(&release(&one)).map_err(|e| format!("the release does not verify: {e}"))?;
    Ok(())
}

/// Staging folders a killed build left beside the release.
fn leftovers(out: &Path) -> usize {
    std::fs::read_dir(out.join("vqa-rad"))
        .map(|rd| rd.flatten().filter(|e| e.file_name().to_string_lossy().contains("-building-")).count())
        .unwrap_or(0)
}

fn killed_build_leaves_the_release_absent_or_complete() -> Result<(), Failed> {
    let seed: u64 = std::env::var("BLINDSPOT_KILL_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(6);
    const KILLS: usize = 6;
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let reference_out = tmp.path().join("reference");
    build(&reference_out, None)?;
    let reference = read_tree(&release(&reference_out));
    verify(&release(&reference_out)).map_err(|e| format!("an uninterrupted build does not verify: {e}"))?;
    // Timed once the inputs are in the page cache, like the builds that follow.
    let full = build(&tmp.path().join("timed"), None)?;

    // One kill per sixth of the build's duration, at a seeded point within it.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let span = full.as_secs_f64();
    let mut outcomes = Vec::new();
    for i in 0..KILLS {
        let delay = Duration::from_secs_f64(span * (i as f64 + rng.random::<f64>()) / KILLS as f64);
        let out = tmp.path().join(format!("kill{i}"));
        let mut child = build_command(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", bin()))?;
        std::thread::sleep(delay);
        let finished_first = child.try_wait().map_err(|e| e.to_string())?.is_some();
        child.kill().map_err(|e| e.to_string())?; // SIGKILL
        child.wait().map_err(|e| e.to_string())?;
        let dir = release(&out);
        let state = if !dir.exists() {
            "absent"
        } else {
            verify(&dir).map_err(|e| {
                format!("kill {i} after {delay:?}: a release exists but does not verify (a partial release): {e}")
            })?;
            "complete"
        };
        let left = leftovers(&out);
        build(&out, None).map_err(|e| format!("kill {i} after {delay:?}: the next build failed: {e}"))?;
        verify(&dir).map_err(|e| format!("kill {i}: the build after the kill does not verify: {e}"))?;
        if let Some(f) = first_difference(&read_tree(&dir), &reference) {
            return Err(format!("kill {i}: the build after the kill differs from an uninterrupted one: {f}").into());
        }
        outcomes.push(format!(
            "{:.2}s{}: {state}, {left} staging folder(s) left",
            delay.as_secs_f64(),
            if finished_first { " (build had finished)" } else { "" }
        ));
    }
    eprintln!("kill test (seed {seed}, uninterrupted build {:.2}s): {}", full.as_secs_f64(), outcomes.join("; "));
    Ok(())
}

// ---------------------------------------------------------------- Python

/// `.venv-interop`, with tests/python/requirements.txt.
fn venv() -> PinnedVenv<'static> {
    common::venv::interop()
}

/// Why the Python check cannot run here, if it cannot: `python3` missing or
/// too old, or PyPI unreachable when the venv still has to be installed.
fn python_unavailable() -> Option<String> {
    let probe = Command::new("python3")
        .args(["-c", "import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 10) else 3)"])
        .output();
    match probe {
        Err(_) => return Some("python3 not found on PATH".into()),
        Ok(o) if o.status.code() == Some(3) => return Some("python3 is older than 3.10".into()),
        Ok(o) if !o.status.success() => {
            return Some(format!(
                "python3 has no venv/ensurepip module: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
        Ok(_) => {}
    }
    if venv().is_ready() {
        return None;
    }
    // Ask PyPI through pip itself, so pip's own index, proxy and certificate settings apply.
    let o = Command::new("python3")
        .args(["-m", "pip", "index", "versions", "pyarrow", "--timeout", "15", "--retries", "1"])
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .output();
    match o {
        Ok(o) if o.status.success() => None,
        Ok(o) => {
            let stderr = String::from_utf8_lossy(&o.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
            Some(format!("PyPI unreachable (python3 -m pip index versions pyarrow: {last})"))
        }
        Err(e) => Some(format!("cannot run python3 -m pip: {e}")),
    }
}

/// A text-only benchmark with `[leakage] exact-only = true` (no model
/// needed): 24 multiple-choice questions, two of them twins, and a training
/// split holding verbatim copies of two more. Its release has the
/// `duplicates` config the demo does not.
fn leakage_release(dir: &Path) -> Result<PathBuf, String> {
    let item = |i: usize, id: String| {
        let options: Vec<String> = (0..4).map(|k| format!("option {} of {i}", (k + i) % 4)).collect();
        let answer = options[i % 4].clone();
        serde_json::json!({"id": id, "question": format!("Which of these is item {i}?"), "options": options, "answer": answer})
    };
    let mut bench: Vec<String> = (0..24).map(|i| item(i, format!("q{i:02}")).to_string()).collect();
    bench.push(item(3, "q03-twin".into()).to_string());
    let mut train: Vec<String> = (100..140).map(|i| item(i, format!("t{i}")).to_string()).collect();
    train.push(item(5, "train-copy-of-q05".into()).to_string());
    train.push(item(7, "train-copy-of-q07".into()).to_string());
    let write = |name: &str, text: String| std::fs::write(dir.join(name), text).map_err(|e| e.to_string());
    write("bench.jsonl", bench.join("\n") + "\n")?;
    write("train.jsonl", train.join("\n") + "\n")?;
    write(
        "leaky.toml",
        "[dataset]\nname = \"leaky\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\ndate-published = \"2026-11-21\"\n\n\
         [ingest]\npath = \"bench.jsonl\"\n\n[leakage]\ntrain = \"train.jsonl\"\nexact-only = true\n"
            .into(),
    )?;
    let o = Command::new(bin())
        .current_dir(dir)
        .args(["build", "leaky.toml", "--out-dir", "out"])
        .env("BLINDSPOT_MODEL_DIR", dir.join("no-model"))
        .output()
        .map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(format!("build leaky.toml failed: {}", String::from_utf8_lossy(&o.stderr)));
    }
    let release = dir.join("out/leaky/1.0.0");
    let pairs = release.join("duplicates");
    if !pairs.is_dir() {
        return Err(format!("{} has no duplicates config", release.display()));
    }
    Ok(release)
}

/// The Video-MME-layout fixture (`tests/fixtures/video/videomme`: 6 questions on 3
/// tiny MP4s) built with its variants, the videos embedded in the Parquet; folds
/// grouped by video need 3 folds for 3 videos.
fn video_release(dir: &Path) -> Result<PathBuf, String> {
    let src = root().join("tests/fixtures/video/videomme");
    std::fs::create_dir_all(dir.join("videos")).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(src.join("videos")).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        std::fs::copy(&path, dir.join("videos").join(path.file_name().unwrap_or_default()))
            .map_err(|e| e.to_string())?;
    }
    std::fs::copy(src.join("videomme.jsonl"), dir.join("videomme.jsonl")).map_err(|e| e.to_string())?;
    let toml = std::fs::read_to_string(src.join("videomme.toml")).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("videomme.toml"), format!("{toml}folds = 3\n\n[variants]\n")).map_err(|e| e.to_string())?;
    let o = Command::new(bin())
        .current_dir(dir)
        .args(["build", "videomme.toml", "--out-dir", "out"])
        .output()
        .map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(format!("build videomme.toml failed: {}", String::from_utf8_lossy(&o.stderr)));
    }
    Ok(dir.join("out/videomme-fixture/1.0.0"))
}

fn check_with_python(release: &Path, hf_home: &Path, extra: &[&str]) -> Result<String, Failed> {
    let o = Command::new(venv().python())
        .arg(root().join("tests/python/check_release.py"))
        .arg(release)
        .args(extra)
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_DATASETS_OFFLINE", "1")
        .env("HF_HOME", hf_home)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
        .output()
        .map_err(|e| format!("cannot run the venv's python: {e}"))?;
    let report = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    if !o.status.success() {
        return Err(format!("tests/python/check_release.py {} failed:\n{report}", release.display()).into());
    }
    Ok(report)
}

fn python_check() -> Result<(), Failed> {
    let start = Instant::now();
    venv().ensure(|_| Ok(()))?;
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = tmp.path().join("releases");
    build(&out, None)?;
    check_with_python(&release(&out), &tmp.path().join("hf-home"), &[])?;
    let leaky = tmp.path().join("leaky");
    std::fs::create_dir_all(&leaky).map_err(|e| e.to_string())?;
    let report = check_with_python(&leakage_release(&leaky)?, &tmp.path().join("hf-home"), &["--text-only"])?;
    // Twins q03/q03-twin, and q05, q07 copied from the training split.
    if !report.contains("config duplicates split test: 3 rows, as the card says") {
        return Err(format!("the duplicates config did not load with its 3 pairs:\n{report}").into());
    }
    // Every variant kind, CircularEval's rotations in one config with a rotation column.
    let fixture = common::variants_fixture_release(&tmp.path().join("fixture"));
    let report = check_with_python(&fixture, &tmp.path().join("hf-home"), &[])?;
    for line in [
        "config circular split test: 18 rows, as the card says",
        "config circular split test: rotation is the k of circular@k in all 18 rows",
    ] {
        if !report.contains(line) {
            return Err(format!("the variant fixture's circular config: no \"{line}\" in\n{report}").into());
        }
    }
    // A video benchmark's release: its default config and its video variants load.
    let video = video_release(&tmp.path().join("video"))?;
    let report = check_with_python(&video, &tmp.path().join("hf-home"), &["--text-only"])?;
    for line in [
        "load_dataset(dir, \"default\", split=\"test\"): 6 rows",
        "config no_video split test: 6 rows, as the card says",
        "config phantom0_video split test: 100 rows, as the card says",
    ] {
        if !report.contains(line) {
            return Err(format!("the video fixture's release: no \"{line}\" in\n{report}").into());
        }
    }
    eprintln!("python interop checks passed in {:.0}s", start.elapsed().as_secs_f64());
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![
        Trial::test("rebuild_with_1_and_2_threads_is_byte_identical", rebuild_with_1_and_2_threads_is_byte_identical),
        Trial::test(
            "killed_build_leaves_the_release_absent_or_complete",
            killed_build_leaves_the_release_absent_or_complete,
        ),
    ];
    let unavailable = if common::selected(&args, PYTHON_TRIAL) { python_unavailable() } else { None };
    trials.push(match unavailable {
        None => Trial::test(PYTHON_TRIAL, python_check),
        Some(why) if common::required("BLINDSPOT_REQUIRE_PYTHON") => Trial::test(PYTHON_TRIAL, move || {
            Err(format!("BLINDSPOT_REQUIRE_PYTHON=1 but the Python interop check cannot run: {why}").into())
        }),
        Some(why) => {
            eprintln!("skipping {PYTHON_TRIAL}: {why} (BLINDSPOT_REQUIRE_PYTHON=1 makes this a failure)");
            let why = format!("the Python interop check cannot run: {why}");
            // Run anyway (--include-ignored), it fails with the reason.
            Trial::test(PYTHON_TRIAL, move || Err(why.clone().into())).with_ignored_flag(true)
        }
    });
    libtest_mimic::run(&args, trials).exit();
}
