//! Writing files so that a failed or interrupted run leaves nothing
//! half-written: durable writes, writes through a temporary file renamed into
//! place, folders filled beside their target and swapped in.
//!
//! A temporary file or folder is named after its output and the process
//! writing it, `.blindspot-<output name>.<pid>.<random>.tmp`, beside the
//! output; a run killed before its rename leaves one behind, and the next
//! write of the same output removes those whose process has ended.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Location, Problem, Result};

/// Writes `bytes` to `path` durably.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = File::create(path).map_err(|e| Error::io(path, e))?;
    f.write_all(bytes).map_err(|e| Error::io(path, e))?;
    f.sync_all().map_err(|e| Error::io(path, e))
}

/// Writes `value` as pretty JSON (with a final newline) durably.
pub fn write_json<T: serde::Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(|e| Error::Bug(e.to_string()))?;
    text.push('\n');
    write_bytes(path, text.as_bytes())
}

/// The marker file in every folder [`atomic_dir`] writes: such a folder may be
/// replaced by the next run; any other existing folder is left alone.
pub const OUTPUT_MARKER: &str = ".blindspot-output";

/// What kind of thing is at `path`, for a refusal ("a folder", "a character device").
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_fifo() {
            return "a named pipe";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() { "a folder" } else { "not a regular file" }
}

fn refuse(path: &Path, what: String, help: &str) -> Error {
    Error::one(Problem::new(Location::file(path), what).help(help.to_string()))
}

/// Writes through a temporary file in the same folder, then renames it into place.
/// Only a regular file is replaced (a device, a pipe or a folder is an error); a
/// symbolic link is written through, to the file it points at.
pub fn atomic_write(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let mut target = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&target) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&target).map_err(|e| Error::io(&target, e))?;
                target = match target.parent() {
                    Some(p) if link.is_relative() => p.join(link),
                    _ => link,
                };
            }
            Ok(m) if !m.is_file() => {
                return Err(refuse(
                    path,
                    format!("the output is {}, not a regular file: it is not replaced", kind_of(&m)),
                    "give the path of a file to write (a new one, or one blindspot may replace)",
                ));
            }
            _ => break,
        }
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // The folders this write creates, innermost first: removed again when it fails.
    let created: Vec<PathBuf> =
        dir.ancestors().take_while(|a| !a.as_os_str().is_empty() && !a.exists()).map(Path::to_path_buf).collect();
    let result = (|| {
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        remove_stale(&dir, &target);
        let tmp = tempfile::Builder::new()
            .prefix(&temp_prefix(&target))
            .suffix(".tmp")
            .rand_bytes(TEMP_RANDOM)
            .tempfile_in(&dir)
            .map_err(|e| Error::io(&dir, e))?;
        write(tmp.path())?;
        tmp.persist(&target).map_err(|e| Error::io(&target, e.error))?;
        Ok(())
    })();
    if result.is_err() {
        for d in &created {
            let _ = std::fs::remove_dir(d);
        }
    }
    result
}

