//! Answer parsing and scoring: a model's free-text response → the option,
//! yes/no, number or text it gives → a score in [0, 1] against the row's gold
//! (predictions → **parse** → metrics).
//!
//! A response is first read as it is: when, whitespace collapsed, it is the text
//! of exactly one option, that option is the answer (`1 = 2 = 3.` is not `1 < 2 <
//! 3.`, although normalisation makes them alike), unless a letter rule below reads
//! another option from it (the response is then ambiguous). Markup is then
//! dropped: Markdown emphasis (`**B**`, `__B__`), LaTeX delimiters (`\(E\)`,
//! `\[E\]`, `$E$`), and `\boxed{B}` becomes `[[B]]`.
//!
//! Multiple choice, in order of trust (the first rule that finds a letter in
//! range wins; "explicit" rules beat an abstention phrase):
//! 1. `[[B]]` (the *Mirage* prompts' format), the last one — explicit;
//! 2. an answer marker: "the answer is B", "Answer: (B)", "correct option is
//!    B", "answer is option B" — the last one; the letter must be a capital
//!    ("the answer is a dog" is not option A) — explicit;
//! 3. the whole response is a letter: `B`, `(B)`, `B.`, `[B]` — explicit;
//! 4. the response starts with a labelled option: `B. apostrophe`, `(B) ...`,
//!    `B) ...`, `B: ...` — explicit; a response that is or starts with a
//!    label beyond the options (`C. common` with two options) is unparsed,
//!    whatever its text says (label and text disagree; LLaVA's scorer agrees);
//! 5. option text: the response equals one option once normalised (several
//!    options alike once normalised: unparsed, never the first), or exactly one
//!    option (ignoring options contained in a longer matching one) occurs in it
//!    as whole words;
//! 6. a parenthesised letter `(B)` anywhere, the last one.
//!
//! Yes/no: `[[yes]]`, an answer marker, a leading "yes"/"no", else the only
//! one of the two words present. Numbers: a final answer (`[[...]]`, or what
//! follows an answer marker up to the end of its sentence) holding one number
//! (several different ones: unparsed), else the last number of the response;
//! a number is digits with `,` only between groups of three (`1,234`; `1,5` is
//! two numbers), an optional fraction and exponent (`1e3`), or a number word up
//! to twenty. Numeric golds are read strictly ([`crate::sample::parse_number`]).
//! Open answers: the `[[...]]` content or the text after an answer marker, else
//! the whole response; correct when equal to the gold after normalisation
//! (lowercase, punctuation and the articles a/an/the removed, whitespace
//! collapsed).
//!
//! Never panics; a response nothing parses from scores 0 and is counted as
//! unparsed, and so is a list of several answers ([`Response::Several`]).

use std::sync::LazyLock;

use regex::Regex;

use super::abstain;
use crate::sample::{AnswerFormat, Sample};
use crate::sample::{MraRule, NumericScoring, option_letter};

/// What a model answered, as imported.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// Free text, parsed here.
    Text(String),
    /// An option index already parsed by the source (ScienceQA's result
    /// files); negative = the source could not parse the response.
    Index(i64),
    /// A list of several answers where one was expected (`["B", "A"]`): which
    /// one the model meant is unknown, so none is read (scored 0, unparsed).
    Several(Vec<String>),
}

impl Response {
    /// The response as the per-question table shows it: the text, the index,
    /// or the list as JSON.
    pub fn shown(&self) -> String {
        match self {
            Response::Text(t) => t.clone(),
            Response::Index(i) => i.to_string(),
            Response::Several(items) => serde_json::to_string(items).unwrap_or_default(),
        }
    }
}

/// One response scored against one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// 1 correct, 0 wrong, MRA in between for numeric answers.
    pub score: f64,
    /// The response abstains (says the image is missing, cannot be seen, or refuses).
    pub abstained: bool,
    /// An answer was found in the response (abstentions and unparsed responses: false).
    pub parsed: bool,
    /// The response is empty or whitespace.
    pub empty: bool,
    /// The answer read from the response: an option letter, `yes`/`no`, a
    /// number, or the normalized open answer (None when none was found).
    pub answer: Option<String>,
}

impl Outcome {
    fn wrong(parsed: bool) -> Outcome {
        Outcome { score: 0.0, abstained: false, parsed, empty: false, answer: None }
    }
}

