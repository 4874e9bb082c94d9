//! `[diagnose]` and `[prune]` (with `[filter]`): the settings a pipeline file and a
//! command's flags both resolve through, with the dataset's seed and numeric scoring.

use super::*;

/// The diagnose and prune settings of a run, validated.
#[derive(Debug, Clone)]
pub struct StageSettings {
    pub diagnose: crate::diagnose::DiagnoseConfig,
    pub prune: Option<PrunePlan>,
}

/// `[diagnose]` and `[prune]` with the dataset's seed and its one scoring of
/// numeric answers: what a pipeline file and a command's flags both resolve through.
pub(super) fn stage_settings(
    seed: u64,
    scoring_raw: (Option<&str>, Option<crate::wire::MraWire>),
    diagnose: Option<&crate::wire::DiagnoseWire>,
    prune: Option<&crate::wire::PruneWire>,
    ctx: &mut Ctx<'_>,
) -> StageSettings {
    let mut cfg = diagnose_config(diagnose, seed, ctx);
    let prune_plan = prune.map(|p| prune_plan(p, seed, ctx));
    // One scoring of numeric answers for every stage.
    (cfg.numeric, cfg.mra) = scoring(scoring_raw.0, scoring_raw.1, ctx);
    if diagnose.is_some_and(|d| d.score.is_some()) && cfg.method != crate::diagnose::Method::Both {
        ctx.err("diagnose.score", "`score` combines two diagnostics").help =
            Some("set method = \"both\", or remove `score`".into());
    }
    if prune_plan.as_ref().is_some_and(|p| p.config.method != crate::prune::Method::Aflite)
        && prune.is_some_and(|p| p.representation.is_some())
    {
        ctx.err("prune.representation", "`representation` is an AFLite setting").help =
            Some("set method = \"aflite\", or remove `representation`".into());
    }
    // One level of evidence: the verdict, IBP's gate and its after-pruning check.
    if let Some(a) = prune.and_then(|p| p.alpha) {
        if a.is_finite() && a > 0.0 && a <= 0.1 {
            cfg.null.alpha = a;
        } else {
            ctx.err("prune.alpha", format!("must be above 0 and at most 0.1; found {a}")).help =
                Some("write the p-value a removal needs, e.g. 0.01 (the default) or 0.05 (weaker evidence)".into());
        }
    }
    // A p-value is compared with alpha only where it can resolve it: with N
    // permutations the smallest Monte Carlo p is 1 / (N + 1).
    if ((cfg.null.max_permutations + 1) as f64) * cfg.null.alpha < 1.0 {
        let need = (1.0 / cfg.null.alpha).ceil() as usize - 1;
        ctx.err(
            "diagnose.permutations",
            format!(
                "{} permutations cannot resolve p <= {}: the smallest p they give is 1/{}",
                cfg.null.max_permutations,
                cfg.null.alpha,
                cfg.null.max_permutations + 1
            ),
        )
        .help = Some(format!("write permutations = {need} or more (the default is 199)"));
    }
    StageSettings { diagnose: cfg, prune: prune_plan }
}

/// The diagnose and prune settings of a command run without a pipeline file:
/// its flags over the defaults, validated as a pipeline's sections are.
pub fn flag_settings(flags: &Flags) -> Result<StageSettings> {
    let seed = flags.dataset.seed.unwrap_or(DEFAULT_SEED);
    let diagnose = flags.sets_diagnose()?.then_some(&flags.diagnose);
    super::from_command_line(flags.keys()?, |ctx| {
        stage_settings(seed, (flags.dataset.numeric.as_deref(), flags.dataset.mra), diagnose, flags.prune.as_ref(), ctx)
    })
}

