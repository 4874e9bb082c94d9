//! Release: a versioned, Hugging Face-compatible folder
//! `releases/<name>/<version>/` (`docs/design.md`, "The release").
//!
//! Guarantees: written to a temporary folder beside the target and renamed
//! into place (never a partial release); an existing version is never
//! overwritten with different bytes; rebuilding an identical release is a
//! no-op; no clock time in any file; rows sorted by id.

// The crates below this one, under the module names the code uses.
use blindspot_core::{error, io, par, progress, sample};
use blindspot_diagnose as diagnose;
use blindspot_embed as embed;
use blindspot_filter as filter;
use blindspot_ingest as ingest;
use blindspot_metrics as metrics;
use blindspot_outputs as outputs;
use blindspot_plots as plots;
use blindspot_prune as prune;
use blindspot_spec as spec;
use blindspot_variants as variants;

pub mod blind_groups;
pub mod build_lock;
pub mod card;
pub mod croissant;
pub mod datasheet;
pub mod diagnosis_report;
pub mod diff;
pub mod html;
pub mod lock;
pub mod manifest;
pub mod projection;
pub mod prune_report;
pub mod verify;
pub mod videos;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::{Error, Location, Problem, Result, display_path};
use crate::ingest::Ingested;
use crate::io::fs::{mkdir_for, sync_dir, write_bytes, write_json};
use crate::io::hash::{content_hash, hash_file, hash_tree};
use crate::io::parquet::MediaEmbed;
use crate::io::parquet::{write_batch, write_samples};
use crate::outputs::{BuildOutputs, EmbedStage, MetricsOut, PruningCounts};
use crate::sample::{Embed, EmbedVideos};
use crate::spec::Pipeline;

/// Relative path → (sha256, bytes) of each file of a release.
type FileHashes = BTreeMap<String, (String, u64)>;

/// What happened to the release folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// A new version was written.
    Created,
    /// The version existed with identical bytes: nothing changed.
    UpToDate,
}

#[derive(Debug, Clone)]
pub struct ReleaseOutcome {
    pub dir: PathBuf,
    pub written: Written,
    /// Relative path → (sha256, bytes) of every file.
    pub files: BTreeMap<String, (String, u64)>,
    /// The variant kinds generated.
    pub variants: Vec<VariantInfo>,
    /// What became of the lock file.
    pub lock: LockOutcome,
}

/// The data file of the default config.
pub const DEFAULT_DATA_FILE: &str = "data/test-00000-of-00001.parquet";

/// The columns of a config's data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSchema {
    /// Canonical samples (and variant rows).
    Samples,
    /// Duplicate and leakage pairs (`duplicates`).
    Duplicates,
    /// Variant rows with a `rotation` column (`circular`, every CircularEval rotation).
    Rotations,
}

/// One Hugging Face config of a release: a name, what it holds, its data file.
#[derive(Debug, Clone)]
pub struct ConfigInfo {
    pub name: String,
    pub description: String,
    /// Relative to the release.
    pub file: String,
    pub rows: usize,
    /// Size of the data file.
    pub bytes: u64,
    pub schema: ConfigSchema,
    /// Whether the data file has the video columns.
    pub videos: bool,
}

/// What the variants stage made of one kind.
#[derive(Debug, Clone)]
pub struct VariantInfo {
    pub kind: String,
    pub expected: String,
    pub rows: usize,
    pub skipped: BTreeMap<String, usize>,
    /// Its config, when it has rows.
    pub config: Option<String>,
}

/// A variant kind's config name: `distractor_swap@2` → `distractor_swap-2`,
/// every `circular@k` → `circular` (one config, its `rotation` column).
pub fn variant_config_name(kind: &str) -> String {
    match crate::variants::parse_kind(kind) {
        Ok(crate::variants::KindSel::One(k)) => k.config_name(),
        _ => kind.replace('@', "-"),
    }
}

