//! `blindspot init FILE [-o pipeline.toml]`: a first pipeline for a benchmark of
//! one's own. It reads the file's first records, proposes the field mapping
//! (each canonical field with the source field it chose and why), writes every
//! section a release uses with the datasheet questions as comments, and prints
//! the next command. Nothing is guessed silently: a canonical field two source
//! fields could be is left commented, naming both.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use super::outputs::{self, Output};
use crate::error::{Error, Location, Problem, Result, display_path};
use crate::ingest::survey::{FieldSurvey, Survey, survey};
use crate::io::fs::{atomic_write, write_bytes};

/// Records read to propose the mapping.
const SURVEYED: usize = 1000;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The benchmark: a data file (JSON, JSON lines, CSV, TSV, spreadsheet,
    /// Parquet) or a Hugging Face folder.
    pub input: PathBuf,
    /// The pipeline file to write (default: `<file name>.toml` in the working folder).
    #[arg(short = 'o', long = "out", visible_alias = "output")]
    pub output: Option<PathBuf>,
    /// Map a source field yourself (`--field id=question_id`), as [ingest.fields]
    /// does; init proposes the rest.
    #[arg(long = "field", value_name = "KEY=SOURCE")]
    pub fields: Vec<String>,
    /// The folder the file's image paths are relative to (default: the file's own folder).
    #[arg(long, value_name = "DIR")]
    pub images: Option<PathBuf>,
    /// Overwrite the pipeline file when it exists.
    #[arg(long)]
    pub force: bool,
}

/// One canonical field's line: the source chosen and why, or why none was.
struct Line {
    key: &'static str,
    value: Option<String>,
    why: String,
}

fn parts(name: &str) -> Vec<String> {
    name.split(['_', '-', '.', ' ']).filter(|p| !p.is_empty()).map(str::to_ascii_lowercase).collect()
}

fn last_part_in(f: &FieldSurvey, words: &[&str]) -> bool {
    parts(&f.name).last().is_some_and(|p| words.contains(&p.as_str()))
}

fn is_scalar(f: &FieldSurvey) -> bool {
    !f.kinds.is_empty() && f.kinds.iter().all(|k| matches!(*k, "a string" | "an integer"))
}

fn is_text(f: &FieldSurvey) -> bool {
    f.kinds.len() == 1 && f.kinds.contains("a string")
}

fn quoted(names: &[&FieldSurvey]) -> String {
    let q: Vec<String> = names.iter().map(|f| format!("\"{}\"", f.name)).collect();
    match q.len() {
        0 => String::new(),
        1 => q[0].clone(),
        _ => format!("{} or {}", q[..q.len() - 1].join(", "), q[q.len() - 1]),
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
        let line = Line { key, value: Some(f.name.clone()), why: format!("the canonical name; {why_like}") };
        return (line, Some(f));
    }
    let found: Vec<&FieldSurvey> = s.fields.iter().filter(free).filter(|f| like(f)).collect();
    match found[..] {
        [f] => (Line { key, value: Some(f.name.clone()), why: why_like.to_string() }, Some(f)),
        [] => (Line { key, value: None, why: format!("no field is {why_like}") }, None),
        _ => (
            Line {
                key,
                value: None,
                why: format!("{} could each be the {key} ({why_like}): choose one", quoted(&found)),
            },
            None,
        ),
    }
}

