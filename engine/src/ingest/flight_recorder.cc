#include "ingest/flight_recorder.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "checkpoint/pickle.h"
#include "denpex/common/json_reader.h"
#include "ingest/flight_recorder_tail.h"
#include "ingest/json_pickle.h"

namespace denpex::engine {
namespace {

using ckpt::Pickle;
using ckpt::PyValue;
using VKind = PyValue::Kind;

// A value rendered as text (sizes, dtypes, ranks) is cut here, with "...".
constexpr std::size_t kTextCap = 160;
// Containers nested deeper than this are rendered as "[...]".
constexpr int kTextDepth = 6;

bool IsDumpKey(std::string_view k) {
  static constexpr std::string_view kKeys[] = {"version",        "pg_config",    "pg_status",
                                               "entries",        "nccl_version", "comm_lib_version",
                                               "nccl_comm_state"};
  return std::find(std::begin(kKeys), std::end(kKeys), k) != std::end(kKeys);
}

std::uint64_t Le(std::string_view b) {
  std::uint64_t v = 0;
  for (std::size_t k = b.size(); k-- > 0;) v = v << 8 | static_cast<unsigned char>(b[k]);
  return v;
}

// The first string of a pickle, when the opcodes before it only open the top dict (EMPTY_DICT,
// MARK, memo puts, a frame): a dump's first key.
std::string_view FirstPickleKey(std::string_view b) {
  std::size_t pos = 2;
  for (int step = 0; step < 8 && pos < b.size(); ++step) {
    const auto op = static_cast<unsigned char>(b[pos++]);
    std::size_t width = 0;
    switch (op) {
      case '}':
      case '(':
      case 0x94:
        continue;
      case 'q':
        pos += 1;
        continue;
      case 'r':
        pos += 4;
        continue;
      case 0x95:
        pos += 8;
        continue;
      case 'X':
        width = 4;
        break;
      case 0x8c:
        width = 1;
        break;
      case 0x8d:
        width = 8;
        break;
      default:
        return {};
    }
    if (pos + width > b.size()) return {};
    const std::uint64_t n = Le(b.substr(pos, width));
    pos += width;
    if (n > 64 || pos + n > b.size()) return {};
    return b.substr(pos, n);
  }
  return {};
}

// ---- The dump's fields ----------------------------------------------------------------------

// Reads a dump's values out of its Pickle (either form).
class Dump {
 public:
  explicit Dump(const Pickle& p) : p_(p) {}

  // torch's pickler writes an int list as `torch.jit._pickle.build_intlist([...])` (and likewise
  // for bool, double and tensor lists): the list itself.
  const PyValue& Plain(const PyValue& v) const {
    if (v.kind != VKind::kObject || v.ref >= p_.containers.size()) return v;
    const ckpt::PyContainer& c = p_.containers[v.ref];
    if (!p_.Str(c.type).starts_with("torch.jit._pickle.build_") || c.items.empty()) return v;
    const auto args = p_.Items(c.items[0]);
    return args.size() == 1 ? args[0] : v;
  }
  std::span<const PyValue> Items(const PyValue& v) const { return p_.Items(Plain(v)); }
  const PyValue* Get(const PyValue& dict, std::string_view key) const { return p_.Get(dict, key); }
  std::string_view Str(const PyValue* v) const { return v ? p_.Str(*v) : std::string_view(); }
  std::optional<std::int64_t> Int(const PyValue* v) const {
    if (v == nullptr || (v->kind != VKind::kInt && v->kind != VKind::kBool)) return std::nullopt;
    return v->i;
  }
  std::int64_t IntOr(const PyValue& dict, std::string_view key, std::int64_t none) const {
    return Int(Get(dict, key)).value_or(none);
  }
  // The pairs of a dict, in order.
  std::vector<std::pair<PyValue, PyValue>> Pairs(const PyValue* v) const {
    std::vector<std::pair<PyValue, PyValue>> out;
    if (v == nullptr || v->kind != VKind::kDict || v->ref >= p_.containers.size()) return out;
    const auto& items = p_.containers[v->ref].items;
    for (std::size_t k = 0; k + 1 < items.size(); k += 2) out.emplace_back(items[k], items[k + 1]);
    return out;
  }
  // A key as text: a string, or an int's digits (pg_status keyed by pg id).
  std::string Key(const PyValue& v) const {
    if (v.kind == VKind::kInt) return std::to_string(v.i);
    return std::string(p_.Str(v));
  }

