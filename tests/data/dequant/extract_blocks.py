#!/usr/bin/env python3
"""Cuts test blocks for the dequantization reference.

  extract_blocks.py gguf FILE.gguf TENSOR ROWS OUT.blocks  -> the first ROWS rows of TENSOR, as stored
  extract_blocks.py random TYPE COUNT OUT.blocks           -> COUNT blocks of random bytes of TYPE
Standard library only.
"""
import random
import struct
import sys

BLOCK = {"q4_0": (32, 18), "q4_1": (32, 20), "q5_0": (32, 22), "q5_1": (32, 24), "q8_0": (32, 34),
         "q4_K": (256, 144), "q5_K": (256, 176), "q6_K": (256, 210), "iq4_nl": (32, 18), "iq4_xs": (256, 136)}
TYPE_IDS = {2: "q4_0", 3: "q4_1", 6: "q5_0", 7: "q5_1", 8: "q8_0", 12: "q4_K", 13: "q5_K", 14: "q6_K",
            20: "iq4_nl", 23: "iq4_xs"}


def read_gguf(path):
    b = open(path, "rb").read()
    pos = 4

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, b, pos)
        pos += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def string():
        nonlocal pos
        n = take("<Q")
        pos += n
        return b[pos - n:pos].decode()

    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

    def skip_value(t):
        nonlocal pos
        if t == 8:
            string()
        elif t == 9:
            et, n = take("<IQ")
            for _ in range(n):
                skip_value(et)
        else:
            pos += sizes[t]

    version, n_tensors, n_kv = take("<IQQ")
    alignment = 32
    for _ in range(n_kv):
        key = string()
        t = take("<I")
        if key == "general.alignment":
            alignment = take("<I")
        else:
            skip_value(t)
    infos = {}
    for _ in range(n_tensors):
        name = string()
        nd = take("<I")
        dims = [take("<Q") for _ in range(nd)]
        t, off = take("<IQ")
        infos[name] = (dims, t, off)
    data = (pos + alignment - 1) // alignment * alignment
    return b, infos, data


if sys.argv[1] == "gguf":
    _, path, tensor, rows, out = sys.argv[1:]
    b, infos, data = read_gguf(path)
    dims, t, off = infos[tensor]
    elems, size = BLOCK[TYPE_IDS[t]]
    row_bytes = dims[0] // elems * size
    open(out, "wb").write(b[data + off:data + off + int(rows) * row_bytes])
    print(TYPE_IDS[t])
else:
    _, typ, count, out = sys.argv[1:]
    rng = random.Random(7 + list(BLOCK).index(typ))
    open(out, "wb").write(bytes(rng.randrange(256) for _ in range(int(count) * BLOCK[typ][1])))
