//! Small readers of the syntaxes blindspot generates, written from each
//! syntax's rules (not from blindspot's writers), to read generated files
//! back: a Python literal reader, a POSIX shell word splitter and Markdown
//! checks. The security tests and the escaping fuzz targets share them.
#![allow(dead_code)]

/// Reads a Python list literal of string literals (`['a', "b"]`, as `eval`
/// would, but accepting nothing else): the strings, or why it is not one.
pub fn python_list(s: &str) -> Result<Vec<String>, String> {
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    let ws = |i: &mut usize| {
        while *i < b.len() && b[*i] == ' ' {
            *i += 1;
        }
    };
    if b.first() != Some(&'[') {
        return Err("does not start with [".into());
    }
    i += 1;
    let mut out = Vec::new();
    ws(&mut i);
    if b.get(i) == Some(&']') {
        i += 1;
    } else {
        loop {
            ws(&mut i);
            let (v, next) = python_str(&b, i)?;
            out.push(v);
            i = next;
            ws(&mut i);
            match b.get(i) {
                Some(',') => i += 1,
                Some(']') => {
                    i += 1;
                    break;
                }
                other => return Err(format!("expected , or ] at {i}, found {other:?}")),
            }
        }
    }
    if i != b.len() { Err(format!("content after the list at {i}")) } else { Ok(out) }
}

