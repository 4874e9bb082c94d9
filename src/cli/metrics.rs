//! `blindspot metrics --samples F... | --release DIR --predictions [MODEL=]FILE... -o DIR`:
//! the papers' metrics from models' predictions, optionally B-Clean, by hand.
//! Writes `metrics.json`, `per_question.parquet`, `label_audit.csv` (and `bclean.json`) into DIR, atomically.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Location, Problem, Result, display_path};
use crate::metrics::percent2;
use crate::predictions::{Manifest, PredictionFile, Source, import_all};
use crate::sample::{Sample, id_cmp};
use crate::spec::{IngestPlan, Pipeline};

/// The rows and the predictions that answer them (shared by `metrics` and `filter`).
#[derive(Debug, clap::Args)]
pub struct Inputs {
    /// The rows predictions answer: canonical Parquet files (samples, variant
    /// kinds), a pipeline file, or a data file with canonical fields.
    #[arg(long, num_args = 1.., required_unless_present = "release")]
    pub samples: Vec<PathBuf>,
    /// A release (or `blindspot variants` output) folder: every Parquet file below it.
    #[arg(long)]
    pub release: Option<PathBuf>,
    /// Prediction files, `FILE` or `MODEL=FILE` (generic JSONL/CSV/Parquet,
    /// lmms-eval samples, VLMEvalKit results, id → index JSON).
    #[arg(long, num_args = 1.., required = true)]
    pub predictions: Vec<String>,
    /// Format of every prediction file: generic, lmms-eval, vlmevalkit, index-map (default: detected).
    #[arg(long)]
    pub format: Option<String>,
    /// The column holding the sample id (default `id`, or the keys of a JSON object of records).
    #[arg(long)]
    pub id_field: Option<String>,
    /// The column holding the response (default `response`, `prediction`, `output`, `answer`).
    #[arg(long)]
    pub response_field: Option<String>,
    /// The column holding the model's name (default `model`).
    #[arg(long)]
    pub model_field: Option<String>,
    /// One answer column per model, `COLUMN=MODEL` (repeatable; the model defaults to the column).
    #[arg(long)]
    pub wide: Vec<String>,
    /// manifest.json written by `blindspot export` (maps harness rows to ids).
    #[arg(long)]
    pub manifest: Vec<PathBuf>,
    /// Scoring of numeric answers: `exact` (equal numbers, as published scorers),
    /// `mra` (mean relative accuracy, partial credit) or `tolerance:<rel>`.
    #[arg(long, default_value = "exact")]
    pub numeric: String,
    /// MRA comparison for numeric answers (with `--numeric mra`): `strict` (<) or `inclusive` (<=).
    #[arg(long, default_value = "strict")]
    pub mra: String,
}

impl Inputs {
    /// Scoring settings from `--numeric` and `--mra`.
    pub fn scoring(&self) -> Result<(crate::sample::NumericScoring, crate::sample::MraRule)> {
        Ok((
            crate::sample::NumericScoring::parse(&self.numeric).map_err(flag)?,
            crate::sample::MraRule::parse(&self.mra).map_err(flag)?,
        ))
    }