/// A parsed option, and whether an explicit marker gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    pub index: usize,
    pub explicit: bool,
}

/// The answer-reading patterns, by name: the statics below compile them, and
/// `blindspot export --to lmms-eval` writes the same strings into the task
/// folder's `utils.py`, so the harness-side score reads responses by the
/// same rules (one definition; `tests/fixtures/parse_cases.jsonl` checks both).
pub const PATTERNS: [(&str, &str); 16] = [
    // `\boxed{X}` (LaTeX final answers), read as the explicit marker `[[X]]`.
    ("boxed", r"\\boxed\{\s*([^{}]*?)\s*\}"),
    // `\text{X}` / `\mathrm{X}` inside a box: the text itself.
    ("latex_text", r"\\(?:text|textbf|mathrm|mathbf)\{([^{}]*)\}"),
    // LaTeX math delimiters `\(` `\)` `\[` `\]`, dropped.
    ("latex_delimiter", r"\\[()\[\]]"),
    // `$X$` inline math: X.
    ("dollar_math", r"\$([^$\n]{1,40})\$"),
    // Markdown emphasis `**X**` and `__X__`: X.
    ("bold_stars", r"\*\*([^*\n]+?)\*\*"),
    ("bold_underscores", r"__([^_\n]+?)__"),
    ("double_bracket", r"\[\[\s*([^\[\]]*?)\s*\]\]"),
    (
        "marker_letter",
        r"(?:(?i:answer)|(?i:correct|best|right) (?i:option|choice))(?:[^\S\n]+(?i:is|would be|should be|will be))?[^\S\n]*(?:[:=]\s*)?(?i:option\s+|choice\s+)?[\(\[\*]*([A-Z])[\)\]\*]*(?:$|[^A-Za-z0-9'])",
    ),
    ("only_letter", r"^[\(\[\*]*([A-Z])[\)\]\*]*[.:]?$"),
    ("leading_letter", r"^[\(\[]?([A-Z])(?:[\)\]][.:]?|[.:])(?:\s|$)"),
    ("paren_letter", r"\(([A-Z])\)"),
    ("marker_text", r"(?i)(?:final answer|the answer|answer)(?:\s+(?:is|would be|should be|will be))?\s*[:=]?\s*(.+)$"),
    // A final-answer marker: the final answer follows it, to the end of its line
    // or sentence (`sentence_end`).
    ("answer_marker", r"(?i)(?:final answer|the answer|answer)(?:\s+(?:is|would be|should be|will be))?\s*[:=]?"),
    ("sentence_end", r"[.!?;](?:\s|$)"),
    // A number: `,` only between groups of three digits, a fraction, an exponent.
    ("number", r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|-?\.\d+(?:[eE][-+]?\d+)?"),
    ("yes_no", r"\b(yes|no)\b"),
];

fn pattern(name: &str) -> Regex {
    let p = PATTERNS.iter().find(|(n, _)| *n == name).map_or("", |(_, p)| p);
    Regex::new(p).expect("the answer patterns compile")
}

static BOXED: LazyLock<Regex> = LazyLock::new(|| pattern("boxed"));
static LATEX_TEXT: LazyLock<Regex> = LazyLock::new(|| pattern("latex_text"));
static LATEX_DELIMITER: LazyLock<Regex> = LazyLock::new(|| pattern("latex_delimiter"));
static DOLLAR_MATH: LazyLock<Regex> = LazyLock::new(|| pattern("dollar_math"));
static BOLD_STARS: LazyLock<Regex> = LazyLock::new(|| pattern("bold_stars"));
static BOLD_UNDERSCORES: LazyLock<Regex> = LazyLock::new(|| pattern("bold_underscores"));
static ANSWER_MARKER: LazyLock<Regex> = LazyLock::new(|| pattern("answer_marker"));
static SENTENCE_END: LazyLock<Regex> = LazyLock::new(|| pattern("sentence_end"));
static DOUBLE_BRACKET: LazyLock<Regex> = LazyLock::new(|| pattern("double_bracket"));
static MARKER_LETTER: LazyLock<Regex> = LazyLock::new(|| pattern("marker_letter"));
static ONLY_LETTER: LazyLock<Regex> = LazyLock::new(|| pattern("only_letter"));
static LEADING_LETTER: LazyLock<Regex> = LazyLock::new(|| pattern("leading_letter"));
static PAREN_LETTER: LazyLock<Regex> = LazyLock::new(|| pattern("paren_letter"));
static MARKER_TEXT: LazyLock<Regex> = LazyLock::new(|| pattern("marker_text"));
static NUMBER: LazyLock<Regex> = LazyLock::new(|| pattern("number"));
static YES_NO: LazyLock<Regex> = LazyLock::new(|| pattern("yes_no"));

/// Everything a port of these rules needs, as JSON: the patterns, the number
/// words and the abstention phrases.
pub fn rules_json() -> serde_json::Value {
    serde_json::json!({
        "patterns": PATTERNS.iter().map(|(n, p)| (n.to_string(), serde_json::Value::from(*p))).collect::<serde_json::Map<_, _>>(),
        "number_words": NUMBER_WORDS,
        "abstain_phrases": super::abstain::PHRASES.iter().map(|(p, _)| *p).collect::<Vec<_>>(),
    })
}

fn letter_index(m: &str, n: usize) -> Option<usize> {
    let c = m.chars().next()?;
    let i = (c as u32).checked_sub('A' as u32)? as usize;
    (m.len() == 1 && i < n).then_some(i)
}

/// The last capture-1 letter of `re` in `text` that names one of `n` options.
fn last_letter(re: &Regex, text: &str, n: usize) -> Option<usize> {
    re.captures_iter(text).filter_map(|c| letter_index(c.get(1)?.as_str(), n)).last()
}

/// The option an explicit final-answer marker names: `Ok(None)` without one,
/// `Err(())` when the markers name different options (two final answers).
fn final_letter(re: &Regex, text: &str, n: usize) -> Result<Option<usize>, ()> {
    let mut found: Option<usize> = None;
    for i in re.captures_iter(text).filter_map(|c| letter_index(c.get(1)?.as_str(), n)) {
        match found {
            Some(f) if f != i => return Err(()),
            _ => found = Some(i),
        }
    }
    Ok(found)
}

/// `\boxed{X}` rewritten as `[[X]]` (`\text{X}` inside read as X).
pub fn unbox(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\\boxed") {
        return std::borrow::Cow::Borrowed(text);
    }
    let plain = LATEX_TEXT.replace_all(text, "$1");
    std::borrow::Cow::Owned(BOXED.replace_all(&plain, "[[$1]]").into_owned())
}

