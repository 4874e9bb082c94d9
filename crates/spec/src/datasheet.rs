//! The datasheet's questions (Gebru et al., "Datasheets for Datasets"): the
//! seven sections and each question's id, the keys a pipeline's
//! `[datasheet]` table may answer. The release renders them.

/// The datasheet's sections, in order.
pub const SECTIONS: [&str; 7] = [
    "Motivation",
    "Composition",
    "Collection process",
    "Preprocessing, cleaning and labeling",
    "Uses",
    "Distribution",
    "Maintenance",
];

/// One datasheet question.
#[derive(Debug, Clone, Copy)]
pub struct Question {
    /// Key in `[datasheet]`.
    pub id: &'static str,
    /// Index into [`SECTIONS`].
    pub section: usize,
    pub text: &'static str,
    /// Whether blindspot computes an answer; otherwise the publisher must give one.
    pub computed: bool,
}

const fn q(id: &'static str, section: usize, text: &'static str, computed: bool) -> Question {
    Question { id, section, text, computed }
}

/// Every question, in section order.
pub const QUESTIONS: &[Question] = &[
    q("purpose", 0, "For what purpose was the dataset created? Was there a specific task or gap in mind?", false),
    q("creators", 0, "Who created the dataset, and on behalf of which entity?", false),
    q("funding", 0, "Who funded the creation of the dataset?", false),
    q("instances", 1, "What do the instances represent?", true),
    q("count", 1, "How many instances are there in total, of each type?", true),
    q("sample", 1, "Does the dataset contain all possible instances, or is it a sample of a larger set?", true),
    q("labels", 1, "Is there a label or target associated with each instance?", true),
    q("missing", 1, "Is any information missing from individual instances?", true),
    q("relationships", 1, "Are relationships between instances made explicit?", true),
    q("splits", 1, "Are there recommended data splits?", true),
    q("errors", 1, "Are there any errors, sources of noise, or redundancies in the dataset?", true),
    q("external", 1, "Is the dataset self-contained, or does it link to or rely on external resources?", true),
    q("confidential", 1, "Does the dataset contain data that might be considered confidential?", false),
    q(
        "offensive",
        1,
        "Does the dataset contain data that might be offensive, insulting, threatening or cause anxiety?",
        false,
    ),
    q(
        "people",
        1,
        "Does the dataset relate to people? Does it identify subpopulations or individuals, or hold sensitive data?",
        false,
    ),
    q(
        "collection",
        2,
        "How was the data associated with each instance acquired, by whom, and over what timeframe?",
        false,
    ),
    q("ethical-review", 2, "Were any ethical review processes conducted?", false),
    q("preprocessing", 3, "Was any preprocessing, cleaning or labeling of the data done?", true),
    q("raw-data", 3, "Was the raw data saved in addition to the preprocessed data?", true),
    q("software", 3, "Is the software used to preprocess, clean or label the data available?", true),
    q("uses-so-far", 4, "Has the dataset been used for any tasks already?", false),
    q("use-risks", 4, "Is there anything about the composition or processing that might affect future uses?", true),
    q("not-for", 4, "Are there tasks for which the dataset should not be used?", false),
    q("distribution", 5, "How will the dataset be distributed?", true),
    q(
        "license",
        5,
        "Under which copyright or intellectual property licence, and terms of use, is it distributed?",
        true,
    ),
    q("third-party-ip", 5, "Have any third parties imposed restrictions on the data, or export controls?", false),
    q(
        "maintainer",
        6,
        "Who will be supporting, hosting and maintaining the dataset, and how can they be contacted?",
        false,
    ),
    q("errata", 6, "Is there an erratum, and how will errors be reported and corrected?", false),
    q("updates", 6, "Will the dataset be updated, and how will older versions be treated?", true),
    q(
        "contributions",
        6,
        "If others want to extend or build on the dataset, is there a mechanism for them to do so?",
        false,
    ),
];

/// The question with this id.
pub fn question(id: &str) -> Option<&'static Question> {
    QUESTIONS.iter().find(|q| q.id == id)
}

/// Questions only the publisher can answer that `[datasheet]` leaves open.
pub fn unanswered(p: &crate::plan::Pipeline) -> Vec<&'static Question> {
    QUESTIONS.iter().filter(|q| !q.computed && p.datasheet.get(q.id).is_none_or(|a| a.trim().is_empty())).collect()
}

/// The pipeline-file line that answers `q`.
pub fn how_to_answer(q: &Question) -> String {
    format!("{} = \"...\" under [datasheet]", q.id)
}

/// The warning `build` and `validate` print when `[datasheet]` leaves
/// questions open (the card marks them).
pub fn unanswered_warning(p: &crate::plan::Pipeline) -> Option<String> {
    let open = unanswered(p);
    let first = open.first()?;
    let ids: Vec<&str> = open.iter().map(|q| q.id).collect();
    Some(format!(
        "warning: {}: {} datasheet question{} unanswered, marked in the card: {} (answer under [datasheet], e.g. {})",
        crate::error::display_path(&p.path),
        open.len(),
        if open.len() == 1 { " is" } else { "s are" },
        ids.join(", "),
        how_to_answer(first).trim_end_matches(" under [datasheet]")
    ))
}
