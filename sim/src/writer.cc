// The incident writer (see writer.h): routing records to files, stdout buffering, and
// writing each file with open/write/close.
#include "writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace denpex::sim {

namespace fs = std::filesystem;

IncidentWriter::IncidentWriter(const Job& job, const LineFormatter& formatter,
                               fs::path incident_dir, CitationPlan plan)
    : job_(job), formatter_(formatter), dir_(std::move(incident_dir)), plan_(std::move(plan)) {
  files_.resize(static_cast<std::size_t>(job.nodes) + static_cast<std::size_t>(job.world));
  stdout_.resize(static_cast<std::size_t>(job.world));
}

Status IncidentWriter::CreateDirectories() {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::IoError(dir_.string() + ": cannot create: " + ec.message());
  for (const std::string& host : job_.hostnames) {
    fs::create_directory(dir_ / host, ec);
    if (ec) return Status::IoError((dir_ / host).string() + ": cannot create: " + ec.message());
  }
  return Status::Ok();
}

std::string IncidentWriter::RelativePath(int file) const {
  if (file < job_.nodes) return job_.hostnames[file] + "/torchrun.log";
  const int rank = file - job_.nodes;
  return job_.hostnames[job_.NodeOf(rank)] + "/rank_" + std::to_string(rank) + ".log";
}

void IncidentWriter::Emit(const Record& record) {
  std::visit([this](const auto& r) { Handle(r); }, record);
}

template <typename R>
std::int64_t IncidentWriter::AppendTo(int file, const R& record) {
  File& f = files_[file];
  const std::int64_t first = f.lines;
  LineBuilder out(&f.data);
  formatter_.Format(record, out);
  f.lines += out.lines();
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
  citations_.push_back(
      {what, subject, time, {RelativePath(file), line + 1, f.data.substr(begin, end - begin)}});
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
  AppendTo(RankFile(r.rank), r);
  MaybeFlush(RankFile(r.rank));
}
void IncidentWriter::Handle(const NcclCommInit& r) {
  AppendTo(RankFile(r.rank), r);
  MaybeFlush(RankFile(r.rank));
}

// stderr lines (c10, Python tracebacks, faulthandler) are unbuffered.
void IncidentWriter::Handle(const WatchdogTimeout& r) {
  const int file = RankFile(r.rank);
  const std::int64_t first = AppendTo(file, r);
  if (std::binary_search(plan_.watchdog_ranks.begin(), plan_.watchdog_ranks.end(), r.rank)) {
    Remember(Cite::kWatchdog, r.rank, r.time, file, first);
  }
  MaybeFlush(file);
}

void IncidentWriter::Handle(const PythonException& r) {
  const int file = RankFile(r.rank);
  AppendTo(file, r);
  if (r.rank == plan_.rank)
    Remember(Cite::kException, r.rank, r.time, file, files_[file].lines - 1);
  MaybeFlush(file);
}

void IncidentWriter::Handle(const SegfaultDump& r) {
  const int file = RankFile(r.rank);
  const std::int64_t first = AppendTo(file, r);
  if (r.rank == plan_.rank) Remember(Cite::kSegfault, r.rank, r.time, file, first);
  MaybeFlush(file);
}

// Python's stdout to a file is block-buffered: a line that does not fit in the buffer first
// pushes the buffered lines to the file.
void IncidentWriter::Handle(const TrainerIteration& r) {
  scratch_.clear();
  LineBuilder out(&scratch_);
  formatter_.Format(r, out);
  StdoutBuffer& buf = stdout_[r.rank];
  if (!buf.data.empty() && buf.data.size() + scratch_.size() > kStdoutBufferBytes) {
    MoveStdoutToFile(r.rank);
  }
  buf.data += scratch_;
  buf.lines += out.lines();
}

void IncidentWriter::MoveStdoutToFile(int rank) {
  StdoutBuffer& buf = stdout_[rank];
  File& f = files_[RankFile(rank)];
  f.data += buf.data;
  f.lines += buf.lines;
  buf.data.clear();
  buf.lines = 0;
  MaybeFlush(RankFile(rank));
}

// A process that dies by a signal loses its unflushed stdout; the file is complete now.
void IncidentWriter::Handle(const WorkerExit& r) {
  if (r.exit_code >= 0) MoveStdoutToFile(r.rank);
  std::string().swap(stdout_[r.rank].data);
  stdout_[r.rank].lines = 0;
  Flush(RankFile(r.rank));
}

void IncidentWriter::Handle(const AgentBanner& r) { AppendTo(AgentFile(r.node), r); }
void IncidentWriter::Handle(const AgentSigterm& r) {
  const std::int64_t first = AppendTo(AgentFile(r.node), r);
  if (r.rank == plan_.rank) Remember(Cite::kAgentSigterm, r.rank, r.time, AgentFile(r.node), first);
}
void IncidentWriter::Handle(const AgentExit& r) { Flush(AgentFile(r.node)); }

// The node's agent file ends where it ends; its ranks' files were closed by their exits.
void IncidentWriter::Handle(const NodeLost& r) {
  const int file = AgentFile(r.node);
  if (r.node == plan_.node && files_[file].lines > 0) {
    Remember(Cite::kLastLine, r.node, r.time, file, files_[file].lines - 1);
  }
  Flush(file);
}

// Also remembers where the initiator node's citable lines landed (for the truth).
void IncidentWriter::Handle(const AgentFailureReport& r) {
  const int file = AgentFile(r.node);
  File& f = files_[file];
  const std::int64_t first = f.lines;
  LineBuilder out(&f.data);
  const ReportLineOffsets offsets = formatter_.Format(r, out);
  f.lines += out.lines();
  if (r.node == plan_.node) {
    Remember(Cite::kAgentFailed, r.node, r.time, file, first + offsets.failed_line);
    Remember(Cite::kAgentRootRank, r.node, r.time, file, first + offsets.root_rank_line);
  }
  MaybeFlush(file);
}

void IncidentWriter::MaybeFlush(int file) {
  if (files_[file].data.size() >= kFlushThresholdBytes) Flush(file);
}

void IncidentWriter::Flush(int file) {
  File& f = files_[file];
  if (f.created && f.data.empty()) return;
  if (error_.ok()) {
    const std::string path = (dir_ / RelativePath(file)).string();
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (f.created ? O_APPEND : O_TRUNC);
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) {
      error_ = Status::IoError(path + ": cannot open: " + std::strerror(errno));
    } else {
      std::size_t done = 0;
      while (done < f.data.size()) {
        const ssize_t n = ::write(fd, f.data.data() + done, f.data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          error_ = Status::IoError(path + ": write failed: " + std::strerror(errno));
          break;
        }
        done += static_cast<std::size_t>(n);
      }
      if (::close(fd) != 0 && error_.ok()) {
        error_ = Status::IoError(path + ": close failed: " + std::strerror(errno));
      }
    }
  }
  if (!f.created) ++stats_.files;
  f.created = true;
  stats_.bytes += f.data.size();
  std::string().swap(f.data);
}

Status IncidentWriter::Finish() {
  for (int file = 0; file < static_cast<int>(files_.size()); ++file) Flush(file);
  stats_.lines = 0;
  for (const File& f : files_) stats_.lines += static_cast<std::uint64_t>(f.lines);
  return error_;
}

}  // namespace denpex::sim
