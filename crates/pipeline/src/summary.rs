//! The build summary a person reads after `blindspot build`: one block per
//! release with its counts, blind accuracy, pruning, embeddings and variants.

use crate::error::display_path;
use crate::ingest::Ingested;
use crate::outputs::EmbedStage;
use crate::release::Written;
use crate::spec::Pipeline;

impl super::Built {
    /// The summary block of this build.
    pub fn summary(&self, p: &Pipeline) -> String {
        let outcome = &self.outcome;
        let mut text = head(p, &self.ingested, self.diagnosis.as_ref(), &outcome.dir, &outcome.written);
        if let Some(e) = &self.embed {
            text.push_str(&embed_lines(e));
        }
        if let Some(pr) = &self.pruned {
            text.push_str(&format!("\n  {}", pr.summary()));
        }
        if !outcome.variants.is_empty() {
            let with_rows: Vec<String> =
                outcome.variants.iter().filter(|v| v.rows > 0).map(|v| format!("{} {}", v.kind, v.rows)).collect();
            let empty = outcome.variants.len() - with_rows.len();
            text.push_str(&format!("\n  variant configs: {}", with_rows.join(", ")));
            if empty > 0 {
                text.push_str(&format!(" ({empty} kinds without rows)"));
            }
        }
        text
    }
}

fn head(
    p: &Pipeline,
    ing: &Ingested,
    diagnosis: Option<&crate::diagnose::Diagnosis>,
    dir: &std::path::Path,
    written: &Written,
) -> String {
    let s = &ing.stats;
    let formats: Vec<String> = ing.format_counts().iter().map(|(f, n)| format!("{} {n}", f.as_str())).collect();
    let state = match written {
        Written::Created => "written",
        Written::UpToDate => "up to date",
    };
    let mut out = format!(
        "{} {}: {} samples ({} records read, {} filtered out, {} rejected) -> {} [{state}]\n  formats: {}",
        p.dataset.name,
        p.dataset.version,
        s.kept,
        s.records,
        s.filtered,
        s.rejected,
        display_path(dir),
        formats.join(", ")
    );
    if let Some(d) = diagnosis {
        out.push_str(&format!(
            "\n  blind accuracy ({}): {:.1}% (95% CI {:.1}-{:.1}), chance {:.1}%",
            match p.diagnose.method {
                crate::diagnose::Method::TstRf => "TsT-RF".to_string(),
                crate::diagnose::Method::TstEmbed => "TsT-Embed".to_string(),
                crate::diagnose::Method::Both =>
                    format!("TsT-RF; s(x) the {} with TsT-Embed", p.diagnose.combine.as_str()),
            },
            d.weighted * 100.0,
            d.ci95.0 * 100.0,
            d.ci95.1 * 100.0,
            d.chance * 100.0
        ));
        out.push_str(&format!(
            ", majority {:.1}%\n  verdict: {}",
            d.majority * 100.0,
            crate::diagnose::verdict::Verdict::of(d).sentence
        ));
    }
    if s.rejected > 0 {
        out.push_str(&format!("\n  rejected rows and reasons: {}/report/rejected.jsonl", display_path(dir)));
    }
    out
}

/// The embedding stage's lines of the build summary.
fn embed_lines(e: &EmbedStage) -> String {
    let mut out = String::new();
    if let Some(d) = &e.tst_embed {
        out.push_str(&format!(
            "\n  blind accuracy (TsT-Embed): {:.1}% (95% CI {:.1}-{:.1}) over {} questions",
            d.weighted * 100.0,
            d.ci95.0 * 100.0,
            d.ci95.1 * 100.0,
            d.n_samples
        ));
    }
    if let Some(r) = &e.dups {
        let j = r.summary();
        out.push_str(&format!("\n  duplicates: {} exact clusters", j.exact.clusters));
        if let Some(near) = &j.near {
            // As JSON writes it (1.0, not 1).
            let threshold = serde_json::Value::from(near.threshold);
            out.push_str(&format!(", {} near clusters at cosine >= {threshold}", near.clusters));
        }
        if r.n_train.is_some() {
            out.push_str(&format!(
                "; leakage: {} questions with an exact copy in the training split{}",
                j.train.as_ref().map_or(0, |t| t.samples_with_exact_copy),
                if let Some(n) = j.train.as_ref().and_then(|t| t.samples_with_near_copy) {
                    format!(", {n} with a near copy")
                } else {
                    String::new()
                }
            ));
        }
        if !e.dedup_removed.is_empty() {
            out.push_str(&format!("; {} dropped by prune-duplicates", e.dedup_removed.len()));
        }
    }
    out
}
