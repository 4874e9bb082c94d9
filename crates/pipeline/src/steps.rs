//! One step per stage: each takes its resolved settings and its inputs and
//! returns a typed output. [`crate::run`] chains them for `build`, and each
//! subcommand (`blindspot diagnose`, `prune`, `variants`) calls the same step,
//! so a stage runs one way whoever asks for it.

use std::borrow::Cow;

use crate::cache::StageCache;
use crate::context::RunContext;
use crate::diagnose::{DiagnoseConfig, Diagnosis, GroupCache};
use crate::embed::SampleEmbeddings;
use crate::error::{Location, Result};
use crate::progress::timed;
use crate::prune::{First, PruneConfig, Pruned, prune_with};
use crate::sample::Sample;
use crate::variants::{KindSel, Variants, VariantsConfig, expand_kinds, generate_from};

/// The stage cache and the key of the questions a step runs on. `build`
/// reuses unchanged results through it; the subcommands run without it.
pub struct Cached<'a> {
    pub cache: &'a StageCache,
    pub ctx: &'a RunContext,
    /// [`crate::cache::samples_digest`] of the questions the steps run on.
    pub samples: [u8; 32],
}

impl Cached<'_> {
    /// `compute`'s result for `stage` (keyed by the questions, the diagnosis
    /// settings `dcfg` with the embedding model `emb` was made with, and
    /// `extra`), from the cache when `check` accepts what it holds.
    fn get_or<T: serde::Serialize + serde::de::DeserializeOwned>(
        &self,
        stage: &str,
        dcfg: &DiagnoseConfig,
        emb: Option<&SampleEmbeddings>,
        extra: &[&[u8]],
        check: impl FnOnce(&T) -> std::result::Result<(), String>,
        compute: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let mut tst = crate::cache::config_bytes(dcfg)?;
        if let Some(e) = emb {
            tst.extend_from_slice(e.model.as_bytes());
        }
        let mut parts: Vec<&[u8]> = vec![&self.samples, &tst];
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

/// The sentence-embedding model `plan` names, loaded (spec found its folder
/// and checked that it holds the model's files).
pub fn load_model(plan: &crate::spec::plan::ModelPlan) -> Result<crate::embed::minilm::MiniLm> {
    crate::embed::minilm::MiniLm::load(&plan.dir, plan.max_length)
}

/// What the diagnose step produced.
pub struct Diagnosed<'c> {
    /// The diagnosis, with the meta fields that carry the answer named, and
    /// its label-permutation null when it was asked for.
    pub diagnosis: Diagnosis,
    /// The meta-field audit's warnings, for the caller to print.
    pub warnings: Vec<String>,
    /// The settings as checked against the questions, outside scores loaded:
    /// what a pruner re-diagnoses with and what the report states.
    pub config: Cow<'c, DiagnoseConfig>,
    /// TsT-RF's groups as fit here (none when the diagnosis was read from the
    /// stage cache): a pruner's second iteration reuses those its first batch
    /// left unchanged.
    pub groups: GroupCache,
}

impl Diagnosed<'_> {
    /// The diagnosis as a pruner's first iteration ([`crate::prune::First`];
    /// the groups it fit move with it), and the settings it was made with.
    pub fn first(&mut self) -> (crate::prune::First<'_>, &DiagnoseConfig) {
        let groups = std::mem::take(&mut self.groups);
        (crate::prune::First { diagnosis: &self.diagnosis, groups }, &self.config)
    }
}

/// The diagnose step: `cfg` checked against `samples` ([`check_diagnose`]:
/// `at` is where its meta fields were named), then TsT-RF (or TsT-Embed, or
/// both) on them, the label-permutation null its verdict reads (when `null`),
/// and the audit of meta fields that carry the answer.
pub fn diagnose<'c>(
    samples: &[Sample],
    cfg: &'c DiagnoseConfig,
    at: &Location,
    emb: Option<&SampleEmbeddings>,
    cached: Option<&Cached<'_>>,
    null: bool,
) -> Result<Diagnosed<'c>> {
    diagnose_checked(samples, check_diagnose(cfg, samples, at)?, emb, cached, null)
}

