//! Sorting more samples than memory holds: batches of samples arrive in file
//! order, each is sorted and written to its own run file in a temporary folder,
//! and the runs are merged back into one stream in [`id_cmp`] order. Ties (ids
//! equal under `id_cmp`, such as `7` and `07`) keep file order, exactly as a
//! stable sort of all the samples would.
//!
//! A run is JSON lines of [`Row`]: the sample as it serializes, plus what its
//! serialization leaves out (embedded image bytes, where each image is read from).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::sample::{Sample, id_cmp};

/// The name the run folders are made for (`.blindspot-sort.<pid>.<random>.tmp`).
const SORT: &str = "sort";

/// Samples sorted so far: up to [`RUN_ROWS`] of them in memory, every full
/// run of that many in a run file.
pub struct Runs {
    dir: PathBuf,
    temp: Option<tempfile::TempDir>,
    memory: Vec<(u64, Sample)>,
    files: Vec<PathBuf>,
    count: u64,
    run_rows: usize,
    /// Run files written so far (their names).
    written: usize,
}

/// Samples per run file.
pub const RUN_ROWS: usize = 1 << 14;
/// Run files merged at once: when there are this many, they are merged into
/// one, so a merge never holds more files open.
const MAX_FILES: usize = 64;

#[derive(Serialize, Deserialize)]
struct Row {
    seq: u64,
    sample: Sample,
    /// Per image: base64 of its embedded bytes, and its source file (bytes of
    /// the path, which need not be UTF-8).
    images: Vec<(Option<String>, Option<Vec<u8>>)>,
    /// Per video: its source file, and each frame's (videos' bytes are read
    /// from their files, never held from ingest).
    #[serde(default)]
    videos: Vec<VideoSources>,
}

/// A video's source file and each of its frames' (bytes of the paths).
type VideoSources = (Option<Vec<u8>>, Vec<Option<Vec<u8>>>);

impl Runs {
    /// Runs whose files (when a second batch comes) go in a new hidden folder
    /// under `dir`, removed when the runs are dropped.
    pub fn new_in(dir: &Path) -> Runs {
        // Run folders a killed ingest left here go now, whether or not this one spills.
        crate::io::fs::remove_stale(dir, Path::new(SORT));
        Runs {
            dir: dir.to_path_buf(),
            temp: None,
            memory: Vec::new(),
            files: Vec::new(),
            count: 0,
            run_rows: RUN_ROWS,
            written: 0,
        }
    }

    /// How many samples were pushed.
    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds one batch (in file order, after every earlier batch).
    pub fn push(&mut self, batch: Vec<Sample>) -> Result<()> {
        for s in batch {
            self.memory.push((self.count, s));
            self.count += 1;
            if self.memory.len() >= self.run_rows {
                let run = std::mem::take(&mut self.memory);
                self.write_run(run)?;
            }
        }
        Ok(())
    }

    fn sort(run: &mut [(u64, Sample)]) {
        run.sort_unstable_by(|a, b| id_cmp(&a.1.id, &b.1.id).then(a.0.cmp(&b.0)));
    }

    fn write_run(&mut self, mut run: Vec<(u64, Sample)>) -> Result<()> {
        Self::sort(&mut run);
        self.write_rows(run.into_iter().map(Ok))?;
        if self.files.len() >= MAX_FILES {
            let files = std::mem::take(&mut self.files);
            let mut merger = Merger::open(Vec::new(), &files)?;
            self.write_rows(std::iter::from_fn(|| merger.next_row()))?;
            for f in &files {
                std::fs::remove_file(f).map_err(|e| Error::io(f, e))?;
            }
        }
        Ok(())
    }

