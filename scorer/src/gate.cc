// The regression gate: a committed baseline of tracked aggregate metrics, and the check
// that none of them dropped by more than the tolerance. Metrics are read from
// AggregateScore by field name (protobuf reflection), so any aggregate field can be tracked.
#include <cmath>
#include <optional>

#include "denpex/scorer/scorer.h"
#include "text_helpers.h"

namespace denpex::scorer {
namespace {

constexpr double kDefaultTolerance = 0.005;

struct Tracked {
  const char* metric;
  bool lower_is_better;
  int (v1::AggregateScore::*applies)() const;  // a count that must be > 0; null: always
};

// Quality metrics only: wall times and GPU-hours depend on the machine, not the engine.
constexpr Tracked kTracked[] = {
    {"initiator_rank_top1", false, nullptr},
    {"initiator_node_top1", false, nullptr},
    {"initiator_rank_top3", false, nullptr},
    {"owner_accuracy", false, nullptr},
    {"failure_class_accuracy", false, nullptr},
    {"evidence_recall", false, nullptr},
    {"coverage", false, nullptr},
    {"evidence_precision", false, &v1::AggregateScore::precision_incidents},
    {"precision_committed", false, &v1::AggregateScore::committed},
    {"committed_wrong_rate", true, &v1::AggregateScore::committed},
    {"cascade_compression", false, &v1::AggregateScore::cascade_incidents},
    {"cascade_purity", false, &v1::AggregateScore::purity_incidents},
    {"checkpoint_accuracy", false, &v1::AggregateScore::checkpoint_incidents},
    {"checkpoint_unsafe_rate", true, &v1::AggregateScore::checkpoint_incidents},
    {"checkpoint_excess_steps", true, &v1::AggregateScore::checkpoint_safe_resumes},
    {"recurrence_accuracy", false, &v1::AggregateScore::recurrence_incidents},
    {"link_accuracy", false, &v1::AggregateScore::link_incidents},
};

const Tracked* TrackedMetric(const std::string& metric) {
  for (const auto& t : kTracked) {
    if (metric == t.metric) return &t;
  }
  return nullptr;
}

bool GatedGroup(const std::string& group) {
  return group == "overall" || group.rfind("family:", 0) == 0 || group.rfind("scale:", 0) == 0;
}

std::optional<double> Read(const v1::AggregateScore& g, const std::string& metric) {
  const auto* field = g.GetDescriptor()->FindFieldByName(metric);
  if (field == nullptr || field->is_repeated()) return std::nullopt;
  const auto* refl = g.GetReflection();
  switch (field->cpp_type()) {
    case google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE: return refl->GetDouble(g, field);
    case google::protobuf::FieldDescriptor::CPPTYPE_INT32: return refl->GetInt32(g, field);
    default: return std::nullopt;
  }
}

const v1::AggregateScore* Find(const v1::EvalReport& report, const std::string& strategy,
                               const std::string& group) {
  for (const auto& g : report.aggregates()) {
    if (g.strategy() == strategy && g.group() == group) return &g;
  }
  return nullptr;
}

}  // namespace

v1::GateBaseline MakeGateBaseline(const v1::EvalReport& report, double tolerance) {
  v1::GateBaseline b;
  b.set_tolerance(tolerance > 0 ? tolerance : kDefaultTolerance);
  const std::string strategy = report.run().strategies_size() > 0
                                   ? report.run().strategies(0)
                                   : (report.aggregates_size() > 0
                                          ? report.aggregates(0).strategy()
                                          : std::string());
  for (const auto& g : report.aggregates()) {
    if (g.strategy() != strategy || !GatedGroup(g.group())) continue;
    for (const auto& t : kTracked) {
      if (t.applies != nullptr && (g.*t.applies)() == 0) continue;
      auto* m = b.add_metrics();
      m->set_strategy(strategy);
      m->set_group(g.group());
      m->set_metric(t.metric);
      m->set_value(*Read(g, t.metric));
      m->set_lower_is_better(t.lower_is_better);
    }
  }
  for (const auto& g : report.shape_aggregates()) {
    if (g.pairs() == 0) continue;
    auto* f = b.add_shape_floors();
    f->set_shape(g.shape());
    f->set_same_share(g.same_share());
    f->set_wrong_share(g.wrong_share());
  }
  return b;
}

std::vector<std::string> CheckGate(const v1::GateBaseline& baseline,
                                   const v1::EvalReport& report) {
  const double tol = baseline.tolerance() > 0 ? baseline.tolerance() : kDefaultTolerance;
  std::vector<std::string> failures;
  for (const auto& m : baseline.metrics()) {
    const std::string name = m.strategy() + " " + m.group() + " " + m.metric();
    const v1::AggregateScore* g = Find(report, m.strategy(), m.group());
    if (g == nullptr) {
      failures.push_back(name + ": no such group in this report (did the suite change? "
                                "refresh the baseline)");
      continue;
    }
    // A metric that applies to no incident of the group now is undefined there, not dropped
    // (evidence precision where neither truth nor answer has an initiating line).
    if (const Tracked* t = TrackedMetric(m.metric()); t != nullptr && t->applies != nullptr && ((*g).*t->applies)() == 0) {
      continue;
    }
    const auto now = Read(*g, m.metric());
    if (!now) {
      failures.push_back(name + ": not a numeric AggregateScore field");
      continue;
    }
    const double drop = m.lower_is_better() ? *now - m.value() : m.value() - *now;
    if (drop > tol) {
      failures.push_back(name + ": " + Fixed(m.value(), 4) + " -> " + Fixed(*now, 4) +
                         (m.lower_is_better() ? " (rose by " : " (dropped by ") +
                         Fixed(std::fabs(drop), 4) + ", tolerance " + Fixed(tol, 4) + ")");
    }
  }
  // Shapes: the share of `same` may drop by the tolerance at most; `wrong` may not rise.
  for (const auto& f : baseline.shape_floors()) {
    const std::string name = "shape " + f.shape();
    const v1::ShapeAggregate* g = nullptr;
    for (const auto& a : report.shape_aggregates()) {
      if (a.shape() == f.shape()) g = &a;
    }
    if (g == nullptr || g->pairs() == 0) {
      failures.push_back(name + ": not in this report (run with --shapes " + f.shape() + ")");
      continue;
    }
    if (f.same_share() - g->same_share() > tol) {
      failures.push_back(name + " same: " + Fixed(f.same_share(), 4) + " -> " +
                         Fixed(g->same_share(), 4) + " (dropped by " +
                         Fixed(f.same_share() - g->same_share(), 4) + ", tolerance " +
                         Fixed(tol, 4) + ")");
    }
    if (g->wrong_share() > f.wrong_share() + 1e-9) {
      failures.push_back(name + " wrong: " + Fixed(f.wrong_share(), 4) + " -> " +
                         Fixed(g->wrong_share(), 4) + " (a committed wrong answer more)");
    }
  }
  return failures;
}

}  // namespace denpex::scorer
