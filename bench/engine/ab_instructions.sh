#!/usr/bin/env bash
# Parse A/B in instructions (docs/benchmarks.md, "Instructions"): each build's `engine_bench
# --parse-only --threads 1 --repeat 1` under callgrind, which counts the instructions executed.
# The count does not move with the machine's load, so a change of 1-2 % shows where wall and CPU
# times on a shared machine vary by 10 % from run to run. It says nothing of cache misses, page
# faults or system time: time those with ab_engine_bench.sh and scale_bench.sh.
#   bench/engine/ab_instructions.sh INPUT BASE_BUILD NEW_BUILD
# INPUT: an incident folder (engine_bench's argument; a folder holding one log measures that log).
# Under callgrind a run is ~50 x slower: a 250 MB log takes ~10-60 s per build.
set -euo pipefail
INPUT=$1
BASE=$2/bench/engine/engine_bench
NEW=$3/bench/engine/engine_bench
command -v valgrind >/dev/null || { echo "ab_instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
count() {  # instructions executed by $1 on INPUT
  valgrind --tool=callgrind --callgrind-out-file="$work/out" "$1" "$INPUT" --threads 1 --repeat 1 --parse-only \
    >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/err"
}
base=$(count "$BASE")
new=$(count "$NEW")
awk -v b="$base" -v n="$new" 'BEGIN {
  printf "base %.0f instructions, new %.0f: %+.2f %%\n", b, n, 100 * (n - b) / b }'
