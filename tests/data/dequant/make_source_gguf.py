#!/usr/bin/env python3
"""Writes a one-layer Llama GGUF (all F32, random weights) for llama.cpp's llama-quantize.

Only the matrices matter: their rows cover what quantizers meet (tiny, huge, zero, all-positive,
all-negative rows, outliers). Standard library only; the GGUF v3 layout is written by hand.
Usage: make_source_gguf.py OUT.gguf
"""
import random
import struct
import sys

DIM, FF, VOCAB, HEADS = 256, 256, 64, 8
rng = random.Random(20261204)


def row(n, kind):
    scale = 10 ** rng.uniform(-4, 2)
    if kind == 0:
        return [0.0] * n
    if kind == 1:
        return [abs(rng.gauss(0, scale)) for _ in range(n)]
    if kind == 2:
        return [-abs(rng.gauss(0, scale)) for _ in range(n)]
    if kind == 3:  # a few outliers in a quiet row
        r = [rng.gauss(0, scale * 1e-3) for _ in range(n)]
        for _ in range(4):
            r[rng.randrange(n)] = rng.choice([-1, 1]) * scale
        return r
    if kind == 4:  # an offset row (the min of Q4_1 / Q5_1 / K-quants at work)
        base = rng.gauss(0, scale)
        return [base + rng.gauss(0, scale * 0.1) for _ in range(n)]
    return [rng.gauss(0, scale) for _ in range(n)]


def matrix(rows, cols):
    return [x for r in range(rows) for x in row(cols, r % 8)]


def s(text):
    b = text.encode()
    return struct.pack("<Q", len(b)) + b


kv = [
    ("general.architecture", 8, s("llama")),
    ("general.name", 8, s("dequant-source")),
    ("llama.context_length", 4, struct.pack("<I", 128)),
    ("llama.embedding_length", 4, struct.pack("<I", DIM)),
    ("llama.block_count", 4, struct.pack("<I", 1)),
    ("llama.feed_forward_length", 4, struct.pack("<I", FF)),
    ("llama.attention.head_count", 4, struct.pack("<I", HEADS)),
    ("llama.attention.head_count_kv", 4, struct.pack("<I", HEADS)),
    ("llama.attention.layer_norm_rms_epsilon", 6, struct.pack("<f", 1e-5)),
    ("llama.vocab_size", 4, struct.pack("<I", VOCAB)),
    ("general.file_type", 4, struct.pack("<I", 0)),
]
tensors = [("token_embd.weight", [DIM, VOCAB], matrix(VOCAB, DIM)),
           ("output_norm.weight", [DIM], [1.0] * DIM),
           ("output.weight", [DIM, VOCAB], matrix(VOCAB, DIM)),
           ("blk.0.attn_norm.weight", [DIM], [1.0] * DIM),
           ("blk.0.ffn_norm.weight", [DIM], [1.0] * DIM)]
for name in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"):
    tensors.append((f"blk.0.{name}.weight", [DIM, DIM], matrix(DIM, DIM)))

out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv)))
for key, typ, value in kv:
    out += s(key) + struct.pack("<I", typ) + value
offset = 0
for name, dims, values in tensors:
    out += s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
    out += struct.pack("<IQ", 0, offset)
    offset += (4 * len(values) + 31) // 32 * 32
out += b"\0" * (-len(out) % 32)
for _, _, values in tensors:
    data = struct.pack(f"<{len(values)}f", *values)
    out += data + b"\0" * (-len(data) % 32)
open(sys.argv[1], "wb").write(out)
