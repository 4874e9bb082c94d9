//! Outside bias scores: the per-question held-out probability of the gold answer
//! from a blind model blindspot does not train itself (a fine-tuned text model,
//! the TsT paper's TsT-LLM), brought into a diagnosis beside TsT-RF's s(x).
//!
//! ```text
//! diagnose --export-folds DIR ─▶ folds.json + fold-K/{train,heldout}.jsonl  (the forest's own folds)
//!   runner: train on fold-K/train.jsonl, score fold-K/heldout.jsonl ─▶ scores.jsonl
//! diagnose --scores scores.jsonl ─▶ every row checked against the same assignment
//!   ─▶ s(x) = max or mean (forest, outside) per question ─▶ the report, IBP's ranking
//! ```
//! The folds are those of the first repeat (seed `seed`), the assignment s(x) of
//! a one-repeat run comes from entirely. A score is accepted only from the fold
//! that holds its question out: a score from any other fold comes from a model
//! that trained on the question's own answer.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::{Combine, DiagnoseConfig, Diagnosis, assign_folds, group_samples};
use crate::error::{Error, Location, Problem, Result};
use crate::sample::{AnswerFormat, Sample, id_cmp};

/// The `format` of `folds.json`.
pub const FOLDS_FORMAT: &str = "blindspot-folds/1";

/// Where a run reads outside scores, as the settings name them (resolved once
/// the questions are known, by [`OutsideScores::load`]).
#[derive(Debug, Clone)]
pub struct OutsideSource {
    pub path: PathBuf,
    /// The path as the user wrote it (what reports show: a release's bytes do not
    /// depend on the folder it was built from).
    pub written: String,
    pub combine: Combine,
}

/// One question's place in the assignment.
#[derive(Debug, Clone)]
pub struct Assigned<'a> {
    pub sample: &'a Sample,
    pub question_type: Option<String>,
    pub format: AnswerFormat,
    pub fold: usize,
}

/// The fold of every question, as TsT-RF's first repeat assigns it: per model
/// group (question type × answer format, small types pooled), seeded with `seed`.
#[derive(Debug, Clone)]
pub struct Assignment<'a> {
    /// Sorted by id (canonical order).
    pub rows: Vec<Assigned<'a>>,
    /// Per group (in diagnose's group order): its name and its number of folds.
    pub groups: Vec<(Option<String>, AnswerFormat, usize)>,
    /// sha256 of the lines `[id, question_type, format, fold]` (compact JSON),
    /// one per question sorted by the id's bytes, each ending in a newline.
    pub hash: String,
}

/// A group's display name: `<question type>/<format>`.
pub fn group_name(question_type: Option<&str>, format: AnswerFormat) -> String {
    format!("{}/{}", question_type.unwrap_or("(no type)"), format.as_str())
}

impl<'a> Assignment<'a> {
    pub fn of(samples: &'a [Sample], cfg: &DiagnoseConfig) -> Assignment<'a> {
        let mut rows = Vec::with_capacity(samples.len());
        let mut groups = Vec::new();
        for ((qtype, format), group) in group_samples(samples, cfg.min_group) {
            let fold_of = assign_folds(&group, format, 0, cfg);
            let k = fold_of.iter().copied().max().map_or(0, |m| m + 1);
            for (s, fold) in group.iter().zip(&fold_of) {
                rows.push(Assigned { sample: s, question_type: qtype.clone(), format, fold: *fold });
            }
            groups.push((qtype, format, k));
        }
        let mut by_bytes: Vec<&Assigned<'_>> = rows.iter().collect();
        by_bytes.sort_by(|a, b| a.sample.id.as_bytes().cmp(b.sample.id.as_bytes()));
        let mut h = Sha256::new();
        for r in by_bytes {
            let line = serde_json::json!([r.sample.id, r.question_type, r.format.as_str(), r.fold]);
            h.update(line.to_string().as_bytes());
            h.update(b"\n");
        }
        rows.sort_by(|a, b| id_cmp(&a.sample.id, &b.sample.id));
        Assignment { rows, groups, hash: hex::encode(h.finalize()) }
    }

    /// The most folds any group has: the `fold-K` folders written.
    pub fn max_folds(&self) -> usize {
        self.groups.iter().map(|g| g.2).max().unwrap_or(0)
    }
}

/// `folds.json`.
#[derive(Debug, serde::Serialize)]
struct FoldsFile<'a> {
    format: &'static str,
    /// Folds asked for; a group smaller than that has fewer (its `folds`).
    k: usize,
    seed: u64,
    /// The repeat whose assignment this is (seed + repeat).
    repeat: usize,
    group_by: Option<String>,
    model_per: &'static str,
    min_group: usize,
    n: usize,
    assignment_hash: &'a str,
    groups: Vec<FoldsGroup>,
}