/// The columns a config's file has after the canonical ones: `rotation` in
/// the `circular` config.
pub fn extra_columns(schema: ConfigSchema) -> &'static [crate::io::parquet::IntColumn] {
    match schema {
        ConfigSchema::Rotations => crate::variants::CIRCULAR_COLUMNS,
        ConfigSchema::Samples | ConfigSchema::Duplicates => &[],
    }
}

/// Advances a bar by one when dropped, however its step ends.
struct Tick<'a>(&'a indicatif::ProgressBar);

impl Drop for Tick<'_> {
    fn drop(&mut self) {
        self.0.inc(1);
    }
}

/// The variant configs: kinds that share a config (every CircularEval
/// rotation) together, in kind order; only kinds with rows.
fn variant_configs(generated: &[crate::variants::KindRows]) -> Vec<(String, Vec<&crate::variants::KindRows>)> {
    let mut out: Vec<(String, Vec<&crate::variants::KindRows>)> = Vec::new();
    for k in generated.iter().filter(|k| !k.rows.is_empty()) {
        let config = k.kind.config_name();
        match out.iter_mut().find(|(c, _)| *c == config) {
            Some((_, kinds)) => kinds.push(k),
            None => out.push((config, vec![k])),
        }
    }
    out
}

/// Parquet files written at once by a release, whatever the thread count.
const WRITERS_IN_FLIGHT: usize = 2;

/// Writes the variant kinds with rows as configs under `variants/`: one per
/// kind, except the CircularEval rotations, which share the `circular` config
/// (rows in rotation order, each with its `rotation`).
fn write_variants(
    generated: &[crate::variants::KindRows],
    dir: &Path,
    embed: MediaEmbed,
) -> Result<(Vec<ConfigInfo>, Vec<VariantInfo>)> {
    let groups = variant_configs(generated);
    // Configs are written side by side (Parquet encoding is serial within a file), a
    // constant number at a time: each writer buffers its file's row group, so memory
    // does not grow with the pool. Sizes come back in config order.
    let bar = crate::progress::bar(groups.len() as u64, "release · writing variant configs");
    let files: Vec<Result<ConfigInfo>> = crate::par::bounded_map(groups.len(), WRITERS_IN_FLIGHT, |g| {
        let (config, kinds) = &groups[g];
        let _tick = Tick(&bar);
        let file = format!("variants/{config}/test-00000-of-00001.parquet");
        let path = dir.join(&file);
        mkdir_for(&path)?;
        let videos = kinds.iter().any(|k| crate::sample::has_videos(&k.rows));
        let info = |schema, description, rows, bytes| ConfigInfo {
            name: config.clone(),
            description,
            file: file.clone(),
            rows,
            bytes,
            schema,
            videos,
        };
        Ok(match kinds.as_slice() {
            [one] if !matches!(one.kind, crate::variants::Kind::Circular(_)) => {
                let bytes = write_samples(&path, &one.rows, embed)?;
                info(ConfigSchema::Samples, one.kind.config_description(one.rows.len()), one.rows.len(), bytes)
            }
            rotations => {
                let rows: Vec<crate::sample::Sample> = rotations.iter().flat_map(|k| k.rows.iter().cloned()).collect();
                let schema = ConfigSchema::Rotations;
                let bytes = crate::io::parquet::write_samples_with(&path, &rows, embed, extra_columns(schema))?;
                let description = crate::variants::circular_config_description(rows.len(), rotations.len());
                info(schema, description, rows.len(), bytes)
            }
        })
    });
    bar.finish_and_clear();
    // The first failure in config order, whichever thread met it first.
    let configs = files.into_iter().collect::<Result<Vec<_>>>()?;
    let infos = generated
        .iter()
        .map(|k| VariantInfo {
            kind: k.kind.name(),
            expected: k.kind.expected().as_str().to_string(),
            rows: k.rows.len(),
            skipped: k.skipped.clone(),
            config: (!k.rows.is_empty()).then(|| k.kind.config_name()),
        })
        .collect();
    Ok((configs, infos))
}

