// The history store (denpex/engine/history_store.h, docs/history_format.md).
#include "denpex/engine/history_store.h"

#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "denpex/common/json_reader.h"
#include "denpex/common/output_file.h"
#include "denpex/common/time.h"

namespace denpex::engine {
namespace fs = std::filesystem;
namespace {
std::string Day(const std::string& rfc3339) { return rfc3339.substr(0, 10); }

std::string ClassName(v1::FailureClass c) {
  std::string name = v1::FailureClass_Name(c);
  return name.starts_with("FAILURE_CLASS_") ? name.substr(14) : name;
}
}  // namespace

bool HardwareOwned(v1::Owner o) { return o == v1::OWNER_GPU_HARDWARE || o == v1::OWNER_HOST; }

std::string DescribeHistoryEntry(const v1::HistoryEntry& e) {
  return Day(e.time()) + " " + ClassName(e.failure_class()) +
         (e.gpu().empty() ? "" : " on GPU " + e.gpu());
}

namespace {

constexpr std::size_t kMaxEarlier = 20;

std::string SameIncident(const fs::path& incident) {
  std::error_code ec;
  return fs::weakly_canonical(fs::absolute(incident, ec), ec).generic_string();
}

// The repeat offender's recovery goes first; the reset, restart or reboot it replaces goes.
void Escalate(v1::Diagnosis* d, const v1::Recurrence& r) {
  const v1::Initiator& in = d->initiator();
  std::vector<v1::Precondition> kept;
  for (const auto& p : d->recovery().preconditions()) {
    if (r.gpu_incidents() > 0 && (p.action() == "reset_gpu" || p.action() == "restart_app" || p.action() == "drain_and_rma")) continue;
    if (r.node_incidents() >= 2 && (p.action() == "reboot_node" || p.action() == "drain_node")) continue;
    kept.push_back(p);
  }
  std::vector<v1::Precondition> first;
  if (r.gpu_incidents() > 0) {
    v1::Precondition p;
    p.set_action("drain_and_rma");
    p.set_target(in.node() + " GPU " + in.gpu());
    p.set_text("GPU " + in.gpu() + " of " + in.node() + " is a repeat offender (" + std::to_string(r.gpu_incidents()) +
               " earlier incident(s) in " + r.history() + "): drain it (exclude it from the allocation) and start the RMA flow "
               "instead of resetting it; do not resume on it.");
    first.push_back(p);
  }
  if (r.node_incidents() >= 2) {
    v1::Precondition p;
    p.set_action("drain_node");
    p.set_target(in.node());
    p.set_text(in.node() + " failed " + std::to_string(r.node_incidents()) + " times before (" + r.history() +
               "): drain it and run the field diagnostics (dcgmi diag -r 3, the vendor's board test) before it takes work again.");
    first.push_back(p);
  }
  auto* pre = d->mutable_recovery()->mutable_preconditions();
  pre->Clear();
  for (auto& p : first) *pre->Add() = std::move(p);
  for (auto& p : kept) *pre->Add() = std::move(p);
}

constexpr std::uint64_t kMaxStoreBytes = 64ull << 20;  // ~200,000 entries
constexpr std::size_t kMaxLineBytes = 64 << 10;        // an entry is ~250 bytes
constexpr std::size_t kMaxProblems = 20;

// An enum field of an entry: its name ("FAILURE_CLASS_GPU_ECC"), or its number as protobuf's
// JSON also accepts.
template <typename Enum>
bool ReadEnum(JsonReader& r, const google::protobuf::EnumDescriptor* d, Enum* out) {
  if (r.Peek() == '"') {
    const auto name = r.String();
    const auto* v = name ? d->FindValueByName(*name) : nullptr;
    if (v == nullptr) return false;
    *out = static_cast<Enum>(v->number());
    return true;
  }
  const auto n = r.Count();
  if (!n || d->FindValueByNumber(static_cast<int>(*n)) == nullptr) return false;
  *out = static_cast<Enum>(*n);
  return true;
}

// One line, a flat JSON object of HistoryEntry's fields, read with the pull reader (a store of
// 200,000 lines through protobuf's JSON parser took 5 s of CPU per 60 MB). "" when it is one;
// else why not.
// A canary record's own fields (CanaryRecord); the others are HistoryEntry's.
struct CanaryFields {
  std::string kind;  // "" for an incident
  v1::CanaryVerdict verdict = v1::CANARY_VERDICT_UNSPECIFIED;
  std::string canary;
};

std::string ParseEntry(std::string_view line, v1::HistoryEntry* e, CanaryFields* canary) {
  JsonReader r(line);
  if (!r.BeginObject()) return r.error();
  while (auto key = r.NextKey()) {
    std::string* text = *key == "time"       ? e->mutable_time()
                        : *key == "node"     ? e->mutable_node()
                        : *key == "gpu"      ? e->mutable_gpu()
                        : *key == "incident" ? e->mutable_incident()
                        : *key == "action"   ? e->mutable_action()
                                             : nullptr;
    if (text != nullptr) {
      if (r.Peek() == 'n' && r.Skip()) continue;  // null: the field's default
      auto value = r.String();
      if (!value) return "\"" + *key + "\" is not a string";
      *text = std::move(*value);
    } else if (*key == "failure_class") {
      v1::FailureClass c{};
      if (!ReadEnum(r, v1::FailureClass_descriptor(), &c)) return "invalid failure_class";
      e->set_failure_class(c);
    } else if (*key == "owner") {
      v1::Owner o{};
      if (!ReadEnum(r, v1::Owner_descriptor(), &o)) return "invalid owner";
      e->set_owner(o);
    } else if (*key == "kind" || *key == "canary") {
      if (r.Peek() == 'n' && r.Skip()) continue;
      auto value = r.String();
      if (!value) return "\"" + *key + "\" is not a string";
      (*key == "kind" ? canary->kind : canary->canary) = std::move(*value);
    } else if (*key == "verdict") {
      v1::CanaryVerdict v{};
      if (!ReadEnum(r, v1::CanaryVerdict_descriptor(), &v)) return "invalid verdict";
      canary->verdict = v;
    } else {
      return "unknown field \"" + *key + "\"";
    }
  }
  if (!r.AtEnd()) return r.ok() ? "text after the object" : r.error();
  return "";
}

// One line of the store: an entry, or a problem.
void ReadEntry(const fs::path& path, int number, std::string& line, History* h, std::size_t* bad) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.find_first_not_of(" \t") == std::string::npos) return;
  const std::string where = path.string() + ":" + std::to_string(number) + ": ";
  auto problem = [&](std::string text) {
    if (++*bad <= kMaxProblems) h->problems.push_back(where + std::move(text));
  };
  v1::HistoryEntry e;
  CanaryFields c;
  std::string why = ParseEntry(line, &e, &c);
  if (why.empty() && !c.kind.empty() && c.kind != "canary")
    why = "kind \"" + c.kind + "\" is not \"canary\"";
  if (why.empty() && c.kind.empty() &&
      (!c.canary.empty() || c.verdict != v1::CANARY_VERDICT_UNSPECIFIED))
    why = "a canary's fields without \"kind\": \"canary\"";
  if (!why.empty()) {
    return problem("not a history entry (" + why +
                   "); skipped. Each line is one JSON object with time, node, gpu, failure_class, "
                   "owner, incident, "
                   "action (a canary's: kind \"canary\", time, verdict, canary, ...; "
                   "docs/history_format.md); fix or "
                   "delete the line.");
  }
  const bool canary = !c.kind.empty();
  if ((e.node().empty() && !canary) || !ParseRfc3339(e.time())) {
    return problem(
        (e.node().empty() && !canary ? "no node" : "time \"" + e.time() + "\" is not RFC 3339") +
        "; skipped. Write \"node\": \"<hostname>\" and \"time\": \"2026-03-02T09:17:03Z\".");
  }
  if (!canary) {
    h->entries.push_back(std::move(e));
    return;
  }
  v1::CanaryRecord r;
  r.set_kind(c.kind);
  r.set_time(e.time());
  r.set_node(e.node());
  r.set_gpu(e.gpu());
  r.set_failure_class(e.failure_class());
  r.set_owner(e.owner());
  r.set_incident(e.incident());
  r.set_verdict(c.verdict);
  r.set_canary(c.canary);
  h->canaries.push_back(std::move(r));
}

}  // namespace

