#!/usr/bin/env bash
# Side by side at the Gemma-4-E4B shape (12 layers): ik llama-bench (-rtr 0/1) and batched-bench vs PagedChat bench llama.
M=${M:-/work/bench/gemma4-e4b-12l.gguf}; OUT=${1:-/work/bench/out-gemma4}; ROUNDS=${ROUNDS:-3}
IK=${IK:-/work/bench/ik_llama.cpp/build/bin}; PC=${PC:-build/cli/pagedchat-cli}
mkdir -p $OUT
for r in $(seq 1 $ROUNDS); do
  for rtr in 0 1; do
    uptime >> $OUT/load.txt
    $IK/llama-bench -m $M -p 512 -n 64 -t 2 -fa 1 -rtr $rtr -r 1 -o md > $OUT/ik_rtr${rtr}_r$r.md 2>$OUT/ik_rtr${rtr}_r$r.err
  done
  uptime >> $OUT/load.txt
  $IK/llama-batched-bench -m $M -c 8192 -b 2048 -ub 512 -npp 128 -ntg 32 -npl 16 -t 2 -fa on > $OUT/ikb_r$r.txt 2>&1
  uptime >> $OUT/load.txt
  $PC bench llama --model $M --max-model-len 4096 -p 512 -n 64 -r 1 --npp 128 --ntg 32 --npl 16 > $OUT/pc_r$r.txt 2>&1
done
