//! What a pruning run writes: `prune.json` (settings, stop reason, the
//! per-iteration curve, removed questions with reasons, before/after blind
//! accuracy), `removed.csv` (removal order), `kept_ids.txt` (dataset order)
//! and `prune_curve.svg` (blind accuracy and mean bias against the fraction
//! removed, with the random control's curve when there is one).

use std::path::Path;

use plotters::prelude::*;
use serde_json::{Value, json};

use super::{Method, Pruned};
use crate::diagnose::Diagnosis;
use crate::error::{Error, Result};
use crate::io::fs::write_bytes;
use crate::io::r6;

fn finite(v: f64) -> Value {
    if v.is_finite() { json!(r6(v)) } else { Value::Null }
}

fn diagnosis_json(d: Option<&Diagnosis>) -> Value {
    match d {
        None => Value::Null,
        Some(d) => json!({
            "n": d.n_samples,
            "blind_accuracy": r6(d.weighted),
            "macro": r6(d.macro_by_type),
            "ci95": [r6(d.ci95.0), r6(d.ci95.1)],
            "chance": r6(d.chance),
            "majority": r6(d.majority),
            "ids_fingerprint": d.fingerprint,
        }),
    }
}

/// `prune.json`'s content for one run.
pub fn summary_json(p: &Pruned) -> Value {
    let c = &p.config;
    let mut settings = json!({
        "method": p.method.as_str(),
        "budget": c.budget.describe(),
        "batch": c.batch.describe(),
        "floor": c.floor,
        "threshold": c.threshold,
        "allocation": c.allocation.as_str(),
        "rank": c.rank.as_str(),
        "seed": c.seed,
    });
    if p.method == Method::Aflite {
        settings["aflite"] = json!({
            "partitions": c.aflite.partitions,
            "train_fraction": c.aflite.train_fraction,
            "tau": c.aflite.tau,
            "probe": "multinomial logistic regression (linfa-logistic, L2 = 1/n, 50 L-BFGS iterations) on standardized TsT features",
        });
    }
    json!({
        "method": p.method.as_str(),
        "settings": settings,
        "budgets": p.budgets,
        "n_input": p.n_input,
        "n_kept": p.kept.len(),
        "n_removed": p.removed.len(),
        "stop": p.stop,
        "before": diagnosis_json(p.before.as_ref()),
        "after": diagnosis_json(p.after.as_ref()),
        "removed_per_type": p.removed_per_type(),
        "iterations": p.iterations.iter().map(|it| json!({
            "iteration": it.iteration,
            "size": it.size,
            "removed_before": it.removed_before,
            "fraction_removed": r6(it.removed_before as f64 / p.n_input.max(1) as f64),
            "max_bias": finite(it.max_bias),
            "mean_bias": finite(it.mean_bias),
            "blind_accuracy": finite(it.blind_accuracy),
            "ci95": it.ci95.map(|(lo, hi)| json!([r6(lo), r6(hi)])),
            "chance": finite(it.chance),
            "removed": it.removed,
        })).collect::<Vec<_>>(),
        "removed": p.removed.iter().map(|r| json!({
            "id": r.id,
            "question_type": r.question_type,
            "format": r.format.as_str(),
            "iteration": r.iteration,
            "score": finite(r.score),
            "reason": r.reason,
        })).collect::<Vec<_>>(),
    })
}

/// `prune.json` with an optional matched random control beside the run.
pub fn document(p: &Pruned, control: Option<&Pruned>) -> Value {
    let mut v = summary_json(p);
    if let Some(c) = control {
        v["control"] = summary_json(c);
    }
    v
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

/// `removed.csv`: one row per removed question, in removal order.
pub fn removed_csv(p: &Pruned) -> String {
    let mut out = String::from("order,id,question_type,format,iteration,score,reason\n");
    for (i, r) in p.removed.iter().enumerate() {
        out.push_str(&format!(
            "{},{},{},{},{},{},{}\n",
            i + 1,
            csv_field(&r.id),
            csv_field(r.question_type.as_deref().unwrap_or("")),
            r.format.as_str(),
            r.iteration,
            r6(r.score),
            csv_field(&r.reason)
        ));
    }
    out
}

/// Writes `prune.json`, `removed.csv`, `kept_ids.txt` and `prune_curve.svg` into `dir`.
pub fn write_report(dir: &Path, p: &Pruned, control: Option<&Pruned>) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    crate::io::fs::write_json(&dir.join("prune.json"), &document(p, control))?;
    write_bytes(&dir.join("removed.csv"), removed_csv(p).as_bytes())?;
    let mut kept = p.kept.join("\n");
    kept.push('\n');
    write_bytes(&dir.join("kept_ids.txt"), kept.as_bytes())?;
    write_bytes(&dir.join("prune_curve.svg"), curve_svg(p, control)?.as_bytes())
}

/// One line of the curve plot: label, colour, dashed, points.
type Series = (String, RGBColor, bool, Vec<(f64, f64)>);

fn plot_err(e: impl std::fmt::Display) -> Error {
    Error::Bug(format!("plot: {e}"))
}

/// Blind accuracy (solid) and mean bias (dashed) against the fraction removed.
pub fn curve_svg(p: &Pruned, control: Option<&Pruned>) -> Result<String> {
    let points = |q: &Pruned, f: fn(&super::Iteration) -> f64| -> Vec<(f64, f64)> {
        q.iterations
            .iter()
            .filter(|it| f(it).is_finite())
            .map(|it| (it.removed_before as f64 / q.n_input.max(1) as f64, f(it)))
            .collect()
    };
    let mut series: Vec<Series> = vec![
        (
            format!("{}: blind accuracy", p.method.as_str()),
            RGBColor(52, 101, 164),
            false,
            points(p, |i| i.blind_accuracy),
        ),
        (format!("{}: mean bias", p.method.as_str()), RGBColor(52, 101, 164), true, points(p, |i| i.mean_bias)),
        ("chance".into(), RGBColor(160, 160, 160), true, points(p, |i| i.chance)),
    ];
    if let Some(c) = control {
        series.push((
            format!("{}: blind accuracy", c.method.as_str()),
            RGBColor(230, 126, 34),
            false,
            points(c, |i| i.blind_accuracy),
        ));
        series.push((
            format!("{}: mean bias", c.method.as_str()),
            RGBColor(230, 126, 34),
            true,
            points(c, |i| i.mean_bias),
        ));
    }
    let x_max = series.iter().flat_map(|s| s.3.iter().map(|p| p.0)).fold(0.0f64, f64::max).max(0.01) * 1.05;
    let y_max = series.iter().flat_map(|s| s.3.iter().map(|p| p.1)).fold(0.0f64, f64::max).max(0.1) * 1.1;
    let title = match p.method {
        Method::Aflite => "AFLite: probe accuracy and mean predictability vs fraction removed",
        Method::Bclean => "B-Clean: blind accuracy (TsT-RF) before and after",
        _ => "Blind accuracy (TsT-RF) and mean bias vs fraction removed",
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 15))
            .margin(12)
            .x_label_area_size(35)
            .y_label_area_size(45)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)
            .map_err(plot_err)?;
        chart.configure_mesh().x_desc("fraction removed").y_desc("score").draw().map_err(plot_err)?;
        for (name, color, dashed, pts) in series {
            let style = ShapeStyle { color: color.to_rgba(), filled: false, stroke_width: 2 };
            let drawn = if dashed {
                chart.draw_series(DashedLineSeries::new(pts, 6, 4, style))
            } else {
                chart.draw_series(LineSeries::new(pts, style))
            }
            .map_err(plot_err)?;
            drawn.label(name).legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], style));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}
