// Watcher: ingest/live (the files as they grow) + the engine strategy (analyze/) + the progress
// stall (analyze/stall.h) + report.
#include "denpex/engine/watch.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "analyze/scope.h"
#include "analyze/stall.h"
#include "analyze/strategies.h"
#include "ingest/attempts.h"
#include "ingest/live.h"
#include "report/diagnosis.h"

namespace denpex::engine {

// A rank's last two distinct steps as the watcher saw them: its recent step time.
struct Pace {
  ProgressMark before, last;
};

struct Watcher::State {
  WatchOptions options;
  LiveIncident live;
  TimeNs last_read_wall = 0;  // when bytes were last read
  // The logs' clock against the wall's: the newest stamp read, and the wall time of the read that
  // brought it (its log time was at least that then). Lines without a stamp move neither.
  TimeNs anchor_log = 0, anchor_wall = 0;
  std::map<std::int32_t, Pace> pace;
  bool stalled = false;
};

Watcher::Watcher() = default;
Watcher::Watcher(Watcher&&) noexcept = default;
Watcher& Watcher::operator=(Watcher&&) noexcept = default;
Watcher::~Watcher() = default;

Result<Watcher> Watcher::Open(const std::filesystem::path& dir, const WatchOptions& options) {
  auto live = LiveIncident::Open(dir);
  if (!live.ok()) return live.status();
  Watcher w;
  w.state_ = std::make_unique<State>(State{.options = options, .live = std::move(*live)});
  return w;
}

Result<std::uint64_t> Watcher::Refresh(const std::vector<std::string>* changed, TimeNs wall) {
  auto read = state_->live.Refresh(changed);
  if (read.ok() && *read > 0) state_->last_read_wall = wall;
  return read;
}

std::uint64_t Watcher::signals() const { return state_->live.signals(); }
std::uint64_t Watcher::bytes() const { return state_->live.bytes(); }
std::size_t Watcher::files() const { return state_->live.files(); }
const std::filesystem::path& Watcher::root() const { return state_->live.root(); }
bool Watcher::stalled() const { return state_->stalled; }

namespace {

// The job's recent step time: the median over ranks of the time between their last two steps
// the watcher saw (per step); 0 when no rank has been seen at two steps.
double StepTime(const std::map<std::int32_t, Pace>& pace) {
  std::vector<double> steps;
  for (const auto& [rank, p] : pace) {
    if (p.before.iteration < 0 || p.last.iteration <= p.before.iteration) continue;
    steps.push_back(static_cast<double>(p.last.time - p.before.time) /
                    static_cast<double>(p.last.iteration - p.before.iteration));
  }
  if (steps.empty()) return 0;
  std::nth_element(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2),
                   steps.end());
  return steps[steps.size() / 2];
}

}  // namespace

Result<v1::Diagnosis> Watcher::Evaluate(TimeNs wall) {
  State& s = *state_;
  auto incident = s.live.Assemble(s.options.threads);
  if (!incident.ok()) return incident.status();
  SetAsideLaterAttempts(&*incident);
  ScopeToJob(&*incident);
  Finding finding = AnalyzeParticipation(*incident, nullptr);
  // The step lines: each rank's newest, and its pace since the step before.
  const std::map<std::int32_t, ProgressMark> marks = LatestProgress(*incident);
  TimeNs newest = 0;
  for (const Event& e : incident->events) {
    if (e.clock != Clock::kNone) newest = std::max(newest, e.time);
  }
  for (const auto& [rank, m] : marks) {
    Pace& p = s.pace[rank];
    if (m.iteration < p.last.iteration) p = Pace{};  // a restarted run
    if (m.iteration != p.last.iteration) p.before = p.last, p.last = m;
  }
  s.stalled = false;
  if (newest > s.anchor_log) s.anchor_log = newest, s.anchor_wall = s.last_read_wall;
  if (finding.verdict != v1::VERDICT_DIAGNOSED && newest > 0) {
    const double elapsed =
        static_cast<double>(wall - std::min(wall, s.anchor_wall)) * s.options.time_scale;
    const StallClock clock{.now = s.anchor_log + static_cast<TimeNs>(elapsed),
                           .step_ns = StepTime(s.pace),
                           .factor = s.options.stall_factor};
    Finding stall;
    stall.strategy = finding.strategy;
    if (AnswerProgressStall(*incident, marks, clock, &stall)) {
      stall.ranks_seen = finding.ranks_seen;
      stall.world_size = finding.world_size;
      stall.problems = finding.problems;
      finding = std::move(stall);
      s.stalled = true;
    }
  }
  return ToDiagnosis(*incident, finding);
}

}  // namespace denpex::engine
