#!/usr/bin/python3
"""Re-captures the real corpus (corpora/real/<id>/): runs each incident with real PyTorch
(gloo, CPU) under real launchers, and freezes what the job left behind.

Launchers:
  torchrun  two torchrun agents on loopback, as two "nodes" node-a (node_rank 0, global
            ranks 0-1) and node-b (node_rank 1, ranks 2-3), each in its own UTS namespace so
            that its hostname is the node name; static rendezvous; each agent's console in
            <node>/torchrun.log, each worker's stdout+stderr in <node>/rank_<R>.log
            (wrapper.sh).
  slurm     a single-host Slurm (slurmctld + slurmd + munged on 127.0.0.1, node sn01 in its
            own UTS namespace) started for each incident and stopped by its own pids; the
            job is an sbatch script running `srun --label` with 4 tasks; its output is
            slurm-<jobid>.out, and the daemons' logs are copied beside it.

The expected outcome of each incident is written from what was injected (fault, rank,
step; the time the fault fired as recorded by train.py or by this driver), never from a
diagnosis. Evidence lines are located in the produced logs by the injected rank/pid, and
each is checked to exist verbatim.

Needs root, python3-torch, slurm-wlm and munge (corpora/capture/install.sh). Not part of CI.
Usage: corpora/capture/capture.sh [--only ID[,ID...]] [--list]
"""

import argparse
import datetime
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(REPO, "corpora", "real")
WORK = os.environ.get("DENPEX_CAPTURE_WORK", "/tmp/denpex-capture")
BIN = os.path.join(WORK, "bin")  # train.py and wrapper.sh are run from here (stable paths)
PY = "/usr/bin/python3"

STEPS, CKPT_EVERY, TIMEOUT_S = 20, 5, 20
TORCHRUN_NODES = ("node-a", "node-b")
SLURM_NODE = "sn01"

# Each incident: the launcher, the injected fault, where and when. "external" faults are
# injected by this driver (node loss, agent loss, scancel, preemption, time limit).
INCIDENTS = [
    dict(id="tr_sigkill_rank3", launcher="torchrun", fault="sigkill", rank=3, step=12),
    dict(id="tr_hang_rank2", launcher="torchrun", fault="hang", rank=2, step=12),
    dict(id="tr_sigstop_rank3", launcher="torchrun", fault="sigstop", rank=3, step=8),
    dict(id="tr_exception_rank2", launcher="torchrun", fault="exception", rank=2, step=12),
    dict(id="tr_exit_rank1", launcher="torchrun", fault="exit", rank=1, step=14),
    dict(id="tr_oom_rank3", launcher="torchrun", fault="oom", rank=3, step=12),
    dict(id="tr_slow_rank2", launcher="torchrun", fault="slow", rank=2, step=8),
    dict(id="tr_kill_in_save_rank0", launcher="torchrun", fault="kill_in_save", rank=0,
         step=15),
    dict(id="tr_node_loss_node_b", launcher="torchrun", fault="node_loss", node="node-b"),
    dict(id="tr_agent_lost_node_b", launcher="torchrun", fault="agent_lost", node="node-b"),
    # Every rank resumes a checkpoint written by a narrower model: a job-level load error.
    dict(id="tr_resume_size_mismatch", launcher="torchrun", fault="resume_mismatch", node=""),
    dict(id="sl_sigkill_task1", launcher="slurm", fault="sigkill", rank=1, step=12),
    dict(id="sl_exception_task3", launcher="slurm", fault="exception", rank=3, step=12),
    dict(id="sl_oom_task2", launcher="slurm", fault="oom", rank=2, step=12),
    dict(id="sl_scancel", launcher="slurm", fault="scancel"),
    dict(id="sl_preemption", launcher="slurm", fault="preemption"),
    dict(id="sl_time_limit", launcher="slurm", fault="time_limit"),
]

