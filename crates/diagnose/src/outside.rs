//! Outside bias scores: the held-out answer probabilities of a blind model
//! blindspot does not train itself (a fine-tuned text model, the TsT paper's
//! TsT-LLM), brought into a diagnosis beside TsT-RF's s(x).
//!
//! ```text
//! diagnose --export-folds DIR ─▶ folds.json + fold-K/{train,heldout}.jsonl  (the forest's own folds;
//!                                 golds on training rows only)
//!   runner: train on fold-K/train.jsonl, give every answer of fold-K/heldout.jsonl a probability ─▶ scores.jsonl
//! diagnose --scores scores.jsonl ─▶ every row checked against the same assignment
//!   ─▶ the gold's probability and the scorer's answer, taken here from the golds blindspot holds
//!   ─▶ s(x) = max or mean (forest, outside) per question ─▶ the report, IBP's ranking
//! ```
//! A held-out row carries no gold, so a scorer cannot report the gold's
//! probability or its own accuracy: it gives a distribution over the answers it
//! considers, and blindspot reads both off it. An accuracy implausibly above the
//! forest's and the answer prior's is warned about ([`implausible`]): the sign of
//! a scorer that saw held-out answers some other way.
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
/// (`schemas/fold-row.schema.json`). Only training rows carry the gold: a
/// scorer handed the held-out golds could score them from the answers.
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
    /// Training rows only (absent from `heldout.jsonl`): the gold answer.
    #[serde(flatten)]
    pub gold: Option<FoldGold>,
    /// The assignment's hash, as in `folds.json`: copy it into each score line.
    pub assignment_hash: &'a str,
}

/// The gold of a training row.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct FoldGold {
    /// Multiple choice: the gold option's letter; otherwise the gold answer text.
    pub gold: String,
    /// Multiple choice: the gold option's position (0 = A); null otherwise.
    pub gold_index: Option<i32>,
}

/// One line of a scores file (`schemas/outside-scores.schema.json`). Read field
/// by field, so that each problem names its field and line.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ScoreLine {
    /// The question's id, as in the fold files.
    pub id: String,
    /// The held-out probability of every answer the scorer considers: keyed by
    /// option letter (`A`, `B`, ...) for multiple choice, by the answer's text for
    /// yes/no, open and numeric questions. An answer not listed has probability
    /// 0; the values are divided by their sum. Keys that name the same answer
    /// (the same text once lower-cased with punctuation and articles dropped, or
    /// the same number) are one answer: their probabilities add up.
    pub probabilities: BTreeMap<String, Probability>,
    /// The fold whose model scored the question: the one holding it out.
    pub fold: usize,
    /// The `assignment_hash` of the fold files the scorer read.
    pub assignment_hash: String,
}

/// A probability in [0, 1].
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Probability(#[schemars(range(min = 0.0, max = 1.0))] pub f64);

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
                    gold: (!heldout).then(|| FoldGold {
                        gold: match (r.format, s.answer_index) {
                            (AnswerFormat::MultipleChoice, Some(i)) => crate::sample::option_letter(i.max(0) as usize),
                            _ => s.answer.clone(),
                        },
                        gold_index: (r.format == AnswerFormat::MultipleChoice).then_some(s.answer_index).flatten(),
                    }),
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

/// The longest line a scores file may hold. A line lists one question's answer
/// probabilities: far shorter than this even for an open question scored over
/// thousands of answers, so a longer one is not a scores line (a binary file, a
/// device such as `/dev/zero`) and is refused before more of it is read.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The most bytes a scores file may hold per question diagnosed (beyond one
/// line's worth): far above what a scores file of these questions needs, and a
/// bound on what an endless or huge file costs before it is refused.
pub const MAX_BYTES_PER_QUESTION: u64 = 64 * 1024;

/// The warning rule for a scorer that is implausibly right: its accuracy more than
/// this above the better of TsT-RF's blind accuracy and the answer prior's...
pub const IMPLAUSIBLE_MARGIN: f64 = 0.20;
/// ... on at least this many questions (fewer are too noisy for a 20-point gap to mean a leak).
pub const IMPLAUSIBLE_MIN_N: usize = 30;

/// What a scores line looks like, for the help of its problems.
const LINE_HELP: &str = "each line is {\"id\": ..., \"probabilities\": {\"A\": 0.2, \"B\": 0.7, ...}, \"fold\": ..., \
                         \"assignment_hash\": ...}";

/// What `probabilities` holds, for the help of its problems.
const PROBABILITIES_HELP: &str = "write \"probabilities\": {\"A\": 0.1, \"B\": 0.7, ...}, the held-out probability \
                                  of every answer the scorer considers, each in [0, 1]: keyed by option letter for \
                                  multiple choice, by the answer's text for yes/no, open and numeric questions (an \
                                  answer not listed has probability 0)";

/// One question's outside scores, read against its gold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    /// The held-out probability of the gold: its value divided by the sum of the
    /// values listed (0 when the gold is not listed).
    pub p: f64,
    /// Whether the scorer's answer, its most probable one, is the gold: 1, 0, or
    /// 1/t when the gold ties with t − 1 other answers at the top (the expected
    /// accuracy of breaking the tie at random).
    pub correct: f64,
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
    /// Per id: the gold's held-out probability and whether the scorer's answer is the gold.
    #[serde(skip)]
    pub scores: HashMap<String, Scored>,
    #[serde(skip)]
    pub figures: OutsideFigures,
}

