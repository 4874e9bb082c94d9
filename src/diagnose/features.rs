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
//!   length rank, longest/shortest flags, word overlap with the question, leading
//!   number, how often that exact text was gold / offered in training and the ratio,
//!   and `term_gold`, a lexical prior: how often the words and word pairs that set the
//!   option apart from the others were on the gold side in training;
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
//! Leak discipline (`tst-protocol-notes.md`, "Features"): every statistic comes from
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

/// Settings of the featurizer; [`Default`] is what TsT-RF uses without configuration.
#[derive(Debug, Clone, PartialEq)]
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
        let n = train.len();
        let k = config.cross_fit.min(n);
        let width = featurizer.names.len();
        let data = if k < 2 {
            featurizer.rows(&featurizer.tables, &prepared)
        } else {
            let blocks: Vec<Vec<f64>> = (0..k)
                .into_par_iter()
                .map(|block| {
                    let rows = block * n / k..(block + 1) * n / k;
                    let rest: Vec<(&Keyed<'_>, Option<&Target>)> =
                        (0..n).filter(|i| !rows.contains(i)).map(|i| (&prepared[i], targets[i].as_ref())).collect();
                    let tables = featurizer.tables(&rest, n as f64 / rest.len() as f64);
                    featurizer.rows(&tables, &prepared[rows])
                })
                .collect();
            blocks.concat()
        };
        (featurizer, Matrix::new(n, width, data))
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
        let prepared: Vec<Keyed<'_>> = parsed.par_iter().map(|p| self.key(p, self.templates.shape(&p.lines))).collect();
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

        let targets: Vec<Option<Target>> = train
            .iter()
            .zip(&answers)
            .map(|(s, text)| format.and_then(|f| featurizer.target(s, f, text.as_deref())))
            .collect();
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
        let width = self.names.len();
        let mut data = vec![0.0; prepared.len() * width];
        data.par_chunks_mut(width)
            .zip(prepared)
            .for_each(|(row, p)| self.columns(tables, p, &mut Values(row.iter_mut())));
        data
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
            out.put(|| format!("opt{j}.q_overlap"), value(&|o| o.overlap));
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

/// Everything learned from training answers, and the key counts next to it.
#[derive(Debug, Clone, Default)]
struct Tables {
    /// Multiplies every count: 1 for the whole training set, `n / rows` for the rows a
    /// cross-fitting block is featurized with, so counts keep one scale.
    count_scale: f64,
    /// Per text id: (times the gold option, times offered).
    options: Vec<(usize, usize)>,
    /// Per term id: (times in the gold option, times in any option).
    terms: Vec<(usize, usize)>,
    /// Per kept template id.
    templates: Vec<Stat>,
    /// Per (kept template id, slot index, slot value id).
    slots: BTreeMap<(usize, usize, usize), Stat>,
    /// Per question id, for questions asked at least `min_template_count` times.
    questions: BTreeMap<usize, Stat>,
    /// Per active recipe, per statistic.
    recipes: Vec<Vec<SpecTable>>,
}

/// A recipe statistic's training tables.
#[derive(Debug, Clone)]
enum SpecTable {
    /// Per key id.
    Question(BTreeMap<usize, Stat>),
    /// Per key id: (times in the gold option, times offered).
    Options(Vec<(usize, usize)>),
}

enum SpecTally {
    Question(BTreeMap<usize, Tally>),
    Options(Vec<(usize, usize)>),
}

/// The only fields of a sample the featurizer reads outside `fit`'s targets: no
/// answer, no answer index, no images.
#[derive(Debug, Clone, Copy)]
struct Inputs<'a> {
    question: &'a str,
    context: Option<&'a str>,
    options: &'a [String],
    question_type: Option<&'a str>,
    meta: &'a BTreeMap<String, String>,
}

impl<'a> Inputs<'a> {
    fn of(s: &'a Sample) -> Inputs<'a> {
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
struct Keyed<'a> {
    parsed: &'a Parsed<'a>,
    options: Vec<OptionText<Option<usize>>>,
    /// Kept template id.
    template: Option<usize>,
    /// Slots of the question's template, kept or not.
    n_slots: usize,
    /// Slot values of a kept template, at most `max_slots`.
    slots: Vec<Option<usize>>,
    /// The whole tokenized question.
    question: Option<usize>,
    /// Per active recipe.
    recipes: Vec<RecipeRow<Option<usize>>>,
}

/// What one recipe read from one question.
struct RecipeRow<K> {
    /// The recipe applies to the question's type.
    applies: bool,
    /// Per statistic: the key (question-level: one entry; option-level: one per
    /// option); `None` = not extracted.
    keys: Vec<Vec<Option<K>>>,
    /// Per statistic asking for `value`: the key read as a number, like `keys`.
    values: Vec<Vec<f64>>,
    /// Per keyword.
    flags: Vec<bool>,
}

/// One recipe's fields and keys of one question, as strings.
fn recipe_row(recipe: &Recipe, question_type: Option<&str>, texts: &Texts<'_>) -> RecipeRow<String> {
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
    lines: Vec<Vec<String>>,
    chars: usize,
    words: usize,
    numbers: usize,
    context_chars: usize,
    question_type: Option<&'a str>,
    meta: &'a BTreeMap<String, String>,
    options: Vec<OptionText<String>>,
    /// The whole tokenized question.
    question: String,
    /// Per recipe of the config, in its order.
    recipes: Vec<RecipeRow<String>>,
}

/// Every sample parsed for `config` (in parallel, in input order). Reads each
/// sample only through `Inputs`, never its answer.
pub fn parse<'a>(samples: &[&'a Sample], config: &FeatureConfig) -> Vec<Parsed<'a>> {
    samples.par_iter().map(|s| Parsed::of(Inputs::of(s), &config.recipes)).collect()
}

