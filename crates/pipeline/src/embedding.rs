//! The embedding steps of a pipeline run: the model is loaded only when a
//! setting asks for it (`[diagnose] method = "tst-embed" | "both"`, `[prune]
//! representation = "embeddings"`, `[leakage]` without `exact-only`), so a
//! pipeline without them (the demo) builds with no model; `[leakage]` finds
//! duplicates within the benchmark and against a training split, and with
//! `prune-duplicates` says which questions to drop.

use std::collections::BTreeMap;

use crate::embed::dups::{DupsReport, NearInput};
use crate::embed::minilm::MiniLm;
use crate::embed::{
    EmbedSettings, Embedder, SampleEmbeddings, embed_texts, question_options_matrix, question_with_options,
};
use crate::error::Result;
use crate::prune::Removed;
use crate::sample::Sample;
use crate::spec::Pipeline;

/// Runs `[leakage]`: exact duplicates always, near-duplicates with the model,
/// both within `samples` and against the training split (`train`, ingested
/// with the benchmark); with `prune`, the questions to drop.
pub fn leakage(
    p: &Pipeline,
    samples: &[Sample],
    train: Option<&[Sample]>,
    emb: Option<&SampleEmbeddings>,
    model: Option<&MiniLm>,
    settings: &EmbedSettings,
) -> Result<Option<(DupsReport, Vec<Removed>)>> {
    let Some(plan) = &p.leakage else { return Ok(None) };
    let test_e = emb.map(question_options_matrix);
    let train_e = match (train, model) {
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
    let mut report = crate::embed::dups::find(samples, train, near)?;
    // Near-duplicate images, reported (never pruned): a benchmark with images only.
    if samples.iter().any(|s| !s.images.is_empty()) {
        report.images =
            Some(crate::embed::image_dups::find(samples, train, None, crate::sample::image_hash::DEFAULT_THRESHOLD));
    }
    report.videos = super::video_dups::find(samples);
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
    let clusters = crate::embed::dups::clusters(samples.len(), within.iter().map(|(a, b, _)| (*a, *b)));
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

/// Each embedded question on the first two principal axes of the question
/// embeddings, in the embeddings' order: the release's projection plot.
fn project(e: &crate::embed::SampleEmbeddings) -> Vec<(f64, f64)> {
    let rows: Vec<&[f32]> = e.rows.iter().map(|r| r.question.as_slice()).collect();
    let (mean, axes) = crate::ml::pca::pca2(&rows, e.dim);
    rows.iter()
        .map(|r| {
            let c: Vec<f64> = r.iter().zip(&mean).map(|(v, m)| f64::from(*v) - m).collect();
            let p = |a: &[f64]| a.iter().zip(&c).map(|(x, y)| x * y).sum::<f64>();
            (p(&axes[0]), p(&axes[1]))
        })
        .collect()
}

/// What the embedding step produced: the embeddings (when a setting needs
/// them) and their projection, the duplicates `[leakage]` found, and what
/// `prune-duplicates` drops.
pub(crate) struct Embedded {
    pub embeddings: Option<SampleEmbeddings>,
    /// [`project`] of the embeddings (empty without them).
    pub projection: Vec<(f64, f64)>,
    pub dups: Option<DupsReport>,
    pub dedup_removed: Vec<Removed>,
}

/// The embedding step: the model loaded from `model_dir` (the folder the
/// build's settings found, when the pipeline needs it), every ingested
/// question embedded with it (cached beside the stage cache), `[leakage]`
/// against `train`, and the embeddings' projection.
pub(crate) fn embed(
    p: &Pipeline,
    model_dir: Option<&std::path::Path>,
    samples: &[Sample],
    train: Option<&[Sample]>,
    cache: &crate::cache::StageCache,
) -> Result<Embedded> {
    let model = model_dir.map(|dir| MiniLm::load(dir, p.embed.max_length)).transpose()?;
    let model = model.as_ref();
    let settings = EmbedSettings { cache_dir: cache.enabled().then(|| crate::cache::default_dir().join("embed")) };
    let embeddings = match model {
        Some(m) => Some(crate::embed::embed_samples(samples, m, &settings)?),
        None => None,
    };
    let (dups, dedup_removed) = match leakage(p, samples, train, embeddings.as_ref(), model, &settings)? {
        Some((d, r)) => (Some(d), r),
        None => (None, Vec::new()),
    };
    let projection = embeddings.as_ref().map(project).unwrap_or_default();
    Ok(Embedded { embeddings, projection, dups, dedup_removed })
}
