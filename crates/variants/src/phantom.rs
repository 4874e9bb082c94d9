//! The phantom family (*Mirage*): the image is absent, and the model is
//! told so or not.
//!
//! - `mirage`: the sample's own prompt, no image, nothing acknowledging the
//!   absence (mirage-mode, section 7.5); expected: abstain;
//! - `guess`: no image, plus the paper's guess-mode instruction (section
//!   7.7); expected: answer;
//! - `phantom`: each visual question of the user's benchmark as an
//!   open-ended question, options stripped, no image; expected: abstain;
//! - `phantom0`: a standalone Phantom-0-style probe set, 20 categories × 10
//!   open-ended questions about an image never given (`data/phantom0.toml`,
//!   embedded); expected: abstain.

use serde::Deserialize;

use super::{Kind, Skip, derive, finish};
use crate::error::{Error, Result};
use crate::sample::{AnswerFormat, Sample};

/// The probe bank, written by the project (see its header).
pub const PHANTOM0_TOML: &str = include_str!("../../../data/phantom0.toml");

/// Benchmark name of `phantom0` rows: they belong to no user benchmark.
pub const PHANTOM0_BENCHMARK: &str = "blindspot-phantom0";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Bank {
    category: Vec<Category>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Category {
    name: String,
    questions: Vec<String>,
}

/// The question without its visual evidence, images and videos alike (a
/// video question's prompt already names the video it asserts).
fn image_free(s: &Sample, kind: Kind) -> std::result::Result<Sample, Skip> {
    if s.images.is_empty() && s.videos.is_empty() {
        return Err("not a visual question: the sample has no image or video");
    }
    let mut r = derive(s, kind, serde_json::json!({}));
    r.images.clear();
    r.videos.clear();
    Ok(r)
}

pub fn mirage(s: &Sample) -> std::result::Result<Sample, Skip> {
    image_free(s, Kind::Mirage).map(finish)
}

pub fn guess(s: &Sample) -> std::result::Result<Sample, Skip> {
    image_free(s, Kind::Guess).map(finish)
}

pub fn phantom(s: &Sample) -> std::result::Result<Sample, Skip> {
    let mut r = image_free(s, Kind::Phantom)?;
    if r.answer_format == AnswerFormat::MultipleChoice {
        r.options.clear();
        r.answer_index = None;
        r.answer_format = AnswerFormat::Open;
    }
    Ok(finish(r))
}

fn slug(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}

/// The 200 probe rows, ids `phantom0-<category>-<nn>::phantom0`, sorted by id.
pub fn phantom0_rows() -> Result<Vec<Sample>> {
    let bank: Bank =
        toml::from_str(PHANTOM0_TOML).map_err(|e| Error::Bug(format!("data/phantom0.toml does not parse: {e}")))?;
    let mut rows = Vec::new();
    for cat in &bank.category {
        for (i, q) in cat.questions.iter().enumerate() {
            let parent = format!("phantom0-{}-{:02}", slug(&cat.name), i + 1);
            let mut s = Sample::new(parent.clone(), q.clone(), "");
            s.benchmark = PHANTOM0_BENCHMARK.into();
            s.split = "test".into();
            s.question_type = Some(cat.name.clone());
            let mut r = derive(&s, Kind::Phantom0, serde_json::json!({"category": cat.name}));
            r.parent_id = Some(parent);
            rows.push(finish(r));
        }
    }
    rows.sort_by(|a, b| crate::sample::id_cmp(&a.id, &b.id));
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bank_has_20_categories_of_10_distinct_questions() {
        let bank: Bank = toml::from_str(PHANTOM0_TOML).unwrap();
        assert_eq!(bank.category.len(), 20);
        let mut all = std::collections::BTreeSet::new();
        for c in &bank.category {
            assert_eq!(c.questions.len(), 10, "{}", c.name);
            for q in &c.questions {
                assert!(all.insert(q.to_lowercase()), "repeated: {q}");
                assert!(q.ends_with('?'), "{q}");
            }
        }
        let rows = phantom0_rows().unwrap();
        assert_eq!(rows.len(), 200);
        assert!(rows.iter().all(|r| r.expected.as_deref() == Some("abstain") && r.images.is_empty()));
        assert_eq!(rows.iter().filter(|r| r.question_type.as_deref() == Some("chest X-ray")).count(), 10);
    }
}
