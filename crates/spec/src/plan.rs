//! Validated pipeline: what the rest of blindspot sees. Built from the wire
//! types by [`Pipeline::load`], which reports every problem of a file at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use toml::Spanned;
use toml::de::DeTable;

use super::check::{self, SourceFile, span_of};
use super::wire::{IngestWire, PipelineWire};
use crate::error::OnInvalid;
use crate::error::{Error, Location, Pos, Problem, Result, display_path, line_col};
pub use crate::ingest::plan::{
    Accessor, AnswerKind, FieldMap, Filter, Format, IngestPlan, Input, MetaKeep, TemplatePart,
};

pub use crate::context::DEFAULT_SEED;

impl From<super::wire::FormatWire> for Format {
    fn from(w: super::wire::FormatWire) -> Format {
        use super::wire::FormatWire as W;
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

impl From<super::wire::AnswerKind> for AnswerKind {
    fn from(w: super::wire::AnswerKind) -> AnswerKind {
        use super::wire::AnswerKind as W;
        match w {
            W::Auto => AnswerKind::Auto,
            W::Letter => AnswerKind::Letter,
            W::Index => AnswerKind::Index,
            W::Index1 => AnswerKind::Index1,
            W::Text => AnswerKind::Text,
        }
    }
}

impl From<super::wire::OnInvalid> for OnInvalid {
    fn from(w: super::wire::OnInvalid) -> OnInvalid {
        match w {
            super::wire::OnInvalid::Error => OnInvalid::Error,
            super::wire::OnInvalid::Skip => OnInvalid::Skip,
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
    pub filter: Option<crate::prune::filter::Rule>,
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
    problems: Vec<Problem>,
}

impl Ctx<'_> {
    fn err(&mut self, key: &str, message: impl Into<String>) -> &mut Problem {
        let loc = self.src.loc(span_of(self.doc, key));
        self.problems.push(Problem::new(loc, message).field(key));
        self.problems.last_mut().expect("just pushed")
    }

    fn resolve(&mut self, key: &str, raw: &str) -> Option<PathBuf> {
        match expand_env(raw, self.vars) {
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
        let out = Pipeline::load_inner(path, vars);
        LOADING.with(|l| l.borrow_mut().pop());
        out
    }

    fn load_inner(path: &Path, vars: Vars<'_>) -> Result<Pipeline> {
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
        let mut ctx = Ctx { src, vars, doc: &doc, base, problems: Vec::new() };
        if !checked.problems.is_empty() {
            // Every problem at once: the rest of the file is checked without the
            // values the structural check rejected.
            let mut all = checked.problems;
            let rest = toml::from_str::<toml::Table>(&text)
                .ok()
                .map(|t| check::without(t, &checked.bad_paths))
                .and_then(|t| toml::Value::Table(t).try_into::<PipelineWire>().ok());
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
        let pipeline = Pipeline::from_wire(path, &bytes, wire, &mut ctx);
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
                super::bounds::NAME_LENGTH
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
            if super::datasheet::question(key).is_none() {
                let ids: Vec<&str> = super::datasheet::QUESTIONS.iter().map(|q| q.id).collect();
                let help = match crate::error::did_you_mean(key, ids.iter().copied()) {
                    Some(m) => format!("did you mean \"{m}\"? Questions: {}", ids.join(", ")),
                    None => format!("questions: {}", ids.join(", ")),
                };
                ctx.err(&format!("datasheet.{key}"), format!("\"{key}\" is not a datasheet question")).help =
                    Some(help);
            }
        }
        let ingest = ingest_plan(&w.ingest, &dataset, ctx);
        let mut diagnose = diagnose_config(w.diagnose.as_ref(), dataset.seed, ctx);
        let variants = w.variants.as_ref().map(|v| variants_config(v, ctx));
        let prune = w.prune.as_ref().map(|p| prune_plan(p, dataset.seed, ctx));
        let mut metrics = metrics_plan(w.predictions.as_ref(), w.metrics.as_ref(), dataset.seed, ctx);
        // One scoring of numeric answers for every stage.
        let (numeric, mra) = scoring(d, ctx);
        diagnose.numeric = numeric;
        diagnose.mra = mra;
        if let Some(m) = metrics.as_mut() {
            m.config.numeric = numeric;
            m.config.mra = mra;
        }
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
            if let Some(v) = e.max_length.and_then(|n| super::bounds::check_count(&super::bounds::MAX_LENGTH, n)) {
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
            embed.requested_by = Some((key.to_string(), ctx.src.loc(span_of(ctx.doc, key))));
        }
        if w.diagnose.as_ref().is_some_and(|d| d.score.is_some()) && diagnose.method != crate::diagnose::Method::Both {
            ctx.err("diagnose.score", "`score` combines two diagnostics").help =
                Some("set method = \"both\", or remove `score`".into());
        }
        if prune.as_ref().is_some_and(|p| p.config.method != crate::prune::Method::Aflite)
            && w.prune.as_ref().is_some_and(|p| p.representation.is_some())
        {
            ctx.err("prune.representation", "`representation` is an AFLite setting").help =
                Some("set method = \"aflite\", or remove `representation`".into());
        }
        Pipeline {
            path: path.to_path_buf(),
            hash: hex::encode(Sha256::digest(bytes)),
            dataset,
            ingest,
            release: ReleasePlan { embed_images: w.release.embed_images },
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
/// A `[[diagnose.recipes]]` entry as the featurizer's recipe source.
/// `[dataset] numeric` and `mra`: how every stage scores numeric answers.
fn scoring(d: &super::wire::DatasetWire, ctx: &mut Ctx<'_>) -> (crate::sample::NumericScoring, crate::sample::MraRule) {
    let mut numeric = crate::sample::NumericScoring::Exact;
    if let Some(n) = &d.numeric {
        match crate::sample::NumericScoring::parse(n) {
            Ok(n) => numeric = n,
            Err(e) => {
                ctx.err("dataset.numeric", e).help = Some("write \"exact\", \"mra\" or \"tolerance:0.05\"".into())
            }
        }
    }
    let mra = match d.mra {
        Some(super::wire::MraWire::Inclusive) => crate::sample::MraRule::Inclusive,
        _ => crate::sample::MraRule::Strict,
    };
    (numeric, mra)
}

/// A stage section that sets `numeric` or `mra`, which the dataset sets once for every stage.
fn moved_to_dataset(ctx: &mut Ctx<'_>, section: &str, numeric: Option<&str>, mra: Option<super::wire::MraWire>) {
    if let Some(n) = numeric {
        ctx.err(&format!("{section}.numeric"), "numeric answers are scored one way for every stage").help =
            Some(format!(
                "move it to [dataset]: numeric = \"{n}\" (diagnose, its baselines, pruning and metrics all use it)"
            ));
    }
    if mra.is_some() {
        ctx.err(&format!("{section}.mra"), "numeric answers are scored one way for every stage").help =
            Some("move it to [dataset]: mra = \"strict\" or \"inclusive\"".into());
    }
}

fn recipe_source(w: &super::wire::RecipeWire) -> crate::ml::recipes::RecipeSource {
    use super::wire::FamilyWire as W;
    use crate::ml::recipes::{ExtractSource, Family, RecipeSource, StatSource};
    let family = |f: &W| match f {
        W::Count => Family::Count,
        W::Moments => Family::Moments,
        W::LogMoments => Family::LogMoments,
        W::Gold => Family::Gold,
        W::LogDistance => Family::LogDistance,
        W::Value => Family::Value,
    };
    RecipeSource {
        name: w.name.clone(),
        types: w.types.clone(),
        extract: w.extract.iter().map(|e| ExtractSource { from: e.from.clone(), regex: e.regex.clone() }).collect(),
        stats: w
            .stats
            .iter()
            .map(|s| StatSource {
                key: s.key.to_vec(),
                ordered: s.ordered,
                families: s.families.iter().map(family).collect(),
            })
            .collect(),
        keywords: w.keywords.clone(),
    }
}

fn diagnose_config(
    w: Option<&super::wire::DiagnoseWire>,
    seed: u64,
    ctx: &mut Ctx<'_>,
) -> crate::diagnose::DiagnoseConfig {
    let mut cfg = crate::diagnose::DiagnoseConfig { seed, ..Default::default() };
    let Some(w) = w else { return cfg };
    cfg.folds = w.folds.unwrap_or(cfg.folds);
    if w.folds.is_some() {
        let at = ctx.src.loc(span_of(ctx.doc, "diagnose.folds"));
        cfg.folds_given = Some(crate::diagnose::FoldsGiven::Pipeline(at));
    }
    cfg.repeats = w.repeats.unwrap_or(cfg.repeats);
    cfg.trees = w.trees.unwrap_or(cfg.trees);
    cfg.regression_trees = w.regression_trees.unwrap_or(cfg.regression_trees);
    if let Some(g) = &w.group_by {
        match crate::diagnose::GroupBy::parse(g) {
            Ok(g) => cfg.group_by = Some(g),
            Err(e) => {
                ctx.err("diagnose.group-by", e).help =
                    Some("write \"image\", \"image-cluster\", \"question\" or \"meta:FIELD\"".into())
            }
        }
    }
    moved_to_dataset(ctx, "diagnose", w.numeric.as_deref(), w.mra);
    cfg.min_group = w.min_group.unwrap_or(cfg.min_group);
    cfg.features.cross_fit = w.cross_fit.unwrap_or(cfg.features.cross_fit);
    cfg.null.max_permutations = w.permutations.unwrap_or(cfg.null.max_permutations);
    if let Some(r) = &w.permutation_stop {
        match r.as_str() {
            "decided" => cfg.null.stopping = crate::stats::Stopping::Decided,
            "all" => cfg.null.stopping = crate::stats::Stopping::All,
            _ => {
                ctx.err("diagnose.permutation-stop", format!("\"{r}\" is not \"decided\" or \"all\"")).help =
                    Some("\"decided\" stops once p is decided at 0.05; \"all\" draws every permutation".into())
            }
        }
    }
    if let Some(n) = w.null_sample {
        if n >= 100 {
            cfg.null.sample_cap = n;
        } else {
            ctx.err("diagnose.null-sample", format!("{n} questions: the null needs a sample of at least 100"));
        }
    }
    if let Some(fields) = &w.meta_features {
        cfg.features.meta_fields = Some(fields.clone());
    }
    if let Some(m) = w.method {
        cfg.method = match m {
            super::wire::DiagnoseMethodWire::TstRf => crate::diagnose::Method::TstRf,
            super::wire::DiagnoseMethodWire::TstEmbed => crate::diagnose::Method::TstEmbed,
            super::wire::DiagnoseMethodWire::Both => crate::diagnose::Method::Both,
        };
    }
    if let Some(sc) = w.score {
        cfg.combine = match sc {
            super::wire::ScoreWire::Max => crate::diagnose::Combine::Max,
            super::wire::ScoreWire::Mean => crate::diagnose::Combine::Mean,
        };
    }
    let combine = w.combine.map(|c| match c {
        super::wire::ScoreWire::Max => crate::diagnose::Combine::Max,
        super::wire::ScoreWire::Mean => crate::diagnose::Combine::Mean,
    });
    match (&w.scores, combine) {
        (Some(raw), combine) => {
            if let Some(path) = ctx.resolve("diagnose.scores", raw) {
                cfg.outside_source = Some(crate::diagnose::outside::OutsideSource {
                    path,
                    written: raw.clone(),
                    combine: combine.unwrap_or_default(),
                });
            }
        }
        (None, Some(_)) => {
            ctx.err("diagnose.combine", "`combine` says how outside scores combine, and no `scores` are given").help =
                Some("add scores = \"path/to/scores.jsonl\", or remove `combine`".into())
        }
        (None, None) => {}
    }
    for v in super::bounds::diagnose(&cfg) {
        ctx.err(v.key, v.message);
    }
    let sources: Vec<crate::ml::recipes::RecipeSource> = w.recipes.iter().map(recipe_source).collect();
    match crate::ml::recipes::compile(&sources) {
        Ok(recipes) => cfg.features.recipes = recipes,
        Err(problems) => {
            for p in problems {
                ctx.err(&format!("diagnose.{}", p.key), p.message).help = p.help;
            }
        }
    }
    cfg
}

/// Validated `[predictions]` and `[metrics]` sections.
#[derive(Debug, Clone)]
pub struct MetricsPlan {
    /// Paths resolved against the pipeline's folder.
    pub files: Vec<crate::predictions::PredictionFile>,
    /// Each file's path as written in the pipeline (what reports show).
    pub written: Vec<String>,
    pub manifests: Vec<PathBuf>,
    pub config: crate::metrics::MetricsConfig,
    /// The gold-label audit's agreement rule.
    pub audit: crate::metrics::evidence::AuditRule,
}

fn metrics_plan(
    p: Option<&super::wire::PredictionsWire>,
    m: Option<&super::wire::MetricsWire>,
    seed: u64,
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
        config: MetricsConfig { seed, strict: p.strict, ..MetricsConfig::default() },
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
        if let Some(v) = super::bounds::check_count(&super::bounds::RESAMPLES, plan.config.resamples) {
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
        if let Some(a) = &m.audit_agree {
            match crate::metrics::evidence::AuditRule::parse(&a.text()) {
                Ok(r) => plan.audit = r,
                Err(e) => {
                    ctx.err("metrics.audit-agree", e);
                }
            }
        }
    }
    Some(plan)
}

/// A validated `[prune]` section.
#[derive(Debug, Clone)]
pub struct PrunePlan {
    pub config: crate::prune::PruneConfig,
    /// Also run the matched random control.
    pub control: bool,
}

fn prune_plan(w: &super::wire::PruneWire, seed: u64, ctx: &mut Ctx<'_>) -> PrunePlan {
    use super::wire::AmountWire;
    use crate::prune::{Allocation, Amount, Method, PruneConfig, Rank};
    let mut cfg = PruneConfig { seed, ..Default::default() };
    let mut amount = |key: &str, v: &AmountWire| -> Option<Amount> {
        let parsed = match v {
            AmountWire::Count(c) => Ok(Amount::Count(*c as usize)),
            AmountWire::Fraction(f) => Err(Amount::not_a_fraction(*f)),
            AmountWire::Text(t) => Amount::parse(t),
        };
        match parsed {
            Ok(a) => Some(a),
            Err(e) => {
                ctx.err(&format!("prune.{key}"), e).help = Some("write a count (800) or a percentage (\"20%\")".into());
                None
            }
        }
    };
    if let Some(a) = w.budget.as_ref().and_then(|b| amount("budget", b)) {
        cfg.budget = a;
    }
    if let Some(a) = w.batch.as_ref().and_then(|b| amount("batch", b)) {
        cfg.batch = a;
    }
    if let Some(m) = &w.method {
        match Method::parse(m) {
            Ok(m) => cfg.method = m,
            Err(e) => ctx.err("prune.method", e).help = Some("write \"ibp\", \"aflite\" or \"random\"".into()),
        }
    }
    if let Some(a) = &w.allocation {
        match Allocation::parse(a) {
            Ok(a) => cfg.allocation = a,
            Err(e) => {
                ctx.err("prune.allocation", e).help = Some("write \"global\", \"per-format\" or \"per-type\"".into())
            }
        }
    }
    if let Some(r) = &w.rank {
        match Rank::parse(r) {
            Ok(r) => cfg.rank = r,
            Err(e) => ctx.err("prune.rank", e).help = Some("write \"s\" or \"s-minus-chance\"".into()),
        }
    }
    cfg.floor = w.floor.unwrap_or(cfg.floor);
    cfg.threshold = w.threshold;
    if let Some(b) = w.stop_at_chance {
        ctx.err("prune.stop-at-chance", "stop-at-chance is replaced by `stop`").help = Some(format!(
            "write stop = \"{}\" instead (stop = \"null\", the default, stops where blind accuracy reaches its \
             label-permutation null)",
            if b { "chance" } else { "budget" }
        ));
    }
    if let Some(r) = &w.stop {
        match crate::prune::StopRule::parse(r) {
            Ok(r) => cfg.stop = r,
            Err(e) => ctx.err("prune.stop", e).help = Some("write \"null\", \"chance\" or \"budget\"".into()),
        }
    }
    if let Some(u) = &w.unit {
        match crate::prune::Unit::parse(u) {
            Ok(u) => cfg.unit = u,
            Err(e) => ctx.err("prune.unit", e).help = Some("write \"question\", \"image\" or \"meta:FIELD\"".into()),
        }
    }
    cfg.independent_seeds = w.independent_seeds.unwrap_or(cfg.independent_seeds);
    cfg.aflite.partitions = w.partitions.unwrap_or(cfg.aflite.partitions);
    cfg.aflite.train_fraction = w.train_fraction.unwrap_or(cfg.aflite.train_fraction);
    cfg.aflite.tau = w.tau.unwrap_or(cfg.aflite.tau);
    if let Some(r) = w.representation {
        cfg.aflite.representation = match r {
            super::wire::RepresentationWire::Features => crate::prune::Representation::Features,
            super::wire::RepresentationWire::Embeddings => crate::prune::Representation::Embeddings,
        };
    }
    cfg.bclean_models = w.models.clone();
    cfg.bclean_step3 = w.step3;
    cfg.bclean_remove_imageless = w.imageless == Some(super::wire::ImagelessWire::Remove);
    if cfg.method != Method::Bclean && (w.models.is_some() || w.step3 || w.imageless.is_some()) {
        ctx.err("prune.models", "`models`, `step3` and `imageless` are B-Clean settings").help =
            Some("set method = \"bclean\", or remove them".into());
    }
    if w.control && matches!(cfg.method, Method::Random | Method::Bclean) {
        ctx.err("prune.control", "the matched random control is for IBP and AFLite").help =
            Some("remove `control`, or set method = \"ibp\"".into());
    }
    for v in super::bounds::prune(&cfg) {
        ctx.err(v.key, v.message);
    }
    PrunePlan { config: cfg, control: w.control }
}

/// `[filter]`: a preset (its rule fixed) or a rule written out.
fn filter_rule(w: &super::wire::BlindFilterWire, ctx: &mut Ctx<'_>) -> Option<crate::prune::filter::Rule> {
    use crate::prune::filter::{MinCorrect, MinModels, Preset, Rule};
    let models = w.models.clone();
    if let Some(name) = &w.preset {
        let preset = match Preset::parse(name) {
            Ok(p) => p,
            Err(e) => {
                ctx.err("filter.preset", e);
                return None;
            }
        };
        for (key, set) in [
            ("conditions", w.conditions.is_some()),
            ("min-models", w.min_models.is_some()),
            ("min-correct", w.min_correct.is_some()),
        ] {
            if set {
                ctx.err(&format!("filter.{key}"), format!("preset \"{name}\" fixes `{key}` to its paper's")).help =
                    Some(
                        "remove it, or remove `preset` and write the whole rule (conditions, min-models, min-correct)"
                            .into(),
                    );
            }
        }
        return Some(preset.rule(models));
    }
    let Some(conditions) = w.conditions.clone() else {
        ctx.err("filter", "a filter needs a `preset` or its `conditions`").help = Some(
            "write preset = \"mmstar\", \"mmmu-pro\", \"emma\" or \"bclean\", or conditions = [\"no_image\"] with min-models and min-correct"
                .into(),
        );
        return None;
    };
    if let Err(e) = Rule::check_conditions(&conditions) {
        ctx.err("filter.conditions", e);
        return None;
    }
    let min_models = match w.min_models.as_ref().map(|c| MinModels::parse(&c.text())).transpose() {
        Ok(m) => m.unwrap_or(MinModels::Count(1)),
        Err(e) => {
            ctx.err("filter.min-models", e);
            return None;
        }
    };
    let min_correct = match w.min_correct.as_ref().map(|c| MinCorrect::parse(&c.text())).transpose() {
        Ok(m) => m.unwrap_or(MinCorrect::Majority),
        Err(e) => {
            ctx.err("filter.min-correct", e);
            return None;
        }
    };
    if models.as_ref().is_some_and(Vec::is_empty) {
        ctx.err("filter.models", "an empty list of models").help =
            Some("list the models, or remove `models` to use every model with predictions".into());
    }
    Some(Rule { preset: None, models, conditions, min_models, min_correct })
}

fn leakage_plan(w: &super::wire::LeakageWire, dataset: &Dataset, ctx: &mut Ctx<'_>) -> LeakagePlan {
    let threshold = w.threshold.unwrap_or(crate::embed::dups::DEFAULT_THRESHOLD);
    if let Some(v) = super::bounds::check_share("leakage.threshold", Some("--threshold"), threshold) {
        ctx.err(v.key, v.message).help = Some("a cosine similarity, e.g. 0.85 for near-verbatim copies".into());
    }
    if w.exact_only && w.threshold.is_some() {
        ctx.err("leakage.threshold", "`threshold` is for near-duplicates, and `exact-only` is set").help =
            Some("remove one of them".into());
    }
    let train = w.train.as_ref().and_then(|raw| {
        if raw.ends_with(".toml") {
            if w.format.is_some() || w.fields.is_some() {
                ctx.err("leakage.train", "a pipeline file reads the training split with its own [ingest]").help =
                    Some("remove `format` and `fields` from [leakage], or point `train` at the data file".into());
            }
            let path = ctx.resolve("leakage.train", raw)?;
            return match Pipeline::load_with(&path, ctx.vars) {
                Ok(p) => Some(p.ingest),
                Err(Error::Invalid(problems)) => {
                    ctx.problems.extend(problems);
                    None
                }
                Err(e) => {
                    ctx.err("leakage.train", e.to_string());
                    None
                }
            };
        }
        let wire = IngestWire {
            format: w.format,
            path: super::wire::OneOrMany::One(raw.clone()),
            records: None,
            sheet: None,
            header: None,
            columns: None,
            images: None,
            // Only the training split's texts are compared; its images are never read.
            image_names_only: true,
            max_image_pixels: None,
            split: Some("train".into()),
            benchmark: None,
            on_invalid: super::wire::OnInvalid::Skip,
            missing: None,
            fields: w.fields.clone().unwrap_or_default(),
            answer_map: BTreeMap::new(),
            filter: Vec::new(),
            shuffle_options: false,
            question_text: None,
            options_in_question: false,
            answer_format: None,
        };
        Some(ingest_plan_at("leakage", &wire, dataset, ctx))
    });
    LeakagePlan {
        train,
        train_written: w.train.clone(),
        threshold,
        exact_only: w.exact_only,
        prune: w.prune_duplicates,
    }
}

fn variants_config(w: &super::wire::VariantsWire, ctx: &mut Ctx<'_>) -> crate::variants::VariantsConfig {
    use crate::variants::{CaptionSource, VariantsConfig, parse_kind};
    let mut cfg = VariantsConfig { seed: w.seed, on_invalid: w.on_invalid.into(), ..Default::default() };
    if let Some(kinds) = &w.kinds {
        if kinds.is_empty() {
            ctx.err("variants.kinds", "no kinds listed").help =
                Some(format!("list some, or remove the key for all: {}", crate::variants::valid_kinds()));
        }
        cfg.kinds.clear();
        for k in kinds {
            match parse_kind(k) {
                Ok(sel) => cfg.kinds.push(sel),
                Err(e) => {
                    ctx.err("variants.kinds", e);
                }
            }
        }
    }
    if let Some(c) = &w.captions {
        match (&c.path, &c.meta) {
            (Some(raw), None) => {
                if let Some(path) = ctx.resolve("variants.captions.path", raw) {
                    if !path.is_file() {
                        ctx.err(
                            "variants.captions.path",
                            format!("caption file {} does not exist", display_path(&path)),
                        )
                        .help = Some("paths are relative to the pipeline file's folder".into());
                    }
                    cfg.captions = Some(CaptionSource::File { path, key: c.key.clone() });
                }
            }
            (None, Some(field)) if c.key.is_none() => cfg.captions = Some(CaptionSource::Meta(field.clone())),
            (None, Some(_)) => {
                ctx.err("variants.captions.key", "key applies to a caption file, not to a meta field");
            }
            (Some(_), Some(_)) => {
                ctx.err("variants.captions", "both path and meta are set").help = Some("keep one source".into());
            }
            (None, None) => {
                ctx.err("variants.captions", "no caption source").help =
                    Some("set path (a JSON file of {id: caption}) or meta (a meta field)".into());
            }
        }
    }
    cfg
}

fn accessor(ctx: &mut Ctx<'_>, key: &str, value: Option<&String>) -> Option<Accessor> {
    let value = value?;
    match Accessor::parse(value) {
        Ok(a) => Some(a),
        Err(e) => {
            ctx.err(key, e);
            None
        }
    }
}

fn ingest_plan(w: &IngestWire, dataset: &Dataset, ctx: &mut Ctx<'_>) -> IngestPlan {
    ingest_plan_at("ingest", w, dataset, ctx)
}

/// An ingest plan from `w`, whose problems are reported at keys under `section`
/// (`[leakage]` reads its training split with the same code; its path key is `train`).
fn ingest_plan_at(section: &str, w: &IngestWire, dataset: &Dataset, ctx: &mut Ctx<'_>) -> IngestPlan {
    let k = |s: &str| {
        if section == "leakage" && s == "path" { "leakage.train".to_string() } else { format!("{section}.{s}") }
    };
    let mut inputs = Vec::new();
    for raw in w.path.to_vec() {
        let Some(p) = ctx.resolve(&k("path"), &raw) else { continue };
        let pattern = p.to_string_lossy().to_string();
        let mut paths: Vec<PathBuf> = if pattern.contains(['*', '?', '[']) {
            match glob::glob(&pattern) {
                Ok(it) => it.filter_map(std::result::Result::ok).collect(),
                Err(e) => {
                    ctx.err(&k("path"), format!("bad glob pattern \"{raw}\": {e}"));
                    continue;
                }
            }
        } else if p.exists() {
            vec![p.clone()]
        } else {
            Vec::new()
        };
        paths.sort();
        if paths.is_empty() {
            ctx.err(&k("path"), format!("no file matches \"{raw}\" (looked for {})", display_path(&p))).help =
                Some("paths are relative to the pipeline file's folder".into());
        }
        for path in paths {
            let format = match w.format {
                Some(f) => Some(f.into()),
                None => Format::infer(&path),
            };
            match format {
                Some(format) => inputs.push(Input { path, format }),
                None => {
                    ctx.err(&k("path"), format!("cannot tell the format of {}", display_path(&path))).help =
                        Some("set [ingest] format = \"json\" | \"jsonl\" | \"csv\" | \"tsv\" | \"parquet\" | \"hf\" | \"vlmevalkit\" | \"imagefolder\"".into());
                }
            }
        }
    }
    let images_dir = w.images.as_ref().and_then(|raw| {
        let p = ctx.resolve(&k("images"), raw)?;
        if !p.is_dir() {
            ctx.err(&k("images"), format!("image folder {} does not exist", display_path(&p)));
        }
        Some(p)
    });
    if w.image_names_only && w.images.is_some() {
        ctx.err(&k("image-names-only"), "image-names-only is set, and so is an images folder").help = Some(
            "keep images (the folder the images are read from), or image-names-only when they are not at hand".into(),
        );
    }
    let f = &w.fields;
    let (options, options_letters) = match &f.options {
        None => (None, None),
        Some(super::wire::OptionsWire::Letters(l)) => (None, Some(l.letters)),
        Some(super::wire::OptionsWire::One(o)) => (accessor(ctx, &k("fields.options"), Some(o)).map(|a| vec![a]), None),
        Some(super::wire::OptionsWire::Many(list)) => {
            (Some(list.iter().filter_map(|s| accessor(ctx, &k("fields.options"), Some(s))).collect::<Vec<_>>()), None)
        }
    };
    if let Some(n) = options_letters
        && !(2..=26).contains(&n)
    {
        ctx.err(&k("fields.options.letters"), format!("must be between 2 and 26; found {n}"));
    }
    let images = f
        .images
        .as_ref()
        .map(|o| o.to_vec().iter().filter_map(|s| accessor(ctx, &k("fields.images"), Some(s))).collect::<Vec<_>>());
    let fields = FieldMap {
        id: accessor(ctx, &k("fields.id"), f.id.as_ref()),
        question: accessor(ctx, &k("fields.question"), f.question.as_ref()),
        context: accessor(ctx, &k("fields.context"), f.context.as_ref()),
        options,
        options_letters,
        answer: accessor(ctx, &k("fields.answer"), f.answer.as_ref()),
        answer_kind: f.answer_kind.into(),
        question_type: accessor(ctx, &k("fields.question-type"), f.question_type.as_ref()),
        images,
        meta: match &f.meta {
            None => MetaKeep::All,
            Some(v) if v.iter().any(|m| m == "*") => MetaKeep::All,
            Some(v) => MetaKeep::Fields(v.clone()),
        },
    };
    if f.question.is_some() && w.question_text.is_some() {
        ctx.err(&k("question-text"), "both question-text and fields.question are set").help =
            Some("keep one: question-text is a constant question for every row".into());
    }
    if w.options_in_question && f.options.is_some() {
        ctx.err(&k("options-in-question"), "options-in-question and fields.options are both set").help =
            Some("options come either from the question text or from fields".into());
    }
    for (i, filt) in w.filter.iter().enumerate() {
        if filt.any_of.is_none() && filt.not_in.is_none() {
            ctx.err(
                &k(&format!("filter[{i}]")),
                format!("filter on \"{}\" has neither \"in\" nor \"not-in\"", filt.field),
            );
        }
    }
    if let Some(records) = &w.records {
        if records.split('.').any(str::is_empty) {
            ctx.err(&k("records"), format!("records = \"{records}\" has an empty member name")).help =
                Some("a dot path of member names, e.g. \"questions\" or \"data.questions\"".into());
        }
        if let Some(input) = inputs.iter().find(|i| i.format != Format::Json) {
            ctx.err(&k("records"), format!("records is set but {} is not a .json file", display_path(&input.path)))
                .help = Some("records picks the member of a JSON document that holds the questions".into());
        }
    }
    if w.sheet.is_some()
        && let Some(input) = inputs.iter().find(|i| i.format != Format::Xlsx)
    {
        ctx.err(&k("sheet"), format!("sheet is set but {} is not a spreadsheet", display_path(&input.path))).help =
            Some("sheet picks the sheet of a .xlsx, .xls or .ods workbook that holds the questions".into());
    }
    let columns = match (w.header, &w.columns) {
        (Some(false), Some(c)) if !c.is_empty() => Some(c.clone()),
        (Some(false), _) => {
            ctx.err(&k("header"), "header = false, but no columns are named").help =
                Some("name the file's columns in order: columns = [\"id\", \"question\", \"answer\", ...]".into());
            None
        }
        (_, Some(_)) => {
            ctx.err(&k("columns"), "columns names the columns of a file without a header row").help =
                Some("set header = false as well, or remove columns to read the names from the header row".into());
            None
        }
        _ => None,
    };
    if columns.is_some()
        && let Some(input) = inputs.iter().find(|i| !matches!(i.format, Format::Csv | Format::Tsv))
    {
        ctx.err(
            &k("header"),
            format!("header = false is set but {} is not a CSV or TSV file", display_path(&input.path)),
        )
        .help = Some("a headerless file is read with format = \"csv\" or \"tsv\"".into());
    }
    IngestPlan {
        inputs,
        records: w.records.clone(),
        sheet: w.sheet.clone(),
        columns,
        images_dir,
        image_names_only: w.image_names_only,
        max_image_pixels: match w.max_image_pixels {
            Some(n) => {
                let bound = super::bounds::MAX_IMAGE_PIXELS;
                if n < bound.min || n > bound.max {
                    ctx.err(
                        &k("max-image-pixels"),
                        format!("must be between {} and {}; found {n}", bound.min, bound.max),
                    );
                }
                n
            }
            None => crate::ingest::images::MAX_PIXELS,
        },
        split: w.split.clone().unwrap_or_else(|| "test".into()),
        benchmark: w.benchmark.clone().unwrap_or_else(|| dataset.name.clone()),
        on_invalid: w.on_invalid.into(),
        missing: w.missing.clone().unwrap_or_else(|| vec!["NULL".into()]),
        fields,
        answer_map: w.answer_map.clone(),
        filters: w
            .filter
            .iter()
            .map(|f| Filter { field: f.field.clone(), any_of: f.any_of.clone(), not_in: f.not_in.clone() })
            .collect(),
        shuffle_options: w.shuffle_options,
        question_text: w.question_text.clone(),
        options_in_question: w.options_in_question,
        answer_format: w.answer_format,
        seed: dataset.seed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse() {
        assert_eq!(Accessor::parse("qid").unwrap(), Accessor::Path("qid".into()));
        let t = Accessor::parse("{_file}-{_key}").unwrap();
        assert_eq!(t.fields(), vec!["_file", "_key"]);
        assert!(Accessor::parse("{a").is_err());
        assert!(Accessor::parse("a}").is_err());
        assert!(Accessor::parse("{}").is_err());
    }
}

std::thread_local! {
    /// The pipeline files being loaded on this thread, outermost first.
    static LOADING: std::cell::RefCell<Vec<PathBuf>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A folder name that stays inside its parent: a letter or digit first, then
/// letters, digits, `-`, `_`, `.`.
fn valid_release_name(name: &str) -> bool {
    name.len() <= super::bounds::NAME_LENGTH
        && name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// `MAJOR.MINOR.PATCH`, each a number that fits 64 bits, without leading zeros.
fn valid_semver(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars().all(|c| c.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
                && p.parse::<u64>().is_ok()
        })
}

/// An SPDX licence expression: identifiers (letters, digits, `-`, `.`, `+`,
/// `LicenseRef-…`) joined by AND / OR / WITH, with parentheses; or `other`.
fn valid_license(l: &str) -> bool {
    let spaced = l.replace('(', " ( ").replace(')', " ) ");
    let tokens: Vec<&str> = spaced.split(' ').filter(|t| !t.is_empty()).collect();
    !tokens.is_empty()
        && l.chars().all(|c| c == ' ' || c == '(' || c == ')' || c.is_ascii_alphanumeric() || "-.+:".contains(c))
        && tokens.iter().all(|t| {
            matches!(*t, "AND" | "OR" | "WITH" | "(" | ")")
                || (t.chars().next().is_some_and(|c| c.is_ascii_alphanumeric()) && t.len() <= 64)
        })
}

/// An absolute `http` or `https` URL without spaces or control characters.
fn valid_url(u: &str) -> bool {
    let rest = u.strip_prefix("https://").or_else(|| u.strip_prefix("http://"));
    rest.is_some_and(|r| {
        !r.is_empty()
            && !r.starts_with('/')
            && !u.chars().any(|c| c.is_whitespace() || c.is_control() || "<>\"`".contains(c))
    })
}

/// The first character of `u` that RFC 3986 does not allow in a URL as it is
/// (outside the unreserved, reserved and percent-encoded characters), or a
/// `%` that does not start a `%XX` escape.
fn outside_rfc_3986(u: &str) -> Option<char> {
    let b = u.as_bytes();
    for (i, c) in u.char_indices() {
        let ok = c.is_ascii_alphanumeric()
            || "-._~:/?#[]@!$&'()*+,;=".contains(c)
            || (c == '%' && b.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)));
        if !ok {
            return Some(c);
        }
    }
    None
}

/// A calendar date `YYYY-MM-DD`.
fn valid_date(d: &str) -> bool {
    let b = d.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num =
        |r: std::ops::Range<usize>| d.get(r).filter(|s| s.chars().all(|c| c.is_ascii_digit()))?.parse::<u32>().ok();
    let (Some(y), Some(m), Some(day)) = (num(0..4), num(5..7), num(8..10)) else { return false };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

#[cfg(test)]
mod field_tests {
    use super::*;

    #[test]
    fn every_problem_of_a_file_is_reported_at_once_in_line_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("q.jsonl"), "{\"id\": \"1\", \"question\": \"q\", \"answer\": \"yes\"}\n")
            .unwrap();
        let file = dir.path().join("p.toml");
        // Line 4: an unknown key (structural); line 8: a bad budget (semantic);
        // line 9: a wrong type (structural); line 3: a bad version (semantic).
        let text = "[dataset]\nname = \"x\"\nversion = \"1.0\"\nlicence = \"MIT\"\nlicense = \"MIT\"\n\
                    [ingest]\npath = \"q.jsonl\"\n[prune]\nbudget = \"lots\"\nbatch = true\n";
        std::fs::write(&file, text).unwrap();
        let Err(Error::Invalid(problems)) = Pipeline::load(&file) else { panic!("the file has four problems") };
        let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        let line_of = |p: &Problem| match p.loc.pos {
            Pos::LineCol(l, _) => l,
            _ => 0,
        };
        assert_eq!(problems.iter().map(line_of).collect::<Vec<_>>(), vec![3, 4, 9, 10], "{lines:#?}");
        assert!(lines[0].contains("dataset.version"), "{lines:#?}");
        assert!(lines[1].contains("unknown key \"licence\""), "{lines:#?}");
        assert!(lines[2].contains("prune.budget"), "{lines:#?}");
        assert!(lines[3].contains("prune.batch"), "{lines:#?}");
    }

    #[test]
    fn dataset_fields_are_validated() {
        for ok in ["vqa-rad", "v1.2", "A_b"] {
            assert!(valid_release_name(ok), "{ok}");
        }
        for bad in ["..", ".", ".hidden", "a/b", ""] {
            assert!(!valid_release_name(bad), "{bad}");
        }
        // A name is a folder name: 100 characters at most.
        assert!(valid_release_name(&"a".repeat(100)));
        assert!(!valid_release_name(&"a".repeat(101)));
        assert!(valid_semver("1.0.0") && valid_semver("10.20.0"));
        for bad in ["01.0.0", "99999999999999999999.0.0", "1.0", "1.0.0-rc1"] {
            assert!(!valid_semver(bad), "{bad}");
        }
        for ok in ["CC0-1.0", "MIT OR Apache-2.0", "(MIT AND CC-BY-4.0)", "LicenseRef-my-terms", "other", "GPL-2.0+"] {
            assert!(valid_license(ok), "{ok}");
        }
        for bad in ["MIT\n---\n<script>alert(1)</script>", "MIT <b>", "a\"b"] {
            assert!(!valid_license(bad), "{bad}");
        }
        assert!(valid_url("https://osf.io/89kps/") && valid_url("http://example.org"));
        assert_eq!(outside_rfc_3986("https://github.com/org/repo.git"), None);
        assert_eq!(outside_rfc_3986("https://x.org/a%20b?q=1&r=(2)#frag"), None);
        assert_eq!(outside_rfc_3986("https://x/r;touch${IFS}PWNED;#"), Some('{'));
        assert_eq!(outside_rfc_3986("https://x/a%2"), Some('%'));
        assert_eq!(outside_rfc_3986("https://x/é"), Some('é'));
        assert_eq!(outside_rfc_3986("https://x/a|b"), Some('|'));
        for bad in ["javascript:alert(1)", "https://", "ftp://x", "https://a b", "https:///x"] {
            assert!(!valid_url(bad), "{bad}");
        }
        assert!(valid_date("2026-11-21") && valid_date("2024-02-29"));
        for bad in ["2026-13-45", "2025-02-29", "2026-1-01", "2026-00-10"] {
            assert!(!valid_date(bad), "{bad}");
        }
    }
}
