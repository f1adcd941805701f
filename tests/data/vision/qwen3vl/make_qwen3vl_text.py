#!/usr/bin/python3
"""Derives qwen3vl-tiny.gguf (text model, arch qwen3vl) from ../shared/models/arch/qwen3-tiny.gguf.

Usage: PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 make_qwen3vl_text.py <qwen3-tiny.gguf> <out.gguf>

Recipe (the ONLY changes; everything else - tensors, their order and bytes, tokenizer, other keys and
their order - is copied as is):
  * general.architecture: "qwen3" -> "qwen3vl"
  * every key "qwen3.<rest>" -> "qwen3vl.<rest>" (same type, same value, same position)
  * appended at the end of the KV list, in this order:
      qwen3vl.rope.dimension_sections  ARRAY of INT32 [6, 5, 5, 0]   (sum 16 = head_dim 32 / 2)
      qwen3vl.n_deepstack_layers       UINT32 2                      (= deepstack blocks in the projector)
  * general.name: unchanged ("Qwen3 Tiny Random")
"""
import sys

import numpy as np
from gguf import GGUFReader, GGUFWriter, GGUFValueType

SECTIONS = [6, 5, 5, 0]
N_DEEPSTACK = 2


def field_value(f):
    t = f.types[0]
    if t == GGUFValueType.STRING:
        return bytes(f.parts[f.data[0]]).decode("utf-8")
    if t == GGUFValueType.ARRAY:
        sub = f.types[1]
        if sub == GGUFValueType.STRING:
            return [bytes(f.parts[i]).decode("utf-8") for i in f.data]
        return [f.parts[i].tolist()[0] for i in f.data]
    return f.parts[f.data[0]].tolist()[0]


def main():
    src, dst = sys.argv[1], sys.argv[2]
    r = GGUFReader(src)
    w = GGUFWriter(dst, "qwen3vl")  # writes general.architecture = qwen3vl first, as in the source
    for k, f in r.fields.items():
        if k.startswith("GGUF.") or k == "general.architecture":
            continue
        nk = "qwen3vl." + k[len("qwen3."):] if k.startswith("qwen3.") else k
        t = f.types[0]
        v = field_value(f)
        if t == GGUFValueType.ARRAY:
            w.add_key_value(nk, v, t, sub_type=f.types[1])
        else:
            w.add_key_value(nk, v, t)
    w.add_key_value("qwen3vl.rope.dimension_sections", SECTIONS, GGUFValueType.ARRAY, sub_type=GGUFValueType.INT32)
    w.add_key_value("qwen3vl.n_deepstack_layers", N_DEEPSTACK, GGUFValueType.UINT32)
    for t in r.tensors:
        shape = [int(x) for x in reversed(t.shape.tolist())]
        w.add_tensor(t.name, np.asarray(t.data).reshape(shape), raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
