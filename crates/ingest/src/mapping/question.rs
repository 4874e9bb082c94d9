//! The question of a mapped record, its context (hint) and question type.

use super::mapper::Mapper;

/// The question text (the plan's fixed text, else the mapped field); None
/// when it is missing, with the problem said.
pub(super) fn map_question(m: &mut Mapper<'_>) -> Option<String> {
    let plan = m.plan;
    let f = &plan.fields;
    match &plan.question_text {
        Some(q) => Some(q.clone()),
        None => {
            let acc = m.pick(&f.question, &["question"]);
            let q = acc.and_then(|a| m.text("question", a));
            if q.is_none() {
                m.missing_required("question", f.question.as_ref(), &["question"]);
            }
            q.map(|q| without_image_placeholder(m, q))
        }
    }
}

/// The context (or hint) of the question, where the record has one.
pub(super) fn map_context(m: &mut Mapper<'_>) -> Option<String> {
    let plan = m.plan;
    let ctx_acc = m.pick(&plan.fields.context, &["context", "hint"]);
    ctx_acc.and_then(|a| m.text("context", a))
}

/// The question type (VLMEvalKit's `category` first for its files).
pub(super) fn map_question_type(m: &mut Mapper<'_>, vlm: bool) -> Option<String> {
    let plan = m.plan;
    let qt_defaults: &[&str] = if vlm { &["category", "question_type"] } else { &["question_type"] };
    let qt_acc = m.pick(&plan.fields.question_type, qt_defaults);
    qt_acc.and_then(|a| m.text("question_type", a))
}

/// What a chat template writes where the image goes (LLaVA's conversations: `"<image>\nWhat
/// is ...?"`): no words of the question, and a harness given the question adds its own.
const IMAGE_PLACEHOLDER: &str = "<image>";

/// The question without its `<image>` placeholders, counted in a note; numbered
/// references such as MMMU's `<image 1>` name an image and stay.
fn without_image_placeholder(m: &mut Mapper<'_>, q: String) -> String {
    if !q.contains(IMAGE_PLACEHOLDER) {
        return q;
    }
    m.notes.push(std::borrow::Cow::Borrowed(
        "the question's \"<image>\" placeholder (where a chat template puts the image) was removed from its text; \
         the image is the question's images field",
    ));
    q.replace(&format!("{IMAGE_PLACEHOLDER}\n"), "").replace(IMAGE_PLACEHOLDER, "").trim().to_string()
}
