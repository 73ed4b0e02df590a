// `denpex eval --watch`: an incident replayed in simulated time into engine::Watcher, its
// provisional answers scored as they come (see watch_eval.h), and the per-family table.
#include "watch/watch_eval.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>

#include "denpex/common/time.h"
#include "denpex/engine/engine.h"
#include "denpex/engine/watch.h"
#include "denpex/scorer/scorer.h"
#include "eval_internal.h"
#include "replay.h"

namespace denpex::cli {
namespace fs = std::filesystem;

std::string AnswerKey(const v1::Diagnosis& d, bool stalled) {
  return std::to_string(d.verdict()) + (stalled ? "/stall/" : "/") + "/" +
         std::to_string(d.initiator().rank()) + "/" + d.initiator().node() + "/" +
         std::to_string(d.initiator().failure_class());
}

bool Announcer::Offer(const v1::Diagnosis& d, bool stalled, TimeNs t) {
  const std::string key = AnswerKey(d, stalled);
  if (d.verdict() != v1::VERDICT_DIAGNOSED || settle_ <= 0) {
    pending_.clear();
    if (key == announced_) return false;
    announced_ = key;
    return true;
  }
  if (key == announced_) return pending_.clear(), false;
  if (key != pending_) pending_ = key, pending_since_ = t;
  if (t - pending_since_ < settle_) return false;
  announced_ = key;
  pending_.clear();
  return true;
}

std::optional<TimeNs> Announcer::settles_at() const {
  if (pending_.empty()) return std::nullopt;
  return pending_since_ + settle_;
}

std::string OneLine(const v1::Diagnosis& d, std::string_view when, std::string_view kind) {
  std::string line =
      std::string(when) + " " + std::string(kind) + " " + v1::Verdict_Name(d.verdict());
  if (d.verdict() == v1::VERDICT_DIAGNOSED) {
    const auto& i = d.initiator();
    if (i.rank() >= 0) line += " rank " + std::to_string(i.rank());
    if (!i.node().empty()) line += " node " + i.node();
    line += " " + v1::FailureClass_Name(i.failure_class());
    char conf[16];
    std::snprintf(conf, sizeof conf, " %.2f", d.initiator().confidence());
    line += conf;
  }
  std::string reason = d.reason();
  if (reason.size() > 200) reason = reason.substr(0, 197) + "...";
  return line + ": " + reason;
}

bool IsHealthyControl(const v1::Scenario& scenario) {
  if (scenario.faults().empty()) return false;
  return std::all_of(scenario.faults().begin(), scenario.faults().end(), [](const v1::Fault& f) {
    return f.has_slowdown() && f.slowdown() == 1 && !f.stall();
  });
}

namespace {

constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();
// A right answer further than this before the fault came from lines replayed ahead of their
// writing (WatchResult.right_ahead_seconds), not from node clocks' skew: lines without a stamp
// are given a time (PlanReplay), which can be earlier than they were written.
constexpr TimeNs kAhead = kNsPerSec;

double Seconds(TimeNs ns) { return static_cast<double>(ns) / kNsPerSec; }

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// When the NCCL watchdog fired: the first watchdog (or blocking-wait) timeout line's own time;
// when those lines carry none (torch 1.13 and 2.1 print no stamp), the fault time plus the
// smallest timeout they name, marked estimated. None when the incident holds no such line.
struct Watchdog {
  std::optional<TimeNs> time;
  bool estimated = false;
};

Result<Watchdog> FirstWatchdog(const fs::path& incident, TimeNs fault, int threads) {
  std::ostringstream events;
  DENPEX_RETURN_IF_ERROR(
      engine::WriteEvents(incident, {.threads = threads, .family = "nccl_watchdog"}, events));
  Watchdog w;
  std::optional<TimeNs> timeout;
  std::istringstream in(events.str());
  for (std::string line; std::getline(in, line);) {
    const auto kind = JsonValue(line, "kind");
    if (kind != "watchdog_timeout" && kind != "blocking_wait_timeout") continue;
    if (const auto t = ParseRfc3339(JsonValue(line, "time").value_or(""))) {
      w.time = w.time ? std::min(*w.time, *t) : *t;
      continue;
    }
    constexpr std::string_view kKey = "\"timeout_ms\":";
    if (const std::size_t at = line.find(kKey); at != std::string::npos) {
      const TimeNs ms = std::strtoll(line.c_str() + at + kKey.size(), nullptr, 10);
      if (ms > 0) timeout = std::min(timeout.value_or(ms * kNsPerMs), ms * kNsPerMs);
    }
  }
  if (!w.time && timeout) w = {.time = fault + *timeout, .estimated = true};
  return w;
}

// Scores the watcher's answers as they change, as `denpex watch` acts on them.
class Judge {
 public:
  Judge(const v1::Truth& truth, bool healthy, TimeNs fault, TimeNs end, double settle_s,
        v1::WatchResult* r)
      : truth_(truth), healthy_(healthy), fault_(fault), end_(end), announcer_(settle_s), r_(r) {}

