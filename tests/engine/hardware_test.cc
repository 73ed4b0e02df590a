// Kernel evidence on the initiating rank (analyze/hardware.cc): an Xid burst on its GPU, mapped
// through nvidia-smi or NCCL's busId lines, makes the owner GPU hardware with the catalog's
// recovery and a canary; the OOM killer taking its pid makes it host memory; red herrings (an
// old corrected ECC event, Xid 45 after the kill, an Xid on another GPU) are not blamed.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "analyze/facts.h"
#include "analyze/hardware.h"
#include "denpex/engine/engine.h"
#include "fixture.h"
#include "ingest/chunks.h"
#include "ingest/load.h"
#include "parse/parse_log.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

// The fixture's job: 4 nodes x 8 GPUs; rank 3 (gpu-0001, local rank 3, pid 31243) is
// SIGKILLed at 09:17:03.412 on 2 March.
constexpr const char* kBus[] = {"18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"};

void Append(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::app) << text;
}

std::string Kern(const std::string& stamp, const std::string& msg) {
  return stamp + " gpu-0001 kernel: [2726584.934322] " + msg + "\n";
}

void NvidiaSmi(const fs::path& dir) {
  std::string t =
      "Mon Mar  2 09:28:01 2026       \n"
      "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
      "|=========================================+======================+======================|\n";
  for (int i = 0; i < 8; ++i) {
    t += "|   " + std::to_string(i) + "  NVIDIA H100 80GB HBM3          On  | 00000000:" + kBus[i] +
         ":00.0 Off |                    0 |\n";
    t += "| N/A   33C    P0             113W / 700W |      4MiB / 81559MiB |      0%      Default |\n";
  }
  Append(dir / "gpu-0001" / "nvidia-smi.log", t);
}

struct Job {
  TempDir dir;
  Job() {
    testing::Incident spec;
    testing::WriteIncident(dir.path(), spec);
    // The red herring every node may carry: a corrected row remap days before the job.
    Append(dir.path() / "gpu-0001" / "kern.log",
           Kern("Feb 24 03:12:44", "NVRM: Xid (PCI:0000:18:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row "
                                   "(0x000108e5ac96) marked for remapping, reset gpu to activate."));
  }
  void Kernel(const std::string& stamp, const std::string& msg) const { Append(dir.path() / "gpu-0001" / "kern.log", Kern(stamp, msg)); }
  v1::Diagnosis Run() const {
    auto d = Diagnose(dir.path(), {.threads = 1});
    EXPECT_TRUE(d.ok()) << d.status().message();
    return d.ok() ? *d : v1::Diagnosis();
  }
};

bool Cites(const v1::Diagnosis& d, const std::string& text, v1::EvidenceRole role) {
  for (const auto& e : d.evidence()) {
    if (e.text().find(text) != std::string::npos && e.role() == role) return true;
  }
  return false;
}

bool HasAction(const v1::Diagnosis& d, const std::string& action) {
  for (const auto& p : d.recovery().preconditions()) {
    if (p.action() == action) return true;
  }
  return false;
}

TEST(Hardware, EccBurstOnTheInitiatorsGpuIsGpuHardwareWithTheCatalogsRecovery) {
  Job job;
  NvidiaSmi(job.dir.path());
  job.Kernel("Mar  2 09:17:03", "NVRM: GPU at PCI:0000:5d:00: GPU-6fb75e7b-b3ce-ded9-59c5-ef768292bb4f");
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit "
                                "error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fdb481b7 partition 3, "
                                "subpartition 1");
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row "
                                "(0x000102bbb798) marked for remapping, reset gpu to activate.");
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 95, pid=31243, name=python3, Uncontained: LTC TAG (0x2,0x0). "
                                "RST: Yes, D-RST: No");
  job.Kernel("Mar  2 09:17:04", "NVRM: Xid (PCI:0000:5d:00): 45, pid=31243, name=python3, Ch 00000010");
  job.Kernel("Mar  2 09:17:04", "NVRM: Xid (PCI:0000:5d:00): 154, pid='<unknown>', name=<unknown>, GPU recovery action changed "
                                "from 0x0 (None) to 0x1 (GPU Reset Required)");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_GPU_ECC) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_GPU_HARDWARE);
  EXPECT_TRUE(Cites(d, "): 48, pid=", v1::EVIDENCE_ROLE_INITIATING));
  EXPECT_FALSE(Cites(d, "): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x000108e5ac96)", v1::EVIDENCE_ROLE_INITIATING));
  ASSERT_GE(d.recovery().preconditions_size(), 2);
  EXPECT_EQ(d.recovery().preconditions(0).action(), "reset_gpu");
  EXPECT_NE(d.recovery().preconditions(0).text().find("GPU Reset Required"), std::string::npos);
  EXPECT_TRUE(HasAction(d, "run_canary"));
  EXPECT_NE(d.reason().find("nvidia-smi index 3"), std::string::npos) << d.reason();
}

