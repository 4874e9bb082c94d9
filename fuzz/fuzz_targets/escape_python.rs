//! The Python-literal writer: a list of any strings, read back by a Python
//! literal reader (`tests/common/syntax.rs`), gives the strings back, and the
//! literal is printable ASCII (no quote or line break of the value survives).
#![no_main]
#[path = "../../tests/common/syntax.rs"]
mod syntax;
use libfuzzer_sys::fuzz_target;

use blindspot::io::escape::python;

fuzz_target!(|items: Vec<String>| {
    let literal = python::list_literal(items.iter().map(String::as_str));
    assert!(literal.bytes().all(|b| (b' '..=b'~').contains(&b)), "{literal}");
    assert!(python::evaluated_as_list(&literal));
    assert_eq!(syntax::python_list(&literal).unwrap_or_else(|e| panic!("{e}: {literal}")), items);
});
