//! The `[dataset]` fields' own forms: release names, versions, SPDX licences, URLs, dates.

/// A folder name that stays inside its parent: a letter or digit first, then
/// letters, digits, `-`, `_`, `.`.
pub(super) fn valid_release_name(name: &str) -> bool {
    name.len() <= crate::bounds::NAME_LENGTH
        && name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// `MAJOR.MINOR.PATCH`, each a number that fits 64 bits, without leading zeros.
pub(super) fn valid_semver(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars().all(|c| c.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
                && p.parse::<u64>().is_ok()
        })
}

/// An SPDX licence expression: identifiers (letters, digits, `-`, `.`, `+`,
/// `LicenseRef-…`) joined by AND / OR / WITH, with parentheses; or `other`.
pub(super) fn valid_license(l: &str) -> bool {
    let spaced = l.replace('(', " ( ").replace(')', " ) ");
    let tokens: Vec<&str> = spaced.split(' ').filter(|t| !t.is_empty()).collect();
    !tokens.is_empty()
        && l.chars().all(|c| c == ' ' || c == '(' || c == ')' || c.is_ascii_alphanumeric() || "-.+:".contains(c))
        && tokens.iter().all(|t| {
            matches!(*t, "AND" | "OR" | "WITH" | "(" | ")")
                || (t.chars().next().is_some_and(|c| c.is_ascii_alphanumeric()) && t.len() <= 64)
        })
}

/// An absolute `http` or `https` URL without spaces or control characters.
pub(super) fn valid_url(u: &str) -> bool {
    let rest = u.strip_prefix("https://").or_else(|| u.strip_prefix("http://"));
    rest.is_some_and(|r| {
        !r.is_empty()
            && !r.starts_with('/')
            && !u.chars().any(|c| c.is_whitespace() || c.is_control() || "<>\"`".contains(c))
    })
}

/// The first character of `u` that RFC 3986 does not allow in a URL as it is
/// (outside the unreserved, reserved and percent-encoded characters), or a
/// `%` that does not start a `%XX` escape.
pub(super) fn outside_rfc_3986(u: &str) -> Option<char> {
    let b = u.as_bytes();
    for (i, c) in u.char_indices() {
        let ok = c.is_ascii_alphanumeric()
            || "-._~:/?#[]@!$&'()*+,;=".contains(c)
            || (c == '%' && b.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)));
        if !ok {
            return Some(c);
        }
    }
    None
}

/// A calendar date `YYYY-MM-DD`.
pub(super) fn valid_date(d: &str) -> bool {
    let b = d.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num =
        |r: std::ops::Range<usize>| d.get(r).filter(|s| s.chars().all(|c| c.is_ascii_digit()))?.parse::<u32>().ok();
    let (Some(y), Some(m), Some(day)) = (num(0..4), num(5..7), num(8..10)) else { return false };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

#[cfg(test)]
mod field_tests {
    use super::super::*;
    use super::*;

    #[test]
    fn every_problem_of_a_file_is_reported_at_once_in_line_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("q.jsonl"), "{\"id\": \"1\", \"question\": \"q\", \"answer\": \"yes\"}\n")
            .unwrap();
        let file = dir.path().join("p.toml");
        // Line 4: an unknown key (structural); line 8: a bad budget (semantic);
        // line 9: a wrong type (structural); line 3: a bad version (semantic).
        let text = "[dataset]\nname = \"x\"\nversion = \"1.0\"\nlicence = \"MIT\"\nlicense = \"MIT\"\n\
                    [ingest]\npath = \"q.jsonl\"\n[prune]\nbudget = \"lots\"\nbatch = true\n";
        std::fs::write(&file, text).unwrap();
        let Err(Error::Invalid(problems)) = Pipeline::load(&file) else { panic!("the file has four problems") };
        let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        let line_of = |p: &Problem| match p.loc.pos {
            Pos::LineCol(l, _) => l,
            _ => 0,
        };
        assert_eq!(problems.iter().map(line_of).collect::<Vec<_>>(), vec![3, 4, 9, 10], "{lines:#?}");
        assert!(lines[0].contains("dataset.version"), "{lines:#?}");
        assert!(lines[1].contains("unknown key \"licence\""), "{lines:#?}");
        assert!(lines[2].contains("prune.budget"), "{lines:#?}");
        assert!(lines[3].contains("prune.batch"), "{lines:#?}");
    }

    #[test]
    fn dataset_fields_are_validated() {
        for ok in ["vqa-rad", "v1.2", "A_b"] {
            assert!(valid_release_name(ok), "{ok}");
        }
        for bad in ["..", ".", ".hidden", "a/b", ""] {
            assert!(!valid_release_name(bad), "{bad}");
        }
        // A name is a folder name: 100 characters at most.
        assert!(valid_release_name(&"a".repeat(100)));
        assert!(!valid_release_name(&"a".repeat(101)));
        assert!(valid_semver("1.0.0") && valid_semver("10.20.0"));
        for bad in ["01.0.0", "99999999999999999999.0.0", "1.0", "1.0.0-rc1"] {
            assert!(!valid_semver(bad), "{bad}");
        }
        for ok in ["CC0-1.0", "MIT OR Apache-2.0", "(MIT AND CC-BY-4.0)", "LicenseRef-my-terms", "other", "GPL-2.0+"] {
            assert!(valid_license(ok), "{ok}");
        }
        for bad in ["MIT\n---\n<script>alert(1)</script>", "MIT <b>", "a\"b"] {
            assert!(!valid_license(bad), "{bad}");
        }
        assert!(valid_url("https://osf.io/89kps/") && valid_url("http://example.org"));
        assert_eq!(outside_rfc_3986("https://github.com/org/repo.git"), None);
        assert_eq!(outside_rfc_3986("https://x.org/a%20b?q=1&r=(2)#frag"), None);
        assert_eq!(outside_rfc_3986("https://x/r;touch${IFS}PWNED;#"), Some('{'));
        assert_eq!(outside_rfc_3986("https://x/a%2"), Some('%'));
        assert_eq!(outside_rfc_3986("https://x/é"), Some('é'));
        assert_eq!(outside_rfc_3986("https://x/a|b"), Some('|'));
        for bad in ["javascript:alert(1)", "https://", "ftp://x", "https://a b", "https:///x"] {
            assert!(!valid_url(bad), "{bad}");
        }
        assert!(valid_date("2026-11-21") && valid_date("2024-02-29"));
        for bad in ["2026-13-45", "2025-02-29", "2026-1-01", "2026-00-10"] {
            assert!(!valid_date(bad), "{bad}");
        }
    }
}
