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
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
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
}
