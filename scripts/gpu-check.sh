#!/usr/bin/env bash
# The first-GPU proof of the CUDA backend, self-contained: on a bare NVIDIA machine (the CUDA
# toolkit, a compiler, CMake and little else; no network; the working tree copied without build
# outputs) it provides the build dependencies, builds (Release, CUDA, no app), runs the GPU tests,
# then the GPU benchmarks, and prints one table. In two calls of at most 8 minutes each:
#
#   bash scripts/gpu-check.sh build-test   # dependencies, configure, build, the GPU tests
#   bash scripts/gpu-check.sh bench        # the benchmarks (after build-test), then the table
#   bash scripts/gpu-check.sh              # both
#   bash scripts/gpu-check.sh fetch-deps   # on a Debian 12 machine with network, beforehand: the
#                                          # packages a bare machine lacks, as .deb files in
#                                          # .gpu-deps/ (carry that folder along with the tree)
#
# Dependencies: the packages of install-deps.sh that the engine, the CLI and the engine's tests
# need (sentencepiece, PCRE2, ICU, protobuf, nlohmann-json, CLI11, libmicrohttpd, Qt Core and Test,
# pkg-config). When the system lacks them: unpacked from .gpu-deps/*.deb into the build folder
# (no root, nothing installed system-wide); else apt-get when it can reach a package archive;
# else the check fails, saying what to do.
# Models: stories260K (run.c goldens) from $PAGEDCHAT_MODELS_DIR, ../shared/models, shared/models
# or .gpu-models/ in the tree, the first that has it; a missing model is a failure, not a skip.
# Every step has a timeout and a row in the table (kept in the build folder, so the bench call
# prints the build-test rows too); the exit status is non-zero if any step failed.
#
#   GPU_ARCH=89 BUILD_DIR=/tmp/b bash scripts/gpu-check.sh
#
# Benchmarks: the device's copy bandwidth (bench memory --device cuda); single-stream decode of a
# Llama-3-8B shape in bfloat16 against the HBM roofline (bytes of weights / that bandwidth); and
# output throughput at 1/16/64/256 sequences of a TinyLlama-1.1B shape (random weights in memory).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root="$(pwd)"
build="${BUILD_DIR:-$root/build-gpu}"
arch="${GPU_ARCH:-90}"
jobs="$(nproc)"
mode="${1:-all}"
log_dir="$build/gpu-check-logs"
rows_file="$build/gpu-check-rows.txt"
deps_dir="$root/.gpu-deps"
prefix="$build/deps"  # where .gpu-deps/*.deb are unpacked
failed=0

case "$mode" in
  all | build-test | bench | fetch-deps) ;;
  *)
    echo "usage: bash scripts/gpu-check.sh [build-test|bench|fetch-deps]" >&2
    exit 2
    ;;
esac

# The Debian 12 packages a bare machine may lack, with the libraries they load (not the C library,
# libstdc++ or anything a system with a compiler always has).
deb_packages=(
  pkgconf pkgconf-bin libpkgconf3
  libsentencepiece-dev libsentencepiece0
  nlohmann-json3-dev libcli11-dev
  libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3
  libicu-dev libicu72
  libmicrohttpd-dev libmicrohttpd12 libgnutls30 libp11-kit0 libidn2-0 libunistring2 libtasn1-6 libnettle8 libhogweed6 libgmp10
  protobuf-compiler libprotoc32 libprotobuf32 libprotobuf-lite32 libprotobuf-dev
  qt6-base-dev qt6-base-dev-tools qmake6 qmake6-bin libqt6core6 libqt6test6 libdouble-conversion3 libb2-1 libglib2.0-0 libffi8
)

if [ "$mode" = fetch-deps ]; then
  mkdir -p "$deps_dir" && cd "$deps_dir" || exit 1
  [ "$(id -u)" -eq 0 ] && apt-get update -q >/dev/null
  apt-get download "${deb_packages[@]}" || exit 1
  echo "$(ls ./*.deb | wc -l) packages in $deps_dir ($(du -sh . | cut -f1)); carry this folder to the GPU machine"
  exit 0
fi

mkdir -p "$log_dir"
[ "$mode" = bench ] || : >"$rows_file"

# step NAME TIMEOUT_S COMMAND...: runs it with its output in $log_dir/NAME.log; records the result.
step() {
  local name="$1" limit="$2"
  shift 2
  local log="$log_dir/$name.log" t0 rc
  t0=$(date +%s)
  echo "== $name (timeout ${limit}s): $*"
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
  rc=$?
  local dt=$(($(date +%s) - t0))
  if [ $rc -eq 0 ]; then
    printf '%-28s %-6s %5ss\n' "$name" PASS "$dt" >>"$rows_file"
  else
    [ $rc -eq 124 ] && rc="timeout"
    printf '%-28s %-6s %5ss  (exit %s, see %s)\n' "$name" FAIL "$dt" "$rc" "$log" >>"$rows_file"
    failed=1
    tail -n 25 "$log"
  fi
  return $rc
}
# fail_row NAME WHY: a failed step that did not run a command.
fail_row() {
  printf '%-28s %-6s %5ss  (%s)\n' "$1" FAIL 0 "$2" >>"$rows_file"
  echo "FAIL: $1: $2"
  failed=1
}

