//! Option lists as sources write them: string-encoded lists (JSON or Python
//! literals), labelled options (`A. chair`, `(B) table`) and options written
//! at the end of the question text.

use std::borrow::Cow;

use super::mapping::LETTERS;
use crate::raw::Raw;

/// Parses a string-encoded list: JSON (`["a", "b"]`) or a Python literal (`['a', "b"]`).
pub fn parse_list_literal(s: &str) -> Option<Vec<String>> {
    let s = s.trim();
    if !s.starts_with('[') || !s.ends_with(']') {
        return None;
    }
    if let Ok(v) = serde_json::from_str::<Vec<serde_json::Value>>(s) {
        return v
            .into_iter()
            .map(|x| match x {
                serde_json::Value::String(s) => Some(s),
                serde_json::Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect();
    }
    // Python literal: quoted items separated by commas; or NumPy's repr of an array, as
    // pandas writes one into a CSV cell (`['a' 'b'\n 'c']`, `[1 2 3]`): items separated
    // by white space alone, never a comma.
    let chars: Vec<char> = s[1..s.len() - 1].chars().collect();
    if !chars.iter().any(|&c| c == '\'' || c == '"') {
        let words: Vec<&str> = s[1..s.len() - 1].split_whitespace().collect();
        let numbers = !words.is_empty() && words.iter().all(|w| w.parse::<f64>().is_ok_and(f64::is_finite));
        return numbers.then(|| words.into_iter().map(String::from).collect());
    }
    let mut items = Vec::new();
    let mut i = 0;
    // Whether items are separated by white space alone (NumPy); set by the first gap.
    let mut spaced: Option<bool> = None;
    loop {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if i >= chars.len() {
            break;
        }
        let q = chars[i];
        if q != '\'' && q != '"' {
            return None;
        }
        i += 1;
        let mut item = String::new();
        loop {
            let c = *chars.get(i)?;
            i += 1;
            if c == '\\' {
                let e = *chars.get(i)?;
                i += 1;
                item.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    other => other,
                });
            } else if c == q {
                break;
            } else {
                item.push(c);
            }
        }
        items.push(item);
        let gap = i;
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        match (chars.get(i), spaced) {
            (Some(','), None | Some(false)) => {
                spaced = Some(false);
                i += 1;
            }
            (Some('\'' | '"'), None | Some(true)) if i > gap => spaced = Some(true),
            (None, _) => break,
            _ => return None,
        }
    }
    Some(items)
}

/// Drops the labels of options written `A. chair`, `B) table` or `(C) lamp`, when every
/// option carries its own letter in order (VSI-Bench and many VLMEvalKit sets): the
/// canonical option is the text, its letter is its position. Returns whether it did.
pub(super) fn strip_option_labels(options: &mut [String]) -> bool {
    let labelled = options.len() >= 2 && options.iter().enumerate().all(|(k, o)| option_label(o, Some(k)).is_some());
    if labelled {
        for (k, o) in options.iter_mut().enumerate() {
            if let Some((_, rest)) = option_label(o, Some(k)) {
                *o = rest.to_string();
            }
        }
    }
    labelled
}

/// An option label at the start of `text` (`A.`, `A)`, `(A)`, then a space), the letter's
/// position and the rest; with `want`, only that position's letter.
pub(super) fn option_label(text: &str, want: Option<usize>) -> Option<(usize, &str)> {
    let t = text.trim_start();
    let (letter, rest) = match t.strip_prefix('(') {
        Some(r) => (r.chars().next()?, r.get(1..)?.strip_prefix(')')?),
        None => {
            let c = t.chars().next()?;
            (c, t.get(1..)?.strip_prefix(['.', ')'])?)
        }
    };
    let k = LETTERS.iter().position(|&l| l as char == letter)?;
    if want.is_some_and(|w| w != k) || !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim();
    (!rest.is_empty()).then_some((k, rest))
}

