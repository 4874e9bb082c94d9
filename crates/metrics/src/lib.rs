//! Metrics: the papers' numbers computed from models' own predictions
//! (`predictions ─▶ **metrics** · B-Clean ─▶ release report/metrics.json`).
//!
//! Two steps, both pure functions of their inputs and the seed:
//! 1. [`score_all`] resolves every prediction to the row it answers (a sample,
//!    or a variant row with its own options and gold) and scores it with
//!    [`crate::predictions::parse::score`]. The *condition* is the row's
//!    variant kind, `original` for a sample. A variant id whose row was not
//!    given is scored against its parent when the kind keeps the question and
//!    gold unchanged (`no_image`, `white_image`, `noise_image`, `caption`,
//!    `mirage`, `guess`). Ids that name no row are counted and listed (first
//!    10, with file:line) — an error with `strict`; a second prediction of the
//!    same model for the same id is counted and ignored (the first wins).
//! 2. [`compute`] aggregates per model × condition — accuracy with a seeded
//!    bootstrap 95% CI, abstention rate, per-group accuracy — and the derived
//!    metrics of [`derived`] (Visual Dependence, Caption Substitution,
//!    Modality Differential, Mirage Score, mirage vs guess, mirage rate,
//!    MMStar gain and leakage, robustness R(m)).
//!
//! Determinism: items are sorted by id before any sum; each bootstrap draws
//! from its own generator, `rng_for(seed, "metrics.bootstrap", "<model>/<condition>")`,
//! so the output is the same bytes with 1 or 2 threads.

// The crates below this one, under the module names the code uses.
use blindspot_core::{context, error, io, sample, seed, stats};
use blindspot_predictions as predictions;

pub mod derived;
pub mod evidence;
pub mod file;

pub use file::{MetricsFile, r6};

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanBuilder, Float64Builder, RecordBatch, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema};

use rayon::prelude::*;
use serde_json::Value as J;

use crate::error::{Error, Location, Problem, Result};
use crate::predictions::{Imported, Outcome, Prediction, parse};
use crate::sample::{MraRule, NumericScoring};
use crate::sample::{Sample, id_cmp};
use crate::seed::rng_for;

/// The condition of a sample's own row.
pub const ORIGINAL: &str = "original";

/// Variant kinds that keep the parent's question, options and gold: a
/// prediction for `<parent>::<kind>` can be scored against the parent.
pub const SAME_GOLD_KINDS: [&str; 6] = ["no_image", "white_image", "noise_image", "caption", "mirage", "guess"];

/// How many unknown ids (and duplicates) are listed.
pub const LISTED: usize = 10;

/// What per-group accuracies are broken down by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupKey {
    QuestionType,
    /// A meta field; a value holding a JSON list (`["TXT", "IMG"]`) puts the
    /// question in each listed group.
    Meta(String),
}

impl GroupKey {
    /// Parses `question_type` or `meta:FIELD`.
    pub fn parse(s: &str) -> std::result::Result<GroupKey, String> {
        match s.split_once(':') {
            None if s == "question_type" => Ok(GroupKey::QuestionType),
            Some(("meta", f)) if !f.is_empty() => Ok(GroupKey::Meta(f.to_string())),
            _ => Err(format!("group-by \"{s}\" is not \"question_type\" or \"meta:FIELD\"")),
        }
    }

    pub fn name(&self) -> String {
        match self {
            GroupKey::QuestionType => "question_type".into(),
            GroupKey::Meta(f) => format!("meta:{f}"),
        }
    }

    /// The groups a row belongs to.
    pub fn values(&self, s: &Sample) -> Vec<String> {
        match self {
            GroupKey::QuestionType => vec![s.question_type.clone().unwrap_or_else(|| "(none)".into())],
            GroupKey::Meta(f) => match s.meta.get(f) {
                None => vec!["(none)".into()],
                Some(v) => match serde_json::from_str::<Vec<J>>(v) {
                    Ok(items) => {
                        items.iter().map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string)).collect()
                    }
                    Err(_) => vec![v.clone()],
                },
            },
        }
    }
}

