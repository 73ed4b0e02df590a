#!/usr/bin/python3
"""Captures corpora/real2: incidents of a plain training script (train2.py) launched the way
teams launch jobs, each kept exactly in the layout the software writes by default.

Launch styles (all on this one host; gloo on CPU):
  tr1  one `torchrun --nproc_per_node N --master_port P train2.py ... > train.log 2>&1`
       (the agent's console, workers' output inherited: one file), checkpoints/ beside it;
  tr2  two torchrun agents on this host (same host name), c10d rendezvous, `--tee 3
       --log_dir logs`, each agent's console to its own file; logs/ as torchrun writes it;
  sb   `sbatch job.sh` whose script runs `srun` (one task per node; one Slurm node) with
       torchrun in the task (c10d rendezvous); output slurm-<jobid>.out;
  sbt  as sb with two tasks, each a torchrun agent, and `srun --output=%x-%j-%t.out`;
  sl   `sbatch` whose script runs `srun --label python3 train2.py`, one task per rank;
  st   as sl, with two job steps (a `srun --label hostname` step before training).
The Slurm daemons (slurmctld, slurmd, munged on loopback; node sn01 in a UTS namespace) are
corpora/capture/capture.py's, started per incident; their whole logs are kept at the top of
the incident under the names slurm.conf gives them (slurmctld.log, slurmd.log), and for a
memory fault the kernel lines printed during the capture as dmesg.log.

Faults are injected from outside the script where they can be: the harness SIGKILLs or
SIGSTOPs a worker (found by its RANK / SLURM_PROCID in /proc/<pid>/environ) once the job has
written checkpoints/step_5.pt; Slurm cancels (`scancel`) or times out (`--time=1`) the job;
a memory limit (a cgroup-v1 memory cgroup, or Slurm's --mem) kills a worker that keeps its
activations. Exceptions, sys.exit(1) and a silent hang can only come from the script
(train2.py --fault). expected.json comes from the injection record alone.

Usage: corpora/capture/capture2.sh [--only ID[,ID...]] [--list]   (root; not part of CI)
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import capture as c1  # the harness of corpora/real: Slurm daemons, process and file helpers

HERE = c1.HERE
OUT = os.path.join(c1.REPO, "corpora", "real2")
WORK = os.environ.get("DENPEX_CAPTURE2_WORK", "/tmp/denpex-capture2")
BIN = os.path.join(WORK, "bin")
PY = c1.PY
STEPS, CKPT_EVERY, STEP_S, TIMEOUT_S = 20, 5, 0.5, 20
HOST = socket.gethostname()
SLURM_NODE = c1.SLURM_NODE
MEMCG_LIMIT = 900 * 1024 * 1024
SLURM_MEM = "1500M"
OPERATOR_S = 75  # a hung torchrun job is SIGTERMed by the harness this long after the fault
OPERATOR_KILL_S = 30  # ... and what still runs SIGKILLed this long after the SIGTERM


def I(id, style, fault, rank=-1, step=8, nproc=2, ntasks=2, batch=1):  # noqa: E743 - row
    return dict(id=id, style=style, fault=fault, rank=rank, step=step, nproc=nproc,
                ntasks=ntasks, batch=batch)


# In-script faults fire at --fault-step (8); harness faults after checkpoints/step_5.pt.
INCIDENTS = [
    I("tr1_sigkill_rank1", "tr1", "sigkill", 1),
    I("tr1_exception_rank1", "tr1", "exception", 1),
    I("tr1_sigstop_rank1", "tr1", "sigstop", 1),
    I("tr1_exit_rank1", "tr1", "exit", 1),
    I("tr1_sigkill_rank0", "tr1", "sigkill", 0),
    I("tr1_exception_rank0", "tr1", "exception", 0),
    I("tr1_hang_rank0", "tr1", "hang", 0),
    I("tr1_oom_rank1", "tr1", "oom", 1),
    I("tr1_sigkill_rank2_of4", "tr1", "sigkill", 2, nproc=4),
    I("tr2_sigkill_rank1", "tr2", "sigkill", 1, nproc=1),
    I("tr2_exception_rank1", "tr2", "exception", 1, nproc=1),
    I("tr2_sigstop_rank0", "tr2", "sigstop", 0, nproc=1),
    I("tr2_exit_rank0", "tr2", "exit", 0, nproc=1),
    I("tr2_sigkill_rank3_of4", "tr2", "sigkill", 3, nproc=2),
    I("sb_sigkill_rank1", "sb", "sigkill", 1),
    I("sb_exception_rank0", "sb", "exception", 0),
    I("sb_scancel", "sb", "scancel"),
    I("sb_exit_rank1", "sb", "exit", 1),
    I("sb_sigstop_rank0", "sb", "sigstop", 0),
    I("sb_time_limit", "sb", "time_limit"),
    I("sbt_sigkill_rank1", "sbt", "sigkill", 1, nproc=1),
    I("sbt_exception_rank0", "sbt", "exception", 0, nproc=1),
    I("sbt_scancel", "sbt", "scancel", nproc=1),
    I("sbt_exit_rank1", "sbt", "exit", 1, nproc=1),
    I("sl_sigkill_task1", "sl", "sigkill", 1),
    I("sl_exception_task2", "sl", "exception", 2, ntasks=3),
    I("sl_exit_task0", "sl", "exit", 0),
    I("sl_oom_task1", "sl", "oom", 1),
    I("sl_scancel", "sl", "scancel"),
    I("sl_time_limit", "sl", "time_limit"),
    I("st_sigkill_task0", "st", "sigkill", 0),
    I("st_exception_task1", "st", "exception", 1),
    I("mj_sigkill_task1", "mj", "sigkill", 1),
    I("mj_exception_task0", "mj", "exception", 0),
    I("sl_sigstop_task1", "sl", "sigstop", 1),
    I("sl_preemption", "sl", "preemption"),
    I("sb_preemption", "sb", "preemption"),
    # Batch 2 (`--batch 2`): a kill during a checkpoint save, a slow rank, the loss of an
    # agent's whole process tree, a requeue. For kill_in_save, `step` is the save that is
    # killed; for node_loss, `rank` is the agent (tr2: the one of node<rank>.log) or the srun
    # task (sbt) whose process tree is killed.
    I("tr1_kill_in_save_rank0", "tr1", "kill_in_save", 0, step=10, batch=2),
    I("sl_kill_in_save_task0", "sl", "kill_in_save", 0, step=10, batch=2),
    I("tr1_slow_rank1", "tr1", "slow", 1, batch=2),
    I("tr2_slow_rank0", "tr2", "slow", 0, nproc=1, batch=2),
    I("sl_slow_task1", "sl", "slow", 1, batch=2),
    I("tr2_node_loss_agent1", "tr2", "node_loss", 1, nproc=1, batch=2),
    I("tr2_node_loss_agent0", "tr2", "node_loss", 0, nproc=1, batch=2),
    I("sbt_node_loss_task1", "sbt", "node_loss", 1, nproc=1, batch=2),
    I("sl_requeue", "sl", "requeue", batch=2),
    I("sl_node_fail_requeue", "sl", "node_fail", batch=2),
]

OUTCOME = dict(c1.OUTCOME)
# An administrator's `scontrol requeue`: the scheduler ends the running job (and queues it
# again); no rank failed. A node that stops answering with every process of it gone: the
# node's loss (slurmctld requeues the --requeue job).
OUTCOME["requeue"] = ("FAULT_KIND_SCHEDULER_REQUEUE", "OWNER_SCHEDULER",
                      "FAILURE_CLASS_SCHEDULER_CANCEL")
OUTCOME["node_fail"] = OUTCOME["node_loss"]
IN_SCRIPT = {"exception", "exit", "hang", "oom"}   # train2.py --fault (oom: --fault leak)
BY_HARNESS = {"sigkill", "sigstop", "kill_in_save", "slow", "node_loss"}
BY_SLURM = {"scancel", "time_limit", "preemption", "requeue"}
TABLE_ROWS = 250000  # kill_in_save: train2.py --table-rows, checkpoints of about 32 MB
SLOW_DUTY = (0.9, 0.1)  # slow: the worker is SIGSTOPped 0.9 s, then runs 0.1 s, over and over


def log(msg):
    c1.log(msg)


def world_of(inc):
    if inc["style"] in ("tr1", "sb"):
        return inc["nproc"]
    if inc["style"] in ("tr2", "sbt"):
        return 2 * inc["nproc"]
    return inc["ntasks"]


def train_args(inc, steps=STEPS):
    a = ["--steps", str(steps), "--ckpt-every", str(CKPT_EVERY), "--step-s", str(STEP_S),
         "--timeout-s", str(TIMEOUT_S)]
    if inc["fault"] in IN_SCRIPT:
        a += ["--fault", "leak" if inc["fault"] == "oom" else inc["fault"],
              "--fault-rank", str(inc["rank"]), "--fault-step", str(inc["step"])]
    if inc["fault"] == "kill_in_save":
        a += ["--table-rows", str(TABLE_ROWS)]
    return a


def install_bin():
    os.makedirs(BIN, exist_ok=True)
    for name in ("train2.py", "torchrun"):
        shutil.copy2(os.path.join(HERE, name), os.path.join(BIN, name))
    os.chmod(os.path.join(BIN, "torchrun"), 0o755)


def resolve_slurm_node():
    """torchrun's c10d rendezvous hands its workers the agent's host name as MASTER_ADDR; on a
    cluster the node name resolves, here /etc/hosts gets `127.0.0.1 sn01` if it lacks it."""
    try:
        socket.gethostbyname(SLURM_NODE)
    except OSError:
        with open("/etc/hosts", "a") as f:
            f.write(f"127.0.0.1 {SLURM_NODE}\n")


def env(tag, **extra):
    # BIN first on PATH: `torchrun` is corpora/capture/torchrun (Debian's, Std.from_str fixed).
    e = c1.clean_env(DENPEX_RUN=tag, DENPEX_FAULT_RECORD=os.path.join(WORK, tag, "fault.json"),
                     **extra)
    e["PATH"] = BIN + ":" + e["PATH"]
    return e


def read_proc(pid, what):
    try:
        with open(f"/proc/{pid}/{what}", "rb") as f:
            return f.read()
    except OSError:
        return b""


def find_worker(tag, rank):
    """(pid, local_rank) of the training process of global rank `rank` in run `tag`."""
    for d in os.listdir("/proc"):
        if not d.isdigit() or not read_proc(d, "comm").startswith(b"python"):
            continue
        envs = dict(kv.split(b"=", 1) for kv in read_proc(d, "environ").split(b"\0")
                    if b"=" in kv)
        if envs.get(b"DENPEX_RUN") != tag.encode():
            continue
        if b"train2.py" not in read_proc(d, "cmdline"):
            continue
        r = envs.get(b"RANK", envs.get(b"SLURM_PROCID"))
        if r is not None and int(r) == rank:
            lr = envs.get(b"LOCAL_RANK", envs.get(b"SLURM_LOCALID", b"0"))
            return int(d), int(lr)
    return None


def wait_worker(tag, rank, deadline):
    while time.monotonic() < deadline:
        w = find_worker(tag, rank)
        if w:
            return w
        time.sleep(0.2)
    raise RuntimeError(f"rank {rank} never started")


def harness_fault(inc, incident, deadline, host, agents=None):
    """Once checkpoints/step_5.pt exists: SIGKILL / SIGSTOP the worker of the injected rank,
    start throttling it (slow), SIGKILL an agent's whole process tree (node_loss), or wait
    for the save of step `step` to begin and SIGKILL the saving worker (kill_in_save).
    Returns the pid of the worker signalled (None for node_loss) and, for slow, the
    throttle to stop once the job is over."""
    ck = os.path.join(incident, "checkpoints", f"step_{CKPT_EVERY}.pt")
    if not c1.wait_for_path(ck, deadline - time.monotonic()):
        raise RuntimeError("the job never wrote its first checkpoint")
    rec = {"kind": inc["fault"], "host": host, "after": f"checkpoints/step_{CKPT_EVERY}.pt"}
    throttle = None
    if inc["fault"] == "node_loss":
        time.sleep(1.0)
        pid = None
        rec.update(lose_agent(inc, agents, deadline))
    elif inc["fault"] == "kill_in_save":
        pid, lr = wait_worker(inc["id"], inc["rank"], deadline)
        target = os.path.join(incident, "checkpoints", f"step_{inc['step']}.pt")
        size = 0
        while size == 0:  # poll often: the save takes a fraction of a second
            if time.monotonic() > deadline:
                raise RuntimeError(f"the job never began writing {target}")
            time.sleep(0.002)
            try:
                size = os.path.getsize(target)
            except FileNotFoundError:
                pass
        t = c1.utcnow()
        os.kill(pid, signal.SIGKILL)
        rec.update(rank=inc["rank"], local_rank=lr, pid=pid, step=inc["step"],
                   bytes_seen=size, bytes_at_kill=os.path.getsize(target),
                   after=f"checkpoints/step_{inc['step']}.pt began to fill")
    else:
        time.sleep(1.0)
        pid, lr = wait_worker(inc["id"], inc["rank"], deadline)
        t = c1.utcnow()
        if inc["fault"] == "slow":
            throttle = Throttle(pid)
        else:
            os.kill(pid, signal.SIGKILL if inc["fault"] == "sigkill" else signal.SIGSTOP)
        rec.update(rank=inc["rank"], local_rank=lr, pid=pid)
    if "time" not in rec:
        rec["time"] = c1.rfc3339(t)
    with open(os.path.join(WORK, inc["id"], "fault.json"), "w") as f:
        json.dump(rec, f)
    return pid, throttle


class Throttle:
    """slow: SIGSTOPs the worker SLOW_DUTY[0] s, lets it run SLOW_DUTY[1] s, over and over
    (slow but alive: each stop is far shorter than the collective timeout), until stop()."""

    def __init__(self, pid):
        import threading
        self.pid = pid
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while not self.done.is_set():
                os.kill(self.pid, signal.SIGSTOP)
                time.sleep(SLOW_DUTY[0])
                os.kill(self.pid, signal.SIGCONT)
                self.done.wait(SLOW_DUTY[1])
        except ProcessLookupError:
            pass

    def stop(self):
        self.done.set()
        self.thread.join()
        try:
            os.kill(self.pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


def run_of(pid):
    """(DENPEX_RUN, rank, SLURM_PROCID) of a process from its environment."""
    envs = dict(kv.split(b"=", 1) for kv in read_proc(pid, "environ").split(b"\0")
                if b"=" in kv)
    return envs.get(b"DENPEX_RUN"), envs.get(b"RANK"), envs.get(b"SLURM_PROCID")


def lose_agent(inc, agents, deadline):
    """node_loss: SIGKILL a torchrun agent and every process below it at once, as when its
    node is lost: tr2, the agent of node<rank>.log; sbt, the torchrun agent of srun task
    <rank>. Returns what the injection record keeps: the pids and the lost workers' ranks."""
    tag = inc["id"].encode()
    if agents is not None:
        agent = agents[inc["rank"]].pid
    else:
        agent = None
        while agent is None and time.monotonic() < deadline:
            for d in os.listdir("/proc"):
                if not d.isdigit() or b"torchrun" not in read_proc(d, "cmdline"):
                    continue
                run, _, task = run_of(d)
                if run == tag and task is not None and int(task) == inc["rank"]:
                    agent = int(d)
            time.sleep(0.2)
        if agent is None:
            raise RuntimeError(f"no torchrun agent of task {inc['rank']}")
    pids = [agent] + c1.descendants(agent)
    ranks = sorted(int(r) for _, r, _ in map(run_of, pids[1:]) if r is not None)
    t = c1.utcnow()
    c1.kill_all(pids)
    return {"agent": inc["rank"], "agent_pid": agent, "pids": pids, "lost_ranks": ranks,
            "time": c1.rfc3339(t)}


