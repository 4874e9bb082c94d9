//! The derived metrics of the papers, per model, from the conditions its
//! predictions cover (a metric whose conditions are absent is left out).
//! All accuracies are fractions in [0, 1].
//!
//! **Paired.** A metric that compares conditions is computed on the questions
//! (by parent id) that have a prediction in *every* condition it uses — never
//! on each condition's whole cell, since variants exist only for a subset
//! (no image only where there was one, traps only for multiple choice). Its
//! `n_paired` is reported beside it; with no question in common the value is
//! null with a reason. A parent with several rows in a condition counts by
//! their mean score.
//!
//! *Seeing is not reasoning* (formulas at the end of the paper):
//! - **Visual Dependence** = (acc(original) − acc(no_image)) / acc(original);
//! - **Caption Substitution** = (acc(original) − acc(caption)) / acc(original);
//!   both undefined (null) when acc(original) = 0;
//! - **Modality Differential**, per instance i with an original and a caption
//!   prediction and at least one null condition (no_image, white_image,
//!   noise_image): baseline_i = mean of its null-condition scores present,
//!   g_m,i = score_m,i − baseline_i, MD_i = (g_image − g_caption) /
//!   (|g_image| + |g_caption|). **0/0 rule**: when both gains are 0 (neither
//!   the image nor the caption moved the instance off its null baseline),
//!   MD_i = 0 — the two inputs are interchangeable there, the paper's reading
//!   of a value near 0; such instances are counted (`zero_over_zero`).
//!
//! *Mirage*:
//! - **Mirage Score** = acc(mirage) / acc(original) (×100 for the paper's %);
//! - **mirage vs guess**: acc(mirage) − acc(guess) over the questions both
//!   conditions answered, with a paired bootstrap 95% CI;
//! - **mirage rate** (Phantom-0, and `phantom` / `mirage` when present): the
//!   share of responses that neither abstain nor are empty — answers that
//!   describe an image never given. Empty responses count as no mirage (the
//!   paper groups them with "no diagnosis found").
//!
//! *MMStar*: multi-modal gain MG = acc(original) − acc(no_image); leakage
//! ML = max(0, acc(no_image) − S_t), where S_t is the text-only accuracy of
//! the model's LLM backbone, given as a model of its own (`llm_bases`; its
//! `no_image` accuracy, else its `original`); null without one.
//!
//! *Medical stress tests*, robustness R(m) = mean of r_i = 1 − f_i over the
//! tests whose conditions are present, f_i clamped to [0, 1]:
//! - T1 modality sensitivity: f1 = max(0, acc(original) − acc(no_image));
//! - T2 modality necessity: f2 = max(0, acc(no_image) − chance) / (1 − chance),
//!   chance = mean of 1/options (½ for yes/no, 0 otherwise) over the
//!   no_image questions (the paper: NEJM's visually-required subset, 20%);
//! - T3 format: f3 = max(0, acc(original) − acc(option_shuffle)) — with the
//!   image (blindspot's shuffle keeps it; the paper measures text-only);
//! - T4 distractors: f4 = (0.5·max(0, acc(original) − acc(swap)) +
//!   0.3·max(0, acc(swap) − acc(original)) + 0.2·max(0, acc(unknown_option) −
//!   acc(original))) / (sum of the weights of the terms present), swap = the
//!   `distractor_swap@k` with the largest k present — the paper's weights.
//!   **Departure**: the paper takes the drop and the "Unknown" gain from
//!   text-only runs and the swap gain from image runs; blindspot has the
//!   image runs only, so the drop and gain terms come from the same
//!   (original, swap) pair and at most one of them is non-zero;
//! - T5 visual substitution: f5 = max(0, acc(original) − acc(visual_substitution)),
//!   where a substitution row's gold is the option the substituted image
//!   supports — a model that reads the image keeps its accuracy (the paper
//!   scores against the original gold; blindspot's rows carry the new one).
//!   `gold_removed` is reported as its own fragility, max(0, acc(original) −
//!   acc(gold_removed)), outside R(m) (not one of the paper's five tests).

use std::collections::{BTreeMap, HashMap};

use super::{CellStats, MetricsConfig, ORIGINAL, Scored, bootstrap_mean_ci};
use crate::sample::Sample;