// A shared node with no nvidia-smi table: nothing maps rank 3 to its GPU but the driver's Xid 45
// after the kill, which names its pid (31243). Another GPU falling off the bus in the same second
// is another job's, not rank 3's failure.
TEST(Hardware, AnXidNamingTheRanksPidTiesItsGpuSoAnotherGpusXidIsNotIts) {
  Job job;
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:4c:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  job.Kernel("Mar  2 09:17:04", "NVRM: Xid (PCI:0000:5d:00): 45, pid=31243, name=python3, Ch 00000010");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL) << d.reason();
  EXPECT_FALSE(Cites(d, "0000:4c:00", v1::EVIDENCE_ROLE_INITIATING));
}

TEST(Hardware, RowRemapFailureMeansDrainAndRma) {
  Job job;
  NvidiaSmi(job.dir.path());
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 48, pid=31243, An uncorrectable double bit error (DBE) has been "
                                "detected on GPU in the framebuffer at physAddr 0x7fdb481b7 partition 3, subpartition 1");
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 64, pid=31243, Row Remapper: Failed to mark row (0x000102bbb798) "
                                "for remapping, no spare rows left in bank.");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_GPU_ECC);
  ASSERT_GE(d.recovery().preconditions_size(), 1);
  EXPECT_EQ(d.recovery().preconditions(0).action(), "drain_and_rma");
}

TEST(Hardware, FallenOffTheBusMappedByNcclBusIdOn418EraLines) {
  Job job;
  Append(job.dir.path() / "gpu-0001" / "rank_3.log",
         "gpu-0001:31243:31243 [3] NCCL INFO comm 0x55d0c8a4e0 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId 5d000 commId "
         "0x7a1b - Init COMPLETE\n");
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 79, GPU has fallen off the bus.");
  job.Kernel("Mar  2 09:17:03", "NVRM: GPU 0000:5d:00.0: GPU has fallen off the bus.");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_GPU_FALLEN_OFF_BUS) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_GPU_HARDWARE);
  EXPECT_NE(d.reason().find("NCCL busId"), std::string::npos) << d.reason();
  EXPECT_EQ(d.recovery().preconditions(0).action(), "reboot_node");
}

TEST(Hardware, WithoutTopologyTheOnlyGpuWithAnInitiatingXidIsTaken) {
  Job job;
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected on "
                                "link 7");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_GPU_NVLINK) << d.reason();
  EXPECT_NE(d.reason().find("the only GPU"), std::string::npos) << d.reason();
}

// A node shared with another job: another process's MMU fault (Xid 31 naming its pid) on one
// GPU and a GPU lost on another at the moment the rank was killed. With no topology, which GPU
// was the rank's is not known: neither is blamed.
TEST(Hardware, WithoutTopologySeveralGpusWithInitiatingXidsAreNoneTheRanks) {
  Job job;
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:0f:00): 31, pid=3983277, name=python3, Ch 00000010, intr 10000000. MMU Fault: "
                                "ENGINE GRAPHICS GPCCLIENT_T1_13 faulted @ 0x7f4c_a0000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ");
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:4c:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL) << d.reason();
  EXPECT_FALSE(Cites(d, "NVRM", v1::EVIDENCE_ROLE_INITIATING));
}

