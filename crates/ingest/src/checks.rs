//! Checks over the whole input, once every record is mapped: a filter or a
//! mapped source field that no record has, and one reading of the gold
//! answers that fits every row (`answer-kind = "auto"`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::chunk::SourceSeen;
use crate::error::{Error, Location, Problem, Result, did_you_mean};
use crate::mapping;
use crate::plan::IngestPlan;
use crate::run::Run;
use crate::source::first_record_fields;

/// A filter on a field that no record has is a typo, not an empty result.
pub(crate) fn check_filter_fields(plan: &IngestPlan, seen: &[bool]) -> Result<()> {
    let mut problems = Vec::new();
    for (f, _) in plan.filters.iter().zip(seen).filter(|(_, s)| !**s) {
        let names = first_record_fields(plan);
        let mut p = Problem::new(
            Location::file(plan.inputs.first().map_or(Path::new("?"), |i| i.path.as_path())),
            format!("the filter field \"{}\" is in no record", f.field),
        )
        .field("ingest.filter");
        p = match did_you_mean(&f.field, names.iter().map(String::as_str)) {
            Some(m) => p.help(format!("did you mean \"{m}\"?")),
            None => p.help(format!("fields are: {}", names.join(", "))),
        };
        problems.push(p);
    }
    if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
}

/// A mapped optional field that no record has is a typo: without this check the
/// questions would silently lose their options, type, context or meta. One that
/// only some records lack is a counted note naming the first of them.
pub(crate) fn check_mapped_sources(
    plan: &IngestPlan,
    sources: &[(&'static str, String)],
    seen: &[SourceSeen],
    notes: &mut BTreeMap<std::borrow::Cow<'static, str>, (usize, String)>,
) -> Result<()> {
    let mut problems = Vec::new();
    let mut names: Option<Vec<String>> = None;
    for ((key, field), s) in sources.iter().zip(seen) {
        if !s.any {
            let names = names.get_or_insert_with(|| first_record_fields(plan));
            let p = Problem::new(
                Location::file(plan.inputs.first().map_or(Path::new("?"), |i| i.path.as_path())),
                format!("the source field \"{field}\" is in no record"),
            )
            .field(format!("ingest.fields.{key}"));
            let help = match did_you_mean(field, names.iter().map(String::as_str)) {
                Some(m) => format!("did you mean \"{m}\"? (set [ingest.fields] {key})"),
                None => format!("the first record's fields are: {}; fix [ingest.fields] {key}", names.join(", ")),
            };
            problems.push(p.help(help));
        } else if let (n @ 1.., Some(first)) = (s.absent, &s.first_absent) {
            let what = format!("the mapped source field \"{field}\" ([ingest.fields] {key}) is absent");
            let entry = notes.entry(std::borrow::Cow::Owned(what)).or_insert((0, first.to_string()));
            entry.0 += n;
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
}

/// `answer-kind = "auto"` decides once for the whole dataset: some reading of
/// the gold (option text, letter, index) must fit every row. Rows that each
/// read one way only, and not the same way, are an error naming the setting.
pub(crate) fn check_one_reading(run: &Run<'_>) -> Result<()> {
    if run.reading_rows.is_empty() || run.readings != 0 {
        return Ok(());
    }
    let rows: Vec<String> = run
        .reading_rows
        .iter()
        .map(|(mask, loc)| format!("{loc} reads only as {}", mapping::reading_names(*mask)))
        .collect();
    let first = run.reading_rows.values().min().cloned().unwrap_or_else(|| Location::file("?"));
    Err(Error::one(
        Problem::new(first, format!("no one reading of the gold answers fits every row: {}", rows.join("; ")))
            .field("answer-kind")
            .help(
                "set [ingest.fields] answer-kind = \"text\", \"letter\" or \"index\" to the way the source writes its \
             answers, and fix the rows written another way",
            ),
    ))
}
