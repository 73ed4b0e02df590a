#include "analyze/placement.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "analyze/world_size.h"
#include "ingest/identity.h"

namespace denpex::engine {

void SetNode(RankFacts* r, std::int32_t node) {
  if (r->node < 0) r->node = node;
}

namespace {

// When every node whose base is known sits at base = (its place among the nodes) x G for one G,
// nodes are numbered in name order with G workers each (torchrun's node ranks as the job's
// hosts sort): the base of a node whose workers all stayed silent follows.
void ExtendBases(const Incident& inc, std::map<std::int32_t, std::int32_t>* base) {
  if (base->empty() || base->size() == inc.nodes.size()) return;
  std::int32_t g = -1;
  for (const auto& [node, b] : *base) {
    if (node == 0 ? b != 0 : b % node != 0) return;
    if (node > 0 && g >= 0 && b / node != g) return;
    if (node > 0) g = b / node;
  }
  if (g <= 0) return;
  for (std::int32_t n = 0; n < static_cast<std::int32_t>(inc.nodes.size()); ++n)
    base->emplace(n, n * g);
}

// A torchrun log dir's `<L>/` folder names a worker even when it printed nothing (an empty
// stderr.log): its global rank is its node's base plus L, the base shown by any sibling folder
// whose lines carry `[rank<G>]:`, or by a line of one whose rank the agent's failure table gave
// (ingest's ResolveRanks), or by the other nodes' numbering (ExtendBases).
void RanksOfLocalFolders(const Incident& inc, JobFacts* jf) {
  std::map<std::int32_t, std::int32_t> base;  // node -> global rank of its local rank 0
  for (const LogFile& f : inc.files) {
    if (f.node >= 0 && f.local_rank >= 0 && f.prefix_ranks.size() == 1 &&
        f.prefix_ranks[0] >= f.local_rank) {
      base.emplace(f.node, f.prefix_ranks[0] - f.local_rank);
    }
  }
  const auto folder = [](const LogFile& f) {
    return f.local_rank >= 0 && f.node >= 0 && f.prefix_ranks.empty() && !f.agent;
  };
  const bool any_folder = std::any_of(inc.files.begin(), inc.files.end(), folder);
  for (const Event& e : inc.events) {
    if (!any_folder) break;
    const LogFile& f = inc.files[e.file];
    if (e.rank >= f.local_rank && folder(f)) {
      base.emplace(f.node, e.rank - f.local_rank);
    }
  }
  ExtendBases(inc, &base);
  for (const LogFile& f : inc.files) {
    if (f.node < 0 || f.local_rank < 0 || !f.prefix_ranks.empty() || !f.readable) continue;
    auto it = base.find(f.node);
    if (it == base.end()) continue;
    const std::int32_t r = it->second + f.local_rank;
    jf->EnsureRank(r);
    jf->ranks[r].has_log = true;
    SetNode(&jf->ranks[r], f.node);
  }
}

// A torchrun console holding its workers' `[default<L>]:`-tagged lines (a pod's `kubectl logs`,
// torchrun --tee): a line that names both its local and its global rank gives the node's first
// rank; the workers it started together, local ranks 0 up to the highest tag in the file,
// logged there too, named or not (torch <= 2.4 prints no per-rank line at start, so a worker
// that waited quietly never names itself). One base per file; two that disagree place nothing.
void RanksOfTaggedConsoles(const Incident& inc, JobFacts* jf) {
  struct Base {
    std::int32_t first = -1, top = -1, node = -1;  // node: the lines' (a pod's file names none)
    bool conflict = false;
  };
  if (std::none_of(inc.files.begin(), inc.files.end(),
                   [](const LogFile& f) { return f.agent && f.local_tags; }))
    return;
  std::vector<Base> bases(inc.files.size());
  for (const Event& e : inc.events) {
    const LogFile& f = inc.files[e.file];
    if (!f.agent || !f.local_tags || e.rank < 0 || e.local_rank < 0 || e.rank < e.local_rank)
      continue;
    Base& b = bases[e.file];
    const std::int32_t first = e.rank - e.local_rank;
    if (b.first >= 0 && b.first != first) b.conflict = true;
    b.first = first;
    b.top = std::max(b.top, e.local_rank);
    if (e.node >= 0 && b.node >= 0 && b.node != e.node) b.conflict = true;
    if (e.node >= 0) b.node = e.node;
  }
  for (std::size_t i = 0; i < inc.files.size(); ++i) {
    const Base& b = bases[i];
    const LogFile& f = inc.files[i];
    const std::int32_t node = f.node >= 0 ? f.node : b.node;
    if (b.first < 0 || b.conflict || node < 0 || f.later_attempt) continue;
    for (std::int32_t l = 0; l <= std::max(b.top, f.top_local_tag); ++l) {
      jf->EnsureRank(b.first + l);
      RankFacts& r = jf->ranks[b.first + l];
      r.has_log = true;
      SetNode(&r, node);
    }
  }
}

// srun --label's output of tasks that are the ranks themselves (no torchrun tags, no agent):
// every task's stdout and stderr go to this one file, so a rank whose task id labels lines here
// has its log here, and had it raised or timed out, it would be here too (ingest's resolve made
// these lines' rank their task id).
void RanksOfLabelledTasks(const Incident& inc, JobFacts* jf) {
  if (std::none_of(inc.files.begin(), inc.files.end(),
                   [](const LogFile& f) { return f.task_labels && !f.local_tags && !f.agent; }))
    return;
  // Marked by rank first, then the facts of each marked rank set once: a mark per line, in a
  // million lines of ranks in no order, in the facts (17 MB at 131k ranks) missed the cache.
  std::vector<char> labelled;
  for (const Event& e : inc.events) {
    const LogFile& f = inc.files[e.file];
    if (!f.task_labels || f.local_tags || f.agent || e.task < 0 || e.rank != e.task) continue;
    if (static_cast<std::size_t>(e.rank) >= labelled.size())
      labelled.resize(static_cast<std::size_t>(e.rank) + 1, 0);
    labelled[static_cast<std::size_t>(e.rank)] = 1;
  }
  if (labelled.empty()) return;
  jf->EnsureRank(static_cast<std::int32_t>(labelled.size()) - 1);  // the highest, at once
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(labelled.size()); ++r) {
    if (labelled[static_cast<std::size_t>(r)]) jf->ranks[r].has_log = true;
  }
}

// DeepSpeed's runner's `--world_info` gives every host its ranks, even a node whose launcher
// printed nothing: its first rank and count, where launch.py's own layout line did not.
void ApplyWorldInfo(const Incident& inc, JobFacts* jf) {
  for (std::size_t i = 0; i < inc.world.size(); ++i) {
    const std::int32_t node = inc.world_node[i];
    if (node < 0 || jf->nodes[node].first_rank >= 0 || inc.world[i].procs <= 0) continue;
    jf->nodes[node].first_rank = inc.world[i].first_rank;
    jf->nodes[node].local_procs = inc.world[i].procs;
  }
}

// The world size the logs state: ranks above the highest one heard from exist, silent (their
// node's logs missing); the wait-for graph can then find the one every group waited on.
void ApplyStatedWorld(const Incident& inc, JobFacts* jf) {
  const auto seen = static_cast<std::int32_t>(jf->ranks.size());
  WorldSize w = StatedWorldSize(inc, seen - 1);
  jf->world.notes = std::move(w.problems);
  const std::int32_t world = std::max(w.declared, w.lower_bound);
  if (world <= seen) return;
  jf->EnsureRank(world - 1);
  jf->world.stated = world;
  const std::string first = std::to_string(seen), last = std::to_string(world - 1);
  jf->world.notes.push_back(
      "world size " + std::to_string(world) +
      (w.declared > 0 ? " as " + w.source : " at least, as NCCL's largest communicator states it") +
      " says, not " + std::to_string(seen) + ": " +
      (seen == world - 1 ? "no line names rank " + first
                         : "no line names ranks " + first + "-" + last) +
      " (their node's logs are missing, or their lines carry no rank)");
}

// An agent's console that its own lines place on a named node (its kernel lines, its table's
// host) may hold its workers' lines too (a node's files one after another, as a user keeps one
// file per machine): their ranks (untagged `[rank<G>]:` prefixes, the ranks lines state) are its
// node's when they lie in one aligned block of G ranks, G the world over the agents (the nodes
// with an agent's console, and each console no line places): torchrun numbers each agent's workers
// from a multiple of its nproc. srun's one console of every node's workers, or a file of several
// nodes' consoles, spans more than one block and is no one node's; a console that names no host is
// a node of its own only as a guess.
void PlaceConsoleWorkers(const Incident& inc, JobFacts* jf) {
  std::set<std::int32_t> agent_nodes;
  std::int32_t unplaced = 0;  // a console no line places is one more agent
  for (const LogFile& f : inc.files) {
    if (f.agent && f.node >= 0) agent_nodes.insert(f.node);
    unplaced += f.agent && f.node < 0 && f.rotated_into < 0 ? 1 : 0;
  }
  const auto world = static_cast<std::int32_t>(jf->ranks.size());
  const auto agents = static_cast<std::int32_t>(agent_nodes.size()) + unplaced;
  if (world == 0 || agents == 0 || world % agents != 0) return;
  const std::int32_t g = world / agents;
  struct Span {
    std::int32_t lo = std::numeric_limits<std::int32_t>::max();
    std::int32_t hi = -1;
    void Add(std::int32_t r) {
      lo = std::min(lo, r);
      hi = std::max(hi, r);
    }
  };
  std::vector<Span> span(inc.files.size());
  std::vector<char> console(inc.files.size(), 0);
  bool any = false;
  for (std::size_t i = 0; i < inc.files.size(); ++i) {
    const LogFile& f = inc.files[i];
    console[i] =
        f.agent && f.node_from_content && f.node >= 0 && !NodeHost(inc.nodes[f.node]).empty();
    any |= console[i] != 0;
    if (console[i] && !f.prefix_ranks.empty()) {
      span[i].Add(f.prefix_ranks.front());
      span[i].Add(f.prefix_ranks.back());
    }
  }
  if (!any) return;
  for (const Event& e : inc.events) {
    if (console[e.file] && e.rank >= 0) span[e.file].Add(e.rank);
  }
  for (std::size_t i = 0; i < inc.files.size(); ++i) {
    console[i] &= span[i].hi >= 0 && span[i].lo / g == span[i].hi / g;
    if (!console[i]) continue;
    for (const std::int32_t r : inc.files[i].prefix_ranks)
      SetNode(&jf->ranks[r], inc.files[i].node);
  }
  for (const Event& e : inc.events) {
    if (console[e.file] && e.rank >= 0) SetNode(&jf->ranks[e.rank], inc.files[e.file].node);
  }
}

// A torchrun agent that states no layout still shows how many workers it ran: torch's
// SubprocessContext, once a worker has failed, SIGTERMs every worker still running (`Sending
// process P closing signal SIGTERM`, one line each), and its ChildFailedError table lists the
// ones that had already exited. Local ranks 0 .. N-1, N = the two together, numbered from the
// table's first rank (global - local): a worker that never printed a line (stopped, hung) is
// then known to be there, and MapSignalledPids gives it its SIGTERM line. Only when the
// table's entries agree on one first rank, name distinct pids, and their local ranks fit
// under N. (A worker that exited 0 before the failure is not counted: in a job whose workers
// run one loop of collectives, none does while the others still run.)
void CountAgentWorkers(const Incident& inc, JobFacts* jf) {
  struct Seen {
    std::int32_t base = -1, top_local = -1;
    bool conflict = false;
    std::vector<std::int64_t> pids;  // of the workers that had exited (table, `failed` line)
    std::vector<std::int64_t> signalled;
    // Its workers' errors printed there without a rank (tracebacks' last lines): a console they
    // share. More of them than workers that exited means one came from a worker it SIGTERMed.
    std::int32_t unranked_errors = 0;
  };
  // Only the lines of agents' consoles count (their streams are agents' too).
  if (std::none_of(inc.files.begin(), inc.files.end(), [](const LogFile& f) { return f.agent; }))
    return;
  std::vector<Seen> seen(jf->nodes.size());
  auto add = [](std::vector<std::int64_t>* v, std::int64_t pid) {
    if (pid > 0 && std::find(v->begin(), v->end(), pid) == v->end()) v->push_back(pid);
  };
  for (const Event& e : inc.events) {
    if (e.node < 0 || !(inc.files[e.file].agent || inc.files[StreamOf(inc, e.file)].agent))
      continue;
    Seen& s = seen[static_cast<std::size_t>(e.node)];
    s.unranked_errors += e.rank < 0 && (IsPeerError(e) || IsOwnError(inc, e)) ? 1 : 0;
    if (const auto* fe = std::get_if<FailureEntry>(&e.detail)) {
      if (e.rank < 0 || fe->local_rank < 0 || e.rank < fe->local_rank || fe->pid <= 0) {
        s.conflict = true;
        continue;
      }
      if (s.base >= 0 && s.base != e.rank - fe->local_rank) s.conflict = true;
      s.base = e.rank - fe->local_rank;
      s.top_local = std::max(s.top_local, fe->local_rank);
      add(&s.pids, fe->pid);
    } else if (const auto* wf = std::get_if<WorkerFailed>(&e.detail);
               wf && e.family == Family::kTorchrun) {
      add(&s.pids, wf->pid);
      s.top_local = std::max(s.top_local, wf->local_rank);
    } else if (const auto* ws = std::get_if<WorkerSignalled>(&e.detail);
               ws && e.family == Family::kTorchrun) {
      if (inc.str(ws->signal) == "SIGTERM") add(&s.signalled, ws->pid);
    }
  }
  for (std::size_t i = 0; i < seen.size(); ++i) {
    Seen& s = seen[i];
    NodeFacts& n = jf->nodes[i];
    if (s.conflict || s.base < 0 || s.signalled.empty() || n.first_rank >= 0 || !n.agent_log)
      continue;
    std::int32_t running = 0;
    for (std::int64_t pid : s.signalled)
      running += std::find(s.pids.begin(), s.pids.end(), pid) == s.pids.end() ? 1 : 0;
    const auto workers = static_cast<std::int32_t>(s.pids.size()) + running;
    if (s.top_local >= workers) continue;
    n.first_rank = s.base;
    n.local_procs = workers;
    n.agent_ranks = true;
    // Its workers print into this console: one that printed nothing there was silent, when the
    // workers that exited account for every error in it.
    if (s.unranked_errors == 0 || s.unranked_errors > static_cast<std::int32_t>(s.pids.size()))
      continue;
    for (std::int32_t r = s.base; r < s.base + workers; ++r) {
      jf->EnsureRank(r);
      jf->ranks[r].has_log = true;
    }
  }
}

// A node's ranks, and local ranks where the table did not give them: DeepSpeed's launch.py
// states its node's first rank (K*P), so local = global - K*P; otherwise torchrun numbers a
// node's workers contiguously, so local = global - first when the node's ranks are contiguous.
void AssignNodeRanks(JobFacts* jf) {
  // The ranks a torchrun agent's rendezvous result names are its node's, logged or not (a worker
  // torn down before it printed anything is still there, silent, like its logged peers).
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(jf->nodes.size()); ++i) {
    const NodeFacts& n = jf->nodes[i];
    if (!n.agent_ranks) continue;
    for (std::int32_t r = n.first_rank; r < n.first_rank + n.local_procs; ++r) {
      jf->EnsureRank(r);
      if (jf->ranks[r].node < 0) jf->ranks[r].node = i;
    }
  }
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(jf->ranks.size()); ++r) {
    if (jf->ranks[r].node >= 0) jf->nodes[jf->ranks[r].node].ranks.push_back(r);
  }
  for (NodeFacts& n : jf->nodes) {
    if (n.first_rank < 0) continue;
    for (std::int32_t r : n.ranks) {
      const bool on_node = r >= n.first_rank && r < n.first_rank + n.local_procs;
      if (jf->ranks[r].local_rank < 0 && on_node) jf->ranks[r].local_rank = r - n.first_rank;
    }
  }
  for (NodeFacts& n : jf->nodes) {
    if (n.ranks.empty() || n.ranks.back() - n.ranks.front() + 1 != static_cast<int>(n.ranks.size()))
      continue;
    for (std::int32_t r : n.ranks) {
      if (jf->ranks[r].local_rank < 0) jf->ranks[r].local_rank = r - n.ranks.front();
    }
  }
}

