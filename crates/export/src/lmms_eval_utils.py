"""Functions the task YAMLs written by `blindspot export --to lmms-eval` name.

Every doc is one blindspot row: `prompt` is the exact text to send, `images`
the images to attach (none for image-free variants), `videos` the video files
(written under `videos/` beside this file) and `video_frames` the frames of
videos given as frames. `process_results`
echoes blindspot's sample id, variant and expected behaviour with the
prediction (and, in the `circular` task, the row's CircularEval rotation), so
`--log_samples` output can be imported back into blindspot.

`score` reads a response by blindspot's own rules (crates/predictions/src/parse.rs):
RULES below holds the very patterns, number words and abstention phrases
blindspot compiles, written here by the export; numbers score exactly, as
`blindspot metrics` does by default.
"""

import io
import os
import re

# Video files the export wrote beside this file (`videos/<path>`).
VIDEO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "videos")

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
    # A video file is handed over by its path, as lmms-eval's video tasks do
    # (the model's own loader decodes it); a video given as frames, as its
    # frames in order.
    for video in doc.get("videos") or []:
        if isinstance(video, dict) and video.get("path"):
            out.append(os.path.join(VIDEO_DIR, video["path"]))
    for frames in doc.get("video_frames") or []:
        for frame in frames or []:
            if isinstance(frame, dict) and frame.get("bytes"):
                from PIL import Image

                out.append(Image.open(io.BytesIO(frame["bytes"])).convert("RGB"))
            elif hasattr(frame, "convert"):
                out.append(frame.convert("RGB"))
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


def plain(text):
    """The response without markup around its answer, as plain in parse.rs."""
    t = unbox(text)
    t = _P["latex_delimiter"].sub("", t)
    t = _P["dollar_math"].sub(r"\1", t)
    t = _P["bold_stars"].sub(r"\1", t)
    return _P["bold_underscores"].sub(r"\1", t)


def _collapsed(s):
    return " ".join(str(s).split())


def parse_choice(response, options):
    """(index, explicit) or None, as parse_choice in parse.rs."""
    n = min(len(options), 26)
    if n == 0:
        return None
    raw = _collapsed(response)
    same = [i for i in range(n) if raw and _collapsed(options[i]) == raw]
    by_rules = _choice_by_rules(plain(response), options, n)
    if len(same) == 1:
        if by_rules is not None and by_rules[0] != same[0]:
            return None
        return (same[0], True)
    if len(same) > 1:
        return None
    return by_rules


def _choice_by_rules(response, options, n):
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
    equal = [i for i, o in enumerate(opts) if o and o == norm]
    if len(equal) == 1:
        return (equal[0], False)
    if len(equal) > 1:
        return None
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


def _numbers(text):
    found = []
    for m in _P["number"].finditer(text):
        try:
            found.append((m.end(), float(m.group(0).replace(",", ""))))
        except ValueError:
            pass
    pos = 0
    for w in re.split(r"[^0-9A-Za-z\u00C0-\uFFFF]", text.lower()):
        end = pos + len(w)
        if w in _NUMBER_WORDS:
            found.append((end, float(_NUMBER_WORDS.index(w))))
        pos = end + 1
    found.sort(key=lambda x: x[0])
    return found


def _last_number(text):
    found = _numbers(text)
    return found[-1][1] if found else None


def _final_answers(text):
    bracketed = [m.group(1) for m in _P["double_bracket"].finditer(text)]
    if bracketed:
        return bracketed
    out = []
    for m in _P["answer_marker"].finditer(text):
        rest = text[m.end():].split("\n", 1)[0]
        end = _P["sentence_end"].search(rest)
        out.append(rest[: end.start()] if end else rest)
    return out


def parse_number(response):
    text = response.strip()
    marked = None
    for answer in _final_answers(text):
        values = [v for _, v in _numbers(answer)]
        if not values:
            continue
        if any(v != values[0] for v in values) or (marked is not None and marked != values[0]):
            return None
        marked = values[0]
    if marked is not None:
        return (marked, True)
    v = _last_number(text)
    return None if v is None else (v, False)


def gold_number(s):
    """A numeric gold read strictly, as sample::parse_number in blindspot."""
    t = str(s).strip()
    if not t or "_" in t or any(c.isalpha() and c not in "eE" for c in t):
        return None
    if "," in t:
        m = re.match(r"[-+]?[0-9,]*", t)
        head, rest = m.group(0), t[m.end():]
        groups = head.lstrip("-+").split(",")
        if not 1 <= len(groups[0]) <= 3 or any(len(g) != 3 for g in groups[1:]) or "," in rest:
            return None
        t = t.replace(",", "")
    try:
        v = float(t)
    except ValueError:
        return None
    return v if v == v and abs(v) != float("inf") else None


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
    raw = text
    text = plain(text)
    fmt = doc["answer_format"]
    if fmt == "multiple_choice":
        c = parse_choice(raw, list(doc.get("options") or []))
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
        gold = gold_number(doc["answer"])
        return int(gold is not None and v[0] == gold)
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
            "rotation": doc.get("rotation"),
            "prediction": prediction,
            "score": score(doc, prediction),
        }
    }


def aggregate(results):
    if not results:
        return 0.0
    return sum(r["score"] for r in results) / len(results)