/// Fills a temporary folder beside `dir`, then swaps it into place (an
/// existing `dir` is replaced only once the new one is complete, and only when
/// it is empty or an earlier output: it holds [`OUTPUT_MARKER`]).
pub fn atomic_dir(dir: &Path, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    // The working folder (or one holding it) cannot be swapped out from under the run.
    if let (Ok(cwd), Ok(abs)) = (std::env::current_dir().and_then(std::fs::canonicalize), std::fs::canonicalize(dir))
        && cwd.starts_with(&abs)
    {
        return Err(refuse(
            dir,
            "the output folder is the working folder (or holds it): it cannot be replaced".into(),
            "give a new folder for the output, e.g. --out out",
        ));
    }
    if let Ok(m) = std::fs::symlink_metadata(dir) {
        if !m.is_dir() {
            return Err(refuse(
                dir,
                format!("the output folder is {}: it is not replaced", kind_of(&m)),
                "give a new folder, or one an earlier blindspot run wrote",
            ));
        }
        let ours = dir.join(OUTPUT_MARKER).is_file();
        let empty = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?.next().is_none();
        if !ours && !empty {
            return Err(refuse(
                dir,
                "the output folder exists and holds files blindspot did not write: it is not replaced".into(),
                "give a new folder, or empty this one first (blindspot replaces only folders it wrote, marked by .blindspot-output)",
            ));
        }
    }
    let parent = existing_parent(dir)?;
    let tmp = temp_dir_in(&parent, dir)?;
    fill(tmp.path())?;
    write_bytes(
        &tmp.path().join(OUTPUT_MARKER),
        b"Written by blindspot. The next run with this folder as its output replaces it.\n",
    )?;
    if dir.exists() {
        let old = temp_dir_in(&parent, dir)?;
        let old_path = old.path().join("old");
        std::fs::rename(dir, &old_path).map_err(|e| Error::io(dir, e))?;
        std::fs::rename(tmp.keep(), dir).map_err(|e| Error::io(dir, e))?;
        drop(old);
    } else {
        std::fs::rename(tmp.keep(), dir).map_err(|e| Error::io(dir, e))?;
    }
    Ok(())
}

/// Characters of the random part of a temporary name.
const TEMP_RANDOM: usize = 6;

/// The start of a temporary name for `output` in its folder, to which the
/// builder adds `<random>.tmp`: `.blindspot-<output name>.<pid>.`.
fn temp_prefix(output: &Path) -> String {
    let name = output.file_name().map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    format!(".blindspot-{name}.{}.", std::process::id())
}

/// A temporary folder in `parent` named for `output` (a path whose file name
/// is used), after removing the ones killed runs left for it.
pub fn temp_dir_in(parent: &Path, output: &Path) -> Result<tempfile::TempDir> {
    remove_stale(parent, output);
    tempfile::Builder::new()
        .prefix(&temp_prefix(output))
        .suffix(".tmp")
        .rand_bytes(TEMP_RANDOM)
        .tempdir_in(parent)
        .map_err(|e| Error::io(parent, e))
}

/// Removes the temporary files and folders of `output` in `dir` that an
/// earlier run left when it was killed: those named by [`temp_prefix`] for
/// this output whose process is no longer running. Best effort: what cannot
/// be removed is left, and never anything else.
pub fn remove_stale(dir: &Path, output: &Path) {
    let Some(name) = output.file_name().map(|n| n.to_string_lossy().into_owned()) else { return };
    let prefix = format!(".blindspot-{name}.");
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&prefix) else { continue };
        // Exactly `<pid>.<random>.tmp`: another output's name that only starts like this one has more parts.
        let parts: Vec<&str> = rest.split('.').collect();
        let [pid, random, "tmp"] = parts.as_slice() else { continue };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if random.len() != TEMP_RANDOM || !random.chars().all(|c| c.is_ascii_alphanumeric()) || running(pid) {
            continue;
        }
        let path = e.path();
        let _ = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
            Ok(_) => std::fs::remove_file(&path),
            Err(_) => continue,
        };
    }
}

/// Whether process `pid` may still be writing: this one, or (where `/proc`
/// tells) one that is running. Without `/proc` nothing tells, and every
/// process is taken as running, so nothing is removed.
fn running(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc = Path::new("/proc");
    if proc.join("self").exists() {
        return proc.join(pid.to_string()).exists();
    }
    true
}

/// The folder a path lives in (`.` for a bare name), created if missing:
/// temporary files go there so the final rename stays on one filesystem.
fn existing_parent(path: &Path) -> Result<PathBuf> {
    let parent = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
    Ok(parent)
}

/// Creates the folder `path` will live in.
pub fn mkdir_for(path: &Path) -> Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))
}

/// Makes a rename durable where the platform allows it.
pub fn sync_dir(dir: &Path) {
    if let Ok(f) = std::fs::File::open(dir) {
        let _ = f.sync_all();
    }
}
