//! Prune: remove the questions a blind model answers, reproducibly.
//!
//! ```text
//! samples ─▶ IBP     (re-run TsT-RF on what remains, drop the top-s batch, repeat)
//!         ─▶ random  (the same budget, batches and floors, seeded: the control)
//!         ─▶ AFLite  (linear probes on random partitions, drop predictable items)
//! predictions (mirage mode) ─▶ B-Clean (the union of what models answer without the image)
//!   ─▶ Pruned { kept (input order), removed (removal order, with reasons), iterations }
//! ```
//! Settings and the loop follow `docs/tst-protocol.md`;
//! every choice is a function of (seed, stage, id), never of thread count.

// The crates below this one, under the module names the code uses.
use blindspot_core::{context, error, io, progress, sample, seed, stats};
use blindspot_diagnose as diagnose;
use blindspot_embed as embed;
use blindspot_metrics as metrics;
use blindspot_ml as ml;
use blindspot_predictions as predictions;

pub mod aflite;
pub mod bclean;
pub mod filter;
pub mod ibp;
pub mod report;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::diagnose::{DiagnoseConfig, Diagnosis};
use crate::sample::{AnswerFormat, Sample};

/// A count, or a fraction of the benchmark's size before pruning.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Amount {
    Count(usize),
    Fraction(f64),
}

impl Amount {
    /// The count this amount means for `n` questions (fractions round to nearest).
    pub fn resolve(self, n: usize) -> usize {
        match self {
            Amount::Count(c) => c,
            Amount::Fraction(f) => (f * n as f64).round() as usize,
        }
    }

    /// Parses a count (`50`) or a percentage (`20%`). A bare fraction is refused:
    /// `1.0` could be one question or all of them.
    pub fn parse(s: &str) -> std::result::Result<Amount, String> {
        let t = s.trim();
        if let Some(p) = t.strip_suffix('%') {
            let v: f64 = p.trim().parse().map_err(|_| format!("\"{s}\" is not a percentage"))?;
            return Amount::fraction(v / 100.0).ok_or_else(|| format!("\"{s}\" is not between 0% and 100%"));
        }
        if let Ok(c) = t.parse::<usize>() {
            return Ok(Amount::Count(c));
        }
        Err(match t.parse::<f64>() {
            Ok(v) if v.is_finite() => Amount::not_a_fraction(v),
            _ => format!("\"{s}\" is neither a count nor a percentage"),
        })
    }

    /// Why a bare number with a decimal point is no amount.
    pub fn not_a_fraction(v: f64) -> String {
        let pct = crate::io::r6(v * 100.0);
        format!(
            "{v} is neither a count nor a percentage: is it {v} questions or {pct}% of them? Write a count without a \
             decimal point, or a share as a percentage (\"{pct}%\")"
        )
    }

    fn fraction(v: f64) -> Option<Amount> {
        (v.is_finite() && (0.0..=1.0).contains(&v)).then_some(Amount::Fraction(v))
    }

    pub fn describe(self) -> String {
        match self {
            Amount::Count(c) => c.to_string(),
            Amount::Fraction(f) => format!("{}%", crate::io::r6(f * 100.0)),
        }
    }
}

/// Which pruner runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    /// Iterative Bias Pruning on TsT-RF's s(x).
    Ibp,
    /// Matched random removal: IBP's budget, batches and floors, random order.
    Random,
    /// AFLite: predictability under linear probes on random partitions.
    Aflite,
    /// B-Clean: the union of questions candidate models answer in mirage mode
    /// (needs `[predictions]`).
    Bclean,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Ibp => "ibp",
            Method::Random => "random",
            Method::Aflite => "aflite",
            Method::Bclean => "bclean",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Method, String> {
        match s {
            "ibp" => Ok(Method::Ibp),
            "random" => Ok(Method::Random),
            "aflite" => Ok(Method::Aflite),
            "bclean" => Ok(Method::Bclean),
            _ => Err(format!("method \"{s}\" is not \"ibp\", \"random\", \"aflite\" or \"bclean\"")),
        }
    }
}

