//! The diagnosis's plots, written beside `diagnose.json`: what each figure
//! shows is chosen here (the groups, each question's s(x), the groups above
//! their null, [`crate::diagnose::verdict::group_above`]); how it is drawn is
//! `blindspot_plots::diagnosis`'s (`crate::plots`).

use std::collections::BTreeSet;

use crate::diagnose::{Diagnosis, GroupSummary};
use crate::error::Result;
use crate::io::rendered::Rendered;
use crate::plots::diagnosis::{self as draw, Group, Importance, Overall, Scored};
use crate::plots::ellipsize;

fn label(g: &GroupSummary) -> String {
    format!("{} ({})", ellipsize(g.question_type.as_deref().unwrap_or("all"), 30), g.format.as_str())
}

/// `blind_vs_chance.svg`, `s_histogram.svg` and `importances.svg`, rendered.
/// `model` names the blind model in the captions (`TsT-RF`, `TsT-Embed`);
/// `removed` is the set pruning removed, when it ran (a release): the
/// histogram then stacks removed on kept.
pub fn render_all(d: &Diagnosis, model: &str, removed: Option<&BTreeSet<&str>>) -> Result<Vec<Rendered>> {
    Ok(vec![
        Rendered::bytes("blind_vs_chance.svg", blind_vs_chance(d, model)?),
        Rendered::bytes("s_histogram.svg", s_histogram(d, removed)?),
        Rendered::bytes("importances.svg", importances(d)?),
    ])
}

/// Every group's blind accuracy against chance and the majority baseline.
pub fn blind_vs_chance(d: &Diagnosis, model: &str) -> Result<String> {
    let groups: Vec<Group> = d
        .groups
        .iter()
        .map(|g| Group { label: label(g), n: g.n, blind: g.blind_accuracy, chance: g.chance, majority: g.majority })
        .collect();
    let overall =
        Overall { blind: d.weighted, ci95: d.ci95, chance: d.chance, majority: d.majority, questions: d.n_samples };
    draw::blind_vs_chance(&groups, &overall, model)
}

/// s(x) of every question (first repeat; the repeats' mean where there are
/// several), by question type; with `removed`, pruning's removals marked.
pub fn s_histogram(d: &Diagnosis, removed: Option<&BTreeSet<&str>>) -> Result<String> {
    let scores = d.sample_scores();
    let questions: Vec<Scored<'_>> = d
        .rows
        .iter()
        .filter(|r| r.repeat == 0)
        .map(|r| Scored {
            question_type: r.question_type.as_deref().unwrap_or("(no type)"),
            s: scores.get(r.id.as_str()).map_or(r.s, |v| v.0),
            removed: removed.is_some_and(|set| set.contains(r.id.as_str())),
        })
        .collect();
    draw::s_histogram(&questions, removed.is_some())
}

/// The groups above their null ([`crate::diagnose::verdict::group_above`]), the widest margin over their baseline first.
fn above_baseline(d: &Diagnosis) -> Vec<&GroupSummary> {
    let mut above: Vec<&GroupSummary> =
        d.groups.iter().filter(|g| crate::diagnose::verdict::group_above(d, g)).collect();
    above.sort_by(|a, b| {
        (b.blind_accuracy - b.baseline().0)
            .total_cmp(&(a.blind_accuracy - a.baseline().0))
            .then_with(|| label(a).cmp(&label(b)))
    });
    above
}

