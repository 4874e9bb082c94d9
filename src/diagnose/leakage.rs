//! The label-invariance check (`--check-leakage`): features of held-out rows
//! must not move when only their answers change.

use super::DiagnoseConfig;
use super::features::Featurizer;
use super::run::{assign_folds, format_number, group_samples, split_fold};
use crate::sample::{AnswerFormat, Sample, parse_number};

/// Label-invariance check: fit on training folds, featurize held-out rows,
/// change only the held-out answers, featurize again. Returns every
/// (group, column) whose values changed: those features read held-out answers.
pub fn check_leakage(samples: &[Sample], cfg: &DiagnoseConfig) -> Vec<String> {
    let mut leaks = Vec::new();
    for ((qtype, format), group) in group_samples(samples, cfg.min_group) {
        let fold_of = assign_folds(&group, format, 0, cfg);
        let (train, test) = split_fold(&group, &fold_of, 0);
        let test: Vec<Sample> = test.into_iter().cloned().collect();
        if train.is_empty() || test.is_empty() {
            continue;
        }
        let f = Featurizer::fit(&train, &cfg.features);
        let before = f.transform(&test.iter().collect::<Vec<_>>());
        let changed: Vec<Sample> = test.iter().map(perturb_answer).collect();
        let after = f.transform(&changed.iter().collect::<Vec<_>>());
        for j in 0..before.n_cols() {
            if (0..before.n_rows()).any(|i| before.get(i, j).to_bits() != after.get(i, j).to_bits()) {
                leaks.push(format!(
                    "{} / {}: {}",
                    qtype.as_deref().unwrap_or("(no type)"),
                    format.as_str(),
                    f.names()[j]
                ));
            }
        }
    }
    leaks
}

/// The same question with a different gold answer.
pub fn perturb_answer(s: &Sample) -> Sample {
    let mut c = s.clone();
    match s.answer_format {
        AnswerFormat::MultipleChoice if !s.options.is_empty() => {
            let i = (s.answer_index.unwrap_or(0) as usize + 1) % s.options.len();
            c.answer_index = Some(i as i32);
            c.answer = s.options[i].clone();
        }
        AnswerFormat::YesNo => c.answer = if s.answer == "yes" { "no".into() } else { "yes".into() },
        AnswerFormat::Numeric => c.answer = format_number(parse_number(&s.answer).unwrap_or(0.0) * 2.0 + 1.0),
        _ => c.answer = format!("{} (changed)", s.answer),
    }
    c
}