/// The response without markup around its answer: `\boxed{X}` as `[[X]]`,
/// LaTeX delimiters dropped, `$X$`, `**X**` and `__X__` as X.
pub fn plain(text: &str) -> String {
    let t = unbox(text);
    let t = LATEX_DELIMITER.replace_all(&t, "");
    let t = DOLLAR_MATH.replace_all(&t, "$1");
    let t = BOLD_STARS.replace_all(&t, "$1");
    BOLD_UNDERSCORES.replace_all(&t, "$1").into_owned()
}

/// Whitespace collapsed: how a response is compared with an option's own text.
fn collapsed(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub use crate::sample::normalize_text;

/// Whether `needle` occurs in `hay` as whole words (both normalized).
fn contains_words(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let (h, n) = (format!(" {hay} "), format!(" {needle} "));
    h.contains(&n)
}

/// Parses a multiple-choice response over `options` (see the module docs).
pub fn parse_choice(response: &str, options: &[String]) -> Option<Choice> {
    let n = options.len().min(26);
    if n == 0 {
        return None;
    }
    // The response as written, against each option as written.
    let raw = collapsed(response);
    let same: Vec<usize> = (0..n).filter(|&i| !raw.is_empty() && collapsed(&options[i]) == raw).collect();
    let by_rules = choice_by_rules(&plain(response), options, n);
    match (same.as_slice(), by_rules) {
        ([i], Some(c)) if c.index != *i => None,
        ([i], _) => Some(Choice { index: *i, explicit: true }),
        ([_, _, ..], _) => None,
        ([], found) => found,
    }
}

/// Rules 1-6 of the module docs on a response without markup.
fn choice_by_rules(response: &str, options: &[String], n: usize) -> Option<Choice> {
    let text = response.trim();
    let explicit = |index| Some(Choice { index, explicit: true });
    // Explicit final answers; two that disagree leave the response unparsed.
    for marker in [&*DOUBLE_BRACKET, &*MARKER_LETTER] {
        match final_letter(marker, text, n) {
            Ok(Some(i)) => return explicit(i),
            Ok(None) => {}
            Err(()) => return None,
        }
    }
    if let Some(i) = last_letter(&ONLY_LETTER, text, n) {
        return explicit(i);
    }
    if let Some(i) = last_letter(&LEADING_LETTER, text, n) {
        return explicit(i);
    }
    if ONLY_LETTER.is_match(text) || LEADING_LETTER.is_match(text) {
        // "C. common" with two options: the label names no option; its text is not trusted either.
        return None;
    }
    let norm = normalize_text(text);
    let opts: Vec<String> = options.iter().take(n).map(|o| normalize_text(o)).collect();
    let equal: Vec<usize> = (0..n).filter(|&i| !opts[i].is_empty() && opts[i] == norm).collect();
    match equal[..] {
        [i] => return Some(Choice { index: i, explicit: false }),
        // Options alike once normalised: the response cannot say which it is.
        [_, _, ..] => return None,
        [] => {}
    }
    let hits: Vec<usize> = (0..n).filter(|&i| contains_words(&norm, &opts[i])).collect();
    // An option inside a longer matching option ("red" in "red and blue") is not a hit of its own.
    let maximal: Vec<usize> = hits
        .iter()
        .copied()
        .filter(|&i| !hits.iter().any(|&j| j != i && opts[j] != opts[i] && contains_words(&opts[j], &opts[i])))
        .collect();
    if let [only] = maximal[..] {
        return Some(Choice { index: only, explicit: false });
    }
    last_letter(&PAREN_LETTER, text, n).map(|index| Choice { index, explicit: false })
}

/// Parses yes/no: `(answer, explicit)`.
pub fn parse_yes_no(response: &str) -> Option<(bool, bool)> {
    let text = response.trim();
    let word = |s: &str| match normalize_text(s).split_whitespace().next() {
        Some("yes") => Some(true),
        Some("no") => Some(false),
        _ => None,
    };
    if let Some(c) = DOUBLE_BRACKET.captures_iter(text).last()
        && let Some(v) = word(&c[1])
    {
        return Some((v, true));
    }
    if let Some(c) = MARKER_TEXT.captures_iter(text).last()
        && let Some(v) = word(&c[1])
    {
        return Some((v, true));
    }
    let norm = normalize_text(text);
    if let Some(v) = word(&norm) {
        return Some((v, true));
    }
    let found: Vec<bool> = YES_NO.captures_iter(&norm).map(|c| &c[1] == "yes").collect();
    match (found.contains(&true), found.contains(&false)) {
        (true, false) => Some((true, false)),
        (false, true) => Some((false, false)),
        _ => None,
    }
}

const NUMBER_WORDS: [&str; 21] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
];

