// Failures whose rank no line gives, answered at the level the lines support: the node (rank
// -1, its local rank when known), or only what failed in the job (rank -1, no node, when no line
// names the host). Each rule starts from victims: workers whose only error is about a peer (a
// gloo timeout waiting on one, a closed connection), and asks what else the lines prove about
// the peer they lost.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/facts.h"
#include "analyze/finding.h"
#include "incident/incident.h"

namespace denpex::engine {

// The ranks whose agent saw them exit with an error code while their only error was about a
// peer (a gloo timeout waiting on one, a closed connection): victims of a rank no line names.
std::vector<std::int32_t> PeerErrorExits(const JobFacts& facts);

// Every one of `victims` was given the same one peer error (an unprefixed line on the console
// they share with their agent): it is one rank's, not each one's.
bool OnePeerErrorForAll(const JobFacts& facts, const std::vector<std::int32_t>& victims);

// An error a worker raised itself, printed without a rank on the console where `victim`'s agent
// reported its exit, before that report: one of the console's workers raised it. -1 when none.
std::int32_t UnrankedOwnErrorBefore(const Incident& inc, const JobFacts& facts, std::int32_t victim);

// True, and `f` filled (DIAGNOSED, rank -1, the console's node), when workers that share their
// agent's console (`torchrun ... > train.log 2>&1`) all exited with an error code, one node holds
// every rank of the job, and the console holds fewer errors about a peer than there are failed
// workers: at least one of them exited on its own. Its class and owner are those of the error
// a worker raised there (a `ValueError`: the application's), or, with none, of an exit with a
// code and no traceback (`sys.exit(1)`: the application's). Which rank it was, no line says.
bool DiagnoseSharedConsoleExit(const Incident& inc, const JobFacts& facts, Finding* f);

// True, and `f` filled (DIAGNOSED, rank -1, that node; the class and owner of that error), when
// every worker that exited with an error code did so after an error about a peer, no rank's own
// error, host cause or timeout is known, and the errors of their own that workers printed without
// a rank (not the teardown's) all sit on one node, one of whose failed workers exited after
// them: a worker of that node failed first (several nodes' consoles with each rank's lines merged
// into one file per node, the ranks' names gone). Which rank, no line says.
bool DiagnoseOwnErrorOfOneNode(const Incident& inc, const JobFacts& facts, Finding* f);

// True, and `f` filled (DIAGNOSED, rank -1, that worker's node; class HANG, owner unknown), when
// one agent had to SIGKILL the one worker it tore down because SIGTERM did not end it (`Unable
// to shutdown process P via 15, forcefully exitting via 9`: stopped, or stuck in the kernel),
// reported no failure of its own workers, and every worker any other agent reported failed only
// on a gloo timeout waiting on a peer (alive but silent, not gone). No line gives that worker a
// global rank (else the rank-level rules name it).
bool DiagnoseUnresponsiveWorker(const Incident& inc, const JobFacts& facts, Finding* f);

// True, and `f` filled (DIAGNOSED, rank -1, the node; class HANG, owner unknown), when the
// failed ranks all timed out in gloo waiting on a peer that never exited on its own and printed
// nothing (`srun --label`: task 0's timeout, srun's word that task 0 exited, nothing of the
// others), no line states how many ranks there are, and Slurm allocated the job one node: the
// silent peer ran there. Which rank it was, and whether it was stopped or stuck in the code, no
// line says.
bool DiagnoseSilentPeerOnOneNode(const Incident& inc, const JobFacts& facts, Finding* f);

// True, and `f` filled (DIAGNOSED, NODE_LOSS, owner host, rank -1, no node), when the one agent
// whose lines are left lost the c10d rendezvous store (RendezvousConnectionError on its
// keep-alive: the store lived in another agent, since an agent cannot lose its own) and its
// workers failed only on a closed connection to a peer (gone, not silent), and no agent reported
// a failure of its own: the store's host, another agent, and that agent's workers vanished
// together, as when their node is lost. No line names that host (an endpoint on 127.0.0.1,
// agents sharing a host name).
bool DiagnoseLoneStoreLoss(const Incident& inc, const JobFacts& facts, Finding* f);

// True, and `f` filled (DIAGNOSED, NODE_LOSS, owner host, rank -1, that agent's node), when one
// agent reported its workers failed, each only on a closed connection to a peer (gone, not
// silent), and exactly one other agent's console is in hand that shows it started (its c10d
// rendezvous lines) and then nothing: no failure report, no signal, no exit barrier. An agent
// whose worker died alone reports it; this one vanished with its workers, as when its node is lost.
bool DiagnoseVanishedAgent(const Incident& inc, const JobFacts& facts, Finding* f);

}  // namespace denpex::engine
