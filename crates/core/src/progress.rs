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

/// Runs `f`; with timings on, prints `stage <name>: <s> s wall, <s> s CPU (<x>
/// cores busy), peak RSS <MB> MB` on stderr: the process's user and system time
/// over the stage, all threads together, so CPU ÷ wall below the thread count
/// marks a stage that leaves cores idle; the peak is the process's high-water
/// mark so far, from /proc where there is one. Never written into any data file.
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
    let cpu_start = cpu_seconds();
    let out = f();
    crate::memory::release_idle();
    let secs = start.elapsed().as_secs_f64();
    let cpu = match (cpu_start, cpu_seconds()) {
        (Some(a), Some(b)) => format!(", {:.3} s CPU ({:.2} cores busy)", b - a, (b - a) / secs.max(1e-9)),
        _ => String::new(),
    };
    let rss = peak_rss_kb().map(|kb| format!(", peak RSS so far {} MB", kb / 1024)).unwrap_or_default();
    let now = status_kb("VmRSS:").map(|kb| format!(" (now {} MB)", kb / 1024)).unwrap_or_default();
    eprintln!("stage {}: {secs:.3} s wall{cpu}{rss}{now}", name(&out));
    out
}

/// The user and system CPU time of the whole process so far (every thread), in seconds.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn cpu_seconds() -> Option<f64> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole `rusage` into the pointer it is given and
    // touches nothing else; the struct is read only when it reports success.
    let usage = unsafe {
        if libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) != 0 {
            return None;
        }
        usage.assume_init()
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(secs(usage.ru_utime) + secs(usage.ru_stime))
}

/// The process's CPU time, where the platform does not report it.
#[cfg(not(unix))]
pub fn cpu_seconds() -> Option<f64> {
    None
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

#[cfg(all(test, unix))]
mod tests {
    /// A busy loop of 0.3 s of wall time on this thread is counted as CPU time:
    /// at least a sixth of it (a loaded machine shares the core), at most the
    /// wall time on every core (other test threads run beside it).
    #[test]
    fn cpu_seconds_counts_a_busy_loop() {
        let before = super::cpu_seconds().unwrap();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed().as_secs_f64() < 0.3 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let wall = start.elapsed().as_secs_f64();
        let used = super::cpu_seconds().unwrap() - before;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        assert!(used >= 0.05 && used <= wall * cores + 0.05, "{used} s CPU over {wall} s wall on {cores} cores");
    }
}
