//! Blind-model filters: remove the questions that models answer without the
//! image, by a rule over their imported predictions (predictions ─▶
//! **filter** ─▶ prune).
//!
//! A rule names the conditions whose predictions count (`no_image`,
//! `caption`, `mirage`, …, or `original`), the models, and two thresholds:
//! a model *answers* a question when, under at least one listed condition,
//! it is right in at least `min-correct` of its samples for that question
//! (several predictions of one model for one id are samples here, not
//! duplicates); a question is *removed* when at least `min-models` of the
//! models answer it. A numeric answer counts as right at a score of 0.5 or
//! more (MRA), every other format at 1.
//!
//! Presets encode the published filters:
//! - `mmstar`: MMStar's coarse filter — text-only models (`no_image`), a
//!   question hit by more than 2 of them is removed (`min-models` 3, one try
//!   each: the majority of one sample is that sample);
//! - `mmmu-pro`: MMMU-Pro's — a model answers a question when right in more
//!   than half of its tries (the paper: 10) without the image; removed when at
//!   least 3 models answer it (the paper: 3 of 4);
//! - `emma`: EMMA's two rounds — text alone (`no_image`) or text with a
//!   caption (`caption`); removed when any model answers it in either;
//! - `bclean`: B-Clean's step 1 — removed when any model answers it in mirage
//!   mode (the image withheld, its absence unsaid).

// The crates below this one, under the module names the code uses.
use blindspot_core::{error, sample};
use blindspot_metrics as metrics;
use blindspot_predictions as predictions;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Location, Problem, Result};
use crate::metrics::{MetricsConfig, ORIGINAL, SAME_GOLD_KINDS};
use crate::predictions::Prediction;
use crate::sample::{Sample, id_cmp};

/// A score at or above this counts as right.
pub const CORRECT: f64 = 0.5;

/// A published filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    Mmstar,
    MmmuPro,
    Emma,
    Bclean,
}

impl Preset {
    pub const ALL: [Preset; 4] = [Preset::Mmstar, Preset::MmmuPro, Preset::Emma, Preset::Bclean];

    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Mmstar => "mmstar",
            Preset::MmmuPro => "mmmu-pro",
            Preset::Emma => "emma",
            Preset::Bclean => "bclean",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Preset, String> {
        Preset::ALL.into_iter().find(|p| p.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = Preset::ALL.iter().map(|p| p.as_str()).collect();
            format!("filter preset \"{s}\" is not one of {}", names.join(", "))
        })
    }

    /// The preset's rule, for `models` (None: every model with predictions).
    pub fn rule(self, models: Option<Vec<String>>) -> Rule {
        let (conditions, min_models, min_correct): (&[&str], MinModels, MinCorrect) = match self {
            Preset::Mmstar => (&["no_image"], MinModels::Count(3), MinCorrect::Majority),
            Preset::MmmuPro => (&["no_image"], MinModels::Count(3), MinCorrect::Majority),
            Preset::Emma => (&["no_image", "caption"], MinModels::Count(1), MinCorrect::Majority),
            Preset::Bclean => (&["mirage"], MinModels::Count(1), MinCorrect::Any),
        };
        Rule {
            preset: Some(self),
            models,
            conditions: conditions.iter().map(|c| c.to_string()).collect(),
            min_models,
            min_correct,
        }
    }

    /// What the published protocol did, for the report.
    pub fn source(self) -> &'static str {
        match self {
            Preset::Mmstar => "MMStar's coarse filter: 8 text-only LLMs, a sample hit by more than 2 removed",
            Preset::MmmuPro => {
                "MMMU-Pro's filter: 4 text-only LLMs, 10 tries each; a model answers when right more than 5 times; removed when at least 3 models answer"
            }
            Preset::Emma => "EMMA's filter: removed when answerable from the text alone or from the text and a caption",
            Preset::Bclean => {
                "B-Clean step 1: the union over candidate models of the questions answered in mirage mode"
            }
        }
    }
}

