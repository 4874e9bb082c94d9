//! The canonical sample: one row per question, the single record every stage
//! reads and writes (`docs/design.md`, "The canonical sample").
//!
//! In memory it is [`Sample`]; on disk it is Parquet with the fixed Arrow
//! schema of [`arrow_schema`]. Two departures from a naive layout, both for
//! Hugging Face `datasets`, which must load releases unmodified:
//! - `images` is `list<struct{bytes, path}>`, exactly the Arrow type `datasets`
//!   decodes as a list of `Image`s (an extra field or a non-nullable item and it
//!   hands back dicts), and the facts blindspot records about each image go to a
//!   parallel column, `image_facts: list<struct{sha256, width, height, phash,
//!   dhash}>`;
//! - `meta` is `list<struct{key, value}>` (the physical layout of an Arrow map,
//!   sorted by key) because `datasets` has no feature type for Arrow maps;
//! - videos, when a file holds any, are three more columns after `images`:
//!   `videos: list<struct{bytes, path}>` (one per video file; both null for a
//!   video given as frames), `video_frames: list<list<struct{bytes, path}>>`
//!   (the ordered frame images of each video, empty for a file) and
//!   `video_facts` (sha256, size and the container's facts). A file without
//!   videos has none of the three, so an image benchmark's files are as they
//!   were.

pub mod image_hash;
mod rules;
pub use rules::{MraRule, NumericScoring, chance, mra, normalize_text, option_letter, parse_number};

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryBuilder, Float64Builder, Int32Builder, Int64Builder, ListBuilder, RecordBatch, StringBuilder,
    StructBuilder,
};
use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How a question is answered; decides the diagnose target and the scorer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnswerFormat {
    /// Pick one of `options`; `answer_index` is the gold position.
    MultipleChoice,
    /// Answer is `yes` or `no` (no options).
    YesNo,
    /// Answer is a number.
    Numeric,
    /// Free text.
    Open,
}

impl AnswerFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerFormat::MultipleChoice => "multiple_choice",
            AnswerFormat::YesNo => "yes_no",
            AnswerFormat::Numeric => "numeric",
            AnswerFormat::Open => "open",
        }
    }
    pub const ALL: [AnswerFormat; 4] =
        [AnswerFormat::MultipleChoice, AnswerFormat::YesNo, AnswerFormat::Numeric, AnswerFormat::Open];
}

/// One image of a sample: Hugging Face's `{bytes, path}` plus facts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ImageRef {
    /// The image's path relative to the benchmark's image folder (or as given
    /// by the source when no folder is set). Never absolute.
    pub path: Option<String>,
    /// The encoded image file (PNG, JPEG, ...). Filled from `source` when a
    /// release embeds images.
    #[serde(skip)]
    #[schemars(with = "Option<String>", description = "encoded image bytes (binary in Parquet)")]
    pub bytes: Option<Vec<u8>>,
    /// sha256 of the encoded bytes, lowercase hex.
    pub sha256: Option<String>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    /// Perceptual hash of the decoded image: DCT, median-thresholded, 8 × 8
    /// (`image_hasher`'s `Median` with `preproc_dct`), 16 lowercase hex digits.
    /// Near-duplicate images are found by its Hamming distance
    /// ([`image_hash`]). `None` when the image was not decoded.
    pub phash: Option<String>,
    /// Difference hash of the decoded image (`image_hasher`'s `Gradient`, 8 × 8),
    /// 16 lowercase hex digits, for lists of hashes made with it.
    pub dhash: Option<String>,
    /// Where the bytes can be read from (not written to data files).
    #[serde(skip)]
    #[schemars(skip)]
    pub source: Option<PathBuf>,
}