Result<History> ReadHistory(const fs::path& path) {
  History h;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return h;
    return Status::IoError(path.string() + ": cannot read the history store: " + std::strerror(errno));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    h.problems.push_back(path.string() + ": not a regular file, not read as a history store; give the JSON-lines "
                         "file (docs/history_format.md)");
    return h;
  }
  h.exists = true;
  // Bounded in memory and time: at most kMaxStoreBytes are read, a line longer than
  // kMaxLineBytes is skipped as it streams past, and at most kMaxProblems bad lines are listed.
  std::string line, chunk(1 << 20, '\0');
  bool overlong = false;
  int number = 1;
  std::size_t bad = 0;
  std::uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd, chunk.data(), std::min<std::uint64_t>(chunk.size(), kMaxStoreBytes - total));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    total += static_cast<std::uint64_t>(n);
    std::string_view rest(chunk.data(), static_cast<std::size_t>(n));
    while (!rest.empty()) {
      const std::size_t nl = rest.find('\n');
      const std::string_view piece = rest.substr(0, nl);
      if (!overlong && line.size() + piece.size() <= kMaxLineBytes) {
        line.append(piece);
      } else if (!overlong) {
        overlong = true;
        line.clear();
      }
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
      if (overlong) {
        if (++bad <= kMaxProblems) {
          h.problems.push_back(path.string() + ":" + std::to_string(number) + ": longer than " +
                               std::to_string(kMaxLineBytes) + " bytes, not a history entry; skipped");
        }
      } else {
        ReadEntry(path, number, line, &h, &bad);
      }
      line.clear();
      overlong = false;
      ++number;
    }
    if (total >= kMaxStoreBytes) break;
  }
  ::close(fd);
  if (overlong) {
    if (++bad <= kMaxProblems) {
      h.problems.push_back(path.string() + ":" + std::to_string(number) + ": longer than " +
                           std::to_string(kMaxLineBytes) + " bytes, not a history entry; skipped");
    }
  } else if (total < kMaxStoreBytes || static_cast<std::uint64_t>(st.st_size) <= kMaxStoreBytes) {
    ReadEntry(path, number, line, &h, &bad);
  }
  if (static_cast<std::uint64_t>(st.st_size) > kMaxStoreBytes) {
    h.problems.push_back(path.string() + ": " + std::to_string(st.st_size) + " bytes; only the first " +
                         std::to_string(kMaxStoreBytes >> 20) + " MiB were read. Trim old entries from the store.");
  }
  if (bad > kMaxProblems) {
    h.problems.push_back(path.string() + ": " + std::to_string(bad - kMaxProblems) + " more bad lines not listed");
  }
  return h;
}

