// The world size the logs state (analyze/world_size.h): a job whose highest rank stopped with
// its node's logs missing is not taken for a complete, smaller one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "analyze/world_size.h"
#include "denpex/engine/engine.h"
#include "diagnose_dir.h"
#include "fixture.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::DiagnoseDir;
using testing::TempDir;
using testing::Write;

// torchrun's rendezvous result (LOGLEVEL=INFO), torch 2.1's header, for a node of one worker.
std::string RendezvousResult(int rank, int world) {
  const std::string w = std::to_string(world), r = std::to_string(rank);
  return "[2026-03-02 09:00:00,522] torch.distributed.elastic.agent.server.api: [INFO] [default] Rendezvous complete for "
         "workers. Result:\n"
         "  restart_count=0\n  master_addr=gpu-0001\n  master_port=29500\n  group_rank=" + r + "\n  group_world_size=" + w +
         "\n  local_ranks=[0]\n  role_ranks=[" + r + "]\n  global_ranks=[" + r + "]\n  role_world_sizes=[" + w +
         "]\n  global_world_sizes=[" + w + "]\n\n";
}

// A pure data-parallel pipeline of one worker per node; the highest rank hangs silently and its
// node's files are gone. `stated`: the world size the agents' rendezvous results state (0: none).
void WriteJob(const fs::path& dir, const std::vector<int>& stated) {
  const testing::Job job{.nodes = 8, .gpus = 1, .tp = 1, .pp = 2, .dp = 4};
  testing::WriteIncident(dir, {.job = job, .fault = testing::Fault::kHang, .initiator = 7});
  fs::remove_all(dir / job.Host(7));
  for (std::size_t n = 0; n < stated.size(); ++n) {
    const fs::path agent = dir / job.Host(static_cast<int>(n)) / "torchrun.log";
    Write(agent, RendezvousResult(static_cast<int>(n), stated[n]) + testing::Slurp(agent));
  }
}

TEST(WorldSize, GlobalWorldSizesIsReadFromTheRendezvousResult) {
  EXPECT_EQ(GlobalWorldSizes("\n  role_world_sizes=[16, 16]\n  global_world_sizes=[16, 16]\n\n"), 16);
  // A Kubernetes pod log's container timestamps before every line.
  EXPECT_EQ(GlobalWorldSizes("\n2026-03-02T09:00:00.5Z   global_world_sizes=[2048]\n"), 2048);
  EXPECT_EQ(GlobalWorldSizes("\n  role_world_sizes=[16, 16]\n  global_world_sizes=[16, 8]\n"), 0);  // they differ
  EXPECT_EQ(GlobalWorldSizes("\n  role_world_sizes=[16, 16]\n\n[2026-03-02 ...] Starting worker group\n"), 0);
  EXPECT_EQ(GlobalWorldSizes("\n  global_world_sizes=[16, \n"), 0);  // cut short
}

// No statement: the data-parallel groups of both pipeline stages (ranks 0,2,4,6 and 1,3,5,7)
// still show, by where they start, that their size is 4, so rank 7 exists (groups.cc TiledSize).
TEST(WorldSize, WithoutAStatedSizeTheGroupsStillShowTheMissingHighestRank) {
  TempDir dir;
  WriteJob(dir.path(), {});
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.input().ranks_seen(), 7);
  EXPECT_EQ(d.input().world_size(), 8);
  EXPECT_EQ(d.initiator().rank(), 7) << d.reason();
}

TEST(WorldSize, TheStatedSizeFindsTheSilentHighestRankWhoseNodeLeftNoLogs) {
  TempDir dir;
  WriteJob(dir.path(), {8, 8, 8});
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.input().world_size(), 8);
  EXPECT_EQ(d.input().ranks_seen(), 7);
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().rank(), 7);
  EXPECT_THAT(d.input().problems(), ::testing::Contains(HasSubstr("no line names rank 7 (their node's logs are missing")));
}

TEST(WorldSize, ContradictingStatementsAreReportedAndNotUsed) {
  TempDir dir;
  WriteJob(dir.path(), {8, 8, 16});  // first and last agent disagree (an elastic restart?)
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.input().world_size(), 8);  // from the groups' members, not from either statement
  EXPECT_THAT(d.input().problems(), ::testing::Contains(HasSubstr("the logs state different world sizes, 8 by torchrun")));
}

TEST(WorldSize, AStatedSizeBelowTheRanksSeenIsReportedAndNotUsed) {
  TempDir dir;
  WriteJob(dir.path(), {4});
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.input().world_size(), 8);  // from the groups' members, not from the statement
  EXPECT_THAT(d.input().problems(), ::testing::Contains(HasSubstr("below rank 6 logged: not used")));
}

