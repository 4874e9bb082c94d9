//! One step per stage: each takes its resolved settings and its inputs and
//! returns a typed output. [`crate::run`] chains them for `build`, and each
//! subcommand (`blindspot diagnose`, `prune`, `variants`) calls the same step,
//! so a stage runs one way whoever asks for it.

use std::borrow::Cow;

use crate::cache::StageCache;
use crate::context::RunContext;
use crate::diagnose::{DiagnoseConfig, Diagnosis};
use crate::embed::SampleEmbeddings;
use crate::error::{Location, Result};
use crate::progress::timed;
use crate::prune::{PruneConfig, Pruned, prune_with};
use crate::sample::Sample;
use crate::variants::{KindSel, Variants, VariantsConfig, expand_kinds, generate_from};

/// The stage cache and the keys of what a step runs on: the questions'
/// digest and the diagnosis settings (with the embedding model, when one is
/// used). `build` reuses unchanged results through it; the subcommands run
/// without it.
pub struct Cached<'a> {
    pub cache: &'a StageCache,
    pub ctx: &'a RunContext,
    /// [`crate::cache::samples_digest`] of the questions the steps run on.
    pub samples: [u8; 32],
    /// The diagnosis settings' canonical JSON, then the embedding model's name.
    pub tst: Vec<u8>,
}

impl Cached<'_> {
    /// `compute`'s result for `stage` (keyed by the questions, the diagnosis
    /// settings and `extra`), from the cache when `check` accepts what it holds.
    fn get_or<T: serde::Serialize + serde::de::DeserializeOwned>(
        &self,
        stage: &str,
        extra: &[&[u8]],
        check: impl FnOnce(&T) -> std::result::Result<(), String>,
        compute: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let mut parts: Vec<&[u8]> = vec![&self.samples, &self.tst];
        parts.extend_from_slice(extra);
        let key = StageCache::key(self.ctx, stage, &parts);
        self.cache.try_get_or(stage, &key, check, compute)
    }
}

/// `[diagnose]` checked against the questions it diagnoses: no more folds than
/// questions, meta fields the questions carry, fold groups that hold, and the
/// outside scores (`scores`) read and matched to the questions once. `at` is
/// where the meta fields were named (the pipeline file or the command line).
pub fn check_diagnose<'c>(
    cfg: &'c DiagnoseConfig,
    samples: &[Sample],
    at: &Location,
) -> Result<Cow<'c, DiagnoseConfig>> {
    cfg.check_folds(samples.len())?;
    cfg.check_meta_fields(samples, at)?;
    cfg.check_fold_groups(samples, at)?;
    if cfg.outside_source.is_none() {
        return Ok(Cow::Borrowed(cfg));
    }
    let mut loaded = cfg.clone();
    loaded.load_outside(samples)?;
    Ok(Cow::Owned(loaded))
}

/// The sentence-embedding model `plan` names, loaded (a missing or
/// incomplete folder is an error saying how to obtain it).
pub fn load_model(plan: &crate::spec::plan::ModelPlan) -> Result<crate::embed::minilm::MiniLm> {
    let dir = crate::embed::model::resolve_model_dir(plan.dir.as_deref())?;
    crate::embed::minilm::MiniLm::load(&dir, plan.max_length)
}

/// What the diagnose step produced.
pub struct Diagnosed {
    /// The diagnosis, with its label-permutation null and the meta fields that
    /// carry the answer named.
    pub diagnosis: Diagnosis,
    /// The meta-field audit's warnings, for the caller to print.
    pub warnings: Vec<String>,
    /// Its report files (`scores.parquet`, `diagnose.json`, the plots).
    pub report: Vec<crate::io::rendered::Rendered>,
}

/// The diagnose step: TsT-RF (or TsT-Embed, or both) on `samples`, the
/// label-permutation null its verdict reads, and the audit of meta fields that
/// carry the answer. `measured` is a diagnosis of the same questions with the
/// same settings already made (the pruner's `before`): it is completed, not
/// measured again. `removed`: what pruning removed, when it ran; the report's
/// s(x) histogram marks it.
pub fn diagnose(
    samples: &[Sample],
    cfg: &DiagnoseConfig,
    emb: Option<&SampleEmbeddings>,
    cached: Option<&Cached<'_>>,
    measured: Option<Diagnosis>,
    removed: Option<&std::collections::BTreeSet<&str>>,
) -> Result<Diagnosed> {
    let compute = || {
        let mut d = crate::diagnose::diagnose_with(samples, cfg, emb)?;
        measure_null(samples, cfg, &mut d);
        Ok(d)
    };
    let mut d = match (measured, cached) {
        (Some(d), _) => d,
        (None, Some(c)) => {
            timed("diagnose", || c.get_or("diagnose", &[], |d: &Diagnosis| d.check_samples(samples), compute))?
        }
        (None, None) => timed("diagnose", compute)?,
    };
    // The verdict reads the label-permutation null: a pruner that did not measure it
    // (another stop rule, B-Clean) leaves it to be measured here.
    if d.null.is_none() {
        timed("null (label permutations)", || measure_null(samples, cfg, &mut d));
    }
    // Meta fields that carry the answer are named, used as features or not.
    let warnings = crate::diagnose::audit::attach(&mut d, samples, cfg);
    let report =
        timed("diagnose report", || crate::diagnose::report::render_report(&d, cfg, d.tst_embed.as_deref(), removed))?;
    Ok(Diagnosed { diagnosis: d, warnings, report })
}

