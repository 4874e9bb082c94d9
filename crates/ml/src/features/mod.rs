//! Features: the non-visual columns TsT-RF learns from.
//!
//! This is the features stage of diagnose, between ingest and the forest. For every
//! cross-validation fold of one question type:
//!
//! ```text
//! training samples ──▶ Featurizer::fit_transform ──▶ Featurizer + training Matrix ─┐
//! held-out samples ──▶ Featurizer::transform ───────▶ held-out Matrix ─────────────┴─▶ forest.rs
//! ```
//!
//! Reading a question (tokens, option texts, recipe fields: [`Parsed`]) depends on no
//! fold, so diagnose parses each question once and every fold reuses it through the
//! `*_parsed` variants; fitting and transforming is then about training statistics.
//!
//! (`Matrix`: f64, row-major, NaN = missing.) Everything a blind model could exploit
//! without the image becomes a column:
//!
//! - `q.*`: the question's length in characters and words, how many numbers it holds,
//!   its option count, its context's length;
//! - `opt{j}.*`, per option position `j` (NaN past a question's last option): length,
//!   length rank, longest/shortest flags, length over the longest other option's, word
//!   overlap with the question, leading number, how often that exact text was gold /
//!   offered in training and the ratio, and `term_gold`, a lexical prior: how often the
//!   words and word pairs that set the option apart from the others were on the gold
//!   side in training (their mean, and `term_gold_max`, the strongest one's smoothed share);
//! - `cat.question_type`, `meta.<key>`: label-encoded on training values;
//! - `template.*`, `slot{k}.*`, `question.*`: questions that share a skeleton once their
//!   variable spans are masked ("is there a <slot> in the image ?") share a template,
//!   each span is a slot, and the template, each slot value and each repeated whole
//!   question get their training count and answer statistics: P(yes) for yes/no; per
//!   option position P(that text is gold), whether it is the most frequent gold text and
//!   its number's log-distance to the gold numbers' mean for multiple choice; mean and
//!   standard deviation, raw and of log10(x + 1), for numeric answers; the share of the
//!   most common answer for open ones. This family exposes priors such as POPE's
//!   object names.
//!
//! Leak discipline (`docs/tst-protocol.md`, "Features"): every statistic comes from
//! training samples only, and [`Featurizer::transform`] reads a sample only through
//! `Inputs`, which carries no answer, so changing a held-out answer cannot change a
//! row. Keys unseen in training have count 0 and NaN statistics; categorical values
//! unseen in training encode as -1.
//!
//! Departures from the TsT release, to be stated in reports:
//! - training rows are cross-fitted by [`Featurizer::fit_transform`]: each block of
//!   training rows gets statistics from the other blocks, never from its own answers
//!   (the release merges statistics fit on the training fold back onto that fold, which
//!   lets a rare key carry its own row's label). [`FeatureConfig::cross_fit`] below 2
//!   restores the release's behaviour;
//! - whole-question statistics only exist for questions asked at least
//!   `min_template_count` times;
//! - templates, slots and `term_gold` are generic stand-ins for the release's
//!   hand-written, per-benchmark extractors (regular expressions for object names).
//!
//! As in the release, a standard deviation is the sample one (pandas' `std`), 0 over a
//! single answer.
//!
//! Determinism: strings are interned in sorted order, maps are `BTreeMap`s and parallel
//! work is collected in input order, so equal inputs give bit-identical matrices and
//! column order depends only on the fitted featurizer (answer format, widest option
//! list, meta keys, `max_slots`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use rayon::prelude::*;

use super::forest::Matrix;
use super::recipes::{Family, Recipe, StatSpec, Texts};
use crate::sample::{AnswerFormat, Sample};

pub mod candidates;
pub mod glossary;
mod inputs;
mod statistics;
mod templates;
#[cfg(test)]
mod tests;

pub use inputs::*;
use statistics::*;
use templates::*;

/// Cross-fit blocks whose statistics tables are built at once, whatever the thread
/// count: each holds tables as large as the training set's, and the folds fit side
/// by side already keep a large pool busy.
pub const CROSS_FIT_IN_FLIGHT: usize = 2;

/// Settings of the featurizer; [`Default`] is what TsT-RF uses without configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FeatureConfig {
    /// Fewest training questions a template, a line skeleton or a repeated question needs
    /// to get an id and statistics; a frame token must occur in at least this many too.
    pub min_template_count: usize,
    /// A token is frame (not slot) when it occurs in at least this fraction of the
    /// training questions (and in at least `min_template_count` of them).
    pub frame_fraction: f64,
    /// Slots per template that get columns; later slots are ignored, so the column
    /// count stays fixed.
    pub max_slots: usize,
    /// Open answers seen fewer than this many times are pooled into one "other" class.
    /// Read by the diagnose driver when it builds open-answer targets, not here.
    pub rare_vocab: usize,
    /// Meta keys to label-encode, in this order; `None` = every meta key seen in
    /// training with at most `max_meta_values` distinct values, in key order. The
    /// default is none: a meta field may carry the answer (a label read off the
    /// image, a model's own prediction), so it is a feature only when listed.
    pub meta_fields: Option<Vec<String>>,
    /// Most distinct training values a meta key may have to be picked when
    /// `meta_fields` is `None` (more looks like free text or an id).
    pub max_meta_values: usize,
    /// Blocks of [`Featurizer::fit_transform`]'s cross-fitting; below 2 the training
    /// rows get in-sample statistics, as in the TsT release.
    pub cross_fit: usize,
    /// Declarative recipes of the pipeline (`[[diagnose.recipes]]`); a recipe gets
    /// columns in a model when it applies to at least one of its training questions.
    #[serde(serialize_with = "super::recipes::serialize_all")]
    pub recipes: Arc<[Recipe]>,
}

