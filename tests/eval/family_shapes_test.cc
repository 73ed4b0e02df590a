// Family scenarios re-laid in collection shapes (cli/src/shapes/, docs/evaluation.md "Collection
// shapes"): the (scenario, shape) pairs the family sweep found committing a wrong answer, each
// simulated at 8 nodes (the same layout and line shapes as the suite's 1k-8k-rank jobs), re-laid,
// diagnosed and compared with the truth and the canonical answer by the scorer. A copy's answer
// may be coarser or INCONCLUSIVE where the shape destroyed evidence; never wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "denpex/engine/engine.h"
#include "denpex/scorer/scorer.h"
#include "denpex/sim/simulator.h"
#include "fixture.h"
#include "shapes/shapes.h"

namespace denpex {
namespace {
namespace fs = std::filesystem;
using engine::testing::TempDir;

struct Pair {
  const char* scenario;  // under scenarios/families/
  const char* shape;
  const char* why;       // what went wrong before
};

v1::Diagnosis DiagnoseOk(const fs::path& dir) {
  auto d = engine::Diagnose(dir, {.threads = 1});
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.ok() ? *d : v1::Diagnosis();
}

// `consistent`: nor `differs` either (another owner, a rank where the canonical answer gave a node).
void ExpectNotWrong(const Pair& p, const std::vector<std::string>& overrides = {"job.nodes=8"}, bool consistent = false) {
  SCOPED_TRACE(std::string(p.scenario) + " [" + p.shape + "]: " + p.why);
  auto scenario = sim::LoadScenario(fs::path(DENPEX_SOURCE_DIR) / "scenarios/families" / p.scenario, overrides);
  ASSERT_TRUE(scenario.ok()) << scenario.status().message();
  TempDir tmp;
  auto sim = sim::Simulate(*scenario, {.out_dir = tmp.path() / "sim"});
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  const fs::path incident = tmp.path() / "sim" / "incident";
  const v1::Diagnosis canonical = DiagnoseOk(incident);
  const cli::shapes::Shape* shape = cli::shapes::FindShape(p.shape);
  ASSERT_NE(shape, nullptr);
  auto relaid = cli::shapes::Relay(*shape, incident, sim->truth, tmp.path() / "copy");
  ASSERT_TRUE(relaid.ok()) << relaid.status().message();
  ASSERT_TRUE(relaid->applies);
  const v1::Diagnosis copy = DiagnoseOk(tmp.path() / "copy");
  const v1::ShapeResult r = scorer::CompareShape(sim->truth, canonical, copy, relaid->node_aliases);
  EXPECT_NE(r.outcome(), v1::SHAPE_OUTCOME_WRONG)
      << "truth " << scorer::ShapeAnswerText(r.truth()) << "; canonical " << scorer::ShapeAnswerText(r.canonical()) << "; copy "
      << scorer::ShapeAnswerText(r.answer()) << "\n"
      << copy.reason();
  if (consistent) {
    EXPECT_NE(r.outcome(), v1::SHAPE_OUTCOME_DIFFERS)
        << "canonical " << scorer::ShapeAnswerText(r.canonical()) << "; copy " << scorer::ShapeAnswerText(r.answer()) << "\n"
        << copy.reason();
  }
}

TEST(FamilyShapes, AnUntimedCudaErrorUnderSrunKeepsItsXidWhenTheLogsAreMergedOrPasted) {
  for (const char* shape : {"merged", "interleaved", "paste"}) {
    ExpectNotWrong({"xid_fallen_off_bus_2048_srun_torch113.textproto", shape,
                    "a foreign borrowed stamp timed the stall, or the pasted slurmctld.log was not read: CUDA_ERROR"});
  }
}

TEST(FamilyShapes, AnAmbiguousCudaErrorIsNotTheApplicationsWhenTheNodesKernelLogIsGoneOrShared) {
  for (const char* shape : {"same-host", "victims-only"}) {
    ExpectNotWrong({"xid_fallen_off_bus_2048_srun_torch113.textproto", shape, "`unknown error` taken for the application's"});
  }
}

TEST(FamilyShapes, AnotherJobsXidOnASharedNodeIsNotTheKilledRanks) {
  ExpectNotWrong({"sigkill_2048_srun_torch24_dump_from_rank.textproto", "shared-daemons",
                  "another job's Xid 79 taken as the only GPU with an initiating Xid"});
}

TEST(FamilyShapes, AMergedSrunLogsOneRankPrefixDoesNotPlaceOtherNodesLinesOnThatRank) {
  for (const char* shape : {"merged", "interleaved"}) {
    ExpectNotWrong({"exception_4096_srun_kill_on_bad_exit.textproto", shape,
                    "the one [rank16] prefix of the merged file gave every kernel line rank 16: right rank, wrong node"});
  }
}

TEST(FamilyShapes, ARayNodesDeathNamesTheDeadNodeInAMergedLog) {
  for (const char* shape : {"merged", "interleaved"}) {
    ExpectNotWrong({"ray_node_death_2048.textproto", shape,
                    "the actor's and the GCS's ip= took the merged file's node (the driver's): another node lost"});
  }
}

TEST(FamilyShapes, ATorchrunLogDirUnderOpaqueNamesIsItsNodesWhoseKernelLogNamesIt) {
  ExpectNotWrong({"xid_nvlink_2048_logdir_driver560.textproto", "renamed",
                  "the deepest opaque folder (a local rank's) taken as the rank's node"});
}

TEST(FamilyShapes, AnotherNodesNotRespondingInASharedSlurmctldLogIsNotTheJobsNodeFailure) {
  ExpectNotWrong({"slow_nic_2048_srun_warn.textproto", "shared-daemons",
                  "with no allocation of the job known, cn-0417's `not responding` was taken as the job's node failure"});
}

TEST(FamilyShapes, ARotatedRankLogIsReadInItsStreamsOrderForTheRanksFirstError) {
  const std::vector<std::string> pinned{"job.nodes=8", "job.dp=0", "faults[0].kind=FAULT_KIND_PINNED_OOM"};
  ExpectNotWrong({"../smoke/sigkill_4096.textproto", "rotated",
                  "the live piece's events came first: the CUDA OOM under the pin-memory error was taken as the rank's own"},
                 pinned);
}

TEST(FamilyShapes, APastedTimerLineCutBeforeItsSeparatorIsJoinedBack) {
  ExpectNotWrong({"straggler_1024_pcie_x4_dcgm_diag.textproto", "paste",
                  "a DeepSpeed timer line cut before ` | bwd_inner` read as a table row: no allreduce time, a false straggler"});
}

TEST(FamilyShapes, KubernetesPodLogsUnderAnOpaqueFolderAndOtherPodsEventsKeepTheAnswer) {
  for (const char* shape : {"renamed", "shared-daemons"}) {
    ExpectNotWrong({"k8s_hang_4096_jobset_torch26.textproto", shape,
                    "the opaque pods/ folder taken as one node; another pod's Evicted row taken as the job's"});
  }
}

TEST(FamilyShapes, ACollectionInATicketsFolderKeepsTheAnswerOfEveryLauncher) {
  for (const char* scenario :
       {"sigsegv_2048_srun.textproto", "exception_1024_pdsh.textproto",
        "sigsegv_1024_mpirun.textproto", "k8s_restart_sigsegv_1024_jobset.textproto"}) {
    ExpectNotWrong({scenario, "nested",
                    "the folder above the collection taken as one node: every line of the job's "
                    "console (srun, "
                    "pdsh, mpirun) or of the pods' logs placed on it"},
                   {"job.nodes=8"}, true);
  }
}

// A shape's copy put into a ticket's folder and diagnosed from above it gives the copy's answer:
// the one merged file of every node's lines, which names one host only in some jobs, makes no
// folder that host's, and its lines stay each their own host's.
TEST(FamilyShapes, AShapesCopyInATicketsFolderGivesTheCopysAnswer) {
  for (const auto& [scenario, shape] : std::vector<std::pair<const char*, const char*>>{
           {"hang_8192_srun_torch21.textproto", "merged"},
           {"straggler_1024_torchrun.textproto", "merged"},
           {"sigsegv_2048_srun.textproto", "flat"}}) {
    SCOPED_TRACE(std::string(scenario) + " [" + shape + "] in a folder");
    const std::vector<std::string> overrides = {"job.nodes=8"};
    auto loaded =
        sim::LoadScenario(fs::path(DENPEX_SOURCE_DIR) / "scenarios/families" / scenario, overrides);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    TempDir tmp;
    auto sim = sim::Simulate(*loaded, {.out_dir = tmp.path() / "sim"});
    ASSERT_TRUE(sim.ok()) << sim.status().message();
    auto relaid =
        cli::shapes::Relay(*cli::shapes::FindShape(shape), tmp.path() / "sim" / "incident",
                           sim->truth, tmp.path() / "copy");
    ASSERT_TRUE(relaid.ok()) << relaid.status().message();
    fs::create_directories(tmp.path() / "above");
    fs::copy(tmp.path() / "copy", tmp.path() / "above" / "INC-9", fs::copy_options::recursive);
    const v1::Diagnosis copy = DiagnoseOk(tmp.path() / "copy");
    const v1::Diagnosis above = DiagnoseOk(tmp.path() / "above");
    EXPECT_EQ(above.verdict(), copy.verdict());
    EXPECT_EQ(above.initiator().rank(), copy.initiator().rank());
    EXPECT_EQ(above.initiator().node(), copy.initiator().node()) << above.reason();
    EXPECT_EQ(above.initiator().local_rank(), copy.initiator().local_rank());
    EXPECT_EQ(above.initiator().failure_class(), copy.initiator().failure_class());
  }
}

TEST(FamilyShapes, RayWorkersKeepTheirRanksBehindCollectorPrefixesAndRotation) {
  for (const char* shape : {"cri", "journald", "kubectl-ts", "paste", "rotated"}) {
    ExpectNotWrong({"ray_hang_8192_torch21.textproto", shape,
                    "the workers' pid prefixes not read behind a stamp: a victim's ActorDiedError taken as the cause"});
  }
}

// Ray Train's worker table at 8k workers (160-168 columns a row, the widest the most numerous)
// was read as a terminal's hard wrap and its rows joined in pairs: the canonical hang was
// INCONCLUSIVE where its merged copy named the truth's rank (`differs`), and a pasted copy of a
// memory-monitor kill took the wrong class.
TEST(FamilyShapes, ARayWorkerTableAtEightThousandWorkersIsReadRowByRow) {
  ExpectNotWrong(
      {"ray_hang_8192_torch21.textproto", "merged", "the canonical worker table read as wrapped"},
      {"seed=34"},
      /*consistent=*/true);
  ExpectNotWrong(
      {"ray_memory_monitor_8192.textproto", "paste", "a Ray tag read as a wrapped piece"},
      {"seed=6"},
      /*consistent=*/true);
}

// A GPU's Xid that cannot be tied to the rank leaves the class of its ambiguous CUDA error open:
// merged (the rank on no node), same-host (one node's files are several machines': two
// CUDA_VISIBLE_DEVICES lists, a UUID on two buses), paste (the UUID list cut by a hard wrap).
TEST(FamilyShapes, AGpuFaultsXidNotTiedToTheRankLeavesItsCudaErrorsClassOpen) {
  for (const char* shape : {"merged", "interleaved"}) {
    ExpectNotWrong({"k8s_restart_xid79_4096_jobset.textproto", shape,
                    "a rank on no node: no kernel log could clear its GPU, yet `unspecified launch failure` was CUDA_ERROR"});
  }
  ExpectNotWrong({"xid_fallen_off_bus_1024_cvd_uuid.textproto", "same-host",
                  "one node of 8 machines: the first CUDA_VISIBLE_DEVICES list mapped the rank to another machine's GPU"});
  ExpectNotWrong({"xid_fallen_off_bus_1024_cvd_uuid.textproto", "paste",
                  "the UUID list cut by the wrap: local rank 7 fell back to nvidia-smi index 7, not its GPU"},
                 {"job.nodes=16"});
}

// Every host named alike: a log dir's stdout.log says only its local rank, which every agent
// has; the (node, local rank) pair two ranks claim gives none, so no other machine's rank is
// named as the link's end.
TEST(FamilyShapes, ALinksEndIsNotAnotherMachinesRankWhenEveryHostIsNamedAlike) {
  for (const char* scenario : {"link_failure_16384_logdir_torch26.textproto", "socket_link_4096_logdir_torch26.textproto"}) {
    ExpectNotWrong({scenario, "same-host", "the first rank that claimed (host-0, local rank L) was given every such line"});
  }
}

// journald stamps the WARNs in whole seconds on arrival: a second apart they do not order the
// link's two ends; the watchdogs' own stamps do.
TEST(FamilyShapes, WholeSecondJournalStampsDoNotOrderALinksEnds) {
  const std::vector<std::string> link{"job.nodes=16", "job.dp=0", "faults[0].kind=FAULT_KIND_LINK_FAILURE"};
  ExpectNotWrong({"../smoke/sigkill_4096.textproto", "journald", "the far end's WARN stamped a whole second earlier"}, link);
}

// A log dir under opaque names: its `<L>/` folder, inside the node's folder, is no node; the
// rank keeps no node from its folder's name when no line names the host.
TEST(FamilyShapes, ALogDirsLocalRankFolderUnderOpaqueNamesIsNoNode) {
  for (const char* scenario : {"straggler_2048_mild_logdir.textproto", "straggler_16384_pcie_x4_logdir_dcgm_diag.textproto"}) {
    ExpectNotWrong({scenario, "renamed", "the opaque name of the `<L>/` folder given as the straggler's node"});
  }
}

// The initiator's node gone: its ranks have no log, so none of them is the sole blocker that
// breaks the tie (its silence is not seen: it may have waited on a tensor-parallel peer whose
// logs are gone too). At the suites' scale (2,048 and 4,096 ranks), where the tie appears.
TEST(FamilyShapes, VictimsOnlyNamesNoRankOfTheNodeWhoseLogsAreGone) {
  ExpectNotWrong({"save_oom_host_2048_deepspeed_torch24.textproto", "victims-only", "rank 6 of the missing node named by the tie-break"},
                 {});
  ExpectNotWrong({"zero_allgather_hang_4096_deepspeed_torch24.textproto", "victims-only",
                  "rank 3546 of the missing node named by the tie-break"},
                 {});
  // torch 2.1's `[Rank N]` lines: 23 of 1,254 timeouts pointed at a logged rank of another node.
  ExpectNotWrong({"k8s_hang_8192_pytorchjob_torch21.textproto", "victims-only", "a rank few timeouts waited on named"}, {});
}

// The skipping rank's node gone: its peers' timeouts alone look like a hang; its class is left
// open (only its own watchdog line would show the collective it issued instead).
TEST(FamilyShapes, VictimsOnlyLeavesTheClassOfASkippedCollectiveOpen) {
  ExpectNotWrong(
      {"skipped_collective_1024_zero.textproto", "victims-only", "the skipping rank named as HANG"},
      {});
}

// A log dir laid out flat: the socket reset's WARN keeps its node but no rank (its `<L>/` folder
// is gone), and a rank that merely stopped participating is not named in its place (8,192
// ranks: smaller jobs showed no such tie).
TEST(FamilyShapes, AnUnrankedSocketResetLeavesNoHungRankNamed) {
  ExpectNotWrong({"socket_reset_16384_logdir_torch26.textproto", "flat", "a rank hung behind the reset named by its stall time"},
                 {"job.nodes=512"});
}

// A pasted mpirun console: 4,096 `--report-bindings` lines before any wrapped one; the wrap width
// is found past them and rank 0's DistStoreError keeps its join counts.
TEST(FamilyShapes, APastedMpirunConsoleKeepsTheStoresJoinCounts) {
  ExpectNotWrong({"store_join_timeout_4096_deepspeed_openmpi.textproto", "paste",
                  "the DistStoreError cut before its counts: a joined rank's store error taken as the cause"},
                 {});
}

// A slow node's ranks merged into one file: the slow ranks are on no node a line names, so one
// slow host and several slow GPUs are not told apart; the answer names neither (coarser), not
// rank 94's GPU.
TEST(FamilyShapes, SlowRanksOnNoKnownNodeAreNotOneGpusFault) {
  for (const char* shape : {"merged", "interleaved"}) {
    ExpectNotWrong({"slow_node_8192_torchrun.textproto", shape, "the lead slow rank's GPU blamed for a whole node's slowness"},
                   {"job.nodes=8"}, true);
  }
}

// Every node's files cut mid-line, the initiator's included: what a cut line lost is not
// evidence in any layout.
TEST(FamilyShapes, ATruncatedLogsCutLinesAreNoEvidenceInAnyLayout) {
  for (const char* shape : {"merged", "flat"}) {
    ExpectNotWrong({"hang_2048_initiator_truncated.textproto", shape,
                    "a rank whose timeout lines were cut (its agent saw it end by SIGABRT) taken for the silent one, "
                    "or a cut `Exception raised from checkTimeout` for the rank's own error"},
                   {"job.nodes=16"});
  }
  ExpectNotWrong({"hang_2048_initiator_truncated.textproto", "cri",
                  "a timeout line cut before its NumelIn read as a collective of another size: COLLECTIVE_MISMATCH"},
                 {"job.nodes=8", "seed=24"});
}

// Every worker raised the same error (DeepSpeed's pipeline config, torch 2.1: no rank on its
// lines), each agent's log dir tree in the one host folder of a job whose hosts are all named
// alike: the errors, counted per log dir tree, come from every agent, so they are the job's, not
// the one host name's node's (at 128 nodes the exit its agent saw first named that node).
TEST(FamilyShapes, TheSameUnrankedErrorFromEveryAgentUnderOneHostNameIsTheJobs) {
  ExpectNotWrong({"deepspeed_zero_pipeline_4096_logdir_torch21.textproto", "same-host",
                  "every agent's log dir tree under one host folder: the job's error named that "
                  "host as the node"},
                 {"job.nodes=128", "seed=275"}, /*consistent=*/true);
}

}  // namespace
}  // namespace denpex
