//! One build at a time per release name.
//!
//! `releases/<name>/.build.lock` is held with an OS file lock (`flock` on
//! Unix) for as long as a build stages and renames its release. A second
//! build of the same name waits for it, then finds the release up to date (or
//! fails with "bump the version" when its bytes differ) — two builds never
//! rename into the same folder. The OS drops the lock when its holder dies,
//! even by SIGKILL, so a killed build never blocks the next one.
//!
//! While holding the lock, a build also deletes the staging folders
//! (`.<version>-building-*`) that killed builds left behind: no live build can
//! own them, because staging only ever happens under the lock.

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

    /// Deletes staging folders left in `parent` by builds that were killed.
    /// Returns how many were removed.
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
            if entry.file_type().map_err(|e| Error::io(&path, e))?.is_dir() {
                std::fs::remove_dir_all(&path).map_err(|e| Error::io(&path, e))?;
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
    fn stale_staging_folders_are_removed_and_releases_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".1.0.0-building-abc123/data")).unwrap();
        std::fs::create_dir_all(dir.path().join("1.0.0/data")).unwrap();
        std::fs::write(dir.path().join(".1.0.0-building-file"), "not a folder").unwrap();
        let lock = BuildLock::acquire(dir.path()).unwrap();
        assert_eq!(lock.remove_stale_staging(dir.path()).unwrap(), 1);
        assert!(dir.path().join("1.0.0/data").is_dir());
        assert!(!dir.path().join(".1.0.0-building-abc123").exists());
        assert!(dir.path().join(".1.0.0-building-file").exists());
    }
}
