//! `blindspot verify` and `blindspot diff` on real builds: the committed
//! fixture (fast) and the bundled demo with a changed filter.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{blindspot, root};
use serde_json::Value;

const DATA: &str = "data/test-00000-of-00001.parquet";

/// Builds `pipeline` (relative to `work`) into `work/rel`; returns the release folder.
fn build(work: &Path, pipeline: &str, version: &str) -> PathBuf {
    let out = blindspot().current_dir(work).args(["build", pipeline, "--out-dir", "rel"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let name = pipeline.trim_end_matches(".toml");
    work.join("rel").join(name).join(version)
}

/// `blindspot verify DIR` → (exit code, stdout, stderr).
fn verify(dir: &Path) -> (i32, String, String) {
    let o = blindspot().arg("verify").arg(dir).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

fn diff_json(a: &Path, b: &Path) -> Value {
    let o = blindspot().args(["diff", "--json", "--max-ids", "0"]).arg(a).arg(b).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn diff_text(a: &Path, b: &Path) -> String {
    let o = blindspot().arg("diff").arg(a).arg(b).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into()
}

fn ids(v: &Value) -> Vec<String> {
    v["ids"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

fn split<'a>(d: &'a Value, config: &str) -> &'a Value {
    d["splits"].as_array().unwrap().iter().find(|s| s["config"] == config).unwrap_or_else(|| panic!("{d:#}"))
}

#[test]
fn verify_passes_then_names_a_changed_a_missing_and_an_extra_file() {
    let work = common::fixture_workspace();
    let rel = build(work.path(), "canonical.toml", "1.0.0");
    let (code, stdout, stderr) = verify(&rel);
    let listed = common::files_below(&rel).len() - 1;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with(&format!("verified {listed} files in ")), "{stdout}");

    // One byte of the Parquet file changed (in the middle: the data, not the footer).
    let tampered = work.path().join("tampered");
    common::copy_dir(&rel, &tampered);
    let path = tampered.join(DATA);
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(&path, bytes).unwrap();
    let (code, _, stderr) = verify(&tampered);
    assert_eq!(code, 1, "{stderr}");
    let first = stderr.lines().next().unwrap();
    assert!(first.starts_with("error: ") && first.contains(&format!("{DATA}: changed: sha256 ")), "{stderr}");
    assert_eq!(stderr.matches("error: ").count(), 1, "only the changed file: {stderr}");

    // A file deleted.
    let deleted = work.path().join("deleted");
    common::copy_dir(&rel, &deleted);
    std::fs::remove_file(deleted.join("README.md")).unwrap();
    let (code, _, stderr) = verify(&deleted);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.lines().next().unwrap().contains("README.md: missing: listed in manifest.json"), "{stderr}");

    // A file added.
    let added = work.path().join("added");
    common::copy_dir(&rel, &added);
    std::fs::write(added.join("data/notes.txt"), "hand-written").unwrap();
    let (code, _, stderr) = verify(&added);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.lines().next().unwrap().contains("data/notes.txt: extra: in the release but not listed"),
        "{stderr}"
    );

    // All three at once: each named, in path order.
    std::fs::remove_file(added.join("README.md")).unwrap();
    std::fs::write(added.join(DATA), b"not parquet").unwrap();
    let (code, _, stderr) = verify(&added);
    assert_eq!(code, 1, "{stderr}");
    let named: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(named.len(), 3, "{stderr}");
    assert!(named[0].contains("README.md: missing"), "{stderr}");
    assert!(named[1].contains("data/notes.txt: extra"), "{stderr}");
    assert!(named[2].contains(&format!("{DATA}: changed")), "{stderr}");
    assert!(stderr.contains("3 problems found"), "{stderr}");

    // The release the test started from is untouched.
    assert_eq!(verify(&rel).0, 0);
}

/// A listed file replaced by something that is not a regular file (a folder,
/// a FIFO, a symbolic link) is a change named with what the manifest expected,
/// never read (a FIFO would block) and never walked into (a folder).
#[test]
fn verify_names_a_listed_file_replaced_by_a_folder_a_fifo_or_a_link() {
    let work = common::fixture_workspace();
    let rel = build(work.path(), "canonical.toml", "1.0.0");
    let manifest: Value = serde_json::from_slice(&std::fs::read(rel.join("manifest.json")).unwrap()).unwrap();
    let listed = &manifest["files"]["README.md"];
    let expected = format!(
        "README.md: changed: not a regular file where manifest.json lists a file (sha256 {}, {} bytes)",
        &listed["sha256"].as_str().unwrap()[..12],
        listed["bytes"]
    );
    let replace = |name: &str, make: &dyn Fn(&Path)| {
        let copy = work.path().join(name);
        common::copy_dir(&rel, &copy);
        std::fs::remove_file(copy.join("README.md")).unwrap();
        make(&copy.join("README.md"));
        let (code, _, stderr) = verify(&copy);
        assert_eq!(code, 1, "{name}: {stderr}");
        let named: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
        assert_eq!(named.len(), 1, "{name}: only the replaced file is named: {stderr}");
        assert!(named[0].contains(&expected), "{name}: expected {expected:?} in:\n{stderr}");
    };
    replace("folder", &|p| std::fs::create_dir(p).unwrap());
    replace("folder-with-a-file", &|p| {
        std::fs::create_dir(p).unwrap();
        std::fs::write(p.join("inside.md"), "# card").unwrap();
    });
    replace("fifo", &|p| {
        let made = std::process::Command::new("mkfifo").arg(p).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
    });
    replace("link", &|p| std::os::unix::fs::symlink(rel.join("README.md"), p).unwrap());
}

/// Rewrites `file`'s entry in the release's manifest to its current bytes
/// (removes it when the file is gone), and in `croissant.json` too when
/// `croissant` is set: what someone covering an edit would do.
fn rehash(rel: &Path, file: &str, croissant: bool) {
    let path = rel.join("manifest.json");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let files = manifest["files"].as_object_mut().unwrap();
    let sha = match std::fs::read(rel.join(file)) {
        Ok(bytes) => {
            let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
            files.insert(file.into(), serde_json::json!({"sha256": sha, "bytes": bytes.len()}));
            Some(sha)
        }
        Err(_) => {
            files.remove(file);
            None
        }
    };
    std::fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap() + "\n").unwrap();
    if croissant {
        let cpath = rel.join("croissant.json");
        let mut doc: Value = serde_json::from_slice(&std::fs::read(&cpath).unwrap()).unwrap();
        for f in doc["distribution"].as_array_mut().unwrap() {
            if f["contentUrl"] == file {
                f["sha256"] = serde_json::json!(sha.clone().unwrap());
            }
        }
        std::fs::write(&cpath, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
        rehash(rel, "croissant.json", false);
    }
}

/// A config's data file deleted together with its manifest entry: the card
/// and `croissant.json` still list it.
#[test]
fn verify_names_a_config_the_card_lists_without_its_data_file() {
    let work = tempfile::tempdir().unwrap();
    let rel = common::variants_fixture_release(work.path());
    assert_eq!(verify(&rel).0, 0);
    let file = common::files_below(&rel)
        .into_iter()
        .find(|f| f.starts_with("variants/") && f.ends_with(".parquet"))
        .expect("a variant config");
    let folder = file.rsplit_once('/').unwrap().0.to_string();
    std::fs::remove_file(rel.join(&file)).unwrap();
    rehash(&rel, &file, false);
    let (code, stdout, stderr) = verify(&rel);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let named: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(named.len(), 2, "{stderr}");
    assert!(named[0].contains("README.md: disagrees: lists config \""), "{stderr}");
    assert!(
        named[0].contains(&format!("with data files {folder}/test-*.parquet, but the release has no such file")),
        "{stderr}"
    );
    assert!(
        named[1].contains(&format!("croissant.json: disagrees: lists {file}, which is not in the release")),
        "{stderr}"
    );
}

/// An embedded image swapped for other bytes, the manifest and Croissant
/// updated: the row's `image_facts.sha256` no longer hashes the image.
#[test]
fn verify_names_an_embedded_image_that_is_not_its_stated_hash() {
    let work = common::fixture_workspace();
    let rel = build(work.path(), "canonical.toml", "1.0.0");
    let path = rel.join(DATA);
    let mut rows = blindspot::io::parquet::read_samples(&path).unwrap();
    let other = std::fs::read(root().join("tests/fixtures/good/images/red.png")).unwrap();
    let at = rows.iter().position(|r| !r.images.is_empty()).unwrap();
    let stated = rows[at].images[0].sha256.clone().unwrap();
    rows[at].images[0].bytes = Some(other.clone());
    blindspot::io::parquet::write_samples(&path, &rows, blindspot::sample::Embed::Images).unwrap();
    rehash(&rel, DATA, true);
    let (code, stdout, stderr) = verify(&rel);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let named: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(named.len(), 1, "{stderr}");
    let actual = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&other));
    let expected = format!(
        "{DATA}: disagrees: row {} (id \"{}\"), image 1: image_facts.sha256 is {} but the embedded image's sha256 is {}",
        at + 1,
        rows[at].id,
        &stated[..12],
        &actual[..12]
    );
    assert!(named[0].contains(&expected), "expected {expected:?} in\n{stderr}");
}