/// [`diagnose`] with settings that [`check_diagnose`] checked against `samples`.
fn diagnose_checked<'c>(
    samples: &[Sample],
    config: Cow<'c, DiagnoseConfig>,
    emb: Option<&SampleEmbeddings>,
    cached: Option<&Cached<'_>>,
    null: bool,
) -> Result<Diagnosed<'c>> {
    let mut groups = GroupCache::default();
    let compute = || {
        let mut d = crate::diagnose::diagnose_keeping(samples, &config, emb, &mut groups)?;
        if null {
            measure_null(samples, &config, &mut d);
        }
        Ok(d)
    };
    let mut d = match cached {
        Some(c) => timed("diagnose", || {
            c.get_or("diagnose", &config, emb, &[&[u8::from(null)]], |d: &Diagnosis| d.check_samples(samples), compute)
        })?,
        None => timed("diagnose", compute)?,
    };
    // Meta fields that carry the answer are named, used as features or not.
    let warnings = crate::diagnose::audit::attach(&mut d, samples, &config);
    Ok(Diagnosed { diagnosis: d, warnings, config, groups })
}

/// The diagnosis's report files by hand (`blindspot diagnose`): nothing
/// pruned, so nothing marked removed.
pub fn diagnose_report(d: &Diagnosed<'_>) -> Result<Vec<crate::io::rendered::Rendered>> {
    let Diagnosed { diagnosis, config, .. } = d;
    crate::release::diagnosis_report::render(diagnosis, config, diagnosis.tst_embed.as_deref(), None)
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
}

/// The prune step (IBP, AFLite or the random control): `cfg` on `samples`,
/// then, with `control`, the control that removes at random exactly what the
/// pruner removed, key by key. `dcfg` are the diagnosis settings checked
/// against `samples`; `first`, the diagnosis of `samples` made with them
/// (the diagnose step's), is both runs' first iteration.
pub fn prune(
    samples: &[Sample],
    cfg: &PruneConfig,
    control: bool,
    dcfg: &DiagnoseConfig,
    emb: Option<&SampleEmbeddings>,
    cached: Option<&Cached<'_>>,
    first: Option<First<'_>>,
) -> Result<PruneRuns> {
    let run = |cfg: &PruneConfig, first: Option<First<'_>>| match cached {
        Some(c) => c.get_or(
            "prune",
            dcfg,
            emb,
            &[&crate::cache::config_bytes(cfg)?],
            |pr: &Pruned| pr.check_partition(samples),
            || prune_with(samples, cfg, dcfg, emb, first),
        ),
        None => prune_with(samples, cfg, dcfg, emb, first),
    };
    // The control starts from the same diagnosis (the groups fit for it copied).
    let control_first =
        first.as_ref().filter(|_| control).map(|f| First { diagnosis: f.diagnosis, groups: f.groups.clone() });
    let pruned = timed("prune (IBP iterations, after)", || run(cfg, first))?;
    let control = match control {
        true => Some(timed("prune control", || run(&pruned.matched_control(), control_first))?),
        false => None,
    };
    Ok(PruneRuns { pruned, control })
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

