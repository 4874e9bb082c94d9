//! The canonical columns a re-ingested blindspot file carries (benchmark,
//! split, a variant's columns), read only from a canonical input, and the
//! `meta` of a record: its unread fields, or the fields the plan keeps.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::mapper::Mapper;
use crate::plan::{IngestPlan, MetaKeep};
use crate::raw::Raw;

/// A canonical input (no field mapping) carries its own format, benchmark,
/// split and variant columns; other sources keep such fields in meta.
pub(super) fn is_canonical_input(plan: &IngestPlan) -> bool {
    matches!(plan.fields.meta, MetaKeep::All) && plan.fields.id.is_none()
}

/// The canonical columns of a canonical input's record (all None otherwise).
pub(super) struct CanonicalColumns {
    pub(super) benchmark: Option<String>,
    pub(super) split: Option<String>,
    /// `parent_id`, `variant`, `variant_params`, `prompt`, `expected`.
    pub(super) variant_fields: [Option<String>; 5],
}

/// The canonical columns of the record (marked read, so not kept in meta);
/// `image_facts` is marked read too.
pub(super) fn canonical_columns(m: &mut Mapper<'_>, canonical_input: bool) -> CanonicalColumns {
    // Canonical columns a re-ingested blindspot file carries.
    let mut canonical = |name: &str| if canonical_input { m.get(name).and_then(|v| v.scalar_text()) } else { None };
    let benchmark = canonical("benchmark");
    let split = canonical("split");
    let variant_fields = ["parent_id", "variant", "variant_params", "prompt", "expected"].map(&mut canonical);
    // Recomputed from the bytes or files on ingest, never kept as meta.
    if canonical_input {
        let _ = m.get("image_facts");
    }
    CanonicalColumns { benchmark, split, variant_fields }
}

/// The record's meta: every field the mapping did not read (a canonical
/// `meta` column spread out), or the fields the plan keeps.
pub(super) fn map_meta(m: &mut Mapper<'_>) -> BTreeMap<String, String> {
    let mut meta = BTreeMap::new();
    match m.plan.fields.meta.clone() {
        MetaKeep::All => {
            if let Raw::Map(fields) = &m.rec.value {
                for (i, (k, v)) in fields.iter().enumerate() {
                    if m.used.contains(&i) || m.is_missing(v) || matches!(v, Raw::Bytes(_)) {
                        continue;
                    }
                    if m.read_in_part.iter().any(|(j, _)| *j == i) {
                        note_unread_part(m, i, k, v);
                        continue;
                    }
                    if &**k == "meta"
                        && let Some(pairs) = key_value_pairs(v)
                    {
                        meta.extend(pairs);
                        continue;
                    }
                    meta.insert(k.to_string(), v.to_text().trim().to_string());
                }
            }
        }
        MetaKeep::Fields(list) => {
            for k in list {
                if let Some(v) = m.rec.field(&k).filter(|v| !m.is_missing(v)) {
                    meta.insert(k, v.to_text().trim().to_string());
                }
            }
        }
    }
    meta
}

/// A note when field `name` (at position `i`), read only through paths into it
/// (`conversations.0.value`), holds more than they reach (a later turn): that part is in
/// no canonical field and not in meta, so it is counted, never dropped unsaid.
fn note_unread_part(m: &mut Mapper<'_>, i: usize, name: &str, v: &Raw) {
    let mut read: Vec<&str> = m
        .read_in_part
        .iter()
        .filter(|(j, _)| *j == i)
        .filter_map(|(_, p)| p.strip_prefix(name)?.strip_prefix('.'))
        .collect();
    read.sort_unstable();
    read.dedup();
    if unread_part(m, v, &read, name).is_none() {
        return;
    }
    let paths: Vec<String> = read.iter().map(|p| format!("\"{name}.{p}\"")).collect();
    m.notes.push(Cow::Owned(format!(
        "field \"{name}\" is read in part ({}): what else it holds is in no canonical field and not kept in meta; \
         map it, or list \"{name}\" in [ingest.fields] meta to keep the whole field",
        paths.join(", ")
    )));
}

/// The first part of `v` (a path under `at`) that none of `read`, paths inside `v`
/// (`0.value`), reaches; None when they reach all of it.
fn unread_part(m: &Mapper<'_>, v: &Raw, read: &[&str], at: &str) -> Option<String> {
    if read.contains(&"") {
        return None;
    }
    // A conversation read turn by turn: the turns read are whole (who speaks them is the
    // field they are mapped to), so what is left is the turns not read.
    if crate::options::first_exchange(v).is_some()
        && let Raw::List(turns) = v
    {
        let turn_read = |t: &usize| read.iter().any(|p| p.split('.').next() == Some(t.to_string().as_str()));
        return (0..turns.len()).find(|t| !turn_read(t)).map(|t| format!("{at}.{t}"));
    }
    let children: Vec<(String, &Raw)> = match v {
        Raw::Map(fields) => fields.iter().map(|(k, v)| (k.to_string(), v)).collect(),
        Raw::List(items) => items.iter().enumerate().map(|(i, v)| (i.to_string(), v)).collect(),
        _ => return None,
    };
    children.into_iter().filter(|(_, child)| !m.is_missing(child)).find_map(|(key, child)| {
        let under: Vec<&str> = read
            .iter()
            .filter_map(|p| {
                let rest = p.strip_prefix(key.as_str())?;
                if rest.is_empty() { Some(rest) } else { rest.strip_prefix('.') }
            })
            .collect();
        let here = format!("{at}.{key}");
        if under.is_empty() { Some(here) } else { unread_part(m, child, &under, &here) }
    })
}

/// A canonical `meta` column: a list of `{key, value}` structs (as blindspot
/// writes it) or a map.
fn key_value_pairs(v: &Raw) -> Option<Vec<(String, String)>> {
    match v {
        Raw::List(items) => items
            .iter()
            .map(|it| {
                Some((it.get("key")?.scalar_text()?, it.get("value").and_then(Raw::scalar_text).unwrap_or_default()))
            })
            .collect(),
        Raw::Map(fields) => Some(fields.iter().map(|(k, v)| (k.to_string(), v.to_text())).collect()),
        _ => None,
    }
}