/// Settings of the metrics stage (defaults: the papers').
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsConfig {
    pub seed: u64,
    /// Bootstrap resamples (1,000).
    pub resamples: usize,
    /// How numeric answers are scored (default exact, as published scorers).
    pub numeric: NumericScoring,
    /// MRA's comparison, when `numeric` is MRA.
    pub mra: MraRule,
    pub group_by: Vec<GroupKey>,
    /// MMStar leakage: a VLM's LLM backbone, evaluated text-only, as a model
    /// of its own (`VLM → LLM`).
    pub llm_bases: BTreeMap<String, String>,
    /// Unknown ids and duplicate predictions are errors.
    pub strict: bool,
    /// The meta field holding each question's reference answers (as ingest keeps them
    /// with `[ingest] reference-answers`): answers that are no choice among options
    /// (open, yes/no, numeric) are scored by VQA accuracy over them
    /// ([`crate::predictions::parse::vqa_accuracy`]) instead of against the gold.
    pub reference_answers: Option<String>,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            seed: crate::context::DEFAULT_SEED,
            resamples: 1000,
            numeric: NumericScoring::Exact,
            mra: MraRule::Strict,
            group_by: Vec::new(),
            llm_bases: BTreeMap::new(),
            strict: false,
            reference_answers: None,
        }
    }
}

/// One scored prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The id predicted (a sample or variant id).
    pub id: String,
    /// The sample the row derives from (its own id for a sample).
    pub parent: String,
    /// Index of the row scored against, in the rows given to [`score_all`].
    pub row: usize,
    /// The response as given (an option index written as its number, a list of several as JSON).
    pub response: String,
    pub outcome: Outcome,
}

/// A prediction naming no row, or repeating one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub location: String,
    pub model: String,
    pub id: String,
}

/// Every prediction resolved and scored.
#[derive(Debug, Clone, Default)]
pub struct Scored {
    /// model → condition → items sorted by id.
    pub cells: BTreeMap<String, BTreeMap<String, Vec<Item>>>,
    /// Rows available per condition (for "missing" counts).
    pub rows_per_condition: BTreeMap<String, usize>,
    pub predictions: usize,
    pub unknown_count: usize,
    /// The first [`LISTED`] unknown ids, in input order.
    pub unknown: Vec<Located>,
    pub duplicate_count: usize,
    pub duplicates: Vec<Located>,
    /// With `reference_answers`: predictions of questions without options scored by VQA
    /// accuracy over their question's reference answers, and those whose question has
    /// none (scored against the gold).
    pub by_references: usize,
    pub without_references: usize,
}

impl Scored {
    pub fn cell(&self, model: &str, condition: &str) -> Option<&[Item]> {
        self.cells.get(model)?.get(condition).map(Vec::as_slice)
    }
}

/// The condition of a row.
pub fn condition_of(s: &Sample) -> &str {
    s.variant.as_deref().unwrap_or(ORIGINAL)
}

/// The row a prediction for `id` is scored against and its condition: the row
/// of that id, or — for `<parent>::<kind>` with a kind in [`SAME_GOLD_KINDS`]
/// whose row was not given — the parent sample. `index` maps row ids to their
/// positions in `rows`.
pub fn resolve(index: &HashMap<&str, usize>, rows: &[Sample], id: &str) -> Option<(usize, String)> {
    match index.get(id) {
        Some(&i) => Some((i, condition_of(&rows[i]).to_string())),
        None => id.rsplit_once("::").and_then(|(parent, kind)| {
            let i = *index.get(parent)?;
            (SAME_GOLD_KINDS.contains(&kind) && rows[i].variant.is_none()).then(|| (i, kind.to_string()))
        }),
    }
}