/// How many models must answer a question for it to be removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MinModels {
    Count(usize),
    All,
}

impl MinModels {
    pub fn parse(s: &str) -> std::result::Result<MinModels, String> {
        match s {
            "all" => Ok(MinModels::All),
            _ => match s.parse::<usize>() {
                Ok(n) if n >= 1 => Ok(MinModels::Count(n)),
                _ => Err(format!("min-models \"{s}\" is not a whole number from 1 or \"all\"")),
            },
        }
    }
}

/// How many of its samples a model must get right to answer a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MinCorrect {
    Count(usize),
    /// At least one.
    Any,
    /// More than half of the model's samples for that question and condition.
    Majority,
    /// Every sample.
    All,
}

impl MinCorrect {
    pub fn parse(s: &str) -> std::result::Result<MinCorrect, String> {
        match s {
            "any" => Ok(MinCorrect::Any),
            "majority" => Ok(MinCorrect::Majority),
            "all" => Ok(MinCorrect::All),
            _ => match s.parse::<usize>() {
                Ok(n) if n >= 1 => Ok(MinCorrect::Count(n)),
                _ => Err(format!("min-correct \"{s}\" is not a whole number from 1, \"any\", \"majority\" or \"all\"")),
            },
        }
    }

    fn holds(self, right: usize, samples: usize) -> bool {
        samples > 0
            && match self {
                MinCorrect::Count(m) => right >= m,
                MinCorrect::Any => right >= 1,
                MinCorrect::Majority => 2 * right > samples,
                MinCorrect::All => right == samples,
            }
    }

    fn text(self) -> String {
        match self {
            MinCorrect::Count(1) | MinCorrect::Any => "right in at least one of its samples".into(),
            MinCorrect::Count(m) => format!("right in at least {m} of its samples"),
            MinCorrect::Majority => "right in more than half of its samples".into(),
            MinCorrect::All => "right in every one of its samples".into(),
        }
    }
}

/// A validated filter rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub preset: Option<Preset>,
    /// `None`: every model with predictions under one of the conditions.
    pub models: Option<Vec<String>>,
    pub conditions: Vec<String>,
    pub min_models: MinModels,
    pub min_correct: MinCorrect,
}

