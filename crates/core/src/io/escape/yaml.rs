//! YAML scalars: always double-quoted, always on one line.
//!
//! Inside double quotes a YAML value cannot start a key, a list item, a
//! comment or a tag; line breaks (`\n`, `\r`, and NEL, LS, PS, which YAML 1.1
//! also breaks lines on) and every character YAML does not print are escaped,
//! so the scalar stays on its line and reads back as the value. Printable
//! characters are kept as they are (JSON's escapes are a subset of YAML's,
//! so the quoted form of plain text is also its JSON string).

use std::fmt::Write;

/// A double-quoted YAML scalar that reads back as `s`.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if !printable(c) => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text for a `#` comment: one line, every control or line-breaking character
/// shown as a space.
pub fn comment(s: &str) -> String {
    s.chars().map(|c| if printable(c) && c != '\t' { c } else { ' ' }).collect()
}

/// YAML's printable set (`c-printable`) less the characters that break lines
/// or mark a byte order: tab, `' '..='~'`, U+00A0..U+D7FF but U+2028 and
/// U+2029, U+E000..U+FFFD but U+FEFF, and the planes above.
fn printable(c: char) -> bool {
    matches!(c, '\t' | ' '..='~' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
        && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{FEFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn back(yaml: &str) -> String {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    #[test]
    fn a_value_cannot_start_a_key() {
        let evil = "evil\ninclude: /tmp/attacker.yaml\n#";
        let q = quoted(evil);
        assert_eq!(q, "\"evil\\ninclude: /tmp/attacker.yaml\\n#\"");
        assert!(!q.contains('\n'));
        let doc: std::collections::BTreeMap<String, String> =
            serde_yaml_ng::from_str(&format!("group: {q}\n")).unwrap();
        assert_eq!(doc.keys().collect::<Vec<_>>(), ["group"]);
        assert_eq!(doc["group"], evil);
    }

    #[test]
    fn every_character_reads_back() {
        for s in [
            "plain",
            "",
            "- item",
            "key: value",
            "'single' \"double\" \\",
            "tab\there",
            "\u{0}\u{7}\u{1b}\u{7f}\u{85}\u{9f}",
            "line\u{2028}sep\u{2029}para\u{feff}bom\u{fffe}",
            "胸部 X 線 🙂",
            "!tag &anchor *alias | > % @ `",
        ] {
            let q = quoted(s);
            assert!(!q.contains(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']), "{q}");
            assert_eq!(back(&q), s, "{q}");
        }
        assert_eq!(quoted("vqa-rad"), serde_json::to_string("vqa-rad").unwrap());
    }

    #[test]
    fn comments_stay_on_their_line() {
        assert_eq!(comment("a\nb\r\u{2028}c\u{85}d\te"), "a b  c d e");
        assert_eq!(comment("plain text"), "plain text");
    }
}