/// The outside scores on their own, over every question diagnosed.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct OutsideFigures {
    pub n: usize,
    /// Mean held-out probability of the gold answer.
    pub mean_gold_probability: f64,
    /// The same for a model that knows only each group's answer distribution in
    /// the training folds: the share of training questions whose gold is this
    /// question's gold (its answer, yes/no, or option position).
    pub answer_prior_mean_gold_probability: f64,
    /// 95% bootstrap interval of the mean paired difference (gold probability − answer prior).
    pub difference_ci95: [f64; 2],
    /// Share of the questions whose most probable answer is the gold (a tie at the
    /// top between the gold and t − 1 other answers counts 1/t).
    pub accuracy: f64,
    /// The same for always giving the most frequent gold of the question's group
    /// in its training folds (option position, yes/no, or answer text).
    pub answer_prior_accuracy: f64,
    /// Per answer format: n, the mean held-out probability of the gold, the accuracy.
    pub by_format: Vec<FormatMean>,
}

/// The outside scores of one answer format.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct FormatMean {
    pub format: String,
    pub n: usize,
    pub mean_gold_probability: f64,
    pub accuracy: f64,
}

/// The warning for a scorer right on implausibly many held-out questions: more
/// than [`IMPLAUSIBLE_MARGIN`] above the better of TsT-RF's blind accuracy
/// (`forest`) and the answer prior's accuracy, on at least [`IMPLAUSIBLE_MIN_N`]
/// questions. A blind model that far ahead of the forest and of the answer
/// distribution has most often seen the answers some other way (trained on
/// held-out rows, or on the benchmark's own golds).
pub fn implausible(file: &str, f: &OutsideFigures, forest: f64) -> Option<String> {
    let better = forest.max(f.answer_prior_accuracy);
    (f.n >= IMPLAUSIBLE_MIN_N && f.accuracy > better + IMPLAUSIBLE_MARGIN).then(|| {
        format!(
            "the outside scores of {file} answer {:.1}% of the {} questions right, more than {:.0} points above the \
             better of TsT-RF's blind accuracy ({:.1}%) and the training folds' most frequent answer ({:.1}%): a \
             blind scorer that far ahead has most likely seen held-out answers; check that it trained on \
             fold-K/train.jsonl alone and read no gold of the held-out questions (nor the benchmark's own answers)",
            f.accuracy * 100.0,
            f.n,
            IMPLAUSIBLE_MARGIN * 100.0,
            forest * 100.0,
            f.answer_prior_accuracy * 100.0
        )
    })
}

/// The field a score row names, with its value, or the problem it has.
fn field<'v>(
    row: &'v serde_json::Map<String, serde_json::Value>,
    name: &str,
    at: &Location,
) -> std::result::Result<&'v serde_json::Value, Problem> {
    row.get(name).ok_or_else(|| Problem::new(at.clone(), format!("no \"{name}\" field")).field(name).help(LINE_HELP))
}

