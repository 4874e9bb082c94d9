//! The module graph stays a DAG that reads as the flow (`docs/design.md`,
//! "Layering of the source"): every `crate::…` path in `src/` is checked
//! against the modules its top-level module may use. A stage never reaches
//! sideways into a stage that does not come before it, nor up into `spec`,
//! `pipeline` or `cli`; the foundation (errors, io, the canonical sample)
//! uses no stage at all.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The foundation every module may use.
const FOUNDATION: &[&str] = &["error", "progress", "seed", "context", "io", "sample", "stats"];

/// Each top-level module and the modules above the foundation it may use.
/// The order is the flow: a module lists only modules before it.
const ALLOWED: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("seed", &[]),
    ("context", &[]),
    ("progress", &[]),
    ("sample", &[]),
    ("stats", &[]),
    ("io", &[]),
    ("synth", &[]),
    ("ingest", &[]),
    ("variants", &[]),
    ("features", &[]),
    ("embed", &[]),
    ("diagnose", &["features", "embed"]),
    // Prediction files are read with ingest's format readers.
    ("predictions", &["ingest"]),
    ("metrics", &["predictions"]),
    // IBP and AFLite re-run the diagnostic; B-Clean scores predictions.
    ("prune", &["features", "embed", "diagnose", "predictions", "metrics"]),
    // Exported rows are asked with the variants' prompt rules and scored
    // harness-side with the predictions' answer-reading rules.
    ("export", &["variants", "predictions"]),
    // The validated plan is built from each stage's domain config.
    ("spec", &["ingest", "variants", "features", "embed", "diagnose", "predictions", "metrics", "prune"]),
    // The release writes what it is handed: every stage's result types and the plan.
    ("release", &["ingest", "variants", "features", "embed", "diagnose", "predictions", "metrics", "prune", "spec"]),
    (
        "pipeline",
        &["ingest", "variants", "features", "embed", "diagnose", "predictions", "metrics", "prune", "spec", "release"],
    ),
];

/// Modules free to use anything: the command line and the crate root.
const TOP: &[&str] = &["cli", "lib", "main"];

/// The first path segment of every `crate::` path in `text` (`crate::a::b`,
/// `crate::{a::b, c}`), with the line it is on.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let before = rest[..i].chars().next_back();
            rest = &rest[i + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                // Top-level names of the group (a group spanning lines is read to its end).
                let tail: String = std::iter::once(group).chain(text.lines().skip(n + 1)).collect::<Vec<_>>().join(" ");
                let mut depth = 0;
                let mut name = String::new();
                let mut at_start = true;
                for c in tail.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => at_start = true,
                        c if at_start && (c.is_alphanumeric() || c == '_') => name.push(c),
                        _ if at_start && !name.is_empty() => {
                            out.push((n + 1, std::mem::take(&mut name)));
                            at_start = false;
                        }
                        _ => {}
                    }
                }
                if !name.is_empty() {
                    out.push((n + 1, name));
                }
            } else {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    out.push((n + 1, name));
                }
            }
        }
    }
    out
}

/// The top-level module a file under `src/` belongs to.
fn module_of(rel: &Path) -> String {
    let first = rel.components().next().map(|c| c.as_os_str().to_string_lossy().to_string()).unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

/// Every forbidden use in `files` (relative path → text), as `file:line: a uses b`.
fn violations(files: &BTreeMap<PathBuf, String>) -> Vec<String> {
    let allowed: BTreeMap<&str, BTreeSet<&str>> = ALLOWED
        .iter()
        .map(|(m, extra)| (*m, FOUNDATION.iter().chain(extra.iter()).copied().filter(|d| d != m).collect()))
        .collect();
    let mut out = Vec::new();
    for (rel, text) in files {
        let module = module_of(rel);
        if TOP.contains(&module.as_str()) {
            continue;
        }
        let Some(ok) = allowed.get(module.as_str()) else {
            out.push(format!("{}: module `{module}` has no place in the layering table", rel.display()));
            continue;
        };
        for (line, used) in crate_paths(text) {
            // Its own items, and crate-root re-exports (`crate::Result`), are free.
            if used == module || used.chars().next().is_some_and(char::is_uppercase) {
                continue;
            }
            if !ok.contains(used.as_str()) {
                out.push(format!("src/{}:{line}: `{module}` uses `{used}`", rel.display()));
            }
        }
    }
    out
}

fn source_files(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).unwrap().to_path_buf();
                out.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn every_module_imports_only_down_the_flow() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = violations(&source_files(&src));
    assert!(
        bad.is_empty(),
        "imports against the layering (tests/layering.rs lists what each module may use):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_check_catches_sideways_upward_and_grouped_imports() {
    let files: BTreeMap<PathBuf, String> = [
        ("ingest/x.rs", "use crate::error::Result;\nuse crate::cli::say;\n"),
        ("variants/y.rs", "fn f() { crate::diagnose::chance(); }\n"),
        ("metrics/z.rs", "use crate::{\n    predictions::Imported,\n    prune::Pruned,\n};\n"),
        ("io/w.rs", "use crate::sample::Sample;\nuse crate::release::Written;\n"),
        ("prune/ok.rs", "use crate::diagnose::Diagnosis;\nuse crate::Result;\n// crate::cli in a comment\n"),
        ("newstage/a.rs", "use crate::error::Error;\n"),
    ]
    .into_iter()
    .map(|(p, t)| (PathBuf::from(p), t.to_string()))
    .collect();
    let bad = violations(&files);
    assert_eq!(
        bad,
        vec![
            "src/ingest/x.rs:2: `ingest` uses `cli`",
            "src/io/w.rs:2: `io` uses `release`",
            "src/metrics/z.rs:1: `metrics` uses `prune`",
            "newstage/a.rs: module `newstage` has no place in the layering table",
            "src/variants/y.rs:1: `variants` uses `diagnose`",
        ]
    );
}

#[test]
fn the_table_lists_every_module_once_and_only_earlier_ones() {
    let mut seen: Vec<&str> = Vec::new();
    for (m, deps) in ALLOWED {
        assert!(!seen.contains(m), "{m} listed twice");
        for d in *deps {
            assert!(seen.contains(d), "{m} may use {d}, which does not come before it");
        }
        seen.push(m);
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for e in std::fs::read_dir(&src).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().trim_end_matches(".rs").to_string();
        assert!(
            seen.contains(&name.as_str()) || TOP.contains(&name.as_str()),
            "src/{name} is not in the layering table"
        );
    }
}
