//! SVG plots of a diagnosis (plotters' SVG backend, no fonts needed), written
//! beside `diagnose.json`: blind accuracy per group against its chance and
//! majority baselines, the s(x) distribution per question type (kept and
//! removed questions when a release pruned), and the feature importances of
//! every group a blind model answers above its null ([`super::verdict::group_above`]).
//!
//! Legends and captions sit outside the data area, so they never hide a bar;
//! every text's width is estimated from its length (the SVG backend cannot
//! measure text) and the canvas is sized to fit the longest one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Diagnosis, GroupSummary};
use crate::error::{Error, Result};
use crate::io::fs::write_bytes;

pub const BLUE: RGBColor = RGBColor(52, 101, 164);
pub const GREY: RGBColor = RGBColor(150, 150, 150);
pub const ORANGE: RGBColor = RGBColor(230, 126, 34);
/// Removed questions in the s(x) histogram.
const RED: RGBColor = RGBColor(196, 58, 49);
const DARK: RGBColor = RGBColor(40, 40, 40);

const FONT: &str = "sans-serif";
/// Plotters font sizes (the SVG renders them at size / 1.24 px).
pub const LABEL: u32 = 14;
pub const TITLE: u32 = 17;
/// Height of one legend row.
const LEGEND_ROW: i32 = 22;

pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// A 2-D chart on an [`Area`].
pub type Chart<'a, X, Y> = ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>;

pub fn plot_err(e: impl std::fmt::Display) -> Error {
    Error::Bug(format!("plot: {e}"))
}

/// The one chart of a figure `width` × `height` whose first `top` pixels hold its
/// title and legend: the margins and axis-label areas the prune curve and the
/// projection share, on the ranges `x` and `y`.
pub fn chart_below<'a, X: plotters::coord::ranged1d::AsRangedCoord, Y: plotters::coord::ranged1d::AsRangedCoord>(
    root: &Area<'a>,
    top: i32,
    width: i32,
    height: i32,
    x: X,
    y: Y,
) -> Result<Chart<'a, X::CoordDescType, Y::CoordDescType>> {
    let body = root.clone().shrink((0, top), (width, height - top));
    ChartBuilder::on(&body)
        .margin(12)
        .margin_right(24)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(x, y)
        .map_err(plot_err)
}

/// Estimated width in pixels of `s` at plotters font size `size`: sans-serif
/// averages ~0.55 em a character and the SVG em is size / 1.24; rounded up
/// with a little to spare, since the backend cannot measure text.
pub fn text_width(s: &str, size: u32) -> i32 {
    (s.chars().count() as f64 * f64::from(size) * 0.48).ceil() as i32
}

/// `s` cut to at most `max` characters, keeping both ends (type names often
/// differ only in their suffix).
pub fn ellipsize(s: &str, max: usize) -> String {
    // Invisible format characters of data shown as code points first, so the
    // cut counts what is drawn.
    let s = crate::io::escape::visible(s);
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= max || max < 5 {
        return s.into_owned();
    }
    let head = (max - 1) / 2;
    let tail = max - 1 - head;
    format!("{}…{}", chars[..head].iter().collect::<String>(), chars[chars.len() - tail..].iter().collect::<String>())
}

pub fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// A count in at most four characters: 950, 1.2k, 12k, 120k, 1.2M.
pub fn compact(v: u64) -> String {
    let short = |x: f64, unit: &str| {
        if x < 9.95 {
            let s = format!("{x:.1}");
            format!("{}{unit}", s.strip_suffix(".0").unwrap_or(&s))
        } else {
            format!("{}{unit}", x.round())
        }
    };
    match v {
        0..1000 => v.to_string(),
        1000..999_500 => short(v as f64 / 1000.0, "k"),
        _ => short(v as f64 / 1e6, "M"),
    }
}

/// Wilson score interval (95%, [`crate::stats::wilson`]) of a proportion `p` over `n` trials.
fn wilson(p: f64, n: usize) -> (f64, f64) {
    if !p.is_finite() {
        return (0.0, 1.0);
    }
    crate::stats::wilson(p.clamp(0.0, 1.0) * n as f64, n as f64, crate::stats::Z95)
}