/// `[dataset] numeric` and `mra`: how every stage scores numeric answers.
pub(super) fn scoring(
    numeric_raw: Option<&str>,
    mra_raw: Option<crate::wire::MraWire>,
    ctx: &mut Ctx<'_>,
) -> (crate::sample::NumericScoring, crate::sample::MraRule) {
    let mut numeric = crate::sample::NumericScoring::Exact;
    if let Some(n) = numeric_raw {
        match crate::sample::NumericScoring::parse(n) {
            Ok(n) => numeric = n,
            Err(e) => {
                ctx.err("dataset.numeric", e).help = Some("write \"exact\", \"mra\" or \"tolerance:0.05\"".into())
            }
        }
    }
    let mra = match mra_raw {
        Some(crate::wire::MraWire::Inclusive) => crate::sample::MraRule::Inclusive,
        _ => crate::sample::MraRule::Strict,
    };
    (numeric, mra)
}

/// A stage section that sets `numeric` or `mra`, which the dataset sets once for every stage.
pub(super) fn moved_to_dataset(
    ctx: &mut Ctx<'_>,
    section: &str,
    numeric: Option<&str>,
    mra: Option<crate::wire::MraWire>,
) {
    if let Some(n) = numeric {
        ctx.err(&format!("{section}.numeric"), "numeric answers are scored one way for every stage").help =
            Some(format!(
                "move it to [dataset]: numeric = \"{n}\" (diagnose, its baselines, pruning and metrics all use it)"
            ));
    }
    if mra.is_some() {
        ctx.err(&format!("{section}.mra"), "numeric answers are scored one way for every stage").help =
            Some("move it to [dataset]: mra = \"strict\" or \"inclusive\"".into());
    }
}

pub(super) fn recipe_source(w: &crate::wire::RecipeWire) -> crate::ml::recipes::RecipeSource {
    use crate::ml::recipes::{ExtractSource, Family, RecipeSource, StatSource};
    use crate::wire::FamilyWire as W;
    let family = |f: &W| match f {
        W::Count => Family::Count,
        W::Moments => Family::Moments,
        W::LogMoments => Family::LogMoments,
        W::Gold => Family::Gold,
        W::LogDistance => Family::LogDistance,
        W::Value => Family::Value,
    };
    RecipeSource {
        name: w.name.clone(),
        types: w.types.clone(),
        extract: w.extract.iter().map(|e| ExtractSource { from: e.from.clone(), regex: e.regex.clone() }).collect(),
        stats: w
            .stats
            .iter()
            .map(|s| StatSource {
                key: s.key.to_vec(),
                ordered: s.ordered,
                families: s.families.iter().map(family).collect(),
            })
            .collect(),
        keywords: w.keywords.clone(),
    }
}