  // A value as the dump shows it: `[[1024, 1024]]`, `[Float, Float]`; strings unquoted; capped.
  std::string Text(const PyValue* v) const {
    std::string out;
    if (v != nullptr) AppendText(*v, 0, &out);
    if (out.size() > kTextCap) {
      out.resize(kTextCap - 3);
      out += "...";
    }
    return out;
  }

 private:
  void AppendText(const PyValue& raw, int depth, std::string* out) const {
    if (out->size() > kTextCap) return;
    const PyValue& v = Plain(raw);
    switch (v.kind) {
      case VKind::kNone:
        *out += "None";
        return;
      case VKind::kBool:
        *out += v.i ? "True" : "False";
        return;
      case VKind::kInt:
        *out += std::to_string(v.i);
        return;
      case VKind::kStr:
        *out += p_.Str(v);
        return;
      case VKind::kTuple:
      case VKind::kList: {
        if (depth >= kTextDepth) {
          *out += "[...]";
          return;
        }
        out->push_back('[');
        bool first = true;
        for (const PyValue& item : p_.Items(v)) {
          if (!first) *out += ", ";
          first = false;
          AppendText(item, depth + 1, out);
          if (out->size() > kTextCap) return;
        }
        out->push_back(']');
        return;
      }
      default:
        *out += "?";
        return;
    }
  }

  const Pickle& p_;
};

FrCollective::State StateOf(std::string_view s) {
  if (s == "completed") return FrCollective::State::kCompleted;
  if (s == "started") return FrCollective::State::kStarted;
  return FrCollective::State::kScheduled;
}

// The number of ranks `[0, 1, 2]` lists (-1 when it is not such a list).
std::int32_t CountRanks(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') return -1;
  s = s.substr(1, s.size() - 2);
  std::int32_t n = 0;
  bool digit = false;
  for (const char c : s) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c == ',') {
      if (!digit) return -1;
      ++n, digit = false;
    } else if (c != ' ') {
      return -1;
    }
  }
  if (digit)
    ++n;
  else if (n > 0)
    return -1;
  return n;
}

Event NewEvent(Kind kind, std::uint32_t file, std::int32_t rank, std::uint32_t line, TimeNs time) {
  Event e;
  e.family = Family::kFlightRecorder;
  e.kind = kind;
  e.rank = rank;
  e.file = file;
  e.line = line;
  e.time = time;
  e.clock = time > 0 ? Clock::kFull : Clock::kNone;
  return e;
}

// The entry fields the reader looks at. An entry's keys are looked up once each, by the string
// they are (torch's and Python's picklers memoize them: one string per key for the whole ring).
enum Field : std::uint8_t {
  kOtherField,
  kPgId,
  kProcessGroup,
  kSeq,
  kP2pSeq,
  kIsP2p,
  kRecordId,
  kOp,
  kSizes,
  kDtypes,
  kState,
  kCreated,
  kStartedAt,
  kCompletedAt,
  kTimeout,
  kFieldCount
};

Field FieldOf(std::string_view k) {
  static constexpr std::pair<std::string_view, Field> kNames[] = {
      {"pg_id", kPgId},
      {"process_group", kProcessGroup},
      {"collective_seq_id", kSeq},
      {"p2p_seq_id", kP2pSeq},
      {"is_p2p", kIsP2p},
      {"record_id", kRecordId},
      {"profiling_name", kOp},
      {"input_sizes", kSizes},
      {"input_dtypes", kDtypes},
      {"state", kState},
      {"time_created_ns", kCreated},
      {"time_discovered_started_ns", kStartedAt},
      {"time_discovered_completed_ns", kCompletedAt},
      {"timeout_ms", kTimeout}};
  for (const auto& [name, f] : kNames) {
    if (name == k) return f;
  }
  return kOtherField;
}

