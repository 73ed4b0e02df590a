// The flight recorder's dump files (timeouts.flight_recorder, docs/scenario_format.md): which
// ranks dump, where the files land, their structure per format version, read back by a small
// pickle reader of its own (the opcodes torch's C++ pickler writes) rather than by the
// simulator's writer, and that their sequence numbers agree with the watchdog lines.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <regex>
#include <set>

#include "denpex/common/json_reader.h"
#include "sim_test_util.h"

namespace denpex::sim {
namespace {

using ::testing::HasSubstr;
using namespace testing_util;

// A Python value read back from a pickle.
struct PyVal {
  enum Kind { kNone, kBool, kInt, kFloat, kStr, kList, kTuple, kDict } kind = kNone;
  std::int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<std::shared_ptr<PyVal>> items;  // a dict's: key, value, key, value, ...

  const PyVal* Get(std::string_view key) const {
    for (std::size_t k = 0; k + 1 < items.size(); k += 2) {
      if (items[k]->kind == kStr && items[k]->s == key) return items[k + 1].get();
    }
    return nullptr;
  }
  std::vector<std::string> Keys() const {
    std::vector<std::string> keys;
    for (std::size_t k = 0; k + 1 < items.size(); k += 2) keys.push_back(items[k]->s);
    return keys;
  }
};
using PyPtr = std::shared_ptr<PyVal>;

// The protocol-2 opcodes a flight-recorder dump uses; nullptr on anything else.
PyPtr Unpickle(const std::string& b) {
  std::vector<PyPtr> stack;
  std::vector<std::size_t> marks;
  std::map<std::uint32_t, PyPtr> memo;
  auto le = [&](std::size_t at, int n) {
    std::uint64_t v = 0;
    for (int k = n - 1; k >= 0; --k) v = v << 8 | static_cast<unsigned char>(b[at + k]);
    return v;
  };
  auto make = [](PyVal::Kind k) {
    auto v = std::make_shared<PyVal>();
    v->kind = k;
    return v;
  };
  std::size_t p = 0;
  while (p < b.size()) {
    const unsigned char op = static_cast<unsigned char>(b[p++]);
    switch (op) {
      case 0x80:
        ++p;
        break;  // PROTO
      case '}':
        stack.push_back(make(PyVal::kDict));
        break;
      case ']':
        stack.push_back(make(PyVal::kList));
        break;
      case '(':
        marks.push_back(stack.size());
        break;
      case 'u':
      case 'e': {
        const std::size_t m = marks.back();
        marks.pop_back();
        PyVal& target = *stack[m - 1];
        for (std::size_t k = m; k < stack.size(); ++k) target.items.push_back(stack[k]);
        stack.resize(m);
        break;
      }
      case 'X': {
        const auto n = static_cast<std::size_t>(le(p, 4));
        auto v = make(PyVal::kStr);
        v->s = b.substr(p + 4, n);
        p += 4 + n;
        stack.push_back(v);
        break;
      }
      case 'q':
        memo[static_cast<std::uint32_t>(le(p, 1))] = stack.back();
        p += 1;
        break;
      case 'r':
        memo[static_cast<std::uint32_t>(le(p, 4))] = stack.back();
        p += 4;
        break;
      case 'h':
        stack.push_back(memo.at(static_cast<std::uint32_t>(le(p, 1))));
        p += 1;
        break;
      case 'j':
        stack.push_back(memo.at(static_cast<std::uint32_t>(le(p, 4))));
        p += 4;
        break;
      case 'K':
      case 'M':
      case 'J': {
        const int n = op == 'K' ? 1 : op == 'M' ? 2 : 4;
        auto v = make(PyVal::kInt);
        v->i =
            op == 'J' ? static_cast<std::int32_t>(le(p, 4)) : static_cast<std::int64_t>(le(p, n));
        p += n;
        stack.push_back(v);
        break;
      }
      case 0x8a: {  // LONG1
        const int n = static_cast<unsigned char>(b[p]);
        auto v = make(PyVal::kInt);
        v->i = static_cast<std::int64_t>(le(p + 1, n));
        p += 1 + n;
        stack.push_back(v);
        break;
      }
      case 'G': {
        std::uint64_t bits = 0;
        for (int k = 0; k < 8; ++k) bits = bits << 8 | static_cast<unsigned char>(b[p + k]);
        auto v = make(PyVal::kFloat);
        std::memcpy(&v->f, &bits, 8);
        p += 8;
        stack.push_back(v);
        break;
      }
      case 0x88:
      case 0x89: {
        auto v = make(PyVal::kBool);
        v->i = op == 0x88;
        stack.push_back(v);
        break;
      }
      case 'N':
        stack.push_back(make(PyVal::kNone));
        break;
      case 0x86: {  // TUPLE2
        auto v = make(PyVal::kTuple);
        v->items = {stack[stack.size() - 2], stack.back()};
        stack.resize(stack.size() - 2);
        stack.push_back(v);
        break;
      }
      case '.':
        return stack.size() == 1 && p == b.size() ? stack.back() : nullptr;
      default:
        return nullptr;
    }
  }
  return nullptr;
}

// 4 nodes x 8 GPUs: TP4 x PP2 x DP4 under srun (nobody tears the job down before every monitor
// has seen the dump signal); rank 13 (node 1, stage 0) hangs mid-step.
constexpr const char* kHang = R"(name: "fr"
seed: 3
job { nodes: 4 tp: 4 pp: 2 }
launcher: LAUNCHER_SRUN
format { torch: "2.6" }
timeouts { nccl_timeout_ms: 20000 dump_on_timeout: true flight_recorder { buffer_size: 2000 } }
training { warmup_steps: 3 }
faults { kind: FAULT_KIND_HANG rank: 13 }
)";

// kHang with its flight_recorder fields replaced.
std::string WithBuffer(std::string_view fields) {
  std::string text = kHang;
  const std::string from = "buffer_size: 2000";
  return text.replace(text.find(from), from.size(), fields);
}

fs::path DumpOf(const fs::path& out, int rank) {
  char node[16];
  std::snprintf(node, sizeof node, "gpu-%04d", rank / 8 + 1);
  return out / "incident" / node / ("nccl_trace_rank_" + std::to_string(rank));
}

std::map<int, PyPtr> Dumps(const fs::path& out, int world) {
  std::map<int, PyPtr> dumps;
  for (int r = 0; r < world; ++r) {
    if (!fs::exists(DumpOf(out, r))) continue;
    PyPtr d = Unpickle(ReadAll(DumpOf(out, r)));
    EXPECT_NE(d, nullptr) << "rank " << r;
    if (d) dumps[r] = d;
  }
  return dumps;
}

// The newest entry of the rank's dump on the group described `desc`.
const PyVal* NewestOn(const PyVal& dump, std::string_view desc) {
  const auto& entries = dump.Get("entries")->items;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if ((*it)->Get("process_group")->items[1]->s == desc) return it->get();
  }
  return nullptr;
}

