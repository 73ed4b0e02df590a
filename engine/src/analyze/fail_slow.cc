// Fail-slow detection from per-rank step timers (see straggler.h).
#include "analyze/fail_slow.h"

#include "analyze/hardware.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "analyze/cascade.h"
#include "analyze/describe.h"

namespace denpex::engine {
namespace {

// Each rank's timer lines in print order (its k-th line is its k-th step).
using Series = std::vector<std::vector<std::int32_t>>;

Series TimerSeries(const Incident& inc) {
  Series series;
  for (const std::int32_t i : inc.OfKinds({Kind::kStepTimers})) {
    const Event& e = inc.events[i];
    if (e.rank < 0) continue;
    if (e.rank >= static_cast<std::int32_t>(series.size())) series.resize(e.rank + 1);
    series[e.rank].push_back(static_cast<std::int32_t>(i));
  }
  return series;
}

const StepTimers& TimersOf(const Incident& inc, std::int32_t event) { return std::get<StepTimers>(inc.events[event].detail); }

double Median(std::vector<double>& v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// Each rank's median compute in the control run (0: the rank has no timers there).
std::vector<double> ControlBaseline(const Incident& control) {
  const Series series = TimerSeries(control);
  std::vector<double> base(series.size(), 0.0), values;
  for (std::size_t r = 0; r < series.size(); ++r) {
    values.clear();
    for (std::int32_t e : series[r]) values.push_back(TimersOf(control, e).compute_ms);
    if (!values.empty()) base[r] = Median(values);
  }
  return base;
}

// The shape (timer names) most of the job's timer lines have; a line of another shape lacks
// timers (a terminal's hard wrap cut it) or is another logger's, and is compared with nothing.
std::uint32_t CommonShape(const Incident& inc, const Series& series) {
  std::vector<std::uint32_t> shapes;
  for (const auto& s : series) {
    for (std::int32_t e : s) {
      if (const std::uint32_t shape = TimersOf(inc, e).shape; shape != 0) shapes.push_back(shape);
    }
  }
  if (shapes.empty()) return 0;
  std::sort(shapes.begin(), shapes.end());
  std::uint32_t best = shapes.front();
  std::size_t best_n = 0;
  for (std::size_t i = 0, j; i < shapes.size(); i = j) {
    for (j = i; j < shapes.size() && shapes[j] == shapes[i]; ++j) {}
    if (j - i > best_n) best = shapes[i], best_n = j - i;
  }
  return best;
}

// One step across ranks: the medians and the compute a rank must exceed to be slow.
struct StepStats {
  double compute = 0, wait = 0, threshold = 0;
  bool usable = false;
};

struct Detector {
  const Incident& inc;
  Series series;
  std::vector<double> base;  // per-rank control compute; empty without a control
  std::uint32_t shape = 0;   // CommonShape: lines of another shape are not comparable
  std::vector<StepStats> steps;

  double Compute(std::int32_t rank, std::size_t k) const {
    const StepTimers& t = TimersOf(inc, series[rank][k]);
    if (t.shape != shape) return -1;
    const double c = t.compute_ms;
    if (base.empty()) return c;
    const double b = rank < static_cast<std::int32_t>(base.size()) ? base[rank] : 0.0;
    return b > 0 ? c / b : -1;  // -1: not comparable
  }
  double Wait(std::int32_t rank, std::size_t k) const { return TimersOf(inc, series[rank][k]).wait_ms; }

  void Measure() {
    std::size_t n = 0;
    for (const auto& s : series) n = std::max(n, s.size());
    steps.resize(n);
    std::vector<double> compute, wait, dev;
    for (std::size_t k = 0; k < n; ++k) {
      compute.clear(), wait.clear(), dev.clear();
      for (std::size_t r = 0; r < series.size(); ++r) {
        if (series[r].size() <= k) continue;
        const double c = Compute(static_cast<std::int32_t>(r), k);
        if (c < 0) continue;
        compute.push_back(c);
        wait.push_back(Wait(static_cast<std::int32_t>(r), k));
      }
      if (static_cast<std::int32_t>(compute.size()) < kSlowMinRanks) continue;
      StepStats& st = steps[k];
      st.compute = Median(compute);
      st.wait = Median(wait);
      for (double c : compute) dev.push_back(std::fabs(c - st.compute));
      const double sigma = 1.4826 * Median(dev);
      st.threshold = st.compute + std::max(kSlowMinExcess * st.compute, kSlowSigmas * sigma);
      st.usable = st.compute > 0;
    }
  }

  bool Slow(std::int32_t rank, std::size_t k) const {
    const StepStats& st = steps[k];
    if (!st.usable) return false;
    const double c = Compute(rank, k);
    return c > st.threshold && Wait(rank, k) < st.wait;
  }
};

// A rank's verdict: slow for kSlowMinRun steps in a row and in kSlowMinShare of the steps from
// its first slow one on.
struct RankVerdict {
  std::int32_t rank = -1;
  std::int32_t first = -1;  // step index of its first slow step
  std::int32_t slow = 0;
  double compute_ratio = 0, wait_ratio = 0;
};

std::optional<RankVerdict> Judge(const Detector& d, std::int32_t rank) {
  const auto& s = d.series[rank];
  std::int32_t run = 0, best_run = 0, first = -1, slow = 0;
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (d.Slow(rank, k)) {
      if (first < 0) first = static_cast<std::int32_t>(k);
      ++slow;
      best_run = std::max(best_run, ++run);
    } else {
      run = 0;
    }
  }
  if (best_run < kSlowMinRun) return std::nullopt;
  const auto span = static_cast<std::int32_t>(s.size()) - first;
  if (slow < kSlowMinShare * span) return std::nullopt;
  RankVerdict v{.rank = rank, .first = first, .slow = slow};
  std::vector<double> cr, wr;
  for (std::size_t k = static_cast<std::size_t>(first); k < s.size(); ++k) {
    if (!d.Slow(rank, k)) continue;
    cr.push_back(d.Compute(rank, k) / d.steps[k].compute);
    wr.push_back(d.steps[k].wait > 0 ? d.Wait(rank, k) / d.steps[k].wait : 0.0);
  }
  v.compute_ratio = Median(cr);
  v.wait_ratio = Median(wr);
  return v;
}

// The facts' node (agent logs, srun task lines), else the node of the rank's timer lines.
std::int32_t NodeOfRank(const Incident& inc, const JobFacts& facts, const Detector& d, std::int32_t rank) {
  if (rank < static_cast<std::int32_t>(facts.ranks.size()) && facts.ranks[rank].node >= 0) return facts.ranks[rank].node;
  return inc.events[d.series[rank].front()].node;
}

// A healthy rank's timer line of step k: the lowest rank not slow in it.
std::int32_t PeerLine(const Detector& d, const std::set<std::int32_t>& slow, std::size_t k) {
  for (std::size_t r = 0; r < d.series.size(); ++r) {
    const auto rank = static_cast<std::int32_t>(r);
    if (d.series[r].size() > k && !slow.count(rank) && !d.Slow(rank, k)) return d.series[r][k];
  }
  return -1;
}

std::string Ratio(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", x);
  return buf;
}

}  // namespace

std::optional<Straggler> FindFailSlow(const Incident& inc, const JobFacts& facts, const Incident* control) {
  Detector d{.inc = inc, .series = TimerSeries(inc)};
  d.shape = CommonShape(inc, d.series);
  if (control != nullptr) d.base = ControlBaseline(*control);
  d.Measure();
  std::vector<RankVerdict> verdicts;
  std::int32_t reporting = 0;
  for (std::size_t r = 0; r < d.series.size(); ++r) {
    if (d.series[r].empty()) continue;
    ++reporting;
    if (auto v = Judge(d, static_cast<std::int32_t>(r))) verdicts.push_back(*v);
  }
  if (verdicts.empty() || reporting < kSlowMinRanks) return std::nullopt;
  // Everyone slow is not a straggler: more than an eighth of the ranks (and more than a node).
  if (verdicts.size() > 8 && verdicts.size() * 8 > static_cast<std::size_t>(reporting)) return std::nullopt;
  std::sort(verdicts.begin(), verdicts.end(), [](const RankVerdict& a, const RankVerdict& b) {
    return std::tie(b.compute_ratio, a.rank) < std::tie(a.compute_ratio, b.rank);
  });
  const RankVerdict& lead = verdicts.front();
  Straggler s;
  std::set<std::int32_t> nodes, slow;
  for (const RankVerdict& v : verdicts) {
    s.ranks.push_back(v.rank);
    slow.insert(v.rank);
    nodes.insert(NodeOfRank(inc, facts, d, v.rank));
  }
  s.node = NodeOfRank(inc, facts, d, lead.rank);
  s.whole_node = verdicts.size() > 1 && nodes.size() == 1 && s.node >= 0;
  s.unplaced = verdicts.size() > 1 && nodes.contains(-1);
  // For a node, its lowest slow rank's line leads the evidence (the ranks are alike).
  const std::int32_t cited = s.whole_node ? *slow.begin() : lead.rank;
  const RankVerdict& cv = *std::find_if(verdicts.begin(), verdicts.end(), [&](const RankVerdict& v) { return v.rank == cited; });
  s.first_event = d.series[cited][cv.first];
  s.peer_event = PeerLine(d, slow, static_cast<std::size_t>(cv.first));
  s.slow_steps = lead.slow;
  s.steps = static_cast<std::int32_t>(d.series[lead.rank].size());
  s.compute_ratio = lead.compute_ratio;
  s.wait_ratio = lead.wait_ratio;
  s.against_control = control != nullptr;
  const Event& first = inc.events[s.first_event];
  if (first.clock != Clock::kNone) {
    const StepTimers& t = TimersOf(inc, s.first_event);
    s.since = first.time - static_cast<TimeNs>((t.compute_ms + t.wait_ms) * kNsPerMs);
  }
  return s;
}

// A PCIe link trained down (x16 -> x4, a lower generation) slows the GPU's host transfers with no
// clock reason set; only dcgmi diag -r 2/3's PCIe test shows it (DCGM's "running at PCI link width
// 4X" / "PCI link generation" message, docs/log_formats.md §20).
static bool CorroboratePcieLink(const Incident& inc, const GpuHealth& g, const std::string& pci,
                                const Reason& how, Finding* f) {
  if (g.diag_failed != "PCIe") return false;
  const bool downgraded =
      g.dcgm.find("running at PCI link width") != std::string::npos || g.dcgm.find("running at PCI link generation") != std::string::npos;
  f->gpu = pci;
  f->reason.Add(ReasonId::kGpuFailedPcieTest,
                {{"pci", pci}, {"by", how}, {"where", HealthWhere(inc, g.diag_line)}});
  if (downgraded) f->reason.Add(ReasonId::kPcieDowngraded);
  f->reason.Add(ReasonId::kHardwareConfirms);
  if (g.diag_line.file >= 0) {
    f->lines.push_back({static_cast<std::uint32_t>(g.diag_line.file), g.diag_line.span, v1::EVIDENCE_ROLE_CORROBORATING});
  }
  return true;
}

// nvidia-smi -q or DCGM showing the straggler's GPU with its clocks held down (HW slowdown,
// thermal, power brake), or dcgmi diag failing its PCIe test (a link downgrade), corroborates
// the timing: the finding says so and cites the line.
static void CorroborateThrottle(const Incident& inc, const JobFacts& facts, std::int32_t rank, Finding* f) {
  if (facts.ranks[rank].node < 0) return;
  const NodeGpuHealth health = ReadNodeGpuHealth(inc, facts.ranks[rank].node);
  if (health.gpus.empty()) return;
  Reason how;
  const std::string pci = GpuOfRank(inc, facts, rank, &how, &health);
  const GpuHealth* g = health.ByPci(pci);
  if (g != nullptr && !g->Throttled() && CorroboratePcieLink(inc, *g, pci, how, f)) return;
  if (g != nullptr && g->Throttled()) f->gpu = pci;
  if (g == nullptr || !g->Throttled()) return;
  f->reason.Add(ReasonId::kClocksHeldDown, {{"pci", pci}, {"by", how}});
  f->reason.Add(g->hw_thermal || g->sw_thermal ? ReasonId::kThermalSlowdown
                : g->hw_power_brake            ? ReasonId::kPowerBrakeSlowdown
                                               : ReasonId::kHwSlowdown);
  f->reason.Add(ReasonId::kThrottleLine, {{"where", HealthWhere(inc, g->throttle_line)}});
  if (g->temperature >= 0)
    f->reason.Add(ReasonId::kTemperature, {{"celsius", std::to_string(g->temperature)}});
  f->reason.Add(ReasonId::kHardwareConfirmsClose);
  if (g->throttle_line.file >= 0) {
    f->lines.push_back({static_cast<std::uint32_t>(g->throttle_line.file), g->throttle_line.span, v1::EVIDENCE_ROLE_CORROBORATING});
  }
}

void DiagnoseFailSlow(const Incident& inc, const JobFacts& facts, const Straggler& s, Finding* f) {
  const std::int32_t lead = s.lead();
  const std::string node = NodeName(inc, s.node);
  f->time = s.since;
  f->candidates.clear();
  for (std::size_t i = 0; i < s.ranks.size() && i < 10; ++i) {
    f->candidates.push_back({s.ranks[i], s.node, 1.0 / static_cast<double>(i + 1)});
  }
  // How the lead rank is slow: "computed 2.1x as long as the median rank in 40 of its 50 timed
  // steps ...".
  const Reason measure =
      Say(s.against_control ? ReasonId::kOwnStepsInControlRun : ReasonId::kMedianRank);
  const Reason how = Say(ReasonId::kComputedAsLongAs, {{"ratio", Ratio(s.compute_ratio)},
                                                       {"measure", measure},
                                                       {"slow", std::to_string(s.slow_steps)},
                                                       {"steps", std::to_string(s.steps)},
                                                       {"wait", Ratio(s.wait_ratio)}});
  const Reason since =
      s.since ? Say(ReasonId::kFromAbout, {{"time", ClockTime(*s.since)}}) : Reason();
  const std::string ranks = RankList(s.ranks);
  const std::string lead_rank = std::to_string(lead);
  if (s.unplaced) {
    Commit({.failure_class = v1::FAILURE_CLASS_STRAGGLER,
            .owner = v1::OWNER_UNKNOWN,
            .confidence = 0.6},
           f);
    f->reason = Say(ReasonId::kSlowRanks,
                    {{"ranks", ranks}, {"lead", lead_rank}, {"how", how}, {"since", since}});
    f->recovery.push_back(
        {"collect_logs", "", Say(ReasonId::kFindSlowRanksNodes, {{"ranks", ranks}})});
  } else if (s.whole_node) {
    Commit({.node = s.node,
            .failure_class = v1::FAILURE_CLASS_STRAGGLER,
            .owner = v1::OWNER_HOST,
            .confidence = 0.85},
           f);
    f->reason = Say(
        ReasonId::kEverySlowRankOn,
        {{"node", node}, {"ranks", ranks}, {"lead", lead_rank}, {"how", how}, {"since", since}});
    f->recovery.push_back(
        {"drain_node", node, Say(ReasonId::kDrainSlowNode, {{"node", node}, {"since", since}})});
  } else {
    const RankFacts* r = lead < static_cast<std::int32_t>(facts.ranks.size()) ? &facts.ranks[lead] : nullptr;
    Commit({.rank = lead,
            .node = s.node,
            .local_rank = r != nullptr ? r->local_rank : inc.events[s.first_event].local_rank,
            .failure_class = v1::FAILURE_CLASS_STRAGGLER,
            .owner = v1::OWNER_GPU_HARDWARE,
            .confidence = s.ranks.size() == 1 ? 0.9 : 0.7},
           f);
    f->reason = Say(ReasonId::kSlowRankOn,
                    {{"rank", lead_rank}, {"node", node}, {"how", how}, {"since", since}});
    if (s.ranks.size() > 1)
      f->reason.Add(ReasonId::kAlsoSlow,
                    {{"ranks", RankList({s.ranks.begin() + 1, s.ranks.end()})}});
    if (r != nullptr) CorroborateThrottle(inc, facts, lead, f);
    const Reason gpu =
        f->local_rank >= 0
            ? Say(ReasonId::kGpuOfNode, {{"gpu", std::to_string(f->local_rank)}, {"node", node}})
            : Say(ReasonId::kGpuOfRank, {{"rank", lead_rank}});
    f->recovery.push_back(
        {"inspect_gpu", node,
         Say(ReasonId::kCheckThrottledGpu, {{"gpu", gpu}, {"rank", lead_rank}, {"how", how}})});
  }
  f->evidence.push_back({s.first_event, v1::EVIDENCE_ROLE_INITIATING});
  if (s.peer_event >= 0) f->evidence.push_back({s.peer_event, v1::EVIDENCE_ROLE_CORROBORATING});
  std::vector<std::int32_t> initiators = s.whole_node || s.unplaced ? s.ranks : std::vector<std::int32_t>{lead};
  std::sort(initiators.begin(), initiators.end());
  f->cascade = SummarizeCascade(inc, facts, initiators, s.node);
}

}  // namespace denpex::engine
