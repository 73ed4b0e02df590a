// The incident writer (see writer.h): routing records to files, labelling, stdout buffering,
// and remembering the lines the truth cites. Paths and disk I/O are in writer_files.cc.
#include "writer.h"

#include <algorithm>

namespace denpex::sim {

namespace fs = std::filesystem;

IncidentWriter::IncidentWriter(const Job& job, const LineFormatter& formatter,
                               fs::path incident_dir, CitationPlan plan, int writer_threads)
    : job_(job),
      formatter_(formatter),
      dir_(std::move(incident_dir)),
      dir_prefix_((dir_ / "").string()),
      label_width_(static_cast<int>(std::to_string(std::max(0, job.world - 1)).size())),
      plan_(std::move(plan)),
      split_rng_(job.seed, StreamId::kNoise, 0x5117'0000ULL),
      pool_(writer_threads) {
  kern_base_ = static_cast<int>(LayoutFileCount());
  smi_base_ = kern_base_ + (job.noise.kernel_logs ? job.nodes : 0);
  files_.resize(FileCount());
  stdout_.resize(static_cast<std::size_t>(job.world));
}

void IncidentWriter::Emit(const Record& record) {
  std::visit([this](const auto& r) {
    stamp_ = r.time;
    Handle(r);
  }, record);
}

// `rank` >= 0 in the combined layouts: every line gets srun's "<rank>: " label or mpirun's
// --tag-output "[1,<rank>]<stdout>:" (Open MPI 4: no space before the text; 5: one space); in pod logs a
// worker's line gets torchrun's "[default<L>]:" tag, and with --timestamps every pod-log line
// opens with the container runtime's RFC3339Nano stamp (the node's clock).
// With realism.interleaved_line_rate, a task's line in slurm-<jobid>.out (of a record the truth
// never cites: `may_split`) can be split by the next task's write: "<A>: <head>" waits, the
// other task's labelled line follows on the same physical line, and "<A>: <tail>" comes on the
// next one. The line count is unchanged (two lines in, two lines out).
void IncidentWriter::AppendText(int file, int rank, std::string_view text, std::int64_t lines,
                                LinePolicy put) {
  File& f = Buffer(file);
  const bool stamped = Stamped(file);
  const bool splits = put.may_split && rank >= 0 && Combined() && !Mpirun() && !Pdsh() && file == kSlurmOut;
  if (!splits && file == kSlurmOut) CompleteSplit();
  if (!stamped && (rank < 0 || !Labelled())) {
    f.data.append(text);
    f.lines += lines;
    return;
  }
  const CivilTime c = ToCivil(stamp_ + (stamped ? job_.clock_offset[file] : 0));
  LineBuilder out(&f.data);
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (splits && split_.pending && split_.rank != rank) {  // the waiting head's line is cut here
      out.Padded(rank, label_width_, ' ').Str(": ").Str(line).EndLine();
      out.Padded(split_.rank, label_width_, ' ').Str(": ").Str(split_.tail).EndLine();
      split_.pending = false;
      continue;
    }
    if (splits) CompleteSplit();
    if (stamped) {
      out.Zero(c.year, 4).Char('-').Zero(c.month, 2).Char('-').Zero(c.day, 2).Char('T');
      out.Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2).Char('.');
      out.Zero(c.nanos, 9).Str("Z ");
    }
    if (rank >= 0 && Mpirun()) {
      out.Str("[1,").Int(rank).Str(put.out_stream ? "]<stdout>:" : "]<stderr>:");
      if (job_.open_mpi5) out.Char(' ');  // PRRTE puts a space after the tag
    } else if (rank >= 0 && Pdsh()) {
      out.Str(job_.hostnames[job_.NodeOf(rank)]).Str(": ");
    } else if (rank >= 0 && Combined()) {
      out.Padded(rank, label_width_, ' ').Str(": ");
    } else if (rank >= 0 && PodLogs()) {
      out.Str("[default").Int(job_.LocalRank(rank)).Str("]:");
    } else if (rank >= 0 && RayDriver()) {
      out.Str("(RayTrainWorker pid=").Int(job_.worker_pid[rank]).Str(", ip=").Str(job_.hostnames[job_.NodeOf(rank)]).Str(") ");
    }
    if (splits && job_.interleaved_line_rate > 0 && line.size() >= kMinSplitBytes &&
        split_rng_.Uniform() < job_.interleaved_line_rate) {
      const auto at = static_cast<std::size_t>(split_rng_.UniformInt(1, static_cast<std::int64_t>(line.size()) - 1));
      out.Str(line.substr(0, at));
      split_ = {true, rank, std::string(line.substr(at))};
      ++stats_.interleaved_lines;
      continue;
    }
    out.Str(line).EndLine();
  }
  f.lines += out.lines();
}

