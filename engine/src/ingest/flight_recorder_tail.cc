#include "ingest/flight_recorder_tail.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

namespace denpex::engine {
namespace {

// The opcodes the walk names (Python's Lib/pickle.py names); MakeOps below knows them all.
// clang-format off
enum Op : unsigned char {
  kMark = '(', kStop = '.', kAppends = 'e', kSetItems = 'u', kEmptyList = ']', kEmptyDict = '}',
  kAppend = 'a', kBinGet = 'h', kBinPut = 'q', kLongBinPut = 'r', kMemoize = 0x94, kPop = '0',
  kBinUnicode = 'X', kBinString = 'T', kShortBinUnicode = 0x8c, kShortBinString = 'U',
  kBinUnicode8 = 0x8d, kBinInt = 'J', kBinInt1 = 'K', kBinInt2 = 'M', kGlobal = 'c',
};
// clang-format on

// What an opcode is to the walk.
enum class Role : std::uint8_t {
  kBad,     // not walked (unknown, POP, DUP, PERSID...): the walk gives up
  kScalar,  // pushes a scalar (the memo may take it)
  kGet,     // pushes a memo entry
  kPut,     // memoizes the top
  kMark,    // opens a MARK
  kClose,   // closes the newest MARK
  kOther,   // anything else the walk steps over (containers, APPEND, REDUCE, PROTO, FRAME...)
  kStop,
};

// How an opcode's argument is spelt: none, `n` bytes, a little-endian length of `n` bytes and
// that many bytes, or two lines (GLOBAL).
enum class Arg : std::uint8_t { kNone, kFixed, kCounted, kLines };

struct OpInfo {
  Role role = Role::kBad;
  Arg arg = Arg::kNone;
  std::uint8_t n = 0;
};

constexpr std::array<OpInfo, 256> MakeOps() {
  std::array<OpInfo, 256> t{};
  const auto set = [&t](int op, Role r, Arg a = Arg::kNone, std::uint8_t n = 0) {
    t[static_cast<std::size_t>(op)] = {r, a, n};
  };
  for (const int op : std::initializer_list<int>{'N', 0x88, 0x89}) set(op, Role::kScalar);
  set('J', Role::kScalar, Arg::kFixed, 4);
  set('K', Role::kScalar, Arg::kFixed, 1);
  set('M', Role::kScalar, Arg::kFixed, 2);
  set('G', Role::kScalar, Arg::kFixed, 8);
  set(0x82, Role::kScalar, Arg::kFixed, 1);
  set(0x83, Role::kScalar, Arg::kFixed, 2);
  set(0x84, Role::kScalar, Arg::kFixed, 4);
  for (const int op : std::initializer_list<int>{0x8a, 0x8c, 'U', 'C'})
    set(op, Role::kScalar, Arg::kCounted, 1);
  for (const int op : std::initializer_list<int>{0x8b, 'X', 'T', 'B'})
    set(op, Role::kScalar, Arg::kCounted, 4);
  for (const int op : std::initializer_list<int>{0x8d, 0x8e, 0x96})
    set(op, Role::kScalar, Arg::kCounted, 8);
  set('h', Role::kGet, Arg::kFixed, 1);
  set('j', Role::kGet, Arg::kFixed, 4);
  set('q', Role::kPut, Arg::kFixed, 1);
  set('r', Role::kPut, Arg::kFixed, 4);
  set(0x94, Role::kPut);
  set('(', Role::kMark);
  for (const int op : std::initializer_list<int>{'t', 'l', 'd', 0x91, 'e', 'u', 0x90, '1'})
    set(op, Role::kClose);
  for (const int op : std::initializer_list<int>{']', '}', ')', 0x8f, 'a', 's', 'R', 0x81, 0x92,
                                                 'b', 0x93, 0x85, 0x86, 0x87}) {
    set(op, Role::kOther);
  }
  set('c', Role::kOther, Arg::kLines);
  set(0x80, Role::kOther, Arg::kFixed, 1);
  set(0x95, Role::kOther, Arg::kFixed, 8);
  set('.', Role::kStop);
  return t;
}
constexpr std::array<OpInfo, 256> kOps = MakeOps();

bool IsString(unsigned char op) {
  return op == kBinUnicode || op == kBinString || op == kShortBinUnicode || op == kShortBinString ||
         op == kBinUnicode8;
}

// A little-endian unsigned integer of `n` bytes (1, 2, 4 or 8).
std::uint64_t Le(const char* p, int n) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  if (n == 1) return u[0];
  std::uint64_t v = 0;
  for (int k = n - 1; k >= 0; --k) v = v << 8 | u[k];
  return v;
}

// One opcode: where it starts, where its argument's payload starts, where it ends.
struct OpAt {
  unsigned char op;
  std::size_t at, arg, end;
};

// The opcode at `at`, or nullopt when it is not walked or runs past the end.
std::optional<OpAt> Decode(std::string_view b, std::size_t at) {
  const auto op = static_cast<unsigned char>(b[at]);
  const OpInfo& info = kOps[op];
  if (info.role == Role::kBad) return std::nullopt;
  const std::size_t size = b.size();
  std::size_t arg = at + 1, end = arg;
  switch (info.arg) {
    case Arg::kNone:
      break;
    case Arg::kFixed:
      end = arg + info.n;
      break;
    case Arg::kCounted: {
      if (arg + info.n > size) return std::nullopt;
      const std::uint64_t n = Le(b.data() + arg, info.n);
      arg += info.n;
      if (n > size - arg) return std::nullopt;
      end = arg + n;
      break;
    }
    case Arg::kLines: {
      const std::size_t nl = b.find('\n', arg);
      const std::size_t nl2 = nl == std::string_view::npos ? nl : b.find('\n', nl + 1);
      if (nl2 == std::string_view::npos) return std::nullopt;
      end = nl2 + 1;
      break;
    }
  }
  if (end > size) return std::nullopt;
  return OpAt{op, at, arg, end};
}

// The strings the walk looks for, as a memo entry's tag.
enum Tag : std::uint8_t {
  kNotString,
  kOtherString,
  kEntries,
  kPgStatus,
  kState,
  kProcessGroup,
  kPgId,
  kCompleted
};

Tag TagOf(std::string_view s) {
  if (s == "entries") return kEntries;
  if (s == "pg_status") return kPgStatus;
  if (s == "state") return kState;
  if (s == "process_group") return kProcessGroup;
  if (s == "pg_id") return kPgId;
  if (s == "completed") return kCompleted;
  return kOtherString;
}

// A memo entry as the walk saw it defined: the opcode that pushed it alone (a scalar or GLOBAL,
// to write again), its string and tag; `len` 0 when no one opcode made it (a container, a
// REDUCE), `at` then the memo put's place.
struct MemoDef {
  std::uint32_t at = 0, len = 0;
  std::uint32_t str_at = 0, str_len = 0;
  std::uint32_t walk = 0;  // the walk that defined it (a thread's walks reuse the vector)
  Tag tag = kNotString;
};

// A thread's memory for its walks, kept from one dump to the next: a ring of 2,000 entries
// defines some 24,000 memo entries, and a fresh vector per dump cost more in page faults and
// zeroing than the walk itself.
struct Scratch {
  std::vector<MemoDef> memo;
  std::uint32_t walk = 0;
};
thread_local Scratch scratch;

constexpr std::size_t kFailed = std::string_view::npos;

class Walk {
 public:
  explicit Walk(std::string_view b) : b_(b), memo_(scratch.memo) {
    if (++scratch.walk == 0) {  // wrapped: no entry may look defined by an earlier walk
      memo_.clear();
      scratch.walk = 1;
    }
    walk_ = scratch.walk;
  }

