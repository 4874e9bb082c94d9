//! The options of a mapped record: read from the question's text, one field
//! per option, a list (or a string holding one), an object keyed by letter,
//! or the letter columns A, B, ...; then checked (repeated texts, a list
//! field that holds the gold unmapped) and shuffled when the plan asks.

use std::borrow::Cow;

use rand::SeedableRng;
use rand::seq::SliceRandom;

use super::gold::{READ_INDEX, READ_LETTER, READ_TEXT, folded};
use super::mapper::{Mapper, default_accessor};
use super::{NOTE_LETTER_COLUMNS, NOTE_REPEATED_OPTIONS, short};
use crate::options::{NoOptions, split_options_from_question, strip_option_labels};
use crate::plan::{Accessor, IngestPlan};
use crate::raw::Raw;
use crate::sample::AnswerFormat;
use crate::seed::rng_for;

/// The options, from the question's text (`options-in-question`, which then
/// leaves the question's stem) or from their fields, with `A. ` labels
/// stripped, and whether they had such labels. More than 26 is a problem.
pub(super) fn map_choices(m: &mut Mapper<'_>, question: &mut Option<String>, vlm: bool) -> (Vec<String>, bool) {
    let plan = m.plan;
    let mut options: Vec<String> = match &*question {
        Some(q) if plan.options_in_question => {
            let (stem, opts) = split_options_from_question(q);
            if opts.is_empty() {
                m.problem("question", "options-in-question is set but no options were found in the question").help =
                    Some("options are read from the end of the question: lines `A. x` / `B. y`, or inline `A: x, B: y`, `(A) x (B) y`, `A. x B. y`; map the options field instead if they are elsewhere".into());
            }
            *question = Some(stem);
            // Absent options written in the question (`C. nan`) count as absent ones anywhere do.
            let names: Vec<String> = (0..opts.len())
                .map(|i| format!("option {} of the question", crate::sample::option_letter(i)))
                .collect();
            let cells: Vec<Option<String>> =
                opts.into_iter().map(|o| (!m.absent_option(&Raw::Str(o.clone()))).then_some(o)).collect();
            m.keep_letters(cells, &names)
        }
        _ => map_options(m, vlm),
    };
    let labelled = strip_option_labels(&mut options);
    if options.len() > 26 {
        m.problem("options", format!("the question has {} options, more than the 26 letters A-Z", options.len())).help =
            Some("blindspot's prompts, answer parser and exports label options A-Z: split the question, or keep at most 26 options".into());
    }
    (options, labelled)
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
    let (list, by_letter) = match crate::options::option_items(v.as_ref()) {
        Ok(found) => found,
        Err(NoOptions::Labels(why)) => {
            m.problem("options", format!("the options of source field \"{p}\" {why}")).help = Some(
                "label the options A, B, C, ... (or 1, 2, 3, ...) in the order they are listed, or name one field \
                 per option in [ingest.fields] options = [...]"
                    .into(),
            );
            return Vec::new();
        }
        Err(NoOptions::Text(s)) => {
            m.problem("options", format!("source field \"{p}\" is a string that is not a list: \"{}\"", short(&s)))
                .help = Some(
                "options must be a list, a string like \"['a', 'b']\", NumPy's \"['a' 'b']\" or \"A. a\\nB. b\", or one field per option"
                    .into(),
            );
            return Vec::new();
        }
        Err(NoOptions::Keys(why)) => {
            m.problem("options", format!("source field \"{p}\" is an object whose keys {why}")).help = Some(
                "an object of options needs the keys A, B, C, ... (any order, each once, none skipped); \
                 otherwise name one field per option in [ingest.fields] options = [\"options.x\", ...]"
                    .into(),
            );
            return Vec::new();
        }
        Err(NoOptions::Kind(kind)) => {
            m.problem("options", format!("source field \"{p}\" is {kind}, expected a list of options"));
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
    // Source names of the elements, for messages: "element 2 of ..." or "key \"B\" of ...".
    let names: Vec<String> = if by_letter {
        (0..cells.len()).map(|i| format!("key \"{}\" of \"{p}\"", crate::sample::option_letter(i))).collect()
    } else {
        (0..cells.len()).map(|i| format!("element {} of \"{p}\"", i + 1)).collect()
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
        (holds && !m.read(i) && !answer.is_empty()).then(|| name.to_string())
    })
}

/// A note when no options are mapped but a list field the mapping did not
/// read holds the gold: the questions are read as `format`, which may be wrong.
pub(super) fn note_unmapped_options(m: &mut Mapper<'_>, options: &[String], answer: &str, format: AnswerFormat) {
    if options.is_empty()
        && m.plan.fields.options.is_none()
        && !m.plan.options_in_question
        && let Some(field) = unmapped_list_with(m, answer)
    {
        m.notes.push(Cow::Owned(format!(
            "no options field is mapped, but the list field \"{field}\" holds the gold among other values: the \
             questions are read as {}; if that list is the options, set [ingest.fields] options = \"{field}\"",
            format.as_str()
        )));
    }
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

/// The first two options that are the same text once case and Unicode
/// normalization are ignored.
fn folded_twins(options: &[String]) -> Option<(usize, usize)> {
    // Option lists are short: a quadratic scan beats building a hash set per question.
    let keys: Vec<String> = options.iter().map(|o| folded(o)).collect();
    keys.iter().enumerate().find_map(|(j, k)| keys[..j].iter().position(|x| x == k).map(|i| (i, j)))
}

/// Options alike once case and Unicode normalization are ignored: a problem
/// when the gold is given as text only (it cannot say which it is), else a
/// note when the gold is given by letter or index.
pub(super) fn check_repeated_options(
    m: &mut Mapper<'_>,
    options: &[String],
    answer: &str,
    answer_index: Option<usize>,
    readings: u8,
) {
    if let Some((a, b)) = folded_twins(options) {
        // Repeated texts are kept when the gold is named by letter or index; a gold
        // given as text cannot say which of two options alike it is, nor can a
        // response that gives that text.
        let by_text_only = readings & READ_TEXT != 0 && readings & (READ_LETTER | READ_INDEX) == 0;
        let gold_repeats = answer_index.is_some_and(|i| options.iter().filter(|o| **o == options[i]).count() > 1);
        if by_text_only && gold_repeats {
            m.problem("options", format!("the answer \"{}\" is the text of more than one option", short(answer)))
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
}

/// The options in the seeded order of `ingest.shuffle-options` (for this id),
/// and the gold's new position; unchanged unless the plan shuffles and the
/// gold is an option.
pub(super) fn shuffle_options(
    plan: &IngestPlan,
    id: &str,
    mut options: Vec<String>,
    mut answer_index: Option<usize>,
) -> (Vec<String>, Option<usize>) {
    if plan.shuffle_options && answer_index.is_some() {
        let mut order: Vec<usize> = (0..options.len()).collect();
        order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(rng_for(plan.seed, "ingest.shuffle-options", id)));
        let gold = answer_index.unwrap_or(0);
        options = order.iter().map(|&i| options[i].clone()).collect();
        answer_index = order.iter().position(|&i| i == gold);
    }
    (options, answer_index)
}
