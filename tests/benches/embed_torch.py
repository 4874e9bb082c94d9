"""PyTorch's throughput on exactly the texts `cargo bench --bench embed -- throughput`
embedded: sentence-transformers' all-MiniLM-L6-v2 (the same model folder), CPU,
`torch.set_num_threads(THREADS)`, the same max length, batches of 32, best of 3.

usage: embed_torch.py MODEL_DIR TEXTS_JSON MAX_LENGTH THREADS [BLINDSPOT_RATE]
(`just bench-embed-torch` installs torch and sentence-transformers into
.venv-torch and runs it; TEXTS_JSON is written by the Rust bench.)
"""

import json
import sys
import time

import torch
from sentence_transformers import SentenceTransformer


def main() -> None:
    model_dir, texts_path, max_length, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    ours = float(sys.argv[5]) if len(sys.argv) > 5 else None
    torch.set_num_threads(threads)
    with open(texts_path, encoding="utf-8") as f:
        texts = json.load(f)
    model = SentenceTransformer(model_dir, device="cpu")
    model.max_seq_length = max_length
    lengths = [len(model.tokenizer(t, truncation=True, max_length=max_length)["input_ids"]) for t in texts]
    model.encode(texts[:64], batch_size=32)  # warm-up
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        with torch.inference_mode():
            model.encode(texts, batch_size=32, normalize_embeddings=True)
        best = min(best, time.perf_counter() - start)
    rate = len(texts) / best
    print(
        f"PyTorch {torch.__version__} (sentence-transformers), {threads} threads, {len(texts)} texts "
        f"of {min(lengths)}-{max(lengths)} tokens: {rate:.0f} sentences/s ({best:.2f} s)"
    )
    if ours is not None:
        print(f"blindspot / PyTorch: {ours / rate:.2f}x")


if __name__ == "__main__":
    main()
