//! Wire types of a pipeline file (`pipelines/<name>.toml`): exactly what a
//! user may write, strict (`deny_unknown_fields`), kebab-case. The rest of
//! blindspot never sees these: [`super::plan`] turns them into a validated
//! [`super::Pipeline`]. `schemas/pipeline.schema.json` is generated from them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::sample::AnswerFormat;

/// A whole pipeline file.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PipelineWire {
    /// What the release is: name, version, licence, citation, seed.
    pub dataset: DatasetWire,
    /// Where the benchmark comes from and how its fields map to the canonical sample.
    pub ingest: IngestWire,
    /// TsT-RF settings; the section's presence makes `build` run diagnose.
    pub diagnose: Option<DiagnoseWire>,
    /// Stress-test variants (null, phantom and trap families).
    pub variants: Option<VariantsWire>,
    /// Remove the questions a blind model answers (IBP, AFLite, or the random control);
    /// the release's default config keeps the rest, `full` and `removed` hold all and the removed.
    pub prune: Option<PruneWire>,
    /// Remove the questions models answer without the image, by a rule over their
    /// imported predictions (a published preset or your own); runs before `[prune]`.
    pub filter: Option<BlindFilterWire>,
    /// Model prediction files; their presence makes `build` write `report/metrics.json`.
    pub predictions: Option<PredictionsWire>,
    /// Settings of the metrics computed from `[predictions]`.
    pub metrics: Option<MetricsWire>,
    /// The sentence-embedding model, for the stages that use embeddings
    /// (`[diagnose] method = "tst-embed"`, AFLite on embeddings, near-duplicates).
    pub embed: Option<EmbedWire>,
    /// Duplicates within the benchmark and leakage from a training split; its
    /// presence makes `build` publish a `duplicates` config.
    pub leakage: Option<LeakageWire>,
    /// How the release is written.
    #[serde(default)]
    pub release: ReleaseWire,
    /// Human answers to the datasheet's questions, keyed by question id.
    #[serde(default)]
    pub datasheet: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DatasetWire {
    /// Release name: letters, digits, `-`, `_`, `.`; the release folder is `releases/<name>/<version>/`.
    pub name: String,
    /// Release version, `MAJOR.MINOR.PATCH`. A built version is never overwritten with different bytes.
    pub version: String,
    /// SPDX licence identifier of the data (e.g. `CC0-1.0`).
    pub license: String,
    /// How to cite the source benchmark (BibTeX or text).
    pub citation: Option<String>,
    /// One paragraph: what the benchmark measures.
    pub description: Option<String>,
    /// Where the source benchmark lives.
    pub homepage: Option<String>,
    /// The git repository that holds this pipeline and its lock file (`https://…`),
    /// named in the card's rebuild instructions.
    pub repository: Option<String>,
    /// Seed of every random choice in the pipeline (default 42).
    /// How numeric answers are scored, once for every stage (diagnose, its
    /// baselines, pruning and metrics): `exact` (default, as most published
    /// scorers), `mra` (mean relative accuracy, partial credit) or `tolerance:<rel>`.
    pub numeric: Option<String>,
    /// MRA's comparison, with `numeric = "mra"`: `strict` (<, default) or `inclusive` (<=).
    pub mra: Option<MraWire>,
    pub seed: Option<u64>,
    /// Publication date written into the card (`YYYY-MM-DD`); never the clock.
    pub date_published: Option<String>,
}

/// File format of the input. Omit to infer it from the file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FormatWire {
    /// A JSON array of records, an object of records keyed by id, or JSON lines.
    Json,
    /// One JSON record per line.
    Jsonl,
    /// Comma-separated with a header row.
    Csv,
    /// Tab-separated with a header row.
    Tsv,
    /// A Parquet file.
    Parquet,
    /// A Hugging Face dataset folder (`data/<split>-*.parquet`).
    Hf,
    /// A VLMEvalKit TSV (`index, question, A..J, answer, category, image`).
    Vlmevalkit,
    /// A Hugging Face ImageFolder: images plus `metadata.jsonl` / `metadata.csv` with `file_name`.
    Imagefolder,
    /// A spreadsheet (`.xlsx`, `.xlsm`, `.xls`, `.ods`): the first sheet, a header row.
    Xlsx,
}

