//! `report/index.html`: one self-contained page that opens in a browser with
//! no network: headline numbers, the card's stage sections (its Markdown
//! rendered to HTML), each stage's plots (the SVG files beside it), image
//! thumbnails and the removed-question table. No scripts, no external styles
//! or fonts. The page is `templates/report.html`, filled from typed views; the
//! card's sections are rendered from their Markdown here and placed in it.

use std::sync::LazyLock;

use minijinja::Environment;
use minijinja::value::Value;
use serde::Serialize;

use super::{BuildOutputs, ConfigInfo, VariantInfo};
use crate::embed::image_dups::{ImageDups, ImageEntry};
use crate::io::escape::html::{data, inline, text as escape};
use crate::spec::Pipeline;

/// Rows of the removed-question table shown inline (all are in removed.csv).
const MAX_REMOVED_ROWS: usize = 200;

/// A relative link to a file of the release, its name in `<code>`.
fn link(href: &str) -> String {
    format!("<a href=\"{0}\"><code>{0}</code></a>", escape(href))
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:0.9em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}\
th{background:#f3f3f3}td.n{text-align:right}.big{font-size:1.6em;font-weight:600}.cards{display:flex;gap:1em;flex-wrap:wrap}\
.card{border:1px solid #ddd;border-radius:6px;padding:0.8em 1.2em}img{max-width:100%;border:1px solid #eee;margin:0.5em 0}\
code{background:#f6f6f6;padding:0 3px}";

/// The page's template (`templates/report.html`), HTML-escaped by
/// construction: every value it prints is HTML text unless a filter says
/// otherwise: `inline` (shared prose, backticks as `<code>`), `data` (a data
/// string, shortened), `link` (a file of `report/`), `pct`, `fixed4`, and the
/// built-in `safe` for HTML rendered here (the card's sections).
static ENV: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = crate::card::template::environment("html", escape);
    env.add_filter("inline", |s: &str| Value::from_safe_string(inline(s)));
    env.add_filter("data", |s: &str| Value::from_safe_string(data(s)));
    env.add_filter("link", |s: &str| Value::from_safe_string(link(s)));
    env.add_filter("pct", |v: f64| Value::from_safe_string(format!("{:.1}%", v * 100.0)));
    env.add_filter("fixed4", |v: f64| Value::from_safe_string(format!("{v:.4}")));
    env.add_template("report.html", include_str!("../templates/report.html"))
        .unwrap_or_else(|e| panic!("template report.html does not parse: {e:#}"));
    env
});

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

/// A card section as the page shows it: its heading, the page's own plots
/// (and the embedding projection) right after it, then the rest.
#[derive(Serialize, Default)]
struct Section {
    head: String,
    plots: Vec<Plot>,
    projection: Option<&'static str>,
    /// The projection heads a section of its own (no duplicates section).
    projection_heading: bool,
    body: String,
}

/// A plot of `report/`, linked to itself.
#[derive(Serialize)]
struct Plot {
    file: &'static str,
    alt: &'static str,
}

impl Section {
    /// The card section `md` (`## heading` first) as HTML, split after its heading.
    fn of(md: &str, has: &dyn Fn(&str) -> bool) -> Section {
        let html = markdown(md, has);
        match html.find("</h2>\n") {
            Some(i) => {
                Section { head: html[..i + 6].to_string(), body: html[i + 6..].to_string(), ..Default::default() }
            }
            None => Section { body: html, ..Default::default() },
        }
    }

    /// With the plots of `files` (file, alt text) that were written.
    fn with_plots(mut self, files: &[(&'static str, &'static str)], has: &dyn Fn(&str) -> bool) -> Section {
        self.plots = files.iter().filter(|(f, _)| has(f)).map(|&(file, alt)| Plot { file, alt }).collect();
        self
    }
}

/// What `templates/report.html` shows.
#[derive(Serialize)]
struct PageView<'a> {
    name: &'a str,
    version: &'a str,
    tool_version: &'static str,
    pipeline: String,
    seed: u64,
    style: &'static str,
    questions: usize,
    rejected: usize,
    blind: Option<Figure>,
    pruned: Option<PrunedCards>,
    configs: Vec<ConfigRow<'a>>,
    diagnosis: Option<Section>,
    embed: Option<Section>,
    images: Option<ImagesView<'a>>,
    filter: Option<Section>,
    prune: Option<PruneView<'a>>,
    variants: Option<Section>,
    /// The model sections, as HTML.
    metrics: Option<String>,
}

/// A blind accuracy with its 95% CI, chance and majority baseline.
#[derive(Serialize)]
struct Figure {
    value: f64,
    low: f64,
    high: f64,
    chance: f64,
    majority: f64,
}