/// The null-input conditions of *Seeing is not reasoning*.
pub const NULL_CONDITIONS: [&str; 3] = ["no_image", "white_image", "noise_image"];

/// Modality Differential of one model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModalityDifferential {
    pub mean: f64,
    pub n: usize,
    pub zero_over_zero: usize,
    pub mean_gain_image: f64,
    pub mean_gain_caption: f64,
    /// Null conditions the baselines were averaged over.
    pub null_conditions: Vec<String>,
}

/// A comparison of conditions on the questions all of them answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Paired {
    /// The metric's value; None with [`Paired::reason`] when it is undefined.
    pub value: Option<f64>,
    /// Questions (parent ids) with a prediction in every condition used.
    pub n_paired: usize,
    pub conditions: Vec<String>,
    /// Why the value is null.
    pub reason: Option<String>,
}

/// Per-condition accuracies over the questions every condition answered.
struct Common {
    n: usize,
    /// In the order of the conditions asked for.
    accuracy: Vec<f64>,
}

/// CircularEval: a question counts when every rotation of its options is
/// answered right.
#[derive(Debug, Clone, PartialEq)]
pub struct Circular {
    /// Share of the complete questions answered right in every rotation.
    pub accuracy: f64,
    /// Questions with a prediction for every rotation (n options → n rows).
    pub n: usize,
    /// Accuracy on rotation 0 (the question's own order) over the same questions.
    pub first_rotation: f64,
    /// Questions with some rotations predicted but not all (left out).
    pub incomplete: usize,
}

/// Mirage vs guess.
#[derive(Debug, Clone, PartialEq)]
pub struct MirageVsGuess {
    pub n_paired: usize,
    pub mirage: f64,
    pub guess: f64,
    pub gap: f64,
    pub ci95: (f64, f64),
}

/// Mirage rate on one condition.
#[derive(Debug, Clone, PartialEq)]
pub struct MirageRate {
    pub n: usize,
    pub abstained: usize,
    pub empty: usize,
    pub mirages: usize,
    pub rate: f64,
}

/// MMStar's gain and leakage.
#[derive(Debug, Clone, PartialEq)]
pub struct MmStar {
    /// acc(original) − acc(no_image), over the questions both answered.
    pub gain: f64,
    pub n_paired: usize,
    pub llm_base: Option<String>,
    pub text_only: Option<f64>,
    pub leakage: Option<f64>,
}

/// One stress test's fragility.
#[derive(Debug, Clone, PartialEq)]
pub struct Fragility {
    pub test: &'static str,
    pub conditions: Vec<String>,
    pub f: f64,
    /// Questions with a prediction in every condition of the test.
    pub n_paired: usize,
}

/// Robustness R(m).
#[derive(Debug, Clone, PartialEq)]
pub struct Robustness {
    pub tests: Vec<Fragility>,
    /// Mean of 1 − f over `tests`; None without any.
    pub r: Option<f64>,
    pub gold_removed: Option<Fragility>,
}

/// Every derived metric of one model (None: its conditions are absent).
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub visual_dependence: Option<Paired>,
    pub caption_substitution: Option<Paired>,
    pub null_baseline: Option<f64>,
    pub modality_differential: Option<ModalityDifferential>,
    pub mirage_score: Option<Paired>,
    pub mirage_vs_guess: Option<MirageVsGuess>,
    pub mirage_rate: BTreeMap<String, MirageRate>,
    pub mmstar: Option<MmStar>,
    pub circular: Option<Circular>,
    pub robustness: Robustness,
}

/// (a − b) / a, None when a = 0.
pub fn relative_drop(a: f64, b: f64) -> Option<f64> {
    (a != 0.0).then(|| (a - b) / a)
}

/// MD_i with the 0/0 rule (see the module docs): `(value, was 0/0)`.
pub fn modality_differential_i(g_image: f64, g_caption: f64) -> (f64, bool) {
    let den = g_image.abs() + g_caption.abs();
    if den == 0.0 { (0.0, true) } else { ((g_image - g_caption) / den, false) }
}