/// Left-aligned (or otherwise anchored) text at a pixel position; invisible
/// format characters of data (a question type with U+202E) shown as code
/// points, as everywhere a person reads.
pub fn text(area: &Area<'_>, s: &str, at: (i32, i32), size: u32, color: &RGBColor, pos: Pos) -> Result<()> {
    let s = crate::io::escape::visible(s).into_owned();
    area.draw(&Text::new(s, at, (FONT, size).into_font().color(color).pos(pos))).map_err(plot_err)
}

const LEFT_MID: Pos = Pos { h_pos: HPos::Left, v_pos: VPos::Center };
const RIGHT_MID: Pos = Pos { h_pos: HPos::Right, v_pos: VPos::Center };

/// How a legend entry is drawn: in the style of the thing it names.
#[derive(Debug, Clone, Copy)]
pub enum Swatch {
    Box(RGBColor),
    Line(RGBColor),
    Dashed(RGBColor),
    /// A horizontal interval with end caps.
    Whisker(RGBColor),
    /// A vertical mark `width` pixels wide.
    Tick(RGBColor, u32),
}

/// Positions (x, row) of legend entries laid out left to right from `x0`,
/// wrapping before `max_x`.
fn legend_layout(items: &[(Swatch, String)], x0: i32, max_x: i32) -> Vec<(i32, i32)> {
    let (mut x, mut row) = (x0, 0);
    let mut out = Vec::with_capacity(items.len());
    for (_, name) in items {
        let w = 30 + text_width(name, LABEL) + 18;
        if x > x0 && x + w > max_x {
            x = x0;
            row += 1;
        }
        out.push((x, row));
        x += w;
    }
    out
}

/// Height of the legend [`draw_legend`] draws.
pub fn legend_height(items: &[(Swatch, String)], x0: i32, max_x: i32) -> i32 {
    legend_layout(items, x0, max_x).last().map_or(0, |(_, row)| (row + 1) * LEGEND_ROW)
}

/// Draws a legend whose first row is centred on `y`; returns its height.
pub fn draw_legend(area: &Area<'_>, items: &[(Swatch, String)], x0: i32, y: i32, max_x: i32) -> Result<i32> {
    for ((swatch, name), (x, row)) in items.iter().zip(legend_layout(items, x0, max_x)) {
        let cy = y + row * LEGEND_ROW;
        let line = |c: &RGBColor, w: u32| ShapeStyle { color: c.to_rgba(), filled: false, stroke_width: w };
        match *swatch {
            Swatch::Box(c) => area.draw(&Rectangle::new([(x + 4, cy - 6), (x + 20, cy + 6)], c.filled())),
            Swatch::Line(c) => area.draw(&PathElement::new(vec![(x, cy), (x + 24, cy)], line(&c, 2))),
            Swatch::Dashed(c) => area.draw(&DashedPathElement::new(vec![(x, cy), (x + 24, cy)], 6, 4, line(&c, 2))),
            Swatch::Whisker(c) => {
                area.draw(&PathElement::new(vec![(x + 2, cy), (x + 22, cy)], line(&c, 1))).map_err(plot_err)?;
                area.draw(&PathElement::new(vec![(x + 2, cy - 5), (x + 2, cy + 5)], line(&c, 1))).map_err(plot_err)?;
                area.draw(&PathElement::new(vec![(x + 22, cy - 5), (x + 22, cy + 5)], line(&c, 1)))
            }
            Swatch::Tick(c, w) => area.draw(&PathElement::new(vec![(x + 12, cy - 8), (x + 12, cy + 8)], line(&c, w))),
        }
        .map_err(plot_err)?;
        text(area, name, (x + 30, cy), LABEL, &DARK, LEFT_MID)?;
    }
    Ok(legend_height(items, x0, max_x))
}

fn label(g: &GroupSummary) -> String {
    format!("{} ({})", ellipsize(g.question_type.as_deref().unwrap_or("all"), 30), g.format.as_str())
}

