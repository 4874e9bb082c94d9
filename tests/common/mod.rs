//! Shared helpers of the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The project root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub mod syntax;
pub mod traps;
pub mod venv;

/// The demo's version, read from `pipelines/vqa-rad.toml` so that a version bump
/// edits one file.
pub fn demo_version() -> String {
    let text = std::fs::read_to_string(root().join("pipelines/vqa-rad.toml")).unwrap();
    let line = text.lines().find(|l| l.trim_start().starts_with("version")).unwrap();
    line.split('"').nth(1).unwrap().to_string()
}

/// The demo's release folder below a build output: `vqa-rad/<version>`.
pub fn demo_release() -> String {
    format!("vqa-rad/{}", demo_version())
}

/// The real-data folder: `BLINDSPOT_DATA_DIR` (relative to the project root)
/// or `../shared/data`, read when the tests run, so pointing it elsewhere
/// needs no rebuild.
pub fn data_dir() -> PathBuf {
    let dir = match std::env::var_os("BLINDSPOT_DATA_DIR") {
        Some(d) if !d.is_empty() => root().join(d),
        _ => root().join("../shared/data"),
    };
    dir.canonicalize().unwrap_or(dir)
}

/// Whether `var` is set to 1: a test whose prerequisite (Python, the data,
/// the model, a harness) is missing then fails instead of skipping.
pub fn required(var: &str) -> bool {
    std::env::var(var).as_deref() == Ok("1")
}

/// Whether the real-data suite is there (its ScienceQA folder marks it).
pub fn has_real_data() -> bool {
    data_dir().join("scienceqa").is_dir()
}

/// `f` on a rayon pool of `n` threads.
pub fn with_threads<T: Send>(n: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap().install(f)
}

/// The blindspot binary, with BLINDSPOT_DATA_DIR set for the test pipelines.
pub fn blindspot() -> Command {
    let mut cmd = Command::cargo_bin("blindspot").expect("binary built");
    cmd.env("BLINDSPOT_DATA_DIR", data_dir());
    cmd
}

/// Every file below `dir`, relative, sorted.
/// Every file below `dir` (relative, sorted), but the marker blindspot leaves in
/// each output folder it writes.
pub fn files_below(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walk(dir)
        .iter()
        .filter(|p| p.file_name().is_none_or(|n| n != blindspot::io::fs::OUTPUT_MARKER))
        .map(|p| p.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
        }
    }
    out
}

/// Loads a pipeline (with `${BLINDSPOT_DATA_DIR}` set to the data folder) and runs ingest.
pub fn ingest_pipeline(path: &Path) -> blindspot::ingest::Ingested {
    let data = data_dir().display().to_string();
    let vars = move |name: &str| (name == "BLINDSPOT_DATA_DIR").then(|| data.clone());
    let p = blindspot::spec::Pipeline::load_with(path, &vars).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    blindspot::ingest::ingest(&p.ingest).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A copy of the `canonical` fixture pipeline (with its data and image) in a
/// temporary folder, for tests that build, change and rebuild it.
pub fn fixture_workspace() -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    let good = root().join("tests/fixtures/good");
    for f in ["canonical.jsonl", "canonical.toml"] {
        std::fs::copy(good.join(f), work.path().join(f)).unwrap();
    }
    std::fs::create_dir(work.path().join("images")).unwrap();
    std::fs::copy(good.join("images/cat.png"), work.path().join("images/cat.png")).unwrap();
    work
}

/// A prediction file to import, its format detected (`model` names the model
/// when the file does not).
pub fn prediction_file(path: &Path, model: Option<&str>) -> blindspot::predictions::PredictionFile {
    blindspot::predictions::PredictionFile {
        path: path.to_path_buf(),
        model: model.map(str::to_string),
        source: None,
        fields: Default::default(),
    }
}

/// Whether a libtest-mimic trial called `name` runs with these arguments (so
/// costly set-up, a PyPI probe or a venv install, is paid only when it will).
pub fn selected(args: &libtest_mimic::Arguments, name: &str) -> bool {
    if args.list {
        return false;
    }
    let hit = |f: &str| if args.exact { name == f } else { name.contains(f) };
    args.filter.as_deref().is_none_or(hit) && !args.skip.iter().any(|s| hit(s))
}

/// Builds the variant fixture (`tests/fixtures/good/variants.toml`: every
/// variant kind, CircularEval rotations among them) into `dir`, copied there
/// first (a build writes beside its pipeline); returns the release folder.
pub fn variants_fixture_release(dir: &Path) -> PathBuf {
    let src = root().join("tests/fixtures/good");
    std::fs::create_dir_all(dir.join("images")).unwrap();
    for f in ["variants.toml", "variants.jsonl", "variants-captions.json"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    for e in std::fs::read_dir(src.join("images")).unwrap().flatten() {
        std::fs::copy(e.path(), dir.join("images").join(e.file_name())).unwrap();
    }
    let o = blindspot().current_dir(dir).args(["build", "variants.toml", "--out-dir", "out"]).output().unwrap();
    assert!(o.status.success(), "build variants.toml: {}", String::from_utf8_lossy(&o.stderr));
    dir.join("out/variants-fixture/1.0.0")
}

/// A three-question benchmark in `dir` (`bench.jsonl`, `images/`, `bench.toml`
/// with `extra` appended): question 1 shows a VQA-RAD radiograph as PNG,
/// question 2 its half-size JPEG copy (other bytes, other format), question 3
/// another radiograph.
pub fn near_duplicate_image_bench(dir: &Path, extra: &str) {
    std::fs::create_dir_all(dir.join("images")).unwrap();
    let demo = root().join("data/vqa-rad/images");
    let a = image::open(demo.join("synpic100132.jpg")).unwrap();
    a.save(dir.join("images/a.png")).unwrap();
    a.resize_exact(a.width() / 2, a.height() / 2, image::imageops::FilterType::Triangle)
        .to_rgb8()
        .save(dir.join("images/a-small.jpg"))
        .unwrap();
    std::fs::copy(demo.join("synpic100176.jpg"), dir.join("images/b.jpg")).unwrap();
    std::fs::write(
        dir.join("bench.jsonl"),
        "{\"id\": \"1\", \"question\": \"Is it normal?\", \"answer\": \"yes\", \"image\": \"a.png\"}\n\
         {\"id\": \"2\", \"question\": \"Is there a mass?\", \"answer\": \"no\", \"image\": \"a-small.jpg\"}\n\
         {\"id\": \"3\", \"question\": \"Which side?\", \"answer\": \"left\", \"image\": \"b.jpg\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("bench.toml"),
        format!(
            "[dataset]\nname = \"t\"\nversion = \"0.1.0\"\nlicense = \"CC0-1.0\"\n\n[ingest]\npath = \"bench.jsonl\"\n\
             images = \"images\"\n{extra}"
        ),
    )
    .unwrap();
}

/// Copies every file below `from` to the same place below `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in files_below(from) {
        let dest = to.join(&f);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&f), dest).unwrap();
    }
}