/// Ingest guarantees every image of a release's samples is held: its bytes (or
/// its file, to embed) when embedding, its hash when writing paths only. A name
/// without either would publish a release that cannot be loaded.
fn images_held(samples: &[crate::sample::Sample], embed: Embed) -> Result<()> {
    for s in samples {
        for im in &s.images {
            let held = match embed {
                Embed::Images => im.bytes.is_some() || im.source.is_some(),
                Embed::PathsOnly => im.sha256.is_some(),
            };
            if !held {
                return Err(Error::Bug(format!(
                    "sample \"{}\" names the image {:?}, which ingest did not read",
                    s.id,
                    im.path.as_deref().unwrap_or("")
                )));
            }
        }
    }
    Ok(())
}

/// What a build does with the pipeline's lock file (at the path spec resolved,
/// `<name>.lock.json` beside it).
#[derive(Debug, Clone, PartialEq)]
pub enum LockFile {
    /// Leave it alone (a build into another folder than the default).
    Leave,
    /// Write the lock file at this path when its content changes.
    Write(PathBuf),
    /// Compare the build with the lock file at this path (`build --check`).
    Check(PathBuf),
}

/// What became of the lock file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockOutcome {
    Left,
    /// Written, or already holding this build.
    Written,
    /// `build --check`: the build matches the lock byte for byte.
    Identical,
    /// `build --check`: the first difference between the lock and the build, in words.
    Differs(String),
}

/// Builds the release of `pipeline` under `out_root` from what the stages
/// produced, then does with its lock file what `lock_file` says: the one
/// entry of a build into this crate.
pub fn write_release(
    pipeline: &Pipeline,
    stages: &BuildOutputs<'_>,
    out_root: &Path,
    lock_file: LockFile,
) -> Result<ReleaseOutcome> {
    // A check compares with a lock that reads back: a malformed one stops the
    // build before anything is written.
    let locked = match &lock_file {
        LockFile::Check(path) => Some(lock::read(path)?),
        LockFile::Write(_) | LockFile::Leave => None,
    };
    let ds = &pipeline.dataset;
    let parent = out_root.join(&ds.name);
    let target = parent.join(&ds.version);
    std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
    // Held until the release is in place: staging, the up-to-date comparison
    // and the rename happen for one build of this name at a time.
    let held = build_lock::BuildLock::acquire(&parent)?;
    held.remove_stale_staging(&parent)?;
    let mut staging = build_lock::Staging::create(&parent, &ds.version)?;
    let dir = &staging.path().to_path_buf();
    let (configs, variants) = write_configs(pipeline, stages, dir)?;
    write_reports(pipeline, stages, dir)?;
    let (files, manifest) = write_presentation(pipeline, stages, &configs, &variants, dir)?;
    let written = put_in_place(pipeline, &configs, &files, &mut staging, &target)?;
    drop(held);
    let lock = match (lock_file, locked) {
        (LockFile::Check(_), Some(locked)) => match lock::first_difference(&locked, &manifest, &files) {
            None => LockOutcome::Identical,
            Some(diff) => LockOutcome::Differs(diff),
        },
        (LockFile::Write(path), _) => {
            write_lock(&path, &lock::render(&files, &manifest)?)?;
            LockOutcome::Written
        }
        (LockFile::Leave, _) => LockOutcome::Left,
        (LockFile::Check(_), None) => return Err(Error::Bug("a check without the lock it read".into())),
    };
    Ok(ReleaseOutcome { dir: target, written, files, variants, lock })
}

/// Writes `text` to the lock file at `path`, only when its content changes.
fn write_lock(path: &Path, text: &str) -> Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    crate::io::fs::atomic_write(path, |tmp| std::fs::write(tmp, text).map_err(|e| Error::io(tmp, e)))
}

