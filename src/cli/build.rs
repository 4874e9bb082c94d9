//! `blindspot build [PIPELINE...]`: validate every pipeline first, then run
//! each (ingest → validation → release) and print a summary per release.

use std::path::{Path, PathBuf};

use crate::error::{Error, Location, Problem, Result, display_path};
use crate::ingest::{Ingested, ingest};
use crate::release::{Written, lock, write_release};
use crate::spec::Pipeline;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Pipeline files (default: pipelines/*.toml).
    pub pipelines: Vec<PathBuf>,
    /// Folder that receives releases/<name>/<version>/. Building into the default
    /// folder also writes each pipeline's lock file (`<name>.lock.json` beside it).
    #[arg(long, default_value = DEFAULT_OUT)]
    pub out_dir: PathBuf,
    /// Rebuild in a temporary folder and compare with each pipeline's lock file;
    /// fail naming the first differing file. Writes nothing.
    #[arg(long)]
    pub check: bool,
    /// Recompute every stage instead of reusing unchanged results from the stage
    /// cache (`.blindspot/cache/`, or BLINDSPOT_CACHE_DIR).
    #[arg(long)]
    pub no_cache: bool,
    /// Print each stage's wall time and the peak RSS so far on stderr.
    #[arg(long)]
    pub timings: bool,
}

const DEFAULT_OUT: &str = "releases";

pub fn run(args: &Args) -> Result<()> {
    // Validate all before touching any data.
    let mut pipelines = Vec::new();
    let mut problems = Vec::new();
    for file in super::pipeline_files(&args.pipelines)? {
        match Pipeline::load(&file) {
            Ok(p) => pipelines.push(p),
            Err(Error::Invalid(ps)) => problems.extend(ps),
            Err(e) => return Err(e),
        }
    }
    // A pipeline that needs the embedding model fails here, before any data is read.
    for p in &pipelines {
        match crate::embed::stage::check_model(p) {
            Ok(_) => {}
            Err(Error::Invalid(ps)) => problems.extend(ps),
            Err(e) => return Err(e),
        }
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(problems));
    }
    pipelines.iter().for_each(super::warn_unanswered);
    if args.timings {
        crate::progress::enable_timings();
    }
    let cache = if args.no_cache {
        crate::cache::StageCache::disabled()
    } else {
        crate::cache::StageCache::new(crate::cache::default_dir())
    };
    if args.check {
        // A check recomputes everything: it must not trust earlier results.
        return check(&pipelines);
    }
    for p in &pipelines {
        let Built { ingested, diagnosis, pruned, embed, outcome } = build_one(p, &args.out_dir, &cache)?;
        if args.out_dir == Path::new(DEFAULT_OUT) {
            write_lock(p, &outcome)?;
        }
        let mut text = summary(p, &ingested, diagnosis.as_ref(), &outcome.dir, &outcome.written);
        if let Some(e) = &embed {
            text.push_str(&embed_summary(e));
        }
        if let Some(pr) = &pruned {
            text.push_str(&format!("\n  {}", super::prune::summary(pr)));
        }
        if !outcome.variants.is_empty() {
            let with_rows: Vec<String> =
                outcome.variants.iter().filter(|v| v.rows > 0).map(|v| format!("{} {}", v.kind, v.rows)).collect();
            let empty = outcome.variants.len() - with_rows.len();
            text.push_str(&format!("\n  variant configs: {}", with_rows.join(", ")));
            if empty > 0 {
                text.push_str(&format!(" ({empty} kinds without rows)"));
            }
        }
        super::say(&text);
    }
    Ok(())
}

/// What one pipeline's stages produced, and where its release went.
struct Built {
    ingested: Ingested,
    embed: Option<crate::embed::stage::EmbedStage>,
    diagnosis: Option<crate::diagnose::Diagnosis>,
    pruned: Option<crate::prune::Pruned>,
    outcome: crate::release::ReleaseOutcome,
}

/// Runs one pipeline's stages (diagnose and prune through the stage cache)
/// and writes its release under `out_dir`.
fn build_one(p: &Pipeline, out_dir: &Path, cache: &crate::cache::StageCache) -> Result<Built> {
    use crate::cache::{StageCache, samples_bytes};
    use crate::embed::stage::{EmbedStage, leakage, load_model};
    use crate::progress::timed;
    use crate::prune::{Method, PruneConfig, prune_with};
    // The model first: a pipeline that needs it and lacks it reads no data.
    let model = load_model(p)?;
    let ingested = timed("ingest", || ingest(&p.ingest))?;
    let settings =
        crate::embed::EmbedSettings { cache_dir: cache.enabled().then(|| crate::cache::default_dir().join("embed")) };
    let emb = match &model {
        Some(m) => Some(crate::embed::embed_samples(&ingested.samples, m, &settings)?),
        None => None,
    };
    let (dups, dedup_removed) = match leakage(p, &ingested.samples, emb.as_ref(), model.as_ref(), &settings)? {
        Some((d, r)) => (Some(d), r),
        None => (None, Vec::new()),
    };
    // `prune-duplicates`: the later stages see the benchmark without the dropped copies.
    let work: std::borrow::Cow<'_, [crate::sample::Sample]> = if dedup_removed.is_empty() {
        std::borrow::Cow::Borrowed(&ingested.samples)
    } else {
        let gone: std::collections::BTreeSet<&str> = dedup_removed.iter().map(|r| r.id.as_str()).collect();
        std::borrow::Cow::Owned(ingested.samples.iter().filter(|s| !gone.contains(s.id.as_str())).cloned().collect())
    };
    let samples = timed("hash samples", || samples_bytes(&work));
    let mut tst = format!("{:?}", p.diagnose);
    if let Some(e) = &emb {
        tst.push_str(&e.model);
    }
    let run = |cfg: &PruneConfig| {
        let key = StageCache::key("prune", &[&samples, tst.as_bytes(), format!("{cfg:?}").as_bytes()]);
        cache.try_get_or("prune", &key, || prune_with(&work, cfg, &p.diagnose, emb.as_ref()))
    };
    let mut bclean_report = None;
    let pruned = match p.prune.as_ref() {
        Some(plan) if plan.config.method == Method::Bclean => {
            let m = p
                .metrics
                .as_ref()
                .ok_or_else(|| Error::Bug("bclean without [predictions] passed validation".into()))?;
            let imported = crate::release::import_predictions(m)?;
            let scored = crate::metrics::score_all(&work, &imported.predictions, &m.config)?;
            let bcfg = crate::prune::bclean::BCleanConfig {
                models: plan.config.bclean_models.clone(),
                step3: plan.config.bclean_step3.then(|| p.diagnose.clone()),
                ..Default::default()
            };
            let report = crate::prune::bclean::bclean(&work, &scored, &bcfg)?;
            let pr = crate::prune::bclean_pruned(&work, &report, &plan.config, p.run_diagnose.then_some(&p.diagnose));
            bclean_report = Some(report);
            Some(pr)
        }
        Some(plan) => Some(timed("prune (diagnose before, IBP iterations, after)", || run(&plan.config))?),
        None => None,
    };
    let control = match p.prune.as_ref().filter(|plan| plan.control) {
        Some(plan) => {
            Some(timed("prune control", || run(&PruneConfig { method: Method::Random, ..plan.config.clone() }))?)
        }
        None => None,
    };
    // Every pruner measures the diagnostic on the whole set first (`before`): reuse it.
    let diagnosis = match pruned.as_ref().and_then(|pr| pr.before.clone()) {
        Some(d) if p.run_diagnose => Some(d),
        _ if p.run_diagnose => {
            let key = StageCache::key("diagnose", &[&samples, tst.as_bytes()]);
            Some(timed("diagnose", || {
                cache.try_get_or("diagnose", &key, || crate::diagnose::diagnose_with(&work, &p.diagnose, emb.as_ref()))
            })?)
        }
        _ => None,
    };
    let tst_embed = match (&emb, p.diagnose.method) {
        (Some(e), crate::diagnose::Method::Both) if p.run_diagnose => Some(
            crate::diagnose::embed_features::tst_embed(
                &work,
                e,
                &p.diagnose,
                &crate::diagnose::embed_features::TstEmbedConfig::default(),
            )?
            .diagnosis,
        ),
        _ => None,
    };
    let embed_stage = (emb.is_some() || dups.is_some()).then(|| EmbedStage {
        embeddings: emb,
        tst_embed,
        dups,
        train_written: p.leakage.as_ref().and_then(|l| l.train_written.clone()),
        dedup_removed,
    });
    let stages = crate::release::Stages {
        ingested: &ingested,
        diagnosis: diagnosis.as_ref(),
        pruned: pruned.as_ref(),
        control: control.as_ref(),
        bclean: bclean_report.as_ref(),
        metrics: None,
        embed: embed_stage.as_ref(),
    };
    let outcome = timed("release (total)", || write_release(p, &stages, out_dir))?;
    drop(work);
    Ok(Built { ingested, diagnosis, pruned, embed: embed_stage, outcome })
}

/// The release's manifest, as JSON.
fn manifest_of(dir: &Path) -> Result<serde_json::Value> {
    let path = dir.join(crate::release::manifest::FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::Bug(format!("{}: {e}", path.display())))
}

/// Writes the pipeline's lock file (only when its content changes).
fn write_lock(p: &Pipeline, outcome: &crate::release::ReleaseOutcome) -> Result<()> {
    let path = lock::path_for(&p.path);
    let text = lock::render(&outcome.files, &manifest_of(&outcome.dir)?)?;
    if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
        return Ok(());
    }
    super::ingest::atomic_write(&path, |tmp| std::fs::write(tmp, &text).map_err(|e| Error::io(tmp, e)))
}

/// `build --check`: rebuild every pipeline in a temporary folder and compare with its lock.
fn check(pipelines: &[Pipeline]) -> Result<()> {
    let mut problems = Vec::new();
    for p in pipelines {
        let lock_path = lock::path_for(&p.path);
        let locked = lock::read(&lock_path)?;
        let tmp = tempfile::tempdir().map_err(|e| Error::io(Path::new("(temporary folder)"), e))?;
        let outcome = build_one(p, tmp.path(), &crate::cache::StageCache::disabled())?.outcome;
        match lock::first_difference(&locked, &manifest_of(&outcome.dir)?, &outcome.files) {
            None => super::say(&format!(
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
    if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
}

fn summary(
    p: &Pipeline,
    ing: &Ingested,
    diagnosis: Option<&crate::diagnose::Diagnosis>,
    dir: &std::path::Path,
    written: &Written,
) -> String {
    let s = &ing.stats;
    let formats: Vec<String> = ing.format_counts().iter().map(|(f, n)| format!("{} {n}", f.as_str())).collect();
    let state = match written {
        Written::Created => "written",
        Written::UpToDate => "up to date",
    };
    let mut out = format!(
        "{} {}: {} samples ({} records read, {} filtered out, {} rejected) -> {} [{state}]\n  formats: {}",
        p.dataset.name,
        p.dataset.version,
        s.kept,
        s.records,
        s.filtered,
        s.rejected,
        display_path(dir),
        formats.join(", ")
    );
    if let Some(d) = diagnosis {
        out.push_str(&format!(
            "\n  blind accuracy ({}): {:.1}% (95% CI {:.1}-{:.1}), chance {:.1}%",
            match p.diagnose.method {
                crate::diagnose::Method::TstRf => "TsT-RF".to_string(),
                crate::diagnose::Method::TstEmbed => "TsT-Embed".to_string(),
                crate::diagnose::Method::Both =>
                    format!("TsT-RF; s(x) the {} with TsT-Embed", p.diagnose.combine.as_str()),
            },
            d.weighted * 100.0,
            d.ci95.0 * 100.0,
            d.ci95.1 * 100.0,
            d.chance * 100.0
        ));
    }
    if s.rejected > 0 {
        out.push_str(&format!("\n  rejected rows and reasons: {}/report/rejected.jsonl", display_path(dir)));
    }
    out
}

/// The embedding stage's lines of the build summary.
fn embed_summary(e: &crate::embed::stage::EmbedStage) -> String {
    let mut out = String::new();
    if let Some(d) = &e.tst_embed {
        out.push_str(&format!(
            "\n  blind accuracy (TsT-Embed): {:.1}% (95% CI {:.1}-{:.1}) over {} questions",
            d.weighted * 100.0,
            d.ci95.0 * 100.0,
            d.ci95.1 * 100.0,
            d.n_samples
        ));
    }
    if let Some(r) = &e.dups {
        let j = r.summary_json();
        out.push_str(&format!("\n  duplicates: {} exact clusters", j["exact"]["clusters"]));
        if r.threshold.is_some() {
            out.push_str(&format!(", {} near clusters at cosine >= {}", j["near"]["clusters"], j["near"]["threshold"]));
        }
        if r.n_train.is_some() {
            out.push_str(&format!(
                "; leakage: {} questions with an exact copy in the training split{}",
                j["train"]["samples_with_exact_copy"],
                if r.threshold.is_some() {
                    format!(", {} with a near copy", j["train"]["samples_with_near_copy"])
                } else {
                    String::new()
                }
            ));
        }
        if !e.dedup_removed.is_empty() {
            out.push_str(&format!("; {} dropped by prune-duplicates", e.dedup_removed.len()));
        }
    }
    out
}