#[derive(Debug, serde::Serialize)]
struct FoldsGroup {
    name: String,
    question_type: Option<String>,
    answer_format: &'static str,
    folds: usize,
    /// id → fold, ids in byte order.
    fold_of: BTreeMap<String, usize>,
}

/// One row of `fold-K/train.jsonl` or `fold-K/heldout.jsonl`
/// (`schemas/fold-row.schema.json`). Held-out rows carry the gold as training
/// rows do: a scorer needs it to give the gold's probability and its own accuracy.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct FoldRow<'a> {
    pub id: &'a str,
    /// The model group: `<question type>/<answer format>` (`(no type)` without a type).
    pub group: String,
    /// `multiple_choice`, `yes_no`, `numeric` or `open`.
    pub answer_format: &'static str,
    /// The question's fold (for a held-out row: K).
    pub fold: usize,
    /// The text a text-only model is shown: context, question, lettered options
    /// and the answer instruction, as blindspot's exports render it.
    pub prompt: String,
    pub question: &'a str,
    pub options: &'a [String],
    /// Multiple choice: the gold option's letter; otherwise the gold answer text.
    pub gold: String,
    /// Multiple choice: the gold option's position (0 = A).
    pub gold_index: Option<i32>,
    /// The assignment's hash, as in `folds.json`: copy it into each score line.
    pub assignment_hash: &'a str,
}

/// One line of a scores file (`schemas/outside-scores.schema.json`). Read field
/// by field, so that each problem names its field and line.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ScoreLine {
    /// The question's id, as in the fold files.
    pub id: String,
    /// The held-out probability of the gold answer.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub score: f64,
    /// The fold whose model scored the question: the one holding it out.
    pub fold: usize,
    /// The `assignment_hash` of the fold files the scorer read.
    pub assignment_hash: String,
}

/// Writes `folds.json` and `fold-K/{train,heldout}.jsonl` for every fold K into
/// `dir`; `prompt` renders a question as a text-only model sees it. Returns the
/// number of folds written.
pub fn write_folds(
    dir: &Path,
    a: &Assignment<'_>,
    cfg: &DiagnoseConfig,
    prompt: &dyn Fn(&Sample) -> String,
) -> Result<usize> {
    let group_by = cfg.group_by.as_ref().map(super::GroupBy::name);
    let mut groups: Vec<FoldsGroup> = a
        .groups
        .iter()
        .map(|(t, f, k)| FoldsGroup {
            name: group_name(t.as_deref(), *f),
            question_type: t.clone(),
            answer_format: f.as_str(),
            folds: *k,
            fold_of: BTreeMap::new(),
        })
        .collect();
    let index: HashMap<(Option<&str>, AnswerFormat), usize> =
        a.groups.iter().enumerate().map(|(i, (t, f, _))| ((t.as_deref(), *f), i)).collect();
    for r in &a.rows {
        groups[index[&(r.question_type.as_deref(), r.format)]].fold_of.insert(r.sample.id.clone(), r.fold);
    }
    let file = FoldsFile {
        format: FOLDS_FORMAT,
        k: cfg.folds,
        seed: cfg.seed,
        repeat: 0,
        group_by,
        model_per: "question type x answer format",
        min_group: cfg.min_group,
        n: a.rows.len(),
        assignment_hash: &a.hash,
        groups,
    };
    crate::io::fs::write_json(&dir.join("folds.json"), &file)?;
    let rendered: Vec<String> = a.rows.iter().map(|r| prompt(r.sample)).collect();
    for k in 0..a.max_folds() {
        let fold_dir = dir.join(format!("fold-{k}"));
        std::fs::create_dir_all(&fold_dir).map_err(|e| Error::io(&fold_dir, e))?;
        for (name, heldout) in [("train.jsonl", false), ("heldout.jsonl", true)] {
            let path = fold_dir.join(name);
            let f = std::fs::File::create(&path).map_err(|e| Error::io(&path, e))?;
            let mut w = std::io::BufWriter::new(f);
            for (r, text) in a.rows.iter().zip(&rendered).filter(|(r, _)| (r.fold == k) == heldout) {
                let s = r.sample;
                let row = FoldRow {
                    id: &s.id,
                    group: group_name(r.question_type.as_deref(), r.format),
                    answer_format: r.format.as_str(),
                    fold: r.fold,
                    prompt: text.clone(),
                    question: &s.question,
                    options: &s.options,
                    gold: match (r.format, s.answer_index) {
                        (AnswerFormat::MultipleChoice, Some(i)) => crate::sample::option_letter(i.max(0) as usize),
                        _ => s.answer.clone(),
                    },
                    gold_index: (r.format == AnswerFormat::MultipleChoice).then_some(s.answer_index).flatten(),
                    assignment_hash: &a.hash,
                };
                serde_json::to_writer(&mut w, &row).map_err(|e| Error::Bug(format!("fold row: {e}")))?;
                w.write_all(b"\n").map_err(|e| Error::io(&path, e))?;
            }
            w.flush().map_err(|e| Error::io(&path, e))?;
        }
    }
    Ok(a.max_folds())
}

