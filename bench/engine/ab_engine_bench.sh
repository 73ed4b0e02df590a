#!/usr/bin/env bash
# Parse A/B on a shared machine (docs/benchmarks.md, "Engine"): two builds' engine_bench and grep -c,
# alternated round by round on the same files, so that each round's ratios share one load.
#   bench/engine/ab_engine_bench.sh INCIDENT_DIR BASE_BUILD NEW_BUILD [ROUNDS]
# INCIDENT_DIR as run_engine_bench.sh makes it (it deletes its own: make one with its steps 1-2, or
# keep a copy). Per round: each build's `engine_bench --threads 2 --repeat 3 --parse-only` (best
# wall of 3 and its CPU), then `grep -c Killed` (best of 3), the load average first.
set -euo pipefail
INC=$1
BASE=$2/bench/engine/engine_bench
NEW=$3/bench/engine/engine_bench
ROUNDS=${4:-6}
mapfile -t files < <(find "$INC" -type f | sort)
cat "${files[@]}" >/dev/null  # warm the page cache
grep_best() {  # "wall cpu" of the fastest of three runs
  local best="" cpu="" w u s
  for _ in 1 2 3; do
    read -r w u s < <({ /usr/bin/time -f "%e %U %S" grep -c Killed "${files[@]}" >/dev/null; } 2>&1 | tail -1)
    if [[ -z $best ]] || awk -v a="$w" -v b="$best" 'BEGIN {exit !(a < b)}'; then
      best=$w
      cpu=$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')
    fi
  done
  echo "$best $cpu"
}
engine() {  # "wall cpu" from engine_bench's parse line
  "$1" "$INC" --threads 2 --repeat 3 --parse-only | sed -n 's/^parse: .* in \([0-9.]*\) s: .*; \([0-9.]*\) s CPU.*/\1 \2/p'
}
for r in $(seq "$ROUNDS"); do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  read -r bw bc <<<"$(engine "$BASE")"
  read -r nw nc <<<"$(engine "$NEW")"
  read -r g gc <<<"$(grep_best)"
  awk -v r="$r" -v l="$load" -v bw="$bw" -v bc="$bc" -v nw="$nw" -v nc="$nc" -v g="$g" -v gc="$gc" 'BEGIN {
    printf "round %d, load %s: base %.3f s (%.3f CPU-s) %.2fx grep | new %.3f s (%.3f CPU-s) %.2fx grep | grep -c %.2f s (%.2f CPU-s)\n",
           r, l, bw, bc, g / bw, nw, nc, g / nw, g, gc }'
done
