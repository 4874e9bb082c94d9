//! `blindspot build`'s settings, resolved once before any data is read: every
//! pipeline file validated (every problem of every file at once), the
//! embedding model of each pipeline that needs one found, where each release
//! and lock file goes, and, for a build, no output on an input or on another
//! output; for `--check`, a lock file to compare each rebuild with.

use std::path::{Path, PathBuf};

use super::Pipeline;
use crate::error::{Error, Location, Problem, Result, display_path};
use crate::overlap::{Output, check, pipeline_inputs};

/// The folder `build` writes into unless told otherwise; building there also
/// writes each pipeline's lock file.
pub const DEFAULT_OUT: &str = "releases";

/// What the command line asks of `build`.
#[derive(Debug, Clone)]
pub struct BuildFlags {
    /// The pipeline files, in the order given.
    pub files: Vec<PathBuf>,
    /// `--out-dir`.
    pub out_dir: PathBuf,
    /// `--check`: rebuild in a temporary folder and compare with each lock file.
    pub check: bool,
    /// `--no-cache`.
    pub no_cache: bool,
}

/// What a build does with each pipeline's lock file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockUse {
    /// Leave it alone (a build into another folder than [`DEFAULT_OUT`]).
    Leave,
    /// Write it when its content changes.
    Write,
    /// Compare the rebuild with it (`--check`); it exists.
    Check,
}

/// One pipeline of a build, with what was resolved for it.
#[derive(Debug, Clone)]
pub struct BuildTarget {
    pub pipeline: Pipeline,
    /// `<name>.lock.json` beside the pipeline file ([`lock_path`]).
    pub lock_path: PathBuf,
    /// The embedding-model folder, checked to be complete, when a setting of
    /// the pipeline needs embeddings.
    pub model_dir: Option<PathBuf>,
}

/// `blindspot build`'s settings.
#[derive(Debug, Clone)]
pub struct BuildSettings {
    pub targets: Vec<BuildTarget>,
    /// Where each release goes (`<out_dir>/<name>/<version>`); `None` for
    /// `--check`, which rebuilds each pipeline in a temporary folder.
    pub out_dir: Option<PathBuf>,
    pub lock: LockUse,
    /// Whether unchanged stage results are reused (a check recomputes everything).
    pub cache: bool,
    /// What to tell the user before building: the datasheet questions each
    /// pipeline leaves open.
    pub warnings: Vec<String>,
}

/// `pipelines/vqa-rad.toml` → `pipelines/vqa-rad.lock.json`.
pub fn lock_path(pipeline: &Path) -> PathBuf {
    let stem = pipeline.file_stem().map_or("pipeline".into(), |s| s.to_string_lossy().to_string());
    pipeline.with_file_name(format!("{stem}.lock.json"))
}

/// The problem of a `--check` whose lock file at `path` is missing.
pub fn no_lock_file(path: &Path) -> Problem {
    Problem::new(Location::file(path), "no lock file to check against")
        .help("run `blindspot build` once (into the default releases/ folder) to write it, and commit it")
}

/// Resolves `build`'s settings: every problem of every pipeline (a missing
/// model or, for `--check`, a missing lock file included) is reported at once,
/// and an output that would land on an input or on another output is refused,
/// before any data is read or anything written.
pub fn build_settings(flags: &BuildFlags) -> Result<BuildSettings> {
    let mut targets = Vec::new();
    let mut problems = Vec::new();
    for file in &flags.files {
        match Pipeline::load(file) {
            Ok(p) => targets.push(BuildTarget { lock_path: lock_path(&p.path), pipeline: p, model_dir: None }),
            Err(Error::Invalid(ps)) => problems.extend(ps),
            Err(e) => return Err(e),
        }
    }
    for t in &mut targets {
        match model_dir(&t.pipeline) {
            Ok(dir) => t.model_dir = dir,
            Err(Error::Invalid(ps)) => problems.extend(ps),
            Err(e) => return Err(e),
        }
    }
    let lock = if flags.check {
        LockUse::Check
    } else if flags.out_dir == Path::new(DEFAULT_OUT) {
        LockUse::Write
    } else {
        LockUse::Leave
    };
    if lock == LockUse::Check {
        // A check without a lock to compare with fails before any work.
        problems.extend(targets.iter().filter(|t| !t.lock_path.is_file()).map(|t| no_lock_file(&t.lock_path)));
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(problems));
    }
    let out_dir = (!flags.check).then(|| flags.out_dir.clone());
    if let Some(out_dir) = &out_dir {
        check_outputs(&targets, out_dir, lock == LockUse::Write)?;
    }
    let warnings = targets.iter().filter_map(|t| crate::datasheet::unanswered_warning(&t.pipeline)).collect();
    Ok(BuildSettings { targets, out_dir, lock, cache: !flags.check && !flags.no_cache, warnings })
}