/// The headline boxes of pruning.
#[derive(Serialize)]
struct PrunedCards {
    removed: usize,
    kept: usize,
    method: &'static str,
    /// Blind accuracy after pruning, fresh seeds first: the selection-seed
    /// figure is biased by the selection.
    after: Option<After>,
    control: Option<Control>,
}

#[derive(Serialize)]
struct After {
    /// "3 fresh seeds" or "selection seed".
    seeds: String,
    value: f64,
    low: f64,
    high: f64,
    chance: f64,
}

/// The matched random removal's blind accuracy on its kept set.
#[derive(Serialize)]
struct Control {
    value: f64,
    note: &'static str,
}

#[derive(Serialize)]
struct ConfigRow<'a> {
    name: &'a str,
    rows: usize,
    file: &'a str,
    description: &'a str,
}

/// Near-duplicate images: the first clusters and training matches, with thumbnails.
#[derive(Serialize)]
struct ImagesView<'a> {
    count: usize,
    distinct: usize,
    threshold: u32,
    hashed: usize,
    shown: Vec<Vec<ImageCell<'a>>>,
    matches: Vec<MatchRow<'a>>,
}

/// One image: its thumbnail when written, its path and the questions showing it.
#[derive(Serialize)]
struct ImageCell<'a> {
    thumbnail: Option<String>,
    path: &'a str,
    ids: String,
}

impl<'a> ImageCell<'a> {
    fn of(e: &'a ImageEntry, has: &dyn Fn(&str) -> bool) -> ImageCell<'a> {
        let name = thumbnail_name(e);
        ImageCell {
            thumbnail: has(&name).then_some(name),
            path: e.path.as_deref().unwrap_or("(no path)"),
            ids: e.ids.join(", "),
        }
    }
}

/// A benchmark image near a training image (`train`) or a listed hash.
#[derive(Serialize)]
struct MatchRow<'a> {
    image: ImageCell<'a>,
    train: Option<&'a str>,
    listed: Option<&'a str>,
    line: usize,
    distance: u32,
}

/// The pruning section with the first removed questions (the card lists
/// counts only; all of them are in removed.csv).
#[derive(Serialize)]
struct PruneView<'a> {
    section: Section,
    removed: Vec<RemovedRow<'a>>,
    total: usize,
}

#[derive(Serialize)]
struct RemovedRow<'a> {
    id: &'a str,
    question_type: &'a str,
    format: &'static str,
    iteration: usize,
    score: f64,
    question: &'a str,
    answer: &'a str,
    reason: &'a str,
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
    let has = |f: &str| report_files.iter().any(|x| x == f);
    let card_md = |write: &dyn Fn(&mut String)| {
        let mut md = String::new();
        write(&mut md);
        md
    };
    let diagnosis = stages.diagnosis.map(|d| {
        let md = card_md(&|md| {
            crate::card::diagnosis_section(md, d, &p.diagnose, stages.embed.and_then(|e| e.tst_embed.as_ref()))
        });
        let plots = [
            ("blind_vs_chance.svg", "blind_vs_chance.svg"),
            ("s_histogram.svg", "s_histogram.svg"),
            ("importances.svg", "importances.svg"),
        ];
        Section::of(&md, &has).with_plots(&plots, &has)
    });
    let embed = stages.embed.map(|e| {
        let md = card_md(&|md| crate::card::duplicates_section(md, e));
        let svg = super::projection::PROJECTION_SVG;
        Section { projection: has(svg).then_some(svg), projection_heading: md.is_empty(), ..Section::of(&md, &has) }
    });
    let prune = stages.pruned.zip(stages.pruning_counts()).map(|(pr, counts)| {
        let md = card_md(&|md| crate::card::prune_section(md, &stages.ingested.samples, pr, counts, stages.control));
        PruneView {
            section: Section::of(&md, &has).with_plots(&[("prune_curve.svg", "prune curve")], &has),
            removed: removed_rows(stages.ingested, pr),
            total: pr.removed.len(),
        }
    });
    let view = PageView {
        name: &p.dataset.name,
        version: &p.dataset.version,
        tool_version: env!("CARGO_PKG_VERSION"),
        pipeline: p.path.file_name().map_or("?".into(), |f| f.to_string_lossy().to_string()),
        seed: p.dataset.seed,
        style: STYLE,
        questions: stages.ingested.samples.len(),
        rejected: stages.ingested.stats.rejected,
        blind: stages.diagnosis.map(|d| Figure {
            value: d.weighted,
            low: d.ci95.0,
            high: d.ci95.1,
            chance: d.chance,
            majority: d.majority,
        }),
        pruned: stages.pruned.zip(stages.pruning_counts()).map(|(pr, counts)| pruned_cards(pr, counts, stages.control)),
        configs: configs
            .iter()
            .map(|c| ConfigRow { name: &c.name, rows: c.rows, file: &c.file, description: &c.description })
            .collect(),
        diagnosis,
        embed,
        images: stages
            .embed
            .and_then(|e| e.dups.as_ref())
            .and_then(|r| r.images.as_ref())
            .map(|im| images_view(im, &has)),
        filter: stages.filter.map(|f| Section::of(&card_md(&|md| crate::card::filter_section(md, f)), &has)),
        prune,
        variants: (!variants.is_empty())
            .then(|| Section::of(&card_md(&|md| crate::card::variants_section(md, variants)), &has)),
        metrics: stages.metrics.map(|m| {
            let md = card_md(&|md| {
                crate::card::metrics_section(md, &m.file, &m.by_set);
                crate::card::gap_section(md, m, stages.removes());
                crate::card::audit_section(md, m);
            });
            markdown(&md, &has)
        }),
    };
    ENV.get_template("report.html")
        .and_then(|t| t.render(Value::from(minijinja::value::Serde(&view))))
        .unwrap_or_else(|e| panic!("template report.html: {e:#}"))
}

