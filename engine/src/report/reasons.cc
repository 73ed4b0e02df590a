#include "report/reasons.h"

#include <array>
#include <cstddef>

namespace denpex::engine {
namespace {

struct Template {
  ReasonId id;
  std::string_view words;
};

// In ReasonId's order (checked below).
constexpr std::array kTemplates = std::to_array<Template>({
    {ReasonId::kVerbatim, "{text}"},
    // analyze/describe.cc (the blanks several files fill)
    {ReasonId::kExitBySignal, "{signal} (exit {code})"},
    {ReasonId::kExitBySignalNumber, "signal {signal} (exit {code})"},
    {ReasonId::kExitCode, "exit code {code}"},
    // analyze/unranked.cc
    {ReasonId::kSharedConsoleExit,
     "Ranks {ranks} on {node} exited with an error code ({exits}) on a console they share with "
     "their agent, whose lines carry no rank. The console holds {peer_errors} about a peer "
     "({peer_error}, a victim's) for {failed}, so at least one of them failed on its own: it "},
    {ReasonId::kSharedConsoleOwnError, "raised {error} ({where})"},
    {ReasonId::kSharedConsoleNoTraceback,
     "exited with an error code and no traceback (no error of its own is recognised there: a "
     "`sys.exit(1)` or an error the script printed as plain text)"},
    {ReasonId::kSharedConsoleUnknownRank,
     ", and {node} holds every rank of the job, so nothing else stopped first. Which rank it was "
     "is not known: a rank prefix (torchrun --tee 3, torch >= 2.4's `[rank<G>]:`) or per-rank logs "
     "(torchrun --log-dir) would tell; torchrun's `Root Cause` orders exits by one-second times "
     "and names the lowest rank on a tie."},
    {ReasonId::kOwnErrorOfOneNode,
     "Ranks {ranks} exited with an error code ({exits}) on consoles whose lines carry no rank, "
     "beside errors about a peer (victims'). The one error a worker raised of its own, {error} "
     "({where}), was printed on {node}, and no other node printed one: a worker of {node} failed "
     "first. Which rank it was is not known: a rank prefix (torchrun --tee 3, torch >= 2.4's "
     "`[rank<G>]:`) or per-rank logs would tell."},
    {ReasonId::kFixOwnError,
     "Fix the {error} ({where}) before resuming: the job will fail again the same way."},
    {ReasonId::kFindWhyExited,
     "Find why a worker exited with an error code before resuming (the lines the script printed "
     "just before the exits): the job will fail again the same way."},
    {ReasonId::kUnresponsiveWorker,
     "The torchrun agent of {node} had to SIGKILL its worker (pid {pid}) when it tore it down, "
     "because SIGTERM did not end it ({kill}): that worker was stopped or stuck in the kernel, "
     "alive but not participating. {victims} of other agents failed only on a gloo timeout waiting "
     "on a peer ({victim_error}), a victim's, and nothing else failed: the unresponsive worker is "
     "the one they waited on, a hang. Its global rank is not known: no line (the rendezvous result "
     "with LOGLEVEL=INFO, a ChildFailedError entry of its agent, a `[rank<G>]:` prefix) gives it."},
    {ReasonId::kFindWhatStoppedPid,
     "Find what stopped pid {pid} on {node} (a SIGSTOP, a debugger, D state: its kernel log and "
     "the node's storage and GPU) before restarting; the workers that timed out waiting on it need "
     "no action of their own."},
    {ReasonId::kSilentPeerOnOneNode,
     "{ranks} timed out in gloo waiting on a peer ({timeout}) and exited ({exit}), a victim's end; "
     "the peer waited on was alive but silent (a peer that died closes the connection), never "
     "exited on its own and printed nothing. Slurm allocated the job one node, {host}, so that "
     "peer ran there: a hang on {host}. Which rank it was is not known: no line states the world "
     "size or names the other ranks (srun reports only the tasks that exited); nor whether it was "
     "stopped or stuck in its code."},
    {ReasonId::kStacksOnHost,
     "Take the stacks of the job's processes on {host} (py-spy dump) when it hangs again, and "
     "check its kernel log for a process stopped or in D state; run with srun --label and "
     "LOGLEVEL=INFO so the lines name every rank."},
    {ReasonId::kLoneStoreLoss,
     "The torchrun agent of {node} lost the c10d rendezvous store ({lost}: an agent cannot lose a "
     "store it hosts, so another agent hosted it) after its worker lost its peer to a closed "
     "connection ({victim_error}): the peer was gone, not silent. No agent reported a worker that "
     "failed on its own, and nothing else failed: the store's host, another agent, and that "
     "agent's worker vanished together, as when their node is lost (power, kernel, an operator's "
     "kill of the whole process tree). Which host it was, no line says (the rendezvous endpoint "
     "and the agents' `host` fields name no machine)."},
    {ReasonId::kCheckRendezvousHost,
     "Find the host of the job's rendezvous endpoint (--rdzv_endpoint) and check it (the kernel "
     "log for the OOM killer or a panic, its power and BMC event log) before returning it to "
     "service; restart the job without it if it was lost."},
    {ReasonId::kVanishedAgent,
     "The torchrun agent of {node} started ({started}: its c10d rendezvous) and then wrote "
     "nothing: no failure report, no signal, no exit barrier. The other agent's worker lost its "
     "peer to a closed connection ({victim_error}): the peer was gone, not silent, and nothing "
     "else failed. An agent whose worker died alone reports it; {node}'s agent vanished with its "
     "workers, as when its node is lost (power, kernel, an operator's kill of the whole process "
     "tree)."},
    {ReasonId::kNoLineNamesHost, " No line names its host."},
    {ReasonId::kCheckLostHost,
     "Check the host of {node} (the kernel log for the OOM killer or a panic, its power and BMC "
     "event log) before returning it to service; restart the job without it if it was lost."},
    // analyze/job_end.cc
    {ReasonId::kEndedAtTimeLimit, "ended the job at its time limit"},
    {ReasonId::kPreempted, "preempted the job"},
    {ReasonId::kCancelled, "cancelled the job"},
    {ReasonId::kEndedByRequeue, "ended the run by requeuing the job"},
    {ReasonId::kSlurmFailedLiveNode,
     "Slurm declared {node} failed and ended the job, but the node was not lost: slurmctld found "
     "it not responding ({silent} at {silent_time}) while the job kept training until {last_time} "
     "({last}), and no rank failed on its own"},
    {ReasonId::kSlurmdAnsweredAgain, "; its slurmd answered again later ({where})"},
    {ReasonId::kSlurmdNotHostFailed,
     ". The node's slurmd or the controller's path to it failed, not the host; {ended} ranks were "
     "ended by the scheduler."},
    {ReasonId::kResumeNode,
     "`scontrol show node {node}` shows it DOWN (Reason=Not responding): check slurmd and munge on "
     "{node} and the controller's network path to it, then return it with `scontrol update "
     "NodeName={node} State=RESUME` (or leave it out of the restart); the host and its GPUs need "
     "no repair."},
    {ReasonId::kRequeued, " Slurm requeued the job ({where})"},
    {ReasonId::kRequeuedNextRun,
     " and its next run (SLURM_RESTART_COUNT={count}) started in the same output ({where})"},
    {ReasonId::kDiagnosisOfFailedRun, "; this diagnosis is of the run that failed."},
    {ReasonId::kVerifyRequeuedRun,
     "Slurm restarted the job by itself (--requeue): confirm the requeued run resumed from the "
     "newest checkpoint that verifies, runs without the failed node, and makes progress; no manual "
     "restart is needed."},
    {ReasonId::kTheScheduler, "The scheduler "},
    {ReasonId::kBeforeAnyRankFailed,
     " ({where}) before any rank failed; {ended} ranks were ended by it."},
    {ReasonId::kBeforeAnyRankFailedAt,
     " ({where} at {time}) before any rank failed; {ended} ranks were ended by it."},
    {ReasonId::kRequeuedByScontrol,
     " No node failure is reported: the requeue was an `scontrol requeue` (an administrator's or "
     "the user's), not Slurm's answer to a failed node; the job waits to run again."},
    {ReasonId::kRequeueClassOpen,
     " No node failure is reported, and without slurmctld.log the banner does not tell an "
     "`scontrol requeue` from a preemption under PreemptMode=REQUEUE: the class is left open; the "
     "job waits to run again."},
    {ReasonId::kVerifyRequeuedJob,
     "Slurm requeued the job: confirm its next run resumes from the newest checkpoint that "
     "verifies and makes progress; nothing in the ranks failed, so no code or hardware needs "
     "fixing first."},
    {ReasonId::kResubmitLongerLimit,
     "Resubmit with a longer time limit, or checkpoint more often than the time left after the "
     "last checkpoint."},
    {ReasonId::kResubmit,
     "Resubmit the job; nothing in the ranks failed, so no code or hardware needs fixing first."},
    {ReasonId::kKilledAgentTask,
     "The torchrun agent of srun task {task} on {node} was killed by SIGKILL with its workers "
     "({where}): it reported no failure of its own, no worker raised or was killed alone, and "
     "{victims} ranks lost their peer and failed as a consequence. An agent killed whole is the "
     "loss of its node (power, kernel, the OOM killer, an operator's kill of the whole process "
     "tree)."},
    {ReasonId::kCheckKilledTask,
     "Check {node} for what killed srun's task (the kernel log for the OOM killer or a panic, the "
     "node's power and BMC event log, an operator's kill) before returning it to service; restart "
     "the job without it if it was lost."},
    {ReasonId::kLostAgent,
     "The torchrun agent of {node} was lost: no rank failed, the agent of {waiter} timed out in "
     "the exit barrier waiting for it ({barrier}), and {node}'s agent log stops with no word after "
     "its start."},
    {ReasonId::kCheckLostAgent,
     "Check {node} for what ended its torchrun agent (the kernel log for the OOM killer, the "
     "scheduler's or an operator's kill) and for orphaned workers still running there before "
     "restarting."},
    {ReasonId::kNodeLostItsRanks,
     "Node {node} was lost: its ranks went silent together with no error and no exit of their own, "
     "and "},
    {ReasonId::kNodeLostAllRanks,
     "Node {node} was lost: all {ranks} of its ranks went silent together with no error and no "
     "exit of their own, and "},
    {ReasonId::kSlurmReportsNodeFailed, "Slurm reports the node failed ({where})."},
    {ReasonId::kKubernetesReportsNodeFailed, "Kubernetes reports the node failed ({where})."},
    {ReasonId::kLauncherLostNode, "its launcher lost its session to the node ({where})."},
    {ReasonId::kAgentLogStops,
     "its torchrun agent log stops without a failure report while other nodes' agents reported."},
    {ReasonId::kDrainNode,
     "Drain {node} and check its power, kernel log (panic, hardware errors) and BMC event log "
     "before returning it to service; restart the job without it."},
    {ReasonId::kJobWideError,
     "{raised} of the {logged} ranks with a log raised the same {error} ({where})"},
    {ReasonId::kJobWideUnrankedError,
     "The workers of {covered} of the {nodes} {places} with workers raised the same {error} "
     "({where}; "
     "{errors} such errors, their lines tied to no rank), every exit their agents reported was an "
     "error code of its own and no rank reported a peer"},
    {ReasonId::kLoadingCheckpoint, " loading the checkpoint the job resumes from"},
    {ReasonId::kFailedAsWhole,
     ", and no NCCL watchdog timeout followed: the job failed as a whole, no rank because of "
     "another."},
    {ReasonId::kFixCheckpointConfig,
     "Every rank failed to load the checkpoint ({where}): resume with the world size and model "
     "shape that wrote it, convert it (DeepSpeed's universal checkpoint, DCP resharding), or point "
     "the job at a complete checkpoint before restarting."},
    {ReasonId::kFixSameException,
     "Every rank raised the same exception ({where}): fix the code or configuration it names "
     "before restarting; no rank or node needs action of its own."},
    // analyze/platform.cc
    {ReasonId::kPodEvicted,
     "The kubelet of {node} evicted the job's pod under node memory pressure ({where}): its "
     "torchrun was sent SIGTERM and stopped its workers before any rank failed on its own; the "
     "other pods were then deleted by the job's controller. The platform ended the job; {stopped} "
     "ranks were stopped with it."},
    {ReasonId::kFindMemoryUser,
     "Nothing in the job failed: find what else used {node}'s memory (or give the pod Guaranteed "
     "QoS: memory requests equal to limits) and resubmit."},
    {ReasonId::kPodOomKilled,
     "The container of the job's pod on {node} was OOMKilled at its memory limit ({where}): every "
     "process of the pod, torchrun too, was killed at once, and its log stops mid-run; the other "
     "pods were then deleted by the job's controller ({stopped} ranks)."},
    {ReasonId::kLowerPodMemory,
     "Lower the workers' host memory (data loader workers, pinned buffers, CPU copies of "
     "checkpoints) or raise the container's memory limit before resuming: the pod will be "
     "OOMKilled again."},
    {ReasonId::kRayNodeDead,
     "Node {node} was lost: Ray's GCS marked it dead after it missed its health checks"},
    {ReasonId::kCitedInParentheses, " ({where})"},
    {ReasonId::kRayActorDiedWithNode,
     ", and the driver's ActorDiedError ({where}) says the actor died with its node."},
    {ReasonId::kRayRank, "Rank {rank} (pid {pid} on {node})"},
    {ReasonId::kRayWorker, "The worker with pid {pid} on {node}"},
    {ReasonId::kRayMemoryMonitorKill,
     " was killed by Ray's memory monitor when its node ran low on memory ({where}); the driver "
     "then shut the other workers down."},
    {ReasonId::kLowerRayMemory,
     "Lower the workers' host memory on {node} (data loader workers, object store use, CPU copies) "
     "or run fewer tasks per node before resuming; raise RAY_memory_usage_threshold only with "
     "headroom."},
    {ReasonId::kRaySegfault,
     " crashed with a segmentation fault ({segv}); the driver's ActorDiedError ({died}) followed "
     "and the other workers were shut down."},
    {ReasonId::kReadCoreDump,
     "Read the faulthandler stack of the crashed worker and its core dump on {node} before "
     "resuming: the same crash will recur."},
    {ReasonId::kRayWorkerDied,
     "'s worker process died without a word of its own ({where}: the actor's worker process died); "
     "the driver then shut the other workers down."},
    {ReasonId::kCheckKernelLogForKill,
     "Check the kernel log of {node} for the OOM killer or a hardware event: nothing in the job's "
     "logs says what killed the worker."},
    {ReasonId::kControllerRestarted, " The job's controller restarted the job"},
    {ReasonId::kRestartedTimes, " {times} ({first})"},
    {ReasonId::kRestartedTimesLast, " {times} ({first}, the last {last})"},
    {ReasonId::kRestartedInPlace,
     ", its containers in place, {times} (Restart Count {count}, {where})"},
    {ReasonId::kLastAttemptSetAside, "; the {files} pod logs of the last attempt were set aside"},
    {ReasonId::kRestartedAttemptsSetAside,
     "; the {files} pod logs of the restarted attempts were set aside: patient zero is the first "
     "attempt's, the one whose failure started the restarts"},
    {ReasonId::kRestartedAttemptSetAside,
     "; the {files} pod logs of the restarted attempt were set aside: patient zero is the first "
     "attempt's, the one whose failure started the restarts"},
    {ReasonId::kPeriod, "."},
    {ReasonId::kFirstAttemptGone,
     " `kubectl logs --previous` keeps only the container before the current one: the earliest "
     "attempt these logs hold is attempt {attempt} of {attempts}, so the first attempt's pod logs "
     "are gone and the rank named is the one that failed in that attempt (a failure that recurs "
     "fails the same rank; only the first attempt's own lines, from a log collector, could confirm "
     "it)."},
    {ReasonId::kReplacementUnplaced,
     " The restarted attempt could not place a replacement pod ({where}: {row}): a scheduler and "
     "capacity fact that kept the restarted gang from running, not the cause."},
    {ReasonId::kCrashLoops, " Kubernetes reports {count} CrashLoopBackOff back-offs."},
    {ReasonId::kRestartBudgetSpent,
     " The job ended because its restart budget ran out ({where}), after the failure above."},
    {ReasonId::kPodDeletedAfterNotReady,
     " Its pod was deleted after the NotReady toleration, and the job's controller then deleted "
     "the other pods."},
    {ReasonId::kOnce, "once"},
    {ReasonId::kTimes, "{count} times"},
    // analyze/store.cc
    {ReasonId::kRendezvousUnreachable,
     "The c10d rendezvous never completed: {agents} agents waited out the join timeout and raised "
     "RendezvousTimeoutError (victims), while {node}'s agent could not reach the rendezvous "
     "endpoint (RendezvousConnectionError: its TCPStore client timed out connecting); no worker "
     "started. {node} never joined."},
    {ReasonId::kRendezvousNeverJoined,
     "The c10d rendezvous never completed: {agents} agents waited out the join timeout and raised "
     "RendezvousTimeoutError (victims), while {node}'s agent never joined and reported nothing; no "
     "worker started. {node} never joined."},
    {ReasonId::kCheckRendezvousRoute,
     "Check the route and firewall from {node} to the rendezvous endpoint (--rdzv-endpoint host, "
     "port 29400: nc -zv from {node}), or leave {node} out, before restarting."},
    {ReasonId::kStoreTimeoutNoSilentNode,
     "Rank 0's TCPStore timed out waiting for its clients, {joined} clients joined ({where}): "
     "{missing} ranks never joined and printed nothing, and no node of the logs is silent, so "
     "their node is not named. Rank 0's error and the joined ranks' store errors are "
     "consequences."},
    {ReasonId::kStoreTimeoutSilentNodes,
     "Rank 0's TCPStore timed out waiting for its clients, {joined} clients joined ({where}): "
     "{missing} never joined and printed nothing, and {silent} of the logs have no line of their "
     "ranks and no failure of their launcher ({first}, ...): the logs do not say which of them "
     "held the missing ranks, so no node is named. Rank 0's error and the joined ranks' store "
     "errors are consequences."},
    {ReasonId::kJobNeverStarted,
     "The job never started: rank 0's TCPStore (init_method env://) timed out waiting for its "
     "clients, {joined} clients joined ({where}). {missing} never joined and printed nothing; "
     "{node}"},
    {ReasonId::kOneSilentNode,
     " is the one node of the job whose ranks printed nothing (no line of theirs, no failure "
     "reported by its launcher). "},
    {ReasonId::kSilentNodes,
     " and {others} are the nodes of the job whose ranks printed nothing. "},
    {ReasonId::kHungTask,
     "Its kernel reported {count} hung task ({where}: blocked in D state, a hung mount or driver "
     "call): its ranks started but never reached the store. "},
    {ReasonId::kHungTasks,
     "Its kernel reported {count} hung tasks ({where}: blocked in D state, a hung mount or driver "
     "call): its ranks started but never reached the store. "},
    {ReasonId::kStoreErrorsAreConsequences,
     "Rank 0's DistStoreError (the first and loudest error) and the joined ranks' store->get "
     "errors are consequences."},
    {ReasonId::kCheckNodeStartsProcesses,
     "Check that {node} starts processes: a command on it returns (an ssh command from the launch "
     "host, its home and software mounts, sshd; under srun or mpirun, processes of its last step "
     "left hanging), and its ranks' environment (MASTER_ADDR, MASTER_PORT, RANK); or leave it out "
     "of the job, then restart."},
    {ReasonId::kStoreHostLost,
     "The c10d store's host {node} lost its processes: {reporters} reported losing the store ("},
    {ReasonId::kStoreConnectionsNamedHost,
     "{named} worker store connections reset with {node} as their remote end (`recvValue failed on "
     "SocketImpl(... remote=[{node}]...)`)"},
    {ReasonId::kStoreHostOnlySilentAgent,
     "no worker named it, but {node} is the one node whose agent neither raised nor reported"},
    {ReasonId::kStoreHostInitiator,
     "; their agents raised RendezvousConnectionError and stopped their workers), while {node}'s "
     "own logs stop without an error. The first store error is a victim's; the store's host is the "
     "initiator."},
    {ReasonId::kCheckStoreHost,
     "Check {node} (the job's c10d store / rendezvous endpoint host): its kernel log (OOM killer, "
     "panic) and what else ran there; drain it or move the rendezvous endpoint to a healthy node "
     "before restarting."},
    // analyze/partial.cc
    {ReasonId::kAgentReportedWorkerFailed,
     "The torchrun agent of {node} reported its local rank {local_rank} (pid {pid}) failed with "
     "{exit}"},
    {ReasonId::kOnlyPeerError,
     " ({where}), but its only error is about a peer ({peer}): it waited on a rank that stopped, a "
     "victim. No line names that rank (no other agent reported a failure, and no ChildFailedError "
     "table, rendezvous result or rank prefix places the workers), so the initiator is unknown."},
    {ReasonId::kCollectEveryAgentConsole,
     "Collect the torchrun consoles of every agent of the job with LOGLEVEL=INFO (the rendezvous "
     "result names each agent's global ranks) and the ChildFailedError tables: the rank that "
     "printed no timeout is the one the others waited on."},
    {ReasonId::kAtTime, " at {time}"},
    {ReasonId::kKilledByOomKiller, ", killed by the kernel's OOM killer ({where})"},
    {ReasonId::kThenSigtermOthers, ", and then sent SIGTERM to its {others}"},
    {ReasonId::kGlobalRankUnknown,
     ". Its global rank is unknown (no ChildFailedError table, rendezvous result or rank prefix in "
     "hand places it), and no other node's agent reported a failure, so whether a rank elsewhere "
     "stopped first cannot be checked from these logs."},
    {ReasonId::kReadKernelLog,
     "Read the kernel log of {node} (dmesg -T, journalctl -k): the OOM killer, or who sent {exit} "
     "to pid {pid}."},
    {ReasonId::kReadKernelLogAround,
     "Read the kernel log of {node} around {time} (dmesg -T, journalctl -k): the OOM killer, or "
     "who sent {exit} to pid {pid}."},
    {ReasonId::kReadWorkerTraceback,
     "Read the traceback of local rank {local_rank} of {node} and fix the error before resuming."},
    {ReasonId::kCollectOtherConsoles,
     "Collect the torchrun consoles (or --log_dir trees) of the job's other nodes and the rest of "
     "this one's (its ChildFailedError table names the global rank): they say whether local rank "
     "{local_rank} of {node} stopped first and which global rank it was."},
    // analyze/network.cc
    {ReasonId::kNicOfGpu, "the NIC of GPU {gpu} on {node}"},
    {ReasonId::kNicOfRank, "the NIC of rank {rank}"},
    {ReasonId::kHcaOnNode, "{hca} on {node}"},
    {ReasonId::kHcaReportedDown,
     "{hca} on {node}, whose ranks' NCCL reported it down (`{event}`, {count} line(s))"},
    {ReasonId::kSocketsReset,
     "Rank {rank} ({node}, NCCL's socket transport) had its sockets to {peers} peer(s) on other "
     "nodes reset (`Connection reset by peer`){closed}: the bad row and column of the socket error "
     "matrix point at the network link of rank {rank} on {node}; the closed connections and NCCL "
     "errors elsewhere are consequences."},
    {ReasonId::kOthersSawConnectionClosed,
     ", and {count} ranks on other nodes saw their connection to {node} closed"},
    {ReasonId::kCheckNetworkLink,
     "Check the network link of {node} (ip -s link and ethtool -S: carrier changes, NIC resets, "
     "drops; the cable and switch port) and exclude {node} until it holds a link under load: rank "
     "{rank}'s sockets were reset."},
    {ReasonId::kIbCompletionsFailed,
     "Rank {rank} ({node}) reported failed IB completions (retry exceeded, status 12{others}): the "
     "bad row and column of the IB error matrix of {reporters} reporting ranks point at {nic}; the "
     "flushed work (status 5) and NCCL errors elsewhere are consequences."},
    {ReasonId::kOthersNamedNode,
     ", and {count} ranks on other nodes reported status 12 naming {node}"},
    {ReasonId::kCheckNic,
     "Check {nic} (ibstat: port state and rate; link flaps, symbol errors, the cable and switch "
     "port) and exclude {node} until it passes ib_write_bw: rank {rank}'s IB work stopped "
     "completing."},
    {ReasonId::kFirstByOneEnd,
     " The end that failed first is {a}: only its connection was reset; {b} saw it closed only "
     "once rank {rank} had aborted, as its other peers did."},
    {ReasonId::kFirstByCounters,
     " The end that failed first is {a}: of the two ports only mlx5_{device} on {node} shows link "
     "errors ({symbol_errors} symbol errors, link downed {link_downed} time(s))."},
    {ReasonId::kFirstByWatchdogTime,
     " The end that failed first is {a}: its watchdog caught the NCCL error {lead} before the "
     "other end's (clocks aligned across nodes; the WARNs carry no time)."},
    {ReasonId::kFirstByResetTime,
     " The end that failed first is {a}: its reset WARN came {lead} before the other end's (clocks "
     "aligned across nodes)."},
    {ReasonId::kFirstByRetryTime,
     " The end that failed first is {a}: its retry-exceeded WARN came {lead} before the other "
     "end's (clocks aligned across nodes)."},
    {ReasonId::kFirstUnknownOneEnd,
     " Nothing tells which end failed first: the lines of one end alone report the link, and a "
     "failed NIC at either end or a bad cable between them looks the same from one end; the link "
     "is named, no rank."},
    {ReasonId::kFirstUnknownSocket,
     " Nothing tells which end failed first (both reported within {within}): the pair is named, no "
     "rank."},
    {ReasonId::kFirstUnknownIb,
     " Nothing tells which end failed first (both reported within {within} and no port counters "
     "single one out): the pair is named, no rank."},
    {ReasonId::kIbLinkOneEnd,
     "One bad IB link, seen from one end: {a} reported retry exceeded (status 12) against {far} "
     "and against no one else, and no other rank reported status 12: one cell of the IB error "
     "matrix, whose other end's row and column are not in the incident. The link between {node} "
     "and {address} stopped carrying traffic; the flushed work (status 5) and the other ranks' "
     "NCCL errors and timeouts are consequences."},
    {ReasonId::kCollectFarHostLogs,
     "Collect the logs of the host at {address} (its NCCL WARNs say whether it saw the link fail "
     "too), then drain the link {link} and test both of its ports before restarting: ibdiagnet (or "
     "ibporterrors / perfquery) for symbol errors and link-downed counts, then ibstat on both "
     "NICs; exclude the node whose NIC fails, or reseat or swap the cable."},
    {ReasonId::kIbLink,
     "One bad IB link: {a} and {b} each reported retry exceeded (status 12) against the other and "
     "against no one else, one hot cell of the IB error matrix (a failed NIC would fill its row "
     "and column): the link between {node_a} and {node_b} (one HCA pair, its cable or switch port) "
     "stopped carrying traffic; the flushed work (status 5) and the other ranks' NCCL errors and "
     "timeouts are consequences."},
    {ReasonId::kDrainIbLink,
     "Drain the link {link} and test it before restarting: ibdiagnet (or ibporterrors / perfquery "
     "on both ports) for symbol errors and link-downed counts, then reseat or swap the cable or "
     "move it to another switch port. Both NICs' other links worked: the nodes need not be "
     "excluded once the link is fixed or routed around."},
    {ReasonId::kSocketPathOneReset,
     "One bad network path under NCCL's socket transport: {a} had its connection to {b} reset "
     "(`Connection reset by peer`) and no other"},
    {ReasonId::kSocketPathBothReset,
     "One bad network path under NCCL's socket transport: {a} and {b} each had their connection to "
     "the other reset (`Connection reset by peer`) and no other"},
    {ReasonId::kSocketPathDropped,
     ", one hot cell of the socket error matrix (a NIC that reset would fill its row): the path "
     "between {node_a} and {node_b} (a switch port, a firewall or conntrack on the way) dropped "
     "their TCP connections while both nodes' other connections worked; the connections closed by "
     "the aborting ranks and the other ranks' NCCL errors and timeouts are consequences."},
    {ReasonId::kTestSocketPath,
     "Test the path {link} before restarting: both NICs' counters (ip -s link, ethtool -S: drops, "
     "resets, carrier changes), the switch ports between them and any firewall or conntrack state "
     "on the way, then a sustained TCP test between the two nodes (iperf3). Both nodes' other "
     "connections worked: neither need be excluded once the path holds."},
    {ReasonId::kRanks, "ranks {ranks}"},
    {ReasonId::kOfItsRanksAmong, "{count} of its ranks, among them {ranks}"},
    {ReasonId::kOfItsRanks, "{count} of its ranks"},
    {ReasonId::kDuplicateGpu,
     "NCCL's communicator init failed on {node}: {ranks} were given the same GPU (`Duplicate GPU "
     "detected`), so they raised from the first barrier and every other rank waited there; the "
     "launch configuration (CUDA_VISIBLE_DEVICES / LOCAL_RANK) of {node} is wrong."},
    {ReasonId::kFixGpuAssignment,
     "Fix the GPU assignment of the launch script on {node} ({ranks} shared a GPU) before "
     "restarting: each local rank needs its own device."},
    {ReasonId::kBootstrapGaveUp,
     "NCCL's bootstrap connects from {node} ({ranks}) gave up (`Connection timed out` / `refused` "
     "after NCCL's retries) while every other node connected, so they raised from the first "
     "barrier and every other rank waited there: {node} cannot reach the bootstrap root (a route, "
     "a firewall, the interface NCCL_SOCKET_IFNAME names)."},
    {ReasonId::kCheckBootstrapRoute,
     "Check the route and firewall from {node} to the bootstrap root (rank 0's host; ping and nc "
     "to its NCCL port on the NCCL_SOCKET_IFNAME interface) and fix them or exclude {node} before "
     "restarting."},
    {ReasonId::kInterfaceMissing,
     "NCCL's bootstrap found no socket interface on {node} ({ranks}), so they raised from the "
     "first barrier and every other rank waited there: the interface NCCL_SOCKET_IFNAME names is "
     "missing on {node}."},
    {ReasonId::kCheckInterfaces,
     "Check the network interfaces of {node} against NCCL_SOCKET_IFNAME (ip addr) and fix the name "
     "or the node before restarting."},
    {ReasonId::kFarEndOfNode, "the far end ({node})"},
    {ReasonId::kHcaOfGpu, "the HCA of GPU {gpu}"},
    {ReasonId::kItsHca, "its HCA"},
    {ReasonId::kItsSocketInterface, "its socket interface"},
    {ReasonId::kLinkEndOfRank, "rank {rank} ({node}, {hca})"},
    {ReasonId::kLinkEndOfProcess, "a process ({node}, {hca})"},
    {ReasonId::kFarPeerOfNode, "its peer {address} ({node}, whose logs hold no status-12 WARN)"},
    {ReasonId::kFarPeerUnknownHost,
     "its peer {address} (a host no line of the incident comes from: its logs are missing)"},
    // analyze/baselines.cc, analyze/first_error.cc (the baseline strategies)
    {ReasonId::kRestartFromNewest, "Restart the job from the newest checkpoint."},
    {ReasonId::kNoRankedError, "No error line names a rank."},
    {ReasonId::kLoudestRank, "Rank {rank} printed the most error lines ({errors})."},
    {ReasonId::kNoRootCauseTable,
     "No torchrun \"Root Cause (first observed failure)\" table in the logs."},
    {ReasonId::kEarliestRootCause,
     "Rank {rank} is the earliest \"Root Cause (first observed failure)\" of a torchrun agent "
     "({where})."},
    {ReasonId::kNoFlightRecorderVerdict,
     "No Flight Recorder dump shows a collective some dumped member never joined."},
    {ReasonId::kFlightRecorderMissingRanks,
     "The Flight Recorder dumps name rank(s) {ranks} as missing from the collective their process "
     "group waits in ({where})."},
    {ReasonId::kNoRasVerdict, "No NCCL RAS report lists a rank apart from the rest."},
    {ReasonId::kRasListedRanks,
     "The newest NCCL RAS report lists rank(s) {ranks} apart from the rest of their communicator "
     "({where})."},
    {ReasonId::kNoWatchdogTimeout, "No NCCL watchdog timeout line in the logs."},
    {ReasonId::kEarliestWatchdogTimeout,
     "Rank {rank} printed the earliest NCCL watchdog timeout ({where} at {time})."},
    // analyze/straggler.cc, analyze/ib_ports.cc
    {ReasonId::kStepStraggler,
     "Rank {rank} ({node}) has spent most of every step in its own part since step {since} "
     "({own_ms} of {step_ms} ms at step {step}, {where}) while the {others} other ranks with step "
     "lines spent theirs waiting for it in the collectives: a straggler slows the whole job."},
    {ReasonId::kCheckSlowRank,
     "Check what slows rank {rank} on {node} (its data loading, disk, CPU or GPU clocks) and "
     "replace or drain the node if it is the hardware: every step waits for it."},
    {ReasonId::kSlowNicOfRank,
     "A slow NIC: of {ports} IB ports, {port} on {node} (the port of rank {rank} (GPU {gpu} on "
     "{node})) stands out: "},
    {ReasonId::kSlowNicOfGpu,
     "A slow NIC: of {ports} IB ports, {port} on {node} (the port of GPU {gpu} on {node}) stands "
     "out: "},
    {ReasonId::kBelowUsualRate, "it runs below the job's usual rate"},
    {ReasonId::kListComma, ", "},
    {ReasonId::kXmitWaitRatio, "its PortXmitWait is {ratio} the median port's"},
    {ReasonId::kSymbolErrorsAfter, ", {count} symbol errors"},
    {ReasonId::kLinkDownedAfter, ", the link went down {count} time(s)"},
    {ReasonId::kSlowNicSlowsCollectives,
     ". Its inter-node transfers slow every collective it is in, so every rank's step timers grow "
     "alike and name no rank; the port's counters do."},
    {ReasonId::kRankByAllocationOrder,
     " (No line ties srun's tasks to hosts: the rank is the node's task for that GPU in "
     "slurmctld's allocation order under srun's block distribution.)"},
    {ReasonId::kCheckSlowPort,
     "Check {port} on {node} (ibstat: rate and state; its symbol errors and link flaps point at "
     "the cable, transceiver or switch port), reseat or replace it, or exclude {node} before "
     "restarting."},
    // analyze/fail_slow.cc
    {ReasonId::kGpuFailedPcieTest,
     " Its GPU {pci} (by {by}) failed dcgmi diag's PCIe test ({where})"},
    {ReasonId::kPcieDowngraded,
     ": its PCIe link runs below its width or generation, a link downgrade no clock reason shows"},
    {ReasonId::kHardwareConfirms, ": the hardware confirms the straggler."},
    {ReasonId::kClocksHeldDown, " Its GPU {pci} (by {by}) shows its clocks held down by "},
    {ReasonId::kThermalSlowdown, "thermal slowdown"},
    {ReasonId::kPowerBrakeSlowdown, "power brake slowdown"},
    {ReasonId::kHwSlowdown, "HW slowdown"},
    {ReasonId::kThrottleLine, " ({where}"},
    {ReasonId::kTemperature, ", {celsius} C"},
    {ReasonId::kHardwareConfirmsClose, "): the hardware confirms the straggler."},
    {ReasonId::kComputedAsLongAs,
     "computed {ratio} as long as {measure} in {slow} of its {steps} timed steps while it waited "
     "{wait} as long in collectives"},
    {ReasonId::kOwnStepsInControlRun, "its own steps in the control run"},
    {ReasonId::kMedianRank, "the median rank"},
    {ReasonId::kFromAbout, " from about {time}"},
    {ReasonId::kSlowRanks,
     "Ranks {ranks} are slow: rank {lead} {how}{since}, and every other rank waits for them. No "
     "line places all of them on a node, so one slow host and several slow GPUs are not told "
     "apart; the slow ranks are named, neither their node nor their hardware."},
    {ReasonId::kFindSlowRanksNodes,
     "Find the nodes of ranks {ranks} (the scheduler's allocation, the agents' logs) and check "
     "them (load, CPU frequency, the GPUs' clocks event reasons) before restarting."},
    {ReasonId::kEverySlowRankOn,
     "Every slow rank is on {node} (ranks {ranks}): rank {lead} {how}{since}; the whole node is "
     "slow (a noisy host: CPU contention, a rogue process, a power cap), and every other rank "
     "waits for it."},
    {ReasonId::kDrainSlowNode,
     "Drain {node} or find what else runs on it (load average, CPU frequency, a stray process, the "
     "node's power cap) before restarting: all its ranks computed slower than the rest of the "
     "job{since}."},
    {ReasonId::kSlowRankOn,
     "Rank {rank} ({node}) {how}{since}: it is the straggler every other rank waits for (a "
     "throttled GPU: thermal, power brake or a PCIe link downgrade)."},
    {ReasonId::kAlsoSlow, " Also slow: ranks {ranks}."},
    {ReasonId::kGpuOfNode, "GPU {gpu} of {node}"},
    {ReasonId::kGpuOfRank, "the GPU of rank {rank}"},
    {ReasonId::kCheckThrottledGpu,
     "Check {gpu} (nvidia-smi -q: clocks event reasons HW_SLOWDOWN, HW_THERMAL, HW_POWER_BRAKE; "
     "the PCIe link generation and width) and exclude it if it stays slow before restarting: rank "
     "{rank} {how}."},
    // analyze/hardware.cc
    {ReasonId::kDiagFailedTest,
     "GPU {gpu} of {node} failed dcgmi diag's {test} test ({where}): a failed hardware test is not "
     "cleared by a reset; drain the GPU (exclude it from the allocation) and start the RMA flow; "
     "do not resume on it."},
    {ReasonId::kDiagFailedTestAlso,
     "GPU {gpu} of {node} failed dcgmi diag's {test} test ({where}; {also}): a failed hardware "
     "test is not cleared by a reset; drain the GPU (exclude it from the allocation) and start the "
     "RMA flow; do not resume on it."},
    {ReasonId::kDriverRecoveryAction, " The driver's recovery action (Xid 154) is \"{action}\"."},
    {ReasonId::kRowRemapFailedHealth,
     "Row remapping failed on GPU {gpu} of {node} ({cited}; {health}: Remapping Failure Occurred): "
     "drain the GPU (exclude it from the allocation) and start the RMA flow; do not resume on "
     "it.{said}"},
    {ReasonId::kRowRemapFailedXid64,
     "Row remapping failed on GPU {gpu} of {node} (Xid 64, {cited}): drain the GPU (exclude it "
     "from the allocation) and start the RMA flow; do not resume on it.{said}"},
    {ReasonId::kGpuFellOffBus,
     "GPU {gpu} of {node} fell off the bus ({cited}): drain {node} and reboot it (NVIDIA: "
     "RESTART_BM), check its PCIe, power and thermal event logs, and RMA the board if it "
     "recurs.{said}"},
    {ReasonId::kContainedMemoryError,
     "GPU {gpu} of {node} contained a memory error to the job's process ({cited}): the restart "
     "clears it; reset the GPU when convenient so its pending row remap takes effect.{said}"},
    {ReasonId::kResetGpuAfterEcc,
     "Reset GPU {gpu} of {node} (nvidia-smi -r, or reboot the node) after {what} ({cited}); before "
     "it takes work again `nvidia-smi -q` must show Remapped Rows Pending: No, Remapping Failure "
     "Occurred: No and a volatile uncorrectable count of 0, else drain it and follow the RMA "
     "flow.{said}"},
    {ReasonId::kResetGpuAfterNvlink,
     "Reset GPU {gpu} of {node} (or reboot the node) after {what} ({cited}), then check "
     "`nvidia-smi nvlink -e` on it and its NVLink peers; drain it if the link errors recur.{said}"},
    {ReasonId::kResetGpuAfter,
     "Reset GPU {gpu} of {node} after {what} ({cited}); power-cycle the node if the error "
     "persists.{said}"},
    {ReasonId::kRunCanary,
     "Before the full allocation returns, run a canary at production shape that includes {node} "
     "(the job's nodes and GPUs per node: an NCCL all-reduce test and a few training steps); "
     "resume only if it passes."},
    {ReasonId::kDiagFailedOnGpu, " dcgmi diag failed its {test} test on the GPU ({where})."},
    {ReasonId::kHealthSnapshotShows, " The GPU's health snapshot ({where}) shows"},
    {ReasonId::kVolatileUncorrectable, " {count} volatile uncorrectable ECC error(s)"},
    {ReasonId::kFailedRowRemap, ", a failed row remapping"},
    {ReasonId::kRowRemapPending, ", a row remap pending until the GPU is reset"},
    {ReasonId::kPageRetirementPending, ", a page retirement pending until the GPU is reset"},
    {ReasonId::kDcgmLastXid, ", DCGM's last Xid {xid}"},
    {ReasonId::kOnlyGpuWithMemoryFault, "the node's only GPU with a memory fault"},
    {ReasonId::kLocalRanksGpuBy, "local rank {local_rank}'s GPU by {how}"},
    {ReasonId::kMemoryErrorWithoutXid,
     "No kernel log shows an Xid for it, but GPU {gpu} of {node} ({mapped}) had an uncorrectable "
     "memory error: the GPU failed under the rank."},
    {ReasonId::kRowRemapFailed,
     "Row remapping failed on GPU {gpu} of {node} ({cited}): drain the GPU (exclude it from the "
     "allocation) and start the RMA flow; do not resume on it."},
    {ReasonId::kResetGpuAfterMemoryError,
     "Reset GPU {gpu} of {node} (nvidia-smi -r, or reboot the node) after its uncorrectable memory "
     "error ({cited}); before it takes work again `nvidia-smi -q` must show Remapped Rows Pending: "
     "No, Remapping Failure Occurred: No and a volatile uncorrectable count of 0, else drain it "
     "and follow the RMA flow."},
    {ReasonId::kFallenOffBus, "fallen off the bus"},
    {ReasonId::kXidCode, "Xid {code}"},
    {ReasonId::kOnlyGpuWithXid,
     "the only GPU of {node} with an initiating Xid (no busId line or nvidia-smi table maps its "
     "GPU)"},
    {ReasonId::kKernelLogShowsXid,
     "The kernel log of {node} shows {code} ({what}) on GPU {gpu}, {mapped}, at {time}"},
    {ReasonId::kXidBurst, ", in a burst of {count} Xid lines"},
    {ReasonId::kDuringTheJob,
     " during the job (the rank's failure lines carry no time, so the job's span from {from} to "
     "{to} bounds it)"},
    {ReasonId::kApplicationFaultByDriver, ": the application's fault, reported by the driver."},
    {ReasonId::kGpuFailedUnderRank, ": the GPU failed under the rank."},
    {ReasonId::kCodeAt, "{code} at {where}"},
    {ReasonId::kNcclBusIdLine, "its NCCL busId line ({where})"},
    {ReasonId::kVisibleDeviceAt,
     "CUDA_VISIBLE_DEVICES ({where}) lists {entry} as its device {local}, which nvidia-smi shows "
     "at {pci}"},
    {ReasonId::kVisibleDeviceIndexCited,
     "CUDA_VISIBLE_DEVICES ({where}) lists {entry} as its device {local}, nvidia-smi index "
     "{index} ({slot})"},
    {ReasonId::kVisibleDeviceIndex,
     "CUDA_VISIBLE_DEVICES ({where}) lists {entry} as its device {local}, nvidia-smi index "
     "{index}"},
    {ReasonId::kSmiIndex, "nvidia-smi index {index} ({where})"},
    {ReasonId::kSmiTableSkipsIndex,
     "nvidia-smi's table, which skips index {index} and cannot reach that one GPU ({where})"},
    {ReasonId::kPidInXidLine, "the rank's pid in its Xid line ({where})"},
    // analyze/participation.cc
    {ReasonId::kThenSentence, " {sentence}"},
    {ReasonId::kWaitingOnIt,
     "{waiting} of the {reporters} ranks that timed out were waiting on it in {groups}"},
    {ReasonId::kAndWaiting, ", and {waiting}."},
    {ReasonId::kSemicolonWaiting, "; {waiting}."},
    {ReasonId::kRankOfNode, "Rank {rank} ({node})"},
    {ReasonId::kRankOfNodeLocal, "Rank {rank} ({node}, local rank {local_rank})"},
    {ReasonId::kCollectiveMismatch,
     "{who} issued {op} ({elements} elements) as collective {seq} of its process group while its "
     "peers issued {peer_op} ({peer_elements} elements): a collective mismatch, so every member "
     "timed out."},
    {ReasonId::kRayTrainingFunctionRaised,
     "{who}'s training function raised {error}; the Ray driver's RayTaskError ({where}) relays "
     "it, and the driver then shut the other {others} workers down"},
    {ReasonId::kExitedWith, "{who} exited with {exit}"},
    {ReasonId::kHostSaysWhy, " (the host says why: {where})"},
    {ReasonId::kAfterRaising, " after raising {error}"},
    {ReasonId::kNodePrintedUnrankedError,
     " while its node's processes printed an error no line ties to a rank ({where})"},
    {ReasonId::kNodePrintedUnrankedErrors,
     " while its node's processes printed {count} errors no line ties to a rank, the first at "
     "{where}"},
    {ReasonId::kNodelessLogPrintedUnrankedError,
     " while a log that names no node, its node's or another's, holds an error no line ties to a "
     "rank ({where})"},
    {ReasonId::kNodelessLogsPrintedUnrankedErrors,
     " while {count} errors no line ties to a rank sit in its node's logs or in logs that name no "
     "node, the first at {where}"},
    {ReasonId::kWithoutPrintingError, " without printing an error"},
    {ReasonId::kBeforeFirstTimeout, ", {seconds} s before the first NCCL watchdog timeout"},
    {ReasonId::kWithinSkewOfFirstTimeout,
     ", within the clock-skew window of the first NCCL watchdog timeout"},
    {ReasonId::kThenTimedOutOrTornDown, "; {ranks} ranks then timed out or were torn down"},
    {ReasonId::kNothingAboutPeersGloo,
     "{who} reported nothing about its peers while {timeouts} ranks timed out in gloo waiting on "
     "a peer and {closed} lost their connection to one"},
    {ReasonId::kSigtermDidNotEndIt,
     "; its agent's SIGTERM did not end it, so it was stopped or stuck in the kernel"},
    {ReasonId::kStoppedParticipatingAt, "; it stopped participating at about {time}"},
    {ReasonId::kNoTimeoutOfItsOwn, "{who} printed no timeout of its own"},
    {ReasonId::kWhileWaiting, " while {waiting}"},
    {ReasonId::kAndRaised, " and raised {error}"},
    {ReasonId::kWhileRanksTimedOut, " while {ranks} timed out"},
    {ReasonId::kAroundTime, " around {time}"},
    {ReasonId::kReadKernelLogForXid,
     "Read the kernel log of {node}{at} for an Xid on the GPU of rank {rank}{own}: an Xid 79, 48 "
     "or 31 there makes it the GPU's fault (drain {node} and reset or replace the GPU), none the "
     "code's (rerun with CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer)."},
    {ReasonId::kFindCudaErrorKernel,
     "Find the kernel behind the CUDA error of rank {rank}{own} (rerun with "
     "CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer) and fix it before resuming; check the kernel "
     "log of {node} for an Xid on its GPU if the error does not reproduce."},
    {ReasonId::kLowerGpuMemory,
     "rank {rank} ran out of GPU memory (HBM){own}: lower the micro-batch, sequence length or "
     "activation memory (recomputation, offload), or set "
     "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, before resuming; the same step will fail "
     "again otherwise."},
    {ReasonId::kCheckKernelLogForKiller,
     "Check the kernel log of {node}{at} for the OOM killer or a hardware event: nothing in the "
     "job's logs says why rank {rank} was killed by {exit}."},
    {ReasonId::kLowerPinnedMemory,
     "rank {rank} could not page-lock (pin) host memory{own}: lower the pinned buffers (data "
     "loader workers x prefetch_factor, offload buffers) or set pin_memory=False before "
     "resuming; the GPU's own memory was not the limit."},
    {ReasonId::kLowerRankHostMemory,
     "The host ran out of memory and killed rank {rank} on {node}{at}: lower its host memory use "
     "(data loader workers, pinned buffers, CPU copies of checkpoints) or raise the job's memory "
     "limit before resuming."},
    {ReasonId::kDrainNodeOfCudaError,
     "The CUDA error of rank {rank}{own} names a fault of its GPU, and no kernel log of {node} "
     "was read: drain {node}, check its kernel log{at} for the Xid and the GPU's ECC and "
     "row-remap counts (nvidia-smi -q), and reset or replace the GPU before resuming on it."},
    {ReasonId::kReadRankCoreDump,
     "Read the core dump or stderr of rank {rank} on {node} (and check /dev/shm on {node} for a "
     "SIGBUS) before resuming: the same crash will recur."},
    {ReasonId::kFixMismatchedCollective,
     "Fix the code path that made rank {rank} issue a different collective than its peers (a "
     "rank-dependent branch or shape) before resuming: the job will hang the same way."},
    {ReasonId::kFixRankException,
     "Fix the exception rank {rank} raised{own} before resuming: the job will fail again the "
     "same way."},
    {ReasonId::kTakeRankStack,
     "Take the stack of rank {rank} on {node} (py-spy dump) and check its GPU before restarting: "
     "it stopped issuing collectives{at} while nothing says it exited; drain {node} if the GPU "
     "does not respond."},
    {ReasonId::kTierHbm, " Memory tier: HBM (the GPU's own memory)."},
    {ReasonId::kTierHost, " Memory tier: host (the kernel's OOM killer)."},
    {ReasonId::kTierPinned, " Memory tier: pinned host memory (page-locked through CUDA)."},
    {ReasonId::kBuildWaiters,
     " Its {count} local peers waited on its build of the op (torch's extension build lock) and "
     "then could not load the .so it never wrote (`cannot open shared object file`): "
     "consequences, whichever exited first."},
    {ReasonId::kNodeIsTheAnswer,
     " Several of the node's processes raised, and no line says which of them is rank {rank}: "
     "the worker its agent saw exit first need not be the one that failed first, so the answer "
     "is the node."},
    {ReasonId::kNodeIsTheAnswerNodeless,
     " Several processes raised that no line ties to a rank (some in logs that name no node), and "
     "no line says which of them is rank {rank}: the worker its agent saw exit first need not be "
     "the one that failed first, so the answer is the node whose agent saw it."},
    {ReasonId::kGpuOrCode,
     " Its CUDA error ({where}) is what a GPU failing under the rank raises as readily as a "
     "faulty kernel, and the kernel's word on {node} ties no GPU fault to the rank's GPU (no "
     "kernel log of it was read, or its Xid names a GPU no busId line or nvidia-smi table maps "
     "to the rank): whether its GPU or the code failed is not known."},
    {ReasonId::kHostMemoryAt,
     " DeepSpeed's see_memory_usage had reported host memory at {percent}% ({where}): offloaded "
     "state kept growing."},
    {ReasonId::kStartedFirst,
     " Other ranks scored alike, but the collectives waiting on rank {rank} were started first "
     "(clocks aligned per node), so the stall spread from it."},
    {ReasonId::kSoleBlocker,
     " Other silent ranks scored alike (torn down by their agents while waiting), but rank "
     "{rank} is the only member of one of its process groups that never joined the collective "
     "every other member was waiting in."},
    {ReasonId::kThenStoppedParticipating, " It then stopped participating: {waiting}."},
    {ReasonId::kRestartWithoutSlowHardware,
     "The job still runs at the pace of its slowest rank: restart it from the newest checkpoint "
     "that verifies once the slow hardware is excluded (checkpoints were not evaluated by this "
     "diagnosis)."},
    {ReasonId::kRestartWholeJob,
     "Restart the whole job from the newest checkpoint that verifies (checkpoints were not "
     "evaluated by this diagnosis); the ranks of the cascade failed as a consequence and need no "
     "action of their own."},
    {ReasonId::kUnrankedTimeoutsNote,
     " {count} watchdog timeouts could not be tied to a global rank (their lines carry a local "
     "rank at most, and nothing on their node names its first rank), so the groups they belong "
     "to are incomplete."},
    {ReasonId::kFewWaitOnLeader,
     "Rank {rank} leads, but only {waiting} of the {reporters} ranks that timed out were waiting "
     "on it (fewer than 1 in 20): the rank the timeouts started from is not in the logs in hand "
     "(its node's logs may be missing)."},
    {ReasonId::kCollectLogsOfWaitedOnRank,
     "Collect the torchrun agent logs and kernel logs of every node of the job: the rank most of "
     "the timeouts waited on is not in the logs in hand."},
    {ReasonId::kOnNode, " on {node}"},
    {ReasonId::kUnplacedLinkError,
     "NCCL reports a failed link ({where}) from a process no line ties to a global rank{on}, and "
     "the ranks that lead only stopped participating (rank {rank} first): they may be the link's "
     "victims, and its ends are not known."},
    {ReasonId::kCollectRankTiedLogs,
     "Collect the logs that tie NCCL's WARN lines to their ranks (the torchrun log dir as it was "
     "written, with its <local rank>/ folders, or the ranks' consoles with their [rank<G>]: "
     "prefixes)."},
    {ReasonId::kUnplacedMayLead,
     "Rank {rank} leads the ranks the logs place on a node, but not the ranks no line places "
     "(their node's logs are missing), which cannot be weighed: some watchdog timeouts or "
     "workers carry no global rank, so any of them may be theirs. The logs do not show who "
     "stopped first."},
    {ReasonId::kCollectLogsOfUnplacedNodes,
     "Collect the torchrun agent logs and kernel logs of every node of the job: the nodes of the "
     "ranks no line places are missing from the logs in hand."},
    {ReasonId::kOnNoPlacedNode, "on no node any line places"},
    {ReasonId::kOnNodes, "on {nodes}"},
    {ReasonId::kOnNodesAndUnplaced, "on {nodes} and on a node no line places"},
    {ReasonId::kTiedOnNodeAgentLog,
     "Ranks {ranks} on {node} stopped participating together and the logs cannot tell which was "
     "first: its torchrun agent log names no first failure among them."},
    {ReasonId::kTiedOnNodeNoAgentLog,
     "Ranks {ranks} on {node} stopped participating together and the logs cannot tell which was "
     "first: there is no torchrun agent log for {node}."},
    {ReasonId::kCollectLogsOfTiedNode,
     "Collect the torchrun agent log and the kernel log of {node}: ranks {ranks} stopped "
     "participating together, and the logs in hand cannot tell which was first."},
    {ReasonId::kWorldSizeStated, "the logs state world size {size}"},
    {ReasonId::kNamedAsMembers, "their peers' process groups name them as members"},
    {ReasonId::kNamedAsMembersAboveLogged,
     "their peers' process groups name them as members, above the highest rank logged"},
    {ReasonId::kNeverHeardFrom,
     "Ranks {ranks} were never heard from ({why}; their node's logs are missing) and are equally "
     "likely to have stopped first: the logs do not separate them."},
    {ReasonId::kFindNodeOfRanks,
     "Find the node of ranks {ranks} (the scheduler's allocation) and collect its torchrun agent "
     "log and kernel log: the logs in hand have nothing from it."},
    {ReasonId::kTiedOnNodes,
     "Ranks {ranks} {nodes} are equally likely to have stopped first; the logs do not separate "
     "them."},
    {ReasonId::kCollectLogsOfTiedNodes,
     "Collect the torchrun agent logs and kernel logs of the nodes of ranks {ranks}: the logs in "
     "hand cannot tell which stopped first."},
    {ReasonId::kUnrankedTimeoutsOnly,
     "{timeouts} were logged, but none can be tied to a global rank: each line names only the "
     "rank within its process group (torch <= 2.2's `[Rank N]`, no `[rank<G>]:` prefix) and "
     "nothing ties it to a process (no `[default<L>]:` tag, no srun `--label`, no per-rank "
     "file), so no process group, silent member or first rank can be placed. Per-rank logs "
     "(DeepSpeed's launcher `--enable_each_rank_log DIR`, torchrun's `--tee 3 --log-dir DIR`) or "
     "torch >= 2.4 (its `[rank<G>]:` prefix) would place them."},
    {ReasonId::kFewerTimeoutsOnNode,
     " {node} is the one node whose ranks logged fewer timeouts ({count}, where {others} other "
     "nodes logged {usual}): one of its ranks may have stopped without timing out."},
    {ReasonId::kSharedConsoleRanks,
     "Ranks {ranks} exited with an error code ({exits}) on a console they share with their "
     "agent, whose lines carry no rank: "},
    {ReasonId::kOneOfThemRaised, "one of them raised {error} ({where}), and "},
    {ReasonId::kNoOwnErrorThere, "no error of their own is recognised there, and "},
    {ReasonId::kLastErrorAboutPeer,
     "the last error of one of them is about a peer ({where}), a victim's. Which rank failed "
     "first is not known: a rank prefix (torchrun --tee 3, torch >= 2.4's `[rank<G>]:`) or "
     "per-rank logs (torchrun --log-dir) would tell."},
    {ReasonId::kVictimExit,
     "Rank {rank} exited with {exit} ({where}) after an error about a peer ({peer}): it waited "
     "on a rank that stopped, a victim. "},
    {ReasonId::kAgentSigkilledWorker,
     "Its agent could not end a worker with SIGTERM and killed it with SIGKILL ({where}): that "
     "worker was stopped or stuck, the likely rank the others waited on, but no line gives its "
     "rank. "},
    {ReasonId::kInitiatorNotDetermined,
     "The initiator is not determined: the silent rank printed nothing, and no line (a rank "
     "prefix, the rendezvous result with LOGLEVEL=INFO, a ChildFailedError entry) names it."},
    {ReasonId::kNoOneStandsOut,
     "{reporters} ranks timed out, but no silent member of their process groups and no launcher "
     "exit stands out: the logs do not show who stopped first."},
    {ReasonId::kNothingStopped,
     "No NCCL watchdog timeout, launcher failure or traceback in the logs: nothing shows a rank "
     "that stopped participating."},
    {ReasonId::kUngroupedUnnamedTimeouts,
     " {count} of the timeouts name no process group (torch <= 2.2 prints only `[Rank N]`, the "
     "rank within its group) and their collectives (OpType, NumelIn, SeqNum) do not split into "
     "groups that show two members each, so the rank their peers wait on cannot be placed (torch "
     ">= 2.4 names the process groups; the engine does not read TORCH_NCCL_DESYNC_DEBUG's "
     "report)."},
    // analyze/detectors.cc
    {ReasonId::kRestartNothingFailed,
     "Restart the job from the newest checkpoint that verifies; nothing in the ranks failed."},
    // analyze/stall.cc
    {ReasonId::kEveryRankStalled,
     "No step line came for {ago} (one came every {period} before; {ranks} print them): if the job "
     "is still running, it stalled at step {step}, every rank together, and the step lines do not "
     "show who stopped first."},
    {ReasonId::kProgressStoppedFirst,
     "Rank(s) {ranks} stopped making progress first: the last step line, step {step}, came at {at} "
     "({ago} ago; one came every {period} before), while the other ranks {ahead}. The job is "
     "still running: nothing has printed why yet."},
    {ReasonId::kOthersReachedStep, "reached step {step}"},
    {ReasonId::kOthersWentOnUntil, "went on until {at}"},
    {ReasonId::kInspectWhileRunning,
     "While the job still runs, look at {who} on {node}: its stacks (`py-spy dump --pid`), the "
     "Flight "
     "Recorder dump, `nvidia-smi` and the kernel log; then cancel the job and resume from the "
     "newest "
     "checkpoint that verifies."},
    // analyze/participation.cc: the Flight Recorder dumps
    {ReasonId::kFrOddCollective,
     "{who}'s Flight Recorder dump shows {op} {sizes} {dtypes} as collective {seq} of process "
     "group {pg} ({where}), while the dumps of {peers} other members show {peer_op} {peer_sizes} "
     "{peer_dtypes} ({peer_where}): it issued another collective than its peers (a mismatched or "
     "skipped one), so the group hung."},
    {ReasonId::kFrNeverJoined,
     " Its Flight Recorder dump ({where}) shows it never enqueued collective {seq} of process "
     "group {pg}, {op}, which {waiting} of the group's dumped members wait in ({waiter}), and "
     "that it waits in no collective itself: it stopped on the host (its own code, a data loader, "
     "a lock), not in NCCL."},
    {ReasonId::kFrNoDump,
     " It wrote no Flight Recorder dump, while {waiting} members of its process group {pg} that "
     "did wait in collective {seq}, {op} ({waiter}): the only member without a dump that the "
     "dumps wait on."},
    {ReasonId::kRasDead,
     " NCCL RAS ({where}) reports its process (pid {pid} on {node}) dead: unreachable through "
     "the RAS network."},
    {ReasonId::kRasSilent,
     " NCCL RAS ({where}) got no data from its process (pid {pid} on {node}): alive to the "
     "network but not answering (stopped, or frozen)."},
    {ReasonId::kRasBehind,
     " NCCL RAS ({where}) shows it launched {count} {op} operations on communicator {hash} of "
     "{size} ranks while the others launched {common}: it is outside the collective they "
     "entered."},
    {ReasonId::kRasStuck,
     " It was at {count} already in an earlier report ({earlier}): it has not moved since."},
    {ReasonId::kRasOdd,
     " NCCL RAS ({where}) shows it behind its communicator's other ranks in {op} operations "
     "({count} against {common}) and ahead in {ahead_op} ({ahead_count} against {ahead_common}, "
     "{ahead_where})."},
    {ReasonId::kRasBehindOnce,
     " NCCL RAS ({where}) shows rank {rank} behind (it launched {count} {op} operations, the "
     "others {common}) in one report: one snapshot cannot tell a stuck rank from a late one; a "
     "later report at the same count, or the logs, would."},
    {ReasonId::kRasMismatch,
     "{who} issued another collective than the other ranks of its communicator, as NCCL RAS's "
     "operation counts show."},
    // TEMPLATES
});
static_assert(kTemplates.size() == static_cast<std::size_t>(ReasonId::kCount));

constexpr bool InIdOrder() {
  for (std::size_t i = 0; i < kTemplates.size(); ++i) {
    if (kTemplates[i].id != static_cast<ReasonId>(i)) return false;
  }
  return true;
}
static_assert(InIdOrder(), "kTemplates lists the templates in ReasonId's order");

void Fill(std::string_view words, const std::vector<ReasonArg>& args, std::string* out) {
  while (!words.empty()) {
    const std::size_t open = words.find('{');
    const std::size_t close = open == std::string_view::npos ? open : words.find('}', open);
    if (close == std::string_view::npos) {
      out->append(words);
      return;
    }
    out->append(words.substr(0, open));
    const std::string_view name = words.substr(open + 1, close - open - 1);
    const ReasonArg* arg = nullptr;
    for (const ReasonArg& a : args) {
      if (a.name == name) arg = &a;
    }
    if (arg == nullptr) {
      out->append(words.substr(open, close - open + 1));
    } else if (arg->words.empty()) {
      out->append(arg->value);
    } else {
      for (const ReasonPart& p : arg->words) Fill(ReasonTemplate(p.id), p.args, out);
    }
    words.remove_prefix(close + 1);
  }
}

}  // namespace

std::string_view ReasonTemplate(ReasonId id) {
  return kTemplates[static_cast<std::size_t>(id)].words;
}

std::string RenderReason(const Reason& r) {
  std::string out;
  for (const ReasonPart& p : r.parts) Fill(ReasonTemplate(p.id), p.args, &out);
  return out;
}

}  // namespace denpex::engine