TEST(FlightRecorderDumps, EveryRankDumpsAndTheHungRankIsOneCollectiveShort) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kHang), out);
  ASSERT_EQ(r.truth.initiator().rank(), 13);
  const auto dumps = Dumps(out, 32);
  ASSERT_EQ(dumps.size(), 32u);
  for (const auto& [rank, d] : dumps) {
    EXPECT_THAT(d->Keys(), ::testing::ElementsAre("version", "pg_config", "pg_status", "entries"));
    EXPECT_EQ(d->Get("version")->s, "2.5");  // torch 2.6
    const PyVal& config = *d->Get("pg_config");
    ASSERT_EQ(config.items.size(), 8u);  // default_pg, its TP, PP and DP groups
    EXPECT_EQ(config.Get("0")->Get("ranks")->s.substr(0, 10), "[0, 1, 2, ");
    const PyVal& first = *d->Get("entries")->items.front();
    EXPECT_THAT(
        first.Keys(),
        ::testing::ElementsAre("frames", "record_id", "pg_id", "process_group", "collective_seq_id",
                               "p2p_seq_id", "op_id", "profiling_name", "time_created_ns",
                               "input_sizes", "input_dtypes", "output_sizes", "output_dtypes",
                               "state", "time_discovered_started_ns",
                               "time_discovered_completed_ns", "retired", "timeout_ms", "is_p2p"));
    EXPECT_EQ(first.Get("record_id")->i, 0);
    EXPECT_EQ(first.Get("profiling_name")->s, "nccl:all_reduce");  // the start-up barrier
    EXPECT_EQ(first.Get("frames")->items.front()->Get("name")->s, "barrier");
  }
  // Its TP peers (ranks 12-15) wait in the all-reduce it never enqueued.
  const PyVal* mine = NewestOn(*dumps.at(13), "TENSOR_MODEL_PARALLEL_GROUP");
  ASSERT_NE(mine, nullptr);
  EXPECT_EQ(mine->Get("state")->s, "completed");
  for (const int peer : {12, 14, 15}) {
    const PyVal* theirs = NewestOn(*dumps.at(peer), "TENSOR_MODEL_PARALLEL_GROUP");
    ASSERT_NE(theirs, nullptr);
    EXPECT_EQ(theirs->Get("collective_seq_id")->i, mine->Get("collective_seq_id")->i + 1) << peer;
    EXPECT_EQ(theirs->Get("state")->s, "scheduled") << peer;
    EXPECT_EQ(theirs->Get("retired")->kind == PyVal::kBool && theirs->Get("retired")->i == 0, true);
    EXPECT_EQ(theirs->Get("time_discovered_completed_ns")->kind, PyVal::kNone);
  }
}

