// ncclras's report (see nccl_ras.h), laid out as NCCL's src/ras/client_support.cc lays it out:
// rasClientRunInit's version lines and job summary, then rasClientRunComms's communicators
// table, its Errors and Warnings, and rasCountIsOutlier's rule for which ranks are named.
#include "nccl_ras.h"

#include <algorithm>
#include <array>
#include <vector>

#include "formatter.h"
#include "model/rng.h"
#include "text.h"

namespace denpex::sim {

namespace {

// What the text report's wording is in a range of releases.
struct RasTextShape {
  bool per_type;              // 2.26 on: counts per collective type; before: one count of all
  int collection_decimals;    // "Communicators... (0.01s)": 2; 2.28.7 on: 3
  bool missing_rank_lines;    // 2.26 on: a "Rank <r> -- GPU ..." line per missing rank; before:
                              // "The missing ranks: 3,5"
  bool not_launched_wording;  // 2.26 on: "have not launched any operations" for a count of 0
};

constexpr VersionRow<RasTextShape> kRasTextShapes[] = {
    {{"", "2.25"}, {false, 2, false, false}},
    {{"2.26", "2.28.6"}, {true, 2, true, true}},
    {{"2.28.7", ""}, {true, 3, true, true}},
};
static_assert(CoversEach(kRasTextShapes, kNcclReleases));

// `ncclras -f json` (2.28.7 on): 2.28.7 and 2.28.9 write a missing rank's "nvml_dev" without its
// comma (jsonWriteMissingRank), 2.29 fixed it.
struct RasJsonShape {
  bool nvml_comma;
};

constexpr VersionRow<RasJsonShape> kRasJsonShapes[] = {
    {{"", "2.28.9"}, {false}},
    {{"2.29", ""}, {true}},
};
static_assert(CoversEach(kRasJsonShapes, kNcclReleases));

constexpr std::string_view kFuncNames[kNumRasFuncs] = {"Broadcast", "Reduce", "AllGather",
                                                       "ReduceScatter", "AllReduce"};
// rasACStatus's bits, as indexes: statusStr[] by the highest bit set.
constexpr int kStatusRunning = 2, kStatusAbort = 4;
constexpr std::string_view kStatusNames[] = {"NOCOMM", "INIT", "RUNNING", "FINALIZE", "ABORT"};
constexpr unsigned kMismatch = 1, kIncomplete = 4;
constexpr std::string_view kErrorNames[] = {"OK",
                                            "MISMATCH",
                                            "ERROR",
                                            "ERROR,MISMATCH",
                                            "INCOMPLETE",
                                            "INCOMPLETE,MISMATCH",
                                            "INCOMPLETE,ERROR",
                                            "INCOMPLETE,ERROR,MISMATCH"};

// The outlier count above which RAS names no member of a set, and the shares of the
// communicator under which a set counts as an outlier (RAS_CLIENT_*).
constexpr int kDetailThreshold = 10;

bool IsOutlier(int count, bool verbose, int total = -1) {
  if (count == 1) return true;
  if (verbose) return total != -1 ? count < total * 0.5 : true;
  return count <= kDetailThreshold && (total == -1 || count <= total * 0.25);
}

// printf's `%<width>s`: `s` right-aligned in `width` columns.
void Right(LineBuilder& b, std::string_view s, int width) {
  if (static_cast<int>(s.size()) < width)
    b.out().append(static_cast<std::size_t>(width) - s.size(), ' ');
  b.Str(s);
}

// `#<group>-<index> (<hash as 16 hex digits>) `: a communicator's section heading.
void Heading(LineBuilder& b, int group, int index, std::uint64_t hash) {
  char hex[17];
  for (int i = 15; i >= 0; --i, hash >>= 4) hex[i] = "0123456789abcdef"[hash & 15];
  b.Char('#').Int(group).Char('-').Int(index).Str(" (").Str(std::string_view(hex, 16)).Str(") ");
}

const char* Plural(int n, const char* many, const char* one = "") { return n > 1 ? many : one; }

// One NCCL communicator of the job: the world one (uid 0) or a TP / DP group's.
struct Comm {
  int uid;
  PgKind kind;
  int size;
  std::uint64_t hash;
};

std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// What a report says of one communicator: its members that answered and those that did not
// (global ranks, by comm rank), and rasAuxComm's statistics.
struct CommView {
  const Comm* comm;
  std::vector<int> present, missing;
  int nodes = 0, per_node_min = 0, per_node_max = 0;
  unsigned status = 0, errors = 0;
  int dead_missing = 0;
};

int HighestBit(unsigned v) { return v == 0 ? 0 : 31 - __builtin_clz(v); }

class Report {
 public:
  Report(const Job& job, const NcclRasReport& r, const RasTextShape& shape, bool verbose)
      : job_(job), r_(r), shape_(shape), verbose_(verbose) {
    comms_.push_back({0, PgKind::kDefault, job.world, 0});
    if (job.tp >= 2) {
      for (int g = 0; g < job.NumTpGroups(); ++g)
        comms_.push_back({1 + g, PgKind::kTensor, job.tp, 0});
    }
    if (job.dp >= 2) {
      const int base = 1 + job.NumTpGroups() + job.NumPpGroups();
      for (int g = 0; g < job.NumDpGroups(); ++g)
        comms_.push_back({base + g, PgKind::kData, job.dp, 0});
    }
    for (Comm& c : comms_)
      c.hash = Mix(job.seed * 0x100000001b3ULL + static_cast<std::uint64_t>(c.uid));
    std::sort(comms_.begin(), comms_.end(),
              [](const Comm& a, const Comm& b) { return a.hash < b.hash; });
    views_.reserve(comms_.size());
    for (const Comm& c : comms_) {
      CommView v = View(c);
      if (!v.present.empty()) views_.push_back(std::move(v));
    }
  }

