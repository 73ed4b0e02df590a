// Watcher: ingest/live (the files as they grow) + the engine strategy (analyze/) + the progress
// stall (analyze/stall.h) + report.
#include "denpex/engine/watch.h"

#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
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
  // The last evaluation's incident and the engine's answer on it, with the bytes read then.
  std::optional<Incident> incident;
  std::uint64_t bytes_evaluated = 0;
  Finding finding;
  std::map<std::int32_t, ProgressMark> marks;
  // The steps between two step lines: the gcd of every step number one showed.
  std::int64_t step_gcd = 0;
  double step_ns = 0;  // the job's step time: the lines' own (step_ms), else their pace
};

Watcher::Watcher() = default;
Watcher::Watcher(Watcher&&) noexcept = default;
Watcher& Watcher::operator=(Watcher&&) noexcept = default;
Watcher::~Watcher() = default;

Result<Watcher> Watcher::Open(const std::filesystem::path& dir, const WatchOptions& options) {
  auto live = LiveIncident::Open(dir, {}, Texts::kAnalysed);  // a diagnosis's texts only
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
const std::filesystem::path& Watcher::root() const { return state_->live.root(); }
bool Watcher::stalled() const { return state_->stalled; }
bool Watcher::dirty() const {
  return !state_->incident || state_->live.bytes() != state_->bytes_evaluated;
}

namespace {

double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The job's recent step time: the median over ranks of the time between their last two steps
// the watcher saw (per step); 0 when no rank has been seen at two steps.
double StepTime(const std::map<std::int32_t, Pace>& pace) {
  std::vector<double> steps;
  for (const auto& [rank, p] : pace) {
    if (p.before.iteration < 0 || p.last.iteration <= p.before.iteration) continue;
    steps.push_back(static_cast<double>(p.last.time - p.before.time) /
                    static_cast<double>(p.last.iteration - p.before.iteration));
  }
  return steps.empty() ? 0 : Median(std::move(steps));
}

}  // namespace

Result<v1::Diagnosis> Watcher::Evaluate(TimeNs wall) {
  State& s = *state_;
  // Nothing read since the last evaluation: the engine's answer stands; only the clock moved.
  if (dirty()) {
    auto incident = s.live.Assemble(s.options.threads);
    if (!incident.ok()) return incident.status();
    s.bytes_evaluated = s.live.bytes();
    SetAsideLaterAttempts(&*incident);
    // What the scoping and the analysis run in parallel runs on as many threads as the reading did.
    tbb::task_arena arena(s.options.threads > 0 ? s.options.threads : tbb::task_arena::automatic);
    arena.execute([&] {
      ScopeToJob(&*incident);  // the events are final, and indexed by kind (Incident::OfKinds)
      s.finding = AnalyzeParticipation(*incident, nullptr);
    });
    // The step lines: each rank's newest, and its pace since the step before.
    s.marks = LatestProgress(*incident);
    TimeNs newest = 0;
    for (const Event& e : incident->events) {
      if (e.clock != Clock::kNone) newest = std::max(newest, e.time);
    }
    for (const auto& [rank, m] : s.marks) {
      Pace& p = s.pace[rank];
      if (m.iteration < p.last.iteration) p = Pace{};  // a restarted run
      if (m.iteration != p.last.iteration) p.before = p.last, p.last = m;
    }
    if (newest > s.anchor_log) s.anchor_log = newest, s.anchor_wall = s.last_read_wall;
    std::vector<double> stated;
    for (const auto& [rank, m] : s.marks) {
      s.step_gcd = std::gcd(s.step_gcd, m.iteration);
      const auto& it =
          std::get<Iteration>(incident->events[static_cast<std::size_t>(m.event)].detail);
      if (it.step_us > 0) stated.push_back(static_cast<double>(it.step_us) * 1e3);
    }
    s.step_ns = stated.empty() ? StepTime(s.pace) : Median(std::move(stated));
    s.incident = std::move(*incident);
  }
  s.stalled = false;
  if (s.finding.verdict != v1::VERDICT_DIAGNOSED && s.anchor_log > 0) {
    const double elapsed =
        static_cast<double>(wall - std::min(wall, s.anchor_wall)) * s.options.time_scale;
    const StallClock clock{
        .now = s.anchor_log + static_cast<TimeNs>(elapsed),
        .line_ns = s.step_ns * static_cast<double>(std::max<std::int64_t>(1, s.step_gcd)),
        .factor = s.options.stall_factor};
    Finding stall;
    stall.strategy = s.finding.strategy;
    if (AnswerProgressStall(*s.incident, s.marks, clock, &stall)) {
      stall.ranks_seen = s.finding.ranks_seen;
      stall.world_size = s.finding.world_size;
      stall.problems = s.finding.problems;
      s.stalled = true;
      return ToDiagnosis(*s.incident, stall);
    }
  }
  return ToDiagnosis(*s.incident, s.finding);
}

}  // namespace denpex::engine
