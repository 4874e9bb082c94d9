//! One build at a time per release name.
//!
//! `releases/<name>/.build.lock` is held with an OS file lock (`flock` on
//! Unix) for as long as a build stages and renames its release. A second
//! build of the same name waits for it, then finds the release up to date (or
//! fails with "bump the version" when its bytes differ) — two builds never
//! rename into the same folder. The OS drops the lock when its holder dies,
//! even by SIGKILL, so a killed build never blocks the next one.
//!
//! Each staging folder (`.<version>-building-*`) carries its own liveness: a
//! file lock on `<folder>.lock`, taken before the folder exists and held by its
//! build until the folder is renamed or removed. While holding the release
//! lock, a build deletes only staging folders whose own lock is free — left by
//! killed builds — so a live build's folder survives even when `.build.lock`
//! itself was deleted under it.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::error::{Error, Result, display_path};

/// Name of the lock file inside `releases/<name>/`.
pub const LOCK_FILE: &str = ".build.lock";
/// Infix of a staging folder's name (`.<version>-building-XXXXXX`).
pub const STAGING_INFIX: &str = "-building-";

/// The held lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct BuildLock {
    file: File,
}

impl BuildLock {
    /// Takes the lock of the release folder `parent`, waiting (and saying so
    /// on stderr) while another build holds it.
    pub fn acquire(parent: &Path) -> Result<BuildLock> {
        let path = parent.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let who = if holder.is_empty() { String::new() } else { format!(" (process {holder})") };
                eprintln!(
                    "note: another blindspot build of {} is running{who}; waiting for it to finish (lock {})",
                    display_path(parent),
                    display_path(&path)
                );
                file.lock().map_err(|e| Error::io(&path, e))?;
            }
            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        // Who holds it, for the message of a build that has to wait.
        let pid = std::process::id().to_string();
        let _ =
            file.set_len(0).and_then(|_| file.seek(SeekFrom::Start(0))).and_then(|_| file.write_all(pid.as_bytes()));
        Ok(BuildLock { file })
    }

    /// Deletes staging folders left in `parent` by builds that were killed (their
    /// own lock is free). Returns how many were removed.
    pub fn remove_stale_staging(&self, parent: &Path) -> Result<usize> {
        let mut removed = 0;
        let entries = std::fs::read_dir(parent).map_err(|e| Error::io(parent, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(parent, e))?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !(name.starts_with('.') && name.contains(STAGING_INFIX)) {
                continue;
            }
            let path = entry.path();
            let free = |lock: &Path| match File::open(lock) {
                Ok(f) => f.try_lock().is_ok(),
                Err(_) => false,
            };
            if entry.file_type().map_err(|e| Error::io(&path, e))?.is_dir() {
                // A folder goes only with its free lock file: one without a lock file
                // may belong to a build between creating its lock and locking it.
                let lock_path = parent.join(format!("{name}.lock"));
                if free(&lock_path) {
                    std::fs::remove_dir_all(&path).map_err(|e| Error::io(&path, e))?;
                    let _ = std::fs::remove_file(&lock_path);
                    removed += 1;
                }
            } else if let Some(dir_name) = name.strip_suffix(".lock")
                && !parent.join(dir_name).exists()
                && free(&path)
            {
                // The lock of a build killed before its folder existed (or after it went).
                let _ = std::fs::remove_file(&path);
                removed += 1;
            }
        }
        if removed > 0 {
            eprintln!(
                "note: removed {removed} unfinished staging folder(s) in {} left by an interrupted build",
                display_path(parent)
            );
        }
        Ok(removed)
    }
}

/// A staging folder and the lock that says its build is alive. Dropping it
/// removes the folder (if it was not kept) and its lock file.
#[derive(Debug)]
pub struct Staging {
    dir: std::path::PathBuf,
    lock: Option<tempfile::NamedTempFile>,
    kept: bool,
}