/// Resolves and scores every prediction (see the module docs). `rows` are
/// samples and/or variant rows; ids must be unique among them.
pub fn score_all(rows: &[Sample], predictions: &[Prediction], cfg: &MetricsConfig) -> Result<Scored> {
    check_group_fields(rows, cfg)?;
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        if index.insert(r.id.as_str(), i).is_some() {
            return Err(Error::Bug(format!("metrics: row id \"{}\" given twice", r.id)));
        }
    }
    let mut rows_per_condition: BTreeMap<String, usize> = BTreeMap::new();
    for r in rows {
        *rows_per_condition.entry(condition_of(r).to_string()).or_default() += 1;
    }
    // Resolve sequentially (input order decides what is a duplicate), score in parallel.
    struct Resolved<'p> {
        pred: &'p Prediction,
        row: usize,
        condition: String,
    }
    let mut resolved = Vec::with_capacity(predictions.len());
    let mut seen: HashSet<(&str, &str)> = HashSet::with_capacity(predictions.len());
    let mut out = Scored { predictions: predictions.len(), rows_per_condition, ..Scored::default() };
    let mut problems = Vec::new();
    for p in predictions {
        let Some((row, condition)) = resolve(&index, rows, &p.id) else {
            out.unknown_count += 1;
            if out.unknown.len() < LISTED {
                out.unknown.push(Located { location: p.loc.to_string(), model: p.model.clone(), id: p.id.clone() });
            }
            if cfg.strict {
                problems.push(
                    Problem::new(p.loc.clone(), format!("\"{}\" (model \"{}\") is not the id of any given sample or variant row", p.id, p.model))
                        .field("id")
                        .help("check that the predictions belong to this benchmark; give its variant rows too (--release DIR or --samples VARIANTS.parquet); a harness's results on a `blindspot export` map to ids through its manifest (--manifest DIR/manifest.json); or drop --strict to count and skip such rows"),
                );
            }
            continue;
        };
        if !seen.insert((p.model.as_str(), p.id.as_str())) {
            out.duplicate_count += 1;
            if out.duplicates.len() < LISTED {
                out.duplicates.push(Located { location: p.loc.to_string(), model: p.model.clone(), id: p.id.clone() });
            }
            if cfg.strict {
                problems.push(
                    Problem::new(p.loc.clone(), format!("a second prediction of model \"{}\" for \"{}\"", p.model, p.id))
                        .field("id")
                        .help("keep one prediction per model and id (or name the runs as different models: --predictions NAME=FILE)"),
                );
            }
            continue;
        }
        resolved.push(Resolved { pred: p, row, condition });
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(problems));
    }
    let outcomes: Vec<(Outcome, Option<bool>)> = resolved
        .par_iter()
        .map(|r| {
            let row = &rows[r.row];
            let mut outcome = parse::score_with(row, &r.pred.response, cfg.numeric, cfg.mra);
            // VQA scores every answer that is not a choice among options this way: its
            // yes/no and number questions too.
            let by_references = match (&cfg.reference_answers, row.answer_format) {
                (Some(field), f) if f != sample::AnswerFormat::MultipleChoice => {
                    let references = row.meta.get(field).map(|v| parse::reference_answers(v));
                    if let (Some(refs), Some(answer)) = (&references, outcome.answer.as_deref())
                        && outcome.parsed
                    {
                        outcome.score = parse::vqa_accuracy(answer, refs);
                    }
                    Some(references.is_some())
                }
                _ => None,
            };
            (outcome, by_references)
        })
        .collect();
    for (r, (outcome, by_references)) in resolved.iter().zip(outcomes) {
        match by_references {
            Some(true) => out.by_references += 1,
            Some(false) => out.without_references += 1,
            None => {}
        }
        let row = &rows[r.row];
        let parent = row.parent_id.clone().unwrap_or_else(|| row.id.clone());
        out.cells.entry(r.pred.model.clone()).or_default().entry(r.condition.clone()).or_default().push(Item {
            id: r.pred.id.clone(),
            parent,
            row: r.row,
            response: r.pred.response.shown(),
            outcome,
        });
    }
    for conds in out.cells.values_mut() {
        for items in conds.values_mut() {
            items.sort_by(|a, b| id_cmp(&a.id, &b.id));
        }
    }
    Ok(out)
}

/// Accuracy of one group of a cell.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupStats {
    pub n: usize,
    pub accuracy: f64,
}

/// One model × condition.
#[derive(Debug, Clone, PartialEq)]
pub struct CellStats {
    pub n: usize,
    /// Sum of scores (MRA counts fractionally).
    pub correct: f64,
    pub accuracy: f64,
    /// 2.5th and 97.5th percentiles of the bootstrap accuracies.
    pub ci95: (f64, f64),
    pub abstained: usize,
    pub abstention_rate: f64,
    /// Responses no answer was found in (abstentions and empty responses aside).
    pub unparsed: usize,
    pub empty: usize,
    /// Rows of this condition given but not predicted (None: the condition's
    /// rows were not given, predictions were scored against their parents).
    pub missing: Option<usize>,
    /// Group key name → group → stats.
    pub groups: BTreeMap<String, BTreeMap<String, GroupStats>>,
    /// Answer format → stats: what `accuracy` mixes.
    pub formats: BTreeMap<String, GroupStats>,
}

