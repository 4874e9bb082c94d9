"""Checks a blindspot release with the tools people load it with.

Usage: check_release.py RELEASE_DIR [--text-only]

(--text-only: the benchmark has no images, so no image column is expected.)

Run by tests/interop.rs inside the pinned venv (tests/python/requirements.txt)
with HF_HUB_OFFLINE=1, HF_DATASETS_OFFLINE=1 and HF_HOME in a temporary folder.
Checks, every failure collected and printed before exiting 1:
  - the card's YAML front matter has `configs` and `dataset_info` (with split
    sizes for every config);
  - `datasets.load_dataset(DIR, "default", split="test")` loads, and so does
    every other config in the card, every split with the card's num_examples;
    image columns come back as PIL images (every row; not in `duplicates`,
    whose rows are pairs of questions); a `rotation` column (the `circular`
    config) is int32 and equals k of each row's `circular@k`;
  - pyarrow reads every Parquet file in the release, and each has the
    `huggingface` key (valid JSON with info.features) in its schema metadata;
  - `mlcroissant validate --jsonld croissant.json` passes when croissant.json
    exists; with BLINDSPOT_REQUIRE_CROISSANT=1 it must exist.
"""

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import datasets
import PIL.Image
import pyarrow
import pyarrow.parquet as pq
import yaml

failures = []


class CardWarnings(logging.Handler):
    """Collects what `datasets` says it ignored in the card."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.ignored = []

    def emit(self, record):
        message = record.getMessage()
        if "dataset_info" in message or "dataset card" in message:
            self.ignored.append(message)


card_warnings = CardWarnings()
logging.getLogger("datasets").addHandler(card_warnings)


def fail(message):
    failures.append(message)
    print(f"FAIL {message}", flush=True)


def ok(message):
    print(f"ok   {message}", flush=True)


def front_matter(card: Path):
    text = card.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 4)
    if end < 0:
        return None
    return yaml.safe_load(text[4 : end + 1])


def expected_sizes(meta):
    """{config: {split: num_examples}} from dataset_info (a list or one mapping)."""
    info = meta.get("dataset_info")
    if info is None:
        return None
    entries = info if isinstance(info, list) else [info]
    out = {}
    for entry in entries:
        name = entry.get("config_name", "default")
        out[name] = {s["name"]: s.get("num_examples") for s in entry.get("splits") or []}
    return out


def image_columns(features):
    """Names of columns typed Image, or a list/sequence of Image."""
    cols = []
    for name, feat in features.items():
        inner = getattr(feat, "feature", None)
        if isinstance(feat, datasets.Image) or isinstance(inner, datasets.Image):
            cols.append(name)
    return cols


TEXT_ONLY = "--text-only" in sys.argv[2:]


def check_images(config, split, ds):
    if TEXT_ONLY or config == "duplicates":
        return
    cols = image_columns(ds.features)
    if not cols:
        fail(f"config {config} split {split}: no image column typed Image (features: {ds.features})")
        return
    for col in cols:
        checked = 0
        for i, value in enumerate(ds[col]):
            values = value if isinstance(value, list) else [value]
            for v in values:
                if not isinstance(v, PIL.Image.Image):
                    fail(f"config {config} split {split} row {i} column {col}: {type(v).__name__}, not a PIL image")
                    return
                checked += 1
        ok(f"config {config} split {split}: column {col}: {checked} PIL images")


def check_rotation(config, split, ds):
    """A `rotation` column (the CircularEval config) is int32 and is each row's k of `circular@k`."""
    if "rotation" not in ds.features:
        return
    feature = ds.features["rotation"]
    if getattr(feature, "dtype", None) != "int32":
        fail(f"config {config} split {split}: rotation is typed {feature}, not int32")
        return
    wrong = [
        (i, v, r)
        for i, (v, r) in enumerate(zip(ds["variant"], ds["rotation"]))
        if not (v or "").startswith("circular@") or int(v.split("@", 1)[1]) != r
    ]
    if wrong:
        fail(f"config {config} split {split}: rotation disagrees with the variant in rows {wrong[:5]}")
    else:
        ok(f"config {config} split {split}: rotation is the k of circular@k in all {len(ds)} rows")


