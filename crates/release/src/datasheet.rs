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

use serde::Serialize;

use crate::card::Measured;
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

/// Writes the datasheet (a `## Datasheet` section with one `###` per Gebru section).
pub fn render(out: &mut String, p: &Pipeline, stages: &super::BuildOutputs<'_>) {
    let computed = computed_answers(p, stages);
    let sections: Vec<SectionView> = SECTIONS
        .iter()
        .enumerate()
        .map(|(s, title)| SectionView {
            title,
            questions: QUESTIONS
                .iter()
                .filter(|q| q.section == s)
                .map(|q| QuestionView {
                    id: q.id,
                    text: q.text,
                    publisher: publisher_answer(p, q),
                    computed: computed.get(q.id).map(String::as_str),
                    how_to_answer: how_to_answer(q),
                })
                .collect(),
        })
        .collect();
    out.push_str(&crate::card::template::render("datasheet.md", &DatasheetView { sections }));
}

/// Every answered question's text (the publisher's answer, then the computed one), by id.
pub fn answers(p: &Pipeline, stages: &super::BuildOutputs<'_>) -> BTreeMap<&'static str, String> {
    let computed = computed_answers(p, stages);
    QUESTIONS
        .iter()
        .filter_map(|q| {
            let parts: Vec<&str> =
                publisher_answer(p, q).into_iter().chain(computed.get(q.id).map(String::as_str)).collect();
            (!parts.is_empty()).then(|| (q.id, parts.join(" ")))
        })
        .collect()
}

/// The publisher's answer to `q` from `[datasheet]`, when it says something.
fn publisher_answer<'p>(p: &'p Pipeline, q: &Question) -> Option<&'p str> {
    p.datasheet.get(q.id).map(|a| a.trim()).filter(|a| !a.is_empty())
}

/// The datasheet as `templates/datasheet.md` lays it out.
#[derive(Serialize)]
struct DatasheetView<'a> {
    sections: Vec<SectionView<'a>>,
}

#[derive(Serialize)]
struct SectionView<'a> {
    title: &'a str,
    questions: Vec<QuestionView<'a>>,
}

#[derive(Serialize)]
struct QuestionView<'a> {
    id: &'a str,
    text: &'a str,
    publisher: Option<&'a str>,
    /// Markdown rendered by `templates/datasheet-answers.md`.
    computed: Option<&'a str>,
    how_to_answer: String,
}

/// The computed answers, by question id: each question's block of
/// `templates/datasheet-answers.md` that renders to something.
fn computed_answers(p: &Pipeline, stages: &super::BuildOutputs<'_>) -> BTreeMap<&'static str, String> {
    let facts = Facts::of(p, stages);
    let blocks: Vec<String> = QUESTIONS.iter().map(|q| q.id.replace('-', "_")).collect();
    let names: Vec<&str> = blocks.iter().map(String::as_str).collect();
    QUESTIONS
        .iter()
        .zip(crate::card::template::render_blocks("datasheet-answers.md", &facts, &names))
        .filter_map(|(q, text)| text.filter(|t| !t.is_empty()).map(|t| (q.id, t)))
        .collect()
}

/// What the computed answers say, as `templates/datasheet-answers.md` reads it.
#[derive(Serialize)]
struct Facts<'a> {
    /// The models whose predictions were scored, when the release has metrics.
    models: Option<Vec<&'a str>>,
    formats: Vec<FormatCount>,
    /// Questions in the release (before pruning).
    questions: usize,
    /// "N distinct image files", in words ([`images_phrase`]).
    images: String,
    question_types: usize,
    sample: SampleFacts<'a>,
    /// Questions `prune-duplicates` dropped.
    dropped: usize,
    /// Questions the default config keeps.
    kept: usize,
    pruning: Option<PruningFacts<'a>>,
    labels: Labels,
    missing: Missing,
    shared_images: usize,
    distinct_images: usize,
    split: &'a str,
    errors: ErrorFacts,
    external: External,
    preprocessing: Preprocessing<'a>,
    sources: Vec<SourceFile>,
    tool_version: &'static str,
    pipeline_file: String,
    pipeline_sha256: &'a str,
    /// The question types answered blind above their null; `None` without a diagnosis.
    risky: Option<Vec<Risky<'a>>>,
    license: &'a str,
    version: &'a str,
}

