//! Validated pipeline: what the rest of blindspot sees. Built from the wire
//! types by [`Pipeline::load`], which reports every problem of a file at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use toml::Spanned;
use toml::de::DeTable;

use super::check::{self, SourceFile, span_of};
use super::flags::Flags;
use crate::error::OnInvalid;
use crate::error::{Error, Location, Pos, Problem, Result, display_path, line_col};
pub use crate::ingest::plan::{
    Accessor, AnswerKind, FieldMap, Filter, Format, IngestPlan, Input, JoinPlan, MetaKeep, ReferenceAnswers,
    TemplatePart,
};
use crate::wire::{IngestWire, PipelineWire};

pub use crate::context::DEFAULT_SEED;

mod build;
mod fields;
mod filter;
mod ingest;
mod input;
mod metrics;
mod stages;
mod variants;

pub use build::{
    BuildFlags, BuildSettings, BuildTarget, DEFAULT_OUT, LockUse, build_settings, lock_path, no_lock_file,
};
use fields::*;
pub use filter::{FilterFlags, FilterSettings, filter_settings};
pub use ingest::{FIELD_KEYS, bare_input_plan, fields_from_flags};
use ingest::{ingest_plan, leakage_plan};
pub use input::{
    DiagnoseSettings, DupsFlags, DupsSettings, InputFlags, InputPlan, ModelPlan, PruneSettings, diagnose_settings,
    dups_settings, input_plan, model_plan, pipeline_files, prune_settings,
};
use metrics::metrics_plan;
pub use metrics::{MetricsFlags, MetricsPlan, MetricsSettings, metrics_settings};
pub use stages::{PrunePlan, StageSettings, flag_settings};
use stages::{filter_rule, stage_settings};
use variants::variants_config;
pub use variants::{VariantsFlags, VariantsSettings, variants_settings};

impl From<crate::wire::FormatWire> for Format {
    fn from(w: crate::wire::FormatWire) -> Format {
        use crate::wire::FormatWire as W;
        match w {
            W::Json => Format::Json,
            W::Jsonl => Format::Jsonl,
            W::Csv => Format::Csv,
            W::Tsv => Format::Tsv,
            W::Parquet => Format::Parquet,
            W::Hf => Format::Hf,
            W::Vlmevalkit => Format::Vlmevalkit,
            W::Imagefolder => Format::Imagefolder,
            W::Xlsx => Format::Xlsx,
        }
    }
}

impl From<crate::wire::AnswerKind> for AnswerKind {
    fn from(w: crate::wire::AnswerKind) -> AnswerKind {
        use crate::wire::AnswerKind as W;
        match w {
            W::Auto => AnswerKind::Auto,
            W::Letter => AnswerKind::Letter,
            W::Index => AnswerKind::Index,
            W::Index1 => AnswerKind::Index1,
            W::Text => AnswerKind::Text,
        }
    }
}

impl From<crate::wire::OnInvalid> for OnInvalid {
    fn from(w: crate::wire::OnInvalid) -> OnInvalid {
        match w {
            crate::wire::OnInvalid::Error => OnInvalid::Error,
            crate::wire::OnInvalid::Skip => OnInvalid::Skip,
        }
    }
}

/// A validated pipeline file.
#[derive(Debug, Clone)]
pub struct Pipeline {
    pub path: PathBuf,
    /// sha256 of the file's bytes.
    pub hash: String,
    pub dataset: Dataset,
    pub ingest: IngestPlan,
    pub release: ReleasePlan,
    /// TsT-RF settings (defaults when the section is absent).
    pub diagnose: crate::diagnose::DiagnoseConfig,
    /// Whether `build` runs diagnose (a `[diagnose]` section is present).
    pub run_diagnose: bool,
    /// Stress-test variants (`None` when the `[variants]` section is absent).
    pub variants: Option<crate::variants::VariantsConfig>,
    /// Pruning (`None` when the `[prune]` section is absent).
    pub prune: Option<PrunePlan>,
    /// Blind-model filter over the imported predictions (`None` without `[filter]`).
    pub filter: Option<crate::filter::Rule>,
    /// Metrics from model predictions (`None` without `[predictions]`).
    pub metrics: Option<MetricsPlan>,
    /// The sentence-embedding model, and which setting asks for embeddings.
    pub embed: EmbedPlan,
    /// Duplicates and training-split leakage (`None` without `[leakage]`).
    pub leakage: Option<LeakagePlan>,
    pub datasheet: BTreeMap<String, String>,
}

