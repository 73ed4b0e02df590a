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
#include "ingest/incident.h"

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

}  // namespace denpex::engine