  const RasCounts& CountsOf(int rank, PgKind kind) const {
    return r_.counts[static_cast<std::size_t>(rank) * kNumPgKinds + static_cast<std::size_t>(kind)];
  }
  // What the report compares for type `f`: that type's count, or (before 2.26) the sum.
  std::int64_t CountOf(int rank, PgKind kind, int f) const {
    const RasCounts& c = CountsOf(rank, kind);
    if (shape_.per_type) return c[f];
    std::int64_t sum = 0;
    for (const std::int32_t v : c) sum += v;
    return sum;
  }
  bool Answers(int rank) const {
    const RasProcess p = r_.process[static_cast<std::size_t>(rank)];
    return p == RasProcess::kRunning || p == RasProcess::kAborted;
  }

  CommView View(const Comm& c) const {
    CommView v{&c};
    int last_node = -1, run = 0;
    v.per_node_min = 1 << 30;
    auto close_run = [&] {
      if (run == 0) return;
      v.per_node_min = std::min(v.per_node_min, run);
      v.per_node_max = std::max(v.per_node_max, run);
    };
    const int funcs = shape_.per_type ? kNumRasFuncs : 1;
    for (int i = 0; i < c.size; ++i) {
      const int g = job_.GroupMember(c.uid, i);
      if (!Answers(g)) {
        v.missing.push_back(g);
        v.errors |= kIncomplete;
        if (r_.process[static_cast<std::size_t>(g)] == RasProcess::kDead) ++v.dead_missing;
        continue;
      }
      if (!v.present.empty()) {
        for (int f = 0; f < funcs; ++f) {
          if (CountOf(g, c.kind, f) != CountOf(v.present.front(), c.kind, f)) v.errors |= kMismatch;
        }
      }
      v.present.push_back(g);
      v.status |=
          1u << (r_.process[static_cast<std::size_t>(g)] == RasProcess::kAborted ? kStatusAbort
                                                                                 : kStatusRunning);
      const int node = job_.NodeOf(g);
      if (node != last_node) {
        close_run();
        ++v.nodes;
        run = 0;
        last_node = node;
      }
      ++run;
    }
    close_run();
    if (__builtin_popcount(v.status) > 1) v.errors |= kMismatch;
    return v;
  }

