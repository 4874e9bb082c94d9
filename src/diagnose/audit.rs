//! The audit of answer-bearing fields: a `meta` field that predicts the gold
//! answer on its own (a label read off the image, a model's own prediction, a
//! copy of the answer) is not a "blind" feature, and its use would inflate
//! blind accuracy. Every meta field is audited, used as a feature or not.
//!
//! A field's **solo blind accuracy** is cross-validated: in 5 folds per answer
//! format, each value maps to the most common gold of the training folds'
//! questions with that value (the training majority for a value never seen),
//! and the held-out questions are predicted from their own value. It is
//! compared with the **majority baseline** (the training folds' most common
//! gold). A field is **suspect** when, over at least [`MIN_ROWS`] questions,
//! its solo accuracy reaches [`NEAR_PERFECT`] or beats the baseline by
//! [`FAR_ABOVE`] or more.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::folds;
use crate::sample::{AnswerFormat, Sample};

/// Fewest questions carrying the field for a verdict.
pub const MIN_ROWS: usize = 20;
/// Solo accuracy at which a field predicts the gold near-perfectly.
pub const NEAR_PERFECT: f64 = 0.95;
/// Lift over the majority baseline that marks a field as answer-bearing.
pub const FAR_ABOVE: f64 = 0.25;

/// The audit of one meta field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldAudit {
    pub field: String,
    /// Whether diagnose used it as a feature (`[diagnose] meta-features`).
    pub used: bool,
    /// Questions carrying the field (in answer formats with a gold class).
    pub n: usize,
    pub solo_accuracy: f64,
    pub majority: f64,
    pub suspect: bool,
}

impl FieldAudit {
    /// The warning a person reads for a suspect field.
    pub fn warning(&self) -> String {
        let what = if self.used {
            "is used as a blind feature and predicts the gold answer on its own"
        } else {
            "predicts the gold answer on its own (it is not used as a feature)"
        };
        let todo = if self.used {
            "remove it from [diagnose] meta-features: blind accuracy with it is not blind"
        } else {
            "keep it out of [diagnose] meta-features"
        };
        format!(
            "meta field \"{}\" {what}: solo blind accuracy {:.1}% against a majority baseline of {:.1}% over {} \
             questions; {todo}",
            self.field,
            self.solo_accuracy * 100.0,
            self.majority * 100.0,
            self.n
        )
    }
}

/// The meta fields diagnose uses as features under `cfg`: the listed ones,
/// or (no list) every field with at most `max_meta_values` distinct values.
pub fn used_fields(samples: &[Sample], cfg: &super::DiagnoseConfig) -> Vec<String> {
    match &cfg.features.meta_fields {
        Some(list) => list.clone(),
        None => {
            let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
            for s in samples {
                for (k, v) in &s.meta {
                    values.entry(k).or_default().insert(v);
                }
            }
            values.into_iter().filter(|(_, v)| v.len() <= cfg.features.max_meta_values).map(|(k, _)| k.into()).collect()
        }
    }
}

/// Audits `samples` under `cfg` into `d`, and returns the warnings of its suspect fields.
pub fn attach(d: &mut super::Diagnosis, samples: &[Sample], cfg: &super::DiagnoseConfig) -> Vec<String> {
    d.audit = audit(samples, &used_fields(samples, cfg), cfg.seed, cfg.group_by.as_ref());
    d.audit.iter().filter(|f| f.suspect).map(FieldAudit::warning).collect()
}

/// The gold class of a question: its option index, yes/no, or the normalised
/// answer text; numeric answers count as text (exact values).
fn gold(s: &Sample) -> String {
    match s.answer_format {
        AnswerFormat::MultipleChoice => format!("#{}", s.answer_index.unwrap_or(-1)),
        _ => s.answer.trim().to_lowercase(),
    }
}

