#!/bin/sh
# Runs one libFuzzer target for a bounded time from a corpus of seeds (tests/fuzz/CMakeLists.txt):
#   run_fuzzer.sh TARGET CORPUS SECONDS SEED... -- LIBFUZZER_FLAG...
# Each SEED is a file copied into CORPUS as <its folder>-<its name>; FILE:N copies its first N
# bytes only. A missing seed fails (the shared model files are part of the test).
set -eu
target=$1 corpus=$2 seconds=$3
shift 3
mkdir -p "$corpus"
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  file=$1 bytes=
  case $1 in *:[0-9]*) file=${1%:*} bytes=${1##*:} ;; esac
  [ -f "$file" ] || { echo "run_fuzzer: seed $file is missing" >&2; exit 1; }
  name="$(basename "$(dirname "$file")")-$(basename "$file")"
  if [ -n "$bytes" ]; then head -c "$bytes" "$file" > "$corpus/$name-$bytes"; else cp "$file" "$corpus/$name"; fi
  shift
done
[ $# -gt 0 ] && shift
exec "$target" -max_total_time="$seconds" -rss_limit_mb=4096 -print_final_stats=1 "$@" "$corpus"
