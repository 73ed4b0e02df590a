// A directory read as it grows (ingest/live.h, `denpex watch`) gives what one read of it gives
// once it stops growing: every frozen incident of corpora/real and corpora/real2, and a simulated
// one, written into a scratch directory in rounds of pieces cut at random newlines (a round ends
// where a job's write might), read after each round, assemble to the incident LoadIncident reads
// from the same files: the same events, per-file facts and counts. And a growing log fed in
// pieces of any size parses as the whole text does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "denpex/engine/watch.h"
#include "denpex/sim/simulator.h"
#include "incident_dump.h"
#include "ingest/chunks.h"
#include "ingest/live.h"
#include "ingest/load.h"
#include "ingest/streams.h"
#include "parse/prefix.h"
#include "support/json_logs.h"
#include "support/temp_dir.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::Dump;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The first line where two dumps differ, from each.
std::string FirstDifference(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = a.rfind('\n', i) == std::string::npos ? 0 : a.rfind('\n', i) + 1;
  return "read once:\n" + a.substr(from, a.find('\n', i) - from) + "\nread growing:\n" +
         b.substr(from, b.find('\n', i) - from);
}

// A log of timeouts, status lines, untimed srun lines and tracebacks, `copies` times over.
std::string SampleLog(int copies) {
  std::string text;
  for (int c = 0; c < copies; ++c) {
    for (int i = 0; i < 200; ++i) {
      const std::string r = std::to_string(i % 8),
                        ss = std::string(i % 60 < 10 ? "0" : "") + std::to_string(i % 60);
      const std::string head = r + ": [rank" + r + "]:[E302 09:1" + std::to_string(c % 10) + ":" +
                               ss + ".100000000 ProcessGroupNCCL.cpp:";
      text += head + "607] [PG 1 Rank " + r +
              "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=21, "
              "OpType=ALLREDUCE, NumelIn=5, "
              "NumelOut=5, Timeout(ms)=600000) ran for 600100 milliseconds before timing out.\n";
      text += head + "1664] [PG 1 Rank " + r +
              "] Exception (either an error or timeout) detected by watchdog at work: 21, last "
              "enqueued NCCL work: 21, "
              "last completed NCCL work: 20.\n";
      text += "srun: error: gpu-01: task " + r + ": Exited with exit code 1\n";
      if (i % 5 == 2) {
        text += r + ": Traceback (most recent call last):\n" + r +
                ":   File \"train.py\", line 12, in <module>\n" + r +
                ": RuntimeError: CUDA error: an illegal memory access was encountered\n";
      }
      if (i % 9 == 0) {
        text +=
            r + ": [2026-03-02 09:1" + std::to_string(c % 10) + ":" + ss +
            ",000] [INFO] [logging.py:96:log_dist] [Rank 0] step=" + std::to_string(c * 200 + i) +
            ", skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]\n";
      }
    }
  }
  return text;
}

