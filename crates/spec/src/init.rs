//! The on-ramp (`blindspot init FILE`): a first pipeline file for a benchmark
//! of one's own. The file's first records are surveyed, the field mapping is
//! proposed (each canonical field with the source field chosen and why), and
//! every section a release uses is written with the datasheet questions as
//! comments. Nothing is guessed silently: a canonical field two source fields
//! could be is left commented, naming both.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Location, Problem, Result, display_path};
use crate::ingest::mapping::folded;
use crate::ingest::raw::Raw;
use crate::ingest::survey::{FieldSurvey, Survey, survey};
use crate::plan::IngestPlan;

/// Records read to propose the mapping.
const SURVEYED: usize = 1000;

/// `blindspot init`'s command line.
#[derive(Debug, Clone, Default)]
pub struct InitFlags {
    /// The benchmark: a data file or a Hugging Face folder.
    pub input: PathBuf,
    /// `-o`: the pipeline file to write (default: `<name>.toml` in the working folder).
    pub output: Option<PathBuf>,
    /// `--field KEY=SOURCE`: fields mapped by hand.
    pub fields: Vec<String>,
    /// `--images DIR`: the folder the image paths are relative to.
    pub images: Option<PathBuf>,
    /// `--videos DIR`: the folder the videos are in.
    pub videos: Option<PathBuf>,
    /// `--join FILE`: files whose records complete the questions'.
    pub joins: Vec<PathBuf>,
    /// `--force`: overwrite the pipeline file when it exists.
    pub force: bool,
}

/// What `blindspot init` reads and writes, resolved from its flags.
#[derive(Debug, Clone)]
pub struct InitPlan {
    /// The benchmark's name, from its file or folder.
    pub name: String,
    /// The pipeline file to write.
    pub out: PathBuf,
    /// How the benchmark is read: the canonical names and the `--field` mapping.
    pub ingest: IngestPlan,
    /// The files joined to the questions, each with its key and why.
    pub joined: Vec<JoinLine>,
    flags: InitFlags,
    given: crate::wire::FieldsWire,
}

/// A file `--join` names: the field it is joined on, and why that one.
#[derive(Debug, Clone)]
pub struct JoinLine {
    pub path: PathBuf,
    pub on: String,
    pub why: String,
}

/// `blindspot init`'s plan: the name, the pipeline file (refused when it
/// exists, unless `force`), the fields mapped by hand and how the file is read.
pub fn init_plan(flags: &InitFlags) -> Result<InitPlan> {
    let name = benchmark_name(&flags.input);
    let out = flags.output.clone().unwrap_or_else(|| PathBuf::from(format!("{name}.toml")));
    if out.exists() && !flags.force {
        return Err(Error::one(
            Problem::new(Location::file(&out), "the pipeline file exists")
                .help("choose another with -o, or pass --force to overwrite it"),
        ));
    }
    let given = if flags.fields.is_empty() {
        crate::wire::FieldsWire::default()
    } else {
        crate::plan::fields_from_flags(&flags.fields)?
    };
    let mut ingest = crate::plan::bare_input_plan(&flags.input, &flags.fields, flags.images.as_deref())?;
    if let Some(dir) = flags.videos.as_ref().filter(|d| !d.is_dir()) {
        return Err(Error::one(
            Problem::new(Location::file("command line"), format!("--videos {}: no such folder", display_path(dir)))
                .help("give the folder the video paths are relative to"),
        ));
    }
    let mut joined = Vec::new();
    for path in &flags.joins {
        let (input, on, why) = join_on(&ingest, path)?;
        joined.push(JoinLine { path: path.clone(), on: on.clone(), why });
        ingest.joins.push(crate::plan::JoinPlan { input, on, records: None });
    }
    Ok(InitPlan { name, out, ingest, joined, flags: flags.clone(), given })
}

/// The file `path` joins, and the field to join it on (`--join`): an error when it is
/// no file ingest reads, or no field of the questions names one of its records each.
fn join_on(ingest: &IngestPlan, path: &Path) -> Result<(crate::plan::Input, String, String)> {
    let at = || Location::file("command line");
    if !path.is_file() {
        return Err(Error::one(
            Problem::new(at(), format!("--join {}: no such file", display_path(path)))
                .help("give the file whose records complete the questions (VQA's annotations)"),
        ));
    }
    let Some(format) = crate::plan::Format::infer(path) else {
        return Err(Error::one(
            Problem::new(at(), format!("--join {}: cannot tell the file's format from its name", display_path(path)))
                .help("use a .json, .jsonl, .csv, .tsv or .parquet file"),
        ));
    };
    let input = crate::plan::Input { path: path.to_path_buf(), format };
    match crate::ingest::join::propose_on(ingest, &input, SURVEYED)? {
        Some((on, matched, read)) => {
            let why =
                format!("\"{on}\" names one record of it each, and {matched} of the {read} questions read have theirs");
            Ok((input, on, why))
        }
        None => Err(Error::one(
            Problem::new(
                at(),
                format!(
                    "--join {}: no field of the questions names one of its records each for half the questions read",
                    display_path(path)
                ),
            )
            .help("join it by hand: [[ingest.join]] path = \"...\", on = \"FIELD\" (a field both files hold)"),
        )),
    }
}

/// A proposed pipeline file.
#[derive(Debug, Clone)]
pub struct Proposal {
    /// The file's text.
    pub text: String,
    /// `[ingest.fields]`, one line per canonical field, in the file's order.
    pub lines: Vec<Line>,
    /// Records surveyed.
    pub records: usize,
    /// Source fields found in them.
    pub fields: usize,
}

/// The line that groups folds by image, as the proposal writes it.
fn group_by_image_line() -> String {
    format!("{:<32} # questions about one image share a fold\n", "group-by = \"image\"")
}

impl Proposal {
    /// Whether the proposal groups folds by image (it does when the
    /// benchmark's images were mapped).
    pub fn groups_by_image(&self) -> bool {
        self.text.contains(&group_by_image_line())
    }

    /// Leaves `group-by = "image"` commented, with `why`.
    pub fn leave_group_by_unset(&mut self, why: &str) {
        self.text = self
            .text
            .replace(&group_by_image_line(), &format!("# group-by = \"image\"             # not set: {why}\n"));
    }
}

/// Surveys the benchmark's first records and proposes its pipeline file.
pub fn propose_pipeline(plan: &InitPlan) -> Result<Proposal> {
    // A CSV or TSV without a header row is read with its columns named here.
    let headerless = headerless(&plan.ingest);
    let ingest = match &headerless {
        Some((columns, _)) => IngestPlan { columns: Some(columns.clone()), ..plan.ingest.clone() },
        None => plan.ingest.clone(),
    };
    let s = survey(&ingest, SURVEYED)?;
    let beside = plan.ingest.images_dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let data_dir = folder_of(&plan.flags.input);
    // Videos are looked for in the folder given with --videos, else beside the data file.
    let video_folders = match &plan.flags.videos {
        Some(d) => vec![d.clone()],
        None => media_folders(&data_dir, &["videos", "video"], &["video"]),
    };
    let (lines, folder, video_dir) = propose(&s, &plan.given, &beside, &video_folders);

    let out_dir = folder_of(&plan.out);
    let rel = |p: &Path| relative_to(&out_dir, p).to_string_lossy().replace('\\', "/");
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# A pipeline for {}, proposed by `blindspot init` from its first {} records.\n\
         # Check each line: a field init could not choose is commented out, with why.\n\
         # Then answer the datasheet questions at the end, and run\n\
         #   blindspot validate {}\n\
         #   blindspot build {}\n",
        display_path(&plan.flags.input),
        s.records,
        display_path(&plan.out),
        display_path(&plan.out)
    );
    t.push_str("[dataset]\n");
    entry(&mut t, "name", Some(&plan.name), "the release folder: releases/<name>/<version>/");
    entry(&mut t, "version", Some("0.1.0"), "MAJOR.MINOR.PATCH; a built version is never overwritten");
    entry(&mut t, "license", Some("other"), "the data's SPDX licence id, e.g. \"CC-BY-4.0\"");
    t.push_str("# description = \"...\"\n# homepage = \"https://...\"\n# citation = \"@article{...}\"\n");
    let _ = writeln!(t, "{:<32} # every random choice derives from (seed, stage, id)", "seed = 42");
    t.push_str("\n[ingest]\n");
    entry(&mut t, "path", Some(&rel(&plan.flags.input)), "relative to this file");
    media_entries(&mut t, plan, (&folder, &video_dir), &beside, has_videos(&lines), &rel);
    entry(&mut t, "split", Some(&plan.ingest.split), "written into every sample");
    if let Some((columns, why)) = &headerless {
        let _ = writeln!(t, "{:<32} # the first row reads as a record, not a header: {why}", "header = false");
        let named: Vec<String> = columns.iter().map(|c| toml_str(c)).collect();
        let _ = writeln!(
            t,
            "{:<32} # named by init, in order: give them your names (and the fields below with them)",
            format!("columns = [{}]", named.join(", "))
        );
    }
    answer_reading_entries(&mut t, &s, &lines);
    for j in &plan.joined {
        t.push_str("\n[[ingest.join]]                  # a file whose records complete the questions'\n");
        entry(&mut t, "path", Some(&rel(&j.path)), "relative to this file");
        entry(&mut t, "on", Some(&j.on), &j.why);
    }
    fields_section(&mut t, &s, &lines);
    stage_sections(&mut t, &lines);

    Ok(Proposal { text: t, lines, records: s.records, fields: s.fields.len() })
}