/// Every number in `text` with where it ends (digits, or a number word up to
/// twenty), in order.
fn numbers(text: &str) -> Vec<(usize, f64)> {
    let mut found: Vec<(usize, f64)> = NUMBER
        .find_iter(text)
        .filter_map(|m| Some((m.end(), m.as_str().replace(',', "").parse::<f64>().ok()?)))
        .collect();
    let lowered = text.to_lowercase();
    let mut pos = 0;
    for w in lowered.split(|c: char| !c.is_alphanumeric()) {
        let end = pos + w.len();
        if let Some(v) = NUMBER_WORDS.iter().position(|n| *n == w) {
            found.push((end, v as f64));
        }
        pos = end + 1;
    }
    found.sort_by_key(|(end, _)| *end);
    found
}

/// The last number in `text`.
fn last_number(text: &str) -> Option<f64> {
    numbers(text).last().map(|(_, v)| *v)
}

/// The one number of a final answer: `Ok(None)` without any, `Err(())` when it
/// holds several different ones ("3 or 4").
fn one_number(answer: &str) -> Result<Option<f64>, ()> {
    let found = numbers(answer);
    match found.first() {
        None => Ok(None),
        Some(&(_, v)) if found.iter().all(|(_, x)| *x == v) => Ok(Some(v)),
        Some(_) => Err(()),
    }
}

/// The final answers of a response: each `[[...]]`, else the text after each
/// answer marker up to the end of its sentence.
fn final_answers(text: &str) -> Vec<String> {
    let bracketed: Vec<String> = DOUBLE_BRACKET.captures_iter(text).map(|c| c[1].to_string()).collect();
    if !bracketed.is_empty() {
        return bracketed;
    }
    ANSWER_MARKER
        .find_iter(text)
        .map(|m| {
            let rest = &text[m.end()..];
            let rest = &rest[..rest.find('\n').unwrap_or(rest.len())];
            let end = SENTENCE_END.find(rest).map_or(rest.len(), |e| e.start());
            rest[..end].to_string()
        })
        .collect()
}

