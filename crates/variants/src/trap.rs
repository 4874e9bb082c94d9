//! The trap family (medical stress tests T3-T5, IllusionBench's traps): the
//! item looks the same, the answer logic changes.
//!
//! - `option_shuffle` (T3): a seeded permutation other than the identity;
//!   the gold index follows the gold option;
//! - `circular@k` (CircularEval, MMBench): the options rotated by k, one kind
//!   per rotation k < n; the gold index follows the gold option;
//! - `unknown_option` (T4a): one distractor, drawn at random, becomes
//!   "Unknown"; the gold is unchanged;
//! - `distractor_swap@k` (T4b): k distractors become options of unrelated
//!   questions of the same benchmark — a different question type, or for
//!   untyped benchmarks a different question text, and no option in common —
//!   never duplicating an option;
//! - `visual_substitution` (T5): the image of another sample whose gold is
//!   one of this sample's distractors; that distractor becomes the gold.
//!   Partners are tried strongest first, and `variant_params.match` says
//!   which was found: `options` (same question, same option set: the
//!   partner's image decides between these very options), `question` (same
//!   question text), `question_type` (multiple choice only: the
//!   minimal rule, weakest). A yes/no partner must ask the same question:
//!   "no" to another question says nothing about this one;
//! - `gold_removed`: the gold option becomes "None of the other options",
//!   which is the new gold.
//!
//! Multiple-choice kinds skip samples that are not multiple choice, that
//! have fewer than two options, whose source repeats an option, or whose
//! options are drawn in the image (each option its own letter).

use std::collections::{HashMap, HashSet};

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::prompt::{NONE_OF_THE_OTHERS, UNKNOWN};
use super::{Ctx, Kind, Skip, derive, finish, norm, option_key};
use crate::sample::{AnswerFormat, Sample};
use crate::seed::rng_for;

fn rng(ctx: &Ctx<'_>, kind: Kind, s: &Sample) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(rng_for(ctx.seed, &kind.stage(), &s.id))
}

/// The gold index of a multiple-choice sample a trap can be built on.
fn mc_gold(s: &Sample) -> Result<usize, Skip> {
    if s.answer_format != AnswerFormat::MultipleChoice {
        return Err("not multiple choice");
    }
    if s.options.len() < 2 {
        return Err("fewer than 2 options");
    }
    let gold = s
        .answer_index
        .and_then(|i| usize::try_from(i).ok())
        .filter(|&i| i < s.options.len())
        .ok_or("no gold option index")?;
    // Options drawn in the image are known by their letters only: moving or
    // replacing them would move nothing the model sees.
    if s.options.iter().enumerate().all(|(i, o)| *o == crate::sample::option_letter(i)) {
        return Err("options drawn in the image (known by letter only)");
    }
    let distinct: HashSet<String> = s.options.iter().map(|o| option_key(o)).collect();
    if distinct.len() != s.options.len() {
        return Err("the source repeats an option");
    }
    Ok(gold)
}

pub fn option_shuffle(s: &Sample, ctx: &Ctx<'_>) -> Result<Sample, Skip> {
    let gold = mc_gold(s)?;
    let n = s.options.len();
    let mut rng = rng(ctx, Kind::OptionShuffle, s);
    let identity: Vec<usize> = (0..n).collect();
    let mut order = identity.clone();
    // Uniform over the n! - 1 permutations that change something.
    while order == identity {
        order.shuffle(&mut rng);
    }
    let mut r = derive(s, Kind::OptionShuffle, serde_json::json!({"order": order}));
    r.options = order.iter().map(|&i| s.options[i].clone()).collect();
    let new_gold = order.iter().position(|&i| i == gold).expect("a permutation holds every index");
    r.answer_index = Some(new_gold as i32);
    Ok(finish(r))
}

/// CircularEval's rotation `k`: option `i` of the row is option `(i + k) mod n`
/// of the question; the gold index follows the gold option.
pub fn circular(s: &Sample, k: u32) -> Result<Sample, Skip> {
    let gold = mc_gold(s)?;
    let n = s.options.len();
    let k = k as usize;
    if k >= n {
        return Err("has no more options than the rotation");
    }
    let mut r = derive(s, Kind::Circular(k as u32), serde_json::json!({"rotation": k, "options": n}));
    r.options = (0..n).map(|i| s.options[(i + k) % n].clone()).collect();
    r.answer_index = Some(((gold + n - k) % n) as i32);
    Ok(finish(r))
}