/// Everything [`compute`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub config: MetricsConfig,
    pub rows: usize,
    pub scored: Scored,
    /// model → condition → stats.
    pub cells: BTreeMap<String, BTreeMap<String, CellStats>>,
    /// model → derived metrics.
    pub derived: BTreeMap<String, derived::Derived>,
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cells == other.cells
            && self.unknown == other.unknown
            && self.unknown_count == other.unknown_count
            && self.duplicate_count == other.duplicate_count
    }
}

/// One model's accuracy on the original questions of one set: the full
/// benchmark, the questions pruning kept, or those it removed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SetAccuracy {
    pub model: String,
    /// `full`, `kept` or `removed`.
    pub set: String,
    /// Questions of the set.
    pub questions: usize,
    /// Of them, predicted by the model (the accuracy's n).
    pub n: usize,
    pub accuracy: f64,
    pub ci95: (f64, f64),
}

/// Each model's accuracy on the original questions of `full`, of those `kept`
/// holds and of the rest, with bootstrap CIs, from predictions scored against
/// `full`: predictions for removed questions are scored, never dropped. Variant-condition predictions are
/// left to [`metrics`].
pub fn by_set(full: &[Sample], scored: &Scored, cfg: &MetricsConfig, kept: &HashSet<&str>) -> Vec<SetAccuracy> {
    let n_kept = full.iter().filter(|s| kept.contains(s.id.as_str())).count();
    let mut out = Vec::new();
    for (model, conds) in &scored.cells {
        let Some(items) = conds.get(ORIGINAL) else { continue };
        for (set, questions, keep) in
            [("full", full.len(), None), ("kept", n_kept, Some(true)), ("removed", full.len() - n_kept, Some(false))]
        {
            let values: Vec<f64> = items
                .iter()
                .filter(|i| keep.is_none_or(|k| kept.contains(i.id.as_str()) == k))
                .map(|i| i.outcome.score)
                .collect();
            let n = values.len();
            out.push(SetAccuracy {
                model: model.clone(),
                set: set.into(),
                questions,
                n,
                accuracy: if n == 0 { 0.0 } else { values.iter().sum::<f64>() / n as f64 },
                ci95: bootstrap_mean_ci(
                    &values,
                    cfg.resamples,
                    cfg.seed,
                    "metrics.bootstrap.set",
                    &format!("{model}/{set}"),
                ),
            });
        }
    }
    out
}

/// Percentile bootstrap of the mean of `values` ([`crate::stats::bootstrap_mean_ci`])
/// from a generator seeded by `(seed, stage, key)`; returns the 2.5th and 97.5th percentiles.
pub fn bootstrap_mean_ci(values: &[f64], resamples: usize, seed: u64, stage: &str, key: &str) -> (f64, f64) {
    crate::stats::bootstrap_mean_ci(values, resamples, rng_for(seed, stage, key))
}

