//! Markdown (the dataset card): three kinds of text.
//!
//! - The publisher's own prose (description, datasheet answers): [`text`]
//!   keeps its Markdown formatting but no raw HTML and no link that runs
//!   anything; [`cell`] is the same for a table cell.
//! - A data string shown as written (a question type, a model name, a file
//!   name, an answer): [`literal`] escapes every character Markdown or HTML
//!   would read (backslash, backtick, `*`, `_`, `[`, `]`, `~`, `|`, `<`, `>`,
//!   `&`; an underscore inside a word is text already) and keeps it on one
//!   line, in a sentence or a table cell alike.
//! - A data string shown as code: [`code`] (and [`code_cell`] in a table) opens
//!   a code span with a backtick run longer than any inside the value, so the
//!   value cannot close it.
//! - A sentence another stage wrote with data strings in it (a filter rule
//!   naming its models, a model's gap): [`text_with_data`] writes each data
//!   string as [`literal`] and the rest as [`text`].
//!
//! Every one of them shows invisible format characters as code points
//! ([`super::visible`]); [`literal`] and [`code`] shorten a data string past
//! [`super::MAX_SHOWN`] characters ([`super::shortened`]).

/// `s` for a Markdown paragraph: `<`, `>` and `&` escaped outside inline code
/// spans, so no tag of the user's (`<script>`) reaches a renderer.
pub fn text(s: &str) -> String {
    let s = super::visible(s);
    let mut out = String::with_capacity(s.len());
    let mut rest: &str = &s;
    while let Some(i) = rest.find('`') {
        out.push_str(&escape_html(&rest[..i]));
        let run = rest[i..].chars().take_while(|&c| c == '`').count();
        let fence = &rest[i..i + run];
        let after = &rest[i + run..];
        // A code span closes on a run of exactly the same length.
        match find_run(after, run) {
            Some(j) => {
                out.push_str(fence);
                out.push_str(&after[..j + run]);
                rest = &after[j + run..];
            }
            None => {
                out.push_str(&"\\`".repeat(run));
                rest = after;
            }
        }
    }
    out.push_str(&escape_html(rest));
    out
}

/// `s` for one table cell: [`text`], on one line, with `|` escaped.
pub fn cell(s: &str) -> String {
    text(&s.replace(['\r', '\n'], " ")).replace('|', "\\|")
}