/// One video of a sample: a file (MP4, MOV, MKV, WebM) or an ordered list of
/// frame images, with the facts read from its container without decoding.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct VideoRef {
    /// The video file's path relative to the benchmark's video folder. `None`
    /// for a video given as frames.
    pub path: Option<String>,
    /// The encoded video file. Filled from `source` when a release embeds videos.
    #[serde(skip)]
    #[schemars(with = "Option<String>", description = "encoded video bytes (binary in Parquet)")]
    pub bytes: Option<Vec<u8>>,
    /// sha256 of the file's bytes, lowercase hex (of a frame video: of its
    /// frames' sha256s, in order, each followed by a newline).
    pub sha256: Option<String>,
    /// The file's size in bytes (a frame video: its frames' sizes added up).
    pub size: Option<u64>,
    /// Seconds, from the container's header.
    pub duration: Option<f64>,
    /// Frames per second of the video track (frame count over duration).
    pub fps: Option<f64>,
    /// Frames of the video track (samples in MP4; a frame video: its frames).
    pub frame_count: Option<u64>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    /// The video track's codec as the container names it (`avc1`, `hev1`,
    /// `V_VP9`, ...); `frames` for a video given as frames.
    pub codec: Option<String>,
    /// The frame images, in order, of a video given as frames; empty for a file.
    pub frames: Vec<ImageRef>,
    /// Where the bytes can be read from (not written to data files).
    #[serde(skip)]
    #[schemars(skip)]
    pub source: Option<PathBuf>,
}

impl VideoRef {
    /// The sha256 of a video given as frames: of its frames' sha256s, in
    /// order, each followed by a newline (reordering the frames makes another video).
    pub fn frames_sha256(frames: &[ImageRef]) -> String {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        for f in frames {
            hasher.update(f.sha256.as_deref().unwrap_or("").as_bytes());
            hasher.update(b"\n");
        }
        hex::encode(hasher.finalize())
    }

    /// What identifies the video: its sha256, else its path, else its frames' paths.
    pub fn key(&self) -> Option<String> {
        self.sha256.clone().or_else(|| self.path.clone()).or_else(|| {
            (!self.frames.is_empty())
                .then(|| self.frames.iter().map(|f| f.path.as_deref().unwrap_or("")).collect::<Vec<_>>().join("\n"))
        })
    }
}

/// One question, canonical. Invariants after ingest: `id` unique and
/// non-empty; `question` non-empty; for multiple choice `answer_index` is
/// `Some(i)` with `options[i] == answer`; `meta` keys sorted (a BTreeMap).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sample {
    /// Unique, stable; integer ids in the source become strings.
    pub id: String,
    pub benchmark: String,
    pub split: String,
    pub question_type: Option<String>,
    pub question: String,
    /// Hint or vignette shown with the question.
    pub context: Option<String>,
    /// Empty for open-ended questions.
    pub options: Vec<String>,
    pub answer: String,
    pub answer_index: Option<i32>,
    pub answer_format: AnswerFormat,
    pub images: Vec<ImageRef>,
    /// The question's videos (usually one); empty for an image benchmark.
    #[serde(default)]
    pub videos: Vec<VideoRef>,
    /// Every other source field the pipeline keeps, as text.
    pub meta: BTreeMap<String, String>,
    /// Variant rows only: the sample this variant was made from.
    pub parent_id: Option<String>,
    /// Variant rows only: the variant kind.
    pub variant: Option<String>,
    /// Variant rows only: canonical JSON of the variant's parameters.
    pub variant_params: Option<String>,
    /// Variant rows only: the exact text shown to a model.
    pub prompt: Option<String>,
    /// Variant rows only: `answer` or `abstain`.
    pub expected: Option<String>,
}

impl Sample {
    /// A sample with only the required fields set; the rest empty.
    pub fn new(id: impl Into<String>, question: impl Into<String>, answer: impl Into<String>) -> Self {
        Sample {
            id: id.into(),
            benchmark: String::new(),
            split: String::new(),
            question_type: None,
            question: question.into(),
            context: None,
            options: Vec::new(),
            answer: answer.into(),
            answer_index: None,
            answer_format: AnswerFormat::Open,
            images: Vec::new(),
            videos: Vec::new(),
            meta: BTreeMap::new(),
            parent_id: None,
            variant: None,
            variant_params: None,
            prompt: None,
            expected: None,
        }
    }
}

