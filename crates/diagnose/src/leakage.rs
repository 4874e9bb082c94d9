//! The label-invariance check (`--check-leakage`): nothing the blind model
//! sees may move when only the held-out answers change.
//!
//! End to end, for every group, repeat and fold: the held-out rows' answers
//! are changed *in the samples* — the gold text, its option index, and every
//! meta value that spells the gold (its text or, for multiple choice, its
//! letter) — and the whole fold is run again from those samples: parse,
//! featurize (with the cross-fitted training statistics), fit, predict. Any
//! training or held-out feature column that changed, and any held-out
//! prediction that changed, is a leak. The fold assignment is kept: it is
//! stratified on the answers by design and decides only which rows are held out.

use std::collections::BTreeMap;

use super::DiagnoseConfig;
use super::run::{assign_folds, fit_fold, format_number, group_samples, split_fold};
use crate::ml::features;
use crate::ml::forest::Matrix;
use crate::sample::{AnswerFormat, Sample, option_letter, parse_number};

/// Runs the check (see the module docs). Returns one line per leak found,
/// `<type> / <format>: <what changed>`, each reported once.
pub fn check_leakage(samples: &[Sample], cfg: &DiagnoseConfig) -> Vec<String> {
    // Each leak once, with the first held-out question it moved.
    let mut leaks: BTreeMap<String, String> = BTreeMap::new();
    for ((qtype, format), group) in group_samples(samples, cfg.min_group) {
        let name = format!("{} / {}", qtype.as_deref().unwrap_or("(no type)"), format.as_str());
        let parsed_owned = features::parse(&group, &cfg.features);
        let parsed: Vec<&features::Parsed<'_>> = parsed_owned.iter().collect();
        for repeat in 0..cfg.repeats.max(1) {
            let fold_of = assign_folds(&group, format, repeat, cfg);
            let k = fold_of.iter().copied().max().map_or(0, |m| m + 1);
            for fold in 0..k {
                let changed: Vec<Sample> = group
                    .iter()
                    .zip(&fold_of)
                    .map(|(s, f)| if *f == fold { perturb_answer(s) } else { (*s).clone() })
                    .collect();
                let changed_refs: Vec<&Sample> = changed.iter().collect();
                let parsed_changed_owned = features::parse(&changed_refs, &cfg.features);
                let parsed_changed: Vec<&features::Parsed<'_>> = parsed_changed_owned.iter().collect();
                let fit = |g: &[&Sample], p: &[&features::Parsed<'_>]| {
                    fit_fold(g, p, format, qtype.as_deref(), repeat, cfg, &fold_of, fold, true)
                };
                let (Some(before), Some(after)) = (fit(&group, &parsed), fit(&changed_refs, &parsed_changed)) else {
                    continue;
                };
                let names = &before.out.names;
                for (m, a, b) in
                    [("training", &before.x_train, &after.x_train), ("held-out", &before.x_test, &after.x_test)]
                {
                    for j in changed_columns(a, b) {
                        let col = names.get(j).map_or("(unnamed)", String::as_str);
                        leaks.entry(format!("{name}: {m} feature column `{col}` changed")).or_default();
                    }
                    if a.n_cols() != b.n_cols() {
                        leaks.entry(format!("{name}: the number of {m} feature columns changed")).or_default();
                    }
                }
                if before.raw.len() != after.raw.len()
                    || before.raw.iter().zip(&after.raw).any(|(x, y)| x.to_bits() != y.to_bits())
                {
                    let (_, test) = split_fold(&group, &fold_of, fold);
                    let per = before.raw.len() / test.len().max(1);
                    let first = (0..test.len()).find(|&i| {
                        let r = i * per..(i + 1) * per;
                        before.raw.get(r.clone()) != after.raw.get(r)
                    });
                    let key = format!("{name}: held-out predictions changed");
                    if let (false, Some(i)) = (leaks.contains_key(&key), first) {
                        leaks.insert(key, format!(" (first: \"{}\")", test[i].id));
                    }
                }
            }
        }
    }
    leaks.into_iter().map(|(what, first)| what + &first).collect()
}

/// Columns of `a` whose values differ in `b` (same shape assumed; extra columns ignored).
fn changed_columns(a: &Matrix, b: &Matrix) -> Vec<usize> {
    if a.n_rows() != b.n_rows() {
        return (0..a.n_cols()).collect();
    }
    (0..a.n_cols().min(b.n_cols()))
        .filter(|&j| (0..a.n_rows()).any(|i| a.get(i, j).to_bits() != b.get(i, j).to_bits()))
        .collect()
}

/// The same question with a different gold answer, wherever the sample spells
/// it: the answer, its option index, and meta values equal to the gold text or
/// (multiple choice) its letter.
pub fn perturb_answer(s: &Sample) -> Sample {
    let mut c = s.clone();
    let mut spelled: Vec<(String, String)> = Vec::new();
    match s.answer_format {
        AnswerFormat::MultipleChoice if !s.options.is_empty() => {
            let old = s.answer_index.unwrap_or(0).max(0) as usize;
            let i = (old + 1) % s.options.len();
            c.answer_index = Some(i as i32);
            c.answer = s.options[i].clone();
            spelled.push((option_letter(old), option_letter(i)));
        }
        AnswerFormat::YesNo => c.answer = if s.answer == "yes" { "no".into() } else { "yes".into() },
        AnswerFormat::Numeric => c.answer = format_number(parse_number(&s.answer).unwrap_or(0.0) * 2.0 + 1.0),
        _ => c.answer = format!("{} (changed)", s.answer),
    }
    spelled.push((s.answer.trim().to_string(), c.answer.clone()));
    for v in c.meta.values_mut() {
        let t = v.trim();
        if let Some((_, new)) = spelled.iter().find(|(old, _)| !old.is_empty() && t.eq_ignore_ascii_case(old)) {
            *v = new.clone();
        }
    }
    c
}
