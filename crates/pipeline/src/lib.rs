//! The one runner of a pipeline: the only module that calls the stages in
//! order and the only one that consults the stage cache.
//!
//! ```text
//! plan (spec) ─▶ ingest ─▶ (embed, leakage) ─▶ prune or B-Clean (+ control)
//!             ─▶ diagnose (reused from the pruner's `before`) ─▶ variants
//!             ─▶ predictions ─▶ metrics ─▶ release (writes what it is handed)
//! ```
//! Each step is a call into its stage with typed inputs; the stages do not
//! know each other's order, and `release` computes nothing.

// The crates below this one, under the module names the code uses.
use blindspot_core::{context, error, io, progress, sample};
use blindspot_diagnose as diagnose;
use blindspot_embed as embed;
use blindspot_ingest as ingest;
use blindspot_metrics as metrics;
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
pub mod summary;
pub mod video_dups;

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::context::RunContext;
use crate::error::{Error, Location, Problem, Result, display_path};
use crate::ingest::{Ingested, ingest};
use crate::progress::timed;
use crate::prune::{Method, PruneConfig, Pruned, prune_with};
use crate::release::{EmbedStage, ReleaseOutcome, Stages, lock, write_release};
use crate::sample::Sample;
use crate::spec::{MetricsPlan, Pipeline};
use cache::{StageCache, config_bytes, samples_digest};

/// What one pipeline's stages produced, and where its release went.
pub struct Built {
    pub ingested: Ingested,
    pub embed: Option<EmbedStage>,
    pub diagnosis: Option<crate::diagnose::Diagnosis>,
    pub pruned: Option<Pruned>,
    pub outcome: ReleaseOutcome,
}

/// Loads and validates every pipeline file before any data is touched: every
/// problem of every file at once, including a missing embedding model.
pub fn load_all(files: &[PathBuf]) -> Result<Vec<Pipeline>> {
    let mut pipelines = Vec::new();
    let mut problems = Vec::new();
    for file in files {
        match Pipeline::load(file) {
            Ok(p) => pipelines.push(p),
            Err(Error::Invalid(ps)) => problems.extend(ps),
            Err(e) => return Err(e),
        }
    }
    // A pipeline that needs the embedding model fails here, before any data is read.
    for p in &pipelines {
        match embedding::check_model(p) {
            Ok(_) => {}
            Err(Error::Invalid(ps)) => problems.extend(ps),
            Err(e) => return Err(e),
        }
    }
    if problems.is_empty() { Ok(pipelines) } else { Err(Error::Invalid(problems)) }
}