// Cut points of `text` at newlines, about `pieces` of them, at random.
std::vector<std::size_t> Cuts(std::string_view text, int pieces, std::mt19937* rng) {
  std::vector<std::size_t> cuts;
  for (int i = 0; i < pieces; ++i) {
    const std::size_t at = std::uniform_int_distribution<std::size_t>(0, text.size())(*rng);
    const std::size_t nl = text.find('\n', at);
    if (nl != std::string_view::npos) cuts.push_back(nl + 1);
  }
  cuts.push_back(text.size());
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

TEST(GrowingLog, PiecesOfAnySizeParseAsTheWholeText) {
  for (const int copies : {0, 6}) {  // below and above GrowingLog::kWholeBytes
    std::string text = SampleLog(std::max(copies, 1));
    if (copies == 0) text.resize(text.rfind('\n', GrowingLog::kWholeBytes / 2) + 1);
    ASSERT_EQ(copies > 0, text.size() > GrowingLog::kWholeBytes);
    const FileContext ctx{.file = 0, .prefixes = SniffPrefixes(text)};
    const ParsedLog whole = ParseChunked(text, ctx);
    std::mt19937 rng(7 + copies);
    for (const int pieces : {1, 3, 40, 400}) {
      GrowingLog log(ctx);
      std::size_t from = 0;
      for (const std::size_t cut : Cuts(text, pieces, &rng)) {
        log.Add(std::string_view(text).substr(from, cut - from));
        from = cut;
      }
      const ParsedLog got = log.Snapshot();
      ASSERT_EQ(got.events.size(), whole.events.size())
          << copies << " copies, " << pieces << " pieces";
      EXPECT_EQ(got.lines, whole.lines);
      EXPECT_EQ(got.malformed, whole.malformed);
      EXPECT_EQ(got.broken, whole.broken);
      EXPECT_EQ(got.untimed, whole.untimed);
      EXPECT_EQ(got.last_line.offset, whole.last_line.offset);
      for (std::size_t i = 0; i < whole.events.size(); ++i) {
        const Event &a = whole.events[i], &b = got.events[i];
        EXPECT_EQ(b.line, a.line) << i;
        EXPECT_EQ(b.offset, a.offset) << i;
        EXPECT_EQ(b.kind, a.kind) << i;
        EXPECT_EQ(b.time, a.time) << i;
        EXPECT_EQ(b.time_borrowed, a.time_borrowed) << i;
        EXPECT_EQ(got.strings.Get(b.signature), whole.strings.Get(a.signature)) << i;
        if (const auto* w = std::get_if<WatchdogTimeout>(&a.detail)) {
          EXPECT_EQ(std::get<WatchdogTimeout>(b.detail).last_completed, w->last_completed) << i;
        }
      }
    }
  }
}

// Past the held-text budget a small file is parsed piece by piece from its first lines: once its
// first piece holds the opening lines a parse of the file reads whole, the same events.
TEST(GrowingLog, NotHeldWholeParsesAsTheWholeTextOnceItsFirstPieceHoldsTheOpeningLines) {
  std::string text = SampleLog(1);
  text.resize(text.rfind('\n', GrowingLog::kWholeBytes / 2) + 1);
  const FileContext ctx{.file = 0, .prefixes = SniffPrefixes(text)};
  const ParsedLog whole = ParseChunked(text, ctx);
  std::size_t first = 0;
  for (std::uint32_t n = 0; n < kOpeningLines; ++n) first = text.find('\n', first) + 1;
  GrowingLog log(ctx);
  log.Add(std::string_view(text).substr(0, first), false);
  EXPECT_EQ(log.held(), 0u);
  std::mt19937 rng(9);
  std::size_t from = first;
  for (const std::size_t cut : Cuts(std::string_view(text).substr(first), 50, &rng)) {
    log.Add(std::string_view(text).substr(from, first + cut - from), false);
    from = first + cut;
  }
  const ParsedLog got = log.Snapshot();
  ASSERT_EQ(got.events.size(), whole.events.size());
  EXPECT_EQ(got.lines, whole.lines);
  for (std::size_t i = 0; i < whole.events.size(); ++i) {
    EXPECT_EQ(got.events[i].line, whole.events[i].line) << i;
    EXPECT_EQ(got.events[i].time, whole.events[i].time) << i;
    EXPECT_EQ(got.events[i].kind, whole.events[i].kind) << i;
  }
}

// Writes `src`'s files into `dst` in `rounds` rounds (each file's bytes up to a random newline,
// the last round whole), reading `live` after each round.
void GrowInto(const fs::path& src, const fs::path& dst, int rounds, LiveIncident* live,
              std::mt19937* rng) {
  std::map<fs::path, std::string> texts;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (entry.is_regular_file() && !entry.is_symlink())
      texts[fs::relative(entry.path(), src)] = Read(entry.path());
  }
  std::map<fs::path, std::size_t> written;
  for (int round = 1; round <= rounds; ++round) {
    for (const auto& [rel, text] : texts) {
      std::size_t to = text.size();
      if (round < rounds) {
        const std::size_t at = std::uniform_int_distribution<std::size_t>(0, text.size())(*rng);
        const std::size_t nl = text.find('\n', at);
        to = nl == std::string::npos ? written[rel] : std::max(written[rel], nl + 1);
      }
      if (to == written[rel] && fs::exists(dst / rel)) continue;
      fs::create_directories((dst / rel).parent_path());
      std::ofstream out(dst / rel, std::ios::binary | std::ios::app);
      out.write(text.data() + written[rel], static_cast<std::streamsize>(to - written[rel]));
      written[rel] = to;
    }
    ASSERT_TRUE(live->Refresh().ok());
  }
}

// Rotated and compressed pieces are joined into one stream by LoadIncident, read each on its
// own while they grow: incidents that hold them are left out here.
bool HasRotatedPieces(const fs::path& dir) {
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    std::int64_t age = 0;
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && RotationBase(name, &age) != name) return true;
  }
  return false;
}

