//! The [`Mapper`]: one record being mapped, the problems found so far, and
//! the field access every mapping step shares (missing values, accessors,
//! templates, the canonical names tried when a pipeline maps nothing).

use std::borrow::Cow;

use super::NOTE_TRAILING_ABSENT;
use crate::error::{Problem, did_you_mean};
use crate::plan::{Accessor, IngestPlan, TemplatePart};
use crate::raw::{Raw, RawRecord};

pub(super) struct Mapper<'a> {
    pub(super) rec: &'a RawRecord,
    pub(super) plan: &'a IngestPlan,
    pub(super) problems: Vec<Problem>,
    /// Positions of the top-level source fields the mapping read (not repeated in meta).
    pub(super) used: Vec<usize>,
    /// Top-level fields read only through a path into them (`conversations.0.value`):
    /// the field's position and the path.
    pub(super) read_in_part: Vec<(usize, String)>,
    pub(super) notes: Vec<Cow<'static, str>>,
}

impl<'a> Mapper<'a> {
    pub(super) fn problem(&mut self, field: &str, message: impl Into<String>) -> &mut Problem {
        self.problems.push(Problem::new(self.rec.loc.clone(), message).field(field));
        self.problems.last_mut().expect("just pushed")
    }

    pub(super) fn is_missing(&self, v: &Raw) -> bool {
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
    pub(super) fn absent_option(&self, v: &Raw) -> bool {
        self.is_missing(v) || v.scalar_text().is_some_and(|t| t.trim().eq_ignore_ascii_case("nan"))
    }

    /// The options of `cells` (None = absent), letters kept: absent cells after the
    /// last present one are dropped (noted); an absent cell before a present one is a
    /// problem, since dropping it would re-letter every later option and the gold.
    pub(super) fn keep_letters(&mut self, cells: Vec<Option<String>>, names: &[String]) -> Vec<String> {
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
    pub(super) fn get(&mut self, path: &str) -> Option<Cow<'a, Raw>> {
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
                        self.read_in_part.push((i, path.to_string()));
                    }
                    rec.field(path)
                }
            },
            _ => rec.field(path),
        };
        found.filter(|v| !self.is_missing(v))
    }

    /// Whether the mapping read the top-level field at position `i`, whole or in part.
    pub(super) fn read(&self, i: usize) -> bool {
        self.used.contains(&i) || self.read_in_part.iter().any(|(j, _)| *j == i)
    }

    pub(super) fn has(&self, path: &str) -> bool {
        self.rec.has(path)
    }

    /// Text of an accessor; a problem when a required placeholder is missing.
    pub(super) fn text(&mut self, canonical: &str, acc: &Accessor) -> Option<String> {
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
                        TemplatePart::Padded(f, width) => match self.get(f).and_then(|v| v.scalar_text()) {
                            Some(s) if !s.trim().is_empty() && s.trim().bytes().all(|b| b.is_ascii_digit()) => {
                                out.push_str(&format!("{:0>width$}", s.trim()));
                            }
                            Some(s) => {
                                self.problem(
                                    canonical,
                                    format!(
                                        "template field \"{f}\" is \"{}\", not a whole number to write with {width} digits",
                                        super::short(s.trim())
                                    ),
                                );
                                return None;
                            }
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
    pub(super) fn pick<'p>(&self, configured: &'p Option<Accessor>, defaults: &[&str]) -> Option<&'p Accessor> {
        if configured.is_some() {
            return configured.as_ref();
        }
        defaults.iter().find(|d| self.has(d)).map(|d| default_accessor(d))
    }

    pub(super) fn missing_required(&mut self, canonical: &str, acc: Option<&Accessor>, defaults: &[&str]) {
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
                // Fields named after the canonical one ("question_id" for the id).
                let like: Vec<&String> = names
                    .iter()
                    .filter(|n| n.split(['_', '-', '.', ' ']).any(|p| p.eq_ignore_ascii_case(canonical)))
                    .collect();
                match like[..] {
                    [one] => format!(
                        "the record's fields are: {}; map \"{one}\" with [ingest.fields] {key} = \"{one}\" (on the \
                         command line: --field {key}={one})",
                        names.join(", ")
                    ),
                    _ => format!(
                        "the record's fields are: {}; map one with [ingest.fields] {key} = \"...\" (on the command \
                         line: --field {key}=...)",
                        names.join(", ")
                    ),
                }
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
        "videos",
        "video",
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

pub(super) fn default_accessor(name: &str) -> &'static Accessor {
    DEFAULT_ACCESSORS
        .iter()
        .find(|a| matches!(a, Accessor::Path(p) if p == name))
        .expect("every default name is in DEFAULT_ACCESSORS")
}
