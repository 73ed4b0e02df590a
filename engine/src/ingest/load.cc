#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <type_traits>
#include <utility>

#include "ingest/file_text.h"
#include "ingest/incident.h"
#include "ingest/walk.h"
#include "parse/log_parser.h"

namespace denpex::engine {
namespace {

constexpr std::size_t kMaxProblems = 40;
// Files are parsed in batches of this many and merged after each, so the per-file results
// alive at once stay bounded at 131k ranks.
constexpr std::size_t kBatchFiles = 4096;

// What one worker learned from one file.
struct FileResult {
  ParsedLog log;
  std::int64_t bytes = 0;
  std::string problem;  // set when the file could not be read as text
};

FileResult ReadAndParse(const SourceFile& f, std::uint32_t index) {
  FileResult r;
  auto text = FileText::Open(f.path);
  if (!text.ok()) {
    r.problem = f.rel + ": unreadable: " + text.status().message();
    return r;
  }
  r.bytes = static_cast<std::int64_t>(text->view().size());
  if (text->LooksBinary()) {
    r.problem = f.rel + ": binary file (NUL bytes), skipped";
    return r;
  }
  r.log = ParseLog(text->view(), index, f.name_rank);
  return r;
}

// Files [begin, end) parsed in parallel; results in file order.
std::vector<FileResult> ParseBatch(const std::vector<SourceFile>& files, std::size_t begin, std::size_t end,
                                   tbb::task_arena* arena) {
  std::vector<FileResult> results(end - begin);
  arena->execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(begin, end), [&](const auto& range) {
      for (std::size_t i = range.begin(); i != range.end(); ++i) {
        results[i - begin] = ReadAndParse(files[i], static_cast<std::uint32_t>(i));
      }
    });
  });
  return results;
}

// Calls f(StrId&) for every interned string an event holds.
template <typename F>
void ForEachStrId(Event& e, F&& f) {
  f(e.signature);
  std::visit(
      [&](auto& d) {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, WatchdogTimeout>) {
          f(d.pg);
          f(d.pg_desc);
          f(d.op);
        } else if constexpr (std::is_same_v<T, WorkerSignalled>) {
          f(d.signal);
        } else if constexpr (std::is_same_v<T, FailureEntry>) {
          f(d.host);
        } else if constexpr (std::is_same_v<T, CommInit>) {
          f(d.comm_id);
        } else if constexpr (std::is_same_v<T, PythonError>) {
          f(d.type);
        }
      },
      e.detail);
}

void AddProblem(InputCounts* in, std::string problem) {
  if (in->problems.size() < kMaxProblems) {
    in->problems.push_back(std::move(problem));
  } else {
    ++in->problems_omitted;
  }
}

// Appends one file's events to the incident, re-interning their strings.
void Merge(FileResult&& r, Incident* inc) {
  std::vector<StrId> remap(r.log.strings.size());
  for (StrId id = 0; id < remap.size(); ++id) remap[id] = inc->strings.Intern(r.log.strings.Get(id));
  for (Event& e : r.log.events) {
    ForEachStrId(e, [&](StrId& id) { id = remap[id]; });
    inc->events.push_back(std::move(e));
  }
}

// c10 and glog stamps carry no year: take it from the earliest line that does (the torchrun
// table, the trainer's iteration line), minding a job that runs across New Year.
void ResolveYears(Incident* inc) {
  const Event* ref = nullptr;
  for (const Event& e : inc->events) {
    if (e.clock == Clock::kFull && (!ref || e.time < ref->time)) ref = &e;
  }
  const CivilTime r = ref ? ToCivil(ref->time) : CivilTime{};
  if (ref) {
    inc->year = r.year;
  } else {
    AddProblem(&inc->input, "no line carries a year (c10 and torchrun stamps omit it): times are shown in 1970");
  }
  for (Event& e : inc->events) {
    if (e.clock != Clock::kNoYear) continue;
    CivilTime c = ToCivil(e.time);
    c.year = r.year + (c.month < r.month - 6 ? 1 : 0) - (c.month > r.month + 6 ? 1 : 0);
    e.time = FromCivil(c);
    e.clock = Clock::kFull;
  }
}

// Records one file and merges its events; returns 1 when it was readable text.
int AddFile(const SourceFile& src, FileResult&& r, Incident* inc) {
  LogFile f{.path = src.rel, .name_rank = src.name_rank};
  if (!src.node.empty()) {
    f.node = static_cast<std::int32_t>(std::lower_bound(inc->nodes.begin(), inc->nodes.end(), src.node) -
                                       inc->nodes.begin());
  }
  inc->input.files += 1;
  inc->input.bytes += r.bytes;
  const bool readable = r.problem.empty();
  if (!readable) {
    inc->input.unreadable_files += 1;
    AddProblem(&inc->input, std::move(r.problem));
  } else {
    f.readable = true;
    f.agent = r.log.agent;
    f.prefix_ranks = std::move(r.log.prefix_ranks);
    inc->input.lines += r.log.lines;
    inc->input.malformed_lines += r.log.malformed;
    Merge(std::move(r), inc);
  }
  inc->files.push_back(std::move(f));
  return readable ? 1 : 0;
}

}  // namespace

Result<Incident> LoadIncident(const std::filesystem::path& dir, int threads) {
  auto listing = ListIncident(dir);
  if (!listing.ok()) return listing.status();
  const std::string hint = ": pass the directory that holds the job's logs";
  if (listing->files.empty()) {
    return Status::InvalidInput("no log files found under " + dir.string() + hint);
  }
  Incident inc;
  inc.root = listing->root;
  for (const auto& f : listing->files) {
    if (!f.node.empty()) inc.nodes.push_back(f.node);
  }
  std::sort(inc.nodes.begin(), inc.nodes.end());
  inc.nodes.erase(std::unique(inc.nodes.begin(), inc.nodes.end()), inc.nodes.end());
  for (auto& p : listing->problems) AddProblem(&inc.input, std::move(p));

  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  int readable = 0;
  for (std::size_t begin = 0; begin < listing->files.size(); begin += kBatchFiles) {
    const std::size_t end = std::min(listing->files.size(), begin + kBatchFiles);
    std::vector<FileResult> batch = ParseBatch(listing->files, begin, end, &arena);
    for (std::size_t i = begin; i < end; ++i) readable += AddFile(listing->files[i], std::move(batch[i - begin]), &inc);
  }
  if (readable == 0) {
    return Status::InvalidInput("no readable log files under " + dir.string() + hint);
  }
  ResolveYears(&inc);
  return inc;
}

}  // namespace denpex::engine
