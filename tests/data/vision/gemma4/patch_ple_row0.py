#!/usr/bin/python3
"""Writes a copy of gemma4-tiny.gguf whose per_layer_token_embd row 0 (pad/unk, 128 = 8 layers x 16 values) is
multiplied by 4 = sqrt(embedding_length_per_layer_input) EXACTLY: the row is 4 Q8_0 blocks, and only their f16 scales
change (x4 = exponent + 2; asserted exact). ik's build_gemma4 feeds an embedding batch (image tokens) the UNSCALED row 0
as the per-layer token part; transformers feeds per_layer_token_embd[pad_token_id = 0] * sqrt(16). With this copy ik
computes the transformers value (text tokens never read row 0: id 0 is <unk>). Used only to make golden_hf_llm.*.

Usage: PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 patch_ple_row0.py IN.gguf OUT.gguf
"""
import shutil
import sys

import numpy as np
from gguf import GGUFReader


def main():
    src, dst = sys.argv[1], sys.argv[2]
    r = GGUFReader(src)
    t = next(t for t in r.tensors if t.name == "per_layer_token_embd.weight")
    assert t.tensor_type.name == "Q8_0"
    row_len = int(t.shape[0])             # ne[0] = 128
    n_blocks = row_len // 32
    off = int(t.data_offset)
    del r
    shutil.copyfile(src, dst)
    with open(dst, "r+b") as f:
        for b in range(n_blocks):
            pos = off + b * 34
            f.seek(pos)
            d = np.frombuffer(f.read(2), dtype="<f2")[0]
            d4 = np.float16(d * np.float16(4))
            assert float(d4) == 4.0 * float(d), (b, d)
            f.seek(pos)
            f.write(np.array([d4], dtype="<f2").tobytes())
    print(f"{dst}: per_layer_token_embd row 0 ({n_blocks} Q8_0 blocks at file offset {off}) scaled by 4")


if __name__ == "__main__":
    main()