/// The feature importances of the groups answered above their null.
pub fn importances(d: &Diagnosis) -> Result<String> {
    let above: Vec<Importance> = above_baseline(d)
        .into_iter()
        .map(|g| {
            let (baseline, which) = g.baseline();
            Importance {
                label: label(g),
                n: g.n,
                blind: g.blind_accuracy,
                baseline,
                baseline_name: which.to_string(),
                features: g.top_features.clone(),
            }
        })
        .collect();
    draw::importances(&above, d.groups.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::ScoreRow;
    use crate::sample::AnswerFormat;

    fn group(t: &str, n: usize, blind: f64, chance: f64, majority: f64, feats: &[(&str, f64)]) -> GroupSummary {
        GroupSummary {
            question_type: Some(t.into()),
            format: AnswerFormat::MultipleChoice,
            n,
            blind_accuracy: blind,
            chance,
            majority,
            mean_s: blind,
            top_features: feats.iter().map(|(f, v)| (f.to_string(), *v)).collect(),
            pooled_types: Vec::new(),
            folds: 5,
            shortcut: None,
            first_trees: None,
        }
    }

    fn row(id: String, t: &str, s: f64) -> ScoreRow {
        ScoreRow {
            id,
            question_type: Some(t.into()),
            format: AnswerFormat::MultipleChoice,
            n_options: 4,
            chance: 0.25,
            fold: 0,
            repeat: 0,
            prediction: String::new(),
            correct: s,
            s,
            s_minus_chance: s - 0.25,
        }
    }

    fn diagnosis(groups: Vec<GroupSummary>, rows: Vec<ScoreRow>) -> Diagnosis {
        Diagnosis {
            n_samples: rows.len(),
            rows,
            groups,
            weighted: 0.4,
            macro_by_type: 0.4,
            ci95: (0.35, 0.45),
            chance: 0.25,
            majority: 0.3,
            fingerprint: String::new(),
            tst_embed: None,
            outside: None,
            audit: Vec::new(),
            null: None,
            image_clusters: None,
        }
    }

    /// The `<text>` elements' contents.
    fn texts(svg: &str) -> Vec<&str> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| t.split_once('>').and_then(|(_, r)| r.split_once("</text>")))
            .map(|x| x.0.trim())
            .collect()
    }

    #[test]
    fn blind_vs_chance_spans_zero_to_hundred_and_labels_zero_bars() {
        let d =
            diagnosis(vec![group("ABN", 40, 0.6, 0.25, 0.5, &[]), group("POS", 30, 0.0, 0.25, 0.1, &[])], Vec::new());
        let svg = blind_vs_chance(&d, "TsT-RF").unwrap();
        let t = texts(&svg);
        // The x axis ends at 100%, never past it.
        assert!(t.contains(&"100%"), "{t:?}");
        assert!(!t.contains(&"110%") && !t.contains(&"120%"), "{t:?}");
        // Each bar's value, the zero one included, with its interval.
        assert!(t.iter().any(|x| x.starts_with("0.0% (0.0–") && x.ends_with("n=30")), "{t:?}");
        assert!(t.iter().any(|x| x.starts_with("60.0% (")), "{t:?}");
        // The legend names every drawn thing; the caption the overall figures.
        for name in ["blind accuracy", "95% CI (Wilson, per group)", "majority baseline", "chance"] {
            assert!(t.contains(&name), "{name}: {t:?}");
        }
        assert!(
            t.iter().any(|x| x.contains("40.0% blind") && x.contains("chance 25.0%") && x.contains("majority 30.0%"))
        );
        // A zero bar is still a 2-pixel filled rectangle.
        let stubs = svg
            .split("<rect")
            .filter_map(|r| r.split_once("/>").map(|x| x.0))
            .filter(|r| r.contains("fill=\"#3465A4\"") && r.contains(" width=\"2\""))
            .count();
        assert_eq!(stubs, 1, "{svg}");
    }

    #[test]
    fn importances_one_panel_per_group_above_baseline_without_zero_features() {
        let d = diagnosis(
            vec![
                group("ABN", 40, 0.6, 0.25, 0.5, &[("q.chars", 0.5), ("q.words", 0.2), ("slot.dead", 0.0)]),
                group("POS", 30, 0.2, 0.25, 0.1, &[("q.chars", 0.9)]),
                group("SIZE", 30, 0.7, 0.5, 0.55, &[("template.p_yes", 0.4)]),
            ],
            Vec::new(),
        );
        let svg = importances(&d).unwrap();
        let t = texts(&svg);
        assert_eq!(t.iter().filter(|x| x.contains("vs baseline")).count(), 2, "{t:?}");
        assert!(t.iter().any(|x| x.starts_with("ABN (multiple_choice): blind 60.0% vs baseline 50.0% (majority)")));
        assert!(!t.iter().any(|x| x.starts_with("POS")), "{t:?}");
        assert!(!t.contains(&"slot.dead"), "{t:?}");
        assert!(t.contains(&"q.words") && t.contains(&"template.p_yes"), "{t:?}");

        let none = diagnosis(vec![group("POS", 30, 0.2, 0.25, 0.1, &[("q.chars", 0.9)])], Vec::new());
        let svg = importances(&none).unwrap();
        assert!(svg.contains("No group is answered above its null blind; no feature importances to show"));
        assert!(!texts(&svg).contains(&"q.chars"));
    }

    #[test]
    fn importances_is_bounded() {
        let groups: Vec<GroupSummary> =
            (0..20).map(|i| group(&format!("T{i:02}"), 50, 0.6, 0.25, 0.3, &[("q.chars", 0.5)])).collect();
        let t_svg = importances(&diagnosis(groups, Vec::new())).unwrap();
        let t = texts(&t_svg);
        assert_eq!(t.iter().filter(|x| x.contains("vs baseline")).count(), 12);
        assert!(t.iter().any(|x| x.contains("12 of 20 groups above baseline shown") && x.contains("8 left out")));
    }

    #[test]
    fn s_histogram_panels_per_type_and_marks_removed() {
        let mut rows = Vec::new();
        for t in 0..15 {
            for i in 0..(100 - t) {
                rows.push(row(format!("t{t:02}-{i:03}"), &format!("type{t:02}"), (i % 10) as f64 / 10.0));
            }
        }
        rows.sort_by(|a, b| a.id.cmp(&b.id));
        let d = diagnosis(Vec::new(), rows);
        let removed: BTreeSet<&str> = ["t00-009", "t00-019", "t03-001"].into_iter().collect();
        let svg = s_histogram(&d, Some(&removed)).unwrap();
        let t = texts(&svg);
        // 11 largest types, then the 4 smallest pooled and named.
        assert!(t.contains(&"type00 (n=100)"), "{t:?}");
        assert!(t.contains(&"type10 (n=90)"), "{t:?}");
        assert!(!t.iter().any(|x| x.starts_with("type11")), "{t:?}");
        assert!(t.contains(&"4 smaller types pooled (n=350)"), "{t:?}");
        assert!(t.contains(&"kept (1392)") && t.contains(&"removed by pruning (3)"), "{t:?}");
        assert!(svg.contains("fill=\"#C43A31\"") && svg.contains("fill=\"#3465A4\""));
        // White background, and no light (minor) grid lines: only the panels' few bold ones.
        assert!(svg.contains("fill=\"#FFFFFF\""));

        let plain = s_histogram(&d, None).unwrap();
        assert!(!plain.contains("fill=\"#C43A31\""));
        assert!(texts(&plain).contains(&"questions (1395; no pruning in this run)"));
    }

    #[test]
    fn plots_are_deterministic() {
        let rows: Vec<ScoreRow> =
            (0..500).map(|i| row(format!("q{i:04}"), ["a", "b"][i % 2], (i % 7) as f64 / 7.0)).collect();
        let d = diagnosis(vec![group("a", 250, 0.6, 0.25, 0.3, &[("q.chars", 0.5)])], rows);
        let removed: BTreeSet<&str> = ["q0001", "q0002"].into_iter().collect();
        assert_eq!(s_histogram(&d, Some(&removed)).unwrap(), s_histogram(&d, Some(&removed)).unwrap());
        assert_eq!(blind_vs_chance(&d, "m").unwrap(), blind_vs_chance(&d, "m").unwrap());
        assert_eq!(importances(&d).unwrap(), importances(&d).unwrap());
    }
}
