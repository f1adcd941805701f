#!/usr/bin/env bash
# The IQ4_NL and IQ4_XS part of the dequantization reference, from ik_llama.cpp (commit 8337e4cd3,
# built CPU-only outside the repo, e.g. cmake -B build -DGGML_NATIVE=ON && cmake --build build):
# its llama-quantize --pure on the random one-layer model of make_source_gguf.py, and its ggml's
# to_float on those blocks and on random bytes.
#   bash make_reference_ik.sh /path/to/ik_llama.cpp /path/to/ik_llama.cpp/build
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ik="$(cd "$1" && pwd)"
build="$(cd "$2" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
lib="$(dirname "$(find "$build" -name 'libggml.so' | head -1)")"
cc -O2 -I"$ik/ggml/include" "$here/dequantize_ggml_ik.c" -L"$lib" -lggml -Wl,-rpath,"$lib" -o "$work/dequantize"
python3 "$here/make_source_gguf.py" "$work/f32.gguf"
for q in IQ4_NL IQ4_XS; do
  "$build/bin/llama-quantize" --pure "$work/f32.gguf" "$work/$q.gguf" "$q" 1 >/dev/null 2>&1
  type="$(python3 "$here/extract_blocks.py" gguf "$work/$q.gguf" blk.0.attn_q.weight 16 "$here/quantized.$q.blocks")"
  mv "$here/quantized.$q.blocks" "$here/quantized.$type.blocks"
  case "$type" in iq4_xs) count=16 ;; *) count=128 ;; esac  # 4096 values of random bytes
  python3 "$here/extract_blocks.py" random "$type" "$count" "$here/random.$type.blocks"
  for kind in quantized random; do
    "$work/dequantize" "$type" "$here/$kind.$type.blocks" "$here/$kind.$type.f32"
  done
done
sha256sum "$here"/*.iq4_*.blocks "$here"/*.iq4_*.f32 >"$here/SHA256SUMS.ik"
