//! The embedding stage of a pipeline build (issue 8): the model is loaded
//! only when a setting asks for it (`[diagnose] method = "tst-embed" | "both"`,
//! `[prune] representation = "embeddings"`, `[leakage]` without `exact-only`),
//! so a pipeline without them — the demo — builds with no model.
//!
//! ```text
//! samples ─▶ SampleEmbeddings (cached by content, .blindspot/cache/embed)
//!   ├─▶ TsT-Embed / both ─▶ s(x) for diagnose and IBP
//!   ├─▶ AFLite on embeddings
//!   ├─▶ [leakage]: exact + near duplicates within, and against the training split
//!   │     ─▶ `duplicates` config, datasheet (Composition), optional pruning
//!   └─▶ report/embedding_projection.svg (PCA to 2-D, coloured by s(x))
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::dups::{DupsReport, NearInput};
use super::minilm::MiniLm;
use super::{EmbedSettings, Embedder, Embeddings, SampleEmbeddings, embed_texts, question_with_options};
use crate::error::{Error, Problem, Result};
use crate::prune::Removed;
use crate::sample::Sample;
use crate::spec::Pipeline;

/// File of the projection plot in `report/`.
pub const PROJECTION_SVG: &str = "embedding_projection.svg";

/// The model folder of a pipeline that needs embeddings (`None`: it needs
/// none); a missing model is an error at the pipeline key that asked for it,
/// saying how to obtain the model.
pub fn check_model(p: &Pipeline) -> Result<Option<std::path::PathBuf>> {
    let Some((key, loc)) = &p.embed.requested_by else { return Ok(None) };
    match super::model::resolve_model_dir(p.embed.model_dir.as_deref()) {
        Ok(d) => Ok(Some(d)),
        Err(Error::Invalid(problems)) => {
            let why = problems.first().map_or(String::new(), |pr| format!("{}: {}", pr.loc, pr.message));
            let dir = super::model::model_dir(p.embed.model_dir.as_deref());
            Err(Error::one(
                Problem::new(loc.clone(), format!("`{key}` needs the sentence-embedding model ({why})")).help(format!(
                    "{}; or set [embed] model-dir in the pipeline. Pipelines without embedding settings need no model",
                    super::model::how_to_obtain(&dir)
                )),
            ))
        }
        Err(e) => Err(e),
    }
}

/// Loads the pipeline's model when it needs one (see [`check_model`]).
pub fn load_model(p: &Pipeline) -> Result<Option<MiniLm>> {
    match check_model(p)? {
        Some(dir) => MiniLm::load(&dir, p.embed.max_length).map(Some),
        None => Ok(None),
    }
}

/// What the embedding stage produced for a release.
#[derive(Debug, Clone, Default)]
pub struct EmbedStage {
    /// Embeddings of every ingested sample (`None`: no model was needed).
    pub embeddings: Option<SampleEmbeddings>,
    /// With `method = "both"`: TsT-Embed's own diagnosis (reported beside TsT-RF's).
    pub tst_embed: Option<crate::diagnose::Diagnosis>,
    /// `[leakage]`: the duplicates found.
    pub dups: Option<DupsReport>,
    /// `[leakage]`: the training split's file as written in the pipeline.
    pub train_written: Option<String>,
    /// `prune-duplicates`: the questions dropped, in id order, with reasons.
    pub dedup_removed: Vec<Removed>,
}

impl EmbedStage {
    pub fn dedup_ids(&self) -> BTreeSet<&str> {
        self.dedup_removed.iter().map(|r| r.id.as_str()).collect()
    }
}

/// The question+options embedding of each sample, as one matrix.
pub fn question_options_matrix(e: &SampleEmbeddings) -> Embeddings {
    let mut data = Vec::with_capacity(e.rows.len() * e.dim);
    for r in &e.rows {
        data.extend_from_slice(&r.question_options);
    }
    Embeddings::new(e.dim, data)
}

/// Runs `[leakage]`: exact duplicates always, near-duplicates with the model,
/// both within `samples` and against the training split; with `prune`, the
/// questions to drop.
pub fn leakage(
    p: &Pipeline,
    samples: &[Sample],
    emb: Option<&SampleEmbeddings>,
    model: Option<&MiniLm>,
    settings: &EmbedSettings,
) -> Result<Option<(DupsReport, Vec<Removed>)>> {
    let Some(plan) = &p.leakage else { return Ok(None) };
    let train = match &plan.train {
        Some(t) => Some(crate::ingest::ingest(t)?.samples),
        None => None,
    };
    let test_e = emb.map(question_options_matrix);
    let train_e = match (&train, model) {
        (Some(tr), Some(m)) if !plan.exact_only => {
            let texts: Vec<String> = tr.iter().map(question_with_options).collect();
            Some(embed_texts(m, &texts.iter().map(String::as_str).collect::<Vec<_>>(), settings, "embed train")?)
        }
        _ => None,
    };
    let near = match (&test_e, model) {
        (Some(te), Some(m)) if !plan.exact_only => Some(NearInput {
            test: te,
            train: train_e.as_ref(),
            threshold: plan.threshold,
            model: m.fingerprint().to_string(),
        }),
        _ => None,
    };
    let report = super::dups::find(samples, train.as_deref(), near)?;
    let removed = if plan.prune { dedup(samples, &report) } else { Vec::new() };
    Ok(Some((report, removed)))
}

