//! The card's blind-answerability section: TsT-RF (or TsT-Embed) overall and
//! per group, and the groups cross-validated with fewer folds.

use std::fmt::Write;

use super::pct;
use crate::diagnose::{DiagnoseConfig, Diagnosis, GroupBy};
use crate::io::escape::markdown as md;

/// How much of the set a blind model answers (TsT-RF), overall and per group.
pub(crate) fn diagnosis_section(out: &mut String, d: &Diagnosis, cfg: &DiagnoseConfig, embed: Option<&Diagnosis>) {
    if cfg.method == crate::diagnose::Method::TstEmbed {
        return embed_section(out, d, cfg);
    }
    out.push_str("## Blind answerability (TsT-RF)\n\n");
    let grouping = match &cfg.group_by {
        None => "stratified folds".to_string(),
        Some(GroupBy::Image) => "folds grouped by image".to_string(),
        Some(GroupBy::ImageCluster(t)) => {
            format!("folds grouped by near-duplicate image (phash and dhash within {t} bits)")
        }
        Some(GroupBy::Video) => "folds grouped by video".to_string(),
        Some(GroupBy::Question) => "folds grouped by question text".to_string(),
        Some(GroupBy::Meta(f)) => format!("folds grouped by {}", md::code(f)),
    };
    let _ = writeln!(
        out,
        "A random forest trained with {}-fold cross-validation ({grouping}, {} repeat(s), seed {}) on non-visual \
         features of this set answers **{}** of the questions without the image (95% CI {}-{}; macro over question \
         types {}); chance is {} and always giving the most frequent answer scores {}. Per-question bias scores \
         s(x) are in `report/scores.parquet`. Departures from the TsT protocol: {}.\n",
        cfg.folds,
        cfg.repeats,
        cfg.seed,
        pct(d.weighted),
        pct(d.ci95.0),
        pct(d.ci95.1),
        pct(d.macro_by_type),
        pct(d.chance),
        pct(d.majority),
        crate::diagnose::report::departures(cfg).join("; ")
    );
    if let Some(c) = &d.image_clusters {
        let _ = writeln!(
            out,
            "Near-duplicate images (both perceptual hashes within {} bits of 64): {} cluster(s) join more than one image \
             ({} of the {} distinct images; {} images have a hash), so their questions share a fold. {}\n",
            c.threshold,
            c.joining,
            c.images_joined,
            c.images,
            c.hashed,
            match c.blind_grouped_by_image {
                Some(b) => format!(
                    "With folds grouped by image instead, blind accuracy would be {} ({} here).",
                    pct(b),
                    pct(d.weighted)
                ),
                None => "No cluster joins two images, so the folds are those of grouping by image.".to_string(),
            }
        );
    }
    let _ = writeln!(out, "**Verdict:** {}\n", crate::diagnose::verdict::Verdict::of(d).sentence);
    out.push_str(
        "| question type | format | questions | blind | chance | majority | null mean (95th pct) | p | top feature |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---|\n",
    );
    let mut shown: Vec<&str> = Vec::new();
    for g in crate::blind_groups::group_lines(d) {
        if let Some(f) = g.top_feature
            && !shown.contains(&f)
        {
            shown.push(f);
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            md::literal(g.question_type),
            g.format,
            g.n,
            pct(g.blind),
            pct(g.chance),
            pct(g.majority),
            g.null.map_or("–".to_string(), |n| format!(
                "{} ({}){}",
                pct(n.test.mean),
                n.test.q95.map_or("–".to_string(), pct),
                if n.test.tested < n.n { format!(", sample of {}", n.test.tested) } else { String::new() }
            )),
            g.null.map_or("–".to_string(), |n| n.test.p_cell()),
            g.top_feature.map_or("–".to_string(), md::code_cell)
        );
    }
    let _ = writeln!(
        out,
        "\n*chance*: guessing among the options (yes/no: one in two; open and numeric answers: what the training \
         folds' most common answer scores there). *majority*: what always giving the training folds' most common \
         answer scores on the held-out questions, fold by fold as the forest is scored (an open answer seen fewer \
         than {} times in training counts as no answer). *null*: the blind accuracy of the same folds and features \
         with forests of {} trees, the golds permuted among questions of the same type, format and option count \
         ({} permutations at most, stopped once p is decided at {}); its 95th percentile comes from 20 draws or \
         more, else from a t-fit to them. *p*: Besag and Clifford's sequential Monte Carlo p-value of the same \
         small forests' blind accuracy on the real golds (h/L at the h-th of L permutations reaching it, h the \
         fewest that keep p above alpha; (1 + k)/(1 + L) when every permutation is drawn), or p <= 0.001 when a \
         t-fit to at least 5 draws places it that far beyond them. A group is above its null when p is at most \
         that level and its blind accuracy is above its majority baseline; top features are shown only for such \
         groups.",
        cfg.features.rare_vocab, cfg.null.trees, cfg.null.max_permutations, cfg.null.alpha
    );
    if !shown.is_empty() {
        out.push_str("\nWhat the top features measure:\n\n");
        for f in shown {
            let _ = writeln!(out, "- `{f}`: {}", crate::diagnose::glossary::describe(f));
        }
    }
    // Multiple choice: the shortcut of each group above its null, once and in words.
    let shortcuts: Vec<String> = crate::blind_groups::group_lines(d)
        .into_iter()
        .filter(|g| g.top_feature.is_some())
        .filter_map(|g| {
            let c = g.group.shortcut.as_ref()?;
            Some(format!(
                "- {}: {} in {} of the held-out questions it tells apart (n = {}), against {} for an option drawn \
                 at random (`{}`).",
                md::literal(g.question_type),
                md::text(&c.sentence),
                pct(c.gold_share),
                c.n,
                pct(c.option_share),
                c.feature
            ))
        })
        .collect();
    if !shortcuts.is_empty() {
        out.push_str("\nThe shortcut each such multiple-choice group's forest leans on most:\n\n");
        for l in shortcuts {
            let _ = writeln!(out, "{l}");
        }
    }
    for g in d.groups.iter().filter(|g| !g.pooled_types.is_empty()) {
        let _ = writeln!(
            out,
            "\n{} ({}): the question types with fewer than {} {} questions, fit as one group: {}.",
            md::text(crate::diagnose::POOLED),
            g.format.as_str(),
            cfg.min_group,
            g.format.as_str(),
            g.pooled_types.iter().map(|t| format!("\"{}\"", md::literal(t))).collect::<Vec<_>>().join(", ")
        );
    }
    fewer_folds_note(out, d, cfg);
    out.push('\n');
    if let Some(e) = embed {
        let _ = writeln!(
            out,
            "A linear probe on sentence embeddings of the question and options (TsT-Embed, all-MiniLM-L6-v2, same \
             folds) answers **{}** of the {} multiple-choice and yes/no questions blind (95% CI {}-{}; chance {}). \
             The bias score s(x) in `report/scores.parquet` is the {} of the two models' probabilities of the gold \
             answer where both score a question.\n",
            pct(e.weighted),
            e.n_samples,
            pct(e.ci95.0),
            pct(e.ci95.1),
            pct(e.chance),
            cfg.combine.as_str()
        );
    }
    if let Some(o) = &d.outside {
        let f = &o.figures;
        let _ = writeln!(
            out,
            "Outside scores from {} (sha256 `{}`), made on the forest's own folds, give a mean held-out probability \
             of the gold of {} against {} for the training folds' answer distribution alone (difference 95% CI {:+.1} \
             to {:+.1} pts). The outside scorer's most probable answer is right on {} of the {} questions, the \
             forest's on {} and the training folds' most frequent answer on {}. The bias score s(x) in \
             `report/scores.parquet` is the {} of the forest's and the outside score; blind accuracy and the verdict \
             are the forest's.\n",
            md::code(&o.file),
            o.sha256,
            pct(f.mean_gold_probability),
            pct(f.answer_prior_mean_gold_probability),
            f.difference_ci95[0] * 100.0,
            f.difference_ci95[1] * 100.0,
            pct(f.accuracy),
            f.n,
            pct(d.weighted),
            pct(f.answer_prior_accuracy),
            o.combine.as_str()
        );
        if let Some(w) = crate::diagnose::outside::implausible(&md::code(&o.file), f, d.weighted) {
            let _ = writeln!(out, "**Warning:** {w}.\n");
        }
    }
}

