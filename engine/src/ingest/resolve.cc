// After the merge: what no single file can say. Nodes named by lines, ranks of lines that only
// carry a task id or a local rank, and the year of year-less stamps.
#include "ingest/resolve.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "denpex/common/json_reader.h"
#include "incident/each_event.h"
#include "ingest/file_text.h"
#include "ingest/identity.h"
#include "ingest/streams.h"
#include "ingest/walk.h"

namespace denpex::engine {
namespace {

constexpr std::size_t kMaxProblems = 40;

// How events name a string (EventCensus::named): a host (kEventHost too when it is the event's
// own `host`), a Slurm node.
constexpr std::uint8_t kAsHost = 1, kAsSlurmNode = 2, kEventHost = 4;

// Appends what `e` (at `i`) tells the census; `named` is this thread's copy of EventCensus::named.
void Count(const Event& e, std::size_t i, EventCensus* c, std::vector<std::uint8_t>* named) {
  (*named)[e.host] |= kAsHost | kEventHost;
  if (const auto* fe = std::get_if<FailureEntry>(&e.detail)) (*named)[fe->host] |= kAsHost;
  if (const auto* sn = std::get_if<SlurmNote>(&e.detail);
      sn && (e.kind == Kind::kTaskExit || e.kind == Kind::kSlurmOom || e.kind == Kind::kNodeFailure ||
             e.kind == Kind::kNodeResponding)) {
    (*named)[sn->node] |= kAsSlurmNode;
  }
  if (e.kind == Kind::kPodNode && e.host != kNoStr) c->pod_nodes.push_back(i);
  if (e.kind == Kind::kWorldInfo) c->world_infos.push_back(i);
  if (e.kind == Kind::kRayWorker) c->ray_workers.push_back(i);
  if (e.kind == Kind::kAgentRanks) c->agent_ranks.push_back(i);
  if (e.local_rank >= 0 || std::holds_alternative<FailureEntry>(e.detail)) c->local_ranked.push_back(i);
  if (e.clock == Clock::kFull && (!c->latest_full || e.time > *c->latest_full)) c->latest_full = e.time;
  c->yearless |= e.clock == Clock::kNoYear;
}

// `right` (the later events' census) joined to `left`'s.
void Join(const EventCensus& right, EventCensus* left) {
  const auto append = [](const std::vector<std::size_t>& from, std::vector<std::size_t>* to) {
    to->insert(to->end(), from.begin(), from.end());
  };
  append(right.pod_nodes, &left->pod_nodes);
  append(right.world_infos, &left->world_infos);
  append(right.ray_workers, &left->ray_workers);
  append(right.agent_ranks, &left->agent_ranks);
  append(right.local_ranked, &left->local_ranked);
  if (right.latest_full && (!left->latest_full || *right.latest_full > *left->latest_full)) left->latest_full = right.latest_full;
  left->yearless |= right.yearless;
}

using Marks = tbb::enumerable_thread_specific<std::vector<std::uint8_t>>;

// tbb::parallel_reduce's body (its imperative form: the lists grow in place, where the
// functional form copies the value for every block). A body reads its blocks left to right and
// joins the census of the blocks to its right, so the lists are in event order.
struct CensusBody {
  CensusBody(const Incident& inc, Marks* marks) : inc(inc), marks(marks) {}
  CensusBody(CensusBody& other, tbb::split) : inc(other.inc), marks(other.marks) {}
  void operator()(const tbb::blocked_range<std::size_t>& range) {
    std::vector<std::uint8_t>& mine = marks->local();
    for (std::size_t i = range.begin(); i != range.end(); ++i) Count(inc.events[i], i, &census, &mine);
  }
  void join(const CensusBody& right) { Join(right.census, &census); }