/// What to do with a sample that fails validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OnInvalid {
    /// Stop with every problem listed; write nothing.
    #[default]
    Error,
    /// Leave the sample out, write it with its reasons to the rejected file, count it.
    Skip,
}

/// How the gold is read from an answer field holding a list of reference answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReferenceAnswers {
    /// The most common answer (ties: the one given first), as VQA scores.
    Majority,
    /// The first answer given.
    First,
}

/// How the source writes the gold answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AnswerKind {
    /// Text of an option, else a letter `A`..`J`, else a 0-based index.
    #[default]
    Auto,
    /// A letter `A`..`J` naming an option.
    Letter,
    /// A 0-based option index.
    Index,
    /// A 1-based option index.
    Index1,
    /// The answer text itself.
    Text,
}

/// One field name, or several.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct IngestWire {
    /// Input format; inferred from the path when omitted.
    pub format: Option<FormatWire>,
    /// Input file(s), relative to the pipeline file; glob patterns allowed.
    pub path: OneOrMany,
    /// JSON inputs: the member holding the records, a dot path for a nested one (`data.questions`):
    /// an array of records, or an object of records keyed by id. Default: the top-level value, or
    /// the one array of objects of a top-level object that is not itself an object of records.
    pub records: Option<String>,
    /// Spreadsheet inputs: the sheet holding the questions, by name. Default: the first sheet.
    pub sheet: Option<String>,
    /// CSV and TSV inputs: whether the first row names the columns (default true). A
    /// file without one (`false`) names them in `columns`. Unless set to true, a first
    /// row that reads as a record (an image file name, a question) is an error.
    pub header: Option<bool>,
    /// The column names of a CSV or TSV file without a header row, in order.
    pub columns: Option<Vec<String>>,
    /// Folder holding the images named by the image field, relative to the pipeline file.
    pub images: Option<String>,
    /// Folder holding the videos named by the video field (files: MP4, MOV, MKV,
    /// WebM; or frame images), relative to the pipeline file. Setting it reads the
    /// `videos` or `video` field unless `[ingest.fields] videos` names another.
    pub videos: Option<String>,
    /// The image files are not at hand: keep the image field's names (paths) without
    /// reading them, for diagnose, prune, variants and metrics (default false: an image
    /// named by path with no `images` folder is an error). `build` refuses it: a
    /// release holds its images.
    #[serde(default)]
    pub image_names_only: bool,
    /// The most pixels an image may declare (default 100,000,000): a larger one is an
    /// error naming the file and its size.
    #[schemars(range(min = super::bounds::MAX_IMAGE_PIXELS.min, max = super::bounds::MAX_IMAGE_PIXELS.max))]
    pub max_image_pixels: Option<u64>,
    /// Split name written into every sample (and the split read from a Hugging Face folder). Default `test`.
    pub split: Option<String>,
    /// Benchmark name written into every sample. Default: `[dataset].name`.
    pub benchmark: Option<String>,
    /// `error` (default) stops on the first invalid sample with every problem listed; `skip` rejects it.
    #[serde(default)]
    pub on_invalid: OnInvalid,
    /// Source strings that mean "missing" (default `["NULL"]`); empty strings are always missing.
    pub missing: Option<Vec<String>>,
    /// Which source field feeds which canonical field.
    #[serde(default)]
    pub fields: FieldsWire,
    /// Replace source answers before validation (e.g. `"1" = "yes"`).
    #[serde(default)]
    pub answer_map: BTreeMap<String, String>,
    /// An answer field holding a list of reference answers (VQA's ten annotators):
    /// the gold is the most common (`majority`) or the first (`first`) of them, and the
    /// list is kept in meta under the field's name. Unset, such a field is an error.
    pub reference_answers: Option<ReferenceAnswers>,
    /// Keep only rows matching every filter.
    #[serde(default)]
    pub filter: Vec<FilterWire>,
    /// Files whose records complete each question's (VQA's annotations file beside its
    /// questions file), matched on a field both hold.
    #[serde(default)]
    pub join: Vec<JoinWire>,
    /// Seeded shuffle of each question's options (for sources that always put the gold first).
    #[serde(default)]
    pub shuffle_options: bool,
    /// A question text used for every row (for sources without one, e.g. caption choice).
    pub question_text: Option<String>,
    /// Options are written inside the question as trailing `A. ...` lines; split them out.
    #[serde(default)]
    pub options_in_question: bool,
    /// Force the answer format instead of inferring it.
    pub answer_format: Option<AnswerFormat>,
}