def join_memcg(inc, deadline):
    """tr1 oom: the injected worker joins a memory cgroup limited to MEMCG_LIMIT."""
    memcg = os.path.join(c1.memory_cgroup_root(), f"denpex-capture2-{inc['id']}")
    if os.path.isdir(memcg):
        os.rmdir(memcg)
    os.mkdir(memcg)
    with open(os.path.join(memcg, "memory.limit_in_bytes"), "w") as f:
        f.write(str(MEMCG_LIMIT))
    pid, _ = wait_worker(inc["id"], inc["rank"], deadline)
    with open(os.path.join(memcg, "cgroup.procs"), "w") as f:
        f.write(str(pid))
    return memcg


# ----------------------------------------------------------------------------- torchrun

def run_torchrun(inc, run_dir, incident):
    tag, n = inc["id"], inc["nproc"]
    port = c1.free_port()
    agents, outs, cmds = [], [], []
    if inc["style"] == "tr1":
        layouts = [(["torchrun", "--nproc_per_node", str(n), "--master_port", str(port)],
                    "train.log")]
    else:
        common = ["torchrun", "--nnodes", "2", "--nproc_per_node", str(n), "--rdzv_backend",
                  "c10d", "--rdzv_endpoint", f"127.0.0.1:{port}", "--rdzv_id", "job1",
                  "--tee", "3", "--log_dir", "logs"]
        layouts = [(common, "node0.log"), (common, "node1.log")]
    dmesg_before = c1.dmesg_lines() if inc["fault"] == "oom" else None
    start = c1.utcnow()
    deadline = time.monotonic() + 240
    memcg = None
    pid, throttle = None, None
    stopped_by_operator, killed_by_operator = [], []
    try:
        for argv, out in layouts:
            argv = argv + [os.path.join(BIN, "train2.py")] + train_args(inc)
            f = open(os.path.join(incident, out), "wb")
            outs.append(f)
            cmds.append(" ".join(argv) + f" > {out} 2>&1")
            agents.append(subprocess.Popen(argv, cwd=incident, env=env(tag), stdout=f,
                                           stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL))
        if inc["fault"] == "oom":
            memcg = join_memcg(inc, deadline)
        if inc["fault"] in BY_HARNESS:
            pid, throttle = harness_fault(inc, incident, deadline, HOST, agents)
        # A torchrun agent whose worker is stopped or hung, or that waits for a peer agent in
        # its exit barrier, does not end by itself: as an operator would, the harness
        # SIGTERMs the agents still running OPERATOR_S after the fault (recorded in
        # PRODUCED.md; not the initiator). An agent blocked on a lost c10d store does not act
        # on SIGTERM: OPERATOR_KILL_S later the operator SIGKILLs what still runs.
        fault_at = time.monotonic()
        while time.monotonic() < deadline and any(a.poll() is None for a in agents):
            since = time.monotonic() - fault_at
            if (inc["fault"] in ("sigstop", "hang", "node_loss") and not stopped_by_operator and
                    since > OPERATOR_S):
                stopped_by_operator = [i for i, a in enumerate(agents) if a.poll() is None]
                for i in stopped_by_operator:
                    agents[i].send_signal(signal.SIGTERM)
            if (stopped_by_operator and not killed_by_operator and
                    since > OPERATOR_S + OPERATOR_KILL_S):
                killed_by_operator = [i for i, a in enumerate(agents) if a.poll() is None]
                for i in killed_by_operator:
                    c1.kill_tree(agents[i].pid)
            time.sleep(0.2)
        if any(a.poll() is None for a in agents):
            raise RuntimeError("torchrun still running after the deadline")
        end = c1.utcnow()
    finally:
        if throttle:
            throttle.stop()
        for a in agents:
            if a.poll() is None:
                c1.kill_tree(a.pid)
                a.wait()
        if pid and inc["fault"] == "sigstop":
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for f in outs:
            f.close()
        if memcg:
            for _ in range(50):
                try:
                    os.rmdir(memcg)
                    break
                except OSError:
                    time.sleep(0.1)
    if dmesg_before is not None:
        lines = c1.new_dmesg(dmesg_before)
        if lines is not None:
            with open(os.path.join(incident, "dmesg.log"), "w") as f:
                f.writelines(lines)
    return dict(start=start, end=end, command=" ; ".join(cmds), host=HOST,
                exits=[a.returncode for a in agents], operator=stopped_by_operator,
                operator_kill=killed_by_operator)


