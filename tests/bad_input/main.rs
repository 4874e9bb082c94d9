//! The malformed-input corpus: every case exits 1 with a message naming the
//! file, the line or row, and the field where there is one; writes nothing;
//! never panics. Most cases are small files in `tests/fixtures/bad/`; the
//! large or binary ones (deep nesting, Parquet) are generated at test time,
//! and the 2 GB single-line JSON streams through a FIFO in its own test.

#[path = "../common/mod.rs"]
mod common;

mod cases;
mod generated;

use std::path::Path;

use cases::CASES;
use common::{blindspot, files_below, root};
use generated::GENERATED;

struct Case {
    /// `ingest` for a data file, `build` for a pipeline file, `metrics` for a
    /// prediction file (scored against `tests/fixtures/predictions/questions.jsonl`).
    command: &'static str,
    file: &'static str,
    /// Substrings the error output must contain (location first).
    expect: &'static [&'static str],
}

/// A case whose file is written at test time (too big, or binary).
struct Generated {
    case: Case,
    make: fn(&Path),
}

/// Runs one case in `dir` and checks exit code, message and that nothing was written.
fn check(case: &Case, dir: &Path) -> Result<(), String> {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = blindspot();
    cmd.current_dir(dir);
    match case.command {
        "ingest" => cmd.args(["ingest", case.file, "-o"]).arg(out.path().join("out.parquet")),
        "metrics" => cmd
            .args(["metrics", "--samples"])
            .arg(root().join("tests/fixtures/predictions/questions.jsonl"))
            .args(["--predictions", case.file, "-o"])
            .arg(out.path().join("metrics")),
        _ => cmd.args(["build", case.file, "--out-dir"]).arg(out.path().join("releases")),
    };
    let output = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{}: exit {:?}\n{stderr}", case.file, output.status);
    for want in case.expect {
        if !stderr.contains(want) {
            return Err(format!("{}: expected {want:?} in:\n{stderr}", case.file));
        }
    }
    assert!(!stderr.contains("panicked") && !stderr.contains("internal error"), "{}: {stderr}", case.file);
    let written: Vec<String> =
        files_below(out.path()).into_iter().filter(|f| !f.starts_with("releases/") || !f.ends_with('/')).collect();
    assert!(written.is_empty(), "{}: wrote {written:?}", case.file);
    Ok(())
}

