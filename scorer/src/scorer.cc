// Per-incident metrics and their aggregation. The definitions here are the ones
// docs/evaluation.md publishes; change both together.
#include "denpex/scorer/scorer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace denpex::scorer {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "FAULT_KIND_SIGKILL" -> "sigkill": the family a truth belongs to.
std::string FamilyOf(const v1::Truth& truth) {
  if (truth.events_size() == 0) return "none";
  std::string kind = truth.events(0).kind();
  const std::string prefix = "FAULT_KIND_";
  if (kind.rfind(prefix, 0) == 0) kind = kind.substr(prefix.size());
  return Lower(kind);
}

using Citation = std::pair<std::string, int>;  // (file, line)

double EvidenceRecall(const v1::Truth& truth, const std::set<Citation>& cited) {
  if (truth.evidence_size() == 0) return 1.0;
  int found = 0;
  for (const auto& e : truth.evidence()) found += cited.count({e.file(), e.line()}) ? 1 : 0;
  return static_cast<double>(found) / truth.evidence_size();
}

// Of the lines the diagnosis cites as initiating, the share the truth requires.
double EvidencePrecision(const v1::Truth& truth, const v1::Diagnosis& d) {
  std::set<Citation> required;
  for (const auto& e : truth.evidence()) required.insert({e.file(), e.line()});
  int initiating = 0, right = 0;
  for (const auto& e : d.evidence()) {
    if (e.role() != v1::EVIDENCE_ROLE_INITIATING) continue;
    ++initiating;
    right += required.count({e.file(), e.line()}) ? 1 : 0;
  }
  if (initiating == 0) return required.empty() ? 1.0 : 0.0;
  return static_cast<double>(right) / initiating;
}

bool SameNode(const std::string& a, const std::string& b) {
  return !a.empty() && Lower(a) == Lower(b);
}

}  // namespace

v1::IncidentScore ScoreIncident(const v1::Truth& truth, const v1::Diagnosis& d) {
  v1::IncidentScore s;
  s.set_incident(truth.scenario());
  s.set_seed(truth.seed());
  s.set_strategy(d.strategy());
  s.set_family(FamilyOf(truth));
  s.set_world_size(truth.job().world_size());
  const bool committed = d.verdict() == v1::VERDICT_DIAGNOSED;
  s.set_inconclusive(!committed);

  const auto& want = truth.initiator();
  const bool node_ok = committed && SameNode(d.initiator().node(), want.node());
  // A truth that names only a node (rank -1) is matched at node level.
  const bool rank_ok = committed && (want.rank() >= 0 ? d.initiator().rank() == want.rank() : node_ok);
  s.set_initiator_node_correct(node_ok);
  s.set_initiator_rank_correct(rank_ok);
  bool top3 = false;
  for (int i = 0; i < std::min(3, d.candidates_size()); ++i) {
    top3 |= want.rank() >= 0 ? d.candidates(i).rank() == want.rank()
                             : SameNode(d.candidates(i).node(), want.node());
  }
  s.set_initiator_rank_top3(top3 || rank_ok);
  s.set_owner_correct(committed && d.owner() == truth.owner());
  s.set_failure_class_correct(committed && d.initiator().failure_class() == want.failure_class());

  std::set<Citation> cited;
  for (const auto& e : d.evidence()) cited.insert({e.file(), e.line()});
  s.set_evidence_recall(EvidenceRecall(truth, cited));
  s.set_evidence_precision(committed ? EvidencePrecision(truth, d) : 0.0);
  return s;
}

namespace {
struct Acc {
  int n = 0, committed = 0, rank = 0, node = 0, top3 = 0, owner = 0, cls = 0;
  double recall = 0, precision = 0;
  void Add(const v1::IncidentScore& s) {
    ++n;
    committed += s.inconclusive() ? 0 : 1;
    rank += s.initiator_rank_correct();
    node += s.initiator_node_correct();
    top3 += s.initiator_rank_top3();
    owner += s.owner_correct();
    cls += s.failure_class_correct();
    recall += s.evidence_recall();
    precision += s.evidence_precision();
  }
};

double Ratio(double a, int b) { return b == 0 ? 0.0 : a / b; }
}  // namespace

