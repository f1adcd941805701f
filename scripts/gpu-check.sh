#!/usr/bin/env bash
# The first-GPU proof of the CUDA backend, one script, no network: builds (Release, CUDA, sm_90 by
# default), runs the GPU tests, then the GPU benchmarks, and prints a short table last. Meant for
# an NVIDIA machine with the CUDA toolkit and the build dependencies already installed
# (scripts/install-deps.sh, which needs the network, is NOT run: missing tools are named instead).
# Every step has a timeout and a line in the final table; the script exits non-zero if any failed.
#
#   bash scripts/gpu-check.sh                 # build-gpu/, all steps
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
log_dir="$build/gpu-check-logs"
declare -a rows=()
failed=0

# step NAME TIMEOUT_S COMMAND...: runs it with its output in $log_dir/NAME.log; records the result.
step() {
  local name="$1" limit="$2"
  shift 2
  local log="$log_dir/$name.log" t0 rc
  t0=$(date +%s)
  echo "== $name (timeout ${limit}s): $*"
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
  rc=$?
  local dt=$(( $(date +%s) - t0 ))
  if [ $rc -eq 0 ]; then
    rows+=("$(printf '%-28s %-6s %5ss' "$name" PASS "$dt")")
  else
    [ $rc -eq 124 ] && rc="timeout"
    rows+=("$(printf '%-28s %-6s %5ss  (exit %s, see %s)' "$name" FAIL "$dt" "$rc" "$log")")
    failed=1
    tail -n 25 "$log"
  fi
  return 0
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

mkdir -p "$log_dir"
echo "PagedChat GPU check: $(date -u +%FT%TZ), build $build, sm_$arch, $jobs cores"

# 0. What the machine has.
missing=()
for tool in cmake nvcc python3 timeout; do
  command -v "$tool" >/dev/null || { [ "$tool" = nvcc ] && [ -x /usr/local/cuda/bin/nvcc ]; } || missing+=("$tool")
done
nvcc_path="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
if [ ${#missing[@]} -gt 0 ]; then
  echo "missing tools: ${missing[*]} (install the build dependencies with scripts/install-deps.sh where there is network)"
fi
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/GPU: /'
else
  echo "nvidia-smi not found: is the NVIDIA driver installed?"
fi

# 1. Build: Release, CUDA for one architecture, no app (the tests and the CLI are what run here).
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
step configure 180 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPAGEDCHAT_BUILD_APP=OFF \
  -DCMAKE_CUDA_COMPILER="$nvcc_path" -DCMAKE_CUDA_ARCHITECTURES="$arch" "${launcher[@]}"
step build 480 cmake --build "$build" -j"$jobs" --target pagedchat-cli test_cuda_kernels test_cuda_golden \
  test_device test_host_device_math
cli="$build/cli/pagedchat-cli"

# 2. Tests: helpers (CPU), device selection, every kernel against the CPU, stories260K goldens.
for t in test_host_device_math test_device test_cuda_kernels test_cuda_golden; do
  step "$t" 240 env QT_QPA_PLATFORM=offscreen "$build/tests/engine/$t"
  grep -q "SKIP" "$log_dir/$t.log" && [ "$t" != test_device ] && {
    rows[-1]="${rows[-1]}  SKIPPED: $(grep -m1 SKIP "$log_dir/$t.log" | sed 's/^ *//')"
    failed=1
  }
done

# 3. Benchmarks.
step bandwidth 60 "$cli" bench memory --device cuda --size-mb 2048 --runs 10 --json
bw="$(json_field "$log_dir/bandwidth.log" read_gb_per_s)"
step decode_llama3_8b_bf16 240 "$cli" bench latency --device cuda --model random:llama-3-8b --dtype bfloat16 \
  --input-len 128 --output-len 128 --num-iters 2 --max-model-len 2048 --json
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
  step "throughput_${n}seq" 150 "$cli" bench throughput --device cuda --model random:tinyllama-1.1b \
    --num-prompts "$n" --input-len 128 --output-len 128 --max-num-seqs 256 --max-num-batched-tokens 2048 \
    --max-model-len 512 --json
  tput+=("$n:$(json_field "$log_dir/throughput_${n}seq.log" output_tokens_per_s)")
done

# 4. The table.
echo
echo "==================== PagedChat GPU check ===================="
printf '%-28s %-6s %6s\n' step result time
printf '%s\n' "${rows[@]}"
echo "--------------------------------------------------------------"
echo "device copy bandwidth (read+write): $bw GB/s"
echo "Llama-3-8B shape, bf16, 1 sequence: $tps tokens/s decode; roofline $roof tokens/s ($wbytes weight bytes / $bw GB/s): $pct %"
printf 'TinyLlama-1.1B shape, bf16, 128+128 tokens, output tokens/s by sequences: %s\n' "${tput[*]}"
echo "logs: $log_dir"
exit $failed