  // Walks from the pickle's start to the end of its entries list; false when it cannot.
  bool Run() {
    std::size_t pos = 0;
    while (pos < b_.size()) {
      if (phase_ == Phase::kEntries && depth_ == list_depth_ + 2) {
        pos = EntryBody(pos);  // the entry's items, up to its SETITEMS
        if (pos == kFailed) return false;
        continue;
      }
      const auto o = Decode(b_, pos);
      if (!o) return false;
      if (!Step(*o)) return false;
      if (phase_ == Phase::kDone) return true;
      pos = o->end;
    }
    return false;
  }

  // Which entries the reader needs: from the first not completed, or the first of a group's
  // last completed entries (a group with none: its first entry), whichever is older.
  std::size_t First() const {
    std::size_t first = entries_.size();
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (!entries_[i].completed) {
        first = i;
        break;
      }
    }
    for (const GroupSeen& g : groups_) {
      first = std::min(
          first, static_cast<std::size_t>(g.last_completed >= 0 ? g.last_completed : g.first));
    }
    return first;
  }

  // The pickle of entries [first, n): the bytes before the entries list's first batch, the memo
  // entries the kept bytes use that the skipped ones defined, then the kept bytes to the end.
  std::optional<std::string> TailPickle(std::size_t first) {
    const std::size_t from = entries_[first].at;
    std::string out(b_.substr(0, batch_open_));
    std::vector<bool> seeded;
    for (std::size_t pos = from; pos < b_.size();) {
      const auto o = Decode(b_, pos);
      if (!o) return std::nullopt;
      if (o->op == kStop) break;
      pos = o->end;
      if (kOps[o->op].role != Role::kGet) continue;
      const std::uint64_t idx = Le(b_.data() + o->arg, o->op == kBinGet ? 1 : 4);
      if (!Defined(idx)) continue;  // defined later, or never
      const MemoDef& d = memo_[idx];
      if (d.at < batch_open_ || d.at >= from) continue;  // the kept bytes define it
      if (d.len == 0) return std::nullopt;               // a container: not written again
      if (idx >= seeded.size()) seeded.resize(idx + 1, false);
      if (seeded[idx]) continue;
      seeded[idx] = true;
      out.append(b_.substr(d.at, d.len));
      out.push_back(static_cast<char>(kLongBinPut));
      for (int k = 0; k < 4; ++k) out.push_back(static_cast<char>(idx >> (8 * k) & 0xff));
      out.push_back(static_cast<char>(kPop));
    }
    out.append(b_.substr(from));
    return out;
  }

