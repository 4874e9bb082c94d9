//! Field mapping: one [`RawRecord`] → one canonical [`Sample`] (images not yet
//! resolved), or the list of everything wrong with it. Real data is messy and
//! handled here: ids that are ints in one row and strings in the next, the
//! string "NULL" for missing, trailing spaces, string-encoded and nested
//! option lists, answers as letters, indices or text.

use std::borrow::Cow;
use std::collections::BTreeMap;

use rand::SeedableRng;
use rand::seq::SliceRandom;

use super::options::{option_label, parse_list_literal, split_options_from_question, strip_option_labels};
use super::plan::{Accessor, AnswerKind, Format, IngestPlan, MetaKeep, TemplatePart};
use super::raw::{Raw, RawRecord};
use crate::error::{Problem, did_you_mean};
use crate::sample::{AnswerFormat, Sample, parse_number};
use crate::seed::rng_for;

pub(super) const LETTERS: &[u8] = b"ABCDEFGHIJ";

/// An image as the source names it, before resolution against the image folder.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageSpec {
    Path(String),
    Bytes { bytes: Vec<u8>, path: Option<String> },
}

/// A mapped sample plus its unresolved images.
#[derive(Debug, Clone)]
pub struct Mapped {
    pub sample: Sample,
    pub images: Vec<ImageSpec>,
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

/// Note: images named by path were kept as names, their files unread.
pub const NOTE_IMAGE_NAMES_ONLY: &str = "images named by path were kept as names only, their files unread (no image \
     folder; [ingest] image-names-only): no release can be built from them";

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

struct Mapper<'a> {
    rec: &'a RawRecord,
    plan: &'a IngestPlan,
    problems: Vec<Problem>,
    /// Positions of the top-level source fields the mapping read (not repeated in meta).
    used: Vec<usize>,
    notes: Vec<Cow<'static, str>>,
}

impl<'a> Mapper<'a> {
    fn problem(&mut self, field: &str, message: impl Into<String>) -> &mut Problem {
        self.problems.push(Problem::new(self.rec.loc.clone(), message).field(field));
        self.problems.last_mut().expect("just pushed")
    }

    fn is_missing(&self, v: &Raw) -> bool {
        match v {
            Raw::Null => true,
            Raw::Str(s) => {
                let t = s.trim();
                t.is_empty() || self.plan.missing.iter().any(|m| m == t)
            }
            Raw::Float(f) => f.is_nan(),
            _ => false,
        }
    }

    /// An option cell that holds no option: a missing value, or `nan` as pandas writes one.
    fn absent_option(&self, v: &Raw) -> bool {
        self.is_missing(v) || v.scalar_text().is_some_and(|t| t.trim().eq_ignore_ascii_case("nan"))
    }

    /// The options of `cells` (None = absent), letters kept: absent cells after the
    /// last present one are dropped (noted); an absent cell before a present one is a
    /// problem, since dropping it would re-letter every later option and the gold.
    fn keep_letters(&mut self, cells: Vec<Option<String>>, names: &[String]) -> Vec<String> {
        let last = cells.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
        if last < cells.len() {
            self.notes.push(Cow::Borrowed(NOTE_TRAILING_ABSENT));
        }
        let mut out = Vec::with_capacity(last);
        for (i, c) in cells.into_iter().take(last).enumerate() {
            match c {
                Some(t) => out.push(t),
                None => {
                    let name = names.get(i).map_or(String::new(), |n| format!(" (source {n})"));
                    self.problem(
                        "options",
                        format!(
                            "option {}{name} is absent but a later option is present: dropping it would re-letter the later options and the gold",
                            crate::sample::option_letter(i)
                        ),
                    )
                    .help = Some("fill the option in, or remove the options after it; only absent options at the end are dropped".into());
                }
            }
        }
        out
    }