// The watchdog's "SeqNum=N" and "last enqueued NCCL work: E, last completed NCCL work: C" for
// the group it names are the dump's newest entry on that group and its pg_status.
TEST(FlightRecorderDumps, SequenceNumbersAgreeWithTheWatchdogLines) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(kHang), out);
  const auto dumps = Dumps(out, 32);
  static const std::regex kCaught(
      R"(\[rank(\d+)\]:.*\((\w+)\) Rank \d+\] Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+), )");
  static const std::regex kCounts(
      R"(\[rank(\d+)\]:.*detected by watchdog at work: \d+, last enqueued NCCL work: (\d+), last completed NCCL work: (\d+)\.)");
  const std::map<std::string, std::string> local_id = {{"default_pg", "0"},
                                                       {"TENSOR_MODEL_PARALLEL_GROUP", "1"},
                                                       {"PIPELINE_MODEL_PARALLEL_GROUP", "2"},
                                                       {"DATA_PARALLEL_GROUP", "3"}};
  std::map<int, std::string> group_of;  // rank -> the group its watchdog names
  int checked = 0;
  for (const auto& [path, text] : ReadTree(out / "incident")) {
    if (path.find("nccl_trace_rank_") != std::string::npos) continue;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_search(line, m, kCaught)) {
        const int rank = std::stoi(m[1]);
        const std::string desc = m[2];
        group_of[rank] = desc;
        const PyVal* newest = NewestOn(*dumps.at(rank), desc);
        ASSERT_NE(newest, nullptr) << line;
        const bool p2p = desc == "PIPELINE_MODEL_PARALLEL_GROUP";
        EXPECT_EQ(newest->Get(p2p ? "p2p_seq_id" : "collective_seq_id")->i, std::stoll(m[3]))
            << line;
        EXPECT_EQ(newest->Get("is_p2p")->i, p2p ? 1 : 0) << line;
      } else if (std::regex_search(line, m, kCounts) && group_of.count(std::stoi(m[1]))) {
        const int rank = std::stoi(m[1]);
        const PyVal& status = *dumps.at(rank)->Get("pg_status")->Get(local_id.at(group_of[rank]));
        EXPECT_EQ(status.Get("last_enqueued_collective")->i, std::stoll(m[2])) << line;
        EXPECT_EQ(status.Get("last_completed_collective")->i, std::stoll(m[3])) << line;
        EXPECT_EQ(status.Get("last_started_collective")->i, -1) << line;  // no ENABLE_TIMING
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20);
}