/// The `[ingest]` keys of the media folders: where the image and video paths are
/// relative to, or why that is left to the user.
fn media_entries(
    t: &mut String,
    plan: &InitPlan,
    (folder, video_dir): (&Option<std::result::Result<PathBuf, String>>, &Option<PathBuf>),
    beside: &Path,
    has_videos: bool,
    rel: &dyn Fn(&Path) -> String,
) {
    let images_dir = match (&plan.flags.images, folder) {
        (Some(d), _) => Some((rel(d), "the folder the image paths are relative to (--images)".to_string())),
        (None, Some(Ok(dir))) if dir == beside => {
            Some((rel(dir), "image paths are relative to the data file's folder".to_string()))
        }
        (None, Some(Ok(dir))) => Some((rel(dir), "the folder beside the data file that holds its images".to_string())),
        _ => None,
    };
    match (&images_dir, folder) {
        (Some((dir, why)), _) => entry(t, "images", Some(dir), why),
        (None, Some(Err(first))) => entry(
            t,
            "images",
            None,
            &format!(
                "the image \"{first}\" is not beside the data file or in a folder beside it: give the folder its path \
                 is relative to"
            ),
        ),
        (None, _) => {}
    }
    match video_dir {
        Some(dir) => entry(t, "videos", Some(&rel(dir)), "the folder the video paths are relative to"),
        None if has_videos => entry(
            t,
            "videos",
            None,
            "the videos named were not found (beside the data file, in a folder beside it, or in --videos): give \
             the folder their paths are relative to",
        ),
        None => {}
    }
}

/// The `[ingest]` keys that say how the answers are read: reference answers, options
/// written in the question, and golds of 0 and 1 (commented: init cannot tell).
fn answer_reading_entries(t: &mut String, s: &Survey, lines: &[Line]) {
    if let Some(answer) = lines.iter().find(|l| l.key == "answer" && l.why == REFERENCES_WHY) {
        entry(
            t,
            "reference-answers",
            Some("majority"),
            &format!(
                "the gold is the most common reference answer (ties: the first given); \"first\" takes the first; \
                 with [predictions], [metrics] reference-answers = {} scores models by VQA accuracy over the list",
                toml_str(answer.value.as_deref().unwrap_or_default())
            ),
        );
    }
    if let Some(l) = lines.iter().find(|l| l.key == "options-in-question") {
        let _ = writeln!(t, "{:<32} # {}", "options-in-question = true", l.why);
    }
    // Golds of 0 and 1 without options read as numbers; where they mean no and yes
    // (HallusionBench's `gt_answer`), the user says so: init cannot tell.
    let answer = lines.iter().find(|l| l.key == "answer").and_then(|l| s.field(l.value.as_deref()?));
    let binary = answer.filter(|f| {
        let mut v = f.examples.clone();
        v.sort();
        f.distinct == 2 && v == ["0", "1"] && !lines.iter().any(|l| l.key.starts_with("options") && l.is_mapped())
    });
    if let Some(f) = binary {
        entry(
            t,
            "answer-format",
            None,
            &format!(
                "every \"{}\" read is 0 or 1, read as numbers; if they mean no and yes, set \"yes_no\" and the \
                 answer-map below",
                f.name
            ),
        );
        t.push_str("# [ingest.answer-map]\n# \"1\" = \"yes\"\n# \"0\" = \"no\"\n");
    }
}

/// `[ingest.fields]`, and the unmapped fields meta keeps.
fn fields_section(t: &mut String, s: &Survey, lines: &[Line]) {
    t.push_str("\n[ingest.fields]                  # source field -> canonical field\n");
    for l in lines.iter().filter(|l| l.key != "options-in-question") {
        if l.columns.is_empty() {
            entry(t, l.key, l.value.as_deref(), &l.why);
        } else {
            let columns: Vec<String> = l.columns.iter().map(|c| toml_str(c)).collect();
            let _ = writeln!(t, "{:<32} # {}", format!("{} = [{}]", l.key, columns.join(", ")), l.why);
        }
    }
    let chosen: Vec<&str> = lines
        .iter()
        .filter(|l| l.key != "options-in-question")
        .flat_map(|l| l.value.iter().chain(&l.columns))
        .map(String::as_str)
        .collect();
    // A field is chosen whole, or in part by a path into it (`conversations.0.value`).
    let chosen_field = |name: &str| {
        chosen.iter().any(|c| *c == name || c.strip_prefix(name).is_some_and(|rest| rest.starts_with('.')))
    };
    let rest: Vec<String> =
        s.fields.iter().filter(|f| !chosen_field(&f.name)).map(|f| format!("\"{}\"", f.name)).collect();
    if !rest.is_empty() {
        let _ = writeln!(t, "# meta = [{}]   # default: every unmapped field is kept in meta", rest.join(", "));
    }
}

/// The folder a file is in (`.` for a bare file name).
fn folder_of(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether a video field or template is proposed.
fn has_videos(lines: &[Line]) -> bool {
    lines.iter().any(|l| l.key == "videos" && l.value.is_some())
}

/// The stage sections, from `[diagnose]` to the datasheet questions.
fn stage_sections(t: &mut String, lines: &[Line]) {
    let has_videos = has_videos(lines);
    let has_images = lines.iter().any(|l| l.key == "images" && l.is_mapped());
    let has_options = lines.iter().any(|l| (l.key == "options" && l.is_mapped()) || l.key == "options-in-question");
    t.push_str(
        "\n# TsT-RF: how much of the benchmark a model answers without the image\n\
         # (k-fold random forests on non-visual features).\n[diagnose]\n",
    );
    let _ = writeln!(t, "{:<32} # k-fold cross-validation", "folds = 5");
    if has_images {
        t.push_str(&group_by_image_line());
    } else if has_videos {
        entry(
            t,
            "group-by",
            None,
            "\"video\": questions about one video share a fold, where every question type has enough videos",
        );
    } else {
        entry(t, "group-by", None, "\"image\", \"question\" or \"meta:FIELD\": questions that must share a fold");
    }
    t.push_str(
        "\n# Iterative Bias Pruning: remove what a blind model answers, only where blind\n\
         # accuracy is above its label-permutation null.\n[prune]\n",
    );
    entry(t, "method", Some("ibp"), "or \"aflite\", \"random\"");
    let _ = writeln!(t, "{:<32} # questions to remove at most", "budget = \"10%\"");
    let _ = writeln!(t, "{:<32} # fewest questions a question type keeps", "floor = 10");
    t.push_str("\n# Stress-test variants, one release config per kind that applies.\n[variants]\n");
    let mut kinds = vec!["no_image", "white_image", "mirage", "guess", "phantom", "phantom0"];
    if has_videos {
        if !has_images {
            kinds.retain(|k| !["no_image", "white_image", "phantom0"].contains(k));
        }
        kinds.extend(["no_video", "phantom0_video"]);
    }
    if has_options {
        kinds.extend(["option_shuffle", "unknown_option", "gold_removed"]);
    }
    let kinds: Vec<String> = kinds.iter().map(|k| format!("\"{k}\"")).collect();
    let _ = writeln!(t, "kinds = [{}]", kinds.join(", "));
    t.push_str("\n[release]\n");
    let _ =
        writeln!(t, "{:<32} # image bytes inside the Parquet: the release is self-contained", "embed-images = true");
    t.push_str("\n# The datasheet questions only the publisher can answer (Gebru et al.); the card\n# marks each one left unanswered.\n[datasheet]\n");
    for q in crate::datasheet::QUESTIONS.iter().filter(|q| !q.computed) {
        let _ = writeln!(t, "# {} = \"\"\"...\"\"\"   # {}", q.id, q.text);
    }
}

/// A CSV or TSV input whose first row reads as a record: its columns named `column_1`,
/// `column_2`, ... and why the row is no header; `None` for a file with a header row, one
/// whose columns the plan names already, another format, or one the survey must
/// report on.
fn headerless(ingest: &IngestPlan) -> Option<(Vec<String>, String)> {
    let input = ingest.inputs.first()?;
    let delimiter = match input.format {
        crate::plan::Format::Csv => b',',
        crate::plan::Format::Tsv => b'\t',
        _ => return None,
    };
    if ingest.columns.is_some() || ingest.header_said {
        return None;
    }
    // The first row is all this reads: the file's first MiB, up to its last line end.
    // What the prefix cannot tell (a quoted value running past it, an unreadable file)
    // is left to the survey, which reads the whole file and says what is wrong.
    let mut head = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(std::fs::File::open(&input.path).ok()?, 1 << 20), &mut head)
        .ok()?;
    if head.len() == 1 << 20
        && let Some(end) = head.iter().rposition(|&b| b == b'\n')
    {
        head.truncate(end + 1);
    }
    let (n, why) = crate::ingest::csv::first_row_reads_as_record(&input.path, head, delimiter).ok().flatten()?;
    Some(((1..=n).map(|k| format!("column_{k}")).collect(), why))
}

