"""Functions the task YAMLs written by `blindspot export --to lmms-eval` name.

Every doc is one blindspot row: `prompt` is the exact text to send, `images`
the images to attach (none for image-free variants). `process_results`
echoes blindspot's sample id, variant and expected behaviour with the
prediction, so `--log_samples` output can be imported back into blindspot.
"""

import io
import re

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def doc_to_visual(doc):
    out = []
    for img in doc.get("images") or []:
        if img is None:
            continue
        if hasattr(img, "convert"):
            out.append(img.convert("RGB"))
        elif isinstance(img, dict) and img.get("bytes"):
            from PIL import Image

            out.append(Image.open(io.BytesIO(img["bytes"])).convert("RGB"))
    return out


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return doc["prompt"]


def doc_to_target(doc):
    if doc["answer_format"] == "multiple_choice" and doc.get("answer_index") is not None:
        return LETTERS[doc["answer_index"]]
    return doc["answer"]


def _norm(text):
    return " ".join(str(text).lower().strip().strip(".").split())


def _last_line(text):
    lines = [line for line in str(text).strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def score(doc, prediction):
    """1 if the prediction gives the row's gold, else 0 (abstaining scores 0)."""
    line = _last_line(prediction)
    fmt = doc["answer_format"]
    if fmt == "multiple_choice" and doc.get("answer_index") is not None:
        options = list(doc["options"])
        letters = LETTERS[: len(options)]
        m = re.search(r"\b([%s])\b" % letters, line)
        if m:
            return int(letters.index(m.group(1)) == doc["answer_index"])
        chosen = [i for i, o in enumerate(options) if _norm(o) and _norm(o) in _norm(line)]
        return int(chosen == [doc["answer_index"]])
    if fmt == "yes_no":
        m = re.search(r"\b(yes|no)\b", line.lower())
        return int(bool(m) and m.group(1) == _norm(doc["answer"]))
    return int(_norm(line) == _norm(doc["answer"]))


def process_results(doc, results):
    prediction = results[0] if results else ""
    return {
        "blindspot": {
            "id": doc["id"],
            "variant": doc.get("variant"),
            "expected": doc.get("expected"),
            "prediction": prediction,
            "score": score(doc, prediction),
        }
    }


def aggregate(results):
    if not results:
        return 0.0
    return sum(r["score"] for r in results) / len(results)
