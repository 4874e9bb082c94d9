//! The card's pruning and filter sections: what pruning removed and what it
//! did to blind accuracy, the answer mix before and after, and what the
//! blind-model filter removed.

use std::collections::BTreeMap;

use serde::Serialize;

/// What pruning removed and what it did to blind accuracy (`templates/prune.md`).
pub(crate) fn prune_section(
    out: &mut String,
    samples: &[crate::sample::Sample],
    pr: &crate::prune::Pruned,
    counts: crate::PruningCounts,
    control: Option<&crate::prune::Pruned>,
) {
    let c = &pr.config;
    // The run's kept count is the data's; the control's is its own (no config holds its set).
    let runs =
        [Some((pr.method.as_str(), pr, counts.kept)), control.map(|q| ("random (matched control)", q, q.kept.len()))]
            .into_iter()
            .flatten()
            .filter_map(|(name, q, kept)| RunRow::of(name, q, kept))
            .collect();
    let view = PruneView {
        method: pr.method.as_str(),
        removed: counts.removed,
        input: counts.input,
        kept: counts.kept,
        unit: (!pr.unit.is_empty() && pr.unit != "question").then_some(pr.unit.as_str()),
        units_removed: pr.units_removed,
        budget: c.budget.describe(),
        batch: c.batch.describe(),
        floor: c.floor,
        allocation: c.allocation.as_str(),
        rank: c.rank.describe().to_string(),
        stop_rule: c.stop.as_str(),
        stop: &pr.stop,
        runs,
        fresh_only: std::iter::once(pr).chain(control).any(|q| q.fresh_only().is_some()),
        iterations: iteration_rows(pr),
        below_chance: pr
            .after_independent
            .as_ref()
            .filter(|i| i.ci95.1 < i.chance)
            .map(|i| BelowChance { accuracy: i.blind_accuracy, chance: i.chance }),
        kept_groups: pr.after_independent.as_ref().filter(|i| !i.groups.is_empty()).map(|i| KeptGroups::of(pr, i)),
        answer_mix: (counts.removed > 0).then(|| AnswerMix::of(samples, &pr.kept, control.map(|c| &c.kept[..]))),
        per_type: pr.removed_per_type().into_iter().map(|(name, removed)| TypeRemoved { name, removed }).collect(),
    };
    out.push_str(&super::template::render("prune.md", &view));
}

/// What `templates/prune.md` shows.
#[derive(Serialize)]
struct PruneView<'a> {
    /// `ibp`, `aflite`, `bclean` or `random`.
    method: &'static str,
    removed: usize,
    input: usize,
    kept: usize,
    /// The unit removed whole, when not one question.
    unit: Option<&'a str>,
    units_removed: usize,
    budget: String,
    batch: String,
    floor: usize,
    allocation: &'static str,
    rank: String,
    stop_rule: &'a str,
    /// Why the run stopped, in words.
    stop: &'a str,
    runs: Vec<RunRow<'a>>,
    /// Some run was measured on fresh seeds only.
    fresh_only: bool,
    /// The iterations shown, `None` for the row that stands for those left out.
    iterations: Vec<Option<IterationRow>>,
    below_chance: Option<BelowChance>,
    kept_groups: Option<KeptGroups<'a>>,
    answer_mix: Option<AnswerMix>,
    per_type: Vec<TypeRemoved>,
}

/// A run of the before/after table: pruning itself or its matched control.
#[derive(Serialize)]
struct RunRow<'a> {
    name: &'a str,
    kept: usize,
    before: Interval,
    fresh: Option<Interval>,
    selection: Option<Interval>,
    chance: Option<f64>,
}

/// A blind accuracy and its 95% interval.
#[derive(Serialize)]
struct Interval {
    accuracy: f64,
    low: f64,
    high: f64,
}

