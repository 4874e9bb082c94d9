//! The release's `README.md`: Hugging Face YAML front matter (configs,
//! features, split sizes) followed by what the release is and how to rebuild it.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::diagnose::{DiagnoseConfig, Diagnosis, GroupBy};
use crate::io::escape::{markdown as md, shell, yaml};
use crate::spec::Pipeline;

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// How much of the set a blind model answers (TsT-RF), overall and per group.
fn diagnosis_section(out: &mut String, d: &Diagnosis, cfg: &DiagnoseConfig, embed: Option<&Diagnosis>) {
    if cfg.method == crate::diagnose::Method::TstEmbed {
        return embed_section(out, d, cfg);
    }
    out.push_str("## Blind answerability (TsT-RF)\n\n");
    let grouping = match &cfg.group_by {
        None => "stratified folds".to_string(),
        Some(GroupBy::Image) => "folds grouped by image".to_string(),
        Some(GroupBy::ImageCluster(t)) => format!("folds grouped by near-duplicate image (phash within {t} bits)"),
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
            "Near-duplicate images (perceptual hash within {} bits of 64): {} cluster(s) join more than one image \
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
    for g in &d.groups {
        // A top feature says something only where the forest beats its null.
        let top = g.top_features.first().filter(|_| crate::diagnose::verdict::group_above(d, g));
        if let Some(f) = top
            && !shown.contains(&f.0.as_str())
        {
            shown.push(&f.0);
        }
        let null = d.null.as_ref().and_then(|n| n.group(g.question_type.as_deref(), g.format));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            md::literal(g.question_type.as_deref().unwrap_or("(none)")),
            g.format.as_str(),
            g.n,
            pct(g.blind_accuracy),
            pct(g.chance),
            pct(g.majority),
            null.map_or("–".to_string(), |n| format!(
                "{} ({}){}",
                pct(n.test.mean),
                n.test.q95.map_or("–".to_string(), pct),
                if n.test.tested < n.n { format!(", sample of {}", n.test.tested) } else { String::new() }
            )),
            null.map_or("–".to_string(), |n| n.test.p_cell()),
            top.map_or("–".to_string(), |f| md::code_cell(&f.0))
        );
    }
    let _ = writeln!(
        out,
        "\n*chance*: guessing among the options (yes/no: one in two; open and numeric answers: what the training \
         folds' most common answer scores there). *majority*: what always giving the training folds' most common \
         answer scores on the held-out questions, fold by fold as the forest is scored (an open answer seen fewer \
         than {} times in training counts as no answer). *null*: the blind accuracy of the same folds, features and \
         forests with the golds permuted among questions of the same type, format and option count ({} \
         permutations at most, stopped once p is decided at {}; the 95th percentile needs 20 of them); *p*: \
         sequential Monte Carlo p-value (Besag and Clifford: 1/L at the first of L permutations reaching the \
         observed blind accuracy). A group is above its null when p is below that level and its blind accuracy is \
         above its majority baseline; top features are shown only for such groups.",
        cfg.features.rare_vocab, cfg.null.max_permutations, cfg.null.alpha
    );
    if !shown.is_empty() {
        out.push_str("\nWhat the top features measure:\n\n");
        for f in shown {
            let _ = writeln!(out, "- `{f}`: {}", crate::ml::features::glossary::describe(f));
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
             to {:+.1} pts). The bias score s(x) in `report/scores.parquet` is the {} of the forest's and the outside \
             score; blind accuracy and the verdict are the forest's.\n",
            md::code(&o.file),
            o.sha256,
            pct(f.mean_gold_probability),
            pct(f.answer_prior_mean_gold_probability),
            f.difference_ci95[0] * 100.0,
            f.difference_ci95[1] * 100.0,
            o.combine.as_str()
        );
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
pub(super) fn fewer_folds_sentence(d: &Diagnosis, cfg: &DiagnoseConfig) -> Option<String> {
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

/// Duplicates within the set and copies of a training split.
fn duplicates_section(out: &mut String, e: &super::EmbedStage) {
    let Some(r) = &e.dups else { return };
    let j = r.summary_json();
    out.push_str("## Duplicates and leakage\n\n");
    let _ = write!(
        out,
        "{} exact-duplicate clusters ({} questions; same text once lowercased and punctuation folded)",
        j["exact"]["clusters"], j["exact"]["samples_in_clusters"]
    );
    if let Some(t) = r.threshold {
        let _ = write!(
            out,
            "; {} near-duplicate pairs (cosine of the question+options embeddings >= {t}) in {} clusters ({} questions)",
            j["near"]["pairs"], j["near"]["clusters"], j["near"]["samples_in_clusters"]
        );
    }
    out.push('.');
    if let Some(n) = r.n_train {
        let _ = write!(
            out,
            " Against the {n} questions of the training split {}: {} questions have an exact copy",
            md::code(e.train_written.as_deref().unwrap_or("?")),
            j["train"]["samples_with_exact_copy"]
        );
        if r.threshold.is_some() {
            let _ = write!(out, ", {} a near copy", j["train"]["samples_with_near_copy"]);
        }
        out.push('.');
    }
    if let Some(im) = &r.images {
        let _ = write!(
            out,
            " Images: {} near-duplicate clusters of {} distinct images (perceptual hash within {} bits of 64; {} \
             images hashed)",
            im.clusters.len(),
            im.images,
            im.threshold,
            im.hashed
        );
        for c in im.clusters.iter().take(10) {
            let names: Vec<String> = c
                .iter()
                .map(|e| format!("{} ({})", md::code(e.path.as_deref().unwrap_or("?")), e.ids.join(", ")))
                .collect();
            let _ = write!(out, "; {}", names.join(" ~ "));
        }
        if im.clusters.len() > 10 {
            out.push_str("; ...");
        }
        if let Some((n, m)) = &im.train {
            let matched = crate::embed::image_dups::ImageDups::matched(m);
            let _ = write!(out, "; {matched} benchmark images are near one of the {n} training images");
        }
        out.push('.');
    }
    let _ = writeln!(
        out,
        " Every pair is in config `duplicates` ({} rows), the clusters in `report/duplicates.json`.{}\n",
        r.pairs.len(),
        if e.dedup_removed.is_empty() {
            String::new()
        } else {
            format!(
                " With `prune-duplicates`, {} questions were dropped (one kept per cluster, leaked ones removed), each \
                 with its reason in `report/duplicates.json`; they are in config `removed`.",
                e.dedup_removed.len()
            )
        }
    );
}

/// What pruning removed and what it did to blind accuracy.
fn prune_section(
    out: &mut String,
    samples: &[crate::sample::Sample],
    pr: &crate::prune::Pruned,
    counts: super::PruningCounts,
    control: Option<&crate::prune::Pruned>,
) {
    out.push_str(
        "## Pruning
\n",
    );
    let c = &pr.config;
    let method = match pr.method {
        crate::prune::Method::Ibp => "Iterative Bias Pruning (TsT-RF re-run on what remains before every batch)",
        crate::prune::Method::Aflite => "AFLite (linear probes on random partitions of the non-visual features)",
        crate::prune::Method::Bclean => "B-Clean (questions candidate models answered correctly without the image)",
        crate::prune::Method::Random => "random removal (a control, not a debiasing method)",
    };
    let configs = if counts.removed == 0 {
        "The default config holds every question; `report/prune.json` records the run.".to_string()
    } else {
        format!(
            "The default config holds the {} kept questions, `full` all of them and `removed` the removed ones; \
             `report/prune.json` and `report/removed.csv` give each removal's iteration, score and reason.",
            counts.kept
        )
    };
    let unit = if pr.unit.is_empty() || pr.unit == "question" {
        "one question at a time".to_string()
    } else {
        format!("whole units of one {} ({} unit(s) removed, none split)", pr.unit, pr.units_removed)
    };
    let _ = writeln!(
        out,
        "{method} removed **{}** of {} questions, {unit} (budget {}, batch {}, floor {} per question type, \
         allocation {}, ranked by {}, stop rule `{}`); it stopped because: {}. {configs}\n",
        counts.removed,
        counts.input,
        c.budget.describe(),
        c.batch.describe(),
        c.floor,
        c.allocation.as_str(),
        c.rank.as_str(),
        c.stop.as_str(),
        md::text(&pr.stop),
    );
    // The run's kept count is the data's; the control's is its own (no config holds its set).
    let row = |out: &mut String, name: &str, q: &crate::prune::Pruned, kept: usize| {
        if let (Some(b), Some(a)) = (&q.before, &q.after) {
            let fresh = q.after_independent.as_ref().map_or("–".to_string(), |i| {
                format!("**{}** ({}-{})", pct(i.blind_accuracy), pct(i.ci95.0), pct(i.ci95.1))
            });
            let _ = writeln!(
                out,
                "| {name} | {kept} | {} ({}-{}) | {fresh} | {} ({}-{}) | {} |",
                pct(b.weighted),
                pct(b.ci95.0),
                pct(b.ci95.1),
                pct(a.weighted),
                pct(a.ci95.0),
                pct(a.ci95.1),
                pct(a.chance)
            );
        }
    };
    out.push_str(
        "| run | kept | blind accuracy before (95% CI) | after, fresh seeds (95% CI) | after, selection seed (95% CI) | \
         chance after |\n|---|---:|---:|---:|---:|---:|\n",
    );
    row(out, pr.method.as_str(), pr, counts.kept);
    if let Some(ctl) = control {
        row(out, "random (matched control)", ctl, ctl.kept.len());
    }
    out.push_str(
        "\nThe fresh-seed figure re-diagnoses the kept set on fold assignments and forests that chose nothing: it is \
         the one to quote and to compare with the matched random control. The selection-seed figure re-uses the \
         folds and forests that chose the removals, so it is biased downward by the selection itself.\n",
    );
    let steps: Vec<&crate::prune::Iteration> = pr.iterations.iter().collect();
    if steps.len() > 1 || steps.first().is_some_and(|i| i.removed > 0) {
        out.push_str(
            "\n| iteration | questions | removed | blind accuracy (95% CI) | largest s(x) | mean s(x) |\n\
             |---:|---:|---:|---:|---:|---:|\n",
        );
        let shown = 12;
        for (k, i) in steps.iter().enumerate() {
            if steps.len() > shown && k >= shown / 2 && k < steps.len() - shown / 2 {
                if k == shown / 2 {
                    let _ = writeln!(out, "| … | | | | | |");
                }
                continue;
            }
            let _ = writeln!(
                out,
                "| {} | {} | {} | {}{} | {} | {} |",
                i.iteration,
                i.size,
                i.removed,
                pct(i.blind_accuracy),
                i.ci95.map_or(String::new(), |c| format!(" ({}-{})", pct(c.0), pct(c.1))),
                if i.max_bias.is_finite() { format!("{:.3}", i.max_bias) } else { "–".into() },
                if i.mean_bias.is_finite() { format!("{:.3}", i.mean_bias) } else { "–".into() },
            );
        }
    }
    if let Some(i) = &pr.after_independent
        && i.ci95.1 < i.chance
    {
        let _ = writeln!(
            out,
            "\nAfter pruning, blind accuracy on fresh seeds ({}) is *below* chance ({}). That is not a success: \
             when the questions a blind model answered are removed, the leftover answers are balanced against the \
             features, and cross-validation on a balanced remainder anti-learns (each held-out fold's answers are \
             the ones its training folds saw least). Pruning went past the point where questions were blind-answerable.",
            pct(i.blind_accuracy),
            pct(i.chance)
        );
    }
    if counts.removed > 0 {
        answer_mix(out, samples, &pr.kept, control.map(|c| &c.kept[..]));
    }
    let per_type = pr.removed_per_type();
    if !per_type.is_empty() {
        out.push_str("\n| question type | removed |\n|---|---:|\n");
        for (t, n) in per_type {
            let _ = writeln!(out, "| {} | {n} |", md::literal(&t));
        }
    }
    out.push('\n');
}

/// The answer a question's gold is counted under in the answer mix: the gold
/// option's letter, yes or no, or the normalised answer text.
/// `## The gap pruning buys`: each model's accuracy with and without the image
/// on the full, kept and removed sets (and the random control's kept set).
fn gap_section(out: &mut String, m: &super::MetricsOut, removes: bool) {
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
        let _ = writeln!(out, "- {}", md::text(&mg.sentence));
    }
    out.push('\n');
}

/// `## Gold-label audit`: questions sighted models agree on another answer.
fn audit_section(out: &mut String, m: &super::MetricsOut) {
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

/// `## Blind-model filter`: the rule, each model's part, and the count removed.
fn filter_section(out: &mut String, f: &crate::prune::filter::FilterReport) {
    out.push_str("## Blind-model filter\n\n");
    let _ = writeln!(
        out,
        "{} of {} questions removed before pruning: {}.{}\n",
        f.removed.len(),
        f.n_questions,
        md::text(&f.rule.text),
        f.rule.source.as_deref().map_or(String::new(), |s| format!(" Preset after {}.", md::text(s)))
    );
    out.push_str(
        "| model | questions predicted | samples per question | answered by the rule |\n|---|---:|---:|---:|\n",
    );
    for m in &f.models {
        let samples = if m.samples_min == m.samples_max {
            m.samples_min.to_string()
        } else {
            format!("{}-{}", m.samples_min, m.samples_max)
        };
        let _ = writeln!(out, "| {} | {} | {samples} | {} |", md::literal(&m.model), m.questions_predicted, m.answered);
    }
    let _ = writeln!(
        out,
        "\n{} question(s) had no prediction under the filter's conditions and were kept (no evidence against them); {} prediction(s) named no question. Each removal and the models that answered it: `report/filter.json`.\n",
        f.unpredicted, f.unknown_predictions
    );
}

fn answer_class(s: &crate::sample::Sample) -> String {
    use crate::sample::AnswerFormat;
    match (s.answer_format, s.answer_index.and_then(|i| usize::try_from(i).ok())) {
        (AnswerFormat::MultipleChoice, Some(i)) => format!("option {}", crate::sample::option_letter(i)),
        _ => s.answer.trim().to_lowercase(),
    }
}

/// Labels shown per answer format; the rest are summed into one row.
const MIX_ROWS: usize = 6;

/// The answer mix (numeric answers aside) of the full set, the kept set and the matched control's kept
/// set, per answer format, with a sentence when pruning shifted it: a shifted mix
/// moves chance and the majority baseline, so part of a change in blind accuracy
/// is the shift and not the removed shortcuts.
fn answer_mix(out: &mut String, samples: &[crate::sample::Sample], kept: &[String], control: Option<&[String]>) {
    use crate::sample::AnswerFormat;
    let kept: std::collections::HashSet<&str> = kept.iter().map(String::as_str).collect();
    let ctl: Option<std::collections::HashSet<&str>> = control.map(|c| c.iter().map(String::as_str).collect());
    // Per format, per class: questions in the full set, kept, kept by the control.
    let mut mix: BTreeMap<AnswerFormat, BTreeMap<String, [usize; 3]>> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.answer_format != AnswerFormat::Numeric) {
        let e = mix.entry(s.answer_format).or_default().entry(answer_class(s)).or_default();
        e[0] += 1;
        e[1] += usize::from(kept.contains(s.id.as_str()));
        e[2] += usize::from(ctl.as_ref().is_some_and(|c| c.contains(s.id.as_str())));
    }
    let share = |k: usize, n: usize| if n == 0 { "–".to_string() } else { pct(k as f64 / n as f64) };
    let _ = write!(
        out,
        "\nThe answer mix before and after pruning (share of each answer format's questions{}):\n\n\
         | format | gold answer | all | kept | removed |{}\n|---|---|---:|---:|---:|{}\n",
        if control.is_some() { "; the matched random control's kept set beside it" } else { "" },
        if control.is_some() { " random control kept |" } else { "" },
        if control.is_some() { "---:|" } else { "" },
    );
    let mut shifts = Vec::new();
    for (format, classes) in &mix {
        let total: [usize; 3] = classes.values().fold([0; 3], |a, c| [a[0] + c[0], a[1] + c[1], a[2] + c[2]]);
        let mut rows: Vec<(&String, &[usize; 3])> = classes.iter().collect();
        rows.sort_by(|a, b| b.1[0].cmp(&a.1[0]).then_with(|| a.0.cmp(b.0)));
        let (shown, rest) = rows.split_at(rows.len().min(MIX_ROWS));
        let mut rest_sum = [0usize; 3];
        for (_, c) in rest {
            for k in 0..3 {
                rest_sum[k] += c[k];
            }
        }
        let label_rest = format!("({} other answers)", rest.len());
        let lines = shown
            .iter()
            .map(|(l, c)| (l.as_str(), **c))
            .chain((!rest.is_empty()).then_some((label_rest.as_str(), rest_sum)));
        for (label, c) in lines {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |{}",
                format.as_str(),
                md::literal(label),
                share(c[0], total[0]),
                share(c[1], total[1]),
                share(c[0] - c[1], total[0] - total[1]),
                if control.is_some() { format!(" {} |", share(c[2], total[2])) } else { String::new() }
            );
        }
        // The largest change of one answer's share, all → kept.
        let largest = shown
            .iter()
            .filter(|_| total[1] > 0 && total[0] > 0)
            .map(|(l, c)| (l.as_str(), c[0] as f64 / total[0] as f64, c[1] as f64 / total[1] as f64))
            .max_by(|a, b| (a.2 - a.1).abs().total_cmp(&(b.2 - b.1).abs()).then_with(|| b.0.cmp(a.0)));
        if let Some((label, before, after)) = largest
            && (after - before).abs() >= MIX_SHIFT
        {
            shifts.push(format!("{} {} {} → {}", format.as_str(), md::code(label), pct(before), pct(after)));
        }
    }
    if shifts.is_empty() {
        let _ = writeln!(
            out,
            "\nNo answer's share moved by {:.0} pts or more between the full and the kept set.",
            MIX_SHIFT * 100.0
        );
    } else {
        let _ = writeln!(
            out,
            "\n**The answer mix shifted** ({}): chance and the majority baseline move with it, so part of the change \
             in blind accuracy reflects the shift, not only the removed shortcuts{}.",
            shifts.join("; "),
            if control.is_some() {
                "; the random control, which removes as many per type, shows the shift's own effect"
            } else {
                ""
            }
        );
    }
}

