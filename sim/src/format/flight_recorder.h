// A rank's flight-recorder dump file (FlightRecorderDump -> bytes), in the structure of the dump
// format version its torch release writes: the pickle torch's C++ pickler writes on
// TORCH_NCCL_DUMP_ON_TIMEOUT, or the JSON of the dump_nccl_trace_json handler. Versions are rows
// (kFlightRecorderFormats); which release writes which is a release table beside them.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "model/job.h"
#include "model/records.h"
#include "profiles.h"

namespace denpex::sim {

// What one dump format version holds beyond the entries and pg_config.
struct FlightRecorderFormat {
  std::string_view version;  // the dump's "version"
  bool pg_status;            // "pg_status": per local pg id, its last enqueued/started/completed
  bool is_p2p;               // each entry's "is_p2p"
  bool nccl_version;         // "nccl_version" (the NCCL release the job runs)
};

// The known versions, oldest first; nullptr for another.
const FlightRecorderFormat* FindFlightRecorderFormat(std::string_view version);
// The version the scenario's dumps use: `version` when set, else the torch release's.
const FlightRecorderFormat& FlightRecorderFormatOf(std::string_view torch_release,
                                                   std::string_view version);
// "2.2", "2.4", ...: for error messages.
std::string FlightRecorderVersionList();

// Serializes dumps for one job; keeps each group's `ranks` string (default_pg's is every rank:
// a 16,384-rank job's is 100 KB) for the next dump.
class FlightRecorderSerializer {
 public:
  FlightRecorderSerializer(const Job& job, const TorchProfile& torch,
                           std::string_view nccl_release);
  std::string Bytes(const FlightRecorderDump& dump);

 private:
  std::string Pickle(const FlightRecorderDump& dump);
  std::string Json(const FlightRecorderDump& dump);
  const std::string& RanksOf(int uid);  // "[0, 1, 2]"

  const Job& job_;
  const TorchProfile& torch_;
  std::string nccl_;
  const FlightRecorderFormat& format_;
  std::unordered_map<int, std::string> ranks_;
};

}  // namespace denpex::sim
