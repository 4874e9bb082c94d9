"""blindspot's forest against the fastest random-forest peers on the same fold
matrices (written by `blindspot diagnose --export-features`): scikit-learn's
RandomForestClassifier, XGBoost's XGBRFClassifier and LightGBM in "rf" mode,
each with 100 trees and 2 threads, 5-fold fit + predict, best of 3.

Runs are paired: with --blindspot-cmd the script runs blindspot's bench binary
(one repeat per call) right before every peer run, in the order blindspot,
scikit-learn, blindspot, XGBoost, blindspot, LightGBM, and so three rounds, so
that a busy machine slows both sides of a pair alike. The ratio column is the
median over rounds of (peer run / the blindspot run just before it), with the
range: on a shared machine one quiet moment can make a single best-of figure
misleading, a pair's ratio much less so. Without --blindspot-cmd,
--blindspot-seconds and --blindspot-accuracy give a figure measured elsewhere.

Labels are class indices (float in the files); each fold's training classes are
encoded as 0..k-1 (XGBoost requires it), and a test question whose class never
occurs in its training fold counts as wrong for every tool. Features are passed
as float64 with NaN for missing values; each tool converts them as it would in
use, inside the timed section.

XGBoost and LightGBM run on OpenMP with its default wait policy, as a user
gets them; OMP_WAIT_POLICY is printed and left to the caller. It matters here:
on a 2-core machine shared with other work, OpenMP's spinning idle threads
take the core from the thread doing the work (both peers ran about 6x slower
under a load of 6), while OMP_WAIT_POLICY=PASSIVE made LightGBM about 9x
slower on an idle machine. Read a table with the load printed beside it.

With --pick-largest the folder given is the export folder itself, and the
group with the most rows is taken (ties: most columns, then most bytes on
disk, then name), e.g. one skill of `blindspot synth`'s five equal ones.

usage: python forest_peers.py EXPORT_DIR/<group> [--blindspot-cmd CMD]
           [--blindspot-seconds S --blindspot-accuracy A] [--blindspot-version V]
           [--rounds 3] [--tools sklearn,xgboost,lightgbm[,lightgbm-node]]
       python forest_peers.py EXPORT_DIR --pick-largest [...]
"""
import argparse
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

TREES = 100
THREADS = 2
SEED = 42


def load(path):
    table = pq.read_table(path)
    names = [n for n in table.column_names if n not in ("id", "label", "answer")]
    x = np.column_stack([table.column(n).to_numpy(zero_copy_only=False).astype(np.float64) for n in names])
    y = table.column("label").to_numpy(zero_copy_only=False).astype(np.int64)
    return np.ascontiguousarray(x), y


def load_folds(d):
    folds = []
    k = 0
    while (d / f"r0_f{k}_train.parquet").exists():
        folds.append((load(d / f"r0_f{k}_train.parquet"), load(d / f"r0_f{k}_test.parquet")))
        k += 1
    if not folds:
        sys.exit(f"{d}: no r0_f0_train.parquet; pass a group folder of `blindspot diagnose --export-features`")
    return folds


def pick_largest(root):
    """The group folder of `root` with the most rows (see the module doc for ties)."""
    sizes = []
    for d in sorted(p for p in root.iterdir() if (p / "r0_f0_train.parquet").exists()):
        files = list(d.glob("r0_f*_*.parquet"))
        rows = sum(pq.read_metadata(f).num_rows for f in d.glob("r0_f*_test.parquet"))
        cols = pq.read_metadata(d / "r0_f0_train.parquet").num_columns
        size = sum(f.stat().st_size for f in files)
        sizes.append(((rows, cols, size), d))
        print(f"  {d.name}: {rows} rows, {cols} columns, {size} bytes")
    if not sizes:
        sys.exit(f"{root}: no group folder with r0_f0_train.parquet")
    best = max(sizes, key=lambda t: (t[0], [-ord(c) for c in t[1].name]))[1]
    print(f"largest group: {best.name}")
    return best


def sklearn_model(n_features):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=TREES, n_jobs=THREADS, random_state=SEED)


