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
    /// `config` without `strict`: how predictions are scored against every
    /// question, removed ones included, where ids of variant rows are not
    /// among the questions and must not be an error.
    pub lenient: crate::metrics::MetricsConfig,
    /// The gold-label audit's agreement rule.
    pub audit: crate::metrics::evidence::AuditRule,
}

/// `[predictions]` and `[metrics]` with the dataset's seed and its one scoring
/// of numeric answers (`scoring`).
pub(super) fn metrics_plan(
    p: Option<&crate::wire::PredictionsWire>,
    m: Option<&crate::wire::MetricsWire>,
    seed: u64,
    scoring: (crate::sample::NumericScoring, crate::sample::MraRule),
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
        config: MetricsConfig {
            seed,
            strict: p.strict,
            numeric: scoring.0,
            mra: scoring.1,
            ..MetricsConfig::default()
        },
        lenient: MetricsConfig::default(),
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
        plan.config.reference_answers = m.reference_answers.clone();
        if let Some(a) = &m.audit_agree {
            match crate::metrics::evidence::AuditRule::parse(&a.text()) {
                Ok(r) => plan.audit = r,
                Err(e) => {
                    ctx.err("metrics.audit-agree", e);
                }
            }
        }
    }
    plan.lenient = MetricsConfig { strict: false, ..plan.config.clone() };
    Some(plan)
}

/// `blindspot metrics`' command line, in `[metrics]`' terms: a flag left out
/// is `None` (or empty), and takes the value a pipeline without the key gets.
#[derive(Debug, Clone)]
pub struct MetricsFlags {
    /// `--seed`: of the bootstrap (and of B-Clean's step 3).
    pub seed: Option<u64>,
    /// `--resamples`.
    pub resamples: Option<usize>,
    /// `--strict`.
    pub strict: bool,
    /// `--numeric` and `--mra`, as parsed.
    pub scoring: (crate::sample::NumericScoring, crate::sample::MraRule),
    /// `--group-by`.
    pub group_by: Vec<String>,
    /// `--llm-base VLM=LLM`.
    pub llm_base: Vec<String>,
    /// `--reference-answers FIELD`.
    pub reference_answers: Option<String>,
    /// `--audit-agree`.
    pub audit_agree: Option<String>,
    /// `--bclean`, `--bclean-models`, `--bclean-step3`, `--bclean-remove-imageless`.
    pub bclean: bool,
    pub bclean_models: Vec<String>,
    pub bclean_step3: bool,
    pub bclean_remove_imageless: bool,
}

/// The settings `blindspot metrics` runs with.
#[derive(Debug, Clone)]
pub struct MetricsSettings {
    pub config: crate::metrics::MetricsConfig,
    /// The gold-label audit's agreement rule.
    pub audit: crate::metrics::evidence::AuditRule,
    /// B-Clean's settings, with `--bclean`.
    pub bclean: Option<crate::prune::bclean::BCleanConfig>,
}