/// Score per parent id (the mean when a parent has several rows).
fn by_parent<'a>(scored: &'a Scored, model: &str, condition: &str) -> Option<HashMap<&'a str, f64>> {
    let items = scored.cell(model, condition)?;
    let mut sums: HashMap<&str, (f64, usize)> = HashMap::new();
    for i in items {
        let e = sums.entry(i.parent.as_str()).or_default();
        e.0 += i.outcome.score;
        e.1 += 1;
    }
    Some(sums.into_iter().map(|(p, (s, n))| (p, s / n as f64)).collect())
}

/// The accuracies of `conditions` over the parents all of them answered (None:
/// a condition has no cell for this model). Sums run in id order.
fn common(scored: &Scored, model: &str, conditions: &[&str]) -> Option<Common> {
    let maps: Vec<HashMap<&str, f64>> =
        conditions.iter().map(|c| by_parent(scored, model, c).filter(|m| !m.is_empty())).collect::<Option<_>>()?;
    let mut parents: Vec<&str> =
        maps[0].keys().copied().filter(|p| maps[1..].iter().all(|m| m.contains_key(p))).collect();
    parents.sort_by(|a, b| crate::sample::id_cmp(a, b));
    let n = parents.len();
    let accuracy = maps
        .iter()
        .map(|m| if n == 0 { f64::NAN } else { parents.iter().map(|p| m[p]).sum::<f64>() / n as f64 })
        .collect();
    Some(Common { n, accuracy })
}

/// A paired metric of `conditions`: `value(accuracies)` over their common
/// questions, or null with a reason.
fn paired(
    scored: &Scored,
    model: &str,
    conditions: &[&str],
    value: impl Fn(&[f64]) -> Result<f64, String>,
) -> Option<Paired> {
    let c = common(scored, model, conditions)?;
    let (value, reason) = if c.n == 0 {
        (None, Some(format!("no question has a prediction in every one of {}", conditions.join(", "))))
    } else {
        match value(&c.accuracy) {
            Ok(v) => (Some(v), None),
            Err(why) => (None, Some(why)),
        }
    };
    Some(Paired { value, n_paired: c.n, conditions: conditions.iter().map(|s| s.to_string()).collect(), reason })
}

/// (a − b) / a over paired questions; undefined when a = 0.
fn relative_drop_of(acc: &[f64]) -> Result<f64, String> {
    relative_drop(acc[0], acc[1]).ok_or_else(|| format!("accuracy on {ORIGINAL} is 0 over the paired questions"))
}

