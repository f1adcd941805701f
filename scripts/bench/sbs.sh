#!/usr/bin/env bash
# Side by side, interleaved rounds: ik_llama.cpp's llama-bench (-rtr 0 and 1, -fa 1) and
# llama-batched-bench against PagedChat's `bench llama` on one model (any shape). Results go to OUT
# (one file per run, load averages in load.txt); medians are read off by hand.
# IK_PRELOAD: a library LD_PRELOADed into ik's runs (a constructor that sets FTZ/DAZ, for models whose
# Gated DeltaNet state goes subnormal, which PagedChat flushes and ik does not).
# Usage: M=model.gguf IK=<ik build>/bin [P=512] [N=64] [NPL=16] [ROUNDS=3] [PC_FLAGS=...] [IK_PRELOAD=...] \
#          scripts/bench/sbs.sh OUT
M=${M:?model}; OUT=${1:?output folder}; ROUNDS=${ROUNDS:-3}; P=${P:-512}; N=${N:-64}; NPL=${NPL:-16}
IK=${IK:-/work/bench/ik/build/bin}; PC=${PC:-build/cli/pagedchat-cli}
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  for rtr in 0 1; do
    uptime >> "$OUT/load.txt"
    LD_PRELOAD=${IK_PRELOAD:-} "$IK/llama-bench" -m "$M" -p "$P" -n "$N" -t 2 -fa 1 -rtr $rtr -r 1 -o md \
      > "$OUT/ik_rtr${rtr}_r$r.md" 2> "$OUT/ik_rtr${rtr}_r$r.err"
  done
  if [ "$NPL" != 0 ]; then
    uptime >> "$OUT/load.txt"
    LD_PRELOAD=${IK_PRELOAD:-} "$IK/llama-batched-bench" -m "$M" -c 8192 -b 2048 -ub 512 -npp 128 -ntg 32 -npl "$NPL" -t 2 -fa on \
      > "$OUT/ikb_r$r.txt" 2>&1
  fi
  uptime >> "$OUT/load.txt"
  # shellcheck disable=SC2086
  "$PC" bench llama --model "$M" --threads 2 --max-model-len 4096 -p "$P" -n "$N" -r 1 --npp 128 --ntg 32 \
    --npl "$NPL" $PC_FLAGS > "$OUT/pc_r$r.txt" 2>&1
done