// The ring keeps the newest buffer_size entries; record_id keeps counting past the ones dropped.
TEST(FlightRecorderDumps, TheRingKeepsTheNewestEntries) {
  const fs::path all = FreshDir("_all"), ring = FreshDir("_ring");
  MustSimulate(MustParse(kHang), all);
  MustSimulate(MustParse(WithBuffer("buffer_size: 16")), ring);
  for (const int rank : {0, 13, 31}) {
    const std::string big_bytes = ReadAll(DumpOf(all, rank));
    const PyPtr big = Unpickle(big_bytes), cut = Unpickle(ReadAll(DumpOf(ring, rank)));
    ASSERT_TRUE(big && cut);
    const auto& b = big->Get("entries")->items;
    const auto& s = cut->Get("entries")->items;
    ASSERT_EQ(s.size(), 16u);
    ASSERT_GT(b.size(), 16u);
    for (std::size_t k = 0; k < 16; ++k) {
      const PyVal& x = *b[b.size() - 16 + k];
      const PyVal& y = *s[k];
      EXPECT_EQ(x.Get("record_id")->i, y.Get("record_id")->i);
      EXPECT_EQ(x.Get("time_created_ns")->i, y.Get("time_created_ns")->i);
      EXPECT_EQ(x.Get("profiling_name")->s, y.Get("profiling_name")->s);
      EXPECT_EQ(x.Get("state")->s, y.Get("state")->s);
    }
    EXPECT_EQ(s.back()->Get("record_id")->i, static_cast<std::int64_t>(b.size()) - 1);
  }
}

// A SIGKILLed rank writes no dump; its peers time out and dump (torch 2.4: format 2.2, no
// pg_status, no is_p2p).
TEST(FlightRecorderDumps, AKilledRankWritesNoDumpAndTorch24WritesFormat22) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kHang, {"faults[0].kind=FAULT_KIND_SIGKILL", "format.torch=2.4"}), out);
  const int culprit = r.truth.initiator().rank();
  const auto dumps = Dumps(out, 32);
  EXPECT_EQ(dumps.size(), 31u);
  EXPECT_EQ(dumps.count(culprit), 0u);
  for (const auto& [rank, d] : dumps) {
    EXPECT_THAT(d->Keys(), ::testing::ElementsAre("version", "pg_config", "entries"));
    EXPECT_EQ(d->Get("version")->s, "2.2");
    EXPECT_EQ(d->Get("entries")->items.back()->Get("is_p2p"), nullptr);
  }
}

// The odd rank of a collective mismatch has the other op or size at the SeqNum its peers wait in.
TEST(FlightRecorderDumps, TheMismatchedRankRecordsItsOddCollective) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(kHang, {"faults[0].kind=FAULT_KIND_COLLECTIVE_MISMATCH", "faults[0].rank=13"}),
      out);
  const auto dumps = Dumps(out, 32);
  const PyVal* odd = NewestOn(*dumps.at(13), "TENSOR_MODEL_PARALLEL_GROUP");
  const PyVal* peer = NewestOn(*dumps.at(12), "TENSOR_MODEL_PARALLEL_GROUP");
  ASSERT_TRUE(odd && peer);
  EXPECT_EQ(odd->Get("collective_seq_id")->i, peer->Get("collective_seq_id")->i);
  EXPECT_EQ(odd->Get("state")->s, "scheduled");
  const bool other_op = odd->Get("profiling_name")->s != peer->Get("profiling_name")->s;
  const bool other_size = odd->Get("input_sizes")->items[0]->items[0]->i !=
                          peer->Get("input_sizes")->items[0]->items[0]->i;
  EXPECT_TRUE(other_op || other_size);
  (void)r;
}

// An operator's collection: the first timed-out rank's dump lost, or a seeded half kept.
TEST(FlightRecorderDumps, CoverageDropsTheCollectionsLostDumps) {
  const fs::path first = FreshDir("_first"), half = FreshDir("_half");
  MustSimulate(MustParse(WithBuffer(
                   "buffer_size: 2000 coverage: FLIGHT_RECORDER_COVERAGE_ALL_BUT_FIRST_FAILED")),
               first);
  EXPECT_EQ(Dumps(first, 32).size(), 31u);
  MustSimulate(
      MustParse(WithBuffer("buffer_size: 2000 coverage: FLIGHT_RECORDER_COVERAGE_RANDOM_HALF")),
      half);
  const std::size_t kept = Dumps(half, 32).size();
  EXPECT_GT(kept, 4u);
  EXPECT_LT(kept, 28u);
}

