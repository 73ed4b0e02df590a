// `denpex eval --watch` (docs/evaluation.md, "Watch mode"): watch mode measured in virtual time.
// A finished incident is replayed in simulated time (PlanReplay) into a scratch copy, line batch
// after line batch, into the watcher `denpex watch` runs (engine::Watcher), whose provisional
// answers are scored against the truth as they come: when the first right one came, whether
// before the NCCL watchdog fired, how many wrong ones committed first (false alarms), and the
// GPU hours a right alert recovers. No clock is read and nothing sleeps: the watcher's wall time
// is the simulated time. The harness reads the truth; the watcher never does.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/common/time.h"
#include "denpex/v1/diagnosis.pb.h"
#include "denpex/v1/scenario.pb.h"
#include "denpex/v1/score.pb.h"
#include "denpex/v1/truth.pb.h"

namespace denpex::cli {

struct WatchEvalOptions {
  // Evaluate after new events, at most once per `every_s` simulated seconds (a burst is one
  // evaluation), and every `idle_s` simulated seconds without one (a progress stall needs none).
  double every_s = 1;
  double idle_s = 10;
  // The watcher reads what the files gained once per this many simulated seconds (a live watcher
  // wakes on inotify; reading line by line would list a 16k-rank directory at each new file).
  double read_every_s = 0.1;
  // ReplayOptions::pace_untimed: a file with no stamped line is paced over the span, else
  // written whole when the replay ends.
  bool pace_untimed = false;
  double stall_factor = 5;  // WatchOptions::stall_factor
  double settle_s = 3;      // Announcer: how long a commit must hold before it counts
  int threads = 0;          // the watcher's; 0 = all cores
};

// Replays `incident` (read only) into `scratch` (replaced) and scores each provisional answer
// against `truth`; `final_answer` is the engine's diagnosis of the finished incident, as the
// live watch gives it when the job ends. `healthy`: a control run (IsHealthyControl). Suite,
// incident and seed are left for the caller; a failure is returned, not recorded.
Result<v1::WatchResult> MeasureWatch(const std::filesystem::path& incident,
                                     const std::filesystem::path& scratch, const v1::Truth& truth,
                                     const v1::Diagnosis& final_answer, bool healthy,
                                     const WatchEvalOptions& options);

// A control run: the scenario's every fault slows its ranks by a factor of 1 and never stalls
// (scenario.proto, Fault.slowdown: "1 runs the job healthy"), so nothing failed.
bool IsHealthyControl(const v1::Scenario& scenario);

// The per-family table (healthy runs on a row of their own), then each false alarm.
std::string RenderWatchTable(const std::vector<v1::WatchResult>& results);

// What `denpex watch` treats as a change of answer (verdict, who, what; a stall's apart), and the
// line it prints for one; shared by the live command and the harness.
std::string AnswerKey(const v1::Diagnosis& d, bool stalled);
std::string OneLine(const v1::Diagnosis& d, std::string_view when, std::string_view kind);

// When a provisional answer is acted on. An answer that names no one is, as soon as it changes;
// a commit (DIAGNOSED) only once every evaluation for `settle` seconds since it first came gave it
// again: an error every rank raises reaches the disk rank by rank, and the first traceback alone
// names one of them. Shared by the live command and the harness.
class Announcer {
 public:
  explicit Announcer(double settle_s) : settle_(static_cast<TimeNs>(settle_s * 1e9)) {}
  // The answer of an evaluation at `t`: true when it is to be acted on now.
  bool Offer(const v1::Diagnosis& d, bool stalled, TimeNs t);
  // A commit waiting to settle: when an evaluation would settle it.
  std::optional<TimeNs> settles_at() const;

 private:
  TimeNs settle_;
  std::string announced_, pending_;
  TimeNs pending_since_ = 0;
};

}  // namespace denpex::cli
