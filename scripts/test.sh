#!/usr/bin/env bash
# Installs what is missing, then checks, builds and tests in five phases (each timed; a summary at the end):
#   format      clang-format --dry-run --Werror over the C++ sources (first: it takes seconds);
#               PAGEDCHAT_FORMAT_CHECK=0 skips it
#   build       everything (engine, app, CLI, CUDA code when nvcc exists, tests) with g++, warnings
#               as errors (PAGEDCHAT_WERROR); the QML module's qmllint (any warning fails;
#               PAGEDCHAT_QMLLINT=0 skips it); lupdate finds every UI string translated; the
#               whole suite with CTest
#   build-san   clang, AddressSanitizer + UndefinedBehaviorSanitizer: the engine, server, CLI and
#               their tests (no app, no CUDA; any report fails), and the libFuzzer targets of every
#               parser (PAGEDCHAT_FUZZ), each run for a bounded time from seeds of the real files
#   build-tsan  g++, ThreadSanitizer: only the engine's threaded parts' tests (thread pool,
#               AsyncLLM, the server); tests/tsan.supp for Qt's uninstrumented internals
# CI runs exactly this (.ci/run). Ninja, one build folder per phase; ccache when installed; lld
# links when installed; libraries and programs are unity-built (PAGEDCHAT_UNITY_BUILD). At the end:
# each phase's time and the 10 slowest compile steps (docs/building.md has the figures).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs="$(nproc)"
common=(-G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
command -v ccache >/dev/null && common+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# lld links the ~60 test programs about 3x faster than ld.bfd (g++ and clang both take it).
linker=()
command -v ld.lld >/dev/null && linker=(-fuse-ld=lld)

phases=()
phase() {  # phase NAME COMMAND...: runs and times one step (a failed one is listed too)
  local name=$1 start=$SECONDS status=0
  shift
  echo "=== $name"
  "$@" || status=$?
  phases+=("$(printf '%-26s %4d s' "$name" $((SECONDS - start)))$([ "$status" -eq 0 ] || echo "  FAILED ($status)")")
  return "$status"
}
# The slowest compile steps of every build folder (.ninja_log: start and end in ms, output).
slowest_steps() {
  local logs=()
  for d in build build-san build-tsan; do [ -f "$d/.ninja_log" ] && logs+=("$d/.ninja_log"); done
  [ ${#logs[@]} -gt 0 ] || return 0
  printf 'slowest compile steps:\n'
  awk 'FNR > 1 && $4 ~ /\.o$/ { split(FILENAME, p, "/"); printf "  %6.1f s  %s: %s\n", ($2 - $1) / 1000, p[1], $4 }' \
    "${logs[@]}" | sort -rn | head -10 || true  # head closes the pipe early: sort's SIGPIPE is no failure
}
summary() {
  printf 'test.sh phases:\n'
  printf '  %s\n' "${phases[@]}"
  printf '  %-26s %4d s\n' total "$SECONDS"
  printf '  disk free: %s\n' "$(df -h --output=avail . 2>/dev/null | tail -1 | tr -d ' ')"
  slowest_steps
}
trap summary EXIT
# A folder configured before with another generator (Makefiles) is started afresh.
configure() {
  local dir=$1
  shift
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$dir/CMakeCache.txt"; then
    rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
  fi
  cmake -S . -B "$dir" "${common[@]}" "$@"
}

# --- 0. formatting: the C++ sources follow .clang-format (`bash scripts/format.sh` applies it) ----
if [ "${PAGEDCHAT_FORMAT_CHECK:-1}" = "1" ]; then
  phase "format" bash scripts/format.sh --check
fi

# --- 1. everything, g++, -Werror --------------------------------------------------------------
extra=()
# Outside a CUDA-capable workstation build one GPU architecture only (compile check, faster).
[ "${CI:-}" = "true" ] && extra+=(-DCMAKE_CUDA_ARCHITECTURES=90)
# PAGEDCHAT_APP_AUTOMATION: pagedchat-automation, the app with the --automation test hook, for the
# crash tests; it is never installed, so the package test_packaging makes from this build has none.
# -g1 (line tables, enough for backtraces) instead of -g: a third less compile time per file.
phase "build: configure" configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPAGEDCHAT_WERROR=ON \
  -DPAGEDCHAT_APP_AUTOMATION=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_EXE_LINKER_FLAGS="${linker[*]}" "${extra[@]}"
phase "build: compile" cmake --build build -j"$jobs"
# qmllint over the QML module (README, "Tests and the bug net"): any warning fails. Qt 6.4's
# qmllint exits non-zero on a warning; the output is also searched for one, so that a qmllint
# that only prints it fails the same. On by default (the module is clean); PAGEDCHAT_QMLLINT=0
# skips it locally.
qmllint_check() {
  local out status=0
  out="$(cmake --build build -j"$jobs" --target all_qmllint 2>&1)" || status=$?
  printf '%s\n' "$out"
  if [ "$status" -ne 0 ] || grep -q '^Warning:' <<<"$out"; then
    echo "qmllint: warnings in the QML (above); fix them, or suppress a qmllint false positive with"
    echo "a '// qmllint disable <category>' comment that says why"
    return 1
  fi
}
if [ "${PAGEDCHAT_QMLLINT:-1}" = "1" ]; then
  phase "build: qmllint" qmllint_check
fi
# Every string the UI shows has its Korean translation: lupdate (the update_translations target)
# over the sources must leave translations/*.ts as committed, with nothing unfinished.
translations_check() {
  cmake --build build --target update_translations >/dev/null || return 1
  local bad=0
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && ! git diff --quiet -- translations; then
    git diff --stat -- translations
    echo "translations: lupdate found new or changed UI strings: translate them in translations/*.ts and commit"
    bad=1
  fi
  if grep -l 'type="unfinished"' translations/*.ts; then
    echo "translations: the files above have untranslated strings (type=\"unfinished\")"
    bad=1
  fi
  return "$bad"
}
phase "build: translations" translations_check
phase "build: ctest" ctest --test-dir build --output-on-failure -j"$jobs"
# Under CI the next phases need the disk more than this folder's object files (about 2 GB): a
# linker writing into a full disk dies with SIGBUS, as one CI run's lld did. Programs stay.
free_objects() { [ "${CI:-}" = "true" ] && find "$1" -name '*.o' -delete; return 0; }
free_objects build

# --- 2. ASan + UBSan, and libFuzzer, clang ----------------------------------------------------
# Debug with -O1 -g1 (line tables for the reports): the per-ISA kernel files are not built at -O3
# (kernels/CMakeLists.txt), nor with their forced unrolls (PAGEDCHAT_FORCED_UNROLL=OFF: clang
# took 450-530 s for each of the AVX2 and AVX-512 files with them, 46 s without; the same bits).
# The fuzz targets link this same instrumented engine. clang's warnings
# are shown, not errors, until a whole clang build has been seen clean (g++'s are errors above).
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
phase "san: configure" configure build-san -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DPAGEDCHAT_BUILD_APP=OFF -DPAGEDCHAT_ENABLE_CUDA=OFF -DPAGEDCHAT_WERROR=OFF -DPAGEDCHAT_FUZZ=ON \
  -DPAGEDCHAT_FORCED_UNROLL=OFF -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1 $san" -DCMAKE_EXE_LINKER_FLAGS="$san ${linker[*]}"
phase "san: compile" cmake --build build-san -j"$jobs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
phase "san: ctest" ctest --test-dir build-san --output-on-failure -j"$jobs" -LE fuzz
phase "san: fuzz" ctest --test-dir build-san --output-on-failure -j"$jobs" -L fuzz
free_objects build-san
unset ASAN_OPTIONS UBSAN_OPTIONS

# --- 3. ThreadSanitizer, only what the threaded tests need ------------------------------------
# The engine's own threads: the CPU thread pool, AsyncLLM's step loop, the server (its process is
# TSan-built too). Not the app's worker: Debian's Qt is not built with ThreadSanitizer, so every
# queued signal between two threads is reported (docs/reliability.md, "Sanitizers").
# -O0 compiles fastest (the tests run tiny models). The per-ISA kernel files stay uninstrumented
# at -O1: their threads meet only in thread_pool.cpp, which is instrumented (kernels/CMakeLists.txt).
tsan_tests=(test_thread_pool test_async_llm test_server)
phase "tsan: configure" configure build-tsan -DCMAKE_BUILD_TYPE=Debug -DPAGEDCHAT_BUILD_APP=OFF \
  -DPAGEDCHAT_ENABLE_CUDA=OFF -DPAGEDCHAT_WERROR=ON -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1 -fsanitize=thread" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread ${linker[*]}" -DPAGEDCHAT_ISA_KERNEL_OPTIONS="-fno-sanitize=thread;-O1" \
  -DPAGEDCHAT_FORCED_UNROLL=OFF
phase "tsan: compile" cmake --build build-tsan -j"$jobs" --target "${tsan_tests[@]}"
# QTEST_DISABLE_STACK_DUMP: QtTest's crash handler forks a debugger, which deadlocks inside
# ThreadSanitizer's runtime after a report (the test would hang until its CTest timeout).
export TSAN_OPTIONS="halt_on_error=1:abort_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp"
export QTEST_DISABLE_STACK_DUMP=1
phase "tsan: ctest" ctest --test-dir build-tsan --output-on-failure -j"$jobs" \
  -R "^($(IFS='|'; echo "${tsan_tests[*]}"))\$"
unset TSAN_OPTIONS QTEST_DISABLE_STACK_DUMP
