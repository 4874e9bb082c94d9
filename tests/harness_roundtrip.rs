//! A real round trip through lmms-eval and VLMEvalKit:
//! blindspot exports a release, the real harness runs it with a stub model,
//! blindspot imports the harness's output, and every figure must be what the
//! stub must have scored.
//!
//! For each of two releases — the bundled demo (VQA-RAD: yes/no and open,
//! seven variant configs) and the variant fixture `tests/fixtures/good/
//! variants.toml` (every variant kind, multiple choice and numeric rows,
//! CircularEval rotations) — and, for lmms-eval, a third, the Video-MME-layout
//! fixture `tests/fixtures/video/videomme` (video tasks whose `doc_to_visual`
//! returns each video's path; `no_video`, `mirage`, `phantom0_video`,
//! `option_shuffle`), the trial
//! 1. builds the release, runs `blindspot export REL --to lmms-eval -o DIR`
//!    and moves DIR to EXP (the task folder must work wherever it is);
//! 2. runs lmms-eval 0.7.3 (PyPI, in `.venv-harness`), from a working
//!    directory that is neither EXP nor its parent, on every exported task
//!    at once: `python tests/harness/lmms_eval_stub.py --model blindspot_stub
//!    --model_args pretrained=blindspot-stub --include_path EXP --tasks T1,T2,..
//!    --log_samples --output_path OUT` (the launcher only registers the stub
//!    model; task loading, prompting, scoring and the sample logs are
//!    lmms-eval's own);
//! 3. fails if a task did not load (lmms-eval logs "Error during evaluation"
//!    and still exits 0; a task missing from the results or its samples
//!    file, or fewer docs than exported rows), if an exported or logged prompt
//!    is empty, or if lmms-eval's own per-row score, its per-task aggregate or
//!    the stub's reply differs from what the rule below gives on the exported
//!    rows;
//! 4. imports the logs with `blindspot metrics --release REL --predictions
//!    OUT/blindspot-stub/*_samples_*.jsonl --manifest EXP/manifest.json
//!    --strict` and compares, per condition, n, the correct count, accuracy,
//!    abstentions, abstention rate, unparsed and missing with the expected
//!    counts, and CircularEval's circular and first-rotation accuracy.
//!    Tolerance zero: counts are compared exactly, rates as the same integer
//!    ratio (`k as f64 / n as f64`, which Python computes identically; in
//!    metrics.json rounded to 6 decimals, as blindspot writes every rate).
//!
//! The stub (`tests/harness/stub_model.py`) answers "I cannot see the image."
//! when the harness delivers no image (nor a video file: it checks that each
//! video path `doc_to_visual` returns is a file), "A" when the prompt lists options,
//! else "yes". Expected, from the exported rows: an image-free row abstains
//! (score 0); a multiple-choice row is right when its gold is option A; a
//! yes/no or open row is right when its gold is "yes"; a numeric row is
//! unparsed.
//!
//! VLMEvalKit, as far as PyPI allows: upstream `vlmeval` is not on PyPI;
//! `ms-vlmeval` 0.0.20 (ModelScope's packaging of the same `vlmeval` code) is,
//! in `.venv-harness-vlmeval` (tests/harness/requirements-vlmeval.txt,
//! layered on `.venv-harness`: it pins an antlr4 runtime lmms-eval cannot
//! use). For the same two releases, `blindspot export --to vlmevalkit` and
//! tests/harness/vlmevalkit_check.py: VLMEvalKit's custom-TSV loader
//! (`build_dataset`) and its `build_prompt` on every row, the stub's answer
//! to that prompt in a result file with a `prediction` column, VLMEvalKit's
//! own MCQ scoring (`evaluate(..., model="exact_matching")`, no judge model)
//! where it has one, then `blindspot metrics --format vlmevalkit`. What it
//! cannot run, each asserted so a change shows: no prompt for an image-free
//! config of a non-multiple-choice benchmark (`CustomVQADataset.build_prompt`
//! reads `image_path`: KeyError), no scorer for custom VQA datasets
//! (`evaluate` raises NotImplementedError: the demo's yes/no and open
//! questions are scored by blindspot only), and the rows without an image in
//! a config with an image column are dropped by its loader (`skip_noimg`):
//! blindspot reports them as missing. Its MCQ scorer also counts the yes/no,
//! open and numeric rows of a config that has options as wrong (blindspot
//! scores them), so its Overall differs from blindspot's accuracy there; the
//! test expects exactly that. Not run: VLMEvalKit's inference loop (`run.py`,
//! whose models come from its own `supported_VLM` table) and judge-model
//! scoring (needs an API).
//!
//! A custom harness (libtest-mimic), because whether the harnesses can run is
//! only known at run time, and installing them costs 7.5 GB (6.9 GB of it
//! lmms-eval with torch: PyPI's torch is the CUDA build): a plain `cargo
//! test` reports both trials as `ignored` with one line saying why, unless
//! `.venv-harness` exists (then they run, installing what is missing or
//! stale) or BLINDSPOT_REQUIRE_HARNESS=1 (CI), which installs both venvs and
//! makes any failure to install or run a test failure. Each venv is reused
//! while its stamp (the sha256 of its requirements) matches.
//! BLINDSPOT_HARNESS_VENV puts `.venv-harness` elsewhere (relative paths are
//! to the project root; the VLMEvalKit venv is beside it, `-vlmeval` added).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use blindspot::io::r6;
use blindspot::predictions::parse::normalize_text;
use blindspot::sample::{AnswerFormat, Sample};
use common::venv::PinnedVenv;
use libtest_mimic::{Arguments, Failed, Trial};