  // A commit waiting to settle: when an evaluation would settle it.
  std::optional<TimeNs> settles_at() const { return announcer_.settles_at(); }

  void Provisional(const v1::Diagnosis& d, bool stalled, TimeNs t) {
    if (!announcer_.Offer(d, stalled, t)) return;
    if (d.verdict() != v1::VERDICT_DIAGNOSED) return;
    const v1::IncidentScore s = scorer::ScoreIncident(truth_, d);
    const double after = Seconds(t - fault_);
    if (!healthy_ && s.initiator_rank_correct() && !r_->has_right_seconds()) {
      r_->set_right_seconds(std::max(0.0, after));
      r_->set_gpu_hours_recovered(r_->world_size() * Seconds(std::max<TimeNs>(0, end_ - t)) / 3600);
      right_at_ = t;
      if (t < fault_ - kAhead) r_->set_right_ahead_seconds(Seconds(fault_ - t));
    }
    if (healthy_ || s.committed_wrong()) {
      if (r_->false_alarms() == 0) {
        r_->set_false_alarm_seconds(after);
        std::string when = Fixed(after, 1) + " s";
        if (after >= 0) when.insert(when.begin(), '+');
        r_->set_false_alarm(OneLine(d, when, stalled ? "stall" : "provisional"));
      }
      r_->set_false_alarms(r_->false_alarms() + 1);
    }
  }

  // The engine's diagnosis of the finished incident, given at `t`, when the job ended.
  void Final(const v1::Diagnosis& d, TimeNs t) {
    const v1::IncidentScore s = scorer::ScoreIncident(truth_, d);
    const bool committed = d.verdict() == v1::VERDICT_DIAGNOSED;
    r_->set_final_committed(committed);
    r_->set_final_right(healthy_ ? !committed : committed && s.initiator_rank_correct());
    if (!healthy_ && r_->final_right() && !r_->has_right_seconds()) {
      r_->set_right_seconds(std::max(0.0, Seconds(t - fault_)));
      r_->set_right_final_only(true);
      right_at_ = t;
    }
  }

  std::optional<TimeNs> right_at() const { return right_at_; }