/// The order of ids everywhere blindspot writes or folds: digit runs compare
/// as numbers (so `9 < 10`), everything else bytewise; ties (`01` vs `1`)
/// fall back to plain byte order, so the order is total.
pub fn id_cmp(a: &str, b: &str) -> Ordering {
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < ab.len() && j < bb.len() {
        if ab[i].is_ascii_digit() && bb[j].is_ascii_digit() {
            let si = i;
            while i < ab.len() && ab[i].is_ascii_digit() {
                i += 1;
            }
            let sj = j;
            while j < bb.len() && bb[j].is_ascii_digit() {
                j += 1;
            }
            let na = trim_zeros(&ab[si..i]);
            let nb = trim_zeros(&bb[sj..j]);
            let ord = na.len().cmp(&nb.len()).then_with(|| na.cmp(nb));
            if ord != Ordering::Equal {
                return ord;
            }
        } else {
            if ab[i] != bb[j] {
                return ab[i].cmp(&bb[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (ab.len() - i).cmp(&(bb.len() - j)).then_with(|| ab.cmp(bb))
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let first = digits.iter().position(|&d| d != b'0').unwrap_or(digits.len());
    &digits[first..]
}

/// Sorts samples into canonical id order.
pub fn sort_by_id(samples: &mut [Sample]) {
    samples.sort_by(|a, b| id_cmp(&a.id, &b.id));
}

fn image_struct_fields() -> Fields {
    Fields::from(vec![Field::new("bytes", DataType::Binary, true), Field::new("path", DataType::Utf8, true)])
}

fn image_fact_fields() -> Fields {
    Fields::from(vec![
        Field::new("sha256", DataType::Utf8, true),
        Field::new("width", DataType::Int32, true),
        Field::new("height", DataType::Int32, true),
        Field::new("phash", DataType::Utf8, true),
        Field::new("dhash", DataType::Utf8, true),
    ])
}

fn video_fact_fields() -> Fields {
    Fields::from(vec![
        Field::new("sha256", DataType::Utf8, true),
        Field::new("size", DataType::Int64, true),
        Field::new("duration", DataType::Float64, true),
        Field::new("fps", DataType::Float64, true),
        Field::new("frame_count", DataType::Int64, true),
        Field::new("width", DataType::Int32, true),
        Field::new("height", DataType::Int32, true),
        Field::new("codec", DataType::Utf8, true),
        Field::new("frame_sha256", list_of(DataType::Utf8, true), false),
    ])
}

fn meta_struct_fields() -> Fields {
    Fields::from(vec![Field::new("key", DataType::Utf8, false), Field::new("value", DataType::Utf8, true)])
}

fn list_of(item: DataType, nullable_items: bool) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, nullable_items)))
}

/// The fixed Arrow schema of the canonical record, without video columns.
pub fn arrow_schema() -> SchemaRef {
    arrow_schema_with(false)
}

/// Whether any of `samples` has a video: a file of them is written with the
/// video columns.
pub fn has_videos(samples: &[Sample]) -> bool {
    samples.iter().any(|s| !s.videos.is_empty())
}

/// The Arrow schema of the canonical record; with `videos`, the three video
/// columns follow `image_facts`.
pub fn arrow_schema_with(videos: bool) -> SchemaRef {
    let mut fields = vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("benchmark", DataType::Utf8, false),
        Field::new("split", DataType::Utf8, false),
        Field::new("question_type", DataType::Utf8, true),
        Field::new("question", DataType::Utf8, false),
        Field::new("context", DataType::Utf8, true),
        Field::new("options", list_of(DataType::Utf8, false), false),
        Field::new("answer", DataType::Utf8, false),
        Field::new("answer_index", DataType::Int32, true),
        Field::new("answer_format", DataType::Utf8, false),
        // Nullable, as every field `datasets` writes: it types the column `Image` only when
        // the field equals its own, nullability included.
        Field::new("images", list_of(DataType::Struct(image_struct_fields()), true), true),
        Field::new("image_facts", list_of(DataType::Struct(image_fact_fields()), false), false),
    ];
    if videos {
        fields.extend([
            Field::new("videos", list_of(DataType::Struct(image_struct_fields()), true), true),
            Field::new("video_frames", list_of(list_of(DataType::Struct(image_struct_fields()), true), false), false),
            Field::new("video_facts", list_of(DataType::Struct(video_fact_fields()), false), false),
        ]);
    }
    fields.extend([
        Field::new("meta", list_of(DataType::Struct(meta_struct_fields()), false), false),
        Field::new("parent_id", DataType::Utf8, true),
        Field::new("variant", DataType::Utf8, true),
        Field::new("variant_params", DataType::Utf8, true),
        Field::new("prompt", DataType::Utf8, true),
        Field::new("expected", DataType::Utf8, true),
    ]);
    Arc::new(Schema::new(fields))
}

