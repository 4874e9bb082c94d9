//! VLMEvalKit TSV reader: `index, question, A..J, answer, category, image`
//! (plus optional `hint`, `l2-category`, `split`, ...). `image` holds base64
//! image bytes, a list of them, or — when at most 64 characters — the `index`
//! of another row whose image it reuses (VLMEvalKit's de-duplication).

use std::collections::HashMap;
use std::path::Path;

use base64::Engine;

use super::csv::read_delimited;
use super::raw::{Raw, RawRecord};
use crate::error::{Error, Problem, Result};

/// Whether a short image cell is base64 rather than a row index: it decodes,
/// and it is not a plain number (which names a row, even a missing one).
fn is_short_base64(text: &str) -> bool {
    !text.chars().all(|c| c.is_ascii_digit()) && base64::engine::general_purpose::STANDARD.decode(text).is_ok()
}

/// Reads the TSV and decodes its images into `{bytes, path}` maps.
pub fn read_vlmevalkit(path: &Path, bytes: &[u8]) -> Result<Vec<RawRecord>> {
    let mut records = read_delimited(path, bytes, b'\t')?;
    let mut by_index: HashMap<String, usize> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        if let Some(Raw::Str(idx)) = r.value.get("index") {
            by_index.entry(idx.trim().to_string()).or_insert(i);
        }
    }
    let images: Vec<Option<String>> = records
        .iter()
        .map(|r| match r.value.get("image") {
            Some(Raw::Str(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
            _ => None,
        })
        .collect();
    let mut problems = Vec::new();
    for (i, rec) in records.iter_mut().enumerate() {
        let Some(mut text) = images[i].clone() else { continue };
        // Follow references to other rows (bounded: a cycle is an error).
        let mut hops = 0;
        while text.len() <= 64 {
            match by_index.get(&text).and_then(|&j| images[j].clone()) {
                Some(next) if hops < 8 => {
                    text = next;
                    hops += 1;
                }
                // A tiny (often truncated) image, not a reference: decoded below,
                // and its bytes judged where every image's are.
                _ if is_short_base64(&text) => break,
                _ => {
                    problems.push(
                        Problem::new(
                            rec.loc.clone(),
                            format!("image \"{text}\" is neither base64 nor the index of a row with an image"),
                        )
                        .field("image"),
                    );
                    break;
                }
            }
        }
        if text.len() <= 64 && !is_short_base64(&text) {
            continue;
        }
        let encoded: Vec<String> = if text.starts_with('[') {
            match super::options::parse_list_literal(&text) {
                Some(items) => items,
                None => {
                    problems.push(Problem::new(rec.loc.clone(), "the image list cannot be parsed").field("image"));
                    continue;
                }
            }
        } else {
            vec![text]
        };
        let mut imgs = Vec::new();
        for (k, e) in encoded.iter().enumerate() {
            match base64::engine::general_purpose::STANDARD.decode(e.trim()) {
                Ok(b) => imgs.push(Raw::Map(vec![
                    (super::raw::intern("bytes"), Raw::Bytes(b)),
                    (super::raw::intern("path"), Raw::Null),
                ])),
                Err(err) => {
                    let which = if encoded.len() > 1 { format!(" (image {})", k + 1) } else { String::new() };
                    problems.push(
                        Problem::new(rec.loc.clone(), format!("broken base64{which}: {err}"))
                            .field("image")
                            .help("re-export the TSV; the image column must be standard base64"),
                    );
                }
            }
        }
        if let Raw::Map(fields) = &mut rec.value
            && let Some(slot) = fields.iter_mut().find(|(k, _)| &**k == "image")
        {
            slot.1 = Raw::List(imgs);
        }
    }
    if problems.is_empty() { Ok(records) } else { Err(Error::Invalid(problems)) }
}