/// Each pipeline's outputs against its inputs, then every output against
/// every other: one pipeline's release must not replace another's (same
/// name and version) or its lock file.
fn check_outputs(targets: &[BuildTarget], out_dir: &Path, lock: bool) -> Result<()> {
    let mut all = Vec::new();
    for t in targets {
        let p = &t.pipeline;
        let of = display_path(&p.path);
        let mut written = vec![Output::folder(
            format!("the release of {of}"),
            out_dir.join(&p.dataset.name).join(&p.dataset.version),
        )];
        if lock {
            written.push(Output::file(format!("the lock file of {of}"), &t.lock_path));
        }
        check(&pipeline_inputs(p), &written)?;
        all.extend(written);
    }
    check(&[], &all)
}

/// The model folder of a pipeline that needs embeddings (`None`: it needs
/// none); a missing model is an error at the pipeline key that asked for it,
/// saying how to obtain the model.
fn model_dir(p: &Pipeline) -> Result<Option<PathBuf>> {
    let Some((key, loc)) = &p.embed.requested_by else { return Ok(None) };
    match crate::embed::model::resolve_model_dir(p.embed.model_dir.as_deref()) {
        Ok(d) => Ok(Some(d)),
        Err(Error::Invalid(problems)) => {
            let why = problems.first().map_or(String::new(), |pr| format!("{}: {}", pr.loc, pr.message));
            let dir = crate::embed::model::model_dir(p.embed.model_dir.as_deref());
            Err(Error::one(
                Problem::new(loc.clone(), format!("`{key}` needs the sentence-embedding model ({why})")).help(format!(
                    "{}; or set [embed] model-dir in the pipeline. Pipelines without embedding settings need no model",
                    crate::embed::model::how_to_obtain(&dir)
                )),
            ))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PIPELINE: &str = "[dataset]\nname = \"x\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n\n\
                            [ingest]\npath = \"q.jsonl\"\n\n[ingest.fields]\nid = \"id\"\nquestion = \"q\"\nanswer = \"a\"\n";

    fn workspace(names: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("q.jsonl"), "{\"id\": \"1\", \"q\": \"Why?\", \"a\": \"yes\"}\n").unwrap();
        for name in names {
            let text = PIPELINE.replace("name = \"x\"", &format!("name = \"{name}\""));
            std::fs::write(dir.path().join(format!("{name}.toml")), text).unwrap();
        }
        dir
    }

    fn flags(dir: &Path, names: &[&str], check: bool) -> BuildFlags {
        BuildFlags {
            files: names.iter().map(|n| dir.join(format!("{n}.toml"))).collect(),
            out_dir: dir.join("rel"),
            check,
            no_cache: false,
        }
    }

    /// `--check` of two pipelines without lock files names both at once,
    /// before anything is read.
    #[test]
    fn a_check_names_every_missing_lock_file_at_once() {
        let dir = workspace(&["a", "b"]);
        let e = build_settings(&flags(dir.path(), &["a", "b"], true)).unwrap_err();
        let text = e.to_string();
        assert_eq!(text.matches("no lock file to check against").count(), 2, "{text}");
        assert!(text.contains("a.lock.json") && text.contains("b.lock.json"), "{text}");
        std::fs::write(dir.path().join("a.lock.json"), "{}").unwrap();
        std::fs::write(dir.path().join("b.lock.json"), "{}").unwrap();
        let s = build_settings(&flags(dir.path(), &["a", "b"], true)).unwrap();
        assert_eq!((s.lock, s.out_dir, s.cache), (LockUse::Check, None, false));
        assert_eq!(s.targets[1].lock_path, dir.path().join("b.lock.json"));
    }

    /// A build into another folder than `releases` leaves the lock files
    /// alone; two pipelines with one name and version are refused.
    #[test]
    fn outputs_and_lock_files_are_resolved_once() {
        let dir = workspace(&["a"]);
        let s = build_settings(&flags(dir.path(), &["a"], false)).unwrap();
        assert_eq!(
            (s.lock, s.out_dir.as_deref(), s.cache),
            (LockUse::Leave, Some(dir.path().join("rel").as_path()), true)
        );
        std::fs::copy(dir.path().join("a.toml"), dir.path().join("again.toml")).unwrap();
        let e = build_settings(&flags(dir.path(), &["a", "again"], false)).unwrap_err().to_string();
        assert!(e.contains("are the same path"), "{e}");
    }
}
