//! The diff's reports: the human-readable text and the JSON.

use super::{Delta, GroupDelta, Ids, Presence, ReleaseDiff, Side};
use crate::error::{Error, Result};

fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{:.1}%", v * 100.0))
}

fn pts(d: &Delta) -> String {
    match d.delta {
        Some(x) => format!("{:+.1} pts", x * 100.0),
        None => "n/a".to_string(),
    }
}

fn id_list(ids: &Ids) -> String {
    let mut s = ids.ids.join(", ");
    if ids.count > ids.ids.len() {
        s.push_str(&format!(", ... ({} more)", ids.count - ids.ids.len()));
    }
    s
}

fn label(s: &Side) -> String {
    match (&s.name, &s.version) {
        (Some(n), Some(v)) => format!("{} ({n} {v})", s.path),
        _ => s.path.clone(),
    }
}

/// The human-readable report, at most `max_ids` ids per list (0 = all).
pub fn render_text(d: &ReleaseDiff, max_ids: usize) -> String {
    let d = d.truncated(max_ids);
    let mut out = format!("a: {}\nb: {}\n", label(&d.a), label(&d.b));
    for s in &d.splits {
        let name = format!("config {} split {}", s.config, s.split);
        match s.presence {
            Presence::OnlyA => {
                out.push_str(&format!("\n{name}: only in a ({} rows)\n", s.rows_a.unwrap_or(0)));
                continue;
            }
            Presence::OnlyB => {
                out.push_str(&format!("\n{name}: only in b ({} rows)\n", s.rows_b.unwrap_or(0)));
                continue;
            }
            Presence::Both => {}
        }
        let (ra, rb) = (s.rows_a.unwrap_or(0), s.rows_b.unwrap_or(0));
        out.push_str(&format!("\n{name}: {ra} -> {rb} rows ({:+})\n", rb as i64 - ra as i64));
        if !s.columns_only_in_a.is_empty() {
            out.push_str(&format!("  columns only in a: {}\n", s.columns_only_in_a.join(", ")));
        }
        if !s.columns_only_in_b.is_empty() {
            out.push_str(&format!("  columns only in b: {}\n", s.columns_only_in_b.join(", ")));
        }
        out.push_str(&format!("  added: {}", s.added.count));
        if s.added.count > 0 {
            out.push_str(&format!(": {}", id_list(&s.added)));
        }
        out.push_str(&format!("\n  removed: {}", s.removed.count));
        if s.removed.count > 0 {
            out.push_str(&format!(": {}", id_list(&s.removed)));
        }
        if let Some(src) = s.from_source
            && s.added.count + s.removed.count > 0
        {
            out.push_str(&format!(
                "\n  of these, edits of the source (in `full` too): {} added, {} removed; the rest ({} added, {} \
                 removed) were kept or removed by pruning and filters",
                src.added,
                src.removed,
                s.added.count - src.added,
                s.removed.count - src.removed
            ));
        }
        out.push_str(&format!("\n  changed: {}", s.changed.count));
        if s.changed.count > 0 {
            let ids = Ids { count: s.changed.count, ids: s.changed.ids.clone() };
            out.push_str(&format!(": {}", id_list(&ids)));
            let cols: Vec<String> = s.changed.columns.iter().map(|(c, n)| format!("{c} {n}")).collect();
            out.push_str(&format!("\n    columns: {}", cols.join(", ")));
        }
        out.push_str(&format!("\n  unchanged: {}\n", s.unchanged));
    }
    match &d.diagnose {
        Some(g) => {
            out.push_str("\nblind accuracy (TsT-RF, report/diagnose.json):\n");
            for (name, v) in [("weighted", &g.weighted), ("macro", &g.macro_), ("chance", &g.chance)] {
                out.push_str(&format!("  {name:<9}{} -> {} ({})\n", pct(v.a), pct(v.b), pts(v)));
            }
            let changed: Vec<&GroupDelta> =
                g.groups.iter().filter(|x| x.blind_accuracy.delta != Some(0.0) || x.n_a != x.n_b).collect();
            if !changed.is_empty() {
                out.push_str("  per group (question type / format: questions a -> b, blind a -> b):\n");
                for x in changed {
                    let n = |v: Option<u64>| v.map_or("-".into(), |v| v.to_string());
                    out.push_str(&format!(
                        "    {} / {}: {} -> {}, {} -> {} ({})\n",
                        x.question_type.as_deref().unwrap_or("(none)"),
                        x.format.as_deref().unwrap_or("?"),
                        n(x.n_a),
                        n(x.n_b),
                        pct(x.blind_accuracy.a),
                        pct(x.blind_accuracy.b),
                        pts(&x.blind_accuracy)
                    ));
                }
            }
        }
        None => {
            let which = match (d.a.has_diagnose, d.b.has_diagnose) {
                (false, false) => "neither release has",
                (true, false) => "b has no",
                (false, true) => "a has no",
                (true, true) => "",
            };
            out.push_str(&format!("\nblind accuracy: not compared ({which} report/diagnose.json)\n"));
        }
    }
    if d.is_empty() {
        out.push_str("\nno differences\n");
    }
    out
}

/// The machine-readable report, at most `max_ids` ids per list (0 = all).
pub fn render_json(d: &ReleaseDiff, max_ids: usize) -> Result<String> {
    let mut text = serde_json::to_string_pretty(&d.truncated(max_ids)).map_err(|e| Error::Bug(e.to_string()))?;
    text.push('\n');
    Ok(text)
}
