//! The `blindspot` binary: parse the command line, call the library, map the
//! result to an exit code — 0 ok, 1 the user's input or data is wrong, 2 a bug.

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (v2's `mimalloc.h`: the option after
/// `mi_option_eager_commit_delay`, 14, which libmimalloc-sys names, and before
/// `mi_option_use_numa_nodes`, 16).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// Keeps freed memory for a second before handing it back to the system, instead of
/// mimalloc's 10 ms: TsT-RF frees and reallocates megabytes per tree and per fold, and
/// with 10 ms the kernel faults in and zeroes those pages again and again. A
/// `MIMALLOC_PURGE_DELAY` set by the user wins.
#[allow(unsafe_code)]
fn tune_allocator() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one integer option of the allocator this binary links; mimalloc
        // reads options atomically, so this is sound at any time, here before any thread
        // is started.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1000) };
    }
}

/// Gives the calling thread's freed pages back to the system now (`mi_collect`).
#[allow(unsafe_code)]
fn collect_thread_heap() {
    // SAFETY: mi_collect only walks and releases the calling thread's own heap.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

fn main() -> ExitCode {
    tune_allocator();
    blindspot::memory::set_release(collect_thread_heap);
    let cli = match blindspot::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 1 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match std::panic::catch_unwind(|| cli.run()) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("{}", prefixed(&e));
            ExitCode::from(e.exit_code() as u8)
        }
        Err(_) => {
            eprintln!("error: internal error (a bug in blindspot, please report it with the command you ran)");
            ExitCode::from(2)
        }
    }
}

fn prefixed(e: &blindspot::Error) -> String {
    let text = e.to_string();
    if text.starts_with("error:") { text } else { format!("error: {text}") }
}
