// The incident writer's layouts and disk I/O (see writer.h): file numbering and paths per
// layout, directory creation, and writing each file with open/write/close.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "model/rng.h"
#include "writer.h"

namespace denpex::sim {

namespace fs = std::filesystem;

// Files: LAYOUT_SLURM_OUT: slurm-<jobid>.out, slurmctld.log. Otherwise agent files (one per
// node), then the ranks' stdout files, then (log-dir layout only) their stderr files.
// Then, with kernel logs, one <host>/kern.log per node.
std::size_t IncidentWriter::FileCount() const {
  const auto nodes = static_cast<std::size_t>(job_.nodes);
  return LayoutFileCount() + (job_.noise.kernel_logs ? nodes : 0) +
         (job_.noise.nvidia_smi ? nodes : 0);
}

int IncidentWriter::NodeOfFile(int file) const {
  if (file >= smi_base_) return file - smi_base_;
  if (file >= kern_base_) return file - kern_base_;
  if (OneFile()) return -1;
  if (file < job_.nodes) return file;
  const int rank = (file - job_.nodes) % job_.world;
  return job_.NodeOf(rank);
}

// A pod log kubectl no longer shows (an older container's, a pod that never ran) is never
// collected, like a missing node's files.
NodeDamage IncidentWriter::DamageOf(int file) const {
  if (PodLogs() && file < job_.nodes && job_.PodLogOf(file) == PodLog::kGone)
    return NodeDamage::kMissing;
  if (job_.noise.damage.empty()) return NodeDamage::kNone;
  const int node = NodeOfFile(file);
  return node < 0 ? NodeDamage::kNone : job_.noise.damage[node];
}

std::size_t IncidentWriter::LayoutFileCount() const {
  if (OneFile()) return 2;
  if (PodLogs()) return static_cast<std::size_t>(job_.nodes);
  const auto nodes = static_cast<std::size_t>(job_.nodes);
  const auto world = static_cast<std::size_t>(job_.world);
  return nodes + world * (job_.layout == v1::LAYOUT_TORCHRUN_LOG_DIR ? 2 : 1);
}

int IncidentWriter::ErrFile(int rank) const {
  if (job_.layout == v1::LAYOUT_TORCHRUN_LOG_DIR) return job_.nodes + job_.world + rank;
  return OutFile(rank);
}

// torchrun --log-dir <dir> makes <dir>/<run id>_<8 random characters>/attempt_<n>/ (Python's
// tempfile.mkdtemp); the run id is the rendezvous id, here the scheduler's job id.
std::string IncidentWriter::LogDirOf(int node) const {
  static constexpr std::string_view kChars = "abcdefghijklmnopqrstuvwxyz0123456789_";
  Rng rng(job_.seed, StreamId::kNodeProcesses, static_cast<std::uint64_t>(node) + (1ULL << 32));
  std::string dir = job_.hostnames[node] + "/logs/" + std::to_string(job_.job_id) + "_";
  for (int i = 0; i < 8; ++i) dir += kChars[rng.UniformInt(0, kChars.size())];
  return dir + "/attempt_0";
}

std::string IncidentWriter::RelativePath(int file) const {
  if (file >= smi_base_) return job_.NodeName(file - smi_base_) + "/nvidia-smi.log";
  if (file >= kern_base_) return job_.NodeName(file - kern_base_) + "/kern.log";
  if (PodLogs()) {  // `kubectl logs [--previous] <pod>`
    return "pods/" + job_.pod_names[file] +
           (job_.PodLogOf(file) == PodLog::kPrevious ? ".previous.log" : ".log");
  }
  if (RayDriver()) return file == kSlurmOut ? "driver.log" : "gcs_server.out";
  if (Combined()) {
    if (Mpirun() && job_.deepspeed_runner) return file == kSlurmOut ? "deepspeed.log" : "deepspeed-unused.log";
    if (Mpirun()) return file == kSlurmOut ? "mpirun.out" : "mpirun-unused.log";
    if (Pdsh()) return file == kSlurmOut ? "deepspeed.log" : "deepspeed-unused.log";
    return file == kSlurmOut ? "slurm-" + std::to_string(job_.job_id) + ".out" : "slurmctld.log";
  }
  if (file < job_.nodes) return job_.hostnames[file] + "/torchrun.log";
  const bool err = file >= job_.nodes + job_.world;
  const int rank = file - job_.nodes - (err ? job_.world : 0);
  const int node = job_.NodeOf(rank);
  if (job_.layout == v1::LAYOUT_TORCHRUN_LOG_DIR) {
    return LogDirOf(node) + "/" + std::to_string(job_.LocalRank(rank)) +
           (err ? "/stderr.log" : "/stdout.log");
  }
  return job_.hostnames[node] + "/rank_" + std::to_string(rank) + ".log";
}

Status IncidentWriter::CreateDirectories() {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::IoError(dir_.string() + ": cannot create: " + ec.message());
  if (PodLogs()) fs::create_directory(dir_ / "pods", ec);
  if (ec) return Status::IoError((dir_ / "pods").string() + ": cannot create: " + ec.message());
  if (Labelled() && !job_.noise.kernel_logs && !job_.noise.nvidia_smi) return Status::Ok();
  for (int node = 0; node < job_.nodes; ++node) {
    if (!job_.noise.damage.empty() && job_.noise.damage[node] == NodeDamage::kMissing) continue;
    fs::create_directory(dir_ / job_.NodeName(node), ec);
    if (!ec && job_.layout == v1::LAYOUT_TORCHRUN_LOG_DIR) {
      const fs::path attempt = dir_ / LogDirOf(node);
      fs::create_directories(attempt, ec);
      for (int local = 0; local < job_.gpus_per_node && !ec; ++local) {
        fs::create_directory(attempt / std::to_string(local), ec);
      }
    }
    if (ec) {
      return Status::IoError((dir_ / job_.NodeName(node)).string() +
                             ": cannot create: " + ec.message());
    }
  }
  return Status::Ok();
}

// A rank file is handed over once it holds a few KiB (its NCCL init lines, typically), so
// its buffer goes back to the pool for the next rank instead of every rank's start-up
// staying in memory until the cascade.
void IncidentWriter::MaybeFlush(int file) {
  const bool rank_file = !Combined() && file >= job_.nodes && file < kern_base_;
  if (files_[file].data.size() >= (rank_file ? kRankFlushBytes : kFlushThresholdBytes)) {
    Flush(file);
  }
}

// Hands the buffered bytes to the pool (one open/write/close there); the file is created by
// its first hand-over and appended to by the next.
void IncidentWriter::Flush(int file) {
  File& f = files_[file];
  if (f.created && f.data.empty()) return;
  if ((Mpirun() || Pdsh()) && file == kCtldLog) return;  // no controller log on bare metal
  if (DamageOf(file) == NodeDamage::kMissing) {  // never collected: dropped unwritten
    std::string().swap(f.data);
    return;
  }
  if (!f.created) ++stats_.files;
  if (file < job_.nodes && !OneFile() && !f.data.empty()) {
    const std::size_t end = f.data.back() == '\n' ? f.data.size() - 1 : f.data.size();
    const std::size_t nl = f.data.rfind('\n', end == 0 ? 0 : end - 1);
    f.tail.assign(f.data, nl == std::string::npos ? 0 : nl + 1, end - (nl == std::string::npos ? 0 : nl + 1));
  }
  stats_.bytes += f.data.size();
  f.bytes += static_cast<std::int64_t>(f.data.size());
  pool_.Submit(static_cast<std::size_t>(file),
               {dir_prefix_ + RelativePath(file), std::move(f.data), f.created});
  f.created = true;
  std::string().swap(f.data);  // a moved-from string may keep its bytes
}

Status IncidentWriter::Finish() {
  for (int file = 0; file < static_cast<int>(files_.size()); ++file) Flush(file);
  Status written = pool_.Finish();
  if (error_.ok()) error_ = std::move(written);  // the first error (a dump folder's, say)
  if (error_.ok() && !ras_polls_.empty()) error_ = WriteRasFile();
  stats_.lines = 0;
  for (int file = 0; file < static_cast<int>(files_.size()); ++file) {
    if (DamageOf(file) == NodeDamage::kMissing) continue;
    if (DamageOf(file) == NodeDamage::kTruncated && error_.ok()) error_ = Truncate(file);
    stats_.lines += static_cast<std::uint64_t>(files_[file].lines);
  }
  return error_;
}

// <first node folder>/ncclras.log (created with the node's folder where the layout has none, as
// the flight-recorder dumps are), lost with the node's other files when the node is missing.
Status IncidentWriter::WriteRasFile() {
  if (!job_.noise.damage.empty() && job_.noise.damage[0] == NodeDamage::kMissing)
    return Status::Ok();
  const fs::path folder = dir_ / job_.NodeName(0);
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) return Status::IoError(folder.string() + ": cannot create: " + ec.message());
  const std::string path = (folder / "ncclras.log").string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return Status::IoError(path + ": cannot create: " + std::strerror(errno));
  bool whole = true;
  for (const std::string& poll : ras_polls_)
    whole = whole && std::fwrite(poll.data(), 1, poll.size(), f) == poll.size();
  if (std::fclose(f) != 0 || !whole) return Status::IoError(path + ": short write");
  ++stats_.files;
  stats_.bytes += ras_bytes_;
  return StampRasFile();
}