/// The encoded bytes of an image or video: in memory, else read from `source`
/// when embedding, else none.
fn media_bytes<'a>(
    bytes: &'a Option<Vec<u8>>,
    source: &Option<PathBuf>,
    embed: bool,
    loaded: &'a mut Option<Vec<u8>>,
) -> Result<Option<&'a [u8]>> {
    match (bytes, source, embed) {
        (Some(b), _, _) => Ok(Some(b.as_slice())),
        (None, Some(src), true) => {
            *loaded = Some(std::fs::read(src).map_err(|e| Error::io(src, e))?);
            Ok(loaded.as_deref())
        }
        _ => Ok(None),
    }
}

/// The bytes of a video or frame (`bytes`, `source`, `path`) as [`media_bytes`]
/// gives them, except that carried as files, one with a path travels as that file:
/// its bytes are not written twice even when in memory (a release read back). One
/// without a path (a frame a variant drew) has no file, so its bytes stay.
fn video_bytes<'a>(
    (bytes, source, path): (&'a Option<Vec<u8>>, &Option<PathBuf>, Option<&str>),
    carry: EmbedVideos,
    embed: bool,
    loaded: &'a mut Option<Vec<u8>>,
) -> Result<Option<&'a [u8]>> {
    if carry == EmbedVideos::PathsOnly && path.is_some() {
        return Ok(None);
    }
    media_bytes(bytes, source, embed, loaded)
}

/// Whether image bytes are written into the batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embed {
    /// Read each image's `source` file when its bytes are not in memory.
    Images,
    /// Write `bytes` as null unless already in memory.
    PathsOnly,
}

/// Whether video bytes are written into the batch (a release may carry video
/// files beside its Parquet instead: their paths stay, their bytes do not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EmbedVideos {
    /// As images are: embedded exactly when images are.
    #[default]
    AsImages,
    /// Paths only (the files travel beside the data file); bytes in memory are
    /// written only for media without a path, which no file carries.
    PathsOnly,
}

/// Builds one Arrow batch of canonical rows, in the order given; with video
/// columns when any row has a video.
pub fn to_record_batch(samples: &[Sample], embed: Embed) -> Result<RecordBatch> {
    to_record_batch_with(samples, embed, EmbedVideos::AsImages, has_videos(samples))
}