/// Outside scores checked against the assignment of the questions diagnosed,
/// with what they measure on their own.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OutsideScores {
    /// The file as the user wrote it.
    #[serde(skip)]
    pub shown: String,
    pub sha256: String,
    pub combine: Combine,
    /// Per id: the held-out probability of the gold answer.
    #[serde(skip)]
    pub scores: HashMap<String, f64>,
    #[serde(skip)]
    pub figures: OutsideFigures,
}

/// The outside scores on their own, over every question diagnosed.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct OutsideFigures {
    pub n: usize,
    /// Mean of the scores: the mean held-out probability of the gold answer.
    pub mean_gold_probability: f64,
    /// The same for a model that knows only each group's answer distribution in
    /// the training folds: the share of training questions whose gold is this
    /// question's gold (its answer, yes/no, or option position).
    pub answer_prior_mean_gold_probability: f64,
    /// 95% bootstrap interval of the mean paired difference (score − answer prior).
    pub difference_ci95: [f64; 2],
    /// Questions whose accuracy follows from the gold's probability alone: yes/no
    /// and two-option multiple choice (right when the gold's probability is above
    /// 0.5, half right at exactly 0.5).
    pub accuracy_n: usize,
    /// Their accuracy (none when no question is of that kind).
    pub accuracy: Option<f64>,
    /// Per answer format: n and the mean held-out probability of the gold.
    pub by_format: Vec<FormatMean>,
}

/// The outside scores of one answer format.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct FormatMean {
    pub format: String,
    pub n: usize,
    pub mean_gold_probability: f64,
}

/// The field a score row names, with its value, or the problem it has.
fn field<'v>(
    row: &'v serde_json::Map<String, serde_json::Value>,
    name: &str,
    at: &Location,
) -> std::result::Result<&'v serde_json::Value, Problem> {
    row.get(name).ok_or_else(|| {
        Problem::new(at.clone(), format!("no \"{name}\" field"))
            .field(name)
            .help("each line is {\"id\": ..., \"score\": ..., \"fold\": ..., \"assignment_hash\": ...}")
    })
}

