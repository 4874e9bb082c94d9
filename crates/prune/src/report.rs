//! What a pruning run writes: `prune.json` (settings, stop reason, the
//! per-iteration curve, removed questions with reasons, before/after blind
//! accuracy), `removed.csv` (removal order), `kept_ids.txt` (dataset order)
//! and `prune_curve.svg` (blind accuracy and mean bias against the fraction
//! removed, with the random control's curve when there is one).

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Method, Pruned};
use crate::diagnose::Diagnosis;
use crate::error::Result;
use crate::io::r6;
use crate::io::rendered::Rendered;
use crate::plots::{BLUE, GREY, LABEL, ORANGE, Swatch, TITLE, chart_below, draw_legend, legend_height, plot_err, text};

/// A finite number rounded for JSON; None (null) otherwise.
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then(|| r6(v))
}

/// `prune.json`: one pruning run, and its matched random control beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PruneReport {
    pub method: String,
    pub settings: Settings,
    /// Budget in questions per allocation key.
    pub budgets: BTreeMap<String, usize>,
    pub n_input: usize,
    pub n_kept: usize,
    pub n_removed: usize,
    /// Units removed, each whole.
    #[serde(default)]
    pub units_removed: usize,
    /// Why the loop ended.
    pub stop: String,
    /// TsT-RF on the input, with the folds and forests that chose the removals.
    pub before: Option<DiagnosisSummary>,
    /// TsT-RF on the kept set, with the same seed as the selection: biased
    /// downward by the selection itself.
    pub after: Option<DiagnosisSummary>,
    /// The kept set re-diagnosed on fresh seeds that chose nothing.
    pub after_independent: Option<IndependentSummary>,
    pub removed_per_type: BTreeMap<String, usize>,
    pub iterations: Vec<IterationRow>,
    pub removed: Vec<RemovedRow>,
    /// The matched random control (same removals per allocation key, random order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<Box<PruneReport>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Settings {
    pub method: String,
    pub budget: String,
    pub batch: String,
    pub floor: usize,
    pub threshold: Option<f64>,
    pub allocation: String,
    pub rank: String,
    pub seed: u64,
    /// When IBP stops before its budget: `null`, `chance` or `budget`.
    pub stop: String,
    /// What is removed at once: `question`, `image`, `question text` or `meta:FIELD`.
    pub unit: String,
    pub independent_seeds: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aflite: Option<AfliteSettings>,
    /// Outside scores combined into the s(x) IBP ranks by, when given: the file,
    /// its sha256 and the rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_scores: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AfliteSettings {
    pub partitions: usize,
    pub train_fraction: f64,
    pub tau: f64,
    pub probe: String,
}

/// Headline figures of one diagnosis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DiagnosisSummary {
    pub n: usize,
    pub blind_accuracy: f64,
    #[serde(rename = "macro")]
    pub macro_by_type: f64,
    pub ci95: [f64; 2],
    pub chance: f64,
    pub majority: f64,
    pub ids_fingerprint: String,
    /// The label-permutation null, when measured (IBP's first pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null: Option<crate::diagnose::null::Null>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndependentSummary {
    /// The fresh seeds (one fold assignment and forest set each).
    pub seeds: Vec<u64>,
    pub n: usize,
    pub blind_accuracy: f64,
    pub ci95: [f64; 2],
    pub chance: f64,
    pub majority: f64,
    /// Per group of the kept set: blind accuracy on the fresh seeds against the group's
    /// own null; `above` groups are still blind-answerable (the set is not debiased).
    #[serde(default)]
    pub groups: Vec<KeptGroupRow>,
}