impl Rule {
    /// Conditions a filter can read: a sample's own row or a kind that keeps its question and gold.
    pub fn check_conditions(conditions: &[String]) -> std::result::Result<(), String> {
        if conditions.is_empty() {
            return Err("a filter needs at least one condition (e.g. conditions = [\"no_image\"])".into());
        }
        for c in conditions {
            if c != ORIGINAL && !SAME_GOLD_KINDS.contains(&c.as_str()) {
                return Err(format!(
                    "condition \"{c}\" is not one a filter can score against the question's own gold: {}, {}",
                    ORIGINAL,
                    SAME_GOLD_KINDS.join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// One model's part in the filter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModelStats {
    pub model: String,
    /// Questions with at least one prediction of this model under a listed condition.
    pub questions_predicted: usize,
    /// Fewest and most samples for one question and condition.
    pub samples_min: usize,
    pub samples_max: usize,
    /// Questions this model answers by the rule.
    pub answered: usize,
}

/// A removed question and the models that answered it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FilterRemoved {
    pub id: String,
    pub models: Vec<String>,
}

/// The rule as applied (`report/filter.json`'s `rule`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuleOut {
    pub preset: Option<Preset>,
    /// What the published protocol did, for a preset.
    pub source: Option<String>,
    pub conditions: Vec<String>,
    /// Models answering needed for a removal (resolved: `all` is the model count).
    pub min_models: usize,
    pub min_correct: String,
    /// The rule in words.
    pub text: String,
}

/// Everything the filter decided (`report/filter.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FilterReport {
    pub rule: RuleOut,
    pub n_questions: usize,
    pub models: Vec<ModelStats>,
    /// Predictions under a listed condition whose id names no question.
    pub unknown_predictions: usize,
    /// The first of them (up to [`crate::metrics::LISTED`]), for the warning
    /// on the terminal; `filter.json` keeps the count.
    #[serde(skip)]
    #[schemars(skip)]
    pub unknown_first: Vec<crate::metrics::Located>,
    /// Questions no listed model predicted under a listed condition (kept: no evidence).
    pub unpredicted: usize,
    pub kept_count: usize,
    /// Removed ids, sorted by id.
    pub removed: Vec<FilterRemoved>,
}

impl FilterReport {
    pub fn removed_ids(&self) -> BTreeSet<&str> {
        self.removed.iter().map(|r| r.id.as_str()).collect()
    }

    /// The warning for predictions whose id names no question, with the
    /// first ones located; `None` when every id is known.
    pub fn unknown_warning(&self) -> Option<String> {
        use std::fmt::Write as _;
        let n = self.unknown_predictions;
        if n == 0 {
            return None;
        }
        let mut text = format!(
            "warning: {n} prediction{} under {} name{} ids that are not among the questions (skipped; results of a \
             `blindspot export` map to ids through --manifest):",
            if n == 1 { "" } else { "s" },
            self.rule.conditions.join(" or "),
            if n == 1 { "s" } else { "" },
        );
        for u in &self.unknown_first {
            let _ = write!(text, "\n  {}: model \"{}\", id \"{}\"", u.location, u.model, u.id);
        }
        if n > self.unknown_first.len() {
            let _ = write!(text, "\n  ... and {} more", n - self.unknown_first.len());
        }
        Some(text)
    }

    /// One line for the terminal and the card.
    pub fn summary(&self) -> String {
        format!(
            "{}: removed {} of {} questions ({}); kept {}",
            self.rule.preset.map_or_else(|| "filter".to_string(), |p| format!("filter preset {}", p.as_str())),
            self.removed.len(),
            self.n_questions,
            self.rule.text,
            self.kept_count
        )
    }
}

/// Applies `rule` to `questions` (samples, not variant rows) with every
/// imported prediction; predictions of other conditions are ignored. Errors
/// point at `origin` (the pipeline file, or the command line).
pub fn apply(
    questions: &[Sample],
    predictions: &[Prediction],
    rule: &Rule,
    cfg: &MetricsConfig,
    origin: &Location,
) -> Result<FilterReport> {
    let here = || origin.clone();
    Rule::check_conditions(&rule.conditions).map_err(|m| Error::one(Problem::new(here(), m).field("conditions")))?;
    if let Some(models) = &rule.models {
        crate::predictions::check_models(models, "models")
            .map_err(|m| Error::one(Problem::new(here(), m).field("models")))?;
    }
    let Tallied { tally, unknown, unknown_first } = tally(questions, predictions, rule, cfg);
    let models: Vec<String> = match &rule.models {
        Some(m) => m.clone(),
        None => tally.keys().map(|m| m.to_string()).collect(),
    };
    let min_models = match rule.min_models {
        MinModels::All => models.len(),
        MinModels::Count(k) => k,
    };
    let problems = rule_problems(rule, predictions, &tally, &models, min_models, origin);
    if !problems.is_empty() {
        return Err(Error::Invalid(problems));
    }
    let (stats, answered_by) = answered(&tally, &models, rule.min_correct);
    let predicted: BTreeSet<usize> = tally.values().flat_map(|q| q.keys().copied()).collect();
    let mut removed: Vec<FilterRemoved> = answered_by
        .into_iter()
        .filter(|(_, ms)| ms.len() >= min_models)
        .map(|(row, models)| FilterRemoved { id: questions[row].id.clone(), models })
        .collect();
    removed.sort_by(|a, b| id_cmp(&a.id, &b.id));
    Ok(FilterReport {
        rule: RuleOut {
            preset: rule.preset,
            source: rule.preset.map(|p| p.source().to_string()),
            conditions: rule.conditions.clone(),
            min_models,
            min_correct: match rule.min_correct {
                MinCorrect::Count(m) => m.to_string(),
                MinCorrect::Any => "any".into(),
                MinCorrect::Majority => "majority".into(),
                MinCorrect::All => "all".into(),
            },
            text: rule_text(rule, &models, min_models),
        },
        n_questions: questions.len(),
        models: stats,
        unknown_predictions: unknown,
        unknown_first,
        unpredicted: questions.len() - predicted.len(),
        kept_count: questions.len() - removed.len(),
        removed,
    })
}

/// Per model, per question row: condition → (right, samples).
type Tally<'p> = BTreeMap<&'p str, BTreeMap<usize, BTreeMap<String, (usize, usize)>>>;

/// The rule's predictions scored and counted, and those whose id names no question.
struct Tallied<'p> {
    tally: Tally<'p>,
    unknown: usize,
    unknown_first: Vec<crate::metrics::Located>,
}

/// Scores every prediction the rule reads (its conditions, its models) against
/// its question.
fn tally<'p>(questions: &[Sample], predictions: &'p [Prediction], rule: &Rule, cfg: &MetricsConfig) -> Tallied<'p> {
    let index: HashMap<&str, usize> = questions.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect();
    let wanted: BTreeSet<&str> = rule.conditions.iter().map(String::as_str).collect();
    let mut out = Tallied { tally: BTreeMap::new(), unknown: 0, unknown_first: Vec::new() };
    for p in predictions {
        let condition = match p.id.rsplit_once("::") {
            Some((_, kind)) if !index.contains_key(p.id.as_str()) => kind,
            _ => ORIGINAL,
        };
        if !wanted.contains(condition) || rule.models.as_ref().is_some_and(|m| !m.contains(&p.model)) {
            continue;
        }
        let Some((row, condition)) = crate::metrics::resolve(&index, questions, &p.id) else {
            out.unknown += 1;
            if out.unknown_first.len() < crate::metrics::LISTED {
                out.unknown_first.push(crate::metrics::Located {
                    location: p.loc.to_string(),
                    model: p.model.clone(),
                    id: p.id.clone(),
                });
            }
            continue;
        };
        let outcome = crate::predictions::parse::score_with(&questions[row], &p.response, cfg.numeric, cfg.mra);
        let e = out.tally.entry(p.model.as_str()).or_default().entry(row).or_default().entry(condition).or_default();
        e.0 += usize::from(outcome.score >= CORRECT);
        e.1 += 1;
    }
    out
}