  // rasAuxCommsCompareRev: the largest communicators first, then the most nodes, the highest
  // status, the most errors, the fewest ranks answering; the collection's order (by hash) after.
  std::vector<const CommView*> Sorted() const {
    std::vector<const CommView*> out;
    for (const CommView& v : views_) out.push_back(&v);
    std::stable_sort(out.begin(), out.end(), [](const CommView* a, const CommView* b) {
      if (a->comm->size != b->comm->size) return a->comm->size > b->comm->size;
      if (a->nodes != b->nodes) return a->nodes > b->nodes;
      if (HighestBit(a->status) != HighestBit(b->status))
        return HighestBit(a->status) > HighestBit(b->status);
      if (a->errors != b->errors) return a->errors > b->errors;
      return a->present.size() < b->present.size();
    });
    return out;
  }

  std::string Gpu(int rank) const {
    std::string s = std::to_string(job_.LocalRank(rank));
    if (job_.PhysicalGpu(rank) != job_.LocalRank(rank))
      s += " (NVML " + std::to_string(job_.PhysicalGpu(rank)) + ")";
    return s;
  }
  void RankLine(std::string& out, int comm_rank, int g, std::string_view what) const {
    LineBuilder(&out)
        .Str("  Rank ")
        .Int(comm_rank)
        .Str(what)
        .Str(" -- GPU ")
        .Str(Gpu(g))
        .Str(" managed by process ")
        .Int(job_.worker_pid[static_cast<std::size_t>(g)])
        .Str(" on node ")
        .Str(NodeAddressText(job_.NodeOf(g)))
        .Char('\n');
  }
  void ProcessLines(std::string& out, RasProcess which) const {
    std::vector<std::pair<std::int64_t, int>> listed;  // by node address, then pid
    for (int g = 0; g < job_.world; ++g) {
      if (r_.process[static_cast<std::size_t>(g)] != which) continue;
      listed.emplace_back(
          std::int64_t{job_.NodeOf(g)} << 32 | job_.worker_pid[static_cast<std::size_t>(g)], g);
    }
    std::sort(listed.begin(), listed.end());
    for (const auto& [key, g] : listed) {
      LineBuilder(&out)
          .Str("  Process ")
          .Int(job_.worker_pid[static_cast<std::size_t>(g)])
          .Str(" on node ")
          .Str(NodeAddressText(job_.NodeOf(g)))
          .Str(" managing GPU ")
          .Str(Gpu(g))
          .Char('\n');
    }
  }