impl OutsideScores {
    /// Reads `src.path` and checks every line against the assignment of `samples`
    /// under `cfg`: a score in [0, 1], a known id scored once, from the fold that
    /// holds it out, under the same assignment hash, and every question scored.
    /// Every problem is reported at once.
    pub fn load(src: &OutsideSource, samples: &[Sample], cfg: &DiagnoseConfig) -> Result<OutsideScores> {
        let path = &src.path;
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let text = String::from_utf8(bytes.clone()).map_err(|e| {
            Error::one(Problem::new(Location::file(path), format!("not UTF-8 text: {e}")).help("write JSON lines"))
        })?;
        let a = Assignment::of(samples, cfg);
        let fold_of: HashMap<&str, usize> = a.rows.iter().map(|r| (r.sample.id.as_str(), r.fold)).collect();
        let mut problems = crate::error::Capped::default();
        let mut scores: HashMap<String, f64> = HashMap::new();
        let mut first_line: HashMap<String, usize> = HashMap::new();
        let mut mentioned: std::collections::HashSet<String> = std::collections::HashSet::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let at = Location::line(path, n as u64);
            let (named, checked) = check_line(line, &at, &a.hash, &fold_of);
            // A question named on a refused line is not also reported as unscored.
            if let Some(id) = named {
                mentioned.insert(id);
            }
            match checked {
                Ok((id, p)) => {
                    if let Some(first) = first_line.get(&id) {
                        problems.push(
                            Problem::new(at, format!("\"{id}\" is scored twice (first on line {first})"))
                                .field("id")
                                .help("keep one score per question: each question is held out in exactly one fold"),
                        );
                        continue;
                    }
                    first_line.insert(id.clone(), n);
                    scores.insert(id, p);
                }
                Err(p) => problems.extend(p),
            }
        }
        let missing: Vec<&str> =
            a.rows.iter().map(|r| r.sample.id.as_str()).filter(|id| !mentioned.contains(*id)).collect();
        if !missing.is_empty() {
            let shown: Vec<String> = missing.iter().take(5).map(|id| format!("\"{id}\"")).collect();
            problems.push(
                Problem::new(
                    Location::file(path),
                    format!(
                        "{} of the {} questions diagnosed have no score (first: {}{})",
                        missing.len(),
                        a.rows.len(),
                        shown.join(", "),
                        if missing.len() > shown.len() { ", ..." } else { "" }
                    ),
                )
                .field("id")
                .help(
                    "score every row of every fold-K/heldout.jsonl: a verdict and a ranking on the scored part only \
                     would mix questions scored by two models with questions scored by one",
                ),
            );
        }
        if !problems.is_empty() {
            return Err(Error::Invalid(problems.into_vec()));
        }
        let figures = figures(&a, &scores, cfg);
        Ok(OutsideScores {
            shown: src.written.clone(),
            sha256: hex::encode(Sha256::digest(&bytes)),
            combine: src.combine,
            scores,
            figures,
        })
    }
}

trait ExtendCapped {
    fn extend(&mut self, p: Vec<Problem>);
}

impl ExtendCapped for crate::error::Capped {
    fn extend(&mut self, ps: Vec<Problem>) {
        for p in ps {
            self.push(p);
        }
    }
}

/// One line of a scores file: the id it names (when it names one), and its id
/// and score or its problems.
#[allow(clippy::type_complexity)]
fn check_line(
    line: &str,
    at: &Location,
    hash: &str,
    fold_of: &HashMap<&str, usize>,
) -> (Option<String>, std::result::Result<(String, f64), Vec<Problem>>) {
    let checked = check_fields(line, at, hash, fold_of);
    let named = match &checked {
        Ok((id, _)) => Some(id.clone()),
        // A line refused for a NaN score still names its question.
        Err(_) => serde_json::from_str::<serde_json::Value>(
            &line.replace("-Infinity", "null").replace("Infinity", "null").replace("NaN", "null"),
        )
        .ok()
        .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(str::to_string)),
    };
    (named, checked)
}

