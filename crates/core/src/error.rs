//! Errors for the person reading them.
//!
//! Every problem with a user's input is a [`Problem`]: where it is (file, line
//! or row, field), what is wrong, and what to do. Stages collect problems and
//! report them all at once; the binary maps [`Error`] to an exit code
//! (1 = the input is wrong, 2 = a bug in blindspot).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where in an input a problem sits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pos {
    /// The whole file.
    File,
    /// A 1-based line (JSON, JSONL, CSV, TOML).
    Line(u64),
    /// A 1-based line and column.
    LineCol(u64, u64),
    /// A 1-based record number in a format without lines (Parquet).
    Row(u64),
}

/// A file and a position in it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    /// Shared: every record of a file points at one name.
    pub file: Arc<str>,
    pub pos: Pos,
}

impl Location {
    pub fn file(path: impl AsRef<Path>) -> Self {
        Location { file: display_path(path.as_ref()).into(), pos: Pos::File }
    }
    pub fn line(path: impl AsRef<Path>, line: u64) -> Self {
        Location { file: display_path(path.as_ref()).into(), pos: Pos::Line(line) }
    }
    pub fn row(path: impl AsRef<Path>, row: u64) -> Self {
        Location { file: display_path(path.as_ref()).into(), pos: Pos::Row(row) }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Pos::File => write!(f, "{}", self.file),
            Pos::Line(l) => write!(f, "{}:{l}", self.file),
            Pos::LineCol(l, c) => write!(f, "{}:{l}:{c}", self.file),
            Pos::Row(r) => write!(f, "{}: row {r}", self.file),
        }
    }
}

/// Paths are shown as the user would type them: relative to the working
/// directory when they are below it.
pub fn display_path(path: &Path) -> String {
    let path: PathBuf = path.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect();
    let shown = match std::env::current_dir() {
        Ok(cwd) if path.starts_with(&cwd) => path.strip_prefix(&cwd).unwrap_or(&path).display().to_string(),
        _ => path.display().to_string(),
    };
    // The working folder itself (`.`, or its own absolute path) is never shown as nothing.
    if shown.is_empty() { ".".to_string() } else { shown }
}

/// One located problem with a user's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub loc: Location,
    pub field: Option<String>,
    pub message: String,
    pub help: Option<String>,
    /// Further problems this one stands for, not listed (see [`Capped`]).
    pub omitted: usize,
}

impl Problem {
    pub fn new(loc: Location, message: impl Into<String>) -> Self {
        Problem { loc, field: None, message: message.into(), help: None, omitted: 0 }
    }
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.loc)?;
        if let Some(field) = &self.field {
            write!(f, "field \"{field}\": ")?;
        }
        write!(f, "{}", self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

/// An OS error in words, with what to do for the common ones.
fn io_words(e: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::NotFound => {
            "no such file or folder (check the path; paths in a pipeline are relative to the pipeline file)".into()
        }
        K::PermissionDenied => "permission denied (check the file's and its folder's permissions)".into(),
        K::AlreadyExists => "already exists (choose another path or remove it)".into(),
        K::IsADirectory => "is a folder, not a file (give a file's path)".into(),
        K::NotADirectory => "a part of the path is a file, not a folder (check the path)".into(),
        K::StorageFull => "no space left on the device (free some space and run again)".into(),
        K::ReadOnlyFilesystem => "the file system is read-only (write somewhere else)".into(),
        _ => e.to_string(),
    }
}

/// How many problems are printed before the rest are summarised.
pub const MAX_SHOWN: usize = 50;

/// The crate's error: either the user's input is wrong (exit 1) or blindspot is (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// One or more located problems with the input; nothing was written.
    #[error("{}", render_problems(.0))]
    Invalid(Vec<Problem>),
    /// A file could not be read or written.
    #[error("{}: {}", if path.as_os_str().is_empty() { "(an empty path)".to_string() } else { display_path(path) }, io_words(source))]
    Io { path: PathBuf, source: std::io::Error },
    /// Something blindspot guarantees did not hold: a bug.
    #[error("internal error (a bug in blindspot, please report it): {0}")]
    Bug(String),
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
    pub fn one(problem: Problem) -> Self {
        Error::Invalid(vec![problem])
    }
    /// The process exit code this error maps to.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Invalid(_) | Error::Io { .. } => 1,
            Error::Bug(_) => 2,
        }
    }
}

/// Problems of one reader: the first [`MAX_SHOWN`] kept, the rest only counted,
/// so a file whose every row is wrong neither fills memory nor under-reports.
#[derive(Debug, Default)]
pub struct Capped {
    list: Vec<Problem>,
    omitted: usize,
}

impl Capped {
    pub fn push(&mut self, p: Problem) {
        if self.list.len() < MAX_SHOWN { self.list.push(p) } else { self.omitted += 1 }
    }
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    /// The kept problems, the last carrying the count of those not kept.
    pub fn into_vec(mut self) -> Vec<Problem> {
        if let Some(last) = self.list.last_mut() {
            last.omitted += self.omitted;
        }
        self.list
    }
}

/// How many positions a problem repeated across rows lists before its count.
pub const FIRST_SHOWN: usize = 5;

