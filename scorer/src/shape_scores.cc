// The shape axis (docs/evaluation.md "Collection shapes"): the engine's answer on a re-laid
// copy of an incident compared with its answer on the canonical layout and with the truth,
// the per-shape aggregates, and their text table.
#include <algorithm>
#include <map>

#include "denpex/scorer/scorer.h"
#include "text_helpers.h"

namespace denpex::scorer {
namespace {

bool ClassGiven(v1::FailureClass c) { return c != v1::FAILURE_CLASS_UNSPECIFIED; }
bool OwnerGiven(v1::Owner o) { return o != v1::OWNER_UNSPECIFIED && o != v1::OWNER_UNKNOWN; }

v1::ShapeAnswer AnswerOf(v1::Verdict verdict, bool has_initiator, const v1::Initiator& i,
                         v1::Owner owner) {
  v1::ShapeAnswer a;
  a.set_committed(verdict == v1::VERDICT_DIAGNOSED);
  a.set_rank(has_initiator ? i.rank() : -1);
  if (has_initiator) a.set_node(i.node());
  a.set_failure_class(has_initiator ? i.failure_class() : v1::FAILURE_CLASS_UNSPECIFIED);
  a.set_owner(owner);
  return a;
}

// True when the copy's node name `shaped` stands for the canonical node `node`.
bool NodeMatch(const std::string& shaped, const std::string& node, const NodeAliases& aliases) {
  const std::string s = Lower(shaped), n = Lower(node);
  if (s == n) return true;
  auto it = aliases.find(s);
  if (it == aliases.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [&n](const std::string& old) { return Lower(old) == n; });
}

// Committed and in conflict with the truth on rank, node or class (or any committed answer
// where the truth is INCONCLUSIVE; a rank or node where the truth is job-level).
bool Wrong(const v1::ShapeAnswer& a, const v1::ShapeAnswer& t, const NodeAliases& al) {
  if (!a.committed()) return false;
  if (!t.committed()) return true;
  if (t.rank() < 0 && t.node().empty() && (a.rank() >= 0 || !a.node().empty())) return true;
  if (a.rank() >= 0 && t.rank() >= 0 && a.rank() != t.rank()) return true;
  if (!a.node().empty() && !t.node().empty() && !NodeMatch(a.node(), t.node(), al)) return true;
  return ClassGiven(a.failure_class()) && ClassGiven(t.failure_class()) &&
         a.failure_class() != t.failure_class();
}

bool Same(const v1::ShapeAnswer& a, const v1::ShapeAnswer& c, const NodeAliases& al) {
  if (a.committed() != c.committed()) return false;
  if (!a.committed()) return true;
  const bool node = a.node().empty() == c.node().empty() &&
                    (c.node().empty() || NodeMatch(a.node(), c.node(), al));
  return a.rank() == c.rank() && node && a.failure_class() == c.failure_class() &&
         a.owner() == c.owner();
}

// Every field the copy's answer gives agrees with the canonical one, and it gives fewer.
bool Coarser(const v1::ShapeAnswer& a, const v1::ShapeAnswer& c, const NodeAliases& al) {
  if (!a.committed() || !c.committed()) return false;
  bool fewer = false;
  if (a.rank() >= 0) {
    if (a.rank() != c.rank()) return false;
  } else {
    fewer |= c.rank() >= 0;
  }
  if (!a.node().empty()) {
    if (c.node().empty() || !NodeMatch(a.node(), c.node(), al)) return false;
  } else {
    fewer |= !c.node().empty();
  }
  if (ClassGiven(a.failure_class())) {
    if (a.failure_class() != c.failure_class()) return false;
  } else {
    fewer |= ClassGiven(c.failure_class());
  }
  if (OwnerGiven(a.owner())) {
    if (a.owner() != c.owner()) return false;
  } else {
    fewer |= OwnerGiven(c.owner());
  }
  return fewer;
}

}  // namespace

v1::ShapeResult CompareShape(const v1::Truth& truth, const v1::Diagnosis& canonical,
                             const v1::Diagnosis& shaped, const NodeAliases& aliases) {
  v1::ShapeResult r;
  *r.mutable_truth() = AnswerOf(truth.verdict() == v1::VERDICT_INCONCLUSIVE || !truth.has_initiator()
                                    ? v1::VERDICT_INCONCLUSIVE
                                    : v1::VERDICT_DIAGNOSED,
                                truth.has_initiator(), truth.initiator(), truth.owner());
  *r.mutable_canonical() = AnswerOf(canonical.verdict(), canonical.has_initiator(),
                                    canonical.initiator(), canonical.owner());
  *r.mutable_answer() =
      AnswerOf(shaped.verdict(), shaped.has_initiator(), shaped.initiator(), shaped.owner());
  const auto& a = r.answer();
  const auto& c = r.canonical();
  v1::ShapeOutcome o = v1::SHAPE_OUTCOME_DIFFERS;
  if (Wrong(a, r.truth(), aliases)) {
    o = v1::SHAPE_OUTCOME_WRONG;
  } else if (Same(a, c, aliases)) {
    o = v1::SHAPE_OUTCOME_SAME;
  } else if (!a.committed() && c.committed()) {
    o = v1::SHAPE_OUTCOME_ABSTAINED;
  } else if (Coarser(a, c, aliases)) {
    o = v1::SHAPE_OUTCOME_COARSER;
  }
  r.set_outcome(o);
  return r;
}

std::vector<v1::ShapeAggregate> AggregateShapes(const std::vector<v1::ShapeResult>& results,
                                                const std::vector<std::string>& shapes) {
  std::vector<v1::ShapeAggregate> out;
  std::map<std::string, size_t> index;
  auto slot = [&](const std::string& shape) -> v1::ShapeAggregate& {
    auto [it, fresh] = index.try_emplace(shape, out.size());
    if (fresh) out.emplace_back().set_shape(shape);
    return out[it->second];
  };
  for (const auto& s : shapes) slot(s);
  for (const auto& r : results) {
    auto& g = slot(r.shape());
    g.set_pairs(g.pairs() + 1);
    switch (r.outcome()) {
      case v1::SHAPE_OUTCOME_SAME: g.set_same(g.same() + 1); break;
      case v1::SHAPE_OUTCOME_COARSER: g.set_coarser(g.coarser() + 1); break;
      case v1::SHAPE_OUTCOME_ABSTAINED: g.set_abstained(g.abstained() + 1); break;
      case v1::SHAPE_OUTCOME_WRONG: g.set_wrong(g.wrong() + 1); break;
      default: g.set_differs(g.differs() + 1); break;
    }
  }
  for (auto& g : out) {
    const double n = g.pairs() > 0 ? g.pairs() : 1;
    g.set_same_share(g.same() / n);
    g.set_coarser_share(g.coarser() / n);
    g.set_abstained_share(g.abstained() / n);
    g.set_wrong_share(g.wrong() / n);
    g.set_differs_share(g.differs() / n);
  }
  return out;
}

std::string ShapeAnswerText(const v1::ShapeAnswer& a) {
  if (!a.committed()) return "INCONCLUSIVE";
  std::string out = a.rank() >= 0 ? "rank " + std::to_string(a.rank()) : "no rank";
  out += a.node().empty() ? ", no node" : " @" + a.node();
  return out + ", " + WithoutPrefix(v1::FailureClass_Name(a.failure_class()), "FAILURE_CLASS_") +
         "/" + WithoutPrefix(v1::Owner_Name(a.owner()), "OWNER_");
}

std::string ShapeOutcomeName(v1::ShapeOutcome o) {
  return Lower(WithoutPrefix(v1::ShapeOutcome_Name(o), "SHAPE_OUTCOME_"));
}

std::string RenderShapeTable(const v1::EvalReport& report) {
  if (report.shape_aggregates_size() == 0) return "";
  std::string out =
      "| shape           | pairs | same   | coarser | abstained | wrong  | differs |\n"
      "|-----------------|-------|--------|---------|-----------|--------|---------|\n";
  for (const auto& g : report.shape_aggregates()) {
    out += "| " + Pad(g.shape(), 15) + " | " + Pad(std::to_string(g.pairs()), 5) + " | " +
           Pct(g.same_share()) + " | " + Pad(Pct(g.coarser_share()), 7) + " | " +
           Pad(Pct(g.abstained_share()), 9) + " | " + Pct(g.wrong_share()) + " | " +
           Pad(Pct(g.differs_share()), 7) + " |\n";
  }
  bool header = false;
  for (const auto& r : report.shape_results()) {
    if (r.outcome() != v1::SHAPE_OUTCOME_WRONG && r.outcome() != v1::SHAPE_OUTCOME_DIFFERS) continue;
    if (!header) out += "wrong and differing (incident, shape):\n";
    header = true;
    out += "  " + ShapeOutcomeName(r.outcome()) + "  " + r.suite() + "/" + r.incident() + " seed " +
           std::to_string(r.seed()) + " [" + r.shape() + "]: canonical " +
           ShapeAnswerText(r.canonical()) + "; shape " +
           (r.error().empty() ? ShapeAnswerText(r.answer()) : "error: " + r.error()) + "\n";
  }
  return out;
}

}  // namespace denpex::scorer
