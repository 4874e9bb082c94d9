#!/usr/bin/env python3
"""Obtain the public benchmarks of blindspot's real-data suite.

The real-data tests (tests/real_data/, and the real-data half of
tests/embed.rs) read a folder named by BLINDSPOT_DATA_DIR. This script fills
such a folder. Every file it writes is pinned in scripts/real-data.lock.json
as repository @ commit : path with its sha256: HallusionBench, POPE,
ScienceQA (LLaVA's test conversion, the official splits, captions and
published result files), SugarCrepe, VQA-RAD (with its 315 images) and VSR,
about 55 MB in all, each with the licence file its repository ships.

By default each file is downloaded from

    https://raw.githubusercontent.com/<repository>/<commit>/<path>

With --source DIR the files are copied from a folder of the same layout
instead (another copy of the suite, for a machine that cannot reach GitHub).
Either way every file's sha256 must match the pin. One file is computed, not
fetched: scienceqa/scienceqa_test_flat.jsonl, one JSON line per ScienceQA
test question, parsed out of LLaVA's conversation format (see
`scienceqa_flat` below); its sha256 is pinned too.

Each file is written to a temporary name and renamed into place only once its
hash matches, so an interrupted run leaves no half-written file, and a rerun
keeps the files already there with the right hash. A file that fails its
check is reported (expected and actual sha256) and the script exits 1.

Usage:
    python3 scripts/fetch_data.py [--dest DIR] [--source DIR] [--jobs N]

then run the suite with
    BLINDSPOT_DATA_DIR=DIR BLINDSPOT_REQUIRE_DATA=1 cargo test --test real_data
(a relative DIR is read from the project root).
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import sys
import tempfile
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOCK = os.path.join(ROOT, "scripts", "real-data.lock.json")
RAW = "https://raw.githubusercontent.com/{repository}/{commit}/{path}"


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def safe_dest(dest_dir, rel):
    """The absolute path of `rel` inside `dest_dir`; a pin may not point outside it."""
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{LOCK}: dest {rel!r} is not a plain relative path")
    return os.path.join(dest_dir, *parts)


def write_checked(path, data, want, what):
    """Writes `data` to `path` through a temporary file if its sha256 is `want`."""
    got = sha256_bytes(data)
    if got != want:
        raise ValueError(f"{what}: sha256 {got}, pinned {want}")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".fetch-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def fetch_one(entry, dest_dir, source_dir):
    """Fetches (or copies) one pinned file; returns 'kept', 'copied' or 'downloaded'."""
    path = safe_dest(dest_dir, entry["dest"])
    if os.path.isfile(path) and sha256_file(path) == entry["sha256"]:
        return "kept"
    if source_dir is not None:
        src = safe_dest(source_dir, entry["dest"])
        what = f"{src} (pinned as {entry['repository']} @ {entry['commit'][:12]} : {entry['path']})"
        try:
            with open(src, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ValueError(f"{what}: {e.strerror}") from None
        write_checked(path, data, entry["sha256"], what)
        return "copied"
    url = RAW.format(repository=entry["repository"], commit=entry["commit"],
                     path=urllib.parse.quote(entry["path"]))
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            data = r.read()
    except OSError as e:
        raise ValueError(f"{url}: {e} (no network? --source DIR copies from a local copy)") from None
    write_checked(path, data, entry["sha256"], url)
    return "downloaded"


def scienceqa_flat(conversations):
    """ScienceQA's test questions as flat JSON lines, from LLaVA's conversion.

    Each record of llava_test_CQM-A.json holds one human turn,
    "[<image>\\n]TEXT\\nA. option\\nB. option..." (an option may span lines), and
    one reply, the gold letter. TEXT keeps its "Context: ..." hint. The groups
    follow ScienceQA's own: TXT when the text has a context hint, IMG when the
    question has an image, NO when it has neither.
    """
    lines = []
    for rec in conversations:
        human = next(c["value"] for c in rec["conversations"] if c["from"] == "human")
        letter = next(c["value"] for c in rec["conversations"] if c["from"] == "gpt")
        text = human[len("<image>\n"):] if human.startswith("<image>\n") else human
        text, rest = text.rsplit("\nA. ", 1)
        choices = []
        for next_letter in "BCDE":
            if f"\n{next_letter}. " not in rest:
                break
            choice, rest = rest.split(f"\n{next_letter}. ", 1)
            choices.append(choice)
        choices.append(rest)
        if not re.fullmatch(r"[A-E]", letter) or ord(letter) - ord("A") >= len(choices):
            raise ValueError(f"ScienceQA question {rec['id']}: reply {letter!r} names no option")
        has_image = "image" in rec
        has_context = text.startswith("Context:")
        groups = (["TXT"] if has_context else []) + (["IMG"] if has_image else [])
        lines.append(json.dumps({
            "pid": rec["id"], "split": "test", "text": text, "choices": choices,
            "answer_index": ord(letter) - ord("A"), "answer_letter": letter,
            "has_image": has_image, "image": rec.get("image"), "has_text_context": has_context,
            "context_groups": groups or ["NO"],
        }))
    return ("\n".join(lines) + "\n").encode("utf-8")


RECIPES = {"scienceqa-flat": lambda data: scienceqa_flat(json.loads(data))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dest", default=".blindspot/data",
                    help="folder to fill (default .blindspot/data, relative to the project root)")
    ap.add_argument("--source", help="copy from this folder (same layout) instead of downloading")
    ap.add_argument("--jobs", type=int, default=8, help="files fetched at once (default 8)")
    args = ap.parse_args()
    dest = os.path.abspath(os.path.join(ROOT, args.dest))
    source = os.path.abspath(args.source) if args.source else None
    if source is not None and not os.path.isdir(source):
        print(f"error: --source {args.source}: not a folder", file=sys.stderr)
        return 1
    with open(LOCK, encoding="utf-8") as f:
        lock = json.load(f)
    entries = [dict(file, repository=s["repository"], commit=s["commit"])
               for s in lock["sources"] for file in s["files"]]
    counts, failures = {}, []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        jobs = {pool.submit(fetch_one, e, dest, source): e for e in entries}
        for job in concurrent.futures.as_completed(jobs):
            try:
                how = job.result()
                counts[how] = counts.get(how, 0) + 1
            except ValueError as e:
                failures.append(str(e))
    for d in lock["derived"]:
        path = safe_dest(dest, d["dest"])
        if os.path.isfile(path) and sha256_file(path) == d["sha256"]:
            counts["kept"] = counts.get("kept", 0) + 1
            continue
        src = safe_dest(dest, d["from"])
        if not os.path.isfile(src):
            failures.append(f"{d['dest']}: not computed, its input {d['from']} is missing")
            continue
        with open(src, "rb") as f:
            data = RECIPES[d["recipe"]](f.read())
        try:
            write_checked(path, data, d["sha256"], f"{d['dest']} (computed from {d['from']})")
            counts["computed"] = counts.get("computed", 0) + 1
        except ValueError as e:
            failures.append(str(e))
    done = ", ".join(f"{n} {how}" for how, n in sorted(counts.items())) or "none written"
    total = len(entries) + len(lock["derived"])
    if failures:
        failures.sort()
        for line in failures[:20]:
            print(f"error: {line}", file=sys.stderr)
        if len(failures) > 20:
            print(f"error: ... and {len(failures) - 20} more", file=sys.stderr)
        print(f"error: {len(failures)} of {total} files failed ({done}); rerun to retry them", file=sys.stderr)
        return 1
    print(f"{total} files in {dest}, every sha256 as pinned ({done})")
    print(f"run the real-data suite: BLINDSPOT_DATA_DIR={dest} BLINDSPOT_REQUIRE_DATA=1 cargo test --test real_data")
    return 0


if __name__ == "__main__":
    sys.exit(main())
