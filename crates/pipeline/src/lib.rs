//! The one runner of a pipeline: the only module that calls the stages in
//! order and the only one that consults the stage cache.
//!
//! ```text
//! settings (spec) ─▶ ingest ─▶ (embed, leakage) ─▶ predictions ─▶ filter
//!   ─▶ diagnose ─▶ prune or B-Clean (+ control; the diagnosis is their first
//!   iteration) ─▶ variants ─▶ metrics ─▶ release (renders and writes what it
//!   is handed, then writes or compares the lock file)
//! ```
//! Each step is a call into its stage with typed inputs; the stages do not
//! know each other's order, and `release` computes nothing.

// The crates below this one, under the module names the code uses.
use blindspot_core::{context, error, io, progress, sample};
use blindspot_diagnose as diagnose;
use blindspot_embed as embed;
use blindspot_export as export;
use blindspot_filter as filter;
use blindspot_ingest as ingest;
use blindspot_metrics as metrics;
use blindspot_ml as ml;
use blindspot_outputs as outputs;
use blindspot_predictions as predictions;
use blindspot_prune as prune;
use blindspot_release as release;
use blindspot_spec as spec;
use blindspot_variants as variants;

/// FNV-1a of blindspot's own source files, computed when it was compiled
/// (`build.rs`): any change to the code changes it, whatever the crate version
/// says, and misses every cached stage result.
pub const CODE_FINGERPRINT: &str = env!("BLINDSPOT_CODE_FINGERPRINT");

pub mod cache;
mod embedding;
pub mod rows;
pub mod steps;
pub mod summary;
pub mod video_dups;

use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use crate::context::RunContext;
use crate::diagnose::DiagnoseConfig;
use crate::error::{Error, Location, Problem, Result, display_path};
use crate::ingest::{Ingested, ingest};
use crate::outputs::{BuildOutputs, EmbedStage, Removals};
use crate::progress::timed;
use crate::prune::{Method, PruneConfig, Pruned};
use crate::release::{LockFile, LockOutcome, ReleaseOutcome, write_release};
use crate::sample::Sample;
use crate::spec::plan::{BuildFlags, BuildTarget, LockUse};
use crate::spec::{MetricsPlan, Pipeline};
use cache::{StageCache, default_dir, samples_digest};

/// What one pipeline's stages produced, and where its release went.
pub struct Built {
    pub ingested: Ingested,
    pub embed: Option<EmbedStage>,
    pub diagnosis: Option<crate::diagnose::Diagnosis>,
    pub pruned: Option<Pruned>,
    pub outcome: ReleaseOutcome,
}

/// `blindspot build`: the command's settings resolved once (every pipeline
/// validated, its model found, its outputs checked against its inputs and
/// one another, before any data is read), then each pipeline run ([`run`]).
/// `each` gets what the command prints: the summary of each release as it is
/// written, or with `--check` one line per pipeline once every rebuild
/// matches its lock file.
pub fn build(flags: &BuildFlags, mut each: impl FnMut(String)) -> Result<()> {
    let settings = crate::spec::plan::build_settings(flags)?;
    for w in &settings.warnings {
        eprintln!("{w}");
    }
    let Some(out_dir) = &settings.out_dir else {
        // A check recomputes everything: it must not trust earlier results.
        check(&settings.targets)?.into_iter().for_each(each);
        return Ok(());
    };
    let cache = if settings.cache { StageCache::new(default_dir()) } else { StageCache::disabled() };
    for t in &settings.targets {
        let lock_file = match settings.lock {
            LockUse::Write => LockFile::Write(t.lock_path.clone()),
            LockUse::Leave => LockFile::Leave,
            LockUse::Check => return Err(Error::Bug("a check with an output folder".into())),
        };
        each(run(t, out_dir, &cache, lock_file)?.summary(&t.pipeline));
    }
    Ok(())
}