struct Entry {
  const PyValue* f[kFieldCount] = {};
};

// What the scan keeps of each entry.
struct Brief {
  std::int64_t seq = -1;
  TimeNs created = 0;
  std::int32_t group = -1;  // index into Reader::groups_
  FrCollective::State state = FrCollective::State::kScheduled;
};

class Reader {
 public:
  // `skipped`: the ring's oldest entries left out of `p` (FrPickleTail); the entries it holds
  // keep their places in the whole ring.
  Reader(const Pickle& p, std::uint32_t file, std::int32_t rank, bool json, FrRead* out,
         std::size_t skipped = 0)
      : p_(p),
        d_(p),
        root_(p.root),
        file_(file),
        rank_(rank),
        json_(json),
        out_(out),
        skipped_(skipped),
        field_of_(p.strings.size(), 0xff) {}

  void Run() {
    if (root_.kind != VKind::kDict) {
      out_->problem = "a Flight Recorder dump whose top level is not a dict";
      return;
    }
    const PyValue* entries = d_.Get(root_, "entries");
    const PyValue* config = d_.Get(root_, "pg_config");
    if (entries == nullptr && config == nullptr) {
      out_->problem = "not a Flight Recorder dump (no `entries`, no `pg_config`)";
      return;
    }
    const auto items = entries ? d_.Items(*entries) : std::span<const PyValue>();
    ScanEntries(items);
    FrDump dump{.version = Intern(d_.Str(d_.Get(root_, "version"))),
                .nccl_version = Intern(d_.Str(d_.Get(root_, "nccl_version"))),
                .groups = 0,
                .entries = static_cast<std::int32_t>(skipped_ + items.size()),
                .json = json_};
    const auto config_pairs = d_.Pairs(config);
    dump.groups = static_cast<std::int32_t>(config_pairs.size());
    Event de = NewEvent(Kind::kFrDump, file_, rank_, 1, newest_);
    de.detail = dump;
    out_->log.events.push_back(de);
    Groups(config_pairs);
    Collectives(items);
    kept_ = items.size();
  }

  // Whether this reading of a ring's tail saw what the walk of the whole ring did: its length,
  // every group and each one's last completed entry at the same place.
  bool SeesTheWalksGroups(const FrTail& tail) const {
    if (skipped_ + kept_ != tail.entries || groups_.size() != tail.groups.size()) return false;
    for (const FrTail::Group& t : tail.groups) {
      const auto it = group_index_.find(t.name);
      if (it == group_index_.end()) return false;
      const std::int64_t mine = groups_[static_cast<std::size_t>(it->second)].last_completed_entry;
      if ((mine < 0 ? -1 : mine + static_cast<std::int64_t>(skipped_)) != t.last_completed)
        return false;
    }
    return true;
  }

 private:
  struct GroupSeen {
    std::string name;
    std::string_view desc;
    std::int64_t enqueued = -1, started = -1, completed = -1;
    TimeNs newest = 0;
    std::int64_t last_completed_entry = -1;  // index into entries
  };

  StrId Intern(std::string_view v) { return v.empty() ? kNoStr : out_->log.strings.Intern(v); }