impl Measured {
    /// Writes what was measured into the folder `dir`, replaced whole:
    /// `metrics.json`, `per_question.parquet` (one row per prediction of
    /// `rows`), `label_audit.csv`, and `bclean.json` and `gap.json` when they
    /// were measured.
    pub fn write(&self, dir: &std::path::Path, rows: &[Sample], imported: &crate::predictions::Imported) -> Result<()> {
        let file = self.report.file(imported);
        let per_question = self.report.per_question_batch(rows)?;
        crate::io::fs::atomic_dir(dir, |tmp| {
            crate::io::fs::write_json(&tmp.join("metrics.json"), &file)?;
            crate::io::parquet::write_batch(&tmp.join("per_question.parquet"), &per_question)?;
            crate::io::fs::write_bytes(
                &tmp.join("label_audit.csv"),
                crate::metrics::evidence::audit_csv(&self.audit).as_bytes(),
            )?;
            if let Some(b) = &self.bclean {
                crate::io::fs::write_json(&tmp.join("bclean.json"), &b.file())?;
            }
            if let Some(g) = &self.gap {
                crate::io::fs::write_json(&tmp.join("gap.json"), g)?;
            }
            Ok(())
        })
    }
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

/// The ingest step by hand (`blindspot ingest`): `plan` into canonical
/// Parquet at `out`, and the rows rejected (`on-invalid = "skip"`), when
/// there are any, as JSON lines at `rejected`; each file written whole or not
/// at all.
pub fn ingest_to_file(
    plan: &crate::spec::IngestPlan,
    out: &std::path::Path,
    rejected: &std::path::Path,
    embed: crate::sample::Embed,
) -> Result<crate::ingest::Summary> {
    use crate::error::Error;
    use crate::io::fs::{atomic_write, write_bytes};
    let mut summary = None;
    atomic_write(out, |tmp| {
        summary = Some(crate::ingest::ingest_to_parquet(plan, tmp, embed)?);
        Ok(())
    })?;
    let ingested = summary.ok_or_else(|| Error::Bug("ingest wrote no summary".into()))?;
    if !ingested.rejected.is_empty() {
        let mut text = String::new();
        for r in &ingested.rejected {
            text.push_str(&serde_json::to_string(r).map_err(|e| Error::Bug(e.to_string()))?);
            text.push('\n');
        }
        atomic_write(rejected, |tmp| write_bytes(tmp, text.as_bytes()))?;
    }
    Ok(ingested)
}

/// What the dups step compares.
pub struct DupsInputs<'a> {
    /// The benchmark, as it is read.
    pub test: &'a crate::spec::IngestPlan,
    /// A training split, when one is given.
    pub train: Option<&'a crate::spec::IngestPlan>,
    /// A published list of image hashes, when one is given.
    pub listed: Option<&'a crate::embed::image_dups::HashList>,
    /// The sentence-embedding model; without one, exact duplicates only.
    pub model: Option<&'a dyn crate::embed::Embedder>,
    pub embed: &'a crate::embed::EmbedSettings,
    /// Cosine similarity at or above which two questions are near-duplicates.
    pub threshold: f64,
    /// phash distance (bits) at or below which two images are near-duplicates.
    pub image_threshold: u32,
}

/// The dups step: exact duplicate questions, near-duplicate ones (cosine of
/// the question-with-options embeddings, when a model is given) within the
/// benchmark and against the training split, near-duplicate images (phash)
/// within it, against the training split's and against the listed hashes,
/// and near-duplicate videos (sampled frames) when the questions carry any.
pub fn dups(inputs: &DupsInputs<'_>) -> Result<crate::embed::dups::DupsReport> {
    use crate::embed::{embed_texts, question_with_options};
    let test = crate::ingest::ingest(inputs.test)?.samples;
    let train = inputs.train.map(|t| crate::ingest::ingest(t).map(|i| i.samples)).transpose()?;
    let embed = |samples: &[Sample], m: &dyn crate::embed::Embedder, bar: &'static str| {
        let texts: Vec<String> = samples.iter().map(question_with_options).collect();
        embed_texts(m, &texts.iter().map(String::as_str).collect::<Vec<_>>(), inputs.embed, bar)
    };
    let (test_e, train_e) = match inputs.model {
        Some(m) => {
            let te = embed(&test, m, "embed")?;
            let tr = train.as_deref().map(|tr| embed(tr, m, "embed train")).transpose()?;
            (Some(te), tr)
        }
        None => (None, None),
    };
    let near = match (inputs.model, &test_e) {
        (Some(m), Some(te)) => Some(crate::embed::dups::NearInput {
            test: te,
            train: train_e.as_ref(),
            threshold: inputs.threshold,
            model: m.fingerprint().into(),
        }),
        _ => None,
    };
    let mut report = crate::embed::dups::find(&test, train.as_deref(), near)?;
    report.images =
        Some(crate::embed::image_dups::find(&test, train.as_deref(), inputs.listed, inputs.image_threshold));
    report.videos = crate::video_dups::find(&test);
    Ok(report)
}