/// Reads one Python string literal (single or double quotes, no prefix) at
/// `i`: its value and the index after it.
pub fn python_str(b: &[char], mut i: usize) -> Result<(String, usize), String> {
    let q = *b.get(i).ok_or("expected a string, found the end")?;
    if q != '\'' && q != '"' {
        return Err(format!("expected a string literal at {i}, found {q:?}"));
    }
    i += 1;
    let mut out = String::new();
    loop {
        let c = *b.get(i).ok_or("unterminated string")?;
        i += 1;
        match c {
            c if c == q => return Ok((out, i)),
            '\n' | '\r' => return Err("a line break inside a string literal".into()),
            '\\' => {
                let e = *b.get(i).ok_or("unterminated escape")?;
                i += 1;
                let hex = |i: &mut usize, n: usize| -> Result<char, String> {
                    let h: String = b.get(*i..*i + n).ok_or("short escape")?.iter().collect();
                    *i += n;
                    let v = u32::from_str_radix(&h, 16).map_err(|e| e.to_string())?;
                    char::from_u32(v).ok_or_else(|| format!("not a character: {v:x}"))
                };
                match e {
                    '\\' | '\'' | '"' => out.push(e),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'a' => out.push('\u{7}'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'v' => out.push('\u{b}'),
                    '\n' => {}
                    'x' => out.push(hex(&mut i, 2)?),
                    'u' => out.push(hex(&mut i, 4)?),
                    'U' => out.push(hex(&mut i, 8)?),
                    '0'..='7' => {
                        let mut v = e.to_digit(8).unwrap_or(0);
                        for _ in 0..2 {
                            match b.get(i).and_then(|c| c.to_digit(8)) {
                                Some(d) => {
                                    v = v * 8 + d;
                                    i += 1;
                                }
                                None => break,
                            }
                        }
                        out.push(char::from_u32(v).ok_or("bad octal")?);
                    }
                    other => {
                        // Python keeps an unknown escape as written.
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
            c => out.push(c),
        }
    }
}

/// A token of a POSIX shell command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// A word, quotes removed; a command substitution inside it is `$(` the
    /// inner tokens `)` (shown with `{:?}`).
    Word(String),
    /// An unquoted control operator or redirection: `&&`, `||`, `;`, `|`, `&`, `<`, `>`, `(`, `)`.
    Op(String),
}

/// Splits `line` as a POSIX shell does (no expansion): quotes removed,
/// backslash escapes applied, `#` comments dropped, operators apart. An
/// unquoted `$` other than `$(`, an unquoted backtick or glob character is
/// an error: such a character would be expanded.
pub fn shell_split(line: &str) -> Result<Vec<Tok>, String> {
    let b: Vec<char> = line.chars().collect();
    let (toks, i) = split_from(&b, 0, false)?;
    if i != b.len() { Err(format!("unbalanced ) at {i}")) } else { Ok(toks) }
}

/// Tokens from `i` to the end, or to the `)` closing a command substitution
/// (`nested`); returns them and the index after the `)`.
fn split_from(b: &[char], mut i: usize, nested: bool) -> Result<(Vec<Tok>, usize), String> {
    let mut toks = Vec::new();
    let mut word: Option<String> = None;
    let push = |toks: &mut Vec<Tok>, word: &mut Option<String>| {
        if let Some(w) = word.take() {
            toks.push(Tok::Word(w));
        }
    };
    while i < b.len() {
        let c = b[i];
        match c {
            ' ' | '\t' | '\n' => {
                push(&mut toks, &mut word);
                i += 1;
            }
            '#' if word.is_none() => {
                // A comment runs to the end of the line.
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
            }
            ')' if nested => {
                push(&mut toks, &mut word);
                return Ok((toks, i + 1));
            }
            '&' | '|' | ';' | '<' | '>' | '(' | ')' => {
                push(&mut toks, &mut word);
                let two: String = b[i..(i + 2).min(b.len())].iter().collect();
                let op = if matches!(two.as_str(), "&&" | "||" | ";;" | ">>" | "<<") { two } else { c.to_string() };
                i += op.chars().count();
                toks.push(Tok::Op(op));
            }
            '\\' => {
                let e = *b.get(i + 1).ok_or("a backslash at the end")?;
                if e != '\n' {
                    word.get_or_insert_default().push(e);
                }
                i += 2;
            }
            '\'' => {
                let end = b[i + 1..].iter().position(|&c| c == '\'').ok_or("unterminated single quote")?;
                word.get_or_insert_default().extend(&b[i + 1..i + 1 + end]);
                i += end + 2;
            }
            '"' => {
                let w = word.get_or_insert_default();
                i += 1;
                loop {
                    let c = *b.get(i).ok_or("unterminated double quote")?;
                    match c {
                        '"' => {
                            i += 1;
                            break;
                        }
                        '\\' if matches!(b.get(i + 1), Some('$' | '`' | '"' | '\\' | '\n')) => {
                            if b[i + 1] != '\n' {
                                w.push(b[i + 1]);
                            }
                            i += 2;
                        }
                        '$' if b.get(i + 1) == Some(&'(') => {
                            let (inner, next) = split_from(b, i + 2, true)?;
                            w.push_str(&format!("$({inner:?})"));
                            i = next;
                        }
                        '$' | '`' => return Err(format!("an expansion ({c}) inside double quotes at {i}")),
                        c => {
                            w.push(c);
                            i += 1;
                        }
                    }
                }
            }
            '$' if b.get(i + 1) == Some(&'(') => {
                let (inner, next) = split_from(b, i + 2, true)?;
                word.get_or_insert_default().push_str(&format!("$({inner:?})"));
                i = next;
            }
            '$' | '`' | '*' | '?' | '[' => return Err(format!("an unquoted {c} at {i} would be expanded")),
            '~' if word.is_none() => return Err(format!("an unquoted ~ at {i} would be expanded")),
            c => {
                word.get_or_insert_default().push(c);
                i += 1;
            }
        }
    }
    if nested {
        return Err("a command substitution is never closed".into());
    }
    push(&mut toks, &mut word);
    Ok((toks, i))
}

/// The number of cells of a Markdown table row, as GitHub's table extension
/// splits it (cmark-gfm's `escaped_char = [\\][|]`): a `|` right after a
/// `\` is escaped whatever comes before that backslash (so `\\|` is a `\`
/// and an escaped pipe), every other `|` separates cells; less the leading
/// and trailing one.
pub fn table_cells(row: &str) -> usize {
    let mut n = 0usize;
    let mut prev = None;
    for c in row.chars() {
        if c == '|' && prev != Some('\\') {
            n += 1;
        }
        prev = Some(c);
    }
    n.saturating_sub(1)
}

/// The first backtick run of `line` that opens a code span no run of the same
/// length closes (escaped backticks are text), as its byte offset.
pub fn unclosed_code_span(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => {
                let run = b[i..].iter().take_while(|&&c| c == b'`').count();
                let mut j = i + run;
                let mut closed = None;
                while j < b.len() {
                    if b[j] == b'`' {
                        let r = b[j..].iter().take_while(|&&c| c == b'`').count();
                        if r == run {
                            closed = Some(j + r);
                            break;
                        }
                        j += r;
                    } else {
                        j += 1;
                    }
                }
                match closed {
                    Some(end) => i = end,
                    None => return Some(i),
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The HTML tags opened in `html`: each `<name` with a letter first and a
/// space, `/`, `>` or the end after the name (`<https://…>` is an autolink).
pub fn html_tags(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        let after = rest[name.len()..].chars().next();
        if name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && after.is_none_or(|c| c.is_ascii_whitespace() || c == '/' || c == '>')
        {
            out.push(name.to_ascii_lowercase());
        }
    }
    out
}
