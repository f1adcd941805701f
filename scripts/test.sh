#!/usr/bin/env bash
# Installs what is missing, builds everything (engine, app, CUDA code when nvcc exists, tests) and
# runs the whole suite with CTest; then builds the engine and its tests again with
# AddressSanitizer + UndefinedBehaviorSanitizer and runs them (any report fails). CI runs exactly
# this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs="$(nproc)"
extra=()
# Outside a CUDA-capable workstation build one GPU architecture only (compile check, faster).
[ "${CI:-}" = "true" ] && extra+=(-DCMAKE_CUDA_ARCHITECTURES=90)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}"
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

# Sanitizers: engine, kernels and their tests (no app, no CUDA).
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPAGEDCHAT_BUILD_APP=OFF -DPAGEDCHAT_ENABLE_CUDA=OFF \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g $san" -DCMAKE_EXE_LINKER_FLAGS="$san"
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"

# libFuzzer: a short run of each file-format parser (GGUF, safetensors, tokenizer.json) and of the
# Jinja chat template interpreter, built with clang.
if command -v clang++ >/dev/null; then
  CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPAGEDCHAT_BUILD_APP=OFF \
    -DPAGEDCHAT_ENABLE_CUDA=OFF
  cmake --build build-fuzz -j"$jobs" --target fuzz_gguf fuzz_safetensors fuzz_tokenizer_json fuzz_jinja
  ctest --test-dir build-fuzz -L fuzz --output-on-failure
fi
