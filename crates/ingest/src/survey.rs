//! What a data file's fields hold, read from its first records: the input of
//! `blindspot init`, which proposes a field mapping from it. Nothing here maps
//! or validates; it only describes each field's values.

use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::plan::IngestPlan;
use crate::raw::{Raw, RawRecord};

/// One source field, over the records read.
#[derive(Debug, Clone, Default)]
pub struct FieldSurvey {
    pub name: String,
    /// Records in which the field has a value (not null, not empty).
    pub present: usize,
    /// The kinds of its values ([`Raw::kind`]).
    pub kinds: BTreeSet<&'static str>,
    /// Distinct values (scalars as text; others as JSON).
    pub distinct: usize,
    /// Up to three values, as text, in record order.
    pub examples: Vec<String>,
    /// Every value is a list of scalars (a list of options), a text holding one
    /// (`['a cat', 'a dog']`, as pandas writes a list into a CSV cell) or nothing but
    /// lettered options (`(a) Open (b) Closed`), or labelled option objects
    /// ([`crate::options::labelled_options`]).
    pub list_of_text: bool,
    /// Every value is an image: a `{bytes, path}` struct, bytes, or a string
    /// naming an image file (`.png`, `.jpg`, ...), or a list of such.
    pub image_like: bool,
    /// Every value names a video file (`.mp4`, `.mov`, `.mkv`, `.webm`), or is a list of such.
    pub video_like: bool,
    /// Every value is an integer: the least and the greatest.
    pub int_range: Option<(i64, i64)>,
    /// Every value is a single letter A-Z (a letter answer).
    pub letters: bool,
    /// Values that are text ending in a question mark.
    pub asking: usize,
    /// Every value is a non-empty list of reference answers (texts, or annotators'
    /// objects holding one in `answer`: [`Raw::reference_text`]) or a lone text, and
    /// some are lists.
    pub references: bool,
    /// Values that are lists (a reference field holds at least one).
    pub reference_lists: usize,
    /// Every value is a conversation whose first exchange is at the same turn, its
    /// text under the same member ([`crate::options::first_exchange`]): that turn and
    /// member.
    pub exchange: Option<(usize, String)>,
    /// Records whose conversation goes on after that exchange.
    pub turns_after: usize,
}

/// The fields of a file's first records, in the order the first record lists them.
#[derive(Debug, Clone, Default)]
pub struct Survey {
    pub records: usize,
    pub fields: Vec<FieldSurvey>,
    /// The records are an object keyed by id: each has its key (`_key`).
    pub keyed: bool,
    /// The asking and answering turns of each conversation field's first exchange
    /// ([`FieldSurvey::exchange`]), each surveyed as a field named by its path
    /// (`conversations.0.value`).
    pub turns: Vec<FieldSurvey>,
    /// The scalar members of fields that hold objects (GQA's `types.structural`,
    /// MathVista's `metadata.task`), each surveyed as a field named by its path.
    pub members: Vec<FieldSurvey>,
    /// The records read, for checks across fields (an answer among its options).
    pub read: Vec<RawRecord>,
}

impl Survey {
    pub fn field(&self, name: &str) -> Option<&FieldSurvey> {
        self.fields.iter().find(|f| f.name == name)
    }
}

impl FieldSurvey {
    fn new(name: &str) -> FieldSurvey {
        FieldSurvey {
            name: name.to_string(),
            list_of_text: true,
            image_like: true,
            video_like: true,
            letters: true,
            references: true,
            ..Default::default()
        }
    }

    /// Takes one record's value in; `values` collects the distinct ones.
    fn observe(&mut self, v: &Raw, values: &mut BTreeSet<String>) {
        let f = self;
        let empty = matches!(v, Raw::Null) || matches!(v, Raw::Str(s) if s.trim().is_empty());
        if empty {
            return;
        }
        f.present += 1;
        f.kinds.insert(v.kind());
        let text = v.to_text();
        if f.examples.len() < 3 && !f.examples.contains(&text) && !matches!(v, Raw::Bytes(_) | Raw::Map(_)) {
            f.examples.push(text.chars().take(60).collect());
        }
        values.insert(text);
        f.list_of_text &= match v {
            Raw::List(items) => items.iter().all(|x| x.scalar_text().is_some()),
            // A list written into a text column (CSV, or a Hub string column), as ingest
            // reads an options field.
            Raw::Str(s) => {
                crate::options::parse_list_literal(s).is_some() || crate::options::lettered_options(s).is_some()
            }
            _ => false,
        } || matches!(crate::options::labelled_options(v), Some(Ok(_)));
        f.image_like &= is_image(v);
        f.video_like &= names_a_video(v);
        // A lone text among lists is one reference (OCRBench writes a single accepted
        // answer so).
        // A list written into a text cell (`['yes', 'no']` in a CSV) is read as a list.
        let in_text = match v {
            Raw::Str(s) => crate::options::parse_list_literal(s).filter(|items| !items.is_empty()),
            _ => None,
        };
        f.references &= match v {
            Raw::List(items) => !items.is_empty() && items.iter().all(|x| x.reference_text().is_some()),
            other => other.scalar_text().is_some(),
        };
        f.reference_lists += usize::from(matches!(v, Raw::List(_)) || in_text.is_some());
        let exchange = crate::options::first_exchange(v);
        if let (Some((at, _)), Raw::List(turns)) = (&exchange, v) {
            f.turns_after += usize::from(turns.len() > at + 2);
        }
        f.exchange = if f.present == 1 { exchange } else { f.exchange.take().filter(|e| exchange.as_ref() == Some(e)) };
        f.asking += usize::from(matches!(v, Raw::Str(s) if s.trim_end().ends_with('?')));
        f.letters &=
            matches!(v, Raw::Str(s) if s.trim().len() == 1 && s.trim().chars().all(|c| c.is_ascii_uppercase()));
        f.int_range = match (v, f.present) {
            (Raw::Int(x), 1) => Some((*x, *x)),
            (Raw::Int(x), _) => f.int_range.map(|(a, b)| (a.min(*x), b.max(*x))),
            _ => None,
        };
    }