impl<'a> RunRow<'a> {
    /// The row of a run diagnosed before it removed anything.
    fn of(name: &'a str, q: &crate::prune::Pruned, kept: usize) -> Option<Self> {
        let b = q.before.as_ref()?;
        Some(RunRow {
            name,
            kept,
            before: Interval { accuracy: b.weighted, low: b.ci95.0, high: b.ci95.1 },
            fresh: q.after_independent.as_ref().map(|i| Interval {
                accuracy: i.blind_accuracy,
                low: i.ci95.0,
                high: i.ci95.1,
            }),
            selection: q.after.as_ref().map(|a| Interval { accuracy: a.weighted, low: a.ci95.0, high: a.ci95.1 }),
            chance: q.after.as_ref().map(|a| a.chance).or(q.after_independent.as_ref().map(|i| i.chance)),
        })
    }
}

#[derive(Serialize)]
struct IterationRow {
    iteration: usize,
    size: usize,
    removed: usize,
    blind: f64,
    low: Option<f64>,
    high: Option<f64>,
    /// `None` where not finite.
    max_bias: Option<f64>,
    mean_bias: Option<f64>,
}

/// The iterations of a run that removed something: the first and last six
/// of a long run, with one row for those between.
fn iteration_rows(pr: &crate::prune::Pruned) -> Vec<Option<IterationRow>> {
    let steps = &pr.iterations;
    if !(steps.len() > 1 || steps.first().is_some_and(|i| i.removed > 0)) {
        return Vec::new();
    }
    let shown = 12;
    let mut out = Vec::new();
    for (k, i) in steps.iter().enumerate() {
        if steps.len() > shown && k >= shown / 2 && k < steps.len() - shown / 2 {
            if k == shown / 2 {
                out.push(None);
            }
            continue;
        }
        out.push(Some(IterationRow {
            iteration: i.iteration,
            size: i.size,
            removed: i.removed,
            blind: i.blind_accuracy,
            low: i.ci95.map(|c| c.0),
            high: i.ci95.map(|c| c.1),
            max_bias: Some(i.max_bias).filter(|b| b.is_finite()),
            mean_bias: Some(i.mean_bias).filter(|b| b.is_finite()),
        }));
    }
    out
}

/// Blind accuracy on fresh seeds below chance after pruning.
#[derive(Serialize)]
struct BelowChance {
    accuracy: f64,
    chance: f64,
}

#[derive(Serialize)]
struct TypeRemoved {
    name: String,
    removed: usize,
}

/// `## Blind-model filter`: the rule, each model's part, and the count removed
/// (`templates/filter.md`).
pub(crate) fn filter_section(out: &mut String, f: &crate::filter::FilterReport) {
    #[derive(Serialize)]
    struct FilterView<'a> {
        removed: usize,
        questions: usize,
        /// The rule in words; it names the models, which are data shown as written.
        rule: &'a str,
        models: Vec<&'a str>,
        /// The publication a preset follows.
        source: Option<&'a str>,
        rows: Vec<ModelRow<'a>>,
        unpredicted: usize,
        unknown: usize,
    }
    #[derive(Serialize)]
    struct ModelRow<'a> {
        model: &'a str,
        predicted: usize,
        /// Fewest and most samples per question.
        min: usize,
        max: usize,
        answered: usize,
    }
    let view = FilterView {
        removed: f.removed.len(),
        questions: f.n_questions,
        rule: &f.rule.text,
        models: f.models.iter().map(|m| m.model.as_str()).collect(),
        source: f.rule.source.as_deref(),
        rows: f
            .models
            .iter()
            .map(|m| ModelRow {
                model: &m.model,
                predicted: m.questions_predicted,
                min: m.samples_min,
                max: m.samples_max,
                answered: m.answered,
            })
            .collect(),
        unpredicted: f.unpredicted,
        unknown: f.unknown_predictions,
    };
    out.push_str(&super::template::render("filter.md", &view));
}

/// The answer a question's gold is counted under in the answer mix: the gold
/// option's letter, yes or no, or the normalised answer text.
fn answer_class(s: &crate::sample::Sample) -> String {
    use crate::sample::AnswerFormat;
    match (s.answer_format, s.answer_index.and_then(|i| usize::try_from(i).ok())) {
        (AnswerFormat::MultipleChoice, Some(i)) => format!("option {}", crate::sample::option_letter(i)),
        _ => s.answer.trim().to_lowercase(),
    }
}

