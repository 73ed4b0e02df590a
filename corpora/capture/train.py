#!/usr/bin/python3
"""A small DDP (gloo, CPU) training job with fault injection, for capturing real incidents.

It behaves like an ordinary data-parallel training script: a tiny MLP, one log line per
step on every rank, `torch.save` checkpoints every K steps (written by rank 0 as
`step_<N>.pt`, then a `latest` file naming it, replaced atomically), and a short collective
timeout so that a capture takes seconds rather than 30 minutes.

Output as a real script leaves it:
  - step lines go to stdout with plain print(): when stdout is a file or a pipe it is
    block-buffered, so what was printed since the last flush is lost if the process is
    killed by a signal (SIGKILL, SIGTERM with the default action, ...);
  - lifecycle lines (start, checkpoint saved) go through `logging` to stderr, which flushes
    every record.

Rank and world size come from torchrun (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR/PORT) or
from srun (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS; MASTER_ADDR/PORT from the batch
script).

Fault injection (--fault, on --fault-rank, at --fault-step):
  sigkill      os.kill(self, SIGKILL) after the forward pass (peers enter the all-reduce)
  hang         sleep forever after the forward pass; prints nothing
  sigstop      os.kill(self, SIGSTOP) after the forward pass
  exception    an uncaught RuntimeError raised while loading the batch
  exit         logs an error and calls sys.exit(1)
  oom          allocates and touches memory until the kernel (a memory cgroup limit) kills it;
               with DENPEX_OOM_CGROUP set (a memory cgroup directory the harness created with
               a limit, cgroup v1 or v2), the rank first moves itself into that cgroup, as a
               worker of a job that Slurm's task/cgroup or Kubernetes confines, so the kernel's
               memory-cgroup OOM killer takes it and no other process. Otherwise the launcher
               set the limit (capture.py: wrapper.sh joins the cgroup at start).
  slow         from that step on, the rank's data loading takes --slow-s longer each step
  kill_in_save while saving the checkpoint of --fault-step (rank 0 only): writes part of the
               file, then SIGKILLs itself, leaving a truncated step_<N>.pt; `latest` still
               names the previous checkpoint
Resuming (--resume DIR, or --resume FILE): every rank loads the checkpoint that DIR/latest
names (or FILE itself, e.g. the one `denpex canary` passes as {checkpoint}) into its model
before the first step (model.module.load_state_dict, strict) and continues from its step.
With --hidden different from the width that wrote it, every rank's load raises torch's
"Error(s) in loading state_dict ... size mismatch" (a job-level configuration error).
When DENPEX_FAULT_RECORD names a file, the true time the fault fired is written there (as
JSON) just before it fires; that file lives outside the incident directory.
"""

import argparse
import datetime
import io
import json
import logging
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

FAULTS = ("none", "sigkill", "hang", "sigstop", "exception", "exit", "oom", "slow",
          "kill_in_save")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--ckpt-every", type=int, default=5)
    p.add_argument("--ckpt-dir", default="checkpoints")
    p.add_argument("--compute-s", type=float, default=0.25,
                   help="simulated compute time per step (sleep), seconds")
    p.add_argument("--timeout-s", type=float, default=20.0,
                   help="collective timeout given to init_process_group")
    p.add_argument("--fault", choices=FAULTS, default="none")
    p.add_argument("--fault-rank", type=int, default=-1)
    p.add_argument("--fault-step", type=int, default=-1)
    p.add_argument("--slow-s", type=float, default=1.5)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--hidden", type=int, default=64, help="width of the MLP's hidden layer")
    p.add_argument("--resume", default="",
                   help="checkpoint directory to resume from (its `latest` file names the file), "
                        "or the checkpoint file itself")
    return p.parse_args()


def env_int(*names, default=None):
    for n in names:
        if n in os.environ:
            return int(os.environ[n])
    if default is None:
        raise SystemExit(f"none of {names} is set")
    return default


def now():
    return datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def record_fault(kind, rank, step):
    path = os.environ.get("DENPEX_FAULT_RECORD")
    if not path:
        return
    t = datetime.datetime.now(datetime.timezone.utc)
    with open(path, "w") as f:
        json.dump({"kind": kind, "rank": rank, "step": step, "pid": os.getpid(),
                   "time": t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}, f)
        f.flush()
        os.fsync(f.fileno())


class Batches:
    """Synthetic regression data, different on every rank, reproducible."""

    def __init__(self, rank, seed):
        self.g = torch.Generator().manual_seed(seed + 7919 * rank)
        self.w = torch.linspace(-1.0, 1.0, 32)

    def get(self, step):
        x = torch.randn(64, 32, generator=self.g)
        y = (x @ self.w).unsqueeze(1) + 0.05 * torch.randn(64, 1, generator=self.g)
        return x, y


