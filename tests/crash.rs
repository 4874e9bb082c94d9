//! Crash safety under load, on a generated 100,000-question
//! benchmark:
//! - two `blindspot build` of the same pipeline at once: one waits for the
//!   other's build lock, both exit 0, one writes the release and the other
//!   finds it up to date; the release verifies;
//! - 20 SIGKILLs at seeded random points of a build: after each, the release
//!   is absent or verifies, and the next build completes, removes the staging
//!   folder the killed one left, and gives the bytes of an uninterrupted build;
//! - 20 races (on the small `canonical` fixture): a build frozen while it
//!   stages, its `.build.lock` deleted, a second build of the same release run
//!   to the end; the frozen build's staging folder survives, and once thawed it
//!   either publishes (or finds up to date) a release that verifies with every
//!   file of its manifest, or exits 1 having published nothing;
//! - an ingest killed while it writes leaves its temporary file, and the next
//!   ingest of the same output removes it.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

const QUESTIONS: usize = 100_000;
const KILLS: usize = 20;
const RACES: usize = 20;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_blindspot")
}

/// A multiple-choice benchmark of `n` questions in five types, and its pipeline
/// (ingest, option-shuffle variants, release).
fn workspace(n: usize) -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let findings = ["effusion", "pneumothorax", "nodule", "cardiomegaly", "consolidation", "atelectasis", "edema"];
    let places = ["left apex", "right base", "left base", "right apex", "hilum", "mediastinum"];
    let types = ["presence", "location", "negation", "differential", "geometry"];
    let mut f = std::io::BufWriter::new(std::fs::File::create(work.path().join("bench.jsonl")).unwrap());
    for i in 0..n {
        let t = types[i % types.len()];
        let finding = findings[rng.random_range(0..findings.len())];
        let start = rng.random_range(0..=places.len() - 4);
        let options = &places[start..start + 4];
        let answer = options[rng.random_range(0..4)];
        let record = serde_json::json!({
            "id": format!("q{i:06}"),
            "question": format!("Where is the {finding} seen on this radiograph ({t} {i})?"),
            "options": options,
            "answer": answer,
            "question_type": t,
        });
        writeln!(f, "{record}").unwrap();
    }
    f.flush().unwrap();
    std::fs::write(
        work.path().join("bench.toml"),
        "[dataset]\nname = \"bench\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n\n\
         [ingest]\npath = \"bench.jsonl\"\n\n[variants]\nkinds = [\"option_shuffle\"]\n",
    )
    .unwrap();
    work
}

fn build_command(work: &Path) -> Command {
    let mut cmd = Command::new(bin());
    cmd.current_dir(work).args(["build", "--no-cache", "bench.toml", "--out-dir", "out"]);
    cmd
}

fn release(work: &Path) -> PathBuf {
    work.join("out/bench/1.0.0")
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("cannot run {}: {e}", bin()))
}

fn ok(o: &Output, what: &str) -> String {
    assert!(o.status.success(), "{what} failed ({}):\n{}", o.status, String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn verify(dir: &Path) -> Result<(), String> {
    let o = run(Command::new(bin()).arg("verify").arg(dir));
    if o.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&o.stderr).into_owned()) }
}

fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    common::files_below(dir).into_iter().map(|f| (f.clone(), std::fs::read(dir.join(&f)).unwrap())).collect()
}

fn staging_folders(work: &Path) -> usize {
    std::fs::read_dir(work.join("out/bench"))
        .map(|rd| rd.flatten().filter(|e| e.file_name().to_string_lossy().contains("-building-")).count())
        .unwrap_or(0)
}