pub fn unknown_option(s: &Sample, ctx: &Ctx<'_>) -> Result<Sample, Skip> {
    let gold = mc_gold(s)?;
    if s.options.iter().any(|o| norm(o) == norm(UNKNOWN)) {
        return Err("already has an \"Unknown\" option");
    }
    let distractors: Vec<usize> = (0..s.options.len()).filter(|&i| i != gold).collect();
    let pos = distractors[rng(ctx, Kind::UnknownOption, s).random_range(0..distractors.len())];
    let mut r =
        derive(s, Kind::UnknownOption, serde_json::json!({"position": pos, "replaced": s.options[pos].clone()}));
    r.options[pos] = UNKNOWN.to_string();
    Ok(finish(r))
}

pub fn gold_removed(s: &Sample) -> Result<Sample, Skip> {
    let gold = mc_gold(s)?;
    if s.options.iter().any(|o| norm(o).starts_with("none of")) {
        return Err("already has a \"none of ...\" option");
    }
    let mut r = derive(s, Kind::GoldRemoved, serde_json::json!({"position": gold, "removed": s.answer.clone()}));
    r.options[gold] = NONE_OF_THE_OTHERS.to_string();
    r.answer = NONE_OF_THE_OTHERS.to_string();
    Ok(finish(r))
}

/// Multiple-choice questions per benchmark, with their normalised options:
/// where `distractor_swap` draws replacement options from.
pub struct OptionPool {
    by_benchmark: HashMap<String, Vec<usize>>,
    options: Vec<HashSet<String>>,
    questions: Vec<String>,
}

impl OptionPool {
    pub fn new(samples: &[&Sample]) -> Self {
        let mut by_benchmark: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, s) in samples.iter().enumerate() {
            if s.answer_format == AnswerFormat::MultipleChoice && s.options.len() >= 2 {
                by_benchmark.entry(s.benchmark.clone()).or_default().push(i);
            }
        }
        OptionPool {
            by_benchmark,
            options: samples.iter().map(|s| s.options.iter().map(|o| option_key(o)).collect()).collect(),
            questions: samples.iter().map(|s| norm(&s.question)).collect(),
        }
    }
}

/// "Unknown", "None of the above", "All of these": options whose meaning
/// depends on the other options (or abstain), never swapped in — they would
/// turn `distractor_swap` into `unknown_option` or `gold_removed`.
fn refers_to_other_options(o: &str) -> bool {
    let n = norm(o);
    let n = n.trim_end_matches('.');
    n == norm(UNKNOWN) || n.starts_with("none of") || n.starts_with("all of") || n.starts_with("both ")
}

/// Attempts per replaced option before the sample is skipped.
const SWAP_ATTEMPTS: usize = 200;

pub fn distractor_swap(s: &Sample, k: u32, ctx: &Ctx<'_>, pool: &OptionPool) -> Result<Sample, Skip> {
    let gold = mc_gold(s)?;
    let k = k as usize;
    if s.options.len() - 1 < k {
        return Err("fewer distractors than k");
    }
    let kind = Kind::DistractorSwap(k as u32);
    let candidates = pool.by_benchmark.get(&s.benchmark).map(Vec::as_slice).unwrap_or(&[]);
    let own: HashSet<String> = s.options.iter().map(|o| option_key(o)).collect();
    let qn = norm(&s.question);
    let samples = ctx.samples;
    let unrelated = |j: usize| {
        let b = &samples[j];
        let other_kind = match (&s.question_type, &b.question_type) {
            (Some(x), Some(y)) => x != y,
            _ => pool.questions[j] != qn,
        };
        b.id != s.id && other_kind && pool.options[j].is_disjoint(&own)
    };
    let mut rng = rng(ctx, kind, s);
    let mut distractors: Vec<usize> = (0..s.options.len()).filter(|&i| i != gold).collect();
    distractors.shuffle(&mut rng);
    let mut positions: Vec<usize> = distractors[..k].to_vec();
    positions.sort_unstable();
    let mut taken: HashSet<String> = own.clone();
    let mut options = s.options.clone();
    let mut swaps = Vec::new();
    for &pos in &positions {
        let mut found = None;
        if !candidates.is_empty() {
            for _ in 0..SWAP_ATTEMPTS {
                let j = candidates[rng.random_range(0..candidates.len())];
                if !unrelated(j) {
                    continue;
                }
                let o = &samples[j].options[rng.random_range(0..samples[j].options.len())];
                if o.trim().is_empty() || refers_to_other_options(o) || taken.contains(&option_key(o)) {
                    continue;
                }
                found = Some((j, o.clone()));
                break;
            }
        }
        let Some((j, o)) = found else { return Err("no unrelated option found to swap in") };
        taken.insert(option_key(&o));
        swaps.push(serde_json::json!({"position": pos, "was": options[pos], "now": o, "from": samples[j].id}));
        options[pos] = o;
    }
    let mut r = derive(s, kind, serde_json::json!({"k": k, "swaps": swaps}));
    r.options = options;
    Ok(finish(r))
}