  bool has_status() const { return status_; }
  bool Defined(std::uint64_t idx) const { return idx < memo_.size() && memo_[idx].walk == walk_; }
  std::size_t entries() const { return entries_.size(); }
  std::vector<FrTail::Group> Groups() const {
    std::vector<FrTail::Group> out;
    for (const GroupSeen& g : groups_) out.push_back({g.name, g.last_completed});
    return out;
  }

 private:
  enum class Phase : std::uint8_t { kTop, kListOpen, kEntries, kBetweenBatches, kDone };
  enum class Want : std::uint8_t { kNothing, kState, kGroup, kPgId };
  struct EntrySeen {
    std::size_t at;
    bool completed = false;
  };
  struct GroupSeen {
    std::string name;
    std::int64_t first = 0, last_completed = -1;
  };

  // The string an opcode pushes (its own, or its memo entry's), and its tag.
  Tag TagAt(const OpAt& o, std::string_view* s) {
    if (IsString(o.op)) {
      *s = b_.substr(o.arg, o.end - o.arg);
      return TagOf(*s);
    }
    if (kOps[o.op].role != Role::kGet) return kNotString;
    const std::uint64_t idx = Le(b_.data() + o.arg, o.op == kBinGet ? 1 : 4);
    if (!Defined(idx) || memo_[idx].tag == kNotString) return kNotString;
    *s = b_.substr(memo_[idx].str_at, memo_[idx].str_len);
    return memo_[idx].tag;
  }