#[derive(Serialize)]
struct FormatCount {
    format: &'static str,
    questions: usize,
}

/// The source's records, what the filters and validation took.
#[derive(Serialize)]
struct SampleFacts<'a> {
    records: usize,
    filtered: usize,
    rejected: usize,
    filters: Vec<FilterRule<'a>>,
}

/// A filter of `[ingest]`: its field, and `in` or `not in` its values.
#[derive(Serialize)]
struct FilterRule<'a> {
    field: &'a str,
    op: Option<&'static str>,
    values: &'a [String],
}

/// What pruning removed and why it stopped.
#[derive(Serialize)]
struct PruningFacts<'a> {
    method: &'static str,
    removed: usize,
    kept: usize,
    stop: &'a str,
}

#[derive(Serialize)]
struct Labels {
    multiple_choice: usize,
    yes_no: usize,
    numeric: usize,
    open: usize,
}

/// Questions without an image, a question type, a context.
#[derive(Serialize)]
struct Missing {
    image: usize,
    question_type: usize,
    context: usize,
}

#[derive(Serialize)]
struct ErrorFacts {
    /// Questions repeating another's text about the same image.
    repeated: usize,
    duplicates: Option<Duplicates>,
    /// Who measured blind answerability: `tst-embed`, `tst-rf`, `pruning`, or `none`.
    blind_by: &'static str,
    blind: Option<Measured>,
    /// After pruning, re-run on fresh seeds.
    after_fresh: Option<Fresh>,
    /// After pruning, with the folds that chose the removals (no fresh seeds).
    after_selection: Option<Measured>,
}

#[derive(Serialize)]
struct Duplicates {
    exact_clusters: usize,
    exact_questions: usize,
    near: Option<Near>,
    train: Option<Train>,
}

#[derive(Serialize)]
struct Near {
    clusters: usize,
    questions: usize,
    threshold: f64,
}

#[derive(Serialize)]
struct Train {
    questions: usize,
    exact: usize,
    /// Questions with a near copy in the training split, when near copies are looked for.
    near: Option<usize>,
}

#[derive(Serialize)]
struct Fresh {
    /// "N fresh seeds".
    seeds: String,
    accuracy: f64,
    low: f64,
    high: f64,
    chance: f64,
}

/// The default config's images (and videos), counted as the card counts the
/// source's.
#[derive(Serialize)]
struct External {
    images: usize,
    distinct: usize,
    source_distinct: usize,
    embedded: bool,
    /// The videos' sentence, when the questions have videos.
    videos: Option<String>,
}

#[derive(Serialize)]
struct Preprocessing<'a> {
    skip_invalid: bool,
    rejected: usize,
    shuffle_options: bool,
    diagnose: Option<DiagnoseFacts<'a>>,
    variants: Option<VariantsFacts>,
    pruning: Option<PruneSettings>,
}

#[derive(Serialize)]
struct DiagnoseFacts<'a> {
    /// `tst-rf`, `tst-embed` or `both`.
    method: &'static str,
    combine: &'static str,
    #[serde(flatten)]
    folds: crate::card::Folds<'a>,
    trees: usize,
    regression_trees: usize,
    recipes: usize,
    fewer_folds: Option<String>,
}

#[derive(Serialize)]
struct VariantsFacts {
    kinds: Vec<String>,
    seed: u64,
}

/// Pruning's settings, each in words.
#[derive(Serialize)]
struct PruneSettings {
    seed: u64,
    budget: String,
    batch: String,
    floor: usize,
    allocation: &'static str,
    rank: String,
    threshold: Option<f64>,
}

#[derive(Serialize)]
struct SourceFile {
    path: String,
    sha256: String,
}

#[derive(Serialize)]
struct Risky<'a> {
    question_type: &'a str,
    format: &'a str,
    blind: f64,
    chance: f64,
    majority: f64,
}

