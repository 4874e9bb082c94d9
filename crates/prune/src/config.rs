//! Pruning settings: the method, its budget, allocation, ranking and stop
//! rule, what one unit of removal is, and AFLite's settings; each with the
//! names a pipeline file writes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::diagnose::DiagnoseConfig;
use crate::sample::{AnswerFormat, Sample};

/// A count, or a fraction of the benchmark's size before pruning.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Amount {
    Count(usize),
    Fraction(f64),
}

impl Amount {
    /// The count this amount means for `n` questions (fractions round to nearest).
    pub fn resolve(self, n: usize) -> usize {
        match self {
            Amount::Count(c) => c,
            Amount::Fraction(f) => (f * n as f64).round() as usize,
        }
    }

    /// Parses a count (`50`) or a percentage (`20%`). A bare fraction is refused:
    /// `1.0` could be one question or all of them.
    pub fn parse(s: &str) -> std::result::Result<Amount, String> {
        let t = s.trim();
        if let Some(p) = t.strip_suffix('%') {
            let v: f64 = p.trim().parse().map_err(|_| format!("\"{s}\" is not a percentage"))?;
            return Amount::fraction(v / 100.0).ok_or_else(|| format!("\"{s}\" is not between 0% and 100%"));
        }
        if let Ok(c) = t.parse::<usize>() {
            return Ok(Amount::Count(c));
        }
        Err(match t.parse::<f64>() {
            Ok(v) if v.is_finite() => Amount::not_a_fraction(v),
            _ => format!("\"{s}\" is neither a count nor a percentage"),
        })
    }

    /// Why a bare number with a decimal point is no amount.
    pub fn not_a_fraction(v: f64) -> String {
        let pct = crate::io::r6(v * 100.0);
        format!(
            "{v} is neither a count nor a percentage: is it {v} questions or {pct}% of them? Write a count without a \
             decimal point, or a share as a percentage (\"{pct}%\")"
        )
    }

    fn fraction(v: f64) -> Option<Amount> {
        (v.is_finite() && (0.0..=1.0).contains(&v)).then_some(Amount::Fraction(v))
    }

    pub fn describe(self) -> String {
        match self {
            Amount::Count(c) => c.to_string(),
            Amount::Fraction(f) => format!("{}%", crate::io::r6(f * 100.0)),
        }
    }
}

/// Which pruner runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    /// Iterative Bias Pruning on TsT-RF's s(x).
    Ibp,
    /// Matched random removal: IBP's budget, batches and floors, random order.
    Random,
    /// AFLite: predictability under linear probes on random partitions.
    Aflite,
    /// B-Clean: the union of questions candidate models answer in mirage mode
    /// (needs `[predictions]`).
    Bclean,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Ibp => "ibp",
            Method::Random => "random",
            Method::Aflite => "aflite",
            Method::Bclean => "bclean",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Method, String> {
        match s {
            "ibp" => Ok(Method::Ibp),
            "random" => Ok(Method::Random),
            "aflite" => Ok(Method::Aflite),
            "bclean" => Ok(Method::Bclean),
            _ => Err(format!("method \"{s}\" is not \"ibp\", \"random\", \"aflite\" or \"bclean\"")),
        }
    }
}

/// How the budget is shared out (`docs/tst-protocol.md`: `global`, `per-format`, `per-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Allocation {
    /// One ranking over every question.
    Global,
    /// Each answer format pruned separately, the budget split in proportion to size.
    PerFormat,
    /// Each question type pruned separately, the budget split in proportion to size.
    PerType,
}

