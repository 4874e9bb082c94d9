//! SVG figures (plotters' SVG backend, no fonts needed): the primitives every
//! stage's plots share (colours, text, legends, the chart under a title) and
//! the diagnosis figures ([`diagnosis`]). A stage hands plain numbers and
//! labels; this crate decides how they are drawn, so the figures of diagnose,
//! prune and release look alike and none of those crates owns the drawing.
//!
//! Legends and captions sit outside the data area, so they never hide a bar;
//! every text's width is estimated from its length (the SVG backend cannot
//! measure text) and the canvas is sized to fit the longest one.

pub mod diagnosis;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use blindspot_core::error::{Error, Result};

pub const BLUE: RGBColor = RGBColor(52, 101, 164);
pub const GREY: RGBColor = RGBColor(150, 150, 150);
pub const ORANGE: RGBColor = RGBColor(230, 126, 34);
/// Removed questions in the s(x) histogram.
pub const RED: RGBColor = RGBColor(196, 58, 49);
pub const DARK: RGBColor = RGBColor(40, 40, 40);

pub const FONT: &str = "sans-serif";
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
    let s = blindspot_core::io::escape::visible(s);
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

/// Wilson score interval (95%, [`blindspot_core::stats::wilson`]) of a proportion `p` over `n` trials.
pub fn wilson(p: f64, n: usize) -> (f64, f64) {
    if !p.is_finite() {
        return (0.0, 1.0);
    }
    blindspot_core::stats::wilson(p.clamp(0.0, 1.0) * n as f64, n as f64, blindspot_core::stats::Z95)
}

/// Left-aligned (or otherwise anchored) text at a pixel position; invisible
/// format characters of data (a question type with U+202E) shown as code
/// points, as everywhere a person reads.
pub fn text(area: &Area<'_>, s: &str, at: (i32, i32), size: u32, color: &RGBColor, pos: Pos) -> Result<()> {
    let s = blindspot_core::io::escape::visible(s).into_owned();
    area.draw(&Text::new(s, at, (FONT, size).into_font().color(color).pos(pos))).map_err(plot_err)
}

pub const LEFT_MID: Pos = Pos { h_pos: HPos::Left, v_pos: VPos::Center };
pub const RIGHT_MID: Pos = Pos { h_pos: HPos::Right, v_pos: VPos::Center };

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
