//! Records completed from a second file (`[[ingest.join]]`): VQA publishes its
//! questions and its annotations (answers, types) as two files that share
//! `question_id`. Each question record gets the fields of the one record of the
//! joined file with its key; a field both hold must agree.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::InputFile;
use crate::error::{Error, Location, Problem, Result, display_path};
use crate::plan::{IngestPlan, JoinPlan};
use crate::raw::{Raw, RawRecord};

/// A joined file, read whole and indexed by its key.
pub struct Joined {
    plan: JoinPlan,
    records: Vec<RawRecord>,
    by_key: HashMap<String, usize>,
    /// Whether a question matched each record, for the count of those none did.
    used: Vec<AtomicBool>,
    /// How the file was read when not in its plain shape (a wrapper object's member).
    notes: Vec<String>,
}

/// The key of a record: its `on` field as text (an integer and its digits alike).
fn key_of(r: &RawRecord, on: &str) -> Option<String> {
    r.value.get(on).and_then(Raw::scalar_text).map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
}

/// Every record of the joined file `input`, read in its plain shape (its records found
/// as a file's are, unless `records` names the member).
fn read_joined(
    plan: &IngestPlan,
    input: &crate::plan::Input,
    records: Option<String>,
    inputs: &mut Vec<InputFile>,
    notes: &mut Vec<String>,
) -> Result<Vec<RawRecord>> {
    let bare = IngestPlan { records, sheet: None, columns: None, header_said: false, ..plan.clone() };
    crate::source::read_records(&input.path, input.format, &bare, usize::MAX, inputs, notes)
}

/// Every joined file of `plan`, read and indexed; the files read are added to `inputs`.
/// A record without the key, or two with one key, is an error naming both.
pub fn load_all(plan: &IngestPlan, inputs: &mut Vec<InputFile>) -> Result<Vec<Joined>> {
    let mut out = Vec::new();
    for join in &plan.joins {
        let mut notes = Vec::new();
        let records = read_joined(plan, &join.input, join.records.clone(), inputs, &mut notes)?;
        let mut by_key: HashMap<String, usize> = HashMap::with_capacity(records.len());
        let mut problems = Vec::new();
        for (i, r) in records.iter().enumerate() {
            let Some(key) = key_of(r, &join.on) else {
                problems.push(
                    Problem::new(r.loc.clone(), format!("the joined record has no \"{}\" to join on", join.on))
                        .field(join.on.as_str())
                        .help("every record of a joined file needs the field [[ingest.join]] on names"),
                );
                continue;
            };
            if let Some(&first) = by_key.get(&key) {
                problems.push(
                    Problem::new(
                        r.loc.clone(),
                        format!(
                            "\"{}\" = \"{key}\" again (first at {}): a question would join two records",
                            join.on, records[first].loc
                        ),
                    )
                    .field(join.on.as_str())
                    .help("join on a field that names one record of the joined file"),
                );
                continue;
            }
            by_key.insert(key, i);
        }
        if !problems.is_empty() {
            return Err(Error::Invalid(problems));
        }
        let used = records.iter().map(|_| AtomicBool::new(false)).collect();
        out.push(Joined { plan: join.clone(), records, by_key, used, notes });
    }
    Ok(out)
}

