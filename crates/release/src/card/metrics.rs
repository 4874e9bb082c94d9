//! The card's model sections: the stress-test variants, each model's results
//! (full, kept and removed sets), the gap pruning buys, the gold-label audit
//! (`templates/variants.md`, `metrics.md`, `gap.md`, `audit.md`).

use serde::Serialize;

/// `## The gap pruning buys`: each model's accuracy with and without the image
/// on the full, kept and removed sets (and the random control's kept set).
pub(crate) fn gap_section(out: &mut String, m: &crate::MetricsOut, removes: bool) {
    if !removes {
        return;
    }
    #[derive(Serialize)]
    struct GapView<'a> {
        /// Why the gap was not measured.
        missing: Option<&'a str>,
        models: Option<Vec<ModelGap<'a>>>,
    }
    #[derive(Serialize)]
    struct ModelGap<'a> {
        model: &'a str,
        blind_condition: &'a str,
        sets: Vec<GapCell<'a>>,
        /// Starts with the model's name: data, shown as written.
        sentence: &'a str,
    }
    #[derive(Serialize)]
    struct GapCell<'a> {
        set: &'a str,
        n: usize,
        with_image: f64,
        without_image: f64,
        gap: f64,
        low: f64,
        high: f64,
    }
    let g = m.gap.as_ref();
    let view = GapView {
        missing: g.and_then(|g| g.missing.as_deref()),
        models: g.filter(|g| g.missing.is_none()).map(|g| {
            g.models
                .iter()
                .map(|mg| ModelGap {
                    model: &mg.model,
                    blind_condition: &mg.blind_condition,
                    sets: mg
                        .sets
                        .iter()
                        .map(|c| GapCell {
                            set: &c.set,
                            n: c.n_paired,
                            with_image: c.with_image,
                            without_image: c.without_image,
                            gap: c.gap,
                            low: c.gap_ci95.0,
                            high: c.gap_ci95.1,
                        })
                        .collect(),
                    sentence: &mg.sentence,
                })
                .collect()
        }),
    };
    out.push_str(&super::template::render("gap.md", &view));
}

/// `## Gold-label audit`: questions sighted models agree on another answer.
pub(crate) fn audit_section(out: &mut String, m: &crate::MetricsOut) {
    #[derive(Serialize)]
    struct AuditView {
        questions: usize,
        /// Which sighted models must agree, in words.
        rule: String,
        kept: usize,
        removed: usize,
    }
    let kept = m.label_audit.iter().filter(|r| r.set == "kept").count();
    let view = AuditView {
        questions: m.label_audit.len(),
        rule: m.audit_rule.describe(),
        kept,
        removed: m.label_audit.len() - kept,
    };
    out.push_str(&super::template::render("audit.md", &view));
}

/// The stress-test variants: one config per kind with rows, and what was skipped.
pub(crate) fn variants_section(out: &mut String, variants: &[crate::VariantInfo]) {
    #[derive(Serialize)]
    struct VariantRow<'a> {
        kind: &'a str,
        config: Option<&'a str>,
        rows: usize,
        expected: &'a str,
        /// "N reason" per reason.
        skipped: String,
    }
    let variants: Vec<VariantRow> = variants
        .iter()
        .map(|v| VariantRow {
            kind: &v.kind,
            config: v.config.as_deref(),
            rows: v.rows,
            expected: &v.expected,
            skipped: v.skipped.iter().map(|(why, n)| format!("{n} {why}")).collect::<Vec<_>>().join("; "),
        })
        .collect();
    #[derive(Serialize)]
    struct VariantsView<'a> {
        variants: Vec<VariantRow<'a>>,
    }
    out.push_str(&super::template::render("variants.md", &VariantsView { variants }));
}

/// What `templates/metrics.md` shows.
#[derive(Serialize)]
struct MetricsView<'a> {
    files: usize,
    predictions: usize,
    resamples: usize,
    numeric: &'a str,
    /// Each model's accuracy on the full benchmark, the kept questions and the
    /// removed ones: predictions for removed questions are scored, not dropped.
    by_set: Vec<BySet<'a>>,
    conditions: Vec<ConditionRow<'a>>,
    derived: Vec<DerivedRow<'a>>,
}

#[derive(Serialize)]
struct BySet<'a> {
    model: &'a str,
    full: Option<SetCell>,
    kept: Option<SetCell>,
    removed: Option<SetCell>,
}

#[derive(Serialize)]
struct SetCell {
    accuracy: f64,
    low: f64,
    high: f64,
    /// Questions the model answered, of the set's questions.
    n: usize,
    questions: usize,
}

#[derive(Serialize)]
struct ConditionRow<'a> {
    model: &'a str,
    condition: &'a str,
    n: usize,
    accuracy: Option<f64>,
    low: Option<f64>,
    high: Option<f64>,
    abstained: Option<f64>,
}

#[derive(Serialize)]
struct DerivedRow<'a> {
    model: &'a str,
    visual_dependence: Option<Paired>,
    mirage_score: Option<Paired>,
    mirage_vs_guess: Option<f64>,
    null_baseline: Option<f64>,
    robustness: Option<f64>,
}

/// A paired metric's value (none when undefined) with its n.
#[derive(Serialize)]
struct Paired {
    value: Option<f64>,
    n: usize,
}

impl Paired {
    fn of(p: Option<&crate::metrics::file::Paired>) -> Option<Paired> {
        p.map(|p| Paired { value: p.value, n: p.n_paired })
    }
}

/// `## Model results`: what `report/metrics.json` says, per model and condition.
pub(crate) fn metrics_section(
    out: &mut String,
    m: &crate::metrics::MetricsFile,
    by_set: &[crate::metrics::SetAccuracy],
) {
    let mut models: Vec<&str> = by_set.iter().map(|r| r.model.as_str()).collect();
    models.dedup();
    let cell = |model: &str, set: &str| {
        by_set.iter().find(|r| r.model == model && r.set == set).map(|r| SetCell {
            accuracy: r.accuracy,
            low: r.ci95.0,
            high: r.ci95.1,
            n: r.n,
            questions: r.questions,
        })
    };
    let view = MetricsView {
        files: m.import.files.len(),
        predictions: m.import.predictions,
        resamples: m.settings.resamples,
        numeric: &m.settings.numeric,
        by_set: models
            .into_iter()
            .map(|model| BySet {
                model,
                full: cell(model, "full"),
                kept: cell(model, "kept"),
                removed: cell(model, "removed"),
            })
            .collect(),
        conditions: m
            .models
            .iter()
            .flat_map(|(model, v)| {
                v.conditions.iter().map(move |(condition, c)| ConditionRow {
                    model,
                    condition,
                    n: c.n,
                    accuracy: c.accuracy,
                    low: c.ci95[0],
                    high: c.ci95[1],
                    abstained: c.abstention_rate,
                })
            })
            .collect(),
        derived: m
            .models
            .iter()
            .filter_map(|(model, v)| v.derived.as_ref().filter(|d| !d.is_empty()).map(|d| (model, d)))
            .map(|(model, d)| DerivedRow {
                model,
                visual_dependence: Paired::of(d.visual_dependence.as_ref()),
                mirage_score: Paired::of(d.mirage_score.as_ref()),
                mirage_vs_guess: d.mirage_vs_guess.as_ref().and_then(|g| g.gap),
                null_baseline: d.null_baseline,
                robustness: d.robustness.as_ref().and_then(|x| x.r),
            })
            .collect(),
    };
    out.push_str(&super::template::render("metrics.md", &view));
}