    /// A field's value, with "missing" values as None.
    fn get(&mut self, path: &str) -> Option<Cow<'a, Raw>> {
        let rec: &'a RawRecord = self.rec;
        let found = match &rec.value {
            // The common case, a top-level field: one scan finds it and marks it used.
            Raw::Map(fields) if !path.starts_with('_') => match fields.iter().position(|(k, _)| **k == *path) {
                Some(i) => {
                    self.used.push(i);
                    Some(Cow::Borrowed(&fields[i].1))
                }
                None if !path.contains('.') => None,
                None => {
                    let top = path.split('.').next().unwrap_or(path);
                    if let Some(i) = fields.iter().position(|(k, _)| **k == *top) {
                        self.used.push(i);
                    }
                    rec.field(path)
                }
            },
            _ => rec.field(path),
        };
        found.filter(|v| !self.is_missing(v))
    }

    fn has(&self, path: &str) -> bool {
        self.rec.has(path)
    }

    /// Text of an accessor; a problem when a required placeholder is missing.
    fn text(&mut self, canonical: &str, acc: &Accessor) -> Option<String> {
        match acc {
            Accessor::Path(p) => {
                let v = self.get(p)?;
                match v.scalar_text() {
                    Some(s) => Some(s.trim().to_string()),
                    None => {
                        self.problem(
                            canonical,
                            format!("source field \"{p}\" is {}, expected text or a number", v.kind()),
                        );
                        None
                    }
                }
            }
            Accessor::Template(parts) => {
                let mut out = String::new();
                for part in parts {
                    match part {
                        TemplatePart::Lit(s) => out.push_str(s),
                        TemplatePart::Field(f) => match self.get(f).and_then(|v| v.scalar_text()) {
                            Some(s) => out.push_str(s.trim()),
                            None => {
                                self.problem(canonical, format!("template field \"{f}\" is missing"));
                                return None;
                            }
                        },
                    }
                }
                Some(out)
            }
        }
    }

    /// The configured accessor, else the first canonical name the record has.
    fn pick<'p>(&self, configured: &'p Option<Accessor>, defaults: &[&str]) -> Option<&'p Accessor> {
        if configured.is_some() {
            return configured.as_ref();
        }
        defaults.iter().find(|d| self.has(d)).map(|d| default_accessor(d))
    }

    fn missing_required(&mut self, canonical: &str, acc: Option<&Accessor>, defaults: &[&str]) {
        if self.problems.iter().any(|p| p.field.as_deref() == Some(canonical)) {
            return; // already explained (e.g. the field has the wrong type)
        }
        let present = match acc {
            Some(Accessor::Path(p)) => self.has(p).then(|| p.clone()),
            Some(Accessor::Template(_)) => None,
            None => defaults.iter().find(|d| self.has(d)).map(|d| d.to_string()),
        };
        if let Some(field) = present {
            self.problem(canonical, format!("the {canonical} is empty (source field \"{field}\")")).help =
                Some("fill it in; values listed in [ingest] missing (default [\"NULL\"]) count as empty".to_string());
            return;
        }
        let names = self.rec.field_names().into_iter().map(String::from).collect::<Vec<_>>();
        let wanted = match acc {
            Some(Accessor::Path(p)) => p.clone(),
            Some(Accessor::Template(_)) => return,
            None => defaults.join("\" or \""),
        };
        let key = canonical.replace('_', "-");
        let hint = match acc {
            Some(Accessor::Path(p)) if !self.has(p) => match did_you_mean(p, names.iter().map(String::as_str)) {
                Some(m) => {
                    format!("the record has no field \"{p}\"; did you mean \"{m}\"? (set [ingest.fields] {key})")
                }
                None => format!("the record's fields are: {}; set [ingest.fields] {key}", names.join(", ")),
            },
            Some(_) => "the value is empty or marked missing".to_string(),
            None => {
                format!("the record's fields are: {}; map one with [ingest.fields] {key} = \"...\"", names.join(", "))
            }
        };
        // A member of a top-level object that holds the questions as an array of objects.
        let wrapped = match (&self.rec.key, &self.rec.value) {
            (Some(key), Raw::Map(fields)) => fields
                .iter()
                .find(|(_, v)| matches!(v, Raw::List(items) if matches!(items.first(), Some(Raw::Map(_)))))
                .map(|(name, _)| format!("{key}.{name}")),
            _ => None,
        };
        let hint = match wrapped {
            Some(path) => format!(
                "{hint}\n  help: this record is a member of the file's top-level object and \"{path}\" is a list of \
                 records: if the questions are there, set [ingest] records = \"{path}\""
            ),
            None => hint,
        };
        self.problem(canonical, format!("no {canonical} (looked for \"{wanted}\")")).help = Some(hint);
    }
}

/// The record's id as far as it can be read, for reporting a rejected row.
pub fn best_effort_id(rec: &RawRecord, plan: &IngestPlan, format: Format) -> Option<String> {
    let mut m = Mapper { rec, plan, problems: Vec::new(), used: Vec::new(), notes: Vec::new() };
    let defaults: &[&str] = if format == Format::Vlmevalkit { &["index"] } else { &["id"] };
    let acc = m.pick(&plan.fields.id, defaults)?;
    m.text("id", acc)
}

/// The canonical field names tried when a pipeline maps nothing, built once.
static DEFAULT_ACCESSORS: std::sync::LazyLock<Vec<Accessor>> = std::sync::LazyLock::new(|| {
    [
        "id",
        "index",
        "question",
        "context",
        "hint",
        "question_type",
        "category",
        "answer",
        "answer_index",
        "options",
        "choices",
        "images",
        "image",
        "file_name",
        "A",
        "B",
        "C",
        "D",
        "E",
        "F",
        "G",
        "H",
        "I",
        "J",
    ]
    .iter()
    .map(|n| Accessor::Path((*n).to_string()))
    .collect()
});

fn default_accessor(name: &str) -> &'static Accessor {
    DEFAULT_ACCESSORS
        .iter()
        .find(|a| matches!(a, Accessor::Path(p) if p == name))
        .expect("every default name is in DEFAULT_ACCESSORS")
}