fn cell_stats(
    model: &str,
    condition: &str,
    items: &[Item],
    rows: &[Sample],
    scored: &Scored,
    cfg: &MetricsConfig,
) -> CellStats {
    let n = items.len();
    let values: Vec<f64> = items.iter().map(|i| i.outcome.score).collect();
    let correct: f64 = values.iter().sum();
    let accuracy = if n == 0 { 0.0 } else { correct / n as f64 };
    let ci95 =
        bootstrap_mean_ci(&values, cfg.resamples, cfg.seed, "metrics.bootstrap", &format!("{model}/{condition}"));
    let abstained = items.iter().filter(|i| i.outcome.abstained).count();
    let empty = items.iter().filter(|i| i.outcome.empty).count();
    let unparsed = items.iter().filter(|i| !i.outcome.parsed && !i.outcome.abstained && !i.outcome.empty).count();
    let given = scored.rows_per_condition.get(condition).copied();
    let missing = given.map(|g| g.saturating_sub(n));
    let mut by_format: BTreeMap<String, (usize, f64)> = BTreeMap::new();
    for it in items {
        let e = by_format.entry(rows[it.row].answer_format.as_str().to_string()).or_default();
        e.0 += 1;
        e.1 += it.outcome.score;
    }
    let formats = by_format.into_iter().map(|(f, (n, c))| (f, GroupStats { n, accuracy: c / n as f64 })).collect();
    let mut groups = BTreeMap::new();
    for key in &cfg.group_by {
        let mut acc: BTreeMap<String, (usize, f64)> = BTreeMap::new();
        for it in items {
            for g in key.values(&rows[it.row]) {
                let e = acc.entry(g).or_default();
                e.0 += 1;
                e.1 += it.outcome.score;
            }
        }
        groups.insert(
            key.name(),
            acc.into_iter().map(|(g, (n, c))| (g, GroupStats { n, accuracy: c / n as f64 })).collect(),
        );
    }
    CellStats {
        n,
        correct,
        accuracy,
        ci95,
        abstained,
        abstention_rate: if n == 0 { 0.0 } else { abstained as f64 / n as f64 },
        unparsed,
        empty,
        missing,
        groups,
        formats,
    }
}

/// Aggregates a [`Scored`] into the report.
pub fn compute(rows: &[Sample], scored: Scored, cfg: &MetricsConfig) -> Report {
    let jobs: Vec<(&String, &String, &Vec<Item>)> =
        scored.cells.iter().flat_map(|(m, conds)| conds.iter().map(move |(c, items)| (m, c, items))).collect();
    let stats: Vec<CellStats> =
        jobs.par_iter().map(|(m, c, items)| cell_stats(m, c, items, rows, &scored, cfg)).collect();
    let mut cells: BTreeMap<String, BTreeMap<String, CellStats>> = BTreeMap::new();
    for ((m, c, _), s) in jobs.iter().zip(stats) {
        cells.entry((*m).clone()).or_default().insert((*c).clone(), s);
    }
    let derived = cells.keys().map(|m| (m.clone(), derived::derive(m, rows, &scored, &cells, cfg))).collect();
    Report { config: cfg.clone(), rows: rows.len(), scored, cells, derived }
}

impl Report {
    /// `per_question.parquet`: one row per scored prediction (model, condition,
    /// id, parent id, answer format, the response, the answer read from it, its
    /// score, and whether it abstained, was empty or unparsed), sorted by model,
    /// condition and id — to audit any figure against another scorer.
    pub fn per_question_batch(&self, rows: &[Sample]) -> Result<RecordBatch> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("model", DataType::Utf8, false),
            Field::new("condition", DataType::Utf8, false),
            Field::new("id", DataType::Utf8, false),
            Field::new("parent_id", DataType::Utf8, false),
            Field::new("answer_format", DataType::Utf8, false),
            Field::new("response", DataType::Utf8, false),
            Field::new("parsed_answer", DataType::Utf8, true),
            Field::new("score", DataType::Float64, false),
            Field::new("abstained", DataType::Boolean, false),
            Field::new("empty", DataType::Boolean, false),
            Field::new("unparsed", DataType::Boolean, false),
        ]));
        let mut text: Vec<StringBuilder> = (0..7).map(|_| StringBuilder::new()).collect();
        let mut score = Float64Builder::new();
        let mut flags: Vec<BooleanBuilder> = (0..3).map(|_| BooleanBuilder::new()).collect();
        for (model, conds) in &self.scored.cells {
            for (condition, items) in conds {
                for it in items {
                    let o = &it.outcome;
                    text[0].append_value(model);
                    text[1].append_value(condition);
                    text[2].append_value(&it.id);
                    text[3].append_value(&it.parent);
                    text[4].append_value(rows[it.row].answer_format.as_str());
                    text[5].append_value(&it.response);
                    text[6].append_option(o.answer.as_deref());
                    score.append_value(o.score);
                    flags[0].append_value(o.abstained);
                    flags[1].append_value(o.empty);
                    flags[2].append_value(!o.parsed && !o.abstained && !o.empty);
                }
            }
        }
        let mut cols: Vec<ArrayRef> = text.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef).collect();
        cols.push(Arc::new(score.finish()));
        cols.extend(flags.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
        RecordBatch::try_new(schema, cols).map_err(|e| Error::Bug(format!("per-question batch: {e}")))
    }
}