/// The leakage check of the diagnose step (`blindspot diagnose
/// --check-leakage`): the folds are refit with the held-out answers changed,
/// and any feature column or held-out prediction that moves is a leak, each
/// one a problem located at `at` (the benchmark read).
pub fn check_leakage(samples: &[Sample], cfg: &DiagnoseConfig, at: &Location) -> Result<()> {
    let leaks = crate::diagnose::check_leakage(samples, cfg);
    if leaks.is_empty() {
        return Ok(());
    }
    Err(crate::error::Error::Invalid(
        leaks
            .iter()
            .map(|l| {
                crate::error::Problem::new(at.clone(), format!("leak: {l} when only the held-out answers changed"))
                    .help("a feature reads the answer: drop the meta field or recipe it comes from (meta-features, recipes), or report a bug if it is a built-in feature")
            })
            .collect(),
    ))
}

/// Each fold's feature matrices of the diagnosis of `samples`, as Parquet
/// into the folder `dir` (replaced whole).
pub fn export_features(samples: &[Sample], cfg: &DiagnoseConfig, dir: &std::path::Path) -> Result<()> {
    crate::io::fs::atomic_dir(dir, |tmp| crate::diagnose::report::export_features(tmp, samples, cfg).map(|_| ()))
}

/// What [`export_folds`] wrote.
pub struct FoldsExported {
    /// Questions assigned to a fold.
    pub questions: usize,
    /// Folds written.
    pub folds: usize,
    /// The assignment's hash, which an outside scorer's file must carry.
    pub hash: String,
}

/// The fold assignment of the diagnosis of `samples` and each fold's training
/// and held-out questions with their prompts, as JSON lines into the folder
/// `dir` (replaced whole), for an outside scorer.
pub fn export_folds(samples: &[Sample], cfg: &DiagnoseConfig, dir: &std::path::Path) -> Result<FoldsExported> {
    let a = crate::diagnose::outside::Assignment::of(samples, cfg);
    let mut folds = 0;
    crate::io::fs::atomic_dir(dir, |tmp| {
        folds = crate::diagnose::outside::write_folds(tmp, &a, cfg, &crate::variants::render_prompt)?;
        Ok(())
    })?;
    Ok(FoldsExported { questions: a.rows.len(), folds, hash: a.hash.clone() })
}

/// What the blind-model filter step decided (`blindspot filter`).
pub struct Filtered {
    pub report: crate::filter::FilterReport,
    /// The ids of the questions the rule keeps, in the rows' order.
    pub kept: Vec<String>,
}

/// The blind-model filter step: the questions among `rows` (variant rows
/// aside) that the rule of `settings` says models answer without the image,
/// removed; the rest kept.
pub fn filter(
    rows: Vec<Sample>,
    imported: &crate::predictions::Imported,
    settings: &crate::spec::plan::FilterSettings,
) -> Result<Filtered> {
    let questions: Vec<Sample> = rows.into_iter().filter(|r| r.variant.is_none()).collect();
    let report = crate::filter::apply(
        &questions,
        &imported.predictions,
        &settings.rule,
        &settings.config,
        &Location::file("command line"),
    )?;
    let gone = report.removed_ids();
    let kept = questions.iter().filter(|s| !gone.contains(s.id.as_str())).map(|s| s.id.clone()).collect();
    Ok(Filtered { report, kept })
}

impl Filtered {
    /// Writes `filter.json` and `kept_ids.txt` (one id a line) into the folder
    /// `dir`, replaced whole.
    pub fn write(&self, dir: &std::path::Path) -> Result<()> {
        let mut kept = String::new();
        for id in &self.kept {
            kept.push_str(id);
            kept.push('\n');
        }
        crate::io::fs::atomic_dir(dir, |tmp| {
            crate::io::fs::write_json(&tmp.join("filter.json"), &self.report)?;
            crate::io::fs::write_bytes(&tmp.join("kept_ids.txt"), kept.as_bytes())
        })
    }
}

/// What [`variants_to_dir`] wrote.
pub struct VariantsWritten {
    /// The questions the variants were made from.
    pub questions: usize,
    /// The kinds asked for, expanded (`all`, the families).
    pub kinds_asked: usize,
    /// Each kind's name and counts, in kind order (as `summary.json` lists them).
    pub kinds: Vec<(String, crate::variants::KindSummary)>,
    /// Every kind's warnings, in the kinds' order.
    pub warnings: Vec<String>,
}

