//! The release's `README.md`: Hugging Face YAML front matter (configs,
//! features, split sizes) followed by what the release is and how to rebuild it.

mod diagnosis;
mod duplicates;
mod front_matter;
mod metrics;
mod pruning;
mod sources;

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::io::escape::markdown as md;
use crate::spec::Pipeline;
// The sections the report page renders too (crate::html).
pub(crate) use diagnosis::diagnosis_section;
pub(super) use diagnosis::fewer_folds_sentence;
pub(crate) use duplicates::{duplicates_section, near_copies};
use front_matter::{
    ConfigInfo, Feature, Kind, Split, config_info_yaml, duplicates_features, features, size_category, y,
};
pub(crate) use metrics::{audit_section, gap_section, metrics_section, variants_section};
pub(crate) use pruning::{filter_section, prune_section};
use sources::sources_section;

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
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
        let splits = vec![Split { name: "test".into(), num_bytes: c.bytes, num_examples: c.rows }];
        out.push_str(&config_info_yaml(&ConfigInfo {
            features,
            splits,
            download_size: c.bytes,
            dataset_size: c.bytes,
        }));
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
    let _ = writeln!(out, "\n{}.\n", super::datasheet::images_phrase(ing));
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
        let fence = md::fence_for(c);
        let _ = writeln!(out, "\n## Citation\n\n{fence}\n{}\n{fence}", c.trim());
    }
    out
}
