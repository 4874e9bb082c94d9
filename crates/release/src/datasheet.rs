//! The datasheet of a release (Gebru et al., "Datasheets for Datasets"): every
//! question of the seven sections, answered.
//!
//! Facts blindspot knows — counts, sources and their hashes, each stage's
//! settings, blind answerability, how to rebuild — are filled in automatically.
//! What only the publisher knows (why the set was made, who funded it, whether it
//! holds personal data, ...) comes from the pipeline's `[datasheet]` table, keyed
//! by the question ids below. A publisher may add to a computed answer too. A
//! question left unanswered is marked in the card and listed by `blindspot build`
//! as a warning.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::diagnose::GroupBy;
use crate::io::escape::markdown as md;
use crate::sample::AnswerFormat;
use crate::spec::Pipeline;

pub use crate::spec::datasheet::{QUESTIONS, Question, SECTIONS, how_to_answer, question, unanswered};

/// The images of `samples`, each distinct image once: by content (`sha256`)
/// where hashed, else by path. Every image count the card gives is this one,
/// of the set it names, so that two counts differ only when their sets do.
pub(crate) fn distinct_images<'a>(samples: &[&'a crate::sample::Sample]) -> BTreeMap<&'a str, usize> {
    let mut per_image: BTreeMap<&str, usize> = BTreeMap::new();
    for s in samples {
        for i in &s.images {
            *per_image.entry(i.sha256.as_deref().or(i.path.as_deref()).unwrap_or("")).or_default() += 1;
        }
    }
    per_image
}