  void Table(std::string& out, const std::vector<const CommView*>& sorted,
             std::vector<std::pair<int, int>>& groups) const {
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      const CommView& v = *sorted[i];
      if (i > 0) {
        const CommView& p = *sorted[i - 1];
        if (v.comm->size == p.comm->size && v.nodes == p.nodes &&
            HighestBit(v.status) == HighestBit(p.status) && v.errors == p.errors) {
          ++groups.back().second;
          continue;
        }
      }
      groups.emplace_back(static_cast<int>(i), 1);
    }
    if (sorted.empty()) {
      out += "No communicator data collected!\n";
      return;
    }
    out +=
        "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
        "    #  in group  per comm  per node  per comm  in group\n";
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(job_.world));
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const auto [first, count] = groups[gi];
      int lo = 1 << 30, hi = 0, total = 0;
      std::fill(seen.begin(), seen.end(), 0);
      for (int c = first; c < first + count; ++c) {
        lo = std::min(lo, sorted[static_cast<std::size_t>(c)]->per_node_min);
        hi = std::max(hi, sorted[static_cast<std::size_t>(c)]->per_node_max);
        for (const int g : sorted[static_cast<std::size_t>(c)]->present) {
          total += seen[static_cast<std::size_t>(g)] == 0;
          seen[static_cast<std::size_t>(g)] = 1;
        }
      }
      const CommView& v = *sorted[static_cast<std::size_t>(first)];
      const std::string per_node =
          lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
      LineBuilder b(&out);
      b.Padded(static_cast<std::int64_t>(gi), 5, ' ').Str("  ").Padded(count, 8, ' ').Str("  ");
      b.Padded(v.nodes, 8, ' ').Str("  ");
      Right(b, per_node, 8);
      b.Str("  ").Padded(v.comm->size, 8, ' ').Str("  ").Padded(total, 8, ' ').Str("  ");
      Right(b, kStatusNames[HighestBit(v.status)], 8);
      b.Str("  ");
      Right(b, kErrorNames[v.errors], 6);
      b.Char('\n');
    }
  }

  void Incomplete(std::string& out, int group, int index, const CommView& v) const {
    const int n = static_cast<int>(v.missing.size());
    LineBuilder b(&out);
    Heading(b, group, index, v.comm->hash);
    b.Str("INCOMPLETE\n  Missing communicator data from ").Int(n).Str(" rank").Str(Plural(n, "s"));
    b.Char('\n');
    if (IsOutlier(n, verbose_)) {
      if (shape_.missing_rank_lines) {
        for (const int g : v.missing) RankLine(out, job_.GroupRank(g, v.comm->kind), g, "");
      } else {
        std::string list;
        for (const int g : v.missing) {
          if (!list.empty()) list += ',';
          list += std::to_string(job_.GroupRank(g, v.comm->kind));
        }
        b.Str("  The missing rank").Str(Plural(n, "s")).Str(": ").Str(list).Char('\n');
      }
    }
    out += '\n';
  }

  // The ranks grouped by `value`, the most frequent value first (ties: the larger value), each
  // group's ranks by comm rank.
  struct ValueGroup {
    std::int64_t value;
    std::vector<int> ranks;  // global ranks
  };
  template <typename ValueOf>
  std::vector<ValueGroup> GroupBy(const CommView& v, ValueOf value_of) const {
    std::vector<std::pair<std::int64_t, int>> keyed;
    keyed.reserve(v.present.size());
    for (const int g : v.present) keyed.emplace_back(value_of(g), g);
    std::sort(keyed.begin(), keyed.end());  // by value, then global (= comm) rank order
    std::vector<ValueGroup> groups;
    for (const auto& [value, g] : keyed) {
      if (groups.empty() || groups.back().value != value) groups.push_back({value, {}});
      groups.back().ranks.push_back(g);
    }
    std::stable_sort(groups.begin(), groups.end(), [](const ValueGroup& a, const ValueGroup& b) {
      if (a.ranks.size() != b.ranks.size()) return a.ranks.size() > b.ranks.size();
      return a.value > b.value;
    });
    return groups;
  }

  void Mismatch(std::string& out, int group, int index, const CommView& v) const {
    LineBuilder b(&out);
    Heading(b, group, index, v.comm->hash);
    b.Str("MISMATCH\n");
    const int size = v.comm->size;
    const PgKind kind = v.comm->kind;
    if (__builtin_popcount(v.status) > 1) {
      out += "  Communicator ranks have different status\n";
      const auto groups = GroupBy(v, [&](int g) {
        return std::int64_t{r_.process[static_cast<std::size_t>(g)] == RasProcess::kAborted
                                ? kStatusAbort
                                : kStatusRunning};
      });
      for (const ValueGroup& vg : groups) {
        const int n = static_cast<int>(vg.ranks.size());
        const std::string_view name = kStatusNames[vg.value];
        if (n > 1) b.Str("  ").Int(n).Str(" ranks have status ").Str(name).Char('\n');
        if (!IsOutlier(n, verbose_, size)) continue;
        for (const int g : vg.ranks) {
          RankLine(out, job_.GroupRank(g, kind), g,
                   n > 1 ? "" : " has status " + std::string(name));
        }
      }
    }
    const int funcs = shape_.per_type ? kNumRasFuncs : 1;
    for (int f = 0; f < funcs; ++f) {
      bool inconsistent = false;
      for (const int g : v.present)
        inconsistent = inconsistent || CountOf(g, kind, f) != CountOf(v.present.front(), kind, f);
      if (!inconsistent) continue;
      if (shape_.per_type) {
        b.Str("  Communicator ranks have different ").Str(kFuncNames[f]).Str(" operation counts\n");
      } else {
        out += "  Communicator ranks have different collective operation counts\n";
      }
      for (const ValueGroup& vg : GroupBy(v, [&](int g) { return CountOf(g, kind, f); })) {
        const int n = static_cast<int>(vg.ranks.size());
        const bool none = vg.value == 0 && shape_.not_launched_wording;
        if (n > 1) {
          if (none) {
            b.Str("  ").Int(n).Str(" ranks have not launched any operations\n");
          } else {
            b.Str("  ")
                .Int(n)
                .Str(" ranks have launched up to operation ")
                .Int(vg.value)
                .Char('\n');
          }
        }
        if (!IsOutlier(n, verbose_, size)) continue;
        const std::string alone = none
                                      ? " has not launched any operations"
                                      : " has launched up to operation " + std::to_string(vg.value);
        for (const int g : vg.ranks) RankLine(out, job_.GroupRank(g, kind), g, n > 1 ? "" : alone);
      }
      if (shape_.per_type) out += '\n';
    }
    if (!shape_.per_type) out += '\n';
  }

  int Count(RasProcess which) const {
    return static_cast<int>(std::count(r_.process.begin(), r_.process.end(), which));
  }

  const std::vector<CommView>& views() const { return views_; }

 private:
  const Job& job_;
  const NcclRasReport& r_;
  const RasTextShape& shape_;
  bool verbose_;
  std::vector<Comm> comms_;
  std::vector<CommView> views_;  // the communicators some rank reported, by hash
};

