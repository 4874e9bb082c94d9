//! Hostile input: nothing a data file says runs, leaves its place in a
//! generated file, escapes its folder or exhausts memory.
//!
//! The fixture `tests/fixtures/hostile/` puts hostile strings in every field a
//! generated file shows (ids and question types that are spreadsheet
//! formulas, HTML tags, backticks and pipes, image file names that are Python
//! code, a benchmark name that is a YAML key, model names, a repository URL
//! that is a shell command). Its release and both harness exports are read
//! back here, each file in its own syntax, with readers written from the
//! syntaxes' rules (`tests/common/syntax.rs`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::OnceLock;

use common::syntax::{Tok, html_tags, python_list, shell_split, table_cells, unclosed_code_span};
use common::{blindspot, root};

/// The hostile fixture, built once: `(work folder, release, VLMEvalKit export, lmms-eval export)`.
struct Built {
    _work: tempfile::TempDir,
    release: PathBuf,
    vlmevalkit: PathBuf,
    lmms_eval: PathBuf,
}

const REPOSITORY: &str = "https://example.org/r;touch$IFS'PWNED';#";

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let work = tempfile::tempdir().unwrap();
        common::copy_dir(&root().join("tests/fixtures/hostile"), work.path());
        let run = |args: &[&str]| {
            let out =
                blindspot().current_dir(work.path()).env("BLINDSPOT_CACHE_DIR", "cache").args(args).output().unwrap();
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        run(&["build", "hostile.toml", "--out-dir", "rel"]);
        let release = work.path().join("rel/hostile/1.0.0");
        run(&["export", "rel/hostile/1.0.0", "--to", "vlmevalkit", "-o", "vlm"]);
        run(&["export", "rel/hostile/1.0.0", "--to", "lmms-eval", "-o", "lmms", "--allow-missing-images"]);
        Built { release, vlmevalkit: work.path().join("vlm"), lmms_eval: work.path().join("lmms"), _work: work }
    })
}

/// The card's YAML front matter and its Markdown body.
fn card() -> (String, String) {
    let text = std::fs::read_to_string(built().release.join("README.md")).unwrap();
    let rest = text.strip_prefix("---\n").expect("front matter");
    let end = rest.find("\n---\n").expect("end of front matter");
    (rest[..end].to_string(), rest[end + 5..].to_string())
}

