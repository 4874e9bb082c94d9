//! Settings of a diagnose run: folds, repeats, trees, grouping of related
//! questions, the method (TsT-RF, TsT-Embed or both) and how their scores combine.

use super::features::FeatureConfig;
use super::run::normalize;
use crate::sample::{MraRule, NumericScoring, Sample};

/// How folds keep related questions together.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum GroupBy {
    /// Questions on the same image (first image's sha256, else its path).
    Image,
    /// Questions with the same text (and context): contrastive sets ask one
    /// question of two images with opposite answers, and a held-out twin must
    /// not be predicted from its sibling.
    Question,
    /// Questions sharing a `meta` field's value.
    Meta(String),
}

impl GroupBy {
    /// Parses `image`, `question` or `meta:FIELD`.
    pub fn parse(s: &str) -> std::result::Result<GroupBy, String> {
        match s.split_once(':') {
            None if s == "image" => Ok(GroupBy::Image),
            None if s == "question" => Ok(GroupBy::Question),
            Some(("meta", field)) if !field.is_empty() => Ok(GroupBy::Meta(field.to_string())),
            _ => Err(format!("group-by \"{s}\" is not \"image\", \"question\" or \"meta:FIELD\"")),
        }
    }

    pub fn key(&self, s: &Sample) -> String {
        match self {
            GroupBy::Image => s
                .images
                .first()
                .and_then(|i| i.sha256.clone().or_else(|| i.path.clone()))
                .unwrap_or_else(|| format!("id:{}", s.id)),
            GroupBy::Question => {
                format!("{}\u{1f}{}", normalize(&s.question), s.context.as_deref().map(normalize).unwrap_or_default())
            }
            GroupBy::Meta(field) => s.meta.get(field).cloned().unwrap_or_else(|| format!("id:{}", s.id)),
        }
    }
}

/// Settings of a TsT-RF run (defaults: the protocol's).
#[derive(Debug, Clone, serde::Serialize)]
pub struct DiagnoseConfig {
    pub folds: usize,
    pub repeats: usize,
    pub seed: u64,
    pub group_by: Option<GroupBy>,
    /// Trees of each classification forest.
    pub trees: usize,
    /// Trees of each regression forest.
    pub regression_trees: usize,
    /// How a numeric question's blind prediction is scored: the benchmark's own
    /// scorer, one setting for every stage (default exact; `exact` snaps the
    /// regression to the nearest training answer; MRA is the TsT protocol's).
    pub numeric: NumericScoring,
    pub mra: MraRule,
    /// Question types with fewer questions (in one format) share one pooled
    /// model per format, with the type as a feature: k-fold CV on a handful
    /// of questions only measures noise.
    pub min_group: usize,
    pub features: FeatureConfig,
    /// Which blind model scores s(x): TsT-RF, TsT-Embed or both combined.
    pub method: Method,
    /// How `Method::Both` combines the two s(x).
    pub combine: Combine,
    /// The label-permutation null the verdict and IBP's gate compare with.
    pub null: super::null::NullConfig,
    /// Where `folds` was set by the user; `None` when the default applies. It
    /// changes no result (so it is no part of the stage key), only whether
    /// folds outnumbering the questions is the user's mistake.
    #[serde(skip)]
    pub folds_given: Option<FoldsGiven>,
    /// Outside scores to combine into s(x), as the settings name them (read once
    /// the questions are known: [`DiagnoseConfig::load_outside`]).
    #[serde(skip)]
    pub outside_source: Option<super::outside::OutsideSource>,
    /// The outside scores read and checked; their file's sha256 and the rule are
    /// part of the settings' identity (a stage key).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "outside_identity")]
    pub outside: Option<std::sync::Arc<super::outside::OutsideScores>>,
}

/// The outside scores as part of the settings: their identity (file hash, rule).
fn outside_identity<S: serde::Serializer>(
    o: &Option<std::sync::Arc<super::outside::OutsideScores>>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&o.as_deref(), s)
}

/// Where a user set the number of folds.
#[derive(Debug, Clone)]
pub enum FoldsGiven {
    /// `[diagnose] folds` in a pipeline file, at this key.
    Pipeline(crate::error::Location),
    /// `--folds` on the command line.
    Flag,
}

impl DiagnoseConfig {
    /// Folds the user set must not outnumber the `questions` diagnosed: every
    /// held-out fold needs a question. The default is not an error: it is
    /// lowered to each group's size ([`super::folds_used`] says to what), which
    /// the reports state per group.
    pub fn check_folds(&self, questions: usize) -> crate::error::Result<()> {
        use crate::error::{Error, Location, Problem};
        let Some(given) = &self.folds_given else { return Ok(()) };
        if self.folds <= questions {
            return Ok(());
        }
        let (k, n) = (self.folds, questions);
        let what = match given {
            FoldsGiven::Pipeline(_) => "folds",
            FoldsGiven::Flag => "--folds",
        };
        let help = if n >= 2 {
            format!(
                "each held-out fold needs a question: set {what} to at most {n}, or leave it out (the default, {} folds, \
                 is lowered to a group's size where a group is smaller)",
                DiagnoseConfig::default().folds
            )
        } else {
            format!("cross-validation needs at least 2 questions: diagnose a benchmark with more, or leave {what} out")
        };
        let problem = match given {
            FoldsGiven::Pipeline(at) => {
                Problem::new(at.clone(), format!("must be at most the number of questions diagnosed ({n}); found {k}"))
                    .field("diagnose.folds")
            }
            FoldsGiven::Flag => Problem::new(
                Location::file("command line"),
                format!("--folds {k} is more than the {n} questions diagnosed"),
            ),
        };
        Err(Error::one(problem.help(help)))
    }

