//! A command's INPUT and the settings it runs with, resolved once: a data
//! file or a pipeline file, read through a pipeline's `[ingest]` or through
//! the bare-input flags, with the command's flags laid over the pipeline's
//! sections. `blindspot diagnose` and `blindspot prune` take one resolved
//! struct each; nothing past it reads a default or re-derives a value.

use super::*;

/// INPUT as the command line gives it.
#[derive(Debug, Clone, Default)]
pub struct InputFlags {
    /// A benchmark file with canonical fields (or mapped by `fields`), or a
    /// pipeline file (.toml).
    pub input: PathBuf,
    /// `--pipeline`: a pipeline whose field mapping and stage settings apply to `input`.
    pub pipeline: Option<PathBuf>,
    /// `--field KEY=SOURCE`, for a data file read without a pipeline.
    pub fields: Vec<String>,
    /// `--images DIR`, for a data file read without a pipeline.
    pub images: Option<PathBuf>,
}

/// How INPUT is read, and the pipeline file (with the flags laid over it) that says so.
#[derive(Debug, Clone)]
pub struct InputPlan {
    pub pipeline: Option<Pipeline>,
    pub ingest: IngestPlan,
}

impl InputFlags {
    fn is_pipeline_file(&self) -> bool {
        self.input.extension().and_then(|e| e.to_str()) == Some("toml")
    }

    /// `--field` and `--images` apply to a data file read without a pipeline
    /// file: with one, its `[ingest]` section says how the file is read.
    pub fn check_no_pipeline(&self) -> Result<()> {
        let flag = match (self.fields.first(), &self.images) {
            (Some(_), _) => "--field",
            (None, Some(_)) => "--images",
            (None, None) => return Ok(()),
        };
        Err(Error::one(
            Problem::new(Location::file(COMMAND_LINE), "applies to a data file read without a pipeline file")
                .field(flag)
                .help(
                    "with a pipeline, map fields under [ingest.fields] and set the image folder with [ingest] images",
                ),
        ))
    }
}

/// INPUT's plan: the pipeline (`--pipeline`, or INPUT itself when it is a
/// .toml file) with `flags` laid over it, reading INPUT through its
/// `[ingest]`; else INPUT read with canonical names and the bare-input flags.
pub fn input_plan(input: &InputFlags, flags: &Flags) -> Result<InputPlan> {
    // The flags are checked before any file is read: a mistake on the command
    // line is named whatever the pipeline file holds.
    if input.pipeline.is_some() || input.is_pipeline_file() {
        input.check_no_pipeline()?;
    }
    let pipeline = match (&input.pipeline, input.is_pipeline_file()) {
        (Some(p), _) => Some(Pipeline::load_flagged(p, &env_vars, flags)?),
        (None, true) => Some(Pipeline::load_flagged(&input.input, &env_vars, flags)?),
        (None, false) => None,
    };
    let ingest = match &pipeline {
        Some(p) if !input.is_pipeline_file() => {
            let mut plan = p.ingest.clone();
            let format = Format::infer(&input.input).unwrap_or(Format::Json);
            plan.inputs = vec![Input { path: input.input.clone(), format }];
            plan
        }
        Some(p) => p.ingest.clone(),
        None => bare_input_plan(&input.input, &input.fields, input.images.as_deref())?,
    };
    Ok(InputPlan { pipeline, ingest })
}

/// The pipeline's stage settings with the flags laid over them, or, without a
/// pipeline, the flags over the defaults.
fn stage_settings_of(plan: &InputPlan, flags: &Flags) -> Result<StageSettings> {
    match &plan.pipeline {
        Some(p) => Ok(StageSettings { diagnose: p.diagnose.clone(), prune: p.prune.clone() }),
        None => flag_settings(flags),
    }
}

/// Where the meta fields a run names were written: the command line when a
/// flag names one, else the pipeline file.
fn meta_fields_at(plan: &InputPlan, flags: &Flags) -> Location {
    match &plan.pipeline {
        Some(p) if flags.diagnose.group_by.is_none() && flags.diagnose.meta_features.is_none() => {
            Location::file(&p.path)
        }
        _ => Location::file(COMMAND_LINE),
    }
}

/// The settings `blindspot diagnose` runs with.
#[derive(Debug, Clone)]
pub struct DiagnoseSettings {
    pub input: InputPlan,
    /// TsT-RF's settings: this command is TsT-RF (TsT-Embed, `[diagnose]
    /// method`, runs in `build` and `prune`).
    pub config: crate::diagnose::DiagnoseConfig,
    /// Where the meta fields the settings name were written.
    pub at: Location,
}