void ExpectGrowingReadsAsOnce(const fs::path& incident, const std::string& what,
                              std::mt19937* rng) {
  denpex::testing::TempDir tmp;
  const fs::path dst = tmp.path() / "incident";
  fs::create_directories(dst);
  auto live = LiveIncident::Open(dst);
  ASSERT_TRUE(live.ok());
  GrowInto(incident, dst, 4, &*live, rng);
  auto once = LoadIncident(dst, 2);
  ASSERT_TRUE(once.ok()) << what << ": " << once.status().message();
  auto grown = live->Assemble(2);
  ASSERT_TRUE(grown.ok()) << what;
  const std::string a = Dump(*once), b = Dump(*grown);
  if (a != b) ADD_FAILURE() << what << ": " << FirstDifference(a, b);
}

TEST(LiveIncident, FrozenIncidentsReadWhileTheyGrowAreTheIncidentReadOnce) {
  std::mt19937 rng(11);
  int compared = 0;
  for (const char* corpus : {"corpora/real", "corpora/real2"}) {
    for (const auto& entry : fs::directory_iterator(fs::path(DENPEX_SOURCE_DIR) / corpus)) {
      const fs::path incident = entry.path() / "incident";
      if (!fs::is_directory(incident) || HasRotatedPieces(incident)) continue;
      ExpectGrowingReadsAsOnce(incident, entry.path().filename().string(), &rng);
      ++compared;
    }
  }
  EXPECT_GT(compared, 60);
}

// Docker's json-file records (every log of corpora/real written as records, one a line, each
// line's record stamped a millisecond after the one before) read while they grow: each piece's
// records decoded as they come give what one read of the finished files gives.
TEST(LiveIncident, DockerJsonRecordsReadWhileTheyGrowAreTheIncidentReadOnce) {
  std::mt19937 rng(17);
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(DENPEX_SOURCE_DIR) / "corpora/real")) {
    const fs::path incident = entry.path() / "incident";
    if (!fs::is_directory(incident) || HasRotatedPieces(incident)) continue;
    denpex::testing::TempDir tmp;
    for (const auto& file : fs::recursive_directory_iterator(incident)) {
      if (!file.is_regular_file()) continue;
      const fs::path rel = fs::relative(file.path(), incident);
      fs::create_directories((tmp.path() / rel).parent_path());
      std::string text = Read(file.path());
      if (rel.begin()->string() != "checkpoints") {
        std::string records;
        int ms = 0;
        for (std::size_t at = 0; at < text.size();) {
          const std::size_t nl = std::min(text.find('\n', at), text.size());
          records += denpex::testing::DockerRecord(
              std::string_view(text).substr(at, nl - at), nl < text.size(), "stdout",
              FormatRfc3339(ParseRfc3339("2026-11-29T16:25:00Z").value() + (ms++) * 1000000));
          at = nl + 1;
        }
        text = std::move(records);
      }
      std::ofstream(tmp.path() / rel, std::ios::binary) << text;
    }
    ExpectGrowingReadsAsOnce(tmp.path(), entry.path().filename().string() + " (Docker JSON)", &rng);
    ++compared;
  }
  EXPECT_GT(compared, 10);
}

// scenarios/families/<family>.textproto simulated at `seed` into `out` (its incident in
// `out/incident`).
::testing::AssertionResult SimulateInto(const std::string& family, std::uint64_t seed,
                                        const fs::path& out) {
  auto scenario = sim::LoadScenario(fs::path(DENPEX_SOURCE_DIR) / "scenarios/families" /
                                    (family + ".textproto"));
  if (!scenario.ok()) return ::testing::AssertionFailure() << scenario.status().message();
  auto result = sim::Simulate(*scenario, {.out_dir = out, .seed = seed});
  if (!result.ok()) return ::testing::AssertionFailure() << result.status().message();
  return ::testing::AssertionSuccess();
}

