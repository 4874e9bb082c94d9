//! `[predictions]` and `[metrics]`: the prediction files and how they are scored.

use super::stages::moved_to_dataset;
use super::*;

/// Validated `[predictions]` and `[metrics]` sections.
#[derive(Debug, Clone)]
pub struct MetricsPlan {
    /// Paths resolved against the pipeline's folder.
    pub files: Vec<crate::predictions::PredictionFile>,
    /// Each file's path as written in the pipeline (what reports show).
    pub written: Vec<String>,
    pub manifests: Vec<PathBuf>,
    pub config: crate::metrics::MetricsConfig,
    /// The gold-label audit's agreement rule.
    pub audit: crate::metrics::evidence::AuditRule,
}

pub(super) fn metrics_plan(
    p: Option<&crate::wire::PredictionsWire>,
    m: Option<&crate::wire::MetricsWire>,
    seed: u64,
    ctx: &mut Ctx<'_>,
) -> Option<MetricsPlan> {
    use crate::metrics::{GroupKey, MetricsConfig};
    use crate::predictions::{PredictionFile, Source};
    let Some(p) = p else {
        if m.is_some() {
            ctx.err("metrics", "[metrics] has no predictions to score").help =
                Some("add a [predictions] section with `files = [{ path = \"...\" }]`".into());
        }
        return None;
    };
    if p.files.is_empty() {
        ctx.err("predictions.files", "no prediction files listed").help =
            Some("list files as `files = [{ path = \"preds.jsonl\", model = \"my-model\" }]`".into());
    }
    let mut plan = MetricsPlan {
        files: Vec::new(),
        written: Vec::new(),
        manifests: Vec::new(),
        config: MetricsConfig { seed, strict: p.strict, ..MetricsConfig::default() },
        audit: crate::metrics::evidence::AuditRule::default(),
    };
    for (i, f) in p.files.iter().enumerate() {
        let key = format!("predictions.files[{i}].path");
        let Some(path) = ctx.resolve(&key, &f.path) else { continue };
        let source = match f.format.as_deref().map(Source::parse) {
            None => None,
            Some(Ok(s)) => Some(s),
            Some(Err(e)) => {
                ctx.err(&format!("predictions.files[{i}].format"), e);
                None
            }
        };
        let fields = crate::predictions::Fields {
            id: f.id_field.clone(),
            response: f.response_field.clone(),
            model: f.model_field.clone(),
            wide: f.wide.iter().map(|(c, m)| (c.clone(), m.clone())).collect(),
        };
        if let Err(e) = fields.check_wide() {
            ctx.err(&format!("predictions.files[{i}].wide"), e);
        }
        if let Some(j) = p.files[..i].iter().position(|g| g.path == f.path) {
            ctx.err(
                &key,
                format!("\"{}\" is also files[{j}]: its answers would count twice; give each file once", f.path),
            );
        }
        plan.files.push(PredictionFile { path, model: f.model.clone(), source, fields });
        plan.written.push(f.path.clone());
    }
    for (i, raw) in p.manifest.iter().enumerate() {
        if let Some(path) = ctx.resolve(&format!("predictions.manifest[{i}]"), raw) {
            plan.manifests.push(path);
        }
    }
    if let Some(m) = m {
        plan.config.resamples = m.resamples.unwrap_or(plan.config.resamples);
        if let Some(v) = crate::bounds::check_count(&crate::bounds::RESAMPLES, plan.config.resamples) {
            ctx.err(v.key, v.message);
        }
        moved_to_dataset(ctx, "metrics", m.numeric.as_deref(), m.mra);
        for g in &m.group_by {
            match GroupKey::parse(g) {
                Ok(k) => plan.config.group_by.push(k),
                Err(e) => {
                    ctx.err("metrics.group-by", e).help = Some("write \"question_type\" or \"meta:FIELD\"".into())
                }
            }
        }
        plan.config.llm_bases = m.llm_bases.clone();
        if let Some(a) = &m.audit_agree {
            match crate::metrics::evidence::AuditRule::parse(&a.text()) {
                Ok(r) => plan.audit = r,
                Err(e) => {
                    ctx.err("metrics.audit-agree", e);
                }
            }
        }
    }
    Some(plan)
}
