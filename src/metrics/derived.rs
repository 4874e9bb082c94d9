//! The derived metrics of the papers, per model, from the conditions its
//! predictions cover (a metric whose conditions are absent is left out).
//! All accuracies are fractions in [0, 1].
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
//!   `distractor_swap@k` with the largest k present — the paper's weights,
//!   with image (its first and last terms are text-only);
//! - T5 visual substitution: f5 = max(0, acc(original) − acc(visual_substitution)),
//!   where a substitution row's gold is the option the substituted image
//!   supports — a model that reads the image keeps its accuracy (the paper
//!   scores against the original gold; blindspot's rows carry the new one).
//!   `gold_removed` is reported as its own fragility, max(0, acc(original) −
//!   acc(gold_removed)), outside R(m) (not one of the paper's five tests).

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value as J, json};

use super::{CellStats, MetricsConfig, ORIGINAL, Scored, bootstrap_mean_ci, r6};
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
    pub gain: f64,
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
}

/// Robustness R(m).
#[derive(Debug, Clone, PartialEq)]
pub struct Robustness {
    pub tests: Vec<Fragility>,
    /// Mean of 1 − f over `tests`; None without any.
    pub r: Option<f64>,
    pub gold_removed: Option<f64>,
}

/// Every derived metric of one model (None: its conditions are absent).
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub visual_dependence: Option<f64>,
    pub caption_substitution: Option<f64>,
    pub null_baseline: Option<f64>,
    pub modality_differential: Option<ModalityDifferential>,
    pub mirage_score: Option<f64>,
    pub mirage_vs_guess: Option<MirageVsGuess>,
    pub mirage_rate: BTreeMap<String, MirageRate>,
    pub mmstar: Option<MmStar>,
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

fn by_parent<'a>(scored: &'a Scored, model: &str, condition: &str) -> Option<HashMap<&'a str, f64>> {
    scored.cell(model, condition).map(|items| items.iter().map(|i| (i.parent.as_str(), i.outcome.score)).collect())
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
    let orig = acc(ORIGINAL);
    let no_image = acc("no_image");
    let both = |a: Option<f64>, b: Option<f64>| a.zip(b);

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
    for c in ["phantom0", "phantom", "mirage"] {
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

    let mmstar = both(orig, no_image).map(|(sv, swv)| {
        let base = cfg.llm_bases.get(model).cloned();
        let text_only = base.as_ref().and_then(|b| {
            let bc = cells.get(b)?;
            bc.get("no_image").or_else(|| bc.get(ORIGINAL)).filter(|s| s.n > 0).map(|s| s.accuracy)
        });
        MmStar { gain: sv - swv, llm_base: base, text_only, leakage: text_only.map(|st| (swv - st).max(0.0)) }
    });

    Derived {
        visual_dependence: both(orig, no_image).and_then(|(o, n)| relative_drop(o, n)),
        caption_substitution: both(orig, acc("caption")).and_then(|(o, c)| relative_drop(o, c)),
        null_baseline,
        modality_differential,
        mirage_score: both(orig, acc("mirage")).and_then(|(o, m)| (o != 0.0).then(|| m / o)),
        mirage_vs_guess,
        mirage_rate,
        mmstar,
        robustness: robustness(model, rows, scored, &acc),
    }
}

fn robustness(model: &str, rows: &[Sample], scored: &Scored, acc: &dyn Fn(&str) -> Option<f64>) -> Robustness {
    let clamp = |x: f64| x.clamp(0.0, 1.0);
    let mut tests = Vec::new();
    let orig = acc(ORIGINAL);
    let names = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    if let (Some(o), Some(n)) = (orig, acc("no_image")) {
        tests.push(Fragility {
            test: "T1_modality_sensitivity",
            conditions: names(&[ORIGINAL, "no_image"]),
            f: clamp(o - n),
        });
    }
    if let (Some(n), Some(items)) = (acc("no_image"), scored.cell(model, "no_image")) {
        let chance = items.iter().map(|i| crate::diagnose::chance(&rows[i.row])).sum::<f64>() / items.len() as f64;
        if chance < 1.0 {
            tests.push(Fragility {
                test: "T2_modality_necessity",
                conditions: names(&["no_image"]),
                f: clamp((n - chance).max(0.0) / (1.0 - chance)),
            });
        }
    }
    if let (Some(o), Some(s)) = (orig, acc("option_shuffle")) {
        tests.push(Fragility { test: "T3_format", conditions: names(&[ORIGINAL, "option_shuffle"]), f: clamp(o - s) });
    }
    if let Some(o) = orig {
        let swap = scored
            .cells
            .get(model)
            .into_iter()
            .flat_map(|c| c.keys())
            .filter_map(|c| {
                c.strip_prefix("distractor_swap@").and_then(|k| k.parse::<u32>().ok()).map(|k| (k, c.clone()))
            })
            .max();
        let mut terms = Vec::new();
        let mut conditions = vec![ORIGINAL.to_string()];
        if let Some((_, c)) = &swap
            && let Some(s) = acc(c)
        {
            terms.push((0.5, (o - s).max(0.0)));
            terms.push((0.3, (s - o).max(0.0)));
            conditions.push(c.clone());
        }
        if let Some(u) = acc("unknown_option") {
            terms.push((0.2, (u - o).max(0.0)));
            conditions.push("unknown_option".into());
        }
        if !terms.is_empty() {
            let w: f64 = terms.iter().map(|t| t.0).sum();
            let f = terms.iter().map(|(wi, x)| wi * x).sum::<f64>() / w;
            tests.push(Fragility { test: "T4_distractors", conditions, f: clamp(f) });
        }
    }
    if let (Some(o), Some(v)) = (orig, acc("visual_substitution")) {
        tests.push(Fragility {
            test: "T5_visual_substitution",
            conditions: names(&[ORIGINAL, "visual_substitution"]),
            f: clamp(o - v),
        });
    }
    let r = (!tests.is_empty()).then(|| tests.iter().map(|t| 1.0 - t.f).sum::<f64>() / tests.len() as f64);
    let gold_removed = orig.zip(acc("gold_removed")).map(|(o, g)| clamp(o - g));
    Robustness { tests, r, gold_removed }
}