/// [`score_all`] then [`compute`].
pub fn metrics(rows: &[Sample], imported: &Imported, cfg: &MetricsConfig) -> Result<Report> {
    let scored = score_all(rows, &imported.predictions, cfg)?;
    Ok(compute(rows, scored, cfg))
}

/// A `meta:FIELD` grouping that no row carries is a typo: every row would fall in
/// one "(none)" group while the report names the field.
fn check_group_fields(rows: &[Sample], cfg: &MetricsConfig) -> Result<()> {
    let have: std::collections::BTreeSet<&str> = rows.iter().flat_map(|s| s.meta.keys().map(String::as_str)).collect();
    if let Some(f) = cfg.reference_answers.as_ref().filter(|f| !have.contains(f.as_str())) {
        let help = match crate::error::did_you_mean(f, have.iter().copied()) {
            Some(m) => format!("did you mean \"{m}\"?"),
            None => "name the meta field ingest keeps the reference answers in (the answer field's name, with \
                     [ingest] reference-answers)"
                .into(),
        };
        return Err(Error::one(
            Problem::new(
                Location::file("[metrics] reference-answers (--reference-answers)"),
                format!("no row has the meta field \"{f}\""),
            )
            .field("reference-answers")
            .help(help),
        ));
    }
    let problems: Vec<Problem> = cfg
        .group_by
        .iter()
        .filter_map(|g| match g {
            GroupKey::Meta(f) if !have.contains(f.as_str()) => Some(f),
            _ => None,
        })
        .map(|f| {
            let help = match crate::error::did_you_mean(f, have.iter().copied()) {
                Some(m) => format!("did you mean \"meta:{m}\"?"),
                None if have.is_empty() => {
                    "the rows carry no meta field: keep the field with [ingest.fields] meta".into()
                }
                None => format!("the rows' meta fields are: {}", have.iter().copied().collect::<Vec<_>>().join(", ")),
            };
            Problem::new(
                Location::file("[metrics] group-by (--group-by)"),
                format!("no row has the meta field \"{f}\""),
            )
            .field("group-by")
            .help(help)
        })
        .collect();
    if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
}