  const Incident& inc;
  Marks* marks;
  EventCensus census;
};

}  // namespace

EventCensus TakeCensus(const Incident& inc) {
  const std::size_t strings = inc.strings.size();
  Marks marks([&] { return std::vector<std::uint8_t>(strings, 0); });
  CensusBody body(inc, &marks);
  tbb::parallel_reduce(tbb::blocked_range<std::size_t>(0, inc.events.size(), kEventGrain), body);
  EventCensus census = std::move(body.census);
  census.named.assign(strings, 0);
  for (const std::vector<std::uint8_t>& mine : marks) {
    for (std::size_t id = 0; id < strings; ++id) census.named[id] |= mine[id];
  }
  census.named[kNoStr] = 0;  // names nothing
  return census;
}

void AddProblem(InputCounts* in, std::string problem) {
  if (in->problems.size() < kMaxProblems) {
    in->problems.push_back(std::move(problem));
  } else {
    ++in->problems_omitted;
  }
}

void AddNote(InputCounts* in, std::string note) {
  if (in->notes.size() < kMaxProblems) {
    in->notes.push_back(std::move(note));
  } else {
    ++in->problems_omitted;
  }
}

void FinishProblems(InputCounts* in) {
  for (std::string& note : in->notes) AddProblem(in, std::move(note));
  in->notes.clear();
}

// c10, glog and syslog stamps carry no year: take it from the lines that do (slurmctld, the
// journal's ISO stamps, `dmesg -T`, torch's agent and iteration lines, Ray's driver). Logs are
// collected after the job, so no line is much later than the incident's latest full date: a
// year-less stamp takes that date's year, or the year before when that would put it more than
// a month later (a node's boot lines months old, a job across New Year). With no full date
// anywhere the stamps stay year-less (Clock::kNoYear): `denpex events` prints them without a
// year, the diagnosis gives times of day only.
void ResolveYears(const EventCensus& census, Incident* inc) {
  std::optional<TimeNs> latest = census.latest_full;
  if (inc->first_dated != 0 && (!latest || inc->first_dated > *latest)) latest = inc->first_dated;
  if (!latest) {
    if (census.yearless) {
      AddProblem(&inc->input, "no line carries a year (c10, glog and syslog stamps omit it): the diagnosis gives times of day only, "
                              "`denpex events` prints those stamps without a year (`yearless_time`)");
    }
    return;
  }
  inc->year = ToCivil(*latest).year;
  if (!census.yearless) return;
  const int year = *inc->year;
  constexpr TimeNs kLaterAtMost = 31LL * 86400 * kNsPerSec;
  constexpr TimeNs kDay = 86400 * kNsPerSec;
  // The shift from the placeholder year to the year and the year before is one per calendar day:
  // worked out once per day and block (a 16k-rank job's ~100 k yearless events fall on a few days).
  const auto place_block = [&](const tbb::blocked_range<std::size_t>& range) {
    TimeNs day = -1, shift = 0, shift_before = 0;
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      Event& e = inc->events[i];
      if (e.clock != Clock::kNoYear) continue;
      const TimeNs midnight = e.time - ((e.time % kDay) + kDay) % kDay;
      if (midnight != day) {
        CivilTime c = ToCivil(midnight);
        c.year = year;
        shift = FromCivil(c) - midnight;
        c.year -= 1;
        shift_before = FromCivil(c) - midnight;
        day = midnight;
      }
      e.time += e.time + shift > *latest + kLaterAtMost ? shift_before : shift;
      e.clock = Clock::kFull;
    }
  };
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, inc->events.size(), kEventGrain),
                    place_block);
}

namespace {

// One `kubectl describe pod` block: the file bytes [from, to) from its `Node:` line on.
struct DescribeBlock {
  std::uint32_t file = 0;
  std::uint64_t from = 0, to = 0;
  std::string pod;       // its `Name:` line's; empty when the block has none above `Node:`
  StrId node = kNoStr;   // its `Node:` line's
};

std::string_view Stem(std::string_view rel) {
  if (const std::size_t slash = rel.rfind('/'); slash != std::string_view::npos) rel.remove_prefix(slash + 1);
  if (const std::size_t dot = rel.find('.'); dot != std::string_view::npos) rel = rel.substr(0, dot);
  return rel;
}

// Kubernetes: `kubectl describe pod` names the node a pod ran on (`Node:  gpu-0004/10.0.0.4`)
// under the pod's own `Name:` line; one file may hold many such blocks (`kubectl describe pods`
// of a whole job, a collection merged into one file), each read from its own lines. A pod's
// processes print its hostname: the pod name, or for a Job's indexed pods the name without the
// Job controller's 5-character suffix. The scheduler's `Scheduled pod/<pod> Successfully
// assigned <ns>/<pod> to <node>` row names both (the only word on a pod that is gone: a
// JobSet's first attempt).
std::string_view ScheduledPod(std::string_view row) {
  const std::size_t at = row.find(" pod/");
  if (at == std::string_view::npos) return {};
  row.remove_prefix(at + 5);
  return row.substr(0, row.find(' '));
}

// A line of a describe block: indented, or a top-level `Key:` field (`Start Time:`,
// `Controlled By:`, `Node-Selectors:`). A stamped line, a blank line or a table header is not.
bool DescribeLine(std::string_view line) {
  if (line.empty()) return false;
  if (line.front() == ' ' || line.front() == '\t') return true;
  if (!std::isalpha(static_cast<unsigned char>(line.front()))) return false;
  for (const char c : line) {
    if (c == ':') return true;
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != ' ' && c != '-' && c != '.') return false;
  }
  return false;
}

std::string_view LineAt(std::string_view text, std::size_t at) {
  const std::size_t end = text.find('\n', at);
  std::string_view line = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
  if (line.ends_with('\r')) line.remove_suffix(1);
  return line;
}

// The describe block around the `Node:` line at `at`: its pod (the `Name:` line above it within
// the block, empty when none) and where the block ends (the first line that is not the block's).
void ReadBlock(std::string_view text, std::size_t at, DescribeBlock* b) {
  std::size_t start = at;  // the start of the line read last
  for (int lines = 0; start > 0 && lines < 32; ++lines) {
    const std::size_t prev = start >= 2 ? text.rfind('\n', start - 2) : std::string_view::npos;
    start = prev == std::string_view::npos ? 0 : prev + 1;
    const std::string_view line = LineAt(text, start);
    if (!DescribeLine(line) || line.starts_with("Node:")) break;  // the block above ends here
    if (line.starts_with("Name:")) {
      std::string_view pod = line.substr(5);
      while (!pod.empty() && pod.front() == ' ') pod.remove_prefix(1);
      while (!pod.empty() && pod.back() == ' ') pod.remove_suffix(1);
      b->pod = std::string(pod);
      break;
    }
  }
  std::size_t end = text.find('\n', at);
  while (end != std::string_view::npos && end + 1 < text.size()) {
    const std::string_view line = LineAt(text, end + 1);
    if (!DescribeLine(line) || line.starts_with("Name:")) break;
    end = text.find('\n', end + 1);
  }
  b->to = end == std::string_view::npos ? text.size() : end + 1;
}

