//! `report/index.html`: one self-contained page that opens in a browser with
//! no network: headline numbers, each stage's plots (the SVG files beside
//! it), the per-group blind accuracy table and the removed-question table.
//! No scripts, no external styles or fonts.

use std::fmt::Write;

use super::{ConfigInfo, Stages, VariantInfo};
use crate::embed::image_dups::{ImageDups, ImageEntry, ImageMatch};
use crate::io::escape::html::{inline, text as escape};
use crate::spec::Pipeline;

/// Rows of the removed-question table shown inline (all are in removed.csv).
const MAX_REMOVED_ROWS: usize = 200;

/// A relative link to a file of the release, its name in `<code>`.
fn link(href: &str) -> String {
    format!("<a href=\"{0}\"><code>{0}</code></a>", escape(href))
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:0.9em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}\
th{background:#f3f3f3}td.n{text-align:right}.big{font-size:1.6em;font-weight:600}.cards{display:flex;gap:1em;flex-wrap:wrap}\
.card{border:1px solid #ddd;border-radius:6px;padding:0.8em 1.2em}img{max-width:100%;border:1px solid #eee;margin:0.5em 0}\
code{background:#f6f6f6;padding:0 3px}";

fn card(out: &mut String, label: &str, value: &str, note: &str) {
    let _ = write!(
        out,
        "<div class=\"card\"><div>{}</div><div class=\"big\">{}</div><div>{}</div></div>",
        escape(label),
        escape(value),
        inline(note)
    );
}

/// The page, given the files already in the release's `report/` folder.
pub fn render(
    p: &Pipeline,
    stages: &Stages<'_>,
    configs: &[ConfigInfo],
    variants: &[VariantInfo],
    report_files: &[String],
) -> String {
    let ds = &p.dataset;
    let has = |f: &str| report_files.iter().any(|x| x == f);
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{} {} — blindspot report</title>\
         <style>{STYLE}</style></head><body>\n<h1>{} {}</h1>\n<p>Built by blindspot {} from <code>{}</code> (seed {}).</p>\n",
        escape(&ds.name),
        escape(&ds.version),
        escape(&ds.name),
        escape(&ds.version),
        env!("CARGO_PKG_VERSION"),
        escape(&p.path.file_name().map_or("?".into(), |f| f.to_string_lossy())),
        ds.seed
    );
    out.push_str("<div class=\"cards\">");
    let n = stages.ingested.samples.len();
    card(&mut out, "questions", &n.to_string(), &format!("{} rejected", stages.ingested.stats.rejected));
    if let Some(d) = stages.diagnosis {
        card(
            &mut out,
            "blind accuracy (TsT-RF)",
            &pct(d.weighted),
            &format!(
                "95% CI {}-{}; chance {}; majority {}",
                pct(d.ci95.0),
                pct(d.ci95.1),
                pct(d.chance),
                pct(d.majority)
            ),
        );
    }
    if let (Some(pr), Some(counts)) = (stages.pruned, stages.pruning_counts()) {
        card(
            &mut out,
            "removed",
            &counts.removed.to_string(),
            &format!("{} kept ({})", counts.kept, pr.method.as_str()),
        );
        // The fresh-seed figure first: the selection-seed one is biased by the selection.
        if let Some(i) = &pr.after_independent {
            card(
                &mut out,
                "blind accuracy after pruning",
                &pct(i.blind_accuracy),
                &format!(
                    "{}: 95% CI {}-{}; chance {}",
                    crate::prune::fresh_seeds(i.seeds.len()),
                    pct(i.ci95.0),
                    pct(i.ci95.1),
                    pct(i.chance)
                ),
            );
        } else if let Some(a) = &pr.after {
            card(
                &mut out,
                "blind accuracy after pruning",
                &pct(a.weighted),
                &format!("selection seed: 95% CI {}-{}; chance {}", pct(a.ci95.0), pct(a.ci95.1), pct(a.chance)),
            );
        }
        if let Some(c) = stages.control {
            if let Some(i) = &c.after_independent {
                card(&mut out, "matched random removal", &pct(i.blind_accuracy), "its kept set, on fresh seeds");
            } else if let Some(a) = &c.after {
                card(&mut out, "matched random removal", &pct(a.weighted), "its kept set, selection seed");
            }
        }
    }
    out.push_str("</div>\n");
    if let Some(d) = stages.diagnosis {
        let _ = writeln!(
            out,
            "<p><strong>Verdict:</strong> {}</p>",
            inline(&crate::diagnose::verdict::Verdict::of(d).sentence)
        );
        if let Some(o) = &d.outside {
            let f = &o.figures;
            let _ = writeln!(
                out,
                "<p>Outside scores from <code>{}</code>, on the forest's own folds: mean held-out probability of the \
                 gold {} against {} for the answer distribution alone (difference 95% CI {:+.1} to {:+.1} pts, {} \
                 questions). s(x) is the {} of the forest's and the outside score; blind accuracy and the verdict \
                 are the forest's.</p>",
                escape(&o.file),
                pct(f.mean_gold_probability),
                pct(f.answer_prior_mean_gold_probability),
                f.difference_ci95[0] * 100.0,
                f.difference_ci95[1] * 100.0,
                f.n,
                o.combine.as_str()
            );
        }
    }

    out.push_str("<h2>Configs</h2>\n<table><tr><th>config</th><th>rows</th><th>file</th><th>what</th></tr>\n");
    for c in configs {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td><a href=\"../{2}\"><code>{2}</code></a></td><td>{3}</td></tr>",
            escape(&c.name),
            c.rows,
            escape(&c.file),
            inline(&c.description)
        );
    }
    out.push_str("</table>\n");

    if let Some(d) = stages.diagnosis {
        let _ = writeln!(
            out,
            "<h2>Blind answerability ({})</h2>",
            match p.diagnose.method {
                crate::diagnose::Method::TstRf => "TsT-RF",
                crate::diagnose::Method::TstEmbed => "TsT-Embed",
                crate::diagnose::Method::Both => "TsT-RF and TsT-Embed",
            }
        );
        if let Some(e) = stages.embed.and_then(|e| e.tst_embed.as_ref()) {
            let _ = writeln!(
                out,
                "<p>TsT-Embed (a linear probe on sentence embeddings): {} blind over {} questions (95% CI {}-{}); \
                 s(x) is the {} of the two.</p>",
                pct(e.weighted),
                e.n_samples,
                pct(e.ci95.0),
                pct(e.ci95.1),
                p.diagnose.combine.as_str()
            );
        }
        for f in ["blind_vs_chance.svg", "s_histogram.svg", "importances.svg"] {
            if has(f) {
                let _ = writeln!(out, "<p><a href=\"{f}\"><img src=\"{f}\" alt=\"{f}\"></a></p>");
            }
        }
        out.push_str(
            "<table><tr><th>question type</th><th>format</th><th>questions</th><th>blind</th><th>chance</th>\
             <th>majority</th><th>null mean (95th pct)</th><th>p</th><th>top feature</th></tr>\n",
        );
        let lines = crate::blind_groups::group_lines(d);
        for g in &lines {
            let top = g.top_feature.map_or("–".to_string(), |f| {
                format!(
                    "<code title=\"{}\">{}</code>",
                    escape(&crate::ml::features::glossary::describe(f).replace('`', "")),
                    escape(f)
                )
            });
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{top}</td></tr>",
                escape(g.question_type),
                g.format,
                g.n,
                pct(g.blind),
                pct(g.chance),
                pct(g.majority),
                g.null.map_or("–".to_string(), |n| format!(
                    "{} ({})",
                    pct(n.test.mean),
                    n.test.q95.map_or("–".to_string(), pct)
                )),
                escape(&g.null.map_or("–".to_string(), |n| n.test.p_cell())),
            );
        }
        // One line per feature the importance plot names.
        let mut names: Vec<&str> = lines
            .iter()
            .filter(|g| g.above)
            .flat_map(|g| g.group.top_features.iter().filter(|f| f.1 > 0.0))
            .map(|f| f.0.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        out.push_str("</table>\n");
        if !names.is_empty() {
            out.push_str("<p>What the features in the importance plot measure:</p>\n<ul>\n");
            for n in names {
                let _ = writeln!(
                    out,
                    "<li><code>{}</code>: {}</li>",
                    escape(n),
                    inline(&crate::ml::features::glossary::describe(n))
                );
            }
            out.push_str("</ul>\n");
        }
        let _ = writeln!(
            out,
            "<p>Per-question scores: {}; settings and per-group figures: {}.</p>",
            link("scores.parquet"),
            link("diagnose.json")
        );
    }

    if let (Some(pr), Some(counts)) = (stages.pruned, stages.pruning_counts()) {
        let _ = writeln!(
            out,
            "<h2>Pruning ({})</h2>\n<p>Removed {} of {}; stopped because: {}.</p>\n<p>Settings, the \
             per-iteration curve and the reasons: {}; removal order: {}; the kept ids: {}.</p>",
            pr.method.as_str(),
            counts.removed,
            counts.input,
            inline(&pr.stop),
            link("prune.json"),
            link("removed.csv"),
            link("kept_ids.txt")
        );
        if has("prune_curve.svg") {
            out.push_str("<p><a href=\"prune_curve.svg\"><img src=\"prune_curve.svg\" alt=\"prune curve\"></a></p>\n");
        }
        let by_id: std::collections::BTreeMap<&str, &crate::sample::Sample> =
            stages.ingested.samples.iter().map(|s| (s.id.as_str(), s)).collect();
        out.push_str(
            "<table><tr><th>#</th><th>id</th><th>type</th><th>format</th><th>iteration</th><th>score</th>\
             <th>question</th><th>answer</th><th>reason</th></tr>\n",
        );
        for (i, r) in pr.removed.iter().take(MAX_REMOVED_ROWS).enumerate() {
            let s = by_id.get(r.id.as_str());
            let _ = writeln!(
                out,
                "<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{:.4}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                i + 1,
                escape(&r.id),
                escape(r.question_type.as_deref().unwrap_or("")),
                r.format.as_str(),
                r.iteration,
                r.score,
                escape(s.map_or("", |s| s.question.as_str())),
                escape(s.map_or("", |s| s.answer.as_str())),
                inline(&r.reason)
            );
        }
        out.push_str("</table>\n");
        if pr.removed.len() > MAX_REMOVED_ROWS {
            let _ = writeln!(
                out,
                "<p>First {MAX_REMOVED_ROWS} of {n} shown; all {n} are in {}.</p>",
                link("removed.csv"),
                n = pr.removed.len()
            );
        }
    }

    if let Some(m) = stages.metrics.filter(|m| !m.by_set.is_empty()) {
        out.push_str(
            "<h2>Models on the full, kept and removed sets</h2>\n<p>Accuracy on the original questions, every \
             prediction scored (n = questions answered of the set's questions); all conditions in metrics.json.</p>\n\
             <table><tr><th>model</th><th>full</th><th>kept</th><th>removed</th></tr>\n",
        );
        let mut models: Vec<&str> = m.by_set.iter().map(|r| r.model.as_str()).collect();
        models.dedup();
        for model in models {
            let cell = |set: &str| {
                m.by_set.iter().find(|r| r.model == model && r.set == set).map_or("–".to_string(), |r| {
                    if r.n == 0 {
                        format!("– (0 of {})", r.questions)
                    } else {
                        format!("{} ({}–{}; {} of {})", pct(r.accuracy), pct(r.ci95.0), pct(r.ci95.1), r.n, r.questions)
                    }
                })
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                escape(model),
                cell("full"),
                cell("kept"),
                cell("removed")
            );
        }
        out.push_str("</table>\n");
    }

    if let Some(e) = stages.embed {
        out.push_str("<h2>Embeddings, duplicates and leakage</h2>\n");
        let svg = super::projection::PROJECTION_SVG;
        if has(svg) {
            let _ = writeln!(
                out,
                "<p>Question embeddings (all-MiniLM-L6-v2) projected on their first two principal components.</p>\n<img src=\"{svg}\" alt=\"embedding projection\">"
            );
        }
        if let Some(r) = &e.dups {
            let j = r.summary();
            let _ = writeln!(
                out,
                "<p>{} exact-duplicate clusters, {} near-duplicate clusters{}; {} pairs in config <code>duplicates</code>, \
                 clusters in <a href=\"duplicates.json\"><code>duplicates.json</code></a>.{}</p>",
                j.exact.clusters,
                match &j.near {
                    Some(n) => n.clusters.to_string(),
                    None => "(not searched)".into(),
                },
                match r.n_train {
                    Some(n) => format!(
                        "; against {n} training questions, {} with an exact copy{}",
                        j.train.as_ref().map_or(0, |t| t.samples_with_exact_copy),
                        if r.threshold.is_some() {
                            format!(", {} with a near copy", crate::card::near_copies(&j))
                        } else {
                            String::new()
                        }
                    ),
                    None => String::new(),
                },
                r.pairs.len(),
                if e.dedup_removed.is_empty() {
                    String::new()
                } else {
                    format!(" {} dropped by prune-duplicates.", e.dedup_removed.len())
                }
            );
        }
    }
    if let Some(im) = stages.embed.and_then(|e| e.dups.as_ref()).and_then(|r| r.images.as_ref()) {
        image_dups(&mut out, im, &has);
    }
    if !variants.is_empty() {
        out.push_str(
            "<h2>Stress-test variants</h2>\n<table><tr><th>kind</th><th>expected</th><th>rows</th><th>config</th></tr>\n",
        );
        for v in variants {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                escape(&v.kind),
                inline(&v.expected),
                v.rows,
                escape(v.config.as_deref().unwrap_or("-"))
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str(
        "<p>The dataset card (<a href=\"../README.md\"><code>../README.md</code></a>) holds the full datasheet.</p>\n\
         </body></html>\n",
    );
    out
}

/// Clusters and training matches shown in the page (each with thumbnails).
const MAX_SHOWN_CLUSTERS: usize = 10;

/// The benchmark images the page shows: the members of the first clusters and
/// the first images near a training image or a listed hash, in that order.
pub fn shown_images(im: &ImageDups) -> Vec<&ImageEntry> {
    let mut shown: Vec<&ImageEntry> = im.clusters.iter().take(MAX_SHOWN_CLUSTERS).flatten().collect();
    shown.extend(im.matches().take(MAX_SHOWN_CLUSTERS).map(|m| &m.image));
    shown
}

/// The thumbnail's file in `report/`: by the image's sha256 (else its perceptual
/// hash), so one image shown twice is written once.
pub fn thumbnail_name(e: &ImageEntry) -> String {
    let key = e.sha256.as_deref().map_or(e.phash.as_str(), |s| &s[..s.len().min(16)]);
    format!("thumbnails/{key}.png")
}

/// One image: its thumbnail when written, its path and the questions showing it.
fn image_cell(e: &ImageEntry, has: &dyn Fn(&str) -> bool) -> String {
    let name = thumbnail_name(e);
    let path = escape(e.path.as_deref().unwrap_or("(no path)"));
    let thumb = if has(&name) { format!("<img src=\"{name}\" alt=\"{path}\"><br>") } else { String::new() };
    format!("{thumb}<code>{path}</code><br>{}", escape(&e.ids.join(", ")))
}

/// `Near-duplicate images`: the first clusters and training matches with thumbnails.
fn image_dups(out: &mut String, im: &ImageDups, has: &dyn Fn(&str) -> bool) {
    let _ = writeln!(
        out,
        "<h3>Near-duplicate images</h3>\n<p>{} clusters of {} distinct images (perceptual hash within {} bits of 64; {} \
         images hashed); all of them in <a href=\"duplicates.json\"><code>duplicates.json</code></a>.</p>",
        im.clusters.len(),
        im.images,
        im.threshold,
        im.hashed
    );
    if !im.clusters.is_empty() {
        out.push_str("<table><tr><th>cluster</th><th>images (questions)</th></tr>\n");
        for (k, c) in im.clusters.iter().take(MAX_SHOWN_CLUSTERS).enumerate() {
            let cells: Vec<String> = c.iter().map(|e| image_cell(e, has)).collect();
            let _ = writeln!(out, "<tr><td class=\"n\">{}</td><td>{}</td></tr>", k + 1, cells.join("</td><td>"));
        }
        out.push_str("</table>\n");
    }
    let matches: Vec<&ImageMatch> = im.matches().take(MAX_SHOWN_CLUSTERS).collect();
    if !matches.is_empty() {
        out.push_str("<table><tr><th>benchmark image (questions)</th><th>near</th><th>bits</th></tr>\n");
        for m in matches {
            let near = match (&m.train, &m.listed) {
                (Some(t), _) => format!("training image <code>{}</code>", escape(t.path.as_deref().unwrap_or("?"))),
                (None, Some((hash, line))) => format!("listed hash <code>{}</code> (line {line})", escape(hash)),
                (None, None) => "?".into(),
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{near}</td><td class=\"n\">{}</td></tr>",
                image_cell(&m.image, has),
                m.distance
            );
        }
        out.push_str("</table>\n");
    }
}