# ----------------------------------------------------------------------------- slurm

def batch_script(inc, port, steps):
    args = " ".join(train_args(inc, steps))
    train = os.path.join(BIN, "train2.py")
    s = inc["style"]
    if s == "sb":
        body = (f"srun --nodes=1 --ntasks-per-node=1 torchrun --nnodes 1 --nproc_per_node "
                f"{inc['nproc']} --rdzv_backend c10d --rdzv_endpoint 127.0.0.1:{port} "
                f"--rdzv_id $SLURM_JOB_ID {train} {args}\n")
    elif s == "sbt":
        body = (f"srun --ntasks=2 --output=%x-%j-%t.out torchrun --nnodes 2 --nproc_per_node "
                f"{inc['nproc']} --rdzv_backend c10d --rdzv_endpoint 127.0.0.1:{port} "
                f"--rdzv_id $SLURM_JOB_ID {train} {args}\n")
    else:
        body = (f"export MASTER_ADDR=127.0.0.1\nexport MASTER_PORT={port}\n"
                + ("srun --label hostname\n" if s == "st" else "")
                + f"srun --label {PY} {train} {args}\n")
    return "#!/bin/bash\n" + body


def run_slurm(inc, run_dir, incident, index):
    slurm = c1.Slurm(os.path.join(run_dir, "slurm"), first_job_id=5100 + 10 * index)
    slurm.env = lambda **extra: env(inc["id"], SLURM_CONF=slurm.conf, **extra)
    port = c1.free_port()
    steps = STEPS
    ntasks = {"sb": 1, "sbt": 2}.get(inc["style"], inc["ntasks"])
    opts = ["--job-name=train", f"--ntasks={ntasks}"]
    if inc["style"] == "mj":
        opts.append("--mem=1500M")  # CR_Core_Memory: room for the other jobs beside it
    if inc["style"] in ("sb", "sbt"):
        opts += [f"--nodes=1", f"--cpus-per-task={inc['nproc']}"]
    if inc["fault"] == "oom":
        opts.append(f"--mem={SLURM_MEM}")
    if inc["fault"] == "time_limit":
        steps = 400
        opts.append("--time=1")
    if inc["fault"] in ("scancel", "preemption", "requeue", "node_fail"):
        steps = 200
    if inc["fault"] in ("requeue", "node_fail"):
        opts.append("--requeue")
    if inc["fault"] == "sigstop" and inc["style"] == "sl":
        opts.append("--time=2")  # srun waits for a stopped task: the job ends at its limit
    script = os.path.join(run_dir, "job.sh")
    text = batch_script(inc, port, steps)
    with open(script, "w") as f:
        f.write(text)
    dmesg_before = c1.dmesg_lines() if inc["fault"] == "oom" else None
    pid = None
    try:
        slurm.start()
        start = c1.utcnow()
        r = slurm.run(["sbatch", "--parsable", f"--chdir={incident}"] + opts + [script])
        if r.returncode != 0:
            raise RuntimeError(f"sbatch failed: {r.stderr}")
        job_id = int(r.stdout.strip().split(";")[0])
        others = []
        if inc["style"] == "mj":
            # Other jobs of the same user in the same directory: one finishes, one is
            # cancelled by its user while the training job runs.
            for wrap in ("sleep 2; echo prepared", "sleep 300"):
                o = slurm.run(["sbatch", "--parsable", f"--chdir={incident}", "--job-name=prep",
                               "--ntasks=1", "--mem=100M", f"--wrap={wrap}"])
                others.append(int(o.stdout.strip().split(";")[0]))
            ck = os.path.join(incident, "checkpoints", f"step_{CKPT_EVERY}.pt")
            if not c1.wait_for_path(ck, 200):
                raise RuntimeError("the job never wrote its first checkpoint")
            slurm.run(["scancel", str(others[1])])
        deadline = time.monotonic() + (300 if inc["fault"] in ("time_limit", "sigstop") else 240)
        if inc["fault"] in BY_HARNESS:
            pid, _ = harness_fault(inc, incident, deadline, SLURM_NODE)
        if inc["fault"] == "node_fail":
            lose_node(inc, slurm, incident, job_id, deadline)
        if inc["fault"] in ("scancel", "preemption", "requeue"):
            ck = os.path.join(incident, "checkpoints", f"step_{CKPT_EVERY}.pt")
            if not c1.wait_for_path(ck, 200):
                raise RuntimeError("the job never wrote its first checkpoint")
            time.sleep(1.0)
            t = c1.utcnow()
            if inc["fault"] == "scancel":
                act = slurm.run(["scancel", str(job_id)])
            elif inc["fault"] == "requeue":
                act = slurm.run(["scontrol", "requeue", str(job_id)])
            else:  # a job of the higher-priority partition needs the node's CPUs and memory
                act = slurm.run(["sbatch", "--parsable", "--partition=urgent", "--ntasks=2",
                                 "--job-name=urgent", f"--chdir={run_dir}",
                                 "--output=urgent-%j.out", "--wrap=sleep 3"])
            with open(os.path.join(run_dir, "fault.json"), "w") as f:
                json.dump({"kind": inc["fault"], "time": c1.rfc3339(t), "job_id": job_id,
                           "rc": act.returncode, "output": act.stdout.strip()}, f)
        state = None
        fault_at, cancelled_by_operator = time.monotonic(), False
        while time.monotonic() < deadline:
            state = slurm.job_state(job_id)
            if (inc["fault"] == "node_loss" and state == "RUNNING" and
                    not cancelled_by_operator and time.monotonic() - fault_at > OPERATOR_S):
                # The surviving agent may wait on the lost one for good: as an operator
                # would, the harness cancels the job (recorded in PRODUCED.md).
                slurm.run(["scancel", str(job_id)])
                cancelled_by_operator = True
            if inc["fault"] in ("requeue", "node_fail"):
                # Requeued: the logs are collected while the job waits to run again.
                if state == "PENDING" and int(job_field(slurm, job_id, "Restarts") or 0) > 0:
                    break
            elif state not in (None, "PENDING", "RUNNING", "CONFIGURING", "COMPLETING"):
                break
            time.sleep(0.5)
        else:
            raise RuntimeError(f"job {job_id} still {state} after the deadline")
        time.sleep(2)
        end = c1.utcnow()
        if inc["fault"] == "preemption":  # let the preempting job end before slurmd stops
            urgent = json.load(open(os.path.join(run_dir, "fault.json")))["output"]
            while time.monotonic() < deadline and slurm.job_state(urgent) in (
                    "PENDING", "RUNNING", "CONFIGURING", "COMPLETING"):
                time.sleep(0.5)
    finally:
        if pid and inc["fault"] == "sigstop":
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        slurm.stop()
    shutil.copy2(os.path.join(slurm.root, "log", "slurmctld.log"),
                 os.path.join(incident, "slurmctld.log"))
    shutil.copy2(os.path.join(slurm.root, "log", "slurmd.log"),
                 os.path.join(incident, "slurmd.log"))
    if dmesg_before is not None:
        lines = c1.new_dmesg(dmesg_before)
        if lines is not None:
            with open(os.path.join(incident, "dmesg.log"), "w") as f:
                f.writelines(lines)
    command = (f"sbatch --chdir=<incident> {' '.join(opts)} job.sh, job.sh being:\n\n```\n"
               f"{text}```\n")
    return dict(start=start, end=end, command=command, host=SLURM_NODE, job_id=job_id,
                job_state=state, others=others, cancelled=cancelled_by_operator)