    /// Writes sorted rows to a new run file.
    fn write_rows(&mut self, rows: impl Iterator<Item = Result<(u64, Sample)>>) -> Result<()> {
        if self.temp.is_none() {
            // Named so that the next run removes the folder a killed one left.
            let t = crate::io::fs::temp_dir_in(&self.dir, Path::new(SORT))?;
            self.temp = Some(t);
        }
        let dir = self.temp.as_ref().map(|t| t.path().to_path_buf()).unwrap_or_default();
        let path = dir.join(format!("run-{:06}.jsonl", self.written));
        self.written += 1;
        let file = File::create(&path).map_err(|e| Error::io(&path, e))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        for row in rows {
            let (seq, sample) = row?;
            let images = sample
                .images
                .iter()
                .map(|im| {
                    (
                        im.bytes.as_ref().map(|b| base64::engine::general_purpose::STANDARD.encode(b)),
                        im.source.as_ref().map(|p| path_bytes(p)),
                    )
                })
                .collect();
            let videos = sample
                .videos
                .iter()
                .map(|v| {
                    (
                        v.source.as_ref().map(|p| path_bytes(p)),
                        v.frames.iter().map(|f| f.source.as_ref().map(|p| path_bytes(p))).collect(),
                    )
                })
                .collect();
            let row = Row { seq, sample, images, videos };
            serde_json::to_writer(&mut w, &row).map_err(|e| Error::io(&path, std::io::Error::other(e)))?;
            w.write_all(b"\n").map_err(|e| Error::io(&path, e))?;
        }
        w.flush().map_err(|e| Error::io(&path, e))?;
        self.files.push(path);
        Ok(())
    }

    /// Every sample, in `id_cmp` order (file order among ties).
    pub fn merge(mut self) -> Result<Merged> {
        Self::sort(&mut self.memory);
        let merger = Merger::open(std::mem::take(&mut self.memory), &self.files)?;
        Ok(Merged { _temp: self.temp, merger })
    }
}

fn path_bytes(p: &Path) -> Vec<u8> {
    p.as_os_str().as_encoded_bytes().to_vec()
}

#[cfg(unix)]
fn path_from_bytes(b: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(b))
}

#[cfg(not(unix))]
fn path_from_bytes(b: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&b).into_owned())
}

enum Source {
    Memory(std::vec::IntoIter<(u64, Sample)>),
    File { path: PathBuf, reader: BufReader<File>, line: String },
}

impl Source {
    fn next(&mut self) -> Result<Option<(u64, Sample)>> {
        match self {
            Source::Memory(it) => Ok(it.next()),
            Source::File { path, reader, line } => {
                line.clear();
                if reader.read_line(line).map_err(|e| Error::io(&*path, e))? == 0 {
                    return Ok(None);
                }
                let bad = |e: String| Error::Bug(format!("{}: a sort run does not read back: {e}", path.display()));
                let row: Row = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
                let mut sample = row.sample;
                if row.images.len() != sample.images.len() {
                    return Err(bad("image count".into()));
                }
                for (im, (bytes, source)) in sample.images.iter_mut().zip(row.images) {
                    im.bytes = match bytes {
                        Some(b) => {
                            Some(base64::engine::general_purpose::STANDARD.decode(b).map_err(|e| bad(e.to_string()))?)
                        }
                        None => None,
                    };
                    im.source = source.map(path_from_bytes);
                }
                if row.videos.len() != sample.videos.len() {
                    return Err(bad("video count".into()));
                }
                for (v, (source, frames)) in sample.videos.iter_mut().zip(row.videos) {
                    v.source = source.map(path_from_bytes);
                    if frames.len() != v.frames.len() {
                        return Err(bad("frame count".into()));
                    }
                    for (f, source) in v.frames.iter_mut().zip(frames) {
                        f.source = source.map(path_from_bytes);
                    }
                }
                Ok(Some((row.seq, sample)))
            }
        }
    }
}

/// The head of one run in the merge; the heap is a max-heap, so the order is reversed.
struct Head {
    seq: u64,
    sample: Sample,
    source: usize,
}

impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        id_cmp(&other.sample.id, &self.sample.id).then(other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
    }
}

impl Eq for Head {}

/// A k-way merge of sorted runs (one in memory, the others in files).
struct Merger {
    sources: Vec<Source>,
    heap: BinaryHeap<Head>,
}

