#include "ingest/identity.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace denpex::engine {
namespace {

constexpr std::string_view kUnnamed = "the node of ";
constexpr std::string_view kAgentOf = " (agent ";

// What one file's lines say about whose they are.
struct Seen {
  StrId host = kNoStr;  // the one host its lines name as their own
  bool many = false;    // they name more than one
  bool machines = false;  // ... of different machines (Machine): several machines' lines
  bool kernel = false;  // it holds kernel lines (a console does not: several files merged)
  StrId pod_node = kNoStr;  // the node a `kubectl describe pod` or scheduler line placed a pod on
  std::int32_t lo = std::numeric_limits<std::int32_t>::max(), hi = -1;  // the ranks its agent names
  void Host(StrId h, const Incident& inc) {
    if (h == kNoStr || h == host) return;
    if (host != kNoStr) {
      many = true;
      if (!machines) machines = Machine(inc.str(h)) != Machine(inc.str(host));  // once is enough
    }
    host = h;
  }
  void Ranks(std::int32_t first, std::int32_t last) {
    if (first < 0 || last < first) return;
    lo = std::min(lo, first);
    hi = std::max(hi, last);
  }
};

// What a set of hosts is asked here: whether it holds one, and which (a std::set per folder
// was most of this step's allocations at 16k node folders).
struct OneHost {
  bool any = false;
  bool several = false;
  StrId host = kNoStr;
  void Add(StrId h) {
    several |= any && h != host;
    if (!any) any = true, host = h;
  }
  bool One() const { return any && !several; }
};

// A host an event names as the place its own line was written: NCCL's `host:pid:tid`, a syslog,
// journal or pdsh prefix, an agent's failure table. Kubernetes, Ray and Slurm lines name other
// objects (pods, workers' ips, the nodes of a job).
StrId OwnHost(const Event& e, const LogFile& f) {
  if (const auto* fe = std::get_if<FailureEntry>(&e.detail); fe && f.agent) return fe->host;
  if (e.family == Family::kKubernetes || e.family == Family::kRay || e.family == Family::kSlurm) return kNoStr;
  return e.host;
}

void NoteEvent(const Event& e, const Incident& inc, Seen* s) {
  const LogFile& f = inc.files[e.file];
  s->Host(OwnHost(e, f), inc);
  if (e.kind == Kind::kPodNode && e.host != kNoStr) {
    // pods placed on two nodes: several pods' describes or the scheduler's events, no one node's
    s->many |= s->pod_node != kNoStr && s->pod_node != e.host;
    s->pod_node = e.host;
  }
  s->kernel |= e.family == Family::kXid || e.family == Family::kHostOom;
  if (!f.agent) return;
  if (std::holds_alternative<FailureEntry>(e.detail)) s->Ranks(e.rank, e.rank);
  if (const auto* nl = std::get_if<NodeLayout>(&e.detail); nl && e.kind == Kind::kAgentRanks) {
    s->Ranks(nl->First(), nl->First() + nl->local_procs - 1);
  }
}

std::string RankRange(std::int32_t lo, std::int32_t hi) {
  return lo == hi ? "rank " + std::to_string(lo) : "ranks " + std::to_string(lo) + "-" + std::to_string(hi);
}

// Whether anything outside the split agents' consoles names `host`.
bool NamedElsewhere(const Incident& inc, StrId host, const std::vector<char>& split) {
  for (const Event& e : inc.events) {
    if (split[e.file]) continue;
    if (e.host == host) return true;
    if (const auto* fe = std::get_if<FailureEntry>(&e.detail); fe && fe->host == host) return true;
    if (const auto* sn = std::get_if<SlurmNote>(&e.detail); sn && sn->node == host) return true;
  }
  return false;
}

// Which machine, or machines, a set of files' lines name.
struct Machines {
  std::string_view one;
  bool several = false;
  void Add(std::string_view host) {
    const std::string_view m = Machine(host);
    several |= !one.empty() && m != one;
    if (one.empty()) one = m;
  }
};

// A folder that holds several machines' lines is no node, whatever its name: a file in it whose
// lines name several machines (a job's srun, mpirun or pdsh console), or other node folders below
// it whose lines name different machines (`<ticket>/gpu-0001/`, `<ticket>/gpu-0002/`: the
// collection copied into a folder of its own and given from above it). Its files are the node
// their names or lines give. Per file: 1 when the folder that gave its path node is such a one.
std::vector<char> CollectionFolders(const std::vector<std::string>& path_node,
                                    const std::vector<Seen>& seen, const Incident& inc) {
  std::vector<std::string_view> folder(path_node.size());
  std::unordered_map<std::string_view, Machines> own;  // node folder -> what its own files name
  for (std::size_t i = 0; i < path_node.size(); ++i) {
    if (path_node[i].empty()) continue;
    folder[i] = NodeFolder(inc.files[i].path, path_node[i]);
    Machines& m = own[folder[i]];
    if (!inc.files[i].readable || inc.files[i].copy) continue;
    m.several |= seen[i].machines;
    if (seen[i].host != kNoStr) m.Add(inc.str(seen[i].host));
  }
  std::unordered_map<std::string_view, Machines>
      below;  // node folder -> what node folders below it name
  for (const auto& [dir, m] : own) {
    if (m.one.empty()) continue;
    for (std::string_view up = FolderOf(dir); !up.empty(); up = FolderOf(up)) {
      if (!own.contains(up)) continue;
      Machines& b = below[up];
      b.several |= m.several;
      b.Add(m.one);
    }
  }
  std::vector<char> out(path_node.size(), 0);
  for (std::size_t i = 0; i < path_node.size(); ++i) {
    if (path_node[i].empty()) continue;
    const auto b = below.find(folder[i]);
    out[i] = own[folder[i]].several || (b != below.end() && b->second.several);
  }
  return out;
}

// A folder is a hint: when the lines of its files name one host, and no other folder's lines
// name that host, its files are that host's (a re-laid incident's opaque folder names, a folder
// named for the job's step). Two folders whose lines name one host stay two nodes (two agents).
// `merged`: per file, its lines are several processes' (IdentifyFiles): one host they name makes
// no folder that host's.
void RenameFolders(const std::vector<std::string>& path_node, const std::vector<Seen>& seen,
                   const std::vector<char>& merged, const Incident& inc, FileIdentity* out) {
  std::unordered_map<std::string_view, Seen> folder;  // what the lines of each folder's files name
  for (std::size_t i = 0; i < path_node.size(); ++i) {
    if (path_node[i].empty() || !inc.files[i].readable || inc.files[i].copy) continue;
    Seen& s = folder[path_node[i]];
    s.many |= seen[i].many || merged[i];
    s.Host(seen[i].host, inc);
  }
  std::unordered_map<StrId, std::int32_t> folders_of;
  for (const auto& [name, s] : folder) {
    if (s.host != kNoStr && !s.many) ++folders_of[s.host];
  }
  for (std::size_t i = 0; i < path_node.size(); ++i) {
    if (path_node[i].empty()) continue;
    const auto it = folder.find(path_node[i]);
    if (it == folder.end()) continue;
    const Seen& s = it->second;
    if (s.host == kNoStr || s.many || folders_of[s.host] != 1 || inc.str(s.host) == path_node[i]) continue;
    out->node[i] = std::string(inc.str(s.host));
  }
}

// A folder whose files' lines name different hosts, each file one (a folder of many pods' or
// agents' logs under an opaque name), is no node: its files are each the node their lines name.
std::vector<char> ManyHostFolders(const std::vector<std::string>& path_node, const std::vector<Seen>& seen, const Incident& inc) {
  std::unordered_map<std::string_view, OneHost> hosts;  // looked up only: no order needed
  for (std::size_t i = 0; i < path_node.size(); ++i) {
    if (path_node[i].empty() || !inc.files[i].readable || inc.files[i].copy) continue;
    if (seen[i].host != kNoStr && !seen[i].many) hosts[path_node[i]].Add(seen[i].host);
  }
  std::vector<char> out(path_node.size(), 0);
  for (std::size_t i = 0; i < path_node.size(); ++i) {
    const auto it = hosts.find(path_node[i]);
    out[i] = it != hosts.end() && it->second.several;
  }
  return out;
}

// A file in a folder whose own files name no host, inside a folder that does (a node's folder
// holding a torchrun log dir, `<node>/logs/<run>/attempt_0/<L>/stderr.log`, every name opaque:
// the node's kern.log or console names it), is that folder's host, when everything under that
// folder names that host only.
void InheritAncestorHost(const std::vector<std::string>& path_node, const std::vector<Seen>& seen, const Incident& inc,
                         FileIdentity* out) {
  std::unordered_map<std::string_view, Seen>
      dirs;  // what the lines of each directory's own files name
  for (std::size_t i = 0; i < path_node.size(); ++i) {
    if (!inc.files[i].readable || inc.files[i].copy) continue;
    Seen& d = dirs[FolderOf(inc.files[i].path)];
    d.many |= seen[i].many;
    d.Host(seen[i].host, inc);
  }
  // Every host named under each directory (its subtree), kNoStr standing for "several".
  std::unordered_map<std::string_view, OneHost> under;
  for (const auto& [dir, d] : dirs) {
    if (d.host == kNoStr && !d.many) continue;
    for (std::string_view up = dir; !up.empty(); up = FolderOf(up))
      under[up].Add(d.many ? kNoStr : d.host);
  }
  for (std::size_t i = 0; i < path_node.size(); ++i) {
    if (path_node[i].empty() || !out->node[i].empty() || !inc.files[i].readable || inc.files[i].copy) continue;
    const std::string_view dir = FolderOf(inc.files[i].path);
    const auto own = dirs.find(dir);
    if (own == dirs.end() || own->second.host != kNoStr || own->second.many) continue;
    for (std::string_view up = FolderOf(dir); !up.empty(); up = FolderOf(up)) {
      const auto d = dirs.find(up);
      if (d == dirs.end() || (d->second.host == kNoStr && !d->second.many)) continue;
      const OneHost& named = under[up];
      if (d->second.many || !named.One() || named.host == kNoStr) break;
      if (inc.str(d->second.host) != path_node[i]) out->node[i] = std::string(inc.str(d->second.host));
      break;
    }
  }
}

// The one node of a job Slurm ran on one node, whatever its consoles call it; kNoStr when no line
// says so. Daemon logs of a cluster name every job's nodes, so when the job's own Slurm lines
// (srun's task exits, slurmstepd's `*** STEP N.s ON <node> CANCELLED`, a script's
// `SLURM_JOB_ID=`) tie it to a job, only they and the daemons' lines of that job count: the ids
// they name, else the one job slurmctld allocated every host they name. Otherwise the one node
// every Slurm line names (a job's own node's daemon logs). A list (`sn[01-02]`) or two nodes: no
// one node.
StrId SoleSlurmNode(const Incident& inc) {
  // slurmstepd's banner in a job's output counts only where no other line of a job's own does and
  // every banner names one job (analyze/scope.cc: several jobs' outputs side by side).
  std::set<std::int64_t> banner_jobs;
  bool own_lines = false;
  for (const Event& e : inc.events) {
    const auto* sn = std::get_if<SlurmNote>(&e.detail);
    if (sn != nullptr && sn->in_job_output) banner_jobs.insert(sn->job);
    own_lines |= JobOwnSlurmLine(e);
  }
  const bool banners = !own_lines && banner_jobs.size() == 1;
  const auto own = [&](const Event& e, const SlurmNote& sn) {
    return JobOwnSlurmLine(e) || (banners && sn.in_job_output);
  };
  std::set<StrId> named;  // as printed; expanded once each below (srun names a host per task)
  std::set<std::int64_t> jobs;
  for (const Event& e : inc.events) {
    const auto* sn = std::get_if<SlurmNote>(&e.detail);
    if (sn == nullptr || !own(e, *sn)) continue;
    if (sn->node != kNoStr) named.insert(sn->node);
    if (sn->job >= 0) jobs.insert(sn->job);
  }
  std::set<std::string> hosts;  // lower-cased, as ExpandHostlist gives them
  for (const StrId id : named) {
    for (std::string& h : ExpandHostlist(inc.str(id))) hosts.insert(std::move(h));
  }
  if (jobs.empty() && !hosts.empty()) {
    std::set<std::int64_t> covering;
    for (const Event& e : inc.events) {
      const auto* sn = std::get_if<SlurmNote>(&e.detail);
      if (sn == nullptr || e.kind != Kind::kJobAllocated || sn->job < 0) continue;
      const std::vector<std::string> listed = ExpandHostlist(inc.str(sn->node));
      const std::set<std::string> set(listed.begin(), listed.end());
      if (std::includes(set.begin(), set.end(), hosts.begin(), hosts.end()))
        covering.insert(sn->job);
    }
    if (covering.size() == 1) jobs = covering;
  }
  const bool scoped = !jobs.empty();
  StrId sole = kNoStr;
  for (const Event& e : inc.events) {
    const auto* sn = std::get_if<SlurmNote>(&e.detail);
    if (sn == nullptr || sn->node == kNoStr || sn->node == sole) continue;
    if (scoped && !own(e, *sn) && !jobs.contains(sn->job)) continue;
    const std::string_view name = inc.str(sn->node);
    if (sole != kNoStr || name.find_first_of("[,") != std::string_view::npos) return kNoStr;
    sole = sn->node;
  }
  return sole;
}

// A folder taken for a node (the deepest folder of a path that is not a run, attempt or local
// rank folder by its name) that sits inside another folder taken for a node (one whose own
// files sit directly in it) is no node when no line names its host: under opaque names a
// torchrun log dir's `<L>/` folder inside the node's folder looks like a node folder, and its
// name would be given as the node. Its files keep no node from their path (the node's lines,
// where they name it, still place them: RenameFolders, InheritAncestorHost).
void NestedNodeFolders(const std::vector<std::string>& path_node, const Incident& inc,
                       std::vector<char>* no_node_folder, const FileIdentity& out) {
  const auto last = [](std::string_view dir) { return dir.substr(dir.rfind('/') + 1); };
  std::unordered_set<std::string_view>
      node_dirs;  // folders whose own files take the folder for their node
  for (std::size_t i = 0; i < path_node.size(); ++i) {
    const std::string_view dir = FolderOf(inc.files[i].path);
    if (!path_node[i].empty() && !dir.empty() && last(dir) == path_node[i]) node_dirs.insert(dir);
  }
  for (std::size_t i = 0; i < path_node.size(); ++i) {
    if (path_node[i].empty() || !out.node[i].empty()) continue;
    const std::string_view folder = NodeFolder(inc.files[i].path, path_node[i]);
    for (std::string_view up = FolderOf(folder); !up.empty(); up = FolderOf(up)) {
      if (node_dirs.contains(up)) {
        (*no_node_folder)[i] = 1;
        break;
      }
    }
  }
}

// What each file's lines say (`seen`), for the files read (`want`: readable, not a copy); a
// rotated log's pieces are one stream: what any piece's lines say is its live piece's. `agent`:
// the file, or for a live piece any piece of its stream, holds an agent's console.
struct FileLines {
  std::vector<Seen> seen;
  std::vector<char> want, agent;
  bool any = false;  // some file is read
};

FileLines ReadFileLines(const Incident& inc) {
  const std::size_t n = inc.files.size();
  FileLines l{.seen = std::vector<Seen>(n),
              .want = std::vector<char>(n, 0),
              .agent = std::vector<char>(n, 0)};
  for (std::size_t i = 0; i < n; ++i) {
    l.want[i] = inc.files[i].readable && !inc.files[i].copy;
    l.any |= l.want[i] != 0;
  }
  if (!l.any) return l;
  for (const Event& e : inc.events) {
    if (l.want[e.file]) NoteEvent(e, inc, &l.seen[e.file]);
  }
  // A kernel log none of whose lines is an event (boot and driver lines only) is the machine its
  // syslog lines name, whatever the file or its folder is called.
  for (std::size_t i = 0; i < n; ++i) {
    if (l.want[i] && l.seen[i].host == kNoStr && !l.seen[i].many)
      l.seen[i].host = inc.files[i].kernel_host;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t live = inc.files[i].rotated_into;
    l.agent[i] |= inc.files[i].agent;
    if (live < 0 || !l.want[i]) continue;
    Seen& s = l.seen[static_cast<std::size_t>(live)];
    s.many |= l.seen[i].many;
    s.machines |= l.seen[i].machines;
    s.Host(l.seen[i].host, inc);
    s.kernel |= l.seen[i].kernel;
    s.Ranks(l.seen[i].lo, l.seen[i].hi);
    l.agent[static_cast<std::size_t>(live)] |= inc.files[i].agent;
  }
  return l;
}

// Files of several processes' lines, not one process's or one agent's (several ranks' prefixes,
// srun labels, an agent's console beside kernel lines): the one host such a file names is not
// the file's, and one host it names makes no folder that host's.
std::vector<char> MergedFiles(const FileLines& lines, const Incident& inc) {
  std::vector<char> merged(inc.files.size(), 0);
  for (std::size_t i = 0; i < merged.size(); ++i) {
    const LogFile& f = inc.files[i];
    merged[i] =
        f.task_labels || (lines.agent[i] != 0 ? lines.seen[i].kernel : f.prefix_ranks.size() > 1);
  }
  return merged;
}

// A tarball's or a ticket's folder that no line names (PathHints::wrapper) is read as the top
// level is: a file whose own lines name one host is that host's; where it holds several agents'
// consoles, or a file of several processes' lines, those are read as at the top level (each
// console its own node, or its host's; each merged line its own host's): their `path_node` is
// cleared. Returns the files of such folders that no rule before gave a node.
std::vector<char> ReadWrappersAsTopLevel(const PathHints& hints, const FileLines& lines,
                                         const std::vector<char>& merged, const FileIdentity& out,
                                         const Incident& inc, std::vector<std::string>* path_node) {
  const std::size_t n = inc.files.size();
  std::vector<char> wrapped(n, 0);
  int wrapped_agents = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!hints.wrapper[i] || (*path_node)[i].empty() || (*path_node)[i] != hints.folder_node[i] ||
        !out.node[i].empty())
      continue;
    wrapped[i] = 1;
    wrapped_agents += lines.agent[i] != 0 && inc.files[i].rotated_into < 0;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (wrapped[i] && (wrapped_agents > 1 || merged[i]))
      (*path_node)[i].clear();  // a merged file: each line its own host's
  }
  return wrapped;
}

