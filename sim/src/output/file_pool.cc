// The writer threads (see file_pool.h).
#include "file_pool.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace denpex::sim {

namespace {
constexpr std::size_t kRecycleMinCapacity = 4 << 10;  // smaller buffers are just freed
constexpr std::size_t kMaxSpareBytes = 32 << 20;
}  // namespace

FilePool::FilePool(int threads, std::size_t max_pending_bytes)
    : lanes_(static_cast<std::size_t>(threads > 0 ? threads : 0)),
      lane_bytes_(lanes_.empty() ? 0 : max_pending_bytes / lanes_.size()) {
  for (Lane& lane : lanes_) lane.thread = std::thread([this, &lane] { Loop(lane); });
}

FilePool::~FilePool() { (void)Finish(); }

void FilePool::Submit(std::size_t key, Job job) {
  if (lanes_.empty()) {
    Write(job);
    return;
  }
  Lane& lane = lanes_[key % lanes_.size()];
  std::unique_lock lock(lane.mu);
  // Wait for room, but never for a job that could not fit even in an empty queue.
  lane.cv.wait(lock, [&] {
    return lane.pending_bytes == 0 || lane.pending_bytes + job.data.size() <= lane_bytes_;
  });
  lane.pending_bytes += job.data.size();
  lane.jobs.push_back(std::move(job));
  lane.cv.notify_all();
}

void FilePool::Loop(Lane& lane) {
  std::unique_lock lock(lane.mu);
  while (true) {
    lane.cv.wait(lock, [&] { return lane.stop || !lane.jobs.empty(); });
    if (lane.jobs.empty()) return;  // stopped and drained
    Job job = std::move(lane.jobs.front());
    lane.jobs.pop_front();
    const std::size_t size = job.data.size();
    lock.unlock();
    Write(job);
    lock.lock();
    lane.pending_bytes -= size;
    lane.cv.notify_all();
  }
}

void FilePool::Write(Job& job) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (job.append ? O_APPEND : O_TRUNC);
  const int fd = ::open(job.path.c_str(), flags, 0644);
  std::string failure;
  if (fd < 0) {
    failure = job.path + ": cannot open: " + std::strerror(errno);
  } else {
    std::size_t done = 0;
    while (done < job.data.size()) {
      const ssize_t n = ::write(fd, job.data.data() + done, job.data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        failure = job.path + ": write failed: " + std::strerror(errno);
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0 && failure.empty()) {
      failure = job.path + ": close failed: " + std::strerror(errno);
    }
  }
  if (!failure.empty()) {
    std::lock_guard lock(mu_);
    if (error_.ok()) error_ = Status::IoError(failure);
  }
  Recycle(std::move(job.data));
}

void FilePool::Recycle(std::string&& buffer) {
  if (buffer.capacity() < kRecycleMinCapacity) return;
  buffer.clear();
  std::lock_guard lock(mu_);
  if (spare_bytes_ + buffer.capacity() > kMaxSpareBytes) return;
  spare_bytes_ += buffer.capacity();
  spare_.push_back(std::move(buffer));
}

std::string FilePool::TakeBuffer(std::size_t min_capacity) {
  std::lock_guard lock(mu_);
  if (spare_.empty() || spare_.back().capacity() < min_capacity) return {};
  std::string buffer = std::move(spare_.back());
  spare_.pop_back();
  spare_bytes_ -= buffer.capacity();
  return buffer;
}

Status FilePool::Finish() {
  if (!finished_) {
    finished_ = true;
    for (Lane& lane : lanes_) {
      {
        std::lock_guard lock(lane.mu);
        lane.stop = true;
      }
      lane.cv.notify_all();
    }
    for (Lane& lane : lanes_) {
      if (lane.thread.joinable()) lane.thread.join();
    }
  }
  std::lock_guard lock(mu_);
  return error_;
}

}  // namespace denpex::sim