impl Merger {
    fn open(memory: Vec<(u64, Sample)>, files: &[PathBuf]) -> Result<Merger> {
        let mut sources = Vec::with_capacity(files.len() + 1);
        if !memory.is_empty() {
            sources.push(Source::Memory(memory.into_iter()));
        }
        for f in files {
            let file = File::open(f).map_err(|e| Error::io(f, e))?;
            sources.push(Source::File {
                path: f.clone(),
                reader: BufReader::with_capacity(1 << 16, file),
                line: String::new(),
            });
        }
        let mut heap = BinaryHeap::with_capacity(sources.len());
        for (k, s) in sources.iter_mut().enumerate() {
            if let Some((seq, sample)) = s.next()? {
                heap.push(Head { seq, sample, source: k });
            }
        }
        Ok(Merger { sources, heap })
    }

    fn next_row(&mut self) -> Option<Result<(u64, Sample)>> {
        let head = self.heap.pop()?;
        match self.sources[head.source].next() {
            Ok(Some((seq, sample))) => self.heap.push(Head { seq, sample, source: head.source }),
            Ok(None) => {}
            Err(e) => return Some(Err(e)),
        }
        Some(Ok((head.seq, head.sample)))
    }
}

/// The merged stream; the run files are removed when it is dropped.
pub struct Merged {
    _temp: Option<tempfile::TempDir>,
    merger: Merger,
}

impl Iterator for Merged {
    type Item = Result<Sample>;

    fn next(&mut self) -> Option<Result<Sample>> {
        self.merger.next_row().map(|r| r.map(|(_, s)| s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::ImageRef;

    fn sample(id: &str, tag: usize) -> Sample {
        let mut s = Sample::new(id, format!("question {tag}"), "yes");
        s.meta.insert("tag".into(), tag.to_string());
        s.images.push(ImageRef {
            path: Some(format!("{tag}.png")),
            bytes: tag.is_multiple_of(2).then(|| vec![0, 255, tag as u8]),
            sha256: Some("ab".into()),
            width: Some(1),
            height: Some(2),
            phash: tag.is_multiple_of(2).then(|| format!("{tag:016x}")),
            dhash: None,
            source: tag.is_multiple_of(3).then(|| PathBuf::from(format!("/imgs/{tag}.png"))),
        });
        s
    }

    /// The merge of many runs equals a stable sort of everything, ties included,
    /// and every field (image bytes and sources too) survives the run files.
    #[test]
    fn merging_runs_is_a_stable_sort() {
        let ids = ["b10", "a2", "07", "7", "a10", "b9", "x", "a02", "7", "c"];
        let all: Vec<Sample> = (0..60).map(|i| sample(ids[(i * 7) % ids.len()], i)).collect();
        let dir = tempfile::tempdir().unwrap();
        let mut runs = Runs::new_in(dir.path());
        runs.run_rows = 9;
        for batch in all.chunks(7) {
            runs.push(batch.to_vec()).unwrap();
        }
        assert_eq!(runs.len(), 60);
        let mut expected = all.clone();
        expected.sort_by(|a, b| id_cmp(&a.id, &b.id));
        let merged: Vec<Sample> = runs.merge().unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(merged, expected);
        for (m, e) in merged.iter().zip(&expected) {
            assert_eq!(m.images[0].bytes, e.images[0].bytes);
            assert_eq!(m.images[0].source, e.images[0].source);
        }
        // The run folder is gone once the merge is dropped.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// More runs than are merged at once are merged in steps, to the same order.
    #[test]
    fn many_runs_merge_in_steps() {
        let all: Vec<Sample> = (0..300).map(|i| sample(&format!("s{}", (i * 37) % 101), i)).collect();
        let dir = tempfile::tempdir().unwrap();
        let mut runs = Runs::new_in(dir.path());
        runs.run_rows = 2;
        runs.push(all.clone()).unwrap();
        assert!(runs.written > MAX_FILES && runs.files.len() < MAX_FILES, "{} {}", runs.written, runs.files.len());
        let mut expected = all;
        expected.sort_by(|a, b| id_cmp(&a.id, &b.id));
        let merged: Vec<Sample> = runs.merge().unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(merged, expected);
    }

    #[test]
    fn a_short_run_never_touches_the_disk() {
        let dir = tempfile::tempdir().unwrap();
        let mut runs = Runs::new_in(dir.path());
        runs.push(vec![sample("2", 1), sample("1", 2)]).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let ids: Vec<String> = runs.merge().unwrap().map(|s| s.unwrap().id).collect();
        assert_eq!(ids, ["1", "2"]);
    }
}