impl<'a> Parsed<'a> {
    fn of(x: Inputs<'a>, recipes: &[Recipe]) -> Parsed<'a> {
        let lines = lines_of(x.question);
        let words: BTreeSet<&String> = lines.iter().flatten().filter(|t| is_word(t)).collect();
        let option_words: Vec<Vec<String>> =
            x.options.iter().map(|o| tokens(o).into_iter().filter(|t| is_word(t)).collect()).collect();
        let option_terms: Vec<BTreeSet<String>> = option_words.iter().map(|w| terms(w)).collect();
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

struct OptionText<K> {
    chars: usize,
    number: f64,
    /// Jaccard similarity of the option's and the question's word sets.
    overlap: f64,
    /// Normalized text.
    text: K,
    /// Words and adjacent word pairs of this option that no other option of the
    /// question has: what tells the options apart.
    terms: Vec<K>,
}

/// Receives columns in order: values when transforming, names when fitting. Names are
/// built lazily so transforming never formats a string.
trait Sink {
    fn put(&mut self, name: impl FnOnce() -> String, value: f64);
}

/// Writes values into one row's slots.
struct Values<'r, I: Iterator<Item = &'r mut f64>>(I);

impl<'r, I: Iterator<Item = &'r mut f64>> Sink for Values<'r, I> {
    fn put(&mut self, _name: impl FnOnce() -> String, value: f64) {
        *self.0.next().expect("a row has one slot per name") = value;
    }
}

struct Names(Vec<String>);

impl Sink for Names {
    fn put(&mut self, name: impl FnOnce() -> String, _value: f64) {
        self.0.push(name());
    }
}

/// The hash maps of the featurizer: foldhash with a fixed seed. Keys are short strings
/// and small ids; SipHash, the standard library's default, cost a tenth of featurizing.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;
type FastSet<K> = HashSet<K, foldhash::fast::FixedState>;

/// Distinct training strings, each encoded by its rank in sorted order. Only looked
/// up, never iterated, so the hash map's order cannot reach a matrix.
#[derive(Debug, Clone, Default)]
struct Vocab(FastMap<String, usize>);

impl Vocab {
    fn new<'s>(items: impl Iterator<Item = &'s str>) -> Vocab {
        // Most items repeat (option texts, terms): dedup by hash, then sort the few
        // distinct ones for their ranks.
        let distinct: FastSet<&str> = items.collect();
        let mut sorted: Vec<&str> = distinct.into_iter().collect();
        sorted.sort_unstable();
        Vocab(sorted.into_iter().enumerate().map(|(id, s)| (s.to_string(), id)).collect())
    }

    fn id(&self, item: &str) -> Option<usize> {
        self.0.get(item).copied()
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    /// Label encoding: the id, -1 for a value unseen in training, NaN for no value.
    fn code(&self, value: Option<&str>) -> f64 {
        value.map_or(f64::NAN, |v| self.id(v).map_or(-1.0, |id| id as f64))
    }
}

/// What a training answer contributes to statistics, by answer format.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    Yes(bool),
    /// Multiple choice: the gold option's text id and leading number.
    Gold {
        text: usize,
        number: f64,
    },
    Number(f64),
    /// Open: the answer's text id.
    Text(usize),
}

/// The normalized text a training answer is counted under: the gold option's text for
/// multiple choice (the answer when the index is missing or out of range), the answer
/// for open questions, none otherwise.
fn answer_text(s: &Sample, format: AnswerFormat) -> Option<String> {
    match format {
        AnswerFormat::MultipleChoice => {
            let by_index = s.answer_index.and_then(|i| usize::try_from(i).ok()).and_then(|i| s.options.get(i));
            Some(normalize(by_index.unwrap_or(&s.answer)))
        }
        AnswerFormat::Open => Some(normalize(&s.answer)),
        AnswerFormat::YesNo | AnswerFormat::Numeric => None,
    }
}

/// Running answer statistics of one key (template, slot value or question).
#[derive(Debug, Clone, Default)]
struct Tally {
    count: usize,
    yes: usize,
    no: usize,
    texts: BTreeMap<usize, usize>,
    raw: Moments,
    log: Moments,
}

impl Tally {
    fn add(&mut self, target: Option<&Target>) {
        self.count += 1;
        match target {
            Some(Target::Yes(true)) => self.yes += 1,
            Some(Target::Yes(false)) => self.no += 1,
            Some(&Target::Gold { text, number }) => {
                self.raw.add(number);
                self.log.add(log1p10(number));
                *self.texts.entry(text).or_default() += 1;
            }
            Some(&Target::Number(v)) => {
                self.raw.add(v);
                self.log.add(log1p10(v));
            }
            Some(&Target::Text(text)) => *self.texts.entry(text).or_default() += 1,
            None => {}
        }
    }

    fn finish(self) -> Stat {
        // Most frequent text; ties go to the smallest id (= smallest text), so the
        // choice is stable.
        let mode = self.texts.iter().fold(None, |best: Option<(usize, usize)>, (&t, &n)| match best {
            Some((_, m)) if m >= n => best,
            _ => Some((t, n)),
        });
        let yes_no = self.yes + self.no;
        Stat {
            count: self.count,
            p_yes: if yes_no > 0 { self.yes as f64 / yes_no as f64 } else { f64::NAN },
            answered: self.texts.values().sum(),
            texts: self.texts,
            mode: mode.map(|(t, _)| t),
            mode_count: mode.map_or(0, |(_, n)| n),
            raw: self.raw,
            log: self.log,
        }
    }
}

/// Final answer statistics of one key.
#[derive(Debug, Clone)]
struct Stat {
    count: usize,
    p_yes: f64,
    texts: BTreeMap<usize, usize>,
    answered: usize,
    mode: Option<usize>,
    mode_count: usize,
    raw: Moments,
    log: Moments,
}

impl Stat {
    /// Share of this key's answered training questions whose answer was `text`
    /// (a text unseen in training: 0).
    fn share(&self, text: Option<usize>) -> f64 {
        if self.answered == 0 {
            return f64::NAN;
        }
        text.and_then(|t| self.texts.get(&t)).copied().unwrap_or(0) as f64 / self.answered as f64
    }

