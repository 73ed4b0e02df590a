#include "ingest/attempts.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/streams.h"

namespace denpex::engine {
namespace {

constexpr std::string_view kPrevious = ".previous.log";

std::string_view Folder(std::string_view rel) {
  const std::size_t slash = rel.rfind('/');
  if (slash == std::string_view::npos) return {};
  rel = rel.substr(0, slash);
  const std::size_t up = rel.rfind('/');
  return up == std::string_view::npos ? rel : rel.substr(up + 1);
}

std::string_view Name(std::string_view rel) {
  const std::size_t slash = rel.rfind('/');
  return slash == std::string_view::npos ? rel : rel.substr(slash + 1);
}

std::string_view Stem(std::string_view rel) {
  std::string_view n = Name(rel);
  return n.substr(0, n.find('.'));
}

// The pod a current pod log is of: `<pod>` of `pods/<pod>.log`, or the pod a relayed stream's tag
// names (ingest/streams.h: `kubectl logs --prefix` of the job's pods in one file); empty for any
// other file.
std::string_view PodOfLog(const LogFile& f) {
  if (!f.tag.empty()) return TaggedPod(f.tag);
  return Folder(f.path) == "pods" && !f.path.ends_with(kPrevious) ? Stem(f.path)
                                                                  : std::string_view();
}

// A Job controller's pod name without its 5-character suffix (`llama-workers-0-3-x7k2p` ->
// `llama-workers-0-3`), or the name itself.
std::string_view Hostname(std::string_view pod) {
  const std::size_t dash = pod.rfind('-');
  if (dash == std::string_view::npos || pod.size() - dash != 6) return pod;
  const std::string_view suffix = pod.substr(dash + 1);
  const bool random = std::all_of(suffix.begin(), suffix.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
  return random ? pod.substr(0, dash) : pod;
}

// The earliest stamped time of each file's own lines (none: no stamped line).
std::vector<std::optional<TimeNs>> FirstStamps(const Incident& inc) {
  using Firsts = std::vector<std::optional<TimeNs>>;
  const auto earliest = [](const std::optional<TimeNs>& t, TimeNs time) { return !t || time < *t; };
  // Each range of events finds its files' earliest stamps, the ranges' are then put together: the
  // earliest is the same however the events were split.
  Firsts firsts = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, inc.events.size(), std::size_t{1} << 16), Firsts(),
      [&](const tbb::blocked_range<std::size_t>& r, Firsts first) {
        if (first.empty()) first.resize(inc.files.size());
        for (std::size_t i = r.begin(); i < r.end(); ++i) {
          const Event& e = inc.events[i];
          if (e.clock == Clock::kNone || e.time_borrowed) continue;
          if (earliest(first[e.file], e.time)) first[e.file] = e.time;
        }
        return first;
      },
      [&](Firsts a, const Firsts& b) {
        if (a.empty()) return b;
        for (std::size_t f = 0; f < b.size(); ++f) {
          if (b[f] && earliest(a[f], *b[f])) a[f] = b[f];
        }
        return a;
      });
  firsts.resize(inc.files.size());  // no events: none has a stamp
  return firsts;
}

}  // namespace

void SetAsideLaterAttempts(Incident* inc) {
  // Decided per stream (a file, or a rotated log's pieces together), by its live piece's name.
  std::set<std::string, std::less<>> previous, described;
  for (const LogFile& f : inc->files) {
    if (f.rotated_into >= 0) continue;
    if (f.path.ends_with(kPrevious)) previous.insert(f.path.substr(0, f.path.size() - kPrevious.size()) + ".log");
    if (Folder(f.path) == "describe") described.emplace(Stem(f.path));
  }
  // JobSet: per hostname, the pod logs with and without a description. With more than one
  // restart, a hostname has several gone pods: the first attempt's is the one whose lines
  // start first, the others ran later attempts.
  std::vector<std::optional<TimeNs>> stamp = FirstStamps(*inc);
  for (std::size_t i = 0; i < inc->files.size(); ++i) {
    const std::int32_t live = inc->files[i].rotated_into;
    if (live < 0 || !stamp[i]) continue;
    if (!stamp[live] || *stamp[i] < *stamp[live]) stamp[live] = stamp[i];
  }
  struct Host {
    int now = 0, gone = 0;
    std::int64_t first = -1;  // the gone pod log that starts first (file index), or -1
  };
  std::map<std::string_view, Host> by_host;
  for (std::size_t i = 0; i < inc->files.size(); ++i) {
    const LogFile& f = inc->files[i];
    const std::string_view pod = PodOfLog(f);
    if (f.rotated_into >= 0 || pod.empty()) continue;
    Host& h = by_host[Hostname(pod)];
    if (described.contains(pod)) {
      ++h.now;
      continue;
    }
    ++h.gone;
    if (stamp[i] && (h.first < 0 || !stamp[h.first] || *stamp[i] < *stamp[h.first])) h.first = static_cast<std::int64_t>(i);
  }
  std::vector<std::uint8_t> later(inc->files.size(), 0);
  for (std::size_t i = 0; i < inc->files.size(); ++i) {
    const LogFile& f = inc->files[i];
    if (f.rotated_into >= 0) continue;
    bool is_later = f.tag.empty() && previous.contains(f.path);
    if (const std::string_view pod = PodOfLog(f); !is_later && !pod.empty()) {
      const auto it = by_host.find(Hostname(pod));
      if (it != by_host.end() && described.contains(pod)) {
        is_later = it->second.gone > 0;
      } else if (it != by_host.end() && it->second.gone > 1 && it->second.first >= 0) {
        is_later = static_cast<std::int64_t>(i) != it->second.first;
      }
    }
    later[i] = is_later ? 1 : 0;
  }
  for (std::size_t i = 0; i < inc->files.size(); ++i) {
    const std::int32_t live = inc->files[i].rotated_into;
    if (live >= 0) later[i] = later[live];
    if (later[i] == 0) continue;
    inc->files[i].later_attempt = true;
    if (live < 0) ++inc->later_attempt_files;  // a stream counts once, not per piece
  }
  if (inc->later_attempt_files == 0) return;
  std::erase_if(inc->events, [&](const Event& e) { return later[e.file] != 0; });
}

}  // namespace denpex::engine
