#!/usr/bin/env python3
"""Pads an srun-layout incident's slurm-<jobid>.out to a target size with the chatter a real
16k-rank job prints before it fails: labelled NCCL_DEBUG=INFO channel/proxy lines (each task's
own host, so the noise never contradicts the incident) and trainer lines. The noise goes in
front of the simulated lines, as it would have been printed first.
Usage: pad_noise.py INCIDENT_DIR TARGET_BYTES"""
import glob
import os
import random
import sys

incident, target = sys.argv[1], int(sys.argv[2])
out = glob.glob(os.path.join(incident, "slurm-*.out"))[0]
with open(out, "rb") as f:
    tail = f.read()
tasks = 16384
width = len(str(tasks - 1))
rng = random.Random(1)
lines = []
for i in range(200_000):
    t = rng.randrange(tasks)
    host = "gpu-%04d" % (t // 8 + 1)
    label = str(t).rjust(width) + ": "
    k = rng.randrange(4)
    if k == 0:
        lines.append(f"{label}{host}:{4000 + t % 8}:{4100 + i % 97} [{t % 8}] NCCL INFO Channel {i % 32:02d}/0 : "
                     f"{t}[{t % 8}] -> {(t + 1) % tasks}[{(t + 1) % 8}] via P2P/IPC/read")
    elif k == 1:
        lines.append(f"{label}{host}:{4000 + t % 8}:{4200 + i % 89} [{t % 8}] NCCL INFO [Proxy Service {i % 16}] "
                     f"Connected to proxy localRank {t % 8} -> connection 0x7f{i:08x}")
    elif k == 2:
        lines.append(f"{label}{host}:{4000 + t % 8}:{4000 + t % 8} [{t % 8}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB "
                     f"[1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [RO]; OOB ib0:10.{t // 256}.{t % 256}.1<0>")
    else:
        lines.append(f"{label} [2026-03-02 08:5{i % 10}:{i % 60:02d}] iteration {i % 1000}/ 100000 | consumed samples: "
                     f"{i * 512} | elapsed time per iteration (ms): 1500.{i % 10} | learning rate: 3.0E-04 | "
                     f"lm loss: 2.{i % 1000:03d}E+00 | loss scale: 1.0 | grad norm: 0.{i % 100:02d} |")
block = ("\n".join(lines) + "\n").encode()
tmp = out + ".padding"
with open(tmp, "wb") as f:
    written = 0
    while written + len(block) + len(tail) <= target:
        f.write(block)
        written += len(block)
    f.write(tail)
os.replace(tmp, out)
print(f"{out}: {written + len(tail)} bytes ({written} of noise)")
