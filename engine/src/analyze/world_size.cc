#include "analyze/world_size.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <string_view>

#include "ingest/file_text.h"

namespace denpex::engine {
namespace {

// The rendezvous result's lines after `global_ranks=[...]`: role_world_sizes and
// global_world_sizes, each up to ~7 bytes per worker.
constexpr std::uint32_t kResultTail = 16 * 1024;
constexpr int kResultLines = 4;  // global_world_sizes is the second line after global_ranks

struct Statement {
  std::int32_t size = 0;
  std::int32_t event = -1;
  std::string source;
  std::string place;  // " (file:line)" of a statement read off the parse (event -1)
};

std::string Where(const Incident& inc, std::int32_t event) {
  if (event < 0) return {};
  const Event& e = inc.events[event];
  return " (" + inc.files[e.file].path + ":" + std::to_string(e.line) + ")";
}

// DeepSpeed's runner's `--world_info`: every host with its ranks.
void FromWorldInfo(const Incident& inc, std::vector<Statement>* out) {
  std::int32_t size = 0;
  for (const WorldHost& h : inc.world) size = std::max(size, h.first_rank + h.procs);
  if (size <= 0) return;
  const std::vector<std::int32_t> infos = inc.OfKinds({Kind::kWorldInfo});
  const std::int32_t event = infos.empty() ? -1 : infos.front();
  out->push_back({size, event, "DeepSpeed's runner's --world_info"});
}

// DeepSpeed launch.py's `nnodes=N, num_local_procs=P` (every node prints it): N * P.
void FromLauncherLayout(const Incident& inc, std::vector<Statement>* out) {
  std::map<std::int32_t, std::int32_t> sizes;  // size -> its first line
  for (const std::int32_t i : inc.OfKinds({Kind::kLauncherLayout})) {
    const Event& e = inc.events[i];
    const auto& nl = std::get<NodeLayout>(e.detail);
    if (nl.nnodes > 0 && nl.local_procs > 0) sizes.emplace(nl.nnodes * nl.local_procs, i);
  }
  for (const auto& [size, event] : sizes) out->push_back({size, event, "DeepSpeed launch.py's nnodes x num_local_procs"});
}

// torchrun's rendezvous result (LOGLEVEL=INFO): `global_world_sizes=[N, ...]` follows the
// `global_ranks=[...]` line the parser recognised; re-read from the file for the first and the
// last agent that logged one (an elastic restart may have changed the size: they then differ).
void FromRendezvous(const Incident& inc, std::vector<Statement>* out) {
  const std::vector<std::int32_t> results = inc.OfKinds({Kind::kAgentRanks});
  const std::int32_t first = results.empty() ? -1 : results.front(),
                     last = results.empty() ? -1 : results.back();
  std::map<std::int32_t, std::int32_t> sizes;
  for (std::int32_t i : {first, last}) {
    if (i < 0) continue;
    const Event& e = inc.events[i];
    const Result<std::string> text = ReadSpan(inc.root / inc.files[e.file].path, e.offset, e.length + kResultTail);
    if (!text.ok()) continue;
    if (const std::int32_t size = GlobalWorldSizes(std::string_view(*text).substr(std::min<std::size_t>(e.length, text->size())))) {
      sizes.emplace(size, i);
    }
  }
  for (const auto& [size, event] : sizes) out->push_back({size, event, "torchrun's rendezvous result (global_world_sizes)"});
}

// Files a launch-time statement is printed to: rank 0's (Megatron prints on rank 0 only),
// srun's combined `--label` output, and files no node claims (the batch script's
// slurm-<id>.out, where an `env` or `scontrol show job` dump lands). At most kHeadFiles.
constexpr std::uint32_t kHead = 256 * 1024;  // printed at start-up, before training's lines
constexpr std::size_t kHeadFiles = 64;

bool StatementFile(const LogFile& f) {
  if (!f.readable || f.kernel || f.copy || f.later_attempt) return false;
  return f.own_rank == 0 || f.task_labels || f.node < 0 ||
         std::find(f.prefix_ranks.begin(), f.prefix_ranks.end(), 0) != f.prefix_ranks.end();
}

// Where `key` is followed by a count in `text`: the count's line number (1-based) and value.
struct Stated {
  std::int32_t size = 0;
  std::int32_t line = 0;
};

Stated CountAfter(std::string_view text, std::string_view key) {
  const std::size_t at = text.find(key);
  if (at == std::string_view::npos) return {};
  const std::string_view rest = text.substr(at + key.size());
  std::int32_t v = 0;
  const auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
  if (ec != std::errc() || v <= 0 || v > kMaxRank + 1) return {};
  if (p != rest.data() + rest.size() && *p != ',' && *p != ' ' && *p != '\n' && *p != '\r') return {};  // 16x, 1.5
  return {v, static_cast<std::int32_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')) + 1};
}

// Off the parse, from the heads of StatementFile's files: Megatron's `using world size: N,
// data-parallel size: ...` (arguments.py, rank 0) and Slurm's task count, as an `env` dump's
// `SLURM_NTASKS=N` or `scontrol show job`'s `NumTasks=N`. The first file stating each wins.
void FromFileHeads(const Incident& inc, std::vector<Statement>* out) {
  struct Source {
    std::string_view key;
    const char* name;
    bool found = false;
  };
  Source sources[] = {{"using world size: ", "Megatron's arguments (using world size)"},
                      {"SLURM_NTASKS=", "Slurm's task count (SLURM_NTASKS)"},
                      {" NumTasks=", "Slurm's task count (scontrol's NumTasks)"}};
  std::size_t read = 0;
  for (const LogFile& f : inc.files) {
    if (read >= kHeadFiles) break;
    if (!StatementFile(f)) continue;
    ++read;
    const Result<std::string> text = ReadSpan(inc.root / f.path, 0, kHead);
    if (!text.ok()) continue;
    for (Source& s : sources) {
      if (s.found) continue;
      const Stated st = CountAfter(*text, s.key);
      if (st.size == 0) continue;
      s.found = true;
      out->push_back({st.size, -1, s.name, " (" + f.path + ":" + std::to_string(st.line) + ")"});
    }
  }
}

// NCCL's `comm 0x.. rank r nranks N`, or a communicator a RAS report names: the largest
// communicator (a lower bound of the world).
Statement LargestCommunicator(const Incident& inc) {
  Statement best;
  for (const std::int32_t i : inc.OfKinds({Kind::kCommInit, Kind::kRasComm, Kind::kRasRank})) {
    const EventDetail& d = inc.events[i].detail;
    std::int32_t n = 0;
    const char* source = "NCCL's largest communicator (nranks)";
    if (const auto* ci = std::get_if<CommInit>(&d)) {
      n = ci->nranks;
    } else if (const auto* rc = std::get_if<RasComm>(&d)) {
      n = rc->size;
      source = "NCCL RAS's largest communicator";
    } else if (const auto* rr = std::get_if<RasRank>(&d)) {
      n = rr->comm_size;
      source = "NCCL RAS's largest communicator";
    }
    if (n > best.size && n <= kMaxRank + 1) best = {n, i, source};
  }
  return best;
}

}  // namespace

std::int32_t GlobalWorldSizes(std::string_view text) {
  constexpr std::string_view kKey = "global_world_sizes=[";
  for (int n = 0; n < kResultLines && !text.empty(); ++n) {
    if (text.front() == '\n') text.remove_prefix(1);
    const std::string_view line = text.substr(0, text.find('\n'));
    text.remove_prefix(line.size());
    const std::size_t at = line.find(kKey);
    if (at == std::string_view::npos) continue;
    std::string_view rest = line.substr(at + kKey.size());
    std::int32_t size = 0;
    for (bool first = true;; first = false) {
      std::int32_t v = 0;
      const auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
      if (ec != std::errc() || v <= 0 || v > kMaxRank + 1 || (!first && v != size)) return 0;
      size = v;
      rest.remove_prefix(static_cast<std::size_t>(p - rest.data()));
      if (rest.starts_with("]")) return size;
      if (!rest.starts_with(", ")) return 0;
      rest.remove_prefix(2);
    }
  }
  return 0;
}

WorldSize StatedWorldSize(const Incident& inc, std::int32_t highest_rank) {
  std::vector<Statement> stated;
  FromWorldInfo(inc, &stated);
  FromLauncherLayout(inc, &stated);
  FromRendezvous(inc, &stated);
  FromFileHeads(inc, &stated);
  const Statement comm = LargestCommunicator(inc);
  WorldSize out;
  out.lower_bound = comm.size;
  if (stated.empty()) return out;
  auto describe = [&](const Statement& s) { return std::to_string(s.size) + " by " + s.source + Where(inc, s.event) + s.place; };
  for (const Statement& s : stated) {
    if (s.size == stated.front().size) continue;
    out.problems.push_back("the logs state different world sizes, " + describe(stated.front()) + " and " + describe(s) +
                           ": neither is used; the world is taken from the ranks seen");
    return out;
  }
  const Statement& s = stated.front();
  if (s.size <= highest_rank || s.size < comm.size) {
    const std::string seen = s.size <= highest_rank ? "rank " + std::to_string(highest_rank) + " logged" : describe(comm);
    out.problems.push_back("the logs state world size " + describe(s) + ", below " + seen + ": not used");
    return out;
  }
  out.declared = s.size;
  out.source = s.source + s.place;
  return out;
}

}  // namespace denpex::engine
