// A tiny incident writer for the engine's tests: a torchrun job (one directory per node,
// torchrun.log + rank_<R>.log) whose lines follow docs/log_formats.md exactly. It is not the
// simulator and shares no code with it; it writes just enough of a job for one behaviour.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "denpex/common/time.h"

namespace denpex::engine::testing {

struct Job {
  int nodes = 4;
  int gpus = 8;
  int tp = 8;
  int pp = 2;
  int dp = 2;  // nodes * gpus == tp * pp * dp; rank = tp_i + tp * (dp_i + dp * pp_i)
  int world() const { return nodes * gpus; }
  std::string Host(int node) const;
};

enum class Fault {
  kSigkill,  // the initiator is SIGKILLed; its agent SIGTERMs the node's other workers
  kHang,     // the initiator stops issuing collectives and stays alive, printing nothing
};

struct Incident {
  Job job;
  Fault fault = Fault::kSigkill;
  int initiator = 3;
  bool agent_logs = true;       // write <host>/torchrun.log
  bool iteration_lines = true;  // the last rank prints Megatron iteration lines (with the year)
  TimeNs fault_time = *ParseRfc3339("2026-03-02T09:17:03.412000000Z");
  std::int64_t timeout_ms = 600000;
  std::map<int, std::int64_t> skew_ms;  // per node clock offset
  // Live ranks whose agent SIGTERMed them before their own watchdog fired: they print nothing.
  std::set<int> cut_short;
  // ZeRO: live ranks outside the initiator's TP group time out in their DP group's
  // reduce-scatter (the TP peers, in the TP all-reduce the initiator never joined).
  bool zero = false;
};

// Writes the incident under `dir` (created).
void WriteIncident(const std::filesystem::path& dir, const Incident& spec);

// Formatting helpers, exposed for the recogniser tests.
std::string C10Stamp(char severity, TimeNs t);   // "E302 09:27:14.123456789"
std::string GlogStamp(char severity, TimeNs t);  // "W0302 09:17:03.412000"
std::string TableStamp(TimeNs t);                // "2026-03-02_09:17:03"

// Writes `text` to `p` as is, creating its directories.
void Write(const std::filesystem::path& p, const std::string& text);

// Reads a whole file.
std::string Slurp(const std::filesystem::path& p);

// A fresh directory under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace denpex::engine::testing