/// Runs one pipeline's stages (diagnose and prune through the stage cache)
/// and writes its release under `out_dir`, doing with its lock file what
/// `lock_file` says. The stages run in flow order, each entered once: ingest,
/// embed (when a setting needs it), predictions, filter, diagnose, prune (its
/// first iteration the diagnosis), variants, metrics, release (which renders
/// the diagnosis's report with pruning's removals marked).
pub fn run(target: &BuildTarget, out_dir: &Path, cache: &StageCache, lock_file: LockFile) -> Result<Built> {
    let p = &target.pipeline;
    let ctx = RunContext { code: CODE_FINGERPRINT, ..RunContext::new(p.dataset.seed) };
    refuse_image_names_only(p)?;
    // The benchmark, and the training split `[leakage]` compares it with.
    let (ingested, train) = timed("ingest", || -> Result<_> {
        let train = match p.leakage.as_ref().and_then(|l| l.train.as_ref()) {
            Some(t) => Some(ingest(t)?.samples),
            None => None,
        };
        Ok((ingest(&p.ingest)?, train))
    })?;
    // A pipeline that needs the model and lacks it was refused with its
    // settings, before any data was read; the embed step loads it.
    let embedded = embedding::embed(p, target.model_dir.as_deref(), &ingested.samples, train.as_deref(), cache)?;
    drop(train);
    // `prune-duplicates`: the later stages see the benchmark without the dropped copies.
    let work =
        without(Cow::Borrowed(&ingested.samples), embedded.dedup_removed.iter().map(|r| r.id.as_str()).collect());
    // Predictions are read once: the filter, B-Clean and the metrics use them.
    let imported = p.metrics.as_ref().map(import_predictions).transpose()?;
    // `[filter]`: the later stages see the benchmark without what blind models answer.
    let filter_report = filter(p, &work, imported.as_ref())?;
    let work = without(work, filter_report.as_ref().map(|r| r.removed_ids()).unwrap_or_default());
    let embedding::Embedded { embeddings: emb, dups, dedup_removed, projection } = embedded;
    let cached = steps::Cached { cache, ctx: &ctx, samples: timed("hash samples", || samples_digest(&work))? };
    let DiagnoseStep { mut diagnosed, checked } = diagnose(p, &work, emb.as_ref(), &cached)?;
    let Pruning { pruned, control, bclean: bclean_report } =
        prune(p, &work, imported.as_ref(), diagnosed.as_mut(), checked.as_deref(), emb.as_ref(), &cached)?;
    drop(work);
    // The diagnosis the release reports (a pruner's first iteration only, without `run-diagnose`).
    let diagnosed = diagnosed.filter(|_| p.run_diagnose);
    // With `method = "both"` the diagnosis carries TsT-Embed's own, reported beside it.
    let tst_embed = diagnosed.as_ref().and_then(|d| d.diagnosis.tst_embed.as_deref().cloned());
    // What the release keeps and removes; variants stress the set being published.
    let removals = Removals { pruned: pruned.as_ref(), filter: filter_report.as_ref(), dedup: &dedup_removed };
    let kept = removals.kept(&ingested.samples);
    let removes = removals.removes();
    let variants = variants(p, &kept)?;
    let metrics = match (&p.metrics, &imported) {
        (Some(plan), Some(imported)) => {
            let control_kept: Option<HashSet<&str>> =
                control.as_ref().map(|c| c.kept.iter().map(String::as_str).collect());
            let inputs = steps::MetricsInputs {
                all: &ingested.samples,
                kept: &kept,
                control_kept: control_kept.as_ref(),
                removes,
                variants: &variants,
            };
            Some(steps::metrics(plan, imported, &inputs)?)
        }
        _ => None,
    };
    let embed_stage = (emb.is_some() || dups.is_some()).then(|| EmbedStage {
        projection,
        embeddings: emb,
        tst_embed,
        dups,
        train_written: p.leakage.as_ref().and_then(|l| l.train_written.clone()),
        dedup_removed,
    });
    let outputs = BuildOutputs {
        ingested: &ingested,
        diagnosis: diagnosed.as_ref().map(|d| &d.diagnosis),
        diagnose_config: diagnosed.as_ref().map(|d| d.config.as_ref()),
        pruned: pruned.as_ref(),
        control: control.as_ref(),
        bclean: bclean_report.as_ref(),
        filter: filter_report.as_ref(),
        metrics: metrics.as_ref(),
        embed: embed_stage.as_ref(),
        variants: &variants,
    };
    let outcome = timed("release (total)", || write_release(p, &outputs, out_dir, lock_file))?;
    drop(kept);
    let diagnosis = diagnosed.map(|d| d.diagnosis);
    Ok(Built { ingested, diagnosis, pruned, embed: embed_stage, outcome })
}

