// The incident writer: receives the model's records, has the formatter turn them into lines,
// and lays the lines out as the job's launcher leaves them (docs/log_formats.md §1):
//   LAYOUT_PER_RANK_FILES    <host>/torchrun.log, <host>/rank_<R>.log (stdout + stderr)
//   LAYOUT_TORCHRUN_LOG_DIR  <host>/torchrun.log and, per local rank,
//                            <host>/logs/<run>_<sfx>/attempt_0/<lr>/{stdout.log,stderr.log}
//   LAYOUT_SLURM_OUT         slurm-<jobid>.out (every task's output, "R: "-labelled, and srun's
//                            and slurmstepd's lines), slurmctld.log
//   LAYOUT_MPIRUN_OUT        mpirun.out (every rank's output tagged "[1,R]<stdout>:" /
//                            "[1,R]<stderr>:", and mpirun's own messages)
//   LAYOUT_PDSH_OUT          deepspeed.log (DeepSpeed's runner; every node's lines behind pdsh's
//                            "<host>: ", and pdsh's own "pdsh@login-01: ..." lines)
// It models stdio buffering: stdout lines of the trainer wait in a 4 KiB buffer that is
// written when full and lost when the process dies by a signal; stderr (c10) lines and NCCL's
// flushed stdout lines go straight to the file.
//
// Realism: each node's kern.log (and nvidia-smi.log) follows the layout's files; a missing node's files are never
// written and a truncated node's are cut mid-line at the end, and citations of lines that did
// not survive are marked so the truth does not require them.
//
// Files are buffered in memory and handed to a small pool of writer threads (file_pool.h)
// when their process exits (or a buffer passes 1 MiB); each hand-over is one open, one write
// and one close on a pool thread, so the process holds at most one descriptor per pool thread
// however many ranks there are, and simulating overlaps the kernel's file work. Lines of one
// file stay in the order the process printed them, for any number of pool threads.
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "denpex/common/status.h"
#include "file_pool.h"
#include "format/flight_recorder.h"
#include "format/formatter.h"
#include "format/nccl_ras.h"
#include "model/evidence.h"
#include "model/job.h"
#include "model/records.h"
#include "model/rng.h"
#include "routes.h"

namespace denpex::sim {

// A line a truth cites: where it is and what it says.
struct CitedLine {
  std::string file;       // relative to the incident dir: "gpu-0137/torchrun.log"
  std::int64_t line = 0;  // 1-based
  std::string text;
};

// A line the model marked as evidence (model/evidence.h), where it landed.
struct Citation {
  Cite what;
  int subject;  // a rank or a node, by kind
  TimeNs time;  // true time of the record
  CitedLine line;
  int file = -1;       // the writer's file number
  bool intact = true;  // false: its file is missing or was cut before the line's end
};

struct WriterStats {
  std::uint64_t lines = 0;
  std::uint64_t bytes = 0;
  std::uint64_t files = 0;
  std::uint64_t interleaved_lines = 0;  // task lines srun's interleaving split in two
  // Workers' store connection resets printed (torch >= 2.4: the heartbeat monitor's; older
  // releases print none): secondary errors of a lost c10d store (truth.cc).
  std::uint64_t store_resets = 0;
  std::uint64_t flight_recorder_dumps = 0;  // dump files written (in `files` and `bytes` too)
};

// How a record's lines go out: `may_split` — never cited, so srun's interleaving may split them
// (realism.interleaved_line_rate); `out_stream` — the process's stdout (mpirun tags the line
// "<stdout>", else "<stderr>").
struct LinePolicy {
  bool may_split = false;
  bool out_stream = false;
};

// What AppendTo returns: the record's first line in its file, and where the formatter put the
// lines a truth cites (NoOffsets for records whose formatter says nothing).
struct NoOffsets {};
template <typename At>
struct Appended {
  std::int64_t first;
  At at;
};

class IncidentWriter : public RecordSink {
 public:
  static constexpr std::size_t kStdoutBufferBytes = 4096;
  static constexpr std::size_t kFlushThresholdBytes = 1 << 20;
  static constexpr std::size_t kRankFlushBytes = 8 << 10;
  static constexpr std::size_t kRankFileReserveBytes = kRankFlushBytes + (4 << 10);