impl Default for FeatureConfig {
    fn default() -> Self {
        FeatureConfig {
            min_template_count: 5,
            frame_fraction: 0.01,
            max_slots: 3,
            rare_vocab: 2,
            meta_fields: Some(Vec::new()),
            max_meta_values: 50,
            cross_fit: 5,
            recipes: Arc::new([]),
        }
    }
}

/// Feature extraction fit on training samples; see the module docs.
#[derive(Debug, Clone)]
pub struct Featurizer {
    /// Answer format of the training samples (the first one's); `None` when fit on nothing.
    format: Option<AnswerFormat>,
    /// Widest option list in training: option columns exist for positions `0..n_options`.
    n_options: usize,
    /// Column prefixes of the slots that get columns (`slot1`, ... `slot{max_slots}`).
    slot_prefixes: Vec<String>,
    min_question_count: usize,
    question_types: Vocab,
    /// Picked meta keys with their training values.
    meta: Vec<(String, Vocab)>,
    templates: Templates,
    /// Normalized option texts and answers seen in training.
    texts: Vocab,
    /// Distinguishing option terms seen in training (see `OptionText::terms`).
    terms: Vocab,
    /// Slot values of kept templates seen in training.
    slot_values: Vocab,
    /// Whole questions (tokenized) seen in training.
    questions: Vocab,
    /// Recipes that apply to some training question, each with one vocabulary of key
    /// values per statistic.
    recipes: Vec<(Recipe, Vec<Vocab>)>,
    /// Per entry of `recipes`, its index in the config's recipes (and in [`Parsed`]'s).
    recipe_index: Vec<usize>,
    /// The config's recipes, which [`Parsed`] rows follow.
    config_recipes: Arc<[Recipe]>,
    /// Statistics of the whole training set, used for every transformed sample.
    tables: Tables,
    names: Vec<String>,
}

impl Featurizer {
    /// Learns vocabularies, templates and answer statistics from `train` (answers
    /// included). Samples whose answer does not parse under the format (a yes/no answer
    /// that is neither, a numeric answer without a number) still count as occurrences
    /// but add nothing to answer statistics.
    pub fn fit(train: &[&Sample], config: &FeatureConfig) -> Featurizer {
        let parsed = parse(train, config);
        Featurizer::fit_prepared(train, &parsed.iter().collect::<Vec<_>>(), config).0
    }

    /// [`Featurizer::fit`] plus the training rows' matrix, cross-fitted: with
    /// `config.cross_fit = k ≥ 2` the training samples are cut into `k` contiguous
    /// blocks (in the order given, so neighbouring ids, often one image's questions,
    /// stay together) and each block's answer statistics and counts come from the other
    /// blocks only, counts rescaled to the full training set's size. A training row then
    /// never sees its own answer, just as a held-out row does not. With in-sample
    /// statistics a rare key carries its own row's label (an option text seen once is
    /// gold exactly when it was this row's answer) and the forest learns to trust
    /// columns that are empty on held-out rows. With `k < 2` this is `fit` followed by
    /// `transform(train)`, the TsT release's behaviour.
    pub fn fit_transform(train: &[&Sample], config: &FeatureConfig) -> (Featurizer, Matrix) {
        let parsed = parse(train, config);
        Featurizer::fit_transform_parsed(train, &parsed.iter().collect::<Vec<_>>(), config)
    }

