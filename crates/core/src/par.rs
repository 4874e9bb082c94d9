//! Parallel loops whose memory does not grow with the thread pool.
//!
//! A job that holds a large working set (a fold's feature matrices, a cross-fit
//! block's statistics tables) is run at most `width` at a time, whatever the
//! number of threads: memory is bounded by `width`, and the jobs' own inner
//! parallelism keeps a large pool busy.

use rayon::prelude::*;

/// `job(i)` for every `i` in `0..n`, results in index order, with at most `width` jobs
/// started and not finished at any time: `width` workers take the next index as
/// they finish one. A job may itself run in parallel.
pub fn bounded_map<R: Send>(n: usize, width: usize, job: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<R>>> = std::sync::Mutex::new((0..n).map(|_| None).collect());
    (0..width.max(1).min(n)).into_par_iter().for_each(|_| {
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if i >= n {
                break;
            }
            let out = job(i);
            results.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[i] = Some(out);
        }
    });
    let results = results.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    results.into_iter().map(|out| out.expect("every job index is taken once")).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    use super::*;

    #[test]
    fn bounded_map_runs_at_most_width_jobs_at_once_whatever_the_pool() {
        // Jobs that are parallel inside, as a fold's forest is: a thread waiting on
        // its own job's parts steals whatever it finds, other jobs included.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(16).build().unwrap();
        for width in [1, 2, 4] {
            let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
            let out = pool.install(|| {
                bounded_map(40, width, |i| {
                    most.fetch_max(running.fetch_add(1, SeqCst) + 1, SeqCst);
                    let parts: usize = (0..64)
                        .into_par_iter()
                        .map(|part| {
                            std::thread::sleep(std::time::Duration::from_micros(200));
                            part
                        })
                        .sum();
                    running.fetch_sub(1, SeqCst);
                    i * parts
                })
            });
            assert_eq!(out, (0..40).map(|i| i * (0..64).sum::<usize>()).collect::<Vec<_>>());
            let most = most.load(SeqCst);
            assert!((width.min(2)..=width).contains(&most), "{most} jobs ran at once, width {width}");
        }
        assert!(bounded_map(0, 4, |i| i).is_empty());
        assert_eq!(bounded_map(3, 0, |i| i), [0, 1, 2]);
    }
}