/// A row edited, the manifest updated, `croissant.json` left with the old hash.
#[test]
fn verify_names_a_croissant_hash_that_is_not_the_files() {
    let work = common::fixture_workspace();
    let rel = build(work.path(), "canonical.toml", "1.0.0");
    let path = rel.join(DATA);
    let old = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(std::fs::read(&path).unwrap()));
    let mut rows = blindspot::io::parquet::read_samples(&path).unwrap();
    rows[0].question.push_str(" (edited)");
    blindspot::io::parquet::write_samples(&path, &rows, blindspot::sample::Embed::Images).unwrap();
    rehash(&rel, DATA, false);
    let new = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(std::fs::read(&path).unwrap()));
    let (code, stdout, stderr) = verify(&rel);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let named: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(named.len(), 1, "{stderr}");
    let expected = format!(
        "croissant.json: disagrees: states sha256 {} for {DATA}, but the file's sha256 is {}",
        &old[..12],
        &new[..12]
    );
    assert!(named[0].contains(&expected), "expected {expected:?} in\n{stderr}");
}

#[test]
fn verify_locates_a_damaged_manifest() {
    let work = common::fixture_workspace();
    let rel = build(work.path(), "canonical.toml", "1.0.0");
    let manifest = rel.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replacen("\"files\"", "\"filez\"", 1)).unwrap();
    let (code, _, stderr) = verify(&rel);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(": field \"files\": missing: the manifest is not one `blindspot build` writes"),
        "{stderr}"
    );

    std::fs::write(&manifest, &text[..text.len() / 2]).unwrap();
    let (code, _, stderr) = verify(&rel);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("manifest.json:") && stderr.contains(": not valid JSON"), "{stderr}");

    let (code, _, stderr) = verify(&work.path().join("no-such-release"));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("no such release folder"), "{stderr}");
}