// Agents' consoles that name one host (`host : gpu-0001` in each, two agents on one machine or
// several agents given one name): each console is a node of its own, labelled by the ranks it
// ran; the host is a node of its own only where a line of another file names it too
// (FileIdentity::split_hosts).
void SplitAgentsOfOneHost(const std::map<StrId, std::vector<std::size_t>>& agents_of,
                          const FileLines& lines, const Incident& inc, FileIdentity* out) {
  const std::size_t n = inc.files.size();
  std::vector<char> split(n, 0);
  std::vector<StrId> hosts;
  for (const auto& [host, files] : agents_of) {
    if (files.size() < 2) continue;
    hosts.push_back(host);
    for (const std::size_t i : files) {
      const Seen& s = lines.seen[i];
      out->node[i] += std::string(kAgentOf) +
                      (s.hi >= 0 ? "with " + RankRange(s.lo, s.hi) : "of " + inc.files[i].path) +
                      ")";
      split[i] = 1;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (inc.files[i].rotated_into >= 0)
      split[i] = split[static_cast<std::size_t>(inc.files[i].rotated_into)];
  }
  for (const StrId host : hosts) {
    if (!NamedElsewhere(inc, host, split)) out->split_hosts.emplace_back(inc.str(host));
  }
}

}  // namespace