// How long the RAS collective took: a few ms, growing with the job; a silent process's leg
// times out (RAS_COLLECTIVE_LEG_TIMEOUT_SEC, 5 s).
double CollectionSeconds(const Job& job, const NcclRasReport& r, int timeouts) {
  Rng rng(job.seed, StreamId::kNcclRas, static_cast<std::uint64_t>(r.time / kNsPerSec));
  return 0.004 + 0.002 * static_cast<double>(job.world) / 1024.0 + 0.003 * rng.Uniform() +
         (timeouts > 0 ? 5.0 : 0.0);
}

}  // namespace

NcclRasFormatter::NcclRasFormatter(const Job& job, const NcclProfile& nccl)
    : job_(job), release_(nccl.name), cuda_version_(nccl.cuda_driver) {
  const std::size_t at = nccl.version_banner.find("+cuda");
  cuda_ =
      at == std::string_view::npos ? std::string_view("12.4") : nccl.version_banner.substr(at + 5);
}

TimeNs NcclRasFormatter::NodeTime(TimeNs t) const { return t + job_.clock_offset[0]; }

void NcclRasFormatter::Append(std::string& out, const NcclRasReport& report) const {
  const CivilTime c = ToCivil(NodeTime(report.time));
  LineBuilder(&out)
      .Zero(c.year, 4)
      .Char('-')
      .Zero(c.month, 2)
      .Char('-')
      .Zero(c.day, 2)
      .Char('T')
      .Zero(c.hour, 2)
      .Char(':')
      .Zero(c.minute, 2)
      .Char(':')
      .Zero(c.second, 2)
      .Str("+00:00\n");
  if (!report.answered) return;  // ncclras: "Failed to connect to the NCCL RAS service!" (stderr)
  out += job_.nccl_ras.json ? Json(report) : Text(report);
}

