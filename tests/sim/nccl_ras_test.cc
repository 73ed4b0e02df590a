// The RAS poller's file (scenario `nccl_ras`, docs/log_formats.md §29): where it lands, its text
// report's layout per NCCL release (NCCL's src/ras/client_support.cc), the JSON document read
// back by a pull reader (with the hand repair 2.28.7/2.28.9 need), and that the counts say what
// happened: a hung rank one collective behind, a killed rank's process dead and its ranks missing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <regex>

#include "denpex/common/json_reader.h"
#include "denpex/common/time.h"
#include "format/nccl_ras.h"
#include "model/job.h"
#include "sim_test_util.h"

namespace denpex::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing_util;

// 4 nodes x 8 GPUs, pure data parallel (the DP group is every rank, comm rank = global rank);
// rank 13 (node 1, local rank 5) is hit.
std::string Scenario(std::string_view fault, std::string_view nccl, std::string_view ras,
                     std::string_view launcher = "LAUNCHER_TORCHRUN") {
  return std::string(R"(name: "ras"
seed: 3
job { nodes: 4 tp: 1 pp: 1 }
launcher: )") +
         std::string(launcher) + "\nformat { torch: \"2.6\" nccl: \"" + std::string(nccl) +
         "\" }\ntimeouts { nccl_timeout_ms: 120000 }\ntraining { warmup_steps: 3 }\nfaults { " +
         std::string(fault) + " }\n" + std::string(ras) + "\n";
}

constexpr std::string_view kHang = "kind: FAULT_KIND_HANG rank: 13";
constexpr std::string_view kKill = "kind: FAULT_KIND_SIGKILL rank: 13";

fs::path RasFile(const fs::path& out) { return out / "incident" / "gpu-0001" / "ncclras.log"; }

// The file's reports, each without its `date -Is` line, and those lines.
struct Polls {
  std::vector<std::string> stamps, reports;
};
Polls Split(const std::string& text) {
  static const std::regex kStamp(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$)");
  Polls p;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(at, nl - at);
    if (std::regex_match(line, kStamp)) {
      p.stamps.push_back(line);
      p.reports.emplace_back();
    } else if (!p.reports.empty()) {
      p.reports.back() += line + "\n";
    }
    at = nl + 1;
  }
  return p;
}

// The section of a text report from `head` to the next blank line.
std::string Section(const std::string& report, std::string_view head) {
  const std::size_t at = report.find(head);
  if (at == std::string::npos) return "";
  const std::size_t end = report.find("\n\n", at);
  return report.substr(at, end == std::string::npos ? std::string::npos : end - at + 1);
}

TEST(NcclRasReports, TextHasRealLayoutAndNamesTheLoneHungRank) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(Scenario(kHang, "2.26.2", "nccl_ras { every_s: 30 }")), out);
  ASSERT_TRUE(fs::exists(RasFile(out)));
  const Polls polls = Split(ReadAll(RasFile(out)));
  ASSERT_GE(polls.reports.size(), 2u);
  const std::string& r = polls.reports.back();
  EXPECT_EQ(r.substr(0, r.find("Job summary")),
            "NCCL version 2.26.2 compiled with CUDA 12.8\n"
            "CUDA runtime version 12080, driver version 12080\n\n");
  EXPECT_THAT(r, HasSubstr("Job summary\n===========\n\n"
                           "  Nodes  Processes         GPUs  Processes     GPUs\n"
                           "(total)   per node  per process    (total)  (total)\n"
                           "      4          8            1         32       32\n\n"
                           "Communicators... ("));
  EXPECT_TRUE(
      std::regex_search(r, std::regex(R"(Communicators\.\.\. \(\d\.\d\ds\)\n=============\n\n)")));
  EXPECT_THAT(
      r, HasSubstr("Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
                   "    #  in group  per comm  per node  per comm  in group\n"
                   "    0         1         4         8        32        32   RUNNING  MISMATCH\n"
                   "    1         1         4         8        32        32   RUNNING      OK\n"
                   "\nErrors\n======\n\nWarnings\n========\n\n#0-0 ("));
  // The DP communicator: 31 ranks entered the next all-reduce, the hung one is named alone; the
  // 31 are counted, not listed (more than 10).
  const std::string mismatch = Section(r, "#0-0 (");
  EXPECT_THAT(
      mismatch,
      HasSubstr(") MISMATCH\n  Communicator ranks have different AllReduce operation counts\n"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(mismatch, m,
                                std::regex(R"(  31 ranks have launched up to operation (\d+)\n)")));
  const int ahead = std::stoi(m[1]);
  EXPECT_THAT(mismatch, HasSubstr("  Rank 13 has launched up to operation " +
                                  std::to_string(ahead - 1) + " -- GPU 5 managed by process "));
  EXPECT_THAT(mismatch, HasSubstr(" on node 10.64.0.2\n"));
  std::size_t named = 0;
  for (std::size_t at = mismatch.find("\n  Rank "); at != std::string::npos;
       at = mismatch.find("\n  Rank ", at + 1)) {
    ++named;
  }
  EXPECT_EQ(named, 1u);
}