std::vector<DescribeBlock> DescribeBlocks(const EventCensus& census, const Incident& inc) {
  std::vector<DescribeBlock> blocks;
  std::map<std::uint32_t, std::vector<std::size_t>> by_file;
  for (const std::size_t i : census.pod_nodes) {
    const Event& e = inc.events[i];
    if (inc.str(std::get<Note>(e.detail).text).starts_with("Node:")) by_file[e.file].push_back(i);
  }
  for (const auto& [file, rows] : by_file) {
    auto text = FileText::Open(inc.root / inc.files[file].path);
    if (!text.ok()) continue;
    const std::string_view view = text->view();
    for (const std::size_t i : rows) {
      const Event& e = inc.events[i];
      if (e.offset >= view.size()) continue;
      DescribeBlock b{.file = file, .from = e.offset, .node = e.host};
      ReadBlock(view, e.offset, &b);
      blocks.push_back(std::move(b));
    }
  }
  std::sort(blocks.begin(), blocks.end(),
            [](const DescribeBlock& a, const DescribeBlock& b) { return std::tie(a.file, a.from) < std::tie(b.file, b.from); });
  return blocks;
}

std::map<std::string, std::string, std::less<>> PodAliases(const std::vector<SourceFile>& sources,
                                                           const std::vector<DescribeBlock>& blocks, const EventCensus& census,
                                                           const Incident& inc) {
  std::map<std::string, std::string, std::less<>> alias;
  // A name placed on two nodes (a JobSet's recreated pods share a hostname; the gang may land
  // elsewhere) names neither: its lines' node is unknown, not the first one listed.
  std::set<std::string, std::less<>> ambiguous;
  const auto put = [&](std::string_view name, std::string_view node) {
    const auto [it, added] = alias.emplace(std::string(name), std::string(node));
    if (!added && it->second != node) ambiguous.emplace(name);
  };
  const auto add = [&](std::string_view pod, std::string_view node) {
    if (pod.empty() || pod == node) return;
    put(pod, node);
    const std::size_t dash = pod.rfind('-');
    if (dash != std::string_view::npos && pod.size() - dash == 6) put(pod.substr(0, dash), node);
  };
  // A block cut short above its `Node:` line names no pod: the name of a file that holds it
  // alone is the hint left (a file of several such blocks names none of their pods).
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const DescribeBlock& b = blocks[k];
    const bool alone = (k == 0 || blocks[k - 1].file != b.file) && (k + 1 == blocks.size() || blocks[k + 1].file != b.file);
    add(!b.pod.empty() ? std::string_view(b.pod) : alone ? Stem(sources[b.file].rel) : std::string_view(), inc.str(b.node));
  }
  for (const std::size_t i : census.pod_nodes) {
    const Event& e = inc.events[i];
    add(ScheduledPod(inc.str(std::get<Note>(e.detail).text)), inc.str(e.host));
  }
  // A relayed stream whose tag names its pod and its node (a shipper's record, ingest/streams.h).
  for (const SourceFile& f : sources) {
    const std::string_view node = TaggedNode(f.tag), pod = TaggedPod(f.tag);
    if (!node.empty() && pod != f.tag) add(pod, node);
  }
  for (const std::string& name : ambiguous) alias.erase(name);
  return alias;
}

// A host's FQDN where its short name names a host too is that host (`node-b.cluster.local` in an
// agent's table, `node-b` in its folder, NCCL's and the kernel's lines): one machine, one node. Not
// where two FQDNs share the short name (two domains' `gpu-1` are two machines), nor an FQDN a pod
// alias already places.
void AddFqdnAliases(const std::vector<SourceFile>& sources, const EventCensus& census,
                    const Incident& inc, std::map<std::string, std::string, std::less<>>* alias) {
  // Every name a path or a line gives a host, to `see`.
  const auto each_host = [&](const auto& see) {
    for (const SourceFile& f : sources) {
      if (!f.node.empty()) see(std::string_view(f.node));
    }
    for (StrId id = 1; id < census.named.size(); ++id) {
      if ((census.named[id] & (kAsHost | kAsSlurmNode)) != 0) see(inc.str(id));
    }
  };
  std::map<std::string_view, std::set<std::string_view>> fqdns;  // short name -> the FQDNs with it
  each_host([&](std::string_view host) {
    if (host.find('.') == std::string_view::npos) return;
    if (const std::string_view machine = Machine(host); machine != host && !machine.empty())
      fqdns[machine].insert(host);
  });
  if (fqdns.empty()) return;  // no FQDN (most incidents): nothing to look up
  std::set<std::string_view> shorts;
  each_host([&](std::string_view host) {
    if (fqdns.contains(host)) shorts.insert(host);
  });
  for (const auto& [machine, names] : fqdns) {
    if (names.size() == 1 && shorts.contains(machine))
      alias->emplace(std::string(*names.begin()), std::string(machine));
  }
}

