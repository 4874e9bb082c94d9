//! The trap variants' invariants, checked on every row: used on the fixtures
//! and on the real-data suite alike.

use std::collections::{BTreeMap, HashMap, HashSet};

use blindspot::sample::{AnswerFormat, Sample};
use blindspot::variants::{Kind, Variants};

/// Option identity: whitespace collapsed, case kept ("Dear Pablo," vs "dear Pablo,").
pub fn key(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub fn counts(v: &Variants) -> BTreeMap<String, usize> {
    v.kinds.iter().map(|k| (k.kind.name(), k.rows.len())).collect()
}

/// Checks every trap invariant on real data; returns rows per kind.
pub fn check_traps(samples: &[Sample], v: &Variants) -> BTreeMap<String, usize> {
    let by_id: HashMap<&str, &Sample> = samples.iter().map(|s| (s.id.as_str(), s)).collect();
    for k in &v.kinds {
        assert_eq!(
            k.rows.len() + k.skipped.values().sum::<usize>(),
            if k.kind == Kind::Phantom0 { 200 } else { samples.len() },
            "{}: every sample is a row or a counted skip",
            k.kind
        );
        let mut ids = HashSet::new();
        for r in &k.rows {
            assert!(ids.insert(r.id.clone()), "duplicate id {}", r.id);
            if r.answer_format == AnswerFormat::MultipleChoice {
                let distinct: HashSet<String> = r.options.iter().map(|o| key(o)).collect();
                assert_eq!(distinct.len(), r.options.len(), "{}: an option is duplicated: {:?}", r.id, r.options);
                assert_eq!(r.options[r.answer_index.unwrap() as usize], r.answer, "{}: gold among options", r.id);
            }
            let Some(parent) = r.parent_id.as_deref().and_then(|p| by_id.get(p)) else { continue };
            match k.kind {
                Kind::OptionShuffle => {
                    let mut a = r.options.clone();
                    let mut b = parent.options.clone();
                    a.sort();
                    b.sort();
                    assert_eq!(a, b, "{}: a permutation", r.id);
                    assert_ne!(r.options, parent.options, "{}: not the identity", r.id);
                    assert_eq!(r.answer, parent.answer);
                }
                Kind::UnknownOption => {
                    assert_eq!(r.answer, parent.answer);
                    assert_eq!(r.options.iter().filter(|o| *o == "Unknown").count(), 1);
                }
                Kind::DistractorSwap(n) => {
                    assert_eq!(r.answer, parent.answer);
                    let changed = r.options.iter().zip(&parent.options).filter(|(a, b)| a != b).count();
                    assert_eq!(changed, n as usize, "{}", r.id);
                }
                Kind::GoldRemoved => {
                    assert_eq!(r.answer, "None of the other options");
                    assert!(!r.options.contains(&parent.answer));
                }
                Kind::VisualSubstitution => {
                    assert_ne!(key(&r.answer), key(&parent.answer));
                    if parent.answer_format == AnswerFormat::MultipleChoice {
                        assert!(parent.options.contains(&r.answer), "{}: the new gold is a parent distractor", r.id);
                    }
                }
                _ => {}
            }
        }
    }
    counts(v)
}
