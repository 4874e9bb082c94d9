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
//! its solo accuracy reaches [`NEAR_PERFECT`] above the baseline (on questions
//! that all share one gold a constant scores 100% too) or beats the baseline by
//! [`FAR_ABOVE`] or more; or, whatever its solo accuracy, when its value *is*
//! the gold answer (compared as the answer scorer compares: normalised text,
//! the option's text or letter, equal numbers) on more than [`GOLD_EQUAL`] of
//! the questions carrying it: an annotator's answer, a copy under another name,
//! whose values are too varied for the per-value lookup to learn.
//!
//! Each field listed as a feature (`meta-features`) is also **ablated**: blind
//! accuracy with every listed field against the same run without it, paired per
//! question, with a bootstrap 95% interval of the difference (resampling the
//! fold groups under `group-by`); an interval above 0 is a warning.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::folds;
use crate::sample::{AnswerFormat, Sample};

/// Fewest questions carrying the field for a verdict.
pub const MIN_ROWS: usize = 20;
/// Solo accuracy at which a field predicts the gold near-perfectly.
pub const NEAR_PERFECT: f64 = 0.95;

/// Whether a field's solo accuracy over `n` questions makes it suspect: near
/// perfect and above the majority baseline, or far above the baseline.
fn solo_suspect(n: usize, solo: f64, majority: f64) -> bool {
    n >= MIN_ROWS && ((solo >= NEAR_PERFECT && solo > majority) || solo - majority >= FAR_ABOVE)
}
/// Lift over the majority baseline that marks a field as answer-bearing.
pub const FAR_ABOVE: f64 = 0.25;
/// Share of questions whose field value is the gold, above which it is a copy.
pub const GOLD_EQUAL: f64 = 0.5;

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
    /// Share of the questions carrying the field whose value is their gold answer.
    pub gold_equal: f64,
    pub suspect: bool,
    /// For a field listed as a feature: blind accuracy with and without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ablation: Option<Ablation>,
}

/// Blind accuracy with every listed meta field and without one of them, on the
/// same folds and seeds, paired per question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ablation {
    pub with: f64,
    pub without: f64,
    /// `with - without`.
    pub difference: f64,
    /// Bootstrap 95% interval of the difference.
    pub ci95: (f64, f64),
}

impl Ablation {
    /// Whether the field raises blind accuracy beyond chance variation.
    pub fn raises(&self) -> bool {
        self.ci95.0 > 0.0
    }
}

impl FieldAudit {
    /// The warning a person reads for a listed field that raises blind accuracy.
    pub fn ablation_warning(&self) -> Option<String> {
        let a = self.ablation.as_ref().filter(|a| a.raises())?;
        Some(format!(
            "meta field \"{}\" raises blind accuracy from {:.1}% to {:.1}% (+{:.1} pts, 95% CI {:.1} to {:.1}): a \
             feature a blind model may not see would count as a shortcut of the benchmark; keep it in [diagnose] \
             meta-features only if it is a property of the question itself",
            self.field,
            a.without * 100.0,
            a.with * 100.0,
            a.difference * 100.0,
            a.ci95.0 * 100.0,
            a.ci95.1 * 100.0
        ))
    }