/// `[diagnose]` on the questions the filter kept: the diagnosis the release
/// reports (with the null its verdict reads), and the first iteration of a
/// pruner that diagnoses (with the null when its stop rule reads it).
/// `None` when neither needs it.
fn diagnose<'p>(
    p: &'p Pipeline,
    work: &[Sample],
    emb: Option<&crate::embed::SampleEmbeddings>,
    cached: &steps::Cached<'_>,
) -> Result<DiagnoseStep<'p>> {
    let plan = p.prune.as_ref().map(|plan| &plan.config);
    let pruner = plan.filter(|c| c.method != Method::Bclean);
    if !p.run_diagnose && pruner.is_none() {
        // B-Clean's step 3 fits its blind model with the diagnosis settings:
        // checked against the questions here, with no diagnosis made.
        let step3 = plan.is_some_and(|c| c.method == Method::Bclean && c.bclean_step3);
        let checked = match step3 {
            true => Some(steps::check_diagnose(&p.diagnose, work, &Location::file(&p.path))?),
            false => None,
        };
        return Ok(DiagnoseStep { diagnosed: None, checked });
    }
    let null = p.run_diagnose || pruner.is_some_and(PruneConfig::reads_null);
    let d = steps::diagnose(work, &p.diagnose, &Location::file(&p.path), emb, Some(cached), null)?;
    if p.run_diagnose {
        for w in &d.warnings {
            eprintln!("warning: {}: diagnose: {w}", display_path(&p.path));
        }
    }
    Ok(DiagnoseStep { diagnosed: Some(d), checked: None })
}

/// What the diagnose stage hands on: the diagnosis, when the release reports
/// one or a pruner starts from it; else, when B-Clean's step 3 needs them,
/// the diagnosis settings checked against the questions.
struct DiagnoseStep<'p> {
    diagnosed: Option<steps::Diagnosed<'p>>,
    checked: Option<Cow<'p, DiagnoseConfig>>,
}

/// A release holds its images: names without the files would publish a set
/// that no one can load.
fn refuse_image_names_only(p: &Pipeline) -> Result<()> {
    if !p.ingest.image_names_only {
        return Ok(());
    }
    Err(Error::one(
        Problem::new(Location::file(&p.path), "a release cannot be built from image names only")
            .field("ingest.image-names-only")
            .help(
                "set [ingest] images to the folder that holds the images (and remove image-names-only); \
                 diagnose, prune, variants and metrics run without them",
            ),
    ))
}

/// `samples` without the questions whose ids are in `gone`.
fn without<'a>(samples: Cow<'a, [Sample]>, gone: BTreeSet<&str>) -> Cow<'a, [Sample]> {
    if gone.is_empty() {
        return samples;
    }
    Cow::Owned(samples.iter().filter(|s| !gone.contains(s.id.as_str())).cloned().collect())
}