/// Splits the options written at the end of a question (`A. text` lines, in
/// letter order; an option may run over several lines) off the question, and
/// drops `<image>` placeholders (LLaVA-style conversations).
pub fn split_options_from_question(q: &str) -> (String, Vec<String>) {
    split_with_letters(q, LETTERS)
}

/// Lower-case option labels (`(a) open (b) closed`), read only where a field holds
/// nothing but options: in a question's text, `a.` or `(a)` can be ordinary words.
const LOWER_LETTERS: &[u8] = b"abcdefghij";

/// [`split_options_from_question`] with labels drawn from `letters`.
fn split_with_letters(q: &str, letters: &[u8]) -> (String, Vec<String>) {
    let q = q.replace("<image>", "");
    let lines: Vec<&str> = q.trim().lines().collect();
    let starts = |line: &str, k: usize| {
        let b = line.trim_start().as_bytes();
        k < letters.len() && b.len() >= 2 && b[0] == letters[k] && b[1] == b'.'
    };
    // The last "A." line that begins a run of B., C., ... up to the end.
    for a in (0..lines.len()).rev().filter(|&i| starts(lines[i], 0)) {
        let mut options: Vec<String> = Vec::new();
        for line in &lines[a..] {
            if starts(line, options.len()) {
                options.push(line.trim_start()[2..].trim().to_string());
            } else if let Some(last) = options.last_mut() {
                last.push('\n');
                last.push_str(line.trim());
            }
        }
        if options.len() >= 2 {
            return (lines[..a].join("\n").trim().to_string(), options);
        }
    }
    split_inline_options(q.trim(), letters).unwrap_or_else(|| (q.trim().to_string(), Vec::new()))
}

/// Options written inline after the question: `A: x, B: y`, `A. x B. y`,
/// `(A) x (B) y` or `A) x B) y`, in letter order, one label style throughout, each
/// label at a word boundary and followed by a space. The stem loses a trailing
/// `Options:` / `Choices:` and a leading `Question:`.
fn split_inline_options(q: &str, letters: &[u8]) -> Option<(String, Vec<String>)> {
    let styles: [fn(char) -> String; 4] =
        [|l| format!("({l})"), |l| format!("{l}:"), |l| format!("{l}."), |l| format!("{l})")];
    let at_boundary = |pos: usize, label: &str| {
        let before_ok = q[..pos].chars().next_back().is_none_or(|c| c.is_whitespace() || ",;".contains(c));
        let after_ok = q[pos + label.len()..].chars().next().is_some_and(char::is_whitespace);
        before_ok && after_ok
    };
    let find_from = |from: usize, label: &str| {
        q[from..].match_indices(label).map(|(i, _)| from + i).find(|&i| at_boundary(i, label))
    };
    for style in styles {
        let label = |k: usize| style(letters[k] as char);
        let first = label(0);
        let starts: Vec<usize> = q.match_indices(&first).map(|(i, _)| i).filter(|&i| at_boundary(i, &first)).collect();
        for &a in starts.iter().rev() {
            let mut at = vec![a];
            while at.len() < letters.len() {
                let prev = *at.last().unwrap_or(&a) + label(at.len() - 1).len();
                match find_from(prev, &label(at.len())) {
                    Some(i) => at.push(i),
                    None => break,
                }
            }
            if at.len() < 2 {
                continue;
            }
            let options: Vec<String> = at
                .iter()
                .enumerate()
                .map(|(k, &i)| {
                    let end = at.get(k + 1).copied().unwrap_or(q.len());
                    q[i + label(k).len()..end].trim().trim_end_matches([',', ';']).trim().to_string()
                })
                .collect();
            if options.iter().any(String::is_empty) {
                continue;
            }
            let mut stem = q[..a].trim_end();
            for marker in ["options:", "choices:", "options", "choices"] {
                if stem.len() >= marker.len() && stem[stem.len() - marker.len()..].eq_ignore_ascii_case(marker) {
                    stem = stem[..stem.len() - marker.len()].trim_end();
                    break;
                }
            }
            let stem = stem.trim_end_matches([',', ';']).trim();
            let stem = match stem.get(..9) {
                Some(p) if p.eq_ignore_ascii_case("question:") => stem[9..].trim(),
                _ => stem,
            };
            return Some((stem.to_string(), options));
        }
    }
    None
}