// A simulated Kubernetes job's incident with its current pod logs relayed into one file `name`
// (the pods' lines dealt round-robin, each line as `relay(pod, line)` makes it), everything else
// copied: in `relayed`. The number of pods.
std::size_t RelayPods(
    const fs::path& incident, const fs::path& relayed, const std::string& name,
    const std::function<std::string(const std::string&, std::string_view)>& relay) {
  std::vector<std::vector<std::string>> pods;
  for (const auto& entry : fs::recursive_directory_iterator(incident)) {
    if (!entry.is_regular_file()) continue;
    const fs::path rel = fs::relative(entry.path(), incident);
    const std::string file = entry.path().filename().string();
    if (rel.begin()->string() == "pods" && !file.ends_with(".previous.log")) {
      const std::string pod = file.substr(0, file.find('.'));
      const std::string text = Read(entry.path());
      pods.emplace_back();
      for (std::size_t at = 0; at < text.size();) {
        const std::size_t nl = std::min(text.find('\n', at), text.size());
        pods.back().push_back(relay(pod, std::string_view(text).substr(at, nl - at)) + "\n");
        at = nl + 1;
      }
      continue;
    }
    fs::create_directories((relayed / rel).parent_path());
    fs::copy_file(entry.path(), relayed / rel);
  }
  std::string merged;
  for (std::size_t line = 0, left = 1; left > 0; ++line) {
    left = 0;
    for (const auto& lines : pods) {
      if (line < lines.size()) merged += lines[line], ++left;
    }
  }
  std::ofstream(relayed / name, std::ios::binary) << merged;
  return pods.size();
}

std::ptrdiff_t TaggedFiles(const Incident& inc) {
  return std::count_if(inc.files.begin(), inc.files.end(),
                       [](const LogFile& f) { return !f.tag.empty(); });
}

// A Kubernetes job's pod logs collected as `kubectl logs -l <selector> --prefix` into one file,
// read while it grows: each pod's stream read as its own, as one read of the finished file reads
// them (ingest/streams.h).
TEST(LiveIncident, PodsTaggedStreamsReadWhileTheyGrowAreTheIncidentReadOnce) {
  denpex::testing::TempDir tmp;
  ASSERT_TRUE(SimulateInto("k8s_hang_1024_pytorchjob", 9, tmp.path() / "sim"));
  const fs::path relayed = tmp.path() / "relayed";
  const std::size_t pods = RelayPods(tmp.path() / "sim" / "incident", relayed, "pods.log",
                                     [](const std::string& pod, std::string_view line) {
                                       return "[pod/" + pod + "/pytorch] " + std::string(line);
                                     });
  ASSERT_GT(pods, 1u);
  auto once = LoadIncident(relayed, 2);
  ASSERT_TRUE(once.ok()) << once.status().message();
  EXPECT_EQ(TaggedFiles(*once), static_cast<std::ptrdiff_t>(pods));
  std::mt19937 rng(23);
  ExpectGrowingReadsAsOnce(relayed, "k8s_hang_1024_pytorchjob (kubectl --prefix)", &rng);
}

// `line` of `pod` on `node` as Fluent Bit's `kubernetes` filter ships it, one JSON record.
std::string FluentBitRecord(const std::string& pod, const std::string& node,
                            std::string_view line) {
  std::string record = R"({"date":1772442021.5,"log":")";
  for (const char c : line) {
    if (c == '"' || c == '\\') record.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", c);
      record += escape;
    } else {
      record.push_back(c);
    }
  }
  return record + R"(","kubernetes":{"pod_name":")" + pod + R"(","host":")" + node +
         R"(","container_name":"pytorch"}})";
}

// The node `describe/<pod>.txt` of `incident` names (`Node:  gpu-0005/10.128.0.6`).
std::string DescribedNode(const fs::path& incident, const std::string& pod) {
  const std::string text = Read(incident / "describe" / (pod + ".txt"));
  const std::size_t from = text.find_first_not_of(' ', text.find("\nNode:") + 6);
  return text.substr(from, text.find('/', from) - from);
}

// `incident`'s pod logs shipped by Fluent Bit's `kubernetes` filter into `relayed`/pods.json (its
// other files copied), each pod's node the one its describe names, kept in `*node_of`; the number
// of pods.
std::size_t RelayFluentBitPods(const fs::path& incident, const fs::path& relayed,
                               std::map<std::string, std::string>* node_of) {
  return RelayPods(incident, relayed, "pods.json",
                   [&](const std::string& pod, std::string_view line) {
                     auto [it, fresh] = node_of->try_emplace(pod);
                     if (fresh) it->second = DescribedNode(incident, pod);
                     return FluentBitRecord(pod, it->second, line);
                   });
}