/// A change of one answer's share (all → kept) from which the card says the mix shifted.
const MIX_SHIFT: f64 = 0.02;

/// The stress-test variants: one config per kind with rows, and what was skipped.
fn variants_section(out: &mut String, variants: &[super::VariantInfo]) {
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
fn metrics_section(out: &mut String, m: &serde_json::Value, by_set: &[crate::metrics::SetAccuracy]) {
    let num = |v: &serde_json::Value| v.as_f64();
    let p = |v: &serde_json::Value| num(v).map_or("–".to_string(), |x| format!("{:.1}%", x * 100.0));
    let r = |v: &serde_json::Value| num(v).map_or("–".to_string(), |x| format!("{x:.3}"));
    let files = m["import"]["files"].as_array().map_or(0, Vec::len);
    let _ = writeln!(
        out,
        "## Model results\n\nScored by blindspot from {files} prediction file(s) ({} predictions) against the default \
         config (the kept questions) and its variant rows, below the full/kept/removed table; full figures and the definition of every metric in `report/metrics.json`, \
         every scored response with the answer read from it in `report/per_question.parquet`. \
         Accuracy with a seeded bootstrap 95% CI over {} resamples of the questions; numeric answers scored {}; \
         abstentions count as wrong and are shown apart.\n",
        m["import"]["predictions"],
        m["settings"]["resamples"],
        m["settings"]["numeric"].as_str().unwrap_or("exact")
    );
    by_set_table(out, by_set);
    out.push_str("| model | condition | n | accuracy (95% CI) | abstained |\n|---|---|---:|---:|---:|\n");
    let models = m["models"].as_object().cloned().unwrap_or_default();
    for (model, v) in &models {
        for (cond, c) in v["conditions"].as_object().into_iter().flatten() {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} ({}–{}) | {} |",
                md::literal(model),
                md::literal(cond),
                c["n"],
                p(&c["accuracy"]),
                p(&c["ci95"][0]),
                p(&c["ci95"][1]),
                p(&c["abstention_rate"])
            );
        }
    }
    let derived: Vec<_> =
        models.iter().filter(|(_, v)| v["derived"].as_object().is_some_and(|d| !d.is_empty())).collect();
    if !derived.is_empty() {
        out.push_str(
            "\n| model | visual dependence (n paired) | mirage score (n paired) | mirage − guess | null baseline | robustness R |\n\
             |---|---:|---:|---:|---:|---:|\n",
        );
        for (model, v) in derived {
            let d = &v["derived"];
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                md::literal(model),
                paired(&d["visual_dependence"]),
                paired(&d["mirage_score"]),
                p(&d["mirage_vs_guess"]["gap"]),
                p(&d["null_baseline"]),
                r(&d["robustness"]["R"])
            );
        }
    }
    out.push('\n');
}

