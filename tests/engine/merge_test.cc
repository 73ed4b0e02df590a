// The merge of parsed files into one incident (ingest/load.cc): events in file order, then line
// order, each with its own file's strings, whichever file holds most of them (its vector may
// become the incident's, the others' events put around it), at any thread count and chunk size;
// and the census of the merged events that the resolution steps read (ingest/resolve.h).
#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "incident_dump.h"
#include "ingest/load.h"
#include "ingest/resolve.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::Dump;

// A fresh directory, removed with the object (fixture.h's TempDir: its testing::Incident would
// hide ingest's Incident from incident_dump.h).
class ScratchDir {
 public:
  ScratchDir() {
    std::string name = (fs::temp_directory_path() / "denpex-merge-XXXXXX").string();
    path_ = mkdtemp(name.data());
  }
  ~ScratchDir() { fs::remove_all(path_); }
  void Write(const std::string& name, const std::string& text) const { std::ofstream(path_ / name, std::ios::binary) << text; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// `host:pid:tid [dev] file:line NCCL WARN text` (docs/log_formats.md §4).
std::string Warn(const std::string& host, int dev, const std::string& text) {
  return host + ":11:12 [" + std::to_string(dev) + "] misc/socket.cc:50 NCCL WARN " + text + "\n";
}

TEST(Merge, EventsKeepFileThenLineOrderAndTheirOwnStringsAroundTheLargestFile) {
  ScratchDir tmp;
  tmp.Write("a.log", Warn("alpha", 0, "first alpha message") + Warn("alpha", 1, "second alpha message"));
  std::string big;
  for (int i = 1; i <= 300; ++i) big += Warn("bravo" + std::to_string(i % 5), i % 8, "bravo message " + std::to_string(i % 13) + " x");
  tmp.Write("b.log", big);
  tmp.Write("c.log", Warn("charlie", 0, "charlie message"));

  std::string first_dump;
  for (const std::size_t chunk : {std::size_t{4} << 10, std::numeric_limits<std::size_t>::max()}) {
    for (const int threads : {1, 2}) {
      auto inc = LoadIncident(tmp.path(), threads, {}, false, chunk);
      ASSERT_TRUE(inc.ok()) << inc.status().message();
      ASSERT_EQ(inc->events.size(), 303u);
      for (std::size_t i = 0; i < inc->events.size(); ++i) {
        const Event& e = inc->events[i];
        const std::uint32_t file = i < 2 ? 0 : i < 302 ? 1 : 2;
        const std::uint32_t line = i < 2 ? static_cast<std::uint32_t>(i + 1) : i < 302 ? static_cast<std::uint32_t>(i - 1) : 1;
        ASSERT_EQ(e.file, file) << "event " << i;
        ASSERT_EQ(e.line, line) << "event " << i;
        const auto* w = std::get_if<NcclWarn>(&e.detail);
        ASSERT_NE(w, nullptr) << "event " << i;
        if (file == 1) {
          EXPECT_EQ(inc->str(w->text), "bravo message " + std::to_string(line % 13) + " x");
          EXPECT_EQ(inc->str(e.host), "bravo" + std::to_string(line % 5));
        } else {
          EXPECT_EQ(inc->str(e.host), file == 0 ? "alpha" : "charlie");
        }
      }
      EXPECT_EQ(inc->str(std::get<NcclWarn>(inc->events[1].detail).text), "second alpha message");
      EXPECT_EQ(inc->str(std::get<NcclWarn>(inc->events[302].detail).text), "charlie message");
      const std::string dump = Dump(*inc);
      if (first_dump.empty()) first_dump = dump;
      EXPECT_EQ(dump, first_dump) << "chunks of " << chunk << " bytes, " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace denpex::engine

namespace denpex::engine {
namespace {

// The census of the events the resolution steps read (ingest/resolve.h): the indices of each kind
// they look for, in event order, across the blocks the events are read in, at any thread count.
TEST(Merge, EventCensusListsEachKindInEventOrderAtAnyThreadCount) {
  Incident inc;
  const StrId host = inc.strings.Intern("gpu-0007"), slurm_node = inc.strings.Intern("gpu-0009");
  constexpr std::size_t kEvents = 50'000;  // several blocks of the parallel pass
  std::vector<std::size_t> pods, workers, local;
  for (std::size_t i = 0; i < kEvents; ++i) {
    Event e;
    e.time = static_cast<TimeNs>(i);
    e.clock = i % 3 == 0 ? Clock::kNoYear : Clock::kFull;
    if (i % 997 == 5) {
      e.kind = Kind::kPodNode, e.host = host, e.detail = Note{};
      pods.push_back(i);
    } else if (i % 1999 == 7) {
      e.kind = Kind::kRayWorker, e.detail = WorkerSignalled{};
      workers.push_back(i);
    } else if (i % 101 == 3) {
      e.local_rank = 2;
      local.push_back(i);
    } else if (i == 40'000) {
      e.kind = Kind::kTaskExit, e.detail = SlurmNote{.node = slurm_node};
    }
    inc.events.push_back(e);
  }
  for (const int threads : {1, 2, 4}) {
    tbb::task_arena arena(threads);
    EventCensus c;
    arena.execute([&] { c = TakeCensus(inc); });
    EXPECT_EQ(c.pod_nodes, pods);
    EXPECT_EQ(c.ray_workers, workers);
    EXPECT_EQ(c.local_ranked, local);
    EXPECT_TRUE(c.world_infos.empty());
    EXPECT_TRUE(c.agent_ranks.empty());
    ASSERT_TRUE(c.latest_full.has_value());
    EXPECT_EQ(*c.latest_full, static_cast<TimeNs>(kEvents - 1));  // 49999: not a multiple of 3
    EXPECT_TRUE(c.yearless);
    ASSERT_EQ(c.named.size(), inc.strings.size());
    EXPECT_EQ(c.named[host], 5);        // a host, the events' own
    EXPECT_EQ(c.named[slurm_node], 2);  // a Slurm node
    EXPECT_EQ(c.named[kNoStr], 0);
  }
}

}  // namespace
}  // namespace denpex::engine

namespace denpex::engine {
namespace {

// The index of the events by kind (Incident::OfKinds): the same indices, in event order, whether
// the index is built or the events are read whole; a copy of the incident, whose events live
// elsewhere, and events added after the index was built are read whole, never from a stale index.
TEST(Merge, OfKindsListsEventsOfTheKindsInOrderIndexedOrNot) {
  EXPECT_TRUE(Incident{}.OfKinds({Kind::kXid}).empty());  // no events, never indexed
  Incident inc;
  const Kind kinds[] = {Kind::kXid, Kind::kSocketError, Kind::kIbCompletionError, Kind::kCommInit};
  for (std::size_t i = 0; i < 10'000; ++i) {
    Event e;
    e.kind = i % 7 == 0 ? kinds[(i / 7) % 4] : Kind::kUnknownError;
    inc.events.push_back(e);
  }
  const auto whole = [&](std::initializer_list<Kind> of) {
    std::vector<std::int32_t> out;
    for (std::size_t i = 0; i < inc.events.size(); ++i) {
      if (std::find(of.begin(), of.end(), inc.events[i].kind) != of.end())
        out.push_back(static_cast<std::int32_t>(i));
    }
    return out;
  };
  const std::vector<std::int32_t> expected = whole({Kind::kSocketError, Kind::kIbCompletionError});
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(inc.OfKinds({Kind::kSocketError, Kind::kIbCompletionError}), expected);  // not indexed
  inc.IndexKinds();
  EXPECT_EQ(inc.OfKinds({Kind::kIbCompletionError, Kind::kSocketError}),
            expected);  // merged in event order
  EXPECT_EQ(inc.OfKinds({Kind::kSocketError, Kind::kSocketError}), whole({Kind::kSocketError}));
  EXPECT_TRUE(inc.OfKinds({Kind::kOomKill}).empty());
  const Incident copy = inc;
  EXPECT_EQ(copy.OfKinds({Kind::kXid}), whole({Kind::kXid}));
  Event late;
  late.kind = Kind::kXid;
  inc.events.push_back(late);
  EXPECT_EQ(inc.OfKinds({Kind::kXid}).back(), static_cast<std::int32_t>(inc.events.size() - 1));
}

}  // namespace
}  // namespace denpex::engine