// The host `denpex run`'s identity record beside the log `rel` (`<stem>.task.json` beside
// `<stem>.log`, docs/run_wrapper.md) names: the folder's name as the machine gave it (`--host`,
// SLURMD_NODENAME or its hostname). Empty when there is none or it names none.
std::string RecordedHost(const std::filesystem::path& root, std::string_view rel) {
  if (!rel.ends_with(".log")) return {};
  auto text = FileText::Open(root / (std::string(rel.substr(0, rel.size() - 4)) + ".task.json"));
  if (!text.ok()) return {};
  JsonReader r(text->view());
  if (!r.BeginObject()) return {};
  while (const auto key = r.NextKey()) {
    if (*key == "host") return r.Peek() == '"' ? r.String().value_or("") : std::string();
    if (!r.Skip()) return {};
  }
  return {};
}

// Every log of the incident in one folder (a tarball's top folder, a ticket's, the collection one
// level down; files of no event at the top or in a lone folder, an operator's notes beside it,
// aside): per file, 1 when its path's node is that folder or one above it, no line names that
// folder as a host (a node's folder given alone, whose kernel log names it, is the node) and no
// `denpex run` record beside its logs does. Such a folder's name is no more a node's than a
// ticket's (ingest/identity.h).
std::vector<char> WrapperFolders(const std::vector<SourceFile>& sources, const EventCensus& census,
                                 const Incident& inc) {
  std::vector<char> out(sources.size(), 0);
  // The deepest folder every file sits in, files that say nothing at the top or in its lone
  // folders (the operator's notes beside the collection, walk.h LoneFolders) aside.
  const std::string lone = LoneFolders(inc.root);
  std::optional<std::string_view> common;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const LogFile& f = inc.files[i];
    const std::string_view dir = FolderOf(sources[i].rel);
    if (!f.readable || (!f.eventful && f.kernel_host == kNoStr && InFolder(lone, dir))) continue;
    if (!common) {
      common = dir;
      continue;
    }
    while (!InFolder(dir, *common)) common = FolderOf(*common);
    if (common->empty()) return out;
  }
  if (!common || common->empty()) return out;
  std::set<std::string_view> named;  // the machines lines name
  for (StrId id = 1; id < census.named.size(); ++id) {
    if ((census.named[id] & (kAsHost | kAsSlurmNode)) != 0) named.insert(Machine(inc.str(id)));
  }
  for (const LogFile& f : inc.files) {
    if (f.kernel_host != kNoStr)
      named.insert(Machine(inc.str(f.kernel_host)));  // a quiet kernel log's
  }
  // The wrapper's candidates: files whose path's node is the common folder or one above it, named
  // by no line. A folder whose logs' `denpex run` records give its name as their host is the
  // host's.
  std::vector<std::string_view> candidate(sources.size());
  std::set<std::string_view> recorded;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const std::string& node = sources[i].node;
    if (node.empty() || named.contains(Machine(node))) continue;
    const std::string_view folder = NodeFolder(sources[i].rel, node);
    if (folder.size() > common->size()) continue;  // a node folder below it
    candidate[i] = folder;
    if (!recorded.contains(folder) && RecordedHost(inc.root, sources[i].rel) == node)
      recorded.insert(folder);
  }
  for (std::size_t i = 0; i < sources.size(); ++i)
    out[i] = !candidate[i].empty() && !recorded.contains(candidate[i]);
  return out;
}

// The describe block (of `blocks`, sorted) that holds `e`'s line; nullptr when none.
const DescribeBlock* BlockOf(const std::vector<DescribeBlock>& blocks, const Event& e) {
  auto it = std::upper_bound(blocks.begin(), blocks.end(), std::make_pair(e.file, e.offset),
                             [](const auto& key, const DescribeBlock& b) { return key < std::make_pair(b.file, b.from); });
  if (it == blocks.begin()) return nullptr;
  --it;
  return it->file == e.file && e.offset < it->to ? &*it : nullptr;
}

}  // namespace

namespace {

// DeepSpeed's runner's `--world_info` (the first that decodes) names every host of the job, the
// silent ones too, and each host's ranks; the files that hold it are consoles of many ranks.
void DecodeWorld(const EventCensus& census, Incident* inc) {
  for (const std::size_t i : census.world_infos) {
    const Event& e = inc->events[i];
    std::vector<WorldHost> hosts = DecodeWorldInfo(inc->str(std::get<Note>(e.detail).text));
    if (hosts.empty()) continue;
    if (hosts.back().first_rank + hosts.back().procs > 1) inc->files[e.file].world_info = true;
    if (inc->world.empty()) inc->world = std::move(hosts);
  }
}

}  // namespace

