//! Settings given on the command line, in the pipeline file's own terms.
//!
//! A flag of `blindspot diagnose` or `blindspot prune` is a key of the pipeline
//! file (`--folds` is `[diagnose] folds`, `--budget` is `[prune] budget`): the
//! wire sections derive the flags ([`DiagnoseWire`], [`PruneWire`],
//! [`DatasetFlags`]), a command's flags are laid over the file's sections (or
//! over nothing, without a pipeline), and the result goes through the one
//! validation a pipeline file goes through (`plan.rs`). A setting is added in
//! one place, the wire type, and a problem names the flag when a flag set the
//! value, the file's line when the file did.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use toml::Value;

use super::wire::{DiagnoseWire, MraWire, PipelineWire, PruneWire};
use crate::error::{Error, Result};

/// The `[dataset]` keys a command line may set: the seed and the scoring of
/// numeric answers (one for every stage, as in the file).
#[derive(Debug, Clone, Default, clap::Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct DatasetFlags {
    /// Seed of folds, forests and every random choice (default 42, or the
    /// pipeline's [dataset] seed); at most 2^63 - 1, as in a pipeline file.
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=i64::MAX as u64))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Scoring of numeric questions: `exact` (default, or the pipeline's [dataset]
    /// numeric), `mra` or `tolerance:<rel>`.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numeric: Option<String>,
    /// MRA comparison for numeric answers: `strict` (<) or `inclusive` (<=).
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mra: Option<MraWire>,
}

/// A command's flags, section by section.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub dataset: DatasetFlags,
    pub diagnose: DiagnoseWire,
    /// `None` for a command that does not prune.
    pub prune: Option<PruneWire>,
}

impl Flags {
    /// The file keys the flags set (`diagnose.folds`), each with its flag (`--folds`).
    pub fn keys(&self) -> Result<BTreeMap<String, String>> {
        let mut out = BTreeMap::new();
        for (section, value) in [
            ("dataset", to_value(&self.dataset)?),
            ("diagnose", to_value(&self.diagnose)?),
            (
                "prune",
                self.prune.as_ref().map(to_value).transpose()?.unwrap_or_else(|| Value::Table(Default::default())),
            ),
        ] {
            for key in set_keys(&value) {
                out.insert(format!("{section}.{key}"), format!("--{key}"));
            }
        }
        Ok(out)
    }

    /// Whether any flag sets a `[diagnose]` key.
    pub fn sets_diagnose(&self) -> Result<bool> {
        Ok(!set_keys(&to_value(&self.diagnose)?).is_empty())
    }

    /// The pipeline file's sections with the flags laid over them: a flag's
    /// value replaces the file's, keys no flag sets keep the file's.
    pub fn over(&self, mut wire: PipelineWire) -> Result<PipelineWire> {
        if !set_keys(&to_value(&self.dataset)?).is_empty() {
            wire.dataset = lay_over(&wire.dataset, &self.dataset)?;
        }
        if self.sets_diagnose()? {
            wire.diagnose = Some(lay_over(&wire.diagnose.unwrap_or_default(), &self.diagnose)?);
        }
        if let Some(p) = &self.prune
            && !set_keys(&to_value(p)?).is_empty()
        {
            wire.prune = Some(lay_over(&wire.prune.unwrap_or_default(), p)?);
        }
        Ok(wire)
    }
}

/// A section as TOML, the file's own form: an unset `Option` is absent and a
/// NaN stays a NaN (JSON would turn it into null, and a flag's `nan` would be
/// dropped instead of refused).
fn to_value<T: Serialize>(v: &T) -> Result<Value> {
    Value::try_from(v).map_err(|e| Error::Bug(format!("settings do not serialize: {e}")))
}

/// The keys of a section a flag set: neither absent nor an unset switch.
fn set_keys(section: &Value) -> Vec<String> {
    let Value::Table(map) = section else { return Vec::new() };
    map.iter()
        .filter(|(_, v)| !matches!(v, Value::Boolean(false)) && v.as_array().is_none_or(|a| !a.is_empty()))
        .map(|(k, _)| k.clone())
        .collect()
}

/// `base` with every key `top` sets replaced by `top`'s value.
fn lay_over<B: Serialize + DeserializeOwned, T: Serialize>(base: &B, top: &T) -> Result<B> {
    let mut merged = to_value(base)?;
    let top = to_value(top)?;
    if let (Value::Table(m), Value::Table(t)) = (&mut merged, &top) {
        for key in set_keys(&top) {
            m.insert(key.clone(), t[&key].clone());
        }
    }
    merged.try_into().map_err(|e| Error::Bug(format!("flags laid over the pipeline do not read back: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_replaces_the_file_value_and_names_its_key() {
        let file = DiagnoseWire { folds: Some(10), trees: Some(50), ..Default::default() };
        let flags = Flags {
            diagnose: DiagnoseWire { folds: Some(3), ..Default::default() },
            prune: Some(PruneWire { control: true, ..Default::default() }),
            ..Default::default()
        };
        let merged = lay_over(&file, &flags.diagnose).unwrap();
        assert_eq!((merged.folds, merged.trees), (Some(3), Some(50)));
        // A NaN is laid over as a NaN, for the bounds to refuse, not dropped.
        let nan = PruneWire { threshold: Some(f64::NAN), ..Default::default() };
        let merged = lay_over(&PruneWire { threshold: Some(0.5), ..Default::default() }, &nan).unwrap();
        assert!(merged.threshold.is_some_and(f64::is_nan));
        let keys = flags.keys().unwrap();
        assert_eq!(
            keys.into_iter().collect::<Vec<_>>(),
            vec![("diagnose.folds".into(), "--folds".into()), ("prune.control".into(), "--control".into())]
        );
    }
}