/// `s` shown as written, in running text or a table cell: Markdown's
/// punctuation backslash-escaped, `<`, `>` and `&` as entities, line breaks as
/// spaces.
pub fn literal(s: &str) -> String {
    let s = super::shortened(s);
    let s = super::visible(&s);
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        // An underscore between two letters or digits neither opens nor closes emphasis.
        let intraword =
            |i: usize| i > 0 && chars[i - 1].is_alphanumeric() && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        match c {
            '_' if intraword(i) => out.push(c),
            '\\' | '`' | '*' | '_' | '[' | ']' | '~' | '|' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `s` as an inline code span, on one line: the span's backtick run is longer
/// than any run inside `s`, and a space pads a value that starts or ends with
/// a backtick (or starts and ends with a space), so the value is shown whole.
pub fn code(s: &str) -> String {
    let s = super::shortened(s);
    let s: String = super::visible(&s).chars().map(|c| if matches!(c, '\r' | '\n') { ' ' } else { c }).collect();
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat(longest + 1);
    if s.is_empty() {
        // "``" is no code span: one space is the empty value shown as code.
        return "` `".into();
    }
    let pad = s.starts_with('`')
        || s.ends_with('`')
        || (s.starts_with(' ') && s.ends_with(' ') && !s.chars().all(|c| c == ' '));
    if pad { format!("{ticks} {s} {ticks}") } else { format!("{ticks}{s}{ticks}") }
}

/// A sentence written by another stage that quotes data strings (`data`:
/// model names, question types, ids): every occurrence of one of them (the
/// longest first where two start at one place) is written as [`literal`], so
/// Markdown in it (`![x](http://…)`) is shown as written; the rest of the
/// sentence is the stage's own prose, written as [`text`].
pub fn text_with_data(s: &str, data: &[&str]) -> String {
    let mut data: Vec<&str> = data.iter().copied().filter(|d| !d.is_empty()).collect();
    data.sort_by_key(|d| std::cmp::Reverse(d.len()));
    let mut out = String::with_capacity(s.len());
    let mut prose_start = 0;
    let mut i = 0;
    while i < s.len() {
        match data.iter().find(|d| s[i..].starts_with(**d)) {
            Some(d) => {
                out.push_str(&text(&s[prose_start..i]));
                out.push_str(&literal(d));
                i += d.len();
                prose_start = i;
            }
            None => i += s[i..].chars().next().map_or(1, char::len_utf8),
        }
    }
    out.push_str(&text(&s[prose_start..]));
    out
}

/// [`code`] for a table cell: a `|` inside is escaped (GitHub's tables split
/// cells on it even inside code, and show `\|` there as `|`).
pub fn code_cell(s: &str) -> String {
    code(s).replace('|', "\\|")
}

/// A code fence longer than any backtick run in `s` (at least three).
pub fn fence_for(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

fn escape_html(s: &str) -> String {
    disarm_links(&s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;"))
}

/// A link whose target has a scheme other than http(s) or mailto
/// (`[x](javascript:…)`, `[x]: data:…`) loses its link syntax: the `(` or `:`
/// after the `]` is escaped, so the text shows as written and nothing runs.
fn disarm_links(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(']') {
        out.push_str(&rest[..=i]);
        rest = &rest[i + 1..];
        let (opener, target) = match rest.as_bytes().first() {
            Some(b'(') => ("(", &rest[1..]),
            Some(b':') => (":", &rest[1..]),
            _ => continue,
        };
        if unsafe_scheme(target) {
            out.push('\\');
        }
        out.push_str(opener);
        rest = &rest[1..];
    }
    out.push_str(rest);
    out
}

/// Whether a link target (after optional spaces) starts with a scheme that is
/// not http, https or mailto.
fn unsafe_scheme(target: &str) -> bool {
    let t = target.trim_start();
    let t = t.strip_prefix("&lt;").unwrap_or(t).trim_start();
    let scheme: String = t.chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')).collect();
    let scheme_ok = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    scheme_ok
        && t[scheme.len()..].starts_with(':')
        && !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https" | "mailto")
}

/// Byte offset of a run of exactly `n` backticks in `s`.
fn find_run(s: &str, n: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'`' {
            let len = b[i..].iter().take_while(|&&c| c == b'`').count();
            if len == n {
                return Some(i);
            }
            i += len;
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_escaped_and_markdown_kept() {
        assert_eq!(
            text("A **bold** <script>x()</script> & co"),
            "A **bold** &lt;script&gt;x()&lt;/script&gt; &amp; co"
        );
        assert_eq!(text("run `a<b` now"), "run `a<b` now");
        assert_eq!(text("open ` tick <i>"), "open \\` tick &lt;i&gt;");
        assert_eq!(cell("a|b\nc"), "a\\|b c");
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("has ``` inside and ````"), "`````");
    }

    #[test]
    fn data_strings_are_shown_as_written() {
        assert_eq!(literal("PRES, POS"), "PRES, POS");
        assert_eq!(literal("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
        assert_eq!(literal("a|b`c`*d*_e_[f](javascript:x)"), "a\\|b\\`c\\`\\*d\\*\\_e\\_\\[f\\](javascript:x)");
        assert_eq!(literal("two\nlines\r\n&amp; \\"), "two lines  &amp;amp; \\\\");
        assert_eq!(literal("~~gone~~"), "\\~\\~gone\\~\\~");
        assert_eq!(literal("test_freeform _x_ a_ _b"), "test_freeform \\_x\\_ a\\_ \\_b");
    }

    #[test]
    fn invisible_characters_and_huge_tokens_are_shown_as_what_they_are() {
        assert_eq!(literal("id\u{202E}cba"), "idU+202Ecba");
        assert_eq!(code("a\u{2067}b"), "`aU+2067b`");
        assert_eq!(text("see \u{200B}`x\u{202E}`"), "see U+200B`xU+202E`");
        let token = "x".repeat(1_048_576);
        let shown = format!("{}… (1,048,576 characters)", "x".repeat(crate::io::escape::MAX_SHOWN));
        assert_eq!(literal(&token), shown);
        assert_eq!(code(&token), format!("`{shown}`"));
        // The publisher's own prose is not cut.
        assert_eq!(text(&token).len(), token.len());
    }

    #[test]
    fn data_in_a_stages_sentence_is_literal() {
        let model = "![x](http://evil.example/t.png)";
        assert_eq!(
            text_with_data(
                &format!("removed when any of the 2 models ({model}, m\u{202E}2) answer it"),
                &[model, "m\u{202E}2"]
            ),
            "removed when any of the 2 models (!\\[x\\](http://evil.example/t.png), mU+202E2) answer it"
        );
        // The stage's own code spans are kept; plain names change nothing.
        assert_eq!(text_with_data("m1: `stop-at-chance = false`", &["m1"]), "m1: `stop-at-chance = false`");
        // Where two data strings start at one place, the longer is the one quoted.
        assert_eq!(text_with_data("a*b* and a*", &["a*", "a*b*"]), "a\\*b\\* and a\\*");
    }

    #[test]
    fn code_spans_cannot_be_closed_by_their_value() {
        assert_eq!(code("vqa-rad.toml"), "`vqa-rad.toml`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("``x"), "``` ``x ```");
        assert_eq!(code("x`"), "`` x` ``");
        assert_eq!(code(" a "), "`  a  `");
        assert_eq!(code("   "), "`   `");
        assert_eq!(code(""), "` `");
        assert_eq!(code("a\nb"), "`a b`");
        assert_eq!(code("<script>"), "`<script>`");
        assert_eq!(code_cell("a|b"), "`a\\|b`");
    }

    #[test]
    fn links_run_nothing() {
        assert_eq!(text("[x](javascript:alert(1))"), "[x]\\(javascript:alert(1))");
        assert_eq!(text("[x]( JavaScript:a)"), "[x]\\( JavaScript:a)");
        assert_eq!(text("[x](<data:text/html,1>)"), "[x]\\(&lt;data:text/html,1&gt;)");
        assert_eq!(text("[ref]: vbscript:x"), "[ref]\\: vbscript:x");
        // Web links, mail, relative links and plain brackets are kept.
        for kept in [
            "[site](https://x.org/a)",
            "[m](mailto:a@b.c)",
            "[doc](docs/a.md)",
            "[1]: http://x",
            "a [b] c",
            "[x](#top)",
        ] {
            assert_eq!(text(kept), kept);
        }
        assert_eq!(text("`[x](javascript:a)`"), "`[x](javascript:a)`");
    }
}