#[test]
fn two_builds_at_once_one_waits_and_neither_corrupts_the_release() {
    let work = workspace(QUESTIONS);
    let spawn =
        || build_command(work.path()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn blindspot");
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let outs = [ok(&a, "the first build"), ok(&b, "the second build")];
    let written = outs.iter().filter(|o| o.contains("[written]")).count();
    let up_to_date = outs.iter().filter(|o| o.contains("[up to date]")).count();
    assert_eq!((written, up_to_date), (1, 1), "one build writes, the other finds it done: {outs:?}");
    verify(&release(work.path())).unwrap();
    assert_eq!(staging_folders(work.path()), 0);
}

#[test]
fn builds_killed_at_random_points_leave_the_release_absent_or_whole() {
    let seed: u64 = std::env::var("BLINDSPOT_KILL_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    let work = workspace(QUESTIONS);
    let start = Instant::now();
    ok(&run(&mut build_command(work.path())), "an uninterrupted build");
    let span = start.elapsed().as_secs_f64();
    let reference = tree(&release(work.path()));
    verify(&release(work.path())).expect("an uninterrupted build verifies");

    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (mut absent, mut whole, mut cleaned) = (0, 0, 0);
    for i in 0..KILLS {
        std::fs::remove_dir_all(work.path().join("out")).unwrap();
        // Kill points spread over the whole build, one per twentieth.
        let delay = Duration::from_secs_f64(span * (i as f64 + rng.random::<f64>()) / KILLS as f64);
        let mut child =
            build_command(work.path()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn blindspot");
        std::thread::sleep(delay);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let dir = release(work.path());
        if dir.exists() {
            verify(&dir).unwrap_or_else(|e| panic!("kill {i} after {delay:?}: a partial release: {e}"));
            whole += 1;
        } else {
            absent += 1;
        }
        let left = staging_folders(work.path());
        let next = run(&mut build_command(work.path()));
        ok(&next, &format!("the build after kill {i} ({delay:?})"));
        if left > 0 {
            assert!(
                String::from_utf8_lossy(&next.stderr).contains("unfinished staging folder"),
                "kill {i}: the next build did not say it removed {left} staging folder(s)"
            );
            cleaned += 1;
        }
        assert_eq!(staging_folders(work.path()), 0, "kill {i}: staging folders survive the next build");
        let after = tree(&dir);
        assert!(after == reference, "kill {i}: the build after the kill differs from an uninterrupted one");
    }
    eprintln!(
        "{KILLS} kills over a {span:.2}s build of {QUESTIONS} questions (seed {seed}): \
         {absent} left no release, {whole} a complete one; {cleaned} left staging folders the next build removed"
    );
    assert!(absent > 0, "no kill landed before the rename: the kill points do not cover the build");
}

/// Sends `signal` (`STOP`, `CONT`) to a child process.
fn signal(child: &std::process::Child, signal: &str) {
    let sent = Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status();
    assert!(sent.is_ok_and(|s| s.success()), "kill -{signal} {} failed", child.id());
}

/// A child's exit and output, waited for at most a minute (a build that hangs
/// fails the test instead of stalling it).
fn finish(mut child: std::process::Child, what: &str) -> (Option<i32>, String, String) {
    use std::io::Read;
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (status.code(), out, err)
}

/// The staging folder (not its lock file) of a build in `parent`, if any.
fn staging_folder(parent: &Path) -> Option<PathBuf> {
    std::fs::read_dir(parent).ok()?.flatten().map(|e| e.path()).find(|p| {
        p.file_name().is_some_and(|n| n.to_string_lossy().contains("-building-"))
            && p.extension().is_none_or(|x| x != "lock")
            && p.is_dir()
    })
}

/// `blindspot verify` passes on `dir` and counts every file its manifest lists,
/// which are all the files of the release but the manifest.
fn verifies_whole(dir: &Path, what: &str) {
    let o = run(Command::new(bin()).arg("verify").arg(dir));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{what}: the release does not verify:\n{}", String::from_utf8_lossy(&o.stderr));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let listed = manifest["files"].as_object().unwrap().len();
    let present = common::files_below(dir).len() - 1;
    assert_eq!(listed, present, "{what}: the manifest lists {listed} of the release's {present} files");
    assert!(stdout.starts_with(&format!("verified {listed} files in ")), "{what}: {stdout}");
}

#[test]
fn a_second_build_after_the_lock_file_was_deleted_never_breaks_the_first_20_times() {
    let work = common::fixture_workspace();
    let parent = work.path().join("out/canonical");
    let build = || {
        let mut cmd = Command::new(bin());
        cmd.current_dir(work.path())
            .args(["build", "--no-cache", "canonical.toml", "--out-dir", "out"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    };
    let start = Instant::now();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
    let (mut frozen_live, mut first_published, mut first_up_to_date, mut first_failed) = (0, 0, 0, 0);
    for i in 0..RACES {
        let _ = std::fs::remove_dir_all(work.path().join("out"));
        let first = build().spawn().expect("spawn blindspot");
        // Once its staging folder exists the first build holds the release lock and
        // its staging lock; it is frozen a little later each time (up to 2 ms in).
        let deadline = Instant::now() + Duration::from_secs(60);
        while staging_folder(&parent).is_none() && !parent.join("1.0.0").exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(50));
        }
        std::thread::sleep(Duration::from_micros(rng.random_range(0..2000)));
        signal(&first, "STOP");
        // Still staging (not yet renamed): the second build must leave this folder alone.
        let live = staging_folder(&parent).map(|dir| {
            let files = common::files_below(&dir);
            (dir, files)
        });
        match std::fs::remove_file(parent.join(".build.lock")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => panic!("race {i}: cannot delete the lock: {e}"),
            _ => {}
        }
        let (code, out, err) = finish(build().spawn().expect("spawn blindspot"), "the second build");
        assert!(matches!(code, Some(0 | 1)), "race {i}: the second build exited {code:?}:\n{err}");
        if let Some((dir, files)) = &live {
            frozen_live += 1;
            let now = common::files_below(dir);
            let lost: Vec<&String> = files.iter().filter(|f| !now.contains(f)).collect();
            assert!(
                dir.is_dir() && lost.is_empty(),
                "race {i}: the second build deleted the live staging folder's {lost:?}"
            );
        }
        let second_wrote = code == Some(0) && out.contains("[written]");
        signal(&first, "CONT");
        let (code, out, err) = finish(first, "the first build");
        let release = parent.join("1.0.0");
        match code {
            Some(0) => {
                assert!(out.contains("[written]") || out.contains("[up to date]"), "race {i}: {out}");
                if out.contains("[written]") {
                    first_published += 1;
                    assert!(!second_wrote, "race {i}: both builds say they wrote the release");
                } else {
                    first_up_to_date += 1;
                }
                verifies_whole(&release, &format!("race {i}"));
            }
            Some(1) => {
                first_failed += 1;
                // Nothing of the first build's was published: any release there is the second's.
                assert!(!release.exists() || second_wrote, "race {i}: the failed first build left a release:\n{err}");
                if release.exists() {
                    verifies_whole(&release, &format!("race {i}"));
                }
            }
            other => panic!("race {i}: the first build exited {other:?}:\n{err}"),
        }
        assert_eq!(staging_folders_in(&parent), 0, "race {i}: staging folders or their locks were left behind");
    }
    let elapsed = start.elapsed();
    eprintln!(
        "{RACES} races in {elapsed:.2?}: {frozen_live} froze the first build while it staged; the first build \
         published {first_published}, found {first_up_to_date} up to date, failed {first_failed}"
    );
    assert!(frozen_live >= RACES / 2, "only {frozen_live} of {RACES} races caught the first build staging");
}

/// Staging folders and staging lock files in a release's parent folder.
fn staging_folders_in(parent: &Path) -> usize {
    std::fs::read_dir(parent)
        .map(|rd| rd.flatten().filter(|e| e.file_name().to_string_lossy().contains("-building-")).count())
        .unwrap_or(0)
}

/// `ingest -o out/q.parquet` killed while it writes leaves its temporary
/// file beside the output; the next run of the same output removes it, and
/// the folder then holds the output alone.
#[test]
fn a_killed_ingest_leaves_no_temporary_file_after_the_next_run() {
    let work = workspace(QUESTIONS);
    std::fs::create_dir(work.path().join("out")).unwrap();
    let ingest = || {
        let mut c = Command::new(bin());
        c.current_dir(work.path()).args(["ingest", "bench.toml", "-o", "out/q.parquet"]);
        c
    };
    let temporary = || -> Vec<String> {
        std::fs::read_dir(work.path().join("out"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".blindspot"))
            .collect()
    };
    let child = ingest().stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while temporary().is_empty() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(2));
    }
    signal(&child, "KILL");
    let (code, _, _) = finish(child, "killed ingest");
    assert_eq!(code, None, "the ingest ended before it was killed");
    let left = temporary();
    assert!(!left.is_empty(), "the killed ingest left no temporary file to clean");
    assert!(!work.path().join("out/q.parquet").exists());
    ok(&run(&mut ingest()), "ingest after the kill");
    let names: Vec<String> = std::fs::read_dir(work.path().join("out"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["q.parquet"], "left by the killed run: {left:?}");
}