/// The proposed `[ingest.fields]`, in the order a pipeline lists them; the
/// fields `--field` maps are taken as given.
fn propose(s: &Survey, given: &crate::spec::wire::FieldsWire, beside: &Path) -> (Vec<Line>, Option<String>) {
    let n = s.records;
    let mut taken: Vec<String> = Vec::new();
    let mut lines = Vec::new();
    let take = |line: (Line, Option<&FieldSurvey>), given: Option<&String>, taken: &mut Vec<String>| {
        let mut line = line.0;
        if let Some(g) = given {
            line.value = Some(g.clone());
            line.why = "given with --field".into();
        }
        if let Some(v) = &line.value {
            taken.push(v.clone());
        }
        line
    };
    let id = choose(
        s,
        &taken,
        "id",
        &["id"],
        &|f| is_scalar(f) && (f.name == "id" || last_part_in(f, &["id", "idx", "index", "qid", "uid"])),
        &format!("named like an id, with a distinct value in each of the {n} records read"),
    );
    // An id must be unique: a field named like one that repeats is not one.
    let id = match id {
        (_, Some(f)) if f.distinct < n || f.present < n => (
            Line {
                key: "id",
                value: None,
                why: format!(
                    "\"{}\" is named like an id but has {} distinct values in {n} records; map a unique field, or \
                     \"_row\" (the row number, stable for a fixed file)",
                    f.name, f.distinct
                ),
            },
            None,
        ),
        (mut line, None) if line.value.is_none() && !line.why.contains("choose one") => {
            line.why = "no field named like an id has a distinct value in each record; map one, or \"_row\" (the \
                        row number, stable for a fixed file)"
                .to_string();
            (line, None)
        }
        other => other,
    };
    lines.push(take(id, given.id.as_ref(), &mut taken));
    let question = choose(
        s,
        &taken,
        "question",
        &["question"],
        &|f| is_text(f) && last_part_in(f, &["question", "prompt", "query", "instruction"]),
        "text named like a question",
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
    let options = choose(
        s,
        &taken,
        "options",
        &["options", "choices"],
        &|f| f.list_of_text && !f.image_like,
        "a list of texts in every record that has it",
    );
    let options_given = match &given.options {
        Some(crate::spec::wire::OptionsWire::One(o)) => Some(o.clone()),
        _ => None,
    };
    let options = take(options, options_given.as_ref(), &mut taken);
    let has_options = options.value.is_some();
    lines.push(options);
    let answer = choose(
        s,
        &taken,
        "answer",
        &["answer_index", "answer"],
        &|f| is_scalar(f) && last_part_in(f, &["answer", "label", "gold", "target", "solution", "correct"]),
        "named like an answer",
    );
    let answer_field = answer.1;
    lines.push(take(answer, given.answer.as_ref(), &mut taken));
    // How the gold names its option, from the column's values.
    if has_options && given.answer.is_none() {
        let kind = match answer_field {
            Some(f) if f.name == "answer_index" => None,
            Some(f) if f.letters => Some(Line {
                key: "answer-kind",
                value: Some("letter".into()),
                why: format!("every \"{}\" read is one letter A-Z", f.name),
            }),
            Some(f) => match f.int_range {
                Some((0, _)) => Some(Line {
                    key: "answer-kind",
                    value: Some("index".into()),
                    why: format!("\"{}\" holds integers from 0: a 0-based position", f.name),
                }),
                Some((lo, hi)) => Some(Line {
                    key: "answer-kind",
                    value: None,
                    why: format!(
                        "\"{}\" holds integers {lo} to {hi}: \"index\" (0-based) or \"index1\" (1-based)? choose one",
                        f.name
                    ),
                }),
                None => None,
            },
            None => None,
        };
        lines.extend(kind);
    }
    let qtype = choose(
        s,
        &taken,
        "question-type",
        &["question_type"],
        &|f| {
            is_text(f)
                && f.distinct >= 1
                && f.distinct * 2 <= f.present.max(2)
                && last_part_in(f, &["type", "category", "task", "subject", "skill", "subtask", "domain", "topic"])
        },
        "text named like a type or category, with few distinct values",
    );
    lines.push(take(qtype, given.question_type.as_ref(), &mut taken));
    let images = choose(
        s,
        &taken,
        "images",
        &["images", "image"],
        &|f| f.image_like,
        "images (a {bytes, path} struct, bytes, or image file names) in every record that has it",
    );
    let image_field = images.1.cloned();
    let images_given = match &given.images {
        Some(crate::spec::wire::OneOrMany::One(o)) => Some(o.clone()),
        _ => None,
    };
    lines.push(take(images, images_given.as_ref(), &mut taken));
    // Image files named by path: found beside the data file (Some("")), or not
    // (Some(the first path)); None when the images are not named by path.
    let folder_line = image_field.filter(|f| f.kinds.contains("a string")).map(|f| {
        let first = f.examples.first().cloned().unwrap_or_default();
        if beside.join(&first).is_file() { String::new() } else { first }
    });
    (lines, folder_line)
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
fn benchmark_name(input: &Path) -> String {
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

pub fn run(args: &Args) -> Result<()> {
    let name = benchmark_name(&args.input);
    let out = args.output.clone().unwrap_or_else(|| PathBuf::from(format!("{name}.toml")));
    if out.exists() && !args.force {
        return Err(Error::one(
            Problem::new(Location::file(&out), "the pipeline file exists")
                .help("choose another with -o, or pass --force to overwrite it"),
        ));
    }
    let given = if args.fields.is_empty() {
        crate::spec::wire::FieldsWire::default()
    } else {
        crate::spec::plan::fields_from_flags(&args.fields)?
    };
    let plan = crate::spec::plan::bare_input_plan(&args.input, &args.fields, args.images.as_deref())?;
    outputs::check(&outputs::plan_inputs(&plan), &[Output::file("--out", &out)])?;
    let s = survey(&plan, SURVEYED)?;
    let beside = plan.images_dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let (lines, folder) = propose(&s, &given, &beside);

    let out_dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let rel = |p: &Path| relative_to(&out_dir, p).to_string_lossy().replace('\\', "/");
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# A pipeline for {}, proposed by `blindspot init` from its first {} records.\n\
         # Check each line: a field init could not choose is commented out, with why.\n\
         # Then answer the datasheet questions at the end, and run\n\
         #   blindspot validate {}\n\
         #   blindspot build {}\n",
        display_path(&args.input),
        s.records,
        display_path(&out),
        display_path(&out)
    );
    t.push_str("[dataset]\n");
    entry(&mut t, "name", Some(&name), "the release folder: releases/<name>/<version>/");
    entry(&mut t, "version", Some("0.1.0"), "MAJOR.MINOR.PATCH; a built version is never overwritten");
    entry(&mut t, "license", Some("other"), "the data's SPDX licence id, e.g. \"CC-BY-4.0\"");
    t.push_str("# description = \"...\"\n# homepage = \"https://...\"\n# citation = \"@article{...}\"\n");
    let _ = writeln!(t, "{:<32} # every random choice derives from (seed, stage, id)", "seed = 42");
    t.push_str("\n[ingest]\n");
    entry(&mut t, "path", Some(&rel(&args.input)), "relative to this file");
    let images_dir = match (&args.images, &folder) {
        (Some(d), _) => Some((rel(d), "the folder the image paths are relative to (--images)".to_string())),
        (None, Some(first)) if first.is_empty() => {
            Some((rel(&beside), "image paths are relative to the data file's folder".to_string()))
        }
        _ => None,
    };
    match (&images_dir, &folder) {
        (Some((dir, why)), _) => entry(&mut t, "images", Some(dir), why),
        (None, Some(first)) => entry(
            &mut t,
            "images",
            None,
            &format!("the image \"{first}\" is not beside the data file: give the folder its path is relative to"),
        ),
        (None, None) => {}
    }
    entry(&mut t, "split", Some(&plan.split), "written into every sample");
    t.push_str("\n[ingest.fields]                  # source field -> canonical field\n");
    for l in &lines {
        entry(&mut t, l.key, l.value.as_deref(), &l.why);
    }
    let chosen: Vec<&str> = lines.iter().filter_map(|l| l.value.as_deref()).collect();
    let rest: Vec<String> =
        s.fields.iter().filter(|f| !chosen.contains(&f.name.as_str())).map(|f| format!("\"{}\"", f.name)).collect();
    if !rest.is_empty() {
        let _ = writeln!(t, "# meta = [{}]   # default: every unmapped field is kept in meta", rest.join(", "));
    }
    let has_images = lines.iter().any(|l| l.key == "images" && l.value.is_some());
    let has_options = lines.iter().any(|l| l.key == "options" && l.value.is_some());
    t.push_str(
        "\n# TsT-RF: how much of the benchmark a model answers without the image\n\
         # (k-fold random forests on non-visual features).\n[diagnose]\n",
    );
    let _ = writeln!(t, "{:<32} # k-fold cross-validation", "folds = 5");
    if has_images {
        let _ = writeln!(t, "{:<32} # questions about one image share a fold", "group-by = \"image\"");
    } else {
        entry(&mut t, "group-by", None, "\"image\", \"question\" or \"meta:FIELD\": questions that must share a fold");
    }
    t.push_str(
        "\n# Iterative Bias Pruning: remove what a blind model answers, only where blind\n\
         # accuracy is above its label-permutation null.\n[prune]\n",
    );
    entry(&mut t, "method", Some("ibp"), "or \"aflite\", \"random\"");
    let _ = writeln!(t, "{:<32} # questions to remove at most", "budget = \"10%\"");
    let _ = writeln!(t, "{:<32} # fewest questions a question type keeps", "floor = 10");
    t.push_str("\n# Stress-test variants, one release config per kind that applies.\n[variants]\n");
    let mut kinds = vec!["no_image", "white_image", "mirage", "guess", "phantom", "phantom0"];
    if has_options {
        kinds.extend(["option_shuffle", "unknown_option", "gold_removed"]);
    }
    let kinds: Vec<String> = kinds.iter().map(|k| format!("\"{k}\"")).collect();
    let _ = writeln!(t, "kinds = [{}]", kinds.join(", "));
    t.push_str("\n[release]\n");
    let _ =
        writeln!(t, "{:<32} # image bytes inside the Parquet: the release is self-contained", "embed-images = true");
    t.push_str("\n# The datasheet questions only the publisher can answer (Gebru et al.); the card\n# marks each one left unanswered.\n[datasheet]\n");
    for q in crate::spec::datasheet::QUESTIONS.iter().filter(|q| !q.computed) {
        let _ = writeln!(t, "# {} = \"\"\"...\"\"\"   # {}", q.id, q.text);
    }

    atomic_write(&out, |tmp| write_bytes(tmp, t.as_bytes()))?;
    // Grouping folds by image needs, in every diagnosed group, at least as
    // many distinct images as folds: the pipeline is read and its questions
    // checked by the rule diagnose applies, and where it fails the key is left
    // commented with diagnose's own reason.
    let group_line = format!("{:<32} # questions about one image share a fold\n", "group-by = \"image\"");
    if t.contains(&group_line) {
        let p = crate::spec::Pipeline::load(&out)?;
        let ingested = crate::ingest::ingest(&p.ingest)?;
        if let Err(e) = p.diagnose.check_fold_groups(&ingested.samples, &Location::file(&out)) {
            let why = match e {
                // Each message starts with the setting ("group-by = \"image\": ..."), written here already.
                Error::Invalid(ps) => ps
                    .iter()
                    .map(|p| p.message.split_once(": ").map_or(p.message.as_str(), |m| m.1))
                    .collect::<Vec<_>>()
                    .join("; "),
                other => return Err(other),
            };
            t = t.replace(&group_line, &format!("# group-by = \"image\"             # not set: {why}\n"));
            atomic_write(&out, |tmp| write_bytes(tmp, t.as_bytes()))?;
            super::say(&format!("  group-by          not set: {why}"));
        }
    }
    for l in &lines {
        let shown = match &l.value {
            Some(v) => format!("{:<14} <- \"{v}\" ({})", l.key, l.why),
            None => format!("{:<14}    not mapped: {}", l.key, l.why),
        };
        super::say(&format!("  {shown}"));
    }
    let open: Vec<&str> =
        lines.iter().filter(|l| l.value.is_none() && l.why.contains("choose")).map(|l| l.key).collect();
    super::say(&format!(
        "{}: a pipeline for {} ({} records read, {} fields){}",
        display_path(&out),
        display_path(&args.input),
        s.records,
        s.fields.len(),
        if open.is_empty() { String::new() } else { format!("; choose: {}", open.join(", ")) }
    ));
    super::say(&format!("next: blindspot validate {} && blindspot build {}", display_path(&out), display_path(&out)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
