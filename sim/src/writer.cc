// The incident writer (see writer.h): routing records to files, stdout buffering, and
// writing each file with open/write/close.
#include "writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace denpex::sim {

namespace fs = std::filesystem;

IncidentWriter::IncidentWriter(const Job& job, const LineFormatter& formatter,
                               fs::path incident_dir)
    : job_(job), formatter_(formatter), dir_(std::move(incident_dir)) {
  files_.resize(static_cast<std::size_t>(job.nodes) + static_cast<std::size_t>(job.world));
  stdout_.resize(static_cast<std::size_t>(job.world));
  citations_.resize(static_cast<std::size_t>(job.nodes));
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
void IncidentWriter::AppendTo(int file, const R& record) {
  File& f = files_[file];
  LineBuilder out(&f.data);
  formatter_.Format(record, out);
  f.lines += out.lines();
  MaybeFlush(file);
}

// NCCL writes through C stdio and flushes each line: it reaches the file at once, ahead of
// anything still waiting in Python's own stdout buffer.
void IncidentWriter::Handle(const NcclVersionBanner& r) { AppendTo(RankFile(r.rank), r); }
void IncidentWriter::Handle(const NcclCommInit& r) { AppendTo(RankFile(r.rank), r); }
void IncidentWriter::Handle(const WatchdogTimeout& r) { AppendTo(RankFile(r.rank), r); }

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
void IncidentWriter::Handle(const AgentSigterm& r) { AppendTo(AgentFile(r.node), r); }
void IncidentWriter::Handle(const AgentExit& r) { Flush(AgentFile(r.node)); }

// Also remembers where the report's citable lines landed (for the truth).
void IncidentWriter::Handle(const AgentFailureReport& r) {
  File& f = files_[AgentFile(r.node)];
  const std::size_t start = f.data.size();
  const std::int64_t lines_before = f.lines;
  LineBuilder out(&f.data);
  const ReportLineOffsets offsets = formatter_.Format(r, out);
  f.lines += out.lines();
  auto line_text = [&](std::int64_t offset) {
    std::size_t pos = start;
    for (std::int64_t i = 0; i < offset; ++i) pos = f.data.find('\n', pos) + 1;
    return f.data.substr(pos, f.data.find('\n', pos) - pos);
  };
  AgentReportCitation& c = citations_[r.node];
  c.present = true;
  c.failed = {RelativePath(AgentFile(r.node)), lines_before + offsets.failed_line + 1,
              line_text(offsets.failed_line)};
  c.root_rank = {RelativePath(AgentFile(r.node)), lines_before + offsets.root_rank_line + 1,
                 line_text(offsets.root_rank_line)};
  MaybeFlush(AgentFile(r.node));
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