/// Member names of an option object that hold the option's text, and its label.
const TEXT_MEMBERS: [&str; 5] = ["text", "option", "choice", "value", "content"];
const LABEL_MEMBERS: [&str; 3] = ["label", "letter", "key"];

/// Options given as labelled objects: a list of `{"label": "A", "text": "a cat"}`
/// objects, or one object of parallel lists `{"label": ["A", "B"], "text": [...]}` (the
/// Hub's layout for ARC-style choices). Their texts in order, once the labels, where
/// given, are checked to run A, B, C, ... (or 1, 2, 3, ...) in that order, so that no
/// option is read under another letter; `None` when `v` is neither shape, `Some(Err)`
/// saying why when its labels do not run so.
pub fn labelled_options(v: &crate::raw::Raw) -> Option<Result<Vec<crate::raw::Raw>, String>> {
    use crate::raw::Raw;
    let member = |fields: &[(crate::raw::Key, Raw)], names: &[&str]| {
        fields.iter().find(|(k, _)| names.iter().any(|n| k.eq_ignore_ascii_case(n))).map(|(_, v)| v.clone())
    };
    let (texts, labels): (Vec<Raw>, Option<Vec<Raw>>) = match v {
        Raw::List(items) if !items.is_empty() && items.iter().all(|i| matches!(i, Raw::Map(_))) => {
            let mut texts = Vec::with_capacity(items.len());
            let mut labels = Vec::with_capacity(items.len());
            for item in items {
                let Raw::Map(fields) = item else { return None };
                // A turn of a conversation (`{"from": "human", "value": ...}`) is no option.
                if member(fields, &ROLE_MEMBERS).is_some() {
                    return None;
                }
                texts.push(member(fields, &TEXT_MEMBERS)?);
                labels.push(member(fields, &LABEL_MEMBERS));
            }
            let labels = match labels.iter().filter(|l| l.is_some()).count() {
                0 => None,
                n if n == labels.len() => Some(labels.into_iter().flatten().collect()),
                _ => return Some(Err("label some options and not others".into())),
            };
            (texts, labels)
        }
        Raw::Map(fields) => {
            let Some(Raw::List(texts)) = member(fields, &TEXT_MEMBERS) else { return None };
            let known = |k: &str| TEXT_MEMBERS.iter().chain(&LABEL_MEMBERS).any(|n| k.eq_ignore_ascii_case(n));
            if !fields.iter().all(|(k, _)| known(k)) {
                return None;
            }
            let labels = match member(fields, &LABEL_MEMBERS) {
                Some(Raw::List(labels)) if labels.len() == texts.len() => Some(labels),
                Some(_) => return Some(Err("have a label list that is not one label per option".into())),
                None => None,
            };
            (texts, labels)
        }
        _ => return None,
    };
    if let Some(labels) = labels {
        let shown: Vec<String> = labels.iter().map(|l| l.scalar_text().unwrap_or_default()).collect();
        let letters =
            shown.iter().enumerate().all(|(i, l)| l.trim().eq_ignore_ascii_case(&crate::sample::option_letter(i)));
        let numbers = shown.iter().enumerate().all(|(i, l)| l.trim() == (i + 1).to_string());
        if !letters && !numbers {
            let first: Vec<String> = shown.iter().take(6).map(|l| format!("\"{l}\"")).collect();
            return Some(Err(format!(
                "are labelled {}{}, not A, B, C, ... (or 1, 2, 3, ...) in order: read in order, an option would take \
                 another's letter",
                first.join(", "),
                if shown.len() > 6 { ", ..." } else { "" }
            )));
        }
    }
    Some(Ok(texts))
}

/// Member names of a conversation turn that say who speaks (`{"from": "human"}`,
/// `{"role": "user"}`).
const ROLE_MEMBERS: [&str; 3] = ["from", "role", "speaker"];

