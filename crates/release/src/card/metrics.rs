//! The card's model sections: the stress-test variants, each model's results
//! (full, kept and removed sets), the gap pruning buys, the gold-label audit.

use std::fmt::Write;

use super::pct;
use crate::io::escape::markdown as md;

/// `## The gap pruning buys`: each model's accuracy with and without the image
/// on the full, kept and removed sets (and the random control's kept set).
pub(crate) fn gap_section(out: &mut String, m: &crate::MetricsOut, removes: bool) {
    if !removes {
        return;
    }
    out.push_str("## The gap pruning buys\n\n");
    let Some(g) = &m.gap else { return };
    if let Some(why) = &g.missing {
        let _ = writeln!(out, "Not measured: {}.\n", md::text(why));
        return;
    }
    out.push_str(
        "Accuracy with the image (original) and without it, on the questions each model answered in both \
         conditions (n), and the gap with its paired bootstrap 95% CI (`report/gap.json`).\n\n",
    );
    out.push_str(
        "| model | without | set | n | with image | without image | gap (95% CI) |\n|---|---|---|---:|---:|---:|---|\n",
    );
    for mg in &g.models {
        for c in &mg.sets {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {:+.1} ({:+.1} to {:+.1}) |",
                md::literal(&mg.model),
                mg.blind_condition,
                c.set,
                c.n_paired,
                pct(c.with_image),
                pct(c.without_image),
                c.gap * 100.0,
                c.gap_ci95.0 * 100.0,
                c.gap_ci95.1 * 100.0
            );
        }
    }
    out.push('\n');
    for mg in &g.models {
        // The sentence starts with the model's name: data, shown as written.
        let _ = writeln!(out, "- {}", md::text_with_data(&mg.sentence, &[mg.model.as_str()]));
    }
    out.push('\n');
}

/// `## Gold-label audit`: questions sighted models agree on another answer.
pub(crate) fn audit_section(out: &mut String, m: &crate::MetricsOut) {
    out.push_str("## Gold-label audit\n\n");
    let _ = writeln!(
        out,
        "{} question(s) where {} agree on one answer that is not the gold ({} in the default config, {} removed). \
         The audit changes nothing: it is not a filter, and each question stays where it was; check each in \
         `report/label_audit.csv`.\n",
        m.label_audit.len(),
        m.audit_rule.describe(),
        m.label_audit.iter().filter(|r| r.set == "kept").count(),
        m.label_audit.iter().filter(|r| r.set != "kept").count()
    );
}

/// The stress-test variants: one config per kind with rows, and what was skipped.
pub(crate) fn variants_section(out: &mut String, variants: &[crate::VariantInfo]) {
    out.push_str("## Stress-test variants\n\n");
    out.push_str(
        "Each variant row is a question changed one way (image removed, blank or noise, options shuffled, a \
         distractor swapped, ...), with `parent_id`, `variant`, `variant_params`, the exact `prompt` to send and the \
         `expected` behaviour. Load one with `load_dataset(<this folder>, \"<config>\")`.\n\n",
    );
    out.push_str("| kind | config | rows | expected | skipped |\n|---|---|---:|---|---|\n");
    for v in variants {
        let skipped: Vec<String> = v.skipped.iter().map(|(why, n)| format!("{n} {why}")).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            md::code_cell(&v.kind),
            v.config.as_deref().map_or("—".to_string(), md::code_cell),
            v.rows,
            v.expected,
            md::cell(&skipped.join("; "))
        );
    }
    out.push('\n');
}

/// Each model's accuracy on the full benchmark, the kept questions and the
/// removed ones: predictions for removed questions are scored here, not dropped.
fn by_set_table(out: &mut String, rows: &[crate::metrics::SetAccuracy]) {
    if rows.is_empty() {
        return;
    }
    out.push_str(
        "Accuracy on the original questions of the full benchmark, of the questions kept and of those removed \
         (every prediction scored; n = questions the model answered of the set's questions):\n\n\
         | model | full (n) | kept (n) | removed (n) |\n|---|---:|---:|---:|\n",
    );
    let mut models: Vec<&str> = rows.iter().map(|r| r.model.as_str()).collect();
    models.dedup();
    for m in models {
        let cell = |set: &str| {
            rows.iter().find(|r| r.model == m && r.set == set).map_or("–".to_string(), |r| {
                if r.n == 0 {
                    format!("– (0 of {})", r.questions)
                } else {
                    format!("{} ({}–{}) ({} of {})", pct(r.accuracy), pct(r.ci95.0), pct(r.ci95.1), r.n, r.questions)
                }
            })
        };
        let _ = writeln!(out, "| {} | {} | {} | {} |", md::literal(m), cell("full"), cell("kept"), cell("removed"));
    }
    out.push('\n');
}

/// `## Model results`: what `report/metrics.json` says, per model and condition.
pub(crate) fn metrics_section(
    out: &mut String,
    m: &crate::metrics::MetricsFile,
    by_set: &[crate::metrics::SetAccuracy],
) {
    let p = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{:.1}%", x * 100.0));
    let r = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{x:.3}"));
    let _ = writeln!(
        out,
        "## Model results\n\nScored by blindspot from {} prediction file(s) ({} predictions) against the default \
         config (the kept questions) and its variant rows, below the full/kept/removed table; full figures and the definition of every metric in `report/metrics.json`, \
         every scored response with the answer read from it in `report/per_question.parquet`. \
         Accuracy with a seeded bootstrap 95% CI over {} resamples of the questions; numeric answers scored {}; \
         abstentions count as wrong and are shown apart.\n",
        m.import.files.len(),
        m.import.predictions,
        m.settings.resamples,
        m.settings.numeric
    );
    by_set_table(out, by_set);
    out.push_str("| model | condition | n | accuracy (95% CI) | abstained |\n|---|---|---:|---:|---:|\n");
    for (model, v) in &m.models {
        for (cond, c) in &v.conditions {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} ({}–{}) | {} |",
                md::literal(model),
                md::literal(cond),
                c.n,
                p(c.accuracy),
                p(c.ci95[0]),
                p(c.ci95[1]),
                p(c.abstention_rate)
            );
        }
    }
    let derived: Vec<(&String, &crate::metrics::file::DerivedMetrics)> = m
        .models
        .iter()
        .filter_map(|(model, v)| v.derived.as_ref().filter(|d| !d.is_empty()).map(|d| (model, d)))
        .collect();
    if !derived.is_empty() {
        out.push_str(
            "\n| model | visual dependence (n paired) | mirage score (n paired) | mirage − guess | null baseline | robustness R |\n\
             |---|---:|---:|---:|---:|---:|\n",
        );
        for (model, d) in derived {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                md::literal(model),
                paired(d.visual_dependence.as_ref()),
                paired(d.mirage_score.as_ref()),
                p(d.mirage_vs_guess.as_ref().and_then(|g| g.gap)),
                p(d.null_baseline),
                r(d.robustness.as_ref().and_then(|x| x.r))
            );
        }
    }
    out.push('\n');
}

/// A paired metric's value with its n (`–` when absent or undefined).
fn paired(v: Option<&crate::metrics::file::Paired>) -> String {
    match v {
        Some(crate::metrics::file::Paired { value: Some(x), n_paired, .. }) => format!("{x:.3} ({n_paired})"),
        Some(v) => format!("– ({})", v.n_paired),
        None => "–".into(),
    }
}
