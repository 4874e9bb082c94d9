//! Unit tests of the field mapping: option lists and labels, options written
//! in the question, gold answers read every way, inferred formats.

use super::gold::{infer_format, resolve_choice};
use crate::options::{parse_list_literal, split_options_from_question, strip_option_labels};
use crate::plan::AnswerKind;
use crate::raw::Raw;
use crate::sample::AnswerFormat;

#[test]
fn list_literals() {
    assert_eq!(parse_list_literal("['a', \"b's\"]").unwrap(), vec!["a", "b's"]);
    assert_eq!(parse_list_literal("[\"x\", 2]").unwrap(), vec!["x", "2"]);
    assert_eq!(parse_list_literal("[]").unwrap(), Vec::<String>::new());
    // NumPy's repr of an array (as pandas writes one into a CSV), not Python's
    // concatenation of two literals into one text.
    assert_eq!(parse_list_literal("['a' 'b']").unwrap(), vec!["a", "b"]);
    assert!(parse_list_literal("not a list").is_none());
}

#[test]
fn option_labels() {
    let mut o: Vec<String> = ["A. chair", "B) tv stand", "(C) 2.5 m"].map(String::from).to_vec();
    assert!(strip_option_labels(&mut o));
    assert_eq!(o, ["chair", "tv stand", "2.5 m"]);
    // Out of order, unlabelled, or a letter that is the text: left alone.
    for options in [&["B. x", "A. y"][..], &["A. x", "y"], &["A.", "B."], &["A.x", "B.y"], &["I", "II"]] {
        let mut o: Vec<String> = options.iter().map(|s| s.to_string()).collect();
        assert!(!strip_option_labels(&mut o), "{options:?}");
        assert_eq!(o, options);
    }
}

#[test]
fn options_in_question() {
    let (q, o) = split_options_from_question("<image>\nContext: x\nWhich?\nA. red\nB. blue");
    assert_eq!(q, "Context: x\nWhich?");
    assert_eq!(o, vec!["red", "blue"]);
    let (_, o) = split_options_from_question("Which closing?\nA. See you,\nJanet\nB. See You,\nJanet");
    assert_eq!(o, vec!["See you,\nJanet", "See You,\nJanet"]);
    for (text, stem) in [
        ("Question: Which is red? Options: A: apple, B: sky, C: grass, D: snow", "Which is red?"),
        ("Which is red? (A) apple (B) sky (C) grass (D) snow", "Which is red?"),
        ("Which is red? A. apple B. sky C. grass D. snow", "Which is red?"),
        ("Which is red?\nChoices: A) apple; B) sky; C) grass; D) snow", "Which is red?"),
    ] {
        let (q, o) = split_options_from_question(text);
        assert_eq!(
            (q.as_str(), o),
            (stem, vec!["apple".to_string(), "sky".into(), "grass".into(), "snow".into()]),
            "{text}"
        );
    }
    // A lone label is not an option list.
    assert!(split_options_from_question("Is vitamin A. good?").1.is_empty());
    let (q, o) = split_options_from_question("What is 2+2?");
    assert_eq!((q.as_str(), o.len()), ("What is 2+2?", 0));
}

#[test]
fn choices_resolve_every_way() {
    let opts: Vec<String> = ["cat", "dog", "cow", "hen"].iter().map(|s| s.to_string()).collect();
    let r = |v: Raw, k| resolve_choice(&v, &opts, k).map(|(i, _)| i).map_err(|e| e.0);
    assert_eq!(r(Raw::Str("dog".into()), AnswerKind::Auto), Ok(1));
    assert_eq!(r(Raw::Str("C".into()), AnswerKind::Auto), Ok(2));
    assert_eq!(r(Raw::Str("(D)".into()), AnswerKind::Letter), Ok(3));
    assert_eq!(r(Raw::Int(0), AnswerKind::Auto), Ok(0));
    assert_eq!(r(Raw::Str("2".into()), AnswerKind::Index1), Ok(1));
    let e = r(Raw::Str("E".into()), AnswerKind::Letter).unwrap_err();
    assert_eq!(e, "the answer is \"E\" but the question has 4 options (A-D)");
    assert!(r(Raw::Str("horse".into()), AnswerKind::Text).unwrap_err().contains("not among the options"));
}

#[test]
fn formats_are_inferred() {
    assert_eq!(infer_format(&[], "Yes"), AnswerFormat::YesNo);
    assert_eq!(infer_format(&[], "3"), AnswerFormat::Numeric);
    assert_eq!(infer_format(&[], "left lung"), AnswerFormat::Open);
    assert_eq!(infer_format(&["a".into()], "a"), AnswerFormat::MultipleChoice);
}
