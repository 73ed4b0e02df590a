// Incident: everything ingest and parse learned from an incident directory, merged in a fixed
// order (files sorted by path, events in line order), so nothing downstream depends on the
// thread count. The analysis reads only this.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parse/event.h"
#include "parse/parse_log.h"
#include "parse/strings.h"
#include "parse/world_info.h"

namespace denpex::engine {

// The folder a file of the incident lies in (its path relative to the incident dir): `a/b` of
// `a/b/c.log`; empty at the top level.
inline std::string_view FolderOf(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

// Whether `path` is the folder `folder` or lies below it (`a/b` and `a/b/c` in `a/b`, not `a/bc`);
// every path is in the top level's empty folder.
inline bool InFolder(std::string_view path, std::string_view folder) {
  return folder.empty() ||
         (path.starts_with(folder) && (path.size() == folder.size() || path[folder.size()] == '/'));
}

// A file of IB port counters (`grep -r . /sys/class/infiniband/*/ports/*/counters` lines,
// analyze/ib_ports.h) is known by what it holds, whatever its name: such a path in its first
// 4 KiB of text.
inline bool MayHoldIbCounters(std::string_view text) {
  return text.substr(0, 4096).find("/sys/class/infiniband/") != std::string_view::npos;
}

struct LogFile {
  std::string path;              // relative to the incident dir
  // The collector's tag of the stream it is, of a file that relays several containers' tagged
  // lines (ingest/streams.h): each stream is a LogFile of its own, under the file's path.
  std::string tag;
  std::int32_t node = -1;        // index into Incident::nodes; -1 when neither its path nor its lines name one
  bool node_from_content = false;  // that node is the one its lines name (ingest/identity.h)
  // The rank whose own file this is: R of its name `rank_<R>.log`, or the one rank torch's
  // store-based barrier lines in it name as theirs (ResolveOwnRanks, ingest/resolve.h).
  std::int32_t own_rank = -1;
  std::int32_t local_rank = -1;  // L of a torchrun log dir's `<L>/` folder
  std::vector<std::int32_t> prefix_ranks;  // distinct `[rank<G>]:` ranks inside
  std::vector<std::int32_t> barrier_ranks;  // distinct ranks its barrier lines name (ParsedLog)
  bool agent = false;            // a torchrun agent's console
  bool task_labels = false;      // srun --label output
  bool local_tags = false;       // torchrun `[default<L>]:` tags
  std::int32_t top_local_tag = -1;  // the highest L of those tags
  bool readable = false;         // opened, and text
  bool eventful = false;         // it holds an event (a notes file, a banner-only log: none)
  bool copy = false;             // `denpex run`'s `<stem>.errors.log` (SourceFile::copy)
  bool kernel = false;  // a kernel log by its name (dmesg, kern.log, journal, syslog) or its lines
                        // (ParsedLog::kernel_text)
  StrId kernel_host = kNoStr;    // the one host its kernel lines name (ParsedLog::kernel_host)
  LineSpan last_line;            // its last non-empty line
  bool cut = false;              // it ends mid-line (no final newline): a truncated file
  bool later_attempt = false;    // a restarted attempt's pod log, set aside (ingest/attempts.h)
  bool world_info = false;       // holds DeepSpeed's runner `--world_info` naming more than one rank
  // Ingest read its text and it fails MayHoldIbCounters: not opened again to look for counters
  // (16k kernel logs were read a second time for that alone).
  bool no_ib_counters = false;
  // An older piece of a rotated log (`X.log.1` beside `X.log`): the index of its live piece, with
  // which it was read as one stream (ingest/load.cc); -1 for the live piece and any other file.
  std::int32_t rotated_into = -1;
  // A PyTorch Flight Recorder dump (ingest/flight_recorder.h): records, not lines. Never text
  // (`readable` false), no node or rank of its own; its events are rendered from their fields.
  bool flight_recorder = false;
  // NCCL RAS reports (ingest/nccl_ras.h): text, cited as it is, but not `readable` (never read by
  // the line parser) and no node or rank of its own (its events name the ranks it reports).
  bool nccl_ras = false;
};

struct InputCounts {
  std::int32_t files = 0;
  std::int64_t bytes = 0;
  std::int64_t lines = 0;
  std::int64_t malformed_lines = 0;
  std::int32_t unreadable_files = 0;
  std::int64_t joined_lines = 0;    // hard-wrapped lines put back together
  std::int64_t interleaved_lines = 0;  // lines split by another srun task's line, put back together
  std::int64_t broken_records = 0;  // records cut short that could not be recovered
  std::int64_t untimed_events = 0;  // events with no stamp of their own (time borrowed)
  // The trigger pre-filter's work (ParsedLog): its false candidates, the lines it passed for a
  // record trigger, and those no recogniser took. For benchmarks; no report shows them.
  std::int64_t false_candidates = 0;
  std::int64_t trigger_lines = 0;
  std::int64_t idle_trigger_lines = 0;
  // Events of daemon and host logs left out as other jobs' or other processes' (analyze/scope.h).
  std::int64_t out_of_scope = 0;
  std::vector<std::string> problems;  // the first few dozen
  std::int32_t problems_omitted = 0;   // beyond those
  // Notes that lose nothing (a rotated log read as one stream), listed after every problem once
  // the load is done (ingest/resolve.h FinishProblems): a job's thousands of rotated kernel logs
  // must not push a file that lost text out of the list.
  std::vector<std::string> notes;
};

struct Incident {
  std::filesystem::path root;       // canonical incident directory
  std::vector<LogFile> files;
  // Node names (directories, hosts the lines name, agents told apart: ingest/identity.h), sorted.
  std::vector<std::string> nodes;
  std::vector<Event> events;        // file order, then line order; times and nodes resolved
  StringTable strings;
  InputCounts input;
  std::optional<int> year;          // from the lines that carry one
  TimeNs first_dated = 0;           // earliest full-date stamp on any line (0: none)
  std::int32_t later_attempt_files = 0;  // restarted attempts' pod logs set aside (ingest/attempts.h)
  // DeepSpeed's runner's `--world_info` (the first that decodes): the hosts in its order, each
  // with its first global rank and its rank count; `world_node[i]` is host i's node index.
  std::vector<WorldHost> world;
  std::vector<std::int32_t> world_node;

  std::string_view str(StrId id) const { return strings.Get(id); }

  // The indices of the events of any of `kinds`, in event order. Read from the index IndexKinds
  // built when it is current (built for these events), else found by a pass over the events: a
  // detector that looks for a rare kind then reads its few events, not a million.
  std::vector<std::int32_t> OfKinds(std::initializer_list<Kind> kinds) const;
  // Builds that index; the events must not change while it is used (the analysis reads a const
  // Incident). An edit that leaves the events' count and storage alone must build it again.
  void IndexKinds();

 private:
  std::vector<std::vector<std::int32_t>> by_kind_;  // by Kind: its events' indices
  const Event* indexed_data_ = nullptr;             // the events by_kind_ was built for
  std::size_t indexed_size_ = 0;
};

// Calls f(i) for each event index of `indices`, in their order, the event a few indices ahead
// asked into the cache meanwhile: for a pass over events in an order of their own (the wave's
// watchdog timeouts by time, whose ranks' lines lie anywhere in a 2 GB log: a cache miss per
// event at 131k ranks).
template <typename F>
void VisitEvents(const Incident& inc, const std::vector<std::int32_t>& indices, F&& f) {
  constexpr std::size_t kAhead = 16;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (k + kAhead < indices.size()) {
      const auto* ahead = reinterpret_cast<const char*>(inc.events.data() + indices[k + kAhead]);
      for (std::size_t at = 0; at < sizeof(Event); at += 64) __builtin_prefetch(ahead + at);
    }
    f(indices[k]);
  }
}

}  // namespace denpex::engine
