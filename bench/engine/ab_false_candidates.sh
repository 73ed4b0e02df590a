#!/usr/bin/env bash
# The trigger pre-filter's false candidates, two builds side by side, on the logs a change of its
# sample or literals is measured on before it ships (docs/benchmarks.md, "The pre-filter's
# sample"): the scale incidents' srun logs where they are simulated, the frozen incidents, and
# eighteen scenarios of the families (seven looked at while the sample was chosen, eleven held
# out), each incident's files concatenated. The counts do not move with the machine's load.
#   bench/engine/ab_false_candidates.sh BASE_BUILD NEW_BUILD    (from the repository root)
# Each build needs its `scan_bench` (cmake --build BUILD --target scan_bench); NEW_BUILD's
# `denpex` simulates the scenarios once under $TMPDIR/denpex-fc (kept for later runs; delete the
# folder after a change of the simulator's lines). Prints a Markdown row per log.
set -euo pipefail
BASE=$1/bench/engine/scan_bench
NEW=$2/bench/engine/scan_bench
DENPEX=$2/cli/denpex
WORK=${TMPDIR:-/tmp}/denpex-fc
SCALE=${TMPDIR:-/tmp}/denpex-scale-bench  # bench/engine/scale_bench.sh's incidents
SCENARIOS=(
  cuda_oom_8192_srun_torch26 exception_4096_srun_noisy exception_4096_srun_interleaved_lines
  exception_1024_pdsh hang_1024_torchrun k8s_hang_1024_pytorchjob
  cuda_oom_1024_srun_kill_on_bad_exit_requeue
  # held out
  deepspeed_aio_nvme_16384_logdir_torch113 exception_8192_torchrun_30min
  deepspeed_aio_nvme_8192_srun_torch26 fsdp_requires_grad_8192_srun_torch26
  ray_node_death_4096_torch21 cuda_oom_2048_deepspeed_slurm fsdp_reduce_scatter_hang_1024_srun_torch26
  deepspeed_aio_nvme_2048_torch24 hang_2048_initiator_truncated hang_2048_srun_async_cleanup_only
  cuda_oom_1024_torch21
)
for tool in "$BASE" "$NEW" "$DENPEX"; do
  [[ -x $tool ]] || { echo "ab_false_candidates.sh: $tool is missing: build it first" >&2; exit 2; }
done
mkdir -p "$WORK"
false_candidates() {  # the false candidates scan_bench $1 counts in file $2
  "$1" --candidates "$2" 0 1000000000000 1 | sed -n '1s/.* hits, \([0-9]*\) false$/\1/p'
}
row() {  # row NAME FILE
  local b n
  b=$(false_candidates "$BASE" "$2")
  n=$(false_candidates "$NEW" "$2")
  awk -v name="$1" -v b="$b" -v n="$n" 'BEGIN {
    printf "| %s | %d | %d | %+.1f %% |\n", name, b, n, (b > 0 ? 100 * (n - b) / b : 0) }'
}
echo "| log | base | new | change |"
echo "|---|---:|---:|---:|"
for out in "$SCALE"/crash_*/incident/slurm-*.out; do
  [[ -f $out ]] && row "$(basename "$(dirname "$(dirname "$out")")")'s srun log" "$out"
done
if [[ ! -f $WORK/corpora.txt ]]; then
  find corpora/real* -type f -print0 | sort -z | xargs -0 cat >"$WORK/corpora.txt"
fi
row "corpora/real*" "$WORK/corpora.txt"
for s in "${SCENARIOS[@]}"; do
  if [[ ! -f $WORK/$s.txt ]]; then
    scenario=$(find scenarios -name "$s.textproto" | head -1)
    [[ -n $scenario ]] || { echo "ab_false_candidates.sh: no scenario $s" >&2; exit 2; }
    rm -rf "$WORK/sim"
    "$DENPEX" simulate "$scenario" --out "$WORK/sim" --no-progress >/dev/null
    find "$WORK/sim/incident" -type f -print0 | sort -z | xargs -0 cat >"$WORK/$s.txt"
    rm -rf "$WORK/sim"
  fi
  row "$s" "$WORK/$s.txt"
done