/// Who speaks a turn of a conversation, as its role member says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Speaker {
    /// `human` or `user`: the one who asks.
    Asker,
    /// `gpt`, `assistant`, `model` or `bot`: the one who answers.
    Answerer,
    /// Anyone else (`system`).
    Other,
}

/// The question and answer of a conversation list, as chat-style benchmarks and
/// instruction data give them (LLaVA's `conversations` of `{"from": "human", "value":
/// ...}`, a chat API's `messages` of `{"role": "user", "content": ...}`): the position
/// of the first asking turn that the next turn answers, and the member holding each
/// turn's text. None when `v` is no list of such turns, each with a text.
pub fn first_exchange(v: &crate::raw::Raw) -> Option<(usize, String)> {
    use crate::raw::Raw;
    let Raw::List(turns) = v else { return None };
    let mut read = Vec::with_capacity(turns.len());
    for turn in turns {
        let Raw::Map(fields) = turn else { return None };
        let role = fields.iter().find(|(k, _)| ROLE_MEMBERS.iter().any(|n| k.eq_ignore_ascii_case(n)))?;
        let text = fields.iter().find(|(k, v)| {
            ["value", "content", "text"].iter().any(|n| k.eq_ignore_ascii_case(n)) && matches!(v, Raw::Str(_))
        })?;
        let speaker = match role.1.scalar_text()?.trim().to_ascii_lowercase().as_str() {
            "human" | "user" => Speaker::Asker,
            "gpt" | "assistant" | "model" | "bot" => Speaker::Answerer,
            _ => Speaker::Other,
        };
        read.push((speaker, text.0.to_string()));
    }
    let at = read.windows(2).position(|w| w[0].0 == Speaker::Asker && w[1].0 == Speaker::Answerer)?;
    (read[at].1 == read[at + 1].1).then(|| (at, read[at].1.clone()))
}