/// Maps one record to a canonical sample.
pub fn map_record(rec: &RawRecord, plan: &IngestPlan, format: Format) -> Outcome {
    if !passes_filters(rec, plan) {
        return Outcome::Filtered;
    }
    let mut m = Mapper { rec, plan, problems: Vec::new(), used: Vec::new(), notes: Vec::new() };
    let f = &plan.fields;
    let vlm = format == Format::Vlmevalkit;

    // id
    let id_defaults: &[&str] = if vlm { &["index"] } else { &["id"] };
    let id_acc = m.pick(&f.id, id_defaults);
    let id = id_acc.and_then(|a| m.text("id", a));
    if id.is_none() && m.problems.is_empty() {
        m.missing_required("id", f.id.as_ref(), id_defaults);
    }
    // A number too large for a double to hold exactly has already lost digits.
    if let Some(Accessor::Path(p)) = id_acc
        && let Some(Raw::Float(x)) = m.get(p).as_deref()
        && x.abs() >= 9_007_199_254_740_992.0
    {
        let x = *x;
        m.problem("id", format!("the id is a number too large to read exactly ({x:e})")).help =
            Some("write ids beyond 2^53 as strings (\"12345678901234567890\")".into());
    }
    if let Some(bad) = id.as_deref().and_then(|i| i.chars().find(|c| c.is_control())) {
        m.problem("id", format!("the id contains the control character U+{:04X}", u32::from(bad))).help =
            Some("ids are written one per line to kept_ids.txt and used in file names: remove newlines, tabs and other control characters".into());
    }

    // question (+ options written inside it)
    let mut question = match &plan.question_text {
        Some(q) => Some(q.clone()),
        None => {
            let acc = m.pick(&f.question, &["question"]);
            let q = acc.and_then(|a| m.text("question", a));
            if q.is_none() {
                m.missing_required("question", f.question.as_ref(), &["question"]);
            }
            q
        }
    };
    let mut options: Vec<String> = match &question {
        Some(q) if plan.options_in_question => {
            let (stem, opts) = split_options_from_question(q);
            if opts.is_empty() {
                m.problem("question", "options-in-question is set but no options were found in the question").help =
                    Some("options are read from the end of the question: lines `A. x` / `B. y`, or inline `A: x, B: y`, `(A) x (B) y`, `A. x B. y`; map the options field instead if they are elsewhere".into());
            }
            question = Some(stem);
            // Absent options written in the question (`C. nan`) count as absent ones anywhere do.
            let names: Vec<String> = (0..opts.len())
                .map(|i| format!("option {} of the question", crate::sample::option_letter(i)))
                .collect();
            let cells: Vec<Option<String>> =
                opts.into_iter().map(|o| (!m.absent_option(&Raw::Str(o.clone()))).then_some(o)).collect();
            m.keep_letters(cells, &names)
        }
        _ => map_options(&mut m, vlm),
    };
    let labelled = strip_option_labels(&mut options);
    if options.len() > 26 {
        m.problem("options", format!("the question has {} options, more than the 26 letters A-Z", options.len())).help =
            Some("blindspot's prompts, answer parser and exports label options A-Z: split the question, or keep at most 26 options".into());
    }

    let ctx_acc = m.pick(&f.context, &["context", "hint"]);
    let context = ctx_acc.and_then(|a| m.text("context", a));
    let qt_defaults: &[&str] = if vlm { &["category", "question_type"] } else { &["question_type"] };
    let qt_acc = m.pick(&f.question_type, qt_defaults);
    let question_type = qt_acc.and_then(|a| m.text("question_type", a));

    // answer
    let (ans_acc, kind) = match (&f.answer, m.has("answer"), m.has("answer_index")) {
        (Some(a), _, _) => (Some(a), f.answer_kind),
        (None, true, _) => (Some(default_accessor("answer")), f.answer_kind),
        (None, false, true) => (Some(default_accessor("answer_index")), AnswerKind::Index),
        _ => (None, f.answer_kind),
    };
    let raw_answer = match ans_acc {
        Some(Accessor::Path(p)) => m.get(p).map(Cow::into_owned),
        Some(a) => m.text("answer", a).map(Raw::Str),
        None => None,
    };
    let answer_src = match ans_acc {
        Some(Accessor::Path(p)) => p.clone(),
        _ => "answer".into(),
    };
    if raw_answer.is_none() {
        m.missing_required("answer", ans_acc, &["answer", "answer_index"]);
    }

    let images = map_images(&mut m);

    // Stop here if the basics are missing: later checks would only repeat them.
    let (Some(id), Some(question), Some(raw_answer)) = (id, question, raw_answer) else {
        return Outcome::Invalid(m.problems);
    };
    if question.trim().is_empty() {
        m.problem("question", "the question is empty");
    }
    let raw_answer = match raw_answer.scalar_text().map(|s| s.trim().to_string()) {
        Some(t) => match plan.answer_map.get(&t) {
            Some(mapped) => Raw::Str(mapped.clone()),
            None => match raw_answer {
                Raw::Str(_) => Raw::Str(t),
                other => other,
            },
        },
        None => {
            m.problem(&answer_src, format!("the answer is {}, expected text or a number", raw_answer.kind()));
            return Outcome::Invalid(m.problems);
        }
    };

    // "B. table" as the answer of options that were labelled "A. ...", "B. ...".
    let raw_answer = match raw_answer {
        Raw::Str(t) if labelled && option_label(&t, None).is_some() => {
            Raw::Str(option_label(&t, None).map_or(t.clone(), |(_, rest)| rest.to_string()))
        }
        other => other,
    };
    let by_index = matches!(kind, AnswerKind::Index | AnswerKind::Index1);
    // How the gold named its option (`READ_*` bits; 0 without options).
    let mut readings = 0u8;
    let (answer, answer_index) = if options.is_empty() {
        if by_index {
            m.problem(
                &answer_src,
                format!(
                    "the answer is given as an option index ({}) but the question has no options",
                    raw_answer.scalar_text().unwrap_or_default()
                ),
            )
            .help = Some("map the options ([ingest.fields] options), or give the answer as text".into());
        }
        (raw_answer.scalar_text().unwrap_or_default(), None)
    } else {
        match resolve_choice(&raw_answer, &options, kind) {
            Ok((i, read)) => {
                readings = read;
                (options[i].clone(), Some(i))
            }
            Err(msg) => {
                m.problem(&answer_src, msg.0).help = msg.1;
                (String::new(), None)
            }
        }
    };
    // A record with both `answer` and `answer_index`: they must name the same option.
    if f.answer.is_none() && answer_src == "answer" && m.has("answer_index") {
        match (m.get("answer_index").map(Cow::into_owned), answer_index) {
            (Some(raw_index), Some(i)) => match resolve_choice(&raw_index, &options, AnswerKind::Index) {
                Ok((j, _)) if j == i => {}
                Ok((j, _)) => {
                    m.problem(
                        "answer_index",
                        format!(
                            "answer \"{}\" is option {} but answer_index {} is option {} (\"{}\")",
                            short(&answer),
                            crate::sample::option_letter(i),
                            j,
                            crate::sample::option_letter(j),
                            short(&options[j])
                        ),
                    )
                    .help = Some("fix one of the two, or map only one ([ingest.fields] answer = \"answer_index\", answer-kind = \"index\")".into());
                }
                Err(msg) => m.problem("answer_index", msg.0).help = msg.1,
            },
            (Some(raw_index), None) if options.is_empty() => {
                m.problem(
                    "answer_index",
                    format!(
                        "answer_index {} is given but the question has no options",
                        raw_index.scalar_text().unwrap_or_default()
                    ),
                )
                .help = Some("map the options, or remove answer_index".into());
            }
            _ => {}
        }
    }

    // A canonical input (no field mapping) carries its own format, benchmark,
    // split and variant columns; other sources keep such fields in meta.
    let canonical_input = matches!(plan.fields.meta, MetaKeep::All) && plan.fields.id.is_none();
    let declared = if canonical_input {
        m.get("answer_format")
            .and_then(|v| v.scalar_text())
            .and_then(|t| AnswerFormat::ALL.into_iter().find(|f| f.as_str() == t.trim()))
    } else {
        None
    };
    let format = plan.answer_format.or(declared).unwrap_or_else(|| infer_format(&options, &answer));
    if options.is_empty()
        && plan.fields.options.is_none()
        && !plan.options_in_question
        && let Some(field) = unmapped_list_with(&m, &answer)
    {
        m.notes.push(Cow::Owned(format!(
            "no options field is mapped, but the list field \"{field}\" holds the gold among other values: the \
             questions are read as {}; if that list is the options, set [ingest.fields] options = \"{field}\"",
            format.as_str()
        )));
    }
    let answer = match format {
        AnswerFormat::YesNo => match answer.to_ascii_lowercase().as_str() {
            a @ ("yes" | "no") => a.to_string(),
            _ => {
                m.problem(
                    &answer_src,
                    format!("answer \"{answer}\" is not yes or no, but the answer format is yes_no"),
                )
                .help = Some("map other labels with [ingest.answer-map], e.g. \"1\" = \"yes\"".into());
                answer
            }
        },
        AnswerFormat::Numeric if parse_number(&answer).is_none() => {
            m.problem(&answer_src, format!("answer \"{answer}\" is not a number, but the answer format is numeric"));
            answer
        }
        AnswerFormat::MultipleChoice if options.is_empty() => {
            m.problem("options", "the answer format is multiple_choice but the question has no options");
            answer
        }
        _ => answer,
    };
    if answer.is_empty() && m.problems.is_empty() {
        m.problem(&answer_src, "the answer is empty");
    }
    if let Some((a, b)) = folded_twins(&options) {
        // Repeated texts are kept when the gold is named by letter or index; a gold
        // given as text cannot say which of two options alike it is, nor can a
        // response that gives that text.
        let by_text_only = readings & READ_TEXT != 0 && readings & (READ_LETTER | READ_INDEX) == 0;
        let gold_repeats = answer_index.is_some_and(|i| options.iter().filter(|o| **o == options[i]).count() > 1);
        if by_text_only && gold_repeats {
            m.problem("options", format!("the answer \"{}\" is the text of more than one option", short(&answer)))
                .help = Some(
                "give the gold by letter or index (answer-kind = \"letter\" or \"index\"), or make the options distinct"
                    .into(),
            );
        } else if by_text_only {
            m.problem(
                "options",
                format!(
                    "options {} (\"{}\") and {} (\"{}\") are the same text once case and Unicode normalization are \
                     ignored, and the answer is given as text",
                    crate::sample::option_letter(a),
                    short(&options[a]),
                    crate::sample::option_letter(b),
                    short(&options[b])
                ),
            )
            .help = Some(
                "make the options distinct, or give the gold by letter or index (set [ingest.fields] answer-kind)"
                    .into(),
            );
        } else if answer_index.is_some() {
            m.notes.push(Cow::Borrowed(NOTE_REPEATED_OPTIONS));
        }
    }

    let mut answer_index = answer_index;
    if plan.shuffle_options && answer_index.is_some() {
        let mut order: Vec<usize> = (0..options.len()).collect();
        order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(rng_for(plan.seed, "ingest.shuffle-options", &id)));
        let gold = answer_index.unwrap_or(0);
        options = order.iter().map(|&i| options[i].clone()).collect();
        answer_index = order.iter().position(|&i| i == gold);
    }

    // Canonical columns a re-ingested blindspot file carries.
    let mut canonical = |name: &str| if canonical_input { m.get(name).and_then(|v| v.scalar_text()) } else { None };
    let benchmark = canonical("benchmark");
    let split = canonical("split");
    let variant_fields = ["parent_id", "variant", "variant_params", "prompt", "expected"].map(&mut canonical);
    // `::` joins a variant's parent id and kind (`<parent_id>::<kind>`): a question's
    // own id holding it could name another question's variant.
    let variant_id = match &variant_fields {
        [Some(parent), Some(kind), ..] => Some(format!("{parent}::{kind}")),
        _ => None,
    };
    if id.contains("::") && variant_id.as_deref() != Some(id.as_str()) {
        m.problem("id", format!("the id \"{}\" contains \"::\"", short(&id))).help = Some(
            "\"::\" is reserved: it joins a variant's parent id and kind (\"<id>::no_image\"); map another id, or a \
             template that writes another separator (\"{a}-{b}\")"
                .into(),
        );
    }
    // Recomputed from the bytes or files on ingest, never kept as meta.
    if canonical_input {
        let _ = m.get("image_facts");
    }
    let meta = map_meta(&mut m);
    if !m.problems.is_empty() {
        return Outcome::Invalid(m.problems);
    }
    let mut sample = Sample::new(id, question, answer);
    let [parent_id, variant, variant_params, prompt, expected] = variant_fields;
    (sample.parent_id, sample.variant, sample.variant_params, sample.prompt, sample.expected) =
        (parent_id, variant, variant_params, prompt, expected);
    sample.benchmark = benchmark.filter(|_| canonical_input).unwrap_or_else(|| plan.benchmark.clone());
    sample.split = split.filter(|_| canonical_input).unwrap_or_else(|| plan.split.clone());
    sample.question_type = question_type;
    sample.context = context;
    sample.options = options;
    sample.answer_index = answer_index.map(|i| i as i32);
    sample.answer_format = format;
    sample.meta = meta;
    let readings = if kind == AnswerKind::Auto { readings } else { 0 };
    Outcome::Kept(Box::new(Mapped { sample, images, loc: rec.loc.clone(), notes: m.notes, readings }))
}