/// `[filter]`: what blind models answer, removed before pruning (its summary
/// and any unknown ids on stderr).
fn filter(
    p: &Pipeline,
    work: &[Sample],
    imported: Option<&crate::predictions::Imported>,
) -> Result<Option<crate::filter::FilterReport>> {
    let Some(rule) = &p.filter else { return Ok(None) };
    let (m, imported) = p
        .metrics
        .as_ref()
        .zip(imported)
        .ok_or_else(|| Error::Bug("[filter] without [predictions] passed validation".into()))?;
    let r = crate::filter::apply(work, &imported.predictions, rule, &m.config, &Location::file(&p.path))?;
    eprintln!("{}", r.summary());
    if let Some(w) = r.unknown_warning() {
        eprintln!("{w}");
    }
    Ok(Some(r))
}

/// What pruning produced: the run and its control, and B-Clean's report when it pruned.
struct Pruning {
    pruned: Option<Pruned>,
    control: Option<Pruned>,
    bclean: Option<crate::prune::bclean::BCleanReport>,
}

/// `[prune]`: B-Clean, or the prune step (with its control) through the
/// cache, starting from the diagnosis (`diagnosed`, which every pruner but
/// B-Clean has; `checked`: the diagnosis settings B-Clean's step 3 reads
/// when there is no diagnosis).
fn prune(
    p: &Pipeline,
    work: &[Sample],
    imported: Option<&crate::predictions::Imported>,
    diagnosed: Option<&mut steps::Diagnosed<'_>>,
    checked: Option<&DiagnoseConfig>,
    emb: Option<&crate::embed::SampleEmbeddings>,
    cached: &steps::Cached<'_>,
) -> Result<Pruning> {
    let Some(plan) = &p.prune else {
        return Ok(Pruning { pruned: None, control: None, bclean: None });
    };
    // A unit the questions cannot form is refused before anything is removed.
    plan.config.unit.check_rows(work, &Location::file(&p.path))?;
    let (mut pruned, mut control, bclean_report) = match (plan.config.method, diagnosed) {
        (Method::Bclean, diagnosed) => {
            let (m, imported) = p
                .metrics
                .as_ref()
                .zip(imported)
                .ok_or_else(|| Error::Bug("bclean without [predictions] passed validation".into()))?;
            let (pr, report) = bclean(work, &plan.config, &imported.predictions, &m.config, diagnosed, checked)?;
            (pr, None, Some(report))
        }
        (_, Some(d)) => {
            let (first, dcfg) = d.first();
            let runs = steps::prune(work, &plan.config, plan.control, dcfg, emb, Some(cached), Some(first))?;
            (runs.pruned, runs.control, None)
        }
        (_, None) => return Err(Error::Bug("a pruner ran without the diagnosis of its first iteration".into())),
    };
    // The release reads the pruners' own diagnoses as summaries only (the
    // diagnosis it reports keeps its rows), so their rows (a row per question) go.
    for pr in std::iter::once(&mut pruned).chain(control.iter_mut()) {
        for d in [pr.before.as_mut(), pr.after.as_mut()].into_iter().flatten() {
            d.rows = Vec::new();
        }
    }
    Ok(Pruning { pruned: Some(pruned), control, bclean: bclean_report })
}

/// `[variants]`: every kind asked for, made from the kept questions (their
/// warnings on stderr).
fn variants(p: &Pipeline, kept: &[&Sample]) -> Result<Vec<crate::variants::KindRows>> {
    let mut variants = Vec::new();
    if let Some(cfg) = &p.variants {
        timed("variants (generate)", || {
            steps::variants(kept, cfg, |v| {
                for w in &v.warnings {
                    eprintln!("warning: {}: variants: {w}", display_path(&p.path));
                }
                variants.extend(v.kinds);
                Ok(())
            })
        })?;
    }
    Ok(variants)
}

