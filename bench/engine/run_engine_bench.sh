#!/usr/bin/env bash
# The engine benchmarks of docs/benchmarks.md ("Engine"). From the repository root:
#   cmake -S . -B build-bench -DDENPEX_BUILD_BENCHMARKS=ON -DDENPEX_BUILD_TESTS=OFF
#   cmake --build build-bench -j2 --target denpex engine_bench
#   bench/engine/run_engine_bench.sh build-bench
# Needs grep and ripgrep (rg, Debian's package) for the comparison; runs everything on the same
# files, warm in the page cache, in one run.
set -euo pipefail
BUILD=${1:-build-bench}
DENPEX=$BUILD/cli/denpex
BENCH=$BUILD/bench/engine/engine_bench
WORK=${TMPDIR:-/tmp}/denpex-engine-bench
TARGET_BYTES=${TARGET_BYTES:-2147483648}
LITERAL="Terminating StepId"   # one line in the whole incident
rm -rf "$WORK"
mkdir -p "$WORK"

# 1. A 16,384-rank incident (srun layout, one SIGKILLed rank), padded with realistic noise.
"$DENPEX" simulate scenarios/scale/crash_16384.textproto --out "$WORK/16k" >/dev/null
python3 bench/engine/pad_noise.py "$WORK/16k/incident" "$TARGET_BYTES"
want=$(python3 -c "import json,sys; t=json.load(open(sys.argv[1])); print(t['initiator']['rank'])" "$WORK/16k/truth.json")
files=("$WORK"/16k/incident/*)
cat "${files[@]}" >/dev/null  # warm the page cache

timeit() {  # the best wall time of three runs of "$@", in seconds (output discarded)
  local best="" t0 t1
  for _ in 1 2 3; do
    t0=$(date +%s%N)
    "$@" >/dev/null || true
    t1=$(date +%s%N)
    if [[ -z $best || $((t1 - t0)) -lt $best ]]; then best=$((t1 - t0)); fi
  done
  awk -v ns="$best" 'BEGIN {printf "%.3f", ns / 1e9}'
}
bytes=$(cat "${files[@]}" | wc -c)

# 2. Check the answer before timing anything.
"$BENCH" "$WORK/16k/incident" --threads 2 --repeat 1 | tee "$WORK/answer.txt"
grep -q "rank $want " "$WORK/answer.txt" || { echo "wrong answer: want rank $want" >&2; exit 1; }

# 3. Parse throughput on the same files: grep -c, rg -c, the engine.
g=$(timeit grep -c "$LITERAL" "${files[@]}")
r=$(timeit rg -c "$LITERAL" "${files[@]}")
awk -v b="$bytes" -v t="$g" 'BEGIN {printf "grep -c: %s s, %.2f GB/s\n", t, b / t / 1e9}'
awk -v b="$bytes" -v t="$r" 'BEGIN {printf "rg -c:   %s s, %.2f GB/s\n", t, b / t / 1e9}' 
"$BENCH" "$WORK/16k/incident" --threads 2 --repeat 3
# 4. The whole diagnosis as a user runs it: wall time and peak RSS of the process.
/usr/bin/time -f "denpex diagnose: %e s wall, %M KiB peak RSS" "$DENPEX" diagnose "$WORK/16k/incident" --threads 2 >/dev/null
rm -rf "$WORK"
