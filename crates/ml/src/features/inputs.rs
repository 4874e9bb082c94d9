//! What the featurizer reads of a question: its inputs (never the answer), keyed
//! texts and recipe rows, and the writers of a feature row.

use super::*;

/// Everything learned from training answers, and the key counts next to it.
#[derive(Debug, Clone, Default)]
pub(super) struct Tables {
    /// Multiplies every count: 1 for the whole training set, `n / rows` for the rows a
    /// cross-fitting block is featurized with, so counts keep one scale.
    pub(super) count_scale: f64,
    /// Per text id: (times the gold option, times offered).
    pub(super) options: Vec<(usize, usize)>,
    /// Per term id: (times in the gold option, times in any option).
    pub(super) terms: Vec<(usize, usize)>,
    /// Per kept template id.
    pub(super) templates: Vec<Stat>,
    /// Per (kept template id, slot index, slot value id).
    pub(super) slots: BTreeMap<(usize, usize, usize), Stat>,
    /// Per question id, for questions asked at least `min_template_count` times.
    pub(super) questions: BTreeMap<usize, Stat>,
    /// Per active recipe, per statistic.
    pub(super) recipes: Vec<Vec<SpecTable>>,
}

/// A recipe statistic's training tables.
#[derive(Debug, Clone)]
pub(super) enum SpecTable {
    /// Per key id.
    Question(BTreeMap<usize, Stat>),
    /// Per key id: (times in the gold option, times offered).
    Options(Vec<(usize, usize)>),
}

pub(super) enum SpecTally {
    Question(BTreeMap<usize, Tally>),
    Options(Vec<(usize, usize)>),
}

/// The only fields of a sample the featurizer reads outside `fit`'s targets: no
/// answer, no answer index, no images.
#[derive(Debug, Clone, Copy)]
pub(super) struct Inputs<'a> {
    pub(super) question: &'a str,
    pub(super) context: Option<&'a str>,
    pub(super) options: &'a [String],
    pub(super) question_type: Option<&'a str>,
    pub(super) meta: &'a BTreeMap<String, String>,
}

impl<'a> Inputs<'a> {
    pub(super) fn of(s: &'a Sample) -> Inputs<'a> {
        Inputs {
            question: &s.question,
            context: s.context.as_deref(),
            options: &s.options,
            question_type: s.question_type.as_deref(),
            meta: &s.meta,
        }
    }
}

/// One question as the columns see it: its parse, with its texts looked up in the
/// training vocabularies (`None` = unseen in training).
pub(super) struct Keyed<'a> {
    pub(super) parsed: &'a Parsed<'a>,
    pub(super) options: Vec<OptionText<Option<usize>>>,
    /// Kept template id.
    pub(super) template: Option<usize>,
    /// Slots of the question's template, kept or not.
    pub(super) n_slots: usize,
    /// Slot values of a kept template, at most `max_slots`.
    pub(super) slots: Vec<Option<usize>>,
    /// The whole tokenized question.
    pub(super) question: Option<usize>,
    /// Per active recipe.
    pub(super) recipes: Vec<RecipeRow<Option<usize>>>,
}

/// What one recipe read from one question.
pub(super) struct RecipeRow<K> {
    /// The recipe applies to the question's type.
    pub(super) applies: bool,
    /// Per statistic: the key (question-level: one entry; option-level: one per
    /// option); `None` = not extracted.
    pub(super) keys: Vec<Vec<Option<K>>>,
    /// Per statistic asking for `value`: the key read as a number, like `keys`.
    pub(super) values: Vec<Vec<f64>>,
    /// Per keyword.
    pub(super) flags: Vec<bool>,
}

/// One recipe's fields and keys of one question, as strings.
pub(super) fn recipe_row(recipe: &Recipe, question_type: Option<&str>, texts: &Texts<'_>) -> RecipeRow<String> {
    let applies = recipe.applies(question_type);
    let fields = if applies { recipe.fields(texts) } else { Default::default() };
    let keys: Vec<Vec<Option<String>>> = recipe
        .stats
        .iter()
        .map(|spec| match (applies, spec.per_option) {
            (false, _) => Vec::new(),
            (true, false) => vec![recipe.key(spec, &fields)],
            (true, true) => recipe.option_keys(spec, &fields, texts.options.len()),
        })
        .collect();
    let values = recipe
        .stats
        .iter()
        .zip(&keys)
        .map(|(spec, keys)| {
            if spec.has(Family::Value) {
                keys.iter().map(|k| k.as_deref().map_or(f64::NAN, leading_number)).collect()
            } else {
                Vec::new()
            }
        })
        .collect();
    let flags = recipe.keywords.iter().map(|k| applies && k.in_text(texts.question)).collect();
    RecipeRow { applies, keys, values, flags }
}