// A head still waiting when something else is written: srun relays its tail at once.
void IncidentWriter::CompleteSplit() {
  if (!split_.pending) return;
  split_.pending = false;
  File& f = files_[kSlurmOut];
  f.data.append(split_.tail);
  f.data.push_back('\n');
  f.lines += 1;
}

// Rank files are reserved at once (no regrowth copies); the combined file reuses a buffer
// the pool has written, sized for a whole flush.
IncidentWriter::File& IncidentWriter::Buffer(int file) {
  File& f = files_[file];
  if (f.data.capacity() != 0) return f;
  if (file == kSlurmOut && OneFile()) {
    f.data = pool_.TakeBuffer(kFlushThresholdBytes);
    f.data.reserve(kFlushThresholdBytes + (64 << 10));
  } else if (file >= job_.nodes && file < kern_base_ && !Combined()) {
    f.data = pool_.TakeBuffer(kRankFileReserveBytes);
    f.data.reserve(kRankFileReserveBytes);
  }
  return f;
}

template <typename R>
std::int64_t IncidentWriter::AppendTo(int file, int rank, const R& record, LinePolicy put) {
  File& f = Buffer(file);
  if (!put.may_split) CompleteSplit();  // a cited line's `first` must be exact
  const std::int64_t first = f.lines;
  if (!Stamped(file) && (rank < 0 || !Labelled())) {
    LineBuilder out(&f.data);
    formatter_.Format(record, out);
    f.lines += out.lines();
    return first;
  }
  scratch_.clear();
  LineBuilder out(&scratch_);
  formatter_.Format(record, out);
  AppendText(file, rank, scratch_, out.lines(), put);
  return first;
}

// Copies the text of the file's 0-based line `line` (still in the buffer: callers remember a
// line right after appending it, before any flush).
void IncidentWriter::Remember(Cite what, int subject, TimeNs time, int file, std::int64_t line) {
  const File& f = files_[file];
  std::size_t begin = f.data.size();  // the start of line f.lines (one past the end)
  for (std::int64_t i = f.lines; i > line; --i) {
    const std::size_t nl = begin >= 2 ? f.data.rfind('\n', begin - 2) : std::string::npos;
    begin = nl == std::string::npos ? 0 : nl + 1;
  }
  const std::size_t end = f.data.find('\n', begin);
  citations_.push_back({what,
                        subject,
                        time,
                        {RelativePath(file), line + 1, f.data.substr(begin, end - begin)},
                        file,
                        DamageOf(file) != NodeDamage::kMissing});
}

const Citation* IncidentWriter::Find(Cite what, int subject) const {
  for (const Citation& c : citations_) {
    if (c.what == what && c.subject == subject) return &c;
  }
  return nullptr;
}

// NCCL writes through C stdio and flushes each line: it reaches the file at once, ahead of
// anything still waiting in Python's own stdout buffer.
void IncidentWriter::Handle(const NcclVersionBanner& r) {
  AppendTo(OutFile(r.rank), r.rank, r, {.may_split = true, .out_stream = true});
  MaybeFlush(OutFile(r.rank));
}
void IncidentWriter::Handle(const NcclProcessInfo& r) {
  AppendTo(OutFile(r.rank), r.rank, r, {.may_split = true, .out_stream = true});
  MaybeFlush(OutFile(r.rank));
}
void IncidentWriter::Handle(const NcclCommInit& r) {
  AppendTo(OutFile(r.rank), r.rank, r, {.may_split = true, .out_stream = true});
  MaybeFlush(OutFile(r.rank));
}