TEST(Hardware, XidOnAnotherGpuOfTheNodeIsNotTheInitiators) {
  Job job;
  NvidiaSmi(job.dir.path());
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:ab:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
}

TEST(Hardware, Xid45AfterTheKillAndAnOldCorrectedEccEventAreNotBlamed) {
  Job job;
  NvidiaSmi(job.dir.path());
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 45, pid=31243, name=python3, Ch 00000010");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL) << d.reason();
  EXPECT_FALSE(Cites(d, "NVRM", v1::EVIDENCE_ROLE_INITIATING));
}

TEST(Hardware, OomKillerTakingTheRanksPidIsHostMemory) {
  Job job;
  job.Kernel("Mar  2 09:17:03", "python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, "
                                "oom_score_adj=0");
  job.Kernel("Mar  2 09:17:03", "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,"
                                "task_memcg=/user.slice,task=python3,pid=31243,uid=1000");
  job.Kernel("Mar  2 09:17:03", "Out of memory: Killed process 31243 (python3) total-vm:188963166kB, anon-rss:156559720kB, "
                                "file-rss:301234kB, shmem-rss:2097152kB, UID:1000 pgtables:251234kB oom_score_adj:0");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HOST_OOM) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_HOST);
  EXPECT_TRUE(Cites(d, "Out of memory: Killed process 31243", v1::EVIDENCE_ROLE_INITIATING));
  EXPECT_EQ(d.recovery().preconditions(0).action(), "reduce_host_memory");
}

TEST(Hardware, OomKillOfAnotherProcessIsNotTheRanks) {
  Job job;
  job.Kernel("Mar  2 09:17:03", "Out of memory: Killed process 999 (python3) total-vm:1kB, anon-rss:1kB, file-rss:0kB, "
                                "shmem-rss:0kB, UID:0 pgtables:1kB oom_score_adj:0");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL) << d.reason();
}

// The node's launch set CUDA_VISIBLE_DEVICES=4,5,6,7,0,1,2,3: local rank 3 runs on nvidia-smi
// index 7 (0000:db:00). The Xid there is the initiator's; read by index = local rank it would
// be local rank 7's, and the kill stays unexplained.
void RotatedLaunch(const Job& job) {
  Append(job.dir.path() / "gpu-0001" / "torchrun.log", "CUDA_VISIBLE_DEVICES=4,5,6,7,0,1,2,3\n");
}

constexpr const char* kEccOnDb =
    "NVRM: Xid (PCI:0000:db:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been "
    "detected on GPU in the framebuffer at physAddr 0x7fdb481b7 partition 3, subpartition 1";

TEST(Hardware, CudaVisibleDevicesMapsTheXidsBusIdToTheRightLocalRank) {
  Job job;
  NvidiaSmi(job.dir.path());
  RotatedLaunch(job);
  job.Kernel("Mar  2 09:17:03", kEccOnDb);
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_GPU_ECC) << d.reason();
  EXPECT_NE(d.reason().find("CUDA_VISIBLE_DEVICES"), std::string::npos) << d.reason();
}

// A terminal paste hard-wrapped the launch line: the list holds two entries, none for local rank
// 3. The default order (index 3, 0000:5d:00) is not its GPU then; with no map, the one GPU of
// the node with an initiating Xid is taken, as with no list at all.
TEST(Hardware, ACudaVisibleDevicesListCutShortIsNoMapAndNotTheDefaultOrder) {
  Job job;
  NvidiaSmi(job.dir.path());
  Append(job.dir.path() / "gpu-0001" / "torchrun.log", "> CUDA_VISIBLE_DEVICES=4,5,\n> 6,7,0,1,2,3\n");
  job.Kernel("Mar  2 09:17:03", kEccOnDb);
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_GPU_ECC) << d.reason();
  EXPECT_NE(d.reason().find("the only GPU"), std::string::npos) << d.reason();
}