  // LONG_BINPUT `idx` at `at` of a value no one opcode made (a container): Put's first half, for
  // the hot loop.
  bool PutContainer(std::uint64_t idx, std::size_t at) {
    if (idx > memo_count_ + kMemoSlack) return false;
    if (idx >= memo_.size()) memo_.resize(std::max<std::size_t>(idx + 1, memo_.size() * 2));
    MemoDef& d = memo_[idx];
    if (d.walk == walk_) return false;
    d = MemoDef{.at = static_cast<std::uint32_t>(at), .walk = walk_};
    ++memo_count_;
    return true;
  }

  // A memo put `o`; the value it memoizes was pushed by the opcode at `one_at` alone, or by
  // several (kFailed).
  bool Put(const OpAt& o, std::size_t one_at, std::size_t one_end) {
    const std::uint64_t idx =
        o.op == kMemoize ? memo_count_ : Le(b_.data() + o.arg, o.op == kBinPut ? 1 : 4);
    if (idx > memo_count_ + kMemoSlack) return false;  // picklers number their memo 0, 1, 2, ...
    if (idx >= memo_.size()) memo_.resize(std::max<std::size_t>(idx + 1, memo_.size() * 2));
    MemoDef& d = memo_[idx];
    if (d.walk == walk_) return false;  // defined twice: which one would a GET mean?
    d = MemoDef{.at = static_cast<std::uint32_t>(o.at), .walk = walk_};
    ++memo_count_;
    if (one_at == kFailed) return true;
    d.at = static_cast<std::uint32_t>(one_at);
    d.len = static_cast<std::uint32_t>(one_end - one_at);
    const auto op = static_cast<unsigned char>(b_[one_at]);
    if (IsString(op)) {
      const auto v = Decode(b_, one_at);
      d.str_at = static_cast<std::uint32_t>(v->arg);
      d.str_len = static_cast<std::uint32_t>(v->end - v->arg);
      d.tag = TagOf(b_.substr(d.str_at, d.str_len));
    }
    return true;
  }

  bool Step(const OpAt& o) {
    const Role role = kOps[o.op].role;
    if (role == Role::kPut) return Put(o, one_at_, one_end_);  // the value stays the last one
    one_at_ = role == Role::kScalar || o.op == kGlobal ? o.at : kFailed;  // one opcode's value
    one_end_ = o.end;
    if (role == Role::kStop) return false;  // the pickle ends inside the walk's part of it
    switch (phase_) {
      case Phase::kTop:
        return Top(o, role);
      case Phase::kListOpen:
        if (role != Role::kMark) return false;
        batch_open_ = o.end;
        ++depth_;
        phase_ = Phase::kEntries;
        return true;
      case Phase::kBetweenBatches:
        if (role == Role::kMark) {  // Python's pickler appends in batches of 1,000
          ++depth_;
          phase_ = Phase::kEntries;
        } else {
          phase_ = Phase::kDone;
        }
        return true;
      case Phase::kEntries:
        return depth_ == list_depth_ + 1 && ListLevel(o, role);  // deeper: EntryBody
      case Phase::kDone:
        return true;
    }
    return false;
  }

  // The top dict's level: `pg_status` seen, and the `entries` key followed by its list.
  bool Top(const OpAt& o, Role role) {
    const bool after_entries_key = entries_key_;
    entries_key_ = false;
    if (role == Role::kMark) ++depth_;
    if (role == Role::kClose && depth_-- == 0) return false;
    if (depth_ != 1 || (role != Role::kScalar && role != Role::kGet && o.op != kEmptyList))
      return true;
    std::string_view s;
    const Tag tag = TagAt(o, &s);
    if (tag == kPgStatus) status_ = true;
    entries_key_ = tag == kEntries;
    if (o.op == kEmptyList && after_entries_key) {
      list_depth_ = depth_;
      phase_ = Phase::kListOpen;
    }
    return true;
  }