/// One canonical field's line: the source chosen and why, or why none was.
#[derive(Debug, Clone)]
pub struct Line {
    pub key: &'static str,
    /// The source field chosen; `None`: left commented, `why` says why.
    pub value: Option<String>,
    pub why: String,
    /// Options only: one field per option, in letter order (`value` is `None`).
    pub columns: Vec<String>,
}

impl Line {
    fn unmapped(key: &'static str, why: &str) -> Line {
        Line { key, value: None, why: why.to_string(), columns: Vec::new() }
    }

    /// Whether the line maps a source: a field, or one field per option.
    pub fn is_mapped(&self) -> bool {
        self.value.is_some() || !self.columns.is_empty()
    }
}

/// A name's words, lower-cased: split at `_`, `-`, `.`, spaces and camelCase humps
/// (`answerKey` -> answer, key).
fn parts(name: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(name.len() + 4);
    let mut before: Option<char> = None;
    for c in name.chars() {
        if c.is_ascii_uppercase() && before.is_some_and(|b| b.is_ascii_lowercase()) {
            spaced.push(' ');
        }
        spaced.push(c);
        before = Some(c);
    }
    spaced.split(['_', '-', '.', ' ']).filter(|p| !p.is_empty()).map(str::to_ascii_lowercase).collect()
}

/// Words naming a question's type.
const TYPE_WORDS: &[&str] = &["type", "category", "task", "subject", "skill", "subtask", "domain", "topic"];

/// Words for the gold answer.
const GOLD: &[&str] = &["answer", "label", "gold", "target", "solution", "correct", "truth", "gt"];

/// Named like an answer: a word for the gold, alone or followed by words that say how
/// it is given (`answer`, `gold_label`, `answerKey`, `correct_choice_idx`, `answer_letter`).
fn named_like_answer(f: &FieldSurvey) -> bool {
    const HOW: &[&str] = &["key", "idx", "index", "letter", "label", "option", "choice", "text", "number"];
    let parts = parts(&f.name);
    parts
        .iter()
        .rposition(|p| GOLD.contains(&p.as_str()))
        .is_some_and(|at| parts[at + 1..].iter().all(|p| HOW.contains(&p.as_str())))
}

/// Named like several answers (`answers`, `gold_labels`): a list of reference answers
/// when it holds lists, never the options.
fn named_like_answers(f: &FieldSurvey) -> bool {
    parts(&f.name).last().and_then(|p| p.strip_suffix('s')).is_some_and(|p| GOLD.contains(&p))
}

fn last_part_in(f: &FieldSurvey, words: &[&str]) -> bool {
    parts(&f.name).last().is_some_and(|p| words.contains(&p.as_str()))
}

fn is_scalar(f: &FieldSurvey) -> bool {
    !f.kinds.is_empty() && f.kinds.iter().all(|k| matches!(*k, "a string" | "an integer" | "a number"))
}

fn is_text(f: &FieldSurvey) -> bool {
    f.kinds.len() == 1 && f.kinds.contains("a string")
}

fn quoted(names: &[&FieldSurvey]) -> String {
    listed(names, "or")
}

/// The fields' names quoted, the last joined by `last` ("a", "b" or "c").
fn listed(names: &[&FieldSurvey], last: &str) -> String {
    let q: Vec<String> = names.iter().map(|f| format!("\"{}\"", f.name)).collect();
    match q.len() {
        0 => String::new(),
        1 => q[0].clone(),
        _ => format!("{} {last} {}", q[..q.len() - 1].join(", "), q[q.len() - 1]),
    }
}

/// The canonical field `key`: the field named `exact` when there is one (and
/// `fits`), else the one field the rule `like` finds; two or more are left for
/// the user, named.
fn choose<'a>(
    s: &'a Survey,
    taken: &[String],
    key: &'static str,
    exact: &[&str],
    like: &dyn Fn(&FieldSurvey) -> bool,
    why_like: &str,
) -> (Line, Option<&'a FieldSurvey>) {
    let free = |f: &&FieldSurvey| !taken.contains(&f.name) && f.present > 0;
    if let Some(f) = exact.iter().find_map(|e| s.fields.iter().filter(free).find(|f| f.name == *e && like(f))) {
        let line = Line {
            key,
            value: Some(f.name.clone()),
            why: format!("the canonical name; {why_like}"),
            columns: Vec::new(),
        };
        return (line, Some(f));
    }
    let found: Vec<&FieldSurvey> = s.fields.iter().filter(free).filter(|f| like(f)).collect();
    match found[..] {
        [f] => (Line { key, value: Some(f.name.clone()), why: why_like.to_string(), columns: Vec::new() }, Some(f)),
        [] => (Line { key, value: None, why: format!("no field is {why_like}"), columns: Vec::new() }, None),
        _ => (
            Line {
                key,
                value: None,
                why: format!("{} could each be the {key} ({why_like}): choose one", quoted(&found)),
                columns: Vec::new(),
            },
            None,
        ),
    }
}

/// A canonical field's proposed line, and the field it maps (none: left to the user).
type Chosen<'s> = (Line, Option<&'s FieldSurvey>);

/// `first`, unless it found no field and named none to choose between: then what
/// `then` finds (a field, or fields to choose between), else still `first`.
fn or_else<'s>(first: Chosen<'s>, then: impl FnOnce() -> Option<Chosen<'s>>) -> Chosen<'s> {
    let settled = |c: &Chosen<'_>| c.1.is_some() || c.0.why.contains("choose one");
    if settled(&first) {
        return first;
    }
    then().filter(settled).unwrap_or(first)
}

/// The line of `chosen`, or of the field given with `--field`; its field is taken.
fn take(chosen: Chosen<'_>, given: Option<&String>, taken: &mut Vec<String>) -> Line {
    let mut line = chosen.0;
    if let Some(g) = given {
        line.value = Some(g.clone());
        line.why = "given with --field".into();
    }
    if let Some(v) = &line.value {
        taken.push(v.clone());
    }
    line
}

/// `line` mapped to one column per `what` (options, images), in order; they are taken.
fn map_columns(line: &mut Line, columns: Vec<String>, what: &str, empty: &str, taken: &mut Vec<String>) {
    line.why = format!("one column per {what}, \"{}\" to \"{}\"; {empty}", columns[0], columns[columns.len() - 1]);
    taken.extend(columns.iter().cloned());
    line.columns = columns;
}