type QuestionKey = (String, String, String);
type TypeKey = (String, Option<String>, String);

/// How golds are matched to distractors: yes/no case-insensitively, options as [`option_key`].
fn answer_key(format: AnswerFormat, answer: &str) -> String {
    if format == AnswerFormat::YesNo { norm(answer) } else { option_key(answer) }
}

/// Samples with images by (benchmark, question, gold) and (benchmark, type,
/// gold), normalised: where `visual_substitution` finds partners.
pub struct Partners {
    by_options: HashMap<QuestionKey, Vec<usize>>,
    by_question: HashMap<QuestionKey, Vec<usize>>,
    by_type: HashMap<TypeKey, Vec<usize>>,
}

impl Partners {
    pub fn new(samples: &[&Sample]) -> Self {
        let mut by_options: HashMap<QuestionKey, Vec<usize>> = HashMap::new();
        let mut by_question: HashMap<QuestionKey, Vec<usize>> = HashMap::new();
        let mut by_type: HashMap<TypeKey, Vec<usize>> = HashMap::new();
        for (i, s) in samples.iter().enumerate().filter(|(_, s)| !s.images.is_empty()) {
            let gold = answer_key(s.answer_format, &s.answer);
            if s.answer_format == AnswerFormat::MultipleChoice {
                by_options.entry((s.benchmark.clone(), question_and_options(s), gold.clone())).or_default().push(i);
            }
            by_question.entry((s.benchmark.clone(), norm(&s.question), gold.clone())).or_default().push(i);
            by_type.entry((s.benchmark.clone(), s.question_type.clone(), gold)).or_default().push(i);
        }
        Partners { by_options, by_question, by_type }
    }
}

/// The question with its option set (order ignored): the strongest partner
/// match — the partner's image decides between these very options.
fn question_and_options(s: &Sample) -> String {
    let mut opts: Vec<String> = s.options.iter().map(|o| option_key(o)).collect();
    opts.sort();
    format!("{}\u{1f}{}", norm(&s.question), opts.join("\u{1f}"))
}

fn same_images(a: &Sample, b: &Sample) -> bool {
    a.images.len() == b.images.len()
        && a.images.iter().zip(&b.images).all(|(x, y)| match (&x.sha256, &y.sha256) {
            (Some(p), Some(q)) => p == q,
            _ => x.path == y.path,
        })
}

fn flip_yes_no(answer: &str) -> String {
    let flipped = if norm(answer) == "yes" { "no" } else { "yes" };
    if answer.starts_with(|c: char| c.is_uppercase()) {
        let mut c = flipped.chars();
        c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
    } else {
        flipped.to_string()
    }
}