#[test]
fn every_bad_input_exits_1_with_a_located_message_and_writes_nothing() {
    assert!(CASES.len() + GENERATED.len() >= 40, "{} cases", CASES.len() + GENERATED.len());
    let bad = root().join("tests/fixtures/bad");
    let mut wrong: Vec<String> = CASES.iter().filter_map(|case| check(case, &bad).err()).collect();
    let work = tempfile::tempdir().unwrap();
    for g in GENERATED {
        (g.make)(&work.path().join(g.case.file));
        wrong.extend(check(&g.case, work.path()).err());
    }
    assert!(wrong.is_empty(), "{} cases with the wrong message:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn validate_reports_problems_of_every_file_at_once() {
    let bad = root().join("tests/fixtures/bad");
    let output =
        blindspot().current_dir(&bad).args(["validate", "unknown-key.toml", "wrong-types.toml"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr.contains("unknown-key.toml:7:1") && stderr.contains("wrong-types.toml:3:11"), "{stderr}");
    assert!(stderr.contains("7 problems found"), "{stderr}");
}

#[test]
fn unknown_subcommand_or_flag_is_a_usage_error_not_a_bug() {
    let output = blindspot().args(["build", "--no-such-flag"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
}

/// A 2 GB JSON file on one line, one record holding a runaway string, streamed
/// through a FIFO (nothing lands on disk): rejected at the per-record limit
/// with the file, line, column and byte offset, under a 3 GB address-space
/// limit, having read only about the limit's worth of the stream.
#[test]
fn a_2gb_single_line_json_is_rejected_in_bounded_memory() {
    const TOTAL: u64 = 2 << 30;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("huge.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: mkfifo is not available");
        return;
    }
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            let mut sent = 0u64;
            let head = br#"[{"id": "1", "question": ""#;
            if f.write_all(head).is_err() {
                return sent;
            }
            sent += head.len() as u64;
            let chunk = vec![b'a'; 1 << 20];
            while sent < TOTAL {
                if f.write_all(&chunk).is_err() {
                    return sent; // the reader stopped: a broken pipe
                }
                sent += chunk.len() as u64;
            }
            let _ = f.write_all(br#"", "answer": "yes"}]"#);
            sent
        })
    };
    let out = dir.path().join("out");
    let bin = assert_cmd::cargo::cargo_bin("blindspot");
    let time = Path::new("/usr/bin/time").exists();
    let script = if time {
        r#"ulimit -v 3000000; exec /usr/bin/time -f "peak RSS %M KB, %e s" "$0" "$@""#
    } else {
        r#"ulimit -v 3000000; exec "$0" "$@""#
    };
    let start = std::time::Instant::now();
    let output = std::process::Command::new("sh")
        .current_dir(dir.path())
        .args(["-c", script])
        .arg(&bin)
        .args(["ingest", "huge.json", "-o"])
        .arg(out.join("out.parquet"))
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    if !writer.is_finished() {
        // The binary never opened the FIFO: open it so the writer ends.
        drop(std::fs::File::open(&fifo));
    }
    let sent = writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("2 GB single-line JSON: {elapsed:.2?}, {} MiB streamed before the stop; {stderr}", sent >> 20);
    assert_eq!(output.status.code(), Some(1), "exit {:?}\n{stderr}", output.status);
    for want in ["huge.json:1:2:", "larger than the 64 MiB limit", "byte offset 1", "runaway value"] {
        assert!(stderr.contains(want), "expected {want:?} in:\n{stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(sent < TOTAL / 4, "read {sent} bytes of the stream: reading is not bounded");
    assert!(!out.exists(), "wrote {:?}", files_below(&out));
}

/// Outputs are written only where they belong: a device is never replaced, a
/// symbolic link is written through, and a folder blindspot did not write is
/// never emptied.
#[test]
fn outputs_replace_only_what_blindspot_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let input = root().join("tests/fixtures/good/shortcut.jsonl");
    // A character device.
    let o = blindspot().arg("ingest").arg(&input).args(["-o", "/dev/null"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("the output is a character device"), "{o:?}");
    {
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }
    // A symbolic link: the file it points at is written, the link stays.
    let target = dir.path().join("target.parquet");
    std::fs::write(&target, b"old").unwrap();
    let link = dir.path().join("link.parquet");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    blindspot().arg("ingest").arg(&input).arg("-o").arg(&link).assert().success();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::read(&target).unwrap().starts_with(b"PAR1"));
    // A folder holding someone's files is not emptied; one blindspot wrote is replaced.
    let out = dir.path().join("mine");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("notes.txt"), b"keep me").unwrap();
    let run = || blindspot().arg("diagnose").arg(&input).arg("--out").arg(&out).output().unwrap();
    let o = run();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("holds files blindspot did not write"), "{o:?}");
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"keep me");
    std::fs::remove_file(out.join("notes.txt")).unwrap();
    assert!(run().status.success(), "an empty folder is filled");
    assert!(run().status.success(), "a folder blindspot wrote is replaced");
    assert!(out.join("diagnose.json").is_file());
    // The working folder, empty: refused by name (".", never an empty path), nothing written.
    let here = dir.path().join("here");
    std::fs::create_dir(&here).unwrap();
    for out in [".", "./"] {
        let o = blindspot().current_dir(&here).arg("diagnose").arg(&input).args(["--out", out]).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(stderr.starts_with("error: .: the output folder is the working folder"), "{stderr}");
    }
    let o = blindspot().current_dir(&here).args(["ingest", ".", "-o", "../x.parquet"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.starts_with("error: .: "), "{stderr}");
    assert_eq!(std::fs::read_dir(&here).unwrap().count(), 0);
}

/// A file that is not there is named with what to do, not the raw OS error.
#[test]
fn a_missing_file_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&["build", "nowhere.toml"][..], &["validate", "nowhere.toml"]] {
        let o = blindspot().current_dir(dir.path()).args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains("nowhere.toml: no such file or folder (check the path"), "{stderr}");
        assert!(!stderr.contains("os error"), "{stderr}");
    }
}