// `relayed` read once: a stream per pod (`pods` of them), each on the node `node_of` gives its
// pod; and read while it grows (ExpectGrowingReadsAsOnce, `seed`'s order), alike.
void ExpectPodStreamsReadAsOnce(const fs::path& relayed, std::size_t pods,
                                const std::map<std::string, std::string>& node_of,
                                const std::string& what, unsigned seed) {
  auto once = LoadIncident(relayed, 2);
  ASSERT_TRUE(once.ok()) << what << ": " << once.status().message();
  EXPECT_EQ(TaggedFiles(*once), static_cast<std::ptrdiff_t>(pods)) << what;
  for (const LogFile& f : once->files) {
    if (f.tag.empty()) continue;
    ASSERT_GE(f.node, 0) << f.tag;
    EXPECT_EQ(once->nodes[f.node], node_of.at(std::string(TaggedPod(f.tag)))) << f.tag;
  }
  std::mt19937 rng(seed);
  ExpectGrowingReadsAsOnce(relayed, what, &rng);
}

// The same pod logs shipped by Fluent Bit's `kubernetes` filter (the pod and its node under
// `kubernetes`), read while the file grows, as one read of the finished file: each pod's stream
// its own and the node its records name. Laid out one JSON record a line (each piece decoded as it
// comes), as one JSON array newest first (`gcloud logging read --format=json`'s shape: every
// record of one time, so the array's order is all there is), and as the hits of an Elasticsearch
// search response saved by curl (one line, no final newline, its end a `}`), as Fluent Bit's
// `file` output writes them (each record after its tag and time), and as such a
// response's hits by score (its pods' lines of one time in no known order, read each alone): an
// export is read once it is whole.
TEST(LiveIncident, PodsShippedRecordsReadWhileTheyGrowAreTheIncidentReadOnce) {
  denpex::testing::TempDir tmp;
  ASSERT_TRUE(SimulateInto("k8s_hang_1024_pytorchjob", 9, tmp.path() / "sim"));
  const fs::path incident = tmp.path() / "sim" / "incident";
  using Layout = std::string (*)(const std::vector<std::string_view>& records);
  const std::vector<std::tuple<std::string, std::string, Layout>> layouts = {
      {"one a line", "pods.json",
       [](const std::vector<std::string_view>& records) {
         std::string out;
         for (const std::string_view r : records) (out += r) += '\n';
         return out;
       }},
      {"an export's array", "export.json",
       [](const std::vector<std::string_view>& records) {
         std::string out = "[\n";
         for (auto it = records.rbegin(); it != records.rend(); ++it)
           (out += out.size() > 2 ? ",\n  " : "  ") += *it;
         return out + "\n]\n";
       }},
      {"a search", "search.json",
       [](const std::vector<std::string_view>& records) {
         std::string out = R"({"took":41,"timed_out":false,"hits":{"total":{"value":1},"hits":[)";
         for (const std::string_view r : records)
           ((out += out.back() == '[' ? "" : ",") += R"({"_index":"logs","_source":)") += r,
               out += '}';
         return out + "]}}";
       }},
      {"Fluent Bit's file output", "fluent-bit.out",
       [](const std::vector<std::string_view>& records) {
         // `<tag>: [<seconds>, <record>]`, the tag the tail input's container log path
         std::string out;
         for (const std::string_view r : records) {
           const std::size_t from = r.find("\"pod_name\":\"") + 12;
           const std::string_view pod = r.substr(from, r.find('"', from) - from);
           (((out += "kube.var.log.containers.") += pod) += "_default_pytorch-") +=
               std::string(64, 'c');
           ((out += ".log: [1772442021.500000000, ") += r) += "]\n";
         }
         return out;
       }},
      {"a search by score", "scored.json",
       [](const std::vector<std::string_view>& records) {
         // a pod's lines of one time in no order the hits say (reversed), the hits out of time
         // order (a record a second early first, one half a second early last): read each alone
         std::string out = R"({"took":41,"hits":{"hits":[)";
         const auto hit = [&](std::string_view r) {
           ((out += out.back() == '[' ? "" : ",") += R"({"_score":1.0,"_source":)") += r,
               out += '}';
         };
         const auto at = [&](std::string_view date) {
           std::string r(records.front());
           return r.replace(r.find("1772442021.5"), 12, date);
         };
         hit(at("1772442020.0"));
         for (auto it = records.rbegin(); it != records.rend(); ++it) hit(*it);
         hit(at("1772442021.0"));
         return out + "]}}";
       }},
  };
  unsigned seed = 29;
  for (const auto& [what, name, layout] : layouts) {
    const fs::path relayed = tmp.path() / ("relayed-" + name);
    std::map<std::string, std::string> node_of;
    const std::size_t pods = RelayFluentBitPods(incident, relayed, &node_of);
    ASSERT_GT(pods, 1u);
    const std::string records = Read(relayed / "pods.json");
    std::vector<std::string_view> lines;
    for (std::size_t at = 0; at < records.size();) {
      const std::size_t nl = records.find('\n', at);
      lines.push_back(std::string_view(records).substr(at, nl - at));
      at = nl + 1;
    }
    const std::string laid = layout(lines);
    fs::remove(relayed / "pods.json");
    std::ofstream(relayed / name, std::ios::binary) << laid;
    ExpectPodStreamsReadAsOnce(relayed, pods, node_of, "k8s_hang_1024_pytorchjob (" + what + ")",
                               seed++);
    if (name != "scored.json") continue;
    auto once = LoadIncident(relayed, 2);
    ASSERT_TRUE(once.ok()) << once.status().message();
    EXPECT_TRUE(
        std::any_of(once->input.problems.begin(), once->input.problems.end(),
                    [](const std::string& p) { return p.find("read each alone") != p.npos; }))
        << what;
  }
}

