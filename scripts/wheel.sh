#!/usr/bin/env bash
# Builds the `blindspot-bench` wheel (pyproject.toml: maturin, bindings = "bin")
# from the release build in target/release, then checks it as a new user would
# meet it: a fresh virtual environment, `pip install` of the wheel, and
# `blindspot build --check` of the bundled demo with the installed command,
# which must rebuild every file of the release identical to its lock.
#
# Run after `cargo build --release` (CI runs it right after its release build):
# maturin's cargo call then finds every crate up to date and compiles nothing.
# Prints the wheel's path and the minutes the new user's steps took.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tools=.venv-wheel
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -m venv "$tools"
"$tools/bin/pip" install -q "maturin>=1.5,<2"
rm -rf target/wheels
"$tools/bin/maturin" build --release --out target/wheels 2>&1 | grep -v "^\s*$" | sed 's/^/maturin: /'
wheel=$(ls target/wheels/blindspot_bench-*.whl)
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))"

# The new user's path: a fresh environment, the wheel, the demo's pipeline
# and data (copied, so nothing is written into the repository).
start=$(date +%s)
python3 -m venv "$work/env"
"$work/env/bin/pip" install -q "$root/$wheel"
installed=$(date +%s)
mkdir -p "$work/demo"
cp -r pipelines data "$work/demo/"
cd "$work/demo"
"$work/env/bin/blindspot" --version
"$work/env/bin/blindspot" build --check pipelines/vqa-rad.toml
done_at=$(date +%s)
echo "wheel check passed: pip install $((installed - start)) s, build --check of the demo $((done_at - installed)) s"
