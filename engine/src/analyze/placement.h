// Where each rank ran, and how many ranks the job has: the part of CollectFacts (and of the
// analysis after group inference) that places ranks on nodes. Ingest already gave each line its
// rank and node where the lines themselves tell (ingest/resolve.h: hosts, task ids, local ranks,
// NCCL pids, process groups); this stage works on ranks, not lines: RankFacts::node and
// local_rank, NodeFacts::ranks, first_rank, local_procs and agent_ranks, and WorldFacts' stated
// size. Its entry points run in this order:
//   1. PlaceRanksByFiles, before CollectFacts reads the events: the ranks files name, and their
//      nodes. (Reading the events, a line that names its rank's host places that rank through
//      SetNode: the first word wins.)
//   2. PlaceRanksByLayout, after the events: the launchers' layouts, the stated world size, the
//      agents' consoles and worker counts; then each node's ranks and local ranks.
//   3. PlaceUnloggedRanks, once group inference has added silent members (BuildAnalysis).
#pragma once

#include <cstdint>

#include "analyze/facts.h"
#include "incident/incident.h"

namespace denpex::engine {

// Places the rank on `node` unless a word before this one placed it (-1 places nothing).
void SetNode(RankFacts* r, std::int32_t node);

// Ranks named by files: rank_<R>.log and `[rank<G>]:` prefixes, a torchrun log dir's `<L>/`
// folders, a console's `[default<L>]:` tags. A rank's node is the directory its own log sits in;
// a node whose agent's log is in hand is marked so (NodeFacts::agent_log).
void PlaceRanksByFiles(const Incident& inc, JobFacts* jf);

// After the events: the world size the logs state (analyze/world_size.h), DeepSpeed's
// `--world_info`, an agent's console's workers, the workers an agent shows it ran; then each
// node's ranks (NodeFacts::ranks) and local ranks where no line gave them.
void PlaceRanksByLayout(const Incident& inc, JobFacts* jf);

// A rank with no log of its own (an inferred group member) sits on the node of its
// neighbours when the nearest logged ranks below and above it share one: torchrun numbers a
// node's workers contiguously. Then by aligned blocks of G ranks (PlaceByBlocks), and the one
// block no node holds on the one agent's node that holds none (PlaceLastBlockOnLastAgent).
void PlaceUnloggedRanks(JobFacts* facts);

}  // namespace denpex::engine
