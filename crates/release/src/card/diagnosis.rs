//! The card's blind-answerability section: TsT-RF (or TsT-Embed) overall and
//! per group, and the groups cross-validated with fewer folds.

use serde::Serialize;

use crate::diagnose::{DiagnoseConfig, Diagnosis, GroupBy};
use crate::io::escape::markdown as md;

/// How much of the set a blind model answers (TsT-RF), overall and per group
/// (`templates/diagnosis.md`).
pub(crate) fn diagnosis_section(out: &mut String, d: &Diagnosis, cfg: &DiagnoseConfig, embed: Option<&Diagnosis>) {
    if cfg.method == crate::diagnose::Method::TstEmbed {
        return embed_section(out, d, cfg);
    }
    out.push_str(&super::template::render("diagnosis.md", &DiagnosisView::of(d, cfg, embed)));
}

/// What `templates/diagnosis.md` shows.
#[derive(Serialize)]
struct DiagnosisView<'a> {
    #[serde(flatten)]
    folds: Folds<'a>,
    blind: Measured,
    macro_by_type: f64,
    /// The departures from the TsT protocol, in words.
    departures: String,
    clusters: Option<Clusters>,
    verdict: String,
    groups: Vec<GroupRow<'a>>,
    rare_vocab: usize,
    null_trees: usize,
    max_permutations: usize,
    moot_permutations: usize,
    alpha: f64,
    /// The top features the table shows, each once, with what it measures.
    features: Vec<FeatureMeaning<'a>>,
    shortcuts: Vec<ShortcutLine<'a>>,
    pooled_name: &'static str,
    min_group: usize,
    pooled: Vec<Pooled<'a>>,
    fewer_folds: Option<String>,
    embed: Option<EmbedLine>,
    combine: &'static str,
    outside: Option<OutsideLine<'a>>,
}

/// A blind accuracy with its 95% interval and its baselines.
#[derive(Serialize)]
pub(crate) struct Measured {
    accuracy: f64,
    low: f64,
    high: f64,
    chance: f64,
    majority: f64,
}

impl Measured {
    pub(crate) fn of(d: &Diagnosis) -> Self {
        Measured { accuracy: d.weighted, low: d.ci95.0, high: d.ci95.1, chance: d.chance, majority: d.majority }
    }
}

/// The near-duplicate image clusters the folds were grouped by.
#[derive(Serialize)]
struct Clusters {
    threshold: u32,
    joining: usize,
    images_joined: usize,
    images: usize,
    hashed: usize,
    /// Blind accuracy with folds grouped by image instead.
    by_image: Option<f64>,
}

/// A row of the per-group table.
#[derive(Serialize)]
struct GroupRow<'a> {
    question_type: &'a str,
    format: &'static str,
    n: usize,
    blind: f64,
    chance: f64,
    majority: f64,
    null: Option<NullCell>,
    top_feature: Option<&'a str>,
}

/// The group's label-permutation null: its mean, 95th percentile and p.
#[derive(Serialize)]
struct NullCell {
    mean: f64,
    q95: Option<f64>,
    /// Questions the null was tested on, when a sample of the group.
    sample: Option<usize>,
    p: String,
}

#[derive(Serialize)]
struct FeatureMeaning<'a> {
    name: &'a str,
    meaning: String,
}

/// The shortcut a multiple-choice group's forest leans on most.
#[derive(Serialize)]
struct ShortcutLine<'a> {
    question_type: &'a str,
    sentence: &'a str,
    gold_share: f64,
    n: usize,
    option_share: f64,
    feature: &'a str,
}

/// A pooled group: its format and the question types fit together.
#[derive(Serialize)]
struct Pooled<'a> {
    format: &'static str,
    types: &'a [String],
}

/// TsT-Embed beside TsT-RF.
#[derive(Serialize)]
struct EmbedLine {
    accuracy: f64,
    questions: usize,
    low: f64,
    high: f64,
    chance: f64,
}