/// The variants step by hand (`blindspot variants`): each kind made from the
/// benchmark `plan` reads into `<kind>.parquet` in the folder `dir` (replaced
/// whole), with `summary.json` (questions, seed, rows and skips by reason per
/// kind, warnings).
pub fn variants_to_dir(
    plan: &crate::spec::IngestPlan,
    cfg: &VariantsConfig,
    dir: &std::path::Path,
    embed: crate::sample::Embed,
) -> Result<VariantsWritten> {
    let samples = &crate::ingest::ingest(plan)?.samples;
    let mut kinds = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    crate::io::fs::atomic_dir(dir, |tmp| {
        let kept: Vec<&Sample> = samples.iter().collect();
        variants(&kept, cfg, |v| {
            warnings.extend(v.warnings.iter().cloned());
            for k in &v.kinds {
                crate::io::parquet::write_samples(&tmp.join(format!("{}.parquet", k.kind.name())), &k.rows, embed)?;
            }
            kinds.extend(v.summary());
            Ok(())
        })?;
        let doc = VariantsSummary { samples: samples.len(), seed: cfg.seed, kinds: &kinds, warnings: &warnings };
        crate::io::fs::write_json(&tmp.join("summary.json"), &doc)
    })?;
    let kinds_asked = expand_kinds(&cfg.kinds, samples).len();
    Ok(VariantsWritten { questions: samples.len(), kinds_asked, kinds, warnings })
}

/// `summary.json` of `blindspot variants`: the questions, the seed, each
/// kind's counts (in kind order) and the warnings.
#[derive(serde::Serialize)]
struct VariantsSummary<'a> {
    samples: usize,
    seed: u64,
    #[serde(serialize_with = "in_order")]
    kinds: &'a [(String, crate::variants::KindSummary)],
    warnings: &'a [String],
}

