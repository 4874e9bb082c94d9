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
            q
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
