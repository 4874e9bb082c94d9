//! One writer per target syntax of the files blindspot generates, so that a
//! data string (a question type, an id, a model name, an image path, a
//! pipeline value) can never leave the place it is written into: a Python
//! literal cannot be closed early, a YAML scalar cannot start a new key, a
//! Markdown table row cannot gain a column, an HTML page cannot gain a tag, a
//! spreadsheet cannot read a cell as a formula, and a shell cannot split a
//! word. Every generated file writes data text through these functions; none
//! concatenates data text into code. Each writer has a fuzz target
//! (`fuzz/fuzz_targets/escape_*.rs`) checking that reading its output back
//! gives the input.
//!
//! Plain ASCII words (letters, digits and the usual punctuation of names and
//! paths) come out unchanged, so escaping keeps the bytes of files whose data
//! is ordinary.
//!
//! Two rules hold for text a person reads (the card's Markdown, the report
//! page and its plots), not for the machine-read syntaxes (CSV, YAML,
//! Python, shell), which must give back the data as it is:
//!
//! - An invisible format character (Unicode category Cf: the bidirectional
//!   controls such as U+202E, which would show the rest of a sentence
//!   reversed, zero-width spaces and joiners, the byte-order mark, tags) is
//!   shown as its code point, `U+202E` ([`visible`]).
//! - A data string longer than [`MAX_SHOWN`] characters is shown as its first
//!   [`MAX_SHOWN`] characters, an ellipsis and its length, `abc… (1,048,576
//!   characters)` ([`shortened`]), so one huge token cannot grow the card or
//!   the page by its size. The data files keep it whole.

pub mod csv;
pub mod html;
pub mod markdown;
pub mod python;
pub mod shell;
pub mod yaml;

use std::borrow::Cow;

/// Characters of a data string shown in the card or the page before it is
/// shortened ([`shortened`]).
pub const MAX_SHOWN: usize = 200;

/// Whether `c` is a format character (Unicode 15 general category Cf): it
/// has no glyph of its own but changes how the text around it is shown.
pub fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{0600}'..='\u{0605}'
            | '\u{061C}'
            | '\u{06DD}'
            | '\u{070F}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08E2}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{110BD}'
            | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0001}'
            | '\u{E0020}'..='\u{E007F}'
    )
}

/// `s` with every invisible format character written as its code point
/// (`U+202E`), so what is shown is what the data holds.
pub fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_invisible_format) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_invisible_format(c) {
            out.push_str(&format!("U+{:04X}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` cut to its first [`MAX_SHOWN`] characters, followed by an ellipsis and
/// its length in characters, when it is longer; whole otherwise.
pub fn shortened(s: &str) -> Cow<'_, str> {
    match s.char_indices().nth(MAX_SHOWN) {
        None => Cow::Borrowed(s),
        Some((end, _)) => {
            let n = s.chars().count();
            Cow::Owned(format!("{}… ({} characters)", &s[..end], thousands(n)))
        }
    }
}

/// `n` with a comma between each group of three digits: 1,048,576.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_are_shown_as_code_points() {
        assert_eq!(visible("abc\u{202E}def"), "abcU+202Edef");
        assert_eq!(
            visible("a\u{200B}b\u{2066}c\u{061C}\u{200E}\u{FEFF}\u{E0041}"),
            "aU+200BbU+2066cU+061CU+200EU+FEFFU+E0041"
        );
        assert!(matches!(visible("plain, 1.0 – ü 漢字"), Cow::Borrowed(_)));
    }

    #[test]
    fn long_strings_are_cut_with_their_length() {
        assert!(matches!(shortened(&"a".repeat(MAX_SHOWN)), Cow::Borrowed(_)));
        let long = "é".repeat(1_048_576);
        assert_eq!(shortened(&long), format!("{}… (1,048,576 characters)", "é".repeat(MAX_SHOWN)));
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(201), "201");
    }
}