  // writer_threads: the pool's threads (0: write inline); the bytes do not depend on it.
  IncidentWriter(const Job& job, const LineFormatter& formatter, std::filesystem::path incident_dir,
                 CitationPlan plan, int writer_threads = 1);

  // Creates incident/ and the layout's directories (incident_dir must not exist).
  Status CreateDirectories();
  void Emit(const Record& record) override;
  // Writes everything still buffered (files of processes still alive at the end included;
  // their unflushed stdout is not). Returns the first I/O error met.
  Status Finish();
  // The RAS poller's file (nccl_ras): its time set to its last poll's (again after the log
  // files' times were set to the job's end, simulator.cc); nothing without one.
  Status StampRasFile() const;

  // The remembered line of that kind and subject; nullptr when it was never written.
  const Citation* Find(Cite what, int subject) const;
  const std::vector<Citation>& citations() const { return citations_; }
  const WriterStats& stats() const { return stats_; }

 private:
  struct File {
    std::string data;        // not yet written to disk
    std::int64_t lines = 0;  // lines in the file so far (written or buffered)
    std::int64_t bytes = 0;  // bytes handed to the pool so far
    bool created = false;
    std::string tail;  // agent and pod files: the last line handed to the pool (a lost node's last line)
  };
  struct StdoutBuffer {
    std::string data;
    std::int64_t lines = 0;
  };

  // The layout (writer_files.cc): which file each stream goes to, and its path.
  bool Combined() const {
    return job_.layout == v1::LAYOUT_SLURM_OUT || job_.layout == v1::LAYOUT_MPIRUN_OUT ||
           job_.layout == v1::LAYOUT_PDSH_OUT;
  }
  bool Mpirun() const { return job_.layout == v1::LAYOUT_MPIRUN_OUT; }
  bool Pdsh() const { return job_.layout == v1::LAYOUT_PDSH_OUT; }  // deepspeed.log, `<host>: `
  // Kubernetes: one file per pod (kubectl logs) with torchrun's and its workers' output, the
  // workers' lines tagged `[default<L>]:` (torchrun --tee 3).
  bool PodLogs() const { return job_.layout == v1::LAYOUT_KUBECTL_LOGS; }
  // Ray: driver.log holds every worker's lines behind `(RayTrainWorker pid=P, ip=IP) `.
  bool RayDriver() const { return job_.layout == v1::LAYOUT_RAY_DRIVER; }
  bool Labelled() const { return Combined() || PodLogs() || RayDriver(); }
  bool OneFile() const { return Combined() || RayDriver(); }  // one file for every rank
  bool Stamped(int file) const { return PodLogs() && job_.pod_timestamps && file < job_.nodes; }
  int AgentFile(int node) const { return node; }
  int OutFile(int rank) const {
    return OneFile() ? kSlurmOut : PodLogs() ? job_.NodeOf(rank) : job_.nodes + rank;
  }
  int ErrFile(int rank) const;
  static constexpr int kSlurmOut = 0, kCtldLog = 1;  // Ray: driver.log, gcs_server.out
  int KernFile(int node) const { return kern_base_ + node; }
  int SmiFile(int node) const { return smi_base_ + node; }
  int NodeOfFile(int file) const;  // -1: a job-wide file (slurm-<jobid>.out, slurmctld.log)
  NodeDamage DamageOf(int file) const;
  std::size_t LayoutFileCount() const;  // the launcher's files, before the kernel logs
  std::size_t FileCount() const;
  std::string RelativePath(int file) const;
  std::string LogDirOf(int node) const;  // <host>/logs/<run>_<sfx>/attempt_0