impl OutsideScores {
    /// Reads `src.path` and checks every line against the assignment of `samples`
    /// under `cfg`: answer probabilities in [0, 1] keyed by answers the question
    /// has, a known id scored once, from the fold that holds it out, under the
    /// same assignment hash, and every question scored. Every problem is reported
    /// at once; a line longer than [`MAX_LINE_BYTES`] or a file past
    /// [`MAX_BYTES_PER_QUESTION`] per question stops the reading there.
    pub fn load(src: &OutsideSource, samples: &[Sample], cfg: &DiagnoseConfig) -> Result<OutsideScores> {
        use std::io::{BufRead, Read};
        let path = &src.path;
        let a = Assignment::of(samples, cfg);
        let by_id: HashMap<&str, &Assigned<'_>> = a.rows.iter().map(|r| (r.sample.id.as_str(), r)).collect();
        let limit = MAX_BYTES_PER_QUESTION * a.rows.len() as u64 + MAX_LINE_BYTES as u64;
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut reader = std::io::BufReader::new(file);
        let mut hasher = Sha256::new();
        let mut problems = crate::error::Capped::default();
        let mut scores: HashMap<String, Scored> = HashMap::new();
        let mut first_line: HashMap<String, usize> = HashMap::new();
        let mut mentioned: std::collections::HashSet<String> = std::collections::HashSet::new();
        let (mut buf, mut total, mut n) = (Vec::new(), 0u64, 0usize);
        loop {
            buf.clear();
            let read = (&mut reader)
                .take(MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut buf)
                .map_err(|e| Error::io(path, e))?;
            if read == 0 {
                break;
            }
            n += 1;
            total += read as u64;
            hasher.update(&buf);
            let at = Location::line(path, n as u64);
            if buf.len() > MAX_LINE_BYTES && !buf.ends_with(b"\n") {
                problems.push(
                    Problem::new(
                        at,
                        format!("the line is longer than {MAX_LINE_BYTES} bytes: not a line of a scores file"),
                    )
                    .help(format!("give the scores file the scorer wrote: one JSON object per line; {LINE_HELP}")),
                );
                return Err(Error::Invalid(problems.into_vec()));
            }
            if total > limit {
                problems.push(
                    Problem::new(
                        Location::file(path),
                        format!(
                            "more than {limit} bytes ({} KiB per question for the {} questions diagnosed): too large \
                             for their scores",
                            MAX_BYTES_PER_QUESTION / 1024,
                            a.rows.len()
                        ),
                    )
                    .help(
                        "give the scores file of these questions: one line per row of the fold-K/heldout.jsonl files",
                    ),
                );
                return Err(Error::Invalid(problems.into_vec()));
            }
            let body = buf.strip_suffix(b"\n").unwrap_or(&buf);
            let body = body.strip_suffix(b"\r").unwrap_or(body);
            let line = match std::str::from_utf8(body) {
                Ok(l) => l,
                Err(e) => {
                    problems.push(Problem::new(at, format!("not UTF-8 text: {e}")).help("write JSON lines"));
                    continue;
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            let (named, checked) = check_line(line, &at, &a.hash, &by_id);
            // A question named on a refused line is not also reported as unscored.
            if let Some(id) = named {
                mentioned.insert(id);
            }
            match checked {
                Ok((id, scored)) => {
                    if let Some(first) = first_line.get(&id) {
                        problems.push(
                            Problem::new(at, format!("\"{id}\" is scored twice (first on line {first})"))
                                .field("id")
                                .help("keep one score per question: each question is held out in exactly one fold"),
                        );
                        continue;
                    }
                    first_line.insert(id.clone(), n);
                    scores.insert(id, scored);
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
            sha256: hex::encode(hasher.finalize()),
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
/// and scores or its problems.
#[allow(clippy::type_complexity)]
fn check_line(
    line: &str,
    at: &Location,
    hash: &str,
    by_id: &HashMap<&str, &Assigned<'_>>,
) -> (Option<String>, std::result::Result<(String, Scored), Vec<Problem>>) {
    let checked = check_fields(line, at, hash, by_id);
    let named = match &checked {
        Ok((id, _)) => Some(id.clone()),
        // A line refused for a NaN probability still names its question.
        Err(_) => serde_json::from_str::<serde_json::Value>(
            &line.replace("-Infinity", "null").replace("Infinity", "null").replace("NaN", "null"),
        )
        .ok()
        .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(str::to_string)),
    };
    (named, checked)
}

/// The answer a key or a gold names, for comparing them: the same number, or the
/// same text once lower-cased with punctuation and articles dropped.
fn answer_key(text: &str) -> String {
    match crate::sample::parse_number(text) {
        // + 0.0: -0 and 0 are one answer.
        Some(v) => format!("number:{}", v + 0.0),
        None => format!("text:{}", crate::sample::normalize_text(text)),
    }
}

/// The key of a question's gold among its answer keys: the gold option's letter
/// for multiple choice (by its text when the position is unknown), else the answer.
fn gold_key(s: &Sample, format: AnswerFormat) -> Option<String> {
    if format != AnswerFormat::MultipleChoice {
        return Some(answer_key(&s.answer));
    }
    let index = match s.answer_index {
        Some(i) if i >= 0 => Some(i as usize),
        _ => {
            let want = crate::sample::normalize_text(&s.answer);
            s.options.iter().position(|o| crate::sample::normalize_text(o) == want)
        }
    };
    index.map(crate::sample::option_letter)
}

/// `probabilities` read: each key with its value in [0, 1], or the problems.
fn check_probabilities(
    row: &serde_json::Map<String, serde_json::Value>,
    at: &Location,
    problems: &mut Vec<Problem>,
) -> Option<Vec<(String, f64)>> {
    let m = match row.get("probabilities") {
        Some(serde_json::Value::Object(m)) => m,
        Some(v) => {
            problems.push(
                Problem::new(at.clone(), format!("the probabilities are {v}, not an object of answer: probability"))
                    .field("probabilities")
                    .help(PROBABILITIES_HELP),
            );
            return None;
        }
        None if row.contains_key("score") => {
            problems.push(
                Problem::new(
                    at.clone(),
                    "no \"probabilities\" field, and \"score\" (the gold's probability) is no longer read: held-out \
                     rows carry no gold, so a scorer gives every answer's probability and blindspot takes the gold's",
                )
                .field("probabilities")
                .help(format!("{PROBABILITIES_HELP}, in place of \"score\"")),
            );
            return None;
        }
        None => {
            problems.push(
                Problem::new(at.clone(), "no \"probabilities\" field").field("probabilities").help(PROBABILITIES_HELP),
            );
            return None;
        }
    };
    let mut out = Vec::with_capacity(m.len());
    let before = problems.len();
    for (k, v) in m {
        match v.as_f64() {
            Some(p) if (0.0..=1.0).contains(&p) => out.push((k.clone(), p)),
            Some(p) => problems.push(
                Problem::new(at.clone(), format!("the probability of \"{k}\" is {p}, outside [0, 1]"))
                    .field("probabilities")
                    .help(PROBABILITIES_HELP),
            ),
            None => problems.push(
                Problem::new(at.clone(), format!("the probability of \"{k}\" is {v}, not a number"))
                    .field("probabilities")
                    .help(PROBABILITIES_HELP),
            ),
        }
    }
    if problems.len() > before {
        return None;
    }
    if out.iter().all(|(_, p)| *p == 0.0) {
        problems.push(
            Problem::new(
                at.clone(),
                if out.is_empty() { "no answer has a probability" } else { "every probability is 0" },
            )
            .field("probabilities")
            .help(format!("{PROBABILITIES_HELP}; the values are divided by their sum, which must not be 0")),
        );
        return None;
    }
    Some(out)
}

/// The gold's probability and the scorer's accuracy on one question, from the
/// answer probabilities listed; a key that is not an option's letter is a problem.
fn score_question(
    probabilities: &[(String, f64)],
    r: &Assigned<'_>,
    at: &Location,
) -> std::result::Result<Scored, Vec<Problem>> {
    let s = r.sample;
    let mut merged: BTreeMap<String, f64> = BTreeMap::new();
    let mut problems = Vec::new();
    for (k, p) in probabilities {
        let key = if r.format == AnswerFormat::MultipleChoice {
            let letters: Vec<String> = (0..s.options.len()).map(crate::sample::option_letter).collect();
            if !letters.contains(k) {
                problems.push(
                    Problem::new(
                        at.clone(),
                        format!(
                            "\"{k}\" is not an option of \"{}\", whose options are {}",
                            s.id,
                            letters.first().zip(letters.last()).map_or("none".into(), |(f, l)| format!("{f}-{l}"))
                        ),
                    )
                    .field("probabilities")
                    .help("key a multiple-choice question's probabilities by its options' letters (A = the first)"),
                );
                continue;
            }
            k.clone()
        } else {
            answer_key(k)
        };
        *merged.entry(key).or_default() += p;
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let total: f64 = merged.values().sum();
    let top = merged.values().copied().fold(0.0, f64::max);
    let gold = gold_key(s, r.format).and_then(|g| merged.get(&g).copied()).unwrap_or(0.0);
    let tied = merged.values().filter(|v| **v == top).count();
    Ok(Scored { p: gold / total, correct: if gold == top { 1.0 / tied as f64 } else { 0.0 } })
}

fn check_fields(
    line: &str,
    at: &Location,
    hash: &str,
    by_id: &HashMap<&str, &Assigned<'_>>,
) -> std::result::Result<(String, Scored), Vec<Problem>> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
        let non_finite = ["NaN", "Infinity"].iter().any(|w| line.contains(w));
        let msg = if non_finite {
            "a probability is NaN or infinite, not a probability".to_string()
        } else {
            format!("not a JSON object: {e}")
        };
        let p = Problem::new(at.clone(), msg).help(LINE_HELP);
        vec![if non_finite { p.field("probabilities") } else { p }]
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
    let probabilities = check_probabilities(row, at, &mut problems);
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
    let mut scored = None;
    if let Some(id) = &id {
        match by_id.get(id.as_str()) {
            None => problems.push(
                Problem::new(at.clone(), format!("\"{id}\" is not among the questions diagnosed"))
                    .field("id")
                    .help("score the questions of the fold files exported from this benchmark, with their ids"),
            ),
            Some(r) => {
                let want = r.fold;
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
                if let Some(ps) = &probabilities {
                    match score_question(ps, r, at) {
                        Ok(s) => scored = Some(s),
                        Err(p) => problems.extend(p),
                    }
                }
            }
        }
    }
    match (id, scored) {
        (Some(id), Some(s)) if problems.is_empty() => Ok((id, s)),
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

fn figures(a: &Assignment<'_>, scores: &HashMap<String, Scored>, cfg: &DiagnoseConfig) -> OutsideFigures {
    // Per group: per gold class, how many questions of each fold.
    type Key<'k> = (Option<&'k str>, AnswerFormat);
    let folds_of: HashMap<Key<'_>, usize> = a.groups.iter().map(|(t, f, k)| ((t.as_deref(), *f), *k)).collect();
    let mut class_folds: HashMap<Key<'_>, BTreeMap<String, Vec<usize>>> = HashMap::new();
    for r in &a.rows {
        let key = (r.question_type.as_deref(), r.format);
        let k = folds_of[&key];
        let counts = class_folds.entry(key).or_default().entry(gold_class(r.sample, r.format)).or_insert(vec![0; k]);
        counts[r.fold] += 1;
    }
    // A class's count in the training folds of `fold`: every fold but that one.
    let train = |counts: &[usize], fold: usize| counts.iter().sum::<usize>() - counts[fold];
    // Per (group, fold): the training folds' size, their most frequent class's
    // count and how many classes share it.
    let mut majority: HashMap<(Key<'_>, usize), (usize, usize, usize)> = HashMap::new();
    for (key, classes) in &class_folds {
        for fold in 0..folds_of[key] {
            let (mut total, mut top, mut tied) = (0, 0, 0);
            for counts in classes.values() {
                let c = train(counts, fold);
                total += c;
                if c > top {
                    (top, tied) = (c, 1);
                } else if c == top && c > 0 {
                    tied += 1;
                }
            }
            majority.insert((*key, fold), (total, top, tied));
        }
    }
    let mut diffs: Vec<(String, f64)> = Vec::with_capacity(a.rows.len());
    let (mut sum, mut prior_sum, mut acc_sum, mut prior_acc_sum) = (0.0, 0.0, 0.0, 0.0);
    let mut by_format: BTreeMap<&str, (usize, f64, f64)> = BTreeMap::new();
    // The resampling unit: the question's fold group (near-duplicate clusters
    // are found among all the rows), else the question itself.
    let units_of: Vec<String> = match &cfg.group_by {
        Some(g) => g.keys(a.rows.iter().map(|r| r.sample)),
        None => a.rows.iter().map(|r| format!("id:{}", r.sample.id)).collect(),
    };
    for (r, unit) in a.rows.iter().zip(units_of) {
        let key = (r.question_type.as_deref(), r.format);
        let same = train(&class_folds[&key][&gold_class(r.sample, r.format)], r.fold);
        let (total, top, tied) = majority[&(key, r.fold)];
        let prior = if total == 0 { 0.0 } else { same as f64 / total as f64 };
        if total > 0 && same == top {
            prior_acc_sum += 1.0 / tied as f64;
        }
        let q = scores[r.sample.id.as_str()];
        sum += q.p;
        acc_sum += q.correct;
        prior_sum += prior;
        let e = by_format.entry(r.format.as_str()).or_default();
        e.0 += 1;
        e.1 += q.p;
        e.2 += q.correct;
        diffs.push((unit, q.p - prior));
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
        accuracy: acc_sum / nf,
        answer_prior_accuracy: prior_acc_sum / nf,
        by_format: by_format
            .into_iter()
            .map(|(f, (n, s, c))| FormatMean {
                format: f.to_string(),
                n,
                mean_gold_probability: s / n.max(1) as f64,
                accuracy: c / n.max(1) as f64,
            })
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
        if let Some(q) = o.scores.get(&r.id) {
            r.s = o.combine.apply(r.s, q.p);
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
