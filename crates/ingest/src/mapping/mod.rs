//! Field mapping: one [`RawRecord`] → one canonical [`Sample`] (images not yet
//! resolved), or the list of everything wrong with it. Real data is messy and
//! handled here: ids that are ints in one row and strings in the next, the
//! string "NULL" for missing, trailing spaces, string-encoded and nested
//! option lists, answers as letters, indices or text.

mod answer;
mod canonical;
mod choices;
mod gold;
mod id;
mod image_specs;
mod mapper;
mod question;
#[cfg(test)]
mod tests;
mod video_specs;

use std::borrow::Cow;

use super::plan::{AnswerKind, Format, IngestPlan};
use super::raw::RawRecord;
use crate::error::Problem;
use crate::sample::Sample;
use crate::tables::parquet::ClassLabels;
pub use gold::{READ_INDEX, READ_LETTER, READ_TEXT, folded, infer_format, reading_names};
use mapper::Mapper;

pub(super) const LETTERS: &[u8] = b"ABCDEFGHIJ";

/// An image as the source names it, before resolution against the image folder.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageSpec {
    Path(String),
    Bytes { bytes: Vec<u8>, path: Option<String> },
}

/// A video as the source names it, before resolution against the video folder.
#[derive(Debug, Clone, PartialEq)]
pub enum VideoSpec {
    /// A video file's path.
    File(String),
    /// The ordered paths of a video's frame images.
    Frames(Vec<String>),
    /// A video file's bytes, embedded in a blindspot data file read back,
    /// with the path its row names.
    Embedded { bytes: Vec<u8>, path: Option<String> },
    /// A video given as frames whose frame images are embedded in a
    /// blindspot data file read back: each frame's bytes and path.
    EmbeddedFrames(Vec<(Vec<u8>, Option<String>)>),
}

/// A mapped sample plus its unresolved images.
#[derive(Debug, Clone)]
pub struct Mapped {
    pub sample: Sample,
    pub images: Vec<ImageSpec>,
    pub videos: Vec<VideoSpec>,
    /// Where the record came from.
    pub loc: crate::error::Location,
    /// Data-quality notes: what ingest kept or dropped that a designer should
    /// know of (counted per kind in the ingest summary).
    pub notes: Vec<Cow<'static, str>>,
    /// The readings of the gold that name its option under `answer-kind = "auto"`
    /// (`READ_*` bits; 0 when the kind is set or there are no options): one
    /// reading must fit every row of a dataset.
    pub readings: u8,
}

/// Note: absent option cells after the last present option were dropped.
pub const NOTE_TRAILING_ABSENT: &str =
    "absent option cells (empty, nan or an [ingest] missing value) after the last present option were dropped";
/// Note: repeated option texts were kept because the gold is given by letter or index.
pub const NOTE_REPEATED_OPTIONS: &str =
    "options repeat a text; kept because the gold is given by letter or index and is unambiguous";

/// Note: the options were read from letter columns, no options field being mapped.
pub const NOTE_LETTER_COLUMNS: &str = "options read from the columns A, B, ... (VLMEvalKit's layout), as no options field \
     is mapped; set [ingest.fields] options to read them from elsewhere";

/// Note: an embedded image's path label was absolute or climbed with `..`.
pub const NOTE_IMAGE_LABEL_NAME: &str = "embedded images' path labels were absolute or climbed with '..'; only their \
     file names were kept (the bytes are unchanged; a release keeps no path outside itself)";

/// Note: an embedded video's (or video frame's) path label was absolute or climbed with `..`.
pub const NOTE_VIDEO_LABEL_NAME: &str = "embedded videos' path labels were absolute or climbed with '..'; only their \
     file names were kept (the bytes are unchanged; a release keeps no path outside itself)";

/// Note: images named by path were kept as names, their files unread.
pub const NOTE_IMAGE_NAMES_ONLY: &str = "images named by path were kept as names only, their files unread (no image \
     folder; [ingest] image-names-only): no release can be built from them";

/// Note: images named by path in a data file read without a pipeline were not
/// found beside it.
pub const NOTE_IMAGE_NOT_BESIDE: &str = "images named by path were not found relative to the input file's folder and \
     were kept as names only, their files unread: give their folder with --images DIR";

/// Note: images whose header reads but whose pixel data does not decode.
pub const NOTE_UNDECODABLE: &str = "images whose header reads but whose pixel data does not decode (truncated or \
     damaged files) were kept as they are: re-export them";

/// Result of mapping one record.
pub enum Outcome {
    Kept(Box<Mapped>),
    Filtered,
    Invalid(Vec<Problem>),
}

/// Whether a record passes the plan's filters.
pub fn passes_filters(rec: &RawRecord, plan: &IngestPlan) -> bool {
    plan.filters.iter().all(|f| {
        let v = rec.field(&f.field).and_then(|r| r.scalar_text()).map(|s| s.trim().to_string());
        let in_ok = f.any_of.as_ref().is_none_or(|l| v.as_ref().is_some_and(|v| l.iter().any(|x| x == v)));
        let not_ok = f.not_in.as_ref().is_none_or(|l| v.as_ref().is_none_or(|v| !l.iter().any(|x| x == v)));
        in_ok && not_ok
    })
}