// Places rank r on a node after the logs (PlaceUnloggedRanks): among the node's ranks, with its
// local rank when they are contiguous, torn down with them when its agent SIGTERMed them.
void Place(JobFacts* jf, std::int32_t r, std::int32_t node_index) {
  RankFacts& rf = jf->ranks[r];
  NodeFacts& node = jf->nodes[node_index];
  rf.node = node_index;
  node.ranks.insert(std::lower_bound(node.ranks.begin(), node.ranks.end(), r), r);
  if (node.ranks.back() - node.ranks.front() + 1 == static_cast<int>(node.ranks.size())) {
    rf.local_rank = r - node.ranks.front();
  }
  // Its agent SIGTERMed the workers left after another one failed: this one among them.
  rf.torn_down |= node.signalled > 0 && node.failed_rank != r && !rf.exit_event && rf.timeouts == 0;
}

// When the nodes that show all their ranks hold G contiguous ranks from a multiple of G, every
// node does (one rank per GPU, numbered node by node): a rank with no node of its own goes to
// the node that holds the other ranks of its block of G. G is the size most such nodes show
// (more than half of them): a node whose silent last rank left it one short shows another.
// G, when most of the nodes that show all their ranks (two or more) hold G contiguous ranks from a
// multiple of G; 0 when they do not.
std::int32_t BlockSize(const JobFacts& jf) {
  std::map<std::size_t, int> sizes;
  int complete = 0;
  for (const NodeFacts& n : jf.nodes) {
    const std::size_t g = n.ranks.size();
    if (g > 0 && static_cast<std::size_t>(n.ranks.back() - n.ranks.front() + 1) == g &&
        n.ranks.front() % g == 0) {
      sizes[g]++;
      ++complete;
    }
  }
  const auto most = std::max_element(
      sizes.begin(), sizes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  if (most == sizes.end() || most->second < 2 || 2 * most->second <= complete) return 0;
  return static_cast<std::int32_t>(most->first);
}

void PlaceByBlocks(JobFacts* jf) {
  const std::int32_t g = BlockSize(*jf);
  if (g == 0) return;
  std::map<std::int32_t, std::int32_t> block;  // first rank of a block -> node
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(jf->nodes.size()); ++i) {
    const auto& ranks = jf->nodes[i].ranks;
    if (ranks.empty() || ranks.front() / g != ranks.back() / g) continue;
    if (!block.emplace(ranks.front() / g * g, i).second)
      block[ranks.front() / g * g] = -1;  // two nodes claim it
  }
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(jf->ranks.size()); ++r) {
    if (jf->ranks[r].node >= 0) continue;
    auto it = block.find(r / g * g);
    if (it != block.end() && it->second >= 0) Place(jf, r, it->second);
  }
}

