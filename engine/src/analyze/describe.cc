#include "analyze/describe.h"

#include <algorithm>

namespace denpex::engine {

std::string ClockTime(TimeNs t) { return FormatRfc3339(t).substr(11, 12); }

std::string RankList(std::vector<std::int32_t> ranks) {
  constexpr std::size_t kMaxRuns = 6;
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  std::size_t runs = 0, i = 0;
  for (; i < ranks.size() && runs < kMaxRuns; ++runs) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(ranks[i]);
    if (j > i) out += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
    i = j + 1;
  }
  if (i < ranks.size()) out += " and " + std::to_string(ranks.size() - i) + " more";
  return out;
}

std::string NodeName(const Incident& inc, std::int32_t node) {
  return node >= 0 ? inc.nodes[node] : std::string("an unknown node");
}

std::string Where(const Incident& inc, const Event& e) {
  return inc.files[e.file].path + ":" + std::to_string(e.line);
}

namespace {

// The name of the signal a negative exit code stands for, where it is a common one; else null.
const char* SignalName(std::int32_t exit_code) {
  switch (exit_code) {
    case -6:
      return "SIGABRT";
    case -7:
      return "SIGBUS";
    case -9:
      return "SIGKILL";
    case -11:
      return "SIGSEGV";
    case -15:
      return "SIGTERM";
    default:
      return nullptr;
  }
}

}  // namespace

Reason ExitPhrase(std::int32_t exit_code) {
  const std::string code = std::to_string(exit_code);
  if (const char* signal = SignalName(exit_code)) {
    return Say(ReasonId::kExitBySignal, {{"signal", signal}, {"code", code}});
  }
  if (exit_code < 0) {
    return Say(ReasonId::kExitBySignalNumber,
               {{"signal", std::to_string(-exit_code)}, {"code", code}});
  }
  return Say(ReasonId::kExitCode, {{"code", code}});
}

std::string Count(std::int64_t n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

}  // namespace denpex::engine