pub fn derive(
    model: &str,
    rows: &[Sample],
    scored: &Scored,
    cells: &BTreeMap<String, BTreeMap<String, CellStats>>,
    cfg: &MetricsConfig,
) -> Derived {
    let conds = cells.get(model);
    let acc = |c: &str| conds.and_then(|m| m.get(c)).filter(|s| s.n > 0).map(|s| s.accuracy);

    let nulls: Vec<f64> = NULL_CONDITIONS.iter().filter_map(|c| acc(c)).collect();
    let null_baseline = (!nulls.is_empty()).then(|| nulls.iter().sum::<f64>() / nulls.len() as f64);

    let modality_differential = (|| {
        let o = by_parent(scored, model, ORIGINAL)?;
        let c = by_parent(scored, model, "caption")?;
        let null_maps: Vec<(String, HashMap<&str, f64>)> =
            NULL_CONDITIONS.iter().filter_map(|n| by_parent(scored, model, n).map(|m| (n.to_string(), m))).collect();
        if null_maps.is_empty() {
            return None;
        }
        let mut parents: Vec<&str> = o.keys().copied().filter(|p| c.contains_key(p)).collect();
        parents.sort_by(|a, b| crate::sample::id_cmp(a, b));
        let (mut sum, mut gi, mut gc, mut n, mut zz) = (0.0, 0.0, 0.0, 0usize, 0usize);
        for p in parents {
            let vals: Vec<f64> = null_maps.iter().filter_map(|(_, m)| m.get(p).copied()).collect();
            if vals.is_empty() {
                continue;
            }
            let base = vals.iter().sum::<f64>() / vals.len() as f64;
            let (g_img, g_cap) = (o[p] - base, c[p] - base);
            let (md, zero) = modality_differential_i(g_img, g_cap);
            sum += md;
            gi += g_img;
            gc += g_cap;
            n += 1;
            zz += usize::from(zero);
        }
        (n > 0).then(|| ModalityDifferential {
            mean: sum / n as f64,
            n,
            zero_over_zero: zz,
            mean_gain_image: gi / n as f64,
            mean_gain_caption: gc / n as f64,
            null_conditions: null_maps.into_iter().map(|(k, _)| k).collect(),
        })
    })();

    let mirage_vs_guess = (|| {
        let m = by_parent(scored, model, "mirage")?;
        let g = by_parent(scored, model, "guess")?;
        let mut parents: Vec<&str> = m.keys().copied().filter(|p| g.contains_key(p)).collect();
        if parents.is_empty() {
            return None;
        }
        parents.sort_by(|a, b| crate::sample::id_cmp(a, b));
        let diffs: Vec<f64> = parents.iter().map(|p| m[p] - g[p]).collect();
        let n = parents.len() as f64;
        let (ms, gs) = (parents.iter().map(|p| m[p]).sum::<f64>() / n, parents.iter().map(|p| g[p]).sum::<f64>() / n);
        Some(MirageVsGuess {
            n_paired: parents.len(),
            mirage: ms,
            guess: gs,
            gap: ms - gs,
            ci95: bootstrap_mean_ci(&diffs, cfg.resamples, cfg.seed, "metrics.bootstrap.mirage_vs_guess", model),
        })
    })();

    let mut mirage_rate = BTreeMap::new();
    for c in ["phantom0", "phantom0_video", "phantom", "mirage"] {
        if let Some(items) = scored.cell(model, c).filter(|i| !i.is_empty()) {
            let abstained = items.iter().filter(|i| i.outcome.abstained).count();
            let empty = items.iter().filter(|i| i.outcome.empty).count();
            let mirages = items.len() - abstained - empty;
            mirage_rate.insert(
                c.to_string(),
                MirageRate { n: items.len(), abstained, empty, mirages, rate: mirages as f64 / items.len() as f64 },
            );
        }
    }

    let mmstar = common(scored, model, &[ORIGINAL, "no_image"]).filter(|c| c.n > 0).map(|c| {
        let (sv, swv) = (c.accuracy[0], c.accuracy[1]);
        let base = cfg.llm_bases.get(model).cloned();
        // The backbone's text-only accuracy on the same no-image questions.
        let text_only = base.as_ref().and_then(|b| {
            let mine = by_parent(scored, model, "no_image")?;
            let theirs = by_parent(scored, b, "no_image")
                .filter(|m| !m.is_empty())
                .or_else(|| by_parent(scored, b, ORIGINAL).filter(|m| !m.is_empty()))?;
            let mut parents: Vec<&str> = mine.keys().copied().filter(|p| theirs.contains_key(p)).collect();
            parents.sort_by(|a, b| crate::sample::id_cmp(a, b));
            let n = parents.len();
            (n > 0).then(|| {
                let st = parents.iter().map(|p| theirs[p]).sum::<f64>() / n as f64;
                let own = parents.iter().map(|p| mine[p]).sum::<f64>() / n as f64;
                (st, own)
            })
        });
        MmStar {
            gain: sv - swv,
            n_paired: c.n,
            llm_base: base,
            text_only: text_only.map(|t| t.0),
            leakage: text_only.map(|(st, own)| (own - st).max(0.0)),
        }
    });

    let circular = circular_eval(model, rows, scored);
    Derived {
        circular,
        visual_dependence: paired(scored, model, &[ORIGINAL, "no_image"], relative_drop_of),
        caption_substitution: paired(scored, model, &[ORIGINAL, "caption"], relative_drop_of),
        null_baseline,
        modality_differential,
        mirage_score: paired(scored, model, &[ORIGINAL, "mirage"], |a| {
            (a[0] != 0.0)
                .then(|| a[1] / a[0])
                .ok_or_else(|| format!("accuracy on {ORIGINAL} is 0 over the paired questions"))
        }),
        mirage_vs_guess,
        mirage_rate,
        mmstar,
        robustness: robustness(model, rows, scored, &acc),
    }
}