/// One group of the kept set after pruning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KeptGroupRow {
    pub question_type: Option<String>,
    pub format: String,
    pub n: usize,
    pub blind_accuracy: f64,
    pub majority: f64,
    pub null_mean: Option<f64>,
    pub p_value: f64,
    pub above: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IterationRow {
    pub iteration: usize,
    pub size: usize,
    pub removed_before: usize,
    pub fraction_removed: f64,
    pub max_bias: Option<f64>,
    pub mean_bias: Option<f64>,
    pub blind_accuracy: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    pub chance: Option<f64>,
    pub removed: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RemovedRow {
    pub id: String,
    pub question_type: Option<String>,
    pub format: String,
    pub iteration: usize,
    pub score: Option<f64>,
    pub reason: String,
}

fn diagnosis_summary(d: &Diagnosis) -> DiagnosisSummary {
    DiagnosisSummary {
        n: d.n_samples,
        blind_accuracy: r6(d.weighted),
        macro_by_type: r6(d.macro_by_type),
        ci95: [r6(d.ci95.0), r6(d.ci95.1)],
        chance: r6(d.chance),
        majority: r6(d.majority),
        ids_fingerprint: d.fingerprint.clone(),
        null: d.null.clone(),
    }
}

impl PruneReport {
    /// The report of one run.
    pub fn of(p: &Pruned) -> PruneReport {
        let c = &p.config;
        PruneReport {
            method: p.method.as_str().into(),
            settings: Settings {
                method: p.method.as_str().into(),
                budget: c.budget.describe(),
                batch: c.batch.describe(),
                floor: c.floor,
                threshold: c.threshold,
                allocation: c.allocation.as_str().into(),
                rank: c.rank.as_str().into(),
                seed: c.seed,
                stop: c.stop.as_str().into(),
                unit: p.unit.clone(),
                independent_seeds: c.independent_seeds,
                aflite: (p.method == Method::Aflite).then(|| AfliteSettings {
                    partitions: c.aflite.partitions,
                    train_fraction: c.aflite.train_fraction,
                    tau: c.aflite.tau,
                    probe: "multinomial logistic regression (linfa-logistic, L2 = 1/n, 50 L-BFGS iterations) on \
                            standardized TsT features"
                        .into(),
                }),
                outside_scores: p.before.as_ref().and_then(|d| d.outside.as_ref()).map(|o| {
                    format!(
                        "s(x) is the {} of TsT-RF's and the outside scores of {} (sha256 {}); the forests are refit \
                         each iteration on what remains, each question's outside score stays fixed",
                        o.combine.as_str(),
                        o.file,
                        o.sha256
                    )
                }),
            },
            budgets: p.budgets.clone(),
            n_input: p.n_input,
            n_kept: p.kept.len(),
            n_removed: p.removed.len(),
            units_removed: p.units_removed,
            stop: p.stop.clone(),
            before: p.before.as_ref().map(diagnosis_summary),
            after: p.after.as_ref().map(diagnosis_summary),
            after_independent: p.after_independent.as_ref().map(|i| IndependentSummary {
                seeds: i.seeds.clone(),
                n: i.n_samples,
                blind_accuracy: r6(i.blind_accuracy),
                ci95: [r6(i.ci95.0), r6(i.ci95.1)],
                chance: r6(i.chance),
                majority: r6(i.majority),
                groups: i
                    .groups
                    .iter()
                    .map(|g| KeptGroupRow {
                        question_type: g.question_type.clone(),
                        format: g.format.as_str().to_string(),
                        n: g.n,
                        blind_accuracy: r6(g.blind_accuracy),
                        majority: r6(g.majority),
                        null_mean: finite(g.null_mean).map(r6),
                        p_value: r6(g.p_value),
                        above: g.above,
                    })
                    .collect(),
            }),
            removed_per_type: p.removed_per_type(),
            iterations: p
                .iterations
                .iter()
                .map(|it| IterationRow {
                    iteration: it.iteration,
                    size: it.size,
                    removed_before: it.removed_before,
                    fraction_removed: r6(it.removed_before as f64 / p.n_input.max(1) as f64),
                    max_bias: finite(it.max_bias),
                    mean_bias: finite(it.mean_bias),
                    blind_accuracy: finite(it.blind_accuracy),
                    ci95: it.ci95.map(|(lo, hi)| [r6(lo), r6(hi)]),
                    chance: finite(it.chance),
                    removed: it.removed,
                })
                .collect(),
            removed: p
                .removed
                .iter()
                .map(|r| RemovedRow {
                    id: r.id.clone(),
                    question_type: r.question_type.clone(),
                    format: r.format.as_str().into(),
                    iteration: r.iteration,
                    score: finite(r.score),
                    reason: r.reason.clone(),
                })
                .collect(),
            control: None,
        }
    }

    /// `prune.json`: the run, with its matched random control when there is one.
    pub fn with_control(p: &Pruned, control: Option<&Pruned>) -> PruneReport {
        PruneReport { control: control.map(|c| Box::new(PruneReport::of(c))), ..PruneReport::of(p) }
    }
}

/// `removed.csv`: one row per removed question, in removal order. Ids, question
/// types and reasons are text cells, defused where a spreadsheet would read a
/// formula.
pub fn removed_csv(p: &Pruned) -> String {
    use crate::io::escape::csv::{cell, document};
    let header = ["order", "id", "question_type", "format", "iteration", "score", "reason"].map(String::from);
    let rows = p.removed.iter().enumerate().map(|(i, r)| {
        [
            (i + 1).to_string(),
            cell(&r.id).into_owned(),
            cell(r.question_type.as_deref().unwrap_or("")).into_owned(),
            r.format.as_str().to_string(),
            r.iteration.to_string(),
            r6(r.score).to_string(),
            cell(&r.reason).into_owned(),
        ]
    });
    document(std::iter::once(header).chain(rows))
}

/// Writes `prune.json`, `removed.csv`, `kept_ids.txt` and `prune_curve.svg` into `dir`.
pub fn write_report(dir: &Path, p: &Pruned, control: Option<&Pruned>) -> Result<()> {
    crate::io::rendered::write_all(dir, &render_report(p, control)?)
}

/// The files [`write_report`] writes, rendered: `prune.json`, `removed.csv`,
/// `kept_ids.txt` and `prune_curve.svg`.
pub fn render_report(p: &Pruned, control: Option<&Pruned>) -> Result<Vec<Rendered>> {
    let mut kept = p.kept.join("\n");
    kept.push('\n');
    Ok(vec![
        Rendered::json("prune.json", &PruneReport::with_control(p, control))?,
        Rendered::bytes("removed.csv", removed_csv(p)),
        Rendered::bytes("kept_ids.txt", kept),
        Rendered::bytes("prune_curve.svg", curve_svg(p, control)?),
    ])
}

/// One line of the curve plot: label, colour, dashed, points.
type Series = (String, RGBColor, bool, Vec<(f64, f64)>);

/// The y range of the curve: the data's, padded by a tenth of its span (at
/// least 0.02), not below 0 when no value is.
fn fitted_range(series: &[Series]) -> (f64, f64) {
    let ys = || series.iter().flat_map(|s| s.3.iter().map(|p| p.1));
    let (lo, hi) = (ys().fold(f64::INFINITY, f64::min), ys().fold(f64::NEG_INFINITY, f64::max));
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.1).max(0.02);
    let bottom = if lo >= 0.0 { (lo - pad).max(0.0) } else { lo - pad };
    (bottom, hi + pad)
}

