// A small pool of writer threads: the incident writer hands it whole buffers ("write these
// bytes to that file") and goes on simulating while the threads do the open/write/close.
//
// Each file always goes to the same thread (by its key), and each thread works through its
// jobs in submission order, so a file's bytes land in the order they were submitted: the
// output is byte-identical for any number of threads. Every job is one open, one write
// (repeated only on a short write) and one close; a thread holds at most one descriptor, so
// the process holds at most `threads` more however many files there are. Nothing is fsynced
// or stat'ed. Pending bytes are bounded: Submit waits while a thread has more than its share
// of `max_pending_bytes` queued. With threads == 0 every job is written at once, inline.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "denpex/common/status.h"

namespace denpex::sim {

class FilePool {
 public:
  struct Job {
    std::string path;  // absolute or relative to the working directory
    std::string data;
    bool append = false;  // false: create (or truncate) the file
  };

  explicit FilePool(int threads, std::size_t max_pending_bytes = std::size_t{64} << 20);
  ~FilePool();
  FilePool(const FilePool&) = delete;
  FilePool& operator=(const FilePool&) = delete;

  // Queues the job on thread key % threads (jobs with the same key keep their order).
  void Submit(std::size_t key, Job job);
  // A buffer whose bytes were written (empty, with at least that capacity), or an empty
  // string: reusing buffers spares the kernel's page faults for fresh memory.
  std::string TakeBuffer(std::size_t min_capacity);
  // Waits until every queued job is written and stops the threads; the first I/O error met.
  Status Finish();

 private:
  struct Lane {
    std::mutex mu;
    std::condition_variable cv;  // jobs queued, room freed, or stop
    std::deque<Job> jobs;
    std::size_t pending_bytes = 0;
    bool stop = false;
    std::thread thread;
  };

  void Loop(Lane& lane);
  void Write(Job& job);  // records the first error; recycles the buffer
  void Recycle(std::string&& buffer);

  std::vector<Lane> lanes_;
  std::size_t lane_bytes_;
  std::mutex mu_;  // guards error_ and spare_
  Status error_;
  std::vector<std::string> spare_;  // written buffers for reuse (bounded by bytes)
  std::size_t spare_bytes_ = 0;
  bool finished_ = false;
};

}  // namespace denpex::sim
