//! `blindspot filter`'s command line resolved once: the rule (a published
//! preset, or conditions and thresholds) and the scoring it judges answers by.

use super::*;

/// `blindspot filter`'s flags, as given.
#[derive(Debug, Clone, Default)]
pub struct FilterFlags {
    /// `--preset`: a published filter.
    pub preset: Option<String>,
    /// `--conditions`.
    pub conditions: Vec<String>,
    /// `--models` (empty: every model with predictions under the conditions).
    pub models: Vec<String>,
    /// `--min-models`: a number or `all`.
    pub min_models: String,
    /// `--min-correct`: a number, any, majority, all.
    pub min_correct: String,
    /// `--numeric` and `--mra`.
    pub numeric: String,
    pub mra: String,
}

/// The settings `blindspot filter` runs with.
#[derive(Debug, Clone)]
pub struct FilterSettings {
    pub rule: crate::filter::Rule,
    /// How answers are scored: the flags' numeric scoring, the defaults else.
    pub config: crate::metrics::MetricsConfig,
}

/// A command-line mistake.
fn flag(msg: String) -> Error {
    Error::one(Problem::new(Location::file(COMMAND_LINE), msg))
}

/// `blindspot filter`'s settings: the models, the rule, then the scoring,
/// each checked in that order.
pub fn filter_settings(flags: &FilterFlags) -> Result<FilterSettings> {
    use crate::filter::{MinCorrect, MinModels, Preset, Rule};
    crate::predictions::check_models(&flags.models, "--models").map_err(flag)?;
    let models = (!flags.models.is_empty()).then(|| flags.models.clone());
    let rule = match &flags.preset {
        Some(p) => Preset::parse(p).map_err(flag)?.rule(models),
        None => {
            Rule::check_conditions(&flags.conditions).map_err(flag)?;
            let min_correct = MinCorrect::parse(&flags.min_correct).map_err(flag)?;
            if let MinCorrect::Count(m) = min_correct
                && let Some(v) = crate::bounds::check_count(&crate::bounds::MIN_CORRECT, m)
            {
                return Err(flag(v.for_flag()));
            }
            Rule {
                preset: None,
                models,
                conditions: flags.conditions.clone(),
                min_models: MinModels::parse(&flags.min_models).map_err(flag)?,
                min_correct,
            }
        }
    };
    let numeric = crate::sample::NumericScoring::parse(&flags.numeric).map_err(flag)?;
    let mra = crate::sample::MraRule::parse(&flags.mra).map_err(flag)?;
    Ok(FilterSettings { rule, config: crate::metrics::MetricsConfig { numeric, mra, ..Default::default() } })
}
