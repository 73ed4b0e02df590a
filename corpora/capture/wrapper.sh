#!/bin/sh
# torchrun --no_python entry point: one log file per global rank, as in docs/log_formats.md §1.
# DENPEX_LOG_DIR: the node's directory in the incident; DENPEX_TRAIN: train.py.
# DENPEX_MEMCG / DENPEX_MEMCG_RANK: when this is that rank, join the memory cgroup first
# (the harness created it with a limit), so the kernel's OOM killer acts on this worker.
if [ -n "${DENPEX_MEMCG:-}" ] && [ "${DENPEX_MEMCG_RANK:-}" = "$RANK" ]; then
  echo $$ > "$DENPEX_MEMCG/cgroup.procs"
fi
exec /usr/bin/python3 "$DENPEX_TRAIN" "$@" > "$DENPEX_LOG_DIR/rank_$RANK.log" 2>&1
