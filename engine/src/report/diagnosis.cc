#include "report/diagnosis.h"

#include <cmath>

#include "ingest/file_text.h"
#include "ingest/flight_recorder.h"
#include "ingest/identity.h"
#include "report/reasons.h"

namespace denpex::engine {
namespace {

// Length of the UTF-8 sequence at the start of `s`, or 0 when it is not valid UTF-8.
std::size_t Utf8Length(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](std::size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F)) return 0;  // overlong, surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) > 0x8F)) return 0;
    return 4;
  }
  return 0;
}

// Scores and confidences are shown to three decimals: enough to compare, stable to read.
double Round3(double x) { return std::round(x * 1000) / 1000; }

void FillInput(const Incident& inc, const Finding& f, v1::InputReport* in) {
  in->set_files(inc.input.files);
  in->set_bytes(inc.input.bytes);
  in->set_lines(inc.input.lines);
  in->set_events(static_cast<std::int64_t>(inc.events.size()));
  in->set_unreadable_files(inc.input.unreadable_files);
  in->set_malformed_lines(inc.input.malformed_lines);
  in->set_out_of_scope_lines(inc.input.out_of_scope);
  for (const auto& p : inc.input.problems) in->add_problems(ValidUtf8(p));
  for (const auto& p : f.problems) in->add_problems(ValidUtf8(p));
  if (inc.input.problems_omitted > 0) {
    in->add_problems(std::to_string(inc.input.problems_omitted) + " more problems not listed");
  }
  in->set_ranks_seen(f.ranks_seen);
  in->set_world_size(f.world_size);
}

void FillCascade(const Incident& inc, const CascadeSummary& c, v1::Cascade* out) {
  for (std::int32_t r : c.secondary_ranks) out->add_secondary_ranks(r);
  out->set_secondary_errors(c.secondary_errors);
  out->set_grouped_errors(c.grouped_errors);
  for (const auto& g : c.groups) {
    v1::ErrorGroup* eg = out->add_groups();
    eg->set_signature(ValidUtf8(inc.str(g.signature)));
    eg->set_family(g.family);
    eg->set_count(g.count);
    eg->set_ranks(g.ranks);
    if (g.timed && inc.year) eg->set_first_time(FormatRfc3339(g.first_time));
  }
}

// `event`: the cited event, when a citation is one (a Flight Recorder dump's is rendered from
// its fields: the dump is records, not lines, and its bytes are never quoted).
void Cite(const Incident& inc, std::uint32_t file_index, const LineSpan& span,
          v1::EvidenceRole role, v1::Diagnosis* d, const Event* event = nullptr) {
  const LogFile& file = inc.files[file_index];
  v1::Evidence* ev = d->add_evidence();
  ev->set_file(ValidUtf8(file.path));
  ev->set_line(static_cast<std::int32_t>(span.line));
  ev->set_role(role);
  if (file.flight_recorder) {
    const std::string_view name = std::string_view(file.path).substr(file.path.rfind('/') + 1);
    const std::string text =
        event != nullptr ? FrEventText(*event, name, inc.strings) : std::string();
    ev->set_text(ValidUtf8(text.empty() ? std::string(name) + ": Flight Recorder dump" : text));
  } else {
    auto text = ReadSpan(inc.root / file.path, span.offset, span.length);
    if (text.ok()) {
      std::string_view t = *text;
      if (!t.empty() && t.back() == '\r') t.remove_suffix(1);
      ev->set_text(ValidUtf8(t));
    } else {
      d->mutable_input()->add_problems(ValidUtf8(text.status().message()));
    }
  }
}

void FillEvidence(const Incident& inc, const Finding& f, v1::Diagnosis* d) {
  for (const Citation& c : f.evidence) {
    const Event& e = inc.events[c.event];
    Cite(inc, e.file, {e.line, e.offset, e.length}, c.role, d, &e);
  }
  for (const LineCitation& c : f.lines) Cite(inc, c.file, c.span, c.role, d);
}

}  // namespace

std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    const std::size_t n = Utf8Length(s);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      s.remove_prefix(1);
    } else {
      out.append(s.substr(0, n));
      s.remove_prefix(n);
    }
  }
  return out;
}

v1::Diagnosis ToDiagnosis(const Incident& inc, const Finding& f) {
  v1::Diagnosis d;
  d.set_verdict(f.verdict);
  d.set_reason(ValidUtf8(RenderReason(f.reason)));
  v1::Initiator* ini = d.mutable_initiator();
  ini->set_rank(f.rank);
  ini->set_node(f.node >= 0 ? ValidUtf8(NodeHost(inc.nodes[f.node])) : "");
  ini->set_local_rank(f.local_rank);
  ini->set_gpu(f.gpu);
  // A time from year-less stamps with no year anywhere in the incident would read 1970: none.
  if (f.time && inc.year) ini->set_time(FormatRfc3339(*f.time));
  ini->set_failure_class(f.failure_class);
  ini->set_confidence(Round3(f.confidence));
  for (const auto& c : f.candidates) {
    v1::Candidate* cand = d.add_candidates();
    cand->set_rank(c.rank);
    cand->set_node(c.node >= 0 ? ValidUtf8(NodeHost(inc.nodes[c.node])) : "");
    cand->set_score(Round3(c.score));
  }
  d.set_owner(f.owner);
  FillCascade(inc, f.cascade, d.mutable_cascade());
  FillInput(inc, f, d.mutable_input());
  FillEvidence(inc, f, &d);
  d.mutable_checkpoint()->set_decision(v1::CHECKPOINT_DECISION_NOT_EVALUATED);
  for (const auto& a : f.recovery) {
    v1::Precondition* p = d.mutable_recovery()->add_preconditions();
    p->set_action(a.action);
    p->set_target(ValidUtf8(a.target));
    p->set_text(ValidUtf8(RenderReason(a.text)));
  }
  if (f.link) {
    v1::Link* link = d.mutable_link();
    auto name = [&](std::int32_t node) { return node >= 0 ? ValidUtf8(inc.nodes[node]) : std::string(); };
    link->set_node_a(name(f.link->a.node));
    link->set_hca_a(f.link->a.hca);
    link->set_rank_a(f.link->a.rank);
    link->set_node_b(name(f.link->b.node));
    link->set_hca_b(f.link->b.hca);
    link->set_rank_b(f.link->b.rank);
    link->set_ordered(f.link->ordered);
  }
  d.set_strategy(f.strategy);
  return d;
}

}  // namespace denpex::engine
