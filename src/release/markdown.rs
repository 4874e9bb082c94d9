//! User text in the card body (description, citation, question types, model
//! names, datasheet answers): Markdown formatting is kept, raw HTML is not.

/// `s` for a Markdown paragraph: `<`, `>` and `&` escaped outside inline code
/// spans, so no tag of the user's (`<script>`) reaches a renderer.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
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