/// `r` with the fields of its record in each joined file added. A question whose key
/// no joined record has, or a field both hold with different values, is a problem at
/// the question; a null or empty value on one side is the other's.
pub fn complete(joins: &[Joined], r: &RawRecord) -> std::result::Result<RawRecord, Problem> {
    let mut out = r.clone();
    for j in joins {
        let on = &j.plan.on;
        let file = display_path(&j.plan.input.path);
        let Some(key) = key_of(r, on) else {
            return Err(Problem::new(r.loc.clone(), format!("no \"{on}\" to join {file} on"))
                .field(on.as_str())
                .help("every question needs the field [[ingest.join]] on names"));
        };
        let Some(&at) = j.by_key.get(&key) else {
            return Err(Problem::new(r.loc.clone(), format!("no record of {file} has \"{on}\" = \"{key}\""))
                .field(on.as_str())
                .help("add its record to the joined file, or leave the question out with on-invalid = \"skip\""));
        };
        j.used[at].store(true, Ordering::Relaxed);
        let other = &j.records[at];
        let (Raw::Map(fields), Raw::Map(theirs)) = (&mut out.value, &other.value) else { continue };
        for (k, v) in theirs {
            let empty = |v: &Raw| matches!(v, Raw::Null) || matches!(v, Raw::Str(s) if s.trim().is_empty());
            match fields.iter_mut().find(|(name, _)| **name == **k) {
                None => fields.push((k.clone(), v.clone())),
                Some((_, mine)) if empty(mine) => *mine = v.clone(),
                Some((_, mine)) if empty(v) || mine.to_text() == v.to_text() => {}
                Some((_, mine)) => {
                    return Err(Problem::new(
                        r.loc.clone(),
                        format!(
                            "is \"{}\" here but \"{}\" in {} (joined on \"{on}\" = \"{key}\")",
                            crate::mapping::short(&mine.to_text()),
                            crate::mapping::short(&v.to_text()),
                            other.loc
                        ),
                    )
                    .field(k.to_string())
                    .help("the two files disagree: correct one, or rename the field in one of them"));
                }
            }
        }
    }
    Ok(out)
}

/// Per joined file, how it was read when not in its plain shape: the note, how many
/// records it holds, and the file.
pub fn read_notes(joins: &[Joined]) -> Vec<(String, usize, String)> {
    joins
        .iter()
        .flat_map(|j| {
            let file = display_path(&j.plan.input.path);
            j.notes.iter().map(move |n| {
                let n = n.replace("[ingest] records", "its [[ingest.join]] records");
                (format!("joined file {file}: {n}"), j.records.len(), file.clone())
            })
        })
        .collect()
}

/// Per joined file: how many of its records no question matched, and the first.
pub fn unmatched(joins: &[Joined]) -> Vec<(String, usize, Location)> {
    joins
        .iter()
        .filter_map(|j| {
            let left: Vec<&RawRecord> =
                j.records.iter().zip(&j.used).filter(|(_, u)| !u.load(Ordering::Relaxed)).map(|(r, _)| r).collect();
            let first = left.first()?.loc.clone();
            Some((display_path(&j.plan.input.path), left.len(), first))
        })
        .collect()
}

/// The field to join the file `join` to the questions of `plan` on, for `init`: one
/// that every record read of both files holds, that names one record of the joined
/// file each, and that matches the most questions read (at least half); with how many
/// of the `max` first questions it matches, and how many were read.
pub fn propose_on(plan: &IngestPlan, join: &crate::plan::Input, max: usize) -> Result<Option<(String, usize, usize)>> {
    let Some(input) = plan.inputs.first() else { return Ok(None) };
    let questions =
        crate::source::read_records(&input.path, input.format, plan, max, &mut Vec::new(), &mut Vec::new())?;
    let joined = read_joined(plan, join, None, &mut Vec::new(), &mut Vec::new())?;
    let Some(first) = questions.first() else { return Ok(None) };
    let mut best: Option<(String, usize)> = None;
    for name in first.field_names() {
        let keys: Option<Vec<String>> = joined.iter().map(|r| key_of(r, name)).collect();
        let Some(keys) = keys else { continue };
        let distinct: std::collections::HashSet<&String> = keys.iter().collect();
        if distinct.len() != keys.len() {
            continue;
        }
        let matched = questions.iter().filter(|q| key_of(q, name).is_some_and(|k| distinct.contains(&k))).count();
        if matched * 2 >= questions.len() && best.as_ref().is_none_or(|(_, m)| matched > *m) {
            best = Some((name.to_string(), matched));
        }
    }
    Ok(best.map(|(name, matched)| (name, matched, questions.len())))
}