/// The proposed `[ingest.fields]`, in the order a pipeline lists them; the
/// fields `--field` maps are taken as given.
fn propose(
    s: &Survey,
    given: &crate::wire::FieldsWire,
    beside: &Path,
    video_folders: &[PathBuf],
) -> (Vec<Line>, Option<std::result::Result<PathBuf, String>>, Option<PathBuf>) {
    let mut taken: Vec<String> = Vec::new();
    let mut lines = Vec::new();
    let id = id_line(s, &taken);
    lines.push(take(id, given.id.as_ref(), &mut taken));
    let question = or_else(
        choose(
            s,
            &taken,
            "question",
            &["question"],
            &|f| is_text(f) && last_part_in(f, &["question", "prompt", "query", "instruction"]),
            "text named like a question",
        ),
        || Some(or_else(asking_line(s, &taken), || Some(exchange_line(s, &taken, "question", 0)))),
    );
    lines.push(take(question, given.question.as_ref(), &mut taken));
    let context = choose(
        s,
        &taken,
        "context",
        &["context", "hint"],
        &|f| is_text(f) && last_part_in(f, &["context", "hint"]),
        "text named like a context or hint",
    );
    // Optional: left out without a candidate.
    let context = take(context, given.context.as_ref(), &mut taken);
    if context.value.is_some() || context.why.contains("choose one") {
        lines.push(context);
    }
    let mut options = options_line(s, given, &mut taken);
    let in_question = (!options.is_mapped() && given.options.is_none())
        .then(|| lines.iter().find(|l| l.key == "question").and_then(|q| options_in_question_line(s, q)))
        .flatten();
    if in_question.is_some() {
        options.why = "the options are written in the question (options-in-question above)".into();
    }
    lines.push(options);
    lines.extend(in_question);
    answer_lines(s, given, &mut lines, &mut taken);
    // A field that only says whether a question has options (MathVista's
    // `question_type`: multi_choice / free_form) repeats the answer format: no type.
    let options = lines.iter().find(|l| l.key == "options").filter(|l| l.is_mapped());
    let mirrors_format = |f: &FieldSurvey| {
        let Some(options) = options else { return false };
        let mut by_value: std::collections::BTreeMap<String, (bool, bool)> = std::collections::BTreeMap::new();
        for rec in &s.read {
            let Some(v) = rec.value.get_path(&f.name).and_then(Raw::scalar_text) else { continue };
            let has = options_of(&rec.value, options).is_some_and(|o| !o.is_empty());
            let seen = by_value.entry(v).or_default();
            if has { seen.0 = true } else { seen.1 = true }
        }
        by_value.values().all(|&(with, without)| with != without)
            && by_value.values().any(|v| v.0)
            && by_value.values().any(|v| v.1)
    };
    // A field of one value splits nothing; a type may be given by its code
    // (`question_type_id = 3`).
    let few = |f: &FieldSurvey| {
        (is_text(f) || f.int_range.is_some())
            && f.distinct >= 2
            && f.distinct * 2 <= f.present.max(2)
            && !mirrors_format(f)
    };
    let like_a_type = |f: &FieldSurvey| {
        let parts = parts(&f.name);
        let named = match parts.as_slice() {
            [.., word, last] if last == "id" || last == "code" => TYPE_WORDS.contains(&word.as_str()),
            [.., last] => TYPE_WORDS.contains(&last.as_str()),
            [] => false,
        };
        few(f) && named
    };
    // Else a member of an object field, either named like a type (`metadata.task`,
    // `types.structural`), read by its path.
    let member_like_a_type = |f: &FieldSurvey| {
        few(f) && parts(&f.name).iter().any(|p| TYPE_WORDS.contains(&p.strip_suffix('s').unwrap_or(p)))
    };
    const TYPE_WHY: &str = "text or a code named like a type or category, with a few distinct values (two or more)";
    let nested = Survey { fields: s.members.clone(), ..Survey::default() };
    let qtype = or_else(choose(s, &taken, "question-type", &["question_type"], &like_a_type, TYPE_WHY), || {
        let why = format!("a member of an object, {TYPE_WHY}");
        Some(choose(&nested, &taken, "question-type", &[], &member_like_a_type, &why))
    });
    let mut qtype = take(qtype, given.question_type.as_ref(), &mut taken);
    if !qtype.is_mapped()
        && let Some(f) = s.fields.iter().find(|f| last_part_in(f, TYPE_WORDS) && mirrors_format(f))
    {
        let _ = write!(qtype.why, "; \"{}\" only repeats whether a question has options", f.name);
    }
    lines.push(qtype);
    let (mut images, image_field) = images_line(s, given, &mut taken);
    let image_folders = media_folders(beside, &["images", "image", "imgs"], &["image", "img"]);
    // Image files named by path: the folder they were found in (beside the data file,
    // or in its `images` folder), or the first path when they were not; None when the
    // images are not named by path.
    let mut folder_line = image_field.filter(|f| f.kinds.contains("a string")).map(|f| {
        let first = f.examples.first().cloned().unwrap_or_default();
        image_folders.iter().find(|d| d.join(&first).is_file()).cloned().ok_or(first)
    });
    // No field names the images, but fields name their files (`{Index}.jpg`, as MMVP).
    if !images.is_mapped() && images.columns.is_empty() && !images.why.contains("choose one") && given.images.is_none()
    {
        let extensions = crate::ingest::survey::IMAGE_EXTENSIONS;
        if let Some((template, why, dir)) = media_template(s, &image_folders, extensions, "an image file") {
            (images.value, images.why) = (Some(template), why);
            folder_line = Some(Ok(dir));
        }
    }
    lines.push(images);
    let videos = videos_line(s, video_folders, &mut taken);
    let video_dir = videos.as_ref().and_then(|(_, d)| d.clone());
    lines.extend(videos.map(|(l, _)| l));
    (lines, folder_line, video_dir)
}

/// The videos (a line only when found): a field naming video files, else a template of
/// one or two fields that names, on each of the first records, a video file in the data
/// file's folder or its `videos` folder (`{videoID}.mp4`, `{dataset}/{scene_name}.mp4`,
/// as Video-MME and VSI-Bench lay them out); with the folder the files were found in.
fn videos_line(s: &Survey, folders: &[PathBuf], taken: &mut Vec<String>) -> Option<(Line, Option<PathBuf>)> {
    let (line, field) = choose(
        s,
        taken,
        "videos",
        &["videos", "video"],
        &|f| f.video_like,
        "video file names in every record that has it",
    );
    if let Some(f) = field {
        let first = f.examples.first().cloned().unwrap_or_default();
        taken.push(f.name.clone());
        return Some((line, folders.iter().find(|d| d.join(&first).is_file()).cloned()));
    }
    if line.why.contains("choose one") {
        return Some((line, None));
    }
    media_template(s, folders, crate::ingest::survey::VIDEO_EXTENSIONS, "a video file")
        .map(|(template, why, d)| (Line { key: "videos", value: Some(template), why, columns: Vec::new() }, Some(d)))
}

/// A template of one or two scalar fields (`{videoID}.mp4`, `{dataset}/{scene_name}.mp4`,
/// `{Index}.jpg`) that names, on each of the first three records, an existing file with
/// one of `extensions` in one of `folders`: the template, why, and that folder.
fn media_template(
    s: &Survey,
    folders: &[PathBuf],
    extensions: &[&str],
    what: &str,
) -> Option<(String, String, PathBuf)> {
    let records: Vec<&Raw> = s.read.iter().take(3).map(|r| &r.value).collect();
    let scalar: Vec<&str> =
        s.fields.iter().filter(|f| is_scalar(f) && f.present == s.records).map(|f| f.name.as_str()).collect();
    let value = |rec: &Raw, field: &str| rec.get(field).and_then(Raw::scalar_text).map(|t| t.trim().to_string());
    let names = |template: &str, fields: &[&str]| -> Option<Vec<String>> {
        records
            .iter()
            .map(|rec| {
                let mut path = template.to_string();
                for f in fields {
                    let v = value(rec, f).filter(|v| !v.is_empty() && !v.contains(['{', '}']))?;
                    path = path.replacen(&format!("{{{f}}}"), &v, 1);
                }
                Some(path)
            })
            .collect()
    };
    let singles = scalar.iter().map(|a| vec![*a]);
    let pairs = scalar.iter().flat_map(|a| scalar.iter().filter(move |b| *b != a).map(move |b| vec![*a, *b]));
    for fields in singles.chain(pairs) {
        for ext in extensions {
            let braced: Vec<String> = fields.iter().map(|f| format!("{{{f}}}")).collect();
            let template = format!("{}.{ext}", braced.join("/"));
            let Some(paths) = names(&template, &fields).filter(|p| !p.is_empty()) else { continue };
            if let Some(d) = folders.iter().find(|d| paths.iter().all(|p| d.join(p).is_file())) {
                let why = format!("each of the first {} records names {what} there (\"{}\")", paths.len(), paths[0]);
                return Some((template, why, d.clone()));
            }
        }
    }
    numbered_files(&records, &scalar, folders, extensions, what)
}