fn map_options(m: &mut Mapper<'_>, vlm: bool) -> Vec<String> {
    let plan = m.plan;
    // Options drawn in the image: each is its own letter.
    if let Some(n) = plan.fields.options_letters {
        return (0..n).map(crate::sample::option_letter).collect();
    }
    let accs: Vec<&Accessor> = match &plan.fields.options {
        Some(a) => a.iter().collect(),
        None if vlm => letter_columns(m, 1),
        None => match ["options", "choices"].iter().find(|d| m.has(d)) {
            Some(d) => vec![default_accessor(d)],
            None => {
                let columns = letter_columns(m, 2);
                if !columns.is_empty() {
                    m.notes.push(Cow::Borrowed(NOTE_LETTER_COLUMNS));
                }
                columns
            }
        },
    };
    if accs.len() > 1 {
        // One field per option (A..J columns): absent ones only at the end.
        let cells: Vec<Option<String>> = accs
            .iter()
            .map(|a| m.text("options", a).filter(|t| !t.eq_ignore_ascii_case("nan") && !t.is_empty()))
            .collect();
        let names: Vec<String> = accs
            .iter()
            .map(|a| match a {
                Accessor::Path(p) => format!("field \"{p}\""),
                Accessor::Template(_) => "a template".into(),
            })
            .collect();
        return m.keep_letters(cells, &names);
    }
    let Some(&acc) = accs.first() else { return Vec::new() };
    let Accessor::Path(p) = acc else {
        return m.text("options", acc).into_iter().collect();
    };
    let Some(v) = m.get(p) else { return Vec::new() };
    // Source names of the elements, for messages: "element 2 of ..." or "key \"B\" of ...".
    let mut keys: Option<Vec<String>> = None;
    let list: Cow<'_, [Raw]> = match v.as_ref() {
        Raw::List(items) => match items.as_slice() {
            // A nested list [[a, b, c]] is the options list itself.
            [Raw::List(inner)] => Cow::Borrowed(inner.as_slice()),
            _ => Cow::Borrowed(items.as_slice()),
        },
        Raw::Str(s) => {
            match parse_list_literal(s).or_else(|| lettered_options(s)) {
                Some(items) => Cow::Owned(items.into_iter().map(Raw::Str).collect()),
                None => {
                    m.problem(
                    "options",
                    format!("source field \"{p}\" is a string that is not a list: \"{}\"", short(s)),
                )
                .help = Some("options must be a list, a string like \"['a', 'b']\" or \"A. a\\nB. b\", or one field per option".into());
                    return Vec::new();
                }
            }
        }
        Raw::Map(fields) => match options_by_letter(fields) {
            Ok(items) => {
                keys = Some((0..items.len()).map(crate::sample::option_letter).collect());
                Cow::Owned(items)
            }
            Err(why) => {
                m.problem("options", format!("source field \"{p}\" is an object whose keys {why}")).help = Some(
                    "an object of options needs the keys A, B, C, ... (any order, each once, none skipped); \
                     otherwise name one field per option in [ingest.fields] options = [\"options.x\", ...]"
                        .into(),
                );
                return Vec::new();
            }
        },
        other => {
            m.problem("options", format!("source field \"{p}\" is {}, expected a list of options", other.kind()));
            return Vec::new();
        }
    };
    let mut cells = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        if m.absent_option(item) {
            cells.push(None);
            continue;
        }
        match item.scalar_text() {
            Some(s) => cells.push(Some(s.trim().to_string())),
            None => {
                m.problem("options", format!("option {} is {}, expected text", i + 1, item.kind()));
                cells.push(Some(String::new()));
            }
        }
    }
    let names: Vec<String> = match keys {
        Some(keys) => keys.iter().map(|k| format!("key \"{k}\" of \"{p}\"")).collect(),
        None => (0..cells.len()).map(|i| format!("element {} of \"{p}\"", i + 1)).collect(),
    };
    m.keep_letters(cells, &names)
}