/// Parses a number: `(value, explicit)`.
pub fn parse_number(response: &str) -> Option<(f64, bool)> {
    let text = response.trim();
    // Explicit final answers; several different numbers, in one or across them,
    // leave the response unparsed.
    let mut marked: Option<f64> = None;
    for answer in final_answers(text) {
        match one_number(&answer) {
            Ok(None) => {}
            Ok(Some(v)) if marked.is_none_or(|m| m == v) => marked = Some(v),
            _ => return None,
        }
    }
    if let Some(v) = marked {
        return Some((v, true));
    }
    last_number(text).map(|v| (v, false))
}

/// The answer part of an open-ended response: `(text, explicit)`.
pub fn open_answer(response: &str) -> (String, bool) {
    let text = response.trim();
    if let Some(c) = DOUBLE_BRACKET.captures_iter(text).last() {
        return (c[1].to_string(), true);
    }
    let last_line = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    if let Some(c) = MARKER_TEXT.captures(last_line) {
        return (c[1].to_string(), true);
    }
    (text.to_string(), false)
}

/// Scores one response against `row` (its own options and gold: a variant
/// row's, not its parent's), numeric answers by MRA.
pub fn score(row: &Sample, response: &Response, rule: MraRule) -> Outcome {
    score_with(row, response, NumericScoring::Mra, rule)
}

/// [`score`] with numeric answers scored by `numeric`.
pub fn score_with(row: &Sample, response: &Response, numeric: NumericScoring, rule: MraRule) -> Outcome {
    let hit = |correct: bool, answer: String| Outcome {
        score: f64::from(u8::from(correct)),
        abstained: false,
        parsed: true,
        empty: false,
        answer: Some(answer),
    };
    let text = match response {
        Response::Index(i) => {
            let ok = row.answer_format == AnswerFormat::MultipleChoice && *i >= 0 && (*i as usize) < row.options.len();
            if !ok {
                return Outcome::wrong(false);
            }
            let correct = row.answer_index.is_some_and(|g| i64::from(g) == *i);
            return hit(correct, option_letter(*i as usize));
        }
        Response::Several(_) => return Outcome::wrong(false),
        Response::Text(t) => t.as_str(),
    };
    if text.trim().is_empty() {
        return Outcome { score: 0.0, abstained: false, parsed: false, empty: true, answer: None };
    }
    let raw = text;
    let cleaned = plain(text);
    let text = cleaned.as_str();
    // Only a response without an explicit answer marker is checked for abstention (the marker wins).
    let abstains = || abstain::detect(text).is_some();
    let abstained = Outcome { score: 0.0, abstained: true, parsed: false, empty: false, answer: None };
    match row.answer_format {
        AnswerFormat::MultipleChoice => match parse_choice(raw, &row.options) {
            Some(c) if c.explicit || !abstains() => {
                hit(row.answer_index.is_some_and(|g| g >= 0 && g as usize == c.index), option_letter(c.index))
            }
            _ if abstains() => abstained,
            _ => Outcome::wrong(false),
        },
        AnswerFormat::YesNo => match parse_yes_no(text) {
            Some((v, explicit)) if explicit || !abstains() => {
                let gold = normalize_text(&row.answer) == "yes";
                hit(v == gold, if v { "yes" } else { "no" }.to_string())
            }
            _ if abstains() => abstained,
            _ => Outcome::wrong(false),
        },
        AnswerFormat::Numeric => match parse_number(text) {
            Some((v, explicit)) if explicit || !abstains() => {
                // The gold is read strictly: `1,5` or `3 or 4` is no number, never its last digits.
                let gold = crate::sample::parse_number(&row.answer).unwrap_or(f64::NAN);
                Outcome {
                    score: numeric.score(v, gold, rule),
                    abstained: false,
                    parsed: true,
                    empty: false,
                    answer: Some(v.to_string()),
                }
            }
            _ if abstains() => abstained,
            _ => Outcome::wrong(false),
        },
        AnswerFormat::Open => {
            let (answer, explicit) = open_answer(text);
            if !explicit && abstains() {
                return abstained;
            }
            let gold = normalize_text(&row.answer);
            let answer = normalize_text(&answer);
            hit(!gold.is_empty() && answer == gold, answer)
        }
    }
}