// Every log of a Slurm job shipped by the machine that wrote it (Filebeat's ECS documents: the
// host, the file's path; srun's console and the controller's log from the batch host), one file
// of records, read while it grows: a stream per machine, as one read of the finished file.
TEST(LiveIncident, MachinesShippedFilesReadWhileTheyGrowAreTheIncidentReadOnce) {
  denpex::testing::TempDir tmp;
  ASSERT_TRUE(SimulateInto("hang_1024_torchrun", 3, tmp.path() / "sim"));
  const fs::path incident = tmp.path() / "sim" / "incident", relayed = tmp.path() / "relayed";
  std::vector<std::vector<std::string>> files;  // each file's records
  for (const auto& entry : fs::recursive_directory_iterator(incident)) {
    if (!entry.is_regular_file()) continue;
    const std::string rel = fs::relative(entry.path(), incident).generic_string();
    const std::size_t slash = rel.find('/');
    const std::string host = slash == std::string::npos ? "login-01" : rel.substr(0, slash);
    const std::string text = Read(entry.path());
    files.emplace_back();
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t nl = std::min(text.find('\n', at), text.size());
      std::string record = R"({"@timestamp":"2026-03-02T09:00:21.5Z","message":")";
      for (const char c : std::string_view(text).substr(at, nl - at)) {
        if (c == '"' || c == '\\') record.push_back('\\');
        if (static_cast<unsigned char>(c) >= 0x20) record.push_back(c);
      }
      files.back().push_back(record + R"(","host":{"name":")" + host +
                             R"("},"log":{"file":{"path":"/var/log/collected/)" + rel + "\"}}}\n");
      at = nl + 1;
    }
  }
  std::string merged;
  for (std::size_t line = 0, left = 1; left > 0; ++line) {
    left = 0;
    for (const auto& records : files) {
      if (line < records.size()) merged += records[line], ++left;
    }
  }
  fs::create_directories(relayed);
  std::ofstream(relayed / "filebeat.ndjson", std::ios::binary) << merged;
  auto once = LoadIncident(relayed, 2);
  ASSERT_TRUE(once.ok()) << once.status().message();
  std::set<std::string> machines;  // the hosts that shipped a file: a stream each
  for (const auto& entry : fs::directory_iterator(incident)) {
    if (!entry.is_directory()) machines.insert("login-01");
  }
  for (const auto& entry : fs::directory_iterator(incident))
    if (entry.is_directory()) machines.insert(entry.path().filename().string());
  EXPECT_EQ(TaggedFiles(*once), static_cast<std::ptrdiff_t>(machines.size()));
  std::mt19937 rng(37);
  ExpectGrowingReadsAsOnce(relayed, "hang_1024_torchrun (Filebeat)", &rng);
}

TEST(LiveIncident, SimulatedIncidentReadWhileItGrowsIsTheIncidentReadOnce) {
  denpex::testing::TempDir tmp;
  ASSERT_TRUE(SimulateInto("hang_1024_torchrun", 3, tmp.path() / "sim"));
  std::mt19937 rng(5);
  ExpectGrowingReadsAsOnce(tmp.path() / "sim" / "incident", "hang_1024_torchrun", &rng);
}

}  // namespace
}  // namespace denpex::engine
