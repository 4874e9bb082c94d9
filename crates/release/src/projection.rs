//! `report/embedding_projection.svg`: question embeddings projected on their
//! first two principal axes, coloured by s(x), removed questions marked.

use std::fmt::Write;

use crate::embed::SampleEmbeddings;
use crate::io::escape::html::text as escape;
use crate::ml::pca::pca2;

/// File of the projection plot in `report/`.
pub const PROJECTION_SVG: &str = "embedding_projection.svg";

/// One point of the projection plot.
pub struct Point {
    pub id: String,
    /// s(x), when a diagnosis scored the question.
    pub s: Option<f64>,
    pub removed: bool,
}

/// Colour of s in [0, 1]: blue (0) through yellow to red (1).
fn ramp(s: f64) -> String {
    let s = s.clamp(0.0, 1.0);
    let stops = [(49.0, 54.0, 149.0), (254.0, 224.0, 144.0), (165.0, 0.0, 38.0)];
    let (a, b, t) = if s < 0.5 { (stops[0], stops[1], s * 2.0) } else { (stops[1], stops[2], (s - 0.5) * 2.0) };
    let mix = |x: f64, y: f64| (x + (y - x) * t).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The SVG (no script, no external resource): question embeddings projected
/// on their first two principal components, coloured by s(x) (grey where
/// the question has none), removed questions ringed in black; without
/// scores, kept questions blue and removed ones red.
pub fn projection_svg(e: &SampleEmbeddings, points: &[Point], title: &str) -> String {
    let rows: Vec<&[f32]> = e.rows.iter().map(|r| r.question.as_slice()).collect();
    let (mean, axes) = pca2(&rows, e.dim);
    let xy: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| {
            let c: Vec<f64> = r.iter().zip(&mean).map(|(v, m)| f64::from(*v) - m).collect();
            let p = |a: &[f64]| a.iter().zip(&c).map(|(x, y)| x * y).sum::<f64>();
            (p(&axes[0]), p(&axes[1]))
        })
        .collect();
    let (w, h, pad) = (720.0, 560.0, 50.0);
    let lo = |f: fn(&(f64, f64)) -> f64| xy.iter().map(f).fold(f64::INFINITY, f64::min);
    let hi = |f: fn(&(f64, f64)) -> f64| xy.iter().map(f).fold(f64::NEG_INFINITY, f64::max);
    let (x0, x1, y0, y1) = (lo(|p| p.0), hi(|p| p.0), lo(|p| p.1), hi(|p| p.1));
    let sx = |x: f64| pad + (x - x0) / (x1 - x0).max(1e-12) * (w - 2.0 * pad);
    let sy = |y: f64| h - pad - (y - y0) / (y1 - y0).max(1e-12) * (h - 2.0 * pad - 30.0);
    let scored = points.iter().any(|p| p.s.is_some());
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"24\" font-family=\"sans-serif\" font-size=\"15\" text-anchor=\"middle\">{}</text>\n\
         <rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#bbb\"/>\n",
        w / 2.0,
        escape(title),
        pad - 5.0,
        pad + 25.0,
        w - 2.0 * pad + 10.0,
        h - 2.0 * pad - 20.0,
    );
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" font-family=\"sans-serif\" font-size=\"12\" text-anchor=\"middle\">PC1 of the question embeddings</text>\n\
         <text x=\"14\" y=\"{}\" font-family=\"sans-serif\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 {})\">PC2</text>",
        w / 2.0,
        h - 15.0,
        h / 2.0,
        h / 2.0
    );
    // Removed points last, so their rings are on top.
    let mut order: Vec<usize> = (0..points.len().min(xy.len())).collect();
    order.sort_by_key(|&i| (points[i].removed, i));
    for i in order {
        let p = &points[i];
        let (x, y) = (sx(xy[i].0), sy(xy[i].1));
        let fill = match (scored, p.s) {
            (true, Some(s)) => ramp(s),
            (true, None) => "#bbbbbb".to_string(),
            (false, _) if p.removed => "#c0392b".to_string(),
            (false, _) => "#3465a4".to_string(),
        };
        let ring = if p.removed && scored { " stroke=\"black\" stroke-width=\"1\"" } else { "" };
        let _ = writeln!(
            out,
            "<circle cx=\"{x:.2}\" cy=\"{y:.2}\" r=\"3\" fill=\"{fill}\" fill-opacity=\"0.8\"{ring}><title>{}</title></circle>",
            escape(&p.id)
        );
    }
    // Legend.
    let ly = 44.0;
    if scored {
        for k in 0..=10 {
            let s = f64::from(k) / 10.0;
            let _ = writeln!(
                out,
                "<rect x=\"{}\" y=\"{ly}\" width=\"12\" height=\"10\" fill=\"{}\"/>",
                w - pad - 170.0 + 12.0 * f64::from(k),
                ramp(s)
            );
        }
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-family=\"sans-serif\" font-size=\"11\">s(x) 0 → 1; ringed: removed</text>",
            w - pad - 170.0,
            ly + 22.0
        );
    } else {
        let _ = writeln!(
            out,
            "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"#3465a4\"/><text x=\"{}\" y=\"{}\" font-family=\"sans-serif\" font-size=\"11\">kept</text>\n\
             <circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"#c0392b\"/><text x=\"{}\" y=\"{}\" font-family=\"sans-serif\" font-size=\"11\">removed</text>",
            w - pad - 120.0,
            ly + 5.0,
            w - pad - 110.0,
            ly + 9.0,
            w - pad - 60.0,
            ly + 5.0,
            w - pad - 50.0,
            ly + 9.0
        );
    }
    out.push_str("</svg>\n");
    out
}