// stderr lines (c10, Python tracebacks, faulthandler) are unbuffered.
void IncidentWriter::Handle(const WatchdogTimeout& r) {
  const int file = ErrFile(r.rank);
  const bool cited = std::binary_search(plan_.watchdog_ranks.begin(), plan_.watchdog_ranks.end(), r.rank);
  const std::int64_t first = AppendTo(file, r.rank, r, {.may_split = !cited});
  if (cited) Remember(Cite::kWatchdog, r.rank, r.time, file, first);
  MaybeFlush(file);
}

void IncidentWriter::Handle(const WatchdogAftermath& r) {
  const int file = ErrFile(r.timeout.rank);
  AppendTo(file, r.timeout.rank, r, {.may_split = true});
  MaybeFlush(file);
}

void IncidentWriter::Handle(const DumpSignalObserved& r) {
  const int file = ErrFile(r.rank);
  AppendTo(file, r.rank, r, {.may_split = true});  // not an error of its own: the rank's timeout follows
  MaybeFlush(file);
}

// The traceback (stderr, unbuffered). The cited line is its exception line; when the whole job
// raised (a checkpoint load: no fault rank), every rank's is remembered and the truth cites the
// lowest rank's that survived.
void IncidentWriter::Handle(const PythonException& r) {
  const int file = ErrFile(r.rank);
  scratch_.clear();
  LineBuilder out(&scratch_);
  const std::int64_t cited = formatter_.Format(r, out);
  CompleteSplit();  // a cited line's `first` must be exact
  const std::int64_t first = Buffer(file).lines;
  AppendText(file, r.rank, scratch_, out.lines());
  if (r.rank == plan_.rank || plan_.rank < 0) {
    Remember(Cite::kException, r.rank, r.time, file, first + cited);
  }
  MaybeFlush(file);
}

// Python's stdout to a file or pipe is block-buffered: a line that does not fit in the
// buffer first pushes the buffered lines out.
template <typename R>
void IncidentWriter::BufferStdout(int rank, const R& record) {
  scratch_.clear();
  LineBuilder out(&scratch_);
  formatter_.Format(record, out);
  StdoutBuffer& buf = stdout_[rank];
  if (!buf.data.empty() && buf.data.size() + scratch_.size() > kStdoutBufferBytes) {
    MoveStdoutToFile(rank);
  }
  buf.data += scratch_;
  buf.lines += out.lines();
}

// DeepSpeed's logger lines go through Python's stdout buffer, like the step lines; its comm
// start-up lines come from a rank the runner started with `python -u` (unbuffered): they reach
// the console at once, tagged as stdout.
void IncidentWriter::Handle(const DeepSpeedLine& r) {
  if (r.note != DeepSpeedNote::kCommInit) return BufferStdout(r.rank, r);
  const int file = OutFile(r.rank);
  AppendTo(file, r.rank, r, LinePolicy{.may_split = true, .out_stream = true});
  MaybeFlush(file);
}

void IncidentWriter::Handle(const SegfaultDump& r) {
  const int file = ErrFile(r.rank);
  const std::int64_t first = AppendTo(file, r.rank, r);
  if (r.rank == plan_.rank) Remember(Cite::kSegfault, r.rank, r.time, file, first);
  MaybeFlush(file);
}

void IncidentWriter::Handle(const TrainerIteration& r) { BufferStdout(r.rank, r); }

// Timer lines go through the logger unbuffered (stderr, or stdout with PYTHONUNBUFFERED=1).
void IncidentWriter::Handle(const RankTimers& r) {
  const int file = ErrFile(r.rank);
  const std::int64_t first = AppendTo(file, r.rank, r);
  if (r.slow && r.rank == plan_.rank && Find(Cite::kSlowTimers, r.rank) == nullptr) {
    Remember(Cite::kSlowTimers, r.rank, r.time, file, first);
  }
  MaybeFlush(file);
}

