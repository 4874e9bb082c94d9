//! Python venvs of pinned requirements for the tests that run Python tools:
//! installed once, then reused while a stamp (the sha256 of each requirements
//! file it covers) matches.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use sha2::{Digest, Sha256};

/// The file in a venv that records what it was installed from.
const STAMP: &str = "blindspot-requirements.sha256";

/// A venv at `dir` holding `requirements` (paths relative to the project root):
/// the last file is installed, and the stamp covers every file, so a venv layered
/// on another one is rebuilt when the base's requirements change.
pub struct PinnedVenv<'a> {
    pub dir: PathBuf,
    pub requirements: &'a [&'a str],
}

impl PinnedVenv<'_> {
    pub fn python(&self) -> PathBuf {
        self.dir.join("bin/python")
    }

    fn wanted_stamp(&self) -> Result<String, String> {
        let mut stamp = String::new();
        for file in self.requirements {
            let reqs = std::fs::read(super::root().join(file)).map_err(|e| format!("{file}: {e}"))?;
            stamp.push_str(&hex::encode(Sha256::digest(&reqs)));
            stamp.push('\n');
        }
        Ok(stamp)
    }

    /// Whether the venv is installed from the current requirements.
    pub fn is_ready(&self) -> bool {
        let Ok(want) = self.wanted_stamp() else { return false };
        self.python().exists() && std::fs::read_to_string(self.dir.join(STAMP)).is_ok_and(|s| s == want)
    }

    /// Creates the venv and installs its requirements unless it is ready;
    /// `prepare` runs on the new venv's interpreter before pip does.
    pub fn ensure(&self, prepare: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
        if self.is_ready() {
            return Ok(());
        }
        let (dir, start) = (&self.dir, Instant::now());
        // Start clean: a venv from other requirements may hold packages no longer pinned.
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        run_ok(Command::new("python3").args(["-m", "venv"]).arg(dir), &format!("python3 -m venv {}", dir.display()))?;
        prepare(&self.python())?;
        let install = self.requirements.last().ok_or("a venv without requirements")?;
        run_ok(
            Command::new(self.python())
                .args(["-m", "pip", "install", "--quiet", "--no-cache-dir", "--disable-pip-version-check", "-r"])
                .arg(super::root().join(install)),
            &format!("pip install -r {install}"),
        )?;
        // The stamp last, atomically: an interrupted install is redone next time.
        let tmp = dir.join(format!("{STAMP}.tmp"));
        std::fs::write(&tmp, self.wanted_stamp()?).map_err(|e| e.to_string())?;
        std::fs::rename(&tmp, dir.join(STAMP)).map_err(|e| e.to_string())?;
        eprintln!("installed {install} into {} in {:.0}s", dir.display(), start.elapsed().as_secs_f64());
        Ok(())
    }
}

/// `.venv-interop`: the pinned environment (tests/python/requirements.txt) of
/// the tests that load releases with Python libraries.
pub fn interop() -> PinnedVenv<'static> {
    PinnedVenv { dir: super::root().join(".venv-interop"), requirements: &["tests/python/requirements.txt"] }
}

/// The folder of the harness venv (lmms-eval 0.7.3, tests/harness/requirements.txt):
/// BLINDSPOT_HARNESS_VENV (relative to the project root), else `.venv-harness`.
pub fn harness_dir() -> PathBuf {
    match std::env::var_os("BLINDSPOT_HARNESS_VENV") {
        Some(d) if !d.is_empty() => super::root().join(d),
        _ => super::root().join(".venv-harness"),
    }
}

/// The harness venv's interpreter when it imports lmms-eval, or why not
/// (it is installed by the harness round trip, 7.5 GB, never here).
pub fn harness_python() -> Result<PathBuf, String> {
    let python = harness_dir().join("bin/python");
    if !python.exists() {
        return Err(format!("lmms-eval is not installed at {}", harness_dir().display()));
    }
    match Command::new(&python).args(["-c", "import lmms_eval.utils"]).output() {
        Ok(o) if o.status.success() => Ok(python),
        Ok(o) => {
            Err(format!("{} cannot import lmms_eval: {}", python.display(), String::from_utf8_lossy(&o.stderr).trim()))
        }
        Err(e) => Err(format!("{}: {e}", python.display())),
    }
}

/// `python3` on PATH, or why it cannot run.
pub fn python3() -> Result<PathBuf, String> {
    match Command::new("python3").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(PathBuf::from("python3")),
        Ok(o) => Err(format!("`python3 --version` failed: {}", String::from_utf8_lossy(&o.stderr).trim())),
        Err(e) => Err(format!("python3 not found on PATH ({e})")),
    }
}

/// A Python that imports PyYAML: the interop venv when it is installed, else
/// `python3` when it has PyYAML, else the interop venv installed now (it pins
/// PyYAML); or why there is none.
pub fn python_with_yaml() -> Result<PathBuf, String> {
    let venv = interop();
    if venv.is_ready() {
        return Ok(venv.python());
    }
    let python = python3()?;
    if Command::new(&python).args(["-c", "import yaml"]).output().is_ok_and(|o| o.status.success()) {
        return Ok(python);
    }
    venv.ensure(|_| Ok(()))
        .map_err(|e| format!("python3 has no PyYAML, and installing {} failed: {e}", venv.dir.display()))?;
    Ok(venv.python())
}

/// The interpreter `test` runs, or `None` once it has said why it skips.
/// With BLINDSPOT_REQUIRE_PYTHON=1 (CI) a missing interpreter fails the test.
pub fn python_or_skip(test: &str, python: Result<PathBuf, String>) -> Option<PathBuf> {
    match python {
        Ok(python) => Some(python),
        Err(why) if super::required("BLINDSPOT_REQUIRE_PYTHON") => {
            panic!("BLINDSPOT_REQUIRE_PYTHON=1 but {test} cannot run: {why}")
        }
        Err(why) => {
            eprintln!("skipping {test}: {why} (BLINDSPOT_REQUIRE_PYTHON=1 makes this a failure)");
            None
        }
    }
}

/// Runs `cmd`; its stdout and stderr, or an error naming `what` with them.
pub fn run_ok(cmd: &mut Command, what: &str) -> Result<String, String> {
    let o = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    if o.status.success() { Ok(text) } else { Err(format!("{what} failed ({}):\n{text}", o.status)) }
}
