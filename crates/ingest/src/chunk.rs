//! One chunk of records mapped (on one thread): the outcomes, the raw
//! records of invalid ones, and which filter and mapped source fields the
//! records hold.

use crate::error::{Location, Problem};
use crate::json;
use crate::mapping::{self, Outcome};
use crate::plan::{Format, IngestPlan};
use crate::raw::RawRecord;
use crate::source::Records;

/// One record after mapping. The raw record is kept only when it is invalid
/// (for the rejected file); valid ones are dropped as soon as they are mapped.
pub(crate) struct Item {
    pub(crate) outcome: Outcome,
    pub(crate) invalid_raw: Option<(RawRecord, Format)>,
}

/// What one chunk of records produced.
pub(crate) struct ChunkOut {
    pub(crate) items: Vec<Item>,
    pub(crate) parse_problems: Vec<Problem>,
    /// Per filter: whether any record of the chunk has its field.
    pub(crate) filter_seen: Vec<bool>,
    /// Per optional mapped source field ([`crate::plan::FieldMap::optional_sources`]).
    pub(crate) sources_seen: Vec<SourceSeen>,
}

/// Whether the records hold one mapped source field: any of them, and how many
/// of those the filters keep lack it, with the first.
#[derive(Debug, Clone, Default)]
pub(crate) struct SourceSeen {
    pub(crate) any: bool,
    pub(crate) absent: usize,
    pub(crate) first_absent: Option<Location>,
}

impl SourceSeen {
    /// Adds what a later part of the input saw.
    pub(crate) fn merge(&mut self, later: SourceSeen) {
        self.any |= later.any;
        self.absent += later.absent;
        if self.first_absent.is_none() {
            self.first_absent = later.first_absent;
        }
    }
}

pub(crate) fn process_chunk(
    records: &Records,
    range: std::ops::Range<usize>,
    format: Format,
    plan: &IngestPlan,
    sources: &[(&'static str, String)],
    joins: &[crate::join::Joined],
) -> ChunkOut {
    let class_labels = records.class_labels();
    let (records, parse_problems) = records.chunk(range);
    // Each record completed from the joined files; one that cannot be is invalid.
    let (records, mut join_problems): (std::borrow::Cow<'_, [RawRecord]>, Vec<Option<Problem>>) = if joins.is_empty() {
        (records, Vec::new())
    } else {
        let mut problems = Vec::with_capacity(records.len());
        let completed = records
            .iter()
            .map(|r| match crate::join::complete(joins, r) {
                Ok(c) => {
                    problems.push(None);
                    c
                }
                Err(p) => {
                    problems.push(Some(p));
                    r.clone()
                }
            })
            .collect();
        (std::borrow::Cow::Owned(completed), problems)
    };
    let filter_seen = plan.filters.iter().map(|f| records.iter().any(|r| r.has(&f.field))).collect();
    let mut sources_seen = vec![SourceSeen::default(); sources.len()];
    let items = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let outcome = match join_problems.get_mut(i).and_then(Option::take) {
                Some(p) => Outcome::Invalid(vec![p]),
                None => mapping::map_record(r, plan, format, class_labels),
            };
            let kept = !matches!(outcome, Outcome::Filtered);
            for ((_, field), seen) in sources.iter().zip(&mut sources_seen) {
                if r.has(field) {
                    seen.any = true;
                } else if kept {
                    seen.absent += 1;
                    seen.first_absent.get_or_insert_with(|| r.loc.clone());
                }
            }
            let invalid_raw = matches!(outcome, Outcome::Invalid(_)).then(|| (r.clone(), format));
            Item { outcome, invalid_raw }
        })
        .collect();
    ChunkOut { items, parse_problems, filter_seen, sources_seen }
}

/// Records mapped at a time: the unit of memory, whatever the input's size
/// (two chunks per thread, at least four).
pub(crate) fn batch_size() -> usize {
    json::CHUNK * (2 * rayon::current_num_threads()).max(4)
}