/// Files named by a whole-number field inside a fixed name, zero-padded or not (COCO's
/// `COCO_val2014_000000393225.jpg` for `image_id = 393225`): the template
/// (`COCO_val2014_{image_id:012}.jpg`) that names a file in one folder for each of
/// `records`, found from the names of the files there.
fn numbered_files(
    records: &[&Raw],
    fields: &[&str],
    folders: &[PathBuf],
    extensions: &[&str],
    what: &str,
) -> Option<(String, String, PathBuf)> {
    const LISTED: usize = 200_000;
    let number = |rec: &Raw, f: &str| -> Option<String> {
        let t = rec.get(f)?.scalar_text()?.trim().to_string();
        (!t.is_empty() && t.len() <= 18 && t.bytes().all(|b| b.is_ascii_digit())).then_some(t)
    };
    // Each whole-number field, with its value in the first record.
    let first = records.first()?;
    let fields: Vec<(&str, String)> = fields
        .iter()
        .filter(|f| records.iter().all(|r| number(r, f).is_some()))
        .filter_map(|f| Some((*f, number(first, f)?)))
        .collect();
    if fields.is_empty() {
        return None;
    }
    for dir in folders {
        let Ok(listing) = std::fs::read_dir(dir) else { continue };
        let names: Vec<String> =
            listing.take(LISTED).flatten().filter_map(|e| e.file_name().to_str().map(String::from)).collect();
        for name in &names {
            let Some((stem, ext)) = name.rsplit_once('.') else { continue };
            if !extensions.iter().any(|e| ext.eq_ignore_ascii_case(e)) {
                continue;
            }
            let digits = stem.len() - stem.bytes().rev().take_while(u8::is_ascii_digit).count();
            let (prefix, run) = stem.split_at(digits);
            if run.is_empty() {
                continue;
            }
            let value = run.trim_start_matches('0');
            for (f, v) in &fields {
                if v.trim_start_matches('0') != value {
                    continue;
                }
                let width = (run.len() > v.len()).then_some(run.len());
                let write = |v: &str| match width {
                    Some(width) => format!("{prefix}{v:0>width$}.{ext}"),
                    None => format!("{prefix}{v}.{ext}"),
                };
                let paths: Vec<String> = records.iter().filter_map(|r| Some(write(&number(r, f)?))).collect();
                if paths.len() == records.len() && paths.iter().all(|p| dir.join(p).is_file()) {
                    let placeholder = match width {
                        Some(w) => format!("{{{f}:0{w}}}"),
                        None => format!("{{{f}}}"),
                    };
                    let why = format!(
                        "each of the first {} records names {what} there by its \"{f}\" (\"{}\")",
                        paths.len(),
                        paths[0]
                    );
                    return Some((format!("{prefix}{placeholder}.{ext}"), why, dir.clone()));
                }
            }
        }
    }
    None
}

/// The options: a list field, else one column per option.
fn options_line(s: &Survey, given: &crate::wire::FieldsWire, taken: &mut Vec<String>) -> Line {
    // VQA's layout: no answer but a list of reference answers (`answers`); any other
    // list (`image_classes`, `question_tokens`) is no options unless so named.
    let references = !s.fields.iter().any(|f| is_scalar(f) && named_like_answer(f))
        && s.fields.iter().any(|f| f.references && named_like_answers(f));
    let options = choose(
        s,
        taken,
        "options",
        &["options", "choices"],
        &|f| {
            // A list named like ids (`vote_true_validator_id = "[2, 9]"`) is no options.
            f.list_of_text
                && !f.image_like
                && !named_like_answers(f)
                && !last_part_in(f, &["id", "ids"])
                && (!references || ["options", "choices"].contains(&f.name.as_str()))
                && names_the_answers(s, f)
        },
        "a list of texts, or a text of lettered options, in every record that has it",
    );
    let options_given = match &given.options {
        Some(crate::wire::OptionsWire::One(o)) => Some(o.clone()),
        _ => None,
    };
    let mut options = take(options, options_given.as_ref(), taken);
    if !options.is_mapped() && given.options.is_none() {
        match option_columns(s, taken) {
            OptionColumns::Run(columns) => map_columns(
                &mut options,
                columns,
                "option",
                "an empty or nan cell after the last option is no option",
                taken,
            ),
            OptionColumns::Unclear(why) => options.why = why,
            OptionColumns::None => {}
        }
    }
    options
}

/// Whether a list field can be the options of the answers read: where a scalar field
/// named like an answer is given beside it, at least half its values name an item of
/// the list (its text, a lone letter such as `B` or `(b)`, or a position). A list that
/// never holds the answer is something else (GQA's `entailed`: the ids of related
/// questions).
fn names_the_answers(s: &Survey, list: &FieldSurvey) -> bool {
    let answers: Vec<&FieldSurvey> = s.fields.iter().filter(|f| is_scalar(f) && named_like_answer(f)).collect();
    answers.is_empty()
        || answers.iter().any(|answer| {
            let (mut both, mut named) = (0, 0);
            for rec in &s.read {
                let (Some(items), Some(gold)) = (rec.value.get(&list.name), rec.value.get(&answer.name)) else {
                    continue;
                };
                let (Ok((items, _)), Some(gold)) = (crate::ingest::options::option_items(items), gold.scalar_text())
                else {
                    continue;
                };
                let texts: Vec<String> = items.iter().filter_map(Raw::scalar_text).map(|t| folded(&t)).collect();
                both += 1;
                named += usize::from(names_an_item(&gold, &texts));
            }
            both == 0 || named * 2 >= both
        })
}

/// Whether `gold` names one of `items` (folded texts): by its text, a lone letter in
/// range (`B`, `(b)`, `c.`), or a position in range (0- or 1-based).
fn names_an_item(gold: &str, items: &[String]) -> bool {
    let gold = folded(gold);
    let letter = gold.trim_matches(|c: char| c == '(' || c == ')' || c == '.' || c.is_whitespace());
    let in_range = |i: usize| i <= items.len();
    items.contains(&gold)
        || (letter.len() == 1
            && letter.chars().all(|c| c.is_ascii_lowercase())
            && in_range(usize::from(letter.as_bytes()[0] - b'a') + 1))
        || gold.parse::<usize>().is_ok_and(in_range)
}

/// The answer, and how it names its option (`answer-kind`) where the values say;
/// pushed after the options line in `lines`.
fn answer_lines(s: &Survey, given: &crate::wire::FieldsWire, lines: &mut Vec<Line>, taken: &mut Vec<String>) {
    let options =
        lines.iter().find(|l| (l.key == "options" && l.is_mapped()) || l.key == "options-in-question").cloned();
    let answer = choose(
        s,
        taken,
        "answer",
        &["answer_index", "answer"],
        &|f| is_scalar(f) && named_like_answer(f),
        "named like an answer",
    );
    // VQA's layout: the answer a list of reference answers (`answers`), no options.
    let answer = or_else(answer, || {
        options
            .is_none()
            .then(|| choose(s, taken, "answer", &[], &|f| f.references && named_like_answers(f), REFERENCES_WHY))
    });
    // A conversation's first exchange, when its asking turn is the question.
    let answer = or_else(answer, || {
        let question = lines.iter().find(|l| l.key == "question").and_then(|l| l.value.as_deref());
        let asked = exchange_line(s, taken, "question", 0);
        (asked.0.value.as_deref() == question && asked.1.is_some()).then(|| exchange_line(s, taken, "answer", 1))
    });
    let answer_field = answer.1;
    lines.push(take(answer, given.answer.as_ref(), taken));
    // How the gold names its option, from the column's values, else from the options
    // each answer is read against.
    if let Some(options) = options.filter(|_| given.answer.is_none()) {
        let read_kind = |f| {
            (options.key == "options")
                .then(|| text_kind_line(s, f, &options).or_else(|| position_kind_line(s, f, &options)))
                .flatten()
        };
        let kind = answer_kind_line(answer_field).or_else(|| answer_field.and_then(read_kind));
        lines.extend(kind);
    }
}

/// The images: one field, else one column per image; and the field whose values
/// say how images are named.
fn images_line<'s>(
    s: &'s Survey,
    given: &crate::wire::FieldsWire,
    taken: &mut Vec<String>,
) -> (Line, Option<&'s FieldSurvey>) {
    let images = choose(
        s,
        taken,
        "images",
        &["images", "image"],
        &|f| f.image_like,
        "images (a {bytes, path} struct, bytes, or image file names) in every record that has it",
    );
    let mut image_field = images.1;
    let images_given = match &given.images {
        Some(crate::wire::OneOrMany::One(o)) => Some(o.clone()),
        _ => None,
    };
    // A run whose first column alone is filled in the records read (BLINK's `image_1`
    // to `image_4`) is the run, not that column: a record further on may fill the rest.
    let run = image_columns(s, taken);
    let in_run = |line: &Line| run.as_ref().is_some_and(|r| line.value.as_ref().is_some_and(|v| r.contains(v)));
    let images =
        if images_given.is_none() && in_run(&images.0) { (Line::unmapped("images", ""), None) } else { images };
    let mut images = take(images, images_given.as_ref(), taken);
    if !images.is_mapped()
        && given.images.is_none()
        && let Some(columns) = run
    {
        image_field = columns.iter().find_map(|c| s.field(c).filter(|f| f.image_like));
        map_columns(&mut images, columns, "image", "an empty cell is no image", taken);
    }
    (images, image_field)
}

/// The question when no field is named like one: the one text field most of whose
/// values end in a question mark (`text`, `prompt_text`, `utterance`), with how many
/// do; several are named for the user to choose.
fn asking_line<'s>(s: &'s Survey, taken: &[String]) -> Chosen<'s> {
    let (mut line, found) = choose(
        s,
        taken,
        "question",
        &[],
        &|f| is_text(f) && !f.image_like && !f.list_of_text && f.asking * 2 > f.present,
        "text most of whose values end in a question mark",
    );
    if let Some(f) = found {
        line.why = format!(
            "no field is named like a question; {} of its {} values read end in a question mark",
            f.asking, f.present
        );
    }
    (line, found)
}