/// Labels shown per answer format; the rest are summed into one row.
const MIX_ROWS: usize = 6;

/// The answer mix (numeric answers aside) of the full set, the kept set and
/// the matched control's kept set, per answer format, and the largest shift
/// of each format: a shifted mix moves chance and the majority baseline, so
/// part of a change in blind accuracy is the shift and not the removed
/// shortcuts.
#[derive(Serialize)]
struct AnswerMix {
    /// The matched random control's kept set is shown beside.
    control: bool,
    rows: Vec<MixRow>,
    /// Per format, the answer whose share moved most, when by [`MIX_SHIFT`] or more.
    shifts: Vec<Shift>,
    /// [`MIX_SHIFT`] in points.
    threshold: u32,
}

/// One answer's share of its format's questions (`None`: the set has none).
#[derive(Serialize)]
struct MixRow {
    format: &'static str,
    label: String,
    all: Option<f64>,
    kept: Option<f64>,
    removed: Option<f64>,
    control: Option<f64>,
}

#[derive(Serialize)]
struct Shift {
    format: &'static str,
    label: String,
    before: f64,
    after: f64,
}

impl AnswerMix {
    fn of(samples: &[crate::sample::Sample], kept: &[String], control: Option<&[String]>) -> AnswerMix {
        use crate::sample::AnswerFormat;
        let kept: std::collections::HashSet<&str> = kept.iter().map(String::as_str).collect();
        let ctl: Option<std::collections::HashSet<&str>> = control.map(|c| c.iter().map(String::as_str).collect());
        // Per format, per class: questions in the full set, kept, kept by the control.
        let mut mix: BTreeMap<AnswerFormat, BTreeMap<String, [usize; 3]>> = BTreeMap::new();
        for s in samples.iter().filter(|s| s.answer_format != AnswerFormat::Numeric) {
            let e = mix.entry(s.answer_format).or_default().entry(answer_class(s)).or_default();
            e[0] += 1;
            e[1] += usize::from(kept.contains(s.id.as_str()));
            e[2] += usize::from(ctl.as_ref().is_some_and(|c| c.contains(s.id.as_str())));
        }
        let share = |k: usize, n: usize| (n > 0).then(|| k as f64 / n as f64);
        let mut out = AnswerMix {
            control: control.is_some(),
            rows: Vec::new(),
            shifts: Vec::new(),
            threshold: (MIX_SHIFT * 100.0).round() as u32,
        };
        for (format, classes) in &mix {
            let total: [usize; 3] = classes.values().fold([0; 3], |a, c| [a[0] + c[0], a[1] + c[1], a[2] + c[2]]);
            let mut rows: Vec<(&String, &[usize; 3])> = classes.iter().collect();
            rows.sort_by(|a, b| b.1[0].cmp(&a.1[0]).then_with(|| a.0.cmp(b.0)));
            let (shown, rest) = rows.split_at(rows.len().min(MIX_ROWS));
            let mut rest_sum = [0usize; 3];
            for (_, c) in rest {
                for k in 0..3 {
                    rest_sum[k] += c[k];
                }
            }
            let label_rest = format!("({} other answers)", rest.len());
            let lines = shown
                .iter()
                .map(|(l, c)| (l.as_str(), **c))
                .chain((!rest.is_empty()).then_some((label_rest.as_str(), rest_sum)));
            for (label, c) in lines {
                out.rows.push(MixRow {
                    format: format.as_str(),
                    label: label.to_string(),
                    all: share(c[0], total[0]),
                    kept: share(c[1], total[1]),
                    removed: share(c[0] - c[1], total[0] - total[1]),
                    control: share(c[2], total[2]),
                });
            }
            // The largest change of one answer's share, all → kept.
            let largest = shown
                .iter()
                .filter(|_| total[1] > 0 && total[0] > 0)
                .map(|(l, c)| (l.as_str(), c[0] as f64 / total[0] as f64, c[1] as f64 / total[1] as f64))
                .max_by(|a, b| (a.2 - a.1).abs().total_cmp(&(b.2 - b.1).abs()).then_with(|| b.0.cmp(a.0)));
            if let Some((label, before, after)) = largest
                && (after - before).abs() >= MIX_SHIFT
            {
                out.shifts.push(Shift { format: format.as_str(), label: label.to_string(), before, after });
            }
        }
        out
    }
}