def job_field(slurm, job_id, name):
    r = slurm.run(["scontrol", "show", "job", str(job_id)])
    for tok in r.stdout.split():
        if tok.startswith(name + "="):
            return tok.split("=", 1)[1]
    return None


def lose_node(inc, slurm, incident, job_id, deadline):
    """node_fail: once checkpoints/step_5.pt exists, SIGKILL every process of node sn01 at
    once (slurmd, the job's slurmstepds and tasks: everything in slurmd's UTS namespace), as
    when the node loses power; slurmctld, elsewhere, notices when the node stops answering."""
    ck = os.path.join(incident, "checkpoints", f"step_{CKPT_EVERY}.pt")
    if not c1.wait_for_path(ck, deadline - time.monotonic()):
        raise RuntimeError("the job never wrote its first checkpoint")
    time.sleep(1.0)
    slurmd = slurm.procs["slurmd"].pid
    ns = os.readlink(f"/proc/{slurmd}/ns/uts")
    pids = []
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and os.readlink(f"/proc/{d}/ns/uts") == ns:
                pids.append(int(d))
        except OSError:
            pass
    t = c1.utcnow()
    c1.kill_all(pids)
    with open(os.path.join(WORK, inc["id"], "fault.json"), "w") as f:
        json.dump({"kind": "node_fail", "node": SLURM_NODE, "host": SLURM_NODE,
                   "time": c1.rfc3339(t), "job_id": job_id, "pids": sorted(pids),
                   "after": f"checkpoints/step_{CKPT_EVERY}.pt"}, f)