/// How the budget is shared out (`docs/tst-protocol.md`: `global`, `per-format`, `per-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Allocation {
    /// One ranking over every question.
    Global,
    /// Each answer format pruned separately, the budget split in proportion to size.
    PerFormat,
    /// Each question type pruned separately, the budget split in proportion to size.
    PerType,
}

impl Allocation {
    /// The allocation key of a question of this type and format.
    pub fn key_of(self, question_type: Option<&str>, format: AnswerFormat) -> String {
        match self {
            Allocation::Global => "all".into(),
            Allocation::PerFormat => format.as_str().into(),
            Allocation::PerType => question_type.unwrap_or("(no type)").into(),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Allocation::Global => "global",
            Allocation::PerFormat => "per-format",
            Allocation::PerType => "per-type",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Allocation, String> {
        match s.replace('_', "-").as_str() {
            "global" => Ok(Allocation::Global),
            "per-format" => Ok(Allocation::PerFormat),
            "per-type" => Ok(Allocation::PerType),
            _ => Err(format!("allocation \"{s}\" is not \"global\", \"per-format\" or \"per-type\"")),
        }
    }

    pub fn key(self, s: &Sample) -> String {
        self.key_of(s.question_type.as_deref(), s.answer_format)
    }
}

/// What IBP ranks by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rank {
    /// s(x), the blind model's probability of the gold answer (numeric: MRA).
    S,
    /// s(x) minus chance, so 2-option questions do not crowd the top.
    SMinusChance,
}

impl Rank {
    pub fn as_str(self) -> &'static str {
        match self {
            Rank::S => "s",
            Rank::SMinusChance => "s-minus-chance",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Rank, String> {
        match s.replace('_', "-").as_str() {
            "s" => Ok(Rank::S),
            "s-minus-chance" => Ok(Rank::SMinusChance),
            _ => Err(format!("rank \"{s}\" is not \"s\" or \"s-minus-chance\"")),
        }
    }
}

/// When IBP stops before its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StopRule {
    /// The verdict decides (default): nothing is removed unless blind accuracy is
    /// above its label-permutation null, only groups above their own null are
    /// pruned, and a group stops once its blind accuracy reaches its null's
    /// 95th percentile.
    Null,
    /// The earlier rule: stop once blind accuracy's 95% CI reaches chance.
    Chance,
    /// Prune to the budget whatever the evidence.
    Budget,
}

impl StopRule {
    pub fn as_str(self) -> &'static str {
        match self {
            StopRule::Null => "null",
            StopRule::Chance => "chance",
            StopRule::Budget => "budget",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<StopRule, String> {
        match s {
            "null" => Ok(StopRule::Null),
            "chance" => Ok(StopRule::Chance),
            "budget" => Ok(StopRule::Budget),
            _ => Err(format!("stop \"{s}\" is not \"null\", \"chance\" or \"budget\"")),
        }
    }
}

/// What pruning removes at once: a question, or every question of a unit, so
/// a benchmark scored by pairs or by image keeps its units whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// The fold group when diagnose groups folds (`group-by`), else the question.
    Default,
    Question,
    /// The questions on one image (the first image's sha256, else its path).
    Image,
    /// The questions sharing a meta field's value.
    Meta(String),
}

impl Unit {
    /// Parses `question`, `image` or `meta:FIELD`.
    pub fn parse(s: &str) -> std::result::Result<Unit, String> {
        match s.split_once(':') {
            None if s == "question" => Ok(Unit::Question),
            None if s == "image" => Ok(Unit::Image),
            Some(("meta", f)) if !f.is_empty() => Ok(Unit::Meta(f.to_string())),
            _ => Err(format!("unit \"{s}\" is not \"question\", \"image\" or \"meta:FIELD\"")),
        }
    }

    /// The unit in force under `diagnose`'s fold grouping, as a fold grouping
    /// (`None`: one question per unit).
    pub fn grouping(&self, diagnose: &DiagnoseConfig) -> Option<crate::diagnose::GroupBy> {
        use crate::diagnose::GroupBy;
        match self {
            Unit::Default => diagnose.group_by.clone(),
            Unit::Question => None,
            Unit::Image => Some(GroupBy::Image),
            Unit::Meta(f) => Some(GroupBy::Meta(f.clone())),
        }
    }

