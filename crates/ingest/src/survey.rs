//! What a data file's fields hold, read from its first records: the input of
//! `blindspot init`, which proposes a field mapping from it. Nothing here maps
//! or validates; it only describes each field's values.

use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::plan::IngestPlan;
use crate::raw::{Raw, RawRecord};
use crate::source::{Records, Source, open_input};

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
    /// (`['a cat', 'a dog']`, as pandas writes a list into a CSV cell), or labelled
    /// option objects ([`crate::options::labelled_options`]).
    pub list_of_text: bool,
    /// Every value is an image: a `{bytes, path}` struct, bytes, or a string
    /// naming an image file (`.png`, `.jpg`, ...), or a list of such.
    pub image_like: bool,
    /// Every value is an integer: the least and the greatest.
    pub int_range: Option<(i64, i64)>,
    /// Every value is a single letter A-Z (a letter answer).
    pub letters: bool,
    /// Values that are text ending in a question mark.
    pub asking: usize,
    /// Every value is a non-empty list of reference answers: texts, or annotators'
    /// objects holding one in `answer` ([`crate::options::reference_text`]).
    pub references: bool,
}

/// The fields of a file's first records, in the order the first record lists them.
#[derive(Debug, Clone, Default)]
pub struct Survey {
    pub records: usize,
    pub fields: Vec<FieldSurvey>,
    /// The records are an object keyed by id: each has its key (`_key`).
    pub keyed: bool,
    /// The records read, for checks across fields (an answer among its options).
    pub read: Vec<RawRecord>,
}

impl Survey {
    pub fn field(&self, name: &str) -> Option<&FieldSurvey> {
        self.fields.iter().find(|f| f.name == name)
    }
}

const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "bmp", "webp", "tif", "tiff"];

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

/// Describes the fields of the first `max` records of the plan's first input.
pub fn survey(plan: &IngestPlan, max: usize) -> Result<Survey> {
    let Some(input) = plan.inputs.first() else { return Err(Error::Bug("survey of a plan without inputs".into())) };
    let mut ignored = Vec::new();
    let mut records: Vec<RawRecord> = Vec::new();
    match open_input(&input.path, input.format, plan, &mut ignored, &mut Vec::new())? {
        Source::Whole(r) => {
            let (chunk, problems) = r.chunk(0..r.len().min(max));
            if !problems.is_empty() {
                return Err(Error::Invalid(problems));
            }
            records.extend(chunk.iter().cloned());
        }
        Source::Lines(mut lines) => {
            while records.len() < max {
                let Some(block) = lines.next_block()? else { break };
                let r = Records::Json(block);
                let (chunk, problems) = r.chunk(0..r.len().min(max - records.len()));
                if !problems.is_empty() {
                    return Err(Error::Invalid(problems));
                }
                records.extend(chunk.iter().cloned());
            }
        }
        Source::Delimited(mut rows) => {
            if let Some(batch) = rows.next_batch(max)? {
                records.extend(batch);
            }
        }
    }
    let mut fields: Vec<FieldSurvey> = Vec::new();
    let mut values: Vec<BTreeSet<String>> = Vec::new();
    for rec in &records {
        let Raw::Map(pairs) = &rec.value else { continue };
        for (k, v) in pairs {
            let i = match fields.iter().position(|f| *f.name == **k) {
                Some(i) => i,
                None => {
                    fields.push(FieldSurvey {
                        name: k.to_string(),
                        list_of_text: true,
                        image_like: true,
                        letters: true,
                        references: true,
                        ..Default::default()
                    });
                    values.push(BTreeSet::new());
                    fields.len() - 1
                }
            };
            let f = &mut fields[i];
            let empty = matches!(v, Raw::Null) || matches!(v, Raw::Str(s) if s.trim().is_empty());
            if empty {
                continue;
            }
            f.present += 1;
            f.kinds.insert(v.kind());
            let text = v.to_text();
            if f.examples.len() < 3 && !f.examples.contains(&text) && !matches!(v, Raw::Bytes(_) | Raw::Map(_)) {
                f.examples.push(text.chars().take(60).collect());
            }
            values[i].insert(text);
            f.list_of_text &= match v {
                Raw::List(items) => items.iter().all(|x| x.scalar_text().is_some()),
                // A list written into a text column (CSV, or a Hub string column), as ingest
                // reads an options field.
                Raw::Str(s) => crate::options::parse_list_literal(s).is_some(),
                _ => false,
            } || matches!(crate::options::labelled_options(v), Some(Ok(_)));
            f.image_like &= is_image(v);
            f.references &= matches!(v, Raw::List(items)
                if !items.is_empty() && items.iter().all(|x| crate::options::reference_text(x).is_some()));
            f.asking += usize::from(matches!(v, Raw::Str(s) if s.trim_end().ends_with('?')));
            f.letters &=
                matches!(v, Raw::Str(s) if s.trim().len() == 1 && s.trim().chars().all(|c| c.is_ascii_uppercase()));
            f.int_range = match (v, f.present) {
                (Raw::Int(x), 1) => Some((*x, *x)),
                (Raw::Int(x), _) => f.int_range.map(|(a, b)| (a.min(*x), b.max(*x))),
                _ => None,
            };
        }
    }
    for (f, v) in fields.iter_mut().zip(&values) {
        f.distinct = v.len();
        if f.present == 0 {
            (f.list_of_text, f.image_like, f.letters, f.references) = (false, false, false, false);
        }
    }
    let keyed = !records.is_empty() && records.iter().all(|r| r.key.is_some());
    Ok(Survey { records: records.len(), fields, keyed, read: records })
}
