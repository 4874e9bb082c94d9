//! Structural check of a pipeline file against the JSON Schema generated from
//! its wire types, so that *every* unknown key, wrong type and bad enum value
//! is reported at once with file:line:col and a "did you mean" — serde alone
//! stops at the first.

use std::ops::Range;
use std::path::Path;

use serde_json::Value as J;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::error::{Location, Pos, Problem, did_you_mean, display_path, line_col};

/// Source text plus file name, to turn byte spans into locations.
pub struct SourceFile<'a> {
    pub path: &'a Path,
    pub text: &'a str,
}

impl SourceFile<'_> {
    pub fn loc(&self, span: Range<usize>) -> Location {
        let (line, col) = line_col(self.text, span.start);
        Location { file: display_path(self.path).into(), pos: Pos::LineCol(line, col) }
    }
}

/// What [`check`] found: the problems, in file order, and the key paths of the
/// values they are about (unknown keys, wrong types, bad values), which the
/// rest of the file can be checked without.
pub struct Checked {
    pub problems: Vec<Problem>,
    pub bad_paths: Vec<String>,
}

/// Checks a parsed document against `schema` (a schemars root schema).
/// Keys that moved or were replaced: the schema leaves them out (no editor
/// offers them), the wire format still reads them, and the settings refuse
/// each with where it went (`plan::stages`), which "unknown key" would hide.
const MOVED_KEYS: [&str; 5] =
    ["diagnose.numeric", "diagnose.mra", "metrics.numeric", "metrics.mra", "prune.stop-at-chance"];

pub fn check(src: &SourceFile<'_>, doc: &Spanned<DeTable<'_>>, schema: &J) -> Checked {
    let mut out = Vec::new();
    let walker = Walker { src, root: schema, unknown: Default::default() };
    walker.table(doc.get_ref(), doc.span(), schema, "", &mut out);
    let mut bad_paths: Vec<String> = out.iter().filter_map(|p| p.field.clone()).collect();
    bad_paths.extend(walker.unknown.into_inner());
    out.sort_by(|a, b| a.loc.cmp(&b.loc));
    Checked { problems: out, bad_paths }
}

struct Walker<'a, 'b> {
    src: &'a SourceFile<'b>,
    root: &'a J,
    /// Key paths of unknown keys (their problems name no field).
    unknown: std::cell::RefCell<Vec<String>>,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

fn type_name(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

fn matches_type(v: &DeValue<'_>, ty: &str) -> bool {
    matches!(
        (v, ty),
        (DeValue::String(_), "string")
            | (DeValue::Integer(_), "integer" | "number")
            | (DeValue::Float(_), "number")
            | (DeValue::Boolean(_), "boolean")
            | (DeValue::Array(_), "array")
            | (DeValue::Table(_), "object")
    )
}

fn article(ty: &str) -> &'static str {
    match ty {
        "string" => "a string",
        "integer" => "an integer",
        "number" => "a number",
        "boolean" => "a boolean (true or false)",
        "array" => "an array",
        "object" => "a table",
        _ => "a value",
    }
}

impl Walker<'_, '_> {
    fn resolve<'s>(&'s self, mut schema: &'s J) -> &'s J {
        while let Some(r) = schema.get("$ref").and_then(J::as_str) {
            let name = r.rsplit('/').next().unwrap_or(r);
            match self.root.get("$defs").and_then(|d| d.get(name)) {
                Some(s) => schema = s,
                None => break,
            }
        }
        schema
    }

    /// The string values a schema allows, when it is an enum of strings.
    fn enum_values(&self, schema: &J) -> Option<Vec<String>> {
        let schema = self.resolve(schema);
        if let Some(vals) = schema.get("enum").and_then(J::as_array) {
            return Some(vals.iter().filter_map(|v| v.as_str().map(String::from)).collect());
        }
        if let Some(c) = schema.get("const").and_then(J::as_str) {
            return Some(vec![c.to_string()]);
        }
        let branches = schema.get("oneOf").or_else(|| schema.get("anyOf"))?.as_array()?;
        let mut all = Vec::new();
        for b in branches {
            all.extend(self.enum_values(b)?);
        }
        Some(all)
    }