  // Directly in a batch of the entries list: each entry an EMPTY_DICT and its MARK; APPENDS ends
  // the batch.
  bool ListLevel(const OpAt& o, Role role) {
    if (open_dict_ && role != Role::kMark) return false;  // an entry without items: not walked
    if (o.op == kEmptyDict) {
      if (entries_.size() >= std::numeric_limits<std::uint32_t>::max()) return false;
      entries_.push_back({o.at});
      open_dict_ = true;
      return true;
    }
    if (role == Role::kMark && open_dict_) {
      open_dict_ = false;
      ++depth_;
      return true;
    }
    if (o.op == kAppends) {
      --depth_;
      phase_ = Phase::kBetweenBatches;
      return true;
    }
    return false;
  }

  // An entry's items, from after its MARK to its SETITEMS (the walk's hot loop: about 80
  // opcodes an entry). Notes its `state`, `process_group` and `pg_id` and the memo entries it
  // defines; the position after the SETITEMS, or kFailed.
  std::size_t EntryBody(std::size_t pos) {
    const auto* p = reinterpret_cast<const unsigned char*>(b_.data());
    const std::size_t size = b_.size();
    std::size_t depth = 1;  // the entry's own MARK
    Want want = Want::kNothing;
    std::optional<std::string_view> name;  // `process_group`'s first string
    std::optional<std::int64_t> id;        // `pg_id`
    std::string digits;                    // its text, the group's name when there is no other
    // The value the last opcode pushed when one opcode alone made it (the memo may take it).
    std::size_t one_at = kFailed, one_end = 0;
    while (pos < size) {
      const unsigned char op = p[pos];
      // The commonest opcodes of an entry first (its keys' GETs, the memo puts of its lists and
      // dicts, their APPENDs): tested one by one, which the branch predictor learns from an
      // entry's repeating pattern better than the jump table of the switch below.
      if (op == kBinGet && want == Want::kNothing && depth != 1 && pos + 2 <= size) {
        one_at = kFailed;
        pos += 2;
        continue;
      }
      if (op == kLongBinPut && one_at == kFailed && pos + 5 <= size) {
        if (!PutContainer(Le(b_.data() + pos + 1, 4), pos)) return kFailed;
        pos += 5;
        continue;
      }
      if ((op == kEmptyList || op == kAppend || op == kEmptyDict) && want == Want::kNothing) {
        one_at = kFailed;
        ++pos;
        continue;
      }
      // Decode's steps, written out: through Decode's optional the walk took 0.81 ms a dump
      // against 0.58 (the benchmark's dump, best of eight runs each).
      const OpInfo info = kOps[op];
      std::size_t arg = pos + 1, end = arg + info.n;
      if (info.arg == Arg::kCounted) {
        if (end > size) return kFailed;
        const std::uint64_t n = Le(b_.data() + arg, info.n);
        arg = end;
        if (n > size - arg) return kFailed;
        end = arg + n;
      } else if (info.arg == Arg::kLines) {
        const auto o = Decode(b_, pos);
        if (!o) return kFailed;
        end = o->end;
      }
      if (end > size) return kFailed;
      Tag tag = kNotString;  // what a value pushed here is, when the walk may need it
      std::string_view str;  // its string, when it is one
      switch (info.role) {
        case Role::kGet: {
          const std::uint64_t idx = Le(b_.data() + arg, info.n);
          if (Defined(idx)) {
            tag = memo_[idx].tag;
            str = b_.substr(memo_[idx].str_at, memo_[idx].str_len);
          }
          one_at = kFailed;
          break;
        }
        case Role::kScalar:
          if (IsString(op)) str = b_.substr(arg, end - arg), tag = TagOf(str);
          one_at = pos, one_end = end;
          break;
        case Role::kPut:
          if (!Put(OpAt{op, pos, arg, end}, one_at, one_end)) return kFailed;
          pos = end;
          continue;  // the memoized value stays the last one
        case Role::kMark:
          ++depth;
          one_at = kFailed;
          pos = end;
          continue;
        case Role::kClose:
          if (--depth == 0) {  // the entry's own items end: SETITEMS only
            if (op != kSetItems) return kFailed;
            --depth_;
            if (!name && id) {
              digits = std::to_string(*id);
              name = digits;
            }
            EndEntry(name.value_or(""));
            return end;
          }
          [[fallthrough]];
        case Role::kOther:
          one_at = op == kGlobal ? pos : kFailed, one_end = end;
          if (want != Want::kGroup) want = Want::kNothing;  // a tuple may open first
          pos = end;
          continue;
        case Role::kBad:
        case Role::kStop:
          return kFailed;
      }
      pos = end;
      // A value: the one a key the walk wants names, or such a key among the entry's own items.
      if (want != Want::kNothing) {
        if (want == Want::kState) entries_.back().completed = tag == kCompleted;
        if (want == Want::kGroup && tag != kNotString) name = str;
        if (want == Want::kPgId && (op == kBinInt1 || op == kBinInt2 || op == kBinInt)) {
          const auto v = static_cast<std::int64_t>(Le(b_.data() + arg, info.n));
          id = op == kBinInt ? static_cast<std::int32_t>(v) : v;
        }
        want = Want::kNothing;
        continue;
      }
      if (depth != 1 || tag < kState) continue;
      want = tag == kState          ? Want::kState
             : tag == kProcessGroup ? Want::kGroup
             : tag == kPgId         ? Want::kPgId
                                    : Want::kNothing;
    }
    return kFailed;
  }