#[test]
fn diff_names_exactly_the_added_removed_and_changed_ids() {
    let work = common::fixture_workspace();
    let v1 = build(work.path(), "canonical.toml", "1.0.0");

    // With itself: nothing.
    let same = diff_json(&v1, &v1);
    let s = split(&same, "default");
    assert_eq!((s["added"]["count"].as_u64(), s["removed"]["count"].as_u64()), (Some(0), Some(0)));
    assert_eq!(s["changed"]["count"], 0);
    assert_eq!(s["unchanged"], 4);
    assert!(diff_text(&v1, &v1).contains("\nno differences"));

    // v1.1.0: c3's answer changed, c10 removed, c11 added.
    let jsonl = std::fs::read_to_string(work.path().join("canonical.jsonl")).unwrap();
    let mut lines: Vec<String> = jsonl.lines().filter(|l| !l.contains("\"c10\"")).map(str::to_string).collect();
    assert_eq!(lines.len(), 3);
    for l in &mut lines {
        *l = l.replace("\"sleeping\"", "\"eating\"");
    }
    lines.push(r#"{"id": "c11", "question": "Is the cat awake?", "answer": "No", "question_type": "presence", "image": "cat.png"}"#.into());
    std::fs::write(work.path().join("canonical.jsonl"), lines.join("\n") + "\n").unwrap();
    let toml = std::fs::read_to_string(work.path().join("canonical.toml")).unwrap();
    std::fs::write(work.path().join("canonical.toml"), toml.replace("version = \"1.0.0\"", "version = \"1.1.0\""))
        .unwrap();
    let v2 = build(work.path(), "canonical.toml", "1.1.0");

    let d = diff_json(&v1, &v2);
    let s = split(&d, "default");
    assert_eq!(s["split"], "test", "{d:#}");
    assert_eq!(s["presence"], "both");
    assert_eq!((s["rows_a"].as_u64(), s["rows_b"].as_u64()), (Some(4), Some(4)));
    assert_eq!(ids(&s["added"]), vec!["c11"]);
    assert_eq!(ids(&s["removed"]), vec!["c10"]);
    assert_eq!(ids(&s["changed"]), vec!["c3"]);
    assert_eq!(s["changed"]["columns"], serde_json::json!({"answer": 1}), "{d:#}");
    assert_eq!(s["unchanged"], 2);
    assert_eq!((d["a"]["version"].as_str(), d["b"]["version"].as_str()), (Some("1.0.0"), Some("1.1.0")));

    let text = diff_text(&v1, &v2);
    assert!(text.contains("config default split test: 4 -> 4 rows (+0)"), "{text}");
    assert!(text.contains("  added: 1: c11\n  removed: 1: c10\n  changed: 1: c3\n    columns: answer 1"), "{text}");

    // v1.2.0: the image replaced — every row's images column changed.
    let other = image_png(8, 8);
    std::fs::write(work.path().join("images/cat.png"), other).unwrap();
    let toml = std::fs::read_to_string(work.path().join("canonical.toml")).unwrap();
    std::fs::write(work.path().join("canonical.toml"), toml.replace("version = \"1.1.0\"", "version = \"1.2.0\""))
        .unwrap();
    let v3 = build(work.path(), "canonical.toml", "1.2.0");
    let d = diff_json(&v2, &v3);
    let s = split(&d, "default");
    assert_eq!(s["changed"]["count"], 4, "{d:#}");
    assert_eq!(s["changed"]["columns"], serde_json::json!({"images": 4, "image_facts": 4}), "{d:#}");
}

/// Configs come from the card's `configs:` list: a config added to the card
/// (with its own folder) shows as only in b, with its rows; a card without
/// front matter falls back to data/*.parquet as `default`.
#[test]
fn diff_reads_configs_from_the_card() {
    let work = common::fixture_workspace();
    let v1 = build(work.path(), "canonical.toml", "1.0.0");
    let two = work.path().join("two-configs");
    common::copy_dir(&v1, &two);
    std::fs::create_dir_all(two.join("full")).unwrap();
    std::fs::copy(two.join(DATA), two.join("full/test-00000-of-00001.parquet")).unwrap();
    let card = std::fs::read_to_string(two.join("README.md")).unwrap();
    let card = card.replacen(
        "configs:\n",
        "configs:\n- config_name: full\n  data_files:\n  - split: test\n    path: full/test-*.parquet\n",
        1,
    );
    assert!(card.contains("config_name: full"), "the card has a configs list: {card}");
    std::fs::write(two.join("README.md"), card).unwrap();

    let d = diff_json(&v1, &two);
    let names: Vec<(&str, &str)> = d["splits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["config"].as_str().unwrap(), s["presence"].as_str().unwrap()))
        .collect();
    assert_eq!(names, vec![("default", "both"), ("full", "only_b")], "{d:#}");
    assert_eq!(split(&d, "full")["rows_b"], 4);
    assert!(diff_text(&v1, &two).contains("config full split test: only in b (4 rows)"));

    // No front matter: data/*.parquet is config default, split from the file name.
    let bare = work.path().join("bare");
    common::copy_dir(&v1, &bare);
    std::fs::write(bare.join("README.md"), "# no front matter\n").unwrap();
    let d = diff_json(&bare, &v1);
    let s = split(&d, "default");
    assert_eq!((s["split"].as_str(), s["unchanged"].as_u64()), (Some("test"), Some(4)), "{d:#}");

    // A config whose files are gone is a located error.
    std::fs::remove_file(two.join("full/test-00000-of-00001.parquet")).unwrap();
    let o = blindspot().arg("diff").arg(&v1).arg(&two).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("README.md:") && stderr.contains("\"full/test-*.parquet\" matches no file"), "{stderr}");
}

/// A valid PNG of `w`×`h` (different bytes from the fixture's cat).
fn image_png(w: u32, h: u32) -> Vec<u8> {
    // Signature, IHDR, IDAT (stored deflate block of zero rows), IEND.
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend(data);
        out.extend(&body);
        out.extend(crc32(&body).to_be_bytes());
    }
    fn crc32(bytes: &[u8]) -> u32 {
        let mut c = 0xffff_ffffu32;
        for &b in bytes {
            c ^= b as u32;
            for _ in 0..8 {
                c = if c & 1 == 1 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
            }
        }
        !c
    }
    fn adler(bytes: &[u8]) -> u32 {
        let (mut a, mut b) = (1u32, 0u32);
        for &x in bytes {
            a = (a + x as u32) % 65521;
            b = (b + a) % 65521;
        }
        (b << 16) | a
    }
    let mut out = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    let mut ihdr = Vec::new();
    ihdr.extend(w.to_be_bytes());
    ihdr.extend(h.to_be_bytes());
    ihdr.extend([8, 0, 0, 0, 0]); // 8-bit greyscale
    chunk(&mut out, b"IHDR", &ihdr);
    let raw: Vec<u8> =
        (0..h).flat_map(|_| std::iter::once(0u8).chain(std::iter::repeat_n(200u8, w as usize))).collect();
    let mut z = vec![0x78, 0x01, 0x01];
    z.extend((raw.len() as u16).to_le_bytes());
    z.extend((!(raw.len() as u16)).to_le_bytes());
    z.extend(&raw);
    z.extend(adler(&raw).to_be_bytes());
    chunk(&mut out, b"IDAT", &z);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// The demo and the demo without chest images: the removed ids are exactly
/// the chest questions, nothing is added or changed, and the headline
/// statistics are compared.
#[test]
fn diff_of_the_demo_against_a_filtered_rebuild() {
    let work = tempfile::tempdir().unwrap();
    let demo = root().join("pipelines/vqa-rad.toml");
    let data = root().join("data/vqa-rad");
    let text = std::fs::read_to_string(&demo).unwrap().replace("../data/vqa-rad", &data.display().to_string());
    // Without [prune], the default config holds every question of each build.
    let start = text.find("\n[prune]").unwrap();
    let end = start + 1 + text[start + 1..].find("\n[").unwrap();
    let text = format!("{}{}", &text[..start], &text[end..]);
    std::fs::write(work.path().join("vqa-rad.toml"), &text).unwrap();
    let version = common::demo_version();
    let a = build(work.path(), "vqa-rad.toml", &version);
    let filtered = text.replace(&format!("version = \"{version}\""), "version = \"99.0.0\"")
        + "\n[[ingest.filter]]\nfield = \"image_organ\"\nnot-in = [\"CHEST\"]\n";
    // Appended [[ingest.filter]] would land inside [diagnose]: put it before.
    let filtered = move_filter_before_diagnose(&filtered);
    std::fs::write(work.path().join("vqa-rad.toml"), filtered).unwrap();
    let b = build(work.path(), "vqa-rad.toml", "99.0.0");

    // Expected, from the source file itself.
    let source: Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("VQA_RAD_Dataset_Public.json")).unwrap()).unwrap();
    let test_rows: Vec<&Value> = source
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| matches!(r["phrase_type"].as_str(), Some("test_freeform" | "test_para")))
        .collect();
    let chest: BTreeSet<String> =
        test_rows.iter().filter(|r| r["image_organ"] == "CHEST").map(|r| r["qid"].to_string()).collect();
    assert!(chest.len() > 100);

    let d = diff_json(&a, &b);
    let s = split(&d, "default");
    assert_eq!(s["rows_a"].as_u64(), Some(test_rows.len() as u64));
    assert_eq!(s["rows_b"].as_u64(), Some((test_rows.len() - chest.len()) as u64));
    assert_eq!(ids(&s["removed"]).into_iter().collect::<BTreeSet<_>>(), chest);
    assert_eq!(s["added"]["count"], 0);
    assert_eq!(s["changed"]["count"], 0, "{s:#}");
    let g = &d["diagnose"];
    assert_eq!(g["n_samples"]["a"].as_f64(), Some(test_rows.len() as f64), "{g:#}");
    assert_eq!(g["n_samples"]["b"].as_f64(), Some((test_rows.len() - chest.len()) as f64), "{g:#}");
    for k in ["weighted", "macro", "chance"] {
        assert!(g[k]["a"].is_f64() && g[k]["b"].is_f64() && g[k]["delta"].is_f64(), "{k}: {g:#}");
    }
    assert!(!g["groups"].as_array().unwrap().is_empty());

    let text = diff_text(&a, &b);
    assert!(text.contains(&format!("removed: {}: ", chest.len())), "{text}");
    assert!(text.contains("blind accuracy (TsT-RF, report/diagnose.json):\n  weighted "), "{text}");
    assert!(text.contains("more)"), "the text lists only the first ids: {text}");
}

