//! The text a harness sends with (or instead of) the image, rendered from a
//! sample alone: its fields plus, for variant rows, the kind and its params.
//! One template for every kind, so conditions differ only where the papers
//! say they do:
//!
//! ```text
//! Image description: <caption>                    caption only
//! Context: <context>                              when the sample has one
//! <question>
//! A. <option> ...                                 multiple choice (not phantom)
//! <guess instruction>                             guess only (Mirage paper's wording)
//! <answer instruction>                            by answer format (not phantom, phantom0, phantom0_video)
//! ```

use crate::sample::{AnswerFormat, Sample};

/// The Mirage paper's guess-mode instruction (section 7.7), verbatim apart
/// from the opening "However," that followed its system prompt.
pub const GUESS_INSTRUCTION: &str = "The image has been removed for this question. Take your best guess based on your knowledge and write your reason for the chosen answer.";

/// What replaces the gold in `gold_removed`.
pub const NONE_OF_THE_OTHERS: &str = "None of the other options";

/// The distractor text of `unknown_option` (medical stress tests, T4a).
pub const UNKNOWN: &str = "Unknown";

/// The label of option `i`: A..Z, then 27, 28, ... (no benchmark has that many, but no panic either).
pub fn option_label(i: usize) -> String {
    crate::sample::option_letter(i)
}

fn answer_instruction(format: AnswerFormat, guess: bool) -> &'static str {
    match (format, guess) {
        (AnswerFormat::MultipleChoice, false) => "Answer with the option's letter from the given choices directly.",
        (AnswerFormat::YesNo, false) => "Answer with yes or no.",
        (AnswerFormat::Numeric, false) => "Answer with a number.",
        (AnswerFormat::Open, false) => "Answer the question using a single word or phrase.",
        (AnswerFormat::MultipleChoice, true) => "Then give the letter of the option you chose on the last line.",
        (AnswerFormat::YesNo, true) => "Then give your answer, yes or no, on the last line.",
        (AnswerFormat::Numeric, true) => "Then give your answer, a number, on the last line.",
        (AnswerFormat::Open, true) => "Then give your answer, a single word or phrase, on the last line.",
    }
}

/// The caption a `caption` row carries in its params.
fn caption_of(s: &Sample) -> Option<String> {
    let params: serde_json::Value = serde_json::from_str(s.variant_params.as_deref()?).ok()?;
    params.get("caption")?.as_str().map(String::from)
}

/// The question as a harness that renders options itself (VLMEvalKit)
/// should show it: the question plus the kind's added text (a caption
/// before it, the guess instruction after it). Context and options are not
/// included: harnesses have their own fields for them.
pub fn harness_question(s: &Sample) -> String {
    let mut parts = Vec::new();
    match s.variant.as_deref() {
        Some("caption") => {
            if let Some(c) = caption_of(s) {
                parts.push(format!("Image description: {c}"));
            }
            parts.push(s.question.clone());
        }
        Some("guess") => {
            parts.push(s.question.clone());
            parts.push(GUESS_INSTRUCTION.to_string());
        }
        _ => parts.push(s.question.clone()),
    }
    parts.join("\n")
}

/// The full prompt text for `s` (an original sample or a variant row).
pub fn render_prompt(s: &Sample) -> String {
    let variant = s.variant.as_deref();
    let bare = matches!(variant, Some("phantom") | Some("phantom0") | Some("phantom0_video"));
    let guess = variant == Some("guess");
    let mut lines: Vec<String> = Vec::new();
    if variant == Some("caption")
        && let Some(c) = caption_of(s)
    {
        lines.push(format!("Image description: {c}"));
    }
    if let Some(ctx) = s.context.as_deref().filter(|c| !c.trim().is_empty()) {
        lines.push(format!("Context: {ctx}"));
    }
    lines.push(s.question.clone());
    if bare {
        return lines.join("\n");
    }
    let drawn = !s.options.is_empty() && s.options.iter().enumerate().all(|(i, o)| *o == option_label(i));
    if s.answer_format == AnswerFormat::MultipleChoice && drawn {
        // Options drawn in the image (`options = { letters = N }`): only their letters are known.
        lines.push(format!(
            "Options {}-{} are shown in the image.",
            option_label(0),
            option_label(s.options.len() - 1)
        ));
    } else if s.answer_format == AnswerFormat::MultipleChoice {
        for (i, o) in s.options.iter().enumerate() {
            lines.push(format!("{}. {o}", option_label(i)));
        }
    }
    if guess {
        lines.push(GUESS_INSTRUCTION.to_string());
    }
    lines.push(answer_instruction(s.answer_format, guess).to_string());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiple_choice_prompt_lists_lettered_options() {
        let mut s = Sample::new("1", "Which is a fruit?", "apple");
        s.answer_format = AnswerFormat::MultipleChoice;
        s.options = vec!["stone".into(), "apple".into()];
        s.answer_index = Some(1);
        s.context = Some("A kitchen.".into());
        assert_eq!(
            render_prompt(&s),
            "Context: A kitchen.\nWhich is a fruit?\nA. stone\nB. apple\nAnswer with the option's letter from the given choices directly."
        );
        s.variant = Some("phantom".into());
        assert_eq!(render_prompt(&s), "Context: A kitchen.\nWhich is a fruit?");
    }
}