/// A change of one answer's share (all → kept) from which the card says the mix shifted.
const MIX_SHIFT: f64 = 0.02;

/// What pruning left: each group of the kept set on fresh seeds against its
/// own null, and the groups still above it.
#[derive(Serialize)]
struct KeptGroups<'a> {
    /// The groups still above their null.
    left: Vec<KeptGroup<'a>>,
    /// Why the run stopped short of the null, in words.
    stopped_short: String,
    /// "N fresh seeds".
    seeds: String,
    groups: Vec<KeptGroup<'a>>,
}

#[derive(Serialize)]
struct KeptGroup<'a> {
    name: &'a str,
    format: &'static str,
    n: usize,
    blind: f64,
    majority: f64,
    /// The null's mean; `None` where the null was not drawn.
    null: Option<f64>,
    /// The p-value as the verdict writes it, without "p".
    p: String,
    above: bool,
}

impl<'a> KeptGroups<'a> {
    fn of(pr: &crate::prune::Pruned, i: &'a crate::prune::Independent) -> KeptGroups<'a> {
        let row = |g: &'a crate::prune::KeptGroup| KeptGroup {
            name: g.question_type.as_deref().unwrap_or("(no type)"),
            format: g.format.as_str(),
            n: g.n,
            blind: g.blind_accuracy,
            majority: g.majority,
            null: Some(g.null_mean).filter(|m| m.is_finite()),
            p: crate::diagnose::verdict::p_text(g.p_value)
                .trim_start_matches("p ")
                .trim_start_matches("= ")
                .to_string(),
            above: g.above,
        };
        KeptGroups {
            left: i.still_above().map(row).collect(),
            stopped_short: pr.stopped_short(),
            seeds: crate::prune::fresh_seeds(i.seeds.len()),
            groups: i.groups.iter().map(row).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AnswerMix;
    use crate::sample::{AnswerFormat, Sample};

    /// The answer mix as `templates/prune.md` writes it.
    fn answer_mix(out: &mut String, samples: &[Sample], kept: &[String], control: Option<&[String]>) {
        let view = serde_json::json!({ "answer_mix": AnswerMix::of(samples, kept, control) });
        out.push_str(&crate::card::template::render("answer-mix.md", &view));
    }

    #[test]
    fn a_shifted_answer_mix_is_said_and_a_steady_one_is_not() {
        let samples: Vec<Sample> = (0..20)
            .map(|i| {
                let mut s = Sample::new(format!("q{i:02}"), "is it?", if i < 10 { "yes" } else { "no" });
                s.answer_format = AnswerFormat::YesNo;
                s
            })
            .collect();
        let ids = |f: &dyn Fn(usize) -> bool| (0..20).filter(|i| f(*i)).map(|i| format!("q{i:02}")).collect::<Vec<_>>();
        // Pruning took five "no" answers: yes 50% -> 66.7% of the kept set.
        let mut out = String::new();
        answer_mix(&mut out, &samples, &ids(&|i| i < 15), Some(&ids(&|i| i % 4 != 0)));
        assert!(out.contains("| yes_no | yes | 50.0% | 66.7% | 0.0% | 46.7% |"), "{out}");
        assert!(out.contains("**The answer mix shifted** (yes_no `no` 50.0% → 33.3%)"), "{out}");
        // One of each taken: the mix holds.
        let mut out = String::new();
        answer_mix(&mut out, &samples, &ids(&|i| i != 0 && i != 10), None);
        assert!(out.contains("No answer's share moved by 2 pts or more"), "{out}");
    }
}