/// [`to_record_batch`] with the video columns present or not as `videos` says
/// (every batch of one file has the same schema) and the videos' bytes
/// embedded as `embed_videos` says.
pub fn to_record_batch_with(
    samples: &[Sample],
    embed: Embed,
    embed_videos: EmbedVideos,
    videos: bool,
) -> Result<RecordBatch> {
    if !videos && let Some(s) = samples.iter().find(|s| !s.videos.is_empty()) {
        return Err(Error::Bug(format!("row \"{}\" has a video but its file has no video columns", s.id)));
    }
    let embed_video_bytes = embed == Embed::Images && embed_videos == EmbedVideos::AsImages;
    let n = samples.len();
    let mut id = StringBuilder::with_capacity(n, n * 8);
    let mut benchmark = StringBuilder::with_capacity(n, n * 8);
    let mut split = StringBuilder::with_capacity(n, n * 4);
    let mut qtype = StringBuilder::with_capacity(n, n * 8);
    let mut question = StringBuilder::with_capacity(n, n * 64);
    let mut context = StringBuilder::with_capacity(n, n * 16);
    let mut options =
        ListBuilder::new(StringBuilder::new()).with_field(Arc::new(Field::new("item", DataType::Utf8, false)));
    let mut answer = StringBuilder::with_capacity(n, n * 8);
    let mut answer_index = Int32Builder::with_capacity(n);
    let mut answer_format = StringBuilder::with_capacity(n, n * 8);
    let mut image_columns = ImageColumns::new();
    let mut meta = ListBuilder::new(StructBuilder::from_fields(meta_struct_fields(), 0))
        .with_field(Arc::new(Field::new("item", DataType::Struct(meta_struct_fields()), false)));
    let mut video_columns = VideoColumns::new();
    let mut parent_id = StringBuilder::new();
    let mut variant = StringBuilder::new();
    let mut variant_params = StringBuilder::new();
    let mut prompt = StringBuilder::new();
    let mut expected = StringBuilder::new();

    for s in samples {
        id.append_value(&s.id);
        benchmark.append_value(&s.benchmark);
        split.append_value(&s.split);
        qtype.append_option(s.question_type.as_deref());
        question.append_value(&s.question);
        context.append_option(s.context.as_deref());
        for o in &s.options {
            options.values().append_value(o);
        }
        options.append(true);
        answer.append_value(&s.answer);
        answer_index.append_option(s.answer_index);
        answer_format.append_value(s.answer_format.as_str());
        image_columns.push(&s.images, embed == Embed::Images)?;
        video_columns.push(&s.videos, embed_videos, embed_video_bytes)?;
        for (k, v) in &s.meta {
            let st = meta.values();
            field_builder::<StringBuilder>(st, 0).append_value(k);
            field_builder::<StringBuilder>(st, 1).append_value(v);
            st.append(true);
        }
        meta.append(true);
        parent_id.append_option(s.parent_id.as_deref());
        variant.append_option(s.variant.as_deref());
        variant_params.append_option(s.variant_params.as_deref());
        prompt.append_option(s.prompt.as_deref());
        expected.append_option(s.expected.as_deref());
    }

    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(id.finish()),
        Arc::new(benchmark.finish()),
        Arc::new(split.finish()),
        Arc::new(qtype.finish()),
        Arc::new(question.finish()),
        Arc::new(context.finish()),
        Arc::new(options.finish()),
        Arc::new(answer.finish()),
        Arc::new(answer_index.finish()),
        Arc::new(answer_format.finish()),
    ];
    columns.extend(image_columns.finish());
    if videos {
        columns.extend(video_columns.finish());
    }
    columns.extend([
        Arc::new(meta.finish()) as ArrayRef,
        Arc::new(parent_id.finish()),
        Arc::new(variant.finish()),
        Arc::new(variant_params.finish()),
        Arc::new(prompt.finish()),
        Arc::new(expected.finish()),
    ]);
    RecordBatch::try_new(arrow_schema_with(videos), columns).map_err(|e| Error::Bug(format!("canonical batch: {e}")))
}

/// The image columns of a canonical batch: `images` (bytes, path) and `image_facts`.
struct ImageColumns {
    images: ListBuilder<StructBuilder>,
    facts: ListBuilder<StructBuilder>,
}

impl ImageColumns {
    fn new() -> ImageColumns {
        ImageColumns {
            images: ListBuilder::new(StructBuilder::from_fields(image_struct_fields(), 0))
                .with_field(Arc::new(Field::new("item", DataType::Struct(image_struct_fields()), true))),
            facts: ListBuilder::new(StructBuilder::from_fields(image_fact_fields(), 0))
                .with_field(Arc::new(Field::new("item", DataType::Struct(image_fact_fields()), false))),
        }
    }