/// Source field → canonical field. Each value is a field path (`a.b.0`) or a
/// template with `{field}` placeholders (`"{category}-{question_id}"`).
/// Synthetic fields: `_file` (file stem), `_key` (key in an object of records), `_row`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FieldsWire {
    /// Unique id (default `id`).
    pub id: Option<String>,
    /// Question text (default `question`).
    pub question: Option<String>,
    /// Hint or context shown with the question (default `context` when present).
    pub context: Option<String>,
    /// A list field, a string-encoded list, several fields (`["A", "B", "C", "D"]`), or
    /// `{ letters = 4 }` for options drawn in the image (only their letters, A-D, are
    /// known). Default `options` when present.
    pub options: Option<OptionsWire>,
    /// Gold answer (default `answer`, else `answer_index`).
    pub answer: Option<String>,
    /// How the answer is written.
    #[serde(default)]
    pub answer_kind: AnswerKind,
    /// Question type (default `question_type` when present).
    pub question_type: Option<String>,
    /// Image field(s): a path, a list of paths, or `{bytes, path}` structs. Default `images` or `image` when present.
    pub images: Option<OneOrMany>,
    /// Video field(s): a video file's path (or a template such as `"{videoID}.mp4"`),
    /// relative to `[ingest] videos`. Default `videos` or `video` when a video folder is set.
    pub videos: Option<OneOrMany>,
    /// A field holding the ordered frame images of the question's one video (a list
    /// of paths relative to `[ingest] videos`).
    pub video_frames: Option<String>,
    /// Source fields kept in `meta`; `["*"]` keeps every unmapped field. Default: none (canonical inputs: all).
    pub meta: Option<Vec<String>>,
}

/// Where the options of a question come from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum OptionsWire {
    /// One field: a list, a string-encoded list, or lettered lines.
    One(String),
    /// One field per option, in letter order.
    Many(Vec<String>),
    /// Options drawn in the image: the question has this many, known by letter only.
    Letters(LettersWire),
}

/// `{ letters = N }`: N options, A to the N-th letter, drawn in the image.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LettersWire {
    /// How many options the image shows (2-26).
    #[schemars(range(min = 2, max = 26))]
    pub letters: usize,
}

/// A file joined to the questions (`[[ingest.join]]`): each question gets the fields of
/// the one record of this file whose `on` field equals its own. A question without one,
/// two records with one key, or a field both hold with different values is an error;
/// records no question matched are counted.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct JoinWire {
    /// The file, relative to the pipeline file (any format ingest reads).
    pub path: String,
    /// The field both files hold that names a question (`question_id`).
    pub on: String,
    /// Its format; inferred from the path when omitted.
    pub format: Option<FormatWire>,
    /// JSON: the member holding its records, a dot path for a nested one (default: as
    /// `[ingest] records`, the one array of objects of a top-level object).
    pub records: Option<String>,
}

/// Keep a row when `field` is (`in`) or is not (`not-in`) one of the values.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FilterWire {
    /// Field path to test.
    pub field: String,
    /// Keep rows whose value is one of these.
    #[serde(rename = "in")]
    pub any_of: Option<Vec<String>>,
    /// Keep rows whose value is none of these.
    pub not_in: Option<Vec<String>>,
}

/// MRA's comparison for numeric answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum MraWire {
    /// `|pred - gold| / |gold| < 1 - θ` (the TsT release).
    Strict,
    /// `≤` (VSI-Bench's own scorer).
    Inclusive,
}