pub(super) fn diagnose_config(
    w: Option<&crate::wire::DiagnoseWire>,
    seed: u64,
    ctx: &mut Ctx<'_>,
) -> crate::diagnose::DiagnoseConfig {
    let mut cfg = crate::diagnose::DiagnoseConfig { seed, ..Default::default() };
    let Some(w) = w else { return cfg };
    cfg.folds = w.folds.unwrap_or(cfg.folds);
    if w.folds.is_some() {
        cfg.folds_given = Some(match ctx.flags.contains_key("diagnose.folds") {
            true => crate::diagnose::FoldsGiven::Flag,
            false => crate::diagnose::FoldsGiven::Pipeline(ctx.loc("diagnose.folds")),
        });
    }
    cfg.repeats = w.repeats.unwrap_or(cfg.repeats);
    cfg.trees = w.trees.unwrap_or(cfg.trees);
    cfg.regression_trees = w.regression_trees.unwrap_or(cfg.regression_trees);
    if let Some(g) = &w.group_by {
        match crate::diagnose::GroupBy::parse(g) {
            Ok(g) => cfg.group_by = Some(g),
            Err(e) => {
                ctx.err("diagnose.group-by", e).help =
                    Some("write \"image\", \"image-cluster\", \"video\", \"question\" or \"meta:FIELD\"".into())
            }
        }
    }
    moved_to_dataset(ctx, "diagnose", w.numeric.as_deref(), w.mra);
    cfg.min_group = w.min_group.unwrap_or(cfg.min_group);
    cfg.features.cross_fit = w.cross_fit.unwrap_or(cfg.features.cross_fit);
    cfg.null.max_permutations = w.permutations.unwrap_or(cfg.null.max_permutations);
    if let Some(r) = &w.permutation_stop {
        match r.as_str() {
            "decided" => cfg.null.stopping = crate::stats::Stopping::Decided,
            "all" => cfg.null.stopping = crate::stats::Stopping::All,
            _ => {
                ctx.err("diagnose.permutation-stop", format!("\"{r}\" is not \"decided\" or \"all\"")).help =
                    Some("\"decided\" stops once p is decided at alpha; \"all\" draws every permutation".into())
            }
        }
    }
    if let Some(n) = w.null_trees {
        cfg.null.trees = n;
        cfg.null.regression_trees = n.saturating_mul(2);
    }
    if let Some(n) = w.null_sample {
        if n >= 100 {
            cfg.null.sample_cap = n;
        } else {
            ctx.err("diagnose.null-sample", format!("{n} questions: the null needs a sample of at least 100"));
        }
    }
    if let Some(fields) = &w.meta_features {
        cfg.features.meta_fields = Some(fields.clone());
    }
    if let Some(m) = w.method {
        cfg.method = match m {
            crate::wire::DiagnoseMethodWire::TstRf => crate::diagnose::Method::TstRf,
            crate::wire::DiagnoseMethodWire::TstEmbed => crate::diagnose::Method::TstEmbed,
            crate::wire::DiagnoseMethodWire::Both => crate::diagnose::Method::Both,
        };
    }
    if let Some(sc) = w.score {
        cfg.combine = match sc {
            crate::wire::ScoreWire::Max => crate::diagnose::Combine::Max,
            crate::wire::ScoreWire::Mean => crate::diagnose::Combine::Mean,
        };
    }
    let combine = w.combine.map(|c| match c {
        crate::wire::ScoreWire::Max => crate::diagnose::Combine::Max,
        crate::wire::ScoreWire::Mean => crate::diagnose::Combine::Mean,
    });
    match (&w.scores, combine) {
        (Some(raw), combine) => {
            if let Some(path) = ctx.resolve("diagnose.scores", raw) {
                cfg.outside_source = Some(crate::diagnose::outside::OutsideSource {
                    path,
                    written: raw.clone(),
                    combine: combine.unwrap_or_default(),
                });
            }
        }
        (None, Some(_)) => {
            ctx.err("diagnose.combine", "`combine` says how outside scores combine, and no `scores` are given").help =
                Some("give the outside scores (scores = \"path/to/scores.jsonl\" in [diagnose], or --scores FILE), or remove `combine`".into())
        }
        (None, None) => {}
    }
    for v in crate::bounds::diagnose(&cfg) {
        ctx.err(v.key, v.message);
    }
    let sources: Vec<crate::ml::recipes::RecipeSource> = w.recipes.iter().map(recipe_source).collect();
    match crate::ml::recipes::compile(&sources) {
        Ok(recipes) => cfg.features.recipes = recipes,
        Err(problems) => {
            for p in problems {
                ctx.err(&format!("diagnose.{}", p.key), p.message).help = p.help;
            }
        }
    }
    cfg
}

/// A validated `[prune]` section.
#[derive(Debug, Clone)]
pub struct PrunePlan {
    pub config: crate::prune::PruneConfig,
    /// Also run the matched random control.
    pub control: bool,
}

