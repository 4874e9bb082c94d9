//! The id of a mapped record: read, and checked to be exact (no number past
//! 2^53), free of control characters and of the variant separator `::`.

use super::mapper::Mapper;
use super::short;
use crate::plan::Accessor;
use crate::raw::Raw;

/// The record's id (None when it is missing, with the problem said).
pub(super) fn map_id(m: &mut Mapper<'_>, vlm: bool) -> Option<String> {
    let plan = m.plan;
    let f = &plan.fields;
    let id_defaults: &[&str] = if vlm { &["index"] } else { &["id"] };
    let id_acc = m.pick(&f.id, id_defaults);
    let id = id_acc.and_then(|a| m.text("id", a));
    if id.is_none() && m.problems.is_empty() {
        m.missing_required("id", f.id.as_ref(), id_defaults);
    }
    // A number too large for a double to hold exactly has already lost digits.
    if let Some(Accessor::Path(p)) = id_acc
        && let Some(Raw::Float(x)) = m.get(p).as_deref()
        && x.abs() >= 9_007_199_254_740_992.0
    {
        let x = *x;
        m.problem("id", format!("the id is a number too large to read exactly ({x:e})")).help =
            Some("write ids beyond 2^53 as strings (\"12345678901234567890\")".into());
    }
    if let Some(bad) = id.as_deref().and_then(|i| i.chars().find(|c| c.is_control())) {
        m.problem("id", format!("the id contains the control character U+{:04X}", u32::from(bad))).help =
            Some("ids are written one per line to kept_ids.txt and used in file names: remove newlines, tabs and other control characters".into());
    }
    id
}

/// An id holding `::` is refused unless it is the variant id of its own
/// canonical columns (`parent_id`, `variant`).
pub(super) fn check_id_separator(m: &mut Mapper<'_>, id: &str, variant_fields: &[Option<String>; 5]) {
    // `::` joins a variant's parent id and kind (`<parent_id>::<kind>`): a question's
    // own id holding it could name another question's variant.
    let variant_id = match variant_fields {
        [Some(parent), Some(kind), ..] => Some(format!("{parent}::{kind}")),
        _ => None,
    };
    if id.contains("::") && variant_id.as_deref() != Some(id) {
        m.problem("id", format!("the id \"{}\" contains \"::\"", short(id))).help = Some(
            "\"::\" is reserved: it joins a variant's parent id and kind (\"<id>::no_image\"); map another id, or a \
             template that writes another separator (\"{a}-{b}\")"
                .into(),
        );
    }
}