/// The blind diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DiagnoseMethodWire {
    /// Random forests on non-visual features (needs no model).
    TstRf,
    /// A linear probe on sentence embeddings of the question and options (needs the model: `just model`).
    TstEmbed,
    /// Both; s(x) per question combined by `score`.
    Both,
}

/// How `method = "both"` combines the two s(x).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ScoreWire {
    /// The larger of the two.
    Max,
    /// Their mean.
    Mean,
}

/// TsT-RF: k-fold random forests on non-visual features (`docs/tst-protocol.md`).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DiagnoseWire {
    /// `tst-rf` (default), `tst-embed` (sentence embeddings; needs the model) or `both`.
    #[arg(skip)]
    pub method: Option<DiagnoseMethodWire>,
    /// With `method = "both"`: `max` (default) or `mean` of the two s(x).
    #[arg(skip)]
    pub score: Option<ScoreWire>,
    /// Cross-validation folds (default 5; at most 100).
    #[schemars(range(min = super::bounds::FOLDS.min, max = super::bounds::FOLDS.max))]
    #[arg(long)]
    pub folds: Option<usize>,
    /// Repeats with seeds seed, seed+1, ... (default 1; at most 100).
    #[schemars(range(min = super::bounds::REPEATS.min, max = super::bounds::REPEATS.max))]
    #[arg(long)]
    pub repeats: Option<usize>,
    /// Trees per classification forest (default 100; at most 10,000).
    #[schemars(range(min = super::bounds::TREES.min, max = super::bounds::TREES.max))]
    #[arg(long)]
    pub trees: Option<usize>,
    /// Trees per regression forest (default 200; at most 10,000).
    #[schemars(range(min = super::bounds::REGRESSION_TREES.min, max = super::bounds::REGRESSION_TREES.max))]
    #[arg(long)]
    pub regression_trees: Option<usize>,
    /// Keep related questions in one fold: `image`, `image-cluster` (near-duplicate
    /// images; `image-cluster:BITS` sets the Hamming threshold, default 6), `question`
    /// (same text) or `meta:FIELD`.
    #[arg(long)]
    pub group_by: Option<String>,
    /// Moved to `[dataset] numeric` (one scoring for every stage); refused here.
    #[schemars(skip)]
    #[arg(skip)]
    pub numeric: Option<String>,
    /// Moved to `[dataset] mra`; refused here.
    #[schemars(skip)]
    #[arg(skip)]
    pub mra: Option<MraWire>,
    /// Question types with fewer questions share one pooled model per format (default 20).
    #[arg(long)]
    pub min_group: Option<usize>,
    /// Blocks in which the training rows' answer statistics are cross-fitted (default 5;
    /// 0 gives them in-sample statistics, as the TsT release does).
    #[schemars(range(min = super::bounds::CROSS_FIT.min, max = super::bounds::CROSS_FIT.max))]
    #[arg(long)]
    pub cross_fit: Option<usize>,
    /// Most label permutations of the null the verdict and pruning compare blind
    /// accuracy with (default 199; 19 to 9,999).
    #[schemars(range(min = super::bounds::PERMUTATIONS.min, max = super::bounds::PERMUTATIONS.max))]
    #[arg(long)]
    pub permutations: Option<usize>,
    /// `decided` (default: stop once p is decided at `[prune] alpha`, sequentially) or
    /// `all` (draw every permutation, for a finer p-value).
    #[arg(long)]
    pub permutation_stop: Option<String>,
    /// A group larger than this is tested on a seeded sample of this many questions
    /// (default 2,000; at least 100): each permutation refits the null's forests on at
    /// most this many questions.
    #[schemars(range(min = 100))]
    #[arg(long)]
    pub null_sample: Option<usize>,
    /// Trees of the null's forests (default 25; regression forests get twice as many).
    /// The null's statistic is these forests' blind accuracy, on the real answers and
    /// on each permutation alike.
    #[schemars(range(min = super::bounds::TREES.min, max = super::bounds::TREES.max))]
    #[arg(long)]
    pub null_trees: Option<usize>,
    /// Meta fields used as categorical features (default: none). A meta field can carry
    /// the answer (a label read off the image, a model's prediction): list only fields a
    /// blind model may see; diagnose audits every meta field and names suspect ones.
    #[arg(long, value_delimiter = ',')]
    pub meta_features: Option<Vec<String>>,
    /// Declarative features for what automation cannot guess: fields pulled out of the
    /// question, its options or its meta by regular expressions, and statistics over them.
    #[serde(default)]
    #[arg(skip)]
    pub recipes: Vec<RecipeWire>,
    /// Outside scores combined into s(x) (a path relative to this file): JSON lines
    /// `{"id", "probabilities", "fold", "assignment_hash"}`, the held-out probability
    /// of each answer from a scorer run on the folds `blindspot diagnose --export-folds` writes.
    #[arg(long)]
    pub scores: Option<String>,
    /// With `scores`: `max` (default) or `mean` of TsT-RF's s(x) and the outside score.
    #[arg(long, value_enum)]
    pub combine: Option<ScoreWire>,
}