    /// Share of the most common answer.
    fn top_share(&self) -> f64 {
        if self.answered == 0 { f64::NAN } else { self.mode_count as f64 / self.answered as f64 }
    }
}

/// Mean and sample standard deviation by Welford's update; NaN values are skipped.
#[derive(Debug, Clone, Copy, Default)]
struct Moments {
    n: usize,
    mean: f64,
    m2: f64,
}

impl Moments {
    fn add(&mut self, v: f64) {
        if v.is_nan() {
            return;
        }
        self.n += 1;
        let delta = v - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (v - self.mean);
    }

    fn mean(&self) -> f64 {
        if self.n == 0 { f64::NAN } else { self.mean }
    }

    /// Sample standard deviation (pandas' `std`); 0 for a single value, as the
    /// release fills it.
    fn std(&self) -> f64 {
        match self.n {
            0 => f64::NAN,
            1 => 0.0,
            n => (self.m2 / (n - 1) as f64).sqrt(),
        }
    }
}

/// Template discovery, fit on training questions.
///
/// A token is *frame* when it occurs in at least `max(min_template_count,
/// frame_fraction * n)` training questions, otherwise *slot*; consecutive slot tokens
/// merge into one slot. Each line of a question gets a skeleton (frame tokens with
/// `<slot>` markers); a line whose skeleton occurs in fewer than `min_template_count`
/// questions (a passage, a list of names) becomes one slot as a whole, so a long
/// vignette does not make every question's template unique. A question's template is
/// its lines' skeletons; templates seen fewer than `min_template_count` times get no id.
/// An object name frequent enough to be frame ("person" in POPE) makes its questions a
/// template of their own, whose statistics then carry the object's prior.
///
/// The sets are only looked up, never iterated.
#[derive(Debug, Clone, Default)]
struct Templates {
    frame_tokens: FastSet<String>,
    frame_lines: FastSet<String>,
    ids: Vocab,
}

/// A question's template text and slot values (see [`Templates::template`]).
type Shape = (String, Vec<String>);

/// Marks a slot in a skeleton; tokens never contain `<` next to letters, so no real
/// token equals it.
const SLOT: &str = "<slot>";
/// Separates lines in a template or whole-question key; tokens never contain whitespace.
const LINE_BREAK: &str = "\n";

impl Templates {
    /// The templates of `questions`, and each question's shape under them.
    fn fit(questions: &[&[Vec<String>]], config: &FeatureConfig) -> (Templates, Vec<Shape>) {
        let min_count = config.min_template_count.max(1);
        let fraction_count = (config.frame_fraction * questions.len() as f64).ceil() as usize;
        let frame_tokens = frequent(
            questions.iter().map(|q| q.iter().flatten().map(String::as_str).collect()),
            min_count.max(fraction_count),
        );
        let mut templates =
            Templates { frame_tokens: frame_tokens.into_iter().map(str::to_string).collect(), ..Templates::default() };
        // Each line's skeleton is made once; the shapes below reuse them.
        let skeletons: Vec<Vec<(String, Vec<String>)>> =
            questions.par_iter().map(|q| q.iter().map(|line| templates.skeleton(line)).collect()).collect();
        let frame_lines = frequent(skeletons.iter().map(|q| q.iter().map(|(s, _)| s.as_str()).collect()), min_count);
        templates.frame_lines = frame_lines.into_iter().map(str::to_string).collect();
        let shapes: Vec<Shape> =
            questions.par_iter().zip(skeletons).map(|(q, skeletons)| templates.assemble(q, skeletons)).collect();
        let kept = frequent(shapes.iter().map(|(t, _)| vec![t.as_str()]), min_count);
        templates.ids = Vocab::new(kept.into_iter());
        (templates, shapes)
    }

    /// A line's skeleton and its slot values.
    fn skeleton(&self, line: &[String]) -> (String, Vec<String>) {
        let mut parts: Vec<&str> = Vec::new();
        let mut slots: Vec<String> = Vec::new();
        let mut open: Vec<&str> = Vec::new();
        for t in line {
            if self.frame_tokens.contains(t) {
                if !open.is_empty() {
                    parts.push(SLOT);
                    slots.push(open.join(" "));
                    open.clear();
                }
                parts.push(t);
            } else {
                open.push(t);
            }
        }
        if !open.is_empty() {
            parts.push(SLOT);
            slots.push(open.join(" "));
        }
        (parts.join(" "), slots)
    }

    /// A question's template text and slot values.
    fn template(&self, question: &[Vec<String>]) -> Shape {
        self.assemble(question, question.iter().map(|line| self.skeleton(line)).collect())
    }

    /// [`Templates::template`] of a question whose lines' skeletons are `skeletons`.
    fn assemble(&self, question: &[Vec<String>], skeletons: Vec<(String, Vec<String>)>) -> Shape {
        let mut parts: Vec<String> = Vec::new();
        let mut slots = Vec::new();
        for (line, (skeleton, line_slots)) in question.iter().zip(skeletons) {
            if !parts.is_empty() {
                parts.push(LINE_BREAK.into());
            }
            if self.frame_lines.contains(&skeleton) {
                parts.push(skeleton);
                slots.extend(line_slots);
            } else {
                parts.push(SLOT.into());
                slots.push(line.join(" "));
            }
        }
        (parts.join(" "), slots)
    }

    /// A question's kept template id and its slot values.
    fn shape(&self, question: &[Vec<String>]) -> (Option<usize>, Vec<String>) {
        self.keep(self.template(question))
    }

    /// The kept template id of a [`Shape`], and its slot values.
    fn keep(&self, (template, slots): Shape) -> (Option<usize>, Vec<String>) {
        (self.ids.id(&template), slots)
    }
}

/// Items that occur in at least `min_count` of the given lists (an item counts once
/// per list), in no particular order.
fn frequent<'s>(lists: impl Iterator<Item = Vec<&'s str>>, min_count: usize) -> Vec<&'s str> {
    let mut counts: FastMap<&str, usize> = FastMap::default();
    for mut list in lists {
        list.sort_unstable();
        list.dedup();
        for item in list {
            *counts.entry(item).or_default() += 1;
        }
    }
    counts.into_iter().filter(|&(_, n)| n >= min_count).map(|(item, _)| item).collect()
}