impl<'a> Facts<'a> {
    fn of<'s: 'a>(p: &'a Pipeline, stages: &'a super::BuildOutputs<'s>) -> Self {
        let ing = stages.ingested;
        let counts = ing.format_counts();
        let count = |f: AnswerFormat| counts.iter().find(|(g, _)| *g == f).map_or(0, |(_, c)| *c);
        let all: Vec<&crate::sample::Sample> = ing.samples.iter().collect();
        let per_image = distinct_images(&all);
        let base = p.path.parent().unwrap_or(std::path::Path::new("."));
        let pruned = stages.pruned.zip(stages.pruning_counts());
        Facts {
            models: stages.metrics.map(|m| m.file.models.keys().map(String::as_str).collect()),
            formats: counts.iter().map(|(f, c)| FormatCount { format: f.as_str(), questions: *c }).collect(),
            questions: ing.samples.len(),
            images: images_phrase(ing),
            question_types: ing
                .samples
                .iter()
                .filter_map(|s| s.question_type.as_deref())
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            sample: SampleFacts {
                records: ing.stats.records,
                filtered: ing.stats.filtered,
                rejected: ing.stats.rejected,
                filters: p
                    .ingest
                    .filters
                    .iter()
                    .map(|f| match (&f.any_of, &f.not_in) {
                        (Some(v), _) => FilterRule { field: &f.field, op: Some("in"), values: v },
                        (None, Some(v)) => FilterRule { field: &f.field, op: Some("not in"), values: v },
                        (None, None) => FilterRule { field: &f.field, op: None, values: &[] },
                    })
                    .collect(),
            },
            dropped: stages.dedup_removed().len(),
            kept: stages.kept_samples().len(),
            pruning: pruned.map(|(pr, c)| PruningFacts {
                method: pr.method.as_str(),
                removed: c.removed,
                kept: c.kept,
                stop: &pr.stop,
            }),
            labels: Labels {
                multiple_choice: count(AnswerFormat::MultipleChoice),
                yes_no: count(AnswerFormat::YesNo),
                numeric: count(AnswerFormat::Numeric),
                open: count(AnswerFormat::Open),
            },
            missing: Missing {
                image: ing.samples.iter().filter(|s| s.images.is_empty()).count(),
                question_type: ing.samples.iter().filter(|s| s.question_type.is_none()).count(),
                context: ing.samples.iter().filter(|s| s.context.is_none()).count(),
            },
            shared_images: per_image.values().filter(|&&c| c > 1).count(),
            distinct_images: per_image.len(),
            split: &p.ingest.split,
            errors: errors(p, stages),
            external: external(p, stages),
            preprocessing: preprocessing(p, stages),
            sources: ing
                .inputs
                .iter()
                .map(|i| SourceFile { path: super::manifest::relative_to(&i.path, base), sha256: i.sha256.clone() })
                .collect(),
            tool_version: env!("CARGO_PKG_VERSION"),
            pipeline_file: p.path.file_name().map_or("?".into(), |f| f.to_string_lossy().to_string()),
            pipeline_sha256: &p.hash,
            risky: stages.diagnosis.map(|d| {
                crate::blind_groups::group_lines(d)
                    .into_iter()
                    .filter(|g| g.above)
                    .map(|g| Risky {
                        question_type: g.question_type,
                        format: g.format,
                        blind: g.blind,
                        chance: g.chance,
                        majority: g.majority,
                    })
                    .collect()
            }),
            license: &p.dataset.license,
            version: &p.dataset.version,
        }
    }
}

/// "Is the dataset self-contained?": the default config's images (and
/// videos), counted as the card counts the source's; the release writer
/// checked they are all there (bytes embedded, or files hashed).
fn external(p: &Pipeline, stages: &super::BuildOutputs<'_>) -> External {
    let kept = stages.kept_samples();
    External {
        images: kept.iter().map(|s| s.images.len()).sum(),
        distinct: distinct_images(&kept).len(),
        source_distinct: distinct_images(&stages.ingested.samples.iter().collect::<Vec<_>>()).len(),
        embedded: p.release.embed_images,
        videos: crate::videos::card_sentence(&kept, crate::videos::carry(p.release.videos, &stages.ingested.samples)),
    }
}

