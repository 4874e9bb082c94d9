//! One writer per target syntax of the files blindspot generates, so that a
//! data string (a question type, an id, a model name, an image path, a
//! pipeline value) can never leave the place it is written into: a Python
//! literal cannot be closed early, a YAML scalar cannot start a new key, a
//! Markdown table row cannot gain a column, an HTML page cannot gain a tag, a
//! spreadsheet cannot read a cell as a formula, and a shell cannot split a
//! word. Every generated file writes data text through these functions; none
//! concatenates data text into code. Each writer has a fuzz target
//! (`fuzz/fuzz_targets/escape_*.rs`) checking that reading its output back
//! gives the input.
//!
//! Plain ASCII words (letters, digits and the usual punctuation of names and
//! paths) come out unchanged, so escaping keeps the bytes of files whose data
//! is ordinary.

pub mod csv;
pub mod html;
pub mod markdown;
pub mod python;
pub mod shell;
pub mod yaml;
