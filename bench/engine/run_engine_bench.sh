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
LITERAL="Killed"   # srun's line for the SIGKILLed task: once in the whole incident (checked below)
rm -rf "$WORK"
mkdir -p "$WORK"

# 1. A 16,384-rank incident (srun layout, one SIGKILLed rank), padded with realistic noise.
"$DENPEX" simulate scenarios/scale/crash_16384.textproto --out "$WORK/16k" >/dev/null
python3 bench/engine/pad_noise.py "$WORK/16k/incident" "$TARGET_BYTES"
want=$(python3 -c "import json,sys; t=json.load(open(sys.argv[1])); print(t['initiator']['rank'])" "$WORK/16k/truth.json")
mapfile -t files < <(find "$WORK/16k/incident" -type f | sort)  # slurm-*.out, slurmctld.log, <node>/kern.log
cat "${files[@]}" >/dev/null  # warm the page cache

timeit() {  # "wall cpu": the best wall time of three runs of "$@" and the CPU (user + sys) of that run, in seconds
  local best="" cpu="" line
  for _ in 1 2 3; do
    /usr/bin/time -o "$WORK/time.txt" -f "%e %U %S" "$@" >/dev/null 2>&1 || true
    read -r w u s < <(tail -1 "$WORK/time.txt")
    if [[ -z $best ]] || awk -v a="$w" -v b="$best" 'BEGIN {exit !(a < b)}'; then
      best=$w
      cpu=$(awk -v u="$u" -v s="$s" 'BEGIN {printf "%.2f", u + s}')
    fi
  done
  echo "$best $cpu"
}
bytes=$(cat "${files[@]}" | wc -c)

# 2. Check the answer before timing anything.
"$BENCH" "$WORK/16k/incident" --threads 2 --repeat 1 | tee "$WORK/answer.txt"
grep -q "rank $want " "$WORK/answer.txt" || { echo "wrong answer: want rank $want" >&2; exit 1; }

# 3. Parse throughput on the same files: grep -c, rg -c, the engine.
echo "\"$LITERAL\" occurs on $(cat "${files[@]}" | grep -c "$LITERAL") line(s)"
read -r g gc <<<"$(timeit grep -c "$LITERAL" "${files[@]}")"
read -r r rc <<<"$(timeit rg -c "$LITERAL" "${files[@]}")"
awk -v b="$bytes" -v t="$g" -v c="$gc" 'BEGIN {printf "grep -c: %s s wall (%.2f GB/s), %s s CPU\n", t, b / t / 1e9, c}'
awk -v b="$bytes" -v t="$r" -v c="$rc" 'BEGIN {printf "rg -c:   %s s wall (%.2f GB/s), %s s CPU\n", t, b / t / 1e9, c}'
uptime  # the load the numbers were taken under
"$BENCH" "$WORK/16k/incident" --threads 2 --repeat 3 | tee "$WORK/engine.txt"
# Issue #4's parse targets, on wall times of this run: >= 2.5x grep -c and >= 60% of rg -c.
e=$(sed -n 's/^parse: .* in \([0-9.]*\) s: .*/\1/p' "$WORK/engine.txt")
awk -v e="$e" -v g="$g" -v r="$r" 'BEGIN {printf "engine parse %.3f s: %.2fx grep -c (target 2.5x), %.0f%% of rg -c (target 60%%)\n", e, g / e, 100 * r / e}'
# 4. The whole diagnosis as a user runs it: wall time and peak RSS of the process.
/usr/bin/time -f "denpex diagnose: %e s wall, %U s user + %S s sys, %M KiB peak RSS" "$DENPEX" diagnose "$WORK/16k/incident" --threads 2 >/dev/null
rm -rf "$WORK"