impl StageSettings {
    /// The settings `blindspot prune` runs with: a pipeline without `[prune]`
    /// prunes as an empty `[prune]` does (the defaults, the dataset's seed, no
    /// control).
    pub fn for_pruning(self) -> (crate::diagnose::DiagnoseConfig, PrunePlan) {
        let seed = self.diagnose.seed;
        let plan = self.prune.unwrap_or_else(|| PrunePlan {
            config: crate::prune::PruneConfig { seed, ..Default::default() },
            control: false,
        });
        (self.diagnose, plan)
    }
}

pub(super) fn prune_plan(w: &crate::wire::PruneWire, seed: u64, ctx: &mut Ctx<'_>) -> PrunePlan {
    use crate::prune::{Allocation, Amount, Method, PruneConfig, Rank};
    use crate::wire::AmountWire;
    let mut cfg = PruneConfig { seed, ..Default::default() };
    let mut amount = |key: &str, v: &AmountWire| -> Option<Amount> {
        let parsed = match v {
            AmountWire::Count(c) => Ok(Amount::Count(*c as usize)),
            AmountWire::Fraction(f) => Err(Amount::not_a_fraction(*f)),
            AmountWire::Text(t) => Amount::parse(t),
        };
        match parsed {
            Ok(a) => Some(a),
            Err(e) => {
                ctx.err(&format!("prune.{key}"), e).help = Some("write a count (800) or a percentage (\"20%\")".into());
                None
            }
        }
    };
    if let Some(a) = w.budget.as_ref().and_then(|b| amount("budget", b)) {
        cfg.budget = a;
    }
    if let Some(a) = w.batch.as_ref().and_then(|b| amount("batch", b)) {
        cfg.batch = a;
    }
    if let Some(m) = &w.method {
        match Method::parse(m) {
            Ok(m) => cfg.method = m,
            Err(e) => ctx.err("prune.method", e).help = Some("write \"ibp\", \"aflite\" or \"random\"".into()),
        }
    }
    if let Some(a) = &w.allocation {
        match Allocation::parse(a) {
            Ok(a) => cfg.allocation = a,
            Err(e) => {
                ctx.err("prune.allocation", e).help = Some("write \"global\", \"per-format\" or \"per-type\"".into())
            }
        }
    }
    if let Some(r) = &w.rank {
        match Rank::parse(r) {
            Ok(r) => cfg.rank = r,
            Err(e) => ctx.err("prune.rank", e).help = Some("write \"s\" or \"s-minus-chance\"".into()),
        }
    }
    cfg.floor = w.floor.unwrap_or(cfg.floor);
    cfg.threshold = w.threshold;
    if let Some(b) = w.stop_at_chance {
        ctx.err("prune.stop-at-chance", "stop-at-chance is replaced by `stop`").help = Some(format!(
            "write stop = \"{}\" instead (stop = \"null\", the default, stops where blind accuracy reaches its \
             label-permutation null)",
            if b { "chance" } else { "budget" }
        ));
    }
    if let Some(r) = &w.stop {
        match crate::prune::StopRule::parse(r) {
            Ok(r) => cfg.stop = r,
            Err(e) => ctx.err("prune.stop", e).help = Some("write \"null\", \"chance\" or \"budget\"".into()),
        }
    }
    if let Some(u) = &w.unit {
        match crate::prune::Unit::parse(u) {
            Ok(u) => cfg.unit = u,
            Err(e) => ctx.err("prune.unit", e).help = Some("write \"question\", \"image\" or \"meta:FIELD\"".into()),
        }
    }
    cfg.independent_seeds = w.independent_seeds.unwrap_or(cfg.independent_seeds);
    cfg.aflite.partitions = w.partitions.unwrap_or(cfg.aflite.partitions);
    cfg.aflite.train_fraction = w.train_fraction.unwrap_or(cfg.aflite.train_fraction);
    cfg.aflite.tau = w.tau.unwrap_or(cfg.aflite.tau);
    if let Some(r) = w.representation {
        cfg.aflite.representation = match r {
            crate::wire::RepresentationWire::Features => crate::prune::Representation::Features,
            crate::wire::RepresentationWire::Embeddings => crate::prune::Representation::Embeddings,
        };
    }
    cfg.bclean_models = w.models.clone();
    if let Some(Err(e)) = w.models.as_deref().map(|m| crate::predictions::check_models(m, "`models`")) {
        ctx.err("prune.models", e);
    }
    cfg.bclean_step3 = w.step3;
    cfg.bclean_remove_imageless = w.imageless == Some(crate::wire::ImagelessWire::Remove);
    if cfg.method != Method::Bclean && (w.models.is_some() || w.step3 || w.imageless.is_some()) {
        ctx.err("prune.models", "`models`, `step3` and `imageless` are B-Clean settings").help =
            Some("set method = \"bclean\", or remove them".into());
    }
    if w.control && matches!(cfg.method, Method::Random | Method::Bclean) {
        ctx.err("prune.control", "the matched random control is for IBP and AFLite").help =
            Some("remove `control`, or set method = \"ibp\"".into());
    }
    for v in crate::bounds::prune(&cfg) {
        ctx.err(v.key, v.message);
    }
    PrunePlan { config: cfg, control: w.control }
}

