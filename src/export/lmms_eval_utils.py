"""Functions the task YAMLs written by `blindspot export --to lmms-eval` name.

Every doc is one blindspot row: `prompt` is the exact text to send, `images`
the images to attach (none for image-free variants). `process_results`
echoes blindspot's sample id, variant and expected behaviour with the
prediction, so `--log_samples` output can be imported back into blindspot.

`score` reads a response by blindspot's own rules (src/predictions/parse.rs):
RULES below holds the very patterns, number words and abstention phrases
blindspot compiles, written here by the export; numbers score exactly, as
`blindspot metrics` does by default.
"""

import io
import re

RULES = __BLINDSPOT_RULES__

_P = {name: re.compile(p) for name, p in RULES["patterns"].items()}
_NUMBER_WORDS = RULES["number_words"]
_ABSTAIN = re.compile(
    "(?i)"
    + "|".join(
        r"\s+".join(re.escape(w).replace("'", "['\u2018\u2019`]") for w in phrase.split(" "))
        for phrase in RULES["abstain_phrases"]
    )
)

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


def normalize_text(s):
    cleaned = "".join(c if c.isalnum() or c == "." else " " for c in str(s).lower())
    words = (w.strip(".") for w in cleaned.split())
    return " ".join(w for w in words if w and w not in ("a", "an", "the"))


def _contains_words(hay, needle):
    return bool(needle) and (" %s " % needle) in (" %s " % hay)


def _letter_index(m, n):
    if len(m) != 1:
        return None
    i = ord(m) - ord("A")
    return i if 0 <= i < n else None


def _letters(pattern, text, n):
    out = []
    for m in pattern.finditer(text):
        i = _letter_index(m.group(1) or "", n)
        if i is not None:
            out.append(i)
    return out


def unbox(text):
    if "\\boxed" not in text:
        return text
    return _P["boxed"].sub(r"[[\1]]", _P["latex_text"].sub(r"\1", text))


def parse_choice(response, options):
    """(index, explicit) or None, as parse_choice in parse.rs."""
    n = min(len(options), 26)
    if n == 0:
        return None
    text = response.strip()
    for marker in (_P["double_bracket"], _P["marker_letter"]):
        found = _letters(marker, text, n)
        if found:
            # Two final answers that disagree: unparsed.
            return (found[-1], True) if len(set(found)) == 1 else None
    for pattern in (_P["only_letter"], _P["leading_letter"]):
        found = _letters(pattern, text, n)
        if found:
            return (found[-1], True)
    if _P["only_letter"].search(text) or _P["leading_letter"].search(text):
        return None
    norm = normalize_text(text)
    opts = [normalize_text(o) for o in options[:n]]
    for i, o in enumerate(opts):
        if o and o == norm:
            return (i, False)
    hits = [i for i in range(n) if _contains_words(norm, opts[i])]
    maximal = [i for i in hits if not any(j != i and opts[j] != opts[i] and _contains_words(opts[j], opts[i]) for j in hits)]
    if len(maximal) == 1:
        return (maximal[0], False)
    found = _letters(_P["paren_letter"], text, n)
    return (found[-1], False) if found else None


def _word(s):
    first = normalize_text(s).split()
    if first and first[0] in ("yes", "no"):
        return first[0] == "yes"
    return None


def parse_yes_no(response):
    text = response.strip()
    for pattern in (_P["double_bracket"], _P["marker_text"]):
        ms = list(pattern.finditer(text))
        if ms and _word(ms[-1].group(1)) is not None:
            return (_word(ms[-1].group(1)), True)
    norm = normalize_text(text)
    if _word(norm) is not None:
        return (_word(norm), True)
    found = [m.group(1) == "yes" for m in _P["yes_no"].finditer(norm)]
    if found and all(found):
        return (True, False)
    if found and not any(found):
        return (False, False)
    return None


def _last_number(text):
    digits = None
    for m in _P["number"].finditer(text):
        digits = (m.end(), m.group(0))
    word = None
    pos = 0
    for w in re.split(r"[^0-9A-Za-z\u00C0-\uFFFF]", text.lower()):
        end = pos + len(w)
        if w in _NUMBER_WORDS:
            word = (end, float(_NUMBER_WORDS.index(w)))
        pos = end + 1
    d = None
    if digits is not None:
        try:
            d = float(digits[1].replace(",", ""))
        except ValueError:
            d = None
    if d is not None and word is not None:
        return word[1] if word[0] > digits[0] else d
    if d is not None:
        return d
    return word[1] if word is not None else None


def parse_number(response):
    text = response.strip()
    marked = [v for v in (_last_number(m.group(1)) for m in _P["double_bracket"].finditer(text)) if v is not None]
    if not marked:
        marked = [float(m.group(1).replace(",", "")) for m in _P["marker_number"].finditer(text)]
    if marked:
        return (marked[-1], True) if all(v == marked[-1] for v in marked) else None
    v = _last_number(text)
    return None if v is None else (v, False)


def open_answer(response):
    text = response.strip()
    ms = list(_P["double_bracket"].finditer(text))
    if ms:
        return (ms[-1].group(1), True)
    lines = [line for line in text.splitlines() if line.strip()]
    m = _P["marker_text"].search(lines[-1]) if lines else None
    if m:
        return (m.group(1), True)
    return (text, False)


def abstains(text):
    return _ABSTAIN.search(text) is not None


def score(doc, prediction):
    """1 if the response gives the row's gold, else 0 (abstaining scores 0)."""
    text = str(prediction or "")
    if not text.strip():
        return 0
    text = unbox(text)
    fmt = doc["answer_format"]
    if fmt == "multiple_choice":
        c = parse_choice(text, list(doc.get("options") or []))
        if c is None or (not c[1] and abstains(text)):
            return 0
        return int(doc.get("answer_index") is not None and c[0] == doc["answer_index"])
    if fmt == "yes_no":
        v = parse_yes_no(text)
        if v is None or (not v[1] and abstains(text)):
            return 0
        return int(v[0] == (normalize_text(doc["answer"]) == "yes"))
    if fmt == "numeric":
        v = parse_number(text)
        if v is None or (not v[1] and abstains(text)):
            return 0
        gold = parse_number(str(doc["answer"]))
        return int(gold is not None and v[0] == gold[0])
    answer, explicit = open_answer(text)
    if not explicit and abstains(text):
        return 0
    gold = normalize_text(doc["answer"])
    return int(bool(gold) and normalize_text(answer) == gold)


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