  // Formats the record at the end of the file, each line labelled "<rank>: " in the
  // combined layout; returns the line index it starts at and what the formatter returned.
  template <typename R>
  auto AppendTo(int file, int rank, const R& record, LinePolicy put = {});
  void AppendText(int file, int rank, std::string_view text, std::int64_t lines, LinePolicy put = {});
  void CompleteSplit();  // writes the waiting tail of a split line (slurm-<jobid>.out)
  File& Buffer(int file);  // the file's buffer, with room reserved on first use
  void Remember(Cite what, int subject, TimeNs time, int file, std::int64_t line);
  // Formats the record into the rank's Python stdout buffer (block-buffered, kStdoutBufferBytes).
  template <typename R>
  void BufferStdout(int rank, const R& record);
  void MoveStdoutToFile(int rank);
  void MaybeFlush(int file);
  void Flush(int file);
  Status Truncate(int file);  // realism: cuts a damaged node's file mid-line (writer_files.cc)

  // A record's lines written where its route (routes.h) says, and the lines a truth cites
  // remembered; the records that print nothing end a process's or a node's files.
  template <typename R>
  void Write(const R& r);
  void Write(const WatchdogTimeout& r);
  void Write(const StoreConnectionReset& r);
  void Write(const WorkerExit& r);
  void Write(const AgentExit& r);
  void Write(const NodeLost& r);
  void Write(const FlightRecorderDump& r);
  void Write(const NcclRasReport& r);
  Status WriteRasFile();
  bool Collected(const FlightRecorderDump& r) const;  // timeouts.flight_recorder.coverage
  template <typename R>
  int FileOf(Stream stream, const R& r) const;
  void After(Then then, int file);  // the route's Then

  // Remembers the lines of the record the model marked as evidence (model/evidence.h `MarkersOf`):
  // `first` is its first line in `file`, `at` where the formatter put the lines it places.
  template <typename R, typename At>
  void CiteLines(const R& r, int file, std::int64_t first, const At& at);

  const Job& job_;
  const LineFormatter& formatter_;
  std::filesystem::path dir_;
  std::string dir_prefix_;  // dir_ and a separator: file paths are built as plain strings
  int label_width_;  // srun pads labels to the widest task id
  int kern_base_;    // the first kernel log's file number
  int smi_base_;     // the first nvidia-smi.log's file number
  std::vector<File> files_;
  std::vector<StdoutBuffer> stdout_;  // per rank: Python's unflushed stdout
  CitationPlan plan_;
  std::vector<Citation> citations_;
  std::string scratch_;
  // srun's interleaving: a task line whose head is written and whose tail waits for the next
  // task's line (realism.interleaved_line_rate).
  struct Split {
    bool pending = false;
    int rank = -1;
    std::string tail;
  } split_;
  Rng split_rng_;
  static constexpr std::size_t kMinSplitBytes = 24;
  TimeNs stamp_ = 0;  // the record being written: `kubectl logs --timestamps` stamps its lines
  // Flight-recorder dumps (timeouts.flight_recorder): their bytes, and the node folders made.
  std::optional<FlightRecorderSerializer> flight_recorder_;
  // The RAS poller (nccl_ras): its polls' text, oldest first, written whole by Finish to
  // <first node folder>/ncclras.log (the oldest dropped past kRasFileBytes: a 16k-rank JSON report
  // is ~15 MB and the engine reads 64 MiB of a file), and the first node's clock at its last poll.
  static constexpr std::size_t kRasFileBytes = std::size_t{48} << 20;
  std::optional<NcclRasFormatter> nccl_ras_;
  std::deque<std::string> ras_polls_;
  std::size_t ras_bytes_ = 0;
  TimeNs ras_time_ = -1;
  std::vector<std::uint8_t> dump_dirs_;
  WriterStats stats_;
  Status error_;
  FilePool pool_;  // last: its threads stop before the buffers above go
};

}  // namespace denpex::sim