const TRIAL: &str = "lmms_eval_runs_every_exported_task_and_blindspot_imports_the_stub_scores";
const VLM_TRIAL: &str = "vlmevalkit_loads_the_exported_tsvs_and_its_scores_and_blindspots_match_the_stub";
const REQUIREMENTS: &str = common::venv::HARNESS_REQUIREMENTS;
const VLM_REQUIREMENTS: &str = "tests/harness/requirements-vlmeval.txt";
/// The model name lmms-eval writes the logs under (`--model_args pretrained=`).
const MODEL: &str = "blindspot-stub";
const ABSTAIN: &str = "I cannot see the image.";
/// lmms-eval on one export takes 15-25 s here; a hang must not eat CI's budget.
const HARNESS_TIMEOUT: Duration = Duration::from_secs(900);

type Result<T> = std::result::Result<T, Failed>;
type TrialFn = fn() -> Result<()>;
/// A row with its index in the exported file.
type Indexed<'a> = (usize, &'a Sample);

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_blindspot")
}

fn root() -> PathBuf {
    common::root()
}

fn required() -> bool {
    std::env::var("BLINDSPOT_REQUIRE_HARNESS").as_deref() == Ok("1")
}

fn venv_dir() -> PathBuf {
    common::venv::harness_dir()
}

/// lmms-eval's venv.
fn venv() -> PinnedVenv<'static> {
    common::venv::harness()
}

fn venv_python() -> PathBuf {
    venv().python()
}

fn run_ok(cmd: &mut Command, what: &str) -> Result<String> {
    Ok(common::venv::run_ok(cmd, what)?)
}

/// Held while a venv is checked or installed: the two trials run in parallel
/// and both need `.venv-harness`.
static VENV_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Creates the venv and installs the pinned requirements, unless the stamp
/// says they are installed already.
fn ensure_venv() -> Result<()> {
    let _held = VENV_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    ensure_venv_locked()
}

fn ensure_venv_locked() -> Result<()> {
    Ok(venv().ensure(|_| Ok(()))?)
}

/// Why the trial cannot run here without installing anything, if it cannot.
fn not_installed() -> Option<String> {
    if venv_dir().exists() {
        return None;
    }
    Some(format!(
        "lmms-eval is not installed at {} (7.5 GB from PyPI: lmms-eval 0.7.3 with torch, and VLMEvalKit; \
         BLINDSPOT_REQUIRE_HARNESS=1 installs them and runs the round trip)",
        venv_dir().display()
    ))
}

// ------------------------------------------------------------ VLMEvalKit's venv

/// VLMEvalKit's venv, layered on lmms-eval's: its stamp covers both files.
fn vlm_venv() -> PinnedVenv<'static> {
    let base = venv_dir();
    let name = base.file_name().and_then(|n| n.to_str()).unwrap_or(".venv-harness");
    PinnedVenv { dir: base.with_file_name(format!("{name}-vlmeval")), requirements: &[REQUIREMENTS, VLM_REQUIREMENTS] }
}

fn vlm_python() -> PathBuf {
    vlm_venv().python()
}

