#!/usr/bin/env bash
# Where `denpex diagnose` spends its time: runs it once with DENPEX_STAGES=1 (engine/src/stages.h)
# and prints each stage's wall and CPU milliseconds (stages that run more than once, such as the
# parse batches, summed), in the order they first ended, then the process's totals.
#   bench/engine/stages.sh build/cli/denpex INCIDENT_DIR [diagnose options...]
set -euo pipefail
DENPEX=$1
INCIDENT=$2
shift 2
DENPEX_STAGES=1 /usr/bin/time -f "process: %e s wall, %U s user + %S s sys, %M KiB peak RSS" \
  "$DENPEX" diagnose "$INCIDENT" "$@" 2>&1 >/dev/null |
  awk '$1 == "stage" { if (!($2 in wall)) order[++n] = $2; wall[$2] += $3; cpu[$2] += $4; runs[$2]++; next }
       { other = other $0 "\n" }
       END {
         printf "%-24s %10s %10s %5s\n", "stage", "wall ms", "CPU ms", "runs"
         for (i = 1; i <= n; ++i) { s = order[i]; printf "%-24s %10.1f %10.1f %5d\n", s, wall[s], cpu[s], runs[s] }
         printf "%s", other
       }'