TEST(NcclRasReports, Release224CountsAllCollectivesAsOneAndRelease229PrintsMilliseconds) {
  const fs::path old_out = FreshDir("old");
  MustSimulate(MustParse(Scenario(kHang, "2.24.3", "nccl_ras { every_s: 30 queries: 1 }")),
               old_out);
  const Polls old_polls = Split(ReadAll(RasFile(old_out)));
  ASSERT_EQ(old_polls.reports.size(), 1u);
  const std::string& r = old_polls.reports[0];
  EXPECT_THAT(r, HasSubstr("NCCL version 2.24.3 compiled with CUDA 12.6\n"));
  EXPECT_THAT(r, HasSubstr("  Communicator ranks have different collective operation counts\n"));
  EXPECT_THAT(r, Not(HasSubstr("AllReduce operation counts")));
  EXPECT_THAT(r, HasSubstr("  Rank 13 has launched up to operation "));
  EXPECT_TRUE(std::regex_search(r, std::regex(R"(Communicators\.\.\. \(\d\.\d\ds\))")));

  const fs::path new_out = FreshDir("new");
  MustSimulate(MustParse(Scenario(kHang, "2.29.2", "nccl_ras { every_s: 30 queries: 1 }")),
               new_out);
  EXPECT_TRUE(std::regex_search(ReadAll(RasFile(new_out)),
                                std::regex(R"(Communicators\.\.\. \(\d\.\d\d\ds\))")));
}

TEST(NcclRasReports, AKilledRanksProcessIsDeadAndItsRanksMissing) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(Scenario(kKill, "2.26.2", "nccl_ras { every_s: 20 }", "LAUNCHER_SRUN")),
               out);
  const Polls polls = Split(ReadAll(RasFile(out)));
  ASSERT_FALSE(polls.reports.empty());
  const std::string& r = polls.reports.back();
  EXPECT_THAT(
      r, HasSubstr("DEAD\n  1 job process is considered dead (unreachable via the RAS network)\n"
                   "  Process "));
  EXPECT_THAT(r, HasSubstr(" on node 10.64.0.2 managing GPU 5\n"));
  EXPECT_THAT(r, HasSubstr("INCOMPLETE\n  Missing communicator data from 1 rank\n  Rank 13 -- GPU "
                           "5 managed by process "));
  EXPECT_THAT(r, HasSubstr("   RUNNING  INCOMPLETE"));
}

// One communicator of a JSON report.
struct JsonComm {
  int size = 0;
  std::map<int, std::array<std::uint64_t, 5>> ranks;  // comm rank -> counts
  std::map<int, bool> missing;                        // comm rank -> considered_dead
};

