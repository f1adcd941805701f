#!/usr/bin/env bash
# Remakes the reference of test_dequant_llamacpp: llama.cpp b4747's quantizer (llama-quantize
# --pure) and dequantizer (ggml's to_float) on a random one-layer model, and on random bytes.
#   bash make_reference.sh /path/to/llama.cpp-b4747-checkout
# The checkout is built CPU-only in its own build-cpu/ folder; nothing of it is kept here.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
llama="$(cd "$1" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cmake -S "$llama" -B "$llama/build-cpu" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF >/dev/null
cmake --build "$llama/build-cpu" -j"$(nproc)" --target llama-quantize ggml-base >/dev/null
cc -O2 -I"$llama/ggml/include" "$here/dequantize_ggml.c" -L"$llama/build-cpu/bin" -lggml-base \
  -Wl,-rpath,"$llama/build-cpu/bin" -o "$work/dequantize_ggml"
python3 "$here/make_source_gguf.py" "$work/f32.gguf"
for q in Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q4_K_S Q5_K_S Q6_K; do
  "$llama/build-cpu/bin/llama-quantize" --pure "$work/f32.gguf" "$work/$q.gguf" "$q" 1 >/dev/null 2>&1
  type="$(python3 "$here/extract_blocks.py" gguf "$work/$q.gguf" blk.0.attn_q.weight 16 "$here/quantized.$q.blocks")"
  mv "$here/quantized.$q.blocks" "$here/quantized.$type.blocks"
  case "$type" in *_K) count=16 ;; *) count=128 ;; esac  # 4096 values of random bytes
  python3 "$here/extract_blocks.py" random "$type" "$count" "$here/random.$type.blocks"
  for kind in quantized random; do
    "$work/dequantize_ggml" "$type" "$here/$kind.$type.blocks" "$here/$kind.$type.f32"
  done
done
sha256sum "$here"/*.blocks "$here"/*.f32 >"$here/SHA256SUMS"