void ApplyHistory(const History& history, const std::string& store, const fs::path& incident, v1::Diagnosis* d) {
  const v1::Initiator& in = d->initiator();
  if (d->verdict() != v1::VERDICT_DIAGNOSED || in.node().empty()) return;
  const auto now = ParseRfc3339(in.time());
  const std::string self = SameIncident(incident);
  v1::Recurrence r;
  r.set_history(store);
  int hardware_node = 0, hardware_gpu = 0;
  std::vector<const v1::HistoryEntry*> earlier;
  for (const v1::HistoryEntry& e : history.entries) {
    if (e.node() != in.node() || SameIncident(e.incident()) == self) continue;
    const auto t = ParseRfc3339(e.time());
    if (now && t && *t >= *now) continue;  // only what happened before this failure
    earlier.push_back(&e);
  }
  std::stable_sort(earlier.begin(), earlier.end(),
                   [](const auto* a, const auto* b) { return ParseRfc3339(a->time()) < ParseRfc3339(b->time()); });
  for (const v1::HistoryEntry* e : earlier) {
    const bool same_gpu = !in.gpu().empty() && e->gpu() == in.gpu();
    r.set_node_incidents(r.node_incidents() + 1);
    if (same_gpu) r.set_gpu_incidents(r.gpu_incidents() + 1);
    if (HardwareOwned(e->owner())) ++hardware_node, hardware_gpu += same_gpu ? 1 : 0;
    if (static_cast<std::size_t>(r.earlier_size()) < kMaxEarlier) *r.add_earlier() = *e;
  }
  if (earlier.empty()) {
    *d->mutable_recurrence() = r;
    return;
  }
  std::string s = " " + in.node() + " had " + std::to_string(r.node_incidents()) + " earlier incident(s) in " + store + " (";
  for (std::size_t i = 0; i < earlier.size() && i < 5; ++i)
    s += (i ? ", " : "") + DescribeHistoryEntry(*earlier[i]);
  if (earlier.size() > 5) s += ", and " + std::to_string(earlier.size() - 5) + " more";
  s += ")";
  if (!in.gpu().empty()) s += "; GPU " + in.gpu() + " had " + std::to_string(r.gpu_incidents());
  s += ".";
  // Escalate only a hardware failure, and only on hardware history: an application's bug that
  // recurs on the same node says nothing about the node.
  if (HardwareOwned(d->owner())) {
    v1::Recurrence counted = r;
    counted.set_gpu_incidents(in.gpu().empty() || d->owner() != v1::OWNER_GPU_HARDWARE ? 0 : hardware_gpu);
    counted.set_node_incidents(hardware_node);
    if (counted.gpu_incidents() > 0 || counted.node_incidents() >= 2) {
      Escalate(d, counted);
      r.set_escalated(true);
      s += " A repeat offender: the recovery is escalated.";
    }
  }
  d->set_reason(d->reason() + s);
  *d->mutable_recurrence() = r;
}