/// A question's reference answers as ingest keeps them in meta (the list as JSON):
/// each item's text ([`crate::tables::raw::Raw::reference_text`]); a value that is no
/// JSON list is one answer.
pub fn reference_answers(kept: &str) -> Vec<String> {
    match serde_json::from_str::<crate::tables::raw::Raw>(kept) {
        Ok(crate::tables::raw::Raw::List(items)) => items.iter().filter_map(|i| i.reference_text()).collect(),
        _ => vec![kept.to_string()],
    }
}

/// VQA accuracy of an open answer over its reference answers (VQA, TextVQA, VizWiz):
/// for each reference left out in turn, min(1, matches among the others / 3), averaged;
/// with ten references, three or more matches score 1, two 0.6, one 0.3. Answers and
/// references are compared after [`normalize_text`] with number words zero to ten
/// written as digits ("two" is "2"), as VQA's evaluation does; VQA's other rewrites
/// (contractions, "none" as "0") are not made. 0 without references.
pub fn vqa_accuracy(answer: &str, references: &[String]) -> f64 {
    const NUMBERS: [&str; 11] = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
    let norm = |t: &str| {
        normalize_text(t)
            .split(' ')
            .map(|w| NUMBERS.iter().position(|n| *n == w).map_or_else(|| w.to_string(), |d| d.to_string()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let answer = norm(answer);
    let same: Vec<bool> = references.iter().map(|r| !answer.is_empty() && norm(r) == answer).collect();
    let matches = same.iter().filter(|&&m| m).count();
    if references.len() < 2 {
        return f64::from(u8::from(matches == 1));
    }
    let left_out = |m: bool| ((matches - usize::from(m)) as f64 / 3.0).min(1.0);
    same.iter().map(|&m| left_out(m)).sum::<f64>() / references.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vqa_accuracy_is_the_leave_one_out_mean_of_matches_over_three() {
        let refs = |said: &[&str]| said.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let ten = |hits: usize| {
            let mut r = vec!["two"; hits];
            r.resize(10, "three");
            refs(&r)
        };
        // With ten references: 0, 0.3, 0.6, 0.9 and 1 for 0 to 4 matches.
        for (hits, want) in [(0, 0.0), (1, 0.3), (2, 0.6), (3, 0.9), (4, 1.0)] {
            assert!((vqa_accuracy("2", &ten(hits)) - want).abs() < 1e-12, "{hits}: {}", vqa_accuracy("2", &ten(hits)));
        }
        // Normalized: case, punctuation, articles and number words.
        assert!((vqa_accuracy("The Stop Sign.", &refs(&["stop sign"; 4])) - 1.0).abs() < 1e-12);
        assert!((vqa_accuracy("stop sign", &refs(&["stop sign"; 3])) - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(vqa_accuracy("", &refs(&["", ""])), 0.0);
        assert_eq!(vqa_accuracy("soup", &refs(&["soup"])), 1.0);
        assert_eq!(vqa_accuracy("soup", &[]), 0.0);
    }

    fn opts(o: &[&str]) -> Vec<String> {
        o.iter().map(|s| s.to_string()).collect()
    }

    fn choice(text: &str, o: &[&str]) -> Option<usize> {
        parse_choice(text, &opts(o)).map(|c| c.index)
    }

    #[test]
    fn every_letter_form() {
        let o = ["chiasmus", "apostrophe", "anaphora"];
        assert_eq!(choice("[[B]]", &o), Some(1));
        assert_eq!(choice("Reasoning... Final answer: [[C]]", &o), Some(2));
        assert_eq!(choice("(B)", &o), Some(1));
        assert_eq!(choice("B.", &o), Some(1));
        assert_eq!(choice("B", &o), Some(1));
        assert_eq!(choice("Answer: B", &o), Some(1));
        assert_eq!(choice("answer: (C)", &o), Some(2));
        assert_eq!(choice("The correct option is A because ...", &o), Some(0));
        assert_eq!(choice("the answer is B", &o), Some(1));
        assert_eq!(choice("The answer is option C.", &o), Some(2));
        assert_eq!(choice("B. apostrophe", &o), Some(1));
        assert_eq!(choice("(A) chiasmus", &o), Some(0));
        assert_eq!(choice("It uses an apostrophe.", &o), Some(1));
        assert_eq!(choice("Anaphora", &o), Some(2));
        // "answer" ending a line is not a marker of the next line's first word.
        assert_eq!(choice("issue, fix, answer\nA compare-contrast text. The answer is B.", &o), Some(1));
        assert_eq!(choice("Answer:\n(C)", &o), Some(2));
    }

    /// The cases `utils.py` of an lmms-eval export is checked against too.
    #[test]
    fn the_shared_parse_cases() {
        for line in include_str!("../../../tests/fixtures/parse_cases.jsonl").lines() {
            let c: serde_json::Value = serde_json::from_str(line).unwrap();
            let mut s = Sample::new("1", "q", c["answer"].as_str().unwrap_or(""));
            s.answer_format = match c["format"].as_str().unwrap() {
                "multiple_choice" => AnswerFormat::MultipleChoice,
                "yes_no" => AnswerFormat::YesNo,
                "numeric" => AnswerFormat::Numeric,
                _ => AnswerFormat::Open,
            };
            if let Some(o) = c["options"].as_array() {
                s.options = o.iter().map(|x| x.as_str().unwrap().to_string()).collect();
                s.answer_index = c["answer_index"].as_i64().map(|i| i as i32);
                s.answer = s.options[s.answer_index.unwrap() as usize].clone();
            }
            let response = Response::Text(c["response"].as_str().unwrap().to_string());
            let got = score_with(&s, &response, NumericScoring::Exact, MraRule::Strict).score;
            assert_eq!(got, c["score"].as_f64().unwrap(), "{line}");
        }
    }

    #[test]
    fn final_answers_of_reasoning_responses() {
        let o = ["chiasmus", "apostrophe", "anaphora"];
        let mut s = Sample::new("1", "Which?", "apostrophe");
        s.answer_format = AnswerFormat::MultipleChoice;
        s.options = o.iter().map(|x| x.to_string()).collect();
        s.answer_index = Some(1);
        let t = |x: &str| score(&s, &Response::Text(x.into()), MraRule::Strict);
        // Stated once, in any of the final-answer forms.
        assert_eq!(t("Let me think step by step. A repeats words... so the answer is B.").score, 1.0);
        assert_eq!(t("Reasoning about each option.\nAnswer: B").score, 1.0);
        assert_eq!(t("We compare the options. The final result is \\boxed{B}").score, 1.0);
        assert_eq!(t("Hence \\boxed{\\text{B}}").answer.as_deref(), Some("B"));
        // Two different final answers: unparsed, never the last one by luck.
        let two = t("The answer is A. On reflection, the answer is B.");
        assert!(!two.parsed && two.score == 0.0, "{two:?}");
        assert_eq!(t("The answer is B. So, the answer is B.").score, 1.0);
        assert_eq!(parse_number("The answer is 12. Checking again, the answer is 12."), Some((12.0, true)));
        assert_eq!(parse_number("The answer is 12. No wait, the answer is 14."), None);
        assert_eq!(unbox("so \\boxed{42} apples"), "so [[42]] apples");
    }

    #[test]
    fn what_is_not_a_letter() {
        let o = ["dog", "cat"];
        assert_eq!(choice("The answer is a dog", &o), Some(0), "the article is not option A; the text decides");
        assert_eq!(choice("The answer is E", &o), None, "E is out of range for 2 options");
        assert_eq!(choice("I have no idea", &o), None);
        assert_eq!(choice("", &o), None);
        assert_eq!(choice("dog or cat, hard to say", &o), None, "two options named");
        assert_eq!(choice("B", &[]), None, "no options");
        assert_eq!(choice("C. cat", &o), None, "the label names no option");
    }

    #[test]
    fn an_option_written_exactly_wins_and_options_alike_are_ambiguous() {
        let o = ["1 < 2 < 3.", "1 = 2 = 3.", "1 > 2 > 3."];
        assert_eq!(choice("1 = 2 = 3.", &o), Some(1));
        assert_eq!(choice("  1 =  2 = 3. ", &o), Some(1));
        assert_eq!(choice("1 2 3", &o), None, "alike once normalised: never the first");
        // An option that is itself a letter: "B" is option A by its text and option B as a letter.
        assert_eq!(choice("B", &["B", "C", "A", "D"]), None);
        assert_eq!(choice("A", &["A", "B"]), Some(0));
        assert_eq!(choice("**Answer:** B", &o), Some(1));
        assert_eq!(choice("Answer: \\(C\\)", &o), Some(2));
        assert_eq!(choice("__C__", &o), Some(2));
    }

    #[test]
    fn final_answers_hold_one_number() {
        assert_eq!(parse_number("The answer is 2e3 metres."), Some((2000.0, true)));
        assert_eq!(parse_number("[[3 or 4]]"), None);
        assert_eq!(parse_number("Answer: 1,5"), None);
        assert_eq!(parse_number("Answer: 1,500 m. I also checked 7 others."), Some((1500.0, true)));
        assert_eq!(parse_number("I see 3 dogs, maybe 1.5e1"), Some((15.0, false)));
    }

    #[test]
    fn longer_option_wins_over_its_part() {
        let o = ["red", "red and blue", "green"];
        assert_eq!(choice("It is red and blue.", &o), Some(1));
    }

    #[test]
    fn yes_no_and_numbers() {
        assert_eq!(parse_yes_no("Yes, there is a cat."), Some((true, true)));
        assert_eq!(parse_yes_no("[[No]]"), Some((false, true)));
        assert_eq!(parse_yes_no("There is no cat in the image."), Some((false, false)));
        assert_eq!(parse_yes_no("Maybe yes, maybe no."), None);
        assert_eq!(parse_number("There are 12 apples."), Some((12.0, false)));
        assert_eq!(parse_number("[[3.5]]"), Some((3.5, true)));
        assert_eq!(parse_number("Answer: 1,234 meters"), Some((1234.0, true)));
        assert_eq!(parse_number("I count three chairs"), Some((3.0, false)));
        assert_eq!(parse_number("no number here"), None);
    }

    #[test]
    fn scoring_uses_the_rows_gold_and_mra() {
        let mut s = Sample::new("1", "How many?", "10");
        s.answer_format = AnswerFormat::Numeric;
        let t = |x: &str| Response::Text(x.into());
        assert_eq!(score(&s, &t("10"), MraRule::Strict).score, 1.0);
        assert!((score(&s, &t("about 8"), MraRule::Strict).score - 0.6).abs() < 1e-9);
        let exact = score_with(&s, &t("about 8"), NumericScoring::Exact, MraRule::Strict);
        assert_eq!((exact.score, exact.answer.as_deref()), (0.0, Some("8")));
        assert_eq!(score_with(&s, &t("10.0"), NumericScoring::Exact, MraRule::Strict).score, 1.0);
        let mut o = Sample::new("2", "What organ?", "the liver");
        o.answer_format = AnswerFormat::Open;
        assert_eq!(score(&o, &t("Liver."), MraRule::Strict).score, 1.0);
        assert_eq!(score(&o, &t("Liver."), MraRule::Strict).answer.as_deref(), Some("liver"));
        assert_eq!(score(&o, &t("[[liver]]"), MraRule::Strict).score, 1.0);
        assert_eq!(score(&o, &t("kidney"), MraRule::Strict).score, 0.0);
        let a = score(&o, &t("I cannot see the image, so no diagnosis can be made."), MraRule::Strict);
        assert!(a.abstained && a.score == 0.0 && !a.parsed);
    }

    #[test]
    fn explicit_answers_beat_hedges_and_indices_are_checked() {
        let mut s = Sample::new("1", "Which?", "b");
        s.answer_format = AnswerFormat::MultipleChoice;
        s.options = opts(&["a", "b"]);
        s.answer_index = Some(1);
        let hedge = score(&s, &Response::Text("Without the image I can only guess: [[B]]".into()), MraRule::Strict);
        assert!(!hedge.abstained && hedge.score == 1.0);
        let refuse = score(&s, &Response::Text("I cannot see the image.".into()), MraRule::Strict);
        assert!(refuse.abstained && refuse.score == 0.0);
        assert_eq!(score(&s, &Response::Index(1), MraRule::Strict).score, 1.0);
        let unparsed = score(&s, &Response::Index(-1), MraRule::Strict);
        assert!(!unparsed.parsed && unparsed.score == 0.0);
        assert!(!score(&s, &Response::Index(7), MraRule::Strict).parsed);
        assert!(score(&s, &Response::Text("  ".into()), MraRule::Strict).empty);
    }
}
