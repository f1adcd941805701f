#!/usr/bin/python3
"""Derives qwen3vlmoe-tiny.gguf (text model, arch qwen3vlmoe) from shared/models/arch/qwen3moe-tiny.gguf.

Usage: PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 make_qwen3vlmoe_text.py <qwen3moe-tiny.gguf> <out.gguf>

Recipe (the ONLY changes; everything else - tensors, their order, types and bytes, tokenizer, other keys and
their order and types - is copied as is; same recipe as ../qwen3vl/make_qwen3vl_text.py with qwen3 -> qwen3moe):
  * general.architecture: "qwen3moe" -> "qwen3vlmoe" (stays the first key)
  * every key "qwen3moe.<rest>" -> "qwen3vlmoe.<rest>" (same type, same value, same position)
  * appended at the end of the KV list, in this order:
      qwen3vlmoe.rope.dimension_sections  ARRAY of INT32 [6, 5, 5, 0]   (sum 16 = head_dim 32 / 2)
      qwen3vlmoe.n_deepstack_layers       UINT32 2                      (= deepstack blocks in the projector)
  * general.name: unchanged ("qwen3moe-tiny")
The GGUF is written with gguf-py's GGUFWriter defaults (version 3, little-endian, alignment 32).
"""
import sys

from gguf import GGUFReader, GGUFWriter, GGUFValueType

SRC_ARCH = "qwen3moe"
ARCH = "qwen3vlmoe"
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
    if field_value(r.fields["general.architecture"]) != SRC_ARCH:
        sys.exit("source is not a %s GGUF" % SRC_ARCH)
    w = GGUFWriter(dst, ARCH)  # writes general.architecture = qwen3vlmoe first, as in the source
    for k, f in r.fields.items():
        if k.startswith("GGUF.") or k == "general.architecture":
            continue
        nk = ARCH + "." + k[len(SRC_ARCH) + 1:] if k.startswith(SRC_ARCH + ".") else k
        t = f.types[0]
        v = field_value(f)
        if t == GGUFValueType.ARRAY:
            w.add_key_value(nk, v, t, sub_type=f.types[1])
        else:
            w.add_key_value(nk, v, t)
    w.add_key_value(ARCH + ".rope.dimension_sections", SECTIONS, GGUFValueType.ARRAY, sub_type=GGUFValueType.INT32)
    w.add_key_value(ARCH + ".n_deepstack_layers", N_DEEPSTACK, GGUFValueType.UINT32)
    for t in r.tensors:
        # t.data: numpy view in reversed-ne order (F32) or as rows of bytes (quantized, e.g. the Q8_0
        # token_embd/output); with raw_dtype gguf-py writes the same type, ne and bytes
        w.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
