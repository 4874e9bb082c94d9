//! Index maps: a JSON object `id → option index`, at the top level or under
//! `results` — the result files of ScienceQA's own scorer and of LLaVA's
//! (`{"acc": .., "results": {"4": 1, ...}, "outputs": {"4": "The answer is B. ..."}}`).
//! The index is 0-based; −1 (or any index outside the options) means the
//! source could not parse the response: scored wrong, counted as unparsed.
//! `outputs`, when present, is the free text the index was parsed from; it
//! is not re-parsed (the index is what the leaderboard scored).
//!
//! Each entry keeps the line of its key, found by a small scan of the file's
//! bytes, so an unknown id is reported where it is; an id given twice is an
//! error (a JSON parser would keep the last and drop the other silently).

use std::path::Path;

use super::{Prediction, Response};
use crate::error::{Error, Location, Problem, Result, display_path};

/// The `id → index` object of a parsed file, if it is one.
pub fn index_object(v: &serde_json::Value) -> Option<&serde_json::Map<String, serde_json::Value>> {
    let is_map = |m: &serde_json::Map<String, serde_json::Value>| !m.is_empty() && m.values().all(|x| x.is_i64());
    if let Some(r) = v.get("results").and_then(serde_json::Value::as_object)
        && is_map(r)
    {
        return Some(r);
    }
    v.as_object().filter(|m| is_map(m))
}

/// End (exclusive) of the string starting at `i` (a `"`).
fn string_end(bytes: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Keys of the object whose `{` is at `open`, each with its 1-based line and
/// the byte offset of its value.
fn keys(bytes: &[u8], open: usize, mut line: u64) -> Vec<(String, u64, usize)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            b'"' => {
                let end = string_end(bytes, i);
                let mut j = end;
                while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                    j += 1;
                }
                if depth == 1 && bytes.get(j) == Some(&b':') {
                    let key = serde_json::from_slice::<String>(&bytes[i..end]).unwrap_or_default();
                    let mut v = j + 1;
                    while v < bytes.len() && bytes[v].is_ascii_whitespace() {
                        v += 1;
                    }
                    out.push((key, line, v));
                }
                line += bytes[i..end].iter().filter(|&&b| b == b'\n').count() as u64;
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

pub fn read(path: &Path, model: Option<&str>) -> Result<Vec<Prediction>> {
    let bytes = super::read_bytes(path, crate::tables::bounded::Shape::Json)?;
    let v: serde_json::Value = serde_json::from_slice(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes))
        .map_err(|e| Error::one(Problem::new(Location::line(path, e.line() as u64), format!("invalid JSON: {e}"))))?;
    let Some(map) = index_object(&v) else {
        return Err(Error::one(
            Problem::new(
                Location::file(path),
                "not an index map: no object of id → option index (at the top or under \"results\")",
            )
            .help("give a file like ScienceQA's results ({\"results\": {\"4\": 1, ...}}), or use --format generic"),
        ));
    };
    let model = model.map_or_else(|| super::stem_model(path), str::to_string);
    let open = bytes.iter().position(|&b| b == b'{').unwrap_or(0);
    let line_at = |pos: usize| bytes[..pos].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let top = keys(&bytes, open, line_at(open));
    let under_results = v.get("results").and_then(serde_json::Value::as_object).is_some_and(|r| std::ptr::eq(r, map));
    let lines: Vec<(String, u64, usize)> = match top.iter().find(|(k, _, _)| k == "results") {
        Some((_, _, at)) if under_results => keys(&bytes, *at, line_at(*at)),
        _ => top,
    };
    // A JSON parser keeps the last of two equal keys: one of the two answers
    // would be dropped without a word.
    let mut first_line: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    let mut problems = crate::error::Capped::default();
    for (k, l, _) in &lines {
        if let Some(first) = first_line.insert(k.as_str(), *l) {
            first_line.insert(k.as_str(), first);
            problems.push(
                Problem::new(
                    Location::line(path, *l),
                    format!("id \"{k}\" is given twice (first at line {first}): which answer counts is unknown"),
                )
                .help("keep one entry per id"),
            );
        }
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(problems.into_vec()));
    }
    let line_of = first_line;
    let file = display_path(path);
    Ok(map
        .iter()
        .map(|(id, index)| Prediction {
            model: model.clone(),
            id: id.clone(),
            response: Response::Index(index.as_i64().unwrap_or(-1)),
            loc: Location {
                file: file.as_str().into(),
                pos: line_of.get(id.as_str()).map_or(crate::error::Pos::File, |l| crate::error::Pos::Line(*l)),
            },
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_their_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.json");
        std::fs::write(&p, "{\n  \"acc\": 50.0,\n  \"results\": {\n    \"4\": 1,\n    \"x\\\"y\": -1\n  },\n  \"outputs\": {\"4\": \"B\"}\n}\n").unwrap();
        let preds = read(&p, None).unwrap();
        assert_eq!(preds.len(), 2);
        assert_eq!(preds[0].id, "4");
        assert_eq!(preds[0].response, Response::Index(1));
        assert_eq!(preds[0].loc.pos, crate::error::Pos::Line(4));
        assert_eq!(preds[1].id, "x\"y");
        assert_eq!(preds[1].loc.pos, crate::error::Pos::Line(5));
        assert_eq!(preds[0].model, "m");
        std::fs::write(&p, "{\"a\": 0,\n\"b\": 2}").unwrap();
        let flat = read(&p, Some("gpt")).unwrap();
        assert_eq!(flat[1].loc.pos, crate::error::Pos::Line(2));
        assert_eq!(flat[1].model, "gpt");
        std::fs::write(&p, "{\"a\": \"text\"}").unwrap();
        assert!(read(&p, None).is_err());
    }
}