  Entry Fields(const PyValue& e) {
    Entry out;
    const PyValue* d = &e;
    if (d->kind == VKind::kObject && d->ref < p_.containers.size())
      d = &p_.containers[d->ref].state;
    if (d->kind != VKind::kDict || d->ref >= p_.containers.size()) return out;
    const auto& items = p_.containers[d->ref].items;
    for (std::size_t k = 0; k + 1 < items.size(); k += 2) {
      const PyValue& key = items[k];
      if (key.kind != VKind::kStr || key.ref >= field_of_.size()) continue;
      std::uint8_t& f = field_of_[key.ref];
      if (f == 0xff) f = FieldOf(p_.Str(key));
      if (f != kOtherField) out.f[f] = &items[k + 1];
    }
    return out;
  }
  std::int64_t Int(const Entry& e, Field f, std::int64_t none) const {
    return d_.Int(e.f[f]).value_or(none);
  }
  FrCollective::State State(const Entry& e) const { return StateOf(d_.Str(e.f[kState])); }
  bool IsP2p(const Entry& e) const {
    if (const auto p = d_.Int(e.f[kIsP2p])) return *p != 0;
    const std::string_view op = d_.Str(e.f[kOp]);
    return op.find("send") != std::string_view::npos || op.find("recv") != std::string_view::npos;
  }
  // The group an entry belongs to (`process_group`'s name, else its pg_id), found or added.
  std::int32_t GroupOf(const Entry& e) {
    std::string_view name, desc;
    std::string id;
    const auto pg = e.f[kProcessGroup] ? d_.Items(*e.f[kProcessGroup]) : std::span<const PyValue>();
    if (!pg.empty() && pg[0].kind == VKind::kStr) {
      name = p_.Str(pg[0]);
      if (pg.size() > 1) desc = p_.Str(pg[1]);
    } else if (const auto n = d_.Int(e.f[kPgId])) {
      id = std::to_string(*n);
      name = id;
    }
    if (last_group_ >= 0 && groups_[static_cast<std::size_t>(last_group_)].name == name)
      return last_group_;
    auto it = group_index_.find(std::string(name));
    if (it == group_index_.end()) {
      it = group_index_.emplace(std::string(name), static_cast<std::int32_t>(groups_.size())).first;
      groups_.push_back({.name = std::string(name), .desc = desc});
    }
    last_group_ = it->second;
    return it->second;
  }

  void ScanEntries(std::span<const PyValue> items) {
    briefs_.resize(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Entry e = Fields(items[i]);
      Brief& b = briefs_[i];
      b.group = GroupOf(e);
      GroupSeen& g = groups_[static_cast<std::size_t>(b.group)];
      b.created = Int(e, kCreated, 0);
      b.state = State(e);
      b.seq = Int(e, kSeq, -1);
      g.newest = std::max(g.newest, b.created);
      newest_ = std::max(newest_, b.created);
      if (b.state == FrCollective::State::kCompleted)
        g.last_completed_entry = static_cast<std::int64_t>(i);
      if (IsP2p(e)) continue;
      g.enqueued = std::max(g.enqueued, b.seq);
      if (b.state != FrCollective::State::kScheduled) g.started = std::max(g.started, b.seq);
      if (b.state == FrCollective::State::kCompleted) g.completed = std::max(g.completed, b.seq);
    }
  }

  // pg_status's entry of the group named `name`.
  const PyValue* StatusOf(const std::string& name,
                          const std::vector<std::pair<PyValue, PyValue>>& status) const {
    for (const auto& [k, v] : status) {
      if (d_.Key(k) == name) return &v;
    }
    return nullptr;
  }

  void Groups(const std::vector<std::pair<PyValue, PyValue>>& config) {
    const PyValue* status_dict = d_.Get(root_, "pg_status");
    const auto status = d_.Pairs(status_dict);
    for (std::size_t i = 0; i < config.size(); ++i) {
      const auto& [key, cfg] = config[i];
      const std::string name = d_.Key(key);
      const auto seen = group_index_.find(name);
      const GroupSeen g = seen != group_index_.end()
                              ? groups_[static_cast<std::size_t>(seen->second)]
                              : GroupSeen{};
      FrGroup fg{.pg = Intern(name)};
      fg.pg_desc = Intern(d_.Str(d_.Get(cfg, "desc")));
      if (fg.pg_desc == kNoStr) fg.pg_desc = Intern(g.desc);
      const PyValue* ranks = d_.Get(cfg, "ranks");
      fg.ranks = Intern(d_.Text(ranks));
      if (ranks != nullptr && ranks->kind == VKind::kStr) {
        fg.size = CountRanks(d_.Str(ranks));
      } else if (ranks != nullptr &&
                 (ranks->kind == VKind::kList || ranks->kind == VKind::kTuple)) {
        fg.size = static_cast<std::int32_t>(d_.Items(*ranks).size());
      }
      if (const PyValue* st = status_dict ? StatusOf(name, status) : nullptr) {
        fg.last_enqueued = d_.IntOr(*st, "last_enqueued_collective", -1);
        fg.last_started = d_.IntOr(*st, "last_started_collective", -1);
        fg.last_completed = d_.IntOr(*st, "last_completed_collective", -1);
      } else {
        fg.last_enqueued = g.enqueued, fg.last_started = g.started, fg.last_completed = g.completed;
      }
      Event e = NewEvent(Kind::kFrGroup, file_, rank_, static_cast<std::uint32_t>(i + 1), g.newest);
      e.detail = fg;
      out_->log.events.push_back(e);
    }
  }