std::string NcclRasFormatter::Text(const NcclRasReport& report) const {
  const RasTextShape& shape = RowFor(kRasTextShapes, release_);
  const Report rep(job_, report, shape, job_.nccl_ras.verbose);
  std::string out;
  LineBuilder b(&out);
  b.Str("NCCL version ").Str(release_).Str(" compiled with CUDA ").Str(cuda_).Char('\n');
  b.Str("CUDA runtime version ").Int(cuda_version_).Str(", driver version ").Int(cuda_version_);
  b.Str("\n\nJob summary\n===========\n\n");
  b.Str(
      "  Nodes  Processes         GPUs  Processes     GPUs\n"
      "(total)   per node  per process    (total)  (total)\n");
  b.Padded(job_.nodes, 7, ' ').Str("  ").Padded(job_.gpus_per_node, 9, ' ').Str("  ");
  b.Padded(1, 11, ' ').Str("  ").Padded(job_.world, 9, ' ').Str("  ").Padded(job_.world, 7, ' ');
  const int missing = rep.Count(RasProcess::kUnresponsive), dead = rep.Count(RasProcess::kDead);
  b.Str("\n\nCommunicators... (")
      .Fixed(CollectionSeconds(job_, report, missing), shape.collection_decimals);
  b.Str("s)\n=============\n\n");

  const std::vector<const CommView*> sorted = rep.Sorted();
  std::vector<std::pair<int, int>> groups;  // (first in sorted, count)
  rep.Table(out, sorted, groups);

  out += "\nErrors\n======\n\n";
  if (missing > 0) {
    b.Str("INCOMPLETE\n  Missing communicator data from ").Int(missing).Str(" job process");
    b.Str(Plural(missing, "es")).Char('\n');
    if (IsOutlier(missing, job_.nccl_ras.verbose)) rep.ProcessLines(out, RasProcess::kUnresponsive);
    out += '\n';
  }
  if (dead > 0) {
    b.Str("DEAD\n  ").Int(dead).Str(" job process").Str(Plural(dead, "es are", " is"));
    b.Str(" considered dead (unreachable via the RAS network)\n");
    if (IsOutlier(dead, job_.nccl_ras.verbose)) rep.ProcessLines(out, RasProcess::kDead);
    out += '\n';
  }
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    for (int c = 0; c < groups[gi].second; ++c) {
      const CommView& v = *sorted[static_cast<std::size_t>(groups[gi].first + c)];
      if (v.errors & kIncomplete) rep.Incomplete(out, static_cast<int>(gi), c, v);
    }
  }
  out += "Warnings\n========\n\n";
  if (missing > 0) {
    b.Str("TIMEOUT\n  Encountered ")
        .Int(missing)
        .Str(" communication timeout")
        .Str(Plural(missing, "s"));
    b.Str(" while gathering communicator data\n\n");
  }
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    for (int c = 0; c < groups[gi].second; ++c) {
      const CommView& v = *sorted[static_cast<std::size_t>(groups[gi].first + c)];
      if (v.errors & kMismatch) rep.Mismatch(out, static_cast<int>(gi), c, v);
    }
  }
  return out;
}

