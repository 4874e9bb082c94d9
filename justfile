# blindspot's recipes; .ci/run does what `just ci` does.

# Build every pipelines/*.toml into releases/ (the bundled demo: VQA-RAD).
build:
    cargo run --release -- build

# The whole test suite. The real-data suite reads BLINDSPOT_DATA_DIR
# (default ../shared/data) and is skipped, with a count, when it is absent.
test:
    cargo test

# Formatting and lints, as CI runs them.
lint:
    cargo fmt --check
    cargo clippy --all-targets -- -D warnings

# Throughput figures (printed, not asserted): ingest and Parquet writing.
bench:
    cargo bench --bench ingest

# Regenerate schemas/*.json from the Rust types.
schemas:
    cargo run -- schema --out schemas

# Everything CI checks.
ci:
    bash .ci/run