// Two launch lists that differ in one node's files are two machines' (hosts under one name, as
// in a collection where every host is `host-0`): which GPU local rank 3 ran on is not known, and
// an Xid on one of the node's GPUs is not tied to it.
TEST(Hardware, TwoDifferentLaunchListsOnOneNodeTieNoXidToTheRank) {
  Job job;
  NvidiaSmi(job.dir.path());
  RotatedLaunch(job);
  Append(job.dir.path() / "gpu-0001" / "agent-2.log", "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n");
  job.Kernel("Mar  2 09:17:03", kEccOnDb);
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().rank(), 3);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL) << d.reason();
  EXPECT_FALSE(Cites(d, "NVRM", v1::EVIDENCE_ROLE_INITIATING));
}

TEST(Hardware, WithoutTheCudaVisibleDevicesLineTheSameXidIsAnotherRanks) {
  Job job;
  NvidiaSmi(job.dir.path());
  job.Kernel("Mar  2 09:17:03", kEccOnDb);
  EXPECT_EQ(job.Run().initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
}

TEST(Hardware, BusIdToRankGoesThroughTheMappingAndIgnoringItGivesTheWrongRank) {
  Job job;
  NvidiaSmi(job.dir.path());
  RotatedLaunch(job);
  auto inc = LoadIncident(job.dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  const JobFacts facts = CollectFacts(*inc);
  const std::int32_t node = facts.ranks[3].node;
  const NodeGpuHealth health = ReadNodeGpuHealth(*inc, node);
  ASSERT_EQ(health.visible.size(), 8u);
  EXPECT_EQ(RankOfGpu(*inc, facts, node, "0000:db:00", &health), 3);    // index 7 = local rank 3
  EXPECT_EQ(RankOfGpu(*inc, facts, node, "0000:db:00", nullptr), 7);    // ignoring the mapping
  EXPECT_EQ(RankOfGpu(*inc, facts, node, "0000:18:00", &health), 4);    // index 0 = local rank 4
}

TEST(Hardware, NoKernelLogButNvidiaSmiQueryShowsTheRanksGpuFailedItsRowRemap) {
  Job job;
  NvidiaSmi(job.dir.path());
  fs::remove(job.dir.path() / "gpu-0001" / "kern.log");
  Append(job.dir.path() / "gpu-0001" / "nvidia-smi.log",
         "GPU 00000000:5D:00.0\n"
         "    ECC Errors\n"
         "        Volatile\n"
         "            DRAM Uncorrectable            : 1\n"
         "    Remapped Rows\n"
         "        Pending                           : No\n"
         "        Remapping Failure Occurred        : Yes\n");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_GPU_ECC) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_GPU_HARDWARE);
  ASSERT_GE(d.recovery().preconditions_size(), 2);
  EXPECT_EQ(d.recovery().preconditions(0).action(), "drain_and_rma");
  EXPECT_TRUE(HasAction(d, "run_canary"));
  EXPECT_TRUE(Cites(d, "Remapping Failure Occurred", v1::EVIDENCE_ROLE_CORROBORATING));
}

TEST(Hardware, AnOldCorrectedCountInNvidiaSmiQueryIsNotBlamed) {
  Job job;
  NvidiaSmi(job.dir.path());
  Append(job.dir.path() / "gpu-0001" / "nvidia-smi.log",
         "GPU 00000000:5D:00.0\n"
         "    ECC Errors\n"
         "        Aggregate\n"
         "            DRAM Correctable              : 177\n"
         "    Remapped Rows\n"
         "        Correctable Error                 : 1\n"
         "        Pending                           : No\n");
  EXPECT_EQ(job.Run().initiator().failure_class(), v1::FAILURE_CLASS_SIGNAL_KILL);
}

TEST(Hardware, Xid43AloneIsTheApplicationsFaultAndTheGpuIsFine) {
  Job job;
  NvidiaSmi(job.dir.path());
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 43, pid=31243, name=python3, Ch 00000008");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_CUDA_ERROR) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
  EXPECT_FALSE(HasAction(d, "reset_gpu"));
}

