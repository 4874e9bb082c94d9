//! `blindspot metrics --samples F... | --release DIR --predictions [MODEL=]FILE... -o DIR`:
//! the papers' metrics from models' predictions, optionally B-Clean, by hand.
//! Writes `metrics.json`, `per_question.parquet`, `label_audit.csv` (and `bclean.json`) into DIR, atomically.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Location, Problem, Result, display_path};
use crate::metrics::percent2;
use crate::pipeline::rows::Sources;
use crate::predictions::{PredictionFile, Source};
use crate::sample::Sample;

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
        let pfiles: Vec<PredictionFile> = self
            .predictions
            .iter()
            .map(|p| PredictionFile { source, fields: fields.clone(), ..PredictionFile::parse(p) })
            .collect();
        let (rows, imported) = crate::pipeline::rows::load(&Sources {
            samples: &self.samples,
            release: self.release.as_deref(),
            predictions: &pfiles,
            manifests: &self.manifest,
        })?;
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
    /// The meta field holding each question's reference answers (VQA, TextVQA, VizWiz):
    /// answers to questions without options score VQA accuracy over them, not agreement
    /// with the gold alone.
    #[arg(long)]
    pub reference_answers: Option<String>,
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
            reference_answers: self.reference_answers.clone(),
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
    measured.write(&args.out, &rows, &imported)?;
    let crate::pipeline::steps::Measured { report, audit, bclean: bclean_report, gap } = measured;
    let audit_rule = settings.audit;
    if let Some(field) = &cfg.reference_answers {
        super::say(&format!(
            "answers to questions without options scored by VQA accuracy over the reference answers in meta \
             \"{field}\" (min(1, matches / 3), \
             averaged over each reference left out): {} prediction(s); {} whose question has none there, scored \
             against the gold",
            report.scored.by_references, report.scored.without_references
        ));
    }
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
