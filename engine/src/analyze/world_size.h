// The job's world size as its logs state it, not as its highest logged rank suggests. A job
// whose highest rank(s) died silently with their node's logs missing otherwise looks complete,
// and the rank everyone waited on is never considered. Read from what the parser already
// recognises (no per-line work): DeepSpeed's runner's `--world_info` and launch.py's `nnodes=N,
// num_local_procs=P`, torchrun's rendezvous result (its `global_world_sizes=[...]` line, re-read
// after the `global_ranks=[...]` event), and NCCL's `comm ... nranks N` (a lower bound: a
// sub-communicator is smaller than the world). docs/diagnosis_format.md `input.world_size`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "incident/incident.h"

namespace denpex::engine {

struct WorldSize {
  // The size the statements agree on (0 when none states one, or they contradict each other or
  // the ranks seen); at least `lower_bound` when set.
  std::int32_t declared = 0;
  std::int32_t lower_bound = 0;  // the largest NCCL communicator (0: none logged)
  std::string source;            // what states it, for the report ("torchrun's rendezvous result")
  // What the report should say: a conflict between statements, or a statement below the ranks
  // seen, left unused (input.problems).
  std::vector<std::string> problems;
};

// `highest_rank`: the highest global rank any line or file name gave (-1: none).
WorldSize StatedWorldSize(const Incident& inc, std::int32_t highest_rank);

// The value of a torchrun rendezvous result's `  global_world_sizes=[N, N, ...]` line within
// `text` (the lines after `global_ranks=[...]`, up to the result's closing blank line): N when
// every entry is N, 0 when the line is absent, malformed or its entries differ.
std::int32_t GlobalWorldSizes(std::string_view text);

}  // namespace denpex::engine