TEST(Hardware, AnXid13BurstIsOneIncidentOfTheApplication) {
  Job job;
  NvidiaSmi(job.dir.path());
  for (int tpc = 0; tpc < 3; ++tpc) {
    const std::string where = "(GPC 4, TPC " + std::to_string(tpc) + ", SM 0)";
    job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 13, pid=31243, name=python3, Graphics SM Warp Exception on " + where +
                                      ": Out Of Range Address");
    job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 13, pid=31243, name=python3, Graphics SM Global Exception on " +
                                      where + ": Multiple Warp Errors");
    job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 13, pid=31243, name=python3, Graphics Exception: ESR "
                                  "0x5e4648=0x1000e 0x5e4650=0x20 0x5e4644=0xd3eff2 0x5e464c=0x17f");
  }
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 43, pid=31243, name=python3, Ch 00000008");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_CUDA_ERROR) << d.reason();
  EXPECT_NE(d.reason().find("Xid 13"), std::string::npos) << d.reason();
  EXPECT_NE(d.reason().find("a burst of 10 Xid lines"), std::string::npos) << d.reason();
}

TEST(Hardware, RsyslogsRepeatedXidLineIsPartOfTheBurst) {
  Job job;
  NvidiaSmi(job.dir.path());
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 13, pid=31243, name=python3, Graphics SM Warp Exception on "
                                "(GPC 4, TPC 0, SM 0): Out Of Range Address");
  Append(job.dir.path() / "gpu-0001" / "kern.log",
         "Mar  2 09:17:03 gpu-0001 kernel: message repeated 7 times: [ NVRM: Xid (PCI:0000:5d:00): 13, pid=31243, name=python3, "
         "Graphics SM Warp Exception on (GPC 4, TPC 0, SM 0): Out Of Range Address]\n");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_CUDA_ERROR) << d.reason();
  EXPECT_NE(d.reason().find("a burst of 2 Xid lines"), std::string::npos) << d.reason();
}

// Another subsystem's printk rate-limit notice between the Xids of one burst (NVRM lines are never
// rate limited themselves); with printk.time=0 the kernel lines carry no uptime. The first Xid is
// the initiating line; the notice is not an Xid.
TEST(Hardware, ForeignKernelLineInsideABurstKeepsItOneIncident) {
  Job job;
  NvidiaSmi(job.dir.path());
  const fs::path kern = job.dir.path() / "gpu-0001" / "kern.log";
  Append(kern, "Mar  2 09:17:03 gpu-0001 kernel: NVRM: Xid (PCI:0000:5d:00): 13, pid=31243, name=python3, Graphics SM Warp "
               "Exception on (GPC 4, TPC 0, SM 0): Out Of Range Address\n");
  Append(kern, "Mar  2 09:17:03 gpu-0001 kernel: net_ratelimit: 14 callbacks suppressed\n");
  Append(kern, "Mar  2 09:17:03 gpu-0001 kernel: NVRM: Xid (PCI:0000:5d:00): 43, pid=31243, name=python3, Ch 00000008\n");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_CUDA_ERROR) << d.reason();
  EXPECT_TRUE(Cites(d, "Graphics SM Warp Exception on (GPC 4, TPC 0, SM 0)", v1::EVIDENCE_ROLE_INITIATING)) << d.reason();
  EXPECT_NE(d.reason().find("a burst of 2 Xid lines"), std::string::npos) << d.reason();
}