    /// The unit in words, resolved: "question", "image", "meta:FIELD", "question text".
    pub fn describe(&self, diagnose: &DiagnoseConfig) -> String {
        use crate::diagnose::GroupBy;
        match self.grouping(diagnose) {
            None => "question".into(),
            Some(GroupBy::Image) => "image".into(),
            Some(GroupBy::ImageCluster(t)) => format!("near-duplicate image cluster (phash within {t} bits)"),
            Some(GroupBy::Question) => "question text".into(),
            Some(GroupBy::Meta(f)) => format!("meta:{f}"),
        }
    }
}

/// AFLite's settings (Le Bras et al. 2020, Algorithm 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AfliteConfig {
    /// Random partitions per round (m; the paper's 64).
    pub partitions: usize,
    /// Training share of each partition (t, as a fraction of what remains).
    pub train_fraction: f64,
    /// Predictability at or above which an item may go (τ; the paper's 0.75).
    pub tau: f64,
    /// What the linear probes see.
    pub representation: Representation,
}

impl Default for AfliteConfig {
    fn default() -> Self {
        AfliteConfig { partitions: 64, train_fraction: 0.8, tau: 0.75, representation: Representation::Features }
    }
}

/// AFLite's representation of a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Representation {
    /// TsT's non-visual features, fit on each partition's training share.
    #[default]
    Features,
    /// Sentence embeddings (the paper's choice): multiple choice, the question's
    /// embedding then each option's in position order (zero-padded to the
    /// group's most options); other formats, the question+options text's embedding.
    Embeddings,
}

impl Representation {
    pub fn as_str(self) -> &'static str {
        match self {
            Representation::Features => "features",
            Representation::Embeddings => "embeddings",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Representation, String> {
        match s {
            "features" => Ok(Representation::Features),
            "embeddings" => Ok(Representation::Embeddings),
            _ => Err(format!("representation \"{s}\" is not \"features\" or \"embeddings\"")),
        }
    }
}

/// Settings of a pruning run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PruneConfig {
    pub method: Method,
    /// Total questions to remove (default 10%).
    pub budget: Amount,
    /// Questions removed per iteration (IBP b, AFLite k; default 50).
    pub batch: Amount,
    /// No question type falls below this many questions (default 10).
    pub floor: usize,
    /// IBP stops once the largest score is at or below this.
    pub threshold: Option<f64>,
    pub allocation: Allocation,
    /// Ranking score of multiple-choice questions (others always use s).
    pub rank: Rank,
    pub aflite: AfliteConfig,
    /// B-Clean: candidate models (`None`: every model with mirage predictions).
    pub bclean_models: Option<Vec<String>>,
    /// B-Clean step 3: a blind TsT-RF trained on the compromised questions removes what it also answers.
    pub bclean_step3: bool,
    /// B-Clean: remove the questions without an image.
    pub bclean_remove_imageless: bool,
    pub seed: u64,
    /// When IBP stops before its budget.
    pub stop: StopRule,
    /// What is removed at once.
    pub unit: Unit,
    /// Fresh fold assignments and forests (seeds never used for selection) on
    /// which the kept set is re-diagnosed after pruning; 0 skips it.
    pub independent_seeds: usize,
    /// The matched random control: remove exactly these counts per allocation
    /// key (what the run it matches removed) instead of splitting the budget.
    pub matched: Option<BTreeMap<String, usize>>,
}

impl Default for PruneConfig {
    fn default() -> Self {
        PruneConfig {
            method: Method::Ibp,
            budget: Amount::Fraction(0.1),
            batch: Amount::Count(50),
            floor: 10,
            threshold: None,
            allocation: Allocation::PerFormat,
            rank: Rank::S,
            aflite: AfliteConfig::default(),
            bclean_models: None,
            bclean_step3: false,
            bclean_remove_imageless: false,
            seed: crate::context::DEFAULT_SEED,
            stop: StopRule::Null,
            unit: Unit::Default,
            independent_seeds: 3,
            matched: None,
        }
    }
}