/// Blind accuracy (solid) and mean bias (dashed) against the fraction
/// removed, chance dashed grey; the legend above the data area draws each
/// swatch in its series' style; the y range is fitted to the data.
pub fn curve_svg(p: &Pruned, control: Option<&Pruned>) -> Result<String> {
    let points = |q: &Pruned, f: fn(&super::Iteration) -> f64| -> Vec<(f64, f64)> {
        q.iterations
            .iter()
            .filter(|it| f(it).is_finite())
            .map(|it| (it.removed_before as f64 / q.n_input.max(1) as f64, f(it)))
            .collect()
    };
    let mut series: Vec<Series> = vec![
        (format!("{}: blind accuracy", p.method.as_str()), BLUE, false, points(p, |i| i.blind_accuracy)),
        (format!("{}: mean bias", p.method.as_str()), BLUE, true, points(p, |i| i.mean_bias)),
        ("chance".into(), GREY, true, points(p, |i| i.chance)),
    ];
    if let Some(c) = control {
        series.push((format!("{}: blind accuracy", c.method.as_str()), ORANGE, false, points(c, |i| i.blind_accuracy)));
        series.push((format!("{}: mean bias", c.method.as_str()), ORANGE, true, points(c, |i| i.mean_bias)));
    }
    // A run the budget ended has no selection-seed point for its kept set: the fresh
    // seeds' figure is that set's point, a series of its own.
    const FRESH: RGBColor = RGBColor(46, 139, 87);
    const FRESH_CONTROL: RGBColor = RGBColor(160, 82, 45);
    for (q, color) in std::iter::once((p, FRESH)).chain(control.map(|c| (c, FRESH_CONTROL))) {
        if let Some(i) = q.fresh_only() {
            let x = q.removed.len() as f64 / q.n_input.max(1) as f64;
            let name = format!("{}: kept set, {}", q.method.as_str(), super::fresh_seeds(i.seeds.len()));
            series.push((name, color, false, vec![(x, i.blind_accuracy)]));
        }
    }
    let x_max = series.iter().flat_map(|s| s.3.iter().map(|p| p.0)).fold(0.0f64, f64::max).max(0.01) * 1.05;
    let (y_min, y_max) = fitted_range(&series);
    let title = match p.method {
        Method::Aflite => "AFLite: probe accuracy and mean predictability vs fraction removed",
        Method::Bclean => "B-Clean: blind accuracy (TsT-RF) before and after",
        _ => "Blind accuracy (TsT-RF) and mean bias vs fraction removed",
    };
    let legend: Vec<(Swatch, String)> = series
        .iter()
        .map(|(name, color, dashed, _)| {
            (if *dashed { Swatch::Dashed(*color) } else { Swatch::Line(*color) }, name.clone())
        })
        .collect();
    let width = 760;
    let top = 34 + legend_height(&legend, 14, width - 10) + 4;
    let height = top + 380;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        text(&root, title, (14, 18), TITLE, &BLACK, Pos::new(HPos::Left, VPos::Center))?;
        draw_legend(&root, &legend, 14, 44, width - 10)?;
        let mut chart = chart_below(&root, top, width, height, 0f64..x_max, y_min..y_max)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(BLACK.mix(0.1))
            .label_style(("sans-serif", LABEL))
            .axis_desc_style(("sans-serif", LABEL))
            .x_label_formatter(&|v| format!("{:.*}%", usize::from(x_max < 0.1), v * 100.0))
            .x_desc("share of questions removed")
            .y_desc("score")
            .draw()
            .map_err(plot_err)?;
        for (_, color, dashed, pts) in series {
            let style = ShapeStyle { color: color.to_rgba(), filled: false, stroke_width: 2 };
            if dashed {
                chart.draw_series(DashedLineSeries::new(pts.clone(), 6, 4, style))
            } else {
                chart.draw_series(LineSeries::new(pts.clone(), style))
            }
            .map_err(plot_err)?;
            // Each iteration marked, so a one-point series (nothing removed) still shows.
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(plot_err)?;
        }
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(method: Method, accuracies: &[f64]) -> Pruned {
        Pruned {
            method,
            config: super::super::PruneConfig::default(),
            budgets: BTreeMap::new(),
            kept: Vec::new(),
            removed: Vec::new(),
            iterations: accuracies
                .iter()
                .enumerate()
                .map(|(i, &a)| super::super::Iteration {
                    iteration: i + 1,
                    size: 1000 - 50 * i,
                    removed_before: 50 * i,
                    max_bias: 0.9,
                    mean_bias: a - 0.2,
                    blind_accuracy: a,
                    ci95: None,
                    chance: 0.25,
                    removed: 50,
                })
                .collect(),
            stop: "budget reached".into(),
            before: None,
            after: None,
            after_independent: None,
            n_input: 1000,
            unit: "question".into(),
            units_removed: 0,
        }
    }

    /// The `<polyline>`s whose points all lie above `y_max` (the legend band), as point lists.
    fn polylines_above(svg: &str, y_max: f64) -> Vec<(String, Vec<(f64, f64)>)> {
        svg.split("<polyline")
            .skip(1)
            .filter_map(|p| {
                let stroke = p.split("stroke=\"").nth(1)?.split('"').next()?.to_string();
                let pts: Vec<(f64, f64)> = p
                    .split("points=\"")
                    .nth(1)?
                    .split('"')
                    .next()?
                    .split_whitespace()
                    .filter_map(|xy| xy.split_once(',').and_then(|(x, y)| Some((x.parse().ok()?, y.parse().ok()?))))
                    .collect();
                pts.iter().all(|p| p.1 < y_max).then_some((stroke, pts))
            })
            .collect()
    }

    #[test]
    fn curve_legend_is_outside_and_draws_dashes() {
        let svg =
            curve_svg(&run(Method::Ibp, &[0.6, 0.55, 0.5]), Some(&run(Method::Random, &[0.6, 0.59, 0.58]))).unwrap();
        // The legend band ends above the plot: every legend swatch sits above y = 100.
        let legend = polylines_above(&svg, 100.0);
        // Solid swatches are one segment; the dashed ones (ibp and random mean bias, chance) several.
        let blue: Vec<_> = legend.iter().filter(|l| l.0 == "#3465A4").collect();
        assert!(blue.len() >= 3, "one solid + a dashed swatch of >= 2 dashes: {legend:?}");
        let grey = legend.iter().filter(|l| l.0 == "#969696").count();
        assert!(grey >= 2, "chance is dashed: {legend:?}");
        for name in ["ibp: blind accuracy", "ibp: mean bias", "chance", "random: blind accuracy", "random: mean bias"] {
            assert!(svg.contains(&format!("\n{name}\n</text>")), "{name}");
        }
    }

    #[test]
    fn a_budget_ended_run_ends_its_curve_at_the_fresh_seeds() {
        // 3 iterations removing 50 each, then the kept set on fresh seeds at 15% removed.
        let mut p = run(Method::Ibp, &[0.6, 0.55, 0.5]);
        p.removed = (0..150)
            .map(|i| super::super::Removed {
                id: format!("q{i}"),
                question_type: None,
                format: crate::sample::AnswerFormat::MultipleChoice,
                iteration: 1 + i / 50,
                score: 0.9,
                reason: String::new(),
            })
            .collect();
        let fresh = super::super::Independent {
            seeds: vec![7, 8, 9],
            n_samples: 850,
            blind_accuracy: 0.47,
            ci95: (0.44, 0.5),
            chance: 0.25,
            majority: 0.3,
            groups: Vec::new(),
        };
        p.after_independent = Some(fresh.clone());
        let svg = curve_svg(&p, None).unwrap();
        assert!(svg.contains("\nibp: kept set, 3 fresh seeds\n</text>"), "the fresh-seed point is in the legend");
        assert_eq!(svg.matches("fill=\"#2E8B57\"").count(), 1, "one point");
        // With the selection seed's diagnosis of the kept set, the curve ends there instead.
        p.after = Some(crate::diagnose::diagnose(&[], &crate::diagnose::DiagnoseConfig::default()));
        assert!(!curve_svg(&p, None).unwrap().contains("kept set"));
    }

    #[test]
    fn curve_y_range_is_fitted() {
        let (lo, hi) = fitted_range(&[("a".into(), BLUE, false, vec![(0.0, 0.5), (0.1, 0.6)])]);
        assert!((lo - 0.48).abs() < 1e-12 && (hi - 0.62).abs() < 1e-12, "{lo} {hi}");
        let (lo, hi) = fitted_range(&[("a".into(), BLUE, false, vec![(0.0, 0.3)])]);
        assert!((lo - 0.28).abs() < 1e-12 && (hi - 0.32).abs() < 1e-12);
        assert_eq!(fitted_range(&[("a".into(), BLUE, false, vec![(0.0, 0.01)])]).0, 0.0);
        assert_eq!(fitted_range(&[]), (0.0, 1.0));
        // The axis starts near the data, not at 0.
        let svg = curve_svg(&run(Method::Ibp, &[0.6, 0.55, 0.5]), None).unwrap();
        assert!(!svg.contains(">0.0</text>") && !svg.contains(">0</text>"), "y axis from 0");
    }
}