/// The headline boxes of pruning: what it removed, blind accuracy after it
/// and after the matched random removal.
fn pruned_cards(
    pr: &crate::prune::Pruned,
    counts: crate::PruningCounts,
    control: Option<&crate::prune::Pruned>,
) -> PrunedCards {
    let after = if let Some(i) = &pr.after_independent {
        Some(After {
            seeds: crate::prune::fresh_seeds(i.seeds.len()),
            value: i.blind_accuracy,
            low: i.ci95.0,
            high: i.ci95.1,
            chance: i.chance,
        })
    } else {
        pr.after.as_ref().map(|a| After {
            seeds: "selection seed".into(),
            value: a.weighted,
            low: a.ci95.0,
            high: a.ci95.1,
            chance: a.chance,
        })
    };
    let control = control.and_then(|c| match (&c.after_independent, &c.after) {
        (Some(i), _) => Some(Control { value: i.blind_accuracy, note: "its kept set, on fresh seeds" }),
        (None, Some(a)) => Some(Control { value: a.weighted, note: "its kept set, selection seed" }),
        (None, None) => None,
    });
    PrunedCards { removed: counts.removed, kept: counts.kept, method: pr.method.as_str(), after, control }
}

/// The first removed questions with their text and answer.
fn removed_rows<'a>(ingested: &'a crate::ingest::Ingested, pr: &'a crate::prune::Pruned) -> Vec<RemovedRow<'a>> {
    let by_id: std::collections::BTreeMap<&str, &crate::sample::Sample> =
        ingested.samples.iter().map(|s| (s.id.as_str(), s)).collect();
    pr.removed
        .iter()
        .take(MAX_REMOVED_ROWS)
        .map(|r| {
            let s = by_id.get(r.id.as_str());
            RemovedRow {
                id: &r.id,
                question_type: r.question_type.as_deref().unwrap_or(""),
                format: r.format.as_str(),
                iteration: r.iteration,
                score: r.score,
                question: s.map_or("", |s| s.question.as_str()),
                answer: s.map_or("", |s| s.answer.as_str()),
                reason: &r.reason,
            }
        })
        .collect()
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

/// The near-duplicate images the page shows: the first clusters and training matches.
fn images_view<'a>(im: &'a ImageDups, has: &dyn Fn(&str) -> bool) -> ImagesView<'a> {
    ImagesView {
        count: im.clusters.len(),
        distinct: im.images,
        threshold: im.threshold,
        hashed: im.hashed,
        shown: im
            .clusters
            .iter()
            .take(MAX_SHOWN_CLUSTERS)
            .map(|c| c.iter().map(|e| ImageCell::of(e, has)).collect())
            .collect(),
        matches: im
            .matches()
            .take(MAX_SHOWN_CLUSTERS)
            .map(|m| MatchRow {
                image: ImageCell::of(&m.image, has),
                train: m.train.as_ref().map(|t| t.path.as_deref().unwrap_or("?")),
                listed: m.listed.as_ref().map(|(hash, _)| hash.as_str()),
                line: m.listed.as_ref().map_or(0, |(_, line)| *line),
                distance: m.distance,
            })
            .collect(),
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
        let s = Section::of(&src, &|_| false);
        let page = format!("{}<p>plot</p>\n{}", s.head, s.body);
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
