//! Shared by the benches (each is its own binary and includes this file).

use std::time::Instant;

/// The allocator of the `blindspot` binary, so each bench times the code as it runs there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The best wall time of `runs` calls of `f`, in seconds, and the last result.
pub fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(v);
    }
    (best, last.expect("at least one run"))
}
