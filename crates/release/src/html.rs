//! `report/index.html`: one self-contained page that opens in a browser with
//! no network: headline numbers, the card's stage sections (its Markdown
//! rendered to HTML), each stage's plots (the SVG files beside it), image
//! thumbnails and the removed-question table. No scripts, no external styles
//! or fonts.

use std::fmt::Write;

use super::{BuildOutputs, ConfigInfo, VariantInfo};
use crate::embed::image_dups::{ImageDups, ImageEntry, ImageMatch};
use crate::io::escape::html::{data, inline, text as escape};
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

/// Markdown of the card as HTML for the page. Raw HTML in the Markdown
/// becomes text (escaped on output), so no tag of the data or of a
/// publisher's prose is live; an image becomes its alt text (the page loads
/// nothing from outside) and a link keeps its target only when it is http(s),
/// mailto or an anchor. A code span naming a file of `report/` links to it.
fn markdown(src: &str, has: &dyn Fn(&str) -> bool) -> String {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut dropped_links = Vec::new();
    let events = Parser::new_ext(src, Options::ENABLE_TABLES).filter_map(|e| match e {
        Event::Html(t) | Event::InlineHtml(t) => Some(Event::Text(t)),
        Event::Code(ref t) if t.strip_prefix("report/").is_some_and(has) => {
            Some(Event::InlineHtml(link(&t["report/".len()..]).into()))
        }
        Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => None,
        Event::Start(Tag::Link { ref dest_url, .. }) => {
            let safe = ["http://", "https://", "mailto:", "#"].iter().any(|p| dest_url.starts_with(p));
            dropped_links.push(!safe);
            safe.then_some(e)
        }
        Event::End(TagEnd::Link) => (!dropped_links.pop().unwrap_or(false)).then_some(e),
        e => Some(e),
    });
    let mut out = String::with_capacity(src.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// A card section (`## heading` first) as HTML, with `extra` (the page's own
/// plots) right after its heading.
fn section(out: &mut String, md: &str, extra: &str, has: &dyn Fn(&str) -> bool) {
    let html = markdown(md, has);
    match html.find("</h2>\n") {
        Some(i) => {
            out.push_str(&html[..i + 6]);
            out.push_str(extra);
            out.push_str(&html[i + 6..]);
        }
        None => {
            out.push_str(extra);
            out.push_str(&html);
        }
    }
}

/// A plot of `report/` linked to itself, when it was written.
fn plot(file: &str, alt: &str, has: &dyn Fn(&str) -> bool) -> String {
    if has(file) {
        format!("<p><a href=\"{file}\"><img src=\"{file}\" alt=\"{alt}\"></a></p>\n")
    } else {
        String::new()
    }
}

/// The page, given the files already in the release's `report/` folder: the
/// headline figures and the configs, then the card's stage sections (rendered
/// from its Markdown) with the page's plots, thumbnails and removed-question
/// table.
pub fn render(
    p: &Pipeline,
    stages: &BuildOutputs<'_>,
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
    headline(&mut out, stages);

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
        let mut md = String::new();
        crate::card::diagnosis_section(&mut md, d, &p.diagnose, stages.embed.and_then(|e| e.tst_embed.as_ref()));
        let plots: String =
            ["blind_vs_chance.svg", "s_histogram.svg", "importances.svg"].iter().map(|f| plot(f, f, &has)).collect();
        section(&mut out, &md, &plots, &has);
        let _ = writeln!(
            out,
            "<p>Per-question scores: {}; settings and per-group figures: {}.</p>",
            link("scores.parquet"),
            link("diagnose.json")
        );
    }

    if let Some(e) = stages.embed {
        let mut md = String::new();
        crate::card::duplicates_section(&mut md, e);
        let svg = super::projection::PROJECTION_SVG;
        let mut projection = String::new();
        if md.is_empty() && has(svg) {
            projection.push_str("<h2>Question embeddings</h2>\n");
        }
        if has(svg) {
            let _ = writeln!(
                projection,
                "<p>Question embeddings (all-MiniLM-L6-v2) projected on their first two principal components.</p>\n\
                 <p><img src=\"{svg}\" alt=\"embedding projection\"></p>"
            );
        }
        section(&mut out, &md, &projection, &has);
    }
    if let Some(im) = stages.embed.and_then(|e| e.dups.as_ref()).and_then(|r| r.images.as_ref()) {
        image_dups(&mut out, im, &has);
    }

    if let Some(f) = stages.filter {
        let mut md = String::new();
        crate::card::filter_section(&mut md, f);
        section(&mut out, &md, "", &has);
    }

    if let (Some(pr), Some(counts)) = (stages.pruned, stages.pruning_counts()) {
        let mut md = String::new();
        crate::card::prune_section(&mut md, &stages.ingested.samples, pr, counts, stages.control);
        section(&mut out, &md, &plot("prune_curve.svg", "prune curve", &has), &has);
        let _ = writeln!(
            out,
            "<p>Settings, the per-iteration curve and the reasons: {}; removal order: {}; the kept ids: {}.</p>",
            link("prune.json"),
            link("removed.csv"),
            link("kept_ids.txt")
        );
        removed_table(&mut out, stages.ingested, pr);
    }

    if !variants.is_empty() {
        let mut md = String::new();
        crate::card::variants_section(&mut md, variants);
        section(&mut out, &md, "", &has);
    }

    if let Some(m) = stages.metrics {
        let mut md = String::new();
        crate::card::metrics_section(&mut md, &m.file, &m.by_set);
        crate::card::gap_section(&mut md, m, stages.removes());
        crate::card::audit_section(&mut md, m);
        out.push_str(&markdown(&md, &has));
    }
    out.push_str(
        "<p>The dataset card (<a href=\"../README.md\"><code>../README.md</code></a>) holds the full datasheet.</p>\n\
         </body></html>\n",
    );
    out
}

/// The headline figures, one box each: questions, blind accuracy, what
/// pruning removed and blind accuracy after it.
fn headline(out: &mut String, stages: &BuildOutputs<'_>) {
    out.push_str("<div class=\"cards\">");
    let n = stages.ingested.samples.len();
    card(out, "questions", &n.to_string(), &format!("{} rejected", stages.ingested.stats.rejected));
    if let Some(d) = stages.diagnosis {
        card(
            out,
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
        card(out, "removed", &counts.removed.to_string(), &format!("{} kept ({})", counts.kept, pr.method.as_str()));
        // The fresh-seed figure first: the selection-seed one is biased by the selection.
        if let Some(i) = &pr.after_independent {
            card(
                out,
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
                out,
                "blind accuracy after pruning",
                &pct(a.weighted),
                &format!("selection seed: 95% CI {}-{}; chance {}", pct(a.ci95.0), pct(a.ci95.1), pct(a.chance)),
            );
        }
        if let Some(c) = stages.control {
            if let Some(i) = &c.after_independent {
                card(out, "matched random removal", &pct(i.blind_accuracy), "its kept set, on fresh seeds");
            } else if let Some(a) = &c.after {
                card(out, "matched random removal", &pct(a.weighted), "its kept set, selection seed");
            }
        }
    }
    out.push_str("</div>\n");
}

/// The first removed questions with their text and answer (the card lists
/// counts only; all of them are in removed.csv).
fn removed_table(out: &mut String, ingested: &crate::ingest::Ingested, pr: &crate::prune::Pruned) {
    if pr.removed.is_empty() {
        return;
    }
    let by_id: std::collections::BTreeMap<&str, &crate::sample::Sample> =
        ingested.samples.iter().map(|s| (s.id.as_str(), s)).collect();
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
            data(&r.id),
            data(r.question_type.as_deref().unwrap_or("")),
            r.format.as_str(),
            r.iteration,
            r.score,
            data(s.map_or("", |s| s.question.as_str())),
            data(s.map_or("", |s| s.answer.as_str())),
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
        "<h3>Near-duplicate images</h3>\n<p>{} clusters of {} distinct images (both perceptual hashes within {} bits of 64; {} \
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::escape::markdown as md;

    const HOSTILE: [&str; 2] = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>"];

    fn assert_inert(html: &str) {
        assert!(!html.contains("<script") && !html.contains("<img"), "a live tag: {html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"), "{html}");
    }

    /// A question type or id with a tag in it shows as text in a table, as
    /// the card escapes it, and so does raw HTML in the Markdown itself.
    #[test]
    fn tags_in_the_cards_markdown_stay_text_on_the_page() {
        let mut src = String::from("## Blind answerability\n\n| question type | id |\n|---|---|\n");
        for h in HOSTILE {
            src.push_str(&format!("| {} | {} |\n", md::literal(h), md::code_cell(h)));
        }
        assert_inert(&markdown(&src, &|_| false));
        assert!(markdown(&src, &|_| false).contains("<td><code>&lt;img src=x onerror=alert(1)&gt;</code></td>"));
        // Unescaped: an HTML block and inline HTML.
        assert_inert(&markdown(&format!("{}\n\nsee {} here\n", HOSTILE[1], HOSTILE[0]), &|_| false));
        assert_inert(&markdown(&format!("{}\n\nsee {} here\n", HOSTILE[0], HOSTILE[1]), &|_| false));
    }

    /// A variant's kind, config and skip reason with tags in them (the card
    /// writes `expected` as given) become text in the page's variants table.
    #[test]
    fn a_card_section_with_tags_in_its_data_renders_inert() {
        let variants: Vec<VariantInfo> = HOSTILE
            .iter()
            .map(|h| VariantInfo {
                kind: h.to_string(),
                expected: h.to_string(),
                rows: 3,
                skipped: [(h.to_string(), 1)].into(),
                config: Some(h.to_string()),
            })
            .collect();
        let mut src = String::new();
        crate::card::variants_section(&mut src, &variants);
        let mut page = String::new();
        section(&mut page, &src, "<p>plot</p>\n", &|_| false);
        assert_inert(&page);
        assert!(page.starts_with("<h2>Stress-test variants</h2>\n<p>plot</p>\n"), "{page}");
        assert_eq!(page.matches("<tr>").count(), 3, "{page}");
    }

    /// Images load nothing and a script link loses its target; a file of
    /// `report/` named as code links to it, another file does not.
    #[test]
    fn images_and_script_links_lose_their_targets() {
        let has = |f: &str| f == "gap.json";
        let html = markdown("![x](http://evil/x.png) [a](javascript:alert(1)) [b](https://ok.example/)\n", &has);
        assert_eq!(html, "<p>x a <a href=\"https://ok.example/\">b</a></p>\n");
        let html = markdown("In `report/gap.json`, not `report/x.json` nor `gap.json`.", &has);
        assert_eq!(
            html,
            "<p>In <a href=\"gap.json\"><code>gap.json</code></a>, not <code>report/x.json</code> nor \
             <code>gap.json</code>.</p>\n"
        );
    }
}