 private:
  const v1::Truth& truth_;
  bool healthy_;
  TimeNs fault_, end_;
  Announcer announcer_;
  v1::WatchResult* r_;
  std::optional<TimeNs> right_at_;
};

// The walk in simulated time: the lines due by the end of each read tick appended to `scratch`
// (one write per file), the watcher refreshed with the files that grew, and evaluated when the
// options say; each answer handed to `judge`. Returns the evaluations made.
Result<int> Walk(const ReplayPlan& plan, const Staged& staged, const fs::path& scratch,
                 engine::Watcher* w, const WatchEvalOptions& o, Judge* judge) {
  const auto every = static_cast<TimeNs>(o.every_s * kNsPerSec);
  const auto idle = static_cast<TimeNs>(o.idle_s * kNsPerSec);
  const auto tick = std::max<TimeNs>(1, static_cast<TimeNs>(o.read_every_s * kNsPerSec));
  std::vector<std::size_t> written(staged.texts.size(), 0);
  ReplayFiles files(staged, scratch);
  std::uint64_t signals_seen = ~std::uint64_t{0};
  std::optional<TimeNs> news_at, last_eval;
  bool read_since_eval = false, settled = false;
  int evaluations = 0;
  for (std::size_t next = 0; next < plan.steps.size();) {
    TimeNs due = kNever;
    if (news_at) due = last_eval ? std::max(*news_at, *last_eval + every) : *news_at;
    if (last_eval) due = std::min(due, *last_eval + idle);
    if (const auto settles = judge->settles_at())
      due = std::min(due, std::max(*settles, *last_eval + 1));
    const TimeNs t = plan.steps[next].time;
    if (t <= due) {  // the lines due by the tick's end (or the evaluation) reach the files
      const TimeNs at = std::min(due, plan.start + (t - plan.start + tick - 1) / tick * tick);
      std::vector<std::string> changed;
      for (const ReplayWrite& wr : TakeDue(plan, &next, at - plan.start, &written)) {
        DENPEX_RETURN_IF_ERROR(files.Write(wr));
        changed.push_back(staged.texts[wr.file]);
      }
      auto got = w->Refresh(&changed, at);
      if (!got.ok()) return got.status();
      read_since_eval |= *got > 0;
      if (w->bytes() > 0 && w->signals() != signals_seen && !news_at) news_at = at;
      continue;
    }
    const bool news = news_at.has_value();
    last_eval = due;
    news_at.reset();
    // Nothing read since a committed answer that was not a stall's: the same input gives it again.
    if (!news && !read_since_eval && settled && !judge->settles_at()) continue;
    signals_seen = w->signals();
    read_since_eval = false;
    ++evaluations;
    auto d = w->Evaluate(due);
    if (!d.ok()) continue;  // no readable line yet
    settled = d->verdict() == v1::VERDICT_DIAGNOSED && !w->stalled();
    judge->Provisional(*d, w->stalled(), due);
  }
  return evaluations;
}

}  // namespace

Result<v1::WatchResult> MeasureWatch(const fs::path& incident, const fs::path& scratch,
                                     const v1::Truth& truth, const v1::Diagnosis& final_answer,
                                     bool healthy, const WatchEvalOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto fault = scorer::FaultTime(truth);
  if (!fault)
    return Status::InvalidInput("the truth has no fault time: nothing to time answers from");
  const auto start = ParseRfc3339(truth.job().start_time());
  v1::WatchResult r;
  r.set_family(scorer::ScoreIncident(truth, final_answer).family());
  r.set_world_size(truth.job().world_size());
  r.set_healthy(healthy);

  auto watchdog = FirstWatchdog(incident, *fault, options.threads);
  if (!watchdog.ok()) return watchdog.status();
  if (watchdog->time) {
    r.set_watchdog_seconds(Seconds(*watchdog->time - *fault));
    r.set_watchdog_estimated(watchdog->estimated);
  }

  auto staged = ReadStaged(incident);
  if (!staged.ok()) return staged.status();
  const std::vector<std::string_view> texts(staged->contents.begin(), staged->contents.end());
  const ReplayPlan plan =
      PlanReplay(texts, staged->texts, start ? ToCivil(*start).year : ToCivil(0).year, start,
                 {.speed = 1, .pace_untimed = options.pace_untimed});
  std::error_code ec;
  fs::remove_all(scratch, ec);
  fs::create_directories(scratch, ec);
  if (ec) return Status::IoError(scratch.string() + ": cannot create: " + ec.message());
  auto w = engine::Watcher::Open(
      scratch, {.threads = options.threads, .stall_factor = options.stall_factor, .time_scale = 1});
  if (!w.ok()) return w.status();

  const TimeNs end = ParseRfc3339(truth.job().end_time()).value_or(plan.end);
  Judge judge(truth, healthy, *fault, end, options.settle_s, &r);
  auto evaluations = Walk(plan, *staged, scratch, &*w, options, &judge);
  if (!evaluations.ok()) return evaluations.status();
  r.set_evaluations(*evaluations);
  judge.Final(final_answer, end);  // the live watch gives it when the job ends
  if (judge.right_at() && watchdog->time)
    r.set_before_watchdog(*judge.right_at() < *watchdog->time);
  r.set_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return r;
}

namespace {

struct FamilyRow {
  int incidents = 0, right_live = 0, right_final = 0, with_watchdog = 0, before = 0;
  int false_alarms = 0, alarmed = 0, errors = 0;
  std::vector<double> delays;
  double gpu_hours = 0;
};

std::string Median(std::vector<double> v) {
  if (v.empty()) return "-";
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return Fixed(n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, 1);
}

void Add(const v1::WatchResult& r, FamilyRow* row) {
  ++row->incidents;
  if (!r.error().empty()) {
    ++row->errors;
    return;
  }
  if (r.has_right_seconds()) {
    ++(r.right_final_only() ? row->right_final : row->right_live);
    row->delays.push_back(r.right_seconds());
  }
  if (r.has_before_watchdog()) {
    ++row->with_watchdog;
    row->before += r.before_watchdog() ? 1 : 0;
  }
  row->false_alarms += r.false_alarms();
  row->alarmed += r.false_alarms() > 0 ? 1 : 0;
  row->gpu_hours += r.gpu_hours_recovered();
}

}  // namespace

std::string RenderWatchTable(const std::vector<v1::WatchResult>& results) {
  std::map<std::string, FamilyRow> rows;  // by family; healthy runs apart
  FamilyRow all;
  for (const auto& r : results) {
    Add(r, &rows[r.healthy() ? "healthy (" + r.family() + " at slowdown 1)" : r.family()]);
    if (!r.healthy()) Add(r, &all);
  }
  std::ostringstream out;
  out << "| family | incidents | right live | right only at the end | before the watchdog | "
         "median s fault -> right | false alarms (incidents) | mean GPU-h recovered |\n"
         "|---|---|---|---|---|---|---|---|\n";
  const auto line = [&out](const std::string& name, const FamilyRow& f) {
    out << "| " << name << " | " << f.incidents
        << (f.errors ? " (" + std::to_string(f.errors) + " failed)" : "") << " | " << f.right_live
        << " | " << f.right_final << " | "
        << (f.with_watchdog ? std::to_string(f.before) + "/" + std::to_string(f.with_watchdog)
                            : "-")
        << " | " << Median(f.delays) << " | " << f.false_alarms << " (" << f.alarmed << ") | "
        << Fixed(f.incidents > f.errors ? f.gpu_hours / (f.incidents - f.errors) : 0, 1) << " |\n";
  };
  for (const auto& [name, f] : rows) line(name, f);
  if (rows.size() > 1) line("all faults", all);
  bool first = true;
  for (const auto& r : results) {
    if (r.false_alarms() == 0 && r.error().empty()) continue;
    if (first) out << "\nfalse alarms and failed measurements:\n";
    first = false;
    out << "  " << r.suite() << "/" << r.incident() << " seed " << r.seed() << " (" << r.family()
        << (r.healthy() ? ", healthy" : "") << "): "
        << (r.error().empty()
                ? std::to_string(r.false_alarms()) + " false alarm(s), the first " + r.false_alarm()
                : "failed: " + r.error())
        << "\n";
  }
  first = true;
  for (const auto& r : results) {
    if (!r.has_right_ahead_seconds()) continue;
    if (first) {
      out << "\nright before the fault (lines without a stamp replayed before they were "
             "written):\n";
    }
    first = false;
    out << "  " << r.suite() << "/" << r.incident() << " seed " << r.seed() << " (" << r.family()
        << "): " << Fixed(r.right_ahead_seconds(), 1) << " s before the fault\n";
  }
  return out.str();
}

}  // namespace denpex::cli
