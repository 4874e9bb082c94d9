//! Outputs never land on inputs: every command names what it reads and
//! what it writes, and [`check`] refuses, before anything is read or
//! written, an output that is an input (`ingest X.jsonl -o X.jsonl`), a
//! folder to replace that holds an input (`diagnose D/x.parquet --out D`),
//! or an output inside a folder read as a whole (`export R -o R/exp` writes
//! into the release it exports); and it refuses two outputs of one command
//! that are one path, or one inside the other (`diagnose --out d
//! --export-folds d` would leave only the folds), naming both flags.
//!
//! Paths are compared after resolving `.`, `..` and symbolic links (of the
//! part that exists), so two spellings of one file are one file.

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Location, Problem, Result, display_path};
use crate::{IngestPlan, Pipeline};

/// Something a command reads.
#[derive(Debug, Clone)]
pub enum Input {
    /// A file (or a folder read as one input, such as a Hugging Face folder).
    File(PathBuf),
    /// A folder files are read from by name (an image folder): an output inside
    /// it changes nothing read, but one that replaces it, or a file of it, does.
    Folder(PathBuf),
    /// A folder read as a whole (a release, whose manifest lists every file):
    /// any output inside it changes it.
    Whole(PathBuf),
}

impl Input {
    fn path(&self) -> &Path {
        match self {
            Input::File(p) | Input::Folder(p) | Input::Whole(p) => p,
        }
    }
}

/// Something a command writes, with the flag (or other name) that chose its path.
#[derive(Debug, Clone)]
pub struct Output {
    /// What named the path, as the user wrote it: `--out`, `--export-folds`, ...
    flag: String,
    path: PathBuf,
    /// A folder replaced whole (everything in it before is gone), not a file.
    folder: bool,
}

impl Output {
    /// A file written or replaced.
    pub fn file(flag: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Output { flag: flag.into(), path: path.into(), folder: false }
    }

    /// A folder replaced whole.
    pub fn folder(flag: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Output { flag: flag.into(), path: path.into(), folder: true }
    }
}

/// The inputs of an ingest plan: its data files and its image folder.
pub fn plan_inputs(plan: &IngestPlan) -> Vec<Input> {
    let mut out: Vec<Input> = plan
        .inputs
        .iter()
        .map(|i| match i.format {
            // A Hugging Face folder's files are found by listing it.
            crate::Format::Hf => Input::Whole(i.path.clone()),
            _ => Input::File(i.path.clone()),
        })
        .collect();
    out.extend(plan.joins.iter().map(|j| Input::File(j.input.path.clone())));
    out.extend(plan.images_dir.iter().map(|d| Input::Folder(d.clone())));
    out
}

/// The inputs of a pipeline: the file itself and every file it reads.
pub fn pipeline_inputs(p: &Pipeline) -> Vec<Input> {
    let mut out = vec![Input::File(p.path.clone())];
    out.extend(plan_inputs(&p.ingest));
    if let Some(train) = p.leakage.as_ref().and_then(|l| l.train.as_ref()) {
        out.extend(plan_inputs(train));
    }
    if let Some(m) = &p.metrics {
        out.extend(m.files.iter().map(|f| Input::File(f.path.clone())));
        out.extend(m.manifests.iter().map(|f| Input::File(f.clone())));
    }
    if let Some(crate::variants::CaptionSource::File { path, .. }) =
        p.variants.as_ref().and_then(|v| v.captions.as_ref())
    {
        out.push(Input::File(path.clone()));
    }
    out.extend(p.embed.model_dir.iter().map(|d| Input::Folder(d.clone())));
    out.extend(p.diagnose.outside_source.iter().map(|o| Input::File(o.path.clone())));
    out
}

/// The inputs of a command that reads `plan`, set up by `pipeline` when one was given.
pub fn inputs_of(pipeline: Option<&Pipeline>, plan: &IngestPlan) -> Vec<Input> {
    let mut out = pipeline.map(pipeline_inputs).unwrap_or_default();
    out.extend(plan_inputs(plan));
    out
}

