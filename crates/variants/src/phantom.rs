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
//!   embedded); expected: abstain;
//! - `phantom0_video`: the same for video benchmarks, 10 categories × 10
//!   open-ended questions about a video never given
//!   (`data/phantom0_video.toml`, embedded); made only when some question has
//!   a video; expected: abstain.

use serde::Deserialize;

use super::{Kind, Skip, derive, finish};
use crate::error::{Error, Result};
use crate::sample::{AnswerFormat, Sample};

/// The probe bank, written by the project (see its header).
pub const PHANTOM0_TOML: &str = include_str!("../../../data/phantom0.toml");

/// Benchmark name of `phantom0` rows: they belong to no user benchmark.
pub const PHANTOM0_BENCHMARK: &str = "blindspot-phantom0";

/// The video probe bank, written by the project (see its header).
pub const PHANTOM0_VIDEO_TOML: &str = include_str!("../../../data/phantom0_video.toml");

/// Benchmark name of `phantom0_video` rows.
pub const PHANTOM0_VIDEO_BENCHMARK: &str = "blindspot-phantom0-video";

/// Whether a row is a bundled probe, not a question of the user's benchmark.
pub fn is_probe_benchmark(benchmark: &str) -> bool {
    benchmark == PHANTOM0_BENCHMARK || benchmark == PHANTOM0_VIDEO_BENCHMARK
}

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
    probe_rows(PHANTOM0_TOML, "data/phantom0.toml", "phantom0", PHANTOM0_BENCHMARK, Kind::Phantom0)
}

/// The 100 video probe rows, ids `phantom0-video-<category>-<nn>::phantom0_video`,
/// sorted by id.
pub fn phantom0_video_rows() -> Result<Vec<Sample>> {
    probe_rows(
        PHANTOM0_VIDEO_TOML,
        "data/phantom0_video.toml",
        "phantom0-video",
        PHANTOM0_VIDEO_BENCHMARK,
        Kind::Phantom0Video,
    )
}

fn probe_rows(toml_text: &str, file: &str, prefix: &str, benchmark: &str, kind: Kind) -> Result<Vec<Sample>> {
    let bank: Bank = toml::from_str(toml_text).map_err(|e| Error::Bug(format!("{file} does not parse: {e}")))?;
    let mut rows = Vec::new();
    for cat in &bank.category {
        for (i, q) in cat.questions.iter().enumerate() {
            let parent = format!("{prefix}-{}-{:02}", slug(&cat.name), i + 1);
            let mut s = Sample::new(parent.clone(), q.clone(), "");
            s.benchmark = benchmark.into();
            s.split = "test".into();
            s.question_type = Some(cat.name.clone());
            let mut r = derive(&s, kind, serde_json::json!({"category": cat.name}));
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

    #[test]
    fn video_bank_has_10_categories_of_10_distinct_questions_about_a_video() {
        let bank: Bank = toml::from_str(PHANTOM0_VIDEO_TOML).unwrap();
        assert_eq!(bank.category.len(), 10);
        let mut all = std::collections::BTreeSet::new();
        for c in &bank.category {
            assert_eq!(c.questions.len(), 10, "{}", c.name);
            for q in &c.questions {
                assert!(all.insert(q.to_lowercase()), "repeated: {q}");
                assert!(q.ends_with('?'), "{q}");
                // Each asserts a video (or clip, footage, scene) that is not given.
                let l = q.to_lowercase();
                assert!(["video", "clip", "footage", "scene"].iter().any(|w| l.contains(w)), "{q}");
            }
        }
        let rows = phantom0_video_rows().unwrap();
        assert_eq!(rows.len(), 100);
        assert!(rows.iter().all(|r| r.expected.as_deref() == Some("abstain") && r.videos.is_empty()));
        assert_eq!(rows[0].id, "phantom0-video-actions-01::phantom0_video");
        assert_eq!(rows[0].benchmark, PHANTOM0_VIDEO_BENCHMARK);
    }
}
