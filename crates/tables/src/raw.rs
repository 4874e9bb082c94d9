//! The value every reader produces: one source record, before field mapping.
//!
//! Readers differ (JSON, CSV, Parquet, TSV); the mapping stage does not. A
//! [`Raw`] keeps the source's own types (an id may be an int in one row and a
//! string in the next) so that mapping can report what it found.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::error::Location;

/// A field name. Shared: a file's records repeat the same few names, so each
/// distinct name is allocated once per thread, not once per record.
pub type Key = Arc<str>;

thread_local! {
    static KEYS: std::cell::RefCell<Vec<Key>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The shared [`Key`] for a field name (a small per-thread cache; names
/// beyond its size are simply allocated).
pub fn intern(name: &str) -> Key {
    KEYS.with_borrow_mut(|keys| {
        if let Some(k) = keys.iter().find(|k| ***k == *name) {
            return k.clone();
        }
        let k: Key = Arc::from(name);
        if keys.len() < 256 {
            keys.push(k.clone());
        }
        k
    })
}

/// A source value with its own type.
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<Raw>),
    /// Fields in source order.
    Map(Vec<(Key, Raw)>),
}

impl Raw {
    /// A field of a map, by exact name.
    pub fn get(&self, key: &str) -> Option<&Raw> {
        match self {
            Raw::Map(fields) => fields.iter().find(|(k, _)| **k == *key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A nested field: `a.b.0.c` walks maps by name and lists by index. A key
    /// that itself contains dots is found first as a whole.
    pub fn get_path(&self, path: &str) -> Option<&Raw> {
        if let Some(v) = self.get(path) {
            return Some(v);
        }
        if !path.contains('.') {
            return None;
        }
        let mut cur = self;
        for part in path.split('.') {
            cur = match cur {
                Raw::Map(_) => cur.get(part)?,
                Raw::List(items) => items.get(part.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(cur)
    }

    /// The type's name, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Raw::Null => "null",
            Raw::Bool(_) => "a boolean",
            Raw::Int(_) => "an integer",
            Raw::Float(_) => "a number",
            Raw::Str(_) => "a string",
            Raw::Bytes(_) => "binary data",
            Raw::List(_) => "a list",
            Raw::Map(_) => "an object",
        }
    }

    /// Scalars as text (ints become strings, as ids must); None for null,
    /// lists, maps and bytes.
    pub fn scalar_text(&self) -> Option<String> {
        match self {
            Raw::Str(s) => Some(s.clone()),
            Raw::Int(i) => Some(i.to_string()),
            Raw::Float(f) => Some(format_float(*f)),
            Raw::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// One reference answer of a list of them: a text or number, or an annotator's
    /// object holding one in `answer` (VizWiz, VQA v2: `{"answer": "yes",
    /// "answer_confidence": "yes"}`). Ingest reads the gold from these; metrics scores
    /// answers over them.
    pub fn reference_text(&self) -> Option<String> {
        match self {
            Raw::Map(_) => self.get("answer").and_then(Raw::scalar_text),
            _ => self.scalar_text(),
        }
    }

    /// Any value as text for `meta`: scalars as themselves, the rest as JSON.
    pub fn to_text(&self) -> String {
        self.scalar_text().unwrap_or_else(|| self.to_json().to_string())
    }

    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Raw::Null => J::Null,
            Raw::Bool(b) => J::Bool(*b),
            Raw::Int(i) => J::from(*i),
            Raw::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            Raw::Str(s) => J::String(s.clone()),
            Raw::Bytes(b) => J::String(format!("<{} bytes>", b.len())),
            Raw::List(items) => J::Array(items.iter().map(Raw::to_json).collect()),
            Raw::Map(fields) => J::Object(fields.iter().map(|(k, v)| (k.to_string(), v.to_json())).collect()),
        }
    }
}

/// Integral floats print without a fraction (`3.0` → `3`), so a CSV's `3` and
/// a Parquet double `3.0` map to the same id.
pub fn format_float(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e15 { format!("{}", f as i64) } else { f.to_string() }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_none<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        Raw::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
        // Ids beyond i64 stay exact as text rather than losing digits as floats.
        Ok(i64::try_from(v).map_or_else(|_| Raw::Str(v.to_string()), Raw::Int))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
        Ok(Raw::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::Str(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Raw, E> {
        Ok(Raw::Bytes(v.to_vec()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Raw::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        while let Some(k) = map.next_key::<KeySeed>()? {
            // A repeated key would silently shadow (or be shadowed by) the first.
            if fields.iter().any(|(f, _)| *f == k.0) {
                return Err(de::Error::custom(format_args!(
                    "the field \"{}\" appears twice in one object (keep one value)",
                    &*k.0
                )));
            }
            fields.push((k.0, map.next_value::<Raw>()?));
        }
        Ok(Raw::Map(fields))
    }
}

/// A map key, interned while deserializing (borrowed from the input when it
/// has no escapes, so no temporary `String` either).
struct KeySeed(Key);

impl<'de> Deserialize<'de> for KeySeed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeySeed;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeySeed, E> {
                Ok(KeySeed(intern(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// One source record and where it came from.
#[derive(Debug, Clone)]
pub struct RawRecord {
    pub loc: Location,
    /// The record's fields (a [`Raw::Map`], or any value for odd sources).
    pub value: Raw,
    /// Synthetic fields the mapping may use: `_file` (file stem), `_key` (the
    /// key of an object-of-records), `_row` (1-based record number in its file).
    pub file_stem: std::sync::Arc<str>,
    pub key: Option<String>,
    pub row: u64,
}

impl RawRecord {
    /// A field by path, including the synthetic `_file`, `_key` and `_row`.
    pub fn field(&self, path: &str) -> Option<Cow<'_, Raw>> {
        match path {
            "_file" => Some(Cow::Owned(Raw::Str(self.file_stem.to_string()))),
            "_key" => self.key.clone().map(|k| Cow::Owned(Raw::Str(k))),
            "_row" => Some(Cow::Owned(Raw::Int(self.row as i64))),
            _ => self.value.get_path(path).map(Cow::Borrowed),
        }
    }

    /// Whether the record has a field (cheaper than [`RawRecord::field`]).
    pub fn has(&self, path: &str) -> bool {
        match path {
            "_file" | "_row" => true,
            "_key" => self.key.is_some(),
            _ => self.value.get_path(path).is_some(),
        }
    }

    /// Names of the record's top-level fields, for "did you mean".
    pub fn field_names(&self) -> Vec<&str> {
        match &self.value {
            Raw::Map(fields) => fields.iter().map(|(k, _)| &**k).collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_walk_maps_and_lists() {
        let v: Raw = serde_json::from_str(r#"{"a": {"b": [1, {"c": "x"}]}, "d.e": 2}"#).unwrap();
        assert_eq!(v.get_path("a.b.1.c"), Some(&Raw::Str("x".into())));
        assert_eq!(v.get_path("d.e"), Some(&Raw::Int(2)));
        assert_eq!(v.get_path("a.b.7"), None);
    }

    #[test]
    fn big_unsigned_ids_stay_exact() {
        let v: Raw = serde_json::from_str("18446744073709551615").unwrap();
        assert_eq!(v, Raw::Str("18446744073709551615".into()));
        assert_eq!(format_float(3.0), "3");
        assert_eq!(format_float(2.5), "2.5");
    }
}
