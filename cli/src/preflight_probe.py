"""denpex preflight's fabric probe: all_reduce over torch.distributed (gloo, CPU tensors).

Written out and launched by `denpex preflight --fabric` (docs/preflight.md, "Fabric") on each
rank of one probe group, under srun or torchrun. Rank 0 prints nccl-tests' all_reduce_perf table
(the same columns and summary lines), so the same reader judges both probes: the ranks' hosts,
each size's time, algorithm and bus bandwidth, and the elements that came back wrong.

The rank and world come from torchrun (RANK, WORLD_SIZE) or Slurm (SLURM_PROCID, SLURM_NTASKS);
the rendezvous is MASTER_ADDR:MASTER_PORT. A rank's host is the name the launcher placed it on
(SLURMD_NODENAME, DENPEX_PROBE_HOST), else its host name.
"""

import argparse
import datetime
import os
import socket
import sys
import time


def env_int(*names):
    for name in names:
        value = os.environ.get(name)
        if value is not None and value.strip().isdigit():
            return int(value)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-bytes", type=int, default=1 << 10)
    parser.add_argument("--max-bytes", type=int, default=64 << 20)
    parser.add_argument("--factor", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=120, help="seconds for any collective")
    args = parser.parse_args()

    rank = env_int("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")
    world = env_int("WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE")
    addr = os.environ.get("MASTER_ADDR")
    port = env_int("MASTER_PORT")
    if rank is None or world is None or not addr or port is None:
        sys.exit("denpex probe: no rank, world size or MASTER_ADDR/MASTER_PORT in the "
                 "environment; run it under srun or torchrun (denpex preflight --fabric does)")
    host = (os.environ.get("SLURMD_NODENAME") or os.environ.get("DENPEX_PROBE_HOST")
            or socket.gethostname().split(".")[0])

    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://{addr}:{port}", rank=rank,
                            world_size=world,
                            timeout=datetime.timedelta(seconds=args.timeout))
    who = [None] * world
    dist.all_gather_object(who, (host, os.getpid()))

    if rank == 0:
        print(f"# denpex gloo probe: torch {torch.__version__}, gloo, {world} ranks, "
              f"minBytes {args.min_bytes} maxBytes {args.max_bytes} step: {args.factor}(factor) "
              f"warmup iters: {args.warmup} iters: {args.iters} validation: 1")
        print("# Collective test starting: all_reduce_perf")
        print("#\n# Using devices")
        for r, (h, pid) in enumerate(who):
            print(f"#  Rank {r:2d} Group  0 Pid {pid:6d} on {h:>10} device -1 [cpu] gloo")
        print("#")
        print("#                                                              out-of-place"
              "                       in-place          ")
        print("#       size         count      type   redop    root     time   algbw   busbw"
              " #wrong     time   algbw   busbw #wrong")
        print("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
              "            (us)  (GB/s)  (GB/s)       ")
        sys.stdout.flush()

    expected = world * (world + 1) / 2  # every rank contributes rank + 1
    factor = 2 * (world - 1) / world  # all_reduce's bus bandwidth per algorithm bandwidth
    total_busbw, sizes, total_wrong = 0.0, 0, 0
    size = max(args.min_bytes, 4)
    while size <= args.max_bytes:
        count = size // 4
        buf = torch.empty(count, dtype=torch.float32)
        out = torch.empty_like(buf)  # out of place: gloo reduces in place, so copy, then reduce
        row = []
        for out_of_place in (True, False):
            times = []
            target = out if out_of_place else buf
            for i in range(args.warmup + args.iters):
                buf.fill_(rank + 1)
                dist.barrier()
                start = time.perf_counter()
                if out_of_place:
                    out.copy_(buf)
                dist.all_reduce(target)
                if i >= args.warmup:
                    times.append(time.perf_counter() - start)
            wrong = torch.tensor([int((target != expected).sum())], dtype=torch.int64)
            # The median iteration (nccl-tests prints the mean): CPU ranks share their cores with
            # the host, and one descheduled iteration is not the fabric's.
            took = torch.tensor([sorted(times)[len(times) // 2]], dtype=torch.float64)
            dist.all_reduce(wrong)
            dist.all_reduce(took, op=dist.ReduceOp.MAX)  # the slowest rank's time
            us = took.item() * 1e6
            algbw = size / took.item() / 1e9 if took.item() > 0 else 0.0
            row.append((us, algbw, algbw * factor, wrong.item()))
        if rank == 0:
            (t1, a1, b1, w1), (t2, a2, b2, w2) = row
            print(f"{size:12d}  {count:12d}     float     sum      -1 {t1:8.1f} {a1:7.2f} "
                  f"{b1:7.2f} {w1:6d} {t2:8.1f} {a2:7.2f} {b2:7.2f} {w2:6d}")
            sys.stdout.flush()
        total_busbw += row[0][2]
        total_wrong += row[0][3] + row[1][3]
        sizes += 1
        size *= args.factor

    if rank == 0:
        print(f"# Out of bounds values : {total_wrong} {'OK' if total_wrong == 0 else 'FAILED'}")
        print(f"# Avg bus bandwidth    : {total_busbw / max(sizes, 1):.4f}")
        print("#")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