/// One removed question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Removed {
    pub id: String,
    pub question_type: Option<String>,
    pub format: AnswerFormat,
    /// 1-based iteration that removed it.
    pub iteration: usize,
    /// The score it was ranked by (s, s − chance, AFLite predictability; random: s).
    pub score: f64,
    pub reason: String,
}

/// The state at the start of one iteration (the last entry: the final set).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iteration {
    pub iteration: usize,
    pub size: usize,
    /// Removed so far, before this iteration.
    pub removed_before: usize,
    pub max_bias: f64,
    pub mean_bias: f64,
    /// TsT-RF blind accuracy of the set (AFLite: the probes' held-out accuracy).
    pub blind_accuracy: f64,
    /// The 95% bootstrap interval (TsT-RF: over questions or fold groups; AFLite: over questions, of the
    /// held-out accuracy).
    pub ci95: Option<(f64, f64)>,
    pub chance: f64,
    /// Removed in this iteration.
    pub removed: usize,
}

/// The result of a pruning run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pruned {
    pub method: Method,
    pub config: PruneConfig,
    /// Budget in questions, per allocation key.
    pub budgets: BTreeMap<String, usize>,
    /// Kept ids in input order.
    pub kept: Vec<String>,
    /// Removed in removal order.
    pub removed: Vec<Removed>,
    pub iterations: Vec<Iteration>,
    /// Why the loop ended.
    pub stop: String,
    /// TsT-RF on the input (before) and on the kept set (after), with the
    /// folds and forests that chose the removals.
    pub before: Option<Diagnosis>,
    pub after: Option<Diagnosis>,
    /// The kept set re-diagnosed with fresh seeds (no selection effect).
    #[serde(default)]
    pub after_independent: Option<Independent>,
    pub n_input: usize,
    /// What was removed at once ("question", "image", "meta:FIELD").
    #[serde(default)]
    pub unit: String,
    /// Units removed (each whole).
    #[serde(default)]
    pub units_removed: usize,
}

/// The kept set's blind accuracy on fold assignments and forests that did not
/// choose the removals: one diagnose with `seeds.len()` repeats from a seed
/// derived for this purpose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Independent {
    /// The repeats' seeds.
    pub seeds: Vec<u64>,
    pub n_samples: usize,
    pub blind_accuracy: f64,
    pub ci95: (f64, f64),
    pub chance: f64,
    pub majority: f64,
}

/// The 95% CI half-width (a fraction) within which one fresh seed measures the
/// kept set as well as more would.
pub const FRESH_SEED_HALF_WIDTH: f64 = 0.005;

/// How many fresh seeds re-measure a kept set of `n` questions whose blind
/// accuracy at the selection seed is `accuracy` with 95% CI `ci`: 1 when the
/// wider of that interval and the Wilson interval of `n` questions has a
/// half-width of at most [`FRESH_SEED_HALF_WIDTH`], else `max`. (The Wilson
/// interval keeps a small set whose bootstrap interval is degenerate, all
/// right or all wrong, from passing for a precise one.)
pub fn fresh_seed_count(max: usize, selection: Option<(f64, (f64, f64), usize)>) -> usize {
    let Some((accuracy, (lo, hi), n)) = selection else { return max };
    let (wlo, whi) = crate::stats::wilson(accuracy * n as f64, n as f64, 1.959_963_984_540_054);
    let half_width = ((hi - lo) / 2.0).max((whi - wlo) / 2.0);
    if max > 0 && half_width <= FRESH_SEED_HALF_WIDTH { 1 } else { max }
}

/// "1 fresh seed", "3 fresh seeds".
pub fn fresh_seeds(n: usize) -> String {
    format!("{n} fresh seed{}", if n == 1 { "" } else { "s" })
}