/// A top-level field of the record that the mapping did not read, holding a list of at
/// least two texts one of which is `answer`: options under another name, probably.
fn unmapped_list_with(m: &Mapper<'_>, answer: &str) -> Option<String> {
    let Raw::Map(fields) = &m.rec.value else { return None };
    let answer = answer.trim();
    fields.iter().enumerate().find_map(|(i, (name, value))| {
        let Raw::List(items) = value else { return None };
        let texts: Vec<String> = items.iter().filter_map(Raw::scalar_text).collect();
        let holds = texts.len() >= 2 && texts.iter().any(|t| t.trim().eq_ignore_ascii_case(answer));
        (holds && !m.used.contains(&i) && !answer.is_empty()).then(|| name.to_string())
    })
}

/// The option columns `A`, `B`, ... of a record without an options field, as VLMEvalKit
/// lays them out: the run of letters from `A`, if it has at least `min` columns. A
/// letter column after a gap in the run is an error: its option would be re-lettered.
fn letter_columns(m: &mut Mapper<'_>, min: usize) -> Vec<&'static Accessor> {
    const LETTERS: [&str; 10] = ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J"];
    let run = LETTERS.iter().take_while(|l| m.has(l)).count();
    if run < min {
        return Vec::new();
    }
    if let Some(after) = LETTERS[run..].iter().find(|l| m.has(l)) {
        m.problem(
            "options",
            format!("column \"{after}\" holds an option but there is no column \"{}\"", LETTERS[run]),
        )
        .help = Some(format!(
            "option columns run A, B, C, ... without a gap: add column \"{}\", or map the options in [ingest.fields] options",
            LETTERS[run]
        ));
    }
    LETTERS[..run].iter().map(|l| default_accessor(l)).collect()
}

/// The values of an object of options keyed by letter (`{"A": "a cat", "B": "a dog"}`),
/// in letter order: the keys must be the letters from A on, each once (either case), so
/// that every option keeps its letter and a gold given by letter names the same option.
/// Otherwise, why not.
fn options_by_letter(fields: &[(super::raw::Key, Raw)]) -> std::result::Result<Vec<Raw>, String> {
    let mut slots: Vec<Option<Raw>> = vec![None; fields.len()];
    for (key, value) in fields {
        let letter = match key.trim().as_bytes() {
            [b] if b.is_ascii_alphabetic() => Some(usize::from(b.to_ascii_uppercase() - b'A')),
            _ => None,
        }
        .filter(|&i| i < fields.len());
        match letter {
            Some(i) if slots[i].is_none() => slots[i] = Some(value.clone()),
            Some(_) => return Err(format!("name option {} twice (\"{key}\")", key.trim().to_ascii_uppercase())),
            None => {
                let keys: Vec<String> = fields.iter().take(6).map(|(k, _)| format!("\"{k}\"")).collect();
                return Err(format!(
                    "are not the option letters A-{} ({}{})",
                    crate::sample::option_letter(fields.len().saturating_sub(1)),
                    keys.join(", "),
                    if fields.len() > 6 { ", ..." } else { "" }
                ));
            }
        }
    }
    Ok(slots.into_iter().flatten().collect())
}

fn map_images(m: &mut Mapper<'_>) -> Vec<ImageSpec> {
    let plan = m.plan;
    let accs: Vec<&Accessor> = match &plan.fields.images {
        Some(a) => a.iter().collect(),
        None => ["images", "image", "file_name"]
            .iter()
            .find(|d| m.has(d))
            .map(|d| vec![default_accessor(d)])
            .unwrap_or_default(),
    };
    let mut out = Vec::new();
    for acc in accs {
        let value = match acc {
            Accessor::Path(p) => m.get(p),
            Accessor::Template(_) => m.text("images", acc).map(|t| Cow::Owned(Raw::Str(t))),
        };
        if let Some(v) = value {
            collect_images(m, &v, &mut out);
        }
    }
    out
}

fn collect_images(m: &mut Mapper<'_>, v: &Raw, out: &mut Vec<ImageSpec>) {
    match v {
        Raw::Str(s) => {
            let s = s.trim();
            if s.starts_with('[')
                && let Some(items) = parse_list_literal(s)
            {
                out.extend(items.into_iter().map(ImageSpec::Path));
                return;
            }
            out.push(ImageSpec::Path(s.to_string()));
        }
        Raw::Bytes(b) => out.push(ImageSpec::Bytes { bytes: b.clone(), path: None }),
        Raw::List(items) => {
            for i in items {
                if !m.is_missing(i) {
                    collect_images(m, i, out);
                }
            }
        }
        Raw::Map(_) => {
            let path = v.get("path").and_then(Raw::scalar_text).filter(|s| !s.is_empty());
            match v.get("bytes") {
                Some(Raw::Bytes(b)) => out.push(ImageSpec::Bytes { bytes: b.clone(), path }),
                _ => match path {
                    Some(p) => out.push(ImageSpec::Path(p)),
                    None => {
                        m.problem("images", "an image struct has neither bytes nor path");
                    }
                },
            }
        }
        Raw::Null => {}
        other => {
            m.problem("images", format!("an image is {}, expected a path, bytes or {{bytes, path}}", other.kind()));
        }
    }
}

fn map_meta(m: &mut Mapper<'_>) -> BTreeMap<String, String> {
    let mut meta = BTreeMap::new();
    match m.plan.fields.meta.clone() {
        MetaKeep::All => {
            if let Raw::Map(fields) = &m.rec.value {
                for (i, (k, v)) in fields.iter().enumerate() {
                    if m.used.contains(&i) || m.is_missing(v) || matches!(v, Raw::Bytes(_)) {
                        continue;
                    }
                    if &**k == "meta"
                        && let Some(pairs) = key_value_pairs(v)
                    {
                        meta.extend(pairs);
                        continue;
                    }
                    meta.insert(k.to_string(), v.to_text().trim().to_string());
                }
            }
        }
        MetaKeep::Fields(list) => {
            for k in list {
                if let Some(v) = m.rec.field(&k).filter(|v| !m.is_missing(v)) {
                    meta.insert(k, v.to_text().trim().to_string());
                }
            }
        }
    }
    meta
}

/// A canonical `meta` column: a list of `{key, value}` structs (as blindspot
/// writes it) or a map.
fn key_value_pairs(v: &Raw) -> Option<Vec<(String, String)>> {
    match v {
        Raw::List(items) => items
            .iter()
            .map(|it| {
                Some((it.get("key")?.scalar_text()?, it.get("value").and_then(Raw::scalar_text).unwrap_or_default()))
            })
            .collect(),
        Raw::Map(fields) => Some(fields.iter().map(|(k, v)| (k.to_string(), v.to_text())).collect()),
        _ => None,
    }
}

/// (message, help) for an answer that does not name an option.
struct ChoiceError(String, Option<String>);

fn letters_range(n: usize) -> String {
    match n {
        0 => "none".into(),
        1 => "A".into(),
        _ => format!("A-{}", LETTERS.get(n - 1).map_or('?', |&c| c as char)),
    }
}

/// The readings of a gold answer that `answer-kind = "auto"` tries, as bits: the
/// text of an option, an option letter (or `B. text`), a 0-based index.
pub const READ_TEXT: u8 = 1;
pub const READ_LETTER: u8 = 2;
pub const READ_INDEX: u8 = 4;

/// The names of the readings in `mask`, for messages.
pub fn reading_names(mask: u8) -> String {
    let names: Vec<&str> = [(READ_TEXT, "option text"), (READ_LETTER, "a letter"), (READ_INDEX, "a 0-based index")]
        .iter()
        .filter(|(b, _)| mask & b != 0)
        .map(|(_, n)| *n)
        .collect();
    names.join(" or ")
}

/// A text as compared when case and Unicode normalization are ignored.
pub fn folded(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    s.trim().nfc().collect::<String>().to_lowercase()
}

/// The option a gold answer names, and the readings (`READ_*` bits) that name it.
/// Under `auto`, every reading is tried: two that name different options are an
/// error naming `answer-kind`, never a choice.
fn resolve_choice(raw: &Raw, options: &[String], kind: AnswerKind) -> Result<(usize, u8), ChoiceError> {
    let n = options.len();
    let text = raw.scalar_text().unwrap_or_default().trim().to_string();
    let quoted = |i: usize| format!("{} (\"{}\")", crate::sample::option_letter(i), short(&options[i]));
    // The option whose text the gold is: written alike, else alike once case and
    // Unicode normalization are ignored, when that names one option only.
    let by_text = || -> Result<Option<usize>, ChoiceError> {
        if let Some(i) = options.iter().position(|o| *o == text) {
            return Ok(Some(i));
        }
        let key = folded(&text);
        let alike: Vec<usize> = (0..n).filter(|&i| folded(&options[i]) == key).collect();
        match alike[..] {
            [] => Ok(None),
            [i] => Ok(Some(i)),
            _ => Err(ChoiceError(
                format!(
                    "the answer \"{}\" is the text of options {} once case and Unicode normalization are ignored",
                    short(&text),
                    alike.iter().map(|&i| quoted(i)).collect::<Vec<_>>().join(" and ")
                ),
                Some("write the answer as one option is written, give it by letter or index (set [ingest.fields] answer-kind), or make the options distinct".into()),
            )),
        }
    };
    let by_letter = || -> Option<Result<usize, ChoiceError>> {
        let t = text.trim_matches(|c: char| c == '(' || c == ')' || c == '.' || c.is_whitespace());
        let mut chars = t.chars();
        let c = chars.next()?.to_ascii_uppercase();
        if chars.next().is_some() || !c.is_ascii_uppercase() {
            return None;
        }
        let i = (c as u8 - b'A') as usize;
        Some(if i < n {
            Ok(i)
        } else {
            Err(ChoiceError(
                format!("the answer is \"{t}\" but the question has {n} options ({})", letters_range(n)),
                Some("fix the answer or the options".into()),
            ))
        })
    };
    // "B. dog", "(B) dog", "B) dog", "B: dog": a letter and the text of its option,
    // which must agree.
    let by_label = || -> Option<Result<usize, ChoiceError>> {
        let (i, rest) = labelled_answer(&text)?;
        let same = |o: &String| o.trim().eq_ignore_ascii_case(rest);
        let named = options.iter().position(same)?;
        Some(if i == named {
            Ok(i)
        } else {
            Err(ChoiceError(
                format!(
                    "the answer \"{}\" gives letter {} but the text of option {}",
                    short(&text),
                    crate::sample::option_letter(i),
                    crate::sample::option_letter(named)
                ),
                Some("fix the answer's letter or its text".into()),
            ))
        })
    };
    let by_index = |base: i64| -> Option<Result<usize, ChoiceError>> {
        let v: i64 = match raw {
            Raw::Int(i) => *i,
            Raw::Float(f) if f.fract() == 0.0 => *f as i64,
            _ => text.parse().ok()?,
        };
        let i = v - base;
        Some(if (0..n as i64).contains(&i) {
            Ok(i as usize)
        } else {
            Err(ChoiceError(
                format!(
                    "the answer is index {v} but the question has {n} options (valid: {base}..{})",
                    base + n as i64 - 1
                ),
                None,
            ))
        })
    };
    let not_found = || {
        ChoiceError(
            format!("the answer \"{}\" is not among the options ({})", short(&text), options.iter().map(|o| format!("\"{}\"", short(o))).collect::<Vec<_>>().join(", ")),
            Some("set [ingest.fields] answer-kind = \"letter\" | \"index\" | \"index1\" | \"text\" if the answer is written another way".into()),
        )
    };
    let only = |r: Result<usize, ChoiceError>, bit: u8| r.map(|i| (i, bit));
    match kind {
        AnswerKind::Text => only(by_text()?.ok_or_else(not_found), READ_TEXT),
        AnswerKind::Letter => only(
            by_letter().or_else(by_label).unwrap_or_else(|| {
                Err(ChoiceError(format!("the answer \"{}\" is not an option letter", short(&text)), None))
            }),
            READ_LETTER,
        ),
        AnswerKind::Index => only(
            by_index(0).unwrap_or_else(|| {
                Err(ChoiceError(format!("the answer \"{}\" is not an option index", short(&text)), None))
            }),
            READ_INDEX,
        ),
        AnswerKind::Index1 => only(
            by_index(1).unwrap_or_else(|| {
                Err(ChoiceError(format!("the answer \"{}\" is not an option index", short(&text)), None))
            }),
            READ_INDEX,
        ),
        AnswerKind::Auto => {
            // Every reading that names an option; the first error of those that do not.
            let mut read: Vec<(u8, usize)> = Vec::new();
            let mut first_error = None;
            if let Some(i) = by_text()? {
                read.push((READ_TEXT, i));
            }
            for (bit, r) in [(READ_LETTER, by_letter().or_else(by_label)), (READ_INDEX, by_index(0))] {
                match r {
                    Some(Ok(i)) => read.push((bit, i)),
                    Some(Err(e)) => {
                        first_error.get_or_insert(e);
                    }
                    None => {}
                }
            }
            let Some(&(_, first)) = read.first() else { return Err(first_error.unwrap_or_else(not_found)) };
            if read.iter().any(|&(_, i)| i != first) {
                let readings: Vec<String> = read
                    .iter()
                    .map(|&(bit, i)| format!("as {} it is option {}", reading_names(bit), quoted(i)))
                    .collect();
                return Err(ChoiceError(
                    format!("the answer \"{}\" names two options: {}", short(&text), readings.join(", ")),
                    Some(format!(
                        "set [ingest.fields] answer-kind to the way the source writes its answers ({})",
                        read.iter()
                            .map(|&(bit, _)| match bit {
                                READ_TEXT => "\"text\"",
                                READ_LETTER => "\"letter\"",
                                _ => "\"index\"",
                            })
                            .collect::<Vec<_>>()
                            .join(" or ")
                    )),
                ));
            }
            // A reading that fails with an error (a letter beyond the options) beside one
            // that succeeds is no reading at all: the one that succeeds names the option.
            Ok((first, read.iter().fold(0, |m, &(bit, _)| m | bit)))
        }
    }
}

/// A text that is nothing but lettered options (`A. cat` lines, or inline `(A) cat
/// (B) dog` / `A: cat, B: dog`), as the options of a question are sometimes stored:
/// the options, if there are at least two and no text precedes them.
fn lettered_options(text: &str) -> Option<Vec<String>> {
    let (stem, options) = split_options_from_question(text);
    (stem.trim().is_empty() && options.len() >= 2).then_some(options)
}

/// The option letter and text of an answer written as both: `B. dog`, `(B) dog`,
/// `B) dog` or `B: dog` (the letter in either case, then text).
fn labelled_answer(text: &str) -> Option<(usize, &str)> {
    let t = text.trim_start();
    let (letter, rest) = match t.strip_prefix('(') {
        Some(inner) => {
            let mut chars = inner.chars();
            let letter = chars.next()?;
            (letter, chars.as_str().strip_prefix(')')?)
        }
        None => {
            let mut chars = t.chars();
            let letter = chars.next()?;
            let rest = chars.as_str();
            (letter, rest.strip_prefix(['.', ')', ':'])?)
        }
    };
    if !letter.is_ascii_alphabetic() || !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim();
    (!rest.is_empty()).then(|| (usize::from(letter.to_ascii_uppercase() as u8 - b'A'), rest))
}

/// multiple_choice with options; yes_no for yes/no answers; numeric for numbers; open otherwise.
pub fn infer_format(options: &[String], answer: &str) -> AnswerFormat {
    if !options.is_empty() {
        AnswerFormat::MultipleChoice
    } else if answer.eq_ignore_ascii_case("yes") || answer.eq_ignore_ascii_case("no") {
        AnswerFormat::YesNo
    } else if parse_number(answer).is_some() {
        AnswerFormat::Numeric
    } else {
        AnswerFormat::Open
    }
}

/// The first two options that are the same text once case and Unicode
/// normalization are ignored.
fn folded_twins(options: &[String]) -> Option<(usize, usize)> {
    // Option lists are short: a quadratic scan beats building a hash set per question.
    let keys: Vec<String> = options.iter().map(|o| folded(o)).collect();
    keys.iter().enumerate().find_map(|(j, k)| keys[..j].iter().position(|x| x == k).map(|i| (i, j)))
}

fn short(s: &str) -> String {
    if s.chars().count() > 60 { format!("{}…", s.chars().take(60).collect::<String>()) } else { s.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_literals() {
        assert_eq!(parse_list_literal("['a', \"b's\"]").unwrap(), vec!["a", "b's"]);
        assert_eq!(parse_list_literal("[\"x\", 2]").unwrap(), vec!["x", "2"]);
        assert_eq!(parse_list_literal("[]").unwrap(), Vec::<String>::new());
        assert!(parse_list_literal("['a' 'b']").is_none());
        assert!(parse_list_literal("not a list").is_none());
    }

    #[test]
    fn option_labels() {
        let mut o: Vec<String> = ["A. chair", "B) tv stand", "(C) 2.5 m"].map(String::from).to_vec();
        assert!(strip_option_labels(&mut o));
        assert_eq!(o, ["chair", "tv stand", "2.5 m"]);
        // Out of order, unlabelled, or a letter that is the text: left alone.
        for options in [&["B. x", "A. y"][..], &["A. x", "y"], &["A.", "B."], &["A.x", "B.y"], &["I", "II"]] {
            let mut o: Vec<String> = options.iter().map(|s| s.to_string()).collect();
            assert!(!strip_option_labels(&mut o), "{options:?}");
            assert_eq!(o, options);
        }
    }

    #[test]
    fn options_in_question() {
        let (q, o) = split_options_from_question("<image>\nContext: x\nWhich?\nA. red\nB. blue");
        assert_eq!(q, "Context: x\nWhich?");
        assert_eq!(o, vec!["red", "blue"]);
        let (_, o) = split_options_from_question("Which closing?\nA. See you,\nJanet\nB. See You,\nJanet");
        assert_eq!(o, vec!["See you,\nJanet", "See You,\nJanet"]);
        for (text, stem) in [
            ("Question: Which is red? Options: A: apple, B: sky, C: grass, D: snow", "Which is red?"),
            ("Which is red? (A) apple (B) sky (C) grass (D) snow", "Which is red?"),
            ("Which is red? A. apple B. sky C. grass D. snow", "Which is red?"),
            ("Which is red?\nChoices: A) apple; B) sky; C) grass; D) snow", "Which is red?"),
        ] {
            let (q, o) = split_options_from_question(text);
            assert_eq!(
                (q.as_str(), o),
                (stem, vec!["apple".to_string(), "sky".into(), "grass".into(), "snow".into()]),
                "{text}"
            );
        }
        // A lone label is not an option list.
        assert!(split_options_from_question("Is vitamin A. good?").1.is_empty());
        let (q, o) = split_options_from_question("What is 2+2?");
        assert_eq!((q.as_str(), o.len()), ("What is 2+2?", 0));
    }

    #[test]
    fn choices_resolve_every_way() {
        let opts: Vec<String> = ["cat", "dog", "cow", "hen"].iter().map(|s| s.to_string()).collect();
        let r = |v: Raw, k| resolve_choice(&v, &opts, k).map(|(i, _)| i).map_err(|e| e.0);
        assert_eq!(r(Raw::Str("dog".into()), AnswerKind::Auto), Ok(1));
        assert_eq!(r(Raw::Str("C".into()), AnswerKind::Auto), Ok(2));
        assert_eq!(r(Raw::Str("(D)".into()), AnswerKind::Letter), Ok(3));
        assert_eq!(r(Raw::Int(0), AnswerKind::Auto), Ok(0));
        assert_eq!(r(Raw::Str("2".into()), AnswerKind::Index1), Ok(1));
        let e = r(Raw::Str("E".into()), AnswerKind::Letter).unwrap_err();
        assert_eq!(e, "the answer is \"E\" but the question has 4 options (A-D)");
        assert!(r(Raw::Str("horse".into()), AnswerKind::Text).unwrap_err().contains("not among the options"));
    }

    #[test]
    fn formats_are_inferred() {
        assert_eq!(infer_format(&[], "Yes"), AnswerFormat::YesNo);
        assert_eq!(infer_format(&[], "3"), AnswerFormat::Numeric);
        assert_eq!(infer_format(&[], "left lung"), AnswerFormat::Open);
        assert_eq!(infer_format(&["a".into()], "a"), AnswerFormat::MultipleChoice);
    }
}
