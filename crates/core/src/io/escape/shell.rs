//! POSIX shell words, for commands a reader copies into a terminal (the
//! card's rebuild block).
//!
//! A word made only of characters no shell treats specially (letters,
//! digits, `_ . / : @ % + , -`, and `=` after the first character) is
//! written as it is; any other word is single-quoted, each `'` inside written
//! as `'\''`. Inside single quotes nothing is expanded, so the word reaches
//! the command as written: no `$(...)`, `;`, `|`, backtick or glob runs.

/// `s` as one shell word.
pub fn word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .enumerate()
            .all(|(i, c)| c.is_ascii_alphanumeric() || "_./:@%+,-".contains(c) || (c == '=' && i > 0));
    if plain { s.to_string() } else { format!("'{}'", in_single_quotes(s)) }
}

/// `s` for the inside of a single-quoted shell string that the caller opens
/// and closes: each `'` becomes `'\''`.
pub fn in_single_quotes(s: &str) -> String {
    s.replace('\'', "'\\''")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_stay_and_others_are_quoted() {
        assert_eq!(word("pipelines/vqa-rad.toml"), "pipelines/vqa-rad.toml");
        assert_eq!(word("https://github.com/org/repo.git"), "https://github.com/org/repo.git");
        assert_eq!(word("https://x/r;touch${IFS}PWNED;#"), "'https://x/r;touch${IFS}PWNED;#'");
        assert_eq!(word("it's"), "'it'\\''s'");
        assert_eq!(word(""), "''");
        assert_eq!(word("=x"), "'=x'");
        assert_eq!(word("a b"), "'a b'");
        assert_eq!(word("~/x"), "'~/x'");
        assert_eq!(word("*"), "'*'");
        assert_eq!(word("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(word("`id`"), "'`id`'");
        assert_eq!(word("two\nlines"), "'two\nlines'");
    }
}
