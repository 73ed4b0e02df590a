#!/usr/bin/python3
"""A plain DDP training script (gloo, CPU), as teams write one, for corpora/real2.

It prints what an ordinary script prints: rank 0's progress line per step (plain print, so
stdout to a file or pipe is block-buffered) and nothing that names ranks, hosts or pids.
Rank 0 saves checkpoints/step_<N>.pt every --ckpt-every steps with torch.save.
With --table-rows R > 0 the model also holds a frozen feature table (an nn.Embedding of R x 32
floats, kept fixed while the MLP trains; zeros, so that the checkpoints compress), saved with
the model: R = 250,000 makes each checkpoint about 32 MB, a save that takes a while.

Rank and world come from torchrun (RANK, WORLD_SIZE, LOCAL_RANK) or, under a plain
`srun`, from SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID (MASTER_ADDR/PORT from the
batch script).

Most faults of corpora/real2 are injected from outside (the capture harness signals a
worker, Slurm cancels or times out the job, a memory cgroup limits it). The few that can
only happen inside a script are selected by --fault on --fault-rank at --fault-step:
  exception  an uncaught ValueError while decoding a batch
  exit       an error message on stderr and sys.exit(1)
  hang       sleeps forever before the gradient all-reduce, printing nothing
  leak       keeps every batch's activations (64 MiB each) until the memory limit kills it
When DENPEX_FAULT_RECORD names a file (outside the incident), the time the fault fired,
the rank, local rank, host and pid are written there just before it fires.
"""

import argparse
import datetime
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--ckpt-every", type=int, default=5)
    p.add_argument("--step-s", type=float, default=0.5)
    p.add_argument("--timeout-s", type=float, default=30.0)
    p.add_argument("--table-rows", type=int, default=0)
    p.add_argument("--fault", default="none", choices=("none", "exception", "exit", "hang",
                                                       "leak"))
    p.add_argument("--fault-rank", type=int, default=-1)
    p.add_argument("--fault-step", type=int, default=-1)
    return p.parse_args()


def env_int(names, default):
    for n in names:
        if n in os.environ:
            return int(os.environ[n])
    return default


def record_fault(kind, rank, local_rank, step):
    path = os.environ.get("DENPEX_FAULT_RECORD")
    if not path:
        return
    t = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    with open(path, "w") as f:
        json.dump({"kind": kind, "rank": rank, "local_rank": local_rank, "step": step,
                   "host": socket.gethostname(), "pid": os.getpid(), "time": t}, f)
        f.flush()
        os.fsync(f.fileno())


class TableMLP(nn.Module):
    """The MLP on its input plus features looked up in a frozen table (--table-rows)."""

    def __init__(self, rows):
        super().__init__()
        self.table = nn.Embedding(rows, 32)
        self.table.weight.requires_grad_(False)
        nn.init.zeros_(self.table.weight)
        self.mlp = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x, ids):
        return self.mlp(x + self.table(ids))


def main():
    args = parse_args()
    rank = env_int(("RANK", "SLURM_PROCID"), 0)
    world = env_int(("WORLD_SIZE", "SLURM_NTASKS"), 1)
    local_rank = env_int(("LOCAL_RANK", "SLURM_LOCALID"), 0)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.timeout_s))
    torch.manual_seed(0)
    if args.table_rows > 0:
        model = DDP(TableMLP(args.table_rows))
    else:
        model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(1000 + rank)
    me = rank == args.fault_rank
    kept = []
    for step in range(1, args.steps + 1):
        x = torch.randn(64, 32, generator=g)
        y = x.sum(dim=1, keepdim=True)
        if me and step == args.fault_step and args.fault == "exception":
            record_fault("exception", rank, local_rank, step)
            raise ValueError(f"could not decode sample {64 * step + 17}: unexpected end of data")
        if args.table_rows > 0:
            ids = torch.randint(args.table_rows, (64,), generator=g)
            loss = nn.functional.mse_loss(model(x, ids), y)
        else:
            loss = nn.functional.mse_loss(model(x), y)
        time.sleep(args.step_s)
        if me and step >= args.fault_step:
            if args.fault == "exit" and step == args.fault_step:
                record_fault("exit", rank, local_rank, step)
                print("error: input shard is unreadable, giving up", file=sys.stderr)
                sys.exit(1)
            if args.fault == "hang" and step == args.fault_step:
                record_fault("hang", rank, local_rank, step)
                while True:
                    time.sleep(3600)
            if args.fault == "leak":
                if step == args.fault_step:
                    record_fault("leak", rank, local_rank, step)
                while True:
                    kept.append(torch.ones(16 * 1024 * 1024))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 0:
            print(f"step {step} loss {loss.item():.4f}")
        if step % args.ckpt_every == 0:
            if rank == 0:
                os.makedirs("checkpoints", exist_ok=True)
                torch.save({"step": step, "model": model.module.state_dict(),
                            "optimizer": opt.state_dict()}, f"checkpoints/step_{step}.pt")
            dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
