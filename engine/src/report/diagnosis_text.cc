// RenderText: the human summary `denpex diagnose` prints. Everything in it is in the JSON
// too; this is the order an operator reads it in.
#include <string>
#include <string_view>

#include "denpex/common/text.h"
#include "denpex/engine/engine.h"

namespace denpex::engine {
namespace {

// "VERDICT_DIAGNOSED" -> "DIAGNOSED".
std::string Short(const std::string& enum_name, std::string_view prefix) {
  return enum_name.starts_with(prefix) ? enum_name.substr(prefix.size()) : enum_name;
}

std::string Fixed(double x, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

std::string Bytes(std::int64_t n) {
  if (n < 10 * 1024) return std::to_string(n) + " B";
  if (n < 10 * 1024 * 1024) return std::to_string(n / 1024) + " KiB";
  return std::to_string(n / (1024 * 1024)) + " MiB";
}

}  // namespace

std::string DescribeInitiator(const v1::Diagnosis& d) {
  const v1::Initiator& ini = d.initiator();
  std::string out;
  if (ini.rank() >= 0) {
    out += "rank " + std::to_string(ini.rank());
    if (!ini.node().empty()) out += " on " + ini.node();
    if (ini.local_rank() >= 0) out += ", local rank " + std::to_string(ini.local_rank());
  } else if (d.has_link()) {  // a bad link whose first end nothing tells
    const v1::Link& l = d.link();
    out += "the link " + l.node_a() + (l.hca_a().empty() ? "" : " " + l.hca_a()) + " <-> " +
           (l.node_b().empty() ? std::string("a peer on no node of the incident") : l.node_b()) +
           (l.hca_b().empty() ? "" : " " + l.hca_b()) + " (which end failed first not determined)";
  } else if (ini.local_rank() >= 0) {  // a local rank whose global rank nothing gives
    out += "local rank " + std::to_string(ini.local_rank()) + " of " +
           (ini.node().empty() ? std::string("a node no line names") : "node " + ini.node()) +
           " (global rank not determined)";
  } else if (ini.node().empty()) {
    // Diagnosed: the scheduler ended the job; or every rank failed together, or what failed is
    // known but no line names its rank or host (the reason says which).
    out += d.verdict() != v1::VERDICT_DIAGNOSED ? "not determined"
           : d.owner() == v1::OWNER_SCHEDULER   ? "the whole job"
                                                : "the job, no rank or node named (see why)";
  } else {
    out += "node " + ini.node() + " (rank not determined)";
  }
  return out;
}

namespace {

void Initiator(const v1::Diagnosis& d, std::string* out) {
  const v1::Initiator& ini = d.initiator();
  *out += "  initiator   " + DescribeInitiator(d);
  if (!ini.time().empty()) *out += ", at " + ini.time();
  *out += "\n  class       " + Short(v1::FailureClass_Name(ini.failure_class()), "FAILURE_CLASS_") +
          ", owner " + Short(v1::Owner_Name(d.owner()), "OWNER_") + "\n";
}

void Evidence(const v1::Diagnosis& d, std::string* out) {
  if (d.evidence().empty()) return;
  *out += "\nevidence\n";
  for (const auto& e : d.evidence()) {
    *out += "  [" + Short(v1::EvidenceRole_Name(e.role()), "EVIDENCE_ROLE_") + "] " + e.file() + ":" +
            std::to_string(e.line()) + ": " + e.text() + "\n";
  }
}

void Candidates(const v1::Diagnosis& d, std::string* out) {
  if (d.candidates().empty()) return;
  *out += "\ncandidates\n";
  int i = 0;
  for (const auto& c : d.candidates()) {
    if (++i > 5) break;
    *out += "  " + std::to_string(i) + ". rank " + std::to_string(c.rank()) +
            (c.node().empty() ? "" : " on " + c.node()) + "  score " + Fixed(c.score(), 3) + "\n";
  }
}

void Cascade(const v1::Diagnosis& d, std::string* out) {
  const v1::Cascade& c = d.cascade();
  *out += "\ncascade\n  " + std::to_string(c.secondary_ranks_size()) + " secondary ranks; " +
          std::to_string(c.secondary_errors()) + " secondary errors, " + std::to_string(c.grouped_errors()) +
          " grouped into this incident\n";
  int i = 0;
  for (const auto& g : c.groups()) {
    if (++i > 5) break;
    *out += "  " + std::to_string(g.count()) + "x " + g.family() + " (" + std::to_string(g.ranks()) +
            " ranks, first " + g.first_time() + "): " + g.signature() + "\n";
  }
}

void Checkpoint(const v1::Diagnosis& d, std::string* out) {
  const v1::CheckpointOutcome& c = d.checkpoint();
  if (c.decision() == v1::CHECKPOINT_DECISION_NOT_EVALUATED ||
      c.decision() == v1::CHECKPOINT_DECISION_UNSPECIFIED) {
    return;
  }
  *out += "\ncheckpoint (" + c.dir() + ")\n  " +
          Short(v1::CheckpointDecision_Name(c.decision()), "CHECKPOINT_DECISION_");
  if (c.decision() == v1::CHECKPOINT_DECISION_RESUME) {
    *out += " from " + c.path() + " (step " + std::to_string(c.step()) + ")";
  }
  *out += "\n  " + c.summary() + "\n";
  for (const auto& r : c.rejected()) {
    *out += "  rejected " + r.path() + " (step " + std::to_string(r.step()) + "): " + r.reason() + "\n";
  }
}

void Recovery(const v1::Diagnosis& d, std::string* out) {
  if (d.recovery().preconditions().empty()) return;
  *out += "\nbefore resuming\n";
  for (const auto& p : d.recovery().preconditions()) {
    *out += "  - " + p.action() + (p.target().empty() ? "" : " " + p.target()) + ": " + p.text() + "\n";
  }
}

void Input(const v1::Diagnosis& d, std::string* out) {
  const v1::InputReport& in = d.input();
  *out += "\ninput\n  " + std::to_string(in.files()) + " files, " + Bytes(in.bytes()) + ", " +
          std::to_string(in.lines()) + " lines, " + std::to_string(in.events()) + " events; " +
          std::to_string(in.unreadable_files()) + " unreadable files, " + std::to_string(in.malformed_lines()) +
          " malformed lines\n  " + std::to_string(in.ranks_seen()) + " ranks with a log, world size " +
          std::to_string(in.world_size()) + "\n";
  for (const auto& p : in.problems()) *out += "  problem: " + p + "\n";
}

}  // namespace

std::string RenderText(const v1::Diagnosis& d) {
  std::string out = "denpex diagnosis (strategy " + d.strategy() + ")\n";
  out += "  verdict     " + Short(v1::Verdict_Name(d.verdict()), "VERDICT_") + ", confidence " +
         Fixed(d.initiator().confidence(), 2) + "\n";
  Initiator(d, &out);
  out += "  why         " + d.reason() + "\n";
  Evidence(d, &out);
  Candidates(d, &out);
  Cascade(d, &out);
  Checkpoint(d, &out);
  Recovery(d, &out);
  Input(d, &out);
  return EscapeControlBytes(out);  // log bytes never reach the operator's terminal as controls
}

}  // namespace denpex::engine