# ----------------------------------------------------------------------------- expected

def text_files(incident):
    out = []
    for dirpath, dirs, files in os.walk(incident):
        dirs[:] = sorted(d for d in dirs if d != "checkpoints")
        for f in sorted(files):
            out.append(os.path.relpath(os.path.join(dirpath, f), incident))
    return out


def find_anywhere(incident, role, *alternatives):
    """Evidence: the first line (files in sorted order) holding every needle of the first
    alternative that matches anywhere."""
    for needles in alternatives:
        for rel in text_files(incident):
            e = c1.evidence(incident, rel, role, *needles, required=False)
            if e:
                return e
    return None


INIT, CORR = c1.INIT, c1.CORR


def build_expected(inc, res, incident):
    f = inc["fault"]
    kind, owner, fclass = OUTCOME[f]
    rec_path = os.path.join(WORK, inc["id"], "fault.json")
    fault = json.load(open(rec_path)) if os.path.exists(rec_path) else {}
    world = world_of(inc)
    ev = []
    secondary = None
    if f == "requeue":
        rank, lr, node = -1, -1, ""
        jid = res["job_id"]
        ev.append(find_anywhere(incident, INIT, (f"*** JOB {jid} ON {SLURM_NODE} CANCELLED AT",
                                                 "DUE TO JOB REQUEUE ***")))
        ev.append(c1.evidence(incident, "slurmctld.log", CORR, f"Requeuing JobId={jid}",
                              required=False))
    elif f == "node_fail":  # the node (rank -1), every rank of the job was on it
        rank, lr, node = -1, -1, SLURM_NODE
        ev.append(c1.evidence(incident, "slurmctld.log", INIT, f"{SLURM_NODE} not responding",
                              required=False))
        ev.append(c1.evidence(incident, "slurmctld.log", CORR,
                              f"JobId={res['job_id']} due to failure of node {SLURM_NODE}",
                              required=False))
    elif f == "node_loss":  # the agent's node (rank -1); the other agent's ranks are victims
        if not fault:
            raise RuntimeError("no fault record: the fault never fired")
        rank, lr, node = -1, -1, fault["host"]
        secondary = [r for r in range(world) if r not in fault["lost_ranks"]]
        if inc["style"] == "sbt":
            ev.append(find_anywhere(incident, INIT, (f"task {inc['rank']}: Killed",)))
    elif f in BY_SLURM:
        rank, lr, node = -1, -1, ""
        jid = res["job_id"]
        tail = {"scancel": "***", "time_limit": "DUE TO TIME LIMIT ***",
                "preemption": "DUE TO PREEMPTION ***"}[f]
        ev.append(find_anywhere(incident, INIT, (f"*** JOB {jid} ON {SLURM_NODE} CANCELLED AT",
                                                 tail)))
        ctld = {"scancel": f"REQUEST_KILL_JOB JobId={jid} ",
                "time_limit": f"Time limit exhausted for JobId={jid}",
                "preemption": f"preempted JobId={jid} has been killed"}[f]
        ev.append(c1.evidence(incident, "slurmctld.log", CORR, ctld, required=False))
    else:
        if not fault:
            raise RuntimeError("no fault record: the fault never fired")
        rank, lr, node = fault["rank"], fault["local_rank"], fault["host"]
        pid = fault["pid"]
        code = {"sigkill": -9, "kill_in_save": -9, "exception": 1, "exit": 1, "oom": -9}.get(f)
        launcher = [(f"exitcode  : {code} (pid: {pid})",), (f"task {rank}: Killed",),
                    (f"task {rank}: Exited with exit code 1",), (f"task {rank}: Out Of Memory",)]
        if f in ("sigkill", "kill_in_save"):
            ev.append(find_anywhere(incident, INIT, *launcher))
        elif f == "exception":
            ev.append(find_anywhere(incident, INIT, ("ValueError: could not decode sample",)))
            ev.append(find_anywhere(incident, CORR, *launcher))
        elif f == "exit":
            ev.append(find_anywhere(incident, INIT, ("error: input shard is unreadable",)))
            ev.append(find_anywhere(incident, CORR, *launcher))
        elif f == "oom":
            ev.append(find_anywhere(incident, INIT, (f"Killed process {pid} ",)))
            ev.append(find_anywhere(incident, CORR, *launcher))
    ev = [e for e in ev if e]
    initiator = {"rank": rank, "node": node, "local_rank": lr, "failure_class": fclass,
                 "confidence": 1}
    event = {"kind": kind, "rank": rank, "node": node or SLURM_NODE}
    if fault.get("time"):
        initiator["time"] = fault["time"]
        event["time"] = fault["time"]
    if fault.get("step"):
        event["step"] = fault["step"]
    if f == "node_fail" or f == "node_loss":
        event["node"] = node
    exp = {"scenario": inc["id"], "verdict": "VERDICT_DIAGNOSED", "initiator": initiator,
           "owner": owner}
    if rank >= 0 and f != "slow":  # a slow rank's peers wait for it but do not fail
        secondary = [r for r in range(world) if r != rank]
    if secondary:
        exp["cascade"] = {"secondary_ranks": secondary}
    if ev:
        exp["evidence"] = ev
    ck = c1.checkpoint_outcome(inc, incident)
    if ck:
        exp["checkpoint"] = ck
    exp["events"] = [event]
    job = {"world_size": world, "nodes": 1, "gpus_per_node": world,
           "start_time": c1.rfc3339(res["start"]), "end_time": c1.rfc3339(res["end"])}
    if fault.get("time"):
        job["fault_time"] = fault["time"]
    exp["job"] = job
    return exp, fault