// Nodes are the directories files sit in plus the hosts lines name (NCCL `host:pid:tid`, pdsh
// prefixes, torchrun table `host :` fields): a combined srun log has no directories. An event
// belongs to its file's node, else to the host it names. Pod names and FQDNs resolve to their node.
void ResolveNodes(const std::vector<SourceFile>& sources, const EventCensus& census, Incident* inc) {
  const std::vector<DescribeBlock> blocks = DescribeBlocks(census, *inc);
  auto alias = PodAliases(sources, blocks, census, *inc);
  AddFqdnAliases(sources, census, *inc, &alias);
  auto real = [&](std::string_view name) -> std::string_view {
    const auto it = alias.find(name);
    return it == alias.end() ? name : std::string_view(it->second);
  };
  std::vector<std::string> folder_node(sources.size()), name_node(sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    folder_node[i] = sources[i].node;
    // a pod log's name, or the pod (and its node) a relayed stream's tag names (ingest/streams.h);
    // a tag's host without a pod is no stream's node: a machine's shipper relays consoles of many
    // nodes' lines too (srun's, written on the batch host)
    const std::string_view tag = sources[i].tag;
    const std::string_view pod = tag.empty() ? Stem(sources[i].rel) : TaggedPod(tag);
    if (const std::string_view node = TaggedNode(tag); !node.empty() && pod != tag) {
      name_node[i] = node;
    } else if (const auto it = alias.find(pod); it != alias.end()) {
      name_node[i] = it->second;
    }
  }
  // A file whose path names no node is the node its lines name (ingest/identity.h).
  const FileIdentity identity = IdentifyFiles({.folder_node = std::move(folder_node),
                                               .name_node = std::move(name_node),
                                               .wrapper = WrapperFolders(sources, census, *inc)},
                                              *inc);
  std::vector<std::string> file_node = identity.path_node;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (identity.node[i].empty()) continue;
    // a pod's hostname (a split agent's label too: `<host> (agent with ranks 8-15)`) is its node's
    const std::string_view host = NodeHost(identity.node[i]);
    file_node[i] = host.empty() ? identity.node[i] : std::string(real(host)) + identity.node[i].substr(host.size());
    inc->files[i].node_from_content = true;
  }
  // A file of describe blocks is the node they name (their own lines beat its folder's name),
  // or no one node when they name several.
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const std::uint32_t f = blocks[k].file;
    if (k > 0 && blocks[k - 1].file == f) continue;
    bool one = true;
    for (std::size_t j = k + 1; j < blocks.size() && blocks[j].file == f; ++j) one &= blocks[j].node == blocks[k].node;
    file_node[f] = one ? std::string(inc->str(blocks[k].node)) : std::string();
  }
  const auto split = [&](std::string_view host) {
    return std::find(identity.split_hosts.begin(), identity.split_hosts.end(), host) != identity.split_hosts.end();
  };
  // Views of the names (into file_node, the aliases, the world info and the strings), sorted
  // before they are copied: sorting the ~4 k std::string of a 2,048-node job took ~0.9 ms.
  std::vector<std::string_view> names;
  for (const auto& n : file_node) {
    if (!n.empty()) names.push_back(real(n));
  }
  // Each distinct string once (a 16k-rank job has ~100 k events that name a host, and a few
  // thousand hosts: sorting a copy per event was most of this serial step).
  const std::vector<std::uint8_t>& seen = census.named;
  DecodeWorld(census, inc);
  for (const WorldHost& h : inc->world) names.push_back(real(h.host));
  for (StrId id = 1; id < seen.size(); ++id) {
    if ((seen[id] & kAsHost) != 0 && !split(inc->str(id))) names.push_back(real(inc->str(id)));
    if ((seen[id] & kAsSlurmNode) != 0) names.push_back(inc->str(id));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  inc->nodes.assign(names.begin(), names.end());
  auto index = [&](std::string_view name) -> std::int32_t {
    if (name.empty()) return -1;
    name = real(name);
    auto it = std::lower_bound(inc->nodes.begin(), inc->nodes.end(), name);
    return it != inc->nodes.end() && *it == name ? static_cast<std::int32_t>(it - inc->nodes.begin()) : -1;
  };
  for (std::size_t i = 0; i < sources.size(); ++i) inc->files[i].node = index(file_node[i]);
  std::vector<std::int32_t> host_node(seen.size(), -1);
  for (StrId id = 1; id < seen.size(); ++id) {
    if ((seen[id] & kEventHost) != 0) host_node[id] = index(inc->str(id));
  }
  EachEvent(inc->events, [&](Event& e) {
    e.node = inc->files[e.file].node;
    if (e.node < 0) e.node = host_node[e.host];  // kNoStr's: -1
  });
  // A describe block's own rows (its container's `Reason:`, `Restart Count:`) are its pod's
  // node's, whatever file holds the block.
  if (!blocks.empty()) {
    EachEvent(inc->events, [&](Event& e) {
      if (e.family != Family::kKubernetes || e.host != kNoStr) return;
      if (const DescribeBlock* b = BlockOf(blocks, e)) e.node = host_node[b->node];
    });
  }
  for (const WorldHost& h : inc->world) inc->world_node.push_back(index(h.host));
}

void NoteRecovery(Incident* inc) {
  const InputCounts& in = inc->input;
  if (in.joined_lines > 0) {
    AddProblem(&inc->input, std::to_string(in.joined_lines) + " hard-wrapped lines joined to the line they continue");
  }
  if (in.interleaved_lines > 0) {
    AddProblem(&inc->input, std::to_string(in.interleaved_lines) +
                                " lines split by another srun task's output put back together (the rest: malformed)");
  }
  if (in.broken_records > 0) {
    AddProblem(&inc->input, std::to_string(in.broken_records) + " records cut short and read as far as they go (counted as malformed)");
  }
  if (in.untimed_events > 0) {
    AddProblem(&inc->input, std::to_string(in.untimed_events) +
                                " events carry no time of their own (torch <= 2.3 c10 lines, tracebacks, NCCL INFO): they "
                                "take the time of the stamped line before them in their file, or none, and are "
                                "ordered by their place in it");
  }
}