TEST(WorldSize, NcclsLargestCommunicatorBoundsTheWorldFromBelow) {
  TempDir dir;
  WriteJob(dir.path(), {});
  Write(dir.path() / "gpu-0001" / "rank_0.log",
        "gpu-0001:2246420:2246420 [0] NCCL INFO comm 0x55e3a1c2b7d0 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 1b000 "
        "commId 0x8c1f0e2d3b4a5968 - Init COMPLETE\n" +
            testing::Slurp(dir.path() / "gpu-0001" / "rank_0.log"));
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.input().world_size(), 8);
  EXPECT_EQ(d.initiator().rank(), 7) << d.reason();
}

// Without any statement of the world size (torchrun at its default log level, no NCCL INFO) the
// top node's ranks are still members of their peers' process groups: Megatron's data-parallel
// groups of every stage start a block of stride x size ranks apart, so the groups' size is 4
// (not the 3 members heard from) and the ranks above 13 exist: the wait-for graph then finds
// the one its peers waited on, instead of a logged rank.
TEST(WorldSize, TheGroupsBlocksShowTheTopNodesRanksWithoutAStatedSize) {
  TempDir dir;
  const testing::Job job{.nodes = 8, .gpus = 2, .tp = 2, .pp = 2, .dp = 4};
  testing::WriteIncident(dir.path(), {.job = job, .fault = testing::Fault::kHang, .initiator = 15});
  fs::remove_all(dir.path() / job.Host(7));
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.input().ranks_seen(), 14);
  EXPECT_EQ(d.input().world_size(), 16);
  EXPECT_EQ(d.initiator().rank(), 15) << d.reason();
}

// Ranks that only the groups' members add (no statement, no node) and that nothing tells
// apart: the engine abstains among them, saying where they come from.
TEST(WorldSize, TiedRanksTheGroupsAddAreNamedAsNeverHeardFrom) {
  TempDir dir;
  const testing::Job job{.nodes = 4, .gpus = 4, .tp = 4, .pp = 2, .dp = 2};
  testing::WriteIncident(dir.path(), {.job = job, .fault = testing::Fault::kHang, .initiator = 15});
  fs::remove_all(dir.path() / job.Host(3));
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_EQ(d.input().world_size(), 16);
  EXPECT_EQ(d.verdict(), v1::VERDICT_INCONCLUSIVE) << d.reason();
  EXPECT_THAT(d.reason(), HasSubstr("were never heard from (their peers' process groups name them as members"));
  for (const auto& c : d.candidates()) EXPECT_GE(c.rank(), 12) << d.reason();
}

// Megatron's arguments line (rank 0's stdout) and Slurm's task count in an `env` dump are
// statements of the world size, read off the parse from the heads of rank 0's and launcher files.
TEST(WorldSize, MegatronsAndSlurmsStatementsAreRead) {
  for (const auto& [line, source] : std::vector<std::pair<std::string, std::string>>{
           {"using world size: 8, data-parallel size: 4, context-parallel size: 1, tensor-model-parallel size: 1, "
            "pipeline-model-parallel size: 2 \n",
            "Megatron's arguments (using world size)"},
           {"SLURM_NTASKS=8\n", "Slurm's task count (SLURM_NTASKS)"}}) {
    TempDir dir;
    WriteJob(dir.path(), {});
    const fs::path rank0 = dir.path() / "gpu-0001" / "rank_0.log";
    Write(rank0, line + testing::Slurp(rank0));
    const v1::Diagnosis d = DiagnoseDir(dir.path());
    EXPECT_EQ(d.input().world_size(), 8) << source;
    EXPECT_EQ(d.initiator().rank(), 7) << d.reason();
    EXPECT_THAT(d.input().problems(), ::testing::Contains(HasSubstr("world size 8 as " + source + " (gpu-0001/rank_0.log:1)")));
  }
}

TEST(WorldSize, AMegatronStatementAgainstTheRendezvousIsAConflict) {
  TempDir dir;
  WriteJob(dir.path(), {8, 8, 8});
  const fs::path rank0 = dir.path() / "gpu-0001" / "rank_0.log";
  Write(rank0, "using world size: 16, data-parallel size: 8, tensor-model-parallel size: 1, pipeline-model-parallel size: 2 \n" +
                   testing::Slurp(rank0));
  const v1::Diagnosis d = DiagnoseDir(dir.path());
  EXPECT_THAT(d.input().problems(), ::testing::Contains(HasSubstr("the logs state different world sizes, 8 by torchrun")));
  EXPECT_THAT(d.input().problems(), ::testing::Contains(HasSubstr("16 by Megatron's arguments (using world size) (gpu-0001/rank_0.log:1)")));
}

}  // namespace
}  // namespace denpex::engine
