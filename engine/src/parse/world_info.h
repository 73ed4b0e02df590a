// DeepSpeed's runner passes every node's launcher the job's layout as `--world_info=<urlsafe
// base64 of json.dumps({"<host>": [<local slots>], ...})>` (runner.py; docs/log_formats.md §26b).
// Hosts in that order get consecutive global ranks, one per slot (launch.py's
// global_rank_mapping): the first host ranks 0..n0-1, the next n0.., and so on.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::engine {

struct WorldHost {
  std::string host;
  std::int32_t first_rank = 0;  // its local slot 0's global rank
  std::int32_t procs = 0;       // how many ranks it runs
};

// The hosts of a `--world_info` value, in the runner's order; empty when `b64` is not urlsafe
// base64 of a JSON object of host -> list of integers.
std::vector<WorldHost> DecodeWorldInfo(std::string_view b64);

// The value of `--world_info=` in a runner's `cmd = ...` line; empty when there is none.
std::string_view WorldInfoArgument(std::string_view line);

}  // namespace denpex::engine