/// One question read without its answer and before any fitting: tokens, lengths,
/// option texts and recipe fields. Nothing here depends on a fold, so one parse
/// serves every fold (see [`parse`]).
pub struct Parsed<'a> {
    /// The question's non-empty lines, tokenized.
    pub(super) lines: Vec<Vec<String>>,
    pub(super) chars: usize,
    pub(super) words: usize,
    pub(super) numbers: usize,
    pub(super) context_chars: usize,
    pub(super) question_type: Option<&'a str>,
    pub(super) meta: &'a BTreeMap<String, String>,
    pub(super) options: Vec<OptionText<String>>,
    /// The whole tokenized question.
    pub(super) question: String,
    /// Per recipe of the config, in its order.
    pub(super) recipes: Vec<RecipeRow<String>>,
}

/// Every sample parsed for `config` (in parallel, in input order). Reads each
/// sample only through `Inputs`, never its answer.
pub fn parse<'a>(samples: &[&'a Sample], config: &FeatureConfig) -> Vec<Parsed<'a>> {
    samples.par_iter().map(|s| Parsed::of(Inputs::of(s), &config.recipes)).collect()
}

impl<'a> Parsed<'a> {
    pub(super) fn of(x: Inputs<'a>, recipes: &[Recipe]) -> Parsed<'a> {
        let lines = lines_of(x.question);
        let words: BTreeSet<&String> = lines.iter().flatten().filter(|t| is_word(t)).collect();
        let option_words: Vec<Vec<String>> =
            x.options.iter().map(|o| tokens(o).into_iter().filter(|t| is_word(t)).collect()).collect();
        let option_terms: Vec<BTreeSet<String>> = option_words.iter().map(|w| terms(w)).collect();
        // The question's and the context's words in order, to find an option's text in them.
        let shown: Vec<Vec<String>> = std::iter::once(x.question)
            .chain(x.context)
            .map(|t| tokens(t).into_iter().filter(|t| is_word(t)).collect())
            .collect();
        let options = x
            .options
            .iter()
            .zip(&option_words)
            .enumerate()
            .map(|(j, (o, own))| {
                let own_words: BTreeSet<&String> = own.iter().collect();
                let distinct = option_terms[j]
                    .iter()
                    .filter(|t| !option_terms.iter().enumerate().any(|(i, other)| i != j && other.contains(*t)));
                OptionText {
                    chars: o.chars().count(),
                    number: leading_number(o),
                    overlap: jaccard(&own_words, &words),
                    in_question: !own.is_empty() && shown.iter().any(|w| w.windows(own.len()).any(|s| s == &own[..])),
                    text: normalize(o),
                    terms: distinct.cloned().collect(),
                }
            })
            .collect();
        let texts = Texts { question: x.question, context: x.context, options: x.options, meta: x.meta };
        let recipes = recipes.iter().map(|r| recipe_row(r, x.question_type, &texts)).collect();
        Parsed {
            chars: x.question.chars().count(),
            words: lines.iter().flatten().filter(|t| is_word(t)).count(),
            numbers: lines.iter().flatten().filter(|t| is_number(t)).count(),
            context_chars: x.context.map_or(0, |c| c.chars().count()),
            question_type: x.question_type,
            meta: x.meta,
            options,
            question: whole_key(&lines),
            recipes,
            lines,
        }
    }
}

pub(super) struct OptionText<K> {
    pub(super) chars: usize,
    pub(super) number: f64,
    /// Jaccard similarity of the option's and the question's word sets.
    pub(super) overlap: f64,
    /// The option's words appear, in order and together, in the question or its context.
    pub(super) in_question: bool,
    /// Normalized text.
    pub(super) text: K,
    /// Words and adjacent word pairs of this option that no other option of the
    /// question has: what tells the options apart.
    pub(super) terms: Vec<K>,
}

/// Receives columns in order: values when transforming, names when fitting. Names are
/// built lazily so transforming never formats a string.
pub(super) trait Sink {
    fn put(&mut self, name: impl FnOnce() -> String, value: f64);
}

/// Writes values into one row's slots.
pub(super) struct Values<'r, I: Iterator<Item = &'r mut f64>>(pub(super) I);

impl<'r, I: Iterator<Item = &'r mut f64>> Sink for Values<'r, I> {
    fn put(&mut self, _name: impl FnOnce() -> String, value: f64) {
        *self.0.next().expect("a row has one slot per name") = value;
    }
}

pub(super) struct Names(pub(super) Vec<String>);

impl Sink for Names {
    fn put(&mut self, name: impl FnOnce() -> String, _value: f64) {
        self.0.push(name());
    }
}