/// Audits every meta field of `samples`; `used` names the fields diagnose
/// uses as features; folds keep `group_by`'s groups together, as diagnose's
/// do. Sorted by field name.
pub fn audit(samples: &[Sample], used: &[String], seed: u64, group_by: Option<&super::GroupBy>) -> Vec<FieldAudit> {
    let fields: BTreeSet<&str> = samples.iter().flat_map(|s| s.meta.keys().map(String::as_str)).collect();
    let mut by_format: BTreeMap<AnswerFormat, Vec<&Sample>> = BTreeMap::new();
    for s in samples {
        by_format.entry(s.answer_format).or_default().push(s);
    }
    fields
        .into_iter()
        .map(|field| {
            let (mut n, mut solo, mut base) = (0usize, 0usize, 0usize);
            for group in by_format.values() {
                let rows: Vec<&Sample> = group.iter().copied().filter(|s| s.meta.contains_key(field)).collect();
                if rows.len() < 2 {
                    continue;
                }
                let (s_hits, b_hits) = solo_hits(&rows, field, seed, group_by);
                n += rows.len();
                solo += s_hits;
                base += b_hits;
            }
            let (solo_accuracy, majority) =
                if n == 0 { (0.0, 0.0) } else { (solo as f64 / n as f64, base as f64 / n as f64) };
            FieldAudit {
                field: field.to_string(),
                used: used.iter().any(|u| u == field),
                n,
                solo_accuracy,
                majority,
                suspect: n >= MIN_ROWS && (solo_accuracy >= NEAR_PERFECT || solo_accuracy - majority >= FAR_ABOVE),
            }
        })
        .collect()
}

/// Held-out hits of the value lookup and of the majority baseline, over 5 folds.
fn solo_hits(rows: &[&Sample], field: &str, seed: u64, group_by: Option<&super::GroupBy>) -> (usize, usize) {
    let k = 5.min(rows.len());
    let seed = crate::seed::rng_for(seed, "diagnose.audit", field);
    let fold_of = match group_by {
        Some(g) => folds::grouped(&rows.iter().map(|s| g.key(s)).collect::<Vec<_>>(), k, seed),
        None => folds::shuffled(rows.len(), k, seed),
    };
    let (mut solo, mut base) = (0, 0);
    for f in 0..k {
        let mut by_value: HashMap<&str, BTreeMap<String, usize>> = HashMap::new();
        let mut overall: BTreeMap<String, usize> = BTreeMap::new();
        for (s, _) in rows.iter().zip(&fold_of).filter(|(_, g)| **g != f) {
            let g = gold(s);
            *by_value.entry(s.meta[field].as_str()).or_default().entry(g.clone()).or_default() += 1;
            *overall.entry(g).or_default() += 1;
        }
        // The most common class; ties to the smaller class name (BTreeMap order).
        fn top(m: &BTreeMap<String, usize>) -> Option<&String> {
            m.iter()
                .fold(None::<(&String, usize)>, |best, (c, n)| match best {
                    Some((_, bn)) if bn >= *n => best,
                    _ => Some((c, *n)),
                })
                .map(|(c, _)| c)
        }
        let majority = top(&overall).cloned().unwrap_or_default();
        for (s, _) in rows.iter().zip(&fold_of).filter(|(_, g)| **g == f) {
            let g = gold(s);
            let guess = by_value.get(s.meta[field].as_str()).and_then(top).unwrap_or(&majority);
            solo += usize::from(*guess == g);
            base += usize::from(majority == g);
        }
    }
    (solo, base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yes_no(i: usize, answer: &str, meta: &[(&str, String)]) -> Sample {
        let mut s = Sample::new(format!("q{i}"), "Is it there?", answer);
        s.answer_format = AnswerFormat::YesNo;
        for (k, v) in meta {
            s.meta.insert((*k).into(), v.clone());
        }
        s
    }

    #[test]
    fn a_copy_of_the_gold_is_suspect_and_noise_is_not() {
        let samples: Vec<Sample> = (0..100)
            .map(|i| {
                let answer = if i % 3 == 0 { "yes" } else { "no" };
                yes_no(i, answer, &[("copy", answer.to_string()), ("noise", format!("v{}", (i * 7) % 5))])
            })
            .collect();
        let a = audit(&samples, &["noise".to_string()], 42, None);
        let copy = a.iter().find(|f| f.field == "copy").unwrap();
        assert_eq!(copy.solo_accuracy, 1.0);
        assert!(copy.suspect && !copy.used, "{copy:?}");
        // The majority baseline: "no" on two questions in three.
        assert!((copy.majority - 0.66).abs() < 0.02, "{copy:?}");
        let noise = a.iter().find(|f| f.field == "noise").unwrap();
        assert!(noise.used && !noise.suspect, "{noise:?}");
        assert!(noise.solo_accuracy <= copy.majority + 0.05, "{noise:?}");
        assert!(copy.warning().contains("\"copy\"") && copy.warning().contains("100.0%"));
    }
}
