#!/usr/bin/env bash
# Formats PagedChat's C++ sources (not CUDA) with .clang-format and Debian 12's clang-format 14:
#   bash scripts/format.sh           rewrite the files in place
#   bash scripts/format.sh --check   change nothing; list what is not formatted and fail
# scripts/test.sh runs the check when PAGEDCHAT_FORMAT_CHECK=1.
set -euo pipefail
cd "$(dirname "$0")/.."
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.inc')
else
  mapfile -t files < <(find app cli engine examples kernels tests -name '*.cpp' -o -name '*.h' -o -name '*.inc')
fi
if [ "${1:-}" = "--check" ]; then
  clang-format --dry-run --Werror "${files[@]}"
else
  clang-format -i "${files[@]}"
fi