/// One declarative feature set; its columns are named `recipe.<name>.*`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RecipeWire {
    /// Names the recipe's columns: letters, digits, `-` and `_`.
    pub name: String,
    /// Question types the recipe applies to (default: every type). Other questions get
    /// missing values in its columns.
    pub types: Option<Vec<String>>,
    /// Regular expressions (Rust `regex` syntax, case-insensitive unless `(?-i)`); each
    /// named group (`(?<object>...)`) becomes a field holding the first match, lowercased,
    /// whitespace collapsed.
    #[serde(default)]
    pub extract: Vec<ExtractWire>,
    /// Statistics over extracted fields, computed on the training folds only.
    #[serde(default)]
    pub stats: Vec<StatWire>,
    /// Words or phrases flagged 1 when the question contains them (whole words, any case).
    #[serde(default)]
    pub keywords: Vec<String>,
}

/// A regular expression applied to one text of each question.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ExtractWire {
    /// `question` (default), `context`, `options` (each option on its own: one value per
    /// option) or `meta:FIELD`.
    pub from: Option<String>,
    /// The expression; name the parts to keep: `How many (?<object>.+?)\(s\)`.
    pub regex: String,
}

/// Statistic families over one field, or over a combination of fields (a pair).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct StatWire {
    /// The field, or fields combined into one key (`["object1", "object2"]`: the pair).
    pub key: OneOrMany,
    /// Keep the order of a combined key's fields (default false: `a+b` equals `b+a`).
    #[serde(default)]
    pub ordered: bool,
    /// What to compute for each key value.
    pub families: Vec<FamilyWire>,
}

/// A statistic family of a recipe key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FamilyWire {
    /// How many training questions had this key value (a pair key: the pair's frequency);
    /// option fields: how often the value was offered.
    Count,
    /// Mean and standard deviation of the numeric answer (the gold option's number for
    /// multiple choice) over training questions with this key value.
    Moments,
    /// The same of log10(answer + 1).
    LogMoments,
    /// Gold frequency: P(yes) for yes/no; per option, the share of this key's questions
    /// whose gold was that option's text and whether it was the most frequent gold, for
    /// multiple choice; the top answer's share for open questions. Option fields: how
    /// often the value was in the gold option, and that over how often it was offered.
    Gold,
    /// Multiple choice: each option's number's distance, in log10(x + 1), to the mean gold
    /// number of this key value.
    LogDistance,
    /// The field's value read as a number (one field only).
    Value,
}

/// Stress-test variants: each sample becomes one row per kind that applies to it.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct VariantsWire {
    /// Kinds to generate (default: all; `no_video` and `phantom0_video` when a question has a video): `no_image`, `no_video`, `white_image`, `noise_image`, `caption`,
    /// `mirage`, `guess`, `phantom`, `phantom0`, `phantom0_video`, `option_shuffle`, `unknown_option`,
    /// `distractor_swap` (every k) or `distractor_swap@k`, `visual_substitution`, `gold_removed`.
    pub kinds: Option<Vec<String>>,
    /// Seed of the variants only (default: `[dataset] seed`).
    pub seed: Option<u64>,
    /// Where `caption` variants take their captions from; without it they are skipped and counted.
    pub captions: Option<CaptionsWire>,
    /// A caption naming an unknown sample id: `error` (default) or `skip` (left out and counted).
    #[serde(default)]
    pub on_invalid: OnInvalid,
}