fn opt(x: Option<f64>) -> J {
    x.map_or(J::Null, r6)
}

impl Derived {
    pub fn to_json(&self) -> J {
        let mut o = serde_json::Map::new();
        let mut put = |k: &str, v: J| {
            if !v.is_null() {
                o.insert(k.to_string(), v);
            }
        };
        put("visual_dependence", opt(self.visual_dependence));
        put("caption_substitution", opt(self.caption_substitution));
        put("null_baseline", opt(self.null_baseline));
        put(
            "modality_differential",
            self.modality_differential.as_ref().map_or(J::Null, |m| {
                json!({
                    "mean": r6(m.mean), "n": m.n, "zero_over_zero": m.zero_over_zero,
                    "mean_gain_image": r6(m.mean_gain_image), "mean_gain_caption": r6(m.mean_gain_caption),
                    "null_conditions": m.null_conditions,
                })
            }),
        );
        put("mirage_score", opt(self.mirage_score));
        put(
            "mirage_vs_guess",
            self.mirage_vs_guess.as_ref().map_or(J::Null, |g| {
                json!({"n_paired": g.n_paired, "mirage": r6(g.mirage), "guess": r6(g.guess), "gap": r6(g.gap), "ci95": [r6(g.ci95.0), r6(g.ci95.1)]})
            }),
        );
        if !self.mirage_rate.is_empty() {
            let m: serde_json::Map<String, J> = self
                .mirage_rate
                .iter()
                .map(|(c, r)| {
                    (c.clone(), json!({"n": r.n, "abstained": r.abstained, "empty": r.empty, "mirages": r.mirages, "rate": r6(r.rate)}))
                })
                .collect();
            put("mirage_rate", J::Object(m));
        }
        put(
            "mmstar",
            self.mmstar.as_ref().map_or(J::Null, |m| {
                json!({"multimodal_gain": r6(m.gain), "llm_base": m.llm_base, "text_only_accuracy": opt(m.text_only), "leakage": opt(m.leakage)})
            }),
        );
        let rb = &self.robustness;
        if !rb.tests.is_empty() || rb.gold_removed.is_some() {
            let tests: Vec<J> = rb
                .tests
                .iter()
                .map(|t| json!({"test": t.test, "conditions": t.conditions, "fragility": r6(t.f), "robustness": r6(1.0 - t.f)}))
                .collect();
            put("robustness", json!({"R": opt(rb.r), "tests": tests, "gold_removed_fragility": opt(rb.gold_removed)}));
        }
        J::Object(o)
    }
}

/// The definitions written into `metrics.json`, so the file explains itself.
pub fn definitions() -> J {
    json!({
        "accuracy": "mean score over the predictions of the condition (1 correct, 0 wrong, MRA for numeric answers); abstentions, empty and unparsed responses score 0; ci95 = 2.5th/97.5th percentiles of 1,000 seeded bootstrap resamples of the questions",
        "abstention_rate": "share of responses that say the image is missing, cannot be seen, or refuse (phrase list in src/predictions/abstain.rs), unless an explicit answer marker ([[B]], 'the answer is B') is given",
        "visual_dependence": "(acc(original) - acc(no_image)) / acc(original)",
        "caption_substitution": "(acc(original) - acc(caption)) / acc(original)",
        "null_baseline": "mean accuracy over the null conditions present (no_image, white_image, noise_image)",
        "modality_differential": "mean over instances of (g_image - g_caption) / (|g_image| + |g_caption|), g = score - mean null score of the instance; 0/0 (both gains 0) counts as 0",
        "mirage_score": "acc(mirage) / acc(original)",
        "mirage_vs_guess": "acc(mirage) - acc(guess) over questions both answered; paired bootstrap ci95",
        "mirage_rate": "share of responses that neither abstain nor are empty",
        "mmstar": "multimodal_gain = acc(original) - acc(no_image); leakage = max(0, acc(no_image) - text-only accuracy of the LLM base)",
        "robustness": "R = mean over present tests of 1 - f_i; T1 max(0, acc(original) - acc(no_image)); T2 max(0, acc(no_image) - chance) / (1 - chance); T3 max(0, acc(original) - acc(option_shuffle)); T4 (0.5 max(0, orig - swap) + 0.3 max(0, swap - orig) + 0.2 max(0, unknown_option - orig)) / weights present, swap = largest distractor_swap@k; T5 max(0, acc(original) - acc(visual_substitution)) with the substituted gold; gold_removed reported outside R",
    })
}
