#!/usr/bin/env bash
# Starts and stops the services the end-to-end tests of `denpex run` need: a single-node
# Slurm (munged, slurmctld, slurmd) on 127.0.0.1 whose node `sn01` runs in a UTS namespace
# with that host name — the set-up of corpora/capture, with process tracking that needs no
# cgroup hierarchy. Needs root and Debian's slurmctld, slurmd, slurm-client and munge
# (scripts/install-deps.sh --with-services).
#
#   scripts/services.sh start    start them (a no-op when they run); prints SLURM_CONF=<file>
#   scripts/services.sh stop     cancel leftover jobs, stop each daemon by its own pid, and
#                                remove the state directory (a no-op when nothing runs)
#   scripts/services.sh status   exit 0 when all three run
#
# State, configuration and logs live in DENPEX_SERVICES_DIR (default /tmp/denpex-services);
# DENPEX_SERVICES_KEEP=1 keeps that directory on stop (to read the daemons' logs).
set -euo pipefail

dir="${DENPEX_SERVICES_DIR:-/tmp/denpex-services}"
node=sn01
conf="$dir/etc/slurm.conf"
daemons=(slurmd slurmctld munged)  # stop order

log() { echo "services: $*" >&2; }

pidfile() {
  case "$1" in
    munged) echo "$dir/munge/munged.pid" ;;
    slurmctld) echo "$dir/state/slurmctld.pid" ;;
    slurmd) echo "$dir/spool/slurmd.pid" ;;
  esac
}

# The pid of daemon $1 when it runs (its pid file names a live process of that name).
running_pid() {
  local f pid
  f="$(pidfile "$1")"
  [[ -r "$f" ]] || return 1
  pid="$(tr -dc '0-9' <"$f")"
  [[ -n "$pid" && -r "/proc/$pid/comm" && "$(cat "/proc/$pid/comm")" == "$1" ]] || return 1
  echo "$pid"
}

all_running() {
  local d
  for d in "${daemons[@]}"; do running_pid "$d" >/dev/null || return 1; done
}

free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  echo 16817
}

write_config() {
  mkdir -p "$dir"/{etc,state,spool,log,munge} "$dir/spool/slurmd.$node"
  chmod 700 "$dir/munge"
  cat >"$conf" <<EOF
# written by scripts/services.sh
ClusterName=denpex
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd.%n
SlurmctldPidFile=$(pidfile slurmctld)
SlurmdPidFile=$(pidfile slurmd)
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MpiDefault=none
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
InactiveLimit=0
MinJobAge=60
SlurmdTimeout=60
NodeName=$node NodeAddr=127.0.0.1 CPUs=8 Sockets=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=8000 State=UNKNOWN
PartitionName=batch Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
}

# Runs "$@" in the background, detached, in a UTS namespace whose host name is the node's.
in_node() {
  local out="$1"
  shift
  setsid unshare --uts -- /bin/sh -c 'hostname "$1"; shift; exec "$@"' sh "$node" "$@" >"$out" 2>&1 </dev/null &
}

wait_until() {  # seconds, command...
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

node_idle() { [[ "$(SLURM_CONF="$conf" sinfo -h -o %T 2>/dev/null)" == idle ]]; }

start() {
  if all_running; then
    log "already running"
    echo "SLURM_CONF=$conf"
    return 0
  fi
  if [[ $(id -u) -ne 0 ]]; then log "needs root (UTS namespace, slurmd)"; return 1; fi
  local b
  for b in munged mungekey slurmctld slurmd sinfo srun unshare setsid; do
    command -v "$b" >/dev/null || { log "$b not found: run scripts/install-deps.sh --with-services"; return 1; }
  done
  stop quiet  # leftovers of a half-started set
  write_config
  mungekey --create --keyfile "$dir/munge/munge.key" --force
  chmod 600 "$dir/munge/munge.key"
  setsid munged --foreground --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$(pidfile munged)" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" \
    >"$dir/log/munged.console" 2>&1 </dev/null &
  wait_until 10 test -S "$dir/munge/munge.socket" || { log "munged did not start"; stop quiet; return 1; }
  in_node "$dir/log/slurmctld.console" slurmctld -D -i -f "$conf"
  in_node "$dir/log/slurmd.console" slurmd -D -N "$node" -f "$conf"
  if ! wait_until 60 node_idle; then
    log "the Slurm node never became idle; last lines of the daemons' logs:"
    tail -n 5 "$dir"/log/*.log "$dir"/log/*.console >&2 || true
    stop quiet
    return 1
  fi
  all_running || { log "a daemon is missing its pid file"; stop quiet; return 1; }
  log "Slurm running: node $node on 127.0.0.1 ($conf)"
  echo "SLURM_CONF=$conf"
}

stop() {
  local quiet="${1:-}" d pid
  if running_pid slurmctld >/dev/null; then
    local jobs
    jobs="$(SLURM_CONF="$conf" squeue -h -o %i 2>/dev/null || true)"
    if [[ -n "$jobs" ]]; then
      # shellcheck disable=SC2086  # one job id per word
      SLURM_CONF="$conf" scancel $jobs 2>/dev/null || true
      wait_until 20 test -z "$(SLURM_CONF="$conf" squeue -h -o %i 2>/dev/null)" || log "jobs still listed: $jobs"
    fi
  fi
  for d in "${daemons[@]}"; do
    pid="$(running_pid "$d")" || continue
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_until 20 sh -c "! test -e /proc/$pid/comm"; then
      log "$d (pid $pid) ignored SIGTERM; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  if [[ "${DENPEX_SERVICES_KEEP:-}" != 1 ]]; then rm -rf "$dir"; fi
  [[ -n "$quiet" ]] || log "stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) all_running ;;
  *) echo "usage: scripts/services.sh start|stop|status" >&2; exit 2 ;;
esac
