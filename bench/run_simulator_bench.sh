#!/usr/bin/env bash
# Runs the simulator benchmarks of docs/benchmarks.md. Usage (from the repository root):
#   cmake -S . -B build-bench -DDENPEX_BUILD_BENCHMARKS=ON -DDENPEX_BUILD_TESTS=OFF
#   cmake --build build-bench -j2 --target simulate_bench
#   bench/run_simulator_bench.sh build-bench/bench/simulate_bench
set -euo pipefail
BIN=${1:-build-bench/bench/simulate_bench}
SHM=/dev/shm/denpex-bench
DISK=${TMPDIR:-/tmp}/denpex-bench
run() { "$BIN" "$@"; }
# 16,384 ranks (TP8 x PP16 x DP128), SIGKILL cascade with NCCL_DEBUG=INFO.
run scenarios/scale/crash_16384.textproto "$SHM/16k-srun" --min-lines 2000000
run scenarios/scale/crash_16384.textproto "$DISK/16k-srun" --min-lines 2000000
run scenarios/scale/crash_16384.textproto "$SHM/16k-files" --min-lines 2000000 \
  --set launcher=LAUNCHER_TORCHRUN --set layout=LAYOUT_PER_RANK_FILES
run scenarios/scale/crash_16384.textproto "$DISK/16k-files" --min-lines 2000000 \
  --set launcher=LAUNCHER_TORCHRUN --set layout=LAYOUT_PER_RANK_FILES
# 65,536 and 131,072 ranks, srun layout.
run scenarios/scale/crash_65536.textproto "$SHM/64k-srun" --min-lines 7000000
rm -rf "$SHM/64k-srun"
run scenarios/scale/crash_131072.textproto "$SHM/128k-srun" --min-lines 15000000
rm -rf "$SHM" "$DISK"
