"""A scikit-learn TsT-RF reference for a multiple-choice benchmark, the way the
authors' release computes blind accuracy: rows in id order, stratified 5-fold on the
gold index (seed 42), features whose statistics come from the training folds only,
one RandomForestClassifier (100 trees, library defaults, n_jobs=2) per fold that
predicts the gold's position, blind accuracy = share of held-out questions whose
predicted position is the gold's. It computes no null and no verdict.

Features (the release's generic families, per option position j): the question's
length in characters and words and its count of numbers; the option count; option
j's length, length rank, longest and shortest flags, words shared with the
question; how often option j's exact text was the gold and was offered in the
training folds, and their ratio.

usage: python tst_reference.py FILE.jsonl ID QUESTION OPTIONS ANSWER_INDEX
prints: "reference TsT-RF: N questions, blind accuracy A, S s (reading, features, 5 folds)"
"""
import json
import re
import sys
import time

start = time.perf_counter()

import numpy as np  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

WORD = re.compile(r"\w+")
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def id_key(value):
    text = str(value)
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def read(path, id_field, question_field, options_field, answer_field):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                rows.append((r[id_field], r[question_field] or "", [str(o) for o in r[options_field]], int(r[answer_field])))
    rows.sort(key=lambda r: id_key(r[0]))
    return rows


def features(rows, train, width):
    gold, seen = {}, {}
    for i in train:
        _, _, options, answer = rows[i]
        for j, o in enumerate(options):
            seen[o] = seen.get(o, 0) + 1
            if j == answer:
                gold[o] = gold.get(o, 0) + 1
    x = np.full((len(rows), 5 + 8 * width), np.nan)
    for i, (_, question, options, _) in enumerate(rows):
        words = set(w.lower() for w in WORD.findall(question))
        lengths = [len(o) for o in options]
        x[i, 0] = len(question)
        x[i, 1] = len(question.split())
        x[i, 2] = len(NUMBER.findall(question))
        x[i, 3] = len(options)
        x[i, 4] = 0.0
        for j, o in enumerate(options):
            c = 5 + 8 * j
            x[i, c] = lengths[j]
            x[i, c + 1] = sum(1 for other in lengths if other > lengths[j])
            x[i, c + 2] = float(lengths[j] == max(lengths))
            x[i, c + 3] = float(lengths[j] == min(lengths))
            x[i, c + 4] = len(words & set(w.lower() for w in WORD.findall(o)))
            g, s = gold.get(o, 0), seen.get(o, 0)
            x[i, c + 5] = g
            x[i, c + 6] = s
            x[i, c + 7] = g / s if s else np.nan
    return x


def main():
    path, id_field, question_field, options_field, answer_field = sys.argv[1:6]
    rows = read(path, id_field, question_field, options_field, answer_field)
    width = max(len(r[2]) for r in rows)
    y = np.array([r[3] for r in rows])
    correct = 0
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=42)
    for train, test in folds.split(np.zeros(len(rows)), y):
        # Statistics from the training fold only; the held-out rows are featurized with them.
        x = np.nan_to_num(features(rows, train, width), nan=-1.0)
        forest = RandomForestClassifier(n_estimators=100, random_state=42, n_jobs=2)
        forest.fit(x[train], y[train])
        correct += int((forest.predict(x[test]) == y[test]).sum())
    seconds = time.perf_counter() - start
    print(
        f"reference TsT-RF: {len(rows)} questions, blind accuracy {correct / len(rows):.4f}, "
        f"{seconds:.2f} s (reading, features, 5 folds)"
    )


if __name__ == "__main__":
    main()
