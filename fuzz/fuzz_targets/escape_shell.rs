//! The shell-word writer: any string as a word, split by a POSIX word
//! splitter (`tests/common/syntax.rs`), is one word equal to the string, with
//! no operator and nothing expanded, also between two other words.
#![no_main]
#[path = "../../tests/common/syntax.rs"]
mod syntax;
use libfuzzer_sys::fuzz_target;

use blindspot::io::escape::shell;

fuzz_target!(|s: String| {
    if s.contains('\0') {
        // No shell word can hold a NUL (C strings end there).
        return;
    }
    let line = format!("git clone {} && cd x", shell::word(&s));
    let toks = syntax::shell_split(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let word = |w: &str| syntax::Tok::Word(w.to_string());
    assert_eq!(toks, [word("git"), word("clone"), word(&s), syntax::Tok::Op("&&".into()), word("cd"), word("x")]);
});