/// TsT-Embed as the pipeline's diagnostic.
fn embed_section(out: &mut String, d: &Diagnosis, cfg: &DiagnoseConfig) {
    out.push_str("## Blind answerability (TsT-Embed)\n\n");
    let _ = writeln!(
        out,
        "A linear probe on sentence embeddings (all-MiniLM-L6-v2) of the question and its options, trained with \
         {}-fold cross-validation ({} repeat(s), seed {}), answers **{}** of the {} multiple-choice and yes/no \
         questions without the image (95% CI {}-{}); chance is {} and always giving the most frequent answer \
         scores {}. Open and numeric questions are not scored. Per-question bias scores s(x) are in \
         `report/scores.parquet`.\n",
        cfg.folds,
        cfg.repeats,
        cfg.seed,
        pct(d.weighted),
        d.n_samples,
        pct(d.ci95.0),
        pct(d.ci95.1),
        pct(d.chance),
        pct(d.majority)
    );
    out.push_str("| question type | format | questions | blind | chance | majority |\n|---|---|---:|---:|---:|---:|\n");
    for g in &d.groups {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            md::literal(g.question_type.as_deref().unwrap_or("(none)")),
            g.format.as_str(),
            g.n,
            pct(g.blind_accuracy),
            pct(g.chance),
            pct(g.majority)
        );
    }
    fewer_folds_note(out, d, cfg);
    out.push('\n');
}

/// The groups cross-validated with fewer folds than configured (fewer questions,
/// or fold groups, than folds), after the table that lists them.
fn fewer_folds_note(out: &mut String, d: &Diagnosis, cfg: &DiagnoseConfig) {
    if let Some(s) = fewer_folds_sentence(d, cfg) {
        let _ = writeln!(out, "\n{s}");
    }
}

/// "Groups with fewer questions (or fold groups) than 5 were cross-validated
/// with fewer folds: ...", or `None` when every group used `cfg.folds`.
pub(crate) fn fewer_folds_sentence(d: &Diagnosis, cfg: &DiagnoseConfig) -> Option<String> {
    let fewer: Vec<String> = d
        .groups
        .iter()
        .filter_map(|g| {
            let k = crate::diagnose::report::fewer_folds(g, cfg)?;
            Some(format!(
                "{} ({}, {} questions) {k}-fold",
                md::literal(g.question_type.as_deref().unwrap_or("(none)")),
                g.format.as_str(),
                g.n
            ))
        })
        .collect();
    (!fewer.is_empty()).then(|| {
        format!(
            "Groups with fewer questions (or fold groups) than {} were cross-validated with fewer folds: {}.",
            cfg.folds,
            fewer.join(", ")
        )
    })
}