// NCCL WARN lines and the watchdog's NCCL error are flushed / unbuffered.
void IncidentWriter::Handle(const NcclIbError& r) {
  const int file = OutFile(r.rank);
  const std::int64_t first = AppendTo(file, r.rank, r, {.out_stream = true});
  // The fault's own failure; a failed link's far end: its first report (over sockets, the far
  // end may only see the connection closed).
  const bool cite = r.rank == plan_.rank ? r.status == 12 : r.rank == plan_.link_peer && (r.status == 12 || r.socket);
  if (cite && Find(Cite::kIbError, r.rank) == nullptr) {
    Remember(Cite::kIbError, r.rank, r.time, file, first);
  }
  MaybeFlush(file);
}

void IncidentWriter::Handle(const NcclAsyncError& r) {
  AppendTo(ErrFile(r.rank), r.rank, r);
  MaybeFlush(ErrFile(r.rank));
}

void IncidentWriter::Handle(const NcclSetupFailure& r) {
  const int file = r.traceback ? ErrFile(r.rank) : OutFile(r.rank);
  const std::int64_t first = AppendTo(file, r.rank, r, {.out_stream = !r.traceback});
  if (!r.traceback && job_.NodeOf(r.rank) == plan_.node) Remember(Cite::kSetupWarn, r.rank, r.time, file, first);
  MaybeFlush(file);
}

void IncidentWriter::MoveStdoutToFile(int rank) {
  StdoutBuffer& buf = stdout_[rank];
  AppendText(OutFile(rank), rank, buf.data, buf.lines, {.out_stream = true});
  buf.data.clear();
  buf.lines = 0;
  MaybeFlush(OutFile(rank));
}

// A process that dies by a signal (or with its node) loses its unflushed stdout; its own
// files are complete now.
void IncidentWriter::Handle(const WorkerExit& r) {
  if (r.exit_code >= 0) MoveStdoutToFile(r.rank);
  std::string().swap(stdout_[r.rank].data);
  stdout_[r.rank].lines = 0;
  if (OneFile() || PodLogs()) return;  // the pod's file is torchrun's too: handed over at its exit
  Flush(OutFile(r.rank));
  if (ErrFile(r.rank) != OutFile(r.rank)) Flush(ErrFile(r.rank));
}

// Warnings go to stderr, unbuffered.
void IncidentWriter::Handle(const BenignWarning& r) {
  AppendTo(ErrFile(r.rank), r.rank, r, {.may_split = true});
  MaybeFlush(ErrFile(r.rank));
}

void IncidentWriter::Handle(const KernelMessage& r) {
  const std::int64_t first = AppendTo(KernFile(r.node), -1, r);
  if (r.cite && r.node == plan_.node) Remember(Cite::kKernel, r.node, r.time, KernFile(r.node), first);
}

// The CUDA error (stderr, unbuffered); the cited line is its `RuntimeError: CUDA error:` line.
void IncidentWriter::Handle(const CudaFailure& r) {
  const int file = ErrFile(r.rank);
  scratch_.clear();
  LineBuilder out(&scratch_);
  const std::int64_t error_line = formatter_.Format(r, out);
  const std::int64_t first = Buffer(file).lines;
  AppendText(file, r.rank, scratch_, out.lines());
  if (r.rank == plan_.rank) Remember(Cite::kException, r.rank, r.time, file, first + error_line);
  MaybeFlush(file);
}

void IncidentWriter::Handle(const NvidiaSmiSnapshot& r) {
  AppendTo(SmiFile(r.node), -1, r);
  Flush(SmiFile(r.node));
}

void IncidentWriter::Handle(const AgentBanner& r) { AppendTo(AgentFile(r.node), -1, r); }
void IncidentWriter::Handle(const AgentSigterm& r) {
  const std::int64_t first = AppendTo(AgentFile(r.node), -1, r);
  if (r.rank == plan_.rank) Remember(Cite::kAgentSigterm, r.rank, r.time, AgentFile(r.node), first);
}
void IncidentWriter::Handle(const AgentExit& r) { Flush(AgentFile(r.node)); }
void IncidentWriter::Handle(const RayWorkerTable& r) {
  AppendTo(kSlurmOut, -1, r);
  MaybeFlush(kSlurmOut);
}

