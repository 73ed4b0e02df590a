// The node/GPU history store (docs/history_format.md): a JSON-lines file of earlier incidents,
// one HistoryEntry per line. `denpex diagnose --history FILE` reads it and says how often the
// initiator's node and GPU failed before, escalating the recovery of a repeat offender (a GPU
// with an earlier hardware incident: drain + RMA instead of a reset; a node with two or more:
// drain it). It writes the store only when asked (`--record-history`), never inside an
// incident directory.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/v1/canary.pb.h"
#include "denpex/v1/diagnosis.pb.h"

namespace denpex::engine {

struct History {
  std::vector<v1::HistoryEntry> entries;  // the incidents, in file order
  // `denpex canary`'s results (lines with `"kind": "canary"`), in file order: kept apart, so
  // that a canary never counts as an incident of its node.
  std::vector<v1::CanaryRecord> canaries;
  std::vector<std::string> problems;      // "FILE:LINE: what is wrong; what to do" per bad line
  bool exists = false;                    // false: no such file yet (an empty store)
};

// Reads the store. A missing file is an empty store; an unreadable one is kIoError; what is not
// a regular file (a device, a FIFO) is not read, with a problem. Lines that are not a
// HistoryEntry (bad JSON, unknown field, a time that is not RFC 3339, an incident without a
// node, longer than 64 KiB) are skipped and reported in `problems` with their file:line (the
// first 20, then a count); only the first 64 MiB of a larger store are read, with a problem.
Result<History> ReadHistory(const std::filesystem::path& path);

// Fills diagnosis->recurrence from the entries of the initiator's node that happened before its
// failure (entries of `incident` itself excluded), adds a sentence to the reason, and escalates
// the recovery of a repeat offender. Does nothing without a diagnosed initiator node.
void ApplyHistory(const History& history, const std::string& store, const std::filesystem::path& incident,
                  v1::Diagnosis* diagnosis);

// The owners whose history escalates a repeat offender: the GPU's hardware and the host's (an
// application's bug that recurs on a node says nothing about the node).
bool HardwareOwned(v1::Owner owner);
// "2026-02-11 GPU_ECC on GPU 0000:3a:00": an entry as a report lists it.
std::string DescribeHistoryEntry(const v1::HistoryEntry& entry);

// The entry this diagnosis adds to the store; `incident` as given on the command line.
v1::HistoryEntry HistoryEntryOf(const v1::Diagnosis& diagnosis, const std::filesystem::path& incident);

// Appends one line to the store (creating it) through AppendOutputFile
// (denpex/common/output_file.h): kInvalidArgument when the store lies inside `incident` (the
// engine never writes there) or is not a regular file; an entry already in the store (same
// incident and time) is not added twice; an entry without a node is not written (nothing was
// diagnosed).
Status RecordHistory(const std::filesystem::path& path, const History& existing, const v1::HistoryEntry& entry,
                     const std::filesystem::path& incident);
// The same for a canary's record (`denpex canary --history`): one already in the store (same
// incident, time and canary directory) is not added twice; written with or without a node.
Status RecordCanary(const std::filesystem::path& path, const History& existing,
                    const v1::CanaryRecord& record, const std::filesystem::path& incident);

}  // namespace denpex::engine