/// Refuses, with the output's path and the input it would damage, any output
/// that is an input, holds one (a folder to replace), or lies inside a folder
/// read as a whole; and, naming both flags, any two outputs that are one path
/// or one inside the other.
pub fn check(inputs: &[Input], outputs: &[Output]) -> Result<()> {
    let mut problems = Vec::new();
    let resolved: Vec<PathBuf> = outputs.iter().map(|o| resolve(&o.path)).collect();
    for (i, a) in outputs.iter().enumerate() {
        for (j, b) in outputs.iter().enumerate().skip(i + 1) {
            let (ra, rb) = (&resolved[i], &resolved[j]);
            // Either one written over the other, or a folder replaced (or a
            // file written) where the other output lies: whichever is
            // written last removes or damages the other.
            let what = if ra == rb {
                format!(
                    "{} {} and {} {} are the same path: one output would replace the other",
                    b.flag,
                    display_path(&b.path),
                    a.flag,
                    display_path(&a.path)
                )
            } else if rb.starts_with(ra) {
                inside(b, a)
            } else if ra.starts_with(rb) {
                inside(a, b)
            } else {
                continue;
            };
            problems.push(
                Problem::new(Location::file(&b.path), what).help("give each output its own path, none inside another"),
            );
        }
    }
    for output in outputs {
        let (out_path, replaced_folder) = (&output.path, output.folder);
        let out = resolve(out_path);
        for input in inputs {
            let inp = resolve(input.path());
            let what = if out == inp {
                Some(format!(
                    "the output is the input {}: writing it would replace what is being read",
                    display_path(input.path())
                ))
            } else if replaced_folder && inp.starts_with(&out) {
                Some(format!(
                    "the output folder holds the input {}: replacing the folder would delete it",
                    display_path(input.path())
                ))
            } else if matches!(input, Input::Whole(_)) && out.starts_with(&inp) {
                Some(format!(
                    "the output is inside the input {}, which is read as a whole: writing there would change it",
                    display_path(input.path())
                ))
            } else {
                // A file written among the images changes nothing read, unless it is one of them (equal, above).
                None
            };
            if let Some(what) = what {
                problems.push(
                    Problem::new(Location::file(out_path), what)
                        .help("write the output somewhere else: a new file or folder outside the inputs"),
                );
                break;
            }
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
}

/// The message for output `inner` lying inside output `outer`.
fn inside(inner: &Output, outer: &Output) -> String {
    let then = if outer.folder {
        "which is replaced whole: writing one would delete or mix with the other"
    } else {
        "which is written as a file: the two cannot both be written"
    };
    format!(
        "{} {} is inside {} {}, {then}",
        inner.flag,
        display_path(&inner.path),
        outer.flag,
        display_path(&outer.path)
    )
}

/// `p` absolute, with `.` and `..` folded and the symbolic links of its
/// longest existing ancestor resolved.
fn resolve(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut clean = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    // The longest ancestor that exists, resolved; the rest appended as written.
    let mut rest = Vec::new();
    let mut base = clean.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(base) {
            let mut out = real;
            out.extend(rest.iter().rev());
            return out;
        }
        match (base.file_name(), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                base = parent;
            }
            _ => return clean,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(inputs: &[Input], outputs: &[Output]) -> Option<String> {
        check(inputs, outputs).err().map(|e| e.to_string())
    }

    #[test]
    fn outputs_on_inputs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("rel/data")).unwrap();
        std::fs::create_dir_all(d.join("images")).unwrap();
        std::fs::write(d.join("q.jsonl"), "{}").unwrap();
        std::fs::write(d.join("rel/data/x.parquet"), "").unwrap();
        let file = |p: &str| Input::File(d.join(p));
        // The same file, however spelled.
        let same = refused(&[file("q.jsonl")], &[Output::file("-o", d.join("images/../q.jsonl"))]).unwrap();
        assert!(same.contains("the output is the input"), "{same}");
        // A folder to replace that holds an input.
        let holds = refused(&[file("rel/data/x.parquet")], &[Output::folder("-o", d.join("rel"))]).unwrap();
        assert!(holds.contains("holds the input"), "{holds}");
        // Inside a release, which is read whole.
        let inside = refused(&[Input::Whole(d.join("rel"))], &[Output::folder("-o", d.join("rel/exp"))]).unwrap();
        assert!(inside.contains("inside the input"), "{inside}");
        // Beside the inputs, or a file among the images: fine.
        assert!(
            refused(&[file("q.jsonl"), Input::Folder(d.join("images"))], &[Output::file("-o", d.join("out.parquet"))])
                .is_none()
        );
        assert!(
            refused(&[Input::Folder(d.join("images"))], &[Output::file("-o", d.join("images/out.parquet"))]).is_none()
        );
        // Replacing the image folder itself is not.
        assert!(refused(&[Input::Folder(d.join("images"))], &[Output::folder("-o", d.join("images"))]).is_some());
    }

    #[test]
    fn two_outputs_on_one_path_or_one_inside_the_other_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let msg =
            refused(&[], &[Output::folder("--out", d.join("x")), Output::folder("--export-folds", d.join("x/."))])
                .unwrap();
        assert!(msg.contains("--export-folds") && msg.contains("--out") && msg.contains("are the same path"), "{msg}");
        let msg =
            refused(&[], &[Output::folder("--out", d.join("x/y")), Output::folder("--export-features", d.join("x"))])
                .unwrap();
        assert!(msg.contains("--out") && msg.contains("is inside --export-features"), "{msg}");
        // Side by side, or sharing only a prefix of their names: fine.
        assert!(
            refused(&[], &[Output::folder("--out", d.join("x")), Output::folder("--export-folds", d.join("xy"))])
                .is_none()
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_an_input_is_the_input() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("q.jsonl"), "{}").unwrap();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("link")).unwrap();
        let msg =
            refused(&[Input::File(dir.path().join("q.jsonl"))], &[Output::file("-o", dir.path().join("link/q.jsonl"))]);
        assert!(msg.is_some());
    }
}