/// A paired metric's value with its n (`–` when absent or undefined).
fn paired(v: &serde_json::Value) -> String {
    match (v["value"].as_f64(), v["n_paired"].as_u64()) {
        (Some(x), Some(n)) => format!("{:.3} ({n})", x),
        (None, Some(n)) => format!("– ({n})"),
        _ => "–".into(),
    }
}

fn size_category(n: usize) -> &'static str {
    match n {
        0..1_000 => "n<1K",
        1_000..10_000 => "1K<n<10K",
        10_000..100_000 => "10K<n<100K",
        100_000..1_000_000 => "100K<n<1M",
        _ => "1M<n<10M",
    }
}

/// A YAML scalar of the front matter.
fn y(s: &str) -> String {
    yaml::quoted(s)
}

fn duplicates_features_yaml(out: &mut String) {
    out.push_str("  features:\n");
    for (name, dtype) in [
        ("kind", "string"),
        ("id_a", "string"),
        ("id_b", "string"),
        ("cosine", "float64"),
        ("text_a", "string"),
        ("text_b", "string"),
    ] {
        let _ = writeln!(out, "  - name: {name}\n    dtype: {dtype}");
    }
}

fn features_yaml(out: &mut String) {
    let strings = [
        "id",
        "benchmark",
        "split",
        "question_type",
        "question",
        "context",
        "answer",
        "answer_format",
        "parent_id",
        "variant",
        "variant_params",
        "prompt",
        "expected",
    ];
    out.push_str("  features:\n");
    for name in ["id", "benchmark", "split", "question_type", "question", "context"] {
        let _ = writeln!(out, "  - name: {name}\n    dtype: string");
    }
    out.push_str("  - name: options\n    list: string\n");
    out.push_str("  - name: answer\n    dtype: string\n");
    out.push_str("  - name: answer_index\n    dtype: int32\n");
    out.push_str("  - name: answer_format\n    dtype: string\n");
    out.push_str("  - name: images\n    list: image\n");
    out.push_str("  - name: image_facts\n    list:\n    - name: sha256\n      dtype: string\n    - name: width\n      dtype: int32\n    - name: height\n      dtype: int32\n    - name: phash\n      dtype: string\n    - name: dhash\n      dtype: string\n");
    out.push_str(
        "  - name: meta\n    list:\n    - name: key\n      dtype: string\n    - name: value\n      dtype: string\n",
    );
    for name in strings.iter().skip(8) {
        let _ = writeln!(out, "  - name: {name}\n    dtype: string");
    }
}

