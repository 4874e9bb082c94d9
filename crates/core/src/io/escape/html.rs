//! HTML and SVG (XML) text and attribute values.
//!
//! [`text`] escapes `&`, `<`, `>`, `"` and `'`, which makes a value safe as
//! element content and inside a quoted attribute alike; control characters
//! other than tab and line breaks, which XML cannot hold even as references,
//! become U+FFFD, and invisible format characters are shown as their code
//! points (`U+202E`, [`super::visible`]). [`data`] is [`text`] for a data
//! string quoted on the page, shortened past [`super::MAX_SHOWN`] characters.

use std::fmt::Write;

/// `s` as HTML or XML text (element content or a quoted attribute value).
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c if super::is_invisible_format(c) => {
                let _ = write!(out, "U+{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// A data string (an id, a question, an answer) quoted on the page: [`text`]
/// of it [`super::shortened`].
pub fn data(s: &str) -> String {
    text(&super::shortened(s))
}

/// Text from a shared string (descriptions, stop reasons, verdicts), which
/// marks code with Markdown backticks: escaped, each `…` pair as `<code>`;
/// an unpaired backtick is dropped, so none reaches the page.
pub fn inline(s: &str) -> String {
    let parts: Vec<&str> = s.split('`').collect();
    let n = parts.len();
    let mut out = String::with_capacity(s.len() + 16);
    for (i, part) in parts.iter().enumerate() {
        let code = i % 2 == 1 && !(n.is_multiple_of(2) && i == n - 1);
        if code && !part.is_empty() {
            let _ = write!(out, "<code>{}</code>", text(part));
        } else {
            out.push_str(&text(part));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(text("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        assert_eq!(text("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
        assert_eq!(text("a\u{0}b\u{1b}c\td"), "a\u{FFFD}b\u{FFFD}c\td");
        assert_eq!(text("plain text, 1.0"), "plain text, 1.0");
        assert_eq!(text("a\u{202E}b\u{200D}"), "aU+202EbU+200D");
        assert_eq!(data(&"<".repeat(1000)), format!("{}… (1,000 characters)", "&lt;".repeat(200)));
    }

    #[test]
    fn backticks_become_code_and_never_reach_the_page() {
        assert_eq!(inline("Variant `no_image` of every question"), "Variant <code>no_image</code> of every question");
        assert_eq!(inline("`a<b` and `c`"), "<code>a&lt;b</code> and <code>c</code>");
        // An unpaired backtick is dropped, an empty pair too.
        assert_eq!(inline("it's `odd"), "it&#39;s odd");
        assert_eq!(inline("x `` y"), "x  y");
        assert_eq!(inline("plain"), "plain");
        let stop = "at chance (0 removed; `stop-at-chance = false` prunes to the budget)";
        assert!(!inline(stop).contains('`'));
    }
}