fn move_filter_before_diagnose(text: &str) -> String {
    let (body, filter) = text.split_at(text.rfind("\n[[ingest.filter]]").unwrap());
    let at = body.find("\n[diagnose]").unwrap_or(body.len());
    format!("{}{}\n{}", &body[..at], filter.trim_end(), &body[at..])
}

/// A Parquet file whose footer puts a column outside the file (a fuzzing
/// find) is a located error in `diff` and `export` too, not a panic.
#[test]
fn diff_and_export_reject_a_corrupt_parquet_footer() {
    let work = common::fixture_workspace();
    let a = build(work.path(), "canonical.toml", "1.0.0");
    let b = work.path().join("b");
    common::copy_dir(&a, &b);
    let corrupt = root().join("tests/fixtures/bad/fuzz-negative-range.parquet");
    std::fs::copy(&corrupt, b.join(DATA)).unwrap();
    let o = blindspot().arg("diff").arg(&a).arg(&b).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("test-00000-of-00001.parquet") && err.contains("outside the file"), "{err}");

    let dir = work.path().join("variants");
    std::fs::create_dir_all(dir.join("no_image")).unwrap();
    std::fs::copy(&corrupt, dir.join("no_image/test-00000-of-00001.parquet")).unwrap();
    let o = blindspot()
        .arg("export")
        .arg(&dir)
        .args(["--to", "vlmevalkit", "-o"])
        .arg(work.path().join("x"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("outside the file"), "{err}");
}