/// Where the data came from (each input by name, size and sha256, the images by
/// their count and list digest) and how to rebuild the release from them.
fn sources_section(out: &mut String, p: &Pipeline, ing: &crate::ingest::Ingested) {
    let ds = &p.dataset;
    out.push_str("## Sources\n\n");
    if let Some(home) = &ds.homepage {
        let _ = writeln!(out, "Origin: <{home}>.\n");
    }
    out.push_str("| source | bytes | sha256 | path in the pipeline |\n|---|---:|---|---|\n");
    let base = p.path.parent().unwrap_or(std::path::Path::new("."));
    for i in &ing.inputs {
        let name = i.path.file_name().map_or_else(|| i.path.to_string_lossy(), |f| f.to_string_lossy());
        let _ = writeln!(
            out,
            "| {} | {} | `{}` | {} |",
            md::literal(&name),
            i.bytes,
            i.sha256,
            md::literal(&super::manifest::relative_to(&i.path, base))
        );
    }
    if !ing.images.is_empty() {
        let _ = writeln!(
            out,
            "| {} image files | – | `{}` | {} |",
            ing.images.len(),
            super::manifest::images_digest(ing),
            p.ingest
                .images_dir
                .as_ref()
                .map_or("–".to_string(), |d| md::literal(&super::manifest::relative_to(d, base)))
        );
        out.push_str(
            "\nThe images' sha256 is taken over their list (each file's path, a NUL, its sha256, a newline, in path \
             order); each row's `image_facts` holds the sha256 of its own images.\n",
        );
    }
    // The pipeline as a repository holds it: `pipelines/<file>` for the usual layout.
    let file = p.path.file_name().map_or("?".into(), |f| f.to_string_lossy().to_string());
    let pipeline = match p.path.parent().and_then(|d| d.file_name()) {
        Some(d) if d == "pipelines" => format!("pipelines/{file}"),
        _ => file,
    };
    let lock = super::lock::path_for(std::path::Path::new(&pipeline)).to_string_lossy().replace('\\', "/");
    out.push_str("\n## Rebuild\n\n");
    let _ = write!(
        out,
        "This release was built from the pipeline {}; its lock file {} records this version and every file's \
         sha256. ",
        md::code(&pipeline),
        md::code(&lock)
    );
    match &ds.repository {
        Some(repo) => {
            let _ = write!(out, "Both live in <{repo}>. ");
        }
        None => out.push_str("(The pipeline names no repository; `[dataset] repository` would name it here.) "),
    }
    // Every word from the pipeline is quoted for the shell a reader pastes this into.
    let (pipeline_word, lock_word) = (shell::word(&pipeline), shell::word(&lock));
    let block = format!(
        "{}git checkout $(git log -1 --format=%H -G'\"version\": \"{}\"' -- {lock_word})\n\
         blindspot build {pipeline_word}          # in blindspot's own repository: just build\n\
         blindspot build --check {pipeline_word}  # compares every byte with the lock\n",
        ds.repository
            .as_deref()
            .map(shell::word)
            .map_or(String::new(), |r| format!("git clone {r} && cd \"$(basename {r} .git)\"\n")),
        shell::in_single_quotes(&ds.version),
    );
    let fence = md::fence_for(&block);
    let _ = writeln!(
        out,
        "In the repository that holds them, check out the commit that locked this version, put the sources above \
         where the pipeline names them, and build:\n\n{fence}\n{block}{fence}\n"
    );
    out.push_str(
        "`manifest.json` lists the sha256 of every file; a rebuild from the same inputs, pipeline and seed gives \
         identical bytes.\n",
    );
}