    /// Once every value is in.
    fn finish(&mut self, values: &BTreeSet<String>) {
        self.distinct = values.len();
        self.references &= self.reference_lists > 0;
        if self.present == 0 {
            (self.list_of_text, self.image_like, self.letters, self.references) = (false, false, false, false);
            self.video_like = false;
        }
    }
}

/// Extensions of the image files ingest reads.
pub const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "bmp", "webp", "tif", "tiff"];

fn is_image(v: &Raw) -> bool {
    match v {
        Raw::Bytes(_) => true,
        Raw::Map(_) => v.get("bytes").is_some() || v.get("path").is_some_and(is_image),
        Raw::Str(s) => {
            s.rsplit_once('.').is_some_and(|(_, ext)| IMAGE_EXTENSIONS.iter().any(|e| ext.eq_ignore_ascii_case(e)))
        }
        Raw::List(items) => !items.is_empty() && items.iter().all(is_image),
        _ => false,
    }
}

/// Extensions of the video files ingest reads.
pub const VIDEO_EXTENSIONS: &[&str] = &["mp4", "mov", "mkv", "webm"];

fn names_a_video(v: &Raw) -> bool {
    match v {
        Raw::Str(s) => {
            s.rsplit_once('.').is_some_and(|(_, ext)| VIDEO_EXTENSIONS.iter().any(|e| ext.eq_ignore_ascii_case(e)))
        }
        Raw::List(items) => !items.is_empty() && items.iter().all(names_a_video),
        _ => false,
    }
}

/// Describes the fields of the first `max` records of the plan's first input.
pub fn survey(plan: &IngestPlan, max: usize) -> Result<Survey> {
    let Some(input) = plan.inputs.first() else { return Err(Error::Bug("survey of a plan without inputs".into())) };
    let records = crate::source::read_records(&input.path, input.format, plan, max, &mut Vec::new(), &mut Vec::new())?;
    // Each record completed from the joined files as ingest completes it (one without a
    // match as it is: ingest says so).
    let joins = crate::join::load_all(plan, &mut Vec::new())?;
    let records: Vec<RawRecord> = records.into_iter().map(|r| crate::join::complete(&joins, &r).unwrap_or(r)).collect();
    let mut fields: Vec<FieldSurvey> = Vec::new();
    let mut values: Vec<BTreeSet<String>> = Vec::new();
    for rec in &records {
        let Raw::Map(pairs) = &rec.value else { continue };
        for (k, v) in pairs {
            let i = match fields.iter().position(|f| *f.name == **k) {
                Some(i) => i,
                None => {
                    fields.push(FieldSurvey::new(k));
                    values.push(BTreeSet::new());
                    fields.len() - 1
                }
            };
            fields[i].observe(v, &mut values[i]);
        }
    }
    for (f, v) in fields.iter_mut().zip(&values) {
        f.finish(v);
    }
    // The asking and answering turns of each conversation field, surveyed as fields.
    let mut turns = Vec::new();
    for f in &fields {
        let Some((at, member)) = &f.exchange else { continue };
        for turn in [at, &(at + 1)] {
            let path = format!("{}.{turn}.{member}", f.name);
            let mut part = FieldSurvey::new(&path);
            let mut values = BTreeSet::new();
            for v in records.iter().filter_map(|r| r.value.get_path(&path)) {
                part.observe(v, &mut values);
            }
            part.finish(&values);
            turns.push(part);
        }
    }
    // The members of fields that hold objects, surveyed as fields.
    let mut members: Vec<FieldSurvey> = Vec::new();
    for f in fields.iter().filter(|f| f.kinds.len() == 1 && f.kinds.contains("an object") && !f.image_like) {
        let mut names: Vec<String> = Vec::new();
        for rec in &records {
            if let Some(Raw::Map(pairs)) = rec.value.get(&f.name) {
                for (k, v) in pairs {
                    if v.scalar_text().is_some() && !names.iter().any(|n| *n == **k) {
                        names.push(k.to_string());
                    }
                }
            }
        }
        for name in names {
            let path = format!("{}.{name}", f.name);
            let mut part = FieldSurvey::new(&path);
            let mut values = BTreeSet::new();
            for v in records.iter().filter_map(|r| r.value.get(&f.name)?.get(&name)) {
                part.observe(v, &mut values);
            }
            part.finish(&values);
            members.push(part);
        }
    }
    let keyed = !records.is_empty() && records.iter().all(|r| r.key.is_some());
    Ok(Survey { records: records.len(), fields, turns, members, keyed, read: records })
}