/// `prune-duplicates`: every question with a copy in the training split goes
/// (reason: the copy), and of each within-benchmark cluster (exact and near
/// pairs joined) the first question by id stays and the others go.
pub fn dedup(samples: &[Sample], report: &DupsReport) -> Vec<Removed> {
    let pos: BTreeMap<&str, usize> = samples.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect();
    let mut reasons: BTreeMap<usize, String> = BTreeMap::new();
    for pr in report.pairs.iter().filter(|pr| pr.kind.starts_with("train-")) {
        let Some(&i) = pos.get(pr.id_a.as_str()) else { continue };
        let what = match pr.cosine {
            None => format!("an exact copy of training question {}", pr.id_b),
            Some(c) => format!("a near copy (cosine {c:.4}) of training question {}", pr.id_b),
        };
        // The strongest evidence first: an exact copy, else the closest near copy.
        let better = match reasons.get(&i) {
            None => true,
            Some(old) => old.contains("near copy") && (pr.cosine.is_none() || what > *old),
        };
        if better {
            reasons.insert(i, format!("leaked: {what}"));
        }
    }
    let within: Vec<(usize, usize, Option<f64>)> = report
        .pairs
        .iter()
        .filter(|pr| pr.kind == "exact" || pr.kind == "near")
        .filter_map(|pr| Some((*pos.get(pr.id_a.as_str())?, *pos.get(pr.id_b.as_str())?, pr.cosine)))
        .collect();
    let clusters = super::dups::clusters(samples.len(), within.iter().map(|(a, b, _)| (*a, *b)));
    for c in &clusters {
        let keep = c[0];
        for &m in &c[1..] {
            if reasons.contains_key(&m) {
                continue;
            }
            let best = within
                .iter()
                .filter(|(a, b, _)| *a == m || *b == m)
                .map(|(_, _, cos)| cos.unwrap_or(1.0))
                .fold(f64::NEG_INFINITY, f64::max);
            reasons.insert(
                m,
                format!(
                    "duplicate: in a cluster of {} questions whose first by id, {}, is kept (its closest pair: cosine {:.4}{})",
                    c.len(),
                    samples[keep].id,
                    best,
                    if best >= 1.0 { " or an exact copy" } else { "" }
                ),
            );
        }
    }
    reasons
        .into_iter()
        .map(|(i, reason)| Removed {
            id: samples[i].id.clone(),
            question_type: samples[i].question_type.clone(),
            format: samples[i].answer_format,
            iteration: 0,
            score: 1.0,
            reason,
        })
        .collect()
}

// ------------------------------------------------------------------ projection

/// The first two principal axes of `rows` (covariance power iteration from a
/// fixed start, no seed), each signed so that its largest-magnitude
/// coordinate is positive (ties: the lower index): the same picture on every run.
pub fn pca2(rows: &[&[f32]], dim: usize) -> (Vec<f64>, [Vec<f64>; 2]) {
    let (mean, cov) = super::mean_and_covariance(rows, dim);
    let dotv = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let mut axes: Vec<Vec<f64>> = Vec::new();
    for k in 0..2 {
        // Start: a fixed dense vector (1, 1/2, 1/3, ...), rotated by k.
        let mut v: Vec<f64> = (0..dim).map(|j| 1.0 / (1 + (j + k) % dim) as f64).collect();
        for _ in 0..300 {
            let mut w: Vec<f64> = (0..dim).map(|a| dotv(&cov[a * dim..(a + 1) * dim], &v)).collect();
            for prev in &axes {
                let p = dotv(&w, prev);
                w.iter_mut().zip(prev).for_each(|(x, y)| *x -= p * y);
            }
            let norm = dotv(&w, &w).sqrt();
            if norm < 1e-300 {
                break;
            }
            w.iter_mut().for_each(|x| *x /= norm);
            v = w;
        }
        let lead = (0..dim).fold(0, |best, j| if v[j].abs() > v[best].abs() { j } else { best });
        if v.get(lead).is_some_and(|x| *x < 0.0) {
            v.iter_mut().for_each(|x| *x = -*x);
        }
        axes.push(v);
    }
    let second = axes.pop().unwrap_or_default();
    let first = axes.pop().unwrap_or_default();
    (mean, [first, second])
}

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
        crate::release::html::escape(title),
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
            crate::release::html::escape(&p.id)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pca2_finds_the_spread_axes_with_a_fixed_sign() {
        let rows: Vec<Vec<f32>> =
            (0..50).map(|i| vec![(i as f32) * -0.3, ((i % 7) as f32) * 0.1, 0.01 * (i % 3) as f32]).collect();
        let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
        let (_, [a, b]) = pca2(&refs, 3);
        assert!(a[0] > 0.99, "{a:?}");
        assert!(b[1].abs() > 0.9, "{b:?}");
        let flipped: Vec<Vec<f32>> = rows.iter().map(|r| r.iter().map(|v| -v).collect()).collect();
        let refs: Vec<&[f32]> = flipped.iter().map(Vec::as_slice).collect();
        let (_, [a2, _]) = pca2(&refs, 3);
        assert_eq!(a, a2, "the sign convention does not depend on the data's sign");
    }
}