// The document's communicators; ok false when it does not parse.
std::vector<JsonComm> ReadJson(const std::string& doc, bool* ok) {
  std::vector<JsonComm> comms;
  JsonReader j(doc);
  *ok = j.BeginObject();
  auto read_rank = [&](JsonComm& c, bool missing) {
    int rank = -1;
    std::array<std::uint64_t, 5> counts{};
    bool dead = false;
    j.BeginObject();
    while (auto k = j.NextKey()) {
      if (*k == "rank") {
        rank = static_cast<int>(j.Count().value_or(0));
      } else if (*k == "collective_counts") {
        j.BeginObject();
        int f = 0;
        while (j.NextKey()) counts[static_cast<std::size_t>(f++ % 5)] = j.Count().value_or(0);
      } else if (*k == "status" && missing) {
        j.BeginObject();
        while (auto s = j.NextKey()) {
          const auto t = j.Token();
          if (*s == "considered_dead") dead = t == "true";
        }
      } else {
        j.Skip();
      }
    }
    if (missing) {
      c.missing[rank] = dead;
    } else {
      c.ranks[rank] = counts;
    }
  };
  while (auto key = j.NextKey()) {
    if (*key != "communicators") {
      j.Skip();
      continue;
    }
    j.BeginArray();
    while (j.NextElement()) {
      JsonComm& c = comms.emplace_back();
      j.BeginObject();
      while (auto k = j.NextKey()) {
        if (*k == "size") {
          c.size = static_cast<int>(j.Count().value_or(0));
        } else if (*k == "ranks" || *k == "missing_ranks") {
          j.BeginArray();
          while (j.NextElement()) read_rank(c, *k == "missing_ranks");
        } else {
          j.Skip();
        }
      }
    }
  }
  *ok = *ok && j.ok() && j.AtEnd();
  return comms;
}

// 2.28.7/2.28.9's missing comma, put back as the engine does.
std::string Repaired(const std::string& doc) {
  return std::regex_replace(doc, std::regex(R"(("nvml_dev": \d+)\n(\s+"status"))"), "$1,\n$2");
}