std::vector<v1::AggregateScore> Aggregate(const std::vector<v1::IncidentScore>& scores) {
  // Key: (strategy order of first appearance, group). "overall" sorts before "family:*".
  std::vector<std::string> strategies;
  std::map<std::pair<std::string, std::string>, Acc> acc;
  for (const auto& s : scores) {
    if (std::find(strategies.begin(), strategies.end(), s.strategy()) == strategies.end()) {
      strategies.push_back(s.strategy());
    }
    acc[{s.strategy(), "overall"}].Add(s);
    acc[{s.strategy(), "family:" + s.family()}].Add(s);
  }
  std::vector<v1::AggregateScore> out;
  for (const auto& strategy : strategies) {
    for (const auto& [key, a] : acc) {
      if (key.first != strategy) continue;
      v1::AggregateScore g;
      g.set_strategy(strategy);
      g.set_group(key.second);
      g.set_incidents(a.n);
      g.set_committed(a.committed);
      g.set_initiator_rank_top1(Ratio(a.rank, a.n));
      g.set_initiator_node_top1(Ratio(a.node, a.n));
      g.set_initiator_rank_top3(Ratio(a.top3, a.n));
      g.set_owner_accuracy(Ratio(a.owner, a.n));
      g.set_failure_class_accuracy(Ratio(a.cls, a.n));
      g.set_evidence_recall(Ratio(a.recall, a.n));
      g.set_evidence_precision(Ratio(a.precision, a.committed));
      g.set_coverage(Ratio(a.committed, a.n));
      g.set_precision_committed(Ratio(a.rank, a.committed));
      out.push_back(std::move(g));
    }
  }
  // Within a strategy, "overall" first, then families alphabetically (map order).
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    auto idx = [&](const std::string& st) {
      return std::find(strategies.begin(), strategies.end(), st) - strategies.begin();
    };
    return std::make_tuple(idx(a.strategy()), a.group() != "overall") <
           std::make_tuple(idx(b.strategy()), b.group() != "overall");
  });
  return out;
}

namespace {
std::string Pct(double v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%5.1f%%", 100.0 * v);
  return buf;
}
std::string Pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}
}  // namespace

std::string RenderTable(const v1::EvalReport& report) {
  std::string out;
  out += "| strategy    | group                | n    | rank top-1 | node top-1 | rank top-3 | owner  | class  | coverage | evidence recall |\n";
  out += "|-------------|----------------------|------|------------|------------|------------|--------|--------|----------|-----------------|\n";
  for (const auto& g : report.aggregates()) {
    out += "| " + Pad(g.strategy(), 11) + " | " + Pad(g.group(), 20) + " | " +
           Pad(std::to_string(g.incidents()), 4) + " | " + Pad(Pct(g.initiator_rank_top1()), 10) +
           " | " + Pad(Pct(g.initiator_node_top1()), 10) + " | " +
           Pad(Pct(g.initiator_rank_top3()), 10) + " | " + Pct(g.owner_accuracy()) + " | " +
           Pct(g.failure_class_accuracy()) + " | " + Pad(Pct(g.coverage()), 8) + " | " +
           Pad(Pct(g.evidence_recall()), 15) + " |\n";
  }
  return out;
}

std::string RenderIncident(const v1::IncidentScore& s) {
  auto yn = [](bool b) { return b ? "yes" : "no"; };
  std::string out = "  [" + s.strategy() + "] " + s.incident() + " seed " + std::to_string(s.seed()) +
                    ": ";
  if (s.inconclusive()) out += "INCONCLUSIVE; ";
  out += std::string("initiator rank ") + (s.initiator_rank_correct() ? "RIGHT" : "WRONG") +
         ", node " + yn(s.initiator_node_correct()) + ", top-3 " + yn(s.initiator_rank_top3()) +
         ", owner " + yn(s.owner_correct()) + ", class " + yn(s.failure_class_correct()) +
         ", evidence recall " + Pct(s.evidence_recall()) + "\n";
  return out;
}

}  // namespace denpex::scorer