/// The data configs under `dir`: the questions (`default`, with `full` and
/// `removed` when something was removed), the duplicate pairs, and the
/// variants; with the variant kinds made.
fn write_configs(
    pipeline: &Pipeline,
    stages: &BuildOutputs<'_>,
    dir: &Path,
) -> Result<(Vec<ConfigInfo>, Vec<VariantInfo>)> {
    let images = if pipeline.release.embed_images { Embed::Images } else { Embed::PathsOnly };
    let carry = videos::carry(pipeline.release.videos, &stages.ingested.samples);
    let embed = MediaEmbed {
        images,
        videos: if carry == videos::Carry::Files { EmbedVideos::PathsOnly } else { EmbedVideos::AsImages },
    };
    images_held(&stages.ingested.samples, images)?;
    if carry == videos::Carry::Files {
        videos::copy_files(&stages.ingested.samples, dir)?;
    }
    let mut configs = question_configs(stages, dir, embed)?;
    configs.extend(duplicates_config(stages, dir)?);
    let (variant_configs, variants) =
        crate::progress::timed("variants (write)", || write_variants(stages.variants, dir, embed))?;
    configs.extend(variant_configs);
    Ok((configs, variants))
}

/// One config of questions: `rows` written to `file` under `dir`.
fn samples_config(
    dir: &Path,
    (name, description, file): (&str, String, &str),
    rows: &[crate::sample::Sample],
    embed: MediaEmbed,
) -> Result<ConfigInfo> {
    let path = dir.join(file);
    mkdir_for(&path)?;
    let spinner = crate::progress::spinner(&format!("release · writing config {name} ({} rows)", rows.len()));
    crate::progress::timed(&format!("write config {name} ({} rows)", rows.len()), || {
        write_samples(&path, rows, embed)
    })?;
    spinner.finish_and_clear();
    Ok(ConfigInfo {
        name: name.into(),
        description,
        file: file.into(),
        rows: rows.len(),
        bytes: std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?.len(),
        schema: ConfigSchema::Samples,
        videos: crate::sample::has_videos(rows),
    })
}

/// The questions' configs: `default` (what the release keeps); with
/// something removed, also `full` and `removed`. A pruning run that removed
/// nothing publishes one config: `full` and `removed` would be a copy and an
/// empty table (which `datasets` cannot load).
fn question_configs(stages: &BuildOutputs<'_>, dir: &Path, embed: MediaEmbed) -> Result<Vec<ConfigInfo>> {
    let all = &stages.ingested.samples;
    let kept: Vec<crate::sample::Sample> = stages.kept_samples().into_iter().cloned().collect();
    let Some(description) = debiased_description(stages, kept.len()) else {
        let description = match stages.pruned {
            None => "Every question of the release.".into(),
            Some(pr) => format!(
                "Every question of the release: {} pruning removed none (report/prune.json says why).",
                pr.method.as_str()
            ),
        };
        return Ok(vec![samples_config(dir, ("default", description, DEFAULT_DATA_FILE), &kept, embed)?]);
    };
    let removed_ids = stages.removed_ids();
    let removed: Vec<crate::sample::Sample> =
        all.iter().filter(|s| removed_ids.contains(s.id.as_str())).cloned().collect();
    let mut why = Vec::new();
    if stages.pruned.is_some() {
        why.push("report/prune.json and report/removed.csv");
    }
    if !stages.dedup_removed().is_empty() {
        why.push("report/duplicates.json");
    }
    if !stages.filter_removed().is_empty() {
        why.push("report/filter.json");
    }
    let removed_description = format!(
        "The questions {} removed (reasons and removal order in {}).",
        if stages.filter_removed().is_empty() { "pruning" } else { "the filter and pruning" },
        why.join(" and ")
    );
    Ok(vec![
        samples_config(dir, ("default", description, DEFAULT_DATA_FILE), &kept, embed)?,
        samples_config(
            dir,
            (
                "full",
                "Every question before pruning, removed ones included.".into(),
                "full/test-00000-of-00001.parquet",
            ),
            all,
            embed,
        )?,
        samples_config(dir, ("removed", removed_description, "removed/test-00000-of-00001.parquet"), &removed, embed)?,
    ])
}

