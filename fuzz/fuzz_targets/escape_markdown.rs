//! The Markdown writers: a data string shown as text or as code, in a
//! sentence or a table cell, adds no cell, leaves no code span open, opens no
//! HTML tag or link, stays on its line, and shows no invisible format
//! character (each is written as its code point).
#![no_main]
#[path = "../../tests/common/syntax.rs"]
mod syntax;
use libfuzzer_sys::fuzz_target;

use blindspot::io::escape::markdown;

fuzz_target!(|s: String| {
    let lit = markdown::literal(&s);
    let row = format!("| {lit} | {} |", markdown::code_cell(&s));
    assert!(!row.contains(['\n', '\r']), "{row}");
    assert_eq!(syntax::table_cells(&row), 2, "{row}");
    assert_eq!(syntax::unclosed_code_span(&row), None, "{row}");
    assert!(!lit.contains(['<', '>']), "{lit}");
    assert_eq!(syntax::unclosed_code_span(&lit), None, "{lit}");
    let invisible = |t: &str| t.chars().any(blindspot::io::escape::is_invisible_format);
    assert!(!invisible(&row) && !invisible(&markdown::text(&s)), "{row}");
    let code = markdown::code(&s);
    assert_eq!(syntax::unclosed_code_span(&code), None, "{code}");
    // The span is the whole of `code`: its opening run closes only at the end.
    let run = code.bytes().take_while(|&b| b == b'`').count();
    let inner = &code[run..code.len() - run];
    assert!(!inner.split(|c| c != '`').any(|r| r.len() == run), "{code}");
    assert!(code.ends_with(&"`".repeat(run)) && !inner.starts_with('`') && !inner.ends_with('`'), "{code}");
});
