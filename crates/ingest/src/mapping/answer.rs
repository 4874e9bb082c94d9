//! The answer of a mapped record: its source field, the plan's answer map,
//! the option it names (and whether `answer_index` agrees), the answer
//! format, and the answer checked against that format.

use std::borrow::Cow;

use super::gold::{infer_format, resolve_choice};
use super::mapper::{Mapper, default_accessor};
use super::short;
use crate::options::option_label;
use crate::plan::{Accessor, AnswerKind, Format, ReferenceAnswers};
use crate::raw::Raw;
use crate::sample::{AnswerFormat, parse_number};
use crate::tables::parquet::ClassLabels;

/// The answer as the record holds it (None when missing, with the problem
/// said), how to read it, and the name of its source field for messages.
pub(super) fn map_answer(m: &mut Mapper<'_>) -> (Option<Raw>, AnswerKind, String) {
    let plan = m.plan;
    // With both columns (a blindspot release, a canonical file), the position is
    // the gold and the text is checked against it: option text alone can be
    // read two ways ("1" the text of option D or the index of option B).
    let index_given = plan.fields.answer.is_none() && m.get("answer_index").is_some();
    let (ans_acc, kind) = match (&plan.fields.answer, m.has("answer"), m.has("answer_index")) {
        (Some(a), _, _) => (Some(a), plan.fields.answer_kind),
        (None, _, true) if index_given => (Some(default_accessor("answer_index")), AnswerKind::Index),
        (None, true, _) => (Some(default_accessor("answer")), plan.fields.answer_kind),
        (None, false, true) => (Some(default_accessor("answer_index")), AnswerKind::Index),
        _ => (None, plan.fields.answer_kind),
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
    (raw_answer, kind, answer_src)
}

/// The gold of an answer field holding a list of reference answers, read as
/// `[ingest] reference-answers` says, and the list as meta keeps it (under the field's
/// name); the answer as it is when it is no list. A list without that setting, or with
/// an empty or non-text value, is a problem (None).
pub(super) fn reference_answer(m: &mut Mapper<'_>, raw_answer: Raw, answer_src: &str) -> Option<(Raw, Option<String>)> {
    // A list written into a text cell (a CSV's `['yes', 'yes', 'no']`) is that list.
    let raw_answer = match &raw_answer {
        Raw::Str(s) if m.plan.reference_answers.is_some() => match crate::options::parse_list_literal(s) {
            Some(items) if !items.is_empty() => Raw::List(items.into_iter().map(Raw::Str).collect()),
            _ => raw_answer,
        },
        _ => raw_answer,
    };
    let Raw::List(items) = &raw_answer else {
        // A lone reference, kept in meta as a list of one like the others, so that
        // metrics scores it by the same rule.
        let kept = m.plan.reference_answers.and(raw_answer.scalar_text()).map(|t| serde_json::json!([t]).to_string());
        return Some((raw_answer, kept));
    };
    let Some(rule) = m.plan.reference_answers else {
        m.problem(answer_src, format!("the answer is a list of {} values, expected text or a number", items.len()))
            .help = Some(
            "a list of reference answers (VQA's annotators, several accepted answers) is read with [ingest] \
                 reference-answers = \"majority\" (the most common is the gold) or \"first\"; the list is kept in meta"
                .into(),
        );
        return None;
    };
    let texts: Vec<String> =
        items.iter().filter_map(Raw::reference_text).map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect();
    if texts.is_empty() || texts.len() != items.len() {
        m.problem(answer_src, "the reference answers hold an empty value or one that is not text or a number");
        return None;
    }
    let gold = match rule {
        ReferenceAnswers::First => texts[0].clone(),
        ReferenceAnswers::Majority => {
            let count = |t: &String| texts.iter().filter(|u| *u == t).count();
            // The most common; among equals, the one given first.
            let most = texts.iter().map(count).max().unwrap_or(0);
            texts.iter().find(|t| count(t) == most).cloned().unwrap_or_default()
        }
    };
    m.notes.push(Cow::Owned(format!(
        "the gold is the {} of the reference answers in \"{answer_src}\" (exact text, trimmed; the list is kept in \
         meta \"{answer_src}\", and [metrics] reference-answers = \"{answer_src}\" scores models by VQA accuracy over \
         it)",
        match rule {
            ReferenceAnswers::First => "first",
            ReferenceAnswers::Majority => "most common (ties: the one given first)",
        }
    )));
    Some((Raw::Str(gold), Some(raw_answer.to_text())))
}

/// Classes named in the note that says a `ClassLabel` column was read by name.
const NAMES_SHOWN: usize = 4;

/// A `ClassLabel` column's integer on a question without options, read as
/// its class name (`0` → `"no"`), as `datasets` shows it; with options the
/// integer stays an option's position ([`typed_kind`]). None (with the
/// problem said) for a class the column does not name.
pub(super) fn class_name(
    m: &mut Mapper<'_>,
    raw_answer: Raw,
    options: &[String],
    answer_src: &str,
    class_labels: &ClassLabels,
) -> Option<Raw> {
    let (Raw::Int(class), true, Some(names)) = (&raw_answer, options.is_empty(), class_labels.get(answer_src)) else {
        return Some(raw_answer);
    };
    let Some(name) = usize::try_from(*class).ok().and_then(|i| names.get(i)) else {
        let why = if *class == -1 {
            "the answer is class -1, which `datasets` writes for a row without a label".to_string()
        } else {
            format!(
                "the answer is class {class}, but the ClassLabel column \"{answer_src}\" names {} classes (0 to {})",
                names.len(),
                names.len().saturating_sub(1)
            )
        };
        m.problem(answer_src, why).help = Some(
            "leave such rows out with an [[ingest.filter]], or set [ingest] on-invalid = \"skip\" to reject them"
                .into(),
        );
        return None;
    };
    let mut shown: Vec<String> =
        names.iter().take(NAMES_SHOWN).enumerate().map(|(i, n)| format!("{i} = \"{n}\"")).collect();
    if names.len() > NAMES_SHOWN {
        shown.push(format!("… {} classes", names.len()));
    }
    m.notes.push(Cow::Owned(format!(
        "answers of questions without options were read from the ClassLabel column \"{answer_src}\" as their class \
         names ({}), as the file's Hugging Face features name them",
        shown.join(", ")
    )));
    Some(Raw::Str(name.clone()))
}

/// The answer trimmed and passed through `[ingest.answer-map]`, without its
/// `B. ` label when the options were labelled; None (with the problem said)
/// when it is not text or a number.
pub(super) fn normalize_answer(m: &mut Mapper<'_>, raw_answer: Raw, answer_src: &str, labelled: bool) -> Option<Raw> {
    let plan = m.plan;
    let raw_answer = match raw_answer.scalar_text().map(|s| s.trim().to_string()) {
        Some(t) => match plan.answer_map.get(&t) {
            Some(mapped) => Raw::Str(mapped.clone()),
            None => match raw_answer {
                Raw::Str(_) => Raw::Str(t),
                other => other,
            },
        },
        None => {
            m.problem(answer_src, format!("the answer is {}, expected text or a number", raw_answer.kind()));
            return None;
        }
    };

    // "B. table" as the answer of options that were labelled "A. ...", "B. ...".
    let raw_answer = match raw_answer {
        Raw::Str(t) if labelled && option_label(&t, None).is_some() => {
            Raw::Str(option_label(&t, None).map_or(t.clone(), |(_, rest)| rest.to_string()))
        }
        other => other,
    };
    Some(raw_answer)
}

/// How to read the gold: under `auto`, an integer from a typed column (Parquet,
/// Arrow: a Hugging Face `Value("int64")` or `ClassLabel`) is an option's
/// position, as its type says, never its text; text columns are read as before.
pub(super) fn typed_kind(kind: AnswerKind, raw_answer: &Raw, format: Format, options: &[String]) -> AnswerKind {
    match (kind, raw_answer, format) {
        (AnswerKind::Auto, Raw::Int(_), Format::Parquet | Format::Hf) if !options.is_empty() => AnswerKind::Index,
        _ => kind,
    }
}

/// The gold: its text and, with options, the option it names and the
/// readings (`READ_*` bits) that name it; a problem when it names none.
pub(super) fn resolve_gold(
    m: &mut Mapper<'_>,
    raw_answer: &Raw,
    options: &[String],
    kind: AnswerKind,
    answer_src: &str,
) -> (String, Option<usize>, u8) {
    let by_index = matches!(kind, AnswerKind::Index | AnswerKind::Index1);
    // How the gold named its option (`READ_*` bits; 0 without options).
    let mut readings = 0u8;
    let (answer, answer_index) = if options.is_empty() {
        if by_index {
            m.problem(
                answer_src,
                format!(
                    "the answer is given as an option index ({}) but the question has no options",
                    raw_answer.scalar_text().unwrap_or_default()
                ),
            )
            .help = Some("map the options ([ingest.fields] options), or give the answer as text".into());
        }
        (raw_answer.scalar_text().unwrap_or_default(), None)
    } else {
        match resolve_choice(raw_answer, options, kind) {
            Ok((i, read)) => {
                readings = read;
                (options[i].clone(), Some(i))
            }
            Err(msg) => {
                m.problem(answer_src, msg.0).help = msg.1;
                (String::new(), None)
            }
        }
    };
    (answer, answer_index, readings)
}

/// A record with both `answer` and `answer_index` (neither mapped): the index
/// is the gold, and the answer must name the same option: as its text (exactly,
/// else up to case and Unicode normalization), else read as before.
pub(super) fn check_answer_index(
    m: &mut Mapper<'_>,
    answer_src: &str,
    answer_index: Option<usize>,
    options: &[String],
) {
    if m.plan.fields.answer.is_some() || answer_src != "answer_index" {
        return;
    }
    let (Some(raw_text), Some(j)) = (m.get("answer").map(Cow::into_owned), answer_index) else { return };
    let Some(text) = raw_text.scalar_text().map(|t| t.trim().to_string()) else { return };
    if options[j] == text || super::gold::folded(&options[j]) == super::gold::folded(&text) {
        return;
    }
    match resolve_choice(&raw_text, options, AnswerKind::Auto) {
        Ok((i, _)) if i == j => {}
        Ok((i, _)) => {
            m.problem(
                "answer_index",
                format!(
                    "answer \"{}\" is option {} but answer_index {} is option {} (\"{}\")",
                    short(&text),
                    crate::sample::option_letter(i),
                    j,
                    crate::sample::option_letter(j),
                    short(&options[j])
                ),
            )
            .help = Some("fix one of the two, or map only one ([ingest.fields] answer = \"answer_index\", answer-kind = \"index\")".into());
        }
        Err(_) => {
            m.problem(
                "answer_index",
                format!(
                    "answer \"{}\" is not the text of option {} (\"{}\"), which answer_index {} names",
                    short(&text),
                    crate::sample::option_letter(j),
                    short(&options[j]),
                    j
                ),
            )
            .help = Some("fix one of the two, or map only one ([ingest.fields] answer = \"answer_index\", answer-kind = \"index\")".into());
        }
    }
}

/// The answer format: the plan's, else (for a canonical input) the record's
/// own `answer_format` column, else inferred from the options and the answer.
pub(super) fn answer_format(
    m: &mut Mapper<'_>,
    canonical_input: bool,
    options: &[String],
    answer: &str,
) -> AnswerFormat {
    let declared = if canonical_input {
        m.get("answer_format")
            .and_then(|v| v.scalar_text())
            .and_then(|t| AnswerFormat::ALL.into_iter().find(|f| f.as_str() == t.trim()))
    } else {
        None
    };
    m.plan.answer_format.or(declared).unwrap_or_else(|| infer_format(options, answer))
}

/// The answer as its format writes it (`yes`/`no` lower-cased), with a
/// problem when it does not fit the format or is empty.
pub(super) fn check_answer_format(
    m: &mut Mapper<'_>,
    answer: String,
    format: AnswerFormat,
    options: &[String],
    answer_src: &str,
) -> String {
    let answer = match format {
        AnswerFormat::YesNo => match answer.to_ascii_lowercase().as_str() {
            a @ ("yes" | "no") => a.to_string(),
            _ => {
                m.problem(
                    answer_src,
                    format!("answer \"{answer}\" is not yes or no, but the answer format is yes_no"),
                )
                .help = Some("map other labels with [ingest.answer-map], e.g. \"1\" = \"yes\"".into());
                answer
            }
        },
        AnswerFormat::Numeric if parse_number(&answer).is_none() => {
            m.problem(answer_src, format!("answer \"{answer}\" is not a number, but the answer format is numeric"));
            answer
        }
        AnswerFormat::MultipleChoice if options.is_empty() => {
            m.problem("options", "the answer format is multiple_choice but the question has no options");
            answer
        }
        _ => answer,
    };
    if answer.is_empty() && m.problems.is_empty() {
        m.problem(answer_src, "the answer is empty");
    }
    answer
}