def check_config(root, config, sizes):
    split_sizes = (sizes or {}).get(config)
    if split_sizes is None:
        fail(f"config {config}: not in the card's dataset_info, so its row counts cannot be checked")
        split_sizes = {}
    try:
        loaded = datasets.load_dataset(str(root), config)
    except Exception as e:  # noqa: BLE001 - any failure to load is the finding
        fail(f"config {config}: load_dataset failed: {type(e).__name__}: {e}")
        return
    for split, ds in loaded.items():
        want = split_sizes.get(split)
        if want is None:
            fail(f"config {config} split {split}: no num_examples in the card")
        elif len(ds) != want:
            fail(f"config {config} split {split}: {len(ds)} rows, the card says {want}")
        else:
            ok(f"config {config} split {split}: {len(ds)} rows, as the card says")
        check_images(config, split, ds)
        check_rotation(config, split, ds)
    for split in split_sizes:
        if split not in loaded:
            fail(f"config {config}: the card lists split {split}, load_dataset found none")


def main():
    root = Path(sys.argv[1]).resolve()
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        if os.environ.get(var) != "1":
            fail(f"{var} is not 1: the check must not touch the network")
    print(f"datasets {datasets.__version__}, pyarrow {pyarrow.__version__}", flush=True)

    meta = front_matter(root / "README.md")
    if meta is None:
        fail("README.md has no YAML front matter")
        meta = {}
    configs = [c["config_name"] for c in meta.get("configs") or []]
    if "default" not in configs:
        fail(f"the card's configs {configs} have no 'default'")
    sizes = expected_sizes(meta)
    if sizes is None:
        fail("the card has no dataset_info: row counts cannot be checked against it")

    # The load a user runs: `load_dataset(path, "default", split="test")`.
    try:
        ds = datasets.load_dataset(str(root), "default", split="test")
        want = (sizes or {}).get("default", {}).get("test")
        if want is not None and len(ds) != want:
            fail(f'load_dataset(dir, "default", split="test"): {len(ds)} rows, the card says {want}')
        else:
            ok(f'load_dataset(dir, "default", split="test"): {len(ds)} rows')
    except Exception as e:  # noqa: BLE001
        fail(f'load_dataset(dir, "default", split="test") failed: {type(e).__name__}: {e}')

    for config in configs:
        check_config(root, config, sizes)

    # Without the card: the Parquet metadata alone must type the images.
    data_files = sorted(str(p) for p in (root / "data").glob("*.parquet"))
    try:
        plain = datasets.load_dataset("parquet", data_files={"test": data_files}, split="test")
        check_images("parquet-only", "test", plain)
    except Exception as e:  # noqa: BLE001
        fail(f'load_dataset("parquet", data_files=data/*.parquet) failed: {type(e).__name__}: {e}')

    for message in sorted(set(card_warnings.ignored)):
        fail(f"datasets ignored part of the card: {message}")

    parquet_files = sorted(root.rglob("*.parquet"))
    if not parquet_files:
        fail("no Parquet file in the release")
    for path in parquet_files:
        rel = path.relative_to(root)
        try:
            table = pq.read_table(path)
        except Exception as e:  # noqa: BLE001
            fail(f"{rel}: pyarrow cannot read it: {e}")
            continue
        metadata = table.schema.metadata or {}
        raw = metadata.get(b"huggingface")
        if raw is None:
            fail(f"{rel}: no 'huggingface' key in the Parquet schema metadata")
            continue
        try:
            features = json.loads(raw)["info"]["features"]
        except (ValueError, KeyError, TypeError) as e:
            fail(f"{rel}: the 'huggingface' metadata is not {{info: {{features}}}}: {e}")
            continue
        missing = [c for c in table.column_names if c not in features]
        if missing:
            fail(f"{rel}: columns without a huggingface feature: {missing}")
        else:
            ok(f"{rel}: pyarrow reads {table.num_rows} rows; huggingface features for all {table.num_columns} columns")

    croissant = root / "croissant.json"
    if croissant.exists():
        mlc = Path(sys.executable).parent / "mlcroissant"
        run = subprocess.run([str(mlc), "validate", "--jsonld", str(croissant)], capture_output=True, text=True)
        if run.returncode != 0:
            fail(f"mlcroissant validate --jsonld croissant.json: exit {run.returncode}\n{run.stdout}{run.stderr}")
        else:
            ok("mlcroissant validate --jsonld croissant.json")
    elif os.environ.get("BLINDSPOT_REQUIRE_CROISSANT") == "1":
        fail("BLINDSPOT_REQUIRE_CROISSANT=1 but the release has no croissant.json")
    else:
        print("skip croissant.json: not in the release (set BLINDSPOT_REQUIRE_CROISSANT=1 to require it)", flush=True)

    if failures:
        print(f"\n{len(failures)} check(s) failed", flush=True)
        sys.exit(1)
    print("all checks passed", flush=True)


if __name__ == "__main__":
    main()