# json_field FILE KEY...: a number from the last JSON object in FILE (python3), or "?".
json_field() {
  python3 - "$@" <<'EOF' 2>/dev/null || echo "?"
import json, sys
text = open(sys.argv[1]).read()
start = text.rfind("\n{") + 1 if text.rfind("\n{") >= 0 else text.find("{")
v = json.loads(text[start:])
for k in sys.argv[2:]:
    v = v[k]
print(v if not isinstance(v, float) else f"{v:.4g}")
EOF
}

print_table() {
  echo
  echo "==================== PagedChat GPU check ===================="
  printf '%-28s %-6s %6s\n' step result time
  cat "$rows_file"
  if [ -f "$log_dir/summary.txt" ]; then
    echo "--------------------------------------------------------------"
    cat "$log_dir/summary.txt"
  fi
  echo "logs: $log_dir"
}

# The models: the first folder that has stories260K with its goldens.
models=""
for d in "${PAGEDCHAT_MODELS_DIR:-}" "$root/../shared/models" "$root/shared/models" "$root/.gpu-models"; do
  if [ -n "$d" ] && [ -f "$d/stories260K/stories260K.bin" ] && [ -f "$d/stories260K/golden/once_upon.json" ]; then
    models="$(cd "$d" && pwd)"
    break
  fi
done