/// `pairs` as a JSON object, keys in their order.
fn in_order<S: serde::Serializer, V: serde::Serialize>(
    pairs: &&[(String, V)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// Whether the folds of the pipeline file at `path` (as `blindspot init`
/// proposed it) can group by image: every diagnosed group needs at least as
/// many distinct images as folds. The pipeline is read and its questions
/// checked by the rule diagnose applies; `Some(why)` when they fail it, with
/// diagnose's own reasons.
pub fn init_group_by(path: &std::path::Path) -> Result<Option<String>> {
    let p = crate::spec::Pipeline::load(path)?;
    // A proposal with a field left to the user may not ingest yet: that is for the
    // user to settle first, not a failure of init.
    let ingested = match crate::ingest::ingest(&p.ingest) {
        Ok(ingested) => ingested,
        Err(crate::error::Error::Invalid(ps)) => {
            let first = ps.first().map(|p| p.to_string()).unwrap_or_default();
            let first = first.lines().next().unwrap_or_default();
            return Ok(Some(format!(
                "not checked, the questions do not ingest as proposed yet ({} problem(s), the first: {first}); map \
                 what is left commented, then set group-by = \"image\" if every question type has an image per fold",
                ps.len()
            )));
        }
        Err(other) => return Err(other),
    };
    match p.diagnose.check_fold_groups(&ingested.samples, &Location::file(path)) {
        Ok(()) => Ok(None),
        // Each message starts with the setting ("group-by = \"image\": ..."), which the file says already.
        Err(crate::error::Error::Invalid(ps)) => Ok(Some(
            ps.iter()
                .map(|p| p.message.split_once(": ").map_or(p.message.as_str(), |m| m.1))
                .collect::<Vec<_>>()
                .join("; "),
        )),
        Err(other) => Err(other),
    }
}

/// The harnesses `blindspot export` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Harness {
    /// A task folder for `lmms_eval --include_path`.
    LmmsEval,
    /// `<Name>_<variant>.tsv` files for VLMEvalKit's data root.
    Vlmevalkit,
}

/// The configs of a variants or release folder `dir`, as the export step
/// takes them: every CircularEval rotation one `circular` config, whatever
/// folder it came from, and a release's videos carried as files under
/// `videos/` loaded.
pub fn export_configs(dir: &std::path::Path) -> Result<Vec<crate::io::release_dir::Config>> {
    let mut configs = crate::export::merge_rotations(crate::io::release_dir::read_configs(dir)?)?;
    crate::export::load_carried_videos(&mut configs, dir)?;
    Ok(configs)
}

/// What the export step wrote.
pub struct Exported {
    /// The name in every file and task name.
    pub name: String,
    /// The export's manifest (harness rows → blindspot ids, and what was written).
    pub manifest: crate::predictions::export_manifest::ExportManifest,
}

/// The export step: `configs` (from [`export_configs`] of `dir`) into the
/// folder `out` (replaced whole) for harness `to`, under `name` (default:
/// the rows' benchmark). lmms-eval reads images only from the data: rows
/// whose images are named by path alone are an error, or with
/// `allow_missing_images` exported text-only and counted through `warn`.
pub fn export(
    configs: &mut [crate::io::release_dir::Config],
    dir: &std::path::Path,
    out: &std::path::Path,
    to: Harness,
    name: Option<&str>,
    allow_missing_images: bool,
    mut warn: impl FnMut(String),
) -> Result<Exported> {
    use crate::error::{Error, Problem};
    if to == Harness::LmmsEval {
        let missing = crate::export::images_without_bytes(configs);
        if !missing.is_empty() && !allow_missing_images {
            let first: Vec<String> = missing.iter().take(10).map(|(c, id, p)| format!("{c}: \"{id}\" → {p}")).collect();
            return Err(Error::one(
                Problem::new(
                    Location::file(dir),
                    format!(
                        "{} image(s) are named by path but not stored in the data, so lmms-eval could not read them (first: {})",
                        missing.len(),
                        first.join("; ")
                    ),
                )
                .help("build the release with [release] embed-images = true (or make variants from a pipeline whose images are found), or pass --allow-missing-images to export those rows text-only"),
            ));
        }
        let dropped = crate::export::drop_images_without_bytes(configs);
        if dropped > 0 {
            warn(format!("warning: export: {dropped} row(s) exported without their images (--allow-missing-images)"));
        }
    }
    let exported = crate::export::export_name(configs, name);
    // The name is in every file and task name the export writes.
    let limit = crate::spec::bounds::NAME_LENGTH;
    if exported.chars().count() > limit {
        let (loc, what, help) = match name {
            Some(_) => ("command line", "--name", format!("give a --name of at most {limit} characters")),
            None => ("", "the rows' benchmark name", format!("give --name, at most {limit} characters")),
        };
        let loc = if loc.is_empty() { dir } else { std::path::Path::new(loc) };
        return Err(Error::one(
            Problem::new(
                Location::file(loc),
                format!(
                    "{what} has {} characters, more than the {limit} a file name may take",
                    exported.chars().count()
                ),
            )
            .help(help),
        ));
    }
    let mut manifest = None;
    crate::io::fs::atomic_dir(out, |tmp| {
        manifest = Some(match to {
            Harness::Vlmevalkit => crate::export::vlmevalkit::export(configs, &exported, tmp)?,
            Harness::LmmsEval => crate::export::lmms_eval::export(configs, &exported, tmp)?,
        });
        Ok(())
    })?;
    let manifest = manifest.ok_or_else(|| Error::Bug("the export wrote no manifest".into()))?;
    Ok(Exported { name: exported, manifest })
}

/// The prune step by hand (`blindspot prune`): the model loaded when the
/// settings use embeddings (before any data is read), the benchmark
/// ingested, the questions checked against the settings (the pruning unit's
/// rows, the diagnosis's folds, meta fields and outside scores), embedded,
/// then pruned (with the matched control when asked for).
pub fn prune_by_hand(settings: &crate::spec::plan::PruneSettings) -> Result<PrunedByHand> {
    let model = settings.model.as_ref().map(load_model).transpose()?;
    let samples = crate::ingest::ingest(&settings.input.ingest)?.samples;
    let crate::spec::PrunePlan { config: cfg, control } = &settings.prune;
    cfg.unit.check_rows(&samples, &settings.unit_at)?;
    let dcfg = check_diagnose(&settings.diagnose, &samples, &settings.at)?;
    let emb = match &model {
        Some(m) => Some(crate::embed::embed_samples(&samples, m, &crate::embed::EmbedSettings::default())?),
        None => None,
    };
    let runs = prune(&samples, cfg, *control, &dcfg, emb.as_ref(), None, None)?;
    let report = crate::release::prune_report::render(&runs.pruned, runs.control.as_ref())?;
    Ok(PrunedByHand { runs, report })
}

/// What `blindspot prune` measured, and its report files (`prune.json`,
/// `removed.csv`, `kept_ids.txt`, the curve).
pub struct PrunedByHand {
    pub runs: PruneRuns,
    pub report: Vec<crate::io::rendered::Rendered>,
}

/// What `blindspot diagnose` writes: its report folder and what its flags add.
pub struct DiagnoseOutputs<'a> {
    /// The report folder (replaced whole).
    pub out: &'a std::path::Path,
    /// `--check-leakage`: where a leak is located (the benchmark read).
    pub check_leakage: Option<&'a Location>,
    pub export_features: Option<&'a std::path::Path>,
    pub export_folds: Option<&'a std::path::Path>,
}