void IncidentWriter::Handle(const RayActorDied& r) {
  const std::int64_t first = Buffer(kSlurmOut).lines;
  scratch_.clear();
  LineBuilder out(&scratch_);
  const RayLineOffsets at = formatter_.Format(r, out);
  AppendText(kSlurmOut, -1, scratch_, out.lines());
  Remember(Cite::kRayActorDied, r.rank, r.time, kSlurmOut, first + at.error_line);
  Remember(Cite::kRayCause, r.rank, r.time, kSlurmOut, first + at.cause_line);
  MaybeFlush(kSlurmOut);
}

void IncidentWriter::Handle(const RayNodeDead& r) {
  const std::int64_t first = AppendTo(kCtldLog, -1, r);
  Remember(Cite::kRayGcs, r.node, r.time, kCtldLog, first);
}

void IncidentWriter::Handle(const RayletOomKill& r) {
  const std::int64_t first = AppendTo(kSlurmOut, -1, r);
  Remember(Cite::kRaylet, r.node, r.time, kSlurmOut, first);
}

void IncidentWriter::Handle(const AgentSignalled& r) {
  AppendTo(AgentFile(r.node), -1, r);
  MaybeFlush(AgentFile(r.node));
}

void IncidentWriter::Handle(const StoreConnectionReset& r) {
  const int file = ErrFile(r.rank);
  const std::int64_t before = Buffer(file).lines;
  AppendTo(file, r.rank, r, {.may_split = true});
  if (Buffer(file).lines > before) ++stats_.store_resets;
  MaybeFlush(file);
}

// A traceback (stderr); rank 0's, the server's, is cited.
void IncidentWriter::Handle(const StoreJoinTimeout& r) {
  const int file = ErrFile(r.rank);
  scratch_.clear();
  LineBuilder out(&scratch_);
  const std::int64_t cited = formatter_.Format(r, out);
  CompleteSplit();
  const std::int64_t first = Buffer(file).lines;
  AppendText(file, r.rank, scratch_, out.lines());
  if (r.rank == 0) Remember(Cite::kStoreJoin, 0, r.time, file, first + cited);
  MaybeFlush(file);
}

void IncidentWriter::Handle(const AgentStoreFailure& r) {
  AppendTo(AgentFile(r.node), -1, r);
  MaybeFlush(AgentFile(r.node));
}

void IncidentWriter::Handle(const AgentRendezvousFailure& r) {
  const int file = AgentFile(r.node);
  const std::int64_t first = Buffer(file).lines;
  scratch_.clear();
  LineBuilder out(&scratch_);
  const std::int64_t error_line = formatter_.Format(r, out);
  AppendText(file, -1, scratch_, out.lines());
  if (r.node == plan_.node && !r.timed_out) Remember(Cite::kRendezvous, r.node, r.time, file, first + error_line);
  Flush(file);
}

// The node's agent file ends where it ends; its ranks' files were closed by their exits.
void IncidentWriter::Handle(const NodeLost& r) {
  if (OneFile()) return;
  const int file = AgentFile(r.node);
  File& f = files_[file];
  if (r.node == plan_.node && f.lines > 0 && f.data.empty()) {  // a pod log just handed over
    citations_.push_back({Cite::kLastLine, r.node, r.time, {RelativePath(file), f.lines, f.tail}, file,
                          DamageOf(file) != NodeDamage::kMissing});
  } else if (r.node == plan_.node && f.lines > 0) {
    Remember(Cite::kLastLine, r.node, r.time, file, f.lines - 1);
  }
  Flush(file);
}

// Also remembers where the initiator node's citable lines landed (for the truth).
void IncidentWriter::Handle(const AgentFailureReport& r) {
  const int file = AgentFile(r.node);
  const std::int64_t first = Buffer(file).lines;
  scratch_.clear();
  LineBuilder out(&scratch_);
  const ReportLineOffsets offsets = formatter_.Format(r, out);
  AppendText(file, -1, scratch_, out.lines());
  if (r.node == plan_.node) {
    Remember(Cite::kAgentFailed, r.node, r.time, file, first + offsets.failed_line);
    Remember(Cite::kAgentRootRank, r.node, r.time, file, first + offsets.root_rank_line);
  }
  MaybeFlush(file);
}