/// The question (`turn` 0) or the answer (`turn` 1) of a conversation field's first
/// exchange ([`crate::ingest::options::first_exchange`]): a path to that turn's text
/// (`conversations.0.value`), with who speaks it and how many records go on after it.
fn exchange_line<'s>(s: &'s Survey, taken: &[String], key: &'static str, turn: usize) -> Chosen<'s> {
    let free = |f: &&FieldSurvey| !taken.contains(&f.name);
    let found: Vec<&FieldSurvey> = s.fields.iter().filter(free).filter(|f| f.exchange.is_some()).collect();
    let [f] = found[..] else {
        return choose(s, taken, key, &[], &|f| f.exchange.is_some(), "a conversation of turns that say who speaks");
    };
    let (at, member) = f.exchange.clone().unwrap_or_default();
    let path = format!("{}.{}.{member}", f.name, at + turn);
    let Some(part) = s.turns.iter().find(|t| t.name == path) else { return (Line::unmapped(key, ""), None) };
    let mut why = format!(
        "the {} turn of the first exchange of a conversation, in each of the {} records that have it",
        if turn == 0 { "asking" } else { "answering" },
        f.present
    );
    if turn == 0 && f.turns_after > 0 {
        why.push_str(&format!(
            "; {} of them go on after it: the later turns are not mapped, and ingest counts them",
            f.turns_after
        ));
    }
    (Line { key, value: Some(path), why, columns: Vec::new() }, Some(part))
}

/// Where media files named by relative paths may lie: `base`, its subfolders `names`
/// (a data file's `images` or `videos` folder), its other subfolders whose name holds
/// one of `words` in any case (`MMVP Images`, `test_videos`), then the rest (ChartQA's
/// `png`), each kind by name; those that exist, at most [`MEDIA_FOLDERS`].
fn media_folders(base: &Path, names: &[&str], words: &[&str]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> =
        std::iter::once(base.to_path_buf()).chain(names.iter().map(|n| base.join(n))).filter(|d| d.is_dir()).collect();
    let mut others: Vec<(bool, PathBuf)> = std::fs::read_dir(base)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir() && !found.contains(p) && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .map(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
            (!words.iter().any(|w| name.contains(w)), p)
        })
        .collect();
    others.sort();
    found.extend(others.into_iter().map(|(_, p)| p));
    found.truncate(MEDIA_FOLDERS);
    found
}

/// The most folders init looks in for media files.
const MEDIA_FOLDERS: usize = 50;

/// `options-in-question = true` (an `[ingest]` setting) when no options are mapped and
/// most questions read end in lettered options (`A. ...` lines, as LLaVA-style
/// conversations write them), which ingest then splits off as the options.
fn options_in_question_line(s: &Survey, question: &Line) -> Option<Line> {
    let path = question.value.as_deref()?;
    let (mut read, mut lettered) = (0, 0);
    for rec in &s.read {
        let Some(text) = rec.value.get_path(path).and_then(Raw::scalar_text) else { continue };
        read += 1;
        lettered += usize::from(crate::ingest::options::split_options_from_question(&text).1.len() >= 2);
    }
    (lettered * 2 > read).then(|| Line {
        key: "options-in-question",
        value: Some("true".into()),
        why: format!(
            "{lettered} of the {read} questions read end in lettered options (\"A. ...\" lines, or \"A: ..., B: ...\"): \
             ingest splits them off as the options"
        ),
        columns: Vec::new(),
    })
}

/// Why a list field is proposed as the answer; the pipeline then reads it with
/// `reference-answers = "majority"`.
const REFERENCES_WHY: &str =
    "a list of reference answers named like answers: the gold is the most common (reference-answers = \"majority\")";

/// Images given one column each (`image_1` to `image_7`, as MMMU writes them): every
/// field left that holds images is named by one stem and a number, so every column of
/// that stem and a number is mapped, in number order, the empty ones too (a later
/// record may fill them). `None` unless the image fields left are such a run of two
/// columns or more.
fn image_columns(s: &Survey, taken: &[String]) -> Option<Vec<String>> {
    let numbered = |name: &str| {
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (stem, number) = name.split_at(name.len() - digits);
        let number = number.parse::<usize>().ok()?;
        stem.chars().any(|c| c.is_ascii_alphabetic()).then(|| (stem.to_string(), number))
    };
    let free = s.fields.iter().filter(|f| !taken.contains(&f.name));
    let images: Vec<&FieldSurvey> = free.clone().filter(|f| f.present > 0 && f.image_like).collect();
    let stem = numbered(&images.first()?.name)?.0;
    if !images.iter().all(|f| numbered(&f.name).is_some_and(|(s, _)| s == stem)) {
        return None;
    }
    let mut run: Vec<(usize, String)> = free
        .filter(|f| f.present == 0 || f.image_like)
        .filter_map(|f| numbered(&f.name).filter(|(s, _)| *s == stem).map(|(_, n)| (n, f.name.clone())))
        .collect();
    run.sort();
    (run.len() >= 2).then(|| run.into_iter().map(|(_, name)| name).collect())
}

/// Column names that number something other than options.
const NOT_OPTIONS: &[&str] =
    &["answer", "answers", "label", "gold", "target", "image", "images", "img", "picture", "id", "question", "frame"];

/// What the columns say about options given one column per option.
enum OptionColumns {
    /// The columns, in option order.
    Run(Vec<String>),
    /// Why none is proposed: a gap in a run, or two runs.
    Unclear(String),
    None,
}

/// Options given one column each: a family of scalar columns named alike but for a
/// last letter from A (`A`, `B`, ... as VLMEvalKit writes them; `Option A`, `option_b`,
/// `optionC`) or a number from 0 or 1 (`choice1`, `option_2`), each with a value in
/// some record read. A run with a gap (`A`, `B`, `D`) is left to the user, since
/// mapping the run would leave the option after the gap out; so are two runs.
fn option_columns(s: &Survey, taken: &[String]) -> OptionColumns {
    let scalar = |f: &FieldSurvey| {
        f.present > 0
            && !f.image_like
            && f.kinds.iter().all(|k| matches!(*k, "a string" | "an integer" | "a number" | "a boolean"))
    };
    // (prefix, kind) -> option index -> column; kind 0: A-Z, 1: a-z, 2: a number.
    let mut families: std::collections::BTreeMap<(String, u8), std::collections::BTreeMap<usize, String>> =
        std::collections::BTreeMap::new();
    for f in s.fields.iter().filter(|f| !taken.contains(&f.name)) {
        let name = f.name.as_str();
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, kind, index) = if digits > 0 && digits < name.len() && digits <= 2 {
            let (prefix, number) = name.split_at(name.len() - digits);
            (prefix, 2, number.parse::<usize>().unwrap_or(usize::MAX))
        } else {
            let Some(last) = name.chars().last().filter(char::is_ascii_alphabetic) else { continue };
            let prefix = &name[..name.len() - 1];
            let joined = prefix.chars().last().is_some_and(|p| p.is_ascii_lowercase() && last.is_ascii_uppercase());
            if !(prefix.is_empty() || prefix.ends_with([' ', '_', '-', '.', ':']) || joined) {
                continue;
            }
            let kind = if last.is_ascii_uppercase() { 0 } else { 1 };
            (prefix, kind, usize::from(last.to_ascii_uppercase() as u8 - b'A'))
        };
        // Bare letters only: a column named by a number alone is no option's; nor are
        // numbered answers, images or ids (`answer_1`, `image_2`).
        if kind == 2 && !prefix.chars().any(|c| c.is_ascii_alphabetic()) {
            continue;
        }
        let stem = parts(prefix).pop().unwrap_or_default();
        if NOT_OPTIONS.contains(&stem.as_str()) {
            continue;
        }
        families.entry((prefix.to_string(), kind)).or_default().insert(index, f.name.clone());
    }
    let mut runs: Vec<Vec<String>> = Vec::new();
    for ((_, kind), members) in &families {
        let first = if *kind == 2 && !members.contains_key(&0) { 1 } else { 0 };
        let run: Vec<&String> = (first..).map_while(|i| members.get(&i)).collect();
        let filled: Vec<String> =
            run.iter().take_while(|c| s.field(c).is_some_and(scalar)).map(|c| c.to_string()).collect();
        if filled.len() < 2 {
            continue;
        }
        if let Some(after) =
            members.range(first + filled.len()..).map(|(_, c)| c).find(|c| s.field(c).is_some_and(|f| f.present > 0))
        {
            return OptionColumns::Unclear(format!(
                "the option columns run \"{}\" to \"{}\", then \"{after}\" after a gap: map the options by hand, in \
                 order, so that no option is left out or re-lettered",
                filled[0],
                filled[filled.len() - 1]
            ));
        }
        runs.push(filled);
    }
    match runs.len() {
        0 => OptionColumns::None,
        1 => OptionColumns::Run(runs.remove(0)),
        _ => {
            let named: Vec<String> = runs.iter().map(|r| format!("\"{}\" to \"{}\"", r[0], r[r.len() - 1])).collect();
            OptionColumns::Unclear(format!("{} could each be the options: choose one", named.join(" or ")))
        }
    }
}

