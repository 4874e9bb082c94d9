//! What a pruning run writes: `prune.json` (settings, stop reason, the
//! per-iteration curve, removed questions with reasons, before/after blind
//! accuracy), `removed.csv` (removal order), `kept_ids.txt` (dataset order)
//! and `prune_curve.svg` (blind accuracy and mean bias against the fraction
//! removed, with the random control's curve when there is one).

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Method, Pruned};
use crate::diagnose::Diagnosis;
use crate::error::{Error, Result};
use crate::io::fs::write_bytes;
use crate::io::r6;

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
    pub stop_at_chance: bool,
    pub independent_seeds: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aflite: Option<AfliteSettings>,
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
                stop_at_chance: c.stop_at_chance,
                independent_seeds: c.independent_seeds,
                aflite: (p.method == Method::Aflite).then(|| AfliteSettings {
                    partitions: c.aflite.partitions,
                    train_fraction: c.aflite.train_fraction,
                    tau: c.aflite.tau,
                    probe: "multinomial logistic regression (linfa-logistic, L2 = 1/n, 50 L-BFGS iterations) on \
                            standardized TsT features"
                        .into(),
                }),
            },
            budgets: p.budgets.clone(),
            n_input: p.n_input,
            n_kept: p.kept.len(),
            n_removed: p.removed.len(),
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
    crate::io::fs::write_json(&dir.join("prune.json"), &PruneReport::with_control(p, control))?;
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