fn site_packages(python: &Path) -> std::result::Result<String, String> {
    let out = common::venv::run_ok(
        Command::new(python).args(["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]),
        "python: where are its site-packages",
    )?;
    Ok(out.trim().to_string())
}

/// Creates `.venv-harness-vlmeval` on top of `.venv-harness` (a `.pth` line
/// appends the base's site-packages to its path) and installs ms-vlmeval.
fn ensure_vlm_venv() -> Result<()> {
    let _held = VENV_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    ensure_venv_locked()?;
    Ok(vlm_venv().ensure(|python| {
        let own = site_packages(python)?;
        let base = site_packages(&venv_python())?;
        std::fs::write(Path::new(&own).join("blindspot-harness-base.pth"), format!("{base}\n"))
            .map_err(|e| format!("{own}: {e}"))
    })?)
}

/// `blindspot export RELEASE --to HARNESS -o DIR`; returns DIR.
fn export_to(release: &Path, harness: &str, dir: &Path) -> Result<PathBuf> {
    blindspot_ok(
        &["export"],
        &[release, Path::new("--to"), Path::new(harness), Path::new("-o"), dir],
        "blindspot export",
    )?;
    Ok(dir.to_path_buf())
}

fn blindspot_ok(args: &[&str], paths: &[&Path], what: &str) -> Result<String> {
    let mut cmd = Command::new(bin());
    cmd.current_dir(root()).args(args).args(paths);
    run_ok(&mut cmd, what)
}

// ------------------------------------------------------------ the stub's rule

/// Whether the harness hands the stub something to look at: an image, or a
/// video's file (a video task's `doc_to_visual` returns its path).
fn has_visual(r: &Sample) -> bool {
    !r.images.is_empty() || !r.videos.is_empty()
}

/// What the stub replies to a row, from the exported row alone.
fn stub_reply(r: &Sample) -> &'static str {
    if !has_visual(r) {
        ABSTAIN
    } else if !r.options.is_empty() {
        "A"
    } else {
        "yes"
    }
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Expected {
    n: usize,
    correct: usize,
    abstained: usize,
    unparsed: usize,
}

/// (right, abstained, unparsed) of the stub's reply to `r`.
fn expected_outcome(r: &Sample) -> (bool, bool, bool) {
    if !has_visual(r) {
        return (false, true, false);
    }
    match r.answer_format {
        AnswerFormat::MultipleChoice => (r.answer_index == Some(0), false, false),
        AnswerFormat::YesNo | AnswerFormat::Open => (normalize_text(&r.answer) == "yes", false, false),
        AnswerFormat::Numeric => (false, false, true),
    }
}

fn condition(r: &Sample) -> String {
    r.variant.clone().unwrap_or_else(|| "original".into())
}

fn ratio(k: usize, n: usize) -> f64 {
    if n == 0 { 0.0 } else { k as f64 / n as f64 }
}

// ------------------------------------------------------------ one release

struct Task {
    name: String,
    rows: Vec<Sample>,
    ids: Vec<String>,
}

fn read_json(path: &Path) -> Result<serde_json::Value> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// The exported tasks with their rows (in doc_id order), from the export manifest.
fn exported_tasks(export: &Path) -> Result<Vec<Task>> {
    let manifest = read_json(&export.join("manifest.json"))?;
    let mut tasks = Vec::new();
    for t in manifest["tasks"].as_array().ok_or("export manifest.json has no tasks")? {
        let name = t["task"].as_str().ok_or("a task without a name")?.to_string();
        let data = export.join(t["data"].as_str().ok_or("a task without data")?);
        let rows = blindspot::io::parquet::read_samples(&data).map_err(|e| format!("{}: {e}", data.display()))?;
        let ids: Vec<String> =
            t["rows"].as_array().into_iter().flatten().filter_map(|r| r["id"].as_str().map(str::to_string)).collect();
        if ids.len() != rows.len() || rows.iter().zip(&ids).any(|(r, id)| &r.id != id) {
            return Err(format!("{name}: the manifest's ids are not the data file's rows in order").into());
        }
        for r in &rows {
            if r.prompt.as_deref().is_none_or(|p| p.trim().is_empty()) {
                return Err(format!("{name}: row {} is exported with an empty prompt", r.id).into());
            }
        }
        tasks.push(Task { name, rows, ids });
    }
    if tasks.is_empty() {
        return Err(format!("{}: the export has no task", export.display()).into());
    }
    Ok(tasks)
}

/// Runs `cmd` with its output in `log`, killing it after `timeout`.
fn run_logged(mut cmd: Command, log: &Path, timeout: Duration, what: &str) -> Result<()> {
    let file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = file.try_clone().map_err(|e| e.to_string())?;
    let mut child =
        cmd.stdin(Stdio::null()).stdout(file).stderr(err).spawn().map_err(|e| format!("{what}: cannot start: {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{what}: still running after {timeout:?}; killed (log: {})", log.display()).into());
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    if !status.success() {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!("{what} failed ({status}):\n{}", tail.join("\n")).into());
    }
    Ok(())
}

/// lmms-eval with the stub on every task of `export`; returns the folder of
/// its logs.
fn run_lmms_eval(export: &Path, tasks: &[Task], work: &Path) -> Result<PathBuf> {
    let out = work.join("lmms-eval-out");
    let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
    // A working directory that is neither the export nor its parent: the
    // task files must not depend on where lmms-eval is started.
    let cwd = work.join("elsewhere");
    std::fs::create_dir_all(&cwd).map_err(|e| format!("{}: {e}", cwd.display()))?;
    let mut cmd = Command::new(venv_python());
    cmd.current_dir(&cwd)
        .arg(root().join("tests/harness/lmms_eval_stub.py"))
        .args(["--model", "blindspot_stub", "--model_args", &format!("pretrained={MODEL}"), "--include_path"])
        .arg(export)
        .args(["--tasks", &names.join(","), "--log_samples", "--output_path"])
        .arg(&out);
    offline(&mut cmd, work);
    let log = work.join("lmms-eval.log");
    let start = Instant::now();
    run_logged(cmd, &log, HARNESS_TIMEOUT, &format!("lmms-eval on {}", export.display()))?;
    // lmms-eval logs an error that stops the evaluation (a task that does not
    // load, a model that raises) and still exits 0.
    let text = std::fs::read_to_string(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let errors: Vec<&str> =
        text.lines().filter(|l| l.contains("Error during evaluation") || l.starts_with("Traceback")).collect();
    if !errors.is_empty() {
        let tail: Vec<&str> = text.lines().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect();
        return Err(format!(
            "lmms-eval on {} failed (and exited 0):\n{}\n\nits log ends:\n{}",
            export.display(),
            errors.join("\n"),
            tail.join("\n")
        )
        .into());
    }
    eprintln!("lmms-eval ran {} tasks of {} in {:.1}s", tasks.len(), export.display(), start.elapsed().as_secs_f64());
    Ok(out.join(MODEL))
}

/// The one file in `dir` whose name ends with `suffix`.
fn one_file(dir: &Path, suffix: &str) -> Result<PathBuf> {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(suffix)))
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("{}: no file *{suffix}", dir.display()).into()),
        _ => Err(format!("{}: several files *{suffix}: {found:?}", dir.display()).into()),
    }
}