/// Runs one pipeline's stages (diagnose and prune through the stage cache)
/// and writes its release under `out_dir`.
pub fn run(p: &Pipeline, out_dir: &Path, cache: &StageCache) -> Result<Built> {
    let ctx = RunContext { code: CODE_FINGERPRINT, ..RunContext::new(p.dataset.seed) };
    // A release holds its images: names without the files would publish a set
    // that no one can load.
    if p.ingest.image_names_only {
        return Err(Error::one(
            Problem::new(Location::file(&p.path), "a release cannot be built from image names only")
                .field("ingest.image-names-only")
                .help(
                    "set [ingest] images to the folder that holds the images (and remove image-names-only); \
                     diagnose, prune, variants and metrics run without them",
                ),
        ));
    }
    // The model first: a pipeline that needs it and lacks it reads no data.
    let model = embedding::load_model(p)?;
    let ingested = timed("ingest", || ingest(&p.ingest))?;
    let settings =
        crate::embed::EmbedSettings { cache_dir: cache.enabled().then(|| cache::default_dir().join("embed")) };
    let emb = match &model {
        Some(m) => Some(crate::embed::embed_samples(&ingested.samples, m, &settings)?),
        None => None,
    };
    let (dups, dedup_removed) = match embedding::leakage(p, &ingested.samples, emb.as_ref(), model.as_ref(), &settings)?
    {
        Some((d, r)) => (Some(d), r),
        None => (None, Vec::new()),
    };
    // `prune-duplicates`: the later stages see the benchmark without the dropped copies.
    let work: Cow<'_, [Sample]> = if dedup_removed.is_empty() {
        Cow::Borrowed(&ingested.samples)
    } else {
        let gone: BTreeSet<&str> = dedup_removed.iter().map(|r| r.id.as_str()).collect();
        Cow::Owned(ingested.samples.iter().filter(|s| !gone.contains(s.id.as_str())).cloned().collect())
    };
    // Predictions are read once: the filter, B-Clean and the metrics use them.
    let imported = p.metrics.as_ref().map(import_predictions).transpose()?;
    // `[filter]`: the later stages see the benchmark without what blind models answer.
    let filter_report = match (&p.filter, &p.metrics, &imported) {
        (Some(rule), Some(m), Some(imported)) => {
            let r = crate::prune::filter::apply(
                &work,
                &imported.predictions,
                rule,
                &m.config,
                &crate::error::Location::file(&p.path),
            )?;
            eprintln!("{}", r.summary());
            if let Some(w) = r.unknown_warning() {
                eprintln!("{w}");
            }
            Some(r)
        }
        (Some(_), _, _) => return Err(Error::Bug("[filter] without [predictions] passed validation".into())),
        _ => None,
    };
    let work: Cow<'_, [Sample]> = match &filter_report {
        Some(r) if !r.removed.is_empty() => {
            let gone = r.removed_ids();
            Cow::Owned(work.iter().filter(|s| !gone.contains(s.id.as_str())).cloned().collect())
        }
        _ => work,
    };
    // Folds the pipeline sets must not outnumber the questions diagnosed.
    if let Some(plan) = &p.prune {
        plan.config.unit.check_rows(&work, &crate::error::Location::file(&p.path))?;
    }
    p.diagnose.check_folds(work.len())?;
    p.diagnose.check_meta_fields(&work, &crate::error::Location::file(&p.path))?;
    p.diagnose.check_fold_groups(&work, &crate::error::Location::file(&p.path))?;
    // `[diagnose] scores`: read and checked against the questions diagnosed, once.
    let loaded;
    let diagnose_cfg = match &p.diagnose.outside_source {
        Some(_) => {
            let mut c = p.diagnose.clone();
            c.load_outside(&work)?;
            loaded = c;
            &loaded
        }
        None => &p.diagnose,
    };

    let samples = timed("hash samples", || samples_digest(&work))?;
    // Stage keys from the settings' canonical JSON (every field, named).
    let mut tst = config_bytes(diagnose_cfg)?;
    if let Some(e) = &emb {
        tst.extend_from_slice(e.model.as_bytes());
    }
    let run_prune = |cfg: &PruneConfig| {
        let key = StageCache::key(&ctx, "prune", &[&samples, &tst, &config_bytes(cfg)?]);
        cache.try_get_or(
            "prune",
            &key,
            |pr: &Pruned| pr.check_partition(&work),
            || prune_with(&work, cfg, diagnose_cfg, emb.as_ref()),
        )
    };
    let mut bclean_report = None;
    let mut pruned = match p.prune.as_ref() {
        Some(plan) if plan.config.method == Method::Bclean => {
            let (m, imported) = p
                .metrics
                .as_ref()
                .zip(imported.as_ref())
                .ok_or_else(|| Error::Bug("bclean without [predictions] passed validation".into()))?;
            let bcfg = crate::prune::bclean::BCleanConfig {
                models: plan.config.bclean_models.clone(),
                step3: plan.config.bclean_step3.then(|| diagnose_cfg.clone()),
                remove_imageless: plan.config.bclean_remove_imageless,
                ..Default::default()
            };
            let report = crate::prune::bclean::bclean(&work, &imported.predictions, &m.config, &bcfg)?;
            let pr = crate::prune::bclean_pruned(&work, &report, &plan.config, p.run_diagnose.then_some(diagnose_cfg));
            bclean_report = Some(report);
            Some(pr)
        }
        Some(plan) => Some(timed("prune (diagnose before, IBP iterations, after)", || run_prune(&plan.config))?),
        None => None,
    };
    // The control removes at random exactly what the pruner removed, key by key.
    let mut control = match (p.prune.as_ref().filter(|plan| plan.control), &pruned) {
        (Some(_), Some(pr)) => Some(timed("prune control", || run_prune(&pr.matched_control()))?),
        _ => None,
    };
    // Every pruner measures the diagnostic on the whole set first (`before`): reuse it,
    // its per-question rows moved, not copied. The release reads the pruners' own
    // diagnoses as summaries only, so their rows (a row per question) go here.
    let before = pruned.as_mut().and_then(|pr| pr.before.as_mut().map(take_rows));
    for pr in pruned.iter_mut().chain(control.iter_mut()) {
        for d in [pr.before.as_mut(), pr.after.as_mut()].into_iter().flatten() {
            d.rows = Vec::new();
        }
    }
    let diagnosis = match before {
        Some(d) if p.run_diagnose => Some(d),
        _ if p.run_diagnose => {
            let key = StageCache::key(&ctx, "diagnose", &[&samples, &tst]);
            Some(timed("diagnose", || {
                cache.try_get_or(
                    "diagnose",
                    &key,
                    |d: &crate::diagnose::Diagnosis| d.check_samples(&work),
                    || {
                        let mut d = crate::diagnose::diagnose_with(&work, diagnose_cfg, emb.as_ref())?;
                        measure_null(&work, diagnose_cfg, &mut d);
                        Ok(d)
                    },
                )
            })?)
        }
        _ => None,
    };
    // The verdict reads the label-permutation null: a pruner that did not measure it
    // (another stop rule, B-Clean) leaves it to be measured here.
    let diagnosis = diagnosis.map(|mut d| {
        if d.null.is_none() {
            timed("null (label permutations)", || measure_null(&work, diagnose_cfg, &mut d));
        }
        d
    });
    // Meta fields that carry the answer are named, used as features or not.
    let diagnosis = match diagnosis {
        Some(mut d) => {
            for w in crate::diagnose::audit::attach(&mut d, &work, diagnose_cfg) {
                eprintln!("warning: {}: diagnose: {w}", display_path(&p.path));
            }
            Some(d)
        }
        None => None,
    };
    // With `method = "both"` the diagnosis carries TsT-Embed's own, reported beside it.
    let tst_embed = diagnosis.as_ref().and_then(|d| d.tst_embed.as_deref().cloned());
    drop(work);
    let embed_stage = (emb.is_some() || dups.is_some()).then(|| EmbedStage {
        embeddings: emb,
        tst_embed,
        dups,
        train_written: p.leakage.as_ref().and_then(|l| l.train_written.clone()),
        dedup_removed,
    });
    let stages = Stages {
        ingested: &ingested,
        diagnosis: diagnosis.as_ref(),
        pruned: pruned.as_ref(),
        control: control.as_ref(),
        bclean: bclean_report.as_ref(),
        filter: filter_report.as_ref(),
        metrics: None,
        embed: embed_stage.as_ref(),
        variants: &[],
    };
    // Variants stress the set being published: the kept questions.
    let kept = stages.kept_samples();
    let variants = timed("variants (generate)", || variants(p, &kept, ctx.seed))?;
    let metrics = match (&p.metrics, &imported) {
        (Some(plan), Some(imported)) => {
            let kept_ids: std::collections::HashSet<&str> = kept.iter().map(|s| s.id.as_str()).collect();
            // Predictions scored against every question: removed ones are measured, never dropped.
            let lenient = crate::metrics::MetricsConfig { strict: false, ..plan.config.clone() };
            let scored_full = crate::metrics::score_all(&ingested.samples, &imported.predictions, &lenient)?;
            let mut m =
                timed("metrics", || metrics(plan, imported, kept.iter().map(|s| (*s).clone()).collect(), &variants))?;
            m.by_set = crate::metrics::by_set(&ingested.samples, &scored_full, &plan.config, &kept_ids);
            let control_kept: Option<std::collections::HashSet<&str>> =
                stages.control.map(|c| c.kept.iter().map(String::as_str).collect());
            let sets = crate::metrics::evidence::Sets { kept: &kept_ids, control_kept: control_kept.as_ref() };
            let removes = stages.removes();
            m.gap =
                removes.then(|| crate::metrics::evidence::gap(&ingested.samples, &scored_full, &sets, &plan.config));
            m.label_audit =
                crate::metrics::evidence::label_audit(&ingested.samples, &scored_full, &kept_ids, m.audit_rule);
            Some(m)
        }
        _ => None,
    };
    let stages = Stages { metrics: metrics.as_ref(), variants: &variants, ..stages };
    let outcome = timed("release (total)", || write_release(p, &stages, out_dir))?;
    Ok(Built { ingested, diagnosis, pruned, embed: embed_stage, outcome })
}