/// Writes `blind_vs_chance.svg`, `s_histogram.svg` and `importances.svg`.
/// `model` names the blind model in the captions (`TsT-RF`, `TsT-Embed`);
/// `removed` is the set pruning removed, when it ran (a release): the
/// histogram then stacks removed on kept.
pub fn write_all(dir: &Path, d: &Diagnosis, model: &str, removed: Option<&BTreeSet<&str>>) -> Result<()> {
    write_bytes(&dir.join("blind_vs_chance.svg"), blind_vs_chance(d, model)?.as_bytes())?;
    write_bytes(&dir.join("s_histogram.svg"), s_histogram(d, removed)?.as_bytes())?;
    write_bytes(&dir.join("importances.svg"), importances(d)?.as_bytes())
}

/// Groups drawn in `blind_vs_chance.svg` (the rest are named in a caption line).
const MAX_GROUPS: usize = 40;

/// One row per group on an accuracy axis from 0 to 100%: blind accuracy as a
/// bar (a 2-pixel stub when zero) with its 95% Wilson interval as a whisker,
/// the majority baseline and chance as ticks; each row's value, interval and
/// size printed at the right, outside the data area.
pub fn blind_vs_chance(d: &Diagnosis, model: &str) -> Result<String> {
    let groups: Vec<&GroupSummary> = d.groups.iter().take(MAX_GROUPS).collect();
    let n = groups.len().max(1);
    let labels: Vec<String> = groups.iter().map(|g| label(g)).collect();
    let values: Vec<String> = groups
        .iter()
        .map(|g| {
            let (lo, hi) = wilson(g.blind_accuracy, g.n);
            format!("{} ({:.1}–{:.1}) n={}", pct(g.blind_accuracy), lo * 100.0, hi * 100.0, g.n)
        })
        .collect();
    let header = "blind (95% CI), questions";
    let left = labels.iter().map(|l| text_width(l, LABEL)).max().unwrap_or(0).max(60) + 16;
    let right = values.iter().chain([&header.to_string()]).map(|v| text_width(v, LABEL)).max().unwrap_or(0) + 24;
    let title = format!("Blind accuracy ({model}) per group, against chance and the majority baseline");
    let overall = format!(
        "Overall: {} blind (95% CI {}–{}), chance {}, majority {}; {} questions in {} groups",
        pct(d.weighted),
        pct(d.ci95.0),
        pct(d.ci95.1),
        pct(d.chance),
        pct(d.majority),
        d.n_samples,
        d.groups.len()
    );
    let width = (left + 480 + right + 20).max(text_width(&title, TITLE).max(text_width(&overall, LABEL)) + 30);
    let legend: Vec<(Swatch, String)> = vec![
        (Swatch::Box(BLUE), "blind accuracy".into()),
        (Swatch::Whisker(DARK), "95% CI (Wilson, per group)".into()),
        (Swatch::Tick(ORANGE, 2), "majority baseline".into()),
        (Swatch::Tick(GREY, 6), "chance".into()),
    ];
    let mut notes = Vec::new();
    if d.groups.len() > groups.len() {
        notes.push(format!("First {} of {} groups shown; all are in diagnose.json.", groups.len(), d.groups.len()));
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
            let x1 = px(g.blind_accuracy, r).0.max(x0 + 2);
            root.draw(&Rectangle::new([(x0, cy - 7), (x1, cy + 7)], BLUE.filled())).map_err(plot_err)?;
            // Chance as a wide grey tick under a thin orange majority tick: both show when they coincide.
            let cx = px(g.chance, r).0;
            root.draw(&PathElement::new(vec![(cx, cy - 10), (cx, cy + 10)], stroke(&GREY, 6))).map_err(plot_err)?;
            let mx = px(g.majority, r).0;
            root.draw(&PathElement::new(vec![(mx, cy - 10), (mx, cy + 10)], stroke(&ORANGE, 2))).map_err(plot_err)?;
            let (lo, hi) = wilson(g.blind_accuracy, g.n);
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
/// one panel, named with their count. With `removed` (pruning ran), each bar
/// stacks the removed questions on the kept ones.
pub fn s_histogram(d: &Diagnosis, removed: Option<&BTreeSet<&str>>) -> Result<String> {
    let scores = d.sample_scores();
    let mut by_type: BTreeMap<&str, Hist> = BTreeMap::new();
    for r in d.rows.iter().filter(|r| r.repeat == 0) {
        let s = scores.get(r.id.as_str()).map_or(r.s, |v| v.0);
        let bin = if s.is_finite() { ((s * BINS as f64) as usize).min(BINS - 1) } else { 0 };
        let h = by_type.entry(r.question_type.as_deref().unwrap_or("(no type)")).or_default();
        if removed.is_some_and(|set| set.contains(r.id.as_str())) {
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
    let legend: Vec<(Swatch, String)> = match removed {
        Some(_) => vec![
            (Swatch::Box(BLUE), format!("kept ({n_kept})")),
            (Swatch::Box(RED), format!("removed by pruning ({n_removed})")),
        ],
        None => vec![(Swatch::Box(BLUE), format!("questions ({n_kept}; no pruning in this run)"))],
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
            if removed.is_some() {
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

/// The groups above their null ([`super::verdict::group_above`]), the widest margin over their baseline first.
fn above_baseline(d: &Diagnosis) -> Vec<&GroupSummary> {
    let mut above: Vec<&GroupSummary> = d.groups.iter().filter(|g| super::verdict::group_above(d, g)).collect();
    above.sort_by(|a, b| {
        (b.blind_accuracy - b.baseline().0)
            .total_cmp(&(a.blind_accuracy - a.baseline().0))
            .then_with(|| label(a).cmp(&label(b)))
    });
    above
}

/// One panel per group answered above its null blind (at most
/// [`MAX_IMPORTANCE_PANELS`], widest margin first): its non-zero feature
/// importances (mean decrease in impurity), top 10, values printed. With no
/// such group, the SVG says so in words.
pub fn importances(d: &Diagnosis) -> Result<String> {
    let above = above_baseline(d);
    let title = "Feature importances of the groups a blind model answers above their null";
    let mut svg = String::new();
    if above.is_empty() {
        let msg = "No group is answered above its null blind; no feature importances to show.";
        let note = format!(
            "(above: above the label-permutation null and the majority answer, per group; {} groups diagnosed)",
            d.groups.len()
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
    let shown: Vec<&GroupSummary> = above.iter().copied().take(MAX_IMPORTANCE_PANELS).collect();
    let feats: Vec<Vec<(String, f64)>> = shown
        .iter()
        .map(|g| g.top_features.iter().filter(|f| f.1 > 0.0 && f.1.is_finite()).take(MAX_FEATURES).cloned().collect())
        .collect();
    let captions: Vec<String> = shown
        .iter()
        .map(|g| {
            let (b, which) = g.baseline();
            format!("{}: blind {} vs baseline {} ({which}), n={}", label(g), pct(g.blind_accuracy), pct(b), g.n)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScoreRow;
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
    fn wilson_and_compact() {
        let (lo, hi) = wilson(0.5, 100);
        assert!((lo - 0.4038).abs() < 1e-3 && (hi - 0.5962).abs() < 1e-3, "{lo} {hi}");
        assert_eq!(wilson(0.0, 10).0, 0.0);
        assert!(wilson(0.0, 10).1 > 0.2);
        assert_eq!(compact(950), "950");
        assert_eq!(compact(1234), "1.2k");
        assert_eq!(compact(2000), "2k");
        assert_eq!(compact(12_345), "12k");
        assert_eq!(compact(1_500_000), "1.5M");
        assert_eq!(ellipsize("abcdefghij", 7), "abc…hij");
        assert_eq!(ellipsize("short", 7), "short");
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
        assert_eq!(t.iter().filter(|x| x.contains("vs baseline")).count(), MAX_IMPORTANCE_PANELS);
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
