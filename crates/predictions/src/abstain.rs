//! Abstention: a response that says the image is missing, cannot be seen,
//! or refuses — counted apart from wrong answers (predictions → **metrics**).
//!
//! The phrase list is seeded from the papers' own examples:
//! - *Mirage* (Fig. 1, §7.3): "I cannot generate a conclusion because no image
//!   is presented", "No image was included, hence no diagnosis can be made";
//!   its judge flags a response that "mentions that it cannot see an image,
//!   that no image was provided, or that it needs an image to confidently
//!   answer", and groups refusals "to diagnose for safety reasons" with them;
//! - *Medical stress tests* (T2): GPT-4o's refusals when the image is
//!   withheld, and selecting "Unknown" is *not* an abstention (it is an
//!   option, scored like any other);
//! - common harness refusals ("I'm sorry, but I can't ...", "please upload
//!   the image").
//!
//! Matching ignores case, treats any run of whitespace as one space and any
//! apostrophe as `'`; each phrase is a plain substring, so the list is easy
//! to read and to extend (all phrases are scanned for at once, in one regex).
//! What counts as an abstention for scoring is decided in
//! [`crate::parse::score`]: an explicit answer marker (`[[B]]`,
//! "the answer is B") wins over a hedge.

use std::sync::LazyLock;

use regex::Regex;

/// Why a response abstains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// Says there is no image / the image is missing or was not provided.
    MissingImage,
    /// Says it cannot see, view or access the image.
    CannotSee,
    /// Says it needs the image (or more information) to answer.
    NeedsImage,
    /// Declines to answer or diagnose.
    Refusal,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::MissingImage => "missing_image",
            Reason::CannotSee => "cannot_see",
            Reason::NeedsImage => "needs_image",
            Reason::Refusal => "refusal",
        }
    }
}

/// The documented phrase list: (phrase, reason). Lowercase, straight apostrophes.
pub const PHRASES: &[(&str, Reason)] = &[
    // Missing image (Mirage Fig. 1: "no image is presented", "No image was included").
    ("no image is presented", Reason::MissingImage),
    ("no image was presented", Reason::MissingImage),
    ("no image was included", Reason::MissingImage),
    ("no image is included", Reason::MissingImage),
    ("no image was provided", Reason::MissingImage),
    ("no image is provided", Reason::MissingImage),
    ("no image has been provided", Reason::MissingImage),
    ("no image was attached", Reason::MissingImage),
    ("no image is attached", Reason::MissingImage),
    ("no image attached", Reason::MissingImage),
    ("no image was uploaded", Reason::MissingImage),
    ("no image provided", Reason::MissingImage),
    ("there is no image", Reason::MissingImage),
    ("there's no image", Reason::MissingImage),
    ("image is missing", Reason::MissingImage),
    ("image was not provided", Reason::MissingImage),
    ("image is not provided", Reason::MissingImage),
    ("image has not been provided", Reason::MissingImage),
    ("image was not included", Reason::MissingImage),
    ("image is not included", Reason::MissingImage),
    ("image was not attached", Reason::MissingImage),
    ("image wasn't provided", Reason::MissingImage),
    ("image isn't provided", Reason::MissingImage),
    ("image isn't attached", Reason::MissingImage),
    ("without the image", Reason::MissingImage),
    ("without an image", Reason::MissingImage),
    ("without seeing the image", Reason::MissingImage),
    ("without access to the image", Reason::MissingImage),
    ("without the actual image", Reason::MissingImage),
    ("didn't include an image", Reason::MissingImage),
    ("did not include an image", Reason::MissingImage),
    ("didn't attach an image", Reason::MissingImage),
    ("did not attach an image", Reason::MissingImage),
    ("image appears to be blank", Reason::MissingImage),
    ("image is blank", Reason::MissingImage),
    ("image is completely white", Reason::MissingImage),
    ("image appears to be noise", Reason::MissingImage),
    ("image contains only noise", Reason::MissingImage),
    // Cannot see (the judge's "mentions that it cannot see an image").
    ("cannot see the image", Reason::CannotSee),
    ("can't see the image", Reason::CannotSee),
    ("can not see the image", Reason::CannotSee),
    ("cannot see any image", Reason::CannotSee),
    ("can't see any image", Reason::CannotSee),
    ("cannot view the image", Reason::CannotSee),
    ("can't view the image", Reason::CannotSee),
    ("cannot view images", Reason::CannotSee),
    ("cannot see images", Reason::CannotSee),
    ("unable to see the image", Reason::CannotSee),
    ("unable to view the image", Reason::CannotSee),
    ("unable to access the image", Reason::CannotSee),
    ("not able to see the image", Reason::CannotSee),
    ("not able to view the image", Reason::CannotSee),
    ("don't see an image", Reason::CannotSee),
    ("do not see an image", Reason::CannotSee),
    ("don't see any image", Reason::CannotSee),
    ("do not see any image", Reason::CannotSee),
    ("i don't have access to the image", Reason::CannotSee),
    ("i do not have access to the image", Reason::CannotSee),
    ("i can't see images", Reason::CannotSee),
    // Needs the image ("needs an image to confidently answer").
    ("need the image", Reason::NeedsImage),
    ("need to see the image", Reason::NeedsImage),
    ("need an image", Reason::NeedsImage),
    ("need access to the image", Reason::NeedsImage),
    ("please provide the image", Reason::NeedsImage),
    ("please upload the image", Reason::NeedsImage),
    ("please upload an image", Reason::NeedsImage),
    ("please share the image", Reason::NeedsImage),
    ("please attach the image", Reason::NeedsImage),
    ("please provide an image", Reason::NeedsImage),
    ("could you provide the image", Reason::NeedsImage),
    ("could you upload the image", Reason::NeedsImage),
    ("if you can provide the image", Reason::NeedsImage),
    ("if you provide the image", Reason::NeedsImage),
    ("once you provide the image", Reason::NeedsImage),
    ("requires the image", Reason::NeedsImage),
    ("requires visual information", Reason::NeedsImage),
    ("requires viewing the image", Reason::NeedsImage),
    // Refusals (Mirage §7.4: "refused to diagnose for safety reasons").
    ("no diagnosis can be made", Reason::Refusal),
    ("cannot generate a conclusion", Reason::Refusal),
    ("cannot make a diagnosis", Reason::Refusal),
    ("cannot provide a diagnosis", Reason::Refusal),
    ("can't provide a diagnosis", Reason::Refusal),
    ("unable to provide a diagnosis", Reason::Refusal),
    ("cannot determine the answer", Reason::Refusal),
    ("cannot answer this question", Reason::Refusal),
    ("can't answer this question", Reason::Refusal),
    ("unable to answer this question", Reason::Refusal),
    ("unable to answer the question", Reason::Refusal),
    ("cannot answer the question", Reason::Refusal),
    ("not possible to determine", Reason::Refusal),
    ("impossible to determine", Reason::Refusal),
    ("cannot be determined", Reason::Refusal),
    ("i'm sorry, but i can't", Reason::Refusal),
    ("i'm sorry, but i cannot", Reason::Refusal),
    ("i am sorry, but i cannot", Reason::Refusal),
    ("i'm unable to help", Reason::Refusal),
    ("i can't help with", Reason::Refusal),
    ("i cannot help with", Reason::Refusal),
    ("i can't assist with", Reason::Refusal),
    ("i cannot assist with", Reason::Refusal),
];