/// Captions for the `caption` kind: a JSON file of `{sample id: caption}`, or a meta field.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CaptionsWire {
    /// A JSON file holding an object `{sample id: caption}`, relative to the pipeline file.
    pub path: Option<String>,
    /// Dotted path of that object inside the file (ScienceQA's `captions.json`: `captions`). Default: the top level.
    pub key: Option<String>,
    /// Instead of a file: the `meta` field that holds each sample's caption.
    pub meta: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ReleaseWire {
    /// Embed image bytes in the Parquet files (default true), so the release is self-contained.
    #[serde(default = "yes")]
    pub embed_images: bool,
    /// How videos travel: `embed` (bytes in the Parquet files, as images), `files`
    /// (copied beside them under `videos/`, the Parquet holding their paths), or
    /// `auto` (default: embedded while the distinct videos add up to at most 64 MiB).
    #[serde(default)]
    pub videos: VideoCarryWire,
}

impl Default for ReleaseWire {
    fn default() -> Self {
        ReleaseWire { embed_images: true, videos: VideoCarryWire::Auto }
    }
}

/// How a release carries videos.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum VideoCarryWire {
    #[default]
    Auto,
    Embed,
    Files,
}

fn yes() -> bool {
    true
}

/// A count (`800`) or a percentage of the input (`"20%"`). A float (`0.2`, `1.0`) is
/// refused: is `1.0` one question or all of them?
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum AmountWire {
    Count(u64),
    Fraction(f64),
    Text(String),
}

impl std::str::FromStr for AmountWire {
    type Err = std::convert::Infallible;

    /// A flag's text: a whole number is a count, anything else is read as the
    /// file's string form (`"20%"`) when the settings are validated.
    fn from_str(s: &str) -> std::result::Result<AmountWire, Self::Err> {
        Ok(s.parse::<u64>().map_or_else(|_| AmountWire::Text(s.to_string()), AmountWire::Count))
    }
}