// torchrun numbers each agent's workers contiguously (global = the node's first rank + local
// rank): the first rank of every node whose known (local rank, rank) pairs agree on one; a node
// whose pairs disagree, or with a local rank two ranks claim (-1), gets none.
std::map<std::int32_t, std::int32_t> NodeBases(const std::map<std::pair<std::int32_t, std::int32_t>, std::int32_t>& by_local) {
  std::map<std::int32_t, std::int32_t> base;
  for (const auto& [key, rank] : by_local) {
    const std::int32_t b = rank < 0 ? -1 : rank - key.second;  // a pair two ranks claim: no base
    auto [it, added] = base.try_emplace(key.first, b);
    if (!added && it->second != b) it->second = -1;
  }
  return base;
}

namespace {

// What a node's launcher (DeepSpeed's launch.py), the runner, pdsh or ssh printed: never a rank's.
bool LauncherWord(const Event& e) {
  if (e.family == Family::kBareMetal) return true;
  return e.family == Family::kDeepSpeed && (e.kind == Kind::kLauncherExit || e.kind == Kind::kKillingSubprocess ||
                                            e.kind == Kind::kLauncherLayout || e.kind == Kind::kWorldInfo);
}

// Per node, in a console the runner's --world_info describes: the one rank whose `[rank<G>]:`
// lines it holds (the world info's range for the node when known, else the events' nodes); -1
// when none or several.
std::vector<std::int32_t> OnlyRankPerNode(const Incident& inc) {
  std::vector<std::int32_t> only(inc.nodes.size(), -1);
  std::vector<std::uint8_t> several(inc.nodes.size(), 0);
  if (std::none_of(inc.files.begin(), inc.files.end(), [](const LogFile& f) { return f.world_info; })) return only;
  for (const Event& e : inc.events) {
    if (e.rank < 0 || e.node < 0 || !inc.files[e.file].world_info || several[e.node]) continue;
    if (only[e.node] < 0) {
      only[e.node] = e.rank;
    } else if (only[e.node] != e.rank) {
      only[e.node] = -1;
      several[e.node] = 1;
    }
  }
  return only;
}

}  // namespace

// A line's rank when it has no rank of its own: the one rank its file's prefixes name (a torchrun
// log dir's stderr.log), its srun task id when srun started the ranks itself (no torchrun tags),
// or the rank that other lines give its (node, local rank) (the log dir's stdout.log), or failing
// that its node's first rank plus its local rank (torch <= 2.1 log dirs print no `[rank<G>]:`,
// and the agent's table names only the workers that failed).
void ResolveOwnRanks(Incident* inc) {
  std::vector<std::int32_t> own(inc->files.size(), -1);
  std::set<std::int32_t> ranks;
  for (std::size_t i = 0; i < inc->files.size(); ++i) {
    const LogFile& f = inc->files[i];
    if (!f.readable || f.own_rank >= 0 || f.barrier_ranks.size() != 1 || !f.prefix_ranks.empty() ||
        f.agent || f.task_labels || f.local_tags || f.world_info) {
      continue;
    }
    own[i] = f.barrier_ranks.front();
    ranks.insert(own[i]);
  }
  if (ranks.size() < 2) return;
  for (std::size_t i = 0; i < inc->files.size(); ++i) {
    if (own[i] >= 0) inc->files[i].own_rank = own[i];
  }
  EachEvent(inc->events, [&](Event& e) {
    if (e.rank >= 0 || own[e.file] < 0 || LauncherWord(e) || e.family == Family::kXid ||
        e.family == Family::kHostOom)
      return;
    e.rank = own[e.file];
  });
}