/// CircularEval over the `circular@k` cells of `model` (None without any).
fn circular_eval(model: &str, rows: &[Sample], scored: &Scored) -> Option<Circular> {
    // parent → (options, rotations seen, all right so far, rotation 0 right)
    type Seen = (usize, usize, bool, bool);
    let mut by_parent: BTreeMap<&str, Seen> = BTreeMap::new();
    for (cond, items) in scored.cells.get(model)? {
        let Some(k) = cond.strip_prefix("circular@").and_then(|k| k.parse::<usize>().ok()) else { continue };
        for it in items {
            let e = by_parent.entry(it.parent.as_str()).or_insert((rows[it.row].options.len(), 0, true, false));
            e.1 += 1;
            e.2 &= it.outcome.score >= 1.0;
            if k == 0 {
                e.3 = it.outcome.score >= 1.0;
            }
        }
    }
    if by_parent.is_empty() {
        return None;
    }
    let complete: Vec<&Seen> = by_parent.values().filter(|v| v.1 == v.0).collect();
    let n = complete.len();
    let share = |f: &dyn Fn(&Seen) -> bool| {
        // No complete question: no question is right in every rotation (0 of 0, shown with its n).
        if n == 0 { 0.0 } else { complete.iter().filter(|v| f(v)).count() as f64 / n as f64 }
    };
    Some(Circular { accuracy: share(&|v| v.2), n, first_rotation: share(&|v| v.3), incomplete: by_parent.len() - n })
}

fn robustness(model: &str, rows: &[Sample], scored: &Scored, acc: &dyn Fn(&str) -> Option<f64>) -> Robustness {
    let clamp = |x: f64| x.clamp(0.0, 1.0);
    let names = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // A test over the questions every one of its conditions answered.
    let test = |name: &'static str, conds: &[&str], f: &dyn Fn(&[f64]) -> f64| {
        common(scored, model, conds).filter(|c| c.n > 0).map(|c| Fragility {
            test: name,
            conditions: names(conds),
            f: clamp(f(&c.accuracy)),
            n_paired: c.n,
        })
    };
    let mut tests = Vec::new();
    tests.extend(test("T1_modality_sensitivity", &[ORIGINAL, "no_image"], &|a| a[0] - a[1]));
    if let (Some(n), Some(items)) = (acc("no_image"), scored.cell(model, "no_image")) {
        let chance = items.iter().map(|i| crate::sample::chance(&rows[i.row])).sum::<f64>() / items.len() as f64;
        if chance < 1.0 {
            let parents: std::collections::BTreeSet<&str> = items.iter().map(|i| i.parent.as_str()).collect();
            tests.push(Fragility {
                test: "T2_modality_necessity",
                conditions: names(&["no_image"]),
                f: clamp((n - chance).max(0.0) / (1.0 - chance)),
                n_paired: parents.len(),
            });
        }
    }
    tests.extend(test("T3_format", &[ORIGINAL, "option_shuffle"], &|a| a[0] - a[1]));
    let swap = scored
        .cells
        .get(model)
        .into_iter()
        .flat_map(|c| c.keys())
        .filter_map(|c| c.strip_prefix("distractor_swap@").and_then(|k| k.parse::<u32>().ok()).map(|k| (k, c.clone())))
        .max()
        .map(|(_, c)| c);
    let unknown = scored.cell(model, "unknown_option").is_some_and(|i| !i.is_empty());
    let mut t4: Vec<&str> = vec![ORIGINAL];
    t4.extend(swap.as_deref());
    if unknown {
        t4.push("unknown_option");
    }
    if t4.len() > 1 {
        let has_swap = swap.is_some();
        tests.extend(test("T4_distractors", &t4, &|a| {
            let mut terms = Vec::new();
            if has_swap {
                terms.push((0.5, (a[0] - a[1]).max(0.0)));
                terms.push((0.3, (a[1] - a[0]).max(0.0)));
            }
            if unknown {
                terms.push((0.2, (a[a.len() - 1] - a[0]).max(0.0)));
            }
            let w: f64 = terms.iter().map(|t| t.0).sum();
            terms.iter().map(|(wi, x)| wi * x).sum::<f64>() / w
        }));
    }
    tests.extend(test("T5_visual_substitution", &[ORIGINAL, "visual_substitution"], &|a| a[0] - a[1]));
    let r = (!tests.is_empty()).then(|| tests.iter().map(|t| 1.0 - t.f).sum::<f64>() / tests.len() as f64);
    let gold_removed = test("gold_removed", &[ORIGINAL, "gold_removed"], &|a| a[0] - a[1]);
    Robustness { tests, r, gold_removed }
}
