// Progress of long work on stderr, never on stdout or into an output file. On a terminal: one
// line redrawn in place. Elsewhere (a Slurm array's log, CI): one line at a time, each with an
// ETA, when at least `interval` has passed and at least 10 % more of the work is done since the
// last (whichever is rarer), so that a log gains at most ten lines however long the work.
// `eval` (and `eval --preflight`), `simulate` (the model stage, `--replay`) and `checkpoint verify
// --deep` show it; `--progress` and
// `--no-progress` choose (README.md, "Progress").
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "denpex/cli/commands.h"

namespace denpex::cli {

enum class ProgressMode { kOff, kTerminal, kLog };

// --progress on a terminal or not; --no-progress off; neither: on either way.
ProgressMode ChooseProgress(const ProgressArgs& args, bool stderr_is_terminal);
// The same for this process's stderr.
ProgressMode ChooseProgress(const ProgressArgs& args);

// "1h02m", "3m05s", "12s".
std::string Duration(double seconds);
// The wall clock in UTC to the second, "2026-12-04T15:11:24Z": what a periodic line opens with.
std::string UtcNow();

class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  // `what` names the command ("denpex eval"), `unit` what is counted ("jobs"; "" for a
  // fraction of time or bytes). `total` > 0.
  ProgressLine(ProgressMode mode, std::ostream& err, std::string what, std::string unit,
               std::uint64_t total, double interval_s = 30, Clock::time_point start = Clock::now());
  ~ProgressLine();  // a terminal's line is cleared
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // `done` of `total` finished; `detail` says what (the last job). Safe from any thread.
  void Update(std::uint64_t done, std::string_view detail = {}) {
    UpdateAt(done, detail, Clock::now());
  }
  void UpdateAt(std::uint64_t done, std::string_view detail, Clock::time_point now);

 private:
  std::string Status(std::uint64_t done, double elapsed) const;

  ProgressMode mode_;
  std::ostream& err_;
  std::string what_, unit_;
  std::uint64_t total_;
  double interval_s_;
  Clock::time_point start_;
  std::mutex mu_;
  std::optional<Clock::time_point> last_;  // the last line printed (log) or drawn (terminal)
  double last_fraction_ = 0;
  bool drawn_ = false;
};

}  // namespace denpex::cli