/// Measures the label-permutation null of `d`, the diagnosis of `samples`, into it.
fn measure_null(samples: &[Sample], cfg: &crate::diagnose::DiagnoseConfig, d: &mut crate::diagnose::Diagnosis) {
    let refs: Vec<&Sample> = samples.iter().collect();
    d.null = Some(crate::diagnose::null::measure(&refs, cfg, d, &cfg.null));
}

/// A copy of `d` that takes its per-question rows, leaving `d` a summary.
fn take_rows(d: &mut crate::diagnose::Diagnosis) -> crate::diagnose::Diagnosis {
    let rows = std::mem::take(&mut d.rows);
    crate::diagnose::Diagnosis { rows, ..d.clone() }
}

/// Generates each variant kind the pipeline asks for, one kind at a time.
fn variants(p: &Pipeline, kept: &[&Sample], seed: u64) -> Result<Vec<crate::variants::KindRows>> {
    use crate::variants::{KindSel, VariantsConfig, expand_kinds, generate_from};
    let Some(cfg) = &p.variants else { return Ok(Vec::new()) };
    let seed = cfg.seed.unwrap_or(seed);
    let mut generated = Vec::new();
    for kind in expand_kinds(&cfg.kinds, kept.iter().copied()) {
        let one = VariantsConfig { kinds: vec![KindSel::One(kind)], ..cfg.clone() };
        let v = generate_from(kept, &one, seed)?;
        for w in &v.warnings {
            eprintln!("warning: {}: variants: {w}", display_path(&p.path));
        }
        generated.extend(v.kinds);
    }
    Ok(generated)
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

/// Scores the imported predictions against the kept questions and the
/// variant rows (`report/metrics.json`).
fn metrics(
    plan: &MetricsPlan,
    imported: &crate::predictions::Imported,
    kept: Vec<Sample>,
    variants: &[crate::variants::KindRows],
) -> Result<crate::release::MetricsOut> {
    let mut rows = kept;
    for k in variants {
        rows.extend(k.rows.iter().map(|r| {
            // Scoring needs the text and gold, not the image bytes.
            let mut r = r.clone();
            r.images.iter_mut().for_each(|i| i.bytes = None);
            r
        }));
    }
    rows.sort_by(|a, b| crate::sample::id_cmp(&a.id, &b.id));
    let report = crate::metrics::metrics(&rows, imported, &plan.config)?;
    Ok(crate::release::MetricsOut {
        file: report.file(imported),
        by_set: Vec::new(),
        gap: None,
        label_audit: Vec::new(),
        audit_rule: plan.audit,
        per_question: report.per_question_batch(&rows)?,
    })
}

/// Writes the pipeline's lock file (only when its content changes).
pub fn write_lock(p: &Pipeline, outcome: &ReleaseOutcome) -> Result<()> {
    let path = lock::path_for(&p.path);
    let text = lock::render(&outcome.files, &lock::manifest_of(&outcome.dir)?)?;
    if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
        return Ok(());
    }
    crate::io::fs::atomic_write(&path, |tmp| std::fs::write(tmp, &text).map_err(|e| Error::io(tmp, e)))
}

/// `build --check`: rebuilds every pipeline in a temporary folder, with no
/// cache, and compares it with its lock file. Returns one line per pipeline.
pub fn check(pipelines: &[Pipeline]) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let mut lines = Vec::new();
    for p in pipelines {
        let lock_path = lock::path_for(&p.path);
        let locked = lock::read(&lock_path)?;
        let tmp = tempfile::tempdir().map_err(|e| Error::io(Path::new("(temporary folder)"), e))?;
        let outcome = run(p, tmp.path(), &StageCache::disabled())?.outcome;
        match lock::first_difference(&locked, &lock::manifest_of(&outcome.dir)?, &outcome.files) {
            None => lines.push(format!(
                "{} {}: rebuilt {} files, identical to {}",
                p.dataset.name,
                p.dataset.version,
                outcome.files.len(),
                display_path(&lock_path)
            )),
            Some(diff) => problems.push(
                Problem::new(Location::file(&lock_path), format!("the rebuild does not match the lock: {diff}")).help(
                    "if the change is intended, bump [dataset] version and run `blindspot build` to write a new lock",
                ),
            ),
        }
    }
    if problems.is_empty() { Ok(lines) } else { Err(Error::Invalid(problems)) }
}