impl Allocation {
    /// The allocation key of a question of this type and format.
    pub fn key_of(self, question_type: Option<&str>, format: AnswerFormat) -> String {
        match self {
            Allocation::Global => "all".into(),
            Allocation::PerFormat => format.as_str().into(),
            Allocation::PerType => question_type.unwrap_or("(no type)").into(),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Allocation::Global => "global",
            Allocation::PerFormat => "per-format",
            Allocation::PerType => "per-type",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Allocation, String> {
        match s.replace('_', "-").as_str() {
            "global" => Ok(Allocation::Global),
            "per-format" => Ok(Allocation::PerFormat),
            "per-type" => Ok(Allocation::PerType),
            _ => Err(format!("allocation \"{s}\" is not \"global\", \"per-format\" or \"per-type\"")),
        }
    }

    pub fn key(self, s: &Sample) -> String {
        self.key_of(s.question_type.as_deref(), s.answer_format)
    }
}

/// What IBP ranks by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rank {
    /// s(x), the blind model's probability of the gold answer (numeric: MRA): the
    /// TsT release's ranking.
    S,
    /// s(x) minus chance for multiple choice (the default), so 2-option questions do not
    /// crowd the top: a 2-option question at s = 0.6 is less of a shortcut than a
    /// 4-option one at 0.6. Other formats rank by s(x).
    SMinusChance,
}

impl Rank {
    /// The ranking in words, with its departure from the TsT release stated.
    pub fn describe(self) -> &'static str {
        match self {
            Rank::S => "s(x), as the TsT release ranks",
            Rank::SMinusChance => "s(x) - chance for multiple choice (a departure: the TsT release ranks by s(x))",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Rank::S => "s",
            Rank::SMinusChance => "s-minus-chance",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Rank, String> {
        match s.replace('_', "-").as_str() {
            "s" => Ok(Rank::S),
            "s-minus-chance" => Ok(Rank::SMinusChance),
            _ => Err(format!("rank \"{s}\" is not \"s\" or \"s-minus-chance\"")),
        }
    }
}

/// When IBP stops before its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StopRule {
    /// The verdict decides (default): nothing is removed unless blind accuracy is
    /// above its label-permutation null, only groups above their own null are
    /// pruned, and a group stops once its blind accuracy reaches its null's
    /// 95th percentile.
    Null,
    /// The earlier rule: stop once blind accuracy's 95% CI reaches chance.
    Chance,
    /// Prune to the budget whatever the evidence.
    Budget,
}

impl StopRule {
    pub fn as_str(self) -> &'static str {
        match self {
            StopRule::Null => "null",
            StopRule::Chance => "chance",
            StopRule::Budget => "budget",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<StopRule, String> {
        match s {
            "null" => Ok(StopRule::Null),
            "chance" => Ok(StopRule::Chance),
            "budget" => Ok(StopRule::Budget),
            _ => Err(format!("stop \"{s}\" is not \"null\", \"chance\" or \"budget\"")),
        }
    }
}

/// What pruning removes at once: a question, or every question of a unit, so
/// a benchmark scored by pairs or by image keeps its units whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// The fold group when diagnose groups folds (`group-by`), else the question.
    Default,
    Question,
    /// The questions on one image (the first image's sha256, else its path).
    Image,
    /// The questions on one video (the first video's sha256, else its path).
    Video,
    /// The questions sharing a meta field's value.
    Meta(String),
}

impl Unit {
    /// Parses `question`, `image`, `video` or `meta:FIELD`.
    pub fn parse(s: &str) -> std::result::Result<Unit, String> {
        match s.split_once(':') {
            None if s == "question" => Ok(Unit::Question),
            None if s == "image" => Ok(Unit::Image),
            None if s == "video" => Ok(Unit::Video),
            Some(("meta", f)) if !f.is_empty() => Ok(Unit::Meta(f.to_string())),
            _ => Err(format!("unit \"{s}\" is not \"question\", \"image\", \"video\" or \"meta:FIELD\"")),
        }
    }

    /// The unit in force under `diagnose`'s fold grouping, as a fold grouping
    /// (`None`: one question per unit).
    pub fn grouping(&self, diagnose: &DiagnoseConfig) -> Option<crate::diagnose::GroupBy> {
        use crate::diagnose::GroupBy;
        match self {
            Unit::Default => diagnose.group_by.clone(),
            Unit::Question => None,
            Unit::Image => Some(GroupBy::Image),
            Unit::Video => Some(GroupBy::Video),
            Unit::Meta(f) => Some(GroupBy::Meta(f.clone())),
        }
    }

    /// `meta:FIELD` needs the field on every question: a question without it
    /// would be a unit of its own, pruned alone while the report says its units
    /// are the field's values. `at` is where the unit was set (the pipeline
    /// file, or the command line).
    pub fn check_rows(&self, samples: &[Sample], at: &crate::error::Location) -> crate::error::Result<()> {
        use crate::error::{Error, Problem, did_you_mean};
        let Unit::Meta(field) = self else { return Ok(()) };
        let without: Vec<&str> =
            samples.iter().filter(|s| !s.meta.contains_key(field)).map(|s| s.id.as_str()).collect();
        if without.is_empty() {
            return Ok(());
        }
        let shown: Vec<String> = without.iter().take(3).map(|id| format!("\"{id}\"")).collect();
        let have: std::collections::BTreeSet<&str> =
            samples.iter().flat_map(|s| s.meta.keys().map(String::as_str)).collect();
        let help = match did_you_mean(field, have.iter().copied()) {
            Some(m) if m != *field => format!("did you mean unit = \"meta:{m}\"?"),
            _ => "give every question the field (a source field reaches meta through [ingest.fields] meta), or \
                  prune by \"question\" or \"image\""
                .to_string(),
        };
        Err(Error::one(
            Problem::new(
                at.clone(),
                format!(
                    "unit \"meta:{field}\": {} of {} questions have no meta field \"{field}\" ({}{})",
                    without.len(),
                    samples.len(),
                    if without.len() > shown.len() { "the first: " } else { "" },
                    shown.join(", ")
                ),
            )
            .field("prune.unit")
            .help(help),
        ))
    }

