//! What one build's stages produced, as the pipeline hands it to the release:
//! the ingested questions, the diagnoses, pruning and its control, the filter,
//! the embeddings, the metrics, the variant rows, and the kept and removed
//! sets they make. The pipeline fills it once; the release only renders and
//! writes it, so which questions a release keeps is decided here, not there.

// The crates below this one, under the module names the code uses.
use blindspot_core::sample;
use blindspot_diagnose as diagnose;
use blindspot_embed as embed;
use blindspot_filter as filter;
use blindspot_ingest as ingest;
use blindspot_metrics as metrics;
use blindspot_prune as prune;
use blindspot_variants as variants;

use std::collections::BTreeSet;

use crate::ingest::Ingested;
use crate::sample::Sample;

/// What the stages before the release produced.
#[derive(Clone, Copy)]
pub struct BuildOutputs<'a> {
    pub ingested: &'a Ingested,
    /// TsT-RF on every ingested question.
    pub diagnosis: Option<&'a crate::diagnose::Diagnosis>,
    /// The settings it was measured with, as checked against the questions
    /// (outside scores loaded): its report states them.
    pub diagnose_config: Option<&'a crate::diagnose::DiagnoseConfig>,
    /// The pruning run: the default config holds what it kept.
    pub pruned: Option<&'a crate::prune::Pruned>,
    /// The matched random control, when asked for.
    pub control: Option<&'a crate::prune::Pruned>,
    /// B-Clean's own report, when it pruned.
    pub bclean: Option<&'a crate::prune::bclean::BCleanReport>,
    /// `[filter]`: what blind models answered, removed before pruning.
    pub filter: Option<&'a crate::filter::FilterReport>,
    /// `report/metrics.json` and `report/per_question.parquet`, when the pipeline
    /// scores model predictions.
    pub metrics: Option<&'a MetricsOut>,
    /// Embeddings, TsT-Embed, duplicates and leakage, when the pipeline asked for them.
    pub embed: Option<&'a EmbedStage>,
    /// The variant rows of each kind the pipeline asked for, made from the kept questions.
    pub variants: &'a [crate::variants::KindRows],
}

/// The metrics stage's outputs.
#[derive(Debug, Clone)]
pub struct MetricsOut {
    pub file: crate::metrics::MetricsFile,
    /// Each model's original-condition accuracy on the full, kept and removed sets.
    pub by_set: Vec<crate::metrics::SetAccuracy>,
    /// The gap with and without the image on the full, kept, removed and control sets.
    pub gap: Option<crate::metrics::evidence::GapReport>,
    /// Questions sighted models agree on another answer than the gold (kept: an audit).
    pub label_audit: Vec<crate::metrics::evidence::AuditRow>,
    pub audit_rule: crate::metrics::evidence::AuditRule,
    /// One row per scored prediction.
    pub per_question: arrow::array::RecordBatch,
}

/// What the embedding steps produced for a release.
#[derive(Debug, Clone, Default)]
pub struct EmbedStage {
    /// Embeddings of every ingested sample (`None`: no model was needed).
    pub embeddings: Option<crate::embed::SampleEmbeddings>,
    /// Each embedded question on the first two principal axes of the question
    /// embeddings, in the embeddings' order (empty without embeddings).
    pub projection: Vec<(f64, f64)>,
    /// With `method = "both"`: TsT-Embed's own diagnosis (reported beside TsT-RF's).
    pub tst_embed: Option<crate::diagnose::Diagnosis>,
    /// `[leakage]`: the duplicates found.
    pub dups: Option<crate::embed::dups::DupsReport>,
    /// `[leakage]`: the training split's file as written in the pipeline.
    pub train_written: Option<String>,
    /// `prune-duplicates`: the questions dropped, in id order, with reasons.
    pub dedup_removed: Vec<crate::prune::Removed>,
}

/// The three stages that remove questions from the default config: pruning,
/// `[filter]` and `prune-duplicates`. The kept and removed sets are theirs.
#[derive(Clone, Copy, Default)]
pub struct Removals<'a> {
    pub pruned: Option<&'a crate::prune::Pruned>,
    pub filter: Option<&'a crate::filter::FilterReport>,
    /// `prune-duplicates`: the questions dropped as duplicates or leaked.
    pub dedup: &'a [crate::prune::Removed],
}