TEST(NcclRasReports, JsonHasEveryRankAndOnly2289LacksTheComma) {
  const fs::path fixed = FreshDir("fixed");
  MustSimulate(
      MustParse(Scenario(kKill, "2.29.2", "nccl_ras { every_s: 20 format: NCCL_RAS_FORMAT_JSON }",
                         "LAUNCHER_SRUN")),
      fixed);
  const Polls polls = Split(ReadAll(RasFile(fixed)));
  ASSERT_FALSE(polls.reports.empty());
  bool ok = false;
  const std::vector<JsonComm> comms = ReadJson(polls.reports.back(), &ok);
  ASSERT_TRUE(ok) << polls.reports.back().substr(0, 400);
  ASSERT_FALSE(comms.empty());
  bool world_seen = false;
  for (const JsonComm& c : comms) {
    EXPECT_EQ(static_cast<int>(c.ranks.size() + c.missing.size()), c.size);
    if (c.size != 32) continue;
    world_seen = true;
    ASSERT_EQ(c.missing.size(), 1u);
    EXPECT_EQ(c.missing.begin()->first, 13);
    EXPECT_TRUE(c.missing.begin()->second);  // considered dead
  }
  EXPECT_TRUE(world_seen);
  EXPECT_THAT(polls.reports.back(), Not(HasSubstr("\"nvml_dev\": 5\n")));
  EXPECT_THAT(polls.reports.back(), HasSubstr("\"nccl_version\": \"2.29.2\",\n"));

  const fs::path broken = FreshDir("broken");
  MustSimulate(
      MustParse(Scenario(kKill, "2.28.9", "nccl_ras { every_s: 20 format: NCCL_RAS_FORMAT_JSON }",
                         "LAUNCHER_SRUN")),
      broken);
  const std::string doc = Split(ReadAll(RasFile(broken))).reports.back();
  EXPECT_THAT(doc, HasSubstr("          \"nvml_dev\": 5\n          \"status\": {\n"));
  ReadJson(doc, &ok);
  EXPECT_FALSE(ok);
  const std::vector<JsonComm> repaired = ReadJson(Repaired(doc), &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(repaired.size(), comms.size());
}

TEST(NcclRasReports, TheMismatchedRankHasAnotherTypesCount) {
  const fs::path out = FreshDir();
  MustSimulate(MustParse(Scenario("kind: FAULT_KIND_COLLECTIVE_MISMATCH rank: 13 variant: 0",
                                  "2.26.2", "nccl_ras { every_s: 30 queries: 1 }")),
               out);
  const std::string r = Split(ReadAll(RasFile(out))).reports.at(0);
  EXPECT_THAT(r,
              HasSubstr("  Communicator ranks have different AllGather operation counts\n"
                        "  31 ranks have not launched any operations\n"
                        "  Rank 13 has launched up to operation 1 -- GPU 5 managed by process "));
  EXPECT_THAT(r, HasSubstr("  Communicator ranks have different AllReduce operation counts\n"));
}

TEST(NcclRasReports, SameSeedSameBytesAndTheFileTimeIsItsLastPoll) {
  const std::string text = Scenario(kHang, "2.28.9", "nccl_ras { every_s: 45 verbose: true }");
  const fs::path a = FreshDir("a"), b = FreshDir("b");
  MustSimulate(MustParse(text), a);
  MustSimulate(MustParse(text), b);
  const std::string bytes = ReadAll(RasFile(a));
  EXPECT_EQ(bytes, ReadAll(RasFile(b)));
  const Polls polls = Split(bytes);
  ASSERT_FALSE(polls.stamps.empty());
  const auto last = ParseRfc3339(polls.stamps.back());
  ASSERT_TRUE(last.has_value());
  struct stat st {};
  ASSERT_EQ(::stat(RasFile(a).c_str(), &st), 0);
  EXPECT_EQ(static_cast<TimeNs>(st.st_mtim.tv_sec), *last / kNsPerSec);
}

TEST(NcclRasReports, WithoutThePollerNothingChanges) {
  const fs::path with = FreshDir("with"), without = FreshDir("without");
  MustSimulate(MustParse(Scenario(kHang, "2.26.2", "nccl_ras { every_s: 30 }")), with);
  MustSimulate(MustParse(Scenario(kHang, "2.26.2", "")), without);
  EXPECT_FALSE(fs::exists(RasFile(without)));
  std::map<std::string, std::string> polled = ReadTree(with / "incident");
  ASSERT_EQ(polled.erase("gpu-0001/ncclras.log"), 1u);
  EXPECT_EQ(polled, ReadTree(without / "incident"));
  EXPECT_EQ(ReadAll(with / "truth.json"), ReadAll(without / "truth.json"));
}

TEST(NcclRasReports, RasNeedsNccl224AndJsonNeeds2287) {
  auto old = ParseScenario(Scenario(kHang, "2.21.5", "nccl_ras { }"), "ras.textproto");
  ASSERT_FALSE(old.ok());
  EXPECT_THAT(old.status().message(), HasSubstr("NCCL RAS (ncclras) came with NCCL 2.24"));
  auto json = ParseScenario(Scenario(kHang, "2.26.2", "nccl_ras { format: NCCL_RAS_FORMAT_JSON }"),
                            "ras.textproto");
  ASSERT_FALSE(json.ok());
  EXPECT_THAT(json.status().message(), HasSubstr("`ncclras -f json` came with NCCL 2.28.7"));
  EXPECT_TRUE(ParseScenario(Scenario(kHang, "2.28.9", "nccl_ras { format: NCCL_RAS_FORMAT_JSON }"),
                            "ras.textproto")
                  .ok());
}

// A hand-made poll of a 2-node, 16-rank data-parallel job, read by the formatter alone: the
// whole text report, byte for byte as client_support.cc lays it out.
Job SixteenRanks() {
  return Job::Build(MustParse("job { nodes: 2 tp: 1 pp: 1 }\nfaults { kind: FAULT_KIND_HANG }"), 1);
}

NcclRasReport Poll(const Job& job, int behind, int dead) {
  NcclRasReport r{job.start + 90 * kNsPerSec};
  r.process.assign(16, RasProcess::kRunning);
  r.counts.assign(16 * kNumPgKinds, RasCounts{});
  for (int g = 0; g < 16; ++g) {
    r.counts[g * kNumPgKinds + static_cast<int>(PgKind::kDefault)][4] = 1;  // the barrier
    r.counts[g * kNumPgKinds + static_cast<int>(PgKind::kData)][4] = g == behind ? 41 : 42;
  }
  if (dead >= 0) r.process[static_cast<std::size_t>(dead)] = RasProcess::kDead;
  return r;
}

constexpr NcclProfile Profile(std::string_view name, std::string_view banner) {
  return {.name = name,
          .supported = true,
          .version_banner = banner,
          .net_plugin = "",
          .p2p_transport = "",
          .cuda_driver = 12090,
          .line_socket_progress_error = 0};
}

TEST(NcclRasText, WholeReportOfALoneRankBehind) {
  const Job job = SixteenRanks();
  const NcclRasFormatter f(job, *FindNcclProfile("2.26.2"));
  const std::string text = f.Text(Poll(job, 11, -1));
  const std::string pid = std::to_string(job.worker_pid[11]);
  const std::size_t table = text.find("Group ");
  ASSERT_NE(table, std::string::npos);
  EXPECT_EQ(text.substr(0, text.find("Communicators...")),
            "NCCL version 2.26.2 compiled with CUDA 12.8\n"
            "CUDA runtime version 12080, driver version 12080\n\n"
            "Job summary\n===========\n\n"
            "  Nodes  Processes         GPUs  Processes     GPUs\n"
            "(total)   per node  per process    (total)  (total)\n"
            "      2          8            1         16       16\n\n");
  const std::string rest = text.substr(table);
  const std::string hash = rest.substr(rest.find("#0-0 (") + 6, 16);
  EXPECT_EQ(rest,
            "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
            "    #  in group  per comm  per node  per comm  in group\n"
            "    0         1         2         8        16        16   RUNNING  MISMATCH\n"
            "    1         1         2         8        16        16   RUNNING      OK\n"
            "\nErrors\n======\n\n"
            "Warnings\n========\n\n"
            "#0-0 (" +
                hash +
                ") MISMATCH\n"
                "  Communicator ranks have different AllReduce operation counts\n"
                "  15 ranks have launched up to operation 42\n"
                "  Rank 11 has launched up to operation 41 -- GPU 3 managed by process " +
                pid + " on node 10.64.0.2\n\n");
}

TEST(NcclRasText, DeadProcessAnd224Wording) {
  const Job job = SixteenRanks();
  const NcclRasFormatter f(job, *FindNcclProfile("2.24.3"));
  const std::string text = f.Text(Poll(job, -1, 4));
  const std::string pid = std::to_string(job.worker_pid[4]);
  EXPECT_THAT(
      text, HasSubstr("\nErrors\n======\n\n"
                      "DEAD\n  1 job process is considered dead (unreachable via the RAS network)\n"
                      "  Process " +
                      pid + " on node 10.64.0.1 managing GPU 4\n\n#0-0 ("));
  EXPECT_THAT(text, HasSubstr(") INCOMPLETE\n  Missing communicator data from 1 rank\n  The "
                              "missing rank: 4\n\n#0-1 ("));
  EXPECT_THAT(text, HasSubstr("   RUNNING  INCOMPLETE\n"));
  EXPECT_THAT(text, Not(HasSubstr("MISMATCH")));  // the others agree
}

TEST(NcclRasJson, OnlyReleases2287And2289LackTheComma) {
  const Job job = SixteenRanks();
  for (const auto& [name, banner, broken] :
       {std::tuple{"2.28.7", "NCCL version 2.28.7+cuda12.9", true},
        std::tuple{"2.28.9", "x+cuda12.9", true}, std::tuple{"2.29.2", "x+cuda12.9", false}}) {
    const NcclProfile profile = Profile(name, banner);
    const std::string doc = NcclRasFormatter(job, profile).Json(Poll(job, 11, 4));
    EXPECT_EQ(doc.find("\"nvml_dev\": 4\n") != std::string::npos, broken) << name;
    bool ok = false;
    const std::vector<JsonComm> comms = ReadJson(broken ? Repaired(doc) : doc, &ok);
    EXPECT_TRUE(ok) << name;
    ASSERT_EQ(comms.size(), 2u) << name;  // the world and the DP communicator, both 16 ranks
    for (const JsonComm& c : comms) {
      EXPECT_EQ(c.ranks.size(), 15u);
      EXPECT_EQ(c.missing.size(), 1u);
      EXPECT_TRUE(c.missing.at(4));
    }
    EXPECT_EQ(comms[0].ranks.count(11) + comms[1].ranks.count(11), 2u);
    ReadJson(doc, &ok);
    EXPECT_EQ(ok, !broken) << name;
  }
}

}  // namespace
}  // namespace denpex::sim