/// What `blindspot diagnose` measured and wrote.
pub struct DiagnosedByHand {
    pub diagnosis: Diagnosis,
    /// The settings as checked against the questions.
    pub config: DiagnoseConfig,
    /// The meta-field audit's warnings.
    pub warnings: Vec<String>,
    /// `--export-folds`: what was written.
    pub folds: Option<FoldsExported>,
}

/// The diagnose step by hand (`blindspot diagnose`): the benchmark ingested,
/// the settings checked against it (outside scores against this run's folds)
/// before any forest is fit, the leak check when asked for, the diagnosis
/// with its null, its report written to `outs.out`, then the feature and fold
/// exports the flags ask for.
pub fn diagnose_by_hand(
    settings: &crate::spec::plan::DiagnoseSettings,
    outs: &DiagnoseOutputs<'_>,
) -> Result<DiagnosedByHand> {
    let samples = crate::ingest::ingest(&settings.input.ingest)?.samples;
    let cfg = check_diagnose(&settings.config, &samples, &settings.at)?;
    if let Some(at) = outs.check_leakage {
        check_leakage(&samples, &cfg, at)?;
    }
    let d = diagnose_checked(&samples, Cow::Borrowed(cfg.as_ref()), None, None, true)?;
    let report = diagnose_report(&d)?;
    crate::io::fs::atomic_dir(outs.out, |tmp| crate::io::rendered::write_all(tmp, &report))?;
    if let Some(dir) = outs.export_features {
        export_features(&samples, &cfg, dir)?;
    }
    let folds = outs.export_folds.map(|dir| export_folds(&samples, &cfg, dir)).transpose()?;
    Ok(DiagnosedByHand { diagnosis: d.diagnosis, config: d.config.into_owned(), warnings: d.warnings, folds })
}

/// The embed step by hand (`blindspot embed`): the benchmark `plan` reads,
/// every question, option and question+options embedded with `model`
/// (through the cache `settings` names), written as one Parquet file at `out`.
pub fn embed_to_file(
    plan: &crate::spec::IngestPlan,
    model: &dyn crate::embed::Embedder,
    settings: &crate::embed::EmbedSettings,
    out: &std::path::Path,
) -> Result<EmbeddedFile> {
    let samples = crate::ingest::ingest(plan)?.samples;
    let start = std::time::Instant::now();
    let e = crate::embed::embed_samples(&samples, model, settings)?;
    let seconds = start.elapsed().as_secs_f64();
    crate::io::fs::atomic_write(out, |tmp| crate::embed::output::write(tmp, &e))?;
    Ok(EmbeddedFile { texts: samples.iter().map(|s| s.options.len() + 2).sum(), embeddings: e, seconds })
}

/// What `blindspot embed` wrote.
pub struct EmbeddedFile {
    pub embeddings: SampleEmbeddings,
    /// Texts embedded: each question, each option, each question with its options.
    pub texts: usize,
    /// Wall time of the embedding (the cache read or the model run), for the summary line.
    pub seconds: f64,
}