fn response_text(v: &serde_json::Value) -> Option<&str> {
    match v {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Array(a) if a.len() == 1 => response_text(&a[0]),
        _ => None,
    }
}

/// Checks lmms-eval's own outputs: every task in the results with its aggregate,
/// every doc logged with a non-empty prompt, the stub's reply and the row's score.
/// The first 20 problems, and how many more.
fn first_problems(problems: &[String]) -> String {
    let mut out = problems.iter().take(20).cloned().collect::<Vec<_>>().join("\n");
    if problems.len() > 20 {
        out.push_str(&format!("\n... and {} more", problems.len() - 20));
    }
    out
}

fn check_harness_logs(logs: &Path, tasks: &[Task]) -> Result<Vec<PathBuf>> {
    let results = read_json(&one_file(logs, "_results.json")?)?;
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for t in tasks {
        let n = t.rows.len();
        let effective = results["n-samples"][&t.name]["effective"].as_u64();
        if effective != Some(n as u64) {
            problems.push(format!("{}: lmms-eval ran {effective:?} docs, the export has {n} rows", t.name));
            continue;
        }
        let right = t.rows.iter().filter(|r| expected_outcome(r).0).count();
        let aggregate = results["results"][&t.name]["blindspot,none"].as_f64();
        if aggregate != Some(ratio(right, n)) {
            problems.push(format!(
                "{}: lmms-eval's aggregate is {aggregate:?}, the stub must score {right}/{n} = {}",
                t.name,
                ratio(right, n)
            ));
        }
        let file = match one_file(logs, &format!("_samples_{}.jsonl", t.name)) {
            Ok(f) => f,
            Err(e) => {
                problems.push(format!("{}: {}", t.name, e.message().unwrap_or("no samples file")));
                continue;
            }
        };
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut seen = vec![false; n];
        for (line, rec) in text.lines().enumerate() {
            let rec: serde_json::Value =
                serde_json::from_str(rec).map_err(|e| format!("{}:{}: {e}", file.display(), line + 1))?;
            let at = format!("{}:{}", file.display(), line + 1);
            let Some(doc) = rec["doc_id"].as_u64().map(|d| d as usize).filter(|d| *d < n) else {
                problems.push(format!("{at}: doc_id {} is not a row of the export", rec["doc_id"]));
                continue;
            };
            seen[doc] = true;
            let row = &t.rows[doc];
            if rec["input"].as_str().is_none_or(|p| p.trim().is_empty()) {
                problems.push(format!("{at}: row {} was sent with an empty prompt", row.id));
            } else if rec["input"].as_str() != row.prompt.as_deref() {
                problems.push(format!("{at}: row {}: the prompt sent is not the exported prompt", row.id));
            }
            let echo = &rec["blindspot"];
            if echo["id"].as_str() != Some(t.ids[doc].as_str()) {
                problems.push(format!("{at}: utils.py echoed id {} for row {}", echo["id"], t.ids[doc]));
            }
            let reply = response_text(&rec["filtered_resps"]);
            if reply != Some(stub_reply(row)) {
                problems.push(format!("{at}: row {}: the stub replied {reply:?}, not {:?}", row.id, stub_reply(row)));
            }
            // The circular task's rows carry their rotation (k of circular@k); no other row has one.
            let rotation =
                row.variant.as_deref().and_then(|v| v.strip_prefix("circular@")).and_then(|k| k.parse().ok());
            if echo["rotation"].as_i64() != rotation {
                problems.push(format!(
                    "{at}: row {}: utils.py echoed rotation {}, not {rotation:?}",
                    row.id, echo["rotation"]
                ));
            }
            let score = echo["score"].as_i64();
            if score != Some(i64::from(expected_outcome(row).0)) {
                problems.push(format!("{at}: row {}: utils.py scored {score:?}", row.id));
            }
        }
        if let Some(missing) = seen.iter().position(|s| !s) {
            problems.push(format!("{}: doc {missing} ({}) was not logged", file.display(), t.ids[missing]));
        }
        files.push(file);
    }
    if problems.is_empty() {
        Ok(files)
    } else {
        Err(format!("{} problem(s) in lmms-eval's output:\n{}", problems.len(), first_problems(&problems)).into())
    }
}