impl Independent {
    /// Re-diagnoses `kept` with fresh repeats (None when `max` is 0 or nothing is
    /// kept): [`fresh_seed_count`] of them, given the kept set's blind accuracy,
    /// 95% CI and size at the selection seed (more seeds would narrow nothing a
    /// reader can see once that interval is narrow: it is dominated by which
    /// questions were asked, not by the forests' seed).
    pub fn measure(
        kept: &[&Sample],
        dcfg: &DiagnoseConfig,
        seed: u64,
        max: usize,
        selection: Option<(f64, (f64, f64), usize)>,
        emb: Option<&crate::embed::SampleEmbeddings>,
    ) -> crate::error::Result<Option<Independent>> {
        if max == 0 || kept.is_empty() {
            return Ok(None);
        }
        let n = fresh_seed_count(max, selection);
        let fresh = crate::seed::rng_for(seed, "prune.independent", "");
        let cfg = DiagnoseConfig { seed: fresh, repeats: n, ..dcfg.clone() };
        let d = crate::progress::timed(&format!("after pruning: diagnose with {}", fresh_seeds(n)), || {
            crate::diagnose::diagnose_with_cache(kept, &cfg, emb, &mut crate::diagnose::GroupCache::default())
        })?;
        Ok(Some(Independent {
            seeds: (0..n as u64).map(|r| fresh.wrapping_add(r)).collect(),
            n_samples: d.n_samples,
            blind_accuracy: d.weighted,
            ci95: d.ci95,
            chance: d.chance,
            majority: d.majority,
        }))
    }
}

impl Pruned {
    /// The matched random control of this run: the same settings, removing
    /// exactly as many questions per allocation key as this run did.
    pub fn matched_control(&self) -> PruneConfig {
        let mut per_key: BTreeMap<String, usize> = self.budgets.keys().map(|k| (k.clone(), 0)).collect();
        for r in &self.removed {
            *per_key.entry(self.config.allocation.key_of(r.question_type.as_deref(), r.format)).or_default() += 1;
        }
        PruneConfig { method: Method::Random, matched: Some(per_key), ..self.config.clone() }
    }

    /// What was removed and why it stopped, then a short table of blind accuracy
    /// before and after (fresh seeds first: the figure to quote).
    pub fn summary(&self) -> String {
        let p = self;
        let units = if p.unit.is_empty() || p.unit == "question" {
            String::new()
        } else {
            format!(", {} whole unit(s) of one {}", p.units_removed, p.unit)
        };
        let mut text = format!(
            "{}: removed {} of {}{units} in {} iteration(s), stop rule {}: {}",
            p.method.as_str(),
            p.removed.len(),
            p.n_input,
            p.iterations.iter().filter(|i| i.removed > 0).count(),
            p.config.stop.as_str(),
            p.stop,
        );
        let line = |text: &mut String, name: &str, n: usize, acc: f64, ci: (f64, f64), chance: f64| {
            text.push_str(&format!(
                "\n    {name:<24} {n:>8}  {:>6.2}% ({:.2}-{:.2})  {:>6.2}%",
                acc * 100.0,
                ci.0 * 100.0,
                ci.1 * 100.0,
                chance * 100.0
            ));
        };
        text.push_str(&format!(
            "\n    {:<24} {:>8}  {:<22} {:>7}",
            "blind accuracy", "questions", "(95% CI)", "chance"
        ));
        if let Some(d) = &p.before {
            line(&mut text, "before", d.n_samples, d.weighted, d.ci95, d.chance);
        }
        if let Some(i) = &p.after_independent {
            line(
                &mut text,
                &format!("after, {}", fresh_seeds(i.seeds.len())),
                i.n_samples,
                i.blind_accuracy,
                i.ci95,
                i.chance,
            );
        }
        if let Some(d) = &p.after {
            line(&mut text, "after, selection seed", d.n_samples, d.weighted, d.ci95, d.chance);
        }
        text
    }

    pub fn removed_ids(&self) -> BTreeSet<&str> {
        self.removed.iter().map(|r| r.id.as_str()).collect()
    }

