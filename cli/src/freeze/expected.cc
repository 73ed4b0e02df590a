#include "freeze/expected.h"

#include <cctype>
#include <chrono>
#include <cmath>

#include "denpex/common/output_file.h"
#include "denpex/common/time.h"
#include "denpex/proto/json_io.h"
#include "freeze/name_map.h"
#include "freeze/names.h"

namespace denpex::freeze {
namespace fs = std::filesystem;
namespace {

std::string WallNow() {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return FormatRfc3339(static_cast<TimeNs>(ns.count()));
}

std::string Upper(std::string s) {
  for (char& c : s)
    c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// `host` or `OWNER_HOST` -> OWNER_HOST.
template <typename Enum>
Result<Enum> ParseEnum(const std::string& text, const std::string& prefix,
                       bool (*parse)(std::string_view, Enum*), const std::string& flag) {
  std::string name = Upper(text);
  if (name.rfind(prefix, 0) != 0) name = prefix + name;
  Enum e{};
  if (!parse(name, &e)) {
    return Status::InvalidArgument(flag + " " + text + ": not a known value; use e.g. " + prefix +
                                   "..., as in " + "proto/denpex/v1/vocabulary.proto");
  }
  return e;
}

bool ParseOwner(std::string_view s, v1::Owner* o) { return v1::Owner_Parse(std::string(s), o); }
bool ParseClass(std::string_view s, v1::FailureClass* c) {
  return v1::FailureClass_Parse(std::string(s), c);
}

// PATH[@STEP]
std::pair<std::string, std::int64_t> PathAndStep(const std::string& text) {
  const std::size_t at = text.rfind('@');
  if (at == std::string::npos) return {text, -1};
  try {
    return {text.substr(0, at), std::stoll(text.substr(at + 1))};
  } catch (...) {
    return {text, -1};
  }
}

Status CheckTime(const std::optional<std::string>& t, const std::string& flag) {
  if (t && !ParseRfc3339(*t)) {
    return Status::InvalidArgument(flag + " " + *t +
                                   ": not an RFC 3339 time; write e.g. 2026-02-11T03:40:00Z");
  }
  return Status::Ok();
}

}  // namespace

v1::Truth DraftExpected(const v1::Diagnosis& d, const std::string& scenario,
                        const std::string& drafted_by, const std::string& now) {
  v1::Truth t;
  t.set_scenario(scenario);
  t.set_verdict(d.verdict());
  *t.mutable_initiator() = d.initiator();
  t.set_owner(d.owner());
  for (const int r : d.cascade().secondary_ranks()) t.mutable_cascade()->add_secondary_ranks(r);
  for (const auto& e : d.evidence()) *t.add_evidence() = e;
  auto* c = t.mutable_checkpoint();
  c->set_decision(d.checkpoint().decision());
  c->set_path(d.checkpoint().path());
  c->set_step(d.checkpoint().step());
  for (const auto& r : d.checkpoint().rejected()) *c->add_rejected() = r;
  if (d.input().world_size() > 0) t.mutable_job()->set_world_size(d.input().world_size());
  if (!d.initiator().time().empty()) t.mutable_job()->set_fault_time(d.initiator().time());
  auto* entry = t.mutable_corpus_entry();
  entry->set_draft(true);
  entry->set_drafted_by(drafted_by);
  entry->set_drafted_at(now);
  entry->set_anonymised(true);
  return t;
}

Status WriteDraft(const fs::path& entry, const v1::Diagnosis& frozen, const std::string& drafted_by,
                  const fs::path& incident) {
  fs::path name = entry.lexically_normal();
  if (name.filename().empty()) name = name.parent_path();
  const v1::Truth t = DraftExpected(frozen, name.filename().string(), drafted_by, WallNow());
  (void)incident;  // the entry was checked to lie outside it
  return proto::WriteJsonFile(entry / "expected.json", t);
}

Status WriteFreezeNotes(const fs::path& entry, const FreezeReport& r, const fs::path& incident) {
  std::string md = "# Frozen by `denpex freeze`\n\n";
  md +=
      "Host names, addresses, users, project folders, job ids, UUIDs, e-mail addresses and secrets "
      "in\n"
      "`incident/` are replacements (docs/freeze.md); the map back to the originals stays with the "
      "team\n"
      "and is not part of this entry. Rank and step numbers, times and line shapes are the "
      "originals.\n\n";
  md +=
      "`expected.json` was drafted from the engine's diagnosis of this copy and is marked as a "
      "draft\n"
      "until a person confirms or corrects it: `denpex freeze --confirm <entry> --owner ... "
      "--class ...`.\n\n";
  md += "| | |\n|---|---|\n";
  md += "| files | " + std::to_string(r.files) + " |\n";
  md += "| text files rewritten | " + std::to_string(r.rewritten) + " |\n";
  md += "| compressed logs rewritten and compressed again | " + std::to_string(r.recompressed) +
        " |\n";
  md += "| pickles rewritten in place | " + std::to_string(r.binary_rewritten) + " |\n";
  md += "| names replaced | " + std::to_string(r.replacements) + " |\n";
  md += "| diagnosis of this copy equals the original's | " +
        std::string(r.diagnosis_identical ? "yes" : "**no**") + " |\n";
  for (const auto& [kind, n] : r.names) {
    if (n > 0) md += "| distinct " + kind + " | " + std::to_string(n) + " |\n";
  }
  md += "\n## Not anonymised\n\n";
  if (r.not_anonymised.empty())
    md += "Nothing: no file of the entry still holds an original name that was found.\n";
  for (const std::string& s : r.not_anonymised) md += "- " + s + "\n";
  if (!r.notes.empty()) {
    md += "\n## Notes\n\n";
    for (const std::string& s : r.notes) md += "- " + s + "\n";
  }
  const fs::path read_only[] = {incident};
  return WriteOutputFile(entry / "FREEZE.md", md, read_only);
}

Status Confirm(const ConfirmOptions& o) {
  const fs::path path = o.entry / "expected.json";
  v1::Truth t;
  DENPEX_RETURN_IF_ERROR(proto::ReadJsonFile(path, &t));
  DENPEX_RETURN_IF_ERROR(CheckTime(o.investigation_started, "--investigation-started"));
  DENPEX_RETURN_IF_ERROR(CheckTime(o.investigation_ended, "--investigation-ended"));
  if (o.owner) {
    auto owner = ParseEnum<v1::Owner>(*o.owner, "OWNER_", ParseOwner, "--owner");
    if (!owner.ok()) return owner.status();
    t.set_owner(*owner);
  }
  if (o.failure_class) {
    auto c = ParseEnum<v1::FailureClass>(*o.failure_class, "FAILURE_CLASS_", ParseClass, "--class");
    if (!c.ok()) return c.status();
    t.mutable_initiator()->set_failure_class(*c);
  }
  if (o.rank) t.mutable_initiator()->set_rank(*o.rank);
  if (o.node) {
    // A real name is mapped as the freeze mapped it; a replacement is kept.
    fs::path map_path = o.map;
    if (map_path.empty()) {
      fs::path e = o.entry.lexically_normal();
      if (e.filename().empty()) e = e.parent_path();
      map_path = e.string() + ".map.json";
    }
    std::string node = *o.node;
    std::error_code ec;
    if (fs::exists(map_path, ec)) {
      auto map = NameMap::Load(map_path);
      if (!map.ok()) return map.status();
      node = Rewriter(map->proto(), Rewriter::Direction::kForward).Apply(node);
    }
    t.mutable_initiator()->set_node(node);
  }
  if (o.checkpoint) {
    auto* c = t.mutable_checkpoint();
    if (*o.checkpoint == "none") {
      c->Clear();
      c->set_decision(v1::CHECKPOINT_DECISION_NO_SAFE_CHECKPOINT);
    } else {
      const auto [p, step] = PathAndStep(*o.checkpoint);
      c->set_decision(v1::CHECKPOINT_DECISION_RESUME);
      c->set_path(p);
      if (step >= 0) c->set_step(step);
    }
  }
  auto* entry = t.mutable_corpus_entry();
  auto* pm = entry->mutable_postmortem();
  if (o.resumed_from) {
    const auto [p, step] = PathAndStep(*o.resumed_from);
    pm->set_resumed_from(p);
    pm->set_resumed_step(step);
  }
  for (const std::string& r : o.recovery) pm->add_recovery(r);
  if (o.investigation_started) pm->set_investigation_started(*o.investigation_started);
  if (o.investigation_ended) pm->set_investigation_ended(*o.investigation_ended);
  if (o.operator_minutes) {
    if (*o.operator_minutes < 0 || !std::isfinite(*o.operator_minutes)) {
      return Status::InvalidArgument("--operator-minutes: a number of minutes, 0 or more");
    }
    pm->set_operator_minutes(*o.operator_minutes);
  } else if (!pm->investigation_started().empty() && !pm->investigation_ended().empty() &&
             !pm->has_operator_minutes()) {
    // Without a recorded figure: the investigation's wall time.
    const auto a = ParseRfc3339(pm->investigation_started()),
               b = ParseRfc3339(pm->investigation_ended());
    if (a && b && *b >= *a) pm->set_operator_minutes(static_cast<double>(*b - *a) / 60e9);
  }
  if (o.process_owner) {
    auto owner = ParseEnum<v1::Owner>(*o.process_owner, "OWNER_", ParseOwner, "--process-owner");
    if (!owner.ok()) return owner.status();
    pm->set_process_owner(*owner);
  }
  if (o.process_failure_class) {
    auto c = ParseEnum<v1::FailureClass>(*o.process_failure_class, "FAILURE_CLASS_", ParseClass,
                                         "--process-class");
    if (!c.ok()) return c.status();
    pm->set_process_failure_class(*c);
  }
  if (o.notes) pm->set_notes(*o.notes);
  if (pm->ByteSizeLong() == 0) entry->clear_postmortem();
  entry->set_draft(false);
  entry->set_confirmed_at(o.now.empty() ? WallNow() : o.now);
  return proto::WriteJsonFile(path, t);
}

}  // namespace denpex::freeze