/// Renders the dataset card.
pub fn render(
    p: &Pipeline,
    stages: &super::Stages<'_>,
    configs: &[super::ConfigInfo],
    variants: &[super::VariantInfo],
) -> String {
    let ing = stages.ingested;
    let ds = &p.dataset;
    let n = ing.samples.len();
    let kept = stages.kept_samples().len();
    let mut out = String::new();
    out.push_str("---\n");
    let _ = writeln!(out, "pretty_name: {}", y(&ds.name));
    let _ = writeln!(out, "license: {}", y(&ds.license.to_ascii_lowercase()));
    out.push_str("task_categories:\n- visual-question-answering\n");
    let _ = writeln!(out, "size_categories:\n- {}", y(size_category(kept)));
    out.push_str("configs:\n");
    for c in configs {
        let _ = writeln!(out, "- config_name: {}", y(&c.name));
        if c.name == "default" {
            out.push_str("  default: true\n");
        }
        let dir = c.file.rsplit_once('/').map_or("", |(d, _)| d);
        let _ = writeln!(out, "  data_files:\n  - split: test\n    path: {}", y(&format!("{dir}/test-*.parquet")));
    }
    out.push_str("dataset_info:\n");
    for c in configs {
        let _ = writeln!(out, "- config_name: {}", y(&c.name));
        match c.schema {
            super::ConfigSchema::Samples => features_yaml(&mut out),
            super::ConfigSchema::Duplicates => duplicates_features_yaml(&mut out),
            super::ConfigSchema::Rotations => {
                features_yaml(&mut out);
                for c in super::extra_columns(c.schema) {
                    let _ = writeln!(out, "  - name: {}\n    dtype: int32", c.name);
                }
            }
        }
        let _ = writeln!(out, "  splits:\n  - name: test\n    num_bytes: {}\n    num_examples: {}", c.bytes, c.rows);
        let _ = writeln!(out, "  download_size: {}\n  dataset_size: {}", c.bytes, c.bytes);
    }
    out.push_str("---\n\n");

    let _ = writeln!(out, "# {} {}\n", ds.name, ds.version);
    if let Some(d) = &ds.description {
        let _ = writeln!(out, "{}\n", md::text(d.trim()));
    }
    let _ = writeln!(
        out,
        "Built by blindspot {} from {} (seed {}).\n",
        env!("CARGO_PKG_VERSION"),
        md::code(&p.path.file_name().map_or("?".into(), |f| f.to_string_lossy())),
        ds.seed
    );
    out.push_str("## Contents\n\n");
    let _ = writeln!(
        out,
        "{n} questions ({} records read, {} filtered out by the pipeline, {} rejected as invalid){}.\n",
        ing.stats.records,
        ing.stats.filtered,
        ing.stats.rejected,
        if kept < n {
            format!(
                "; {kept} remain in the default config after {}",
                match (stages.filter.is_some(), stages.pruned.is_some()) {
                    (true, true) =>
                        "the filter and pruning (see [Blind-model filter](#blind-model-filter) and [Pruning](#pruning))",
                    (true, false) => "the filter (see [Blind-model filter](#blind-model-filter))",
                    _ => "pruning (see [Pruning](#pruning))",
                }
            )
        } else {
            String::new()
        }
    );
    for note in &ing.stats.notes {
        let _ = writeln!(
            out,
            "Data quality: {} question(s): {} (first at {}).\n",
            note.rows,
            md::literal(&note.what),
            md::code(&note.first)
        );
    }
    out.push_str("| answer format | questions |\n|---|---:|\n");
    for (f, c) in ing.format_counts() {
        let _ = writeln!(out, "| {} | {c} |", f.as_str());
    }
    let mut types: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &ing.samples {
        *types.entry(s.question_type.as_deref().unwrap_or("(none)")).or_default() += 1;
    }
    out.push_str("\n| question type | questions |\n|---|---:|\n");
    for (t, c) in &types {
        let _ = writeln!(out, "| {} | {c} |", md::literal(t));
    }
    let images: usize = ing.images.len();
    let _ = writeln!(out, "\n{images} distinct image files.\n");
    if let Some(d) = stages.diagnosis {
        diagnosis_section(&mut out, d, &p.diagnose, stages.embed.and_then(|e| e.tst_embed.as_ref()));
    }
    if let Some(e) = stages.embed {
        duplicates_section(&mut out, e);
    }
    if let Some(f) = stages.filter {
        filter_section(&mut out, f);
    }
    if let (Some(pr), Some(counts)) = (stages.pruned, stages.pruning_counts()) {
        prune_section(&mut out, &ing.samples, pr, counts, stages.control);
    }
    if !variants.is_empty() {
        variants_section(&mut out, variants);
    }
    if let Some(m) = stages.metrics {
        metrics_section(&mut out, &m.json, &m.by_set);
        gap_section(&mut out, m, stages.removes());
        audit_section(&mut out, m);
    }
    super::datasheet::render(&mut out, p, stages);
    sources_section(&mut out, p, ing);
    if let Some(c) = &ds.citation {
        let fence = md::fence_for(c);
        let _ = writeln!(out, "\n## Citation\n\n{fence}\n{}\n{fence}", c.trim());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::answer_mix;
    use crate::sample::{AnswerFormat, Sample};

    #[test]
    fn a_shifted_answer_mix_is_said_and_a_steady_one_is_not() {
        let samples: Vec<Sample> = (0..20)
            .map(|i| {
                let mut s = Sample::new(format!("q{i:02}"), "is it?", if i < 10 { "yes" } else { "no" });
                s.answer_format = AnswerFormat::YesNo;
                s
            })
            .collect();
        let ids = |f: &dyn Fn(usize) -> bool| (0..20).filter(|i| f(*i)).map(|i| format!("q{i:02}")).collect::<Vec<_>>();
        // Pruning took five "no" answers: yes 50% -> 66.7% of the kept set.
        let mut out = String::new();
        answer_mix(&mut out, &samples, &ids(&|i| i < 15), Some(&ids(&|i| i % 4 != 0)));
        assert!(out.contains("| yes_no | yes | 50.0% | 66.7% | 0.0% | 46.7% |"), "{out}");
        assert!(out.contains("**The answer mix shifted** (yes_no `no` 50.0% → 33.3%)"), "{out}");
        // One of each taken: the mix holds.
        let mut out = String::new();
        answer_mix(&mut out, &samples, &ids(&|i| i != 0 && i != 10), None);
        assert!(out.contains("No answer's share moved by 2 pts or more"), "{out}");
    }
}
