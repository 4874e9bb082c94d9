//! A pruning run's report files: `prune.json`
//! ([`crate::prune::report::PruneReport`]), `removed.csv` (removal order, with
//! reasons), `kept_ids.txt` and `prune_curve.svg` (blind accuracy and mean
//! bias against the fraction removed, the random control's curve beside it).
//! A release writes them under `report/`, `blindspot prune` into its output
//! folder.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::Result;
use crate::io::r6;
use crate::io::rendered::Rendered;
use crate::plots::{BLUE, GREY, LABEL, ORANGE, Swatch, TITLE, chart_below, draw_legend, legend_height, plot_err, text};
use crate::prune::report::PruneReport;
use crate::prune::{Method, Pruned};

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

/// A pruning run's report files, rendered: `prune.json` (with the matched
/// random control's beside it), `removed.csv`, `kept_ids.txt` and
/// `prune_curve.svg`.
pub fn render(p: &Pruned, control: Option<&Pruned>) -> Result<Vec<Rendered>> {
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
    let points = |q: &Pruned, f: fn(&crate::prune::Iteration) -> f64| -> Vec<(f64, f64)> {
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
            let name = format!("{}: kept set, {}", q.method.as_str(), crate::prune::fresh_seeds(i.seeds.len()));
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
    use std::collections::BTreeMap;

    use super::*;

    fn run(method: Method, accuracies: &[f64]) -> Pruned {
        Pruned {
            method,
            config: crate::prune::PruneConfig::default(),
            budgets: BTreeMap::new(),
            kept: Vec::new(),
            removed: Vec::new(),
            iterations: accuracies
                .iter()
                .enumerate()
                .map(|(i, &a)| crate::prune::Iteration {
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
            .map(|i| crate::prune::Removed {
                id: format!("q{i}"),
                question_type: None,
                format: crate::sample::AnswerFormat::MultipleChoice,
                iteration: 1 + i / 50,
                score: 0.9,
                reason: String::new(),
            })
            .collect();
        let fresh = crate::prune::Independent {
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
