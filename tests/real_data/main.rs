//! The real-data suite: every test that reads the public benchmarks in
//! `BLINDSPOT_DATA_DIR` (default `../shared/data`, read when the tests run;
//! `scripts/fetch_data.py` fetches a copy from the pinned public sources).
//! Without that folder each test is reported as ignored, and one line says
//! how many and where the data was looked for; `.ci/run` sets
//! `BLINDSPOT_REQUIRE_DATA=1`, which turns a missing folder into a failure.
//!
//! A custom harness (libtest-mimic), because whether the data is there is
//! only known at run time.

#[path = "../common/mod.rs"]
mod common;
mod diagnose;
mod images;
mod ingest;
mod outside;
mod planted;
mod predictions;
mod prune;
mod variants;

use std::path::PathBuf;

use libtest_mimic::{Arguments, Failed, Trial};

/// A module's tests: name and function.
pub type Tests = &'static [(&'static str, fn())];

/// A pipeline of the real-data suite (`tests/pipelines/<name>.toml`).
pub fn pipeline(name: &str) -> PathBuf {
    common::root().join("tests/pipelines").join(format!("{name}.toml"))
}

/// Runs one test, a panic (a failed assertion) reported as a failure.
fn run(test: fn()) -> Result<(), Failed> {
    std::panic::catch_unwind(test).map_err(|e| {
        let msg = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
        Failed::from(msg.unwrap_or_else(|| "the test panicked".into()))
    })
}

fn main() {
    let args = Arguments::from_args();
    let modules: [(&str, Tests); 8] = [
        ("diagnose", diagnose::TESTS),
        ("images", images::TESTS),
        ("ingest", ingest::TESTS),
        ("outside", outside::TESTS),
        ("planted", planted::TESTS),
        ("predictions", predictions::TESTS),
        ("prune", prune::TESTS),
        ("variants", variants::TESTS),
    ];
    let found = common::has_real_data();
    let required = std::env::var("BLINDSPOT_REQUIRE_DATA").as_deref() == Ok("1");
    let dir = common::data_dir();
    let mut trials = Vec::new();
    if required && !found {
        let why = format!(
            "BLINDSPOT_REQUIRE_DATA=1 but no real data at {} (set BLINDSPOT_DATA_DIR; python3 scripts/fetch_data.py fetches a copy)",
            dir.display()
        );
        trials.push(Trial::test("real_data_is_present", move || Err(why.into())));
    }
    let mut skipped = 0;
    for (module, tests) in modules {
        for &(name, test) in tests {
            let trial = Trial::test(format!("{module}::{name}"), move || run(test));
            trials.push(if found {
                trial
            } else {
                skipped += 1;
                trial.with_ignored_flag(true)
            });
        }
    }
    if skipped > 0 {
        println!(
            "real data not found at {}: {skipped} real-data tests skipped (set BLINDSPOT_DATA_DIR, default ../shared/data; python3 scripts/fetch_data.py fetches a copy)",
            dir.display()
        );
    }
    libtest_mimic::run(&args, trials).exit();
}