    /// Whether this run partitions `input` as a run on it does: every removed
    /// id once and in the input, `kept` the other ids in input order, and
    /// `n_input` their number. Why not, otherwise (a cached run that does not
    /// belong to this input).
    pub fn check_partition(&self, input: &[crate::sample::Sample]) -> std::result::Result<(), String> {
        let removed = self.removed_ids();
        if removed.len() != self.removed.len() {
            return Err("a question is removed twice".into());
        }
        if self.n_input != input.len() {
            return Err(format!("it was run on {} questions, not {}", self.n_input, input.len()));
        }
        let found = input.iter().filter(|s| removed.contains(s.id.as_str())).count();
        if found != removed.len() {
            return Err(format!("{} removed ids are not among the questions", removed.len() - found));
        }
        let kept = input.iter().map(|s| s.id.as_str()).filter(|id| !removed.contains(id));
        if !kept.eq(self.kept.iter().map(String::as_str)) {
            return Err(format!(
                "it keeps {} questions where {} are not removed",
                self.kept.len(),
                input.len() - removed.len()
            ));
        }
        Ok(())
    }

    /// Removed counts per (question type, reason kind).
    pub fn removed_per_type(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for r in &self.removed {
            *m.entry(r.question_type.clone().unwrap_or_else(|| "(no type)".into())).or_default() += 1;
        }
        m
    }
}

/// Under `stop = "null"`, measures the label-permutation null of `before`
/// (the diagnosis of `samples`) into it and returns why nothing may be removed
/// when blind accuracy is not above it; `None` when pruning may go on (or
/// another stop rule is set).
pub fn null_gate(
    samples: &[Sample],
    cfg: &PruneConfig,
    dcfg: &DiagnoseConfig,
    before: &mut Diagnosis,
) -> Option<String> {
    if cfg.stop != StopRule::Null {
        return None;
    }
    if before.null.is_none() {
        let refs: Vec<&Sample> = samples.iter().collect();
        before.null = Some(crate::diagnose::null::measure(&refs, dcfg, before, &dcfg.null));
    }
    let v = crate::diagnose::verdict::Verdict::of(before);
    (!v.above).then(|| {
        format!(
            "not above the null: {} Nothing is removed from a set its own verdict calls clean (`stop = \"budget\"` \
             prunes anyway)",
            v.sentence
        )
    })
}

/// A question's type for floors and per-type allocation.
pub fn type_name(s: &Sample) -> &str {
    s.question_type.as_deref().unwrap_or("(no type)")
}

/// Splits `budget` over keys in proportion to their sizes (largest remainder,
/// ties to the smaller key name).
pub fn split_budget(sizes: &BTreeMap<String, usize>, budget: usize) -> BTreeMap<String, usize> {
    let total: usize = sizes.values().sum();
    if total == 0 {
        return sizes.keys().map(|k| (k.clone(), 0)).collect();
    }
    let budget = budget.min(total);
    let mut out: BTreeMap<String, usize> = BTreeMap::new();
    let mut rema: Vec<(u128, &String)> = Vec::new();
    let mut given = 0;
    for (k, &n) in sizes {
        // Exact integer arithmetic: share = budget * n / total.
        let num = budget as u128 * n as u128;
        let q = (num / total as u128) as usize;
        out.insert(k.clone(), q.min(n));
        given += q.min(n);
        rema.push((num % total as u128, k));
    }
    rema.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    for (_, k) in rema.iter().cycle().take(rema.len() * 2) {
        if given >= budget {
            break;
        }
        let cap = sizes[*k];
        let e = out.get_mut(*k).expect("key present");
        if *e < cap {
            *e += 1;
            given += 1;
        }
    }
    out
}

/// Whether a pruning run needs sentence embeddings (with `diagnose`'s method).
pub fn needs_embeddings(cfg: &PruneConfig, diagnose: &DiagnoseConfig) -> bool {
    match cfg.method {
        Method::Ibp | Method::Random => diagnose.method.needs_embeddings(),
        Method::Aflite => cfg.aflite.representation == Representation::Embeddings || diagnose.method.needs_embeddings(),
        Method::Bclean => false,
    }
}

/// Runs the configured pruner with TsT-RF and the features representation.
/// B-Clean needs model predictions: use [`bclean_pruned`] for it.
pub fn prune(samples: &[Sample], cfg: &PruneConfig, diagnose: &DiagnoseConfig) -> Pruned {
    match prune_with(samples, cfg, diagnose, None) {
        Ok(p) => p,
        // Without embeddings only the embedding settings can fail: run TsT-RF on features.
        Err(_) => {
            let mut c = cfg.clone();
            c.aflite.representation = Representation::Features;
            let d = DiagnoseConfig { method: crate::diagnose::Method::TstRf, ..diagnose.clone() };
            prune_with(samples, &c, &d, None).unwrap_or_else(|e| unreachable!("TsT-RF pruning cannot fail: {e}"))
        }
    }
}