// dcgmi diag -r 2: the GPU Memory test failed on the rank's GPU: it corroborates the ECC verdict
// (cited) and the recovery drains the GPU for RMA instead of resetting it.
TEST(Hardware, FailedDcgmiDiagMemoryTestCorroboratesAndDrains) {
  Job job;
  NvidiaSmi(job.dir.path());
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double "
                                "bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fdb481b7 partition 3, subpartition 1");
  Append(job.dir.path() / "gpu-0001" / "nvidia-smi.log",
         "Successfully ran diagnostic for group.\n"
         "+---------------------------+------------------------------------------------+\n"
         "| Diagnostic                | Result                                         |\n"
         "+===========================+================================================+\n"
         "|-----  Deployment  --------+------------------------------------------------|\n"
         "| Page Retirement/Row Remap | Pass                                           |\n"
         "+-----  Integration  -------+------------------------------------------------+\n"
         "| PCIe                      | Pass - All                                     |\n"
         "+-----  Hardware  ----------+------------------------------------------------+\n"
         "| GPU Memory                | Pass - GPUs: 0, 1, 2, 4, 5, 6, 7               |\n"
         "|                           | Fail - GPU: 3                                  |\n"
         "| Warning                   | CUDA APIs have indicated that a double-bit ECC error has occured on GPU 3. |\n"
         "+---------------------------+------------------------------------------------+\n");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_GPU_ECC) << d.reason();
  EXPECT_TRUE(Cites(d, "Fail - GPU: 3", v1::EVIDENCE_ROLE_CORROBORATING)) << d.reason();
  ASSERT_GT(d.recovery().preconditions_size(), 0);
  EXPECT_EQ(d.recovery().preconditions(0).action(), "drain_and_rma");
  EXPECT_NE(d.recovery().preconditions(0).text().find("GPU Memory"), std::string::npos);
  EXPECT_FALSE(HasAction(d, "reset_gpu"));
}

// A deployment check failing (Persistence Mode) is configuration, not the GPU: no drain.
TEST(Hardware, FailedDcgmiDeploymentCheckIsNotAHardwareTest) {
  Job job;
  NvidiaSmi(job.dir.path());
  job.Kernel("Mar  2 09:17:03", "NVRM: Xid (PCI:0000:5d:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double "
                                "bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fdb481b7 partition 3, subpartition 1");
  Append(job.dir.path() / "gpu-0001" / "nvidia-smi.log",
         "| Persistence Mode          | Pass - GPUs: 0, 1, 2, 4, 5, 6, 7               |\n"
         "|                           | Fail - GPU: 3                                  |\n");
  const v1::Diagnosis d = job.Run();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_GPU_ECC) << d.reason();
  EXPECT_TRUE(HasAction(d, "reset_gpu"));
}

// The class of a rank's own CUDA error from its message alone (no kernel log collected): the
// runtime's `uncorrectable ECC error encountered` and NVLink messages are the GPU's; an illegal
// address is the application's.
TEST(Hardware, CudaErrorThatNamesAnEccFaultIsTheGpusWithoutTheKernelLog) {
  struct Case {
    const char* line;
    v1::FailureClass failure_class;
    v1::Owner owner;
  };
  for (const Case& c : {
           Case{"[rank1109]: RuntimeError: CUDA error: uncorrectable ECC error encountered", v1::FAILURE_CLASS_GPU_ECC,
                v1::OWNER_GPU_HARDWARE},
           Case{"RuntimeError: CUDA error: an uncorrectable NVLink error was detected during the execution",
                v1::FAILURE_CLASS_GPU_NVLINK, v1::OWNER_GPU_HARDWARE},
           Case{"[rank5]: RuntimeError: CUDA error: an illegal memory access was encountered", v1::FAILURE_CLASS_CUDA_ERROR,
                v1::OWNER_APPLICATION},
       }) {
    const std::string text = std::string(c.line) + "\n";
    ParsedLog log = ParseLog(text, FileContext{.prefixes = SniffPrefixes(text)});
    ASSERT_EQ(log.events.size(), 1u) << c.line;
    Incident inc;
    inc.strings = std::move(log.strings);
    v1::FailureClass failure_class = v1::FAILURE_CLASS_UNSPECIFIED;
    v1::Owner owner = v1::OWNER_UNSPECIFIED;
    ASSERT_TRUE(ClassOfOwnError(inc, log.events[0], &failure_class, &owner)) << c.line;
    EXPECT_EQ(failure_class, c.failure_class) << c.line;
    EXPECT_EQ(owner, c.owner) << c.line;
  }
}

}  // namespace
}  // namespace denpex::engine