  void Collectives(std::span<const PyValue> items) {
    std::vector<char> last(items.size(), 0);
    for (const GroupSeen& g : groups_) {
      if (g.last_completed_entry >= 0) last[static_cast<std::size_t>(g.last_completed_entry)] = 1;
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (briefs_[i].state == FrCollective::State::kCompleted && !last[i]) continue;
      const Entry e = Fields(items[i]);
      const GroupSeen& g = groups_[static_cast<std::size_t>(briefs_[i].group)];
      FrCollective c;
      c.pg = Intern(g.name);
      c.pg_desc = Intern(g.desc);
      c.op = Intern(d_.Str(e.f[kOp]));
      c.sizes = Intern(d_.Text(e.f[kSizes]));
      c.dtypes = Intern(d_.Text(e.f[kDtypes]));
      c.state = briefs_[i].state;
      c.p2p = IsP2p(e);
      c.seq = briefs_[i].seq;
      c.p2p_seq = Int(e, kP2pSeq, -1);
      c.record_id = Int(e, kRecordId, -1);
      c.started = Int(e, kStartedAt, 0);
      c.completed = Int(e, kCompletedAt, 0);
      c.timeout_ms = Int(e, kTimeout, -1);
      Event ev = NewEvent(Kind::kFrCollective, file_, rank_,
                          static_cast<std::uint32_t>(skipped_ + i + 1), briefs_[i].created);
      ev.detail = c;
      out_->log.events.push_back(ev);
    }
  }

  const Pickle& p_;
  Dump d_;
  const PyValue& root_;
  std::uint32_t file_;
  std::int32_t rank_;
  bool json_;
  FrRead* out_;
  std::size_t skipped_;
  std::size_t kept_ = 0;
  std::vector<std::uint8_t> field_of_;  // by string index: its Field, 0xff not looked up yet
  std::vector<GroupSeen> groups_;       // in order of first entry
  std::map<std::string, std::int32_t> group_index_;
  std::int32_t last_group_ = -1;
  std::vector<Brief> briefs_;
  TimeNs newest_ = 0;
};

}  // namespace

FrForm SniffFlightRecorder(std::string_view b, bool whole) {
  if (b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x80 && b[1] >= 2 && b[1] <= 5) {
    return IsDumpKey(FirstPickleKey(b)) ? FrForm::kPickle : FrForm::kNone;
  }
  std::size_t at = 0;
  while (at < b.size() && (b[at] == ' ' || b[at] == '\n' || b[at] == '\r' || b[at] == '\t')) ++at;
  if (at >= b.size() || b[at] != '{') return FrForm::kNone;
  JsonReader r(b.substr(at, 256));
  if (!r.BeginObject()) return FrForm::kNone;
  const auto key = r.NextKey();
  if (!key || !IsDumpKey(*key)) return FrForm::kNone;
  if (!whole) return FrForm::kJson;
  const bool both = b.find("\"pg_config\"") != std::string_view::npos &&
                    b.find("\"entries\"") != std::string_view::npos;
  return both ? FrForm::kJson : FrForm::kNone;
}