    /// Checks `out` against the inputs, then reads the rows (sorted by id) and the predictions.
    pub fn load(&self, out: &Path) -> Result<(Vec<Sample>, crate::predictions::Imported)> {
        let source = self.format.as_deref().map(Source::parse).transpose().map_err(flag)?;
        let fields = crate::predictions::Fields {
            id: self.id_field.clone(),
            response: self.response_field.clone(),
            model: self.model_field.clone(),
            wide: self.wide.iter().map(|w| crate::predictions::Fields::parse_wide(w)).collect(),
        };
        use super::outputs::{Input, Output};
        let mut inputs: Vec<Input> = self.samples.iter().map(|p| Input::File(p.clone())).collect();
        inputs.extend(self.release.iter().map(|d| Input::Whole(d.clone())));
        inputs.extend(self.predictions.iter().map(|p| Input::File(PredictionFile::parse(p).path)));
        inputs.extend(self.manifest.iter().map(|p| Input::File(p.clone())));
        super::outputs::check(&inputs, &[Output::folder("--out", out)])?;
        let mut files: Vec<PathBuf> = self.samples.clone();
        if let Some(dir) = &self.release {
            files.extend(release_files(dir)?);
        }
        let pfiles: Vec<PredictionFile> = self
            .predictions
            .iter()
            .map(|p| PredictionFile { source, fields: fields.clone(), ..PredictionFile::parse(p) })
            .collect();
        // The list of files is checked before any row is read.
        crate::predictions::check_files(&pfiles)?;
        let rows = load_rows(&files)?;
        let mut manifest: Option<Manifest> = None;
        for m in &self.manifest {
            manifest.get_or_insert_with(Manifest::default).merge(Manifest::load(m)?);
        }
        let imported = import_all(&pfiles, manifest.as_ref())?;
        if let Some(w) = imported.several_warning() {
            eprintln!("{w}");
        }
        Ok((rows, imported))
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub inputs: Inputs,
    /// Folder for metrics.json, per_question.parquet (and bclean.json).
    #[arg(short = 'o', long = "out", visible_alias = "output")]
    pub out: PathBuf,
    /// Predictions naming unknown ids, or repeating one, are errors.
    #[arg(long)]
    pub strict: bool,
    /// Seed of the bootstrap (default 42, as a pipeline's [dataset] seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Bootstrap resamples (default 1000, as a pipeline's [metrics] resamples).
    #[arg(long)]
    pub resamples: Option<usize>,
    /// Per-group accuracies: `question_type` or `meta:FIELD` (repeatable).
    #[arg(long)]
    pub group_by: Vec<String>,
    /// MMStar leakage: `VLM=LLM`, the LLM backbone's text-only predictions are model LLM.
    #[arg(long)]
    pub llm_base: Vec<String>,
    /// A `prune.json` (from `blindspot prune --out DIR`, with `--control` for the random
    /// control): writes gap.json, each model's accuracy with and without the image on the
    /// full, kept, removed and control-kept sets.
    #[arg(long)]
    pub prune: Option<PathBuf>,
    /// Gold-label audit: `all` (every model that answered, at least 3; the default) or how many sighted models must agree on one non-gold answer.
    #[arg(long)]
    pub audit_agree: Option<String>,
    /// Run B-Clean on the mirage predictions and write bclean.json.
    #[arg(long)]
    pub bclean: bool,
    /// B-Clean candidate models (default: every model with mirage predictions).
    #[arg(long, value_delimiter = ',')]
    pub bclean_models: Vec<String>,
    /// B-Clean step 3: a blind TsT-RF trained on the compromised questions removes what it answers.
    #[arg(long)]
    pub bclean_step3: bool,
    /// B-Clean: also remove the questions without an image (kept by default, reported apart).
    #[arg(long)]
    pub bclean_remove_imageless: bool,
}

pub fn flag(msg: String) -> Error {
    Error::one(Problem::new(Location::file("command line"), msg))
}

/// Every Parquet file below `dir` except `report/`, sorted.
fn release_files(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Err(Error::one(
            Problem::new(Location::file(dir), "not a folder")
                .help("give a release folder or `blindspot variants -o DIR`'s folder"),
        ));
    }
    let mut files = Vec::new();
    for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let e = e.map_err(|e| Error::io(dir, std::io::Error::other(e.to_string())))?;
        let rel = e.path().strip_prefix(dir).unwrap_or(e.path());
        let hidden = rel.components().any(|c| {
            let s = c.as_os_str().to_string_lossy();
            s == "report" || s.starts_with('.')
        });
        if e.file_type().is_file() && !hidden && e.path().extension().and_then(|x| x.to_str()) == Some("parquet") {
            files.push(e.path().to_path_buf());
        }
    }
    if files.is_empty() {
        return Err(Error::one(Problem::new(Location::file(dir), "no Parquet files found below this folder")));
    }
    Ok(files)
}

/// Reads one rows file: canonical Parquet, a pipeline, or canonical-field data.
pub fn read_rows(path: &Path) -> Result<Vec<Sample>> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("parquet") => crate::io::parquet::read_samples(path),
        Some("toml") => Ok(crate::ingest::ingest(&Pipeline::load(path)?.ingest)?.samples),
        _ => {
            if !path.exists() {
                return Err(Error::io(path, std::io::Error::new(std::io::ErrorKind::NotFound, "no such file")));
            }
            Ok(crate::ingest::ingest(&IngestPlan::for_canonical_input(path)?)?.samples)
        }
    }
}