/// The name a delimited file's first column gets when its header is empty.
const UNNAMED_FIRST: &str = "Unnamed: 0";

/// The proposed `id`: a field named like one with a distinct value in each of
/// the records read, else a line saying why none is proposed.
fn id_line<'s>(s: &'s Survey, taken: &[String]) -> (Line, Option<&'s FieldSurvey>) {
    let n = s.records;
    // An answer's position (`answer_index`, `correct_choice_idx`) is no id.
    // Nor is a field naming image files (`data_id = "00017.jpg"`): that is the image.
    let id_like = |f: &FieldSurvey| {
        let last = parts(&f.name).pop().unwrap_or_default();
        is_scalar(f)
            && (f.name == "id"
                || ["id", "idx", "index"].contains(&last.as_str())
                // `qid`, `pid`, `uid`: a letter and "id".
                || (last.len() == 3 && last.ends_with("id")))
            && !named_like_answer(f)
            && !f.image_like
    };
    // An id must be unique: a field named like one that repeats is not one.
    let unique = |f: &FieldSurvey| f.distinct == n && f.present == n;
    // An image's or video's id (`image_id`, `videoID`) names the picture, and is the
    // question's only where no other field is: one question per picture read so far.
    let names_media = |f: &FieldSurvey| {
        parts(&f.name)
            .first()
            .is_some_and(|p| ["image", "img", "picture", "photo", "video", "frame"].contains(&p.as_str()))
    };
    let why = format!("named like an id, with a distinct value in each of the {n} records read");
    let (mut line, found) =
        or_else(choose(s, taken, "id", &["id"], &|f| id_like(f) && unique(f) && !names_media(f), &why), || {
            Some(choose(s, taken, "id", &["id"], &|f| id_like(f) && unique(f), &why))
        });
    if found.is_some() || line.why.contains("choose one") {
        return (line, found);
    }
    let mut set = |value: &str, why: String| {
        line.value = Some(value.into());
        line.why = why;
    };
    if s.field(UNNAMED_FIRST).is_some_and(|f| unique(f) && is_scalar(f)) {
        set(
            UNNAMED_FIRST,
            format!(
                "the file's unnamed first column (where pandas writes its row index), with a distinct value in each \
                 of the {n} records read"
            ),
        );
    } else if s.keyed {
        set("_key", "the records are an object keyed by id: each record's key".into());
    } else if let Some((template, fields)) = composite_id(s, taken, &id_like) {
        set(
            &template,
            format!(
                "no one field named like an id is distinct; together {} are distinct in each of the {n} records read",
                listed(&fields, "and")
            ),
        );
    } else if let Some(f) = s.fields.iter().find(|f| !taken.contains(&f.name) && f.present > 0 && id_like(f)) {
        line.why = format!(
            "\"{}\" is named like an id but has {} distinct values in {n} records; map a unique field, or \"_row\" \
             (the row number, stable for a fixed file)",
            f.name, f.distinct
        );
    } else {
        set(
            "_row",
            "no field is named like an id: the row number (1 for the first record; stable while the file keeps its \
             order); map a field instead if one names the questions"
                .into(),
        );
    }
    (line, None)
}

/// An id made of several fields where no one is distinct (HallusionBench's `set_id`,
/// `figure_id`, `question_id` repeat across its categories): the fields named like ids,
/// with the fewest fields named like a type or category before them (`category`,
/// `subcategory`, in the file's order) that make the joined value distinct in every
/// record read; as a template in the file's field order (`"{category}-{set_id}-..."`).
fn composite_id<'s>(
    s: &'s Survey,
    taken: &[String],
    id_like: &dyn Fn(&FieldSurvey) -> bool,
) -> Option<(String, Vec<&'s FieldSurvey>)> {
    const KINDS: &[&str] = &["type", "category", "task", "subject", "skill", "domain", "topic"];
    let whole = |f: &&FieldSurvey| !taken.contains(&f.name) && f.present == s.records && is_scalar(f);
    let ids: Vec<&FieldSurvey> = s.fields.iter().filter(whole).filter(|f| id_like(f)).collect();
    let kinds: Vec<&FieldSurvey> = s
        .fields
        .iter()
        .filter(whole)
        .filter(|f| !id_like(f) && parts(&f.name).last().is_some_and(|p| KINDS.iter().any(|k| p.ends_with(k))))
        .collect();
    if (ids.len() < 2 && kinds.is_empty()) || s.read.len() < 2 {
        return None;
    }
    (0..=kinds.len()).find_map(|k| {
        let mut fields: Vec<&FieldSurvey> = kinds[..k].iter().chain(&ids).copied().collect();
        fields.sort_by_key(|f| s.fields.iter().position(|g| g.name == f.name));
        let template = fields.iter().map(|f| format!("{{{}}}", f.name)).collect::<Vec<_>>().join("-");
        let mut seen = std::collections::HashSet::new();
        let distinct = s.read.iter().all(|rec| {
            let key: Option<Vec<String>> = fields
                .iter()
                .map(|f| rec.value.get(&f.name).and_then(Raw::scalar_text).map(|v| v.trim().to_string()))
                .collect();
            key.is_some_and(|k| seen.insert(k.join("-")))
        });
        (fields.len() >= 2 && distinct).then_some((template, fields))
    })
}

/// How the proposed answer field names its option (`answer-kind`), read from
/// its values: letters, or integers from 0; integers from another start are a
/// choice left to the user. `None` when the values say nothing.
fn answer_kind_line(answer_field: Option<&FieldSurvey>) -> Option<Line> {
    match answer_field {
        Some(f) if f.name == "answer_index" => None,
        Some(f) if f.letters => Some(Line {
            key: "answer-kind",
            value: Some("letter".into()),
            why: format!("every \"{}\" read is one letter A-Z", f.name),
            columns: Vec::new(),
        }),
        Some(f) => match f.int_range {
            Some((0, _)) => Some(Line {
                key: "answer-kind",
                value: Some("index".into()),
                why: format!("\"{}\" holds integers from 0: a 0-based position", f.name),
                columns: Vec::new(),
            }),
            Some((lo, hi)) => Some(Line {
                key: "answer-kind",
                value: None,
                why: format!(
                    "\"{}\" holds integers {lo} to {hi}: \"index\" (0-based) or \"index1\" (1-based)? choose one",
                    f.name
                ),
                columns: Vec::new(),
            }),
            None => None,
        },
        None => None,
    }
}

/// `answer-kind = "text"` when every answer read is the text of exactly one of its
/// record's options (records without options, free-form questions, aside): said
/// outright, so an answer such as "2" among the options "0", "1", "2" is read as that
/// option's text, not as the position 2.
fn text_kind_line(s: &Survey, answer: &FieldSurvey, options: &Line) -> Option<Line> {
    let mut read = 0;
    for rec in &s.read {
        let Some(gold) = rec.value.get_path(&answer.name).and_then(Raw::scalar_text) else { continue };
        let Some(texts) = options_of(&rec.value, options).filter(|t| !t.is_empty()) else { continue };
        if texts.iter().filter(|t| **t == gold.trim()).count() != 1 {
            return None;
        }
        read += 1;
    }
    (read > 0).then(|| Line {
        key: "answer-kind",
        value: Some("text".into()),
        why: format!("each of the {read} \"{}\" read with options is the text of one of them", answer.name),
        columns: Vec::new(),
    })
}

/// `answer-kind = "index"` when every gold read with options is a whole number written
/// as text below its record's option count, and some gold is no option's text: the file
/// gives positions, so a gold "2" among the options "1", "2", "3" is the third option,
/// not the one whose text is "2".
fn position_kind_line(s: &Survey, answer: &FieldSurvey, options: &Line) -> Option<Line> {
    let (mut read, mut no_text) = (0, 0);
    for rec in &s.read {
        // Integers are read by their kind (`answer_kind_line`); this is for text.
        let Some(Raw::Str(gold)) = rec.value.get_path(&answer.name) else { continue };
        let Some(texts) = options_of(&rec.value, options).filter(|t| !t.is_empty()) else { continue };
        let gold = gold.trim();
        let position = gold.parse::<usize>().ok().filter(|_| gold.bytes().all(|b| b.is_ascii_digit()))?;
        if position >= texts.len() {
            return None;
        }
        read += 1;
        no_text += usize::from(!texts.iter().any(|t| t == gold));
    }
    (no_text > 0).then(|| Line {
        key: "answer-kind",
        value: Some("index".into()),
        why: format!(
            "each of the {read} \"{}\" read with options is a position from 0 below its option count, and {no_text} \
             of them are no option's text",
            answer.name
        ),
        columns: Vec::new(),
    })
}