std::int32_t FlightRecorderRank(std::string_view name) {
  for (int strip = 0; strip <= 2; ++strip) {
    std::size_t digits = 0;
    while (digits < name.size() && name[name.size() - 1 - digits] >= '0' &&
           name[name.size() - 1 - digits] <= '9') {
      ++digits;
    }
    if (digits > 0) {
      if (digits > 7) return -1;
      std::int32_t r = 0;
      for (const char c : name.substr(name.size() - digits)) r = r * 10 + (c - '0');
      return r <= kMaxRank ? r : -1;
    }
    const std::size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0) return -1;
    name = name.substr(0, dot);
  }
  return -1;
}

FrRead ReadFlightRecorder(std::string_view bytes, FrForm form, std::uint32_t file,
                          std::int32_t rank, FrRing ring) {
  FrRead out;
  if (form == FrForm::kNone) {
    out.problem = "not a Flight Recorder dump";
    return out;
  }
  if (form == FrForm::kPickle && ring == FrRing::kTail) {
    if (const auto tail = FrPickleTail(bytes)) {
      const Pickle p = ckpt::RunPickle(tail->pickle);
      if (p.ok()) {
        Reader r(p, file, rank, /*json=*/false, &out, tail->first);
        r.Run();
        if (out.problem.empty() && r.SeesTheWalksGroups(*tail)) return out;
      }
      out = FrRead{};  // the whole ring, as if the walk had not been tried
    }
  }
  const Pickle p = form == FrForm::kPickle ? ckpt::RunPickle(bytes) : JsonAsPickle(bytes);
  if (!p.ok()) {
    const bool cut = p.error == ckpt::PickleError::kTruncated;
    out.problem = std::string(cut ? "Flight Recorder dump cut short (truncated): "
                                  : "malformed Flight Recorder dump: ") +
                  p.error_detail;
    return out;
  }
  Reader(p, file, rank, form == FrForm::kJson, &out).Run();
  return out;
}

std::string_view FrStateName(FrCollective::State s) {
  switch (s) {
    case FrCollective::State::kScheduled:
      return "scheduled";
    case FrCollective::State::kStarted:
      return "started";
    case FrCollective::State::kCompleted:
      return "completed";
  }
  return "scheduled";
}

std::string FrEventText(const Event& e, std::string_view name, const StringTable& str) {
  const auto s = [&](StrId id) { return id == kNoStr ? std::string_view() : str.Get(id); };
  std::string out(name);
  if (const auto* d = std::get_if<FrDump>(&e.detail)) {
    out += ": Flight Recorder dump";
    if (d->version != kNoStr) out.append(" version ").append(s(d->version));
    out += d->json ? " (JSON)" : " (pickle)";
    out += ", " + std::to_string(d->entries) + " entries, " + std::to_string(d->groups) + " groups";
    if (d->nccl_version != kNoStr) out.append(", NCCL ").append(s(d->nccl_version));
  } else if (const auto* g = std::get_if<FrGroup>(&e.detail)) {
    out.append(" pg_config ").append(std::to_string(e.line)).append(": pg ").append(s(g->pg));
    if (g->pg_desc != kNoStr) out.append(" (").append(s(g->pg_desc)).append(")");
    if (g->ranks != kNoStr) out.append(" ranks ").append(s(g->ranks));
    out += " last enqueued " + std::to_string(g->last_enqueued) + ", started " +
           std::to_string(g->last_started) + ", completed " + std::to_string(g->last_completed);
  } else if (const auto* c = std::get_if<FrCollective>(&e.detail)) {
    out.append(" entry ").append(std::to_string(e.line)).append(": ").append(s(c->op));
    out.append(" pg ").append(s(c->pg));
    if (c->pg_desc != kNoStr) out.append(" (").append(s(c->pg_desc)).append(")");
    if (c->p2p) {
      out += " p2p seq " + std::to_string(c->p2p_seq);
    } else {
      out += " seq " + std::to_string(c->seq);
    }
    out.append(" ").append(FrStateName(c->state));
    if (c->sizes != kNoStr) out.append(", sizes ").append(s(c->sizes));
    if (c->dtypes != kNoStr) out.append(" ").append(s(c->dtypes));
  } else {
    return {};
  }
  return out;
}

}  // namespace denpex::engine
