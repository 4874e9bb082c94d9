//! Python literals, for cells a harness reads back with `eval` (VLMEvalKit's
//! `toliststr` evaluates any cell that starts with `[` and ends with `]`).
//!
//! A string literal is single-quoted and holds printable ASCII only: `\` and
//! `'` are escaped, every other character outside `' '..='~'` is written as
//! `\xhh`, `\uXXXX` or `\UXXXXXXXX`. So a value cannot close its quote, and
//! the literal evaluates to the value whatever its characters.

use std::fmt::Write;

/// A Python string literal that evaluates to `s`.
pub fn str_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('\'');
    out
}

/// A Python list literal of string literals: `['a', 'b']`.
pub fn list_literal<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let items: Vec<String> = items.into_iter().map(str_literal).collect();
    format!("[{}]", items.join(", "))
}

/// Whether VLMEvalKit's `toliststr` would `eval` a cell holding `s` (more
/// than one character, `[` first and `]` last).
pub fn evaluated_as_list(s: &str) -> bool {
    s.len() > 1 && s.starts_with('[') && s.ends_with(']')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_cannot_close_its_quote() {
        assert_eq!(str_literal("a.png"), "'a.png'");
        assert_eq!(
            str_literal("x', __import__('os').system('touch PWNED'), '"),
            "'x\\', __import__(\\'os\\').system(\\'touch PWNED\\'), \\''"
        );
        assert_eq!(str_literal("back\\slash"), "'back\\\\slash'");
        assert_eq!(str_literal("tab\tnew\nline\r"), "'tab\\tnew\\nline\\r'");
        assert_eq!(str_literal("\u{0}\u{7f}é"), "'\\x00\\x7f\\xe9'");
        assert_eq!(str_literal("胸部\u{2028}"), "'\\u80f8\\u90e8\\u2028'");
        assert_eq!(str_literal("🙂"), "'\\U0001f642'");
        assert!(str_literal("any\u{85}thing").bytes().all(|b| (b' '..=b'~').contains(&b)));
    }

    #[test]
    fn lists_and_the_cells_a_harness_evaluates() {
        assert_eq!(list_literal(["a.png", "b'.png"]), "['a.png', 'b\\'.png']");
        assert_eq!(list_literal([]), "[]");
        assert!(evaluated_as_list("[x]") && evaluated_as_list("[]"));
        assert!(!evaluated_as_list("[") && !evaluated_as_list("a[b]") && !evaluated_as_list("[a"));
    }
}