// One torchrun agent's console names none of its ranks (its node was lost before its workers
// printed anything a rank is read from, or the lines that did were laid out where nothing ties
// them to it), while every other node holds an aligned block of G ranks and the ranks no node
// holds are one such block: they are that agent's workers. Only when the count is exact: the
// world is one block per node with ranks plus that agent's, and no other node is without ranks.
void PlaceLastBlockOnLastAgent(JobFacts* jf) {
  const std::int32_t g = BlockSize(*jf);
  if (g == 0) return;
  std::int32_t agent = -1, with_ranks = 0;
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(jf->nodes.size()); ++i) {
    const NodeFacts& n = jf->nodes[i];
    if (!n.ranks.empty()) {
      ++with_ranks;
    } else if (agent >= 0 || !n.agent_log) {
      return;  // a second node without ranks, or one with no agent: either may hold them
    } else {
      agent = i;
    }
  }
  const auto world = static_cast<std::int32_t>(jf->ranks.size());
  if (agent < 0 || world != (with_ranks + 1) * g) return;
  std::int32_t first = -1;
  for (std::int32_t r = 0; r < world; ++r) {
    if (jf->ranks[r].node >= 0) continue;
    if (first < 0) first = r;
    if (r / g != first / g) return;  // unplaced ranks of two blocks
  }
  if (first < 0 || first % g != 0) return;
  for (std::int32_t r = first; r < first + g; ++r) {
    if (jf->ranks[r].node >= 0) return;
  }
  for (std::int32_t r = first; r < first + g; ++r) Place(jf, r, agent);
}

}  // namespace

