//! The featurizer's unit tests.

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
    assert!(f.names().iter().enumerate().filter(|(_, n)| n.starts_with("opt2.")).all(|(j, _)| x.get(0, j).is_nan()));
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
    for (i, (object, answer)) in
        [("chair", "2"), ("chair", "4"), ("chair", "4"), ("chair", "6"), ("lamp", "1"), ("lamp", "1"), ("sofa", "x")]
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
    use crate::recipes::{ExtractSource, Family as F, RecipeSource, StatSource};
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
    let train: Vec<Sample> = (0..10).map(|i| mc(&i.to_string(), q, &["the door", "the window", "3 m"], 0)).collect();
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
        let recipe_moved = f
            .names()
            .iter()
            .enumerate()
            .filter(|(_, n)| n.starts_with("recipe."))
            .any(|(j, _)| (0..before.n_rows()).any(|i| before.get(i, j).to_bits() != moved.get(i, j).to_bits()));
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

/// A relabelled fit is a fresh fit of the relabelled questions, in every format and
/// with recipes: on the real answers and on the training answers reversed (each
/// answer moved to another training question, the fold's answers kept), the matrices
/// are those of `fit_transform_parsed` and `transform_parsed`, bit for bit; and they
/// move with the labels.
#[test]
fn a_relabelled_fit_is_a_fresh_fit_of_the_new_labels() {
    for (train, held_out) in every_format() {
        let format = train[0].answer_format;
        let config = recipe_config(None);
        let (parsed_train, parsed_test) = (parse(&refs(&train), &config), parse(&refs(&held_out), &config));
        let (pt, ph): (Vec<&Parsed<'_>>, Vec<&Parsed<'_>>) =
            (parsed_train.iter().collect(), parsed_test.iter().collect());
        let relabel = Relabel::new(&refs(&train), &pt, &ph, &config);
        let reversed: Vec<Sample> = train
            .iter()
            .zip(train.iter().rev())
            .map(|(s, from)| {
                let mut s = s.clone();
                match (format, from.answer_index) {
                    (AnswerFormat::MultipleChoice, Some(k)) => {
                        s.answer_index = Some(k);
                        s.answer = s.options[k as usize].clone();
                    }
                    _ => s.answer = from.answer.clone(),
                }
                s
            })
            .collect();
        let mut seen = Vec::new();
        for labels in [&train, &reversed] {
            let (f, x_train) = Featurizer::fit_transform_parsed(&refs(labels), &pt, &config);
            let x_test = f.transform_parsed(&ph);
            let (r_train, r_test) = relabel.matrices(&refs(labels));
            assert_eq!(relabel.names(), f.names(), "{format:?}");
            assert_eq!(bits(&r_train), bits(&x_train), "{format:?}: training rows");
            assert_eq!(bits(&r_test), bits(&x_test), "{format:?}: held-out rows");
            seen.push(bits(&r_test));
        }
        assert_ne!(seen[0], seen[1], "{format:?}: the held-out rows do not move with the training labels");
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