# What was injected -> what a correct diagnosis says.
OUTCOME = {
    "sigkill": ("FAULT_KIND_SIGKILL", "OWNER_UNKNOWN", "FAILURE_CLASS_SIGNAL_KILL"),
    "hang": ("FAULT_KIND_HANG", "OWNER_APPLICATION", "FAILURE_CLASS_HANG"),
    "sigstop": ("FAULT_KIND_SIGSTOP", "OWNER_UNKNOWN", "FAILURE_CLASS_HANG"),
    "exception": ("FAULT_KIND_EXCEPTION", "OWNER_APPLICATION",
                  "FAILURE_CLASS_PYTHON_EXCEPTION"),
    "exit": ("FAULT_KIND_EXIT", "OWNER_APPLICATION", "FAILURE_CLASS_PYTHON_EXCEPTION"),
    "oom": ("FAULT_KIND_HOST_OOM", "OWNER_HOST", "FAILURE_CLASS_HOST_OOM"),
    "slow": ("FAULT_KIND_SLOW_RANK", "OWNER_UNKNOWN", "FAILURE_CLASS_STRAGGLER"),
    "kill_in_save": ("FAULT_KIND_KILL_DURING_CHECKPOINT", "OWNER_UNKNOWN",
                     "FAILURE_CLASS_SIGNAL_KILL"),
    "node_loss": ("FAULT_KIND_NODE_LOSS", "OWNER_HOST", "FAILURE_CLASS_NODE_LOSS"),
    "agent_lost": ("FAULT_KIND_AGENT_LOST", "OWNER_UNKNOWN", "FAILURE_CLASS_NODE_LOSS"),
    "scancel": ("FAULT_KIND_SCHEDULER_CANCEL", "OWNER_SCHEDULER",
                "FAILURE_CLASS_SCHEDULER_CANCEL"),
    "preemption": ("FAULT_KIND_SCHEDULER_PREEMPTION", "OWNER_SCHEDULER",
                   "FAILURE_CLASS_SCHEDULER_PREEMPTION"),
    "time_limit": ("FAULT_KIND_SCHEDULER_TIME_LIMIT", "OWNER_SCHEDULER",
                   "FAILURE_CLASS_SCHEDULER_TIME_LIMIT"),
    "resume_mismatch": ("FAULT_KIND_CHECKPOINT_LOAD_ERROR", "OWNER_APPLICATION",
                        "FAILURE_CLASS_CHECKPOINT_LOAD"),
}
FATAL_TO_PEERS = {"sigkill", "hang", "sigstop", "exception", "exit", "oom", "kill_in_save",
                  "node_loss"}

RESUME_HIDDEN = (64, 128)        # resume_mismatch: the width that wrote the checkpoint, the job's
MEMCG_LIMIT = 900 * 1024 * 1024  # torchrun oom: the faulting worker's memory cgroup
SLURM_MEM = "2000M"              # slurm oom: the whole job's memory (task/cgroup)


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def rfc3339(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def log(msg):
    print(f"[capture {utcnow().strftime('%H:%M:%S')}] {msg}", flush=True)


def clean_env(**extra):
    """The environment a job sees: nothing inherited from this shell (no
    PYTHONUNBUFFERED, no pyenv), as on a cluster node."""
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8",
           "USER": "root", "LOGNAME": "root", "SHELL": "/bin/sh"}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def in_uts(hostname, argv):
    """argv run in a new UTS namespace whose hostname is `hostname`."""
    return ["unshare", "--uts", "--", "/bin/sh", "-c", 'hostname "$1"; shift; exec "$@"',
            "sh", hostname] + argv


def children_of(pid):
    kids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                kids.append(int(d))
        except (OSError, IndexError, ValueError):
            pass
    return kids


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for k in children_of(p):
            out.append(k)
            todo.append(k)
    return out


def kill_all(pids, sig=signal.SIGKILL):
    """Signal each pid; one already gone is skipped."""
    for p in pids:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass


def kill_tree(pid, sig=signal.SIGKILL):
    """Signal a process we started and everything below it, each by its own pid."""
    kill_all([pid] + descendants(pid), sig)


def wait_for_text(path, text, deadline):
    while time.monotonic() < deadline:
        try:
            with open(path, errors="replace") as f:
                if text in f.read():
                    return True
        except FileNotFoundError:
            pass
        time.sleep(0.1)
    return False


def dmesg_lines():
    r = subprocess.run(["dmesg"], capture_output=True, text=True)
    return r.stdout.splitlines(keepends=True) if r.returncode == 0 else None


def new_dmesg(before):
    after = dmesg_lines()
    if before is None or after is None:
        return None
    if after[: len(before)] == before:
        return after[len(before):]
    last = before[-1] if before else None  # ring buffer rotated: find the last old line
    if last in after:
        return after[len(after) - after[::-1].index(last):]
    return after


def memory_cgroup_root():
    root = "/sys/fs/cgroup/memory"
    if not os.path.exists(os.path.join(root, "cgroup.procs")):
        raise RuntimeError("no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory")
    return root


def install_bin():
    os.makedirs(BIN, exist_ok=True)
    for name in ("train.py", "wrapper.sh"):
        shutil.copy2(os.path.join(HERE, name), os.path.join(BIN, name))


def train_args(inc, steps=STEPS, ckpt_every=CKPT_EVERY):
    a = ["--steps", str(steps), "--ckpt-every", str(ckpt_every), "--ckpt-dir", "checkpoints",
         "--timeout-s", str(TIMEOUT_S)]
    if inc["fault"] in ("sigkill", "hang", "sigstop", "exception", "exit", "oom", "slow",
                        "kill_in_save"):
        a += ["--fault", inc["fault"], "--fault-rank", str(inc["rank"]),
              "--fault-step", str(inc["step"])]
    if inc["fault"] == "resume_mismatch":
        a += ["--hidden", str(RESUME_HIDDEN[1]), "--resume", "checkpoints"]
    return a