pub fn visual_substitution(s: &Sample, ctx: &Ctx<'_>, partners: &Partners) -> Result<Sample, Skip> {
    if s.images.is_empty() {
        return Err("the question has no image to substitute");
    }
    // (normalised distractor, option index for multiple choice)
    let distractors: Vec<(String, Option<usize>)> = match s.answer_format {
        AnswerFormat::MultipleChoice => {
            let gold = mc_gold(s)?;
            (0..s.options.len()).filter(|&i| i != gold).map(|i| (option_key(&s.options[i]), Some(i))).collect()
        }
        AnswerFormat::YesNo if matches!(norm(&s.answer).as_str(), "yes" | "no") => {
            vec![(norm(&flip_yes_no(&s.answer)), None)]
        }
        AnswerFormat::YesNo => return Err("a yes/no answer that is neither yes nor no"),
        AnswerFormat::Open | AnswerFormat::Numeric => return Err("open-ended: no distractors"),
    };
    let samples = ctx.samples;
    let usable = |j: &usize| samples[*j].id != s.id && !same_images(samples[*j], s);
    // (partner index, distractor index) pairs from one of the two indexes.
    let collect = |lists: Vec<Option<&Vec<usize>>>| {
        let mut c: Vec<(usize, usize)> = Vec::new();
        for (d, js) in lists.into_iter().enumerate() {
            c.extend(js.into_iter().flatten().filter(|j| usable(j)).map(|&j| (j, d)));
        }
        c.sort_unstable();
        c
    };
    let lookup = |index: &HashMap<QuestionKey, Vec<usize>>, q: &str| {
        collect(distractors.iter().map(|(d, _)| index.get(&(s.benchmark.clone(), q.to_string(), d.clone()))).collect())
    };
    // Strongest match first: same question and options, same question, same type (multiple choice).
    let mut matched = "options";
    let mut cands = Vec::new();
    if s.answer_format == AnswerFormat::MultipleChoice {
        cands = lookup(&partners.by_options, &question_and_options(s));
    }
    if cands.is_empty() {
        matched = "question";
        cands = lookup(&partners.by_question, &norm(&s.question));
    }
    if cands.is_empty() && s.answer_format == AnswerFormat::MultipleChoice {
        matched = "question_type";
        cands = collect(
            distractors
                .iter()
                .map(|(d, _)| partners.by_type.get(&(s.benchmark.clone(), s.question_type.clone(), d.clone())))
                .collect(),
        );
    }
    if cands.is_empty() {
        return Err("no partner: no other image's gold is one of its distractors");
    }
    let (j, d) = cands[rng(ctx, Kind::VisualSubstitution, s).random_range(0..cands.len())];
    let partner = &samples[j];
    let mut r = derive(
        s,
        Kind::VisualSubstitution,
        serde_json::json!({"partner": partner.id, "match": matched, "previous_answer": s.answer}),
    );
    r.images = partner.images.clone();
    match distractors[d].1 {
        Some(i) => {
            r.answer = s.options[i].clone();
            r.answer_index = Some(i as i32);
        }
        None => r.answer = flip_yes_no(&s.answer),
    }
    Ok(finish(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mc(id: &str, qt: &str, q: &str, opts: &[&str], gold: usize) -> Sample {
        let mut s = Sample::new(id, q, opts[gold]);
        s.benchmark = "b".into();
        s.question_type = Some(qt.into());
        s.answer_format = AnswerFormat::MultipleChoice;
        s.options = opts.iter().map(|o| o.to_string()).collect();
        s.answer_index = Some(gold as i32);
        s
    }

    fn ctx<'a>(samples: &'a [&'a Sample]) -> Ctx<'a> {
        Ctx { samples, seed: 42, captions: HashMap::new(), caption_source: false }
    }

    #[test]
    fn shuffle_is_a_non_identity_permutation_and_gold_follows() {
        let s = mc("1", "t", "q?", &["a", "b", "c", "d"], 2);
        let data = [&s];
        for seed in 0..20 {
            let c = Ctx { seed, ..ctx(&data) };
            let r = option_shuffle(&s, &c).unwrap();
            assert_ne!(r.options, s.options);
            let mut sorted = r.options.clone();
            sorted.sort();
            assert_eq!(sorted, s.options);
            assert_eq!(r.options[r.answer_index.unwrap() as usize], "c");
        }
    }

    #[test]
    fn swaps_never_duplicate_and_come_from_other_types() {
        let data = [
            mc("1", "t1", "q1?", &["a", "b", "c"], 0),
            mc("2", "t2", "q2?", &["x", "y", "a"], 0),
            mc("3", "t2", "q3?", &["p", "q", "r"], 1),
            mc("4", "t1", "q4?", &["m", "n", "o"], 1),
        ];
        let refs: Vec<&Sample> = data.iter().collect();
        let c = ctx(&refs);
        let pool = OptionPool::new(&refs);
        let r = distractor_swap(&data[0], 2, &c, &pool).unwrap();
        assert_eq!(r.options[0], "a", "gold kept");
        for o in &r.options[1..] {
            assert!(["p", "q", "r"].contains(&o.as_str()), "{o}: only sample 3 is unrelated");
        }
        assert_ne!(r.options[1], r.options[2]);
        assert_eq!(distractor_swap(&data[0], 3, &c, &pool).unwrap_err(), "fewer distractors than k");
    }

    #[test]
    fn substitution_takes_a_partner_whose_gold_is_a_distractor() {
        let mut data = [
            mc("1", "t", "Which animal?", &["cat", "dog"], 0),
            mc("2", "t", "Which animal?", &["cat", "dog"], 1),
            mc("3", "u", "Which animal?", &["cat", "dog"], 1),
        ];
        for (i, s) in data.iter_mut().enumerate() {
            s.images.push(crate::sample::ImageRef { path: Some(format!("{i}.png")), ..Default::default() });
        }
        let refs: Vec<&Sample> = data.iter().collect();
        let c = ctx(&refs);
        let p = Partners::new(&refs);
        let r = visual_substitution(&data[0], &c, &p).unwrap();
        assert_eq!((r.answer.as_str(), r.answer_index), ("dog", Some(1)));
        assert!(r.images[0].path.as_deref() != Some("0.png"));
        let mut yn = data[0].clone();
        yn.answer_format = AnswerFormat::YesNo;
        yn.options.clear();
        yn.answer = "Yes".into();
        yn.answer_index = None;
        assert!(visual_substitution(&yn, &c, &p).is_err(), "no yes/no partner asks the same question");
    }
}