/// A record's option texts, trimmed, as the proposed `options` line reads them: one
/// column per option up to the first empty or `nan` cell, or one field's option items
/// as ingest reads them ([`crate::ingest::options::option_items`]).
fn options_of(rec: &Raw, options: &Line) -> Option<Vec<String>> {
    let text = |v: &Raw| v.scalar_text().map(|t| t.trim().to_string());
    if !options.columns.is_empty() {
        let cells = options.columns.iter().map(|c| rec.get(c).and_then(text).unwrap_or_default());
        return Some(cells.take_while(|t| !t.is_empty() && t != "nan").collect());
    }
    let (items, _) = crate::ingest::options::option_items(rec.get(options.value.as_deref()?)?).ok()?;
    items.iter().map(text).collect()
}

/// `to` relative to the folder `from` (both made absolute first).
fn relative_to(from: &Path, to: &Path) -> PathBuf {
    let abs = |p: &Path| {
        let p = if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(p) };
        std::fs::canonicalize(&p).unwrap_or(p)
    };
    let (from, to) = (abs(from), abs(to));
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c.as_os_str());
    }
    if out.as_os_str().is_empty() { PathBuf::from(".") } else { out }
}

/// A TOML basic string: JSON's escapes are TOML's, but for DEL, which TOML
/// must see escaped.
fn toml_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string().replace('\u{7f}', "\\u007F")
}

/// `key = value   # why`, or the key commented out when there is no value.
fn entry(out: &mut String, key: &str, value: Option<&str>, why: &str) {
    let head = match value {
        Some(v) => format!("{key} = {}", toml_str(v)),
        None => format!("# {key} = \"...\""),
    };
    let _ = writeln!(out, "{head:<32} # {why}");
}

/// The benchmark's name: the file's stem, or for a Hub shard
/// (`<name>/data/test-00000-of-00001.parquet`) and a folder, the folder's name;
/// letters, digits and dashes.
pub fn benchmark_name(input: &Path) -> String {
    let abs = std::fs::canonicalize(input).unwrap_or_else(|_| input.to_path_buf());
    let named = if abs.is_dir() {
        abs.file_name()
    } else if abs.parent().and_then(Path::file_name).is_some_and(|d| d == "data") {
        abs.parent().and_then(Path::parent).and_then(Path::file_name)
    } else if abs.file_stem().and_then(|s| s.to_str()).is_some_and(names_a_split) {
        // `my-bench/test.jsonl`: the file names the split, its folder the benchmark.
        abs.parent().and_then(Path::file_name).or(abs.file_stem())
    } else {
        abs.file_stem()
    };
    let name: String = named
        .and_then(|s| s.to_str())
        .unwrap_or("benchmark")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect();
    let name = name.trim_matches('-').to_string();
    if name.is_empty() { "benchmark".to_string() } else { name }
}

/// Whether a file stem names a split (`test`, `validation-00000-of-00001`,
/// `dev_v2`) rather than a benchmark.
fn names_a_split(stem: &str) -> bool {
    let first = stem.split(['-', '_', '.']).next().unwrap_or_default().to_ascii_lowercase();
    ["test", "testmini", "train", "validation", "val", "dev", "eval"].contains(&first.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A survey of text fields, each with a value in every record (a name ending in `!`:
    /// in none).
    fn fields(names: &[&str]) -> Survey {
        let fields = names
            .iter()
            .map(|n| FieldSurvey {
                name: n.trim_end_matches('!').to_string(),
                present: if n.ends_with('!') { 0 } else { 3 },
                kinds: ["a string"].into_iter().collect(),
                distinct: 3,
                ..Default::default()
            })
            .collect();
        Survey { records: 3, fields, ..Survey::default() }
    }

    fn run(names: &[&str]) -> Result<Vec<String>, String> {
        match option_columns(&fields(names), &[]) {
            OptionColumns::Run(c) => Ok(c),
            OptionColumns::Unclear(why) => Err(why),
            OptionColumns::None => Ok(Vec::new()),
        }
    }

    /// One column per option, in the layouts sheets and exports use; what is not one.
    #[test]
    fn option_columns_are_found_in_order_and_gaps_are_refused() {
        let v = |c: &[&str]| Ok::<Vec<String>, String>(c.iter().map(|c| c.to_string()).collect());
        assert_eq!(run(&["index", "question", "A", "B", "C", "D", "answer"]), v(&["A", "B", "C", "D"]));
        assert_eq!(run(&["Option B", "Option A", "Option C"]), v(&["Option A", "Option B", "Option C"]));
        assert_eq!(run(&["choice1", "choice2", "choice3"]), v(&["choice1", "choice2", "choice3"]));
        assert_eq!(run(&["option_0", "option_1"]), v(&["option_0", "option_1"]));
        assert_eq!(run(&["optionA", "optionB"]), v(&["optionA", "optionB"]));
        assert_eq!(run(&["a", "b", "c"]), v(&["a", "b", "c"]));
        // An option column no record fills ends the run; a filled one after a gap is refused.
        assert_eq!(run(&["A", "B", "C!"]), v(&["A", "B"]));
        let gap = run(&["A", "B", "D"]).unwrap_err();
        assert!(gap.contains("\"A\" to \"B\", then \"D\" after a gap"), "{gap}");
        let two = run(&["A", "B", "choice1", "choice2"]).unwrap_err();
        assert!(two.contains("could each be the options: choose one"), "{two}");
        // Not options: numbered answers, images or ids, lone columns, numbers alone,
        // names that only end in a letter.
        for names in [
            &["answer_1", "answer_2"][..],
            &["image_1", "image_2"],
            &["A", "question"],
            &["1", "2", "3"],
            &["ID", "QA"],
            &["xa", "xb"],
        ] {
            assert_eq!(run(names), v(&[]), "{names:?}");
        }
    }

    /// Answers named with how the gold is given; ids that are unique, before those named so.
    #[test]
    fn answers_are_named_with_their_kind_and_ids_must_be_unique() {
        let named = |n: &str| named_like_answer(&FieldSurvey { name: n.into(), ..Default::default() });
        for yes in [
            "answer",
            "gt_answer",
            "answerKey",
            "correct_choice_idx",
            "answer_letter",
            "gold_label",
            "Label",
            "Correct Answer",
        ] {
            assert!(named(yes), "{yes}");
        }
        for no in ["answer_type", "gt_answer_details", "direct_answers", "question", "image_id", "answers_count"] {
            assert!(!named(no), "{no}");
        }
        assert_eq!(parts("answerKey"), ["answer", "key"]);
        assert_eq!(parts("HTTPStatus_code"), ["httpstatus", "code"]);
        // A-OKVQA's layout: two fields named like ids repeat, one does not.
        let mut survey = fields(&["image_id", "question_id", "correct_choice_idx"]);
        survey.fields[0].distinct = 2;
        survey.fields[2].distinct = 2;
        survey.records = 3;
        survey.fields[1].distinct = 3;
        let (line, _) = id_line(&survey, &[]);
        assert_eq!(line.value.as_deref(), Some("question_id"), "{line:?}");
        survey.fields[1].distinct = 2;
        let (line, _) = id_line(&survey, &[]);
        assert_eq!(line.value, None);
        assert!(line.why.contains("\"image_id\" is named like an id but has 2 distinct values"), "{line:?}");
        // An answer's position is not offered as an id, unique or not: with no field
        // named like an id, the row number is.
        let mut survey = fields(&["answer_index", "question"]);
        survey.fields[0].distinct = 2;
        let (line, _) = id_line(&survey, &[]);
        assert!(
            line.value.as_deref() == Some("_row") && line.why.starts_with("no field is named like an id"),
            "{line:?}"
        );
    }

    /// A file named for its split takes its folder's name; others their own.
    #[test]
    fn a_benchmark_is_named_by_its_folder_when_its_file_names_a_split() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("My Bench");
        std::fs::create_dir_all(dir.join("data")).unwrap();
        for f in ["test.jsonl", "validation-00000-of-00001.parquet", "questions.json", "data/x.parquet"] {
            std::fs::write(dir.join(f), "").unwrap();
        }
        assert_eq!(benchmark_name(&dir.join("test.jsonl")), "my-bench");
        assert_eq!(benchmark_name(&dir.join("validation-00000-of-00001.parquet")), "my-bench");
        assert_eq!(benchmark_name(&dir.join("questions.json")), "questions");
        assert_eq!(benchmark_name(&dir.join("data/x.parquet")), "my-bench");
    }
}