# The dependencies from .gpu-deps/ (unpacked once per build folder), through environment variables
# that CMake, pkg-config and the programs built here read. Not LD_LIBRARY_PATH for the whole
# build: the system's own cmake must keep its own libraries. The binaries built here find the
# unpacked libraries through their RPATH; pkgconf, moc and protoc (run while configuring and
# building) through wrappers that set it.
use_unpacked_deps() {
  local libdir="$prefix/usr/lib/x86_64-linux-gnu"
  if [ ! -f "$prefix/.unpacked" ]; then
    rm -rf "$prefix" && mkdir -p "$prefix" || return 1
    local deb
    for deb in "$deps_dir"/*.deb; do
      if command -v dpkg-deb >/dev/null; then
        dpkg-deb -x "$deb" "$prefix" || return 1
      else  # a .deb is an ar archive holding data.tar.*
        local member
        member="$(ar t "$deb" | grep '^data\.tar')" || return 1
        ar p "$deb" "$member" | tar -x -C "$prefix" -f - || return 1
      fi
    done
    # pkg-config files name /usr: point them at the unpacked tree.
    find "$prefix" -name '*.pc' -exec sed -i -E "s#^(prefix|exec_prefix|libdir|includedir)=/usr#\\1=$prefix/usr#" {} +
    touch "$prefix/.unpacked"
  fi
  mkdir -p "$prefix/wrap"
  local tool
  for tool in "$prefix/usr/bin/protoc" "$prefix/usr/lib/qt6/libexec/moc" "$prefix/usr/bin/pkgconf"; do
    [ -x "$tool" ] || continue
    printf '#!/bin/sh\nLD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s" "$@"\n' "$libdir" "$tool" \
      >"$prefix/wrap/$(basename "$tool")"
    chmod +x "$prefix/wrap/$(basename "$tool")"
  done
  export PKG_CONFIG_PATH="$libdir/pkgconfig:$prefix/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  dep_args=(-DCMAKE_PREFIX_PATH="$prefix/usr" -DPKG_CONFIG_EXECUTABLE="$prefix/wrap/pkgconf"
    -DProtobuf_PROTOC_EXECUTABLE="$prefix/wrap/protoc" -DPAGEDCHAT_MOC_EXECUTABLE="$prefix/wrap/moc"
    -DCMAKE_BUILD_RPATH="$libdir" -DCMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES="$prefix/usr/include/x86_64-linux-gnu")
  run_env=(env LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
}

# configure: the Release build with CUDA, without the app (Qt Core and Test are all it needs).
nvcc_path="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
dep_args=()
run_env=(env)
# configure_cmd: sets cfg_cmd to the cmake command (an array: `timeout` runs commands, not functions).
configure_cmd() {
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cfg_cmd=(cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DPAGEDCHAT_BUILD_APP=OFF
    -DCMAKE_CUDA_COMPILER="$nvcc_path" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DPAGEDCHAT_MODELS_DIR="$models"
    "${launcher[@]}" "${dep_args[@]}")
}
configure() {
  rm -f "$build/CMakeCache.txt"  # a folder configured before with other dependencies starts afresh
  configure_cmd
  "${cfg_cmd[@]}"
}

if [ "$mode" != bench ]; then
  echo "PagedChat GPU check: $(date -u +%FT%TZ), build $build, sm_$arch, $jobs cores"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  else
    echo "nvidia-smi not found: is the NVIDIA driver installed?"
  fi
  [ -x "$nvcc_path" ] || fail_row toolkit "no nvcc on PATH or in /usr/local/cuda/bin"
  for tool in cmake c++ python3 timeout; do
    command -v "$tool" >/dev/null || fail_row toolkit "'$tool' not found"
  done
  [ -n "$models" ] || fail_row models "stories260K not found in \$PAGEDCHAT_MODELS_DIR, ../shared/models, shared/models or .gpu-models"
  [ "$failed" -eq 0 ] || {
    print_table
    exit 1
  }
  echo "models: $models"

  # 1. Dependencies and configure: the system's, else .gpu-deps/, else apt-get.
  if ls "$deps_dir"/*.deb >/dev/null 2>&1 && ! configure >"$log_dir/configure-system.log" 2>&1; then
    echo "the system lacks build dependencies: unpacking $deps_dir"
    use_unpacked_deps || fail_row dependencies "could not unpack $deps_dir"
  elif ! ls "$deps_dir"/*.deb >/dev/null 2>&1 && ! configure >"$log_dir/configure-system.log" 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null && timeout 60 apt-get update -q >/dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -q --no-install-recommends "${deb_packages[@]}" \
        >"$log_dir/apt-get.log" 2>&1 || fail_row dependencies "apt-get install failed (see $log_dir/apt-get.log)"
    else
      fail_row dependencies "build dependencies missing (see $log_dir/configure-system.log) and no package archive: \
run 'bash scripts/gpu-check.sh fetch-deps' on a Debian 12 machine with network and carry .gpu-deps/ along"
    fi
  fi
  [ "$failed" -eq 0 ] || {
    print_table
    exit 1
  }
  rm -f "$build/CMakeCache.txt"
  configure_cmd
  step configure 180 "${cfg_cmd[@]}" || {
    print_table
    exit 1
  }
  step build 420 cmake --build "$build" -j"$jobs" --target pagedchat-cli test_cuda_kernels test_cuda_golden \
    test_device test_host_device_math || {
    print_table
    exit 1
  }

  # 2. Tests: helpers (CPU), device selection and the load-time check (float32 and bfloat16),
  # every kernel against the CPU, stories260K goldens. CI=true: a missing model fails; a skip
  # (no GPU seen) is a failure here too.
  for t in test_host_device_math test_device test_cuda_kernels test_cuda_golden; do
    if step "$t" 240 "${run_env[@]}" CI=true QT_QPA_PLATFORM=offscreen "$build/tests/engine/$t" &&
      [ "$t" != test_device ] && grep -q "^SKIP" "$log_dir/$t.log"; then
      sed -i '$d' "$rows_file"
      fail_row "$t" "SKIPPED: $(grep -m1 '^SKIP' "$log_dir/$t.log" | sed 's/^SKIP *: *//' | cut -c1-120)"
    fi
  done
  [ "$mode" = build-test ] && {
    print_table
    exit $failed
  }
fi

# 3. Benchmarks (after build-test: the same build folder, its dependencies if it unpacked them).
cli="$build/cli/pagedchat-cli"
if [ ! -x "$cli" ]; then
  fail_row bench "no $cli: run 'bash scripts/gpu-check.sh build-test' first"
  print_table
  exit 1
fi
[ -f "$prefix/.unpacked" ] && run_env=(env LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu")
step bandwidth 60 "${run_env[@]}" "$cli" bench memory --device cuda --size-mb 2048 --runs 10 --json
bw="$(json_field "$log_dir/bandwidth.log" read_gb_per_s)"
step decode_llama3_8b_bf16 240 "${run_env[@]}" "$cli" bench latency --device cuda --model random:llama-3-8b \
  --dtype bfloat16 --input-len 128 --output-len 128 --num-iters 2 --max-model-len 2048 --json
tps="$(json_field "$log_dir/decode_llama3_8b_bf16.log" decode_tokens_per_s)"
wbytes="$(json_field "$log_dir/decode_llama3_8b_bf16.log" engine packed_weight_bytes)"
roof="?"
pct="?"
if [[ "$bw" != "?" && "$wbytes" != "?" && "$tps" != "?" ]]; then
  roof="$(python3 -c "print(f'{$bw * 1e9 / $wbytes:.1f}')")"
  pct="$(python3 -c "print(f'{100 * $tps / ($bw * 1e9 / $wbytes):.0f}')")"
fi
declare -a tput=()
for n in 1 16 64 256; do
  step "throughput_${n}seq" 120 "${run_env[@]}" "$cli" bench throughput --device cuda --model random:tinyllama-1.1b \
    --num-prompts "$n" --input-len 128 --output-len 128 --max-num-seqs 256 --max-num-batched-tokens 2048 \
    --max-model-len 512 --json
  tput+=("$n:$(json_field "$log_dir/throughput_${n}seq.log" output_tokens_per_s)")
done
{
  echo "device copy bandwidth (read+write): $bw GB/s"
  echo "Llama-3-8B shape, bf16, 1 sequence: $tps tokens/s decode; roofline $roof tokens/s ($wbytes weight bytes / $bw GB/s): $pct %"
  printf 'TinyLlama-1.1B shape, bf16, 128+128 tokens, output tokens/s by sequences: %s\n' "${tput[*]}"
} >"$log_dir/summary.txt"
print_table
grep -q " FAIL " "$rows_file" && exit 1
exit 0