/// `blindspot metrics` on the logs; checks every condition and CircularEval.
/// `blindspot metrics` on a harness's output files; checks every condition
/// (`rows` answered, `dropped` given but not answered) and CircularEval.
fn check_imported_metrics(
    release: &Path,
    export: &Path,
    files: &[PathBuf],
    rows: &[&Sample],
    dropped: &[&Sample],
    format: &str,
    work: &Path,
) -> Result<()> {
    let out = work.join(format!("metrics-{format}"));
    let mut args: Vec<&Path> = vec![release, Path::new("--predictions")];
    args.extend(files.iter().map(PathBuf::as_path));
    let manifest = export.join("manifest.json");
    let format_path = PathBuf::from(format);
    args.extend([Path::new("--manifest"), &manifest, Path::new("--format"), &format_path]);
    args.extend([Path::new("--strict"), Path::new("-o"), &out]);
    let summary = blindspot_ok(&["metrics", "--release"], &args, "blindspot metrics")?;
    let m = read_json(&out.join("metrics.json"))?;
    let mut expected: BTreeMap<String, Expected> = BTreeMap::new();
    let mut missing: BTreeMap<String, usize> = BTreeMap::new();
    for r in dropped {
        *missing.entry(condition(r)).or_default() += 1;
    }
    for r in rows {
        let (right, abstained, unparsed) = expected_outcome(r);
        let e = expected.entry(condition(r)).or_default();
        e.n += 1;
        e.correct += usize::from(right);
        e.abstained += usize::from(abstained);
        e.unparsed += usize::from(unparsed);
    }
    let conditions = &m["models"][MODEL]["conditions"];
    let mut problems = Vec::new();
    let got_names: Vec<&String> = conditions.as_object().map(|o| o.keys().collect()).unwrap_or_default();
    if got_names != expected.keys().collect::<Vec<_>>() {
        problems.push(format!("conditions {got_names:?}, expected {:?}", expected.keys().collect::<Vec<_>>()));
    }
    for (c, e) in &expected {
        let g = &conditions[c];
        let checks = [
            ("n", g["n"].as_f64(), e.n as f64),
            ("correct", g["correct"].as_f64(), e.correct as f64),
            ("accuracy", g["accuracy"].as_f64(), r6(ratio(e.correct, e.n))),
            ("abstained", g["abstained"].as_f64(), e.abstained as f64),
            ("abstention_rate", g["abstention_rate"].as_f64(), r6(ratio(e.abstained, e.n))),
            ("unparsed", g["unparsed"].as_f64(), e.unparsed as f64),
            ("missing", g["missing"].as_f64(), missing.get(c).copied().unwrap_or(0) as f64),
        ];
        for (field, got, want) in checks {
            if got != Some(want) {
                problems.push(format!("{c}: {field} is {got:?}, the stub must have {want}"));
            }
        }
    }
    // CircularEval: a question is right when every rotation is, over the
    // questions with every rotation answered.
    let mut rotations: BTreeMap<&str, Vec<(String, Option<bool>)>> = BTreeMap::new();
    let answered = rows.iter().map(|r| (*r, true));
    for (r, was_answered) in answered.chain(dropped.iter().map(|r| (*r, false))) {
        if let (Some(v), Some(p)) = (r.variant.as_deref(), r.parent_id.as_deref())
            && v.starts_with("circular@")
        {
            rotations.entry(p).or_default().push((v.to_string(), was_answered.then(|| expected_outcome(r).0)));
        }
    }
    if !rotations.is_empty() {
        let complete: Vec<&Vec<(String, Option<bool>)>> =
            rotations.values().filter(|rs| rs.iter().all(|(_, ok)| ok.is_some())).collect();
        let n = complete.len();
        // `incomplete` counts questions with some rotations answered, not all.
        let some_answered = rotations.values().filter(|rs| rs.iter().any(|(_, ok)| ok.is_some())).count();
        let all = complete.iter().filter(|rs| rs.iter().all(|(_, ok)| *ok == Some(true))).count();
        let first =
            complete.iter().filter(|rs| rs.iter().any(|(v, ok)| v == "circular@0" && *ok == Some(true))).count();
        let ce = &m["models"][MODEL]["derived"]["circular_eval"];
        let checks = [
            ("n", ce["n"].as_f64(), n as f64),
            ("circular_accuracy", ce["circular_accuracy"].as_f64(), r6(ratio(all, n))),
            ("first_rotation_accuracy", ce["first_rotation_accuracy"].as_f64(), r6(ratio(first, n))),
            ("incomplete", ce["incomplete"].as_f64(), (some_answered - n) as f64),
        ];
        for (field, got, want) in checks {
            if got != Some(want) {
                problems.push(format!("circular_eval: {field} is {got:?}, the stub must have {want}"));
            }
        }
    }
    if !problems.is_empty() {
        return Err(format!(
            "blindspot metrics on the {format} output differs from the stub's expected scores:\n{}\n\nits summary:\n{summary}",
            first_problems(&problems)
        )
        .into());
    }
    let line: Vec<String> =
        expected.iter().map(|(c, e)| format!("{c} {}/{} abstained {}", e.correct, e.n, e.abstained)).collect();
    eprintln!("{format}: imported as expected: {}", line.join("; "));
    Ok(())
}