/// "N distinct images" of the source, and the file paths they come from when
/// the source repeats an image under other paths.
pub(crate) fn images_phrase(ing: &crate::ingest::Ingested) -> String {
    let all: Vec<&crate::sample::Sample> = ing.samples.iter().collect();
    let distinct = distinct_images(&all).len();
    let paths = ing.images.len();
    if paths > distinct {
        format!("{distinct} distinct images (by content; {paths} image files, some holding the same bytes)")
    } else {
        format!("{distinct} distinct image files")
    }
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// Writes the datasheet (a `## Datasheet` section with one `###` per Gebru section).
pub fn render(out: &mut String, p: &Pipeline, stages: &super::BuildOutputs<'_>) {
    let computed = computed_answers(p, stages);
    out.push_str("## Datasheet\n\n");
    out.push_str(
        "Answers marked *computed* were filled in by blindspot from the data and the pipeline; the others are the \
         publisher's, from the pipeline's `[datasheet]` table.\n\n",
    );
    for (s, section) in SECTIONS.iter().enumerate() {
        let _ = writeln!(out, "### {section}\n");
        for q in QUESTIONS.iter().filter(|q| q.section == s) {
            let _ = writeln!(out, "**{}** <a id=\"{}\"></a>\n", q.text, q.id);
            let human = p.datasheet.get(q.id).map(|a| a.trim()).filter(|a| !a.is_empty());
            if let Some(h) = human {
                let _ = writeln!(out, "{}\n", md::text(h));
            }
            match computed.get(q.id) {
                Some(c) => {
                    let _ = writeln!(out, "*Computed:* {c}\n");
                }
                None if human.is_none() => {
                    let _ = writeln!(
                        out,
                        "**Unanswered.** The publisher has not answered this question (`{}`).\n",
                        how_to_answer(q)
                    );
                }
                None => {}
            }
        }
    }
}

/// Every answered question's text (the publisher's answer, then the computed one), by id.
pub fn answers(p: &Pipeline, stages: &super::BuildOutputs<'_>) -> BTreeMap<&'static str, String> {
    let computed = computed_answers(p, stages);
    QUESTIONS
        .iter()
        .filter_map(|q| {
            let human = p.datasheet.get(q.id).map(|a| a.trim()).filter(|a| !a.is_empty());
            let parts: Vec<&str> = human.into_iter().chain(computed.get(q.id).map(String::as_str)).collect();
            (!parts.is_empty()).then(|| (q.id, parts.join(" ")))
        })
        .collect()
}

/// The computed answers, by question id.
fn computed_answers(p: &Pipeline, stages: &super::BuildOutputs<'_>) -> BTreeMap<&'static str, String> {
    let ing = stages.ingested;
    let n = ing.samples.len();
    let mut a = BTreeMap::new();
    let formats: Vec<String> = ing.format_counts().iter().map(|(f, c)| format!("{c} {}", f.as_str())).collect();
    if let Some(m) = stages.metrics {
        let models: Vec<&String> = m.file.models.keys().collect();
        let names: Vec<String> = models.iter().map(|s| md::code(s)).collect();
        a.insert(
            "uses-so-far",
            format!(
                "This release was scored against the predictions of {} model(s) ({}); accuracy per condition, \
                 abstention and the derived measures (visual dependence, mirage score, robustness) are under \
                 [Model results](#model-results) and in `report/metrics.json`.",
                models.len(),
                names.join(", ")
            ),
        );
    }
    a.insert(
        "instances",
        format!(
            "Each instance is one question about zero or more images (`images`), with its options for multiple choice, \
             its gold answer (`answer`, and `answer_index` for multiple choice), its answer format, question type and \
             the source's other fields (`meta`). Formats: {}.",
            formats.join(", ")
        ),
    );
    let n_types =
        ing.samples.iter().filter_map(|s| s.question_type.as_deref()).collect::<std::collections::BTreeSet<_>>();
    a.insert(
        "count",
        format!(
            "{n} questions about {}, in {} question types; the counts per answer format and per question type are \
             under [Contents](#contents).",
            images_phrase(ing),
            n_types.len()
        ),
    );
    a.insert("sample", sample(p, stages));
    let counts = ing.format_counts();
    let count = |f: AnswerFormat| counts.iter().find(|(g, _)| *g == f).map_or(0, |(_, c)| *c);
    a.insert(
        "labels",
        format!(
            "Yes: every instance has a gold answer. {} multiple-choice questions carry the gold option's position; \
             {} yes/no, {} numeric and {} open-ended questions carry the answer text.",
            count(AnswerFormat::MultipleChoice),
            count(AnswerFormat::YesNo),
            count(AnswerFormat::Numeric),
            count(AnswerFormat::Open)
        ),
    );
    let no_image = ing.samples.iter().filter(|s| s.images.is_empty()).count();
    let no_type = ing.samples.iter().filter(|s| s.question_type.is_none()).count();
    let no_context = ing.samples.iter().filter(|s| s.context.is_none()).count();
    a.insert(
        "missing",
        format!(
            "{no_image} questions have no image (text-only), {no_type} have no question type and {no_context} have no \
             context."
        ),
    );
    let per_image = distinct_images(&ing.samples.iter().collect::<Vec<_>>());
    let shared = per_image.values().filter(|&&c| c > 1).count();
    a.insert(
        "relationships",
        format!(
            "Questions that share an image are related through the image's `sha256`: {shared} of the {} distinct \
             images are asked about more than once. The source's linking fields, if any, are kept in `meta`.",
            per_image.len()
        ),
    );
    a.insert(
        "splits",
        format!(
            "One split, {}: this is an evaluation set and is meant to be used whole, not split for training.",
            md::code(&p.ingest.split)
        ),
    );
    a.insert("errors", errors(p, stages));
    a.insert("external", external(p, stages));
    a.insert("preprocessing", preprocessing(p, stages));
    let base = p.path.parent().unwrap_or(std::path::Path::new("."));
    let sources: Vec<String> = ing
        .inputs
        .iter()
        .map(|i| format!("{} (sha256 `{}`)", md::code(&super::manifest::relative_to(&i.path, base)), i.sha256))
        .collect();
    a.insert(
        "raw-data",
        format!(
            "The release is derived from these source files, unchanged: {}. Their hashes are in `manifest.json`, so \
             anyone holding them can check they rebuild this release.",
            sources.join(", ")
        ),
    );
    a.insert(
        "software",
        format!(
            "Yes: blindspot {} (Apache-2.0), from the declarative pipeline {} (sha256 `{}`). `blindspot build` on \
             that pipeline rebuilds this release byte for byte.",
            env!("CARGO_PKG_VERSION"),
            md::code(&p.path.file_name().map_or("?".into(), |f| f.to_string_lossy())),
            p.hash
        ),
    );
    a.insert("use-risks", use_risks(stages));
    a.insert(
        "distribution",
        "As a Hugging Face-compatible folder: Parquet files (zstd) typed for `datasets` (images load as images), this \
         card with its YAML configuration, `croissant.json` (Croissant 1.1 with RAI fields) and `manifest.json` (sha256 \
         of every file)."
            .to_string(),
    );
    a.insert(
        "license",
        format!(
            "{} (SPDX), as declared in the pipeline for the source data; blindspot adds no terms.",
            md::literal(&p.dataset.license)
        ),
    );
    a.insert(
        "updates",
        format!(
            "Versions are immutable: blindspot never overwrites a built version with different bytes, so a change \
             gets a new version next to this one ({}). `blindspot diff` shows what changed between two versions.",
            p.dataset.version
        ),
    );
    a
}

/// Filter values, each shown as written.
/// "Is it a sample of a larger set?": the source's records, what the
/// filters, validation, near-duplicate removal and pruning took, what is left.
fn sample(p: &Pipeline, stages: &super::BuildOutputs<'_>) -> String {
    let ing = stages.ingested;
    let n = ing.samples.len();
    let filters: Vec<String> = p
        .ingest
        .filters
        .iter()
        .map(|f| match (&f.any_of, &f.not_in) {
            (Some(v), _) => format!("{} in [{}]", md::code(&f.field), values(v)),
            (None, Some(v)) => format!("{} not in [{}]", md::code(&f.field), values(v)),
            (None, None) => md::code(&f.field),
        })
        .collect();
    format!(
        "The source holds {} records; {} were left out by the pipeline's filters{}, {} were rejected as invalid{}, \
             and {n} are in the release.",
        ing.stats.records,
        ing.stats.filtered,
        if filters.is_empty() { String::new() } else { format!(" ({})", filters.join("; ")) },
        ing.stats.rejected,
        if ing.stats.rejected > 0 { " (each listed with its reasons in `report/rejected.jsonl`)" } else { "" },
    ) + &match (stages.pruned.zip(stages.pruning_counts()), stages.dedup_removed().len()) {
        (None, 0) => String::new(),
        (None, d) => format!(
            " Of those, {d} duplicate or leaked questions were dropped (`prune-duplicates`; each with its reason \
                 in `report/duplicates.json`; config `removed`), so the default config holds {} (config `full` keeps \
                 all {n}).",
            stages.kept_samples().len()
        ),
        (Some((pr, c)), d) if d > 0 => format!(
            " Of those, {d} duplicate or leaked questions were dropped (`prune-duplicates`, reasons in \
                 `report/duplicates.json`) and {} pruning removed {} questions a blind model answers (reasons in \
                 `report/prune.json`); config `removed` holds both, the default config the {} kept (config `full` \
                 keeps all {n}).",
            pr.method.as_str(),
            c.removed,
            stages.kept_samples().len()
        ),
        (Some((pr, c)), _) if c.removed == 0 => format!(
            " {} pruning removed none of them ({}), so the default config holds all {n}.",
            pr.method.as_str(),
            pr.stop
        ),
        (Some((pr, c)), _) => format!(
            " Of those, {} pruning removed {} questions a blind model answers (each with its reason in \
                 `report/prune.json`; config `removed`), so the default config holds {} (config `full` keeps all {n}).",
            pr.method.as_str(),
            c.removed,
            c.kept
        ),
    }
}

/// "Is the dataset self-contained?": the default config's images (and
/// videos), counted as the card counts the source's, and where their bytes are.
fn external(p: &Pipeline, stages: &super::BuildOutputs<'_>) -> String {
    let ing = stages.ingested;
    // Said of the images the default config holds, which the release writer
    // checked are all there (bytes embedded, or files hashed).
    let kept = stages.kept_samples();
    let images: usize = kept.iter().map(|s| s.images.len()).sum();
    let (kept_distinct, all_distinct) =
        (distinct_images(&kept).len(), distinct_images(&ing.samples.iter().collect::<Vec<_>>()).len());
    let plural = |n: usize, one: &str, many: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {many}") };
    // The default config's distinct images, and how they relate to the
    // source's count given under "count".
    let distinct = if kept_distinct < all_distinct {
        format!(
            "{kept_distinct} of the source's {all_distinct} distinct images; the others are only in removed questions"
        )
    } else {
        plural(kept_distinct, "distinct image", "distinct images")
    };
    let videos = crate::videos::card_sentence(&kept, crate::videos::carry(p.release.videos, &stages.ingested.samples));
    let images = match (images, p.release.embed_images) {
        (0, _) if videos.is_some() => "The questions have no images.".to_string(),
        (0, _) => "Self-contained: the questions have no images; the Parquet files hold everything.".to_string(),
        (n, true) => format!(
            "Self-contained: the default config's {} ({distinct}) are embedded in the Parquet files.",
            plural(n, "image", "images"),
        ),
        (n, false) => format!(
            "Not self-contained: the Parquet files hold the paths of the default config's {} ({distinct}, each \
                 with its sha256 in `image_facts`), not their bytes (`[release] embed-images = false`); the images \
                 must be obtained from the source.",
            plural(n, "image", "images"),
        ),
    };
    images + &videos.map(|v| format!(" {v}")).unwrap_or_default()
}

/// "Any errors, sources of noise, or redundancies?": repeated questions,
/// near-duplicates, and the blind answerability measured before and after
/// pruning.
fn errors(p: &Pipeline, stages: &super::BuildOutputs<'_>) -> String {
    let ing = stages.ingested;
    let mut questions: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for s in &ing.samples {
        let image = s.images.first().map_or("", |i| i.sha256.as_deref().or(i.path.as_deref()).unwrap_or(""));
        *questions.entry((s.question.trim(), image)).or_default() += 1;
    }
    let repeated: usize = questions.values().filter(|&&c| c > 1).map(|c| c - 1).sum();
    let mut errors =
        format!("{repeated} questions repeat the text of another question about the same image (or about no image). ");
    if let Some(r) = stages.embed.and_then(|e| e.dups.as_ref()) {
        let j = r.summary();
        let _ = write!(
            errors,
            "Redundancies: {} clusters of exact duplicates ({} questions)",
            j.exact.clusters, j.exact.samples_in_clusters
        );
        if let Some(t) = r.threshold {
            let _ = write!(
                errors,
                " and {} clusters of near-duplicates ({} questions whose question+options embeddings have cosine >= {t} \
                 with another's)",
                j.near.as_ref().map_or(0, |n| n.clusters),
                j.near.as_ref().map_or(0, |n| n.samples_in_clusters)
            );
        }
        if let Some(n) = r.n_train {
            let _ = write!(
                errors,
                "; leakage from the training split ({n} questions): {} questions have an exact copy there",
                j.train.as_ref().map_or(0, |t| t.samples_with_exact_copy)
            );
            if r.threshold.is_some() {
                let _ = write!(errors, " and {} a near copy", crate::card::near_copies(&j));
            }
        }
        let dropped = stages.dedup_removed().len();
        let _ = write!(
            errors,
            ". Every pair is in config `duplicates`, see [Duplicates and leakage](#duplicates-and-leakage){}. ",
            if dropped > 0 {
                format!("; {dropped} of these questions were dropped (`prune-duplicates`)")
            } else {
                String::new()
            }
        );
    }
    match stages.diagnosis {
        Some(d) if p.diagnose.method == crate::diagnose::Method::TstEmbed => {
            let _ = write!(
                errors,
                "Blind answerability is a known source of noise in what the set measures: a linear probe on sentence \
                 embeddings of the question and options, never seeing the images, answers {} of the multiple-choice \
                 and yes/no questions (95% CI {}-{}; chance {}, majority answer {}), see \
                 [Blind answerability](#blind-answerability-tst-embed).",
                pct(d.weighted),
                pct(d.ci95.0),
                pct(d.ci95.1),
                pct(d.chance),
                pct(d.majority)
            );
        }
        Some(d) => {
            let _ = write!(
                errors,
                "Blind answerability is a known source of noise in what the set measures: a random forest that never \
                 sees the images answers {} of the questions (95% CI {}-{}; chance {}, majority answer {}), see \
                 [Blind answerability](#blind-answerability-tst-rf).",
                pct(d.weighted),
                pct(d.ci95.0),
                pct(d.ci95.1),
                pct(d.chance),
                pct(d.majority)
            );
        }
        // No `[diagnose]`, but pruning diagnosed the set before removing anything:
        // that measurement is the one the after-pruning figure compares with.
        None => match stages.pruned.and_then(|p| p.before.as_ref()) {
            Some(d) => {
                let _ = write!(
                    errors,
                    "Blind answerability was measured by pruning only (the pipeline has no `[diagnose]` section): \
                     before pruning, a random forest that never sees the images answers {} of the questions (95% CI \
                     {}-{}; chance {}, majority answer {}), see [Pruning](#pruning).",
                    pct(d.weighted),
                    pct(d.ci95.0),
                    pct(d.ci95.1),
                    pct(d.chance),
                    pct(d.majority)
                );
            }
            None => errors.push_str("Blind answerability was not measured (the pipeline has no `[diagnose]` section)."),
        },
    }
    if let Some(pr) = stages.pruned {
        // The fresh-seed figure: the selection-seed one is biased by the selection itself.
        match (&pr.after_independent, &pr.after) {
            (Some(i), _) => {
                let _ = write!(
                    errors,
                    " After pruning, the same blind model, re-run on {}, answers {} of the kept questions \
                     (95% CI {}-{}; chance {}), see [Pruning](#pruning).",
                    crate::prune::fresh_seeds(i.seeds.len()),
                    pct(i.blind_accuracy),
                    pct(i.ci95.0),
                    pct(i.ci95.1),
                    pct(i.chance)
                );
            }
            (None, Some(after)) => {
                let _ = write!(
                    errors,
                    " After pruning, the same blind model answers {} of the kept questions (95% CI {}-{}; chance {}; \
                     measured with the folds that chose the removals), see [Pruning](#pruning).",
                    pct(after.weighted),
                    pct(after.ci95.0),
                    pct(after.ci95.1),
                    pct(after.chance)
                );
            }
            (None, None) => {}
        }
    }
    errors
}

/// "Any risks in using the data?": the question types answered blind above
/// their null.
fn use_risks(stages: &super::BuildOutputs<'_>) -> String {
    let mut risks = String::new();
    if let Some(d) = stages.diagnosis {
        let above: Vec<String> = crate::blind_groups::group_lines(d)
            .iter()
            .filter(|g| g.above)
            .map(|g| {
                format!(
                    "{} ({}: {} blind vs {} chance, {} majority)",
                    md::literal(g.question_type),
                    g.format,
                    pct(g.blind),
                    pct(g.chance),
                    pct(g.majority)
                )
            })
            .collect();
        if above.is_empty() {
            risks.push_str(
                "No question type is answered blind above what its answer distribution alone gives (its \
                 label-permutation null). ",
            );
        } else {
            let _ = write!(
                risks,
                "Scores on these question types partly measure text-only priors rather than visual understanding: {}. \
                 Report them with the blind baseline. ",
                above.join("; ")
            );
        }
    }
    risks.push_str("Accuracy on a benchmark is only meaningful with the image-free baseline next to it.");
    risks
}

fn values(v: &[String]) -> String {
    v.iter().map(|x| md::literal(x)).collect::<Vec<_>>().join(", ")
}

/// Each stage's settings, in words.
fn preprocessing(p: &Pipeline, stages: &super::BuildOutputs<'_>) -> String {
    let ing = stages.ingested;
    let mut out = format!(
        "Ingest mapped the source's fields onto blindspot's canonical record (the mapping is in the pipeline file), \
         checked every record (a gold answer among the options, a known answer format, existing images) and sorted \
         the records by id; invalid records were {} ({} rejected). ",
        match p.ingest.on_invalid {
            crate::error::OnInvalid::Error => "an error",
            crate::error::OnInvalid::Skip => "skipped",
        },
        ing.stats.rejected
    );
    if p.ingest.shuffle_options {
        out.push_str("Options were shuffled with a seeded permutation (the source lists the gold first). ");
    }
    if stages.diagnosis.is_some() {
        let d = &p.diagnose;
        let grouping = match &d.group_by {
            None => "stratified".to_string(),
            Some(GroupBy::Image) => "grouped by image".to_string(),
            Some(GroupBy::ImageCluster(t)) => {
                format!("grouped by near-duplicate image (phash and dhash within {t} bits)")
            }
            Some(GroupBy::Video) => "grouped by video".to_string(),
            Some(GroupBy::Question) => "grouped by question text".to_string(),
            Some(GroupBy::Meta(f)) => format!("grouped by {}", md::code(f)),
        };
        let _ = write!(
            out,
            "Diagnose ({}) ran {}-fold cross-validation ({grouping}), {} repeat(s), seed {}, {} trees per \
             classifier and {} per regressor, {} declarative recipe(s); it labelled nothing and removed nothing. ",
            match d.method {
                crate::diagnose::Method::TstRf => "TsT-RF".to_string(),
                crate::diagnose::Method::TstEmbed =>
                    "TsT-Embed: a linear probe on all-MiniLM-L6-v2 sentence embeddings".to_string(),
                crate::diagnose::Method::Both => format!(
                    "TsT-RF and TsT-Embed, a linear probe on all-MiniLM-L6-v2 sentence embeddings; s(x) their {}",
                    d.combine.as_str()
                ),
            },
            d.folds,
            d.repeats,
            d.seed,
            d.trees,
            d.regression_trees,
            d.features.recipes.len()
        );
        if let Some(s) = stages.diagnosis.and_then(|dg| super::card::fewer_folds_sentence(dg, d)) {
            let _ = write!(out, "{s} ");
        }
    }
    if let Some(v) = &p.variants {
        let kinds: Vec<String> = v.kinds.iter().map(|k| k.name()).collect();
        let _ = write!(
            out,
            "Variants ({}) were generated from the questions with seed {} as separate configs; the default config \
             is untouched. ",
            kinds.join(", "),
            v.seed
        );
    }
    let dropped = stages.dedup_removed().len();
    if dropped > 0 {
        let _ = write!(
            out,
            "Duplicates were dropped before the other stages (`[leakage] prune-duplicates`): {dropped} questions, \
             keeping the first by id of each duplicate cluster and removing every question copied from the training \
             split. "
        );
    }
    match stages.pruned.zip(stages.pruning_counts()) {
        None => out.push_str("No question was removed by a pruning stage and no answer was changed."),
        Some((pr, counts)) => {
            let c = &pr.config;
            let _ = write!(
                out,
                "Pruning ({}, seed {}) removed {} questions: budget {}, batch {}, floor {} per question type, \
                 allocation {}, ranked by {}{}; it stopped because: {}. No answer was changed.",
                pr.method.as_str(),
                c.seed,
                counts.removed,
                c.budget.describe(),
                c.batch.describe(),
                c.floor,
                c.allocation.as_str(),
                c.rank.describe(),
                c.threshold.map_or(String::new(), |t| format!(", threshold {t}")),
                pr.stop
            );
        }
    }
    out
}