    /// One row's images; their bytes read from `source` when `embed` and not in memory.
    fn push(&mut self, images: &[ImageRef], embed: bool) -> Result<()> {
        for img in images {
            let st = self.images.values();
            let mut loaded = None;
            let bytes = media_bytes(&img.bytes, &img.source, embed, &mut loaded)?;
            field_builder::<BinaryBuilder>(st, 0).append_option(bytes);
            field_builder::<StringBuilder>(st, 1).append_option(img.path.as_deref());
            st.append(true);
            let facts = self.facts.values();
            field_builder::<StringBuilder>(facts, 0).append_option(img.sha256.as_deref());
            field_builder::<Int32Builder>(facts, 1).append_option(img.width.map(|w| w as i32));
            field_builder::<Int32Builder>(facts, 2).append_option(img.height.map(|h| h as i32));
            field_builder::<StringBuilder>(facts, 3).append_option(img.phash.as_deref());
            field_builder::<StringBuilder>(facts, 4).append_option(img.dhash.as_deref());
            facts.append(true);
        }
        self.images.append(true);
        self.facts.append(true);
        Ok(())
    }

    fn finish(mut self) -> [ArrayRef; 2] {
        [Arc::new(self.images.finish()), Arc::new(self.facts.finish())]
    }
}

/// The video columns of a canonical batch: `videos` (bytes, path), `video_frames`
/// and `video_facts`.
struct VideoColumns {
    files: ListBuilder<StructBuilder>,
    frames: ListBuilder<ListBuilder<StructBuilder>>,
    facts: ListBuilder<StructBuilder>,
}

impl VideoColumns {
    fn new() -> VideoColumns {
        let frame_list = ListBuilder::new(StructBuilder::from_fields(image_struct_fields(), 0))
            .with_field(Arc::new(Field::new("item", DataType::Struct(image_struct_fields()), true)));
        VideoColumns {
            files: ListBuilder::new(StructBuilder::from_fields(image_struct_fields(), 0))
                .with_field(Arc::new(Field::new("item", DataType::Struct(image_struct_fields()), true))),
            frames: ListBuilder::new(frame_list).with_field(Arc::new(Field::new(
                "item",
                list_of(DataType::Struct(image_struct_fields()), true),
                false,
            ))),
            facts: ListBuilder::new(StructBuilder::from_fields(video_fact_fields(), 0))
                .with_field(Arc::new(Field::new("item", DataType::Struct(video_fact_fields()), false))),
        }
    }

    /// One row's videos, their bytes as [`video_bytes`] gives them.
    fn push(&mut self, videos: &[VideoRef], carry: EmbedVideos, embed: bool) -> Result<()> {
        for v in videos {
            let st = self.files.values();
            let mut loaded = None;
            let bytes = video_bytes((&v.bytes, &v.source, v.path.as_deref()), carry, embed, &mut loaded)?;
            field_builder::<BinaryBuilder>(st, 0).append_option(bytes);
            field_builder::<StringBuilder>(st, 1).append_option(v.path.as_deref());
            st.append(true);
            let frames = self.frames.values();
            for f in &v.frames {
                let st = frames.values();
                let mut loaded = None;
                let bytes = video_bytes((&f.bytes, &f.source, f.path.as_deref()), carry, embed, &mut loaded)?;
                field_builder::<BinaryBuilder>(st, 0).append_option(bytes);
                field_builder::<StringBuilder>(st, 1).append_option(f.path.as_deref());
                st.append(true);
            }
            frames.append(true);
            let facts = self.facts.values();
            field_builder::<StringBuilder>(facts, 0).append_option(v.sha256.as_deref());
            field_builder::<Int64Builder>(facts, 1).append_option(v.size.map(|n| n as i64));
            field_builder::<Float64Builder>(facts, 2).append_option(v.duration);
            field_builder::<Float64Builder>(facts, 3).append_option(v.fps);
            field_builder::<Int64Builder>(facts, 4).append_option(v.frame_count.map(|n| n as i64));
            field_builder::<Int32Builder>(facts, 5).append_option(v.width.map(|w| w as i32));
            field_builder::<Int32Builder>(facts, 6).append_option(v.height.map(|h| h as i32));
            field_builder::<StringBuilder>(facts, 7).append_option(v.codec.as_deref());
            let shas = facts
                .field_builder::<ListBuilder<Box<dyn arrow::array::ArrayBuilder>>>(8)
                .expect("frame_sha256 is a list of strings");
            for f in &v.frames {
                shas.values()
                    .as_any_mut()
                    .downcast_mut::<StringBuilder>()
                    .expect("frame_sha256 items are strings")
                    .append_option(f.sha256.as_deref());
            }
            shas.append(true);
            facts.append(true);
        }
        self.files.append(true);
        self.frames.append(true);
        self.facts.append(true);
        Ok(())
    }