def xgboost_model(n_features):
    from xgboost import XGBRFClassifier

    return XGBRFClassifier(n_estimators=TREES, tree_method="hist", n_jobs=THREADS, random_state=SEED)


def lgbm_fraction(n_features):
    """sqrt(p) of p features as a fraction, as RandomForestClassifier's max_features="sqrt"."""
    return max(1, int(math.sqrt(n_features))) / n_features


def lightgbm_rf(**sampling):
    """LightGBM's "rf" boosting with bagging as a random forest's bootstrap;
    `sampling` says where sqrt(p) features are drawn (per tree or per split)."""
    from lightgbm import LGBMClassifier

    return LGBMClassifier(
        boosting_type="rf",
        n_estimators=TREES,
        subsample=0.632,
        subsample_freq=1,
        n_jobs=THREADS,
        random_state=SEED,
        verbose=-1,
        **sampling,
    )


def lightgbm_model(n_features):
    return lightgbm_rf(colsample_bytree=lgbm_fraction(n_features))


def lightgbm_node_model(n_features):
    """sqrt(p) features per split rather than per tree, as a random forest does
    (an extra, not in the default --tools)."""
    return lightgbm_rf(colsample_bynode=lgbm_fraction(n_features))


def version(module):
    return __import__(module).__version__


# name, module for the version, model factory, the settings it runs with (beyond
# what the factory names: the library's defaults that differ from a plain RF).
PEERS = {
    "sklearn": (
        "scikit-learn",
        "sklearn",
        sklearn_model,
        lambda p: f"RandomForestClassifier(n_estimators={TREES}, n_jobs={THREADS}): "
        "bootstrap, sqrt(p) features per split, Gini, fully grown, exact thresholds",
    ),
    "xgboost": (
        "XGBoost",
        "xgboost",
        xgboost_model,
        lambda p: f'XGBRFClassifier(n_estimators={TREES}, tree_method="hist", n_jobs={THREADS}): '
        "defaults subsample=0.8 without replacement, colsample_bynode=0.8, max_depth=6, 256 bins",
    ),
    "lightgbm": (
        "LightGBM",
        "lightgbm",
        lightgbm_model,
        lambda p: f'LGBMClassifier(boosting_type="rf", n_estimators={TREES}, subsample=0.632, '
        f"subsample_freq=1, colsample_bytree={lgbm_fraction(p):.3f} (sqrt({p}) of {p} per tree), "
        f"n_jobs={THREADS}, verbose=-1): defaults num_leaves=31, 255 bins",
    ),
    "lightgbm-node": (
        "LightGBM per-split",
        "lightgbm",
        lightgbm_node_model,
        lambda p: f'LGBMClassifier(boosting_type="rf", n_estimators={TREES}, subsample=0.632, '
        f"subsample_freq=1, colsample_bynode={lgbm_fraction(p):.3f} (sqrt({p}) of {p} per split), "
        f"n_jobs={THREADS}, verbose=-1): defaults num_leaves=31, 255 bins",
    ),
}


def run_peer(factory, folds):
    """One 5-fold fit + predict: (seconds, hits, total)."""
    start = time.perf_counter()
    hits = total = 0
    for (x, y), (xt, yt) in folds:
        classes, y_enc = np.unique(y, return_inverse=True)
        if len(classes) == 1:
            pred = np.full(len(yt), classes[0])
        else:
            model = factory(x.shape[1])
            model.fit(x, y_enc)
            pred = classes[np.asarray(model.predict(xt)).astype(np.int64).ravel()]
        hits += int((pred == yt).sum())
        total += len(yt)
    return time.perf_counter() - start, hits, total


LINE = re.compile(r": ([0-9.]+) s, blind accuracy ([0-9.]+)\s*$")