def earlier_run_checkpoints(inc, run_dir, incident):
    """resume_mismatch: the checkpoints of an earlier, narrower run of the same script (one
    gloo process, --hidden 64, 10 steps) become the incident's checkpoints/ to resume from."""
    work = os.path.join(run_dir, "earlier")
    os.makedirs(work)
    env = clean_env(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
                    MASTER_PORT=str(free_port()))
    with open(os.path.join(work, "train.log"), "wb") as out:
        subprocess.run([PY, os.path.join(BIN, "train.py"), "--steps", "10", "--ckpt-every",
                        str(CKPT_EVERY), "--ckpt-dir", "checkpoints", "--hidden",
                        str(RESUME_HIDDEN[0])], cwd=work, env=env, stdout=out,
                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=True,
                       timeout=180)
    shutil.copytree(os.path.join(work, "checkpoints"), os.path.join(incident, "checkpoints"))


# ----------------------------------------------------------------------------- torchrun

def torchrun_node_of(rank):
    return TORCHRUN_NODES[rank // 2], rank % 2


def run_torchrun(inc, run_dir, incident):
    port = free_port()
    fault_record = os.path.join(run_dir, "fault.json")
    memcg = None
    if inc["fault"] == "oom":
        memcg = os.path.join(memory_cgroup_root(), f"denpex-capture-{inc['id']}")
        if os.path.isdir(memcg):
            os.rmdir(memcg)
        os.mkdir(memcg)
        with open(os.path.join(memcg, "memory.limit_in_bytes"), "w") as f:
            f.write(str(MEMCG_LIMIT))
    agents, logs, cmds = {}, {}, {}
    if inc["fault"] == "resume_mismatch":
        earlier_run_checkpoints(inc, run_dir, incident)
    dmesg_before = dmesg_lines()
    start = utcnow()
    try:
        for node_rank, node in enumerate(TORCHRUN_NODES):
            os.makedirs(os.path.join(incident, node))
            argv = [PY, "-m", "torch.distributed.run", "--nnodes", "2", "--node_rank",
                    str(node_rank), "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
                    "--master_port", str(port), "--redirects", "2", "--tee", "2",
                    "--log_dir", os.path.join(run_dir, "torchelastic", node), "--no_python",
                    os.path.join(BIN, "wrapper.sh")] + train_args(inc)
            env = clean_env(DENPEX_LOG_DIR=os.path.join(incident, node),
                            DENPEX_TRAIN=os.path.join(BIN, "train.py"),
                            DENPEX_FAULT_RECORD=fault_record)
            if memcg:
                env.update(DENPEX_MEMCG=memcg, DENPEX_MEMCG_RANK=str(inc["rank"]))
            logs[node] = open(os.path.join(incident, node, "torchrun.log"), "wb")
            cmds[node] = argv
            agents[node] = subprocess.Popen(in_uts(node, argv), cwd=incident, env=env,
                                            stdout=logs[node], stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL)
        # A surviving agent waits up to 300 s in its exit barrier for a lost one.
        deadline = time.monotonic() + (420 if "node" in inc else 240)
        if inc["fault"] in ("node_loss", "agent_lost"):
            # Inject during step 11: after rank 0 reported the checkpoint of step 10.
            ok = wait_for_text(os.path.join(incident, "node-a", "rank_0.log"),
                               "saved checkpoint checkpoints/step_10.pt", deadline)
            if not ok:
                raise RuntimeError("the job never reached step 10")
            time.sleep(0.4)
            agent = agents[inc["node"]]
            # The agent runs under `unshare` -> `sh` -> exec python: the Popen pid is the agent.
            workers = descendants(agent.pid)
            t = utcnow()
            if inc["fault"] == "node_loss":
                kill_tree(agent.pid)  # the agent and every worker on the node, at once
            else:
                os.kill(agent.pid, signal.SIGKILL)  # only the agent
            with open(fault_record, "w") as f:
                json.dump({"kind": inc["fault"], "node": inc["node"], "time": rfc3339(t),
                           "agent_pid": agent.pid, "worker_pids": workers}, f)
        exits = {}
        while time.monotonic() < deadline and len(exits) < len(agents):
            for node, p in agents.items():
                if node not in exits and p.poll() is not None:
                    exits[node] = p.returncode
            time.sleep(0.2)
        if len(exits) < len(agents):
            raise RuntimeError(f"agents still running after the deadline: {exits}")
        if inc["fault"] == "agent_lost":
            # Orphaned workers of the lost agent: wait for them to end by themselves.
            for pid in json.load(open(fault_record))["worker_pids"]:
                while time.monotonic() < deadline and os.path.exists(f"/proc/{pid}"):
                    time.sleep(0.2)
        end = utcnow()
    finally:
        for node, p in agents.items():
            if p.poll() is None:
                kill_tree(p.pid)
                p.wait()
        for f in logs.values():
            f.close()
        if memcg:
            for _ in range(50):
                try:
                    os.rmdir(memcg)
                    break
                except OSError:
                    time.sleep(0.1)
    if inc["fault"] == "oom":
        lines = new_dmesg(dmesg_before)
        if lines is not None:
            node, _ = torchrun_node_of(inc["rank"])
            with open(os.path.join(incident, node, "dmesg.log"), "w") as f:
                f.writelines(lines)
    fault = json.load(open(fault_record)) if os.path.exists(fault_record) else None
    command = " ; ".join(
        f"[{n}] (hostname {n}) " + " ".join(cmds[n][:1] + cmds[n][1:]) for n in cmds)
    return dict(start=start, end=end, fault=fault, exits=exits, command=command,
                world_size=4, nodes=2, per_node=2)


# ----------------------------------------------------------------------------- slurm

class Slurm:
    """A single-host Slurm on loopback, owned by this driver: every daemon is started in the
    foreground as a child of this process and stopped by its own pid."""

    def __init__(self, root, first_job_id):
        self.root = root
        self.conf = os.path.join(root, "etc", "slurm.conf")
        self.procs = {}
        self.first_job_id = first_job_id

    def env(self, **extra):
        return clean_env(SLURM_CONF=self.conf, **extra)

    def write_config(self):
        r = self.root
        for d in ("etc", "state", "spool", "log", "munge"):
            os.makedirs(os.path.join(r, d), exist_ok=True)
        os.chmod(os.path.join(r, "munge"), 0o700)
        os.makedirs(os.path.join(r, "spool", f"slurmd.{SLURM_NODE}"), exist_ok=True)
        ctld_port, d_port = free_port(), free_port()
        conf = f"""# written by corpora/capture/capture.py
ClusterName=denpex
SlurmctldHost={SLURM_NODE}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={r}/munge/munge.socket
CredType=cred/munge
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool/slurmd.%n
SlurmctldPidFile={r}/state/slurmctld.pid
SlurmdPidFile={r}/spool/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
FirstJobId={self.first_job_id}
MpiDefault=none
MailProg=/bin/true
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=10
OverTimeLimit=0
InactiveLimit=0
MinJobAge=300
SlurmdTimeout=60
NodeName={SLURM_NODE} NodeAddr=127.0.0.1 CPUs=4 Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=8000 State=UNKNOWN
PartitionName=batch Nodes={SLURM_NODE} Default=YES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=urgent Nodes={SLURM_NODE} Default=NO MaxTime=INFINITE State=UP PriorityTier=10
"""
        with open(self.conf, "w") as f:
            f.write(conf)
        with open(os.path.join(r, "etc", "cgroup.conf"), "w") as f:
            f.write("CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\n"
                    "ConstrainRAMSpace=yes\nConstrainSwapSpace=no\nConstrainCores=no\n"
                    "ConstrainDevices=no\n")

    def start(self):
        r = self.root
        self.write_config()
        key = os.path.join(r, "munge", "munge.key")
        subprocess.run(["mungekey", "--create", "--keyfile", key, "--force"], check=True,
                       env=clean_env(), capture_output=True)
        os.chmod(key, 0o600)
        self.procs["munged"] = subprocess.Popen(
            ["munged", "--foreground", "--force", f"--key-file={key}",
             f"--socket={r}/munge/munge.socket", f"--pid-file={r}/munge/munged.pid",
             f"--log-file={r}/log/munged.log", f"--seed-file={r}/munge/munged.seed"],
            env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_for_path(f"{r}/munge/munge.socket", 10):
            raise RuntimeError("munged did not start")
        self.procs["slurmctld"] = subprocess.Popen(
            in_uts(SLURM_NODE, ["slurmctld", "-D", "-i", "-f", self.conf]), env=self.env(),
            stdout=open(f"{r}/log/slurmctld.console", "wb"), stderr=subprocess.STDOUT)
        self.procs["slurmd"] = subprocess.Popen(
            in_uts(SLURM_NODE, ["slurmd", "-D", "-N", SLURM_NODE, "-f", self.conf]),
            env=self.env(), stdout=open(f"{r}/log/slurmd.console", "wb"),
            stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited with {p.returncode}")
            s = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env(),
                               capture_output=True, text=True)
            if s.returncode == 0 and s.stdout.strip() in ("idle",):
                return
            time.sleep(0.5)
        raise RuntimeError("the Slurm node never became idle")

    def stop(self):
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                kill_tree(p.pid)
                p.wait()
        self.procs.clear()
        # task/cgroup and proctrack/cgroup leave their (empty) per-node cgroup directories.
        for ctrl in ("memory", "freezer"):
            top = f"/sys/fs/cgroup/{ctrl}/slurm_{SLURM_NODE}"
            for dirpath, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
                try:
                    os.rmdir(dirpath)
                except OSError:
                    pass

    def run(self, argv, **kw):
        return subprocess.run(argv, env=self.env(), capture_output=True, text=True, **kw)

    def job_state(self, job_id):
        r = self.run(["scontrol", "show", "job", str(job_id)])
        for tok in r.stdout.split():
            if tok.startswith("JobState="):
                return tok.split("=", 1)[1]
        return None


def wait_for_path(path, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.path.exists(path):
            return True
        time.sleep(0.1)
    return False


def run_slurm(inc, run_dir, incident, index):
    slurm = Slurm(os.path.join(run_dir, "slurm"), first_job_id=4100 + 10 * index)
    fault_record = os.path.join(run_dir, "fault.json")
    port = free_port()
    steps, ckpt_every, extra = STEPS, CKPT_EVERY, []
    sbatch_opts = ["--ntasks=4", "--job-name=ddp-train", "--output=slurm-%j.out"]
    if inc["fault"] == "oom":
        sbatch_opts.append(f"--mem={SLURM_MEM}")
    if inc["fault"] == "time_limit":
        steps, ckpt_every = 400, 25
        sbatch_opts.append("--time=1")
    if inc["fault"] in ("scancel", "preemption"):
        steps = 60
    script = os.path.join(run_dir, "job.sbatch")
    args = " ".join(train_args(inc, steps, ckpt_every) + extra)
    with open(script, "w") as f:
        f.write(f"""#!/bin/bash
export MASTER_ADDR=127.0.0.1
export MASTER_PORT={port}
export DENPEX_FAULT_RECORD={fault_record}
srun --label {PY} {BIN}/train.py {args}
""")
    dmesg_before = dmesg_lines()
    try:
        slurm.start()
        start = utcnow()
        argv = ["sbatch", "--parsable", f"--chdir={incident}"] + sbatch_opts + [script]
        r = slurm.run(argv)
        if r.returncode != 0:
            raise RuntimeError(f"sbatch failed: {r.stderr}")
        job_id = int(r.stdout.strip().split(";")[0])
        out_file = os.path.join(incident, f"slurm-{job_id}.out")
        deadline = time.monotonic() + 240
        if inc["fault"] in ("scancel", "preemption"):
            if not wait_for_text(out_file, "saved checkpoint checkpoints/step_10.pt", deadline):
                raise RuntimeError("the job never reached step 10")
            time.sleep(0.4)
            t = utcnow()
            if inc["fault"] == "scancel":
                act = slurm.run(["scancel", str(job_id)])
            else:
                act = slurm.run(["sbatch", "--parsable", "--partition=urgent", "--ntasks=2",
                                 "--job-name=urgent", f"--chdir={run_dir}",
                                 "--output=urgent-%j.out", "--wrap=sleep 3"])
            if act.returncode != 0:
                raise RuntimeError(f"{inc['fault']} failed: {act.stderr}")
            with open(fault_record, "w") as f:
                json.dump({"kind": inc["fault"], "node": SLURM_NODE, "time": rfc3339(t),
                           "job_id": job_id, "command": act.args,
                           "output": act.stdout.strip()}, f)
        state = None
        while time.monotonic() < deadline:
            state = slurm.job_state(job_id)
            if state not in (None, "PENDING", "RUNNING", "CONFIGURING", "COMPLETING"):
                break
            time.sleep(0.5)
        else:
            raise RuntimeError(f"job {job_id} still {state} after the deadline")
        # Let srun and slurmstepd finish writing, and the step end in slurmd's log.
        time.sleep(2)
        end = utcnow()
        if inc["fault"] == "preemption":
            urgent = json.load(open(fault_record))["output"]
            while time.monotonic() < deadline and slurm.job_state(urgent) in (
                    "PENDING", "RUNNING", "CONFIGURING", "COMPLETING"):
                time.sleep(0.5)
    finally:
        slurm.stop()
    shutil.copy2(os.path.join(slurm.root, "log", "slurmctld.log"),
                 os.path.join(incident, "slurmctld.log"))
    os.makedirs(os.path.join(incident, SLURM_NODE), exist_ok=True)
    shutil.copy2(os.path.join(slurm.root, "log", "slurmd.log"),
                 os.path.join(incident, SLURM_NODE, "slurmd.log"))
    if inc["fault"] == "oom":
        lines = new_dmesg(dmesg_before)
        if lines is not None:
            with open(os.path.join(incident, SLURM_NODE, "dmesg.log"), "w") as f:
                f.writelines(lines)
    fault = json.load(open(fault_record)) if os.path.exists(fault_record) else None
    command = (f"sbatch --chdir=<incident> {' '.join(sbatch_opts)} job.sbatch, where "
               f"job.sbatch sets MASTER_ADDR=127.0.0.1 MASTER_PORT={port} and runs: "
               f"srun --label {PY} {BIN}/train.py {args}")
    return dict(start=start, end=end, fault=fault, job_id=job_id, job_state=state,
                command=command, world_size=4, nodes=1, per_node=4, out_file=out_file)


# ----------------------------------------------------------------------------- expected

def find_line(incident, rel, *needles, last=False):
    """1-based line number and verbatim text of the first (or last) line of `rel` that
    contains every needle, or None."""
    path = os.path.join(incident, rel)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    hits = [(i + 1, l) for i, l in enumerate(lines) if all(n in l for n in needles)]
    if not hits:
        return None
    return hits[-1] if last else hits[0]


def evidence(incident, rel, role, *needles, last=False, required=True):
    hit = find_line(incident, rel, *needles, last=last)
    if hit is None:
        if required:
            raise RuntimeError(f"evidence not found in {rel}: {needles}")
        return None
    return {"file": rel, "line": hit[0], "text": hit[1], "role": role}


INIT, CORR = "EVIDENCE_ROLE_INITIATING", "EVIDENCE_ROLE_CORROBORATING"


def launcher_exit_evidence(inc, res, incident, rank, code, role):
    """The launcher's line that shows rank `rank` exiting with `code`."""
    pid = res["fault"]["pid"]
    if inc["launcher"] == "torchrun":
        node, lr = torchrun_node_of(rank)
        rel = f"{node}/torchrun.log"
        e = evidence(incident, rel, role, f"failed (exitcode: {code}) local_rank: {lr} (pid: "
                     f"{pid})", required=False)
        return e or evidence(incident, rel, role, f"exitcode  : {code} (pid: {pid})")
    rel = os.path.basename(res["out_file"])
    word = {-9: "Killed", 1: "Exited with exit code 1"}.get(code)
    if code == "oom":
        return evidence(incident, rel, role, f"task {rank}: Out Of Memory")
    return evidence(incident, rel, role, f"task {rank}: {word}")


def checkpoint_outcome(inc, incident):
    """The newest intact checkpoint: every step_<N>.pt is loaded fully (torch.load) and its
    step checked; a file that fails is rejected. For a kill during a save, the injected file
    must be among the rejected."""
    d = os.path.join(incident, "checkpoints")
    if not os.path.isdir(d):
        return None
    import torch
    found = []
    for name in os.listdir(d):
        if name.startswith("step_") and name.endswith(".pt"):
            found.append((int(name[5:-3]), name))
    found.sort(reverse=True)
    rejected, chosen = [], None
    for step, name in found:
        try:
            state = torch.load(os.path.join(d, name), map_location="cpu")
            ok = state.get("step") == step
            why = "" if ok else f"holds step {state.get('step')}"
        except Exception as e:  # noqa: BLE001 - any load failure rejects the file
            size = os.path.getsize(os.path.join(d, name))
            zipped = zipfile.is_zipfile(os.path.join(d, name))
            ok, why = False, (f"{size} bytes, {'a' if zipped else 'not a'} complete zip "
                              f"archive; torch.load fails: {type(e).__name__}: "
                              f"{str(e).splitlines()[0]}")
        if ok:
            chosen = (step, name)
            break
        rejected.append({"path": name, "step": str(step), "reason": why})
    if inc["fault"] == "kill_in_save":
        if not any(r["path"] == f"step_{inc['step']}.pt" for r in rejected):
            raise RuntimeError("the checkpoint killed during its save was not rejected")
    out = {}
    if chosen is None:
        out["decision"] = "CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT"
    else:
        out.update(decision="CHECKPOINT_DECISION_RESUME", path=chosen[1], step=str(chosen[0]))
    if rejected:
        out["rejected"] = rejected
    return out


def build_expected(inc, res, incident):
    kind, owner, fclass = OUTCOME[inc["fault"]]
    fault = res["fault"] or {}
    f = inc["fault"]
    tr = inc["launcher"] == "torchrun"
    if "rank" in inc:
        rank = inc["rank"]
        node, lr = torchrun_node_of(rank) if tr else (SLURM_NODE, rank)
    else:
        rank, lr = -1, -1
        node = inc.get("node", SLURM_NODE)
    ev = []
    out_rel = None if tr else os.path.basename(res["out_file"])
    rank_rel = f"{node}/rank_{rank}.log" if tr else out_rel
    prefix = "" if tr else f"{rank}: "
    if f in ("sigkill", "kill_in_save"):
        ev.append(launcher_exit_evidence(inc, res, incident, rank, -9, INIT))
    elif f == "exception":
        ev.append(evidence(incident, rank_rel, INIT,
                           f"{prefix}RuntimeError: batch {inc['step']} from shard 3"))
        ev.append(launcher_exit_evidence(inc, res, incident, rank, 1, CORR))
    elif f == "exit":
        ev.append(evidence(incident, rank_rel, INIT, f"{prefix}", "data shard 3 is unreadable"))
        ev.append(launcher_exit_evidence(inc, res, incident, rank, 1, CORR))
    elif f == "oom":
        pid = fault["pid"]
        dm = f"{node}/dmesg.log"
        if tr:
            ev.append(evidence(incident, dm, INIT, "out of memory: Killed process "
                               f"{pid} "))
            ev.append(launcher_exit_evidence(inc, res, incident, rank, -9, CORR))
        else:
            ev.append(launcher_exit_evidence(inc, res, incident, rank, "oom", INIT))
            ev.append(evidence(incident, out_rel, INIT, "oom", "StepId=", required=True))
            e = evidence(incident, dm, CORR, "out of memory: Killed process "
                         f"{pid} ", required=False)
            if e:
                ev.append(e)
    elif f == "slow":
        ev.append(evidence(incident, rank_rel, INIT, f"rank={rank} step={inc['step']}/"))
    elif f == "resume_mismatch":
        # Every rank raised the same error loading the same file: the job is the initiator;
        # the lowest ranks' lines are cited, as for any job-wide error.
        for r, role in ((0, INIT), (1, CORR)):
            n, _ = torchrun_node_of(r)
            ev.append(evidence(incident, f"{n}/rank_{r}.log", role,
                               "RuntimeError: Error(s) in loading state_dict for Sequential:"))
    elif f in ("scancel", "preemption", "time_limit"):
        jid = res["job_id"]
        tail = {"scancel": "***", "preemption": "DUE TO PREEMPTION ***",
                "time_limit": "DUE TO TIME LIMIT ***"}[f]
        ev.append(evidence(incident, out_rel, INIT, f"*** JOB {jid} ON {SLURM_NODE} CANCELLED AT",
                           tail))
        ctld = {"scancel": f"REQUEST_KILL_JOB JobId={jid} ",
                "preemption": f"preempted JobId={jid} has been killed",
                "time_limit": f"Time limit exhausted for JobId={jid}"}[f]
        ev.append(evidence(incident, "slurmctld.log", CORR, ctld))
    # hang, sigstop, node_loss, agent_lost: the initiator printed nothing, and no launcher
    # line names it; the evidence list stays empty (see PRODUCED.md).
    ev = [e for e in ev if e]

    # The scheduler ended the whole job: a job-level initiator names no node
    # (docs/truth_format.md); the event still says where it happened.
    job_level = f in ("scancel", "preemption", "time_limit", "resume_mismatch")
    initiator = {"rank": rank, "node": "" if job_level else node, "local_rank": lr,
                 "failure_class": fclass, "confidence": 1}
    event = {"kind": kind, "rank": rank, "node": node}
    if fault.get("time"):
        initiator["time"] = fault["time"]
        event["time"] = fault["time"]
    if "step" in inc:
        event["step"] = inc["step"]
    ranks_on_node = ([r for r in range(4) if torchrun_node_of(r)[0] == node] if tr
                     else list(range(4)))
    if f in FATAL_TO_PEERS:
        lost = {rank} if rank >= 0 else set(ranks_on_node)
        secondary = [r for r in range(4) if r not in lost]
    else:
        secondary = []
    exp = {"scenario": inc["id"], "verdict": "VERDICT_DIAGNOSED", "initiator": initiator,
           "owner": owner}
    if secondary:
        exp["cascade"] = {"secondary_ranks": secondary}
    if ev:
        exp["evidence"] = ev
    ck = checkpoint_outcome(inc, incident)
    if ck:
        exp["checkpoint"] = ck
    exp["events"] = [event]
    job = {"world_size": res["world_size"], "nodes": res["nodes"],
           "gpus_per_node": res["per_node"], "start_time": rfc3339(res["start"]),
           "end_time": rfc3339(res["end"])}
    if fault.get("time"):
        job["fault_time"] = fault["time"]
    exp["job"] = job
    return exp


def versions():
    import torch
    slurm = subprocess.run(["slurmd", "-V"], capture_output=True, text=True).stdout.strip()
    munge = subprocess.run(["munged", "-V"], capture_output=True, text=True).stdout.split()[0]
    deb = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "python3-torch"],
                         capture_output=True, text=True).stdout.strip()
    return (f"python3-torch {deb} (torch.__version__ {torch.__version__}, gloo backend on "
            f"CPU), Python {sys.version.split()[0]}, {slurm}, {munge}, kernel "
            f"{os.uname().release}")


DESCRIBE = {
    "sigkill": "rank {rank} SIGKILLs itself (os.kill(getpid(), SIGKILL)) after the forward "
               "pass of step {step}, while its peers enter the gradient all-reduce",
    "hang": "rank {rank} sleeps forever after the forward pass of step {step} and prints "
            "nothing, while its peers wait in the gradient all-reduce",
    "sigstop": "rank {rank} sends itself SIGSTOP after the forward pass of step {step}",
    "exception": "rank {rank} raises an uncaught RuntimeError while loading the batch of "
                 "step {step}",
    "exit": "rank {rank} logs an error and calls sys.exit(1) in step {step}",
    "oom": "rank {rank} allocates and touches 64 MiB tensors from step {step} on until the "
           "kernel's memory-cgroup OOM killer kills it",
    "slow": "rank {rank} sleeps 1.5 s in its data loading in every step from step {step} on "
            "(a straggler; the job completes)",
    "kill_in_save": "rank {rank} writes half of checkpoints/step_{step}.pt, fsyncs it and "
                    "SIGKILLs itself during the save of step {step}; `latest` still names the "
                    "previous checkpoint",
    "node_loss": "the harness SIGKILLs every process of {node} at once (its torchrun agent "
                 "and both workers) during step 11; the kernel closes their sockets",
    "agent_lost": "the harness SIGKILLs only the torchrun agent of {node} during step 11; "
                  "its workers are left running as orphans",
    "scancel": "the harness runs `scancel <jobid>` during step 11",
    "preemption": "the harness submits a 2-task job to the higher-priority partition `urgent` "
                  "(PreemptType=preempt/partition_prio, PreemptMode=CANCEL) during step 11; "
                  "the node has 4 CPUs, all held by the training job",
    "time_limit": "the job is submitted with --time=1 (one minute) and 400 steps of about "
                  "0.25 s; Slurm ends it at the time limit",
    "resume_mismatch": "every rank resumes (--resume checkpoints, strict load_state_dict "
                       "before the first step) a checkpoint written by an earlier run of the "
                       "same script with a 64-wide hidden layer (one gloo process, 10 steps; "
                       "its checkpoints/ copied into the incident), while this job builds it "
                       "128 wide (--hidden 128): every rank raises torch's size-mismatch "
                       "RuntimeError; no rank fails because of another",
}


def write_produced(inc, res, outdir, vers):
    what = DESCRIBE[inc["fault"]].format(**inc)
    launcher = ("two torchrun agents on loopback as two nodes (node-a: node_rank 0, ranks "
                "0-1; node-b: node_rank 1, ranks 2-3), static rendezvous, gloo on CPU"
                if inc["launcher"] == "torchrun" else
                f"sbatch + `srun --label`, 4 tasks on one Slurm node {SLURM_NODE} "
                "(slurmctld + slurmd + munged on 127.0.0.1, started and stopped by the harness)")
    note = ""
    if inc["fault"] == "oom":
        note = (f" The memory limit was a cgroup-v1 memory cgroup of {MEMCG_LIMIT >> 20} MiB "
                "holding only the faulting worker (joined by wrapper.sh before exec); "
                "`dmesg.log` holds the kernel log lines printed during the capture (both "
                "nodes share one kernel; the file is kept under the node of the worker)."
                if inc["launcher"] == "torchrun" else
                f" The job ran with --mem={SLURM_MEM} enforced by task/cgroup (cgroup v1); "
                f"`{SLURM_NODE}/dmesg.log` holds the kernel log lines printed during the capture.")
    if inc["fault"] == "time_limit":
        note += (" The event has no `time`: the harness does not see the moment Slurm acts "
                 "(slurmctld checks time limits periodically).")
    if inc["launcher"] == "slurm":
        note += (f" Job {res['job_id']} ended in state {res['job_state']}; slurmctld.log and "
                 f"{SLURM_NODE}/slurmd.log are the daemons' whole logs for this capture.")
    text = (f"Produced {res['start'].strftime('%Y-%m-%d %H:%M')} UTC by "
            f"`corpora/capture/capture.sh --only {inc['id']}` with real software: {vers}. "
            f"Launcher: {launcher}. Command: `{res['command']}`. Training: a 32-64-1 MLP under "
            f"DistributedDataParallel, world size 4, steps of about 0.25 s (--steps, default "
            f"{STEPS}), rank 0 saving checkpoints/step_<N>.pt every --ckpt-every steps "
            f"(default {CKPT_EVERY}) plus a `latest` file; init_process_group(\"gloo\", "
            f"timeout=timedelta(seconds={TIMEOUT_S})), so peers of a silent rank time out "
            f"after {TIMEOUT_S} s. Injected: {what}.{note} The files under incident/ are "
            f"exactly as the job left them; expected.json was written from the injection "
            f"alone (time of the fault as recorded by train.py or the harness at injection), "
            f"with evidence lines located by the injected rank/pid.\n")
    with open(os.path.join(outdir, "PRODUCED.md"), "w") as f:
        f.write(f"# {inc['id']}\n\n{text}")


# ----------------------------------------------------------------------------- main

def capture(inc, index, vers):
    run_dir = os.path.join(WORK, inc["id"])
    shutil.rmtree(run_dir, ignore_errors=True)
    incident = os.path.join(run_dir, "incident")
    os.makedirs(incident)
    log(f"{inc['id']}: {inc['launcher']} {inc['fault']}")
    if inc["launcher"] == "torchrun":
        res = run_torchrun(inc, run_dir, incident)
    else:
        res = run_slurm(inc, run_dir, incident, index)
    expected = build_expected(inc, res, incident)
    outdir = os.path.join(OUT, inc["id"])
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    shutil.copytree(incident, os.path.join(outdir, "incident"))
    with open(os.path.join(outdir, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2, ensure_ascii=False)
        f.write("\n")
    write_produced(inc, res, outdir, vers)
    log(f"{inc['id']}: done ({(res['end'] - res['start']).total_seconds():.0f} s)")


def capture_each(chosen, incidents, capture_one, vers):
    """Capture each chosen incident (its index in `incidents` seeds its run); a failure is
    reported and the next one captured. The exit status: 1 when any failed."""
    failed = []
    for inc in chosen:
        try:
            capture_one(inc, incidents.index(inc), vers)
        except Exception as e:  # noqa: BLE001 - report and go on with the next incident
            log(f"{inc['id']}: FAILED: {e}")
            failed.append(inc["id"])
    if failed:
        log(f"failed: {', '.join(failed)}")
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description="Re-capture the real corpus (needs root, "
                                 "python3-torch, slurm-wlm, munge).")
    ap.add_argument("--only", help="comma-separated incident ids")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        for inc in INCIDENTS:
            print(inc["id"], inc["launcher"], inc["fault"])
        return 0
    chosen = INCIDENTS
    if a.only:
        want = set(a.only.split(","))
        unknown = want - {i["id"] for i in INCIDENTS}
        if unknown:
            ap.error(f"unknown incident ids: {sorted(unknown)}")
        chosen = [i for i in INCIDENTS if i["id"] in want]
    if os.geteuid() != 0:
        ap.error("must run as root (UTS namespaces, cgroups, Slurm daemons)")
    install_bin()
    vers = versions()
    return capture_each(chosen, INCIDENTS, capture, vers)


if __name__ == "__main__":
    sys.exit(main())