/// Iterative Bias Pruning and its relatives (`docs/tst-protocol.md`, "Iterative Bias Pruning").
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PruneWire {
    /// `ibp` (default: re-run TsT-RF on what remains, remove the highest s(x)), `aflite`
    /// (linear probes on random partitions), `random` (matched random removal) or `bclean`
    /// (what models answer in mirage mode; needs `[predictions]`).
    #[arg(long)]
    pub method: Option<String>,
    /// Questions to remove in all: a count or a percentage (default `"10%"`).
    #[arg(long)]
    pub budget: Option<AmountWire>,
    /// Questions removed per iteration (IBP's b, AFLite's k): a count or a percentage (default 50).
    #[arg(long)]
    pub batch: Option<AmountWire>,
    /// Fewest questions any question type keeps (default 10).
    #[arg(long)]
    pub floor: Option<usize>,
    /// Stop once the largest score is at or below this (default: none).
    #[arg(long)]
    pub threshold: Option<f64>,
    /// `per-format` (default: each answer format ranked on its own, as the TsT
    /// protocol asks), `global` or `per-type`: how the budget is shared out.
    #[arg(long)]
    pub allocation: Option<String>,
    /// When IBP stops before its budget: `null` (default: nothing is removed unless
    /// blind accuracy is above its label-permutation null, only groups above their
    /// own null are pruned, each until it reaches its null), `chance` (once blind
    /// accuracy's 95% CI reaches chance) or `budget` (prune to the budget).
    #[arg(long)]
    pub stop: Option<String>,
    /// The level of evidence a removal needs: blind accuracy's label-permutation p-value
    /// at or below this (default 0.01; above 0 and at most 0.1). The verdict of
    /// `diagnose` is decided at the same level.
    #[schemars(range(min = 0.0, max = 0.1))]
    #[arg(long)]
    pub alpha: Option<f64>,
    /// Replaced by `stop`; refused with the equivalent setting.
    #[schemars(skip)]
    #[arg(skip)]
    pub stop_at_chance: Option<bool>,
    /// What is removed at once: `question`, `image` or `meta:FIELD` (default: the
    /// fold group when `[diagnose] group-by` is set, else the question), so a
    /// benchmark scored per pair or per image keeps its units whole.
    #[arg(long)]
    pub unit: Option<String>,
    /// After pruning, the kept set is re-diagnosed on at most this many fresh seeds,
    /// whose folds and forests chose nothing (default 3; 0 skips it; at most 20);
    /// one when the kept set's 95% CI is already within ±0.5 points.
    #[schemars(range(min = super::bounds::INDEPENDENT_SEEDS.min, max = super::bounds::INDEPENDENT_SEEDS.max))]
    #[arg(long)]
    pub independent_seeds: Option<usize>,
    /// Rank multiple-choice questions by `s-minus-chance` (default: s(x) - 1/options) or `s` (the TsT release).
    #[arg(long)]
    pub rank: Option<String>,
    /// Also run the matched random control and report its curve (default false).
    #[serde(default)]
    #[arg(long)]
    pub control: bool,
    /// AFLite: random partitions per round (default 64).
    #[schemars(range(min = super::bounds::PARTITIONS.min, max = super::bounds::PARTITIONS.max))]
    #[arg(long)]
    pub partitions: Option<usize>,
    /// AFLite: training share of each partition (default 0.8).
    #[arg(long)]
    pub train_fraction: Option<f64>,
    /// AFLite: predictability at or above which a question may go (default 0.75).
    #[arg(long)]
    pub tau: Option<f64>,
    /// AFLite: what the linear probes see, `features` (default: TsT's non-visual features)
    /// or `embeddings` (sentence embeddings, the paper's choice; needs the model).
    #[arg(long, value_enum)]
    pub representation: Option<RepresentationWire>,
    /// B-Clean: candidate models (default: every model with mirage-mode predictions).
    #[arg(skip)]
    pub models: Option<Vec<String>>,
    /// B-Clean step 3: a blind TsT-RF trained on the compromised questions also removes
    /// what it answers among the rest (default false).
    #[serde(default)]
    #[arg(skip)]
    pub step3: bool,
    /// B-Clean: questions without an image (never compromised, since no mirage row is
    /// made for them): `keep` (default) or `remove`.
    #[arg(skip)]
    pub imageless: Option<ImagelessWire>,
}

/// What B-Clean does with questions that have no image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ImagelessWire {
    /// Keep them (reported as their own class).
    Keep,
    /// Remove them: the release keeps only questions that need looking.
    Remove,
}

/// AFLite's representation of a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RepresentationWire {
    /// TsT's non-visual features.
    Features,
    /// Sentence embeddings: multiple choice, the question's then each option's; otherwise the question+options text's.
    Embeddings,
}

/// The sentence-embedding model (all-MiniLM-L6-v2). Never downloaded by a build:
/// `just model` installs it once.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct EmbedWire {
    /// The model folder, relative to the pipeline file (default: `$BLINDSPOT_MODEL_DIR`,
    /// else `.blindspot/models/all-MiniLM-L6-v2` in the working folder).
    pub model_dir: Option<String>,
    /// Truncate texts at this many tokens (default: the model's 256).
    #[schemars(range(min = super::bounds::MAX_LENGTH.min, max = super::bounds::MAX_LENGTH.max))]
    pub max_length: Option<usize>,
}

/// Near-duplicates within the benchmark and leakage from a training split.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LeakageWire {
    /// A training split to check the benchmark against: a data file read with
    /// `[leakage.fields]` (canonical field names by default), or a pipeline file
    /// (`.toml`) whose `[ingest]` reads it. Relative to this pipeline file.
    pub train: Option<String>,
    /// Format of `train` (default: from its name).
    pub format: Option<FormatWire>,
    /// Field mapping of `train`, as `[ingest.fields]` (default: canonical names).
    pub fields: Option<FieldsWire>,
    /// Cosine similarity at or above which two questions are near-duplicates (default 0.60).
    pub threshold: Option<f64>,
    /// Exact (normalised-text) duplicates only: no embedding model needed (default false).
    #[serde(default)]
    pub exact_only: bool,
    /// Keep one question per duplicate cluster (the first by id) and drop every
    /// question with a copy in the training split; each removal is recorded with its reason.
    #[serde(default)]
    pub prune_duplicates: bool,
}