void IncidentWriter::Handle(const SrunTaskExits& r) {
  const std::int64_t first = AppendTo(kSlurmOut, -1, r);
  const auto* end = r.ranks.begin() + r.count;
  if (std::find(r.ranks.begin(), end, plan_.rank) != end) {
    Remember(Cite::kSrunTask, plan_.rank, r.time, kSlurmOut, first);
  }
  MaybeFlush(kSlurmOut);
}

void IncidentWriter::Handle(const SrunMessage& r) {
  AppendTo(kSlurmOut, -1, r);
  MaybeFlush(kSlurmOut);
}

void IncidentWriter::Handle(const StepdCancelled& r) {
  const std::int64_t first = AppendTo(kSlurmOut, -1, r);
  if (r.whole_job && Find(Cite::kStepdJob, 0) == nullptr) {
    Remember(Cite::kStepdJob, 0, r.time, kSlurmOut, first);
  }
  MaybeFlush(kSlurmOut);
}

void IncidentWriter::Handle(const CtldLine& r) {
  const std::int64_t first = AppendTo(kCtldLog, -1, r);
  const int event = static_cast<int>(r.event);
  if (Find(Cite::kCtld, event) == nullptr) Remember(Cite::kCtld, event, r.time, kCtldLog, first);
}

// The requeued run (slurm.requeue) appends to the same slurm-<jobid>.out.
void IncidentWriter::Handle(const BatchBanner& r) {
  AppendTo(kSlurmOut, -1, r);
  MaybeFlush(kSlurmOut);
}

// Flushed at once, with what the rank's stdout held before them.
void IncidentWriter::Handle(const CheckpointSave& r) {
  BufferStdout(r.rank, r);
  MoveStdoutToFile(r.rank);
}

void IncidentWriter::Handle(const CheckpointResumed& r) {
  AppendTo(OutFile(r.rank), r.rank, r, {.out_stream = true});
  MaybeFlush(OutFile(r.rank));
}

void IncidentWriter::Handle(const ResumedIteration& r) {
  AppendTo(OutFile(r.line.rank), r.line.rank, r, {.out_stream = true});
  MaybeFlush(OutFile(r.line.rank));
}

// mpirun's own messages: mpirun.out, unlabelled; the first failure's block is cited.
void IncidentWriter::Handle(const MpirunNotice& r) {
  const std::int64_t first = AppendTo(kSlurmOut, -1, r);
  const int subject = r.notice == MpiNotice::kLostDaemon ? r.node : r.rank;
  if (r.notice != MpiNotice::kBindings && Find(Cite::kMpirun, subject) == nullptr) {
    Remember(Cite::kMpirun, subject, r.time, kSlurmOut, first + MpirunCitedLine(r, job_.open_mpi5));
  }
  MaybeFlush(kSlurmOut);
}

// DeepSpeed's runner, launchers and pdsh: deepspeed.log; the fault node's ERROR line (or, for a
// lost node, ssh's timeout line) and pdsh's exit line for it are cited.
void IncidentWriter::Handle(const PdshNotice& r) {
  const std::int64_t first = AppendTo(kSlurmOut, -1, r);
  if (r.node == plan_.node && r.node >= 0) {
    if (r.kind == PdshNoticeKind::kLaunchError && plan_.rank >= 0) {
      Remember(Cite::kPdsh, plan_.rank, r.time, kSlurmOut, first);
    } else if (r.kind == PdshNoticeKind::kSshTimeout) {
      Remember(Cite::kPdsh, r.node, r.time, kSlurmOut, first);
    } else if (r.kind == PdshNoticeKind::kSshExit) {
      Remember(Cite::kPdshExit, r.node, r.time, kSlurmOut, first);
    }
  }
  MaybeFlush(kSlurmOut);
}

}  // namespace denpex::sim