/// The `default` config's description when something was removed (`None`
/// when nothing was): what removed it, and whether the kept set is debiased
/// (never called so while a group of it is still above its null).
fn debiased_description(stages: &BuildOutputs<'_>, kept: usize) -> Option<String> {
    if !stages.removes() {
        return None;
    }
    let (pr, total) = (stages.pruned, stages.ingested.samples.len());
    let mut before = Vec::new();
    if !stages.dedup_removed().is_empty() {
        before.push(format!("{} duplicate or leaked questions were dropped", stages.dedup_removed().len()));
    }
    let filtered = stages.filter_removed().len();
    if filtered > 0 {
        before.push(format!("{filtered} questions models answered without the image were filtered out"));
    }
    let before = before.join(" and ");
    let what = match (pr, before.is_empty()) {
        (Some(pr), true) => format!("what {} pruning kept", pr.method.as_str()),
        (Some(pr), false) => format!("what {} pruning kept after {before}", pr.method.as_str()),
        (None, _) => format!("what remains after {before}"),
    };
    let left = pr.and_then(|p| p.after_independent.as_ref()).map(|i| i.still_above_lines()).unwrap_or_default();
    Some(if left.is_empty() {
        format!("The debiased set: {what} ({kept} of {total}).")
    } else {
        format!(
            "The pruned set, not debiased: {} ({}). It holds {what} ({kept} of {total}).",
            left.join("; "),
            pr.map_or(String::new(), |p| p.stopped_short()),
        )
    })
}

/// The `duplicates` config (with `[leakage]`).
fn duplicates_config(stages: &BuildOutputs<'_>, dir: &Path) -> Result<Option<ConfigInfo>> {
    let Some(r) = stages.embed.and_then(|e| e.dups.as_ref()) else { return Ok(None) };
    let file = "duplicates/test-00000-of-00001.parquet";
    let path = dir.join(file);
    mkdir_for(&path)?;
    write_batch(&path, &r.pairs_batch()?)?;
    Ok(Some(ConfigInfo {
        name: "duplicates".into(),
        description: "Duplicate pairs: `exact` (same normalised text) and `near` (cosine of the question+options \
                      embeddings at or above the threshold) within the benchmark, `train-exact` and `train-near` \
                      between a benchmark question (`id_a`) and a training question (`id_b`); clusters in \
                      report/duplicates.json."
            .into(),
        file: file.into(),
        videos: false,
        rows: r.pairs.len(),
        bytes: std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?.len(),
        schema: ConfigSchema::Duplicates,
    }))
}

/// `report/`: each stage's report as the stages handed it over (metrics,
/// rejected rows, the diagnosis's and pruning's rendered files, embeddings,
/// B-Clean, the filter).
fn write_reports(pipeline: &Pipeline, stages: &BuildOutputs<'_>, dir: &Path) -> Result<()> {
    if let Some(m) = stages.metrics {
        let path = dir.join("report/metrics.json");
        mkdir_for(&path)?;
        write_json(&path, &m.file)?;
        write_batch(&dir.join("report/per_question.parquet"), &m.per_question)?;
        if let Some(g) = &m.gap {
            write_json(&dir.join("report/gap.json"), g)?;
        }
        write_bytes(
            &dir.join("report/label_audit.csv"),
            crate::metrics::evidence::audit_csv(&m.label_audit).as_bytes(),
        )?;
    }
    let ingested = stages.ingested;
    if !ingested.rejected.is_empty() {
        let path = dir.join("report/rejected.jsonl");
        mkdir_for(&path)?;
        let mut text = String::new();
        for r in &ingested.rejected {
            text.push_str(&serde_json::to_string(r).map_err(|e| Error::Bug(e.to_string()))?);
            text.push('\n');
        }
        write_bytes(&path, text.as_bytes())?;
    }
    if let (Some(d), Some(cfg)) = (stages.diagnosis, stages.diagnose_config) {
        let removed = stages.histogram_removed();
        let files = crate::progress::timed("diagnose report", || {
            diagnosis_report::render(d, cfg, d.tst_embed.as_deref(), removed.as_ref())
        })?;
        crate::io::rendered::write_all(&dir.join("report"), &files)?;
    }
    if let Some(p) = stages.pruned {
        let files = crate::progress::timed("prune report", || prune_report::render(p, stages.control))?;
        crate::io::rendered::write_all(&dir.join("report"), &files)?;
    }
    if let Some(e) = stages.embed {
        write_embed_report(&dir.join("report"), pipeline, stages, e)?;
    }
    if let Some(b) = stages.bclean {
        write_json(&dir.join("report/bclean.json"), &b.file())?;
    }
    if let Some(f) = stages.filter {
        let path = dir.join("report/filter.json");
        mkdir_for(&path)?;
        write_json(&path, f)?;
    }
    Ok(())
}