/// Lowercase, straight apostrophes, whitespace collapsed.
pub fn normalize(text: &str) -> String {
    let lowered = text.to_lowercase().replace(['\u{2019}', '\u{2018}', '`'], "'");
    lowered.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every phrase in one case-insensitive pattern (a space matches any run of
/// whitespace, an apostrophe any apostrophe), so a response is scanned once.
static ANY_PHRASE: LazyLock<Regex> = LazyLock::new(|| {
    let alternatives: Vec<String> = PHRASES
        .iter()
        .map(|(p, _)| {
            p.split(' ')
                .map(|w| regex::escape(w).replace('\'', "['\u{2018}\u{2019}`]"))
                .collect::<Vec<_>>()
                .join(r"\s+")
        })
        .collect();
    Regex::new(&format!("(?i){}", alternatives.join("|"))).expect("the phrase list compiles")
});

/// The reason of the first phrase of [`PHRASES`] (in list order) the response
/// contains, if it abstains.
pub fn detect(response: &str) -> Option<Reason> {
    // One scan decides whether any phrase occurs (most responses: none); only
    // then is the list walked, in order, for the reason.
    ANY_PHRASE.find(response)?;
    let text = normalize(response);
    Some(PHRASES.iter().find(|(p, _)| text.contains(p)).map_or(Reason::MissingImage, |(_, r)| *r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_examples_abstain() {
        // Mirage, Fig. 1a/1b: the grounded responses.
        assert_eq!(detect("I cannot generate a conclusion because no image is presented."), Some(Reason::MissingImage));
        assert_eq!(detect("No image was included, hence no diagnosis can be made."), Some(Reason::MissingImage));
        assert_eq!(
            detect("I\u{2019}m sorry, but I can\u{2019}t see the image you mentioned."),
            Some(Reason::CannotSee)
        );
        assert_eq!(detect("Please upload the image so I can take a look."), Some(Reason::NeedsImage));
    }

    #[test]
    fn confident_answers_do_not() {
        // Mirage, Fig. 1: the mirage response, word for word.
        assert_eq!(detect("Based on the visual evidence, the building is built in a Neo-Gothic architecture."), None);
        assert_eq!(detect("The answer is B. BECAUSE: Gordon was testing how steady the parachute was."), None);
        assert_eq!(detect("D: Unknown."), None, "choosing the Unknown option is an answer");
    }

    #[test]
    fn case_spacing_and_apostrophes_do_not_matter() {
        assert_eq!(detect("NO IMAGE WAS\n PROVIDED"), Some(Reason::MissingImage));
        assert_eq!(detect("I don\u{2019}t see an image here."), Some(Reason::CannotSee));
        assert_eq!(detect("Please provide the image."), Some(Reason::NeedsImage));
    }

    #[test]
    fn phrases_are_normalized_already() {
        for (p, _) in PHRASES {
            assert_eq!(normalize(p), *p, "phrase {p:?} would never match");
        }
    }
}