    /// The warning a person reads for a suspect field.
    pub fn warning(&self) -> String {
        let solo_suspect = solo_suspect(self.n, self.solo_accuracy, self.majority);
        if self.gold_equal > GOLD_EQUAL && !solo_suspect {
            let todo = if self.used {
                "remove it from [diagnose] meta-features: blind accuracy with it is not blind"
            } else {
                "keep it out of [diagnose] meta-features"
            };
            return format!(
                "meta field \"{}\" is the gold answer on {:.1}% of the questions carrying it (a copy of the answer, \
                 or an annotator's); {todo}",
                self.field,
                self.gold_equal * 100.0
            );
        }
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

/// Audits `samples` under `cfg` into `d` (a TsT-RF diagnosis under `cfg`),
/// ablates each listed meta field, and returns the warnings: suspect fields, and
/// listed fields that raise blind accuracy.
pub fn attach(d: &mut super::Diagnosis, samples: &[Sample], cfg: &super::DiagnoseConfig) -> Vec<String> {
    d.audit = audit(samples, &used_fields(samples, cfg), cfg.seed, cfg.group_by.as_ref());
    if let Some(listed) = &cfg.features.meta_fields {
        let ablations: Vec<(usize, Ablation)> = d
            .audit
            .iter()
            .enumerate()
            .filter(|(_, f)| listed.contains(&f.field))
            .map(|(i, f)| (i, ablate(d, samples, cfg, &f.field)))
            .collect();
        for (i, a) in ablations {
            d.audit[i].ablation = Some(a);
        }
    }
    let mut warnings: Vec<String> = d.audit.iter().filter(|f| f.suspect).map(FieldAudit::warning).collect();
    warnings.extend(d.audit.iter().filter_map(FieldAudit::ablation_warning));
    warnings
}

/// Blind accuracy of `d` against a TsT-RF run without `field` among the meta
/// features, paired per question.
fn ablate(d: &super::Diagnosis, samples: &[Sample], cfg: &super::DiagnoseConfig, field: &str) -> Ablation {
    let mut without_cfg = cfg.clone();
    without_cfg.method = super::Method::TstRf;
    without_cfg.features.meta_fields =
        cfg.features.meta_fields.as_ref().map(|l| l.iter().filter(|f| *f != field).cloned().collect());
    let without = super::diagnose(samples, &without_cfg);
    // The same blind model on both sides: TsT-RF (a combined TsT-Embed score is not).
    let own;
    let d = if cfg.method == super::Method::TstRf {
        d
    } else {
        own = super::diagnose(samples, &super::DiagnoseConfig { method: super::Method::TstRf, ..cfg.clone() });
        &own
    };
    // Per question: its correctness averaged over repeats, in each run.
    fn per_question(rows: &[super::ScoreRow]) -> BTreeMap<&str, f64> {
        let mut m: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
        for r in rows {
            let e = m.entry(r.id.as_str()).or_default();
            e.0 += r.correct;
            e.1 += 1;
        }
        m.into_iter().map(|(id, (sum, k))| (id, sum / k as f64)).collect()
    }
    let (a, b) = (per_question(&d.rows), per_question(&without.rows));
    let group_of: HashMap<&str, String> = match cfg.group_by.as_ref() {
        Some(g) => samples.iter().map(|s| s.id.as_str()).zip(g.keys(samples)).collect(),
        None => HashMap::new(),
    };
    // Differences summed per cluster (a fold group, or the question itself).
    let mut clusters: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    let (mut with_sum, mut without_sum, mut n) = (0.0, 0.0, 0usize);
    for (id, x) in &a {
        let Some(y) = b.get(id) else { continue };
        let key = group_of.get(id).cloned().unwrap_or_else(|| (*id).to_string());
        let e = clusters.entry(key).or_default();
        e.0 += x - y;
        e.1 += 1;
        with_sum += x;
        without_sum += y;
        n += 1;
    }
    let sums: Vec<(f64, usize)> = clusters.into_values().collect();
    let ci95 = if sums.is_empty() {
        (0.0, 0.0)
    } else {
        use rand::SeedableRng;
        let mut rng =
            rand_chacha::ChaCha8Rng::seed_from_u64(crate::seed::rng_for(cfg.seed, "diagnose.audit.ablation", field));
        let mut diffs: Vec<f64> = (0..1000)
            .map(|_| {
                let (mut total, mut count) = (0.0, 0usize);
                for _ in 0..sums.len() {
                    let (s, c) = sums[crate::seed::random_below(&mut rng, 0, sums.len())];
                    total += s;
                    count += c;
                }
                total / count.max(1) as f64
            })
            .collect();
        diffs.sort_by(f64::total_cmp);
        (diffs[24], diffs[974])
    };
    let n = n.max(1) as f64;
    Ablation { with: with_sum / n, without: without_sum / n, difference: (with_sum - without_sum) / n, ci95 }
}

/// Whether a field's value is the question's gold answer, compared as the answer
/// scorer compares: the option's text or letter, yes/no and open answers as
/// normalised text, numbers by value.
fn is_gold(value: &str, s: &Sample) -> bool {
    use crate::sample::{normalize_text, parse_number};
    let norm = normalize_text(value);
    match s.answer_format {
        AnswerFormat::MultipleChoice => {
            let letter = s.answer_index.and_then(|i| usize::try_from(i).ok()).map(crate::sample::option_letter);
            let bare = value.trim().trim_matches(|c: char| "()[].: ".contains(c));
            letter.is_some_and(|l| bare.eq_ignore_ascii_case(&l))
                || (!norm.is_empty() && norm == normalize_text(&s.answer))
        }
        AnswerFormat::Numeric => parse_number(value).zip(parse_number(&s.answer)).is_some_and(|(v, g)| v == g),
        _ => !norm.is_empty() && norm == normalize_text(&s.answer),
    }
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
            let carrying: Vec<&Sample> = samples.iter().filter(|s| s.meta.contains_key(field)).collect();
            let equal = carrying.iter().filter(|s| is_gold(&s.meta[field], s)).count();
            let gold_equal = if carrying.is_empty() { 0.0 } else { equal as f64 / carrying.len() as f64 };
            FieldAudit {
                field: field.to_string(),
                used: used.iter().any(|u| u == field),
                n,
                solo_accuracy,
                majority,
                gold_equal,
                suspect: solo_suspect(n, solo_accuracy, majority) || gold_equal > GOLD_EQUAL,
                ablation: None,
            }
        })
        .collect()
}

