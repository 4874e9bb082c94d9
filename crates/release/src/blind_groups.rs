//! The per-group blind-accuracy rows that the card, the report page and the
//! datasheet all show: one model of a row, so the three say the same thing
//! about each group (which is above its baseline, which feature is named).

use crate::diagnose::null::GroupNull;
use crate::diagnose::{Diagnosis, GroupSummary};

/// One diagnosed group as the release presents it.
#[derive(Debug, Clone, Copy)]
pub struct GroupLine<'a> {
    pub group: &'a GroupSummary,
    /// The question type, `(none)` without one.
    pub question_type: &'a str,
    pub format: &'static str,
    pub n: usize,
    pub blind: f64,
    pub chance: f64,
    pub majority: f64,
    /// The group's label-permutation null, when measured.
    pub null: Option<&'a GroupNull>,
    /// Above its null and its majority baseline ([`crate::diagnose::verdict::group_above`]).
    pub above: bool,
    /// The most important feature, named only for a group above its baseline:
    /// below it the forest's splits explain nothing worth naming.
    pub top_feature: Option<&'a str>,
}

/// The rows of `d`, in its group order.
pub fn group_lines(d: &Diagnosis) -> Vec<GroupLine<'_>> {
    d.groups
        .iter()
        .map(|g| {
            let above = crate::diagnose::verdict::group_above(d, g);
            GroupLine {
                group: g,
                question_type: g.question_type.as_deref().unwrap_or("(none)"),
                format: g.format.as_str(),
                n: g.n,
                blind: g.blind_accuracy,
                chance: g.chance,
                majority: g.majority,
                null: d.null.as_ref().and_then(|n| n.group(g.question_type.as_deref(), g.format)),
                above,
                top_feature: g.top_features.first().filter(|_| above).map(|f| f.0.as_str()),
            }
        })
        .collect()
}