namespace {
// One JSON line appended to the store, after the path's checks.
Status AppendLine(const fs::path& path, const google::protobuf::Message& entry,
                  const fs::path& incident);
}  // namespace

v1::HistoryEntry HistoryEntryOf(const v1::Diagnosis& d, const fs::path& incident) {
  v1::HistoryEntry e;
  e.set_time(d.initiator().time());
  e.set_node(d.initiator().node());
  e.set_gpu(d.initiator().gpu());
  e.set_failure_class(d.initiator().failure_class());
  e.set_owner(d.owner());
  e.set_incident(incident.generic_string());
  if (d.recovery().preconditions_size() > 0) e.set_action(d.recovery().preconditions(0).action());
  return e;
}

Status RecordHistory(const fs::path& path, const History& existing, const v1::HistoryEntry& entry, const fs::path& incident) {
  const fs::path read_only[] = {incident};
  DENPEX_RETURN_IF_ERROR(CheckOutputPath(path, read_only));
  if (entry.node().empty()) return Status::Ok();  // nothing diagnosed: nothing to remember
  const std::string self = SameIncident(incident);
  for (const v1::HistoryEntry& e : existing.entries) {
    if (SameIncident(e.incident()) == self && e.time() == entry.time()) return Status::Ok();
  }
  return AppendLine(path, entry, incident);
}

Status RecordCanary(const fs::path& path, const History& existing, const v1::CanaryRecord& record,
                    const fs::path& incident) {
  const fs::path read_only[] = {incident};
  DENPEX_RETURN_IF_ERROR(CheckOutputPath(path, read_only));
  const std::string self = SameIncident(record.incident());
  for (const v1::CanaryRecord& r : existing.canaries) {
    if (SameIncident(r.incident()) == self && r.time() == record.time() &&
        r.canary() == record.canary())
      return Status::Ok();
  }
  return AppendLine(path, record, incident);
}

namespace {
Status AppendLine(const fs::path& path, const google::protobuf::Message& entry,
                  const fs::path& incident) {
  const fs::path read_only[] = {incident};
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  std::string line;
  const auto st = google::protobuf::util::MessageToJsonString(entry, &line, opts);
  if (!st.ok()) return Status::Internal("history entry: " + std::string(st.message()));
  return AppendOutputFile(path, line + "\n", read_only);
}

}  // namespace

}  // namespace denpex::engine