FileIdentity IdentifyFiles(const PathHints& hints, const Incident& inc) {
  const std::vector<std::string>& folder_node = hints.folder_node;
  const std::vector<std::string>& name_node = hints.name_node;
  const std::size_t n = inc.files.size();
  FileIdentity out;
  out.node.resize(n);
  out.path_node = folder_node;
  for (std::size_t i = 0; i < n; ++i) {
    if (out.path_node[i].empty()) out.path_node[i] = name_node[i];
  }
  FileLines lines = ReadFileLines(inc);
  if (!lines.any) return out;
  const std::vector<Seen>& seen = lines.seen;
  // The node each file's folder gives, else the one its name gives.
  std::vector<std::string> given = folder_node;
  const std::vector<char> collection = CollectionFolders(folder_node, seen, inc);
  for (std::size_t i = 0; i < n; ++i) {
    if (given[i].empty() || collection[i]) given[i] = name_node[i];
  }
  std::vector<char> no_node_folder = ManyHostFolders(given, seen, inc);
  std::vector<std::string> path_node = given;
  for (std::size_t i = 0; i < n; ++i) {
    if (no_node_folder[i]) path_node[i].clear();
  }
  const std::vector<char> merged = MergedFiles(lines, inc);
  // A ticket's folder (PathHints::wrapper) is no node folder to rename: its files are read below.
  std::vector<std::string> renamable = path_node;
  for (std::size_t i = 0; i < n; ++i) {
    if (hints.wrapper[i] && path_node[i] == folder_node[i]) renamable[i].clear();
  }
  RenameFolders(renamable, seen, merged, inc, &out);
  InheritAncestorHost(path_node, seen, inc, &out);
  NestedNodeFolders(path_node, inc, &no_node_folder, out);
  for (std::size_t i = 0; i < n; ++i) {
    if (no_node_folder[i]) path_node[i].clear();
  }
  // An agent's console that names no host (`host : localhost`) in a job Slurm ran on one node:
  // that node's. Found only when such a console asks (three passes over the events).
  std::optional<StrId> sole_slurm_node;
  const auto slurm_node = [&] {
    if (!sole_slurm_node) sole_slurm_node = SoleSlurmNode(inc);
    return *sole_slurm_node;
  };
  const std::vector<char> wrapped =
      ReadWrappersAsTopLevel(hints, lines, merged, out, inc, &path_node);
  out.path_node = path_node;
  // The files no path gives a node: the one host their own lines name, else (an agent's console
  // naming none) the one node Slurm ran the job on, else the console's own node.
  std::map<StrId, std::vector<std::size_t>> agents_of;  // host -> the agents' consoles naming it
  for (std::size_t i = 0; i < n; ++i) {
    const LogFile& f = inc.files[i];
    if (!lines.want[i] || !path_node[i].empty() || f.rotated_into >= 0)
      continue;               // a piece: its stream's, below
    if (merged[i]) continue;  // one process's or one agent's lines only
    // An agent's ranks, as its prefixes give them, label it if it is split below.
    Seen& s = lines.seen[i];
    const bool agent = lines.agent[i] != 0;
    if (agent && !f.prefix_ranks.empty()) s.Ranks(f.prefix_ranks.front(), f.prefix_ranks.back());
    if (s.host != kNoStr && !s.many) {
      out.node[i] = std::string(inc.str(s.host));
      if (agent) agents_of[s.host].push_back(i);
    } else if (s.host == kNoStr && agent && !f.task_labels && !f.world_info && !s.many &&
               slurm_node() != kNoStr) {
      out.node[i] = std::string(inc.str(slurm_node()));
      agents_of[slurm_node()].push_back(i);
    } else if (s.host == kNoStr && agent && !f.task_labels && !f.world_info) {
      // one console, one agent: its own node (a relayed stream's: its file's and its tag's)
      out.node[i] = std::string(kUnnamed) + f.path + (f.tag.empty() ? "" : " [" + f.tag + "]");
    }
  }
  // The rest of a ticket's folder is one machine with no name of its own: the one node Slurm ran
  // the job on, else a node known by the folder.
  for (std::size_t i = 0; i < n; ++i) {
    if (!wrapped[i] || merged[i] || !out.node[i].empty()) continue;
    const Seen& own = seen[static_cast<std::size_t>(
        inc.files[i].rotated_into >= 0 ? inc.files[i].rotated_into : i)];
    if (own.host != kNoStr && !own.many) {
      out.node[i] =
          std::string(inc.str(own.host));  // the one host its own lines name, as at the top level
      continue;
    }
    out.node[i] = slurm_node() != kNoStr
                      ? std::string(inc.str(slurm_node()))
                      : std::string(kUnnamed) +
                            std::string(NodeFolder(inc.files[i].path, folder_node[i])) + "/";
  }
  SplitAgentsOfOneHost(agents_of, lines, inc, &out);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t live = inc.files[i].rotated_into;
    if (live >= 0 && lines.want[i] && path_node[i].empty())
      out.node[i] = out.node[static_cast<std::size_t>(live)];
  }
  return out;
}

std::string_view Machine(std::string_view host) {
  if (host.find_first_not_of("0123456789.") == std::string_view::npos) return host;
  return host.substr(0, host.find('.'));
}

std::string_view NodeHost(std::string_view label) {
  if (label.starts_with(kUnnamed)) return {};
  return label.substr(0, label.find(kAgentOf));
}

std::int32_t NodeOfHost(const Incident& inc, std::string_view host) {
  auto it = std::lower_bound(inc.nodes.begin(), inc.nodes.end(), host);
  return it != inc.nodes.end() && *it == host ? static_cast<std::int32_t>(it - inc.nodes.begin())
                                              : -1;
}

}  // namespace denpex::engine