void PlaceRanksByFiles(const Incident& inc, JobFacts* jf) {
  std::int32_t top = -1;  // the ranks the files name, made room for at once
  for (const LogFile& f : inc.files) {
    top = std::max(top, f.own_rank);
    if (!f.prefix_ranks.empty())
      top = std::max(top, *std::max_element(f.prefix_ranks.begin(), f.prefix_ranks.end()));
  }
  if (top >= 0) jf->EnsureRank(top);
  for (const LogFile& f : inc.files) {
    if (f.own_rank >= 0) {
      jf->EnsureRank(f.own_rank);
      jf->ranks[f.own_rank].has_log = true;
      SetNode(&jf->ranks[f.own_rank], f.node);
    }
    for (std::int32_t r : f.prefix_ranks) {
      jf->EnsureRank(r);
      jf->ranks[r].has_log = true;
      // An agent log holds its node's workers when they are tagged `[default<L>]:` (a pod's
      // `kubectl logs`: torchrun and its workers share the container's output).
      if (!f.agent || f.local_tags) SetNode(&jf->ranks[r], f.node);
    }
    if (f.agent && f.node >= 0) jf->nodes[f.node].agent_log = true;
  }
  RanksOfLocalFolders(inc, jf);
  RanksOfTaggedConsoles(inc, jf);
  RanksOfLabelledTasks(inc, jf);
}

void PlaceRanksByLayout(const Incident& inc, JobFacts* jf) {
  ApplyWorldInfo(inc, jf);
  ApplyStatedWorld(inc, jf);
  PlaceConsoleWorkers(inc, jf);
  CountAgentWorkers(inc, jf);
  AssignNodeRanks(jf);
}

void PlaceUnloggedRanks(JobFacts* jf) {
  const auto n = static_cast<std::int32_t>(jf->ranks.size());
  std::vector<std::int32_t> below(n, -1);
  for (std::int32_t r = 1; r < n; ++r)
    below[r] = jf->ranks[r - 1].node >= 0 ? jf->ranks[r - 1].node : below[r - 1];
  std::int32_t above = -1;
  for (std::int32_t r = n - 1; r >= 0; --r) {
    RankFacts& rf = jf->ranks[r];
    if (rf.node < 0 && below[r] >= 0 && below[r] == above) Place(jf, r, above);
    if (rf.node >= 0) above = rf.node;
  }
  PlaceByBlocks(jf);
  PlaceLastBlockOnLastAgent(jf);
}

}  // namespace denpex::engine