def save_checkpoint(args, model, opt, step, log, kill_midway=False):
    os.makedirs(args.ckpt_dir, exist_ok=True)
    name = f"step_{step}.pt"
    path = os.path.join(args.ckpt_dir, name)
    state = {"step": step, "model": model.module.state_dict(),
             "optimizer": opt.state_dict()}
    if kill_midway:
        # Serialize as torch.save would, then write only part of it before dying: what a
        # process killed during a write to a slow filesystem leaves behind.
        buf = io.BytesIO()
        torch.save(state, buf)
        data = buf.getvalue()
        with open(path, "wb") as f:
            f.write(data[: len(data) // 2])
            f.flush()
            os.fsync(f.fileno())
        record_fault("kill_in_save", dist.get_rank(), step)
        os.kill(os.getpid(), signal.SIGKILL)
    torch.save(state, path)
    tmp = os.path.join(args.ckpt_dir, "latest.tmp")
    with open(tmp, "w") as f:
        f.write(name + "\n")
    os.replace(tmp, os.path.join(args.ckpt_dir, "latest"))
    log.info("saved checkpoint %s (step %d)", path, step)


def main():
    args = parse_args()
    rank = env_int("RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID")
    world = env_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS")
    local_rank = env_int("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", default=0)
    os.environ.setdefault("RANK", str(rank))
    os.environ.setdefault("WORLD_SIZE", str(world))

    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr,
        format=f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s")
    log = logging.getLogger("train")

    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.timeout_s))
    log.info("process group ready: backend=gloo rank=%d local_rank=%d world_size=%d "
             "host=%s pid=%d torch=%s", rank, local_rank, world, os.uname().nodename,
             os.getpid(), torch.__version__)

    torch.manual_seed(args.seed)
    model = DDP(nn.Sequential(nn.Linear(32, args.hidden), nn.ReLU(), nn.Linear(args.hidden, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    first = 1
    if args.resume:
        path = args.resume
        if os.path.isdir(args.resume):
            with open(os.path.join(args.resume, "latest")) as f:
                path = os.path.join(args.resume, f.read().strip())
        log.info("resuming from %s", path)
        state = torch.load(path, map_location="cpu")
        if rank == 0:
            record_fault("resume", rank, state["step"])
        model.module.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        first = state["step"] + 1
    loss_fn = nn.MSELoss()
    data = Batches(rank, args.seed)
    me = rank == args.fault_rank
    if rank == 0:
        print(f"{now()} training: steps={args.steps} ckpt_every={args.ckpt_every} "
              f"world_size={world} timeout_s={args.timeout_s:g}")

    for step in range(first, args.steps + 1):
        t0 = time.monotonic()
        if me and args.fault == "slow" and step >= args.fault_step:
            if step == args.fault_step:
                record_fault("slow", rank, step)
            time.sleep(args.slow_s)
        if me and step == args.fault_step and args.fault == "exception":
            record_fault("exception", rank, step)
            raise RuntimeError(f"batch {step} from shard 3 has 17 non-finite values")
        x, y = data.get(step)
        t_data = time.monotonic()

        out = model(x)
        loss = loss_fn(out, y)
        time.sleep(args.compute_s)

        if me and step == args.fault_step:
            if args.fault == "sigkill":
                record_fault("sigkill", rank, step)
                os.kill(os.getpid(), signal.SIGKILL)
            elif args.fault == "sigstop":
                record_fault("sigstop", rank, step)
                os.kill(os.getpid(), signal.SIGSTOP)
            elif args.fault == "hang":
                record_fault("hang", rank, step)
                while True:
                    time.sleep(3600)
            elif args.fault == "exit":
                record_fault("exit", rank, step)
                log.error("data shard 3 is unreadable (checksum mismatch); exiting")
                sys.exit(1)
            elif args.fault == "oom":
                cgroup = os.environ.get("DENPEX_OOM_CGROUP")
                if cgroup:
                    # Neither cgroup version moves the pages already charged (v1's
                    # move_charge_at_immigrate is 0 by default): the cgroup's usage starts near
                    # zero and only what is allocated from here on counts against its limit.
                    with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                        f.write(str(os.getpid()))
                record_fault("oom", rank, step)
                hoard = []
                while True:
                    hoard.append(torch.ones(16 * 1024 * 1024))  # 64 MiB, touched

        opt.zero_grad()
        loss.backward()  # DDP all-reduces the gradients here
        opt.step()
        t_end = time.monotonic()
        print(f"{now()} rank={rank} step={step}/{args.steps} loss={loss.item():.5f} "
              f"data_ms={1000 * (t_data - t0):.1f} step_ms={1000 * (t_end - t0):.1f}")

        if step % args.ckpt_every == 0:
            if rank == 0:
                kill = (me and args.fault == "kill_in_save" and step == args.fault_step)
                save_checkpoint(args, model, opt, step, log, kill_midway=kill)
            dist.barrier()

    log.info("training finished after %d steps", args.steps)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
