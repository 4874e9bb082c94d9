//! The diagnosis figures, written beside `diagnose.json`: blind accuracy per
//! group against its chance and majority baselines, the s(x) distribution per
//! question type (kept and removed questions when a release pruned), and the
//! feature importances of the groups a blind model answers above its null.
//! Diagnose decides what is shown (which groups, which scores); this module
//! how.

use std::collections::BTreeMap;

use plotters::prelude::*;

use super::{
    BLUE, DARK, FONT, GREY, LABEL, LEFT_MID, ORANGE, RED, RIGHT_MID, Swatch, TITLE, compact, draw_legend, ellipsize,
    legend_height, pct, plot_err, text, text_width, wilson,
};
use blindspot_core::error::Result;

/// One diagnosed group: its label (`type (format)`), size, blind accuracy and
/// baselines.
#[derive(Debug, Clone)]
pub struct Group {
    pub label: String,
    pub n: usize,
    pub blind: f64,
    pub chance: f64,
    pub majority: f64,
}

/// The whole diagnosis, for the caption: blind accuracy over all questions
/// with its 95% interval, chance and the majority baseline.
#[derive(Debug, Clone)]
pub struct Overall {
    pub blind: f64,
    pub ci95: (f64, f64),
    pub chance: f64,
    pub majority: f64,
    pub questions: usize,
}

/// One question of the s(x) histogram.
#[derive(Debug, Clone, Copy)]
pub struct Scored<'a> {
    pub question_type: &'a str,
    pub s: f64,
    /// Removed by pruning.
    pub removed: bool,
}

/// A group answered above its null: its caption's figures and its feature
/// importances, heaviest first.
#[derive(Debug, Clone)]
pub struct Importance {
    pub label: String,
    pub n: usize,
    pub blind: f64,
    /// The better of chance and the majority answer, and which one it is.
    pub baseline: f64,
    pub baseline_name: String,
    pub features: Vec<(String, f64)>,
}

/// Groups drawn in `blind_vs_chance.svg` (the rest are named in a caption line).
const MAX_GROUPS: usize = 40;

