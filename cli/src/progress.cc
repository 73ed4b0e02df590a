#include "progress.h"

#include <unistd.h>

#include <cstdio>

#include "denpex/common/time.h"

namespace denpex::cli {

ProgressMode ChooseProgress(const ProgressArgs& args, bool stderr_is_terminal) {
  if (args.off) return ProgressMode::kOff;
  return stderr_is_terminal ? ProgressMode::kTerminal : ProgressMode::kLog;
}

ProgressMode ChooseProgress(const ProgressArgs& args) {
  return ChooseProgress(args, ::isatty(STDERR_FILENO) == 1);
}

std::string Duration(double seconds) {
  const long s = seconds > 0 ? static_cast<long>(seconds + 0.5) : 0;
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, s / 60 % 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lds", s);
  }
  return buf;
}

std::string UtcNow() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return FormatRfc3339(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count())
             .substr(0, 19) +
         "Z";
}

ProgressLine::ProgressLine(ProgressMode mode, std::ostream& err, std::string what, std::string unit,
                           std::uint64_t total, double interval_s, Clock::time_point start)
    : mode_(mode),
      err_(err),
      what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total > 0 ? total : 1),
      interval_s_(interval_s),
      start_(start) {}

ProgressLine::~ProgressLine() {
  if (drawn_) err_ << "\r\033[2K" << std::flush;
}

std::string ProgressLine::Status(std::uint64_t done, double elapsed) const {
  const double f = static_cast<double>(done) / static_cast<double>(total_);
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * f);
  std::string s = what_ + ": " + pct;
  if (!unit_.empty()) {
    s += " (" + std::to_string(done) + "/" + std::to_string(total_) + " " + unit_ + ")";
  }
  s += ", " + Duration(elapsed) + " elapsed";
  if (done > 0 && done < total_) s += ", ETA " + Duration(elapsed * (1 - f) / f);
  return s;
}

void ProgressLine::UpdateAt(std::uint64_t done, std::string_view detail, Clock::time_point now) {
  if (mode_ == ProgressMode::kOff) return;
  std::lock_guard lock(mu_);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double f = static_cast<double>(done) / static_cast<double>(total_);
  if (mode_ == ProgressMode::kTerminal) {  // redrawn at most 10 times a second
    if (last_ && now - *last_ < std::chrono::milliseconds(100) && done < total_) return;
    last_ = now;
    err_ << "\r\033[2K" << Status(done, elapsed) << (detail.empty() ? "" : "  ") << detail
         << std::flush;
    drawn_ = true;
    return;
  }
  const double since = std::chrono::duration<double>(now - last_.value_or(start_)).count();
  if (since < interval_s_ || f - last_fraction_ < 0.1 - 1e-9) return;
  last_ = now;
  last_fraction_ = f;
  err_ << UtcNow() << " " << Status(done, elapsed) << (detail.empty() ? "" : "; last: ") << detail
       << "\n"
       << std::flush;
}

}  // namespace denpex::cli
