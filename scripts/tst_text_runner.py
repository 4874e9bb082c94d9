#!/usr/bin/env python3
"""A reference outside scorer for `blindspot diagnose --scores`: a text-only model
trained k-fold on the benchmark itself, on the folds TsT-RF uses.

    blindspot diagnose BENCH --out diag --export-folds folds
    python3 scripts/tst_text_runner.py folds scores.jsonl
    blindspot diagnose BENCH --out diag --scores scores.jsonl

For each fold K it trains on folds/fold-K/train.jsonl only (the only rows that
carry a gold) and gives every row of folds/fold-K/heldout.jsonl a probability
for each answer it considers:

- multiple choice: a logistic regression over (prompt, option) pairs, TF-IDF of
  the prompt and of the option text plus a token for the option's position, label
  1 for the gold option; a question's option scores are normalised to sum to 1
  and keyed by option letter;
- yes/no, open and numeric: a logistic regression on the prompt's TF-IDF over
  the answers seen in training, keyed by answer text (an answer never seen in
  training is not listed: blindspot reads it as probability 0).

Each output line is {"id", "probabilities", "fold", "assignment_hash"}, ids
sorted, the hash copied from the fold files; blindspot takes the gold's
probability and the most probable answer from it. A GPU runner (a LoRA-tuned 7B
model) reads the same files and writes the same lines. Needs scikit-learn (CPU,
deterministic).
"""

import json
import sys
from pathlib import Path

import numpy as np
from scipy.sparse import hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def vectorizer():
    return TfidfVectorizer(ngram_range=(1, 2), min_df=1, sublinear_tf=True)


def fit_proba(x_train, y_train, x_test):
    """Class probabilities of x_test, columns in sorted label order, and the labels."""
    labels = sorted(set(y_train))
    if len(labels) == 1:
        return np.ones((x_test.shape[0], 1)), labels
    model = LogisticRegression(C=1.0, max_iter=2000)
    model.fit(x_train, y_train)
    return model.predict_proba(x_test), list(model.classes_)


def pair_texts(rows):
    """(prompt, option + position token) per option of each row, and each row's slice."""
    prompts, options, spans = [], [], []
    for r in rows:
        start = len(prompts)
        for i, o in enumerate(r["options"]):
            prompts.append(r["prompt"])
            options.append(f"{o} __position{i}")
        spans.append((start, len(prompts)))
    return prompts, options, spans


def score_multiple_choice(train, heldout):
    if not heldout:
        return []
    tp, to, tspans = pair_texts(train)
    hp, ho, hspans = pair_texts(heldout)
    y = np.zeros(len(tp), dtype=int)
    for r, (a, _) in zip(train, tspans):
        y[a + r["gold_index"]] = 1
    vp, vo = vectorizer().fit(tp), vectorizer().fit(to)
    x_train = hstack([vp.transform(tp), vo.transform(to)]).tocsr()
    x_test = hstack([vp.transform(hp), vo.transform(ho)]).tocsr()
    proba, labels = fit_proba(x_train, y, x_test)
    positive = proba[:, labels.index(1)] if 1 in labels else np.zeros(len(hp))
    out = []
    for r, (a, b) in zip(heldout, hspans):
        s = positive[a:b]
        total = s.sum()
        p = s / total if total > 0 else np.full(b - a, 1.0 / (b - a))
        out.append({letter(i): float(v) for i, v in enumerate(p)})
    return out


def letter(i):
    """An option's key: A-Z, then its 1-based number (as blindspot labels options)."""
    return chr(ord("A") + i) if i < 26 else str(i + 1)


def norm(answer):
    return " ".join(str(answer).lower().split())


def score_classes(train, heldout):
    """Yes/no, open and numeric: a classifier over the training answers."""
    if not heldout:
        return []
    v = vectorizer().fit([r["prompt"] for r in train])
    proba, labels = fit_proba(
        v.transform([r["prompt"] for r in train]),
        [norm(r["gold"]) for r in train],
        v.transform([r["prompt"] for r in heldout]),
    )
    return [{c: float(proba[j, i]) for i, c in enumerate(labels)} for j in range(len(heldout))]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: tst_text_runner.py FOLDS_DIR SCORES.jsonl")
    folds, out = Path(sys.argv[1]), Path(sys.argv[2])
    meta = json.loads((folds / "folds.json").read_text(encoding="utf-8"))
    lines = []
    k = 0
    while (folds / f"fold-{k}").is_dir():
        train = read_jsonl(folds / f"fold-{k}" / "train.jsonl")
        heldout = read_jsonl(folds / f"fold-{k}" / "heldout.jsonl")
        for fmt in sorted({r["answer_format"] for r in heldout}):
            tr = [r for r in train if r["answer_format"] == fmt]
            ho = [r for r in heldout if r["answer_format"] == fmt]
            scorer = score_multiple_choice if fmt == "multiple_choice" else score_classes
            for r, probs in zip(ho, scorer(tr, ho)):
                # Six decimals; an answer rounded to 0 is left out (it reads as 0).
                probs = {k: round(min(1.0, max(0.0, v)), 6) for k, v in probs.items()}
                probs = {k: v for k, v in probs.items() if v > 0}
                lines.append({"id": r["id"], "probabilities": probs, "fold": r["fold"], "assignment_hash": r["assignment_hash"]})
        k += 1
    lines.sort(key=lambda row: row["id"].encode("utf-8"))
    with open(out, "w", encoding="utf-8") as f:
        for row in lines:
            f.write(json.dumps(row) + "\n")
    print(f"{len(lines)} questions scored from {k} folds (assignment {meta['assignment_hash'][:12]}) -> {out}")


if __name__ == "__main__":
    main()