fn check_fields(
    line: &str,
    at: &Location,
    hash: &str,
    fold_of: &HashMap<&str, usize>,
) -> std::result::Result<(String, f64), Vec<Problem>> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
        let non_finite = ["NaN", "Infinity"].iter().any(|w| line.contains(w));
        let msg = if non_finite {
            "the score is NaN or infinite, not a probability".to_string()
        } else {
            format!("not a JSON object: {e}")
        };
        let p = Problem::new(at.clone(), msg)
            .help("each line is {\"id\": ..., \"score\": p, \"fold\": k, \"assignment_hash\": ...} with 0 <= p <= 1");
        vec![if non_finite { p.field("score") } else { p }]
    })?;
    let Some(row) = value.as_object() else {
        return Err(vec![Problem::new(at.clone(), "not a JSON object").help("write one object per line")]);
    };
    let mut problems = Vec::new();
    let id = match field(row, "id", at) {
        Ok(serde_json::Value::String(s)) => Some(s.clone()),
        Ok(v) => {
            problems.push(
                Problem::new(at.clone(), format!("the id is {v}, not a string"))
                    .field("id")
                    .help("copy the id as a string from the fold files"),
            );
            None
        }
        Err(p) => {
            problems.push(p);
            None
        }
    };
    let score = match field(row, "score", at) {
        Ok(v) => match v.as_f64() {
            Some(p) if (0.0..=1.0).contains(&p) => Some(p),
            Some(p) => {
                problems.push(
                    Problem::new(at.clone(), format!("the score {p} is outside [0, 1]"))
                        .field("score")
                        .help("write the held-out probability of the gold answer, between 0 and 1"),
                );
                None
            }
            None => {
                problems.push(
                    Problem::new(at.clone(), format!("the score is {v}, not a number"))
                        .field("score")
                        .help("write the held-out probability of the gold answer, between 0 and 1"),
                );
                None
            }
        },
        Err(p) => {
            problems.push(p);
            None
        }
    };
    match field(row, "assignment_hash", at) {
        Ok(serde_json::Value::String(h)) if h == hash => {}
        Ok(v) => problems.push(
            Problem::new(at.clone(), format!("assignment hash {v} is not this run's \"{hash}\""))
                .field("assignment_hash")
                .help(
                    "the scores were made on another fold assignment: export the folds with this run's settings \
                     (folds, seed, group-by, min-group, the same questions) and run the scorer on them again",
                ),
        ),
        Err(p) => problems.push(p),
    }
    let fold = match field(row, "fold", at) {
        Ok(v) => match v.as_u64() {
            Some(k) => Some(k as usize),
            None => {
                problems.push(
                    Problem::new(at.clone(), format!("the fold is {v}, not a whole number"))
                        .field("fold")
                        .help("copy the fold of the heldout.jsonl row the score is for"),
                );
                None
            }
        },
        Err(p) => {
            problems.push(p);
            None
        }
    };
    if let Some(id) = &id {
        match fold_of.get(id.as_str()) {
            None => problems.push(
                Problem::new(at.clone(), format!("\"{id}\" is not among the questions diagnosed"))
                    .field("id")
                    .help("score the questions of the fold files exported from this benchmark, with their ids"),
            ),
            Some(&want) => {
                if let Some(k) = fold
                    && k != want
                {
                    problems.push(
                        Problem::new(
                            at.clone(),
                            format!(
                                "\"{id}\" is held out in fold {want}, not fold {k}: a score from fold {k}'s model \
                                 comes from a model trained on this question's answer (a leak)"
                            ),
                        )
                        .field("fold")
                        .help(format!("score \"{id}\" with the model trained on fold-{want}/train.jsonl")),
                    );
                }
            }
        }
    }
    match (id, score) {
        (Some(id), Some(p)) if problems.is_empty() => Ok((id, p)),
        _ => Err(problems),
    }
}

/// The class a question's gold is, for the answer prior: option position,
/// yes/no, or the answer's text (trimmed, lower case).
fn gold_class(s: &Sample, format: AnswerFormat) -> String {
    match format {
        AnswerFormat::MultipleChoice => s.answer_index.map_or_else(|| s.answer.clone(), |i| i.to_string()),
        _ => s.answer.trim().to_lowercase(),
    }
}