def run_blindspot(cmd, group):
    """One call of the bench binary with one repeat: (seconds, accuracy)."""
    out = subprocess.run(cmd + [str(group), "--repeats", "1"], check=True, capture_output=True, text=True).stdout
    last = out.strip().splitlines()[-1]
    m = LINE.search(last)
    if not m:
        sys.exit(f"blindspot bench: cannot read its last line {last!r}")
    return float(m.group(1)), float(m.group(2)), last


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("group", type=Path)
    ap.add_argument("--blindspot-cmd", help="the forest bench binary (the group folder and --repeats 1 are appended)")
    ap.add_argument("--blindspot-seconds", type=float)
    ap.add_argument("--blindspot-accuracy", type=float)
    ap.add_argument("--blindspot-version", default="?")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pick-largest", action="store_true", help="GROUP is an export folder: take its largest group")
    ap.add_argument("--tools", default="sklearn,xgboost,lightgbm")
    a = ap.parse_args()
    if not a.blindspot_cmd and (a.blindspot_seconds is None or a.blindspot_accuracy is None):
        ap.error("give --blindspot-cmd, or both --blindspot-seconds and --blindspot-accuracy")

    if a.pick_largest:
        a.group = pick_largest(a.group)
    folds = load_folds(a.group)
    n_rows = sum(len(y) for _, (_, y) in folds)
    p = folds[0][0][0].shape[1]
    n_classes = len(np.unique(np.concatenate([y for (_, y), _ in folds])))
    print(f"{a.group}: {len(folds)} folds, {n_rows} test rows in all, {p} features, {n_classes} classes")
    print(f"blindspot: forest bench, {TREES} trees, bootstrap, sqrt(p) features per split, Gini, fully grown, "
          f"binned features, folds side by side, {THREADS} threads")
    tools = [t.strip() for t in a.tools.split(",") if t.strip()]
    for t in tools:
        if t not in PEERS:
            sys.exit(f"--tools: unknown {t!r} (known: {', '.join(PEERS)})")
        print(f"{PEERS[t][0]}: {PEERS[t][3](p)}")
    print(f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset (OpenMP default)')}")
    print(f"each: {a.rounds} rounds of 5-fold fit + predict, "
          + ("paired with a blindspot run before each" if a.blindspot_cmd else "blindspot figure given"))
    sys.stdout.flush()

    cmd = shlex.split(a.blindspot_cmd) if a.blindspot_cmd else None
    ours = {t: [] for t in tools}  # blindspot's (seconds, accuracy) paired with each peer
    theirs = {t: [] for t in tools}  # (seconds, accuracy)
    versions = {}
    for t in tools:
        try:
            versions[t] = version(PEERS[t][1])
        except ImportError as e:
            print(f"{PEERS[t][0]}: not installed ({e}); left out")
    tools = [t for t in tools if t in versions]
    for r in range(a.rounds):
        for t in tools:
            if cmd:
                s, acc, _ = run_blindspot(cmd, a.group)
                ours[t].append((s, acc))
                print(f"  round {r + 1}: blindspot {s:.3f} s", flush=True)
            s, hits, total = run_peer(PEERS[t][2], folds)
            theirs[t].append((s, hits / total))
            print(f"  round {r + 1}: {PEERS[t][0]} {s:.3f} s", flush=True)

    if cmd:
        all_ours = [x for t in tools for x in ours[t]]
    else:
        all_ours = [(a.blindspot_seconds, a.blindspot_accuracy)]
    rows = [("blindspot", a.blindspot_version, all_ours, None)]
    for t in tools:
        if cmd:
            ratios = [p[0] / o[0] for p, o in zip(theirs[t], ours[t])]
        else:
            ratios = [p[0] / a.blindspot_seconds for p in theirs[t]]
        rows.append((PEERS[t][0], versions[t], theirs[t], ratios))

    print()
    head = "time / blindspot's, paired (median, range)" if cmd else "time / blindspot's given time"
    print(f"| tool | version | best of {a.rounds} (s) | median (s) | blind accuracy | {head} |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name, ver, runs, ratios in rows:
        secs = [s for s, _ in runs]
        best, med = min(secs), statistics.median(secs)
        acc = runs[-1][1]
        if ratios is None:
            ratio = "1"
        else:
            ratio = f"{statistics.median(ratios):.1f}x ({min(ratios):.1f}-{max(ratios):.1f})"
        n = f" ({len(secs)} runs)" if name == "blindspot" and len(secs) != a.rounds else ""
        print(f"| {name} | {ver} | {best:.3f}{n} | {med:.3f} | {acc:.4f} | {ratio} |")


if __name__ == "__main__":
    main()