/// Problems that differ only in their row or line (same file, field, message
/// and help): one cause, shown once with its count and first positions. A
/// further help line added to the last problem of a list (what else to try)
/// does not make it another cause; the group shows it.
fn by_cause(problems: &[Problem]) -> Vec<(&Problem, Vec<&Pos>)> {
    let mut groups: Vec<(&Problem, Vec<&Pos>)> = Vec::new();
    // (file, field, message, first help line) → group.
    type Cause<'a> = (&'a str, Option<&'a str>, &'a str, Option<&'a str>);
    let mut index: std::collections::HashMap<Cause<'_>, usize> = std::collections::HashMap::new();
    for p in problems {
        if p.loc.pos == Pos::File {
            groups.push((p, vec![&p.loc.pos]));
            continue;
        }
        let help = p.help.as_deref().map(|h| h.split("\n  help: ").next().unwrap_or(h));
        let key = (&*p.loc.file, p.field.as_deref(), p.message.as_str(), help);
        match index.get(&key) {
            Some(&g) => {
                groups[g].1.push(&p.loc.pos);
                if p.help.as_ref().map(String::len) > groups[g].0.help.as_ref().map(String::len) {
                    groups[g].0 = p;
                }
            }
            None => {
                index.insert(key, groups.len());
                groups.push((p, vec![&p.loc.pos]));
            }
        }
    }
    groups
}

/// "rows 1, 2, 3, 4, 5, ... (300 rows)" for the positions of one cause.
fn positions(file: &str, at: &[&Pos]) -> String {
    let many = if matches!(at[0], Pos::Row(_)) { "rows" } else { "lines" };
    let shown: Vec<String> = at
        .iter()
        .take(FIRST_SHOWN)
        .map(|p| match p {
            Pos::Row(r) | Pos::Line(r) => r.to_string(),
            Pos::LineCol(l, c) => format!("{l}:{c}"),
            Pos::File => String::new(),
        })
        .collect();
    let more = if at.len() > FIRST_SHOWN { ", ..." } else { "" };
    format!("{file}: {many} {}{more} ({} {many})", shown.join(", "), at.len())
}

fn render_problems(problems: &[Problem]) -> String {
    let mut out = String::new();
    let groups = by_cause(problems);
    for (i, (p, at)) in groups.iter().take(MAX_SHOWN).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if at.len() == 1 {
            out.push_str(&format!("error: {p}"));
        } else {
            let rest = Problem { loc: Location { file: p.loc.file.clone(), pos: Pos::File }, ..(*p).clone() };
            let text = rest.to_string();
            let tail = text.strip_prefix(&format!("{}: ", p.loc.file)).unwrap_or(&text);
            out.push_str(&format!("error: {}: {tail}", positions(&p.loc.file, at)));
        }
    }
    let omitted: usize = problems.iter().map(|p| p.omitted).sum();
    let total = groups.len() + omitted;
    let shown = groups.len().min(MAX_SHOWN);
    if total > shown {
        out.push_str(&format!(
            "\n{total} problems found; the first {shown} are shown, {} are not (fix these and run again)",
            total - shown
        ));
    } else if total > 1 {
        out.push_str(&format!("\n{total} problems found"));
    }
    out
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

std::thread_local! {
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, which calls into a third-party decoder that may panic on
/// corrupt input instead of returning an error (found by fuzzing: arrow's
/// bitmap asserts on a corrupt Parquet page, calamine's cell-reference
/// arithmetic overflows on a crafted .xlsx). Such a panic becomes the
/// located error `problem(why)`, and the panic hook stays silent for it;
/// panics anywhere else still reach the usual hook.
pub fn guard_foreign<T>(f: impl FnOnce() -> Result<T>, problem: impl FnOnce(String) -> Problem) -> Result<T> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(std::cell::Cell::get) {
                previous(info)
            }
        }));
    });
    let was = GUARDED.with(|g| g.replace(true));
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(was));
    out.unwrap_or_else(|payload| {
        let why = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Error::one(problem(why)))
    })
}

/// "did you mean" for a misspelt name among `candidates`.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.to_string())
}

/// Byte offset → 1-based (line, column).
pub fn line_col(text: &str, offset: usize) -> (u64, u64) {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let col_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    let col = String::from_utf8_lossy(&before[col_start..]).chars().count() as u64 + 1;
    (line, col)
}

/// What to do with a record or sample that fails validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnInvalid {
    /// Stop with every problem listed; write nothing.
    #[default]
    Error,
    /// Leave it out, write it with its reasons to the rejected file, count it.
    Skip,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A problem repeated across rows is one message with its count and first
    /// rows; another cause, and the same message in another file, stay apart.
    #[test]
    fn problems_of_one_cause_are_shown_once() {
        let mut problems: Vec<Problem> = (1..=300)
            .map(|r| Problem::new(Location::row("x.parquet", r), "no id").field("id").help("map one"))
            .collect();
        problems.insert(1, Problem::new(Location::row("x.parquet", 1), "no question").field("question"));
        problems.push(Problem::new(Location::line("y.jsonl", 4), "no id").field("id").help("map one"));
        let text = Error::Invalid(problems).to_string();
        assert_eq!(
            text,
            "error: x.parquet: rows 1, 2, 3, 4, 5, ... (300 rows): field \"id\": no id\n  help: map one\n\
             error: x.parquet: row 1: field \"question\": no question\n\
             error: y.jsonl:4: field \"id\": no id\n  help: map one\n\
             3 problems found"
        );
    }
}
