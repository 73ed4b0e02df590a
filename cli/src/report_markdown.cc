// The Markdown report (`denpex eval --markdown FILE`): the run, the engine beside each
// baseline per group, and one row per incident.
#include <map>
#include <tuple>

#include "report.h"

namespace denpex::cli {
namespace {

std::string TableHeader(const std::vector<Column>& cols, bool with_group) {
  std::string head = with_group ? "| group | strategy |" : "| strategy |";
  std::string rule = with_group ? "|---|---|" : "|---|";
  for (const auto& c : cols) {
    head += std::string(" ") + c.header + " |";
    rule += "---:|";
  }
  return head + "\n" + rule + "\n";
}

std::string Table(const v1::EvalReport& report, const std::vector<std::string>& groups,
                  const std::vector<Column>& cols) {
  const bool with_group = groups.size() > 1 || groups[0] != "overall";
  std::string out = TableHeader(cols, with_group);
  for (const auto& group : groups) {
    for (const auto* g : RowsOf(report, group)) {
      out += with_group ? "| " + group + " | " + g->strategy() + " |" : "| " + g->strategy() + " |";
      for (const auto& c : cols) ((out += ' ') += c.cell(*g)) += " |";
      out += "\n";
    }
  }
  return out;
}

std::string Section(const v1::EvalReport& report, const std::string& kind) {
  const auto groups = GroupsOfKind(report, kind);
  std::string out = "## " + (kind == "overall" ? std::string("Overall") : "By " + kind) + "\n\n";
  if (kind == "overall" && !DraftNote(report).empty())
    out += "**Drafts:** " + DraftNote(report) + "\n\n";
  out += "### Localization\n\n" + Table(report, groups, LocalizationColumns()) + "\n";
  out += "### Evidence, cascade, checkpoint, time\n\n" +
         Table(report, groups, OutcomeColumns()) + "\n";
  return out;
}

std::string Incidents(const v1::EvalReport& report) {
  const auto& strategies = report.run().strategies();
  std::string out = "## Incidents\n\nOne row per incident: the truth's initiator and each "
                    "strategy's answer.\n\n| suite | incident | seed | family | ranks | truth |";
  std::string rule = "|---|---|---:|---|---:|---|";
  for (const auto& s : strategies) {
    out += " " + s + " |";
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  using Key = std::tuple<std::string, std::string, std::uint64_t>;
  std::map<Key, std::map<std::string, const v1::IncidentScore*>> rows;
  std::vector<Key> order;
  for (const auto& s : report.incidents()) {
    const Key key{s.suite(), s.incident(), s.seed()};
    if (!rows.count(key)) order.push_back(key);
    rows[key][s.strategy()] = &s;
  }
  for (const auto& key : order) {
    const auto& by_strategy = rows[key];
    const v1::IncidentScore& any = *by_strategy.begin()->second;
    const std::string truth = any.truth_rank() >= 0 ? "rank " + std::to_string(any.truth_rank()) +
                                                          " on " + any.truth_node()
                                                    : any.truth_node();
    const std::string draft = any.expected_draft() ? " (draft)" : "";
    out += "| " + any.suite() + " | " + any.incident() + draft + " | " +
           std::to_string(any.seed()) + " | " + any.family() + " | " +
           std::to_string(any.world_size()) + " | " + truth + " |";
    for (const auto& s : strategies) {
      auto it = by_strategy.find(s);
      ((out += ' ') += it == by_strategy.end() ? std::string("-") : AnswerCell(*it->second)) +=
          " |";
    }
    out += "\n";
  }
  return out;
}

// The collection-shapes axis: one row per shape, then the wrong and differing pairs.
std::string Shapes(const v1::EvalReport& report) {
  const auto rows = ShapeRows(report);
  if (rows.empty()) return "";
  std::string out = "## Collection shapes\n\nThe engine on each incident re-laid in each shape, "
                    "against its answer on the canonical layout (`docs/evaluation.md`, "
                    "\"Collection shapes\").\n\n" + MdRows(rows) + "\n";
  const auto pairs = ShapePairRows(report);
  if (!pairs.empty()) out += "### Wrong and differing pairs\n\n" + MdRows(pairs) + "\n";
  return out;
}

// The pilot: each dimension, the engine beside the recorded process, per entry and in total.
std::string Pilot(const v1::EvalReport& report) {
  const auto dims = PilotDimensionRows(report);
  if (dims.empty()) return "";
  std::string out =
      "## Pilot\n\nThe engine on each corpus entry beside the team's recorded process "
      "(the entry's postmortem), each dimension scored separately against the entry's expected "
      "outcome, the arbiter (`docs/evaluation.md`, \"Pilot\"). A dimension an entry does not "
      "record is *not recorded*, never a pass or a fail.\n\n" +
      PilotTotals(report) + "\n\n" + MdRows(dims) + "\n### Per entry\n\n" +
      MdRows(PilotIncidentRows(report)) + "\n";
  const auto decisions = PilotDecisionRows(report);
  if (!decisions.empty()) {
    out += "### Decisions: engine and process\n\n" + MdRows(decisions) + "\n";
  }
  return out;
}

}  // namespace

std::string RenderMarkdown(const v1::EvalReport& report) {
  std::string out = "# Denpex evaluation report\n\n" + RunSummary(report.run()) +
                    "\n\nEvery metric is defined in `docs/evaluation.md`; `-` means the metric "
                    "applies to no incident of the group.\n\n";
  if (report.run().failures_size() > 0) {
    out += "## Jobs that failed\n\n";
    for (const auto& f : report.run().failures()) out += "- " + f + "\n";
    out += "\n";
  }
  out += Pilot(report);
  for (const auto& kind : GroupKinds(report)) out += Section(report, kind);
  return out + Shapes(report) + Incidents(report);
}

}  // namespace denpex::cli
