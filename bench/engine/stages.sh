#!/usr/bin/env bash
# Where `denpex diagnose` spends its time: runs it once with DENPEX_STAGES=1 (engine/src/stages.h)
# and prints each stage's wall milliseconds, its own thread's CPU and every thread's (stages that
# run more than once, such as the parse batches, summed), in the order they first ended, then the
# process's totals. A stage whose two CPU columns agree ran on one core. RSS is the resident
# memory when the stage (its last run) ended.
#   bench/engine/stages.sh build/cli/denpex INCIDENT_DIR [diagnose options...]
set -euo pipefail
DENPEX=$1
INCIDENT=$2
shift 2
DENPEX_STAGES=1 /usr/bin/time -f "process: %e s wall, %U s user + %S s sys, %M KiB peak RSS" \
  "$DENPEX" diagnose "$INCIDENT" "$@" 2>&1 >/dev/null |
  awk '$1 == "stage" { if (!($2 in wall)) order[++n] = $2; wall[$2] += $3; cpu[$2] += $4; all[$2] += $5; rss[$2] = $6; runs[$2]++; next }
       { other = other $0 "\n" }
       END {
         printf "%-24s %10s %10s %10s %8s %5s\n", "stage", "wall ms", "thread CPU", "all CPU", "RSS MiB", "runs"
         for (i = 1; i <= n; ++i) { s = order[i]; printf "%-24s %10.1f %10.1f %10.1f %8d %5d\n", s, wall[s], cpu[s], all[s], rss[s], runs[s] }
         printf "%s", other
       }'