impl<'a> Removals<'a> {
    /// Every removed id: pruning's, the filter's and `prune-duplicates`'.
    pub fn removed_ids(&self) -> BTreeSet<&'a str> {
        let mut ids = self.pruned.map(crate::prune::Pruned::removed_ids).unwrap_or_default();
        ids.extend(self.dedup.iter().map(|r| r.id.as_str()));
        ids.extend(self.filter_removed());
        ids
    }

    /// Questions `[filter]` removed.
    pub fn filter_removed(&self) -> BTreeSet<&'a str> {
        self.filter.map(crate::filter::FilterReport::removed_ids).unwrap_or_default()
    }

    /// The questions of `samples` the default config holds: all but the removed ones.
    pub fn kept<'s>(&self, samples: &'s [Sample]) -> Vec<&'s Sample> {
        let removed = self.removed_ids();
        samples.iter().filter(|s| !removed.contains(s.id.as_str())).collect()
    }

    /// Whether anything was removed from the default config's questions (by
    /// pruning, the filter, or as duplicates).
    pub fn removes(&self) -> bool {
        self.pruned.is_some_and(|p| !p.removed.is_empty())
            || !self.dedup.is_empty()
            || !self.filter_removed().is_empty()
    }
}

impl<'a> BuildOutputs<'a> {
    /// The stages that removed questions, and what they removed.
    pub fn removals(&self) -> Removals<'a> {
        Removals { pruned: self.pruned, filter: self.filter, dedup: self.dedup_removed() }
    }

    /// The questions of the default config: all, or what pruning (and
    /// `prune-duplicates`) kept.
    pub fn kept_samples(&self) -> Vec<&'a Sample> {
        self.removals().kept(&self.ingested.samples)
    }

    /// Questions dropped as duplicates or leaked (`prune-duplicates`).
    pub fn dedup_removed(&self) -> &'a [crate::prune::Removed] {
        self.embed.map_or(&[], |e| e.dedup_removed.as_slice())
    }

    /// Every removed id: pruning's, the filter's and `prune-duplicates`'.
    pub fn removed_ids(&self) -> BTreeSet<&'a str> {
        self.removals().removed_ids()
    }

    /// What the diagnosis's s(x) histogram marks as removed: every removal,
    /// when pruning ran or anything was removed (`None`: a plain histogram).
    pub fn histogram_removed(&self) -> Option<BTreeSet<&'a str>> {
        let r = self.removals();
        (r.pruned.is_some() || r.removes()).then(|| r.removed_ids())
    }

    /// Questions `[filter]` removed.
    pub fn filter_removed(&self) -> BTreeSet<&'a str> {
        self.removals().filter_removed()
    }

    /// Pruning's counts as the data written holds them: the questions it was
    /// given (all but the dropped duplicates), how many of those the `removed`
    /// config holds as its removals, and how many the default config keeps.
    /// The card, the datasheet and the report print these, never the pruning
    /// run's own lists (which a stage cache could hold stale or forged).
    pub fn pruning_counts(&self) -> Option<PruningCounts> {
        let pr = self.pruned?;
        let mut dropped: BTreeSet<&str> = self.dedup_removed().iter().map(|r| r.id.as_str()).collect();
        dropped.extend(self.filter_removed());
        let removed_ids = pr.removed_ids();
        let given: Vec<&Sample> = self.ingested.samples.iter().filter(|s| !dropped.contains(s.id.as_str())).collect();
        let removed = given.iter().filter(|s| removed_ids.contains(s.id.as_str())).count();
        Some(PruningCounts { input: given.len(), removed, kept: given.len() - removed })
    }

    /// Whether anything was removed from the default config's questions (by
    /// pruning, or as duplicates).
    pub fn removes(&self) -> bool {
        self.removals().removes()
    }
}

/// See [`BuildOutputs::pruning_counts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PruningCounts {
    pub input: usize,
    pub removed: usize,
    pub kept: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default config keeps every question no stage removed, in ingest
    /// order; nothing removed is not a removal.
    #[test]
    fn the_kept_set_is_every_question_no_stage_removed() {
        let samples: Vec<Sample> = ["q1", "q2", "q3", "q4"].iter().map(|id| Sample::new(*id, "Q?", "yes")).collect();
        let dropped = crate::prune::Removed {
            id: "q3".into(),
            question_type: None,
            format: crate::sample::AnswerFormat::Open,
            iteration: 0,
            score: 0.0,
            reason: "exact duplicate of q1".into(),
        };
        let none = Removals::default();
        assert!(!none.removes());
        assert_eq!(none.kept(&samples).len(), 4);
        let dedup = Removals { dedup: std::slice::from_ref(&dropped), ..Removals::default() };
        assert!(dedup.removes());
        assert_eq!(dedup.removed_ids().into_iter().collect::<Vec<_>>(), ["q3"]);
        let kept: Vec<&str> = dedup.kept(&samples).iter().map(|s| s.id.as_str()).collect();
        assert_eq!(kept, ["q1", "q2", "q4"]);
    }
}
