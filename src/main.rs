//! The `blindspot` binary: parse the command line, call the library, map the
//! result to an exit code — 0 ok, 1 the user's input or data is wrong, 2 a bug.

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
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