/// `blindspot diagnose`'s settings: INPUT's plan, and `[diagnose]` (flag, else
/// the pipeline's key, else the default) as TsT-RF.
pub fn diagnose_settings(input: &InputFlags, flags: &Flags) -> Result<DiagnoseSettings> {
    let plan = input_plan(input, flags)?;
    let mut config = stage_settings_of(&plan, flags)?.diagnose;
    config.method = crate::diagnose::Method::TstRf;
    let at = meta_fields_at(&plan, flags);
    Ok(DiagnoseSettings { input: plan, config, at })
}

/// The sentence-embedding model a run loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelPlan {
    /// `--model-dir`, else the pipeline's `[embed] model-dir`, else
    /// $BLINDSPOT_MODEL_DIR, else the default folder; checked to hold the
    /// model's files.
    pub dir: PathBuf,
    /// The pipeline's `[embed] max-length`.
    pub max_length: Option<usize>,
}

/// The model `--model-dir` and `--max-length` name (`blindspot embed`,
/// `blindspot dups`), `--max-length` checked against its bound.
pub fn model_plan(dir: Option<PathBuf>, max_length: Option<usize>) -> Result<ModelPlan> {
    if let Some(v) = max_length.and_then(|n| crate::bounds::check_count(&crate::bounds::MAX_LENGTH, n)) {
        return Err(Error::one(Problem::new(Location::file(COMMAND_LINE), v.for_flag())));
    }
    Ok(ModelPlan { dir: crate::embed::model::resolve_model_dir(dir.as_deref())?, max_length })
}