impl Staging {
    /// Creates `.<version>-building-XXXXXX` in `parent`, its lock taken first.
    pub fn create(parent: &Path, version: &str) -> Result<Staging> {
        let lock = tempfile::Builder::new()
            .prefix(&format!(".{version}{STAGING_INFIX}"))
            .suffix(".lock")
            .tempfile_in(parent)
            .map_err(|e| Error::io(parent, e))?;
        lock.as_file().try_lock().map_err(|e| Error::io(lock.path(), std::io::Error::other(e.to_string())))?;
        let name = lock.path().to_string_lossy();
        let dir = std::path::PathBuf::from(name.strip_suffix(".lock").unwrap_or(&name).to_string());
        std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(Staging { dir, lock: Some(lock), kept: false })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The folder, which is no longer removed on drop (the lock still is).
    pub fn keep(&mut self) -> std::path::PathBuf {
        self.kept = true;
        self.dir.clone()
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
        // The lock file goes last: while it is held, the folder is alive.
        drop(self.lock.take());
    }
}

impl Drop for BuildLock {
    fn drop(&mut self) {
        // Leave the file (deleting it would race with a waiting build that
        // already opened it); the OS lock is what matters.
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_waits_until_the_first_drops() {
        let dir = tempfile::tempdir().unwrap();
        let first = BuildLock::acquire(dir.path()).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let p = dir.path().to_path_buf();
        let t = std::thread::spawn(move || {
            let _second = BuildLock::acquire(&p).unwrap();
            tx.send(()).unwrap();
        });
        assert!(rx.recv_timeout(std::time::Duration::from_millis(300)).is_err(), "the lock did not exclude");
        drop(first);
        rx.recv_timeout(std::time::Duration::from_secs(10)).expect("the waiting build never got the lock");
        t.join().unwrap();
    }

    #[test]
    fn a_live_staging_folder_survives_a_second_build_whose_lock_file_was_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let first = BuildLock::acquire(dir.path()).unwrap();
        let staging = Staging::create(dir.path(), "1.0.0").unwrap();
        std::fs::write(staging.path().join("data.parquet"), b"rows").unwrap();
        // Someone deletes .build.lock: a second build takes a lock on a new file.
        std::fs::remove_file(dir.path().join(LOCK_FILE)).unwrap();
        let second = BuildLock::acquire(dir.path()).unwrap();
        assert_eq!(second.remove_stale_staging(dir.path()).unwrap(), 0);
        assert!(staging.path().join("data.parquet").is_file(), "the live build's files were deleted");
        drop(first);
        // A folder without its lock file may be a build between creating and locking it.
        let young = dir.path().join(".1.0.0-building-young");
        std::fs::create_dir(&young).unwrap();
        assert_eq!(second.remove_stale_staging(dir.path()).unwrap(), 0);
        std::fs::remove_dir(&young).unwrap();
        // A folder whose lock file is free (its build was killed) is stale.
        let dead = dir.path().join(".1.0.0-building-dead");
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(dir.path().join(".1.0.0-building-dead.lock"), b"").unwrap();
        assert_eq!(second.remove_stale_staging(dir.path()).unwrap(), 1);
        assert!(!dead.exists() && staging.path().is_dir());
        let path = staging.path().to_path_buf();
        drop(staging);
        assert!(!path.exists(), "a staging folder that was not kept is removed with its build");
    }

    #[test]
    fn stale_staging_folders_are_removed_and_releases_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".1.0.0-building-abc123/data")).unwrap();
        std::fs::write(dir.path().join(".1.0.0-building-abc123.lock"), "").unwrap();
        std::fs::write(dir.path().join(".1.0.0-building-orphan.lock"), "").unwrap();
        std::fs::create_dir_all(dir.path().join("1.0.0/data")).unwrap();
        std::fs::write(dir.path().join(".1.0.0-building-file"), "not a folder").unwrap();
        let lock = BuildLock::acquire(dir.path()).unwrap();
        assert_eq!(lock.remove_stale_staging(dir.path()).unwrap(), 2);
        assert!(dir.path().join("1.0.0/data").is_dir());
        assert!(!dir.path().join(".1.0.0-building-abc123").exists());
        assert!(!dir.path().join(".1.0.0-building-abc123.lock").exists());
        assert!(!dir.path().join(".1.0.0-building-orphan.lock").exists());
        assert!(dir.path().join(".1.0.0-building-file").exists());
    }
}