/// `[filter]`: a preset (its rule fixed) or a rule written out.
pub(super) fn filter_rule(w: &crate::wire::BlindFilterWire, ctx: &mut Ctx<'_>) -> Option<crate::filter::Rule> {
    use crate::filter::{MinCorrect, MinModels, Preset, Rule};
    let models = w.models.clone();
    if let Some(name) = &w.preset {
        let preset = match Preset::parse(name) {
            Ok(p) => p,
            Err(e) => {
                ctx.err("filter.preset", e);
                return None;
            }
        };
        for (key, set) in [
            ("conditions", w.conditions.is_some()),
            ("min-models", w.min_models.is_some()),
            ("min-correct", w.min_correct.is_some()),
        ] {
            if set {
                ctx.err(&format!("filter.{key}"), format!("preset \"{name}\" fixes `{key}` to its paper's")).help =
                    Some(
                        "remove it, or remove `preset` and write the whole rule (conditions, min-models, min-correct)"
                            .into(),
                    );
            }
        }
        return Some(preset.rule(models));
    }
    let Some(conditions) = w.conditions.clone() else {
        ctx.err("filter", "a filter needs a `preset` or its `conditions`").help = Some(
            "write preset = \"mmstar\", \"mmmu-pro\", \"emma\" or \"bclean\", or conditions = [\"no_image\"] with min-models and min-correct"
                .into(),
        );
        return None;
    };
    if let Err(e) = Rule::check_conditions(&conditions) {
        ctx.err("filter.conditions", e);
        return None;
    }
    let min_models = match w.min_models.as_ref().map(|c| MinModels::parse(&c.text())).transpose() {
        Ok(m) => m.unwrap_or(MinModels::Count(1)),
        Err(e) => {
            ctx.err("filter.min-models", e);
            return None;
        }
    };
    let min_correct = match w.min_correct.as_ref().map(|c| MinCorrect::parse(&c.text())).transpose() {
        Ok(m) => m.unwrap_or(MinCorrect::Majority),
        Err(e) => {
            ctx.err("filter.min-correct", e);
            return None;
        }
    };
    if let MinCorrect::Count(m) = min_correct
        && let Some(v) = crate::bounds::check_count(&crate::bounds::MIN_CORRECT, m)
    {
        ctx.err(v.key, v.message);
    }
    if models.as_ref().is_some_and(Vec::is_empty) {
        ctx.err("filter.models", "an empty list of models").help =
            Some("list the models, or remove `models` to use every model with predictions".into());
    }
    if let Some(Err(e)) = models.as_deref().map(|m| crate::predictions::check_models(m, "`models`")) {
        ctx.err("filter.models", e);
    }
    Some(Rule { preset: None, models, conditions, min_models, min_correct })
}