Status IncidentWriter::StampRasFile() const {
  if (ras_polls_.empty() || ras_time_ < 0) return Status::Ok();
  if (!job_.noise.damage.empty() && job_.noise.damage[0] == NodeDamage::kMissing)
    return Status::Ok();
  const std::string path = (dir_ / job_.NodeName(0) / "ncclras.log").string();
  const timespec ts{static_cast<time_t>(ras_time_ / kNsPerSec),
                    static_cast<long>(ras_time_ % kNsPerSec)};
  const timespec both[2] = {ts, ts};
  if (::utimensat(AT_FDCWD, path.c_str(), both, 0) != 0) {
    return Status::IoError(path + ": cannot set its time: " + std::strerror(errno));
  }
  return Status::Ok();
}

// Cuts the file at a drawn 30-95% of its bytes, moved off a line boundary so the last line
// ends mid-line; keeps the complete lines' count and marks the citations past it.
Status IncidentWriter::Truncate(int file) {
  File& f = files_[file];
  if (!f.created) return Status::Ok();
  const std::string path = (dir_ / RelativePath(file)).string();
  const std::int64_t size = f.bytes;
  Rng rng(job_.seed, StreamId::kNoise, (1ULL << 40) + static_cast<std::uint64_t>(file));
  std::int64_t cut =
      static_cast<std::int64_t>(static_cast<double>(size) * (0.3 + 0.65 * rng.Uniform()));
  std::string head(static_cast<std::size_t>(cut), '\0');
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError(path + ": cannot open: " + std::strerror(errno));
  const ssize_t n = ::pread(fd, head.data(), head.size(), 0);
  ::close(fd);
  if (n != static_cast<ssize_t>(head.size())) return Status::IoError(path + ": short read");
  if (cut > 1 && head[static_cast<std::size_t>(cut - 1)] == '\n') {  // mid-line, not at its end
    const std::size_t prev = head.rfind('\n', static_cast<std::size_t>(cut - 2));
    const std::int64_t start = prev == std::string::npos ? 0 : static_cast<std::int64_t>(prev) + 1;
    cut = start + (cut - 1 - start) / 2;
    head.resize(static_cast<std::size_t>(cut));
  }
  if (::truncate(path.c_str(), cut) != 0) {
    return Status::IoError(path + ": cannot truncate: " + std::strerror(errno));
  }
  f.lines = static_cast<std::int64_t>(std::count(head.begin(), head.end(), '\n'));
  for (Citation& c : citations_) {
    if (c.file == file && c.line.line > f.lines) c.intact = false;
  }
  return Status::Ok();
}

}  // namespace denpex::sim