/// `blindspot build` of `pipeline` into `work/releases`; returns the release folder.
fn build_release(pipeline: &Path, release_rel: &str, work: &Path) -> Result<PathBuf> {
    let releases = work.join("releases");
    blindspot_ok(&["build", "--no-cache"], &[pipeline, Path::new("--out-dir"), &releases], "blindspot build")?;
    Ok(releases.join(release_rel))
}

/// The releases of the round trip, built in `tmp`: the demo and the variant
/// fixture (copied to a folder of its own: a build writes beside its
/// pipeline), and with `video` the Video-MME-layout fixture with its video
/// variants. Returns (release, work folder) pairs.
fn releases(tmp: &Path, video: bool) -> Result<Vec<(PathBuf, PathBuf)>> {
    let demo = tmp.join("demo");
    std::fs::create_dir_all(&demo).map_err(|e| e.to_string())?;
    let demo_release = build_release(&root().join("pipelines/vqa-rad.toml"), &common::demo_release(), &demo)?;
    let fixture = tmp.join("fixture");
    let src = root().join("tests/fixtures/good");
    std::fs::create_dir_all(fixture.join("images")).map_err(|e| e.to_string())?;
    for f in ["variants.toml", "variants.jsonl", "variants-captions.json"] {
        std::fs::copy(src.join(f), fixture.join(f)).map_err(|e| format!("{f}: {e}"))?;
    }
    for e in std::fs::read_dir(src.join("images")).map_err(|e| e.to_string())?.flatten() {
        std::fs::copy(e.path(), fixture.join("images").join(e.file_name())).map_err(|e| e.to_string())?;
    }
    let fixture_release = build_release(&fixture.join("variants.toml"), "variants-fixture/1.0.0", &fixture)?;
    let mut out = vec![(demo_release, demo), (fixture_release, fixture)];
    if video {
        let dir = tmp.join("video");
        let src = root().join("tests/fixtures/video/videomme");
        std::fs::create_dir_all(dir.join("videos")).map_err(|e| e.to_string())?;
        for e in std::fs::read_dir(src.join("videos")).map_err(|e| e.to_string())?.flatten() {
            std::fs::copy(e.path(), dir.join("videos").join(e.file_name())).map_err(|e| e.to_string())?;
        }
        std::fs::copy(src.join("videomme.jsonl"), dir.join("videomme.jsonl")).map_err(|e| e.to_string())?;
        let toml = std::fs::read_to_string(src.join("videomme.toml")).map_err(|e| e.to_string())?;
        let toml = toml.split("[diagnose]").next().unwrap_or_default();
        let kinds = "[variants]\nkinds = [\"no_video\", \"mirage\", \"phantom0_video\", \"option_shuffle\"]\n";
        std::fs::write(dir.join("videomme.toml"), format!("{toml}{kinds}")).map_err(|e| e.to_string())?;
        out.push((build_release(&dir.join("videomme.toml"), "videomme-fixture/1.0.0", &dir)?, dir));
    }
    Ok(out)
}

