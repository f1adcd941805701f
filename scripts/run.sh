#!/usr/bin/env bash
# Installs what is missing, builds PagedChat (Release) and starts the app on the default model
# (../shared/models/stories260K). Extra arguments go to the app, e.g. --model PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DPAGEDCHAT_BUILD_TESTS=OFF
cmake --build build-release -j"$(nproc)"
exec ./build-release/app/pagedchat "$@"