/// The pipeline files named, or every `pipelines/*.toml` (sorted).
pub fn pipeline_files(given: &[PathBuf]) -> Result<Vec<PathBuf>> {
    if !given.is_empty() {
        return Ok(given.to_vec());
    }
    let dir = PathBuf::from("pipelines");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| Error::io(&dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("toml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::one(Problem::new(Location::file(&dir), "no pipeline files (*.toml) found")));
    }
    Ok(files)
}

/// The settings `blindspot prune` runs with.
#[derive(Debug, Clone)]
pub struct PruneSettings {
    pub input: InputPlan,
    pub diagnose: crate::diagnose::DiagnoseConfig,
    pub prune: PrunePlan,
    /// Where the meta fields the settings name were written.
    pub at: Location,
    /// Where `[prune] unit` was written.
    pub unit_at: Location,
    /// The model, when the settings use embeddings.
    pub model: Option<ModelPlan>,
}

/// `blindspot prune`'s settings: INPUT's plan, `[diagnose]` and `[prune]`
/// (flag, else the pipeline's key, else the default; a pipeline without
/// `[prune]` prunes as an empty one does), and the model when a setting uses
/// embeddings (`model_dir` is `--model-dir`). B-Clean is refused: it needs
/// predictions, which this command does not read.
pub fn prune_settings(input: &InputFlags, flags: &Flags, model_dir: Option<PathBuf>) -> Result<PruneSettings> {
    let plan = input_plan(input, flags)?;
    let (diagnose, prune) = stage_settings_of(&plan, flags)?.for_pruning();
    if prune.config.method == crate::prune::Method::Bclean {
        return Err(Error::one(Problem::new(
            Location::file(COMMAND_LINE),
            "B-Clean needs model predictions: run `blindspot metrics --bclean`, or use a pipeline with [predictions] \
             and `blindspot build`",
        )));
    }
    let unit_at = match (&plan.pipeline, flags.prune.as_ref().and_then(|p| p.unit.as_ref())) {
        (Some(p), None) => Location::file(&p.path),
        _ => Location::file(COMMAND_LINE),
    };
    let model = match crate::prune::needs_embeddings(&prune.config, &diagnose) {
        true => {
            let dir = model_dir.or_else(|| plan.pipeline.as_ref().and_then(|p| p.embed.model_dir.clone()));
            Some(ModelPlan {
                dir: crate::embed::model::resolve_model_dir(dir.as_deref())?,
                max_length: plan.pipeline.as_ref().and_then(|p| p.embed.max_length),
            })
        }
        false => None,
    };
    let at = meta_fields_at(&plan, flags);
    Ok(PruneSettings { input: plan, diagnose, prune, at, unit_at, model })
}

/// `blindspot dups`' command line: the benchmark, a training split, and the
/// thresholds.
#[derive(Debug, Clone, Default)]
pub struct DupsFlags {
    pub input: InputFlags,
    /// `--train` and `--train-pipeline`: a training split, read as INPUT is.
    pub train: Option<InputFlags>,
    /// `--threshold`: the cosine similarity of near-duplicate questions.
    pub threshold: f64,
    /// `--image-threshold`: the phash distance (bits) of near-duplicate images.
    pub image_threshold: u32,
}

/// The settings `blindspot dups` runs with.
#[derive(Debug, Clone)]
pub struct DupsSettings {
    pub input: InputPlan,
    pub train: Option<InputPlan>,
    pub threshold: f64,
    pub image_threshold: u32,
}

/// `blindspot dups`' settings: the thresholds checked against their bounds,
/// then INPUT's plan and the training split's.
pub fn dups_settings(flags: &DupsFlags) -> Result<DupsSettings> {
    if let Some(v) = crate::bounds::check_share("leakage.threshold", flags.threshold) {
        return Err(Error::one(
            Problem::new(Location::file(COMMAND_LINE), v.for_flag()).help("a cosine similarity threshold, e.g. 0.85"),
        ));
    }
    let max = crate::sample::image_hash::MAX_THRESHOLD;
    if flags.image_threshold > max {
        return Err(Error::one(
            Problem::new(
                Location::file(COMMAND_LINE),
                format!(
                    "--image-threshold {} is more than {max} bits: unrelated images would join",
                    flags.image_threshold
                ),
            )
            .help(format!("give 0 to {max} (default {})", crate::sample::image_hash::DEFAULT_THRESHOLD)),
        ));
    }
    let input = input_plan(&flags.input, &Flags::default())?;
    let train = flags.train.as_ref().map(|t| input_plan(t, &Flags::default())).transpose()?;
    Ok(DupsSettings { input, train, threshold: flags.threshold, image_threshold: flags.image_threshold })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{DiagnoseWire, PruneWire};

    /// A data file and, with `sections`, a pipeline file (`[dataset] seed = 7`)
    /// that reads it.
    fn files(dir: &Path, sections: &str) -> (PathBuf, PathBuf) {
        let data = dir.join("b.jsonl");
        std::fs::write(&data, "{\"id\": \"q1\", \"question\": \"Q?\", \"answer\": \"yes\"}\n").unwrap();
        let text = format!(
            "[dataset]\nname = \"b\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\nseed = 7\n\n[ingest]\npath = \
             \"b.jsonl\"\n{sections}"
        );
        let pipeline = dir.join("p.toml");
        std::fs::write(&pipeline, text).unwrap();
        (data, pipeline)
    }

    fn folds(n: usize) -> Flags {
        Flags { diagnose: DiagnoseWire { folds: Some(n), ..Default::default() }, ..Default::default() }
    }

    /// `blindspot diagnose`'s settings resolve once: `--folds`, else the
    /// pipeline's `[diagnose] folds`, else the default; the seed is the
    /// pipeline's, else 42; the method is TsT-RF whatever the file says; meta
    /// fields are located in the file unless a flag names them.
    #[test]
    fn the_diagnose_settings_resolve_once_from_flag_file_default() {
        let dir = tempfile::tempdir().unwrap();
        let (data, pipeline) = files(dir.path(), "\n[diagnose]\nfolds = 4\nmethod = \"both\"\n");
        let with = |pipeline: Option<&PathBuf>, flags: &Flags| {
            let input = InputFlags { input: data.clone(), pipeline: pipeline.cloned(), ..Default::default() };
            diagnose_settings(&input, flags).unwrap()
        };
        let default = crate::diagnose::DiagnoseConfig::default();
        let s = with(Some(&pipeline), &folds(3));
        assert_eq!((s.config.folds, s.config.seed, s.config.method), (3, 7, crate::diagnose::Method::TstRf));
        assert_eq!(s.input.ingest.inputs[0].path, data, "INPUT is read through the pipeline's [ingest]");
        assert_eq!(s.at, Location::file(&pipeline));
        let s = with(Some(&pipeline), &Flags::default());
        assert_eq!((s.config.folds, s.config.method), (4, crate::diagnose::Method::TstRf));
        let s = with(None, &Flags::default());
        assert_eq!((s.config.folds, s.config.seed), (default.folds, DEFAULT_SEED));
        assert!(s.input.pipeline.is_none());
        assert_eq!(s.at, Location::file(COMMAND_LINE));
        let named = Flags {
            diagnose: DiagnoseWire { group_by: Some("meta:x".into()), ..Default::default() },
            ..Default::default()
        };
        assert_eq!(with(Some(&pipeline), &named).at, Location::file(COMMAND_LINE));
        // The bare-input flags apply without a pipeline only.
        let input = InputFlags {
            input: data.clone(),
            pipeline: Some(pipeline),
            images: Some(dir.path().into()),
            ..Default::default()
        };
        assert_eq!(
            diagnose_settings(&input, &Flags::default()).unwrap_err().to_string(),
            "error: command line: field \"--images\": applies to a data file read without a pipeline file\n  help: \
             with a pipeline, map fields under [ingest.fields] and set the image folder with [ingest] images"
        );
    }

    fn floor(n: usize) -> Flags {
        Flags { prune: Some(PruneWire { floor: Some(n), ..Default::default() }), ..Default::default() }
    }

    /// `blindspot prune`'s settings resolve once: `--floor`, else the
    /// pipeline's `[prune] floor`, else the default (a pipeline without
    /// `[prune]` prunes as an empty one does); `unit` is located where it was
    /// written; the model folder is `--model-dir`, else `[embed] model-dir`,
    /// and only when a setting uses embeddings; B-Clean is refused.
    #[test]
    fn the_prune_settings_resolve_once_from_flag_file_default() {
        let dir = tempfile::tempdir().unwrap();
        let (data, pipeline) = files(
            dir.path(),
            "\n[prune]\nfloor = 5\nmethod = \"aflite\"\nrepresentation = \"embeddings\"\n\n[embed]\nmodel-dir = \"m\"\n",
        );
        let input = |pipeline: Option<&PathBuf>| InputFlags {
            input: data.clone(),
            pipeline: pipeline.cloned(),
            ..Default::default()
        };
        // Without the model's files the settings say where they were looked for.
        let e = prune_settings(&input(Some(&pipeline)), &floor(3), None).unwrap_err().to_string();
        assert!(
            e.contains(&format!(
                "{}: the sentence-embedding model is not installed",
                display_path(&dir.path().join("m"))
            )),
            "{e}"
        );
        let flag = dir.path().join("flag");
        for m in [dir.path().join("m"), flag.clone()] {
            std::fs::create_dir(&m).unwrap();
            for f in crate::embed::model::REQUIRED_FILES {
                std::fs::write(m.join(f), "").unwrap();
            }
        }
        let s = prune_settings(&input(Some(&pipeline)), &floor(3), None).unwrap();
        assert_eq!((s.prune.config.floor, s.prune.config.seed), (3, 7));
        assert_eq!(s.unit_at, Location::file(&pipeline));
        assert_eq!(s.model, Some(ModelPlan { dir: dir.path().join("m"), max_length: None }));
        let s = prune_settings(&input(Some(&pipeline)), &Flags::default(), Some(flag.clone())).unwrap();
        assert_eq!(s.prune.config.floor, 5);
        assert_eq!(s.model.unwrap().dir, flag);
        let s = prune_settings(&input(None), &Flags::default(), None).unwrap();
        let default = crate::prune::PruneConfig::default();
        assert_eq!((s.prune.config.floor, s.prune.config.seed), (default.floor, DEFAULT_SEED));
        assert_eq!((s.model, s.prune.control), (None, false));
        let unit =
            Flags { prune: Some(PruneWire { unit: Some("image".into()), ..Default::default() }), ..Default::default() };
        assert_eq!(prune_settings(&input(Some(&pipeline)), &unit, None).unwrap().unit_at, Location::file(COMMAND_LINE));
        let bclean = Flags {
            prune: Some(PruneWire { method: Some("bclean".into()), ..Default::default() }),
            ..Default::default()
        };
        assert_eq!(
            prune_settings(&input(None), &bclean, None).unwrap_err().to_string(),
            "error: command line: B-Clean needs model predictions: run `blindspot metrics --bclean`, or use a \
             pipeline with [predictions] and `blindspot build`"
        );
    }

    /// `blindspot dups`' thresholds are checked against their bounds before
    /// any file is read, each refusal naming the flag; the training split is
    /// read as INPUT is, through its own pipeline.
    #[test]
    fn the_dups_settings_check_the_thresholds_then_plan_both_splits() {
        let dir = tempfile::tempdir().unwrap();
        let (data, pipeline) = files(dir.path(), "");
        let flags = |threshold: f64, image_threshold: u32| DupsFlags {
            input: InputFlags { input: dir.path().join("missing.jsonl"), ..Default::default() },
            train: None,
            threshold,
            image_threshold,
        };
        assert_eq!(
            dups_settings(&flags(0.85, 13)).unwrap_err().to_string(),
            "error: command line: --image-threshold 13 is more than 12 bits: unrelated images would join\n  help: \
             give 0 to 12 (default 6)"
        );
        let shares = dups_settings(&flags(1.5, 6)).unwrap_err().to_string();
        assert!(shares.starts_with("error: command line: --threshold"), "{shares}");
        assert!(shares.ends_with("help: a cosine similarity threshold, e.g. 0.85"), "{shares}");
        let s = dups_settings(&DupsFlags {
            input: InputFlags { input: data.clone(), ..Default::default() },
            train: Some(InputFlags { input: data.clone(), pipeline: Some(pipeline.clone()), ..Default::default() }),
            threshold: 0.9,
            image_threshold: 4,
        })
        .unwrap();
        assert!(s.input.pipeline.is_none());
        assert_eq!(s.train.as_ref().and_then(|t| t.pipeline.as_ref()).map(|p| p.path.clone()), Some(pipeline));
        assert_eq!(s.train.unwrap().ingest.inputs[0].path, data);
        assert_eq!((s.threshold, s.image_threshold), (0.9, 4));
    }
}
