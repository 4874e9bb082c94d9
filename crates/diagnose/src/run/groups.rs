//! The model groups of a sample set (question type × answer format, small
//! types pooled) and each group's folds: stratified, grouped or shuffled.

use std::collections::BTreeMap;

use super::target::normalize;
use crate::sample::{AnswerFormat, Sample};
use crate::{DiagnoseConfig, folds};

/// The name of the pooled group of small question types.
pub const POOLED: &str = "(small types pooled)";

/// The model groups of a sample set, in a fixed order: one per (question
/// type, answer format), with types under `min_group` questions pooled per format.
pub fn group_samples<'a>(
    samples: impl IntoIterator<Item = &'a Sample>,
    min_group: usize,
) -> BTreeMap<(Option<String>, AnswerFormat), Vec<&'a Sample>> {
    let mut groups: BTreeMap<(Option<String>, AnswerFormat), Vec<&Sample>> = BTreeMap::new();
    for s in samples {
        groups.entry((s.question_type.clone(), s.answer_format)).or_default().push(s);
    }
    let small: Vec<_> = groups.iter().filter(|(_, v)| v.len() < min_group).map(|(k, _)| k.clone()).collect();
    if small.len() < 2 {
        return groups;
    }
    for key in small {
        let rows = groups.remove(&key).unwrap_or_default();
        groups.entry((Some(POOLED.to_string()), key.1)).or_default().extend(rows);
    }
    // Pooled rows back in canonical id order, as folding expects.
    for rows in groups.values_mut() {
        rows.sort_by(|a, b| crate::sample::id_cmp(&a.id, &b.id));
    }
    groups
}

/// Labels for folding (stratification): gold index, yes/no, or the answer
/// text's rank in sorted order; `None` for numeric (plain shuffled folds).
fn strata(group: &[&Sample], format: AnswerFormat) -> Option<Vec<u32>> {
    match format {
        AnswerFormat::MultipleChoice => Some(group.iter().map(|s| s.answer_index.unwrap_or(0).max(0) as u32).collect()),
        AnswerFormat::YesNo => Some(group.iter().map(|s| u32::from(s.answer == "yes")).collect()),
        AnswerFormat::Open => {
            let vocab: BTreeMap<String, u32> = group
                .iter()
                .map(|s| normalize(&s.answer))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .enumerate()
                .map(|(i, a)| (a, i as u32))
                .collect();
            Some(group.iter().map(|s| vocab[&normalize(&s.answer)]).collect())
        }
        AnswerFormat::Numeric => None,
    }
}

/// Fold assignment of one group in one repeat.
pub fn assign_folds(group: &[&Sample], format: AnswerFormat, repeat: usize, cfg: &DiagnoseConfig) -> Vec<usize> {
    let k = cfg.folds.clamp(2, group.len().max(2));
    let seed = cfg.seed.wrapping_add(repeat as u64);
    match (&cfg.group_by, strata(group, format)) {
        (Some(g), _) => folds::grouped(&g.keys(group.iter().copied()), k, seed),
        (None, Some(labels)) => folds::stratified(&labels, k, seed),
        (None, None) => folds::shuffled(group.len(), k, seed),
    }
}

/// How many folds [`assign_folds`] makes of `group`: `cfg.folds`, or fewer when
/// the group has fewer questions (or, with `group_by`, fewer fold groups). The
/// same in every repeat: only which question lands in which fold changes.
pub fn folds_used(group: &[&Sample], format: AnswerFormat, cfg: &DiagnoseConfig) -> usize {
    let fold_of = assign_folds(group, format, 0, cfg);
    fold_of.iter().collect::<std::collections::BTreeSet<_>>().len()
}

/// The training and held-out samples of one fold, each in group order.
pub fn split_fold<T: Copy>(group: &[T], fold_of: &[usize], fold: usize) -> (Vec<T>, Vec<T>) {
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for (s, f) in group.iter().zip(fold_of) {
        if *f == fold { test.push(*s) } else { train.push(*s) }
    }
    (train, test)
}