// JSON (dump_nccl_trace_json): nlohmann's sorted keys, no frames, format 2.7's nccl_version.
TEST(FlightRecorderDumps, JsonDumpsHaveSortedKeysAndNoFrames) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(WithBuffer("buffer_size: 2000 format: FLIGHT_RECORDER_FORMAT_JSON "
                                    "version: \"2.7\" enable_timing: true")),
               out);
  const std::string text = ReadAll(DumpOf(out, 12));
  JsonReader json(text);
  ASSERT_TRUE(json.BeginObject());
  std::vector<std::string> keys;
  std::string version, nccl;
  std::size_t entries = 0;
  while (auto key = json.NextKey()) {
    keys.push_back(*key);
    if (*key == "version") {
      version = json.String().value_or("");
    } else if (*key == "nccl_version") {
      nccl = json.String().value_or("");
    } else if (*key == "entries") {
      ASSERT_TRUE(json.BeginArray());
      while (json.NextElement()) {
        ASSERT_TRUE(json.BeginObject());
        std::vector<std::string> entry_keys;
        while (auto k = json.NextKey()) {
          entry_keys.push_back(*k);
          json.Skip();
        }
        EXPECT_TRUE(std::is_sorted(entry_keys.begin(), entry_keys.end()));
        EXPECT_EQ(std::count(entry_keys.begin(), entry_keys.end(), "frames"), 0);
        ++entries;
      }
    } else {
      json.Skip();
    }
  }
  ASSERT_TRUE(json.ok()) << json.error();
  EXPECT_THAT(
      keys, ::testing::ElementsAre("entries", "nccl_version", "pg_config", "pg_status", "version"));
  EXPECT_EQ(version, "2.7");
  EXPECT_EQ(nccl, "2.21.5");
  EXPECT_GT(entries, 10u);
  EXPECT_THAT(text, HasSubstr("\"state\":\"started\""));  // timing: the work it waits in started
  EXPECT_THAT(text, HasSubstr("\"duration_ms\":"));
}

TEST(FlightRecorderDumps, NoTraceBufferNoDumpFiles) {
  const fs::path out = FreshDir();
  std::string text = kHang;
  text.replace(text.find(" flight_recorder { buffer_size: 2000 }"), 38, "");
  MustSimulate(MustParse(text), out);
  EXPECT_TRUE(Dumps(out, 32).empty());
}

TEST(FlightRecorderDumps, ATraceBufferNeedsDumpOnTimeoutAndAKnownVersion) {
  auto s = ParseScenario(R"(name: "x"
job { nodes: 4 tp: 2 pp: 4 }
format { torch: "2.6" }
timeouts { flight_recorder { buffer_size: 2000 } }
faults { kind: FAULT_KIND_HANG }
)",
                         "fr.textproto");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("timeouts.dump_on_timeout"));
  EXPECT_THAT(s.status().message(), HasSubstr("only written to files with dump_on_timeout"));
  auto v = ParseScenario(R"(name: "x"
job { nodes: 4 tp: 2 pp: 4 }
format { torch: "2.6" }
timeouts { dump_on_timeout: true flight_recorder { buffer_size: 2000 version: "3.1" } }
faults { kind: FAULT_KIND_HANG }
)",
                         "fr.textproto");
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("fr.textproto:4:"));
  EXPECT_THAT(v.status().message(), HasSubstr("\"2.2\", \"2.4\", \"2.5\", \"2.7\""));
  auto b = ParseScenario(R"(name: "x"
job { nodes: 4 tp: 2 pp: 4 }
format { torch: "2.6" }
timeouts { dump_on_timeout: true flight_recorder { buffer_size: 0 } }
faults { kind: FAULT_KIND_HANG }
)",
                         "fr.textproto");
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("buffer_size must be 1 to 1000000 (got 0)"));
}

}  // namespace
}  // namespace denpex::sim
