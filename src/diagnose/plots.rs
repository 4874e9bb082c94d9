//! SVG plots of a diagnosis (plotters' SVG backend, no fonts needed):
//! blind accuracy against chance per group, the s(x) distribution per answer
//! format, and the feature importances of the largest group.

use std::path::Path;

use plotters::prelude::*;

use super::Diagnosis;
use crate::error::{Error, Result};
use crate::io::fs::write_bytes;
use crate::sample::AnswerFormat;

const BLUE: RGBColor = RGBColor(52, 101, 164);
const GREY: RGBColor = RGBColor(160, 160, 160);
const ORANGE: RGBColor = RGBColor(230, 126, 34);

fn plot_err(e: impl std::fmt::Display) -> Error {
    Error::Bug(format!("plot: {e}"))
}

fn label(g: &super::GroupSummary) -> String {
    let t = g.question_type.as_deref().unwrap_or("all");
    // Long names keep both ends: type names often differ only in their suffix.
    let chars: Vec<char> = t.chars().collect();
    let t: String = if chars.len() > 30 {
        format!("{}…{}", chars[..14].iter().collect::<String>(), chars[chars.len() - 14..].iter().collect::<String>())
    } else {
        t.to_string()
    };
    format!("{t} ({})", g.format.as_str())
}

/// Writes `blind_vs_chance.svg`, `s_histogram.svg` and `importances.svg`.
/// `model` names the blind model in the captions (`TsT-RF`, `TsT-Embed`).
pub fn write_all(dir: &Path, d: &Diagnosis, model: &str) -> Result<()> {
    write_bytes(&dir.join("blind_vs_chance.svg"), blind_vs_chance(d, model)?.as_bytes())?;
    write_bytes(&dir.join("s_histogram.svg"), s_histogram(d)?.as_bytes())?;
    write_bytes(&dir.join("importances.svg"), importances(d)?.as_bytes())
}

/// Horizontal bars per group: blind accuracy (blue), majority baseline
/// (orange), chance (grey); group names on the left, readable at any count.
pub fn blind_vs_chance(d: &Diagnosis, model: &str) -> Result<String> {
    let groups: Vec<_> = d.groups.iter().take(40).collect();
    // Three segments per group, top to bottom: blind, majority, chance; the middle one carries the label.
    let slots = 3 * groups.len().max(1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 150 + 12 * slots as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("Blind accuracy ({model}) vs chance: overall {:.1}%", d.weighted * 100.0),
                ("sans-serif", 16),
            )
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(230)
            .build_cartesian_2d(0f64..1.3f64, (0..slots).into_segmented())
            .map_err(plot_err)?;
        // Slot k counted from the top.
        let row = |k: usize| slots - 1 - k;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(slots)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(r) if *r < slots && (slots - 1 - r) % 3 == 1 => {
                    groups.get((slots - 1 - r) / 3).map(|g| label(g)).unwrap_or_default()
                }
                _ => String::new(),
            })
            .x_desc("accuracy")
            .draw()
            .map_err(plot_err)?;
        type Series = (&'static str, RGBColor, fn(&super::GroupSummary) -> f64);
        let series: [Series; 3] = [
            ("blind accuracy", BLUE, |g| g.blind_accuracy),
            ("majority answer", ORANGE, |g| g.majority),
            ("chance", GREY, |g| g.chance),
        ];
        for (k, (name, color, value)) in series.into_iter().enumerate() {
            chart
                .draw_series(groups.iter().enumerate().map(|(i, g)| {
                    let r = row(3 * i + k);
                    let mut bar = Rectangle::new(
                        [(0.0, SegmentValue::Exact(r)), (value(g), SegmentValue::Exact(r + 1))],
                        color.filled(),
                    );
                    bar.set_margin(1, 1, 0, 0);
                    bar
                }))
                .map_err(plot_err)?
                .label(name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
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

/// Histogram of s(x) (20 bins over [0, 1]) per answer format.
pub fn s_histogram(d: &Diagnosis) -> Result<String> {
    let scores = d.sample_scores();
    let formats: Vec<AnswerFormat> =
        AnswerFormat::ALL.into_iter().filter(|f| d.rows.iter().any(|r| r.format == *f)).collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 360)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let panels = root.split_evenly((1, formats.len().max(1)));
        for (panel, format) in panels.iter().zip(&formats) {
            let mut counts = [0u32; 20];
            for r in d.rows.iter().filter(|r| r.format == *format && r.repeat == 0) {
                let s = scores.get(r.id.as_str()).map_or(r.s, |v| v.0);
                counts[((s * 20.0) as usize).min(19)] += 1;
            }
            let top = counts.iter().copied().max().unwrap_or(1).max(1);
            let mut chart = ChartBuilder::on(panel)
                .caption(format!("s(x): {}", format.as_str()), ("sans-serif", 14))
                .margin(8)
                .x_label_area_size(30)
                .y_label_area_size(40)
                .build_cartesian_2d(0f64..1f64, 0u32..top + top / 10 + 1)
                .map_err(plot_err)?;
            chart.configure_mesh().disable_x_mesh().x_desc("s").y_desc("questions").draw().map_err(plot_err)?;
            chart
                .draw_series(counts.iter().enumerate().map(|(b, &c)| {
                    let x0 = b as f64 / 20.0;
                    Rectangle::new([(x0, 0), (x0 + 0.05, c)], BLUE.mix(0.8).filled())
                }))
                .map_err(plot_err)?;
        }
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

/// Top features (mean decrease in impurity) of the largest group.
pub fn importances(d: &Diagnosis) -> Result<String> {
    let group = d.groups.iter().max_by_key(|g| (g.n, std::cmp::Reverse(label(g))));
    let feats: Vec<(String, f64)> = group.map(|g| g.top_features.clone()).unwrap_or_default();
    let n = feats.len().max(1);
    let top = feats.iter().map(|f| f.1).fold(0.0f64, f64::max).max(1e-9);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (700, 120 + 26 * n as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let title = group.map_or("Feature importances".to_string(), |g| format!("Feature importances: {}", label(g)));
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 15))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(220)
            .build_cartesian_2d(0f64..top * 1.1, (0..n).into_segmented())
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&|v| match v {
                // Most important at the top.
                SegmentValue::CenterOf(i) => {
                    (n - 1).checked_sub(*i).and_then(|k| feats.get(k)).map(|f| f.0.clone()).unwrap_or_default()
                }
                _ => String::new(),
            })
            .x_desc("mean decrease in impurity")
            .draw()
            .map_err(plot_err)?;
        chart
            .draw_series(feats.iter().enumerate().map(|(i, (_, v))| {
                let row = n - 1 - i;
                let mut bar = Rectangle::new(
                    [(0.0, SegmentValue::Exact(row)), (*v, SegmentValue::Exact(row + 1))],
                    BLUE.filled(),
                );
                bar.set_margin(3, 3, 0, 0);
                bar
            }))
            .map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}