/// Rounds `x` (a fraction) to a percentage with two decimals, as leaderboards print.
pub fn percent2(x: f64) -> f64 {
    (x * 10000.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_is_seeded_and_brackets_the_mean() {
        let v: Vec<f64> = (0..200).map(|i| f64::from(u8::from(i % 4 != 0))).collect();
        let a = bootstrap_mean_ci(&v, 1000, 7, "metrics.bootstrap", "m/original");
        let b = bootstrap_mean_ci(&v, 1000, 7, "metrics.bootstrap", "m/original");
        assert_eq!(a, b);
        // Intervals move with the seed (on a grid of 1/200 a few seeds may coincide).
        let others: std::collections::BTreeSet<String> = (8..16)
            .map(|s| format!("{:?}", bootstrap_mean_ci(&v, 1000, s, "metrics.bootstrap", "m/original")))
            .collect();
        assert!(others.len() > 1, "{others:?}");
        assert!(a.0 < 0.75 && 0.75 < a.1, "{a:?}");
        assert!(a.1 - a.0 < 0.15);
        // The multinomial draw has the distribution of index resampling: compare
        // the interval with the textbook normal one, p ± 1.96·sqrt(p(1-p)/n).
        let half = 1.96 * (0.75f64 * 0.25 / 200.0).sqrt();
        assert!((a.0 - (0.75 - half)).abs() < 0.02 && (a.1 - (0.75 + half)).abs() < 0.02, "{a:?}");
        let mra: Vec<f64> = (0..500).map(|i| f64::from(i % 11) / 10.0).collect();
        let mean = mra.iter().sum::<f64>() / 500.0;
        let sd = (mra.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 500.0).sqrt();
        let m = bootstrap_mean_ci(&mra, 1000, 1, "s", "k");
        assert!((m.0 - (mean - 1.96 * sd / 500f64.sqrt())).abs() < 0.01, "{m:?} {mean} {sd}");
        assert!((m.1 - (mean + 1.96 * sd / 500f64.sqrt())).abs() < 0.01, "{m:?}");
        assert_eq!(bootstrap_mean_ci(&[0.3; 10], 1000, 1, "s", "k"), (0.3, 0.3));
        let neg = bootstrap_mean_ci(&[-1.0, 0.0, 1.0, 1.0], 1000, 1, "s", "k");
        assert!(neg.0 < 0.25 && neg.1 > 0.25 && neg.0 >= -1.0 && neg.1 <= 1.0, "{neg:?}");
        assert_eq!(bootstrap_mean_ci(&[], 1000, 7, "s", "k"), (0.0, 0.0));
    }

    /// With `reference_answers`, an answer to a question without options scores VQA
    /// accuracy over its question's references (texts, or annotators' objects); a
    /// question without them is scored against its gold and counted; abstentions score 0.
    #[test]
    fn open_answers_score_vqa_accuracy_over_their_references() {
        let open = |id: &str, gold: &str, refs: Option<&str>| {
            let mut s = Sample::new(id, "What is it?", gold);
            if let Some(r) = refs {
                s.meta.insert("answers".into(), r.into());
            }
            s
        };
        let mut yes_no = Sample::new("yn", "Is it?", "yes");
        yes_no.answer_format = sample::AnswerFormat::YesNo;
        let rows = vec![
            // 10 references, 2 say "two" (one as a digit): 0.6.
            open("a", "three", Some(r#"["three","three","three","three","three","three","three","three","Two","2"]"#)),
            // Annotators' objects, 4 of 5 agree: 1.
            open(
                "b",
                "soup",
                Some(
                    r#"[{"answer": "soup"}, {"answer": "soup"}, {"answer": "soup"}, {"answer": "soup"}, {"answer": "tea"}]"#,
                ),
            ),
            open("c", "cat", None),
            open("d", "dog", Some(r#"["dog","dog","dog","dog"]"#)),
            yes_no,
        ];
        let preds: Vec<Prediction> =
            [("a", "two"), ("b", "Soup."), ("c", "cat"), ("d", "I cannot see the image."), ("yn", "yes")]
                .iter()
                .enumerate()
                .map(|(i, (id, r))| Prediction::text("m", id, r, i as u64 + 1))
                .collect();
        let cfg = MetricsConfig { reference_answers: Some("answers".into()), ..MetricsConfig::default() };
        let scored = score_all(&rows, &preds, &cfg).unwrap();
        let got: Vec<(&str, f64)> =
            scored.cell("m", ORIGINAL).unwrap().iter().map(|i| (i.id.as_str(), i.outcome.score)).collect();
        let want = [("a", 0.6), ("b", 1.0), ("c", 1.0), ("d", 0.0), ("yn", 1.0)];
        for ((id, score), (wid, w)) in got.iter().zip(want) {
            assert_eq!(*id, wid);
            assert!((score - w).abs() < 1e-12, "{id}: {score}, want {w}");
        }
        // "c" and the yes/no question have no references: scored against their golds.
        assert_eq!((scored.by_references, scored.without_references), (3, 2));
        // Against the gold alone, "two" and "Soup." score 0 and 1.
        let plain = score_all(&rows, &preds, &MetricsConfig::default()).unwrap();
        let a = &plain.cell("m", ORIGINAL).unwrap()[0];
        assert_eq!((a.id.as_str(), a.outcome.score, plain.by_references), ("a", 0.0, 0));
        // A field no row has is an error naming the one they have.
        let typo = MetricsConfig { reference_answers: Some("answer".into()), ..MetricsConfig::default() };
        let e = score_all(&rows, &preds, &typo).unwrap_err().to_string();
        assert!(e.contains("no row has the meta field \"answer\"") && e.contains("did you mean \"answers\""), "{e}");
    }

    #[test]
    fn meta_lists_expand_into_groups() {
        let mut s = Sample::new("1", "q", "a");
        s.meta.insert("context_groups".into(), r#"["TXT","IMG"]"#.into());
        s.meta.insert("organ".into(), "head".into());
        assert_eq!(GroupKey::Meta("context_groups".into()).values(&s), vec!["TXT", "IMG"]);
        assert_eq!(GroupKey::Meta("organ".into()).values(&s), vec!["head"]);
        assert_eq!(GroupKey::QuestionType.values(&s), vec!["(none)"]);
        assert!(GroupKey::parse("meta:").is_err());
    }
}
