//! Diagnose outputs as data: the rows of `scores.parquet` (one per question
//! and repeat), `diagnose.json`'s document (headline numbers and per-group
//! summaries), and the per-fold feature matrices for running any other
//! learner on exactly the same input. The release crate renders the report
//! files and plots from them.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Builder, Int32Builder, RecordBatch, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{DiagnoseConfig, Diagnosis, GroupBy};
use crate::error::{Error, Result};
use crate::io::parquet::write_batch;
use crate::io::r6;
use crate::sample::{MraRule, NumericScoring};

/// The scores table as one Arrow batch.
pub fn scores_batch(d: &Diagnosis) -> Result<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("question_type", DataType::Utf8, true),
        Field::new("format", DataType::Utf8, false),
        Field::new("n_options", DataType::Int32, false),
        Field::new("chance", DataType::Float64, false),
        Field::new("fold", DataType::Int32, false),
        Field::new("repeat", DataType::Int32, false),
        Field::new("prediction", DataType::Utf8, false),
        Field::new("correct", DataType::Float64, false),
        Field::new("s", DataType::Float64, false),
        Field::new("s_minus_chance", DataType::Float64, false),
    ]));
    let (mut id, mut qt, mut fmt, mut pred) =
        (StringBuilder::new(), StringBuilder::new(), StringBuilder::new(), StringBuilder::new());
    let (mut nopt, mut fold, mut rep) = (Int32Builder::new(), Int32Builder::new(), Int32Builder::new());
    let (mut chance, mut correct, mut s, mut smc) =
        (Float64Builder::new(), Float64Builder::new(), Float64Builder::new(), Float64Builder::new());
    for r in &d.rows {
        id.append_value(&r.id);
        qt.append_option(r.question_type.as_deref());
        fmt.append_value(r.format.as_str());
        nopt.append_value(r.n_options as i32);
        chance.append_value(r.chance);
        fold.append_value(r.fold as i32);
        rep.append_value(r.repeat as i32);
        pred.append_value(&r.prediction);
        correct.append_value(r.correct);
        s.append_value(r.s);
        smc.append_value(r.s_minus_chance);
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(id.finish()),
        Arc::new(qt.finish()),
        Arc::new(fmt.finish()),
        Arc::new(nopt.finish()),
        Arc::new(chance.finish()),
        Arc::new(fold.finish()),
        Arc::new(rep.finish()),
        Arc::new(pred.finish()),
        Arc::new(correct.finish()),
        Arc::new(s.finish()),
        Arc::new(smc.finish()),
    ];
    RecordBatch::try_new(schema, cols).map_err(|e| Error::Bug(format!("scores batch: {e}")))
}

/// `diagnose.json`: the headline, the settings, every departure from the
/// TsT protocol (`docs/tst-protocol.md`), the groups, and (when run) the meta-field audit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DiagnoseReport {
    #[serde(default)]
    pub method: String,
    pub n_samples: usize,
    pub blind_accuracy: Headline,
    pub chance: f64,
    #[serde(default)]
    pub majority: f64,
    /// `above` or `not above`: blind accuracy against its label-permutation null.
    #[serde(default)]
    pub verdict: String,
    /// The verdict in words.
    #[serde(default)]
    pub verdict_text: String,
    /// The null's p-value of the observed blind accuracy (none without a null).
    #[serde(default)]
    pub p_value: Option<f64>,
    /// The label-permutation null, overall and per group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null: Option<super::null::Null>,
    #[serde(default)]
    pub ids_fingerprint: String,
    #[serde(default)]
    pub settings: Settings,
    #[serde(default)]
    pub departures: Vec<String>,
    /// The headline per answer format: what `blind_accuracy.weighted` mixes.
    #[serde(default)]
    pub by_format: Vec<FormatRow>,
    #[serde(default)]
    pub groups: Vec<GroupRow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspect_features: Option<Vec<SuspectFeature>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_audit: Option<MetaAudit>,
    /// With `group-by = "image-cluster"`: how near-duplicate images joined questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_clusters: Option<super::config::ImageClusterCount>,
    /// With `method = "both"`: how s(x) combines the two methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s: Option<String>,
    /// With `method = "both"`: TsT-Embed's own headline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tst_embed: Option<EmbedHeadline>,
    /// Outside scores combined into s(x), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_scores: Option<OutsideReport>,
}