    /// Reads and checks the outside scores the settings name against `samples`
    /// (the questions this run diagnoses); nothing to do without any.
    pub fn load_outside(&mut self, samples: &[Sample]) -> crate::error::Result<()> {
        if let Some(src) = &self.outside_source {
            self.outside = Some(std::sync::Arc::new(super::outside::OutsideScores::load(src, samples, self)?));
        }
        Ok(())
    }

    /// A meta field these settings name (`group-by = "meta:FIELD"`, `meta-features`)
    /// that no question carries is a typo, never a choice: grouping by it would make
    /// every question its own group while the report says "grouped by FIELD". `at`
    /// is where the settings were written (the pipeline file, or the command line).
    pub fn check_meta_fields(&self, samples: &[Sample], at: &crate::error::Location) -> crate::error::Result<()> {
        use crate::error::{Error, Problem, did_you_mean};
        let mut wanted: Vec<(&str, &str)> = Vec::new();
        if let Some(GroupBy::Meta(f)) = &self.group_by {
            wanted.push(("diagnose.group-by", f));
        }
        for f in self.features.meta_fields.iter().flatten() {
            wanted.push(("diagnose.meta-features", f));
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let have: std::collections::BTreeSet<&str> =
            samples.iter().flat_map(|s| s.meta.keys().map(String::as_str)).collect();
        let problems: Vec<Problem> = wanted
            .into_iter()
            .filter(|(_, f)| !have.contains(f))
            .map(|(key, f)| {
                let help = match did_you_mean(f, have.iter().copied()) {
                    Some(m) => format!("did you mean \"{m}\"?"),
                    None if have.is_empty() => {
                        "the questions carry no meta field: keep the field with [ingest.fields] meta".into()
                    }
                    None => format!(
                        "the questions' meta fields are: {} (a source field reaches meta through [ingest.fields] meta)",
                        have.iter().copied().collect::<Vec<_>>().join(", ")
                    ),
                };
                Problem::new(at.clone(), format!("no question has the meta field \"{f}\"")).field(key).help(help)
            })
            .collect();
        if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
    }
}

/// The blind diagnostic of a pipeline (`[diagnose] method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Method {
    /// Random forests on non-visual features.
    #[default]
    TstRf,
    /// A linear probe on sentence-embedding features ([`super::tst_embed`]).
    TstEmbed,
    /// Both; s(x) combined per question by [`Combine`].
    Both,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::TstRf => "tst-rf",
            Method::TstEmbed => "tst-embed",
            Method::Both => "both",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Method, String> {
        match s {
            "tst-rf" => Ok(Method::TstRf),
            "tst-embed" => Ok(Method::TstEmbed),
            "both" => Ok(Method::Both),
            _ => Err(format!("method \"{s}\" is not \"tst-rf\", \"tst-embed\" or \"both\"")),
        }
    }

    /// Whether this method needs sentence embeddings.
    pub fn needs_embeddings(self) -> bool {
        self != Method::TstRf
    }
}

/// How `method = "both"` combines TsT-RF's and TsT-Embed's s(x).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Combine {
    /// The larger of the two (a question is as biased as its most telling shortcut).
    #[default]
    Max,
    /// Their mean.
    Mean,
}

impl Combine {
    pub fn as_str(self) -> &'static str {
        match self {
            Combine::Max => "max",
            Combine::Mean => "mean",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Combine, String> {
        match s {
            "max" => Ok(Combine::Max),
            "mean" => Ok(Combine::Mean),
            _ => Err(format!("score \"{s}\" is not \"max\" or \"mean\"")),
        }
    }

    pub(super) fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Combine::Max => a.max(b),
            Combine::Mean => 0.5 * (a + b),
        }
    }
}

impl Default for DiagnoseConfig {
    fn default() -> Self {
        DiagnoseConfig {
            folds: 5,
            repeats: 1,
            seed: crate::context::DEFAULT_SEED,
            group_by: None,
            trees: 100,
            regression_trees: 200,
            numeric: NumericScoring::Exact,
            mra: MraRule::Strict,
            min_group: 20,
            features: FeatureConfig::default(),
            method: Method::TstRf,
            combine: Combine::Max,
            null: super::null::NullConfig::default(),
            folds_given: None,
            outside_source: None,
            outside: None,
        }
    }
}
