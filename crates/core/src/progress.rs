//! Progress bars on stderr, drawn only when stderr is a terminal (indicatif
//! hides itself otherwise), so logs and pipes stay clean.

use indicatif::{ProgressBar, ProgressStyle};

static STAGE: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// Names the enclosing stage (`ibp 3/7`) in front of every bar drawn until the
/// guard is dropped, which restores the name before it.
pub fn stage(name: impl Into<String>) -> StageGuard {
    let mut current = STAGE.lock().unwrap_or_else(|e| e.into_inner());
    let before = std::mem::replace(&mut *current, name.into());
    StageGuard { before }
}

/// Restores the stage name when dropped (see [`stage`]).
pub struct StageGuard {
    before: String,
}

impl Drop for StageGuard {
    fn drop(&mut self) {
        *STAGE.lock().unwrap_or_else(|e| e.into_inner()) = std::mem::take(&mut self.before);
    }
}

/// A bar for `len` steps, labelled with the stage (see [`stage`]) and `msg`.
pub fn bar(len: u64, msg: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len} ({eta})") {
        pb.set_style(style.progress_chars("=> "));
    }
    let stage = STAGE.lock().map(|s| s.clone()).unwrap_or_default();
    pb.set_message(if stage.is_empty() { msg.to_string() } else { format!("{stage} · {msg}") });
    pb
}

/// A spinner for work of unknown length.
pub fn spinner(msg: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

static TIMINGS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns per-stage timing lines on stderr on (`build --timings`).
pub fn enable_timings() {
    TIMINGS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Runs `f`; with timings on, prints `stage <name>: <s> s wall, peak RSS <MB> MB`
/// on stderr (the process's high-water mark so far, from /proc where there is one).
/// Never written into any data file.
pub fn timed<T>(name: &str, f: impl FnOnce() -> T) -> T {
    timed_labelled(f, |_| name.to_string())
}

/// [`timed`], with the stage's name made from its result (what it found or did).
pub fn timed_labelled<T>(f: impl FnOnce() -> T, name: impl FnOnce(&T) -> String) -> T {
    if !TIMINGS.load(std::sync::atomic::Ordering::Relaxed) {
        let out = f();
        crate::memory::release_idle();
        return out;
    }
    let start = std::time::Instant::now();
    let out = f();
    crate::memory::release_idle();
    let secs = start.elapsed().as_secs_f64();
    let rss = peak_rss_kb().map(|kb| format!(", peak RSS so far {} MB", kb / 1024)).unwrap_or_default();
    let now = status_kb("VmRSS:").map(|kb| format!(" (now {} MB)", kb / 1024)).unwrap_or_default();
    eprintln!("stage {}: {secs:.2} s wall{rss}{now}", name(&out));
    out
}

/// The process's peak resident set (VmHWM) in KB, where /proc says it.
pub fn peak_rss_kb() -> Option<u64> {
    status_kb("VmHWM:")
}

/// A KB figure of /proc/self/status (`VmHWM:`, `VmRSS:`).
fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
