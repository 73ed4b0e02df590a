// What the checkpoint writers share (checkpoints.cc, checkpoint_frameworks.cc): the file
// tree with the times its files should carry, the damage a save suffers, the job's grid.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/common/time.h"

namespace denpex::sim {

// How the victim's file of the newest save is broken: cut short, absent, holding a NaN, or
// holding a tensor of another size than its peers' (the save itself complete); or the save
// stopped part way, its files so far complete and the rest never written.
enum class Cut { kNone, kTruncate, kMissing, kNaN, kResized, kStopped };

struct Shape {
  int world = 1, tp = 1, pp = 1, dp = 1;
  int mp() const { return tp * pp; }
};

// Writes files and remembers the time each path should carry; Stamp() applies them.
class Tree {
 public:
  explicit Tree(std::filesystem::path root) : root_(std::move(root)) {}

  void Put(const std::filesystem::path& rel, const std::string& bytes, TimeNs t) {
    const std::filesystem::path p = root_ / rel;
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out && error_.ok()) error_ = Status::IoError(p.string() + ": cannot write");
    for (std::filesystem::path q = rel; !q.empty(); q = q.parent_path()) Touch(q, t);
  }
  void Dir(const std::filesystem::path& rel, TimeNs t) {
    std::error_code ec;
    std::filesystem::create_directories(root_ / rel, ec);
    Touch(rel, t);
  }
  // Files first, then directories deepest first: creating an entry changes its parent's time.
  Status Stamp() {
    std::vector<std::pair<std::filesystem::path, TimeNs>> order(times_.begin(), times_.end());
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return std::distance(a.first.begin(), a.first.end()) >
             std::distance(b.first.begin(), b.first.end());
    });
    TimeNs newest = 0;
    for (const auto& [rel, t] : order) {
      SetTime(root_ / rel, t);
      newest = std::max(newest, t);
    }
    SetTime(root_, newest);
    return error_;
  }
  static void SetTime(const std::filesystem::path& p, TimeNs t) {
    const timespec ts{static_cast<time_t>(t / kNsPerSec), static_cast<long>(t % kNsPerSec)};
    const timespec both[2] = {ts, ts};
    ::utimensat(AT_FDCWD, p.c_str(), both, AT_SYMLINK_NOFOLLOW);
  }

 private:
  void Touch(const std::filesystem::path& rel, TimeNs t) {
    TimeNs& at = times_[rel];
    at = std::max(at, t);
  }
  std::filesystem::path root_;
  std::map<std::filesystem::path, TimeNs> times_;
  Status error_;
};

inline std::string FirstHalf(const std::string& bytes) { return bytes.substr(0, bytes.size() / 2); }

inline std::string Padded(int v, int width) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%0*d", width, v);
  return buf;
}

}  // namespace denpex::sim