fn figures(a: &Assignment<'_>, scores: &HashMap<String, f64>, cfg: &DiagnoseConfig) -> OutsideFigures {
    // Per (group, fold, gold class): how many questions; per (group, fold): how many.
    type Key<'k> = (Option<&'k str>, AnswerFormat);
    let mut class_count: HashMap<(Key<'_>, usize, String), usize> = HashMap::new();
    let mut fold_count: HashMap<(Key<'_>, usize), usize> = HashMap::new();
    for r in &a.rows {
        let key = (r.question_type.as_deref(), r.format);
        *class_count.entry((key, r.fold, gold_class(r.sample, r.format))).or_default() += 1;
        *fold_count.entry((key, r.fold)).or_default() += 1;
    }
    let folds_of: HashMap<Key<'_>, usize> = a.groups.iter().map(|(t, f, k)| ((t.as_deref(), *f), *k)).collect();
    let mut diffs: Vec<(String, f64)> = Vec::with_capacity(a.rows.len());
    let (mut sum, mut prior_sum, mut acc_sum, mut acc_n) = (0.0, 0.0, 0.0, 0usize);
    let mut by_format: BTreeMap<&str, (usize, f64)> = BTreeMap::new();
    // The resampling unit: the question's fold group (near-duplicate clusters
    // are found among all the rows), else the question itself.
    let units_of: Vec<String> = match &cfg.group_by {
        Some(g) => g.keys(a.rows.iter().map(|r| r.sample)),
        None => a.rows.iter().map(|r| format!("id:{}", r.sample.id)).collect(),
    };
    for (r, unit) in a.rows.iter().zip(units_of) {
        let key = (r.question_type.as_deref(), r.format);
        let class = gold_class(r.sample, r.format);
        let (mut same, mut total) = (0usize, 0usize);
        for k in (0..folds_of[&key]).filter(|k| *k != r.fold) {
            same += class_count.get(&(key, k, class.clone())).copied().unwrap_or(0);
            total += fold_count.get(&(key, k)).copied().unwrap_or(0);
        }
        let prior = if total == 0 { 0.0 } else { same as f64 / total as f64 };
        let p = scores[r.sample.id.as_str()];
        sum += p;
        prior_sum += prior;
        let e = by_format.entry(r.format.as_str()).or_default();
        e.0 += 1;
        e.1 += p;
        if r.format == AnswerFormat::YesNo || (r.format == AnswerFormat::MultipleChoice && r.sample.options.len() == 2)
        {
            acc_n += 1;
            acc_sum += if p > 0.5 {
                1.0
            } else if p == 0.5 {
                0.5
            } else {
                0.0
            };
        }
        diffs.push((unit, p - prior));
    }
    // Questions of one fold group are not independent: resample the groups.
    let mut units: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for (u, d) in diffs {
        let e = units.entry(u).or_default();
        e.0 += d;
        e.1 += 1.0;
    }
    let units: Vec<(f64, f64)> = units.into_values().collect();
    let ci = crate::stats::bootstrap_ratio_ci(
        &units,
        crate::stats::RESAMPLES,
        crate::seed::rng_for(cfg.seed, "diagnose.outside.bootstrap", ""),
    );
    let n = a.rows.len();
    let nf = n.max(1) as f64;
    OutsideFigures {
        n,
        mean_gold_probability: sum / nf,
        answer_prior_mean_gold_probability: prior_sum / nf,
        difference_ci95: [ci.0, ci.1],
        accuracy_n: acc_n,
        accuracy: (acc_n > 0).then(|| acc_sum / acc_n as f64),
        by_format: by_format
            .into_iter()
            .map(|(f, (n, s))| FormatMean { format: f.to_string(), n, mean_gold_probability: s / n.max(1) as f64 })
            .collect(),
    }
}

/// What a diagnosis records of the outside scores combined into it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OutsideApplied {
    pub file: String,
    pub sha256: String,
    pub combine: Combine,
    pub figures: OutsideFigures,
    /// TsT-RF's mean s(x) over the rows before combining, and after.
    pub forest_mean_s: f64,
    pub combined_mean_s: f64,
}

/// Replaces each row's s(x) of `d` by its combination with the question's outside
/// score (a question without one keeps its own: never the case after
/// [`OutsideScores::load`] on the same questions), and records what was combined.
pub fn apply(d: &mut Diagnosis, o: &Arc<OutsideScores>) {
    let n = d.rows.len().max(1) as f64;
    let forest_mean_s = d.rows.iter().map(|r| r.s).sum::<f64>() / n;
    for r in &mut d.rows {
        if let Some(&p) = o.scores.get(&r.id) {
            r.s = o.combine.apply(r.s, p);
            r.s_minus_chance = r.s - r.chance;
        }
    }
    super::score::refresh_group_means(d);
    d.outside = Some(OutsideApplied {
        file: o.shown.clone(),
        sha256: o.sha256.clone(),
        combine: o.combine,
        figures: o.figures.clone(),
        forest_mean_s,
        combined_mean_s: d.rows.iter().map(|r| r.s).sum::<f64>() / n,
    });
}