/// Outside scores applied on the forest's folds.
#[derive(Serialize)]
struct OutsideLine<'a> {
    file: &'a str,
    sha256: &'a str,
    mean_gold_probability: f64,
    prior_mean_gold_probability: f64,
    difference_low: f64,
    difference_high: f64,
    accuracy: f64,
    questions: usize,
    prior_accuracy: f64,
    combine: &'static str,
    warning: Option<String>,
}

/// How the folds were made, as the card's diagnosis section and the datasheet say it.
#[derive(Serialize)]
pub(crate) struct Folds<'a> {
    folds: usize,
    /// `image`, `image-cluster`, `video`, `question`, `meta`; `None`: stratified.
    group_by: Option<&'static str>,
    bits: Option<u32>,
    meta_field: Option<&'a str>,
    repeats: usize,
    seed: u64,
}

impl<'a> Folds<'a> {
    pub(crate) fn of(cfg: &'a DiagnoseConfig) -> Self {
        let (group_by, bits, meta_field) = match &cfg.group_by {
            None => (None, None, None),
            Some(GroupBy::Image) => (Some("image"), None, None),
            Some(GroupBy::ImageCluster(t)) => (Some("image-cluster"), Some(*t), None),
            Some(GroupBy::Video) => (Some("video"), None, None),
            Some(GroupBy::Question) => (Some("question"), None, None),
            Some(GroupBy::Meta(f)) => (Some("meta"), None, Some(f.as_str())),
        };
        Folds { folds: cfg.folds, group_by, bits, meta_field, repeats: cfg.repeats, seed: cfg.seed }
    }
}

impl<'a> DiagnosisView<'a> {
    fn of(d: &'a Diagnosis, cfg: &'a DiagnoseConfig, embed: Option<&Diagnosis>) -> Self {
        let lines = crate::blind_groups::group_lines(d);
        let mut features: Vec<FeatureMeaning<'a>> = Vec::new();
        for f in lines.iter().filter_map(|g| g.top_feature) {
            if !features.iter().any(|s| s.name == f) {
                features.push(FeatureMeaning { name: f, meaning: crate::diagnose::glossary::describe(f) });
            }
        }
        DiagnosisView {
            folds: Folds::of(cfg),
            blind: Measured::of(d),
            macro_by_type: d.macro_by_type,
            departures: crate::diagnose::report::departures(cfg).join("; "),
            clusters: d.image_clusters.as_ref().map(|c| Clusters {
                threshold: c.threshold,
                joining: c.joining,
                images_joined: c.images_joined,
                images: c.images,
                hashed: c.hashed,
                by_image: c.blind_grouped_by_image,
            }),
            verdict: crate::diagnose::verdict::Verdict::of(d).sentence,
            groups: lines
                .iter()
                .map(|g| GroupRow {
                    question_type: g.question_type,
                    format: g.format,
                    n: g.n,
                    blind: g.blind,
                    chance: g.chance,
                    majority: g.majority,
                    null: g.null.map(|n| NullCell {
                        mean: n.test.mean,
                        q95: n.test.q95,
                        sample: (n.test.tested < n.n).then_some(n.test.tested),
                        p: n.test.p_cell(),
                    }),
                    top_feature: g.top_feature,
                })
                .collect(),
            rare_vocab: cfg.features.rare_vocab,
            null_trees: cfg.null.trees,
            max_permutations: cfg.null.max_permutations,
            moot_permutations: cfg.null.moot_permutations,
            alpha: cfg.null.alpha,
            features,
            // Multiple choice: the shortcut of each group above its null, once and in words.
            shortcuts: lines
                .iter()
                .filter(|g| g.top_feature.is_some())
                .filter_map(|g| {
                    let c = g.group.shortcut.as_ref()?;
                    Some(ShortcutLine {
                        question_type: g.question_type,
                        sentence: &c.sentence,
                        gold_share: c.gold_share,
                        n: c.n,
                        option_share: c.option_share,
                        feature: &c.feature,
                    })
                })
                .collect(),
            pooled_name: crate::diagnose::POOLED,
            min_group: cfg.min_group,
            pooled: d
                .groups
                .iter()
                .filter(|g| !g.pooled_types.is_empty())
                .map(|g| Pooled { format: g.format.as_str(), types: &g.pooled_types })
                .collect(),
            fewer_folds: fewer_folds_sentence(d, cfg),
            embed: embed.map(|e| EmbedLine {
                accuracy: e.weighted,
                questions: e.n_samples,
                low: e.ci95.0,
                high: e.ci95.1,
                chance: e.chance,
            }),
            combine: cfg.combine.as_str(),
            outside: d.outside.as_ref().map(|o| {
                let f = &o.figures;
                OutsideLine {
                    file: &o.file,
                    sha256: &o.sha256,
                    mean_gold_probability: f.mean_gold_probability,
                    prior_mean_gold_probability: f.answer_prior_mean_gold_probability,
                    difference_low: f.difference_ci95[0],
                    difference_high: f.difference_ci95[1],
                    accuracy: f.accuracy,
                    questions: f.n,
                    prior_accuracy: f.answer_prior_accuracy,
                    combine: o.combine.as_str(),
                    warning: crate::diagnose::outside::implausible(&md::code(&o.file), f, d.weighted),
                }
            }),
        }
    }
}

