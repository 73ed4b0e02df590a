#!/usr/bin/env bash
# A node's own console of 1 GB (docs/benchmarks.md, "A node's console searched for its GPUs").
#   bench/engine/node_console_bench.sh BUILD [ROUNDS] [BYTES] [BASE_BUILD]
# Copies the frozen single-node srun incident corpora/real/sl_sigkill_task1 twice under
# $TMPDIR/denpex-node-console/ (kept for later runs), its slurm-4200.out padded in front to BYTES
# (default 1e9) with NCCL_DEBUG=INFO chatter of its four tasks on sn01: `top` leaves the console
# where Slurm wrote it (a file of no node), `node` moves it into sn01/ (the node's file: once rank
# 1 is found, the node's files are searched for its GPUs' lines). Checks that both name rank 1 on
# sn01, warms the page cache, then per round times `denpex diagnose` of each (and of `node` with
# BASE_BUILD's binary when given) and `grep -c Killed` over the console, best of three each.
set -euo pipefail
BIN=$1/cli/denpex
ROUNDS=${2:-3}
BYTES=${3:-1000000000}
BASE=${4:+$4/cli/denpex}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${TMPDIR:-/tmp}/denpex-node-console
if [[ ! -f $WORK/top/slurm-4200.out || $(stat -c %s "$WORK/top/slurm-4200.out") -lt $BYTES ]]; then
  rm -rf "$WORK" && mkdir -p "$WORK"
  cp -r "$ROOT/corpora/real/sl_sigkill_task1/incident" "$WORK/top"
  python3 - "$WORK/top/slurm-4200.out" "$BYTES" <<'PY'
import random, sys
path, target = sys.argv[1], int(sys.argv[2])
tail = open(path, "rb").read()
rng = random.Random(1)
lines = []
for i in range(100_000):
    t, k = rng.randrange(4), rng.randrange(3)
    head = f"{t}: sn01:{4125 + t}:{4200 + i % 97} [{t}] NCCL INFO "
    if k == 0:
        lines.append(head + f"Channel {i % 32:02d}/0 : {t}[{t}] -> {(t + 1) % 4}[{(t + 1) % 4}] via P2P/IPC/read")
    elif k == 1:
        lines.append(head + f"[Proxy Service {i % 16}] Connected to proxy localRank {t} -> connection 0x7f{i:08x}")
    else:
        lines.append(head + "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB ib0:10.0.0.1<0>")
block = ("\n".join(lines) + "\n").encode()
with open(path, "wb") as f:
    n = 0
    while n < target:
        f.write(block)
        n += len(block)
    f.write(tail)
PY
  mkdir -p "$WORK/node" && cp -al "$WORK/top/." "$WORK/node/" && mv "$WORK/node/slurm-4200.out" "$WORK/node/sn01/"
fi
cat "$WORK/top/slurm-4200.out" >/dev/null
for layout in top node; do
  "$BIN" diagnose "$WORK/$layout" | grep -q "initiator   rank 1 on sn01, local rank 1" ||
    { echo "$layout: the engine does not name rank 1 on sn01" >&2; exit 1; }
done
best() {  # the fastest wall time of three runs of the command
  local b="" w
  for _ in 1 2 3; do
    w=$({ /usr/bin/time -f "%e" "$@" >/dev/null; } 2>&1 | tail -1)
    if [[ -z $b ]] || awk -v a="$w" -v b="$b" 'BEGIN {exit !(a < b)}'; then b=$w; fi
  done
  echo "$b"
}
for r in $(seq "$ROUNDS"); do
  line="round $r, load $(cut -d' ' -f1-3 /proc/loadavg): top $(best "$BIN" diagnose "$WORK/top") s, node $(best "$BIN" diagnose "$WORK/node") s"
  [[ -n $BASE ]] && line+=", base's node $(best "$BASE" diagnose "$WORK/node") s"
  echo "$line, grep -c $(best grep -c Killed "$WORK/top/slurm-4200.out") s"
done