void ResolveRanks(const EventCensus& census, Incident* inc) {
  // (node, local rank) -> rank; -1 when two ranks claim it: the "node" is several machines
  // under one host name, and a line that says only its local rank could be any of theirs.
  std::map<std::pair<std::int32_t, std::int32_t>, std::int32_t> by_local;
  const auto claim = [&](std::int32_t node, std::int32_t local_rank, std::int32_t rank) {
    auto [it, added] = by_local.try_emplace(std::make_pair(node, local_rank), rank);
    if (!added && it->second != rank) it->second = -1;
  };
  for (const std::size_t i : census.local_ranked) {
    const Event& e = inc->events[i];
    if (e.rank >= 0 && e.node >= 0 && e.local_rank >= 0) claim(e.node, e.local_rank, e.rank);
    const auto* fe = std::get_if<FailureEntry>(&e.detail);
    if (fe && e.rank >= 0 && e.node >= 0 && inc->files[e.file].node_from_content) {
      // the agent's own console, placed by its lines: the table's host is the console's node
      claim(e.node, fe->local_rank, e.rank);
    } else if (fe && e.rank >= 0 && fe->host != kNoStr) {
      if (const std::int32_t node = NodeOfHost(*inc, inc->str(fe->host)); node >= 0) {
        claim(node, fe->local_rank, e.rank);
      } else if (e.node >= 0) {  // a pod's hostname: the table sits in the pod's own log
        claim(e.node, fe->local_rank, e.rank);
      }
    } else if (fe && e.rank >= 0 && e.node >= 0 && !inc->files[e.file].tag.empty()) {
      // a `rank :` field read alone (its `host :` line may be another entry's): the table sits in
      // the relayed stream of its agent's pod, on the node the stream's labels name
      claim(e.node, fe->local_rank, e.rank);
    }
  }
  std::map<std::int32_t, std::int32_t> bases = NodeBases(by_local);
  const std::vector<std::int32_t> only_rank = OnlyRankPerNode(*inc);
  // The torchrun agent's rendezvous result states its node's first rank (LOGLEVEL=INFO): the
  // base of a node no failure table placed (a torch <= 2.1 pod whose lines carry only
  // `[default<L>]:`, torn down before its agent printed a table). Two results that disagree
  // (an elastic re-rendezvous) state none.
  std::map<std::int32_t, std::int32_t> stated;
  for (const std::size_t i : census.agent_ranks) {
    const Event& e = inc->events[i];
    const auto* nl = std::get_if<NodeLayout>(&e.detail);
    if (nl == nullptr || e.node < 0) continue;
    auto [it, added] = stated.try_emplace(e.node, nl->First());
    if (!added && it->second != nl->First()) it->second = -1;
  }
  for (const auto& [node, first] : stated) bases.try_emplace(node, first);
  EachEvent(inc->events, [&](Event& e) {
    // A launcher's node layout (DeepSpeed launch.py's, torchrun's rendezvous result) is its word,
    // no rank's (one rank printing in deepspeed.log must not take it, nor be placed by its host).
    if (e.rank >= 0 || e.kind == Kind::kLauncherLayout || e.kind == Kind::kAgentRanks) return;
    const LogFile& f = inc->files[e.file];
    if (f.world_info) {
      // A console of many ranks (the runner's --world_info says so): a line without a rank of its
      // own is its node's one printing rank's, unless the launcher, pdsh or ssh said it.
      if (e.node >= 0 && !LauncherWord(e) && only_rank[e.node] >= 0) e.rank = only_rank[e.node];
    } else if (f.prefix_ranks.size() == 1 && !f.agent && !f.task_labels && e.family != Family::kXid && e.family != Family::kHostOom) {
      // One rank's file (torch >= 2.3's `[rank<G>]:` on its lines). Not a file of many tasks
      // (srun labels: one task's traceback alone carries the prefix, as in a merged collection)
      // and not a kernel's line about a GPU or a process, which no rank printed.
      e.rank = f.prefix_ranks.front();
    } else if (e.task >= 0 && f.task_labels && !f.local_tags) {
      e.rank = e.task;
    } else if (e.local_rank >= 0 && e.node >= 0) {
      auto it = by_local.find({e.node, e.local_rank});
      if (it != by_local.end()) {
        if (it->second >= 0) e.rank = it->second;  // claimed by two ranks: left unknown
      } else if (auto b = bases.find(e.node); b != bases.end() && b->second >= 0) {
        e.rank = b->second + e.local_rank;
      }
    }
  });
}

void ResolveNcclPids(Incident* inc) {
  // Most incidents have no unranked NCCL line: look before building the table.
  if (!AnyEvent(inc->events, [](const Event& e) { return e.rank < 0 && NcclPid(e) > 0; })) return;
  std::int32_t world_comm = 0;  // the largest communicator's nranks
  for (const Event& e : inc->events) {
    if (const auto* c = std::get_if<CommInit>(&e.detail))
      world_comm = std::max(world_comm, c->nranks);
  }
  std::map<std::pair<std::int32_t, std::int64_t>, std::int32_t>
      by_pid;  // (node, pid) -> rank; -1: claimed twice
  const auto claim = [&](std::int32_t node, std::int64_t pid, std::int32_t rank) {
    if (node < 0 || pid <= 0 || rank < 0) return;
    auto [it, added] = by_pid.try_emplace(std::make_pair(node, pid), rank);
    if (!added && it->second != rank) it->second = -1;
  };
  for (const Event& e : inc->events) {
    if (const auto* fe = std::get_if<FailureEntry>(&e.detail)) {
      const std::int32_t named = fe->host == kNoStr ? -1 : NodeOfHost(*inc, inc->str(fe->host));
      claim(named >= 0 ? named : e.node, fe->pid, e.rank);
    } else if (const auto* c = std::get_if<CommInit>(&e.detail)) {
      if (c->nranks == world_comm && world_comm > 1) claim(e.node, c->pid, c->comm_rank);
      if (e.rank >= 0) claim(e.node, c->pid, e.rank);
    } else if (const auto* w = std::get_if<NcclWarn>(&e.detail); w != nullptr && e.rank >= 0) {
      claim(e.node, w->pid, e.rank);
    }
  }
  if (by_pid.empty()) return;
  EachEvent(inc->events, [&](Event& e) {
    if (e.rank >= 0 || e.node < 0) return;
    const std::int64_t pid = NcclPid(e);
    if (pid <= 0) return;
    if (auto it = by_pid.find({e.node, pid}); it != by_pid.end() && it->second >= 0)
      e.rank = it->second;
  });
}

namespace {

// The named process group and the rank within it that a watchdog line states; kNoStr and -1 when
// it names none (torch <= 2.2's `[Rank N]` names no group: N may be any group's).
std::pair<StrId, std::int32_t> GroupPlace(const Event& e) {
  if (const auto* w = std::get_if<WatchdogTimeout>(&e.detail)) return {w->pg, w->group_rank};
  if (const auto* n = std::get_if<WatchdogNote>(&e.detail)) return {n->pg, n->group_rank};
  return {kNoStr, -1};
}

}  // namespace

