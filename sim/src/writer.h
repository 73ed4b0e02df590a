// The incident writer: receives the model's records, has the formatter turn them into lines,
// and lays the lines out as a torchrun job leaves them (docs/log_formats.md §1):
//   incident/<host>/torchrun.log   the agent's console
//   incident/<host>/rank_<R>.log   stdout + stderr of rank R
// It models stdio buffering: stdout lines of the trainer wait in a 4 KiB buffer that is
// written when full and lost when the process dies by a signal; stderr (c10) lines and NCCL's
// flushed stdout lines go straight to the file.
//
// Files are buffered in memory and written with open/write/close when their process exits
// (or a buffer passes 1 MiB), so at most one file descriptor is open at a time however many
// ranks there are. Lines of one file stay in the order the process printed them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "denpex/common/status.h"
#include "formatter.h"
#include "job.h"
#include "records.h"

namespace denpex::sim {

// A line a truth cites: where it is and what it says.
struct CitedLine {
  std::string file;       // relative to the incident dir: "gpu-0137/torchrun.log"
  std::int64_t line = 0;  // 1-based
  std::string text;
};

// The kinds of lines the writer remembers for the truth.
enum class Cite : std::uint8_t {
  kAgentFailed,    // subject node: "... failed (exitcode: ...) local_rank: ..."
  kAgentRootRank,  // subject node: "  rank      : <G> (local_rank: <lr>)" of the root cause
  kAgentSigterm,   // subject rank: "Sending process <pid> closing signal SIGTERM"
  kException,      // subject rank: the last line of its Python traceback
  kSegfault,       // subject rank: "Fatal Python error: Segmentation fault"
  kWatchdog,       // subject rank: the first line of its watchdog block
  kLastLine,       // subject node: the last line its agent wrote before the node vanished
};

struct Citation {
  Cite what;
  int subject;  // a rank or a node, by kind
  TimeNs time;  // true time of the record
  CitedLine line;
};

// Whose lines to remember: the fault's rank and node, and the ranks whose watchdog blocks
// may be cited (sorted). Everything else is not tracked, so memory stays small at any scale.
struct CitationPlan {
  int rank = -1;
  int node = -1;
  std::vector<int> watchdog_ranks;
};

struct WriterStats {
  std::uint64_t lines = 0;
  std::uint64_t bytes = 0;
  std::uint64_t files = 0;
};

class IncidentWriter : public RecordSink {
 public:
  static constexpr std::size_t kStdoutBufferBytes = 4096;
  static constexpr std::size_t kFlushThresholdBytes = 1 << 20;

  IncidentWriter(const Job& job, const LineFormatter& formatter, std::filesystem::path incident_dir,
                 CitationPlan plan);

  // Creates incident/ and one directory per host (incident_dir must not exist).
  Status CreateDirectories();
  void Emit(const Record& record) override;
  // Writes everything still buffered (files of processes still alive at the end included;
  // their unflushed stdout is not). Returns the first I/O error met.
  Status Finish();

  // The remembered line of that kind and subject; nullptr when it was never written.
  const Citation* Find(Cite what, int subject) const;
  const std::vector<Citation>& citations() const { return citations_; }
  const WriterStats& stats() const { return stats_; }

  // Record handlers (public for std::visit; not part of the interface).
  void Handle(const NcclVersionBanner& r);
  void Handle(const NcclCommInit& r);
  void Handle(const TrainerIteration& r);
  void Handle(const WatchdogTimeout& r);
  void Handle(const PythonException& r);
  void Handle(const SegfaultDump& r);
  void Handle(const WorkerExit& r);
  void Handle(const AgentBanner& r);
  void Handle(const AgentSigterm& r);
  void Handle(const AgentFailureReport& r);
  void Handle(const AgentExit& r);
  void Handle(const NodeLost& r);

 private:
  struct File {
    std::string data;        // not yet written to disk
    std::int64_t lines = 0;  // lines in the file so far (written or buffered)
    bool created = false;
  };
  struct StdoutBuffer {
    std::string data;
    std::int64_t lines = 0;
  };

  int AgentFile(int node) const { return node; }
  int RankFile(int rank) const { return job_.nodes + rank; }
  std::string RelativePath(int file) const;
  // Formats the record at the end of the file; returns the line index it starts at.
  template <typename R>
  std::int64_t AppendTo(int file, const R& record);
  void Remember(Cite what, int subject, TimeNs time, int file, std::int64_t line);
  void MoveStdoutToFile(int rank);
  void MaybeFlush(int file);
  void Flush(int file);

  const Job& job_;
  const LineFormatter& formatter_;
  std::filesystem::path dir_;
  std::vector<File> files_;           // agent files, then rank files
  std::vector<StdoutBuffer> stdout_;  // per rank: Python's unflushed stdout
  CitationPlan plan_;
  std::vector<Citation> citations_;
  std::string scratch_;
  WriterStats stats_;
  Status error_;
};

}  // namespace denpex::sim