/// Why a field's value holds no list of options.
pub enum NoOptions {
    /// Labelled option objects whose labels do not run A, B, C, ... (the reason).
    Labels(String),
    /// A string that is neither a list nor lettered options (the string).
    Text(String),
    /// An object whose keys are not the option letters (the reason).
    Keys(String),
    /// Another kind of value (its kind).
    Kind(&'static str),
}

/// The option items of one field's value, and whether they were keyed by letter:
/// labelled option objects ([`labelled_options`]), a list (`[[a, b]]` is the list
/// `[a, b]`), a string holding a list (`"['a', 'b']"`) or lettered options (`A. a`
/// lines), or an object keyed by letter (`{"A": ..., "B": ...}`).
pub fn option_items(v: &Raw) -> Result<(Cow<'_, [Raw]>, bool), NoOptions> {
    match labelled_options(v) {
        Some(Err(why)) => return Err(NoOptions::Labels(why)),
        Some(Ok(items)) => return Ok((Cow::Owned(items), false)),
        None => {}
    }
    match v {
        Raw::List(items) => match items.as_slice() {
            [Raw::List(inner)] => Ok((Cow::Borrowed(inner.as_slice()), false)),
            _ => Ok((Cow::Borrowed(items.as_slice()), false)),
        },
        Raw::Str(s) => match parse_list_literal(s).or_else(|| lettered_options(s)) {
            Some(items) => Ok((Cow::Owned(items.into_iter().map(Raw::Str).collect()), false)),
            None => Err(NoOptions::Text(s.clone())),
        },
        Raw::Map(fields) => options_by_letter(fields).map(|items| (Cow::Owned(items), true)).map_err(NoOptions::Keys),
        other => Err(NoOptions::Kind(other.kind())),
    }
}

/// The values of an object of options keyed by letter (`{"A": "a cat", "B": "a dog"}`),
/// in letter order: the keys must be the letters from A on, each once (either case), so
/// that every option keeps its letter and a gold given by letter names the same option.
/// Otherwise, why not.
fn options_by_letter(fields: &[(crate::raw::Key, Raw)]) -> std::result::Result<Vec<Raw>, String> {
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

/// A text that is nothing but lettered options (`A. cat` lines, or inline `(A) cat
/// (B) dog` / `A: cat, B: dog`, or the same with lower-case letters, one case
/// throughout), as the options of a question are sometimes stored: the options, if
/// there are at least two and no text precedes them.
pub fn lettered_options(text: &str) -> Option<Vec<String>> {
    [LETTERS, LOWER_LETTERS].into_iter().find_map(|letters| {
        let (stem, options) = split_with_letters(text, letters);
        (stem.trim().is_empty() && options.len() >= 2).then_some(options)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::Raw;

    fn raw(v: serde_json::Value) -> Raw {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn numpy_array_reprs_read_as_lists() {
        let list = |s: &str| parse_list_literal(s);
        let texts = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            list("['red' 'green' 'blue'\n 'a long \"yellow\" one']"),
            texts(&["red", "green", "blue", "a long \"yellow\" one"])
        );
        assert_eq!(list("[\"it's\" 'b']"), texts(&["it's", "b"]));
        assert_eq!(list("[1 2 30]"), texts(&["1", "2", "30"]));
        assert_eq!(list("[0.5 1.25\n 3. ]"), texts(&["0.5", "1.25", "3."]));
        // Python's and JSON's lists as before; a mix of separators, or bare words, is none.
        assert_eq!(list("['a', 'b']"), texts(&["a", "b"]));
        assert_eq!(list("['a', 'b' 'c']"), None);
        assert_eq!(list("['a' 'b', 'c']"), None);
        assert_eq!(list("['a''b']"), None);
        assert_eq!(list("[red green]"), None);
        assert_eq!(list("[]"), Some(Vec::new()));
    }

    #[test]
    fn a_text_of_lettered_options_reads_in_either_case_but_questions_only_upper() {
        assert_eq!(lettered_options("(a) Open (b) Closed"), Some(vec!["Open".to_string(), "Closed".to_string()]));
        assert_eq!(lettered_options("a. cat\nb. dog\nc. cow").map(|o| o.len()), Some(3));
        assert_eq!(lettered_options("(A) cat (B) dog"), Some(vec!["cat".to_string(), "dog".to_string()]));
        // One case throughout; a lone label, or text before the labels, is no options.
        assert_eq!(lettered_options("(a) cat (B) dog"), None);
        assert_eq!(lettered_options("(a) cat"), None);
        assert_eq!(lettered_options("Pick one: (a) cat (b) dog"), None);
        // In a question, lower-case labels are words: nothing is split off.
        let (stem, options) = split_options_from_question("Is it (a) cat or (b) dog?");
        assert_eq!((stem.as_str(), options.len()), ("Is it (a) cat or (b) dog?", 0));
    }

    #[test]
    fn a_conversation_is_its_first_exchange_and_never_options() {
        let llava = raw(serde_json::json!([{"from": "human", "value": "Q?"}, {"from": "gpt", "value": "A"}]));
        assert_eq!(first_exchange(&llava), Some((0, "value".to_string())));
        assert!(labelled_options(&llava).is_none());
        let chat = raw(serde_json::json!([{"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Q?"}, {"role": "assistant", "content": "A"}]));
        assert_eq!(first_exchange(&chat), Some((1, "content".to_string())));
        // No answering turn after the asking one, or a turn without text: no exchange.
        let unanswered =
            raw(serde_json::json!([{"role": "assistant", "content": "Hi"}, {"role": "user", "content": "Q?"}]));
        assert_eq!(first_exchange(&unanswered), None);
        let parts = raw(serde_json::json!([{"role": "user", "content": [{"type": "text", "text": "Q?"}]},
            {"role": "assistant", "content": "A"}]));
        assert_eq!(first_exchange(&parts), None);
        // Option objects are no conversation.
        let options = raw(serde_json::json!([{"label": "A", "text": "cat"}, {"label": "B", "text": "dog"}]));
        assert_eq!(first_exchange(&options), None);
        assert!(matches!(labelled_options(&options), Some(Ok(texts)) if texts.len() == 2));
    }
}