/// Runs the configured pruner; `emb` holds the samples' embeddings when the
/// diagnose method is TsT-Embed or both, or AFLite's representation is
/// embeddings (an error without them).
pub fn prune_with(
    samples: &[Sample],
    cfg: &PruneConfig,
    diagnose: &DiagnoseConfig,
    emb: Option<&crate::embed::SampleEmbeddings>,
) -> crate::error::Result<Pruned> {
    if needs_embeddings(cfg, diagnose) && emb.is_none() {
        return Err(crate::error::Error::Bug(format!(
            "{} pruning with diagnose method {} and representation {} ran without embeddings",
            cfg.method.as_str(),
            diagnose.method.as_str(),
            cfg.aflite.representation.as_str()
        )));
    }
    let mut pruned = match cfg.method {
        Method::Ibp | Method::Random => ibp::run(samples, cfg, diagnose, emb)?,
        Method::Aflite => aflite::run(samples, cfg, diagnose, emb)?,
        Method::Bclean => Pruned {
            method: Method::Bclean,
            config: cfg.clone(),
            budgets: BTreeMap::new(),
            kept: samples.iter().map(|s| s.id.clone()).collect(),
            removed: Vec::new(),
            iterations: Vec::new(),
            stop: "B-Clean needs model predictions: nothing removed (see bclean_pruned)".into(),
            before: None,
            after: None,
            after_independent: None,
            n_input: samples.len(),
            unit: "question".into(),
            units_removed: 0,
        },
    };
    if cfg.method != Method::Bclean {
        let kept: BTreeSet<&str> = pruned.kept.iter().map(String::as_str).collect();
        let kept: Vec<&Sample> = samples.iter().filter(|s| kept.contains(s.id.as_str())).collect();
        let selection = pruned.after.as_ref().map(|a| (a.weighted, a.ci95, a.n_samples));
        pruned.after_independent =
            Independent::measure(&kept, diagnose, cfg.seed, cfg.independent_seeds, selection, emb)?;
    }
    Ok(pruned)
}

/// B-Clean's decision as a pruning run: every removal in one step, with
/// TsT-RF on the set before and after (when `diagnose` is given).
pub fn bclean_pruned(
    samples: &[Sample],
    report: &bclean::BCleanReport,
    cfg: &PruneConfig,
    diagnose: Option<&DiagnoseConfig>,
) -> Pruned {
    let reasons: BTreeMap<&str, &str> = report.removed.iter().map(|r| (r.id.as_str(), r.reason.as_str())).collect();
    let removed: Vec<Removed> = samples
        .iter()
        .filter_map(|s| {
            reasons.get(s.id.as_str()).map(|why| Removed {
                id: s.id.clone(),
                question_type: s.question_type.clone(),
                format: s.answer_format,
                iteration: 1,
                score: 1.0,
                reason: if *why == "no_image" {
                    "has no image: answerable without looking by construction".to_string()
                } else {
                    format!("answered correctly without the image: {why}")
                },
            })
        })
        .collect();
    let kept: Vec<Sample> = samples.iter().filter(|s| !reasons.contains_key(s.id.as_str())).cloned().collect();
    let before = diagnose.map(|d| crate::diagnose::diagnose(samples, d));
    let after = diagnose.map(|d| crate::diagnose::diagnose(&kept, d));
    let point =
        |d: Option<&Diagnosis>, size: usize, removed_before: usize, removed: usize, iteration: usize| Iteration {
            iteration,
            size,
            removed_before,
            max_bias: f64::NAN,
            mean_bias: f64::NAN,
            blind_accuracy: d.map_or(f64::NAN, |d| d.weighted),
            ci95: d.map(|d| d.ci95),
            chance: d.map_or(f64::NAN, |d| d.chance),
            removed,
        };
    let iterations = vec![
        point(before.as_ref(), samples.len(), 0, removed.len(), 1),
        point(after.as_ref(), kept.len(), removed.len(), 0, 2),
    ];
    let mut budgets = BTreeMap::new();
    budgets.insert("all".to_string(), removed.len());
    Pruned {
        method: Method::Bclean,
        config: cfg.clone(),
        budgets,
        kept: kept.into_iter().map(|s| s.id).collect(),
        stop: format!(
            "B-Clean removes the union of {} candidate model(s)' mirage-correct questions{}",
            report.models.len(),
            if report.step3_removed > 0 {
                format!(" and {} found by step 3", report.step3_removed)
            } else {
                String::new()
            },
        ) + &match (report.imageless, report.imageless_removed) {
            (0, _) => String::new(),
            (n, true) => {
                format!("; the {n} questions without an image are removed (answerable without looking by construction)")
            }
            (n, false) => format!(
                "; the {n} questions without an image are kept (no mirage row exists for them; `imageless = \"remove\"` removes them)"
            ),
        },
        removed,
        iterations,
        before,
        after,
        after_independent: None,
        n_input: samples.len(),
        unit: "question".into(),
        units_removed: reasons.len(),
    }
}