/// What keeps the rule from meaning what it says on these predictions: a model
/// without predictions under its conditions, more models needed than there are,
/// a min-correct no model's samples can reach.
fn rule_problems(
    rule: &Rule,
    predictions: &[Prediction],
    tally: &Tally<'_>,
    models: &[String],
    min_models: usize,
    origin: &Location,
) -> Vec<Problem> {
    let here = || origin.clone();
    let mut problems = Vec::new();
    for m in models {
        if !tally.contains_key(m.as_str()) {
            let known: BTreeSet<&str> = predictions.iter().map(|p| p.model.as_str()).collect();
            let mut p = Problem::new(
                here(),
                format!("model \"{m}\" has no predictions under {}", rule.conditions.join(" or ")),
            )
            .field("models")
            .help(format!(
                "models with predictions: {}; a condition's predictions answer ids <id>::<condition>",
                known.into_iter().collect::<Vec<_>>().join(", ")
            ));
            if let Some(d) = crate::error::did_you_mean(m, predictions.iter().map(|p| p.model.as_str())) {
                p = p.help(format!("did you mean \"{d}\"?"));
            }
            problems.push(p);
        }
    }
    if models.is_empty() {
        problems
            .push(Problem::new(here(), format!("no model has predictions under {}", rule.conditions.join(" or "))).help(
            "a condition's predictions answer ids <id>::<condition> (e.g. q1::no_image); import them in [predictions]",
        ));
    }
    if !models.is_empty() && min_models > models.len() {
        problems.push(
            Problem::new(
                here(),
                format!(
                    "the rule needs {min_models} models to answer a question but only {} {} predictions under {}",
                    models.len(),
                    if models.len() == 1 { "has" } else { "have" },
                    rule.conditions.join(" or ")
                ),
            )
            .field("min-models")
            .help("import the other models' predictions, or lower min-models (a preset's threshold is its paper's: write the rule yourself to change it)"),
        );
    }
    // A threshold above every model's samples for a question removes nothing
    // while the report describes a rule.
    let most_samples = models
        .iter()
        .filter_map(|m| tally.get(m.as_str()))
        .flat_map(|per_q| per_q.values().flat_map(|conds| conds.values().map(|&(_, n)| n)))
        .max();
    if let (MinCorrect::Count(k), Some(most)) = (rule.min_correct, most_samples)
        && k > most
    {
        problems.push(
            Problem::new(
                here(),
                format!(
                    "min-correct {k} asks a model to be right in {k} of its samples for a question, but no model has \
                     more than {most} for one question under {}: the rule could remove nothing",
                    rule.conditions.join(" or ")
                ),
            )
            .field("min-correct")
            .help(format!(
                "write min-correct {most} or less, or \"majority\" / \"all\" (relative to each model's samples), or \
                 import the models' other tries"
            )),
        );
    }
    problems
}