    fn value(&self, v: &Spanned<DeValue<'_>>, schema: &J, path: &str, out: &mut Vec<Problem>) {
        let schema = self.resolve(schema);
        let here = || self.src.loc(v.span()).clone();

        if let Some(allowed) = self.enum_values(schema) {
            let allowed: Vec<String> = allowed;
            match v.get_ref() {
                DeValue::String(s) if allowed.iter().any(|a| a == s.as_ref()) => {}
                DeValue::String(s) => {
                    let mut p =
                        Problem::new(here(), format!("unknown value \"{s}\"; expected one of: {}", allowed.join(", ")))
                            .field(path);
                    if let Some(m) = did_you_mean(s, allowed.iter().map(String::as_str)) {
                        p = p.help(format!("did you mean \"{m}\"?"));
                    }
                    out.push(p);
                }
                other => out.push(
                    Problem::new(
                        here(),
                        format!("expected one of: {}; found {}", allowed.join(", "), type_name(other)),
                    )
                    .field(path),
                ),
            }
            return;
        }

        if let Some(branches) = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(J::as_array) {
            let branches: Vec<&J> =
                branches.iter().filter(|b| self.resolve(b).get("type") != Some(&J::from("null"))).collect();
            let mut best: Option<Vec<Problem>> = None;
            for b in &branches {
                let mut trial = Vec::new();
                self.value(v, b, path, &mut trial);
                if trial.is_empty() {
                    return;
                }
                if best.as_ref().is_none_or(|bp| trial.len() < bp.len()) {
                    best = Some(trial);
                }
            }
            if branches.len() > 1 {
                let kinds: Vec<&str> = branches
                    .iter()
                    .filter_map(|b| self.resolve(b).get("type").and_then(J::as_str))
                    .map(article)
                    .collect();
                if !kinds.is_empty()
                    && best.as_ref().is_some_and(|b| b.iter().any(|p| p.message.starts_with("expected")))
                {
                    out.push(
                        Problem::new(
                            here(),
                            format!("expected {}; found {}", kinds.join(" or "), type_name(v.get_ref())),
                        )
                        .field(path),
                    );
                    return;
                }
            }
            out.extend(best.unwrap_or_default());
            return;
        }

        let types: Vec<&str> = match schema.get("type") {
            Some(J::String(t)) => vec![t.as_str()],
            Some(J::Array(ts)) => ts.iter().filter_map(J::as_str).filter(|t| *t != "null").collect(),
            _ => Vec::new(),
        };
        if !types.is_empty() && !types.iter().any(|t| matches_type(v.get_ref(), t)) {
            let expected: Vec<&str> = types.iter().map(|t| article(t)).collect();
            out.push(
                Problem::new(here(), format!("expected {}; found {}", expected.join(" or "), type_name(v.get_ref())))
                    .field(path),
            );
            return;
        }
        match v.get_ref() {
            DeValue::Table(t) => self.table(t, v.span(), schema, path, out),
            DeValue::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        self.value(item, item_schema, &format!("{path}[{i}]"), out);
                    }
                }
            }
            DeValue::Integer(i) => {
                if let Some(min) = schema.get("minimum").and_then(J::as_f64)
                    && let Ok(n) = i.as_str().replace('_', "").parse::<f64>()
                    && n < min
                {
                    out.push(Problem::new(here(), format!("must be at least {min}; found {n}")).field(path));
                }
                if let Some(max) = schema.get("maximum").and_then(J::as_f64)
                    && let Ok(n) = i.as_str().replace('_', "").parse::<f64>()
                    && n > max
                {
                    out.push(Problem::new(here(), format!("must be at most {max}; found {n}")).field(path));
                }
            }
            _ => {}
        }
    }

    fn table(&self, t: &DeTable<'_>, span: Range<usize>, schema: &J, path: &str, out: &mut Vec<Problem>) {
        let schema = self.resolve(schema);
        let props = schema.get("properties").and_then(J::as_object);
        let additional = schema.get("additionalProperties");
        for (k, v) in t.iter() {
            let key = k.get_ref().as_ref();
            let key_path = join(path, key);
            if let Some(prop) = props.and_then(|p| p.get(key)) {
                self.value(v, prop, &key_path, out);
            } else if let Some(extra) = additional.filter(|a| a.is_object()) {
                self.value(v, extra, &key_path, out);
            } else if MOVED_KEYS.contains(&key_path.as_str()) {
                // Read, then refused where the settings resolve, with where the
                // key went and the value that keeps its old behaviour.
            } else {
                self.unknown.borrow_mut().push(key_path.clone());
                let section = if path.is_empty() { "the top level".to_string() } else { format!("[{path}]") };
                let known: Vec<&str> = props.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                let mut p = Problem::new(self.src.loc(k.span()), format!("unknown key \"{key}\" in {section}"));
                p = match did_you_mean(key, known.iter().copied()) {
                    Some(m) => p.help(format!("did you mean \"{m}\"?")),
                    None => p.help(format!("known keys: {}", known.join(", "))),
                };
                out.push(p);
            }
        }
        if let Some(required) = schema.get("required").and_then(J::as_array) {
            for r in required.iter().filter_map(J::as_str) {
                if !t.keys().any(|k| k.get_ref().as_ref() == r) {
                    let what = if path.is_empty() { format!("[{r}]") } else { format!("\"{r}\" in [{path}]") };
                    out.push(
                        Problem::new(self.src.loc(span.start..span.start), format!("missing {what}"))
                            .field(join(path, r)),
                    );
                }
            }
        }
    }
}

/// The span of a key path (`diagnose.recipes[0].extract[1].regex`), or of its longest
/// existing prefix.
pub fn span_of(doc: &Spanned<DeTable<'_>>, path: &str) -> Range<usize> {
    let path = path.replace('[', ".").replace(']', "");
    let mut span = doc.span();
    let mut value: Option<&DeValue<'_>> = None;
    for (i, part) in path.split('.').enumerate() {
        let next = match (i, value) {
            (0, _) => doc.get_ref().iter().find(|(k, _)| k.get_ref().as_ref() == part).map(|(_, v)| v),
            (_, Some(DeValue::Table(t))) => t.iter().find(|(k, _)| k.get_ref().as_ref() == part).map(|(_, v)| v),
            (_, Some(DeValue::Array(items))) => part.parse::<usize>().ok().and_then(|n| items.get(n)),
            _ => None,
        };
        let Some(v) = next else { break };
        span = v.span();
        value = Some(v.get_ref());
    }
    span
}

/// `table` without the values at `paths` (`a.b`, `a.list[2].c`); a path through
/// an array drops the whole array, so the other items keep their indices' meaning.
pub fn without(mut table: toml::Table, paths: &[String]) -> toml::Table {
    for path in paths {
        let parts: Vec<&str> = path.split('.').collect();
        let mut here = &mut table;
        for (i, part) in parts.iter().enumerate() {
            let (key, indexed) = match part.split_once('[') {
                Some((k, _)) => (k, true),
                None => (*part, false),
            };
            if indexed || i + 1 == parts.len() {
                here.remove(key);
                break;
            }
            match here.get_mut(key) {
                Some(toml::Value::Table(t)) => here = t,
                _ => break,
            }
        }
    }
    table
}
