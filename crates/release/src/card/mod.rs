//! The release's `README.md`: Hugging Face YAML front matter (configs,
//! features, split sizes) followed by what the release is and how to rebuild it.

mod diagnosis;
mod duplicates;
pub(crate) mod front_matter;
mod metrics;
mod pruning;
mod sources;
pub(crate) mod template;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::spec::Pipeline;
// The sections the report page renders too (crate::html).
pub(crate) use diagnosis::diagnosis_section;
pub(super) use diagnosis::fewer_folds_sentence;
pub(crate) use diagnosis::{Folds, Measured};
pub(crate) use duplicates::{duplicates_section, near_copies};
use front_matter::{
    ConfigEntry, ConfigInfo, DataFileEntry, DataFiles, DatasetInfo, Feature, FrontMatter, Kind, Patterns, Split,
    duplicates_features, features, size_category,
};
pub(crate) use metrics::{audit_section, gap_section, metrics_section, variants_section};
pub(crate) use pruning::{filter_section, prune_section};
use sources::sources_section;

/// The card's title, provenance line and contents (`templates/contents.md`).
#[derive(Serialize)]
struct ContentsView<'a> {
    name: &'a str,
    version: &'a str,
    description: Option<&'a str>,
    tool_version: &'static str,
    pipeline_file: String,
    seed: u64,
    questions: usize,
    records: usize,
    filtered: usize,
    rejected: usize,
    /// Questions the default config keeps.
    kept: usize,
    filtered_by_model: bool,
    pruned: bool,
    notes: Vec<NoteView<'a>>,
    formats: Vec<Count<&'static str>>,
    question_types: Vec<Count<&'a str>>,
    /// "N distinct image files", in words.
    images: String,
}

/// A data-quality note of ingest: how many questions, what, and where first.
#[derive(Serialize)]
struct NoteView<'a> {
    rows: usize,
    what: &'a str,
    first: &'a str,
}

/// A table row: a name and its number of questions.
#[derive(Serialize)]
struct Count<T> {
    name: T,
    questions: usize,
}

impl<'a> ContentsView<'a> {
    fn of(p: &'a Pipeline, stages: &'a super::BuildOutputs<'_>) -> Self {
        let ing = stages.ingested;
        let mut types: BTreeMap<&str, usize> = BTreeMap::new();
        for s in &ing.samples {
            *types.entry(s.question_type.as_deref().unwrap_or("(none)")).or_default() += 1;
        }
        ContentsView {
            name: &p.dataset.name,
            version: &p.dataset.version,
            description: p.dataset.description.as_deref().map(str::trim),
            tool_version: env!("CARGO_PKG_VERSION"),
            pipeline_file: p.path.file_name().map_or("?".into(), |f| f.to_string_lossy().to_string()),
            seed: p.dataset.seed,
            questions: ing.samples.len(),
            records: ing.stats.records,
            filtered: ing.stats.filtered,
            rejected: ing.stats.rejected,
            kept: stages.kept_samples().len(),
            filtered_by_model: stages.filter.is_some(),
            pruned: stages.pruned.is_some(),
            notes: ing.stats.notes.iter().map(|n| NoteView { rows: n.rows, what: &n.what, first: &n.first }).collect(),
            formats: ing.format_counts().into_iter().map(|(f, c)| Count { name: f.as_str(), questions: c }).collect(),
            question_types: types.into_iter().map(|(t, c)| Count { name: t, questions: c }).collect(),
            images: super::datasheet::images_phrase(ing),
        }
    }
}

/// The citation, shown as written (BibTeX braces and all) in a fenced block.
#[derive(Serialize)]
struct CitationView {
    citation: String,
}

/// A config's `dataset_info` entry but its name: its rows' features and its
/// one split's size.
fn config_info(c: &super::ConfigInfo) -> ConfigInfo {
    let features = match c.schema {
        super::ConfigSchema::Samples => features(c.videos),
        super::ConfigSchema::Duplicates => duplicates_features(),
        super::ConfigSchema::Rotations => {
            let mut f = features(c.videos);
            f.extend(
                super::extra_columns(c.schema)
                    .iter()
                    .map(|c| Feature { name: c.name.to_string(), kind: Kind::Dtype("int32".into()) }),
            );
            f
        }
    };
    ConfigInfo {
        features,
        splits: vec![Split { name: "test".into(), num_bytes: c.bytes, num_examples: c.rows }],
        download_size: c.bytes,
        dataset_size: c.bytes,
    }
}

/// The card's front matter: the release's name, licence and size, and each
/// config's files and `dataset_info`.
fn front_matter_of(p: &Pipeline, kept: usize, configs: &[super::ConfigInfo]) -> FrontMatter {
    FrontMatter {
        pretty_name: Some(p.dataset.name.clone()),
        license: Some(p.dataset.license.to_ascii_lowercase()),
        task_categories: vec!["visual-question-answering".into()],
        size_categories: vec![size_category(kept).into()],
        configs: Some(
            configs
                .iter()
                .map(|c| {
                    let dir = c.file.rsplit_once('/').map_or("", |(d, _)| d);
                    ConfigEntry {
                        config_name: c.name.clone(),
                        default: c.name == "default",
                        data_files: Some(DataFiles::Many(vec![DataFileEntry::Split {
                            split: "test".into(),
                            path: Patterns::One(format!("{dir}/test-*.parquet")),
                        }])),
                    }
                })
                .collect(),
        ),
        dataset_info: configs
            .iter()
            .map(|c| DatasetInfo { config_name: c.name.clone(), info: config_info(c) })
            .collect(),
    }
}

/// Renders the dataset card.
pub fn render(
    p: &Pipeline,
    stages: &super::BuildOutputs<'_>,
    configs: &[super::ConfigInfo],
    variants: &[super::VariantInfo],
) -> String {
    let ing = stages.ingested;
    let ds = &p.dataset;
    let front = front_matter_of(p, stages.kept_samples().len(), configs);
    let mut out = format!("---\n{}---\n\n", front_matter::write(&front));

    out.push_str(&template::render("contents.md", &ContentsView::of(p, stages)));
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
        metrics_section(&mut out, &m.file, &m.by_set);
        gap_section(&mut out, m, stages.removes());
        audit_section(&mut out, m);
    }
    super::datasheet::render(&mut out, p, stages);
    sources_section(&mut out, p, ing);
    if let Some(c) = &ds.citation {
        out.push_str(&template::render("citation.md", &CitationView { citation: format!("{}\n", c.trim()) }));
    }
    out
}