/// Export → lmms-eval → checks → import → checks, for one release.
fn lmms_round_trip(release: &Path, work: &Path) -> Result<()> {
    let written = export_to(release, "lmms-eval", &work.join("export"))?;
    // The task folder is run after a move: nothing in it may name where it was written.
    let export = work.join("moved/lmms-eval-tasks");
    std::fs::create_dir_all(work.join("moved")).map_err(|e| e.to_string())?;
    std::fs::rename(&written, &export).map_err(|e| format!("moving {}: {e}", written.display()))?;
    let tasks = exported_tasks(&export)?;
    // Every CircularEval rotation is in the one `circular` task.
    for t in &tasks {
        let rotations = t.rows.iter().filter(|r| r.variant.as_deref().is_some_and(|v| v.starts_with("circular@")));
        if rotations.count() > 0
            && (!t.name.ends_with("_circular")
                || t.rows.iter().any(|r| r.variant.as_deref().is_none_or(|v| !v.starts_with("circular@"))))
        {
            return Err(format!("{}: CircularEval rows outside one `circular` task", t.name).into());
        }
    }
    let logs = run_lmms_eval(&export, &tasks, work)?;
    let files = check_harness_logs(&logs, &tasks)?;
    let rows: Vec<&Sample> = tasks.iter().flat_map(|t| &t.rows).collect();
    check_imported_metrics(release, &export, &files, &rows, &[], "lmms-eval", work)
}

fn lmms_eval_round_trip() -> Result<()> {
    round_trip("lmms-eval", ensure_venv, lmms_round_trip)
}

/// Installs a harness's venv, then runs its round trip on every release.
fn round_trip(harness: &str, ensure: fn() -> Result<()>, each: fn(&Path, &Path) -> Result<()>) -> Result<()> {
    let start = Instant::now();
    ensure()?;
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    // VLMEvalKit's video datasets are its own named benchmarks, each checked
    // against a fixed md5 and downloaded when it differs: blindspot's export
    // refuses video questions, so only lmms-eval runs the video release.
    for (release, work) in releases(tmp.path(), harness == "lmms-eval")? {
        each(&release, &work)?;
    }
    eprintln!("{harness} round trip passed in {:.0}s", start.elapsed().as_secs_f64());
    Ok(())
}

// ------------------------------------------------------------ VLMEvalKit

/// Offline: nothing may be downloaded; datasets' cache stays in the temporary folder.
fn offline(cmd: &mut Command, work: &Path) {
    cmd.env("HF_HUB_OFFLINE", "1")
        .env("HF_DATASETS_OFFLINE", "1")
        .env("TRANSFORMERS_OFFLINE", "1")
        .env("HF_HUB_DISABLE_TELEMETRY", "1")
        .env("HF_HOME", work.join("hf-home"))
        .env("WANDB_MODE", "disabled")
        .env("WANDB_DISABLED", "true")
        .env("TOKENIZERS_PARALLELISM", "false")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
        .env("TQDM_DISABLE", "1");
}

