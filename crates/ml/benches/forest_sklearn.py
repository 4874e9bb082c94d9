"""scikit-learn's RandomForestClassifier (100 trees, n_jobs=2) on the fold
matrices exported by `blindspot diagnose --export-features`, for comparison
with `cargo bench --bench forest` on exactly the same input.

usage: python forest_sklearn.py EXPORT_DIR/<group> [BLINDSPOT_SECONDS BLINDSPOT_ACCURACY]
"""
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from sklearn.ensemble import RandomForestClassifier


def load(path):
    table = pq.read_table(path)
    names = [n for n in table.column_names if n not in ("id", "label", "answer")]
    x = np.column_stack([table.column(n).to_numpy(zero_copy_only=False).astype(float) for n in names])
    y = table.column("label").to_numpy(zero_copy_only=False).astype(int)
    return x, y


def main():
    d = Path(sys.argv[1])
    folds = []
    k = 0
    while (d / f"r0_f{k}_train.parquet").exists():
        folds.append((load(d / f"r0_f{k}_train.parquet"), load(d / f"r0_f{k}_test.parquet")))
        k += 1
    best, acc = float("inf"), 0.0
    for _ in range(3):
        start = time.perf_counter()
        hits = total = 0
        for (x, y), (xt, yt) in folds:
            model = RandomForestClassifier(n_estimators=100, n_jobs=2, random_state=42)
            model.fit(x, y)
            hits += int((model.predict(xt) == yt).sum())
            total += len(yt)
        best = min(best, time.perf_counter() - start)
        acc = hits / total
    print(f"scikit-learn: {len(folds)} folds, {folds[0][0][0].shape[1]} features, 100 trees, n_jobs=2: {best:.3f} s, blind accuracy {acc:.4f}")
    if len(sys.argv) > 3:
        ours, our_acc = float(sys.argv[2]), float(sys.argv[3])
        print(f"speed-up: {best / ours:.1f}x; accuracy difference: {100 * (our_acc - acc):+.2f} points")


if __name__ == "__main__":
    main()