/// B-Clean on the mirage predictions: its report, and the pruning run it makes
/// of it (what it kept and removed, with TsT-RF before and after when the
/// pipeline diagnoses: `diagnosed`, the before).
fn bclean(
    work: &[Sample],
    cfg: &PruneConfig,
    predictions: &[crate::predictions::Prediction],
    metrics: &crate::metrics::MetricsConfig,
    diagnosed: Option<&mut steps::Diagnosed<'_>>,
    checked: Option<&DiagnoseConfig>,
) -> Result<(Pruned, crate::prune::bclean::BCleanReport)> {
    // Step 3's blind model runs with the settings the diagnosis was made with,
    // or, without one, those the diagnose stage checked for it.
    let step3 = match cfg.bclean_step3 {
        false => None,
        true => Some(
            diagnosed
                .as_deref()
                .map(|d| &*d.config)
                .or(checked)
                .ok_or_else(|| Error::Bug("B-Clean's step 3 without checked diagnosis settings".into()))?
                .clone(),
        ),
    };
    let bcfg = crate::prune::bclean::BCleanConfig {
        models: cfg.bclean_models.clone(),
        step3,
        remove_imageless: cfg.bclean_remove_imageless,
        ..Default::default()
    };
    let report = crate::prune::bclean::bclean(work, predictions, metrics, &bcfg)?;
    let pr = match diagnosed {
        Some(d) => {
            let (first, dcfg) = d.first();
            crate::prune::bclean_pruned(work, &report, cfg, Some(dcfg), Some(first))
        }
        None => crate::prune::bclean_pruned(work, &report, cfg, None, None),
    };
    Ok((pr, report))
}

/// Imports the pipeline's prediction files; paths in what is imported are the
/// ones the pipeline wrote, so reports do not depend on where the build runs.
pub fn import_predictions(plan: &MetricsPlan) -> Result<crate::predictions::Imported> {
    use crate::predictions::{Manifest, import_all};
    let mut manifest: Option<Manifest> = None;
    for path in &plan.manifests {
        let m = Manifest::load(path)?;
        match &mut manifest {
            Some(all) => all.merge(m),
            None => manifest = Some(m),
        }
    }
    let mut imported = import_all(&plan.files, manifest.as_ref())?;
    if let Some(w) = imported.several_warning() {
        eprintln!("{w}");
    }
    let written: std::collections::BTreeMap<String, &String> =
        plan.files.iter().zip(&plan.written).map(|(f, w)| (display_path(&f.path), w)).collect();
    for f in &mut imported.files {
        if let Some(w) = written.get(&f.file) {
            f.file = (*w).clone();
        }
    }
    for p in &mut imported.predictions {
        if let Some(w) = written.get(p.loc.file.as_ref()) {
            p.loc.file = w.as_str().into();
        }
    }
    Ok(imported)
}

/// `build --check`: rebuilds every pipeline in a temporary folder, with no
/// cache, and compares it with its lock file (which the settings found).
/// Returns one line per pipeline.
fn check(targets: &[BuildTarget]) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let mut lines = Vec::new();
    for t in targets {
        let p = &t.pipeline;
        let tmp = tempfile::tempdir().map_err(|e| Error::io(Path::new("(temporary folder)"), e))?;
        let lock_file = LockFile::Check(t.lock_path.clone());
        let outcome = run(t, tmp.path(), &StageCache::disabled(), lock_file)?.outcome;
        match outcome.lock {
            LockOutcome::Identical => lines.push(format!(
                "{} {}: rebuilt {} files, identical to {}",
                p.dataset.name,
                p.dataset.version,
                outcome.files.len(),
                display_path(&t.lock_path)
            )),
            LockOutcome::Differs(diff) => problems.push(
                Problem::new(Location::file(&t.lock_path), format!("the rebuild does not match the lock: {diff}"))
                    .help(
                        "if the change is intended, bump [dataset] version and run `blindspot build` to write a new lock",
                    ),
            ),
            LockOutcome::Left | LockOutcome::Written => {
                return Err(Error::Bug("a check wrote or left the lock file".into()));
            }
        }
    }
    if problems.is_empty() { Ok(lines) } else { Err(Error::Invalid(problems)) }
}