/// Held-out hits of the value lookup and of the majority baseline, over 5 folds.
fn solo_hits(rows: &[&Sample], field: &str, seed: u64, group_by: Option<&super::GroupBy>) -> (usize, usize) {
    let k = 5.min(rows.len());
    let seed = crate::seed::rng_for(seed, "diagnose.audit", field);
    let fold_of = match group_by {
        Some(g) => folds::grouped(&g.keys(rows.iter().copied()), k, seed),
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
    fn a_field_only_on_questions_of_one_gold_is_not_suspect() {
        // "frame" is set on the 40 "yes" questions only: its solo accuracy there is
        // 100%, and so is always answering "yes" on them.
        let samples: Vec<Sample> = (0..100)
            .map(|i| {
                let answer = if i < 40 || i % 2 == 0 { "yes" } else { "no" };
                let meta: Vec<(&str, String)> =
                    if i < 40 { vec![("frame", format!("f{}", i % 3))] } else { Vec::new() };
                yes_no(i, answer, &meta)
            })
            .collect();
        let a = audit(&samples, &[], 42, None);
        let f = a.iter().find(|f| f.field == "frame").unwrap();
        assert_eq!((f.n, f.solo_accuracy, f.majority), (40, 1.0, 1.0), "{f:?}");
        assert!(!f.suspect, "{f:?}");
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

    #[test]
    fn an_annotators_answer_equal_to_the_gold_is_suspect_whatever_its_solo_accuracy() {
        // Open answers, each question its own: a value lookup learns nothing from
        // them, but the annotator wrote the gold on 9 questions in 10.
        let samples: Vec<Sample> = (0..200)
            .map(|i| {
                let mut s = Sample::new(format!("q{i}"), "What organ?", format!("organ number {i}"));
                s.answer_format = AnswerFormat::Open;
                let written = if i % 10 == 0 { "unsure".to_string() } else { format!("Organ number {i}.") };
                s.meta.insert("annotator".into(), written);
                s
            })
            .collect();
        let a = audit(&samples, &[], 42, None);
        let f = &a[0];
        assert!(f.solo_accuracy < 0.2, "{f:?}");
        assert!((f.gold_equal - 0.9).abs() < 1e-9 && f.suspect, "{f:?}");
        assert!(f.warning().contains("is the gold answer on 90.0% of the questions carrying it"), "{}", f.warning());
    }
}
