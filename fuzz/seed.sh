#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from tests/fixtures (once; the corpus is gitignored
# and grows as the fuzzer finds new paths). The targets that take a selector
# byte first get it prepended. Needs a blindspot binary as $1 for the Parquet seed.
set -euo pipefail
cd "$(dirname "$0")"
fx=../tests/fixtures
seed() { # target name [selector] < file
    mkdir -p "corpus/$1"
    local out="corpus/$1/$2"
    if [ -n "${3:-}" ]; then { printf "\\x$3"; cat; } > "$out"; else cat > "$out"; fi
}
[ -d corpus ] && exit 0
for f in $fx/good/*.jsonl $fx/bad/*.jsonl $fx/predictions/questions.jsonl; do
    seed ingest_jsonl "$(basename "$f")" < "$f"
    seed ingest_canonical "$(basename "$f")" < "$f"
    seed predictions_generic "$(basename "$f")" 00 < "$f"
    seed predictions_detect "$(basename "$f")" 01 < "$f"
done
for f in $fx/good/*.json $fx/bad/*.json; do
    seed ingest_json "$(basename "$f")" < "$f"
    seed predictions_detect "$(basename "$f")" 00 < "$f"
done
seed ingest_json lines.jsonl < $fx/good/canonical.jsonl
for f in $fx/good/*.csv $fx/bad/*.csv; do
    seed ingest_csv "$(basename "$f")" 00 < "$f"
    seed predictions_generic "$(basename "$f")" 02 < "$f"
done
for f in $fx/bad/*.tsv; do
    seed ingest_vlmevalkit "$(basename "$f")" < "$f"
    seed ingest_csv "$(basename "$f")" 01 < "$f"
    seed predictions_vlmevalkit "$(basename "$f")" 00 < "$f"
done
printf 'index\tprediction\tanswer\n0\tA\tA\n1\tThe answer is B\tB\n' | seed predictions_vlmevalkit result.tsv 00
printf 'index,prediction,answer\n0,A,A\n1,"B, surely",B\n' | seed predictions_vlmevalkit result.csv 01
seed predictions_vlmevalkit result.xlsx 02 < $fx/predictions/vlmevalkit_result.xlsx
printf '{"doc_id": 0, "task_name": "vqa_rad", "resps": [["yes"]], "filtered_resps": ["yes"]}\n{"doc_id": 1, "doc": {"id": "b"}, "resps": [["B"]]}\n' \
    | seed predictions_lmms_eval samples.jsonl
printf '{"logs": [{"doc_id": 0, "resps": [["no"]]}]}' | seed predictions_lmms_eval logs.json
printf '{"vlmevalkit": {"Bench_no_image": ["a", "b"]}}' | seed predictions_detect manifest.json 00
for f in $fx/good/images/*.png $fx/bad/images/*; do
    seed ingest_image "$(basename "$f")" < "$f"
done
for f in ../pipelines/*.toml ../pipelines/examples/*.toml $fx/good/*.toml $fx/bad/*.toml; do
    seed pipeline_file "$(basename "$f")" < "$f"
done
if [ -n "${1:-}" ]; then
    tmp=$(mktemp -d)
    "$1" ingest $fx/good/canonical.jsonl -o "$tmp/c.parquet" >/dev/null 2>&1 && seed ingest_parquet canonical.parquet < "$tmp/c.parquet"
    "$1" ingest $fx/good/letters.csv -o "$tmp/l.parquet" >/dev/null 2>&1 && seed ingest_parquet letters.parquet < "$tmp/l.parquet"
    rm -rf "$tmp"
fi
mkdir -p corpus/ingest_parquet
