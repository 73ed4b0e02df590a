#include "analyze/scope.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "analyze/scoring.h"
#include "ingest/file_text.h"
#include "ingest/identity.h"
#include "ingest/resolve.h"

namespace denpex::engine {
namespace {

// An allocation may open a little after the job's first line by the two hosts' clocks.
constexpr TimeNs kAllocationSlack = kSkewWindow;
// Job ids and pids named in a problem line.
constexpr std::size_t kNamed = 5;

// A line only the job's own output holds: a worker's (it names a rank, srun task or local
// rank, or comes from a training framework, NCCL, torchrun, a launcher), or srun's own.
bool JobLine(const Event& e) {
  if (e.rank >= 0 || e.task >= 0 || e.local_rank >= 0) return true;
  switch (e.family) {
    case Family::kOther: case Family::kXid: case Family::kKubernetes:
      return false;
    case Family::kHostOom:
      return e.kind != Kind::kOomKill && e.kind != Kind::kOomInvoked;
    case Family::kSlurm:  // srun's lines, a batch script's echoes
      return JobOwnSlurmLine(e);
    default:
      return true;
  }
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::int64_t SlurmJob(const Event& e) {
  const auto* n = std::get_if<SlurmNote>(&e.detail);
  return n == nullptr ? -1 : n->job;
}

// "1,234"
std::string Count(std::int64_t n) {
  const std::string digits = std::to_string(n);
  std::string s;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s.push_back(',');
    s.push_back(digits[i]);
  }
  return s;
}

template <typename T>
std::string Listed(const std::set<T>& items, std::string_view prefix) {
  std::string s;
  std::size_t n = 0;
  for (const T& item : items) {
    if (n == kNamed) {
      s += ", ...";
      break;
    }
    s += (n++ == 0 ? "" : ", ") + std::string(prefix);
    if constexpr (std::is_same_v<T, std::string>) {
      s += item;
    } else {
      s += std::to_string(item);
    }
  }
  return s;
}

// What ScopeToJob learns from the job's own output.
struct JobView {
  std::vector<char> own;                  // by file: it holds a line of the job's own
  std::set<std::int64_t> ids;             // Slurm job ids its lines name
  std::set<std::string> hosts;            // hosts its lines name (lower-cased)
  std::vector<std::int64_t> pids;         // its processes, sorted and distinct
  // Gathered only when an Xid asks (ViewJob), by node: the PCI bus ids its NCCL lines name (their
  // string ids: one id a distinct string in the incident's table), the ranks whose lines name it
  // and those of them whose GPU is named (sorted, distinct; empty: none).
  std::vector<std::vector<StrId>> gpus;
  std::vector<std::vector<std::int32_t>> ranks_on;
  std::vector<std::vector<std::int32_t>> gpu_ranks;
  std::optional<TimeNs> first;            // its earliest stamped line
  // The same of the lines whose stamp is the time they state (a collector's stamp on a line that
  // states none is when it was read: no later than that the job had begun, but maybe much later).
  std::optional<TimeNs> first_written;
  std::vector<char> filed;                // by node: a file of the incident is that node's
};

// The DataLoader worker pids of `DataLoader worker (pid(s) 123, 456) is killed by signal`.
void DataLoaderPids(std::string_view msg, std::vector<std::int64_t>* pids) {
  const std::size_t at = msg.find("(pid");
  if (at == std::string_view::npos) return;
  std::int64_t v = -1;
  for (std::size_t i = msg.find(' ', at); i != std::string_view::npos && i < msg.size() && msg[i] != ')'; ++i) {
    const char c = msg[i];
    if (c >= '0' && c <= '9') {
      v = (v < 0 ? 0 : v * 10) + (c - '0');
    } else if (v >= 0) {
      pids->push_back(v);
      v = -1;
    }
  }
  if (v >= 0) pids->push_back(v);
}

// Per rank, the last node, GPU and process its lines named (they mostly name one of each: a value
// already gathered is then not gathered again). One record a rank, so that an event's look-ups
// are one cache line, not one for each: a 131k-rank job's events come in no order of rank.
class LastPerRank {
 public:
  struct Last {
    std::int64_t pid = 0;                            // 0: none yet (a pid is noted above 0)
    std::int32_t node = -1;                          // -1: none yet
    std::pair<std::int32_t, StrId> gpu{-1, kNoStr};  // the node and GPU of its last NCCL line
  };
  // The record of `rank`; nullptr for a rank below 0 or from kRanksNoted on (its values are
  // gathered as they come).
  Last* Of(std::int32_t rank) {
    if (rank < 0 || rank >= kRanksNoted) return nullptr;
    if (static_cast<std::size_t>(rank) >= last_.size())
      last_.resize(static_cast<std::size_t>(rank) + 1);
    return &last_[static_cast<std::size_t>(rank)];
  }