/// TsT-Embed as the pipeline's diagnostic (`templates/diagnosis-embed.md`).
fn embed_section(out: &mut String, d: &Diagnosis, cfg: &DiagnoseConfig) {
    let view = EmbedView {
        folds: cfg.folds,
        repeats: cfg.repeats,
        seed: cfg.seed,
        blind: Measured::of(d),
        questions: d.n_samples,
        groups: d
            .groups
            .iter()
            .map(|g| GroupRow {
                question_type: g.question_type.as_deref().unwrap_or("(none)"),
                format: g.format.as_str(),
                n: g.n,
                blind: g.blind_accuracy,
                chance: g.chance,
                majority: g.majority,
                null: None,
                top_feature: None,
            })
            .collect(),
        fewer_folds: fewer_folds_sentence(d, cfg),
    };
    out.push_str(&super::template::render("diagnosis-embed.md", &view));
}

/// What `templates/diagnosis-embed.md` shows.
#[derive(Serialize)]
struct EmbedView<'a> {
    folds: usize,
    repeats: usize,
    seed: u64,
    blind: Measured,
    /// The multiple-choice and yes/no questions the probe scores.
    questions: usize,
    groups: Vec<GroupRow<'a>>,
    fewer_folds: Option<String>,
}

/// "Groups with fewer questions (or fold groups) than 5 were cross-validated
/// with fewer folds: ..." (`templates/fewer-folds.md`), or `None` when every
/// group used `cfg.folds`.
pub(crate) fn fewer_folds_sentence(d: &Diagnosis, cfg: &DiagnoseConfig) -> Option<String> {
    #[derive(Serialize)]
    struct FewerFolds<'a> {
        folds: usize,
        groups: Vec<Group<'a>>,
    }
    #[derive(Serialize)]
    struct Group<'a> {
        name: &'a str,
        format: &'static str,
        n: usize,
        /// The folds it was cross-validated with.
        k: usize,
    }
    let groups: Vec<Group> = d
        .groups
        .iter()
        .filter_map(|g| {
            Some(Group {
                k: crate::diagnose::report::fewer_folds(g, cfg)?,
                name: g.question_type.as_deref().unwrap_or("(none)"),
                format: g.format.as_str(),
                n: g.n,
            })
        })
        .collect();
    (!groups.is_empty()).then(|| super::template::render("fewer-folds.md", &FewerFolds { folds: cfg.folds, groups }))
}