/// The record's id as far as it can be read, for reporting a rejected row.
pub fn best_effort_id(rec: &RawRecord, plan: &IngestPlan, format: Format) -> Option<String> {
    let mut m =
        Mapper { rec, plan, problems: Vec::new(), used: Vec::new(), read_in_part: Vec::new(), notes: Vec::new() };
    let defaults: &[&str] = if format == Format::Vlmevalkit { &["index"] } else { &["id"] };
    let acc = m.pick(&plan.fields.id, defaults)?;
    m.text("id", acc)
}

/// Maps one record to a canonical sample; `class_labels`: the names of its
/// table's `ClassLabel` columns (Parquet, Arrow).
pub fn map_record(rec: &RawRecord, plan: &IngestPlan, format: Format, class_labels: &ClassLabels) -> Outcome {
    if !passes_filters(rec, plan) {
        return Outcome::Filtered;
    }
    let mut m =
        Mapper { rec, plan, problems: Vec::new(), used: Vec::new(), read_in_part: Vec::new(), notes: Vec::new() };
    let vlm = format == Format::Vlmevalkit;

    let id = id::map_id(&mut m, vlm);
    // The question loses the options written in it.
    let mut question = question::map_question(&mut m);
    let (options, labelled) = choices::map_choices(&mut m, &mut question, vlm);
    let context = question::map_context(&mut m);
    let question_type = question::map_question_type(&mut m, vlm);
    let (raw_answer, kind, answer_src) = answer::map_answer(&mut m);
    let images = image_specs::map_images(&mut m);
    let videos = video_specs::map_videos(&mut m);

    // Stop here if the basics are missing: later checks would only repeat them.
    let (Some(id), Some(question), Some(raw_answer)) = (id, question, raw_answer) else {
        return Outcome::Invalid(m.problems);
    };
    if question.trim().is_empty() {
        m.problem("question", "the question is empty");
    }
    let Some((raw_answer, references)) = answer::reference_answer(&mut m, raw_answer, &answer_src) else {
        return Outcome::Invalid(m.problems);
    };
    let Some(raw_answer) = answer::class_name(&mut m, raw_answer, &options, &answer_src, class_labels) else {
        return Outcome::Invalid(m.problems);
    };
    let Some(raw_answer) = answer::normalize_answer(&mut m, raw_answer, &answer_src, labelled) else {
        return Outcome::Invalid(m.problems);
    };
    let kind = answer::typed_kind(kind, &raw_answer, format, &options);
    let (answer, answer_index, readings) = answer::resolve_gold(&mut m, &raw_answer, &options, kind, &answer_src);
    answer::check_answer_index(&mut m, &answer_src, answer_index, &options);
    let canonical_input = canonical::is_canonical_input(plan);
    let format = answer::answer_format(&mut m, canonical_input, &options, &answer);
    choices::note_unmapped_options(&mut m, &options, &answer, format);
    let answer = answer::check_answer_format(&mut m, answer, format, &options, &answer_src);
    choices::check_repeated_options(&mut m, &options, &answer, answer_index, readings);
    let (options, answer_index) = choices::shuffle_options(plan, &id, options, answer_index);
    let columns = canonical::canonical_columns(&mut m, canonical_input);
    id::check_id_separator(&mut m, &id, &columns.variant_fields);
    let mut meta = canonical::map_meta(&mut m);
    if let Some(references) = references {
        meta.insert(answer_src.clone(), references);
    }
    if !m.problems.is_empty() {
        return Outcome::Invalid(m.problems);
    }
    let mut sample = Sample::new(id, question, answer);
    let [parent_id, variant, variant_params, prompt, expected] = columns.variant_fields;
    (sample.parent_id, sample.variant, sample.variant_params, sample.prompt, sample.expected) =
        (parent_id, variant, variant_params, prompt, expected);
    sample.benchmark = columns.benchmark.filter(|_| canonical_input).unwrap_or_else(|| plan.benchmark.clone());
    sample.split = columns.split.filter(|_| canonical_input).unwrap_or_else(|| plan.split.clone());
    sample.question_type = question_type;
    sample.context = context;
    sample.options = options;
    sample.answer_index = answer_index.map(|i| i as i32);
    sample.answer_format = format;
    sample.meta = meta;
    let readings = if kind == AnswerKind::Auto { readings } else { 0 };
    Outcome::Kept(Box::new(Mapped { sample, images, videos, loc: rec.loc.clone(), notes: m.notes, readings }))
}

/// A text cut to 60 characters, for messages.
pub(crate) fn short(s: &str) -> String {
    if s.chars().count() > 60 { format!("{}…", s.chars().take(60).collect::<String>()) } else { s.to_string() }
}