/// What a person and a loader read, written last because they describe the
/// rest: the report page, the card, `croissant.json` and `manifest.json`.
/// Returns every file's (sha256, bytes), each hashed once, and the manifest.
fn write_presentation(
    pipeline: &Pipeline,
    stages: &BuildOutputs<'_>,
    configs: &[ConfigInfo],
    variants: &[VariantInfo],
    dir: &Path,
) -> Result<(FileHashes, manifest::Manifest)> {
    let report_dir = dir.join("report");
    std::fs::create_dir_all(&report_dir).map_err(|e| Error::io(&report_dir, e))?;
    let report_files: Vec<String> = hash_tree(&report_dir)?.into_keys().collect();
    write_bytes(
        &report_dir.join("index.html"),
        html::render(pipeline, stages, configs, variants, &report_files).as_bytes(),
    )?;
    let card = card::render(pipeline, stages, configs, variants);
    write_bytes(&dir.join("README.md"), card.as_bytes())?;
    // Every file is hashed once: the tree so far, then croissant.json and the
    // manifest as they are written.
    let mut files = hash_tree(dir)?;
    let croissant_configs: Vec<croissant::Config<'_>> = configs
        .iter()
        .map(|c| croissant::Config {
            name: &c.name,
            description: c.description.clone(),
            schema: c.schema,
            videos: c.videos,
            files: files.get(&c.file).map(|(sha, _)| (c.file.as_str(), sha.as_str())).into_iter().collect(),
        })
        .collect();
    let croissant = croissant::render(pipeline, stages, &croissant_configs)?;
    write_bytes(&dir.join(croissant::FILE), croissant.as_bytes())?;
    files.insert(croissant::FILE.to_string(), content_hash(croissant.as_bytes()));
    let manifest = manifest::build(pipeline, stages.ingested, &files)?;
    let text = manifest::to_text(&manifest)?;
    write_bytes(&dir.join(manifest::FILE), text.as_bytes())?;
    files.insert(manifest::FILE.to_string(), content_hash(text.as_bytes()));
    Ok((files, manifest))
}

/// Renames the staged release to `target`, or finds it there already with the
/// same bytes; a published version is never overwritten with other bytes.
fn put_in_place(
    pipeline: &Pipeline,
    configs: &[ConfigInfo],
    files: &BTreeMap<String, (String, u64)>,
    staging: &mut build_lock::Staging,
    target: &Path,
) -> Result<Written> {
    let ds = &pipeline.dataset;
    if target.exists() {
        let existing = hash_tree(target)?;
        if existing == *files {
            return Ok(Written::UpToDate);
        }
        let differing = files
            .keys()
            .chain(existing.keys())
            .find(|k| files.get(*k) != existing.get(*k))
            .cloned()
            .unwrap_or_default();
        return Err(Error::one(
            Problem::new(
                Location::file(target),
                format!(
                    "release {}/{} already exists with different content (first difference: {differing})",
                    ds.name, ds.version
                ),
            )
            .help(format!(
                "a published version is never overwritten: bump [dataset] version in {}",
                display_path(&pipeline.path)
            )),
        ));
    }
    let written = configs.iter().map(|c| c.file.as_str()).chain(["README.md", croissant::FILE, manifest::FILE]);
    check_staged(staging.path(), files, written)?;
    let kept = staging.keep();
    if let Err(e) = std::fs::rename(&kept, target) {
        let _ = std::fs::remove_dir_all(&kept);
        // A build that did not see this one's lock (its lock file was deleted)
        // published the same bytes between the check above and the rename.
        if target.is_dir() && hash_tree(target).is_ok_and(|existing| existing == *files) {
            return Ok(Written::UpToDate);
        }
        return Err(Error::io(target, e));
    }
    if let Some(parent) = target.parent() {
        sync_dir(parent);
    }
    Ok(Written::Created)
}

