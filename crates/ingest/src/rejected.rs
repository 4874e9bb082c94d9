//! The rows left out under `on-invalid = "skip"`: summarized per reason for
//! the warnings, and a mapped sample written as JSON for the rejected file.

use std::collections::BTreeMap;

use super::Rejected;
use crate::sample::Sample;

/// Rows left out under `on-invalid = "skip"`, counted per reason (a reason with its
/// values blanked), each with its first three rows: a count alone says nothing of
/// what to fix.
pub fn rejected_summary(rejected: &[Rejected]) -> Vec<String> {
    let mut by_reason: BTreeMap<String, (usize, Vec<&str>)> = BTreeMap::new();
    for r in rejected {
        for reason in &r.reasons {
            let e = by_reason.entry(reason_kind(reason)).or_default();
            e.0 += 1;
            if e.1.len() < 3 {
                e.1.push(&r.location);
            }
        }
    }
    let mut lines: Vec<(usize, String)> = by_reason
        .into_iter()
        .map(|(reason, (n, first))| {
            (n, format!("{n} rejected row{}: {reason} (first: {})", if n == 1 { "" } else { "s" }, first.join(", ")))
        })
        .collect();
    // Most frequent first; ties in reason order.
    lines.sort_by_key(|l| std::cmp::Reverse(l.0));
    lines.into_iter().map(|(_, l)| l).collect()
}

/// A rejection reason with its values blanked (quoted text and numbers after the
/// field name), so that rows rejected for one cause count together.
fn reason_kind(reason: &str) -> String {
    let (field, rest) = match reason.strip_prefix("field \"").and_then(|r| r.split_once("\": ")) {
        Some((f, rest)) => (format!("field \"{f}\": "), rest),
        None => (String::new(), reason),
    };
    let mut out = field;
    let mut in_quote = false;
    let mut last_digit = false;
    for c in rest.chars() {
        match c {
            '"' => {
                if !in_quote {
                    out.push_str("\"…");
                }
                in_quote = !in_quote;
                if !in_quote {
                    out.push('"');
                }
            }
            _ if in_quote => {}
            d if d.is_ascii_digit() => {
                if !last_digit {
                    out.push('N');
                }
                last_digit = true;
                continue;
            }
            other => out.push(other),
        }
        last_digit = false;
    }
    out
}

/// A mapped sample as JSON, for the rejected file.
pub(crate) fn sample_json(s: &Sample) -> serde_json::Value {
    serde_json::to_value(s).unwrap_or(serde_json::Value::Null)
}
