// Small phrases the strategies build their sentences from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/reason.h"
#include "denpex/common/time.h"
#include "incident/incident.h"

namespace denpex::engine {

// "09:17:03.412" (the node's clock, as printed).
std::string ClockTime(TimeNs t);
// "0-7", "3, 11, 19", "0-3, 8 and 12 more".
std::string RankList(std::vector<std::int32_t> ranks);
// The node's name, or "an unknown node".
std::string NodeName(const Incident& inc, std::int32_t node);
// "gpu-0001/torchrun.log:12".
std::string Where(const Incident& inc, const Event& e);
// "1 node", "3 nodes": `n` and the noun, plural unless n is 1 (`noun` takes an s).
std::string Count(std::int64_t n, const std::string& noun);
// "SIGKILL (exit -9)", "exit code 1": words for a blank.
Reason ExitPhrase(std::int32_t exit_code);

}  // namespace denpex::engine