std::string NcclRasFormatter::Json(const NcclRasReport& report) const {
  const RasJsonShape& shape = RowFor(kRasJsonShapes, release_);
  const Report rep(job_, report, RowFor(kRasTextShapes, release_), false);
  const int missing = rep.Count(RasProcess::kUnresponsive);
  // The world communicator(s) and those whose ranks disagree or that miss ranks (nccl_ras.h).
  std::vector<const CommView*> written;
  for (const CommView& v : rep.views()) {
    if (v.comm->size == job_.world || v.errors != 0) written.push_back(&v);
  }
  // Every member's object is written through LineBuilder (a 16k-rank report is ~300k lines), its
  // node's address made once per node.
  std::vector<std::string> address(static_cast<std::size_t>(job_.nodes));
  for (int n = 0; n < job_.nodes; ++n) address[static_cast<std::size_t>(n)] = NodeAddressText(n);
  std::string out;
  LineBuilder b(&out);
  const CivilTime c = ToCivil(NodeTime(report.time));
  b.Str("{\n  \"nccl_version\": \"").Str(release_).Str("\",\n");
  b.Str("  \"cuda_runtime_version\": ").Int(cuda_version_).Str(",\n");
  b.Str("  \"cuda_driver_version\": ").Int(cuda_version_).Str(",\n");
  b.Str("  \"timestamp\": \"").Zero(c.year, 4).Char('-').Zero(c.month, 2).Char('-');
  b.Zero(c.day, 2).Char(' ').Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':');
  b.Zero(c.second, 2).Str("\",\n");
  b.Str("  \"communicators_count\": ").Int(static_cast<std::int64_t>(written.size())).Str(",\n");
  b.Str("  \"communicators\": [\n");
  for (std::size_t i = 0; i < written.size(); ++i) {
    const CommView& v = *written[i];
    const PgKind kind = v.comm->kind;
    if (i > 0) b.Str(",\n");
    b.Str("    {\n      \"hash\": \"0x").Hex(v.comm->hash).Str("\",\n");
    b.Str("      \"secondary_hash\": \"0x").Hex(Mix(v.comm->hash)).Str(":0x");
    b.Hex(Mix(v.comm->hash + 1)).Str("\",\n");
    b.Str("      \"size\": ").Int(v.comm->size).Str(",\n");
    b.Str("      \"ranks_count\": ").Int(static_cast<std::int64_t>(v.present.size())).Str(",\n");
    b.Str("      \"missing_ranks_count\": ").Int(static_cast<std::int64_t>(v.missing.size()));
    b.Str(",\n      \"ranks\": [\n");
    // A member's object up to its `nvml_dev` value, the same in `ranks` and `missing_ranks`.
    const auto member_head = [&](int g) {
      b.Str("        {\n          \"rank\": ").Int(job_.GroupRank(g, kind));
      b.Str(",\n          \"host\": \"").Str(address[static_cast<std::size_t>(job_.NodeOf(g))]);
      b.Str("\",\n          \"pid\": ").Int(job_.worker_pid[static_cast<std::size_t>(g)]);
      b.Str(",\n          \"cuda_dev\": ").Int(job_.LocalRank(g));
      b.Str(",\n          \"nvml_dev\": ").Int(job_.PhysicalGpu(g));
    };
    for (std::size_t k = 0; k < v.present.size(); ++k) {
      const int g = v.present[k];
      if (k > 0) b.Str(",\n");
      member_head(g);
      b.Str(
          ",\n          \"status\": {\n            \"init_state\": 0,\n            "
          "\"async_error\": 0,\n"
          "            \"finalize_called\": false,\n            \"destroy_flag\": false,\n"
          "            \"abort_flag\": ");
      b.Str(report.process[static_cast<std::size_t>(g)] == RasProcess::kAborted ? "true" : "false");
      b.Str("\n          },\n          \"collective_counts\": {\n");
      const RasCounts& counts = rep.CountsOf(g, kind);
      for (int f = 0; f < kNumRasFuncs; ++f) {
        b.Str("            \"").Str(kFuncNames[f]).Str("\": ").Int(counts[f]);
        b.Str(f < kNumRasFuncs - 1 ? ",\n" : "\n");
      }
      b.Str("          }\n        }");
    }
    b.Str("\n      ],\n      \"missing_ranks\": [\n");
    for (std::size_t k = 0; k < v.missing.size(); ++k) {
      const int g = v.missing[k];
      if (k > 0) b.Str(",\n");
      member_head(g);
      b.Str(shape.nvml_comma ? ",\n" : "\n");
      b.Str("          \"status\": {\n            \"unresponsive\": true,\n");
      b.Str("            \"considered_dead\": ");
      b.Str(report.process[static_cast<std::size_t>(g)] == RasProcess::kDead ? "true" : "false");
      b.Str("\n          }\n        }");
    }
    b.Str("\n      ]\n    }");
  }
  b.Str("\n  ],\n  \"ras\": {\n    \"collection_time_sec\": ");
  b.Fixed(CollectionSeconds(job_, report, missing), 3);
  b.Str(",\n    \"timeouts_count\": ").Int(missing).Str("\n  }\n}\n");
  return out;
}

}  // namespace denpex::sim
