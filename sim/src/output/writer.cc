// The incident writer (see writer.h): routing records to files, labelling, stdout buffering,
// and remembering the lines the truth cites. Paths and disk I/O are in writer_files.cc.
#include "writer.h"

#include <algorithm>
#include <type_traits>

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
  if (job.flight_recorder.buffer_size > 0) {
    flight_recorder_.emplace(job, formatter.torch(), formatter.nccl().name);
  }
  if (job.nccl_ras.every > 0) nccl_ras_.emplace(job, formatter.nccl());
}

void IncidentWriter::Emit(const Record& record) {
  std::visit([this](const auto& r) {
    stamp_ = r.time;
    Write(r);
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

// The formatter's Format, and where it put the cited lines when it says (NoOffsets otherwise).
template <typename R>
auto FormatWith(const LineFormatter& formatter, const R& record, LineBuilder& out) {
  if constexpr (std::is_void_v<decltype(formatter.Format(record, out))>) {
    formatter.Format(record, out);
    return NoOffsets{};
  } else {
    return formatter.Format(record, out);
  }
}

template <typename R>
auto IncidentWriter::AppendTo(int file, int rank, const R& record, LinePolicy put) {
  File& f = Buffer(file);
  if (!put.may_split) CompleteSplit();  // a cited line's `first` must be exact
  const std::int64_t first = f.lines;
  if (!Stamped(file) && (rank < 0 || !Labelled())) {
    LineBuilder out(&f.data);
    auto at = FormatWith(formatter_, record, out);
    f.lines += out.lines();
    return Appended<decltype(at)>{first, at};
  }
  scratch_.clear();
  LineBuilder out(&scratch_);
  auto at = FormatWith(formatter_, record, out);
  AppendText(file, rank, scratch_, out.lines(), put);
  return Appended<decltype(at)>{first, at};
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

void IncidentWriter::MoveStdoutToFile(int rank) {
  StdoutBuffer& buf = stdout_[rank];
  AppendText(OutFile(rank), rank, buf.data, buf.lines, {.out_stream = true});
  buf.data.clear();
  buf.lines = 0;
  MaybeFlush(OutFile(rank));
}

template <typename R>
int IncidentWriter::FileOf(Stream stream, const R& r) const {
  switch (stream) {
    case Stream::kOut:
    case Stream::kOutBuffered:
      return OutFile(RankOf(r));
    case Stream::kErr:
      return ErrFile(RankOf(r));
    case Stream::kAgent:
      return AgentFile(NodeOf(r));
    case Stream::kKernel:
      return KernFile(NodeOf(r));
    case Stream::kSmi:
      return SmiFile(NodeOf(r));
    case Stream::kConsole:
      return kSlurmOut;
    case Stream::kController:
      return kCtldLog;
  }
  return kSlurmOut;
}

void IncidentWriter::After(Then then, int file) {
  if (then == Then::kFlushIfFull) MaybeFlush(file);
  if (then == Then::kFlush) Flush(file);
}

// Every record that prints lines: where its route says, then what the truth cites of them.
template <typename R>
void IncidentWriter::Write(const R& r) {
  const Route route = RouteOf(r);
  if (route.stream == Stream::kOutBuffered) {
    BufferStdout(RankOf(r), r);
    if (route.then == Then::kFlush) MoveStdoutToFile(RankOf(r));
    return;
  }
  const int file = FileOf(route.stream, r);
  const bool process = route.stream == Stream::kOut || route.stream == Stream::kErr;
  const auto [first, at] =
      AppendTo(file, process ? RankOf(r) : -1, r,
               {.may_split = route.may_split, .out_stream = route.stream == Stream::kOut});
  CiteLines(r, file, first, at);
  After(route.then, file);
}

// A cited rank's watchdog block is never split.
void IncidentWriter::Write(const WatchdogTimeout& r) {
  const int file = FileOf(RouteOf(r).stream, r);
  const bool cited = MarkersOf(r, plan_, job_).count > 0;
  const auto placed = AppendTo(file, r.rank, r, {.may_split = RouteOf(r).may_split && !cited});
  CiteLines(r, file, placed.first, NoOffsets{});
  MaybeFlush(file);
}

// A flight-recorder dump is a file of its own where a team collects them, beside the node's other
// files: <node folder>/nccl_trace_rank_<R> (TORCH_NCCL_DEBUG_INFO_TEMP_FILE's default prefix),
// handed to the writer threads whole. A missing node's dumps are lost with its other files.
void IncidentWriter::Write(const FlightRecorderDump& r) {
  const int node = job_.NodeOf(r.rank);
  if (!Collected(r)) return;
  if (!job_.noise.damage.empty() && job_.noise.damage[node] == NodeDamage::kMissing) return;
  if (dump_dirs_.empty()) dump_dirs_.assign(static_cast<std::size_t>(job_.nodes), 0);
  if (!dump_dirs_[node]) {
    std::error_code ec;
    fs::create_directories(dir_ / job_.NodeName(node), ec);
    if (ec && error_.ok())
      error_ = Status::IoError((dir_ / job_.NodeName(node)).string() +
                               ": cannot create: " + ec.message());
    dump_dirs_[node] = 1;
  }
  std::string data = flight_recorder_->Bytes(r);
  ++stats_.files;
  ++stats_.flight_recorder_dumps;
  stats_.bytes += data.size();
  pool_.Submit(FileCount() + static_cast<std::size_t>(r.rank),
               {dir_prefix_ + job_.NodeName(node) + "/nccl_trace_rank_" + std::to_string(r.rank),
                std::move(data), false});
}

// The poller's reports go to one file, written whole when the run is over (Finish).
void IncidentWriter::Write(const NcclRasReport& r) {
  std::string& poll = ras_polls_.emplace_back();
  nccl_ras_->Append(poll, r);
  ras_bytes_ += poll.size();
  while (ras_bytes_ > kRasFileBytes && ras_polls_.size() > 1) {
    ras_bytes_ -= ras_polls_.front().size();
    ras_polls_.pop_front();
  }
  ras_time_ = nccl_ras_->NodeTime(r.time);
}

// The collection pattern: every dump, all but the first timed-out rank's, or a seeded half.
bool IncidentWriter::Collected(const FlightRecorderDump& r) const {
  switch (job_.flight_recorder.coverage) {
    case v1::FLIGHT_RECORDER_COVERAGE_ALL_BUT_FIRST_FAILED:
      return !r.first_failed;
    case v1::FLIGHT_RECORDER_COVERAGE_RANDOM_HALF:
      return Rng(job_.seed, StreamId::kFlightRecorder,
                 (1ULL << 32) + static_cast<std::uint64_t>(r.rank))
                 .Uniform() < 0.5;
    default:
      return true;
  }
}

// Counted for the truth: the store's secondary errors (torch < 2.4 prints none).
void IncidentWriter::Write(const StoreConnectionReset& r) {
  const int file = FileOf(RouteOf(r).stream, r);
  const std::int64_t before = Buffer(file).lines;
  AppendTo(file, r.rank, r, {.may_split = RouteOf(r).may_split});
  if (Buffer(file).lines > before) ++stats_.store_resets;
  MaybeFlush(file);
}

// A process that dies by a signal (or with its node) loses its unflushed stdout; its own
// files are complete now.
void IncidentWriter::Write(const WorkerExit& r) {
  if (r.exit_code >= 0) MoveStdoutToFile(r.rank);
  std::string().swap(stdout_[r.rank].data);
  stdout_[r.rank].lines = 0;
  if (OneFile() || PodLogs()) return;  // the pod's file is torchrun's too: handed over at its exit
  Flush(OutFile(r.rank));
  if (ErrFile(r.rank) != OutFile(r.rank)) Flush(ErrFile(r.rank));
}

void IncidentWriter::Write(const AgentExit& r) { Flush(AgentFile(r.node)); }

// The node's agent file ends where it ends; its ranks' files were closed by their exits.
void IncidentWriter::Write(const NodeLost& r) {
  if (OneFile()) return;
  const int file = AgentFile(r.node);
  File& f = files_[file];
  for (const EvidenceMarker& m : MarkersOf(r, plan_, job_)) {  // the file's last line
    if (f.lines > 0 && f.data.empty()) {                       // a pod log just handed over
      citations_.push_back({m.what,
                            m.subject,
                            r.time,
                            {RelativePath(file), f.lines, f.tail},
                            file,
                            DamageOf(file) != NodeDamage::kMissing});
    } else if (f.lines > 0) {
      Remember(m.what, m.subject, r.time, file, f.lines - 1);
    }
  }
  Flush(file);
}

// --- What a truth cites -------------------------------------------------------------------------

namespace {

// The line of a record's output a marker names, counted from its first line.
std::int64_t RowOffset(NoOffsets, CitedRow) { return 0; }
std::int64_t RowOffset(std::int64_t at, CitedRow row) { return row == CitedRow::kAt ? at : 0; }
std::int64_t RowOffset(const ReportLineOffsets& at, CitedRow row) {
  if (row == CitedRow::kReportFailed) return at.failed_line;
  return row == CitedRow::kReportRootRank ? at.root_rank_line : 0;
}
std::int64_t RowOffset(const RayLineOffsets& at, CitedRow row) {
  if (row == CitedRow::kRayError) return at.error_line;
  return row == CitedRow::kRayCause ? at.cause_line : 0;
}

}  // namespace

template <typename R, typename At>
void IncidentWriter::CiteLines(const R& r, int file, std::int64_t first, const At& at) {
  for (const EvidenceMarker& m : MarkersOf(r, plan_, job_)) {
    if (m.first && Find(m.what, m.subject) != nullptr) continue;
    Remember(m.what, m.subject, r.time, file, first + RowOffset(at, m.row));
  }
}

}  // namespace denpex::sim