/// "Any errors, sources of noise, or redundancies?": repeated questions,
/// near-duplicates, and the blind answerability measured before and after
/// pruning.
fn errors(p: &Pipeline, stages: &super::BuildOutputs<'_>) -> ErrorFacts {
    let mut questions: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for s in &stages.ingested.samples {
        let image = s.images.first().map_or("", |i| i.sha256.as_deref().or(i.path.as_deref()).unwrap_or(""));
        *questions.entry((s.question.trim(), image)).or_default() += 1;
    }
    let duplicates = stages.embed.and_then(|e| e.dups.as_ref()).map(|r| {
        let j = r.summary();
        Duplicates {
            exact_clusters: j.exact.clusters,
            exact_questions: j.exact.samples_in_clusters,
            near: r.threshold.map(|threshold| Near {
                clusters: j.near.as_ref().map_or(0, |n| n.clusters),
                questions: j.near.as_ref().map_or(0, |n| n.samples_in_clusters),
                threshold,
            }),
            train: r.n_train.map(|questions| Train {
                questions,
                exact: j.train.as_ref().map_or(0, |t| t.samples_with_exact_copy),
                near: r.threshold.map(|_| crate::card::near_copies(&j)),
            }),
        }
    });
    // Without `[diagnose]`, pruning diagnosed the set before removing anything:
    // that measurement is the one the after-pruning figure compares with.
    let (blind_by, blind) = match stages.diagnosis {
        Some(d) if p.diagnose.method == crate::diagnose::Method::TstEmbed => ("tst-embed", Some(Measured::of(d))),
        Some(d) => ("tst-rf", Some(Measured::of(d))),
        None => match stages.pruned.and_then(|p| p.before.as_ref()) {
            Some(d) => ("pruning", Some(Measured::of(d))),
            None => ("none", None),
        },
    };
    // The fresh-seed figure first: the selection-seed one is biased by the selection itself.
    let after_fresh = stages.pruned.and_then(|pr| pr.after_independent.as_ref()).map(|i| Fresh {
        seeds: crate::prune::fresh_seeds(i.seeds.len()),
        accuracy: i.blind_accuracy,
        low: i.ci95.0,
        high: i.ci95.1,
        chance: i.chance,
    });
    let after_selection = stages.pruned.and_then(|pr| pr.after.as_ref()).map(Measured::of);
    ErrorFacts {
        repeated: questions.values().filter(|&&c| c > 1).map(|c| c - 1).sum(),
        duplicates,
        blind_by,
        blind,
        after_fresh,
        after_selection,
    }
}

/// Each stage's settings, as the "preprocessing" answer says them.
fn preprocessing<'a>(p: &'a Pipeline, stages: &super::BuildOutputs<'_>) -> Preprocessing<'a> {
    let diagnose = stages.diagnosis.map(|dg| {
        let d = &p.diagnose;
        DiagnoseFacts {
            method: match d.method {
                crate::diagnose::Method::TstRf => "tst-rf",
                crate::diagnose::Method::TstEmbed => "tst-embed",
                crate::diagnose::Method::Both => "both",
            },
            combine: d.combine.as_str(),
            folds: crate::card::Folds::of(d),
            trees: d.trees,
            regression_trees: d.regression_trees,
            recipes: d.features.recipes.len(),
            fewer_folds: super::card::fewer_folds_sentence(dg, d),
        }
    });
    Preprocessing {
        skip_invalid: p.ingest.on_invalid == crate::error::OnInvalid::Skip,
        rejected: stages.ingested.stats.rejected,
        shuffle_options: p.ingest.shuffle_options,
        diagnose,
        variants: p
            .variants
            .as_ref()
            .map(|v| VariantsFacts { kinds: v.kinds.iter().map(|k| k.name()).collect(), seed: v.seed }),
        pruning: stages.pruned.map(|pr| {
            let c = &pr.config;
            PruneSettings {
                seed: c.seed,
                budget: c.budget.describe(),
                batch: c.batch.describe(),
                floor: c.floor,
                allocation: c.allocation.as_str(),
                rank: c.rank.describe().to_string(),
                threshold: c.threshold,
            }
        }),
    }
}