/// Label encoders of the meta keys picked by `config` (see [`FeatureConfig::meta_fields`]).
fn meta_encoders(train: &[&Sample], config: &FeatureConfig) -> Vec<(String, Vocab)> {
    let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for s in train {
        for (k, v) in &s.meta {
            values.entry(k).or_default().insert(v);
        }
    }
    let keys: Vec<String> = match &config.meta_fields {
        Some(fields) => {
            let mut seen = BTreeSet::new();
            fields.iter().filter(|f| seen.insert(f.as_str())).cloned().collect()
        }
        None => values.iter().filter(|(_, v)| v.len() <= config.max_meta_values).map(|(k, _)| k.to_string()).collect(),
    };
    keys.into_iter()
        .map(|k| {
            let vocab = Vocab::new(values.get(k.as_str()).into_iter().flatten().copied());
            (k, vocab)
        })
        .collect()
}

/// The question's non-empty lines, each as lowercase word and punctuation tokens.
fn lines_of(text: &str) -> Vec<Vec<String>> {
    text.lines().map(tokens).filter(|line| !line.is_empty()).collect()
}

/// The key of a whole question: its tokens, lines separated by a line-break token.
fn whole_key(question: &[Vec<String>]) -> String {
    question.iter().map(|line| line.join(" ")).collect::<Vec<_>>().join(&format!(" {LINE_BREAK} "))
}

/// Lowercase tokens: runs of letters and digits (keeping `3.5`, `1,000` and `don't`
/// whole) and every other non-space character on its own.
fn tokens(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let prev = if i > 0 { chars[i - 1] } else { ' ' };
        let next = chars.get(i + 1).copied().unwrap_or(' ');
        let inner_number = matches!(c, '.' | ',') && prev.is_ascii_digit() && next.is_ascii_digit();
        let inner_apostrophe = matches!(c, '\'' | '’') && prev.is_alphanumeric() && next.is_alphanumeric();
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if !word.is_empty() && (inner_number || inner_apostrophe) {
            word.push(if inner_apostrophe { '\'' } else { c });
        } else {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

fn is_word(token: &str) -> bool {
    token.chars().any(char::is_alphanumeric)
}

/// Numbers in a question: tokens that start with a digit (`3`, `2.5`, `1990s`, `2nd`).
fn is_number(token: &str) -> bool {
    token.starts_with(|c: char| c.is_ascii_digit())
}

/// The words and adjacent word pairs of a text.
fn terms(words: &[String]) -> BTreeSet<String> {
    let pairs = words.windows(2).map(|w| format!("{} {}", w[0], w[1]));
    words.iter().cloned().chain(pairs).collect()
}

/// Lowercase, trimmed, inner whitespace collapsed: the key of an option or answer text.
fn normalize(text: &str) -> String {
    text.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>().join(" ")
}

/// The number a text starts with (`"2.5 m"` → 2.5, `"-3"` → -3, `"1,200"` → 1200),
/// NaN when it does not start with one.
fn leading_number(text: &str) -> f64 {
    let t = text.trim_start();
    let (sign, rest) = match t.strip_prefix(['-', '−']) {
        Some(rest) => (-1.0, rest),
        None => (1.0, t.strip_prefix('+').unwrap_or(t)),
    };
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',')).unwrap_or(rest.len());
    let digits: String = rest[..end].chars().filter(|&c| c != ',').collect();
    let digits = digits.trim_end_matches('.');
    if !digits.contains(|c: char| c.is_ascii_digit()) {
        return f64::NAN;
    }
    digits.parse::<f64>().map_or(f64::NAN, |v| sign * v)
}

/// `log10(v + 1)`, the release's scale for counts and sizes; NaN at or below -1.
fn log1p10(v: f64) -> f64 {
    if v > -1.0 { (v + 1.0).log10() } else { f64::NAN }
}