/// Export → VLMEvalKit's loader, prompts and MCQ scoring → import → checks.
fn vlm_round_trip(release: &Path, work: &Path) -> Result<()> {
    let export = export_to(release, "vlmevalkit", &work.join("export-vlmevalkit"))?;
    let by_id: BTreeMap<String, Sample> = blindspot::io::release_dir::read_configs(release)
        .map_err(|e| e.to_string())?
        .into_iter()
        .flat_map(|c| c.rows)
        .map(|r| (r.id.clone(), r))
        .collect();
    let out = work.join("vlmevalkit-out");
    let log = work.join("vlmevalkit.log");
    let mut cmd = Command::new(vlm_python());
    cmd.current_dir(work)
        .arg(root().join("tests/harness/vlmevalkit_check.py"))
        .arg(&export)
        .arg(&out)
        .env("LMUData", &export);
    offline(&mut cmd, work);
    let start = Instant::now();
    run_logged(cmd, &log, HARNESS_TIMEOUT, &format!("tests/harness/vlmevalkit_check.py on {}", export.display()))?;
    eprintln!("VLMEvalKit checked {} in {:.1}s", export.display(), start.elapsed().as_secs_f64());
    let text = std::fs::read_to_string(&log).map_err(|e| e.to_string())?;
    let reports: BTreeMap<String, serde_json::Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("BLINDSPOT "))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| Some((v["name"].as_str()?.to_string(), v)))
        .collect();
    let manifest = read_json(&export.join("manifest.json"))?;
    let mut problems = Vec::new();
    let (mut scored, mut files, mut dropped_rows) = (Vec::new(), Vec::new(), Vec::new());
    let mut summary = Vec::new();
    for f in manifest["files"].as_array().ok_or("export manifest.json has no files")? {
        let file = f["file"].as_str().unwrap_or_default();
        let name = file.trim_end_matches(".tsv");
        let rows: Vec<&Sample> =
            f["rows"].as_array().into_iter().flatten().filter_map(|r| by_id.get(r["id"].as_str()?)).collect();
        let Some(rep) = reports.get(name) else {
            problems.push(format!("{file}: vlmevalkit_check.py reported nothing (log: {})", log.display()));
            continue;
        };
        if let Some(e) = rep.get("error") {
            problems.push(format!("{file}: VLMEvalKit cannot load it: {e}"));
            continue;
        }
        let has_image_column = f["image_column"].as_str().is_some_and(|c| c != "none");
        // VLMEvalKit's loader drops rows with an empty image cell (skip_noimg).
        let (kept, dropped): (Vec<Indexed>, Vec<Indexed>) =
            rows.iter().copied().enumerate().partition(|(_, r)| !has_image_column || !r.images.is_empty());
        let want_dropped: Vec<String> = dropped.iter().map(|(i, _)| i.to_string()).collect();
        let got_dropped: Vec<String> =
            rep["dropped"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_string)).collect();
        if rep["rows"].as_u64() != Some(rows.len() as u64) || got_dropped != want_dropped {
            problems.push(format!(
                "{file}: VLMEvalKit read {} rows and dropped {got_dropped:?}; the export has {} rows, of which {want_dropped:?} have no image",
                rep["rows"],
                rows.len()
            ));
        }
        let class = rep["class"].as_str().unwrap_or_default();
        if let Some(e) = rep.get("prompt_error") {
            // Known: CustomVQADataset has no prompt without an image column.
            if !(class == "CustomVQADataset"
                && !has_image_column
                && e.as_str().is_some_and(|e| e.contains("image_path")))
            {
                problems.push(format!("{file}: VLMEvalKit ({class}) cannot build its prompts: {e}"));
            }
            summary.push(format!("{name}: {class}, no prompt (image-free VQA)"));
            continue;
        }
        if class == "CustomVQADataset" && !has_image_column {
            problems.push(format!("{file}: VLMEvalKit now prompts an image-free VQA config: update this test"));
        }
        if rep["empty_prompts"].as_array().is_none_or(|a| !a.is_empty()) || rep.get("missing_images").is_some() {
            problems.push(format!("{file}: empty prompts or missing images: {rep}"));
        }
        let right =
            kept.iter().filter(|(_, r)| r.answer_format == AnswerFormat::MultipleChoice && expected_outcome(r).0);
        let want = ratio(right.count(), kept.len());
        match (class, rep["overall"].as_f64()) {
            ("CustomMCQDataset" | "CustomTextMCQDataset", got) if got != Some(want) => problems.push(format!(
                "{file}: VLMEvalKit's own MCQ score is {got:?}, the stub must score {want} on its {} rows",
                kept.len()
            )),
            ("CustomMCQDataset" | "CustomTextMCQDataset", _) => {
                summary.push(format!("{name}: {class}, {} of {} rows, Overall {want:.4}", kept.len(), rows.len()))
            }
            (_, Some(_)) => problems.push(format!("{file}: a score from {class}, which has no scorer")),
            _ => summary.push(format!("{name}: {class}, {} rows prompted, no scorer", kept.len())),
        }
        match rep["result"].as_str() {
            Some(r) => files.push(work.join(r)),
            None => problems.push(format!("{file}: no result file")),
        }
        scored.extend(kept.into_iter().map(|(_, r)| r));
        dropped_rows.extend(dropped.into_iter().map(|(_, r)| r));
    }
    if !problems.is_empty() {
        return Err(format!("VLMEvalKit on {}:\n{}", export.display(), first_problems(&problems)).into());
    }
    eprintln!("VLMEvalKit: {}", summary.join("; "));
    check_imported_metrics(release, &export, &files, &scored, &dropped_rows, "vlmevalkit", work)
}

fn vlmevalkit_round_trip() -> Result<()> {
    round_trip("VLMEvalKit", ensure_vlm_venv, vlm_round_trip)
}

fn main() {
    let args = Arguments::from_args();
    let runs: [(&str, TrialFn); 2] = [(TRIAL, lmms_eval_round_trip), (VLM_TRIAL, vlmevalkit_round_trip)];
    let wanted = runs.iter().filter(|(name, _)| common::selected(&args, name)).count();
    let skip = if required() || wanted == 0 { None } else { not_installed() };
    if let Some(why) = &skip {
        // One line for both trials.
        eprintln!("skipping {wanted} harness round-trip test(s) (lmms-eval, VLMEvalKit): {why}");
    }
    let trials = runs
        .into_iter()
        .map(|(name, run)| match &skip {
            None => Trial::test(name, run),
            Some(why) => {
                let why = format!("the harness round trip cannot run: {why}");
                // Run anyway (--include-ignored), it fails with the reason.
                Trial::test(name, move || Err(why.clone().into())).with_ignored_flag(true)
            }
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
