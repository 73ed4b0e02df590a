#!/usr/bin/env bash
# What following a running 16k-rank job costs `denpex watch` (docs/benchmarks.md, "Watch"): the
# job is a simulated incident replayed at its real pace (`simulate --replay 1`, ~10.5 minutes:
# start-up, the fault, the quiet wait for the watchdog, the cascade); the watcher follows it from
# before the first file appears until the job's last line, then gives its final diagnosis, which
# must name the truth's rank (checked before any figure is printed). The watcher's CPU time is
# sampled every 10 s from /proc, so the quiet phase is measured apart from the bursts.
#   bench/watch_follow.sh [DENPEX] [SCENARIO] [WORK]
set -euo pipefail
BIN=$(realpath "${1:-build/cli/denpex}")
SCENARIO=${2:-scenarios/families/hang_16384_torch26.textproto}
WORK=${3:-${TMPDIR:-/tmp}/denpex-watch-bench}
rm -rf "$WORK" && mkdir -p "$WORK"
"$BIN" simulate "$SCENARIO" --out "$WORK/job" --replay 1 > "$WORK/replay.out" 2>&1 &
replay=$!
"$BIN" watch "$WORK/job/incident" --json "$WORK/watch.json" --until-exit "$replay" \
  > "$WORK/watch.out" 2> "$WORK/watch.err" &
watch=$!
hz=$(getconf CLK_TCK)
echo "t_s cpu_s rss_kb" > "$WORK/samples.txt"
start=$(date +%s)
while kill -0 "$watch" 2> /dev/null; do
  if read -r -a stat < "/proc/$watch/stat" 2> /dev/null; then
    rss=$(awk '/VmRSS/{print $2}' "/proc/$watch/status" 2> /dev/null || echo 0)
    echo "$(( $(date +%s) - start )) $(echo "scale=2; (${stat[13]} + ${stat[14]}) / $hz" | bc) $rss" >> "$WORK/samples.txt"
  fi
  sleep 10
done
wait "$watch"
truth_rank=$(grep -o '"rank": [0-9-]*' "$WORK/job/truth.json" | head -1 | grep -o '[0-9-]*$')
final_rank=$(grep -o '"rank": [0-9-]*' "$WORK/watch.json" | head -1 | grep -o '[0-9-]*$' || true)
if [[ "$final_rank" != "$truth_rank" ]]; then
  echo "watch_follow: the final diagnosis names rank '$final_rank', the truth $truth_rank" >&2
  exit 1
fi
cat "$WORK/watch.out"
awk 'NR > 1 { t[NR] = $1; c[NR] = $2; r = $3 > r ? $3 : r; n = NR }
     END {
       printf "followed %d s: %.2f s CPU (%.2f %% of a core), peak RSS sampled %.0f MB\n", t[n], c[n], 100 * c[n] / t[n], r / 1024
       # the quiet phase: from 60 s after the start to 60 s before the last sample
       for (i = 2; i <= n; i++) { if (t[i] >= 60 && !a) a = i; if (t[i] <= t[n] - 60) b = i }
       if (a && b > a) printf "quiet phase %d-%d s: %.2f s CPU (%.2f %% of a core)\n", t[a], t[b], c[b] - c[a], 100 * (c[b] - c[a]) / (t[b] - t[a])
     }' "$WORK/samples.txt"
