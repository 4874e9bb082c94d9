//! The verdict on a diagnosis, decided in one place: is blind accuracy above
//! what the answer distribution alone gives (the label-permutation null,
//! [`super::null`])? The card, the report page, the datasheet, the plots,
//! `blindspot diagnose` and IBP's gate all read it from here.

use super::Diagnosis;
use crate::sample::AnswerFormat;

/// The verdict on one diagnosis.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Blind accuracy is above its null (p ≤ alpha).
    pub above: bool,
    /// The sentence the outputs print.
    pub sentence: String,
    /// The null's p-value, when the null was measured.
    pub p_value: Option<f64>,
    /// Blind accuracy is above chance but not above the null, and the set has
    /// multiple-choice questions: the gold letters are unevenly spread, which
    /// shuffling the options fixes without removing anything.
    pub letter_imbalance: bool,
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// A p-value as the outputs print it.
pub fn p_text(p: f64) -> String {
    if p < 0.001 { "p < 0.001".into() } else { format!("p = {:.3}", p) }
}

impl Verdict {
    /// The verdict on `d`: against its null when measured, else (a diagnosis
    /// run without one) against the larger of chance and the majority baseline.
    pub fn of(d: &Diagnosis) -> Verdict {
        match &d.null {
            Some(null) => {
                let o = &null.overall;
                let sampled = null.sampled().count();
                let sample_note = if sampled > 0 {
                    format!(
                        "; {} group(s) larger than {} questions were tested on a seeded sample of that many",
                        sampled, null.sample_cap
                    )
                } else {
                    String::new()
                };
                // The count of permutations once: p's own text names it when drawing
                // stopped early (by fit, as futile, or as moot).
                let p = if o.p_by_fit || o.p_futile || o.p_moot {
                    o.p_text()
                } else {
                    format!("{} after {} permutation(s)", o.p_text(), o.permutations)
                };
                let reference = format!(
                    "label-permutation null of {}-tree forests: mean {}{}, {p}; those forests score {} blind on the \
                     real answers{sample_note}",
                    null.trees,
                    pct(o.mean),
                    o.q95.map_or(String::new(), |q| format!(", 95th percentile {}", pct(q))),
                    pct(o.observed)
                );
                let has_mc = d.groups.iter().any(|g| g.format == AnswerFormat::MultipleChoice);
                // Above the null and above always giving the most common answer: a forest
                // that does worse than the constant shows no shortcut in the text.
                let above = o.above && d.weighted > d.majority;
                let letter_imbalance = !above && has_mc && d.ci95.0 > d.chance;
                let sentence = if above {
                    format!(
                        "blind accuracy {} is above what the answer distribution alone gives ({reference}): \
                         non-visual features answer questions that permuted answers do not. The majority baseline \
                         scores {} and chance is {}.",
                        pct(d.weighted),
                        pct(d.majority),
                        pct(d.chance)
                    )
                } else if o.above {
                    format!(
                        "blind accuracy {} is above the label-permutation null ({reference}) but not above always \
                         giving the most common answer (the majority baseline scores {}): the forest learns no more \
                         than the answer distribution, so there is no evidence of non-visual shortcuts. Chance is {}.",
                        pct(d.weighted),
                        pct(d.majority),
                        pct(d.chance)
                    )
                } else if letter_imbalance {
                    format!(
                        "blind accuracy {} is above chance ({}) but not above what the answer distribution alone \
                         gives ({reference}): the forest learns how the gold answers are spread (the majority \
                         baseline scores {}), not what the questions say. Shuffling the options (`shuffle-options`, \
                         the `option_shuffle` variant) balances the gold letters without removing questions.",
                        pct(d.weighted),
                        pct(d.chance),
                        pct(d.majority)
                    )
                } else if o.p_value <= super::null::WEAK_EVIDENCE && d.weighted > d.majority {
                    format!(
                        "blind accuracy {} is not above what the answer distribution alone gives at the {} level \
                         ({reference}): weak evidence of non-visual shortcuts, not enough to remove questions. The \
                         majority baseline scores {} and chance is {}.",
                        pct(d.weighted),
                        null.alpha,
                        pct(d.majority),
                        pct(d.chance)
                    )
                } else {
                    format!(
                        "blind accuracy {} is not above what the answer distribution alone gives ({reference}): no \
                         evidence of non-visual shortcuts. The majority baseline scores {} and chance is {}.",
                        pct(d.weighted),
                        pct(d.majority),
                        pct(d.chance)
                    )
                };
                Verdict { above, sentence, p_value: Some(o.p_value), letter_imbalance }
            }
            None => {
                let (baseline, which) = super::score::baseline(d.chance, d.majority);
                let name = match which {
                    super::score::Baseline::Majority => "the majority baseline",
                    super::score::Baseline::Chance => "chance",
                };
                let above = d.ci95.0 > baseline;
                let sentence = if above {
                    format!(
                        "blind accuracy is above {name} by {:.1} pts ({} vs {}, its 95% CI {}-{} clear of it; no \
                         permutation null was measured).",
                        (d.weighted - baseline) * 100.0,
                        pct(d.weighted),
                        pct(baseline),
                        pct(d.ci95.0),
                        pct(d.ci95.1)
                    )
                } else {
                    format!(
                        "blind accuracy is not above {name} ({} vs {}, its 95% CI {}-{} reaches it; no permutation \
                         null was measured).",
                        pct(d.weighted),
                        pct(baseline),
                        pct(d.ci95.0),
                        pct(d.ci95.1)
                    )
                };
                Verdict { above, sentence, p_value: None, letter_imbalance: false }
            }
        }
    }

    /// "above" or "not above", as `diagnose.json` records it.
    pub fn word(&self) -> &'static str {
        if self.above { "above" } else { "not above" }
    }
}

/// Whether a group of `d` is above its own null and above its majority baseline
/// (as [`Verdict::of`] judges the whole set); without a measured null, whether its
/// blind accuracy is above the larger of chance and the majority baseline.
pub fn group_above(d: &Diagnosis, g: &super::GroupSummary) -> bool {
    match d.null.as_ref() {
        Some(n) => {
            n.group(g.question_type.as_deref(), g.format).is_some_and(|x| x.test.above) && g.blind_accuracy > g.majority
        }
        None => g.blind_accuracy > g.baseline().0,
    }
}