/// Each model's counts, and per question row the models that answer it as the
/// rule's min-correct asks.
fn answered(
    tally: &Tally<'_>,
    models: &[String],
    min_correct: MinCorrect,
) -> (Vec<ModelStats>, BTreeMap<usize, Vec<String>>) {
    let mut answered_by: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut stats = Vec::new();
    for m in models {
        let per_q = &tally[m.as_str()];
        let mut st = ModelStats {
            model: m.clone(),
            questions_predicted: per_q.len(),
            samples_min: usize::MAX,
            samples_max: 0,
            answered: 0,
        };
        for (&row, conds) in per_q {
            for &(_, n) in conds.values() {
                st.samples_min = st.samples_min.min(n);
                st.samples_max = st.samples_max.max(n);
            }
            if conds.values().any(|&(right, n)| min_correct.holds(right, n)) {
                st.answered += 1;
                answered_by.entry(row).or_default().push(m.clone());
            }
        }
        if st.samples_min == usize::MAX {
            st.samples_min = 0;
        }
        stats.push(st);
    }
    (stats, answered_by)
}

/// The rule in words, as the report states it.
fn rule_text(rule: &Rule, models: &[String], min_models: usize) -> String {
    let conditions_text = rule
        .conditions
        .iter()
        .map(|c| match c.as_str() {
            ORIGINAL => "with the image (original)".to_string(),
            "no_image" => "from the text alone (no_image)".to_string(),
            "caption" => "from the text and a caption (caption)".to_string(),
            "mirage" => "in mirage mode (mirage)".to_string(),
            other => format!("under {other}"),
        })
        .collect::<Vec<_>>()
        .join(" or ");
    let who = if min_models == 1 {
        format!("any of the {} models", models.len())
    } else if min_models == models.len() {
        format!("all {} models", models.len())
    } else {
        format!("at least {min_models} of the {} models", models.len())
    };
    format!(
        "removed when {who} ({}) answer it {conditions_text}, a model answering when {}",
        models.join(", "),
        rule.min_correct.text()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::AnswerFormat;

    /// Two-option questions q1..qN, gold A.
    fn questions(n: usize) -> Vec<Sample> {
        (1..=n)
            .map(|i| {
                let mut s = Sample::new(format!("q{i}"), format!("Question {i}?"), "yes");
                s.answer_format = AnswerFormat::MultipleChoice;
                s.options = vec!["yes".into(), "no".into()];
                s.answer_index = Some(0);
                s
            })
            .collect()
    }

    /// `total` samples of `model` for `id`, the first `right` of them right.
    fn samples(model: &str, id: &str, right: usize, total: usize) -> Vec<Prediction> {
        (0..total).map(|k| Prediction::text(model, id, if k < right { "A" } else { "B" }, k as u64 + 1)).collect()
    }

    fn removed(r: &FilterReport) -> Vec<&str> {
        r.removed.iter().map(|x| x.id.as_str()).collect()
    }

    #[test]
    fn mmmu_pro_removes_what_three_models_answer_in_most_of_their_tries() {
        // Right answers out of 10 tries (q7: m1 has 9 tries) per model m1..m4, derived by the paper's
        // rule: a model answers when right more than 5 times; removed when ≥ 3 of the 4 answer.
        let table: [(&str, [(usize, usize); 4]); 6] = [
            ("q1", [(6, 10), (6, 10), (6, 10), (0, 10)]),     // 3 answer → removed
            ("q2", [(5, 10), (10, 10), (10, 10), (10, 10)]),  // 5 of 10 is no majority; still 3 → removed
            ("q3", [(5, 10), (5, 10), (10, 10), (10, 10)]),   // 2 → kept
            ("q4", [(6, 10), (6, 10), (0, 10), (0, 10)]),     // 2 → kept
            ("q5", [(10, 10), (10, 10), (10, 10), (10, 10)]), // 4 → removed
            ("q7", [(5, 9), (6, 10), (4, 10), (10, 10)]),     // 5 of 9 is a majority: 3 → removed
        ];
        let mut preds = Vec::new();
        for (id, row) in table {
            for (m, (right, total)) in row.iter().enumerate() {
                preds.extend(samples(&format!("m{}", m + 1), &format!("{id}::no_image"), *right, *total));
            }
        }
        // Answers with the image never count for a text-only filter.
        preds.extend(samples("m1", "q3", 10, 10));
        let qs = questions(7);
        let r =
            apply(&qs, &preds, &Preset::MmmuPro.rule(None), &MetricsConfig::default(), &Location::file("f")).unwrap();
        assert_eq!(removed(&r), vec!["q1", "q2", "q5", "q7"]);
        assert_eq!(r.removed[0].models, vec!["m1", "m2", "m3"]);
        assert_eq!((r.n_questions, r.kept_count, r.unpredicted), (7, 3, 1), "q6 has no predictions: kept");
        assert_eq!((r.models[0].samples_min, r.models[0].samples_max), (9, 10));
        assert_eq!(r.models.iter().map(|m| m.answered).collect::<Vec<_>>(), vec![4, 5, 4, 4]);
        assert_eq!(r.rule.min_models, 3);
        assert!(r.rule.text.contains("at least 3 of the 4 models"), "{}", r.rule.text);
        // With two models the paper's rule cannot be met: an error, not a silent "removed none".
        let two = Preset::MmmuPro.rule(Some(vec!["m1".into(), "m2".into()]));
        let e = apply(&qs, &preds, &two, &MetricsConfig::default(), &Location::file("f")).unwrap_err().to_string();
        assert!(e.contains("needs 3 models") && e.contains("only 2"), "{e}");
    }

    #[test]
    fn mmstar_removes_what_more_than_two_of_eight_text_only_models_answer() {
        // Hits per question among 8 models with one try each: q1 2 → kept, q2 3 → removed,
        // q3 0 → kept, q4 8 → removed.
        let hits = [("q1", 2), ("q2", 3), ("q3", 0), ("q4", 8)];
        let mut preds = Vec::new();
        for (id, h) in hits {
            for m in 0..8 {
                preds.extend(samples(&format!("llm{m}"), &format!("{id}::no_image"), usize::from(m < h), 1));
            }
        }
        let r =
            apply(&questions(4), &preds, &Preset::Mmstar.rule(None), &MetricsConfig::default(), &Location::file("f"))
                .unwrap();
        assert_eq!(removed(&r), vec!["q2", "q4"]);
        assert_eq!(r.removed[0].models, vec!["llm0", "llm1", "llm2"]);
        assert_eq!(r.kept_count, 2);
    }

    #[test]
    fn emma_removes_what_text_or_text_and_caption_answers() {
        // q1: m2 right only with a caption; q2: m1 right from the text alone; q3: right only
        // with the image (not a filter condition); q4: wrong everywhere.
        let mut preds = samples("m1", "q1::no_image", 0, 1);
        preds.extend(samples("m2", "q1::caption", 1, 1));
        preds.extend(samples("m1", "q2::no_image", 1, 1));
        preds.extend(samples("m2", "q2::caption", 0, 1));
        preds.extend(samples("m1", "q3", 1, 1));
        preds.extend(samples("m1", "q3::no_image", 0, 1));
        preds.extend(samples("m2", "q4::caption", 0, 1));
        let r = apply(&questions(4), &preds, &Preset::Emma.rule(None), &MetricsConfig::default(), &Location::file("f"))
            .unwrap();
        assert_eq!(removed(&r), vec!["q1", "q2"]);
        assert_eq!(r.removed[0].models, vec!["m2"]);
    }

    #[test]
    fn bclean_removes_what_any_model_answers_in_mirage_mode_in_any_sample() {
        let mut preds = samples("m1", "q1::mirage", 1, 3);
        preds.extend(samples("m1", "q2::mirage", 0, 3));
        preds.extend(samples("m2", "q3::no_image", 1, 1));
        let r =
            apply(&questions(3), &preds, &Preset::Bclean.rule(None), &MetricsConfig::default(), &Location::file("f"))
                .unwrap();
        assert_eq!(removed(&r), vec!["q1"]);
        assert_eq!(r.models.len(), 1, "m2 has no mirage predictions: not a candidate");
    }

    #[test]
    fn a_written_rule_and_its_errors() {
        let mut preds = samples("m1", "q1::no_image", 2, 3);
        preds.extend(samples("m2", "q1::no_image", 3, 3));
        preds.extend(samples("m1", "q2::no_image", 3, 3));
        preds.extend(samples("m2", "q9::no_image", 3, 3));
        let rule = Rule {
            preset: None,
            models: None,
            conditions: vec!["no_image".into()],
            min_models: MinModels::All,
            min_correct: MinCorrect::All,
        };
        let r = apply(&questions(2), &preds, &rule, &MetricsConfig::default(), &Location::file("f")).unwrap();
        assert_eq!(removed(&r), Vec::<&str>::new(), "m1 misses one of q1's samples; m2 never predicted q2");
        assert_eq!(r.unknown_predictions, 3);
        let r = apply(
            &questions(2),
            &preds,
            &Rule { min_correct: MinCorrect::Count(2), ..rule.clone() },
            &MetricsConfig::default(),
            &Location::file("f"),
        )
        .unwrap();
        assert_eq!(removed(&r), vec!["q1"]);
        let bad = Rule { conditions: vec!["option_shuffle".into()], ..rule.clone() };
        let e = apply(&questions(2), &preds, &bad, &MetricsConfig::default(), &Location::file("f"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("option_shuffle") && e.contains("no_image"), "{e}");
        let typo = Rule { models: Some(vec!["m3".into()]), ..rule };
        let e = apply(&questions(2), &preds, &typo, &MetricsConfig::default(), &Location::file("f"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"m3\" has no predictions under no_image"), "{e}");
        assert_eq!(MinModels::parse("0").unwrap_err(), "min-models \"0\" is not a whole number from 1 or \"all\"");
        assert!(Preset::parse("mmstar2").unwrap_err().contains("mmstar, mmmu-pro, emma, bclean"));
    }
}