/// Measures the label-permutation null of `d`, the diagnosis of `samples`, into it.
fn measure_null(samples: &[Sample], cfg: &DiagnoseConfig, d: &mut Diagnosis) {
    let refs: Vec<&Sample> = samples.iter().collect();
    d.null = Some(crate::diagnose::null::measure(&refs, cfg, d, &cfg.null));
}

/// What the prune step produced: the pruning run and, when asked for, its
/// matched random control.
pub struct PruneRuns {
    pub pruned: Pruned,
    pub control: Option<Pruned>,
    /// Their report files (`prune.json`, `removed.csv`, `kept_ids.txt`, the curve).
    pub report: Vec<crate::io::rendered::Rendered>,
}

/// The prune step (IBP, AFLite or the random control): `cfg` on `samples`,
/// then, with `control`, the control that removes at random exactly what the
/// pruner removed, key by key.
pub fn prune(
    samples: &[Sample],
    cfg: &PruneConfig,
    control: bool,
    dcfg: &DiagnoseConfig,
    emb: Option<&SampleEmbeddings>,
    cached: Option<&Cached<'_>>,
) -> Result<PruneRuns> {
    let run = |cfg: &PruneConfig| match cached {
        Some(c) => c.get_or(
            "prune",
            &[&crate::cache::config_bytes(cfg)?],
            |pr: &Pruned| pr.check_partition(samples),
            || prune_with(samples, cfg, dcfg, emb),
        ),
        None => prune_with(samples, cfg, dcfg, emb),
    };
    let pruned = timed("prune (diagnose before, IBP iterations, after)", || run(cfg))?;
    let control = match control {
        true => Some(timed("prune control", || run(&pruned.matched_control()))?),
        false => None,
    };
    let report = timed("prune report", || crate::prune::report::render_report(&pruned, control.as_ref()))?;
    Ok(PruneRuns { pruned, control, report })
}

/// The variants step: each kind `cfg` asks for, made from `kept`, one kind at a
/// time (only one kind's generated images are in memory), each handed to
/// `each` as it is made. `cfg.seed` is the resolved seed of every random choice.
pub fn variants(kept: &[&Sample], cfg: &VariantsConfig, mut each: impl FnMut(Variants) -> Result<()>) -> Result<()> {
    for kind in expand_kinds(&cfg.kinds, kept.iter().copied()) {
        let one = VariantsConfig { kinds: vec![KindSel::One(kind)], ..cfg.clone() };
        each(generate_from(kept, &one)?)?;
    }
    Ok(())
}

/// What the metrics step is handed: the questions, which of them the release
/// keeps (and the control kept), and the variant rows made from the kept ones.
pub struct MetricsInputs<'a> {
    /// Every ingested question: removed ones are measured, never dropped.
    pub all: &'a [Sample],
    pub kept: &'a [&'a Sample],
    /// The matched random control's kept ids, when it ran.
    pub control_kept: Option<&'a std::collections::HashSet<&'a str>>,
    /// Whether anything was removed (the gap is measured only then).
    pub removes: bool,
    pub variants: &'a [crate::variants::KindRows],
}

/// The metrics step: the imported predictions scored against the kept
/// questions and the variant rows (`report/metrics.json`), each model's
/// accuracy on the full, kept and removed sets, the gap with and without the
/// image, and the gold-label audit.
pub fn metrics(
    plan: &crate::spec::MetricsPlan,
    imported: &crate::predictions::Imported,
    inputs: &MetricsInputs<'_>,
) -> Result<crate::outputs::MetricsOut> {
    let kept_ids: std::collections::HashSet<&str> = inputs.kept.iter().map(|s| s.id.as_str()).collect();
    // Predictions scored against every question: removed ones are measured, never dropped.
    let scored_full = crate::metrics::score_all(inputs.all, &imported.predictions, &plan.lenient)?;
    let mut rows: Vec<Sample> = inputs.kept.iter().map(|s| (*s).clone()).collect();
    for k in inputs.variants {
        rows.extend(k.rows.iter().map(|r| {
            // Scoring needs the text and gold, not the image bytes.
            let mut r = r.clone();
            r.images.iter_mut().for_each(|i| i.bytes = None);
            r
        }));
    }
    rows.sort_by(|a, b| crate::sample::id_cmp(&a.id, &b.id));
    let report = timed("metrics", || crate::metrics::metrics(&rows, imported, &plan.config))?;
    let sets = crate::metrics::evidence::Sets { kept: &kept_ids, control_kept: inputs.control_kept };
    Ok(crate::outputs::MetricsOut {
        file: report.file(imported),
        by_set: crate::metrics::by_set(inputs.all, &scored_full, &plan.config, &kept_ids),
        gap: inputs.removes.then(|| crate::metrics::evidence::gap(inputs.all, &scored_full, &sets, &plan.config)),
        label_audit: crate::metrics::evidence::label_audit(inputs.all, &scored_full, &kept_ids, plan.audit),
        audit_rule: plan.audit,
        per_question: report.per_question_batch(&rows)?,
    })
}

