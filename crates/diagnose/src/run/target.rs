//! What a group's forest is trained on: class labels (gold index, yes/no,
//! the training folds' answer vocabulary) or numbers, and predictions read
//! back as answer text.

use std::collections::BTreeMap;

use crate::sample::{AnswerFormat, Sample, parse_number};

pub(crate) fn normalize(answer: &str) -> String {
    answer.trim().to_lowercase()
}

/// A fold's training targets and how to read predictions back.
pub enum Target {
    /// Class labels; `names[c]` is class c's answer text (`None` = "other").
    Classes {
        labels: Vec<u32>,
        names: Vec<Option<String>>,
    },
    Numbers(Vec<f64>),
}

pub fn class_of(format: AnswerFormat, s: &Sample) -> Option<String> {
    match format {
        AnswerFormat::MultipleChoice => s.answer_index.map(|i| i.to_string()),
        AnswerFormat::YesNo => Some(s.answer.clone()),
        _ => Some(normalize(&s.answer)),
    }
}

pub fn target(format: AnswerFormat, train: &[&Sample], rare_vocab: usize) -> Target {
    match format {
        AnswerFormat::Numeric => {
            Target::Numbers(train.iter().map(|s| parse_number(&s.answer).unwrap_or(f64::NAN)).collect())
        }
        AnswerFormat::MultipleChoice => {
            let n = train.iter().map(|s| s.options.len()).max().unwrap_or(2).max(2);
            Target::Classes {
                labels: train.iter().map(|s| s.answer_index.unwrap_or(0).max(0) as u32).collect(),
                names: (0..n).map(|i| Some(i.to_string())).collect(),
            }
        }
        AnswerFormat::YesNo => Target::Classes {
            labels: train.iter().map(|s| u32::from(s.answer == "yes")).collect(),
            names: vec![Some("no".into()), Some("yes".into())],
        },
        AnswerFormat::Open => {
            let mut counts: BTreeMap<String, usize> = BTreeMap::new();
            for s in train {
                *counts.entry(normalize(&s.answer)).or_default() += 1;
            }
            let mut names: Vec<Option<String>> =
                counts.into_iter().filter(|(_, c)| *c >= rare_vocab).map(|(a, _)| Some(a)).collect();
            names.push(None);
            let other = (names.len() - 1) as u32;
            let index: BTreeMap<&str, u32> =
                names.iter().enumerate().filter_map(|(i, n)| Some((n.as_deref()?, i as u32))).collect();
            let labels =
                train.iter().map(|s| index.get(normalize(&s.answer).as_str()).copied().unwrap_or(other)).collect();
            Target::Classes { labels, names }
        }
    }
}

/// Readable prediction text for a class.
pub(super) fn prediction_text(format: AnswerFormat, s: &Sample, name: Option<&str>) -> String {
    match (format, name) {
        (_, None) => "<other>".to_string(),
        (AnswerFormat::MultipleChoice, Some(i)) => {
            i.parse::<usize>().ok().and_then(|i| s.options.get(i).cloned()).unwrap_or_else(|| format!("<option {i}>"))
        }
        (_, Some(n)) => n.to_string(),
    }
}