    fn finish(mut self) -> [ArrayRef; 3] {
        [Arc::new(self.files.finish()), Arc::new(self.frames.finish()), Arc::new(self.facts.finish())]
    }
}

fn field_builder<T: arrow::array::ArrayBuilder>(st: &mut StructBuilder, i: usize) -> &mut T {
    st.field_builder::<T>(i).expect("struct field builder types match image_struct_fields/meta_struct_fields")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_naturally_and_totally() {
        let mut ids = vec!["10", "9", "a2", "a10", "01", "1", "b", "a"];
        ids.sort_by(|a, b| id_cmp(a, b));
        assert_eq!(ids, vec!["01", "1", "9", "10", "a", "a2", "a10", "b"]);
        assert_eq!(id_cmp("x", "x"), Ordering::Equal);
    }

    #[test]
    fn batch_matches_schema() {
        let mut s = Sample::new("1", "Is there a cat?", "yes");
        s.meta.insert("organ".into(), "HEAD".into());
        s.images.push(ImageRef { path: Some("a.png".into()), ..Default::default() });
        let batch = to_record_batch(&[s], Embed::PathsOnly).unwrap();
        assert_eq!(batch.num_rows(), 1);
        assert_eq!(batch.schema(), arrow_schema());
    }

    /// Videos carried as files beside the data file: a video or frame with a path
    /// travels as that file only, even when its bytes are in memory (a release read
    /// back); a frame without a path (drawn by a variant) has no file, so its bytes
    /// stay in the batch.
    #[test]
    fn videos_carried_as_files_keep_bytes_only_where_no_file_travels() {
        use arrow::array::{Array, BinaryArray, ListArray, StructArray};
        let mut s = Sample::new("1", "What happens?", "yes");
        s.videos.push(VideoRef {
            path: Some("clip.mp4".into()),
            bytes: Some(b"mp4 bytes".to_vec()),
            frames: vec![
                ImageRef { path: Some("clip/0.png".into()), bytes: Some(b"png 0".to_vec()), ..Default::default() },
                ImageRef { path: None, bytes: Some(b"drawn".to_vec()), ..Default::default() },
            ],
            ..Default::default()
        });
        let bytes_of = |list: &ListArray| -> Vec<Option<Vec<u8>>> {
            let items = list.value(0);
            let items = items.as_any().downcast_ref::<StructArray>().unwrap();
            let b = items.column(0).as_any().downcast_ref::<BinaryArray>().unwrap();
            (0..b.len()).map(|i| b.is_valid(i).then(|| b.value(i).to_vec())).collect()
        };
        let batch =
            to_record_batch_with(std::slice::from_ref(&s), Embed::Images, EmbedVideos::PathsOnly, true).unwrap();
        let videos = batch.column_by_name("videos").unwrap().as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(bytes_of(videos), vec![None]);
        let frames = batch.column_by_name("video_frames").unwrap().as_any().downcast_ref::<ListArray>().unwrap();
        let per_video = frames.value(0);
        let per_video = per_video.as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(bytes_of(per_video), vec![None, Some(b"drawn".to_vec())]);
        // Embedded as images are: every byte in memory is written.
        let batch = to_record_batch_with(&[s], Embed::Images, EmbedVideos::AsImages, true).unwrap();
        let videos = batch.column_by_name("videos").unwrap().as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(bytes_of(videos), vec![Some(b"mp4 bytes".to_vec())]);
    }
}