 private:
  static constexpr std::int32_t kRanksNoted = 1 << 22;
  std::vector<Last> last_;  // by rank
};

// Whether the rank's last line named `value` as well (`last`: its record's field; nullptr: a rank
// not noted); notes `value` as its last.
template <typename T>
bool Again(T* last, const T& value) {
  if (last == nullptr) return false;
  if (*last == value) return true;
  *last = value;
  return false;
}

// What ViewJob gathers per event before it makes sets of it: (node, rank) and (node, string id)
// pairs, sorted and made distinct once.
struct NodePairs {
  std::vector<std::pair<std::int32_t, std::int32_t>> ranks, gpu_ranks;
  std::vector<std::pair<std::int32_t, StrId>> gpus;
};

// Each node's second members of `pairs`, sorted and distinct (each node's few sorted, not all
// the pairs at once: a 131k-rank job's pairs sorted whole took ~10 ms each).
template <typename T>
std::vector<std::vector<T>> ByNode(const std::vector<std::pair<std::int32_t, T>>& pairs,
                                   std::size_t nodes) {
  std::vector<std::size_t> count(nodes, 0);
  for (const auto& pair : pairs) ++count[static_cast<std::size_t>(pair.first)];
  std::vector<std::vector<T>> by_node(nodes);
  for (std::size_t n = 0; n < nodes; ++n) by_node[n].reserve(count[n]);
  for (const auto& [node, value] : pairs) by_node[static_cast<std::size_t>(node)].push_back(value);
  for (std::vector<T>& values : by_node) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
  }
  return by_node;
}

// The pids of `e` (unsorted, maybe repeated: ViewJob makes them distinct; the one its rank's
// last line named is not noted again); with `pairs`, the GPU its NCCL line names, and its rank
// as one whose GPU is named.
void NoteProcess(const Incident& inc, const Event& e, NodePairs* pairs, LastPerRank::Last* last,
                 std::vector<std::int64_t>* pids) {
  std::int64_t pid = 0;
  if (const auto* c = std::get_if<CommInit>(&e.detail)) {
    pid = c->pid;
    if (pairs != nullptr && c->pci != kNoStr && e.node >= 0 &&
        !Again(last != nullptr ? &last->gpu : nullptr, {e.node, c->pci})) {
      pairs->gpus.emplace_back(e.node, c->pci);
      if (e.rank >= 0) pairs->gpu_ranks.emplace_back(e.node, e.rank);
    }
  } else if (const auto* w = std::get_if<NcclWarn>(&e.detail)) {
    pid = w->pid;
  } else if (const auto* f = std::get_if<WorkerFailed>(&e.detail)) {
    pid = f->pid;
  } else if (const auto* t = std::get_if<FailureEntry>(&e.detail)) {
    pid = t->pid;
  } else if (const auto* s = std::get_if<WorkerSignalled>(&e.detail)) {
    pid = s->pid;
  } else if (e.kind == Kind::kDataLoaderKilled) {
    DataLoaderPids(inc.str(std::get<PythonError>(e.detail).message), pids);
  }
  if (pid > 0 && !Again(last != nullptr ? &last->pid : nullptr, pid)) pids->push_back(pid);
}

// The file's first line starts with an srun label (`12: `): a job's workers' output, even when
// its lines are plain prints the parser read no further (they name no job).
bool StartsWithTaskLabel(const std::filesystem::path& path) {
  const Result<std::string> head = ReadSpan(path, 0, 64);
  if (!head.ok()) return false;
  const std::string_view h = *head;
  std::size_t digits = 0;
  while (digits < h.size() && digits < 7 && std::isdigit(static_cast<unsigned char>(h[digits])))
    ++digits;
  return digits > 0 && h.substr(digits).starts_with(": ");
}

// The earlier of two times, either maybe unknown.
std::optional<TimeNs> Earlier(std::optional<TimeNs> a, std::optional<TimeNs> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// What ViewJob's pass over the job's own events gathers from one part of them: marks, pairs and
// values that become sets (or minima) once the parts are put together, so what the parts are
// changes nothing.
struct OwnPart {
  std::set<std::int64_t> ids;
  std::vector<char> named_node;  // by node
  std::vector<StrId> named_hosts;
  NodePairs pairs;
  LastPerRank last;  // a rank's node, GPU and process, each named by most of its lines
  std::vector<std::int64_t> pids;  // sorted and distinct once gathered
  std::optional<TimeNs> first, first_written;
};

void GatherOwn(const Incident& inc, const std::vector<char>& own, bool gpus, std::size_t begin,
               std::size_t end, OwnPart* p) {
  p->named_node.assign(inc.nodes.size(), 0);
  for (std::size_t i = begin; i < end; ++i) {
    const Event& e = inc.events[i];
    if (!own[e.file]) continue;
    if (const std::int64_t job = SlurmJob(e); job >= 0) p->ids.insert(job);
    if (e.node >= 0) p->named_node[static_cast<std::size_t>(e.node)] = 1;
    LastPerRank::Last* last = p->last.Of(e.rank);
    if (gpus && e.node >= 0 && e.rank >= 0 &&
        !Again(last != nullptr ? &last->node : nullptr, e.node))
      p->pairs.ranks.emplace_back(e.node, e.rank);
    if (const auto* n = std::get_if<SlurmNote>(&e.detail); n != nullptr && n->node != kNoStr)
      p->named_hosts.push_back(n->node);
    NoteProcess(inc, e, gpus ? &p->pairs : nullptr, last, &p->pids);
    if (e.clock == Clock::kNone || e.time_borrowed) continue;
    p->first = Earlier(p->first, e.time);
    if (!e.time_collected) p->first_written = Earlier(p->first_written, e.time);
  }
  std::sort(p->pids.begin(), p->pids.end());
  p->pids.erase(std::unique(p->pids.begin(), p->pids.end()), p->pids.end());
}

// Appends `from` to `to`.
template <typename T>
void Append(const std::vector<T>& from, std::vector<T>* to) {
  to->insert(to->end(), from.begin(), from.end());
}

// As many parts as the arena has threads: a pass over the events split that way.
std::size_t ThreadParts() {
  return static_cast<std::size_t>(std::max(1, tbb::this_task_arena::max_concurrency()));
}

// Runs f(p, begin, end) for `parts` even parts of `n` indices, in parallel.
template <typename F>
void EachPart(std::size_t n, std::size_t parts, F&& f) {
  tbb::parallel_for(std::size_t{0}, parts,
                    [&](std::size_t p) { f(p, n * p / parts, n * (p + 1) / parts); });
}

JobView ViewJob(const Incident& inc) {
  JobView v;
  v.own.assign(inc.files.size(), 0);
  v.filed.assign(inc.nodes.size(), 0);
  for (const LogFile& f : inc.files) {
    if (f.node >= 0 && f.node < static_cast<std::int32_t>(v.filed.size())) v.filed[static_cast<std::size_t>(f.node)] = 1;
  }
  // The events in as many parts as there are threads: each part marks its own files, the marks
  // are then put together (a mark is the same whichever part made it).
  const std::size_t parts = ThreadParts();
  std::vector<std::vector<char>> own_of(parts);
  EachPart(inc.events.size(), parts, [&](std::size_t p, std::size_t begin, std::size_t end) {
    own_of[p].assign(inc.files.size(), 0);
    for (std::size_t i = begin; i < end; ++i) {
      if (JobLine(inc.events[i])) own_of[p][inc.events[i].file] = 1;
    }
  });
  for (const std::vector<char>& own : own_of) {
    for (std::size_t f = 0; f < own.size(); ++f) v.own[f] |= own[f];
  }
  // slurmstepd's `*** JOB N ON <node> CANCELLED ***` as it writes it into a job's output is some
  // job's: this job's where its file holds the job's other lines (above), or where no file does
  // and every such banner names one job (a job that printed nothing else, and nothing beside it
  // says which job is the incident's: several jobs' outputs side by side name none, and a file
  // of workers' output beside the banners may be the incident's job as well).
  if (std::find(v.own.begin(), v.own.end(), 1) == v.own.end()) {
    std::set<std::int64_t> jobs;
    std::set<std::uint32_t> files;
    for (const Event& e : inc.events) {
      const auto* n = std::get_if<SlurmNote>(&e.detail);
      if (n == nullptr || !n->in_job_output) continue;
      jobs.insert(n->job);
      files.insert(e.file);
    }
    // A file of workers' output beside the banners (srun's task labels, torch's rank or local
    // tags) that names no job is a job's output too, maybe the incident's: the banner's job is
    // then only one of the jobs side by side.
    bool workers_beside = false;
    for (std::uint32_t f = 0; f < inc.files.size() && jobs.size() == 1 && !workers_beside; ++f) {
      const LogFile& lf = inc.files[f];
      if (files.contains(f) || !lf.readable || lf.kernel) continue;
      workers_beside = lf.task_labels || lf.local_tags || !lf.prefix_ranks.empty() ||
                       StartsWithTaskLabel(inc.root / lf.path);
    }
    if (jobs.size() == 1 && !workers_beside) {
      for (const std::uint32_t f : files) v.own[f] = 1;
    }
  }
  // The GPUs of the job's lines are asked about only for an Xid of a node's GPU in a file that is
  // not the job's own (OutOfScope): without one, they are not gathered.
  const std::vector<std::int32_t> xids = inc.OfKinds({Kind::kXid, Kind::kFallenOffBus});
  const bool gpus = std::any_of(xids.begin(), xids.end(), [&](std::int32_t i) {
    const Event& e = inc.events[i];
    return e.node >= 0 && !v.own[e.file];
  });
  // Per event only what is cheap: marks by node and string id, pids appended; the sets are made
  // once from them (a 131k-rank job's output has a million events and 16k nodes). The parts are
  // gathered in parallel and put together in their order.
  std::vector<OwnPart> own_parts(parts);
  EachPart(inc.events.size(), parts, [&](std::size_t p, std::size_t begin, std::size_t end) {
    GatherOwn(inc, v.own, gpus, begin, end, &own_parts[p]);
  });
  std::vector<char> named_node(inc.nodes.size(), 0);
  std::vector<StrId> named_hosts;
  NodePairs pairs;
  for (OwnPart& p : own_parts) {
    v.ids.merge(p.ids);
    for (std::size_t n = 0; n < named_node.size(); ++n) named_node[n] |= p.named_node[n];
    Append(p.named_hosts, &named_hosts);
    Append(p.pairs.ranks, &pairs.ranks);
    Append(p.pairs.gpu_ranks, &pairs.gpu_ranks);
    Append(p.pairs.gpus, &pairs.gpus);
    const auto middle = static_cast<std::ptrdiff_t>(v.pids.size());
    Append(p.pids, &v.pids);  // each part's sorted: merged into the sorted whole
    std::inplace_merge(v.pids.begin(), v.pids.begin() + middle, v.pids.end());
    v.first = Earlier(v.first, p.first);
    v.first_written = Earlier(v.first_written, p.first_written);
  }
  // The sets, each made on its own from what the parts gathered, in parallel.
  const auto hosts = [&] {
    for (std::size_t n = 0; n < named_node.size(); ++n) {
      if (named_node[n]) v.hosts.insert(Lower(inc.nodes[n]));
    }
    std::sort(named_hosts.begin(), named_hosts.end());
    named_hosts.erase(std::unique(named_hosts.begin(), named_hosts.end()), named_hosts.end());
    for (const StrId h : named_hosts) v.hosts.insert(Lower(inc.str(h)));
  };
  const auto gpu_names = [&] { v.gpus = ByNode(pairs.gpus, inc.nodes.size()); };
  if (gpus) {
    tbb::parallel_invoke(
        hosts, gpu_names, [&] { v.ranks_on = ByNode(pairs.ranks, inc.nodes.size()); },
        [&] { v.gpu_ranks = ByNode(pairs.gpu_ranks, inc.nodes.size()); });
  } else {
    hosts();
  }
  v.pids.erase(std::unique(v.pids.begin(), v.pids.end()), v.pids.end());
  return v;
}

// When slurmctld says each job ended (its `_job_complete`, time limit, kill or preemption).
std::map<std::int64_t, TimeNs> JobEnds(const Incident& inc, const JobView& v) {
  std::map<std::int64_t, TimeNs> ended;
  for (const std::int32_t i : inc.OfKinds({Kind::kJobComplete, Kind::kCancelled})) {
    const Event& e = inc.events[i];
    if (v.own[e.file] || e.clock == Clock::kNone) continue;
    const std::int64_t job = SlurmJob(e);
    if (job < 0) continue;
    const auto [it, fresh] = ended.emplace(job, e.time);
    if (!fresh && e.time < it->second) it->second = e.time;
  }
  return ended;
}

// The hosts the job ran on as far as its own lines say (the hosts they name), else as far as
// the incident's files say (the nodes its files are: a job whose output holds no line of its
// own, only its nodes' kernel logs and counters).
std::set<std::string> JobHosts(const Incident& inc, const JobView& v) {
  if (!v.hosts.empty()) return v.hosts;
  std::set<std::string> hosts;
  for (std::size_t n = 0; n < v.filed.size(); ++n) {
    const std::string_view host = NodeHost(inc.nodes[n]);  // not a console of no host
    if (v.filed[n] && !host.empty()) hosts.insert(Lower(host));
  }
  return hosts;
}

// The allocation slurmctld made for the job when no line of its own names its id: the one
// `sched: Allocate JobId=N NodeList=...` that covers every host of the job (JobHosts), opens by
// its first line and whose job had not ended before its first line that states its time (a
// collector's stamp says only when a line was read); with no stamped line of the job, the
// only one that covers them. -1: none, or several such jobs ran on its hosts at once (another
// job of the same user beside it): which is the job's, no line says.
std::int64_t AllocatedJob(const Incident& inc, const JobView& v,
                          const std::set<std::string>& job_hosts) {
  if (job_hosts.empty()) return -1;
  const std::map<std::int64_t, TimeNs> ended = JobEnds(inc, v);
  std::set<std::int64_t> covering, live;
  for (const std::int32_t i : inc.OfKinds({Kind::kJobAllocated})) {
    const Event& e = inc.events[i];
    if (v.own[e.file] || SlurmJob(e) < 0) continue;
    const std::vector<std::string> hosts = ExpandHostlist(inc.str(std::get<SlurmNote>(e.detail).node));
    const std::set<std::string> listed(hosts.begin(), hosts.end());
    if (!std::includes(listed.begin(), listed.end(), job_hosts.begin(), job_hosts.end())) continue;
    covering.insert(SlurmJob(e));
    if (!v.first || e.clock == Clock::kNone || e.time > *v.first + kAllocationSlack) continue;
    const auto end = ended.find(SlurmJob(e));
    if (end != ended.end() && v.first_written && end->second < *v.first_written - kAllocationSlack) continue;
    live.insert(SlurmJob(e));
  }
  const std::set<std::int64_t>& candidates = v.first ? live : covering;
  return candidates.size() == 1 ? *candidates.begin() : -1;
}

// The job's Slurm ids, and what the report must say about how they were found.
std::set<std::int64_t> JobIds(const Incident& inc, const JobView& v, std::string* note) {
  if (!v.ids.empty()) return v.ids;
  const std::set<std::string> hosts = JobHosts(inc, v);
  if (const std::int64_t allocated = AllocatedJob(inc, v, hosts); allocated >= 0) {
    *note = "no line of the job's own output names its Slurm job id: JobId " +
            std::to_string(allocated) +
            " is taken as the job's, the allocation slurmctld made of its hosts (" +
            Listed(hosts, "") + ") by its first line";
    return {allocated};
  }
  std::set<std::int64_t> named;
  for (const Event& e : inc.events) {
    if (!v.own[e.file] && SlurmJob(e) >= 0) named.insert(SlurmJob(e));
  }
  if (named.size() == 1) {
    *note = "no line of the job's own output names its Slurm job id: the daemon logs speak of one job only, JobId " +
            std::to_string(*named.begin()) + ", taken as the job's";
    return named;
  }
  if (named.size() > 1) {
    *note = "no line of the job's own output names its Slurm job id, and the daemon logs speak of " + std::to_string(named.size()) +
            " jobs (JobId " + Listed(named, "") + "): none of their lines is taken as the job's";
  }
  return {};
}

// What was left out of one file.
struct LeftOut {
  std::int64_t lines = 0;
  std::set<std::int64_t> jobs;
  std::set<std::string> nodes;
  std::set<std::int64_t> pids;
  std::set<std::string> gpus;
  std::set<std::string> pods;  // Kubernetes objects (pods, nodes) none of the job's lines name
};

// Whether a file of the incident is the node named `host` (lower-cased).
bool Filed(const Incident& inc, const JobView& v, const std::string& host) {
  for (std::size_t n = 0; n < inc.nodes.size() && n < v.filed.size(); ++n) {
    if (v.filed[n] && Lower(inc.nodes[n]) == host) return true;
  }
  return false;
}

// Why `e`, a daemon or host log's line, is not this job's (false: it may be).
bool OutOfScope(const Incident& inc, const JobView& v, const std::set<std::int64_t>& ids,
                const std::set<std::string>& allocated, const Event& e, LeftOut* out) {
  if (const std::int64_t job = SlurmJob(e); job >= 0 && !ids.contains(job)) {
    out->jobs.insert(job);
    return true;
  }
  if ((e.kind == Kind::kNodeFailure || e.kind == Kind::kNodeResponding) && SlurmJob(e) < 0) {
    const std::string node = Lower(inc.str(std::get<SlurmNote>(e.detail).node));
    // Without the job's allocation, a node none of the job's lines names and no file of the
    // incident is of (a padded or shared slurmctld's `cn-0417 not responding`) is not the job's.
    // With nothing known of the job's nodes, and the controller speaking of other jobs while
    // none is known to be this one's, the silent node may be any job's: not taken either.
    const bool known = !v.hosts.empty() || std::any_of(v.filed.begin(), v.filed.end(), [](char f) { return f != 0; });
    const bool others = ids.empty() && std::any_of(inc.events.begin(), inc.events.end(),
                                                   [&](const Event& x) { return !v.own[x.file] && SlurmJob(x) >= 0; });
    const bool placed = allocated.empty() ? (!known && !others) || v.hosts.contains(node) || Filed(inc, v, node)
                                          : allocated.contains(node);
    if (placed) return false;
    out->nodes.insert(node);
    return true;
  }
  if (e.kind == Kind::kOomKill && !v.pids.empty()) {
    const std::int64_t pid = std::get<OomKill>(e.detail).pid;
    if (pid <= 0 || std::binary_search(v.pids.begin(), v.pids.end(), pid)) return false;
    out->pids.insert(pid);
    return true;
  }
  // A Kubernetes event (a namespace's or cluster's `kubectl get events`) about a pod or node that
  // nothing of the incident places the job on: no line of the job's own output names it, no file
  // is its (a pod log, a `kubectl describe` of the job's pod on it), no describe or scheduler line
  // resolves the pod to a node of the job: another job's pod evicted, killed or backing off.
  if (e.family == Family::kKubernetes && e.node >= 0 && !v.hosts.empty() && !v.filed[static_cast<std::size_t>(e.node)]) {
    std::string node = Lower(inc.nodes[static_cast<std::size_t>(e.node)]);
    if (v.hosts.contains(node)) return false;
    out->pods.insert(std::move(node));
    return true;
  }
  // An Xid of a GPU the job did not use, when the node's GPUs of the job are all known: every
  // rank whose lines name the node has its GPU named by a NCCL line.
  if ((e.kind == Kind::kXid || e.kind == Kind::kFallenOffBus) && e.node >= 0) {
    const auto n = static_cast<std::size_t>(e.node);
    const std::vector<std::int32_t>& named = v.gpu_ranks[n];
    if (v.gpus[n].empty() || named.empty() || named != v.ranks_on[n]) return false;
    const StrId pci = std::get<Xid>(e.detail).pci;
    if (pci == kNoStr || std::binary_search(v.gpus[n].begin(), v.gpus[n].end(), pci)) return false;
    out->gpus.emplace(inc.str(pci));
    return true;
  }
  return false;
}

std::string Describe(const LeftOut& l) {
  std::vector<std::string> about;
  if (!l.jobs.empty()) {
    about.push_back(std::to_string(l.jobs.size()) + (l.jobs.size() == 1 ? " other job (JobId " : " other jobs (JobId ") +
                    Listed(l.jobs, "") + ")");
  }
  if (!l.nodes.empty()) about.push_back("nodes outside the job's allocation (" + Listed(l.nodes, "") + ")");
  if (!l.pids.empty()) about.push_back("processes that are not the job's (" + Listed(l.pids, "pid ") + ")");
  if (!l.gpus.empty()) about.push_back("GPUs the job did not use (" + Listed(l.gpus, "") + ")");
  if (!l.pods.empty()) about.push_back("pods and nodes no line of the job names (" + Listed(l.pods, "") + ")");
  std::string s = Count(l.lines) + (l.lines == 1 ? " line about " : " lines about ");
  for (std::size_t i = 0; i < about.size(); ++i) s += (i == 0 ? "" : i + 1 == about.size() ? " and " : ", ") + about[i];
  return s + " left out";
}

// The OOM kills no pid of the job explains, when the job's pids are not known: the report says
// whose they may be (facts.cc's ApplyHostEvidence does not take them as a rank's death alone).
void NoteUnknownKills(const JobView& v, Incident* inc) {
  if (!v.pids.empty()) return;
  for (const std::int32_t i : inc->OfKinds({Kind::kOomKill})) {
    const Event& e = inc->events[i];
    const auto& k = std::get<OomKill>(e.detail);
    AddProblem(&inc->input,
               inc->files[e.file].path + ":" + std::to_string(e.line) + ": the kernel OOM-killed pid " + std::to_string(k.pid) + " (" +
                   std::string(inc->str(k.comm)) +
                   "), a process of unknown owner: no line of the job names its pids, so it is not taken as a rank's death on its own");
    return;
  }
}

}  // namespace

void ScopeToJob(Incident* inc) {
  inc->IndexKinds();  // the few events of the kinds it looks for, out of a million
  const JobView v = ViewJob(*inc);
  std::string note;
  const std::set<std::int64_t> ids = JobIds(*inc, v, &note);
  if (!note.empty()) AddProblem(&inc->input, std::move(note));
  std::set<std::string> allocated;  // the hosts of the job's allocation
  for (const std::int32_t i : inc->OfKinds({Kind::kJobAllocated})) {
    const Event& e = inc->events[i];
    if (!ids.contains(SlurmJob(e))) continue;
    const std::vector<std::string> hosts = ExpandHostlist(inc->str(std::get<SlurmNote>(e.detail).node));
    allocated.insert(hosts.begin(), hosts.end());
  }
  // The events of files that are not the job's own, found in parallel (the parts' in their
  // order), are judged one by one in event order.
  const std::size_t parts = ThreadParts();
  std::vector<std::vector<std::int32_t>> others_of(parts);
  EachPart(inc->events.size(), parts, [&](std::size_t p, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      if (!v.own[inc->events[i].file]) others_of[p].push_back(static_cast<std::int32_t>(i));
    }
  });
  std::vector<LeftOut> left(inc->files.size());
  std::vector<char> drop(inc->events.size(), 0);
  for (const std::vector<std::int32_t>& others : others_of) {
    for (const std::int32_t i : others) {
      const Event& e = inc->events[i];
      if (!OutOfScope(*inc, v, ids, allocated, e, &left[e.file])) continue;
      drop[i] = 1;
      ++left[e.file].lines;
    }
  }
  NoteUnknownKills(v, inc);
  std::int64_t dropped = 0;
  for (std::size_t f = 0; f < left.size(); ++f) {
    if (left[f].lines == 0) continue;
    dropped += left[f].lines;
    AddProblem(&inc->input, inc->files[f].path + ": " + Describe(left[f]));
  }
  if (dropped == 0) return;
  inc->input.out_of_scope += dropped;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < inc->events.size(); ++i) {
    if (!drop[i]) inc->events[kept++] = std::move(inc->events[i]);
  }
  inc->events.resize(kept);
  inc->IndexKinds();
}

}  // namespace denpex::engine