void ResolvePgRanks(Incident* inc) {
  // Most incidents have no such line: look before building the places.
  if (!AnyEvent(inc->events, [](const Event& e) {
        const auto place = GroupPlace(e);
        return e.rank < 0 && place.first != kNoStr && place.second >= 0;
      }))
    return;
  std::map<std::pair<StrId, std::int32_t>, std::int32_t> by_place;  // -1: claimed twice
  // The collectives each place's ranked timeouts name (place -> SeqNums)
  std::map<std::pair<StrId, std::int32_t>, std::set<std::int64_t>> timed_out;
  for (const Event& e : inc->events) {
    const auto place = GroupPlace(e);
    if (place.first == kNoStr || place.second < 0 || e.rank < 0) continue;
    auto [it, added] = by_place.try_emplace(place, e.rank);
    if (!added && it->second != e.rank) it->second = -1;
    if (const auto* w = std::get_if<WatchdogTimeout>(&e.detail)) timed_out[place].insert(w->seq);
  }
  EachEvent(inc->events, [&](Event& e) {
    if (e.rank >= 0) return;
    const auto place = GroupPlace(e);
    if (place.first == kNoStr || place.second < 0) return;
    const auto it = by_place.find(place);
    if (it == by_place.end() || it->second < 0) return;
    // A quoted timeout only as the one its rank printed itself (the same SeqNum): a quote that
    // stands alone may be cut and glued to the next line (`SeqNum=3[W302 ...` of 34).
    if (const auto* w = std::get_if<WatchdogTimeout>(&e.detail)) {
      const auto seqs = timed_out.find(place);
      if (w->seq < 0 || seqs == timed_out.end() || !seqs->second.contains(w->seq)) return;
    }
    e.rank = it->second;
  });
}

namespace {

// The pid of a Ray worker's line prefix: `(RayTrainWorker pid=2428, ip=10.64.0.5) ...`,
// `(RayTrainWorker pid=2428) ...` (a worker on the driver's node), `\x1b[36m(...)\x1b[0m ...`,
// also behind what a collector or a paste put before it (a CRI or journal stamp, quoting); 0
// when the line has no such prefix.
constexpr std::size_t kRayPrefixWindow = 192;  // a collector's stamp and tag, then the prefix

std::int64_t RayPrefixPid(std::string_view line) {
  for (std::size_t open = line.find('('); open != std::string_view::npos; open = line.find('(', open + 1)) {
    const std::size_t close = line.find(')', open);
    if (close == std::string_view::npos) return 0;
    const std::string_view inner = line.substr(open + 1, close - open - 1);
    const std::size_t at = inner.find(" pid=");
    if (inner.empty() || !std::isalpha(static_cast<unsigned char>(inner.front())) || at == std::string_view::npos ||
        inner.substr(0, at).find(' ') != std::string_view::npos) {
      continue;
    }
    std::int64_t pid = 0;
    const std::string_view digits = inner.substr(at + 5);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    return ec == std::errc() && end != digits.data() ? pid : 0;
  }
  return 0;
}

}  // namespace

// Ray Train's worker table (`- (node_id=…, ip=<ip>, pid=<pid>) world_rank=R, …`, Kind::kRayWorker)
// gives each worker process its rank; a worker's own lines in the same file carry only its
// `(RayTrainWorker pid=<pid>, ip=<ip>)` prefix under torch <= 2.3 (no `[rank<G>]:`). The pid is
// read back from the line (the prefix is stripped before the recognisers): by (node, pid) when
// the line names its ip, by the pid alone when one table entry has it.
void ResolveRayWorkers(const EventCensus& census, Incident* inc) {
  std::map<std::int64_t, std::vector<std::pair<std::int32_t, std::int32_t>>> by_pid;  // pid -> (node, rank)
  // The streams that hold a table (a rotated log's pieces are one stream: the table may sit in
  // an older piece than the workers' lines).
  const auto stream = [&](std::uint32_t f) { return inc->files[f].rotated_into >= 0 ? static_cast<std::uint32_t>(inc->files[f].rotated_into) : f; };
  std::set<std::uint32_t> streams;
  for (const std::size_t i : census.ray_workers) {
    const Event& e = inc->events[i];
    const auto* w = std::get_if<WorkerSignalled>(&e.detail);
    if (w == nullptr || e.rank < 0) continue;
    by_pid[w->pid].emplace_back(e.node, e.rank);
    streams.insert(stream(e.file));
  }
  std::set<std::uint32_t> files;
  for (std::uint32_t f = 0; f < inc->files.size(); ++f) {
    if (streams.contains(stream(f))) files.insert(f);
  }
  for (const std::uint32_t file : files) {
    auto text = FileText::Open(inc->root / inc->files[file].path);
    if (!text.ok()) continue;
    const std::string_view view = text->view();
    for (Event& e : inc->events) {
      if (e.file != file || e.rank >= 0 || e.offset >= view.size()) continue;
      const auto it = by_pid.find(RayPrefixPid(view.substr(e.offset, std::min<std::size_t>(e.length, kRayPrefixWindow))));
      if (it == by_pid.end()) continue;
      const bool named = e.host != kNoStr;  // the prefix's ip= resolved the line's node
      for (const auto& [node, rank] : it->second) {
        if (named ? node == e.node : it->second.size() == 1) e.rank = rank;
      }
    }
  }
}

}  // namespace denpex::engine