/// Publish only a complete release: every file the build wrote (`written`) is
/// listed in `files`, and every listed file is still in `dir` as a regular file
/// with the sha256 and size recorded for the manifest. Files are re-hashed in
/// parallel, as streams.
fn check_staged<'a>(
    dir: &Path,
    files: &BTreeMap<String, (String, u64)>,
    written: impl Iterator<Item = &'a str>,
) -> Result<()> {
    let mut changed: Vec<&str> = written.filter(|f| !files.contains_key(*f)).collect();
    let as_recorded = |f: &str, (sha, bytes): &(String, u64)| {
        let path = dir.join(f);
        path.symlink_metadata().is_ok_and(|m| m.is_file())
            && hash_file(&path).is_ok_and(|d| d.sha256 == *sha && d.bytes == *bytes)
    };
    let unlike: Vec<&str> =
        files.par_iter().filter(|(f, recorded)| !as_recorded(f, recorded)).map(|(f, _)| f.as_str()).collect();
    changed.extend(unlike);
    if changed.is_empty() {
        return Ok(());
    }
    changed.truncate(5);
    Err(Error::one(
        Problem::new(
            Location::file(dir),
            format!(
                "the staging folder changed while the release was built (first: {changed:?}); nothing was published"
            ),
        )
        .help("another process removed or changed files in the staging folder: run the build again"),
    ))
}

/// The longest side of a thumbnail in the report page, in pixels.
const THUMBNAIL_SIDE: u32 = 96;

/// `report/thumbnails/<file>.png`: a small PNG of each benchmark image the page
/// shows among the near-duplicate clusters and the training matches, named by
/// [`html::thumbnail_name`]. An image with neither bytes nor a source file, or
/// that does not decode, gets none (the page then names it only).
fn write_thumbnails(dir: &Path, ingested: &Ingested, im: &crate::embed::image_dups::ImageDups) -> Result<()> {
    let shown = html::shown_images(im);
    if shown.is_empty() {
        return Ok(());
    }
    let mut by_path: std::collections::HashMap<&str, &crate::sample::ImageRef> = std::collections::HashMap::new();
    for s in &ingested.samples {
        for img in &s.images {
            if let Some(p) = img.path.as_deref() {
                by_path.entry(p).or_insert(img);
            }
        }
    }
    let thumbs = dir.join("thumbnails");
    for entry in shown {
        let Some(img) = entry.path.as_deref().and_then(|p| by_path.get(p)) else { continue };
        let bytes = match (&img.bytes, &img.source) {
            (Some(b), _) => std::borrow::Cow::Borrowed(b.as_slice()),
            (None, Some(src)) => std::borrow::Cow::Owned(std::fs::read(src).map_err(|err| Error::io(src, err))?),
            (None, None) => continue,
        };
        let Ok(img) = image::load_from_memory(&bytes) else { continue };
        let mut png = std::io::Cursor::new(Vec::new());
        if img.thumbnail(THUMBNAIL_SIDE, THUMBNAIL_SIDE).to_rgb8().write_to(&mut png, image::ImageFormat::Png).is_err()
        {
            continue;
        }
        std::fs::create_dir_all(&thumbs).map_err(|err| Error::io(&thumbs, err))?;
        write_bytes(&dir.join(html::thumbnail_name(entry)), png.get_ref())?;
    }
    Ok(())
}