/// Per-type counts of a sample set.
fn type_counts<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for s in samples {
        *m.entry(type_name(s).to_string()).or_default() += 1;
    }
    m
}

/// A score rounded for ranking, so float noise in the last bits never decides
/// an order (ties then go by id).
fn rank_key(score: f64) -> i64 {
    if score.is_finite() { (score * 1e6).round() as i64 } else { i64::MIN }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_fresh_seed_only_when_the_interval_is_already_narrow() {
        // 90,000 questions at 45.5%, CI ±0.3 points: one seed.
        assert_eq!(fresh_seed_count(3, Some((0.455, (0.452, 0.458), 90_000))), 1);
        // CI ±0.6 points: the configured maximum.
        assert_eq!(fresh_seed_count(3, Some((0.455, (0.449, 0.461), 90_000))), 3);
        // A degenerate interval of 12 questions, all right: Wilson's ±12 points decides.
        assert_eq!(fresh_seed_count(3, Some((1.0, (1.0, 1.0), 12))), 3);
        // A narrow bootstrap interval on 10,000 questions: Wilson's ±1 point decides.
        assert_eq!(fresh_seed_count(3, Some((0.5, (0.499, 0.501), 10_000))), 3);
        assert_eq!(fresh_seed_count(3, None), 3);
        assert_eq!(fresh_seed_count(0, Some((0.5, (0.5, 0.5), 1_000_000))), 0);
    }

    #[test]
    fn amounts_parse() {
        assert_eq!(Amount::parse("50"), Ok(Amount::Count(50)));
        assert_eq!(Amount::parse("20%"), Ok(Amount::Fraction(0.2)));
        // A bare fraction could be a count: refused, with the percentage to write.
        let e = Amount::parse("0.25").unwrap_err();
        assert!(e.contains("is it 0.25 questions or 25% of them?") && e.contains("\"25%\""), "{e}");
        assert!(Amount::parse("1.0").unwrap_err().contains("is it 1 questions or 100% of them?"));
        assert!(Amount::parse("150%").is_err());
        assert!(Amount::parse("-1").is_err());
        assert!(Amount::parse("lots").is_err());
        assert_eq!(Amount::Fraction(0.2).resolve(4241), 848);
    }

    #[test]
    fn budget_split_is_proportional_and_exact() {
        let sizes: BTreeMap<String, usize> =
            [("a".to_string(), 700), ("b".to_string(), 200), ("c".to_string(), 100)].into_iter().collect();
        let s = split_budget(&sizes, 101);
        assert_eq!(s.values().sum::<usize>(), 101);
        assert_eq!(s["a"], 71); // 70.7 gets the largest remainder
        assert_eq!(s["b"], 20);
        assert_eq!(s["c"], 10);
        // Never more than a key holds.
        let s = split_budget(&sizes, 5000);
        assert_eq!(s.values().sum::<usize>(), 1000);
    }
}
