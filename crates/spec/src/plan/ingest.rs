//! `[ingest]`, and `[leakage]`, whose training split is read with the same code.

use super::*;

pub(super) fn leakage_plan(w: &crate::wire::LeakageWire, dataset: &Dataset, ctx: &mut Ctx<'_>) -> LeakagePlan {
    let threshold = w.threshold.unwrap_or(crate::embed::dups::DEFAULT_THRESHOLD);
    if let Some(v) = crate::bounds::check_share("leakage.threshold", threshold) {
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
            path: crate::wire::OneOrMany::One(raw.clone()),
            records: None,
            sheet: None,
            header: None,
            columns: None,
            images: None,
            videos: None,
            // Only the training split's texts are compared; its images are never read.
            image_names_only: true,
            max_image_pixels: None,
            split: Some("train".into()),
            benchmark: None,
            on_invalid: crate::wire::OnInvalid::Skip,
            missing: None,
            fields: w.fields.clone().unwrap_or_default(),
            answer_map: BTreeMap::new(),
            reference_answers: None,
            filter: Vec::new(),
            join: Vec::new(),
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

pub(super) fn accessor(ctx: &mut Ctx<'_>, key: &str, value: Option<&String>) -> Option<Accessor> {
    let value = value?;
    match Accessor::parse(value) {
        Ok(a) => Some(a),
        Err(e) => {
            ctx.err(key, e);
            None
        }
    }
}

/// `[ingest.fields]` (or the `--field` flags) as the field mapping ingest takes;
/// problems are reported at `k("fields.<key>")`.
fn field_map(ctx: &mut Ctx<'_>, k: &dyn Fn(&str) -> String, f: &crate::wire::FieldsWire) -> FieldMap {
    let (options, options_letters) = match &f.options {
        None => (None, None),
        Some(crate::wire::OptionsWire::Letters(l)) => (None, Some(l.letters)),
        Some(crate::wire::OptionsWire::One(o)) => (accessor(ctx, &k("fields.options"), Some(o)).map(|a| vec![a]), None),
        Some(crate::wire::OptionsWire::Many(list)) => {
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
    let videos = f
        .videos
        .as_ref()
        .map(|o| o.to_vec().iter().filter_map(|s| accessor(ctx, &k("fields.videos"), Some(s))).collect::<Vec<_>>());
    let video_frames = accessor(ctx, &k("fields.video-frames"), f.video_frames.as_ref());
    FieldMap {
        id: accessor(ctx, &k("fields.id"), f.id.as_ref()),
        question: accessor(ctx, &k("fields.question"), f.question.as_ref()),
        context: accessor(ctx, &k("fields.context"), f.context.as_ref()),
        options,
        options_letters,
        answer: accessor(ctx, &k("fields.answer"), f.answer.as_ref()),
        answer_kind: f.answer_kind.into(),
        question_type: accessor(ctx, &k("fields.question-type"), f.question_type.as_ref()),
        images,
        videos,
        video_frames,
        meta: match &f.meta {
            None => MetaKeep::All,
            Some(v) if v.iter().any(|m| m == "*") => MetaKeep::All,
            Some(v) => MetaKeep::Fields(v.clone()),
        },
    }
}

pub(super) fn ingest_plan(w: &IngestWire, dataset: &Dataset, ctx: &mut Ctx<'_>) -> IngestPlan {
    ingest_plan_at("ingest", w, dataset, ctx)
}

/// An ingest plan from `w`, whose problems are reported at keys under `section`
/// (`[leakage]` reads its training split with the same code; its path key is `train`).
pub(super) fn ingest_plan_at(section: &str, w: &IngestWire, dataset: &Dataset, ctx: &mut Ctx<'_>) -> IngestPlan {
    let k = |s: &str| {
        if section == "leakage" && s == "path" { "leakage.train".to_string() } else { format!("{section}.{s}") }
    };
    let inputs = input_files(w, ctx, &k);
    let joins = joins(w, ctx, &k);
    let images_dir = w.images.as_ref().and_then(|raw| folder(ctx, &k("images"), raw, "image"));
    let videos_dir = w.videos.as_ref().and_then(|raw| folder(ctx, &k("videos"), raw, "video"));
    let fields = field_map(ctx, &k, &w.fields);
    check_settings(w, &fields, &inputs, ctx, &k);
    let columns = headerless_columns(w, &inputs, ctx, &k);
    IngestPlan {
        inputs,
        joins,
        records: w.records.clone(),
        sheet: w.sheet.clone(),
        columns,
        header_said: w.header == Some(true),
        images_dir,
        videos_dir,
        image_names_only: w.image_names_only,
        images_beside: false,
        max_image_pixels: max_image_pixels(w, ctx, &k),
        split: w.split.clone().unwrap_or_else(|| "test".into()),
        benchmark: w.benchmark.clone().unwrap_or_else(|| dataset.name.clone()),
        reference_answers: w.reference_answers.map(|r| match r {
            crate::wire::ReferenceAnswers::Majority => crate::plan::ReferenceAnswers::Majority,
            crate::wire::ReferenceAnswers::First => crate::plan::ReferenceAnswers::First,
        }),
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

/// The input files `path` names (globs expanded, sorted), each with its format.
fn input_files(w: &IngestWire, ctx: &mut Ctx<'_>, k: &dyn Fn(&str) -> String) -> Vec<Input> {
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
    inputs
}

/// The joined files, each resolved with its format; a missing file, an unknown
/// format or an empty `on` is an error at its key.
fn joins(w: &IngestWire, ctx: &mut Ctx<'_>, k: &dyn Fn(&str) -> String) -> Vec<crate::plan::JoinPlan> {
    let mut out = Vec::new();
    for (i, j) in w.join.iter().enumerate() {
        let key = |s: &str| format!("{}[{i}].{s}", k("join"));
        if j.on.trim().is_empty() {
            ctx.err(&key("on"), "names no field").help = Some("on = \"question_id\": a field both files hold".into());
        }
        let Some(path) = ctx.resolve(&key("path"), &j.path) else { continue };
        if !path.is_file() {
            ctx.err(&key("path"), format!("no file {}", display_path(&path))).help =
                Some("paths are relative to the pipeline file's folder".into());
            continue;
        }
        let format = match j.format {
            Some(f) => Some(f.into()),
            None => Format::infer(&path),
        };
        match format {
            Some(format) => out.push(crate::plan::JoinPlan {
                input: Input { path, format },
                on: j.on.trim().to_string(),
                records: j.records.clone(),
            }),
            None => {
                ctx.err(&key("path"), format!("cannot tell the format of {}", display_path(&path))).help =
                    Some("set its format = \"json\" | \"jsonl\" | \"csv\" | \"tsv\" | \"parquet\"".into());
            }
        }
    }
    out
}

/// The `what` folder (image or video) at `raw`, resolved; an error at `key` when
/// it is not a folder.
fn folder(ctx: &mut Ctx<'_>, key: &str, raw: &str, what: &str) -> Option<PathBuf> {
    let p = ctx.resolve(key, raw)?;
    if !p.is_dir() {
        ctx.err(key, format!("{what} folder {} does not exist", display_path(&p)));
    }
    Some(p)
}

/// Settings that contradict each other or the input files.
fn check_settings(w: &IngestWire, fields: &FieldMap, inputs: &[Input], ctx: &mut Ctx<'_>, k: &dyn Fn(&str) -> String) {
    if w.image_names_only && w.images.is_some() {
        ctx.err(&k("image-names-only"), "image-names-only is set, and so is an images folder").help = Some(
            "keep images (the folder the images are read from), or image-names-only when they are not at hand".into(),
        );
    }
    let f = &w.fields;
    if (fields.videos.is_some() || fields.video_frames.is_some()) && w.videos.is_none() {
        ctx.err(&k("fields.videos"), "a video field is mapped, but no video folder is set").help =
            Some("set [ingest] videos = \"<the folder that holds the videos>\" (relative to the pipeline file)".into());
    }
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
}

/// The column names of a headerless CSV/TSV (`header = false` with `columns`).
fn headerless_columns(
    w: &IngestWire,
    inputs: &[Input],
    ctx: &mut Ctx<'_>,
    k: &dyn Fn(&str) -> String,
) -> Option<Vec<String>> {
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
    columns
}

/// `max-image-pixels` within its bound, or the default.
fn max_image_pixels(w: &IngestWire, ctx: &mut Ctx<'_>, k: &dyn Fn(&str) -> String) -> u64 {
    match w.max_image_pixels {
        Some(n) => {
            let bound = crate::bounds::MAX_IMAGE_PIXELS;
            if n < bound.min || n > bound.max {
                ctx.err(&k("max-image-pixels"), format!("must be between {} and {}; found {n}", bound.min, bound.max));
            }
            n
        }
        None => crate::ingest::images::MAX_PIXELS,
    }
}

/// The keys of `[ingest.fields]`, which `--field KEY=SOURCE` takes too.
pub const FIELD_KEYS: [&str; 9] =
    ["id", "question", "context", "options", "answer", "answer-kind", "question-type", "images", "meta"];

/// `--field KEY=SOURCE` flags as `[ingest.fields]`: the same keys and values, a
/// list (`options`, `images`, `meta`) written with commas (`--field options=A,B,C,D`).
pub fn fields_from_flags(flags: &[String]) -> Result<crate::wire::FieldsWire> {
    let mut table = toml::Table::new();
    let mut problems = Vec::new();
    let at = |_: &str| Location::file(COMMAND_LINE);
    for flag in flags {
        let Some((key, value)) = flag.split_once('=') else {
            problems.push(
                Problem::new(at(flag), format!("\"{flag}\": expected KEY=SOURCE"))
                    .field("--field")
                    .help("e.g. --field id=question_id (the keys of [ingest.fields])"),
            );
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if !FIELD_KEYS.contains(&key) {
            let hint = match crate::error::did_you_mean(&key.replace('_', "-"), FIELD_KEYS) {
                Some(m) => {
                    format!("did you mean \"{m}\"? The keys are those of [ingest.fields]: {}", FIELD_KEYS.join(", "))
                }
                None => format!("the keys are those of [ingest.fields]: {}", FIELD_KEYS.join(", ")),
            };
            problems.push(
                Problem::new(at(flag), format!("\"{flag}\": no canonical field \"{key}\"")).field("--field").help(hint),
            );
            continue;
        }
        if table.contains_key(key) {
            problems.push(
                Problem::new(at(flag), format!("\"{key}\" is given twice"))
                    .field("--field")
                    .help("give each canonical field once; a list is written with commas (--field options=A,B,C,D)"),
            );
            continue;
        }
        let v = if matches!(key, "options" | "images" | "meta") && value.contains(',') {
            toml::Value::Array(value.split(',').map(|s| toml::Value::String(s.trim().to_string())).collect())
        } else if key == "meta" {
            toml::Value::Array(vec![toml::Value::String(value.to_string())])
        } else {
            toml::Value::String(value.to_string())
        };
        table.insert(key.to_string(), v);
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(problems));
    }
    let given = table.keys().cloned().collect::<Vec<_>>().join(", ");
    toml::Value::Table(table).try_into::<crate::wire::FieldsWire>().map_err(|e| {
        Error::one(
            Problem::new(Location::file(COMMAND_LINE), format!("{given}: {}", e.message().trim()))
                .field("--field")
                .help("answer-kind is one of auto, letter, index, index1, text"),
        )
    })
}

/// How a data file given without a pipeline is read: canonical names (see
/// [`IngestPlan::for_canonical_input`]) but where `--field` flags map a source
/// field (the keys of `[ingest.fields]`), and image paths relative to the
/// file's folder or to `--images DIR`.
pub fn bare_input_plan(input: &Path, fields: &[String], images: Option<&Path>) -> Result<IngestPlan> {
    if !input.exists() {
        return Err(Error::io(input, std::io::Error::new(std::io::ErrorKind::NotFound, "no such file")));
    }
    let mut plan = IngestPlan::for_canonical_input(input)?;
    if !fields.is_empty() {
        let wire = fields_from_flags(fields)?;
        let flags = FIELD_KEYS.iter().map(|key| (format!("ingest.fields.{key}"), format!("--field {key}"))).collect();
        plan.fields = super::from_command_line(flags, |ctx| field_map(ctx, &|s: &str| format!("ingest.{s}"), &wire))?;
    }
    if let Some(dir) = images {
        if !dir.is_dir() {
            return Err(Error::one(
                Problem::new(Location::file(COMMAND_LINE), format!("--images {}: no such folder", display_path(dir)))
                    .help("give the folder the image paths are relative to"),
            ));
        }
        plan.images_dir = Some(dir.to_path_buf());
        plan.images_beside = false;
        plan.image_names_only = false;
    }
    Ok(plan)
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