/// What the metrics step measured by hand (`blindspot metrics`).
pub struct Measured {
    pub report: crate::metrics::Report,
    /// Questions sighted models agree on another answer than the gold.
    pub audit: Vec<crate::metrics::evidence::AuditRow>,
    /// B-Clean's report, when the settings ask for it.
    pub bclean: Option<crate::prune::bclean::BCleanReport>,
    /// The gap on the kept and removed sets a `prune.json` names, when given one.
    pub gap: Option<crate::metrics::evidence::GapReport>,
}

/// The metrics step on rows read from files (`blindspot metrics`): `rows`
/// (questions and variant rows) scored with `settings`, B-Clean on the
/// questions when asked for, the gold-label audit over the questions, and,
/// with `prune` (a `prune.json`), the gap on the sets it names. `warn` gets
/// the scoring's warnings (unknown ids, repeated predictions) as they arise.
pub fn measure(
    rows: &[Sample],
    imported: &crate::predictions::Imported,
    settings: &crate::spec::plan::MetricsSettings,
    prune: Option<&std::path::Path>,
    mut warn: impl FnMut(String),
) -> Result<Measured> {
    let cfg = &settings.config;
    let scored = crate::metrics::score_all(rows, &imported.predictions, cfg)?;
    if scored.unknown_count > 0 {
        let mut w = format!(
            "warning: {} prediction{} name ids that are not in the given rows (skipped; results of a `blindspot \
             export` map to ids through --manifest; --strict makes this an error):",
            scored.unknown_count,
            if scored.unknown_count == 1 { "" } else { "s" }
        );
        for u in &scored.unknown {
            w.push_str(&format!("\n  {}: model \"{}\", id \"{}\"", u.location, u.model, u.id));
        }
        warn(w);
    }
    if scored.duplicate_count > 0 {
        warn(format!(
            "warning: {} repeated predictions (same model and id) ignored; the first is kept",
            scored.duplicate_count
        ));
    }
    let questions: Vec<Sample> = rows.iter().filter(|r| r.variant.is_none()).cloned().collect();
    let bclean = match &settings.bclean {
        Some(bcfg) => Some(crate::prune::bclean::bclean(&questions, &imported.predictions, cfg, bcfg)?),
        None => None,
    };
    // Gold-label audit: questions every sighted model (at least 3) answers alike, not with the gold.
    let all: std::collections::HashSet<&str> = questions.iter().map(|r| r.id.as_str()).collect();
    let audit = crate::metrics::evidence::label_audit(rows, &scored, &all, settings.audit);
    let gap = match prune {
        Some(path) => Some(gap_from_prune(path, &questions, &scored, cfg)?),
        None => None,
    };
    let report = crate::metrics::compute(rows, scored, cfg);
    Ok(Measured { report, audit, bclean, gap })
}

/// The gap report for the kept and removed sets a `prune.json` describes.
fn gap_from_prune(
    path: &std::path::Path,
    questions: &[Sample],
    scored: &crate::metrics::Scored,
    cfg: &crate::metrics::MetricsConfig,
) -> Result<crate::metrics::evidence::GapReport> {
    use crate::error::{Error, Problem};
    use std::collections::HashSet;
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let report: crate::prune::report::PruneReport = serde_json::from_str(&text).map_err(|e| {
        Error::one(
            Problem::new(Location::file(path), format!("not a prune.json: {e}"))
                .help("give the prune.json that `blindspot prune --out DIR` wrote"),
        )
    })?;
    let known: HashSet<&str> = questions.iter().map(|s| s.id.as_str()).collect();
    if let Some(r) = report.removed.iter().find(|r| !known.contains(r.id.as_str())) {
        return Err(Error::one(
            Problem::new(Location::file(path), format!("removed id \"{}\" is not among the given rows", r.id))
                .field("removed")
                .help("give the rows the pruning ran on (--samples or --release)"),
        ));
    }
    let kept_of = |removed: &[crate::prune::report::RemovedRow]| -> HashSet<&str> {
        let gone: HashSet<&str> = removed.iter().map(|r| r.id.as_str()).collect();
        known.iter().copied().filter(|id| !gone.contains(id)).collect()
    };
    let kept = kept_of(&report.removed);
    let control = report.control.as_ref().map(|c| kept_of(&c.removed));
    let sets = crate::metrics::evidence::Sets { kept: &kept, control_kept: control.as_ref() };
    Ok(crate::metrics::evidence::gap(questions, scored, &sets, cfg))
}