DESCRIBE = {
    "sigkill": "the harness SIGKILLs the process of rank {rank} (found by its environment) "
               "about a second after checkpoints/step_5.pt appeared",
    "sigstop": "the harness SIGSTOPs the process of rank {rank} about a second after "
               "checkpoints/step_5.pt appeared (and SIGKILLs it once the launcher is done)",
    "exception": "rank {rank} raises an uncaught ValueError while decoding the batch of step "
                 "{step} (train2.py --fault exception)",
    "exit": "rank {rank} prints an error to stderr and calls sys.exit(1) in step {step} "
            "(train2.py --fault exit)",
    "hang": "rank {rank} sleeps forever before the all-reduce of step {step}, printing "
            "nothing (train2.py --fault hang)",
    "oom": "rank {rank} keeps 64 MiB tensors from step {step} on (train2.py --fault leak) "
           "under a memory limit, until the kernel's memory-cgroup OOM killer kills it",
    "scancel": "the harness runs `scancel <jobid>` about a second after "
               "checkpoints/step_5.pt appeared",
    "preemption": "about a second after checkpoints/step_5.pt appeared, the harness submits a "
                  "2-task job to the higher-priority partition `urgent` "
                  "(PreemptType=preempt/partition_prio, PreemptMode=CANCEL); the training job "
                  "holds the node's memory (no --mem), so Slurm preempts it",
    "time_limit": "the job is submitted with --time=1 and 400 steps of about 0.5 s; Slurm "
                  "ends it at its time limit",
    "kill_in_save": "the harness SIGKILLs the process of rank {rank} as soon as "
                    "checkpoints/step_{step}.pt holds its first bytes, while torch.save is "
                    "writing it "
                    "(train2.py --table-rows 250000: checkpoints of about 32 MB)",
    "slow": "about a second after checkpoints/step_5.pt appeared the harness starts "
            "throttling the process of rank {rank}: SIGSTOP for 0.9 s, SIGCONT for 0.1 s, "
            "over and over until the job ends (slow but alive; the job completes)",
    "node_loss": "about a second after checkpoints/step_5.pt appeared the harness SIGKILLs, "
                 "at once, a torchrun agent and every process below it (its workers), as "
                 "when its node is lost: {who}",
    "requeue": "the job is submitted with --requeue; about a second after "
               "checkpoints/step_5.pt appeared the harness runs `scontrol requeue <jobid>` "
               "(an administrator's requeue); the logs are collected once the job is "
               "pending again",
    "node_fail": "the job is submitted with --requeue; about a second after "
                 "checkpoints/step_5.pt appeared the harness SIGKILLs every process of node "
                 "sn01 at once (slurmd, slurmstepd, the tasks: everything in slurmd's UTS "
                 "namespace), as when the node loses power; slurmctld sets the node DOWN "
                 "when it stops answering and requeues the job; the logs are collected once "
                 "the job is pending again",
}
STYLE = {
    "tr1": "one torchrun agent, console (stdout+stderr, workers' output inherited) to "
           "train.log",
    "tr2": "two torchrun agents on this one host (host name shared), c10d rendezvous, --tee 3 "
           "--log_dir logs, each agent's console to its own file",
    "sb": "sbatch; the script runs srun with one task on the one node, the task runs torchrun "
          "(c10d rendezvous); output slurm-<jobid>.out",
    "sbt": "sbatch; the script runs srun with two tasks and --output=%x-%j-%t.out, each task a "
           "torchrun agent (c10d rendezvous, --nnodes 2)",
    "sl": "sbatch; the script runs `srun --label python3 train2.py`, one task per rank",
    "mj": "sbatch; `srun --label python3 train2.py`, one task per rank, --mem=1500M, while the "
          "same user's two other jobs (--job-name=prep, --wrap) run in the same directory: "
          "one finishes, the harness scancels the other about when the training job wrote "
          "checkpoints/step_5.pt",
    "st": "sbatch with two job steps: `srun --label hostname`, then `srun --label python3 "
          "train2.py`, one task per rank",
}