/// The settings of `blindspot metrics`, resolved once from its flags: every
/// value a flag leaves out is the one a pipeline's `[metrics]` without that key
/// gets (seed 42, 1000 resamples, every model agreeing for the audit), and a
/// value out of its bounds is refused naming the flag.
pub fn metrics_settings(flags: &MetricsFlags) -> Result<MetricsSettings> {
    use crate::metrics::{GroupKey, MetricsConfig};
    let flag = |msg: String| Error::one(Problem::new(Location::file("command line"), msg));
    let defaults = MetricsConfig::default();
    let (numeric, mra) = flags.scoring;
    let mut config = MetricsConfig {
        seed: flags.seed.unwrap_or(defaults.seed),
        resamples: flags.resamples.unwrap_or(defaults.resamples),
        strict: flags.strict,
        numeric,
        mra,
        reference_answers: flags.reference_answers.clone(),
        ..defaults
    };
    if let Some(v) = crate::bounds::check_count(&crate::bounds::RESAMPLES, config.resamples) {
        return Err(flag(v.for_flag()));
    }
    for g in &flags.group_by {
        config.group_by.push(GroupKey::parse(g).map_err(flag)?);
    }
    crate::predictions::check_models(&flags.bclean_models, "--bclean-models").map_err(flag)?;
    for b in &flags.llm_base {
        let (vlm, llm) = b.split_once('=').ok_or_else(|| flag(format!("--llm-base \"{b}\" is not VLM=LLM")))?;
        config.llm_bases.insert(vlm.to_string(), llm.to_string());
    }
    let audit = match &flags.audit_agree {
        Some(a) => crate::metrics::evidence::AuditRule::parse(a).map_err(flag)?,
        None => crate::metrics::evidence::AuditRule::default(),
    };
    let bclean = flags.bclean.then(|| crate::prune::bclean::BCleanConfig {
        models: (!flags.bclean_models.is_empty()).then(|| flags.bclean_models.clone()),
        // Step 3's blind forest: the diagnosis defaults, with the bootstrap's seed
        // and the numeric scoring of the metrics.
        step3: flags.bclean_step3.then(|| crate::diagnose::DiagnoseConfig {
            seed: config.seed,
            numeric,
            mra,
            ..crate::diagnose::DiagnoseConfig::default()
        }),
        remove_imageless: flags.bclean_remove_imageless,
        ..crate::prune::bclean::BCleanConfig::default()
    });
    Ok(MetricsSettings { config, audit, bclean })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> MetricsFlags {
        MetricsFlags {
            seed: None,
            resamples: None,
            strict: false,
            scoring: (crate::sample::NumericScoring::Exact, crate::sample::MraRule::Strict),
            group_by: Vec::new(),
            llm_base: Vec::new(),
            reference_answers: None,
            audit_agree: None,
            bclean: false,
            bclean_models: Vec::new(),
            bclean_step3: false,
            bclean_remove_imageless: false,
        }
    }

    /// `blindspot metrics` without flags scores as a pipeline's `[metrics]`
    /// without keys does: seed 42, 1000 resamples, every model agreeing for the
    /// audit; a value out of bounds names its flag.
    #[test]
    fn the_metrics_flags_resolve_to_a_pipelines_defaults() {
        let s = metrics_settings(&none()).unwrap();
        assert_eq!((s.config.seed, s.config.resamples), (42, 1000));
        assert_eq!(s.audit, crate::metrics::evidence::AuditRule::All { at_least: 3 });
        assert!(s.bclean.is_none());
        let s = metrics_settings(&MetricsFlags {
            seed: Some(9),
            bclean: true,
            bclean_step3: true,
            audit_agree: Some("2".into()),
            ..none()
        })
        .unwrap();
        assert_eq!(s.bclean.unwrap().step3.unwrap().seed, 9);
        assert_eq!(s.audit, crate::metrics::evidence::AuditRule::AtLeast(2));
        let e = metrics_settings(&MetricsFlags { resamples: Some(0), ..none() }).unwrap_err();
        assert_eq!(
            e.to_string(),
            "error: command line: --resamples must be between 1 and 100000 (each resample re-scores every cell); found 0"
        );
    }

    /// A pipeline's `[metrics]` resolves once, with the dataset's seed and
    /// scoring: `config` is strict as `[predictions] strict` says, and the
    /// scoring of every question (variant ids not among them) is the same
    /// config without `strict`.
    #[test]
    fn the_lenient_metrics_config_resolves_with_the_strict_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.jsonl"), "{\"id\": \"q1\", \"question\": \"Q?\", \"answer\": \"1\"}\n")
            .unwrap();
        std::fs::write(dir.path().join("preds.jsonl"), "").unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(
            &path,
            "[dataset]\nname = \"b\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\nseed = 7\nnumeric = \"mra\"\n\n\
             [ingest]\npath = \"b.jsonl\"\n\n[predictions]\nstrict = true\nfiles = [{ path = \"preds.jsonl\", model = \
             \"m\" }]\n\n[metrics]\nresamples = 50\nreference-answers = \"answers\"\n",
        )
        .unwrap();
        let plan = Pipeline::load(&path).unwrap().metrics.unwrap();
        let c = &plan.config;
        assert_eq!((c.strict, c.seed, c.resamples, c.numeric), (true, 7, 50, crate::sample::NumericScoring::Mra));
        assert_eq!(c.reference_answers.as_deref(), Some("answers"));
        assert_eq!(plan.lenient, crate::metrics::MetricsConfig { strict: false, ..c.clone() });
    }
}