/// Model predictions to score (generic `model,id,response` JSONL/CSV/Parquet,
/// lmms-eval `--log_samples`, VLMEvalKit results, `id -> option index` maps).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PredictionsWire {
    /// Prediction files, relative to the pipeline file.
    pub files: Vec<PredictionFileWire>,
    /// `manifest.json` files written by `blindspot export`, mapping harness rows to ids.
    #[serde(default)]
    pub manifest: Vec<String>,
    /// Predictions naming unknown ids, or repeated, are errors (default: counted and listed).
    #[serde(default)]
    pub strict: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PredictionFileWire {
    /// The file, relative to the pipeline file.
    pub path: String,
    /// The model's name, where the file does not say it (default: from the file).
    pub model: Option<String>,
    /// `generic`, `lmms-eval`, `vlmevalkit` or `index-map` (default: detected).
    pub format: Option<String>,
    /// The column holding the sample id (default `id`, or the keys of an object of records).
    pub id_field: Option<String>,
    /// The column holding the response (default `response`, `prediction`, `output`, `answer`).
    pub response_field: Option<String>,
    /// The column holding the model's name (default `model`).
    pub model_field: Option<String>,
    /// One answer column per model: `{ COLUMN = "model" }`.
    #[serde(default)]
    pub wide: BTreeMap<String, String>,
}

/// A whole number or a word (`"all"`, `"majority"`, `"any"`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum CountWire {
    Count(u64),
    Word(String),
}

impl CountWire {
    pub fn text(&self) -> String {
        match self {
            CountWire::Count(n) => n.to_string(),
            CountWire::Word(w) => w.clone(),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct BlindFilterWire {
    /// A published filter: `mmstar` (removed when more than 2 text-only models answer),
    /// `mmmu-pro` (at least 3 models, each right in most of its tries without the image),
    /// `emma` (any model, from the text alone or with a caption), `bclean` (any model in
    /// mirage mode). A preset fixes conditions and thresholds; leave it out to write your own.
    pub preset: Option<String>,
    /// Models whose predictions count (default: every model with predictions under the conditions).
    pub models: Option<Vec<String>>,
    /// Conditions whose predictions count: `no_image`, `caption`, `mirage`, `guess`,
    /// `white_image`, `noise_image` or `original`.
    pub conditions: Option<Vec<String>>,
    /// A question is removed when at least this many models answer it: a number or `"all"` (default 1).
    pub min_models: Option<CountWire>,
    /// A model answers a question when right in at least this many of its samples: a number,
    /// `"any"`, `"majority"` (more than half, the default) or `"all"`.
    pub min_correct: Option<CountWire>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MetricsWire {
    /// Bootstrap resamples per accuracy (default 1000).
    #[schemars(range(min = super::bounds::RESAMPLES.min, max = super::bounds::RESAMPLES.max))]
    pub resamples: Option<usize>,
    /// Moved to `[dataset] numeric` (one scoring for every stage); refused here.
    #[schemars(skip)]
    pub numeric: Option<String>,
    /// Moved to `[dataset] mra`; refused here.
    #[schemars(skip)]
    pub mra: Option<MraWire>,
    /// Accuracy broken down by `question_type` or `meta:FIELD`.
    #[serde(default)]
    pub group_by: Vec<String>,
    /// MMStar leakage: a model's LLM backbone evaluated text-only (`"vlm" = "llm"`).
    #[serde(default)]
    pub llm_bases: BTreeMap<String, String>,
    /// The meta field holding each question's reference answers (the answer field's
    /// name, as `[ingest] reference-answers` keeps the list): answers to questions
    /// without options (open, yes/no, numeric) are scored by VQA accuracy over them,
    /// min(1, matches / 3) averaged over each reference left out, instead of against
    /// the gold alone.
    pub reference_answers: Option<String>,
    /// Gold-label audit: a question is listed when sighted models agree on one other answer —
    /// `"all"` (every model that answered, at least 3; the default) or at least this many.
    pub audit_agree: Option<CountWire>,
}