/// `report/duplicates.json` (with `[leakage]`) and the projection plot (when
/// embeddings were computed).
fn write_embed_report(dir: &Path, pipeline: &Pipeline, stages: &BuildOutputs<'_>, e: &EmbedStage) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|err| Error::io(dir, err))?;
    if let Some(r) = &e.dups {
        let mut v = r.summary();
        if let Some(train) = v.train.as_mut() {
            train.file.clone_from(&e.train_written);
        }
        v.prune_duplicates = Some(pipeline.leakage.as_ref().is_some_and(|l| l.prune));
        v.removed = Some(
            e.dedup_removed
                .iter()
                .map(|r| crate::embed::dups::DupRemoved { id: r.id.clone(), reason: r.reason.clone() })
                .collect(),
        );
        write_json(&dir.join("duplicates.json"), &v)?;
        if let Some(im) = &r.images {
            write_thumbnails(dir, stages.ingested, im)?;
        }
    }
    if let Some(emb) = &e.embeddings {
        let scores = stages.diagnosis.map(crate::diagnose::Diagnosis::sample_scores).unwrap_or_default();
        let removed = stages.removed_ids();
        let points: Vec<projection::Point> = emb
            .ids
            .iter()
            .map(|id| projection::Point {
                s: scores.get(id.as_str()).map(|(s, _)| *s),
                removed: removed.contains(id.as_str()),
            })
            .collect();
        let title = if scores.is_empty() {
            "Question embeddings (PCA): kept and removed".to_string()
        } else {
            format!("Question embeddings (PCA), coloured by s(x) ({})", pipeline.diagnose.method.as_str())
        };
        let svg = projection::projection_svg(&e.projection, &points, &title)?;
        write_bytes(&dir.join(projection::PROJECTION_SVG), svg.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A staged file whose bytes change but not its size is caught before the
    /// rename, as is a missing one, a listed file replaced by a folder, and a
    /// written file the manifest does not list.
    #[test]
    fn the_pre_rename_check_rehashes_every_listed_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        std::fs::write(dir.path().join("data/a.parquet"), b"rows of a").unwrap();
        std::fs::write(dir.path().join("README.md"), b"# card").unwrap();
        let files = hash_tree(dir.path()).unwrap();
        let written = || ["data/a.parquet", "README.md"].into_iter();
        check_staged(dir.path(), &files, written()).unwrap();

        let refused = |files: &BTreeMap<String, (String, u64)>, names: &[&str]| {
            let e = check_staged(dir.path(), files, names.iter().copied()).unwrap_err().to_string();
            assert!(
                e.contains("the staging folder changed while the release was built")
                    && e.contains("nothing was published"),
                "{e}"
            );
            e
        };
        // Same size, other bytes.
        std::fs::write(dir.path().join("data/a.parquet"), b"rows of b").unwrap();
        assert!(refused(&files, &["data/a.parquet", "README.md"]).contains("[\"data/a.parquet\"]"));
        std::fs::write(dir.path().join("data/a.parquet"), b"rows of a").unwrap();
        check_staged(dir.path(), &files, written()).unwrap();
        // Gone, or a folder in its place.
        std::fs::remove_file(dir.path().join("README.md")).unwrap();
        assert!(refused(&files, &[]).contains("README.md"));
        std::fs::create_dir(dir.path().join("README.md")).unwrap();
        assert!(refused(&files, &[]).contains("README.md"));
        std::fs::remove_dir(dir.path().join("README.md")).unwrap();
        std::fs::write(dir.path().join("README.md"), b"# card").unwrap();
        // Written but not in the manifest.
        assert!(refused(&files, &["data/a.parquet", "croissant.json"]).contains("croissant.json"));
    }
}