def write_produced(inc, res, outdir, vers):
    who = {"tr2": f"the agent whose console is node{inc['rank']}.log",
           "sbt": f"the torchrun agent of srun task {inc['rank']}"}.get(inc["style"], "")
    what = DESCRIBE[inc["fault"]].format(who=who, **inc)
    note = ""
    if inc["fault"] == "oom":
        note = (f" Memory limit: a cgroup-v1 memory cgroup of {MEMCG_LIMIT >> 20} MiB that the "
                "harness moved the worker into" if inc["style"] == "tr1" else
                f" Memory limit: --mem={SLURM_MEM} (task/cgroup, cgroup v1)")
        note += "; dmesg.log holds the kernel lines printed during the capture."
    if res.get("operator"):
        note += (f" The job did not end by itself: {OPERATOR_S} s after the fault the harness "
                 "SIGTERMed the torchrun agent(s) still running (of the consoles "
                 f"{', '.join(['train.log'] if inc['style'] == 'tr1' else [f'node{i}.log' for i in res['operator']])}), "
                 "as an operator ends a hung job.")
    if res.get("operator_kill"):
        note += (f" The agent(s) of {', '.join(f'node{i}.log' for i in res['operator_kill'])} "
                 f"still ran {OPERATOR_KILL_S} s after that SIGTERM: the harness SIGKILLed "
                 "them and their processes, as an operator would.")
    if "job_id" in res:
        note += (f" Job {res['job_id']} ended {res['job_state']}; slurmctld.log and slurmd.log "
                 "are the daemons' whole logs for this capture (node sn01).")
        if res.get("cancelled"):
            note += (f" The job did not end by itself: {OPERATOR_S} s after the fault the "
                     "harness ran `scancel <jobid>`, as an operator ends a hung job.")
        if res.get("others"):
            note += (f" The other jobs: {res['others'][0]} (finished) and {res['others'][1]} "
                     "(cancelled by the harness).")
    text = (f"Produced {res['start'].strftime('%Y-%m-%d %H:%M')} UTC by "
            f"`corpora/capture/capture2.sh --only {inc['id']}`: {vers}. Launch: "
            f"{STYLE[inc['style']]}; world size {world_of(inc)}, host `{res['host']}`. "
            f"Command: `{res['command']}`. Injected: {what}.{note} train2.py: a 32-64-1 MLP "
            f"under DDP (gloo), steps of about {STEP_S} s, rank 0 prints `step N loss X` and "
            f"saves checkpoints/step_<N>.pt every {CKPT_EVERY} steps; "
            f"init_process_group timeout {TIMEOUT_S} s. incident/ is exactly what the run "
            "left; expected.json was written from the injection record alone.\n")
    with open(os.path.join(outdir, "PRODUCED.md"), "w") as f:
        f.write(f"# {inc['id']}\n\n{text}")