/// Blind accuracy: weighted by question, macro over question types, and the 95% interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Headline {
    pub weighted: f64,
    #[serde(rename = "macro")]
    pub macro_by_type: f64,
    #[serde(default)]
    pub ci95: [f64; 2],
}

/// Blind accuracy over the questions of one answer format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FormatRow {
    pub format: String,
    pub n: usize,
    pub blind_accuracy: f64,
    pub chance: f64,
    pub majority: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Settings {
    pub folds: usize,
    pub repeats: usize,
    pub seed: u64,
    pub group_by: Option<String>,
    pub trees: usize,
    pub regression_trees: usize,
    /// How numeric questions are scored: `mra`, `exact` or `tolerance:<rel>`.
    pub numeric: String,
    pub mra: String,
    pub model_per: String,
    pub min_group: usize,
    pub pooled_group: String,
    pub cross_fit: usize,
    pub ci95: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tst_embed: Option<ProbeSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeSettings {
    pub model: String,
    pub features: String,
    pub probe: String,
    pub components: usize,
    pub l2: f64,
    pub formats: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupRow {
    pub question_type: Option<String>,
    pub format: String,
    pub n: usize,
    pub blind_accuracy: f64,
    #[serde(default)]
    pub chance: f64,
    #[serde(default)]
    pub majority: f64,
    #[serde(default)]
    pub mean_s: f64,
    #[serde(default)]
    pub top_features: Vec<FeatureImportance>,
    /// The pooled group of small question types only: the types it holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pooled_types: Vec<String>,
    /// Only when fewer than `settings.folds`: the folds this group was
    /// cross-validated with (it has fewer questions, or fold groups, than that).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folds: Option<usize>,
    /// Multiple choice: the heaviest option feature in words, with how often it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortcut: Option<super::Shortcut>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FeatureImportance {
    pub feature: String,
    pub importance: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuspectFeature {
    pub name: String,
    pub used: bool,
    pub solo_blind_accuracy: f64,
    pub majority: f64,
    pub n: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetaAudit {
    pub rule: String,
    pub fields: Vec<AuditedField>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AuditedField {
    pub name: String,
    pub used: bool,
    pub n: usize,
    pub solo_blind_accuracy: f64,
    pub majority: f64,
    /// Share of the questions carrying the field whose value is their gold answer.
    pub gold_equal: f64,
    pub suspect: bool,
    /// Listed fields: blind accuracy with and without the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ablation: Option<AblationRow>,
}

/// Blind accuracy with every listed meta field and without this one, paired per question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AblationRow {
    pub with: f64,
    pub without: f64,
    pub difference: f64,
    pub ci95: [f64; 2],
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EmbedHeadline {
    pub n_samples: usize,
    pub blind_accuracy: Headline,
    pub chance: f64,
    pub majority: f64,
}

/// The folds `g` was cross-validated with, when fewer than `cfg.folds`.
pub fn fewer_folds(g: &super::GroupSummary, cfg: &DiagnoseConfig) -> Option<usize> {
    (g.folds > 0 && g.folds < cfg.folds).then_some(g.folds)
}

/// Outside scores combined into s(x): from which file, by which rule, and what
/// the forest and the outside scores measure each on their own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutsideReport {
    /// The scores file as named, and its sha256.
    pub file: String,
    pub sha256: String,
    /// `max` or `mean`.
    pub combine: String,
    /// How the combined s(x) is made and used, in words.
    pub rule: String,
    /// TsT-RF's own blind accuracy (the headline's, repeated): the outside scores never change it.
    pub forest_blind_accuracy: f64,
    /// Mean s(x) of TsT-RF alone, and after combining.
    pub forest_mean_s: f64,
    pub combined_mean_s: f64,
    /// The outside scores on their own, over every question diagnosed.
    pub outside: super::outside::OutsideFigures,
    /// `above` when the 95% interval of (outside score − answer prior) is above 0.
    pub verdict: String,
    pub verdict_text: String,
    /// When the outside scores are right implausibly often: their accuracy more
    /// than 20 points above the better of TsT-RF's blind accuracy and the answer
    /// prior's, on at least 30 questions (`outside::implausible`).
    pub warning: Option<String>,
}

impl OutsideReport {
    pub fn of(d: &Diagnosis, o: &super::outside::OutsideApplied) -> OutsideReport {
        let f = &o.figures;
        let above = f.difference_ci95[0] > 0.0;
        let pct = |v: f64| format!("{:.1}%", v * 100.0);
        let verdict_text = format!(
            "outside scores: mean held-out probability of the gold {} against {} for the training folds' answer \
             distribution alone (difference 95% CI {:+.1} to {:+.1} pts): {}; their most probable answer is right on \
             {} of the {} questions, TsT-RF's on {}, the training folds' most frequent answer on {}.",
            pct(f.mean_gold_probability),
            pct(f.answer_prior_mean_gold_probability),
            f.difference_ci95[0] * 100.0,
            f.difference_ci95[1] * 100.0,
            if above {
                "the outside model finds more than the answer distribution"
            } else {
                "no evidence that the outside model finds more than the answer distribution"
            },
            pct(f.accuracy),
            f.n,
            pct(d.weighted),
            pct(f.answer_prior_accuracy)
        );
        let mut figures = f.clone();
        figures.mean_gold_probability = r6(f.mean_gold_probability);
        figures.answer_prior_mean_gold_probability = r6(f.answer_prior_mean_gold_probability);
        figures.difference_ci95 = [r6(f.difference_ci95[0]), r6(f.difference_ci95[1])];
        figures.accuracy = r6(f.accuracy);
        figures.answer_prior_accuracy = r6(f.answer_prior_accuracy);
        for m in &mut figures.by_format {
            m.mean_gold_probability = r6(m.mean_gold_probability);
            m.accuracy = r6(m.accuracy);
        }
        OutsideReport {
            file: o.file.clone(),
            sha256: o.sha256.clone(),
            combine: o.combine.as_str().into(),
            rule: format!(
                "s(x) of each row is the {} of TsT-RF's held-out probability of the gold and the outside score of the \
                 question; blind accuracy, its interval and the verdict are TsT-RF's (a null needs the model refit on \
                 permuted answers, which blindspot cannot do for an outside model); IBP ranks by the combined s(x), \
                 refitting the forests each iteration while each question's outside score stays fixed",
                o.combine.as_str()
            ),
            forest_blind_accuracy: r6(d.weighted),
            forest_mean_s: r6(o.forest_mean_s),
            combined_mean_s: r6(o.combined_mean_s),
            outside: figures,
            verdict: if above { "above" } else { "not above" }.into(),
            verdict_text,
            warning: super::outside::implausible(&o.file, f, d.weighted),
        }
    }
}

fn headline(d: &Diagnosis) -> Headline {
    Headline { weighted: r6(d.weighted), macro_by_type: r6(d.macro_by_type), ci95: [r6(d.ci95.0), r6(d.ci95.1)] }
}

impl DiagnoseReport {
    /// The report of `d`, run under `cfg`; `embed`: TsT-Embed's own diagnosis (method both).
    pub fn of(d: &Diagnosis, cfg: &DiagnoseConfig, embed: Option<&Diagnosis>) -> DiagnoseReport {
        let probe = || {
            let p = super::tst_embed::TstEmbedConfig::default();
            ProbeSettings {
                model: "all-MiniLM-L6-v2 sentence embeddings (question, each option)".into(),
                features: "multiple choice: per option cos(option, question), mean and max cos to the other options, \
                           the option's principal components (fit on the training folds); yes/no: the question's \
                           principal components"
                    .into(),
                probe: "conditional logit (multiple choice) / logistic regression (yes/no), L2 on standardised \
                        features, Newton's method"
                    .into(),
                components: p.components,
                l2: p.l2,
                formats: "multiple choice and yes/no (open and numeric questions are not scored)".into(),
            }
        };
        let both = cfg.method == super::Method::Both;
        let audited = !d.audit.is_empty();
        let verdict = super::verdict::Verdict::of(d);
        DiagnoseReport {
            image_clusters: d.image_clusters.clone(),
            method: cfg.method.as_str().into(),
            n_samples: d.n_samples,
            blind_accuracy: headline(d),
            chance: r6(d.chance),
            majority: r6(d.majority),
            verdict: verdict.word().into(),
            verdict_text: verdict.sentence.clone(),
            p_value: verdict.p_value.map(r6),
            null: d.null.clone(),
            ids_fingerprint: d.fingerprint.clone(),
            settings: Settings {
                folds: cfg.folds,
                repeats: cfg.repeats,
                seed: cfg.seed,
                group_by: cfg.group_by.as_ref().map(GroupBy::name),
                trees: cfg.trees,
                regression_trees: cfg.regression_trees,
                numeric: cfg.numeric.name(),
                mra: match cfg.mra {
                    MraRule::Strict => "strict (<)",
                    MraRule::Inclusive => "inclusive (<=)",
                }
                .into(),
                model_per: "question type x answer format".into(),
                min_group: cfg.min_group,
                pooled_group: super::POOLED.into(),
                cross_fit: cfg.features.cross_fit,
                ci95: if cfg.group_by.is_some() {
                    "cluster bootstrap: 1,000 resamples of the fold groups"
                } else {
                    "bootstrap: 1,000 resamples of the questions"
                }
                .into(),
                tst_embed: (cfg.method != super::Method::TstRf).then(probe),
                score: both.then(|| cfg.combine.as_str().to_string()),
            },
            departures: departures(cfg),
            by_format: by_format(d),
            groups: d
                .groups
                .iter()
                .map(|g| GroupRow {
                    question_type: g.question_type.clone(),
                    format: g.format.as_str().into(),
                    n: g.n,
                    blind_accuracy: r6(g.blind_accuracy),
                    chance: r6(g.chance),
                    majority: r6(g.majority),
                    mean_s: r6(g.mean_s),
                    top_features: g
                        .top_features
                        .iter()
                        .map(|(n, v)| FeatureImportance { feature: n.clone(), importance: r6(*v) })
                        .collect(),
                    pooled_types: g.pooled_types.clone(),
                    folds: fewer_folds(g, cfg),
                    shortcut: g.shortcut.as_ref().map(|c| super::Shortcut {
                        gold_share: r6(c.gold_share),
                        option_share: r6(c.option_share),
                        ..c.clone()
                    }),
                })
                .collect(),
            suspect_features: audited.then(|| {
                d.audit
                    .iter()
                    .filter(|f| f.suspect)
                    .map(|f| SuspectFeature {
                        name: f.field.clone(),
                        used: f.used,
                        solo_blind_accuracy: r6(f.solo_accuracy),
                        majority: r6(f.majority),
                        n: f.n,
                    })
                    .collect()
            }),
            meta_audit: audited.then(|| MetaAudit {
                rule: format!(
                    "per meta field: 5-fold cross-validated accuracy of predicting the gold from the field's value \
                     alone (the training folds' most common gold per value), against the majority baseline; suspect \
                     when n >= {} and it reaches {} or beats the baseline by {} or more, or when the value is the \
                     gold answer (as the scorer compares answers) on more than {} of the questions carrying it; each \
                     field listed in meta-features is ablated: blind accuracy with and without it, paired per \
                     question, with a bootstrap 95% interval of the difference",
                    super::audit::MIN_ROWS,
                    super::audit::NEAR_PERFECT,
                    super::audit::FAR_ABOVE,
                    super::audit::GOLD_EQUAL
                ),
                fields: d
                    .audit
                    .iter()
                    .map(|f| AuditedField {
                        name: f.field.clone(),
                        used: f.used,
                        n: f.n,
                        solo_blind_accuracy: r6(f.solo_accuracy),
                        majority: r6(f.majority),
                        gold_equal: r6(f.gold_equal),
                        suspect: f.suspect,
                        ablation: f.ablation.as_ref().map(|a| AblationRow {
                            with: r6(a.with),
                            without: r6(a.without),
                            difference: r6(a.difference),
                            ci95: [r6(a.ci95.0), r6(a.ci95.1)],
                        }),
                    })
                    .collect(),
            }),
            s: both.then(|| {
                format!(
                    "s(x) is the {} of TsT-RF's and TsT-Embed's probability of the gold answer where TsT-Embed scores \
                     the question, else TsT-RF's; blind accuracy is TsT-RF's",
                    cfg.combine.as_str()
                )
            }),
            tst_embed: embed.filter(|_| both).map(|e| EmbedHeadline {
                n_samples: e.n_samples,
                blind_accuracy: headline(e),
                chance: r6(e.chance),
                majority: r6(e.majority),
            }),
            outside_scores: d.outside.as_ref().map(|o| OutsideReport::of(d, o)),
        }
    }
}

/// The groups' figures pooled per answer format, weighted by questions.
fn by_format(d: &Diagnosis) -> Vec<FormatRow> {
    let mut acc: std::collections::BTreeMap<&str, [f64; 4]> = std::collections::BTreeMap::new();
    for g in &d.groups {
        let e = acc.entry(g.format.as_str()).or_default();
        let n = g.n as f64;
        e[0] += n;
        e[1] += n * g.blind_accuracy;
        e[2] += n * g.chance;
        e[3] += n * g.majority;
    }
    acc.into_iter()
        .map(|(f, [n, a, c, m])| FormatRow {
            format: f.to_string(),
            n: n as usize,
            blind_accuracy: r6(a / n.max(1.0)),
            chance: r6(c / n.max(1.0)),
            majority: r6(m / n.max(1.0)),
        })
        .collect()
}

/// Where this run departs from the TsT protocol (`docs/tst-protocol.md`),
/// in the words the card and `diagnose.json` print.
pub fn departures(cfg: &DiagnoseConfig) -> Vec<String> {
    let mut out = vec![
        "one model per (question type, answer format) rather than per type: real types mix formats, and s(x) is comparable only within one".to_string(),
        format!("open answers are classified over the training folds' vocabulary; answers seen fewer than {} times are pooled into \"other\", which is never correct", cfg.features.rare_vocab),
    ];
    match cfg.numeric {
        NumericScoring::Mra => out.push("numeric questions count their MRA (partial credit) as accuracy".to_string()),
        NumericScoring::Exact => out.push(
            "numeric questions are scored exact (the TsT protocol: MRA): the forest's prediction snaps to the nearest answer seen in the training folds".to_string(),
        ),
        NumericScoring::Tolerance(r) => out.push(format!(
            "numeric questions are scored right within a relative error of {r} (the TsT protocol: MRA)"
        )),
    }
    if cfg.features.cross_fit >= 2 {
        out.push(format!("training rows' answer statistics are cross-fitted in {} blocks (the release uses in-sample statistics; `cross-fit = 0` restores them)", cfg.features.cross_fit));
    }
    if cfg.group_by.is_some() {
        out.push("folds keep groups together, and the 95% interval resamples groups (a cluster bootstrap)".to_string());
    }
    out.push("multiple choice is modelled per option, not per letter (the release predicts the gold's position): each option is a row with the question's features, its own and its rank among the options, the forest scores whether it is the gold, the answer is the best-scored option and s(x) the gold's share of the scores".to_string());
    out.push(format!(
        "the label-permutation null's statistic is the blind accuracy of {}-tree forests (observed and permuted alike); decisions need p <= {}",
        cfg.null.trees, cfg.null.alpha
    ));
    out
}

/// Writes every fold's train and test feature matrices with ids and labels as
/// Parquet (`<group>/r<repeat>_f<fold>_{train,test}.parquet`), so any other
/// learner can be run on exactly the same input. Multiple-choice groups are written
/// one row per question with per-position columns, and also as the position-free
/// model sees them (`..._{train,test}_options.parquet`): one row per option, the
/// columns regrouped per option (`ml::features::candidates`), with `option` (its
/// position) and `is_gold`.
pub fn export_features(dir: &Path, samples: &[crate::sample::Sample], cfg: &DiagnoseConfig) -> Result<usize> {
    use crate::ml::features::Featurizer;
    use crate::ml::features::candidates::CandidateLayout;
    let mut written = 0;
    for ((qtype, format), group) in super::group_samples(samples, cfg.min_group) {
        let name = format!("{}__{}", sanitize(qtype.as_deref().unwrap_or("all")), format.as_str());
        let gdir = dir.join(&name);
        std::fs::create_dir_all(&gdir).map_err(|e| Error::io(&gdir, e))?;
        for repeat in 0..cfg.repeats.max(1) {
            let fold_of = super::assign_folds(&group, format, repeat, cfg);
            let k = fold_of.iter().copied().max().map_or(0, |m| m + 1);
            for fold in 0..k {
                let (train, test) = super::split_fold(&group, &fold_of, fold);
                let (f, x_train) = Featurizer::fit_transform(&train, &cfg.features);
                let x_test = f.transform(&test);
                for (part, rows, x) in [("train", &train, &x_train), ("test", &test, &x_test)] {
                    let batch = feature_batch(f.names(), x, rows)?;
                    write_batch(&gdir.join(format!("r{repeat}_f{fold}_{part}.parquet")), &batch)?;
                    written += 1;
                    if format == crate::sample::AnswerFormat::MultipleChoice {
                        let layout = CandidateLayout::of(f.names());
                        let n_options: Vec<usize> = rows.iter().map(|s| s.options.len()).collect();
                        let batch = option_batch(layout.names(), &layout.expand(x, &n_options), rows)?;
                        write_batch(&gdir.join(format!("r{repeat}_f{fold}_{part}_options.parquet")), &batch)?;
                        written += 1;
                    }
                }
            }
        }
    }
    Ok(written)
}

/// The position-free rows of multiple-choice questions: `id`, `option` (the
/// option's position), one column per candidate feature, `is_gold` (1/0; null when
/// the question has no gold index).
fn option_batch(
    names: &[String],
    x: &crate::ml::forest::Matrix,
    rows: &[&crate::sample::Sample],
) -> Result<RecordBatch> {
    let options = || rows.iter().flat_map(|s| (0..s.options.len()).map(move |j| (*s, j)));
    let mut fields = vec![Field::new("id", DataType::Utf8, false), Field::new("option", DataType::Int64, false)];
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(arrow::array::StringArray::from_iter_values(options().map(|(s, _)| s.id.as_str()))),
        Arc::new(arrow::array::Int64Array::from_iter_values(options().map(|(_, j)| j as i64))),
    ];
    for (j, n) in names.iter().enumerate() {
        fields.push(Field::new(n, DataType::Float64, true));
        cols.push(Arc::new(arrow::array::Float64Array::from_iter_values((0..x.n_rows()).map(|i| x.get(i, j)))));
    }
    fields.push(Field::new("is_gold", DataType::Float64, true));
    cols.push(Arc::new(arrow::array::Float64Array::from_iter(
        options().map(|(s, j)| s.answer_index.map(|g| f64::from(u8::from(usize::try_from(g).ok() == Some(j))))),
    )));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).map_err(|e| Error::Bug(format!("option batch: {e}")))
}

fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
}

/// Columns: `id`, one per feature, `label` (gold index for multiple choice,
/// 1/0 for yes/no, the number for numeric; null for open answers, whose class
/// ids differ per fold) and `answer` (the gold text).
fn feature_batch(
    names: &[String],
    x: &crate::ml::forest::Matrix,
    rows: &[&crate::sample::Sample],
) -> Result<RecordBatch> {
    use crate::sample::AnswerFormat;
    let mut fields = vec![Field::new("id", DataType::Utf8, false)];
    let mut cols: Vec<ArrayRef> =
        vec![Arc::new(arrow::array::StringArray::from_iter_values(rows.iter().map(|s| s.id.as_str())))];
    for (j, n) in names.iter().enumerate() {
        fields.push(Field::new(n, DataType::Float64, true));
        cols.push(Arc::new(arrow::array::Float64Array::from_iter_values((0..x.n_rows()).map(|i| x.get(i, j)))));
    }
    fields.push(Field::new("label", DataType::Float64, true));
    cols.push(Arc::new(arrow::array::Float64Array::from_iter(rows.iter().map(|s| match s.answer_format {
        AnswerFormat::MultipleChoice => s.answer_index.map(f64::from),
        AnswerFormat::YesNo => Some(f64::from(u8::from(s.answer == "yes"))),
        AnswerFormat::Numeric => crate::sample::parse_number(&s.answer),
        AnswerFormat::Open => None,
    }))));
    fields.push(Field::new("answer", DataType::Utf8, false));
    cols.push(Arc::new(arrow::array::StringArray::from_iter_values(rows.iter().map(|s| s.answer.as_str()))));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).map_err(|e| Error::Bug(format!("feature batch: {e}")))
}