    /// The unit in words, resolved: "question", "image", "meta:FIELD", "question text".
    pub fn describe(&self, diagnose: &DiagnoseConfig) -> String {
        use crate::diagnose::GroupBy;
        match self.grouping(diagnose) {
            None => "question".into(),
            Some(GroupBy::Image) => "image".into(),
            Some(GroupBy::ImageCluster(t)) => format!("near-duplicate image cluster (phash and dhash within {t} bits)"),
            Some(GroupBy::Video) => "video".into(),
            Some(GroupBy::Question) => "question text".into(),
            Some(GroupBy::Meta(f)) => format!("meta:{f}"),
        }
    }
}

/// AFLite's settings (Le Bras et al. 2020, Algorithm 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AfliteConfig {
    /// Random partitions per round (m; the paper's 64).
    pub partitions: usize,
    /// Training share of each partition (t, as a fraction of what remains).
    pub train_fraction: f64,
    /// Predictability at or above which an item may go (τ; the paper's 0.75).
    pub tau: f64,
    /// What the linear probes see.
    pub representation: Representation,
}

impl Default for AfliteConfig {
    fn default() -> Self {
        AfliteConfig { partitions: 64, train_fraction: 0.8, tau: 0.75, representation: Representation::Features }
    }
}

/// AFLite's representation of a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Representation {
    /// TsT's non-visual features, fit on each partition's training share.
    #[default]
    Features,
    /// Sentence embeddings (the paper's choice): multiple choice, the question's
    /// embedding then each option's in position order (zero-padded to the
    /// group's most options); other formats, the question+options text's embedding.
    Embeddings,
}

impl Representation {
    pub fn as_str(self) -> &'static str {
        match self {
            Representation::Features => "features",
            Representation::Embeddings => "embeddings",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Representation, String> {
        match s {
            "features" => Ok(Representation::Features),
            "embeddings" => Ok(Representation::Embeddings),
            _ => Err(format!("representation \"{s}\" is not \"features\" or \"embeddings\"")),
        }
    }
}

/// Settings of a pruning run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PruneConfig {
    pub method: Method,
    /// Total questions to remove (default 10%).
    pub budget: Amount,
    /// Questions removed per iteration (IBP b, AFLite k; default 50).
    pub batch: Amount,
    /// No question type falls below this many questions (default 10).
    pub floor: usize,
    /// IBP stops once the largest score is at or below this.
    pub threshold: Option<f64>,
    pub allocation: Allocation,
    /// Ranking score of multiple-choice questions (others always use s).
    pub rank: Rank,
    pub aflite: AfliteConfig,
    /// B-Clean: candidate models (`None`: every model with mirage predictions).
    pub bclean_models: Option<Vec<String>>,
    /// B-Clean step 3: a blind TsT-RF trained on the compromised questions removes what it also answers.
    pub bclean_step3: bool,
    /// B-Clean: remove the questions without an image.
    pub bclean_remove_imageless: bool,
    pub seed: u64,
    /// When IBP stops before its budget.
    pub stop: StopRule,
    /// What is removed at once.
    pub unit: Unit,
    /// Fresh fold assignments and forests (seeds never used for selection) on
    /// which the kept set is re-diagnosed after pruning; 0 skips it.
    pub independent_seeds: usize,
    /// The matched random control: remove exactly these counts per allocation
    /// key (what the run it matches removed) instead of splitting the budget.
    pub matched: Option<BTreeMap<String, usize>>,
}

impl PruneConfig {
    /// Whether the run reads the label-permutation null of the set it prunes:
    /// IBP and AFLite under `stop = "null"` (the random control and B-Clean
    /// never do).
    pub fn reads_null(&self) -> bool {
        self.stop == StopRule::Null && matches!(self.method, Method::Ibp | Method::Aflite)
    }
}

impl Default for PruneConfig {
    fn default() -> Self {
        PruneConfig {
            method: Method::Ibp,
            budget: Amount::Fraction(0.1),
            batch: Amount::Count(50),
            floor: 10,
            threshold: None,
            allocation: Allocation::PerFormat,
            rank: Rank::SMinusChance,
            aflite: AfliteConfig::default(),
            bclean_models: None,
            bclean_step3: false,
            bclean_remove_imageless: false,
            seed: crate::context::DEFAULT_SEED,
            stop: StopRule::Null,
            unit: Unit::Default,
            independent_seeds: 3,
            matched: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_parse() {
        assert_eq!(Amount::parse("50"), Ok(Amount::Count(50)));
        assert_eq!(Amount::parse("20%"), Ok(Amount::Fraction(0.2)));
        // A bare fraction could be a count: refused, with the percentage to write.
        let e = Amount::parse("0.25").unwrap_err();
        assert!(e.contains("is it 0.25 questions or 25% of them?") && e.contains("\"25%\""), "{e}");
        assert!(Amount::parse("1.0").unwrap_err().contains("is it 1 questions or 100% of them?"));
        assert!(Amount::parse("150%").is_err());
        assert!(Amount::parse("-1").is_err());
        assert!(Amount::parse("lots").is_err());
        assert_eq!(Amount::Fraction(0.2).resolve(4241), 848);
    }
}
