//! Option lists as sources write them: string-encoded lists (JSON or Python
//! literals), labelled options (`A. chair`, `(B) table`) and options written
//! at the end of the question text.

use super::mapping::LETTERS;

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
    // Python literal: quoted items separated by commas.
    let chars: Vec<char> = s[1..s.len() - 1].chars().collect();
    let mut items = Vec::new();
    let mut i = 0;
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
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        match chars.get(i) {
            Some(',') => i += 1,
            None => break,
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
    let q = q.replace("<image>", "");
    let lines: Vec<&str> = q.trim().lines().collect();
    let starts = |line: &str, k: usize| {
        let b = line.trim_start().as_bytes();
        k < LETTERS.len() && b.len() >= 2 && b[0] == LETTERS[k] && b[1] == b'.'
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
    (q.trim().to_string(), Vec::new())
}