/// 120 multiple-choice questions; in `tell` the gold is always the longest
/// option, so pruning removes from it.
fn planted_jsonl(skip: &[usize]) -> String {
    let words = ["cat", "dog", "car", "tree", "cup", "lamp", "bird", "boat"];
    let mut out = String::new();
    for i in (0..120).filter(|i| !skip.contains(i)) {
        let qtype = ["tell", "fair"][i % 2];
        let gold = (i * 7 + i / 5) % 4;
        let options: Vec<String> = (0..4)
            .map(|j| {
                let w = words[(i * 3 + j * 5) % words.len()];
                if qtype == "tell" && j == gold { format!("{w} with a much longer wording") } else { w.to_string() }
            })
            .collect();
        let rec = serde_json::json!({
            "id": format!("q{i:03}"),
            "question": format!("Which object is in picture {i}?"),
            "options": options,
            "answer": options[gold],
            "question_type": qtype,
        });
        out.push_str(&rec.to_string());
        out.push('\n');
    }
    out
}

/// Between two pruned releases, the default config's removed ids that `full`
/// lost too are told apart as edits of the source; the rest are pruning's.
#[test]
fn diff_tells_source_edits_from_pruning() {
    let work = tempfile::tempdir().unwrap();
    let pipeline = |version: &str| {
        format!(
            "[dataset]\nname = \"planted\"\nversion = \"{version}\"\nlicense = \"CC0-1.0\"\n\n[ingest]\npath = \
             \"q.jsonl\"\n\n[diagnose]\nfolds = 5\n\n[prune]\nbudget = 12\nbatch = 12\nstop = \"budget\"\n"
        )
    };
    std::fs::write(work.path().join("q.jsonl"), planted_jsonl(&[])).unwrap();
    std::fs::write(work.path().join("planted.toml"), pipeline("1.0.0")).unwrap();
    let v1 = build(work.path(), "planted.toml", "1.0.0");
    // Three `fair` questions leave the source.
    std::fs::write(work.path().join("q.jsonl"), planted_jsonl(&[1, 3, 5])).unwrap();
    std::fs::write(work.path().join("planted.toml"), pipeline("1.1.0")).unwrap();
    let v2 = build(work.path(), "planted.toml", "1.1.0");
    let d = diff_json(&v1, &v2);
    assert_eq!(ids(&split(&d, "full")["removed"]), ["q001", "q003", "q005"], "{d:#}");
    let s = split(&d, "default");
    let removed = s["removed"]["count"].as_u64().unwrap();
    assert!(removed >= 3, "{d:#}");
    assert_eq!(s["from_source"]["removed"], 3, "{d:#}");
    assert_eq!(s["from_source"]["added"], 0, "{d:#}");
    let text = diff_text(&v1, &v2);
    assert!(text.contains("  of these, edits of the source (in `full` too): 0 added, 3 removed; the rest ("), "{text}");
}