/// The `[embed]` section, and the first setting that needs embeddings.
#[derive(Debug, Clone, Default)]
pub struct EmbedPlan {
    /// `[embed] model-dir`, resolved against the pipeline's folder.
    pub model_dir: Option<PathBuf>,
    pub max_length: Option<usize>,
    /// The pipeline key that needs embeddings and where it is written
    /// (`None`: the pipeline needs no model).
    pub requested_by: Option<(String, Location)>,
}

/// A validated `[leakage]` section.
#[derive(Debug, Clone)]
pub struct LeakagePlan {
    /// How the training split is read (`None`: within-benchmark duplicates only).
    pub train: Option<IngestPlan>,
    /// `train` as written in the pipeline (what reports show).
    pub train_written: Option<String>,
    pub threshold: f64,
    /// Exact duplicates only (no model).
    pub exact_only: bool,
    /// Keep one question per cluster and drop leaked questions.
    pub prune: bool,
}

impl Pipeline {
    /// Whether any stage of this pipeline needs sentence embeddings.
    pub fn needs_embeddings(&self) -> bool {
        self.embed.requested_by.is_some()
    }
}

#[derive(Debug, Clone)]
pub struct Dataset {
    pub name: String,
    pub version: String,
    pub license: String,
    pub citation: Option<String>,
    pub description: Option<String>,
    pub homepage: Option<String>,
    /// Where the pipeline and its lock live (a git repository's URL).
    pub repository: Option<String>,
    pub seed: u64,
    pub date_published: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ReleasePlan {
    pub embed_images: bool,
    /// How videos travel (`[release] videos`).
    pub videos: crate::wire::VideoCarryWire,
}

/// Looks up `${NAME}` variables in pipeline paths.
pub type Vars<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment as [`Vars`].
pub fn env_vars(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Expands `${NAME}` from `vars`.
fn expand_env(s: &str, vars: Vars<'_>) -> std::result::Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let close = rest[i..].find('}').ok_or_else(|| format!("unclosed \"${{\" in \"{s}\""))?;
        let name = &rest[i + 2..i + close];
        let val = vars(name).ok_or_else(|| format!("environment variable {name} is not set (used in \"{s}\")"))?;
        out.push_str(&val);
        rest = &rest[i + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

struct Ctx<'a> {
    src: SourceFile<'a>,
    vars: Vars<'a>,
    doc: &'a Spanned<DeTable<'a>>,
    base: PathBuf,
    /// The keys a command's flags set, each with its flag (`diagnose.folds` → `--folds`).
    flags: BTreeMap<String, String>,
    problems: Vec<Problem>,
}

/// Where a problem with a flag's value is reported.
const COMMAND_LINE: &str = "command line";

/// Resolves settings given on the command line alone (no pipeline file): `f`
/// reads them with a context whose problems are reported at the flags
/// (`flags`: each key with its flag), all of them at once.
fn from_command_line<T>(flags: BTreeMap<String, String>, f: impl FnOnce(&mut Ctx<'_>) -> T) -> Result<T> {
    let text = "";
    let doc = DeTable::parse(text).map_err(|e| Error::Bug(format!("an empty TOML document: {e}")))?;
    let mut ctx = Ctx {
        src: SourceFile { path: Path::new(COMMAND_LINE), text },
        vars: &env_vars,
        doc: &doc,
        base: PathBuf::from("."),
        flags,
        problems: Vec::new(),
    };
    let out = f(&mut ctx);
    if ctx.problems.is_empty() { Ok(out) } else { Err(Error::Invalid(ctx.problems)) }
}

impl Ctx<'_> {
    fn err(&mut self, key: &str, message: impl Into<String>) -> &mut Problem {
        let problem = match self.flags.get(key) {
            Some(flag) => Problem::new(Location::file(COMMAND_LINE), message).field(flag.as_str()),
            None => Problem::new(self.src.loc(span_of(self.doc, key)), message).field(key),
        };
        self.problems.push(problem);
        self.problems.last_mut().expect("just pushed")
    }

    /// Where `key` was written: the command line for a flag, else its line in the file.
    fn loc(&self, key: &str) -> Location {
        match self.flags.contains_key(key) {
            true => Location::file(COMMAND_LINE),
            false => self.src.loc(span_of(self.doc, key)),
        }
    }

    fn resolve(&mut self, key: &str, raw: &str) -> Option<PathBuf> {
        match expand_env(raw, self.vars) {
            // A flag's path is relative to the working folder, a file's to the file.
            Ok(s) if self.flags.contains_key(key) => Some(PathBuf::from(s)),
            Ok(s) => Some(self.base.join(s)),
            Err(e) => {
                self.err(key, e);
                None
            }
        }
    }
}

impl Pipeline {
    /// Reads, checks and validates a pipeline file; every problem is reported
    /// at once. `${NAME}` in paths comes from the environment.
    pub fn load(path: &Path) -> Result<Pipeline> {
        Pipeline::load_with(path, &env_vars)
    }

    /// [`Pipeline::load`] with `${NAME}` looked up in `vars`.
    pub fn load_with(path: &Path, vars: Vars<'_>) -> Result<Pipeline> {
        Pipeline::load_flagged(path, vars, &Flags::default())
    }

    /// A pipeline file with a command's flags laid over its sections, validated
    /// as one: a problem with a flag's value names the flag.
    pub fn load_flagged(path: &Path, vars: Vars<'_>, flags: &Flags) -> Result<Pipeline> {
        // A pipeline may read another ([leakage] train); a chain that comes back
        // to a file being loaded would never end.
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if LOADING.with(|l| l.borrow().contains(&key)) {
            return Err(Error::one(
                Problem::new(
                    Location::file(path),
                    "this pipeline is read again by a pipeline it reads ([leakage] train)",
                )
                .help("point [leakage] train at the training split's data file or its own pipeline, not at this one"),
            ));
        }
        LOADING.with(|l| l.borrow_mut().push(key));
        let out = Pipeline::load_inner(path, vars, flags);
        LOADING.with(|l| l.borrow_mut().pop());
        out
    }

    fn load_inner(path: &Path, vars: Vars<'_>, flags: &Flags) -> Result<Pipeline> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let text = String::from_utf8(bytes.clone()).map_err(|e| {
            let (line, col) = line_col(&String::from_utf8_lossy(&bytes), e.utf8_error().valid_up_to());
            Error::one(Problem::new(
                Location { file: display_path(path).into(), pos: Pos::LineCol(line, col) },
                "the pipeline file is not valid UTF-8",
            ))
        })?;
        let src = SourceFile { path, text: &text };
        let doc = DeTable::parse(&text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            Error::one(Problem::new(src.loc(span), format!("invalid TOML: {}", e.message().trim())))
        })?;
        let schema =
            serde_json::to_value(schemars::schema_for!(PipelineWire)).map_err(|e| Error::Bug(e.to_string()))?;
        let checked = check::check(&src, &doc, &schema);
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let base = if base.as_os_str().is_empty() { PathBuf::from(".") } else { base };
        let mut ctx = Ctx { src, vars, doc: &doc, base, flags: flags.keys()?, problems: Vec::new() };
        if !checked.problems.is_empty() {
            // Every problem at once: the rest of the file is checked without the
            // values the structural check rejected.
            let mut all = checked.problems;
            let rest = toml::from_str::<toml::Table>(&text)
                .ok()
                .map(|t| check::without(t, &checked.bad_paths))
                .and_then(|t| toml::Value::Table(t).try_into::<PipelineWire>().ok())
                .map(|w| flags.over(w))
                .transpose()?;
            if let Some(wire) = rest {
                Pipeline::from_wire(path, &bytes, wire, &mut ctx);
                let about_bad = |f: &str| {
                    checked.bad_paths.iter().any(|b| {
                        let stem = b.split_once('[').map_or(b.as_str(), |(k, _)| k);
                        f == b || f.starts_with(&format!("{stem}.")) || f.starts_with(&format!("{stem}["))
                    })
                };
                all.extend(ctx.problems.into_iter().filter(|p| !p.field.as_deref().is_some_and(about_bad)));
                all.sort_by(|a, b| a.loc.cmp(&b.loc));
            }
            return Err(Error::Invalid(all));
        }
        let wire: PipelineWire = toml::from_str(&text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            Error::one(Problem::new(ctx.src.loc(span), e.message().trim().to_string()))
        })?;
        let pipeline = Pipeline::from_wire(path, &bytes, flags.over(wire)?, &mut ctx);
        if ctx.problems.is_empty() {
            return Ok(pipeline);
        }
        let mut problems = ctx.problems;
        problems.sort_by(|a, b| a.loc.cmp(&b.loc));
        Err(Error::Invalid(problems))
    }

    fn from_wire(path: &Path, bytes: &[u8], w: PipelineWire, ctx: &mut Ctx<'_>) -> Pipeline {
        let d = &w.dataset;
        if !valid_release_name(&d.name) {
            ctx.err("dataset.name", format!("\"{}\" is not a valid release name", d.name)).help = Some(format!(
                "start with a letter or digit, then letters, digits, '-', '_' and '.', {} characters at most (it \
                     names a folder inside the output folder)",
                crate::bounds::NAME_LENGTH
            ));
        }
        if !valid_semver(&d.version) {
            ctx.err("dataset.version", format!("\"{}\" is not a MAJOR.MINOR.PATCH version", d.version)).help =
                Some("write it like \"1.0.0\": three numbers without leading zeros".into());
        }
        if d.license.trim().is_empty() {
            ctx.err("dataset.license", "the licence is empty").help =
                Some("give the data's SPDX licence identifier, e.g. \"CC0-1.0\" or \"CC-BY-4.0\"".into());
        } else if !valid_license(&d.license) {
            ctx.err("dataset.license", format!("\"{}\" is not an SPDX licence expression", d.license.escape_debug())).help =
                Some("give an SPDX identifier or expression (\"CC-BY-4.0\", \"MIT OR Apache-2.0\"), or \"other\" and explain it in description".into());
        }
        for (key, url) in [("dataset.homepage", &d.homepage), ("dataset.repository", &d.repository)] {
            let Some(url) = url else { continue };
            if !valid_url(url) {
                ctx.err(key, format!("\"{}\" is not an http(s) URL", url.escape_debug())).help =
                    Some("write it like \"https://example.org/benchmark\"".into());
            } else if let Some(c) = outside_rfc_3986(url) {
                ctx.err(
                    key,
                    format!(
                        "\"{}\" holds {}, which a URL cannot hold as it is (RFC 3986)",
                        url.escape_debug(),
                        if c == '%' { "a '%' not followed by two hex digits".to_string() } else { format!("'{}'", c.escape_debug()) }
                    ),
                )
                .help = Some("percent-encode it (a space is %20, '{' is %7B): the card shows this URL and its rebuild commands use it".into());
            }
        }
        if let Some(date) = &d.date_published
            && !valid_date(date)
        {
            ctx.err("dataset.date-published", format!("\"{date}\" is not a YYYY-MM-DD date"));
        }
        let dataset = Dataset {
            name: d.name.clone(),
            version: d.version.clone(),
            license: d.license.clone(),
            citation: d.citation.clone(),
            description: d.description.clone(),
            homepage: d.homepage.clone(),
            repository: d.repository.clone(),
            seed: d.seed.unwrap_or(DEFAULT_SEED),
            date_published: d.date_published.clone(),
        };
        for key in w.datasheet.keys() {
            if crate::datasheet::question(key).is_none() {
                let ids: Vec<&str> = crate::datasheet::QUESTIONS.iter().map(|q| q.id).collect();
                let help = match crate::error::did_you_mean(key, ids.iter().copied()) {
                    Some(m) => format!("did you mean \"{m}\"? Questions: {}", ids.join(", ")),
                    None => format!("questions: {}", ids.join(", ")),
                };
                ctx.err(&format!("datasheet.{key}"), format!("\"{key}\" is not a datasheet question")).help =
                    Some(help);
            }
        }
        let ingest = ingest_plan(&w.ingest, &dataset, ctx);
        let StageSettings { diagnose, prune } =
            stage_settings(dataset.seed, (d.numeric.as_deref(), d.mra), w.diagnose.as_ref(), w.prune.as_ref(), ctx);
        let variants = w.variants.as_ref().map(|v| variants_config(v, dataset.seed, ctx));
        let scoring = (diagnose.numeric, diagnose.mra);
        let metrics = metrics_plan(w.predictions.as_ref(), w.metrics.as_ref(), dataset.seed, scoring, ctx);
        if prune.as_ref().is_some_and(|p| p.config.method == crate::prune::Method::Bclean) && metrics.is_none() {
            ctx.err("prune.method", "B-Clean needs model predictions").help =
                Some("add [predictions] with the models' mirage-mode prediction files".into());
        }
        let filter = w.filter.as_ref().and_then(|f| filter_rule(f, ctx));
        if filter.is_some() && metrics.is_none() {
            ctx.err("filter", "a filter needs model predictions").help = Some(
                "add [predictions] with the models' prediction files for the filter's conditions (ids <id>::no_image, ...)"
                    .into(),
            );
        }
        let leakage = w.leakage.as_ref().map(|l| leakage_plan(l, &dataset, ctx));
        let mut embed = EmbedPlan::default();
        if let Some(e) = &w.embed {
            embed.model_dir = e.model_dir.as_ref().and_then(|raw| ctx.resolve("embed.model-dir", raw));
            embed.max_length = e.max_length;
            if let Some(v) = e.max_length.and_then(|n| crate::bounds::check_count(&crate::bounds::MAX_LENGTH, n)) {
                ctx.err(v.key, v.message);
            }
        }
        // The first setting that needs the model, where the missing-model error points.
        let uses_diagnose = w.diagnose.is_some()
            || prune
                .as_ref()
                .is_some_and(|p| matches!(p.config.method, crate::prune::Method::Ibp | crate::prune::Method::Aflite));
        let asks = [
            ("diagnose.method", uses_diagnose && diagnose.method.needs_embeddings()),
            (
                "prune.representation",
                prune.as_ref().is_some_and(|p| {
                    p.config.method == crate::prune::Method::Aflite
                        && p.config.aflite.representation == crate::prune::Representation::Embeddings
                }),
            ),
            ("leakage", leakage.as_ref().is_some_and(|l| !l.exact_only)),
        ];
        if let Some((key, _)) = asks.iter().find(|(_, yes)| *yes) {
            embed.requested_by = Some((key.to_string(), ctx.loc(key)));
        }
        Pipeline {
            path: path.to_path_buf(),
            hash: hex::encode(Sha256::digest(bytes)),
            dataset,
            ingest,
            release: ReleasePlan { embed_images: w.release.embed_images, videos: w.release.videos },
            diagnose,
            run_diagnose: w.diagnose.is_some(),
            variants,
            prune,
            filter,
            metrics,
            embed,
            leakage,
            datasheet: w.datasheet,
        }
    }
}

std::thread_local! {
    /// The pipeline files being loaded on this thread, outermost first.
    static LOADING: std::cell::RefCell<Vec<PathBuf>> = const { std::cell::RefCell::new(Vec::new()) };
}
