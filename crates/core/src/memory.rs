//! Memory the allocator keeps for idle worker threads, given back between stages.
//!
//! An allocator with per-thread heaps (mimalloc, which the binary links) returns a
//! thread's freed pages to the system only when that thread next allocates. A
//! worker that goes idle after a burst keeps what it freed, so a larger pool holds
//! more of it: the resident set grew with the thread count. [`release_idle`] asks
//! every worker to give its freed pages back; the stages call it at their ends and
//! between the diagnosis's groups. The binary says how ([`set_release`]); a library
//! user's allocator is left alone.

use std::sync::OnceLock;

static RELEASE: OnceLock<fn()> = OnceLock::new();

/// Sets how a thread gives its freed memory back (once; later calls are ignored).
pub fn set_release(release: fn()) {
    let _ = RELEASE.set(release);
}

/// Runs the release set by [`set_release`] on every thread of the current pool, and
/// on the calling thread when it is not one of them; nothing when none is set.
pub fn release_idle() {
    if let Some(release) = RELEASE.get() {
        rayon::broadcast(|_| release());
        if rayon::current_thread_index().is_none() {
            release();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    #[test]
    fn every_worker_and_the_caller_release_once() {
        super::release_idle();
        assert_eq!(CALLS.load(SeqCst), 0, "nothing runs before a release is set");
        super::set_release(|| {
            CALLS.fetch_add(1, SeqCst);
        });
        let pool = rayon::ThreadPoolBuilder::new().num_threads(5).build().unwrap();
        pool.install(super::release_idle);
        assert_eq!(CALLS.load(SeqCst), 5, "once on each of the pool's 5 threads, the caller among them");
        super::release_idle();
        assert_eq!(
            CALLS.load(SeqCst),
            5 + rayon::current_num_threads() + 1,
            "the global pool's threads and the caller"
        );
    }
}