    /// [`Featurizer::fit_transform`] of samples already parsed: `parsed[i]` is
    /// `train[i]` parsed with the same `config`.
    pub fn fit_transform_parsed(
        train: &[&Sample],
        parsed: &[&Parsed<'_>],
        config: &FeatureConfig,
    ) -> (Featurizer, Matrix) {
        let (featurizer, prepared, targets) = Featurizer::fit_prepared(train, parsed, config);
        let x = featurizer.training_rows(&prepared, &targets, &featurizer.tables, config);
        (featurizer, x)
    }

    /// The training rows of `prepared`, whose targets are `targets` and whose whole-set
    /// statistics are `tables`: cross-fitted with `config.cross_fit` blocks (see
    /// [`Featurizer::fit_transform`]), else with `tables`.
    fn training_rows(
        &self,
        prepared: &[Keyed<'_>],
        targets: &[Option<Target>],
        tables: &Tables,
        config: &FeatureConfig,
    ) -> Matrix {
        let n = prepared.len();
        let k = config.cross_fit.min(n);
        let width = self.names.len();
        let data = if k < 2 {
            self.rows(tables, prepared)
        } else {
            // Each block writes its rows straight into its part of the matrix.
            let mut data = vec![0.0; n * width];
            let mut parts = Vec::with_capacity(k);
            let mut rest_of_data = &mut data[..];
            for block in 0..k {
                let rows = block * n / k..(block + 1) * n / k;
                let (part, tail) = rest_of_data.split_at_mut(rows.len() * width);
                parts.push((rows, part));
                rest_of_data = tail;
            }
            // Each block's statistics tables are as large as the training set's: a
            // constant number at a time keeps memory independent of the pool.
            let parts: Vec<std::sync::Mutex<_>> = parts.into_iter().map(std::sync::Mutex::new).collect();
            crate::par::bounded_map(k, CROSS_FIT_IN_FLIGHT, |block| {
                let mut guard = parts[block].lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let (rows, part) = &mut *guard;
                let rest: Vec<(&Keyed<'_>, Option<&Target>)> =
                    (0..n).filter(|i| !rows.contains(i)).map(|i| (&prepared[i], targets[i].as_ref())).collect();
                let tables = self.tables(&rest, n as f64 / rest.len() as f64);
                self.rows_into(&tables, &prepared[rows.clone()], part);
            });
            data
        };
        Matrix::new(n, width, data)
    }

    /// One row per sample, columns as in [`Featurizer::names`], with the statistics of
    /// the whole training set. Reads each sample only through `Inputs` (question,
    /// context, options, question type, meta), never its answer.
    pub fn transform(&self, samples: &[&Sample]) -> Matrix {
        let parsed: Vec<Parsed<'_>> =
            samples.par_iter().map(|s| Parsed::of(Inputs::of(s), &self.config_recipes)).collect();
        self.transform_parsed(&parsed.iter().collect::<Vec<_>>())
    }

    /// [`Featurizer::transform`] of samples already parsed with the fitting config.
    pub fn transform_parsed(&self, parsed: &[&Parsed<'_>]) -> Matrix {
        let prepared = self.keyed(parsed);
        Matrix::new(parsed.len(), self.names.len(), self.rows(&self.tables, &prepared))
    }

    /// Column names, one per column, stable for a fitted featurizer.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The featurizer, the training samples prepared, and their targets.
    fn fit_prepared<'a>(
        train: &[&Sample],
        parsed: &[&'a Parsed<'a>],
        config: &FeatureConfig,
    ) -> (Featurizer, Vec<Keyed<'a>>, Vec<Option<Target>>) {
        assert_eq!(train.len(), parsed.len(), "one parsed question per training sample");
        let format = train.first().map(|s| s.answer_format);
        let active: Vec<usize> = (0..config.recipes.len())
            .filter(|&r| train.iter().any(|s| config.recipes[r].applies(s.question_type.as_deref())))
            .collect();
        let mut featurizer = Featurizer {
            format,
            n_options: train.iter().map(|s| s.options.len()).max().unwrap_or(0),
            slot_prefixes: (1..=config.max_slots).map(|k| format!("slot{k}")).collect(),
            min_question_count: config.min_template_count.max(1),
            question_types: Vocab::new(train.iter().filter_map(|s| s.question_type.as_deref())),
            meta: meta_encoders(train, config),
            templates: Templates::default(),
            texts: Vocab::default(),
            terms: Vocab::default(),
            slot_values: Vocab::default(),
            questions: Vocab::default(),
            recipes: active.iter().map(|&r| (config.recipes[r].clone(), Vec::new())).collect(),
            recipe_index: active,
            config_recipes: config.recipes.clone(),
            tables: Tables::default(),
            names: Vec::new(),
        };
        let lines: Vec<&[Vec<String>]> = parsed.iter().map(|p| &p.lines[..]).collect();
        let (templates, shapes) = Templates::fit(&lines, config);
        featurizer.templates = templates;
        let shapes: Vec<(Option<usize>, Vec<String>)> =
            shapes.into_iter().map(|shape| featurizer.templates.keep(shape)).collect();
        // Answers are read only from here on, into `answers` and `targets`, kept apart
        // from the prepared inputs.
        let answers: Vec<Option<String>> = train.iter().map(|s| format.and_then(|f| answer_text(s, f))).collect();
        let options = parsed.iter().flat_map(|p| &p.options);
        featurizer.texts =
            Vocab::new(options.clone().map(|o| o.text.as_str()).chain(answers.iter().flatten().map(String::as_str)));
        featurizer.terms = Vocab::new(options.flat_map(|o| &o.terms).map(String::as_str));
        let kept = shapes.iter().filter(|(template, _)| template.is_some());
        featurizer.slot_values =
            Vocab::new(kept.flat_map(|(_, slots)| slots.iter().take(config.max_slots)).map(String::as_str));
        featurizer.questions = Vocab::new(parsed.iter().map(|p| p.question.as_str()));
        let featurizer_recipe_specs: Vec<usize> = featurizer.recipes.iter().map(|(r, _)| r.stats.len()).collect();
        for (i, (_, vocabs)) in featurizer.recipes.iter_mut().enumerate() {
            let n_specs = featurizer_recipe_specs[i];
            let r = featurizer.recipe_index[i];
            *vocabs = (0..n_specs)
                .map(|k| {
                    Vocab::new(parsed.iter().flat_map(|p| p.recipes[r].keys[k].iter().flatten().map(String::as_str)))
                })
                .collect();
        }

        let targets = featurizer.targets(train, &answers);
        let prepared: Vec<Keyed<'a>> =
            parsed.par_iter().zip(shapes).map(|(p, shape)| featurizer.key(p, shape)).collect();
        let rows: Vec<(&Keyed<'_>, Option<&Target>)> =
            prepared.iter().zip(targets.iter().map(Option::as_ref)).collect();
        featurizer.tables = featurizer.tables(&rows, 1.0);

        // Names come from the same code path as values, run on an empty question, so
        // the two can never disagree on order or count.
        let empty = BTreeMap::new();
        let blank = Inputs { question: "", context: None, options: &[], question_type: None, meta: &empty };
        let blank = Parsed::of(blank, &featurizer.config_recipes);
        let mut names = Names(Vec::new());
        featurizer.columns(&featurizer.tables, &featurizer.key(&blank, (None, Vec::new())), &mut names);
        featurizer.names = names.0;
        (featurizer, prepared, targets)
    }

    /// What each training answer contributes to statistics; `answers[i]` is `train[i]`'s
    /// [`answer_text`].
    fn targets(&self, train: &[&Sample], answers: &[Option<String>]) -> Vec<Option<Target>> {
        train
            .iter()
            .zip(answers)
            .map(|(s, text)| self.format.and_then(|f| self.target(s, f, text.as_deref())))
            .collect()
    }

    /// Each of `parsed` with its strings replaced by their training ids.
    fn keyed<'a>(&self, parsed: &[&'a Parsed<'a>]) -> Vec<Keyed<'a>> {
        parsed.par_iter().map(|p| self.key(p, self.templates.shape(&p.lines))).collect()
    }

    /// What a training answer contributes to statistics; `None` when it does not parse.
    /// `text` is the sample's [`answer_text`], interned in `self.texts`.
    fn target(&self, s: &Sample, format: AnswerFormat, text: Option<&str>) -> Option<Target> {
        let text_id = || text.and_then(|t| self.texts.id(t));
        match format {
            AnswerFormat::YesNo => match tokens(&s.answer).first().map(String::as_str) {
                Some("yes") => Some(Target::Yes(true)),
                Some("no") => Some(Target::Yes(false)),
                _ => None,
            },
            AnswerFormat::MultipleChoice => {
                Some(Target::Gold { text: text_id()?, number: leading_number(text.unwrap_or_default()) })
            }
            AnswerFormat::Numeric => {
                let v = leading_number(&s.answer);
                v.is_finite().then_some(Target::Number(v))
            }
            AnswerFormat::Open => Some(Target::Text(text_id()?)),
        }
    }

    /// Answer statistics and key counts of `rows`, counts multiplied by `count_scale`.
    fn tables(&self, rows: &[(&Keyed<'_>, Option<&Target>)], count_scale: f64) -> Tables {
        let mut tables = Tables {
            count_scale,
            options: vec![(0, 0); self.texts.len()],
            terms: vec![(0, 0); self.terms.len()],
            templates: Vec::new(),
            slots: BTreeMap::new(),
            questions: BTreeMap::new(),
            recipes: Vec::new(),
        };
        let mut recipes: Vec<Vec<SpecTally>> = self
            .recipes
            .iter()
            .map(|(r, vocabs)| {
                r.stats
                    .iter()
                    .zip(vocabs)
                    .map(|(spec, vocab)| {
                        if spec.per_option {
                            SpecTally::Options(vec![(0, 0); vocab.len()])
                        } else {
                            SpecTally::Question(BTreeMap::new())
                        }
                    })
                    .collect()
            })
            .collect();
        let mut templates = vec![Tally::default(); self.templates.ids.len()];
        let mut slots: BTreeMap<(usize, usize, usize), Tally> = BTreeMap::new();
        let mut questions: BTreeMap<usize, Tally> = BTreeMap::new();
        for &(p, target) in rows {
            let offered: BTreeSet<usize> = p.options.iter().filter_map(|o| o.text).collect();
            for text in offered {
                tables.options[text].1 += 1;
            }
            if let Some(&Target::Gold { text: gold, .. }) = target {
                tables.options[gold].0 += 1;
                for o in &p.options {
                    for &term in o.terms.iter().flatten() {
                        tables.terms[term].0 += usize::from(o.text == Some(gold));
                        tables.terms[term].1 += 1;
                    }
                }
            }
            if let Some(id) = p.template {
                templates[id].add(target);
                for (k, value) in p.slots.iter().enumerate() {
                    if let Some(value) = value {
                        slots.entry((id, k, *value)).or_default().add(target);
                    }
                }
            }
            if let Some(q) = p.question {
                questions.entry(q).or_default().add(target);
            }
            for (tallies, row) in recipes.iter_mut().zip(&p.recipes) {
                for (tally, keys) in tallies.iter_mut().zip(&row.keys) {
                    match tally {
                        SpecTally::Question(map) => {
                            if let Some(&Some(Some(key))) = keys.first() {
                                map.entry(key).or_default().add(target);
                            }
                        }
                        SpecTally::Options(counts) => {
                            let seen = |j: usize| keys.get(j).copied().flatten().flatten();
                            let offered: BTreeSet<usize> = (0..keys.len()).filter_map(seen).collect();
                            let gold: BTreeSet<usize> = match target {
                                Some(&Target::Gold { text, .. }) => (0..p.options.len())
                                    .filter(|&j| p.options[j].text == Some(text))
                                    .filter_map(seen)
                                    .collect(),
                                _ => BTreeSet::new(),
                            };
                            for key in offered {
                                counts[key].1 += 1;
                            }
                            for key in gold {
                                counts[key].0 += 1;
                            }
                        }
                    }
                }
            }
        }
        tables.recipes = recipes
            .into_iter()
            .map(|tallies| {
                tallies
                    .into_iter()
                    .map(|t| match t {
                        SpecTally::Question(map) => {
                            SpecTable::Question(map.into_iter().map(|(k, t)| (k, t.finish())).collect())
                        }
                        SpecTally::Options(counts) => SpecTable::Options(counts),
                    })
                    .collect()
            })
            .collect();
        tables.templates = templates.into_iter().map(Tally::finish).collect();
        tables.slots = slots.into_iter().map(|(key, t)| (key, t.finish())).collect();
        // Only repeated questions: a question asked once is its own key and tells a
        // held-out question nothing.
        tables.questions = questions
            .into_iter()
            .filter(|(_, t)| t.count >= self.min_question_count)
            .map(|(key, t)| (key, t.finish()))
            .collect();
        tables
    }

    /// A parsed question with its strings replaced by their training ids (`None` =
    /// unseen); `shape` is its kept template id and slot values.
    fn key<'a>(&self, parsed: &'a Parsed<'a>, (template, slots): (Option<usize>, Vec<String>)) -> Keyed<'a> {
        let options = parsed
            .options
            .iter()
            .map(|o| OptionText {
                chars: o.chars,
                number: o.number,
                overlap: o.overlap,
                in_question: o.in_question,
                text: self.texts.id(&o.text),
                terms: o.terms.iter().map(|t| self.terms.id(t)).collect(),
            })
            .collect();
        let n_slots = slots.len();
        let slots = match template {
            Some(_) => slots.iter().take(self.slot_prefixes.len()).map(|v| self.slot_values.id(v)).collect(),
            None => Vec::new(),
        };
        Keyed {
            parsed,
            options,
            template,
            n_slots,
            slots,
            question: self.questions.id(&parsed.question),
            recipes: self
                .recipe_index
                .iter()
                .zip(&self.recipes)
                .map(|(&r, (_, vocabs))| {
                    let row = &parsed.recipes[r];
                    RecipeRow {
                        applies: row.applies,
                        keys: row
                            .keys
                            .iter()
                            .zip(vocabs)
                            .map(|(keys, vocab)| keys.iter().map(|k| k.as_ref().map(|k| vocab.id(k))).collect())
                            .collect(),
                        values: row.values.clone(),
                        flags: row.flags.clone(),
                    }
                })
                .collect(),
        }
    }

    /// The rows of `prepared`, row-major.
    fn rows(&self, tables: &Tables, prepared: &[Keyed<'_>]) -> Vec<f64> {
        let mut data = vec![0.0; prepared.len() * self.names.len()];
        self.rows_into(tables, prepared, &mut data);
        data
    }

    /// [`Featurizer::rows`] into `out`, which has room for exactly those rows.
    fn rows_into(&self, tables: &Tables, prepared: &[Keyed<'_>], out: &mut [f64]) {
        let width = self.names.len();
        if width == 0 {
            return;
        }
        out.par_chunks_mut(width)
            .zip(prepared)
            .for_each(|(row, p)| self.columns(tables, p, &mut Values(row.iter_mut())));
    }

    /// Emits every column of one prepared question, in column order.
    fn columns(&self, tables: &Tables, p: &Keyed<'_>, out: &mut impl Sink) {
        let nan = f64::NAN;
        let flag = |b: bool| f64::from(u8::from(b));
        let count = |c: usize| c as f64 * tables.count_scale;
        out.put(|| "q.chars".into(), p.parsed.chars as f64);
        out.put(|| "q.words".into(), p.parsed.words as f64);
        out.put(|| "q.numbers".into(), p.parsed.numbers as f64);
        out.put(|| "q.options".into(), p.options.len() as f64);
        out.put(|| "q.context_chars".into(), p.parsed.context_chars as f64);

        let longest = p.options.iter().map(|o| o.chars).max();
        let shortest = p.options.iter().map(|o| o.chars).min();
        for j in 0..self.n_options {
            let o = p.options.get(j);
            let value = |f: &dyn Fn(&OptionText<Option<usize>>) -> f64| o.map_or(nan, f);
            let counts = o.map(|o| o.text.map_or((0, 0), |t| tables.options[t]));
            out.put(|| format!("opt{j}.chars"), value(&|o| o.chars as f64));
            // 0 = longest: the number of options strictly longer than this one.
            let rank = |o: &OptionText<_>| p.options.iter().filter(|other| other.chars > o.chars).count() as f64;
            out.put(|| format!("opt{j}.len_rank"), value(&rank));
            out.put(|| format!("opt{j}.is_longest"), value(&|o| flag(Some(o.chars) == longest)));
            out.put(|| format!("opt{j}.is_shortest"), value(&|o| flag(Some(o.chars) == shortest)));
            // How many times longer than the longest other option (a gold padded to stand
            // out is far from 1; options of similar length are near it).
            let len_ratio = |o: &OptionText<Option<usize>>| {
                let other = p.options.iter().enumerate().filter(|(k, _)| *k != j).map(|(_, x)| x.chars).max();
                other.map_or(nan, |c| (o.chars as f64 + 1.0) / (c as f64 + 1.0))
            };
            out.put(|| format!("opt{j}.len_ratio"), value(&len_ratio));
            out.put(|| format!("opt{j}.q_overlap"), value(&|o| o.overlap));
            out.put(|| format!("opt{j}.in_question"), value(&|o| flag(o.in_question)));
            out.put(|| format!("opt{j}.number"), value(&|o| o.number));
            out.put(|| format!("opt{j}.gold_count"), counts.map_or(nan, |c| count(c.0)));
            out.put(|| format!("opt{j}.seen_count"), counts.map_or(nan, |c| count(c.1)));
            let ratio = counts.and_then(|(gold, seen)| (seen > 0).then(|| gold as f64 / seen as f64));
            out.put(|| format!("opt{j}.gold_ratio"), ratio.unwrap_or(nan));
            // A lexical prior: how often the words that set this option apart were on
            // the gold side in training (mean over the terms seen there).
            let term_gold = |o: &OptionText<Option<usize>>| {
                let seen = o.terms.iter().flatten().map(|&t| tables.terms[t]).filter(|&(_, seen)| seen > 0);
                let (sum, n) = seen.fold((0.0, 0), |(sum, n), (gold, seen)| (sum + gold as f64 / seen as f64, n + 1));
                if n == 0 { nan } else { sum / f64::from(n) }
            };
            out.put(|| format!("opt{j}.term_gold"), value(&term_gold));
            // The strongest single term: the highest smoothed gold share, (gold + 1) /
            // (seen + 2), of the option's terms seen in training. A word that only gold
            // options carry stands out here however many other words dilute the mean.
            let term_gold_max = |o: &OptionText<Option<usize>>| {
                let seen = o.terms.iter().flatten().map(|&t| tables.terms[t]).filter(|&(_, seen)| seen > 0);
                seen.map(|(gold, seen)| (gold as f64 + 1.0) / (seen as f64 + 2.0)).fold(nan, f64::max)
            };
            out.put(|| format!("opt{j}.term_gold_max"), value(&term_gold_max));
        }

        out.put(|| "cat.question_type".into(), self.question_types.code(p.parsed.question_type));
        for (key, values) in &self.meta {
            out.put(|| format!("meta.{key}"), values.code(p.parsed.meta.get(key).map(String::as_str)));
        }

        out.put(|| "template.id".into(), p.template.map_or(-1.0, |id| id as f64));
        out.put(|| "template.slots".into(), p.n_slots as f64);
        self.stat_columns("template", tables, p.template.map(|id| &tables.templates[id]), p, out);
        for (k, prefix) in self.slot_prefixes.iter().enumerate() {
            let value = p.template.zip(p.slots.get(k).copied().flatten());
            let stat = value.and_then(|(id, value)| tables.slots.get(&(id, k, value)));
            self.stat_columns(prefix, tables, stat, p, out);
        }
        self.stat_columns("question", tables, p.question.and_then(|q| tables.questions.get(&q)), p, out);
        for (r, (recipe, _)) in self.recipes.iter().enumerate() {
            let row = p.recipes.get(r);
            for (k, spec) in recipe.stats.iter().enumerate() {
                let prefix = || format!("recipe.{}.{}", recipe.name, spec.label());
                let keys = row.map_or(&[][..], |row| &row.keys[k][..]);
                let values = row.map_or(&[][..], |row| &row.values[k][..]);
                match &tables.recipes[r][k] {
                    SpecTable::Question(stats) => {
                        let key = keys.first().copied().flatten();
                        let value = values.first().copied().unwrap_or(f64::NAN);
                        self.recipe_columns(&prefix, spec, tables, stats, key, value, p, out);
                    }
                    SpecTable::Options(counts) => {
                        self.recipe_option_columns(&prefix, spec, tables, counts, keys, values, out);
                    }
                }
            }
            for (k, keyword) in recipe.keywords.iter().enumerate() {
                let flag = row.filter(|row| row.applies).map_or(f64::NAN, |row| f64::from(u8::from(row.flags[k])));
                out.put(|| format!("recipe.{}.kw.{}", recipe.name, keyword.text.replace(' ', "_")), flag);
            }
        }
    }

    /// The columns of one question-level recipe statistic. `key`: `None` when the
    /// recipe extracted nothing (NaN count), `Some(None)` for a value unseen in training
    /// (count 0, NaN statistics).
    #[allow(clippy::too_many_arguments)]
    fn recipe_columns(
        &self,
        prefix: &dyn Fn() -> String,
        spec: &StatSpec,
        tables: &Tables,
        stats: &BTreeMap<usize, Stat>,
        key: Option<Option<usize>>,
        value: f64,
        p: &Keyed<'_>,
        out: &mut impl Sink,
    ) {
        let nan = f64::NAN;
        let stat = key.flatten().and_then(|id| stats.get(&id));
        let numeric = matches!(self.format, Some(AnswerFormat::Numeric | AnswerFormat::MultipleChoice));
        for &family in &spec.families {
            match family {
                Family::Count => {
                    let count = key.map_or(nan, |_| stat.map_or(0.0, |s| s.count as f64 * tables.count_scale));
                    out.put(|| format!("{}.count", prefix()), count);
                }
                Family::Moments if numeric => {
                    out.put(|| format!("{}.mean", prefix()), stat.map_or(nan, |s| s.raw.mean()));
                    out.put(|| format!("{}.std", prefix()), stat.map_or(nan, |s| s.raw.std()));
                }
                Family::LogMoments if numeric => {
                    out.put(|| format!("{}.log_mean", prefix()), stat.map_or(nan, |s| s.log.mean()));
                    out.put(|| format!("{}.log_std", prefix()), stat.map_or(nan, |s| s.log.std()));
                }
                Family::Gold | Family::LogDistance => {
                    self.key_answer_columns(&prefix(), family, stat, p, out);
                }
                Family::Value => out.put(|| format!("{}.value", prefix()), value),
                Family::Moments | Family::LogMoments => {}
            }
        }
    }

    /// Gold frequency or log-distance columns of a key's answer statistics, by format.
    fn key_answer_columns(
        &self,
        prefix: &str,
        family: Family,
        stat: Option<&Stat>,
        p: &Keyed<'_>,
        out: &mut impl Sink,
    ) {
        let nan = f64::NAN;
        match (family, self.format) {
            (Family::Gold, Some(AnswerFormat::YesNo)) => {
                out.put(|| format!("{prefix}.p_yes"), stat.map_or(nan, |s| s.p_yes));
            }
            (Family::Gold, Some(AnswerFormat::Open)) => {
                out.put(|| format!("{prefix}.top_share"), stat.map_or(nan, Stat::top_share));
            }
            (Family::Gold, Some(AnswerFormat::MultipleChoice)) => {
                for j in 0..self.n_options {
                    let pair = stat.zip(p.options.get(j));
                    out.put(|| format!("{prefix}.opt{j}.p_gold"), pair.map_or(nan, |(s, o)| s.share(o.text)));
                    let is_mode = |(s, o): (&Stat, &OptionText<Option<usize>>)| {
                        f64::from(u8::from(s.mode.is_some() && s.mode == o.text))
                    };
                    out.put(|| format!("{prefix}.opt{j}.is_mode"), pair.map_or(nan, is_mode));
                }
            }
            (Family::LogDistance, Some(AnswerFormat::MultipleChoice)) => {
                for j in 0..self.n_options {
                    let pair = stat.zip(p.options.get(j));
                    let dist = |(s, o): (&Stat, &OptionText<Option<usize>>)| (log1p10(o.number) - s.log.mean()).abs();
                    out.put(|| format!("{prefix}.opt{j}.log_dist"), pair.map_or(nan, dist));
                }
            }
            _ => {}
        }
    }

    /// The columns of one option-level recipe statistic, per option position.
    #[allow(clippy::too_many_arguments)]
    fn recipe_option_columns(
        &self,
        prefix: &dyn Fn() -> String,
        spec: &StatSpec,
        tables: &Tables,
        counts: &[(usize, usize)],
        keys: &[Option<Option<usize>>],
        values: &[f64],
        out: &mut impl Sink,
    ) {
        let nan = f64::NAN;
        for j in 0..self.n_options {
            let key = keys.get(j).copied().flatten();
            let (gold, seen) =
                key.map_or((nan, nan), |k| k.map_or((0.0, 0.0), |id| (counts[id].0 as f64, counts[id].1 as f64)));
            for &family in &spec.families {
                match family {
                    Family::Count => out.put(|| format!("{}.opt{j}.seen_count", prefix()), seen * tables.count_scale),
                    Family::Gold if self.format == Some(AnswerFormat::MultipleChoice) => {
                        out.put(|| format!("{}.opt{j}.gold_count", prefix()), gold * tables.count_scale);
                        let ratio = if seen > 0.0 { gold / seen } else { nan };
                        out.put(|| format!("{}.opt{j}.gold_ratio", prefix()), ratio);
                    }
                    Family::Value => {
                        out.put(|| format!("{}.opt{j}.value", prefix()), values.get(j).copied().unwrap_or(nan));
                    }
                    _ => {}
                }
            }
        }
    }

    /// The count and answer statistics of one key (`None` = unseen in training).
    fn stat_columns(&self, prefix: &str, tables: &Tables, stat: Option<&Stat>, p: &Keyed<'_>, out: &mut impl Sink) {
        let nan = f64::NAN;
        let flag = |b: bool| f64::from(u8::from(b));
        out.put(|| format!("{prefix}.count"), stat.map_or(0.0, |s| s.count as f64 * tables.count_scale));
        match self.format {
            Some(AnswerFormat::YesNo) => out.put(|| format!("{prefix}.p_yes"), stat.map_or(nan, |s| s.p_yes)),
            Some(AnswerFormat::MultipleChoice) => {
                for j in 0..self.n_options {
                    let pair = stat.zip(p.options.get(j));
                    out.put(|| format!("{prefix}.opt{j}.p_gold"), pair.map_or(nan, |(s, o)| s.share(o.text)));
                    let is_mode =
                        |(s, o): (&Stat, &OptionText<Option<usize>>)| flag(s.mode.is_some() && s.mode == o.text);
                    out.put(|| format!("{prefix}.opt{j}.is_mode"), pair.map_or(nan, is_mode));
                    // How far this option's number is from the numbers that were gold
                    // under this key (the release's "log-distance to the object's mean").
                    let dist = |(s, o): (&Stat, &OptionText<Option<usize>>)| (log1p10(o.number) - s.log.mean()).abs();
                    out.put(|| format!("{prefix}.opt{j}.log_dist"), pair.map_or(nan, dist));
                }
            }
            Some(AnswerFormat::Numeric) => {
                out.put(|| format!("{prefix}.mean"), stat.map_or(nan, |s| s.raw.mean()));
                out.put(|| format!("{prefix}.std"), stat.map_or(nan, |s| s.raw.std()));
                out.put(|| format!("{prefix}.log_mean"), stat.map_or(nan, |s| s.log.mean()));
                out.put(|| format!("{prefix}.log_std"), stat.map_or(nan, |s| s.log.std()));
            }
            Some(AnswerFormat::Open) => out.put(|| format!("{prefix}.top_share"), stat.map_or(nan, Stat::top_share)),
            None => {}
        }
    }
}

/// The hash maps of the featurizer: foldhash with a fixed seed. Keys are short strings
/// and small ids; SipHash, the standard library's default, cost a tenth of featurizing.
/// One fold's featurizer, fitted once and then applied to relabelled copies of its
/// training questions: everything that does not read an answer (templates,
/// vocabularies, each question's keys, for the training and the held-out questions) is
/// kept, and [`Relabel::matrices`] rebuilds only the answer statistics and the rows.
/// What the label-permutation null refits for every permutation of the golds.
///
/// The relabelled answers must be among the texts the fit saw: the options of the
/// training questions and their answers, which holds for golds permuted among the
/// training questions of one fold (multiple choice: a gold is one of the question's
/// options; other formats: the fold's answers, in another order). Then the matrices are
/// those [`Featurizer::fit_transform_parsed`] and [`Featurizer::transform_parsed`] give
/// for the relabelled questions; an answer outside those texts adds nothing to the
/// statistics.
pub struct Relabel<'a> {
    featurizer: Featurizer,
    train: Vec<Keyed<'a>>,
    test: Vec<Keyed<'a>>,
    config: FeatureConfig,
}

impl<'a> Relabel<'a> {
    /// Fits on `train` (`parsed_train[i]` its `i`-th question parsed), to score
    /// `parsed_test`.
    pub fn new(
        train: &[&Sample],
        parsed_train: &[&'a Parsed<'a>],
        parsed_test: &[&'a Parsed<'a>],
        config: &FeatureConfig,
    ) -> Relabel<'a> {
        let (featurizer, train, _) = Featurizer::fit_prepared(train, parsed_train, config);
        let test = featurizer.keyed(parsed_test);
        Relabel { featurizer, train, test, config: config.clone() }
    }

    /// Column names, as the fitted featurizer's.
    pub fn names(&self) -> &[String] {
        self.featurizer.names()
    }

    /// The training and held-out matrices with the answers of `train`: the training
    /// questions of the fit, in the same order, relabelled.
    pub fn matrices(&self, train: &[&Sample]) -> (Matrix, Matrix) {
        assert_eq!(train.len(), self.train.len(), "the training questions of the fit, relabelled");
        let f = &self.featurizer;
        let answers: Vec<Option<String>> = train.iter().map(|s| f.format.and_then(|f| answer_text(s, f))).collect();
        let targets = f.targets(train, &answers);
        let rows: Vec<(&Keyed<'_>, Option<&Target>)> =
            self.train.iter().zip(targets.iter().map(Option::as_ref)).collect();
        let tables = f.tables(&rows, 1.0);
        let x_train = f.training_rows(&self.train, &targets, &tables, &self.config);
        let x_test = Matrix::new(self.test.len(), f.names.len(), f.rows(&tables, &self.test));
        (x_train, x_test)
    }
}

type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;
type FastSet<K> = HashSet<K, foldhash::fast::FixedState>;