def capture(inc, index, vers):
    run_dir = os.path.join(WORK, inc["id"])
    shutil.rmtree(run_dir, ignore_errors=True)
    incident = os.path.join(run_dir, "incident")
    os.makedirs(incident)
    log(f"{inc['id']}: {inc['style']} {inc['fault']}")
    if inc["style"] in ("tr1", "tr2"):
        res = run_torchrun(inc, run_dir, incident)
    else:
        res = run_slurm(inc, run_dir, incident, index)
    expected, _ = build_expected(inc, res, incident)
    outdir = os.path.join(OUT, inc["id"])
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    shutil.copytree(incident, os.path.join(outdir, "incident"), symlinks=True)
    with open(os.path.join(outdir, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2, ensure_ascii=False)
        f.write("\n")
    write_produced(inc, res, outdir, vers)
    log(f"{inc['id']}: done ({(res['end'] - res['start']).total_seconds():.0f} s)")


def main():
    ap = argparse.ArgumentParser(description="Capture corpora/real2 (root, python3-torch, "
                                 "slurm-wlm, munge).")
    ap.add_argument("--only", help="comma-separated incident ids")
    ap.add_argument("--batch", type=int, help="only the incidents of this batch (1: the first "
                    "37; 2: kill in save, slow rank, agent/node loss, requeue)")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    chosen = INCIDENTS
    if a.batch is not None:
        chosen = [i for i in INCIDENTS if i["batch"] == a.batch]
    if a.list:
        for inc in chosen:
            print(inc["id"], inc["style"], inc["fault"], f"batch {inc['batch']}")
        return 0
    if a.only:
        want = set(a.only.split(","))
        unknown = want - {i["id"] for i in INCIDENTS}
        if unknown:
            ap.error(f"unknown incident ids: {sorted(unknown)}")
        chosen = [i for i in chosen if i["id"] in want]
    if os.geteuid() != 0:
        ap.error("must run as root (cgroups, Slurm daemons)")
    install_bin()
    resolve_slurm_node()
    vers = c1.versions()
    return c1.capture_each(chosen, INCIDENTS, capture, vers)


if __name__ == "__main__":
    sys.exit(main())
