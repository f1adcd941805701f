#!/usr/bin/env bash
# Installs what is missing, builds everything (engine, app, CUDA code when nvcc exists, tests) and
# runs the whole suite with CTest. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
extra=()
# Outside a CUDA-capable workstation build one GPU architecture only (compile check, faster).
[ "${CI:-}" = "true" ] && extra+=(-DCMAKE_CUDA_ARCHITECTURES=90)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}"
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