  // Entry entries_.back() ended; `name` is its group as the reader names it: `process_group`'s
  // name, else `pg_id`'s digits.
  void EndEntry(std::string_view name) {
    const auto i = static_cast<std::int64_t>(entries_.size() - 1);
    if (last_group_ < 0 || groups_[static_cast<std::size_t>(last_group_)].name != name) {
      const auto it = std::find_if(groups_.begin(), groups_.end(),
                                   [&](const GroupSeen& g) { return g.name == name; });
      last_group_ = static_cast<std::int32_t>(it - groups_.begin());
      if (it == groups_.end()) groups_.push_back({.name = std::string(name), .first = i});
    }
    if (entries_.back().completed)
      groups_[static_cast<std::size_t>(last_group_)].last_completed = i;
  }

  std::string_view b_;
  Phase phase_ = Phase::kTop;
  std::size_t depth_ = 0;       // open MARKs
  std::size_t list_depth_ = 0;  // the MARK depth the entries list sits at
  std::size_t batch_open_ = 0;  // one past the MARK of the entries list's first batch
  bool status_ = false, entries_key_ = false, open_dict_ = false;
  std::size_t one_at_ = kFailed, one_end_ = 0;  // the last value, when one opcode made it
  std::vector<MemoDef>& memo_;  // by memo index; an entry counts when `walk` is walk_
  std::uint32_t walk_ = 0;
  std::uint64_t memo_count_ = 0;  // entries defined (MEMOIZE's next index)
  static constexpr std::uint64_t kMemoSlack = 4096;
  std::vector<EntrySeen> entries_;
  std::vector<GroupSeen> groups_;
  std::int32_t last_group_ = -1;
};

}  // namespace

std::optional<FrTail> FrPickleTail(std::string_view bytes) {
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x80 ||
      bytes.size() > std::numeric_limits<std::uint32_t>::max()) {
    return std::nullopt;
  }
  Walk walk(bytes);
  if (!walk.Run() || !walk.has_status() || walk.entries() < 2) return std::nullopt;
  const std::size_t first = walk.First();
  if (first == 0) return std::nullopt;
  auto pickle = walk.TailPickle(first);
  if (!pickle) return std::nullopt;
  return FrTail{.pickle = std::move(*pickle),
                .first = first,
                .entries = walk.entries(),
                .groups = walk.Groups()};
}

}  // namespace denpex::engine
