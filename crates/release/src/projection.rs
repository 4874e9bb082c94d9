//! `report/embedding_projection.svg`: question embeddings projected on their
//! first two principal axes, coloured by s(x), removed questions marked.
//! Drawn with plotters' SVG backend like the other plots (no fonts needed).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::Result;
use crate::plots::{BLUE, LABEL, Swatch, TITLE, chart_below, draw_legend, plot_err, text};

/// File of the projection plot in `report/`.
pub const PROJECTION_SVG: &str = "embedding_projection.svg";

/// Removed questions when no diagnosis scored them.
const RED: RGBColor = RGBColor(192, 57, 43);
/// Questions without s(x) when others have one.
const UNSCORED: RGBColor = RGBColor(187, 187, 187);

/// One point of the projection plot (in the embeddings' order).
pub struct Point {
    /// s(x), when a diagnosis scored the question.
    pub s: Option<f64>,
    pub removed: bool,
}

/// Colour of s in [0, 1]: blue (0) through yellow to red (1).
fn ramp(s: f64) -> RGBColor {
    let s = s.clamp(0.0, 1.0);
    let stops = [(49.0, 54.0, 149.0), (254.0, 224.0, 144.0), (165.0, 0.0, 38.0)];
    let (a, b, t) = if s < 0.5 { (stops[0], stops[1], s * 2.0) } else { (stops[1], stops[2], (s - 0.5) * 2.0) };
    let mix = |x: f64, y: f64| (x + (y - x) * t).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The span of `v`, padded by a twentieth (a unit around a single value).
fn span(v: impl Iterator<Item = f64> + Clone) -> std::ops::Range<f64> {
    let lo = v.clone().fold(f64::INFINITY, f64::min);
    let hi = v.fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return 0.0..1.0;
    }
    let pad = if hi - lo > 1e-12 { (hi - lo) * 0.05 } else { 1.0 };
    lo - pad..hi + pad
}

/// The SVG (no script, no external resource): question embeddings projected
/// on their first two principal components (`xy`, one point per embedded
/// question, projected by the pipeline), coloured by s(x) (grey where the
/// question has none), removed questions ringed in black; without scores,
/// kept questions blue and removed ones red.
pub fn projection_svg(xy: &[(f64, f64)], points: &[Point], title: &str) -> Result<String> {
    let scored = points.iter().any(|p| p.s.is_some());
    let (width, height, top) = (720, 560, 64);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        text(&root, title, (14, 18), TITLE, &BLACK, Pos::new(HPos::Left, VPos::Center))?;
        if scored {
            for k in 0..=10 {
                let x = 14 + 12 * k;
                root.draw(&Rectangle::new([(x, 38), (x + 12, 48)], ramp(f64::from(k) / 10.0).filled()))
                    .map_err(plot_err)?;
            }
            text(
                &root,
                "s(x) 0 → 1; ringed: removed",
                (14 + 12 * 11 + 10, 43),
                LABEL,
                &BLACK,
                Pos::new(HPos::Left, VPos::Center),
            )?;
        } else {
            let legend = [(Swatch::Box(BLUE), "kept".to_string()), (Swatch::Box(RED), "removed".to_string())];
            draw_legend(&root, &legend, 14, 43, width - 10)?;
        }
        let mut chart =
            chart_below(&root, top, width, height, span(xy.iter().map(|p| p.0)), span(xy.iter().map(|p| p.1)))?;
        chart
            .configure_mesh()
            .disable_mesh()
            .label_style(("sans-serif", LABEL))
            .axis_desc_style(("sans-serif", LABEL))
            .x_desc("PC1 of the question embeddings")
            .y_desc("PC2")
            .draw()
            .map_err(plot_err)?;
        // Removed points last, so their rings are on top.
        let mut order: Vec<usize> = (0..points.len().min(xy.len())).collect();
        order.sort_by_key(|&i| (points[i].removed, i));
        chart
            .draw_series(order.iter().map(|&i| {
                let p = &points[i];
                let fill = match (scored, p.s) {
                    (true, Some(s)) => ramp(s),
                    (true, None) => UNSCORED,
                    (false, _) if p.removed => RED,
                    (false, _) => BLUE,
                };
                Circle::new(xy[i], 3, fill.mix(0.8).filled())
            }))
            .map_err(plot_err)?;
        if scored {
            let ring = ShapeStyle { color: BLACK.to_rgba(), filled: false, stroke_width: 1 };
            chart
                .draw_series(order.iter().filter(|&&i| points[i].removed).map(|&i| Circle::new(xy[i], 3, ring)))
                .map_err(plot_err)?;
        }
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn projected(n: usize) -> Vec<(f64, f64)> {
        (0..n).map(|i| (i as f64).sin()).zip((0..n).map(|i| 0.1 * i as f64)).collect()
    }

    /// `<circle` elements of `svg`: (filled, rings).
    fn circles(svg: &str) -> (usize, usize) {
        let all: Vec<&str> = svg.split("<circle").skip(1).map(|c| &c[..c.find("/>").unwrap()]).collect();
        let rings = all.iter().filter(|c| c.contains("fill=\"none\"")).count();
        (all.len() - rings, rings)
    }

    /// One filled circle per projected question, one ring per removed one
    /// when scored; kept/removed colours without scores.
    #[test]
    fn one_circle_per_projected_question() {
        let e = projected(23);
        let points = |scored: bool| -> Vec<Point> {
            (0..23).map(|i| Point { s: (scored && i % 5 != 0).then(|| i as f64 / 22.0), removed: i % 4 == 0 }).collect()
        };
        let svg = projection_svg(&e, &points(true), "scored <b>").unwrap();
        assert_eq!(circles(&svg), (23, 6), "{svg}");
        assert!(svg.contains("PC1 of the question embeddings") && svg.contains("scored &lt;b&gt;"));
        // The five questions without s(x) are grey.
        assert_eq!(svg.matches("fill=\"#BBBBBB\"").count(), 5, "{svg}");
        let svg = projection_svg(&e, &points(false), "kept and removed").unwrap();
        assert_eq!(circles(&svg), (23, 0));
        assert_eq!(svg.matches("fill=\"#C0392B\"").count(), 6 + 1, "6 removed points and the legend's box");
        // Fewer points than rows: only those drawn.
        let svg = projection_svg(&e, &points(true)[..10], "t").unwrap();
        assert_eq!(circles(&svg).0, 10);
    }
}