fn jaccard(a: &BTreeSet<&String>, b: &BTreeSet<&String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 { 0.0 } else { a.intersection(b).count() as f64 / union as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(id: &str, question: &str, answer: &str, format: AnswerFormat) -> Sample {
        let mut s = Sample::new(id, question, answer);
        s.answer_format = format;
        s
    }

    fn mc(id: &str, question: &str, options: &[&str], gold: usize) -> Sample {
        let mut s = sample(id, question, options[gold], AnswerFormat::MultipleChoice);
        s.options = options.iter().map(ToString::to_string).collect();
        s.answer_index = Some(gold as i32);
        s
    }

    fn refs(samples: &[Sample]) -> Vec<&Sample> {
        samples.iter().collect()
    }

    fn col(f: &Featurizer, m: &Matrix, row: usize, name: &str) -> f64 {
        let j = f.names().iter().position(|n| n == name).unwrap_or_else(|| panic!("no column {name}"));
        m.get(row, j)
    }

    fn bits(m: &Matrix) -> Vec<u64> {
        (0..m.n_rows()).flat_map(|i| m.row(i).iter().map(|v| v.to_bits()).collect::<Vec<_>>()).collect()
    }

    /// POPE-like: 40 rare objects asked 4 times each (slots) plus a frequent one
    /// ("person", frame). Objects `obj0..obj19` are always there, the rest never.
    fn pope_like() -> Vec<Sample> {
        let mut out = Vec::new();
        for o in 0..40 {
            for r in 0..4 {
                let answer = if o < 20 { "yes" } else { "no" };
                let q = format!("Is there a obj{o} in the image?");
                out.push(sample(&format!("{o}-{r}"), &q, answer, AnswerFormat::YesNo));
            }
        }
        for r in 0..20usize {
            let answer = if r.is_multiple_of(4) { "yes" } else { "no" };
            out.push(sample(&format!("p-{r}"), "Is there a person in the image?", answer, AnswerFormat::YesNo));
        }
        out
    }

    #[test]
    fn tokens_keep_numbers_and_contractions() {
        let t = tokens("Don't count 1,000 Cats, or 3.5 dogs?");
        assert_eq!(t, ["don't", "count", "1,000", "cats", ",", "or", "3.5", "dogs", "?"]);
        assert_eq!(tokens("a\u{2019}s -- x"), ["a's", "-", "-", "x"]);
    }

    #[test]
    fn leading_numbers() {
        assert_eq!(leading_number("2.5 m"), 2.5);
        assert_eq!(leading_number(" -3 apples"), -3.0);
        assert_eq!(leading_number("1,200 km"), 1200.0);
        assert_eq!(leading_number("7."), 7.0);
        assert!(leading_number("about 3").is_nan());
        assert!(leading_number(".").is_nan());
        assert!(leading_number("").is_nan());
    }

    #[test]
    fn slots_carry_the_object_prior() {
        let train = pope_like();
        let f = Featurizer::fit(&refs(&train), &FeatureConfig::default());
        let held_out = [
            sample("h0", "Is there a obj3 in the image?", "no", AnswerFormat::YesNo),
            sample("h1", "Is there a obj30 in the image?", "yes", AnswerFormat::YesNo),
            sample("h2", "Is there a zebra in the image?", "yes", AnswerFormat::YesNo),
            sample("h3", "Is there a person in the image?", "yes", AnswerFormat::YesNo),
            sample("h4", "What colour is the sky?", "yes", AnswerFormat::YesNo),
        ];
        let x = f.transform(&refs(&held_out));
        // One template with a slot for the rare objects, its own for "person".
        let slotted = col(&f, &x, 0, "template.id");
        assert!(slotted >= 0.0);
        assert_eq!(col(&f, &x, 2, "template.id"), slotted);
        assert!(col(&f, &x, 3, "template.id") >= 0.0 && col(&f, &x, 3, "template.id") != slotted);
        assert_eq!(col(&f, &x, 4, "template.id"), -1.0);
        assert_eq!(col(&f, &x, 0, "template.count"), 160.0);
        assert_eq!(col(&f, &x, 0, "template.p_yes"), 0.5);
        assert_eq!(col(&f, &x, 0, "template.slots"), 1.0);
        assert_eq!((col(&f, &x, 0, "slot1.count"), col(&f, &x, 0, "slot1.p_yes")), (4.0, 1.0));
        assert_eq!((col(&f, &x, 1, "slot1.count"), col(&f, &x, 1, "slot1.p_yes")), (4.0, 0.0));
        assert_eq!(col(&f, &x, 2, "slot1.count"), 0.0);
        assert!(col(&f, &x, 2, "slot1.p_yes").is_nan());
        // "person" is frame: its questions are a template, and a repeated question.
        assert_eq!((col(&f, &x, 3, "template.count"), col(&f, &x, 3, "template.p_yes")), (20.0, 0.25));
        assert_eq!((col(&f, &x, 3, "question.count"), col(&f, &x, 3, "question.p_yes")), (20.0, 0.25));
        // A question asked 4 < min_template_count times gets no whole-question statistics.
        assert_eq!(col(&f, &x, 0, "question.count"), 0.0);
        assert!(col(&f, &x, 0, "question.p_yes").is_nan());
        assert_eq!(col(&f, &x, 0, "q.words"), 7.0);
        assert_eq!(col(&f, &x, 0, "q.chars"), 29.0);
    }

    #[test]
    fn passages_become_one_slot() {
        // Passages of varied shapes: frame tokens ("the", "of") in rare skeletons.
        let passage = |i: usize| format!("w{i} the v{i} {}", "of ".repeat(i % 6 + 1));
        let train: Vec<Sample> = (0..12)
            .map(|i| mc(&i.to_string(), &format!("Which word is a noun?\n{}", passage(i)), &["a", "b"], 0))
            .collect();
        let f = Featurizer::fit(&refs(&train), &FeatureConfig::default());
        let held_out = [mc("h", &format!("Which word is a noun?\n{}", passage(12 + 6)), &["a", "b"], 1)];
        let x = f.transform(&refs(&held_out));
        assert!(col(&f, &x, 0, "template.id") >= 0.0);
        assert_eq!(col(&f, &x, 0, "template.count"), 12.0);
        assert_eq!(col(&f, &x, 0, "template.slots"), 1.0);
        assert_eq!(col(&f, &x, 0, "template.opt0.p_gold"), 1.0);
        assert_eq!(col(&f, &x, 0, "template.opt1.is_mode"), 0.0);
    }

    #[test]
    fn option_columns() {
        let mut train = Vec::new();
        for i in 0..6 {
            let gold = usize::from(i >= 4);
            train.push(mc(&i.to_string(), "What colour is the big red bus?", &["red", "dark blue", "2 m"], gold));
        }
        let f = Featurizer::fit(&refs(&train), &FeatureConfig::default());
        let held_out = [mc("h", "Which is red?", &["dark blue", "red"], 0)];
        let x = f.transform(&refs(&held_out));
        assert_eq!(col(&f, &x, 0, "q.options"), 2.0);
        assert_eq!(col(&f, &x, 0, "opt0.chars"), 9.0);
        assert_eq!(col(&f, &x, 0, "opt0.len_rank"), 0.0);
        assert_eq!(col(&f, &x, 0, "opt1.len_rank"), 1.0);
        assert_eq!((col(&f, &x, 0, "opt0.is_longest"), col(&f, &x, 0, "opt0.is_shortest")), (1.0, 0.0));
        assert_eq!((col(&f, &x, 0, "opt1.is_longest"), col(&f, &x, 0, "opt1.is_shortest")), (0.0, 1.0));
        assert_eq!(col(&f, &x, 0, "opt1.q_overlap"), 1.0 / 3.0);
        assert!(col(&f, &x, 0, "opt0.number").is_nan());
        // "red" was gold 4 of 6 times, "dark blue" 2 of 6.
        assert_eq!(col(&f, &x, 0, "opt1.gold_count"), 4.0);
        assert_eq!(col(&f, &x, 0, "opt1.seen_count"), 6.0);
        assert_eq!(col(&f, &x, 0, "opt0.gold_ratio"), 2.0 / 6.0);
        // No third option: NaN across the position's columns.
        assert!(
            f.names().iter().enumerate().filter(|(_, n)| n.starts_with("opt2.")).all(|(j, _)| x.get(0, j).is_nan())
        );
        // Terms apart from the other options: "dark", "blue", "dark blue" were gold 2 of 6 times.
        assert_eq!(col(&f, &x, 0, "opt0.term_gold"), 2.0 / 6.0);
        let x = f.transform(&refs(&[mc("n", "Size?", &["2 m", "zzz"], 0)]));
        assert_eq!(col(&f, &x, 0, "opt0.number"), 2.0);
        assert_eq!(col(&f, &x, 0, "opt0.gold_count"), 0.0);
        assert_eq!(col(&f, &x, 0, "opt0.seen_count"), 6.0);
        assert_eq!(col(&f, &x, 0, "opt1.seen_count"), 0.0);
        assert!(col(&f, &x, 0, "opt1.gold_ratio").is_nan());
        assert!(col(&f, &x, 0, "opt1.term_gold").is_nan());
    }

    #[test]
    fn numeric_slots_get_moments() {
        let mut train = Vec::new();
        for (i, (object, answer)) in [
            ("chair", "2"),
            ("chair", "4"),
            ("chair", "4"),
            ("chair", "6"),
            ("lamp", "1"),
            ("lamp", "1"),
            ("sofa", "x"),
        ]
        .into_iter()
        .enumerate()
        {
            train.push(sample(
                &i.to_string(),
                &format!("How many {object}(s) are in this room?"),
                answer,
                AnswerFormat::Numeric,
            ));
        }
        let f = Featurizer::fit(&refs(&train), &FeatureConfig::default());
        let held_out = [
            sample("a", "How many chair(s) are in this room?", "0", AnswerFormat::Numeric),
            sample("b", "How many lamp(s) are in this room?", "0", AnswerFormat::Numeric),
            sample("c", "How many sofa(s) are in this room?", "0", AnswerFormat::Numeric),
        ];
        let x = f.transform(&refs(&held_out));
        assert_eq!(col(&f, &x, 0, "template.count"), 7.0);
        assert_eq!((col(&f, &x, 0, "slot1.count"), col(&f, &x, 0, "slot1.mean")), (4.0, 4.0));
        assert!((col(&f, &x, 0, "slot1.std") - (8.0f64 / 3.0).sqrt()).abs() < 1e-12);
        let logs = [3.0f64.log10(), 5.0f64.log10(), 5.0f64.log10(), 7.0f64.log10()];
        assert!((col(&f, &x, 0, "slot1.log_mean") - logs.iter().sum::<f64>() / 4.0).abs() < 1e-12);
        assert_eq!((col(&f, &x, 1, "slot1.mean"), col(&f, &x, 1, "slot1.std")), (1.0, 0.0));
        // "x" is no number: the key counts, its statistics stay empty.
        assert_eq!(col(&f, &x, 2, "slot1.count"), 1.0);
        assert!(col(&f, &x, 2, "slot1.mean").is_nan());
    }

    /// A recipe asking for every family: a question-level field with every statistic,
    /// a pair, an option-level field, and keywords.
    fn recipe_config(types: Option<Vec<String>>) -> FeatureConfig {
        use crate::diagnose::recipes::{ExtractSource, Family as F, RecipeSource, StatSource};
        let stat = |key: &[&str], families: &[F]| StatSource {
            key: key.iter().map(|k| k.to_string()).collect(),
            ordered: false,
            families: families.to_vec(),
        };
        let extract = |from: &str, regex: &str| ExtractSource { from: Some(from.into()), regex: regex.into() };
        let wire = RecipeSource {
            name: "all".into(),
            types,
            extract: vec![
                extract("question", r"(?:the|a|many) (?<object>[a-z]+)\b"),
                extract("question", r"^(?<qword>\w+)"),
                extract("options", r"^(?:the )?(?<thing>[a-z0-9]+)$"),
            ],
            stats: vec![
                stat(&["object"], &[F::Count, F::Moments, F::LogMoments, F::Gold, F::LogDistance, F::Value]),
                stat(&["object", "qword"], &[F::Count, F::Gold]),
                stat(&["thing"], &[F::Count, F::Gold, F::Value]),
            ],
            keywords: vec!["closest".into(), "in this room".into()],
        };
        FeatureConfig { recipes: super::super::recipes::compile(&[wire]).unwrap(), ..FeatureConfig::default() }
    }

    #[test]
    fn recipe_moments_per_extracted_object() {
        let mut train = Vec::new();
        for (i, (object, answer)) in
            [("chair", "2"), ("chair", "4"), ("chair", "6"), ("lamp", "1"), ("sofa", "x")].into_iter().enumerate()
        {
            let q = format!("How many {object}(s) are in this room?");
            train.push(sample(&i.to_string(), &q, answer, AnswerFormat::Numeric));
        }
        let config = recipe_config(None);
        let f = Featurizer::fit(&refs(&train), &config);
        let held_out = [
            sample("a", "How many chair(s) are in this room?", "0", AnswerFormat::Numeric),
            sample("b", "How many stool(s) are in this room?", "0", AnswerFormat::Numeric),
            sample("c", "Count them.", "0", AnswerFormat::Numeric),
        ];
        let x = f.transform(&refs(&held_out));
        let c = |row, name: &str| col(&f, &x, row, &format!("recipe.all.{name}"));
        assert_eq!((c(0, "object.count"), c(0, "object.mean"), c(0, "object.std")), (3.0, 4.0, 2.0));
        let logs = [3.0f64.log10(), 5.0f64.log10(), 7.0f64.log10()];
        assert!((c(0, "object.log_mean") - logs.iter().sum::<f64>() / 3.0).abs() < 1e-12);
        assert_eq!(c(0, "object+qword.count"), 3.0);
        assert_eq!(c(0, "kw.in_this_room"), 1.0);
        assert_eq!(c(0, "kw.closest"), 0.0);
        // An object unseen in training counts 0; a question the expression misses has no key.
        assert_eq!(c(1, "object.count"), 0.0);
        assert!(c(1, "object.mean").is_nan());
        assert!(c(2, "object.count").is_nan());
        assert_eq!(c(2, "kw.in_this_room"), 0.0);
        // Numeric answers have no options and no gold frequency: those columns do not exist.
        assert!(!f.names().iter().any(|n| n.contains(".p_gold") || n.contains(".opt0.")));
    }

    #[test]
    fn recipe_option_fields_carry_the_gold_rate() {
        let q = "Which is closest to the bed?";
        let train: Vec<Sample> =
            (0..10).map(|i| mc(&i.to_string(), q, &["the door", "the window", "3 m"], 0)).collect();
        let f = Featurizer::fit(&refs(&train), &recipe_config(None));
        let held_out = [mc("h", q, &["3", "a window", "the door"], 1)];
        let x = f.transform(&refs(&held_out));
        let c = |name: &str| col(&f, &x, 0, &format!("recipe.all.{name}"));
        assert_eq!((c("thing.opt0.seen_count"), c("thing.opt0.value")), (0.0, 3.0));
        assert!(c("thing.opt0.gold_ratio").is_nan(), "\"3\" was never offered in training");
        assert!(c("thing.opt1.seen_count").is_nan(), "\"a window\" does not match the expression");
        assert_eq!((c("thing.opt2.gold_count"), c("thing.opt2.gold_ratio")), (10.0, 1.0));
        assert_eq!((c("object.opt2.p_gold"), c("object.opt2.is_mode")), (1.0, 1.0));
        assert!(c("object.opt0.log_dist").is_nan(), "no gold answer of this object was a number");
        assert_eq!(c("kw.closest"), 1.0);
    }

    #[test]
    fn recipes_apply_to_their_types_only() {
        let mut train: Vec<Sample> = every_format().remove(0).0;
        for (i, s) in train.iter_mut().enumerate() {
            s.question_type = Some(if i % 2 == 0 { "near" } else { "far" }.into());
        }
        let config = recipe_config(Some(vec!["near".into()]));
        let f = Featurizer::fit(&refs(&train), &config);
        let x = f.transform(&refs(&train));
        assert_eq!(col(&f, &x, 0, "recipe.all.kw.closest"), 1.0);
        assert!(col(&f, &x, 1, "recipe.all.kw.closest").is_nan());
        assert!(col(&f, &x, 1, "recipe.all.object.count").is_nan());
        // A model none of whose questions the recipe reads gets no recipe columns.
        let far: Vec<&Sample> = train.iter().filter(|s| s.question_type.as_deref() == Some("far")).collect();
        assert!(!Featurizer::fit(&far, &config).names().iter().any(|n| n.starts_with("recipe.")));
    }

    #[test]
    fn open_answers_get_the_top_share() {
        let train: Vec<Sample> = ["cat", "cat", "dog", "Cat ", "bird"]
            .iter()
            .enumerate()
            .map(|(i, a)| sample(&i.to_string(), "What animal is this?", a, AnswerFormat::Open))
            .collect();
        let f = Featurizer::fit(&refs(&train), &FeatureConfig::default());
        let x = f.transform(&refs(&[sample("h", "What animal is this?", "?", AnswerFormat::Open)]));
        assert_eq!(col(&f, &x, 0, "template.top_share"), 0.6);
        assert_eq!(col(&f, &x, 0, "question.top_share"), 0.6);
    }

    #[test]
    fn categoricals_encode_training_values() {
        let mut train = Vec::new();
        for (i, organ) in ["HEAD", "CHEST", "HEAD", "CHEST"].into_iter().enumerate() {
            let mut s = sample(&i.to_string(), "Is this normal?", "yes", AnswerFormat::YesNo);
            s.question_type = Some("organ".into());
            s.meta.insert("organ".into(), organ.into());
            s.meta.insert("id_like".into(), i.to_string());
            train.push(s);
        }
        // By default no meta field is a feature: a field may carry the answer.
        let none = Featurizer::fit(&refs(&train), &FeatureConfig::default());
        assert!(!none.names().iter().any(|n| n.starts_with("meta.")), "{:?}", none.names());
        // Automatic selection (no list): fields with at most `max_meta_values` values.
        let config = FeatureConfig { max_meta_values: 3, meta_fields: None, ..FeatureConfig::default() };
        let f = Featurizer::fit(&refs(&train), &config);
        assert!(f.names().contains(&"meta.organ".to_string()));
        assert!(!f.names().contains(&"meta.id_like".to_string()), "4 distinct values > max_meta_values");
        let mut unseen = sample("h", "Is this normal?", "no", AnswerFormat::YesNo);
        unseen.meta.insert("organ".into(), "ABDOMEN".into());
        unseen.question_type = Some("other".into());
        let mut known = unseen.clone();
        known.meta.insert("organ".into(), "HEAD".into());
        known.question_type = Some("organ".into());
        let bare = sample("b", "Is this normal?", "no", AnswerFormat::YesNo);
        let x = f.transform(&[&unseen, &known, &bare]);
        assert_eq!((col(&f, &x, 0, "meta.organ"), col(&f, &x, 0, "cat.question_type")), (-1.0, -1.0));
        assert_eq!((col(&f, &x, 1, "meta.organ"), col(&f, &x, 1, "cat.question_type")), (1.0, 0.0));
        assert!(col(&f, &x, 2, "meta.organ").is_nan() && col(&f, &x, 2, "cat.question_type").is_nan());
        let picked = FeatureConfig { meta_fields: Some(vec!["id_like".into(), "missing".into()]), ..config };
        let f = Featurizer::fit(&refs(&train), &picked);
        let metas: Vec<&String> = f.names().iter().filter(|n| n.starts_with("meta.")).collect();
        assert_eq!(metas, ["meta.id_like", "meta.missing"]);
        let x = f.transform(&[&train[2]]);
        assert_eq!(col(&f, &x, 0, "meta.id_like"), 2.0);
        assert!(col(&f, &x, 0, "meta.missing").is_nan());
    }

    /// Training and held-out samples of every format, sharing templates and options.
    fn every_format() -> Vec<(Vec<Sample>, Vec<Sample>)> {
        let objects = ["chair", "table", "lamp", "sofa", "bed", "tv"];
        let make = |format: AnswerFormat, i: usize| {
            let object = objects[i % objects.len()];
            match format {
                AnswerFormat::MultipleChoice => {
                    let q = format!("Which is closest to the {object}?");
                    mc(&i.to_string(), &q, &["the door", "the window", "3 m"], i % 3)
                }
                AnswerFormat::YesNo => {
                    let a = if i.is_multiple_of(3) { "yes" } else { "no" };
                    sample(&i.to_string(), &format!("Is there a {object} in the image?"), a, format)
                }
                AnswerFormat::Numeric => {
                    let q = format!("How many {object}(s) are in this room?");
                    sample(&i.to_string(), &q, &(i % 5).to_string(), format)
                }
                AnswerFormat::Open => {
                    let q = format!("What colour is the {object}?");
                    sample(&i.to_string(), &q, ["red", "blue", "red", "green"][i % 4], format)
                }
            }
        };
        AnswerFormat::ALL
            .iter()
            .map(|&format| ((0..60).map(|i| make(format, i)).collect(), (60..80).map(|i| make(format, i)).collect()))
            .collect()
    }

    fn perturbed(s: &Sample) -> Sample {
        let mut c = s.clone();
        match s.answer_format {
            AnswerFormat::MultipleChoice => {
                let i = (s.answer_index.unwrap() as usize + 1) % s.options.len();
                c.answer_index = Some(i as i32);
                c.answer = s.options[i].clone();
            }
            AnswerFormat::YesNo => c.answer = if s.answer == "yes" { "no".into() } else { "yes".into() },
            AnswerFormat::Numeric => c.answer = "12345".into(),
            AnswerFormat::Open => c.answer = "a brand new answer".into(),
        }
        c
    }

    /// The leak check as a property over every feature family, recipes included: fit on
    /// training rows, change only held-out answers, and no column may move; change the
    /// training answers and the answer statistics do move (automatic and recipe columns
    /// alike), so the check can fail.
    #[test]
    fn held_out_answers_never_change_a_row() {
        for (train, held_out) in every_format() {
            let format = train[0].answer_format;
            let config = recipe_config(None);
            let f = Featurizer::fit(&refs(&train), &config);
            assert!(f.names().iter().any(|n| n.starts_with("recipe.all.object.")), "{format:?}");
            let before = f.transform(&refs(&held_out));
            let changed: Vec<Sample> = held_out.iter().map(perturbed).collect();
            let after = f.transform(&refs(&changed));
            for (j, name) in f.names().iter().enumerate() {
                let column = |m: &Matrix| (0..m.n_rows()).map(|i| m.get(i, j).to_bits()).collect::<Vec<_>>();
                assert_eq!(column(&before), column(&after), "{format:?}: column {name} reads held-out answers");
            }
            let retrained: Vec<Sample> = train.iter().map(perturbed).collect();
            let g = Featurizer::fit(&refs(&retrained), &config);
            let moved = g.transform(&refs(&held_out));
            let recipe_moved =
                f.names().iter().enumerate().filter(|(_, n)| n.starts_with("recipe.")).any(|(j, _)| {
                    (0..before.n_rows()).any(|i| before.get(i, j).to_bits() != moved.get(i, j).to_bits())
                });
            assert!(recipe_moved, "{format:?}: no recipe statistic depends on training answers");
            let defaults = Featurizer::fit(&refs(&train), &FeatureConfig::default());
            let retrained_defaults = Featurizer::fit(&refs(&retrained), &FeatureConfig::default());
            assert_ne!(
                bits(&defaults.transform(&refs(&held_out))),
                bits(&retrained_defaults.transform(&refs(&held_out))),
                "{format:?}"
            );
        }
    }

    #[test]
    fn cross_fitted_rows_never_see_their_own_answer() {
        for (train, _) in every_format() {
            let config = FeatureConfig::default();
            let (_, before) = Featurizer::fit_transform(&refs(&train), &config);
            let mut changed = train.clone();
            changed[0] = perturbed(&train[0]);
            let (_, after) = Featurizer::fit_transform(&refs(&changed), &config);
            // Row 0's block (rows 0..12 of 60) is featurized from the other blocks only.
            let width = before.n_cols();
            assert_eq!(bits(&before)[..12 * width], bits(&after)[..12 * width], "{:?}", train[0].answer_format);
            assert_ne!(bits(&before), bits(&after), "{:?}", train[0].answer_format);
        }
    }

    #[test]
    fn in_sample_fit_transform_is_fit_then_transform() {
        let (train, _) = every_format().remove(0);
        let config = FeatureConfig { cross_fit: 0, ..FeatureConfig::default() };
        let (f, x) = Featurizer::fit_transform(&refs(&train), &config);
        assert_eq!(bits(&x), bits(&f.transform(&refs(&train))));
        assert_eq!(bits(&x), bits(&Featurizer::fit(&refs(&train), &config).transform(&refs(&train))));
    }

    #[test]
    fn deterministic_with_stable_unique_names() {
        for (train, held_out) in every_format() {
            let config = FeatureConfig::default();
            let (f, x) = Featurizer::fit_transform(&refs(&train), &config);
            let (g, y) = Featurizer::fit_transform(&refs(&train), &config);
            assert_eq!(f.names(), g.names());
            assert_eq!(bits(&x), bits(&y));
            assert_eq!(bits(&f.transform(&refs(&held_out))), bits(&g.transform(&refs(&held_out))));
            let unique: BTreeSet<&String> = f.names().iter().collect();
            assert_eq!(unique.len(), f.names().len());
            assert_eq!(x.n_cols(), f.names().len());
        }
        let (train, _) = every_format().remove(0);
        let f = Featurizer::fit(&refs(&train), &FeatureConfig::default());
        for name in ["q.chars", "opt2.len_rank", "opt0.term_gold", "slot1.opt0.p_gold", "question.opt2.log_dist"] {
            assert!(f.names().iter().any(|n| n == name), "{name}");
        }
    }

    #[test]
    fn fits_on_nothing() {
        let f = Featurizer::fit(&[], &FeatureConfig::default());
        let s = sample("a", "Is it?", "yes", AnswerFormat::YesNo);
        let x = f.transform(&[&s]);
        assert_eq!(x.n_cols(), f.names().len());
        assert_eq!(col(&f, &x, 0, "template.id"), -1.0);
        let (_, x) = Featurizer::fit_transform(&[], &FeatureConfig::default());
        assert_eq!(x.n_rows(), 0);
    }
}