/// `line` without its code spans (their text is shown as code, not read).
fn without_code_spans(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            out.push_str(&line[i..(i + 2).min(b.len())]);
            i += 2;
            continue;
        }
        if b[i] == b'`' {
            let run = b[i..].iter().take_while(|&&c| c == b'`').count();
            let close = "`".repeat(run);
            let mut j = i + run;
            let mut end = None;
            while let Some(k) = line[j..].find(&close) {
                let at = j + k;
                let len = b[at..].iter().take_while(|&&c| c == b'`').count();
                if len == run {
                    end = Some(at + run);
                    break;
                }
                j = at + len;
            }
            match end {
                Some(e) => {
                    out.push_str("CODE");
                    i = e;
                    continue;
                }
                None => {
                    out.push_str(&close);
                    i += run;
                    continue;
                }
            }
        }
        let c = line[i..].chars().next().unwrap();
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Markdown: every code span closes, every table row has its header's cells,
/// no HTML tag but the anchors the datasheet writes, no link that runs code.
#[test]
fn the_card_shows_every_data_string_as_text() {
    let (_, body) = card();
    let mut fence: Option<usize> = None;
    let mut header_cells: Option<usize> = None;
    let mut problems = Vec::new();
    for (n, line) in body.lines().enumerate() {
        let ticks = line.chars().take_while(|&c| c == '`').count();
        match fence {
            Some(f) if ticks >= f && line.trim_start_matches('`').trim().is_empty() => {
                fence = None;
                continue;
            }
            Some(_) => continue,
            None if ticks >= 3 => {
                fence = Some(ticks);
                continue;
            }
            None => {}
        }
        if let Some(at) = unclosed_code_span(line) {
            problems.push(format!("line {n}: a code span opened at byte {at} never closes: {line}"));
        }
        let text = without_code_spans(line);
        let tags: Vec<String> = html_tags(&text).into_iter().filter(|t| t != "a").collect();
        if !tags.is_empty() {
            problems.push(format!("line {n}: HTML tags {tags:?}: {line}"));
        }
        let lower = text.to_ascii_lowercase();
        if lower.match_indices("](javascript:").any(|(i, _)| !lower[..i].ends_with('\\')) {
            problems.push(format!("line {n}: a javascript: link: {line}"));
        }
        if line.starts_with('|') {
            let cells = table_cells(line);
            match header_cells {
                None => header_cells = Some(cells),
                Some(h) if h != cells => {
                    problems.push(format!("line {n}: {cells} cells under a {h}-cell header: {line}"))
                }
                Some(_) => {}
            }
        } else {
            header_cells = None;
        }
    }
    assert!(fence.is_none(), "a fenced block never closes");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Data strings in the prose of the card and the page: a model named as a
/// Markdown image is shown as written in the filter's sentence, and a
/// right-to-left override (U+202E) in a model name, an id and a question
/// type is shown as `U+202E` in the card, the page and the plots.
#[test]
fn markdown_and_invisible_characters_in_data_are_shown_as_text() {
    let work = common::fixture_workspace();
    let data = std::fs::read_to_string(work.path().join("canonical.jsonl")).unwrap();
    let data = data.replace("\"c1\"", "\"c1\\u202ex\"").replace("\"color\"", "\"col\\u202eor\"");
    std::fs::write(work.path().join("canonical.jsonl"), data).unwrap();
    let image = "![x](http://evil.example/t.png)";
    let preds = [
        format!(r#"{{"model": "{image}", "id": "c1\u202ex::caption", "response": "C"}}"#),
        r#"{"model": "m\u202e2", "id": "c3::no_image", "response": "sleeping"}"#.to_string(),
    ];
    std::fs::write(work.path().join("preds.jsonl"), preds.join("\n") + "\n").unwrap();
    let toml = std::fs::read_to_string(work.path().join("canonical.toml")).unwrap();
    std::fs::write(
        work.path().join("canonical.toml"),
        format!("{toml}\n[filter]\npreset = \"emma\"\n\n[predictions]\nfiles = [{{ path = \"preds.jsonl\" }}]\n"),
    )
    .unwrap();
    let out =
        blindspot().current_dir(work.path()).args(["build", "canonical.toml", "--out-dir", "rel"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rel = work.path().join("rel/canonical/1.0.0");
    let card = std::fs::read_to_string(rel.join("README.md")).unwrap();
    assert!(
        card.contains(
            "2 of 4 questions removed before pruning: removed when any of the 2 models \
             (!\\[x\\](http://evil.example/t.png), mU+202E2) answer it"
        ),
        "{card}"
    );
    assert!(!card.contains(image), "the model name reached the card as Markdown:\n{card}");
    assert!(card.contains("colU+202Eor"), "{card}");
    let page = std::fs::read_to_string(rel.join("report/index.html")).unwrap();
    assert!(page.contains("(![x](http://evil.example/t.png), mU+202E2)"), "{page}");
    assert!(!page.contains("src=\"http://evil"), "{page}");
    let mut shown = vec![("README.md".to_string(), card), ("report/index.html".to_string(), page)];
    for f in common::files_below(&rel.join("report")) {
        if f.ends_with(".svg") {
            shown.push((f.clone(), std::fs::read_to_string(rel.join("report").join(&f)).unwrap()));
        }
    }
    for (name, text) in &shown {
        assert!(!text.contains('\u{202E}'), "{name} shows a raw U+202E");
    }
    // The data files keep the strings as they are.
    let rows = blindspot::io::parquet::read_samples(&rel.join("full/test-00000-of-00001.parquet"))
        .or_else(|_| blindspot::io::parquet::read_samples(&rel.join("data/test-00000-of-00001.parquet")))
        .unwrap();
    assert!(rows.iter().any(|r| r.id == "c1\u{202E}x"), "{rows:?}");
}

/// YAML: the front matter has the keys the card writes and no other.
#[test]
fn the_cards_front_matter_has_only_its_own_keys() {
    let (front, _) = card();
    let doc: serde_yaml_ng::Mapping = serde_yaml_ng::from_str(&front).unwrap();
    let keys: BTreeSet<&str> = doc.keys().filter_map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        BTreeSet::from(["pretty_name", "license", "task_categories", "size_categories", "configs", "dataset_info"])
    );
    assert_eq!(doc["pretty_name"].as_str(), Some("hostile"));
}

/// Shell: the rebuild block splits into the words it means, the repository
/// URL one word, and runs nothing else.
#[test]
fn the_rebuild_block_quotes_every_word() {
    let (_, body) = card();
    let block = body.split("## Rebuild").nth(1).unwrap();
    let block = block.split("```\n").nth(1).expect("a fenced block");
    let lines: Vec<Vec<Tok>> = block.lines().map(|l| shell_split(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    let word = |s: &str| Tok::Word(s.to_string());
    let basename = format!("$({:?})", [word("basename"), word(REPOSITORY), word(".git")]);
    assert_eq!(
        lines[0],
        [word("git"), word("clone"), word(REPOSITORY), Tok::Op("&&".into()), word("cd"), word(&basename)]
    );
    for l in &lines[1..] {
        assert!(l.iter().all(|t| matches!(t, Tok::Word(_))), "{l:?}");
    }
    assert_eq!(lines.last().unwrap(), &[word("blindspot"), word("build"), word("--check"), word("hostile.toml")]);
}

/// HTML: the report page holds only the tags it writes, the question types
/// with a script or an image tag in them shown as text; every SVG has no script.
#[test]
fn the_report_page_holds_only_its_own_tags() {
    let report = built().release.join("report");
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    let allowed = BTreeSet::from([
        "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "div", "table", "thead", "tbody",
        "tr", "th", "td", "code", "a", "img", "strong", "em", "ul", "li",
    ]);
    let tags: BTreeSet<String> = html_tags(&html).into_iter().collect();
    let extra: Vec<&String> = tags.iter().filter(|t| !allowed.contains(t.as_str())).collect();
    assert!(extra.is_empty(), "tags {extra:?} in index.html");
    assert!(!html.contains("<script") && !html.contains("<img src=x"), "a live tag from the data");
    // The blind-answerability table's rows (the card's Markdown rendered; in text a quote needs no escape).
    assert!(html.contains("<td>&lt;script&gt;alert('type')&lt;/script&gt;</td>"), "{html}");
    assert!(html.contains("<td>@SUM(1+1) &amp; \"q\" &lt;img src=x onerror=alert(1)&gt;</td>"), "{html}");
    for e in std::fs::read_dir(&report).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "svg") {
            let svg = std::fs::read_to_string(&p).unwrap();
            let tags: BTreeSet<String> = html_tags(&svg).into_iter().collect();
            assert!(
                !tags.contains("script") && !tags.contains("img") && !tags.contains("b"),
                "{}: {tags:?}",
                p.display()
            );
        }
    }
}

/// CSV: no text cell of any CSV of the release is a spreadsheet formula.
#[test]
fn no_csv_cell_is_a_formula() {
    let mut checked = 0;
    for file in common::files_below(&built().release).into_iter().filter(|f| f.ends_with(".csv")) {
        let mut r =
            csv::ReaderBuilder::new().has_headers(false).flexible(true).from_path(built().release.join(&file)).unwrap();
        for rec in r.records() {
            for cell in rec.unwrap().iter() {
                checked += 1;
                let formula = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
                assert!(!formula || cell.parse::<f64>().is_ok(), "{file}: a formula cell {cell:?}");
            }
        }
    }
    assert!(checked > 20, "removed.csv was read ({checked} cells)");
}

/// Python literal: every VLMEvalKit image cell VLMEvalKit would `eval` is a
/// list of string literals naming the row's images.
#[test]
fn the_vlmevalkit_image_cells_evaluate_to_the_paths() {
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(root().join("tests/fixtures/hostile/hostile.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let images: BTreeMap<String, Vec<String>> = rows
        .iter()
        .map(|r| {
            let names = match &r["image"] {
                serde_json::Value::Array(a) => a.iter().map(|v| v.as_str().unwrap().to_string()).collect(),
                v => vec![v.as_str().unwrap().to_string()],
            };
            (r["id"].as_str().unwrap().to_string(), names)
        })
        .collect();
    let mut cells = 0;
    for e in std::fs::read_dir(&built().vlmevalkit).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "tsv") {
            continue;
        }
        let mut r = csv::ReaderBuilder::new().delimiter(b'\t').from_path(&p).unwrap();
        let header = r.headers().unwrap().clone();
        let (Some(col), Some(id_col)) =
            (header.iter().position(|h| h == "image_path"), header.iter().position(|h| h == "blindspot_id"))
        else {
            continue;
        };
        for rec in r.records() {
            let rec = rec.unwrap();
            let (cell, id) = (&rec[col], &rec[id_col]);
            let id = id.split('#').next().unwrap_or(id);
            let evaluated = cell.len() > 1 && cell.starts_with('[') && cell.ends_with(']');
            let paths = if evaluated {
                python_list(cell)
                    .unwrap_or_else(|e| panic!("{}: {id}: {cell} is not a list of strings: {e}", p.display()))
            } else {
                vec![cell.to_string()]
            };
            let names: Vec<&str> = paths.iter().map(|p| p.rsplit('/').next().unwrap()).collect();
            if let Some(want) = images.get(id) {
                assert_eq!(names, *want, "{}: {id}: {cell}", p.display());
            }
            cells += 1;
        }
    }
    assert!(cells > 50, "{cells} image cells read");
}

/// YAML: every lmms-eval YAML has only its own keys, the group's name included.
#[test]
fn the_lmms_eval_yamls_have_only_their_own_keys() {
    let dir = &built().lmms_eval;
    let task_keys = BTreeSet::from([
        "task",
        "dataset_path",
        "dataset_kwargs",
        "test_split",
        "output_type",
        "doc_to_visual",
        "doc_to_text",
        "doc_to_target",
        "generation_kwargs",
        "process_results",
        "metric_list",
        "metadata",
    ]);
    let mut groups = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let doc: serde_yaml_ng::Mapping =
            serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", p.display()));
        let keys: BTreeSet<&str> = doc.keys().filter_map(|k| k.as_str()).collect();
        if keys.contains("group") {
            groups += 1;
            assert_eq!(keys, BTreeSet::from(["group", "task"]), "{}:\n{text}", p.display());
        } else {
            assert!(keys.is_subset(&task_keys), "{}: {keys:?}\n{text}", p.display());
        }
    }
    assert_eq!(groups, 1);
}

/// A forged stage-cache entry (its hash recomputed with it) cannot change a
/// release: the counts the card prints are those of the data written.
#[test]
fn a_forged_cache_entry_does_not_change_the_release() {
    let work = tempfile::tempdir().unwrap();
    common::copy_dir(&root().join("tests/fixtures/hostile"), work.path());
    let build = |out: &str| {
        let out = blindspot()
            .current_dir(work.path())
            .env("BLINDSPOT_CACHE_DIR", "cache")
            .args(["build", "hostile.toml", "--out-dir", out])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    build("a");
    let mut forged = 0;
    for e in std::fs::read_dir(work.path().join("cache/prune")).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        let json = text.split_once('\n').unwrap().1;
        let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
        let kept = v["kept"].as_array_mut().unwrap();
        kept.remove(0);
        let json = serde_json::to_string(&v).unwrap();
        use sha2::Digest;
        std::fs::write(&p, format!("{}\n{json}", hex::encode(sha2::Sha256::digest(json.as_bytes())))).unwrap();
        forged += 1;
    }
    assert!(forged > 0);
    let warned = build("b");
    let card = |dir: &str| std::fs::read_to_string(work.path().join(dir).join("hostile/1.0.0/README.md")).unwrap();
    assert_eq!(card("a"), card("b"), "the forged entry changed the card");
    assert!(warned.contains("stage cache") && warned.contains("prune"), "{warned}");
}

/// `verify` reads the card's counts and compares them with the data files.
#[test]
fn verify_checks_the_cards_counts_against_the_data() {
    let work = tempfile::tempdir().unwrap();
    common::copy_dir(&built().release, work.path());
    let card = std::fs::read_to_string(work.path().join("README.md")).unwrap();
    let forged = card.replacen("68 questions (", "67 questions (", 1);
    assert_ne!(card, forged, "the card states the number of questions");
    std::fs::write(work.path().join("README.md"), &forged).unwrap();
    // The manifest agrees with the forged card: only the counts can tell.
    let manifest_path = work.path().join("manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    use sha2::Digest;
    manifest["files"]["README.md"] =
        serde_json::json!({"sha256": hex::encode(sha2::Sha256::digest(forged.as_bytes())), "bytes": forged.len()});
    std::fs::write(&manifest_path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    let out = blindspot().args(["verify"]).arg(work.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("README.md") && err.contains("67") && err.contains("68"), "{err}");
}

fn validate(dataset_extra: &str) -> std::process::Output {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("q.jsonl"), "{\"id\": \"1\", \"question\": \"q\", \"answer\": \"yes\"}\n").unwrap();
    let file = work.path().join("p.toml");
    std::fs::write(
        &file,
        format!("[dataset]\nversion = \"1.0.0\"\nlicense = \"MIT\"\n{dataset_extra}\n[ingest]\npath = \"q.jsonl\"\n"),
    )
    .unwrap();
    blindspot().arg("validate").arg(&file).output().unwrap()
}

#[test]
fn a_repository_url_outside_rfc_3986_is_refused_by_validate() {
    let out = validate("name = \"x\"\nrepository = \"https://x/r;touch${IFS}PWNED;#\"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("p.toml:5:") && err.contains("dataset.repository") && err.contains("'{'"), "{err}");
}

/// `ingest X -o X` would replace its own input.
#[test]
fn ingest_refuses_to_write_over_its_input() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("q.jsonl");
    let text = "{\"id\": \"1\", \"question\": \"q\", \"answer\": \"yes\"}\n";
    std::fs::write(&input, text).unwrap();
    let out = blindspot().current_dir(work.path()).args(["ingest", "q.jsonl", "-o", "./q.jsonl"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("q.jsonl") && err.contains("is the input"), "{err}");
    assert_eq!(std::fs::read_to_string(&input).unwrap(), text, "the input was changed");
}

/// `diagnose D/x.parquet --out D` would delete its input with the folder.
#[test]
fn diagnose_refuses_an_output_folder_that_holds_its_input() {
    let work = tempfile::tempdir().unwrap();
    let fixture = root().join("tests/fixtures/good/shortcut.jsonl");
    let out = blindspot()
        .current_dir(work.path())
        .arg("variants")
        .arg(&fixture)
        .args(["-o", "D", "--kinds", "no_image,option_shuffle"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let input = work.path().join("D/option_shuffle.parquet");
    assert!(input.is_file());
    let out = blindspot()
        .current_dir(work.path())
        .args(["diagnose", "D/option_shuffle.parquet", "--out", "D"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("holds the input") && err.contains("option_shuffle.parquet"), "{err}");
    assert!(input.is_file(), "the input was deleted");
}

/// Every pair of `diagnose`'s output folders (`--out`, `--export-features`,
/// `--export-folds`), given one path or one inside the other, in both
/// orders: refused naming both flags and paths, exit 1, nothing written.
#[test]
fn no_output_of_a_command_lands_on_or_inside_another() {
    let flags = ["--out", "--export-features", "--export-folds"];
    let fixture = root().join("tests/fixtures/good/shortcut.jsonl");
    let mut cases = 0;
    for (i, a) in flags.iter().enumerate() {
        for b in flags.iter().skip(i + 1) {
            // (path of a, path of b, the message naming both)
            let relations = [
                ("d", "d", None),
                ("d", "d/x", Some(format!("{b} d/x is inside {a} d, which is replaced whole"))),
                ("d/x", "d", Some(format!("{a} d/x is inside {b} d, which is replaced whole"))),
            ];
            for (pa, pb, inside) in relations {
                let work = tempfile::tempdir().unwrap();
                let mut args = vec!["diagnose".to_string(), fixture.display().to_string()];
                for f in flags {
                    let path = if f == *a {
                        pa.to_string()
                    } else if f == *b {
                        pb.to_string()
                    } else {
                        "elsewhere".to_string()
                    };
                    args.extend([f.to_string(), path]);
                }
                let out = blindspot().current_dir(work.path()).args(&args).output().unwrap();
                let err = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
                match inside {
                    Some(m) => assert!(err.contains(&m), "{args:?}: {err}"),
                    None => {
                        let both = [format!("{b} d and {a} d"), format!("{a} d and {b} d")];
                        assert!(
                            both.iter().any(|m| err.contains(&format!("{m} are the same path"))),
                            "{args:?}: {err}"
                        );
                    }
                }
                assert!(err.contains("give each output its own path"), "{err}");
                assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0, "{args:?} wrote something");
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 9);

    // `build` of two pipelines with one name and version: one release folder.
    let work = common::fixture_workspace();
    std::fs::copy(work.path().join("canonical.toml"), work.path().join("again.toml")).unwrap();
    let out = blindspot()
        .current_dir(work.path())
        .args(["build", "canonical.toml", "again.toml", "--out-dir", "rel"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "the release of again.toml rel/canonical/1.0.0 and the release of canonical.toml rel/canonical/1.0.0 \
             are the same path"
        ),
        "{err}"
    );
    assert!(!work.path().join("rel").exists());
}

/// `export R -o R/exp` would write inside the release it reads.
#[test]
fn export_refuses_to_write_inside_the_release() {
    let work = tempfile::tempdir().unwrap();
    common::copy_dir(&built().release, &work.path().join("R"));
    let out = blindspot()
        .current_dir(work.path())
        .args(["export", "R", "--to", "vlmevalkit", "-o", "R/exp"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("R/exp") && err.contains("inside the input"), "{err}");
    assert!(!work.path().join("R/exp").exists());
    let out = blindspot().current_dir(work.path()).args(["verify", "R"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A workbook whose sheet declares 3 GB once inflated is refused before it is read.
#[test]
fn an_xlsx_member_that_inflates_past_the_limit_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(root().join("tests/fixtures/good/benchmark.xlsx")).unwrap();
    let member = b"xl/worksheets/sheet1.xml";
    let mut patched = 0;
    // The uncompressed size in the local header (offset 22) and the central directory (offset 24).
    for (sig, name_at, size_at) in [(b"PK\x03\x04", 30, 22), (b"PK\x01\x02", 46, 24)] {
        let mut i = 0;
        while let Some(k) = bytes[i..].windows(4).position(|w| w == sig) {
            let at = i + k;
            if bytes[at + name_at..].starts_with(member) {
                bytes[at + size_at..at + size_at + 4].copy_from_slice(&3_000_000_000u32.to_le_bytes());
                patched += 1;
            }
            i = at + 4;
        }
    }
    assert_eq!(patched, 2);
    let file = work.path().join("bomb.xlsx");
    std::fs::write(&file, &bytes).unwrap();
    let out = blindspot().current_dir(work.path()).args(["ingest", "bomb.xlsx", "-o", "out.parquet"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("bomb.xlsx") && err.contains("xl/worksheets/sheet1.xml") && err.contains("3000000000 bytes"),
        "{err}"
    );
    assert!(!work.path().join("out.parquet").exists());
}

/// 60 questions about one image that declares 8000×5000 pixels: noise_image
/// would generate 7 GB of incompressible PNG; it is refused, naming the image.
#[test]
fn noise_images_past_the_memory_budget_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let (w, h) = (8000u32, 5000u32);
    let mut png_bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut png_bytes, w, h);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::One);
        enc.set_compression(png::Compression::High);
        let mut wr = enc.write_header().unwrap();
        wr.write_image_data(&vec![0u8; (w as usize).div_ceil(8) * h as usize]).unwrap();
    }
    std::fs::create_dir(work.path().join("images")).unwrap();
    std::fs::write(work.path().join("images/big.png"), &png_bytes).unwrap();
    let rows: String = (0..60)
        .map(|i| format!("{{\"id\": \"q{i:02}\", \"question\": \"Is it there {i}?\", \"answer\": \"yes\", \"image\": \"big.png\"}}\n"))
        .collect();
    std::fs::write(work.path().join("q.jsonl"), rows).unwrap();
    std::fs::write(
        work.path().join("n.toml"),
        "[dataset]\nname = \"n\"\nversion = \"1.0.0\"\nlicense = \"MIT\"\n[ingest]\npath = \"q.jsonl\"\nimages = \"images\"\n",
    )
    .unwrap();
    let out = blindspot()
        .current_dir(work.path())
        .args(["variants", "n.toml", "-o", "v", "--kinds", "noise_image"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("noise_image") && err.contains("big.png") && err.contains("8000×5000"), "{err}");
    assert!(!work.path().join("v").exists());
}

/// The peak resident memory (VmHWM, kB) of a command, polled from /proc while it runs.
#[cfg(target_os = "linux")]
fn peak_rss_kb(mut cmd: std::process::Command) -> (std::process::ExitStatus, u64) {
    let mut child = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(kb) = text.lines().find_map(|l| l.strip_prefix("VmHWM:"))
        {
            peak = peak.max(kb.trim().trim_end_matches("kB").trim().parse().unwrap_or(0));
        }
        if let Some(status) = child.try_wait().unwrap() {
            return (status, peak);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A 250 MB JSON array is read record by record, as JSON lines are: memory
/// stays far below the file's size (it was read whole, and a 2 GB array aborted).
#[cfg(target_os = "linux")]
#[test]
fn a_large_json_array_is_streamed_in_bounded_memory() {
    use std::io::Write;
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("big.json");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let blob = "x".repeat(5000);
    let n = 50_000;
    f.write_all(b"[\n").unwrap();
    for i in 0..n {
        let sep = if i + 1 < n { ",\n" } else { "\n" };
        write!(f, "{{\"id\": \"q{i:06}\", \"question\": \"Is it there {i}?\", \"answer\": \"yes\", \"blob\": \"{blob}\"}}{sep}")
            .unwrap();
    }
    f.write_all(b"]\n").unwrap();
    f.flush().unwrap();
    drop(f);
    let size_kb = std::fs::metadata(&path).unwrap().len() / 1024;
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("blindspot"));
    cmd.current_dir(work.path()).args(["ingest", "big.json", "-o", "out.parquet"]);
    let (status, peak) = peak_rss_kb(cmd);
    assert!(status.success(), "{status}");
    let out = std::fs::File::open(work.path().join("out.parquet")).unwrap();
    let meta = parquet::file::reader::SerializedFileReader::new(out).unwrap();
    assert_eq!(parquet::file::reader::FileReader::metadata(&meta).file_metadata().num_rows(), n);
    // Measured: 163 MB for a 300 MB array, 158 MB for 100 MB (the same as JSON lines).
    assert!(peak > 1024 && peak < size_kb * 4 / 5, "peak RSS {peak} kB for a {size_kb} kB file");
}

/// A large spreadsheet is hashed as a stream and refused from its members'
/// sizes: memory stays far below the file's size (it was read whole first).
#[cfg(target_os = "linux")]
#[test]
fn a_large_spreadsheet_is_refused_without_reading_it_into_memory() {
    use std::io::Write;
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("big.xlsx");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("xl/worksheets/sheet1.xml", stored.large_file(true)).unwrap();
    let block = vec![b' '; 1 << 20];
    for _ in 0..300 {
        zip.write_all(&block).unwrap();
    }
    zip.finish().unwrap();
    let size_kb = std::fs::metadata(&path).unwrap().len() / 1024;
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("blindspot"));
    cmd.current_dir(work.path()).args(["ingest", "big.xlsx", "-o", "out.parquet"]);
    let (status, peak) = peak_rss_kb(cmd);
    assert_eq!(status.code(), Some(1));
    assert!(!work.path().join("out.parquet").exists());
    assert!(peak > 1024 && peak < size_kb / 3, "peak RSS {peak} kB for a {size_kb} kB file");
}