/// Rows of every file, sorted by id. A row given by two files (a release's
/// `full` config repeats `data`'s rows) is read once when both copies agree on
/// what scoring and grouping read; copies that differ are an error, since
/// which gold to score against is unknown.
pub fn load_rows(files: &[PathBuf]) -> Result<Vec<Sample>> {
    let mut seen: std::collections::HashMap<String, (usize, usize)> = std::collections::HashMap::new();
    let mut rows = Vec::new();
    let mut problems = crate::error::Capped::default();
    for (f, file) in files.iter().enumerate() {
        for s in read_rows(file)? {
            match seen.get(&s.id).copied() {
                None => {
                    seen.insert(s.id.clone(), (f, rows.len()));
                    rows.push(s);
                }
                Some((first_file, at)) => {
                    if let Some((field, a, b)) = first_difference(&rows[at], &s) {
                        problems.push(
                            Problem::new(
                                Location::file(file),
                                format!(
                                    "id \"{}\" is also in {}, with another {field}: {a} there, {b} here; which one \
                                     to score against is unknown",
                                    s.id,
                                    display_path(&files[first_file])
                                ),
                            )
                            .field(field)
                            .help("give each question once: drop the stale file, or give the files of one version"),
                        );
                    }
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(problems.into_vec()));
    }
    rows.sort_by(|a, b| id_cmp(&a.id, &b.id));
    Ok(rows)
}

/// The first field two copies of one row disagree on, among those scoring,
/// grouping and the audit read, with both values as JSON.
fn first_difference(a: &Sample, b: &Sample) -> Option<(&'static str, String, String)> {
    fn json<T: serde::Serialize>(v: &T) -> String {
        serde_json::to_string(v).unwrap_or_default()
    }
    let pairs: [(&'static str, String, String); 10] = [
        ("answer", json(&a.answer), json(&b.answer)),
        ("answer_index", json(&a.answer_index), json(&b.answer_index)),
        ("options", json(&a.options), json(&b.options)),
        ("answer_format", json(&a.answer_format), json(&b.answer_format)),
        ("question", json(&a.question), json(&b.question)),
        ("context", json(&a.context), json(&b.context)),
        ("question_type", json(&a.question_type), json(&b.question_type)),
        ("meta", json(&a.meta), json(&b.meta)),
        ("parent_id", json(&a.parent_id), json(&b.parent_id)),
        ("variant", json(&a.variant), json(&b.variant)),
    ];
    pairs.into_iter().find(|(_, x, y)| x != y)
}

impl Args {
    /// The flags in `[metrics]`' terms, for spec to resolve.
    fn flags(&self) -> Result<crate::spec::plan::MetricsFlags> {
        Ok(crate::spec::plan::MetricsFlags {
            seed: self.seed,
            resamples: self.resamples,
            strict: self.strict,
            scoring: self.inputs.scoring()?,
            group_by: self.group_by.clone(),
            llm_base: self.llm_base.clone(),
            audit_agree: self.audit_agree.clone(),
            bclean: self.bclean,
            bclean_models: self.bclean_models.clone(),
            bclean_step3: self.bclean_step3,
            bclean_remove_imageless: self.bclean_remove_imageless,
        })
    }
}

pub fn run(args: &Args) -> Result<()> {
    let settings = crate::spec::plan::metrics_settings(&args.flags()?)?;
    let cfg = &settings.config;
    let (rows, imported) = args.inputs.load(&args.out)?;
    let measured = crate::pipeline::steps::measure(&rows, &imported, &settings, args.prune.as_deref(), |w| {
        eprintln!("{w}");
    })?;
    let crate::pipeline::steps::Measured { report, audit, bclean: bclean_report, gap } = measured;
    let audit_rule = settings.audit;
    let file = report.file(&imported);
    let per_question = report.per_question_batch(&rows)?;
    crate::io::fs::atomic_dir(&args.out, |tmp| {
        crate::io::fs::write_json(&tmp.join("metrics.json"), &file)?;
        crate::io::parquet::write_batch(&tmp.join("per_question.parquet"), &per_question)?;
        crate::io::fs::write_bytes(
            &tmp.join("label_audit.csv"),
            crate::metrics::evidence::audit_csv(&audit).as_bytes(),
        )?;
        if let Some(b) = &bclean_report {
            crate::io::fs::write_json(&tmp.join("bclean.json"), &b.file())?;
        }
        if let Some(g) = &gap {
            crate::io::fs::write_json(&tmp.join("gap.json"), g)?;
        }
        Ok(())
    })?;
    for (m, conds) in &report.cells {
        for (c, s) in conds {
            super::say(&format!(
                "{m} / {c}: n {}, accuracy {:.2}% (95% CI {:.2}-{:.2}), abstained {:.2}%, unparsed {}",
                s.n,
                percent2(s.accuracy),
                percent2(s.ci95.0),
                percent2(s.ci95.1),
                percent2(s.abstention_rate),
                s.unparsed
            ));
            if s.formats.len() > 1 {
                let parts: Vec<String> =
                    s.formats.iter().map(|(f, st)| format!("{f} {:.2}% (n {})", percent2(st.accuracy), st.n)).collect();
                super::say(&format!(
                    "    accuracy mixes: {} (numeric scored {})",
                    parts.join(", "),
                    cfg.numeric.name()
                ));
            }
            for (k, groups) in &s.groups {
                let parts: Vec<String> =
                    groups.iter().map(|(g, st)| format!("{g} {:.2}% (n {})", percent2(st.accuracy), st.n)).collect();
                super::say(&format!("    {k}: {}", parts.join(", ")));
            }
        }
        if let Some(d) = report.derived.get(m) {
            let mut parts = Vec::new();
            let mut paired = |name: &str, v: Option<&crate::metrics::derived::Paired>| {
                if let Some(p) = v {
                    match p.value {
                        Some(x) => parts.push(format!("{name} {:.1}% (n {} paired)", x * 100.0, p.n_paired)),
                        None => parts.push(format!("{name} n/a ({})", p.reason.as_deref().unwrap_or("undefined"))),
                    }
                }
            };
            paired("visual dependence", d.visual_dependence.as_ref());
            paired("caption substitution", d.caption_substitution.as_ref());
            paired("mirage score", d.mirage_score.as_ref());
            if let Some(c) = &d.circular {
                parts.push(format!(
                    "circular accuracy {:.1}% ({} complete; first rotation {:.1}%)",
                    c.accuracy * 100.0,
                    c.n,
                    c.first_rotation * 100.0
                ));
            }
            if let Some(r) = d.robustness.r {
                parts.push(format!("robustness R {:.1}%", r * 100.0));
            }
            if !parts.is_empty() {
                super::say(&format!("  {m}: {}", parts.join(", ")));
            }
        }
    }
    if let Some(b) = &bclean_report {
        let per: BTreeMap<&str, usize> = b.models.iter().map(|m| (m.model.as_str(), m.compromised)).collect();
        super::say(&format!(
            "B-Clean: {} questions, compromised {:?}, union {}, step 3 removed {}, without an image {} ({}), kept {}; ranking {} -> {}",
            b.n_questions,
            per,
            b.union,
            b.step3_removed,
            b.imageless,
            if b.imageless_removed {
                "removed"
            } else {
                "kept: answerable without looking, --bclean-remove-imageless removes them"
            },
            b.kept.len(),
            b.ranking_before.join(" > "),
            b.ranking_after.join(" > ")
        ));
    }
    for line in gap.iter().flat_map(|g| g.models.iter().map(|m| m.sentence.clone()).chain(g.missing.clone())) {
        super::say(&format!("gap: {line}"));
    }
    super::say(&format!(
        "gold-label audit: {} question(s) where {} agree on another answer than the gold (listed in label_audit.csv, nothing removed)",
        audit.len(),
        audit_rule.describe()
    ));
    super::say(&format!("-> {}", display_path(&args.out.join("metrics.json"))));
    Ok(())
}