/// One row per group on an accuracy axis from 0 to 100%: blind accuracy as a
/// bar (a 2-pixel stub when zero) with its 95% Wilson interval as a whisker,
/// the majority baseline and chance as ticks; each row's value, interval and
/// size printed at the right, outside the data area.
pub fn blind_vs_chance(all: &[Group], overall: &Overall, model: &str) -> Result<String> {
    let groups: Vec<&Group> = all.iter().take(MAX_GROUPS).collect();
    let n = groups.len().max(1);
    let labels: Vec<String> = groups.iter().map(|g| g.label.clone()).collect();
    let values: Vec<String> = groups
        .iter()
        .map(|g| {
            let (lo, hi) = wilson(g.blind, g.n);
            format!("{} ({:.1}–{:.1}) n={}", pct(g.blind), lo * 100.0, hi * 100.0, g.n)
        })
        .collect();
    let header = "blind (95% CI), questions";
    let left = labels.iter().map(|l| text_width(l, LABEL)).max().unwrap_or(0).max(60) + 16;
    let right = values.iter().chain([&header.to_string()]).map(|v| text_width(v, LABEL)).max().unwrap_or(0) + 24;
    let title = format!("Blind accuracy ({model}) per group, against chance and the majority baseline");
    let overall = format!(
        "Overall: {} blind (95% CI {}–{}), chance {}, majority {}; {} questions in {} groups",
        pct(overall.blind),
        pct(overall.ci95.0),
        pct(overall.ci95.1),
        pct(overall.chance),
        pct(overall.majority),
        overall.questions,
        all.len()
    );
    let width = (left + 480 + right + 20).max(text_width(&title, TITLE).max(text_width(&overall, LABEL)) + 30);
    let legend: Vec<(Swatch, String)> = vec![
        (Swatch::Box(BLUE), "blind accuracy".into()),
        (Swatch::Whisker(DARK), "95% CI (Wilson, per group)".into()),
        (Swatch::Tick(ORANGE, 2), "majority baseline".into()),
        (Swatch::Tick(GREY, 6), "chance".into()),
    ];
    let mut notes = Vec::new();
    if all.len() > groups.len() {
        notes.push(format!("First {} of {} groups shown; all are in diagnose.json.", groups.len(), all.len()));
    }
    let legend_top = 62 + 20 * notes.len() as i32;
    let top = legend_top + legend_height(&legend, 14, width - 10) + 4;
    let row_h = 24;
    let height = top + 22 + n as i32 * row_h + 50;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        text(&root, &title, (14, 18), TITLE, &BLACK, LEFT_MID)?;
        text(&root, &overall, (14, 42), LABEL, &DARK, LEFT_MID)?;
        for (i, note) in notes.iter().enumerate() {
            text(&root, note, (14, 62 + 20 * i as i32), LABEL, &DARK, LEFT_MID)?;
        }
        draw_legend(&root, &legend, 14, legend_top + 8, width - 10)?;
        let body = root.clone().shrink((0, top), (width, height - top));
        let mut chart = ChartBuilder::on(&body)
            .margin_top(22)
            .margin_left(10)
            .margin_right(right)
            .margin_bottom(8)
            .x_label_area_size(40)
            .y_label_area_size(left)
            // Integer ranges include their end in plotters: n segments.
            .build_cartesian_2d(0f64..1f64, (0..n - 1).into_segmented())
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(BLACK.mix(0.12))
            .x_labels(11)
            .x_label_formatter(&|v| format!("{:.0}%", v * 100.0))
            // Group names are drawn below, one per row (plotters skips a lone segment's label).
            .y_label_formatter(&|_| String::new())
            .label_style((FONT, LABEL))
            .axis_desc_style((FONT, LABEL))
            .x_desc("share of questions answered right")
            .draw()
            .map_err(plot_err)?;
        let px = |v: f64, r: usize| chart.backend_coord(&(v.clamp(0.0, 1.0), SegmentValue::CenterOf(r)));
        let (x_right, y_first) = px(1.0, n - 1);
        text(&root, header, (x_right + 12, y_first - row_h), LABEL, &DARK, LEFT_MID)?;
        let stroke = |c: &RGBColor, w: u32| ShapeStyle { color: c.to_rgba(), filled: false, stroke_width: w };
        for (i, g) in groups.iter().enumerate() {
            let r = n - 1 - i;
            let (x0, cy) = px(0.0, r);
            text(&root, &labels[i], (x0 - 10, cy), LABEL, &DARK, RIGHT_MID)?;
            // A zero bar is still a visible 2-pixel stub at 0.
            let x1 = px(g.blind, r).0.max(x0 + 2);
            root.draw(&Rectangle::new([(x0, cy - 7), (x1, cy + 7)], BLUE.filled())).map_err(plot_err)?;
            // Chance as a wide grey tick under a thin orange majority tick: both show when they coincide.
            let cx = px(g.chance, r).0;
            root.draw(&PathElement::new(vec![(cx, cy - 10), (cx, cy + 10)], stroke(&GREY, 6))).map_err(plot_err)?;
            let mx = px(g.majority, r).0;
            root.draw(&PathElement::new(vec![(mx, cy - 10), (mx, cy + 10)], stroke(&ORANGE, 2))).map_err(plot_err)?;
            let (lo, hi) = wilson(g.blind, g.n);
            let (l, h) = (px(lo, r).0, px(hi, r).0);
            for path in [vec![(l, cy), (h, cy)], vec![(l, cy - 4), (l, cy + 4)], vec![(h, cy - 4), (h, cy + 4)]] {
                root.draw(&PathElement::new(path, stroke(&DARK, 1))).map_err(plot_err)?;
            }
            text(&root, &values[i], (x_right + 12, cy), LABEL, &DARK, LEFT_MID)?;
        }
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

/// Panels in `s_histogram.svg`: the largest types, the rest pooled into the last.
const MAX_TYPE_PANELS: usize = 12;
const BINS: usize = 20;

/// Kept and removed counts per s(x) bin of one panel.
#[derive(Default)]
struct Hist {
    kept: [u64; BINS],
    removed: [u64; BINS],
}

impl Hist {
    fn total(&self) -> u64 {
        self.kept.iter().chain(&self.removed).sum()
    }
    fn add(&mut self, other: &Hist) {
        for b in 0..BINS {
            self.kept[b] += other.kept[b];
            self.removed[b] += other.removed[b];
        }
    }
}

/// Small multiples of s(x) (20 bins over [0, 1]), one panel per question
/// type, largest first; past [`MAX_TYPE_PANELS`] the smallest types share
/// one panel, named with their count. When `pruned`, each bar
/// stacks the removed questions on the kept ones.
pub fn s_histogram(questions: &[Scored<'_>], pruned: bool) -> Result<String> {
    let mut by_type: BTreeMap<&str, Hist> = BTreeMap::new();
    for q in questions {
        let s = q.s;
        let bin = if s.is_finite() { ((s * BINS as f64) as usize).min(BINS - 1) } else { 0 };
        let h = by_type.entry(q.question_type).or_default();
        if q.removed {
            h.removed[bin] += 1;
        } else {
            h.kept[bin] += 1;
        }
    }
    let mut types: Vec<(&str, Hist)> = by_type.into_iter().collect();
    types.sort_by(|a, b| b.1.total().cmp(&a.1.total()).then_with(|| a.0.cmp(b.0)));
    let mut panels: Vec<(String, Hist)> = Vec::new();
    let pooled = types.len().saturating_sub(MAX_TYPE_PANELS - 1);
    let keep = if pooled > 1 { MAX_TYPE_PANELS - 1 } else { types.len() };
    let mut rest = Hist::default();
    for (i, (t, h)) in types.into_iter().enumerate() {
        if i < keep {
            panels.push((t.to_string(), h));
        } else {
            rest.add(&h);
        }
    }
    if pooled > 1 {
        panels.push((format!("{pooled} smaller types pooled"), rest));
    }
    let (n_kept, n_removed): (u64, u64) = panels
        .iter()
        .map(|(_, h)| (h.kept.iter().sum::<u64>(), h.removed.iter().sum::<u64>()))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let cols = panels.len().clamp(1, 3);
    let rows = panels.len().div_ceil(cols).max(1);
    let (pw, ph) = (330i32, 230i32);
    let width = (cols as i32 * pw + 20).max(700);
    let title = "s(x) per question type: the blind model's score of the gold answer, 20 bins";
    let legend: Vec<(Swatch, String)> = if pruned {
        vec![
            (Swatch::Box(BLUE), format!("kept ({n_kept})")),
            (Swatch::Box(RED), format!("removed by pruning ({n_removed})")),
        ]
    } else {
        vec![(Swatch::Box(BLUE), format!("questions ({n_kept}; no pruning in this run)"))]
    };
    let top = 36 + legend_height(&legend, 14, width - 10) + 6;
    let height = top + rows as i32 * ph + 10;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        text(&root, title, (14, 18), TITLE, &BLACK, LEFT_MID)?;
        draw_legend(&root, &legend, 14, 44, width - 10)?;
        for (i, (name, h)) in panels.iter().enumerate() {
            let (x, y) = (10 + (i % cols) as i32 * pw, top + (i / cols) as i32 * ph);
            let area = root.clone().shrink((x, y), (pw, ph));
            let caption = format!("{} (n={})", ellipsize(name, 34), h.total());
            let peak = (0..BINS).map(|b| h.kept[b] + h.removed[b]).max().unwrap_or(0).max(1);
            let mut chart = ChartBuilder::on(&area)
                .caption(caption, (FONT, 15))
                .margin(6)
                .margin_right(14)
                .x_label_area_size(34)
                .y_label_area_size(52)
                .build_cartesian_2d(0f64..1f64, 0u64..peak + peak / 10 + 1)
                .map_err(plot_err)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .light_line_style(TRANSPARENT)
                .bold_line_style(BLACK.mix(0.1))
                .x_labels(6)
                .x_label_formatter(&|v| format!("{v:.1}"))
                .y_labels(5)
                .y_label_formatter(&|v| compact(*v))
                .label_style((FONT, 13))
                .axis_desc_style((FONT, 13))
                .x_desc("s(x)")
                .y_desc("questions")
                .draw()
                .map_err(plot_err)?;
            let bar = |b: usize, lo: u64, hi: u64, c: RGBColor| {
                let x0 = b as f64 / BINS as f64;
                let mut r = Rectangle::new([(x0, lo), (x0 + 1.0 / BINS as f64, hi)], c.filled());
                r.set_margin(0, 0, 1, 1);
                r
            };
            chart
                .draw_series((0..BINS).filter(|&b| h.kept[b] > 0).map(|b| bar(b, 0, h.kept[b], BLUE)))
                .map_err(plot_err)?;
            if pruned {
                chart
                    .draw_series(
                        (0..BINS)
                            .filter(|&b| h.removed[b] > 0)
                            .map(|b| bar(b, h.kept[b], h.kept[b] + h.removed[b], RED)),
                    )
                    .map_err(plot_err)?;
            }
        }
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

/// Panels in `importances.svg`, and features per panel.
const MAX_IMPORTANCE_PANELS: usize = 12;
const MAX_FEATURES: usize = 10;

/// One panel per group answered above its null blind (`above`, in the order
/// given, at most [`MAX_IMPORTANCE_PANELS`]; `groups`: how many were
/// diagnosed): its non-zero feature
/// importances (mean decrease in impurity), top 10, values printed. With no
/// such group, the SVG says so in words.
pub fn importances(above: &[Importance], groups: usize) -> Result<String> {
    let title = "Feature importances of the groups a blind model answers above their null";
    let mut svg = String::new();
    if above.is_empty() {
        let msg = "No group is answered above its null blind; no feature importances to show.";
        let note = format!(
            "(above: above the label-permutation null and the majority answer, per group; {} groups diagnosed)",
            groups
        );
        let width = text_width(title, TITLE).max(text_width(&note, LABEL)) + 40;
        {
            let root = SVGBackend::with_string(&mut svg, (width as u32, 100)).into_drawing_area();
            root.fill(&WHITE).map_err(plot_err)?;
            text(&root, title, (14, 18), TITLE, &BLACK, LEFT_MID)?;
            text(&root, msg, (14, 52), LABEL, &DARK, LEFT_MID)?;
            text(&root, &note, (14, 76), LABEL, &DARK, LEFT_MID)?;
            root.present().map_err(plot_err)?;
        }
        return Ok(svg);
    }
    let shown: Vec<&Importance> = above.iter().take(MAX_IMPORTANCE_PANELS).collect();
    let feats: Vec<Vec<(String, f64)>> = shown
        .iter()
        .map(|g| g.features.iter().filter(|f| f.1 > 0.0 && f.1.is_finite()).take(MAX_FEATURES).cloned().collect())
        .collect();
    let captions: Vec<String> = shown
        .iter()
        .map(|g| {
            format!(
                "{}: blind {} vs baseline {} ({}), n={}",
                g.label,
                pct(g.blind),
                pct(g.baseline),
                g.baseline_name,
                g.n
            )
        })
        .collect();
    let top_value = feats.iter().flatten().map(|f| f.1).fold(0.0f64, f64::max).max(1e-9);
    let names_w = feats.iter().flatten().map(|f| text_width(&f.0, LABEL)).max().unwrap_or(0).max(80) + 16;
    let mut notes = vec![format!(
        "Mean decrease in impurity, top {MAX_FEATURES} non-zero features per group; baseline = the better of \
         chance and the majority answer."
    )];
    if above.len() > shown.len() {
        notes.push(format!(
            "{} of {} groups above baseline shown (widest margin first); {} left out.",
            shown.len(),
            above.len(),
            above.len() - shown.len()
        ));
    }
    let width = (names_w + 520)
        .max(captions.iter().map(|c| text_width(c, 15)).max().unwrap_or(0) + 30)
        .max(notes.iter().map(|c| text_width(c, LABEL)).max().unwrap_or(0) + 30)
        .max(text_width(title, TITLE) + 30);
    let top = 36 + 20 * notes.len() as i32 + 6;
    let panel_h = |k: usize| 36 + 22 * k.max(1) as i32 + 44;
    let height = top + feats.iter().map(|f| panel_h(f.len())).sum::<i32>() + 10;
    {
        let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        text(&root, title, (14, 18), TITLE, &BLACK, LEFT_MID)?;
        for (i, note) in notes.iter().enumerate() {
            text(&root, note, (14, 42 + 20 * i as i32), LABEL, &DARK, LEFT_MID)?;
        }
        let mut y = top;
        for (caption, fs) in captions.iter().zip(&feats) {
            let h = panel_h(fs.len());
            let area = root.clone().shrink((0, y), (width, h));
            y += h;
            let k = fs.len().max(1);
            let mut chart = ChartBuilder::on(&area)
                .caption(caption, (FONT, 15))
                .margin(8)
                .margin_right(20)
                .x_label_area_size(34)
                .y_label_area_size(names_w)
                .build_cartesian_2d(0f64..top_value * 1.2, (0..k - 1).into_segmented())
                .map_err(plot_err)?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .light_line_style(TRANSPARENT)
                .bold_line_style(BLACK.mix(0.1))
                .x_labels(6)
                .x_label_formatter(&|v| format!("{v:.2}"))
                // Feature names are drawn below, most important at the top.
                .y_label_formatter(&|_| String::new())
                .label_style((FONT, LABEL))
                .axis_desc_style((FONT, 13))
                .x_desc("mean decrease in impurity")
                .draw()
                .map_err(plot_err)?;
            if fs.is_empty() {
                let (x, cy) = chart.backend_coord(&(0.0, SegmentValue::CenterOf(0)));
                text(&root, "no feature with non-zero importance", (x + 8, cy), LABEL, &DARK, LEFT_MID)?;
            }
            for (j, (name, v)) in fs.iter().enumerate() {
                let r = k - 1 - j;
                let (x0, cy) = chart.backend_coord(&(0.0, SegmentValue::CenterOf(r)));
                text(&root, name, (x0 - 10, cy), LABEL, &DARK, RIGHT_MID)?;
                let x1 = chart.backend_coord(&(*v, SegmentValue::CenterOf(r))).0.max(x0 + 2);
                root.draw(&Rectangle::new([(x0, cy - 7), (x1, cy + 7)], BLUE.filled())).map_err(plot_err)?;
                text(&root, &format!("{v:.3}"), (x1 + 6, cy), 13, &DARK, LEFT_MID)?;
            }
        }
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}
