// The GPU hardware, memory and CUDA error faults (sim/src/model/gpu_faults.cc,
// format/formatter_gpu.cc) on a small job (2 nodes x 8 GPUs): the kernel log's Xid burst in each
// driver era, the rank's CUDA error, the host OOM killer, Xid 45 after a kill, nvidia-smi, and
// truths that cite lines that exist.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "sim_test_util.h"

namespace denpex::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing_util;

constexpr const char* kSmall = R"(name: "small"
seed: 3
job { nodes: 2 tp: 4 pp: 2 }
training { warmup_steps: 3 }
realism { benign_warnings: false loud_rank: false }
faults { kind: FAULT_KIND_SIGKILL rank: 5 }
)";

SimulateResult RunKind(const fs::path& out, const std::string& kind, std::vector<std::string> more = {}) {
  more.push_back("faults[0].kind=" + kind);
  return MustSimulate(MustParse(kSmall, more), out);
}

std::string Log(const fs::path& out, const std::string& rel) { return ReadAll(out / "incident" / rel); }

void ExpectEvidenceMatchesFiles(const fs::path& out, const v1::Truth& truth) {
  for (const v1::Evidence& e : truth.evidence()) {
    const auto lines = ReadLines(out / "incident" / e.file());
    ASSERT_LE(static_cast<std::size_t>(e.line()), lines.size()) << e.file();
    EXPECT_EQ(lines[static_cast<std::size_t>(e.line() - 1)], e.text());
  }
}

bool Cites(const v1::Truth& t, const std::string& file, const std::string& text) {
  return std::any_of(t.evidence().begin(), t.evidence().end(), [&](const v1::Evidence& e) {
    return e.file() == file && e.text().find(text) != std::string::npos && e.role() == v1::EVIDENCE_ROLE_INITIATING;
  });
}

TEST(GpuFaults, FallenOffTheBusBurstThenCudaErrorOnTheRankOfThatGpu) {
  const fs::path out = FreshDir();
  const SimulateResult r = RunKind(out, "FAULT_KIND_XID_FALLEN_OFF_BUS");
  const std::string kern = Log(out, "gpu-0001/kern.log");
  // Rank 5 is local rank 5: GPU 0000:ab:00.
  EXPECT_THAT(kern, HasSubstr("NVRM: GPU at PCI:0000:ab:00: GPU-"));
  EXPECT_THAT(kern, HasSubstr("NVRM: Xid (PCI:0000:ab:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."));
  EXPECT_THAT(kern, HasSubstr("NVRM: GPU 0000:ab:00.0: GPU has fallen off the bus."));
  EXPECT_THAT(kern, HasSubstr("NVRM: nvidia-bug-report.sh as root to collect this data before"));
  EXPECT_THAT(kern, HasSubstr("Timeout waiting for RPC from GSP! Expected function 76"));
  EXPECT_THAT(kern, HasSubstr("NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:ab:00 (printing 1 of every 30)."));
  EXPECT_THAT(Log(out, "gpu-0001/rank_5.log"), HasSubstr("[rank5]: RuntimeError: CUDA error: "));
  EXPECT_THAT(Log(out, "gpu-0001/nvidia-smi.log"),
              HasSubstr("Unable to determine the device handle for GPU0000:AB:00.0: Unknown Error"));
  EXPECT_EQ(r.truth.owner(), v1::OWNER_GPU_HARDWARE);
  EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_GPU_FALLEN_OFF_BUS);
  EXPECT_TRUE(Cites(r.truth, "gpu-0001/kern.log", "): 79, "));
  EXPECT_TRUE(Cites(r.truth, "gpu-0001/rank_5.log", "RuntimeError: CUDA error: "));
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(GpuFaults, XidAttributionFollowsTheDriverEra) {
  const fs::path a = FreshDir("418"), b = FreshDir("470"), c = FreshDir("560");
  RunKind(a, "FAULT_KIND_XID_FALLEN_OFF_BUS", {"format.driver=418"});
  RunKind(b, "FAULT_KIND_XID_ECC", {"format.driver=470"});
  RunKind(c, "FAULT_KIND_XID_ECC", {"format.driver=560"});
  const std::string k418 = Log(a, "gpu-0001/kern.log");
  EXPECT_THAT(k418, HasSubstr("NVRM: Xid (PCI:0000:ab:00): 79, GPU has fallen off the bus."));
  EXPECT_THAT(k418, Not(HasSubstr("GSP")));
  EXPECT_THAT(k418, HasSubstr("Kernel Module  418.87.01"));
  const std::string k470 = Log(b, "gpu-0001/kern.log");
  EXPECT_THAT(k470, HasSubstr("): 48, pid='<unknown>', An uncorrectable double bit error (DBE)"));
  EXPECT_THAT(k470, Not(HasSubstr("name=")));
  EXPECT_THAT(k470, Not(HasSubstr("): 154, ")));
  const std::string k560 = Log(c, "gpu-0001/kern.log");
  EXPECT_THAT(k560, HasSubstr("): 45, pid="));
  EXPECT_THAT(k560, HasSubstr("GPU recovery action changed from 0x0 (None) to 0x"));
}

TEST(GpuFaults, EccBurstIsDbeThenRemapThenContainmentWithinMilliseconds) {
  const fs::path out = FreshDir();
  const SimulateResult r = RunKind(out, "FAULT_KIND_XID_ECC");
  const auto lines = ReadLines(out / "incident/gpu-0001/kern.log");
  std::vector<int> codes;
  for (const std::string& l : lines) {
    const auto at = l.find("NVRM: Xid (PCI:0000:ab:00): ");
    if (at != std::string::npos) codes.push_back(std::stoi(l.substr(at + 28)));
  }
  ASSERT_GE(codes.size(), 4u);
  EXPECT_EQ(codes[0], 48);
  EXPECT_TRUE(codes[1] == 63 || codes[1] == 64);
  EXPECT_TRUE(codes[2] == 94 || codes[2] == 95);
  EXPECT_EQ(codes[3], 45);
  EXPECT_THAT(Log(out, "gpu-0001/rank_5.log"), HasSubstr("CUDA error: uncorrectable ECC error encountered"));
  EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_GPU_ECC);
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(GpuFaults, NvlinkErrorIsAlsoReportedByTheLinkPeer) {
  const fs::path out = FreshDir();
  RunKind(out, "FAULT_KIND_XID_NVLINK");
  const std::string kern = Log(out, "gpu-0001/kern.log");
  EXPECT_THAT(kern, HasSubstr("NVRM: Xid (PCI:0000:ab:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link"));
  EXPECT_THAT(kern, HasSubstr("NVRM: Xid (PCI:0000:9a:00): 74, "));  // GPU 4, its peer
}

TEST(GpuFaults, GspFaultNeedsADriverWithGsp) {
  const std::vector<std::string> set = {"faults[0].kind=FAULT_KIND_XID_GSP", "format.driver=470"};
  auto s = ParseScenario(kSmall, "test", set);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("format.driver"));
}

TEST(GpuFaults, HostOomKillerLinesNameTheRanksPidAndItDiesBySigkill) {
  const fs::path out = FreshDir();
  const SimulateResult r = RunKind(out, "FAULT_KIND_HOST_OOM");
  const std::string agent = Log(out, "gpu-0001/torchrun.log");
  EXPECT_THAT(agent, HasSubstr("failed (exitcode: -9) local_rank: 5"));
  const std::string kern = Log(out, "gpu-0001/kern.log");
  EXPECT_THAT(kern, HasSubstr("python3 invoked oom-killer: gfp_mask="));
  EXPECT_THAT(kern, HasSubstr("Out of memory: Killed process "));
  EXPECT_THAT(kern, HasSubstr("oom_reaper: reaped process "));
  EXPECT_THAT(kern, HasSubstr("): 45, pid="));  // the driver cleans up the killed process's channels
  EXPECT_EQ(r.truth.owner(), v1::OWNER_HOST);
  EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_HOST_OOM);
  EXPECT_TRUE(Cites(r.truth, "gpu-0001/kern.log", "Out of memory: Killed process "));
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(GpuFaults, HostOomUnderSrunIsOutOfMemoryInEachSlurmWording) {
  const fs::path a = FreshDir("23"), b = FreshDir("22");
  RunKind(a, "FAULT_KIND_HOST_OOM", {"launcher=LAUNCHER_SRUN"});
  RunKind(b, "FAULT_KIND_HOST_OOM", {"launcher=LAUNCHER_SRUN", "format.slurm=22.05"});
  const std::string o23 = Log(a, "slurm-4242001.out");
  EXPECT_THAT(o23, HasSubstr("slurmstepd: error: Detected 1 oom_kill event in StepId=4242001.0. Some of the step tasks have been OOM Killed."));
  EXPECT_THAT(o23, HasSubstr("srun: error: gpu-0001: task 5: Out Of Memory"));
  EXPECT_THAT(Log(a, "gpu-0001/kern.log"), HasSubstr("Memory cgroup out of memory: Killed process "));
  EXPECT_THAT(Log(b, "slurm-4242001.out"), HasSubstr("Detected 1 oom-kill event(s) in StepId=4242001.0 cgroup."));
}

TEST(GpuFaults, CudaOomInEachTorchEra) {
  const fs::path a = FreshDir("113"), b = FreshDir("21"), c = FreshDir("24");
  RunKind(a, "FAULT_KIND_CUDA_OOM", {"format.torch=1.13", "format.nccl=2.18.5"});
  RunKind(b, "FAULT_KIND_CUDA_OOM", {"format.torch=2.1", "format.nccl=2.18.5"});
  const SimulateResult r = RunKind(c, "FAULT_KIND_CUDA_OOM");
  EXPECT_THAT(Log(a, "gpu-0001/rank_5.log"), HasSubstr("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate "));
  EXPECT_THAT(Log(a, "gpu-0001/rank_5.log"), HasSubstr(" reserved in total by PyTorch) If reserved memory is >> allocated"));
  EXPECT_THAT(Log(b, "gpu-0001/rank_5.log"), HasSubstr("GPU 5 has a total capacty of 79.15 GiB of which"));
  EXPECT_THAT(Log(c, "gpu-0001/rank_5.log"), HasSubstr("[rank5]: torch.OutOfMemoryError: CUDA out of memory."));
  EXPECT_THAT(Log(c, "gpu-0001/rank_5.log"), HasSubstr("expandable_segments:True"));
  EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_CUDA_OOM);
  EXPECT_EQ(r.truth.owner(), v1::OWNER_APPLICATION);
  ExpectEvidenceMatchesFiles(c, r.truth);
}

TEST(GpuFaults, DeviceAssertPrintsHundredsOfPerThreadLines) {
  const fs::path out = FreshDir();
  const SimulateResult r = RunKind(out, "FAULT_KIND_DEVICE_ASSERT");
  const auto lines = ReadLines(out / "incident/gpu-0001/rank_5.log");
  const auto asserts = std::count_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("IndexKernel.cu:92: operator(): block: [") == 0 || l.find("/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92") == 0;
  });
  EXPECT_GE(asserts, 96);
  EXPECT_THAT(Log(out, "gpu-0001/rank_5.log"), HasSubstr("[rank5]: RuntimeError: CUDA error: device-side assert triggered"));
  EXPECT_EQ(r.truth.initiator().failure_class(), v1::FAILURE_CLASS_CUDA_ERROR);
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(GpuFaults, IllegalAddressIsAnMmuFaultNamingTheRanksPid) {
  const fs::path out = FreshDir();
  const SimulateResult r = RunKind(out, "FAULT_KIND_CUDA_ILLEGAL_ADDRESS");
  const std::string kern = Log(out, "gpu-0001/kern.log");
  EXPECT_THAT(kern, HasSubstr("): 31, pid="));
  EXPECT_THAT(kern, HasSubstr(", name=python3, channel 0x00000002, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC"));
  EXPECT_THAT(kern, HasSubstr("): 43, pid="));
  EXPECT_EQ(r.truth.owner(), v1::OWNER_APPLICATION);
  ExpectEvidenceMatchesFiles(out, r.truth);
}

TEST(GpuFaults, SigkilledWorkerLeavesXid45AndNvidiaSmiIsOffForOtherFaults) {
  const fs::path out = FreshDir();
  RunKind(out, "FAULT_KIND_SIGKILL");
  EXPECT_THAT(Log(out, "gpu-0001/kern.log"), HasSubstr("NVRM: Xid (PCI:0000:ab:00): 45, pid="));
  EXPECT_FALSE(fs::exists(out / "incident/gpu-0001/nvidia-smi.log"));
}

}  // namespace
}  // namespace denpex::sim

namespace denpex::sim {
namespace {

using namespace testing_util;

// Scenario.history: the store is written beside incident/ (never inside), and the truth says
// what a diagnosis reading it concludes.
constexpr const char* kHistory = R"(name: "history"
seed: 3
job { nodes: 3 tp: 4 pp: 2 }
training { warmup_steps: 3 }
realism { benign_warnings: false loud_rank: false }
faults { kind: FAULT_KIND_XID_ECC rank: 5 }
)";

TEST(History, SameGpuHardwareIncidentEscalatesToDrainAndRma) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(std::string(kHistory) + "history { target: HISTORY_TARGET_SAME_GPU days_before: 9 }\n"
                                        "history { target: HISTORY_TARGET_OTHER_NODE days_before: 2 }\n"),
      out);
  EXPECT_FALSE(fs::exists(out / "incident" / "history.jsonl"));
  const auto lines = ReadLines(out / "history.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  // Rank 5 is gpu-0001's local rank 5: GPU 0000:ab:00; the control is on another node.
  EXPECT_THAT(lines[0], ::testing::HasSubstr(R"("node":"gpu-0001","gpu":"0000:ab:00","failure_class":"FAILURE_CLASS_GPU_ECC","owner":"OWNER_GPU_HARDWARE")"));
  EXPECT_THAT(lines[0], ::testing::HasSubstr(R"("time":"2026-02-21T09:)"));
  EXPECT_THAT(lines[1], ::testing::Not(::testing::HasSubstr(R"("node":"gpu-0001")")));
  const v1::Recurrence& rec = r.truth.recurrence();
  EXPECT_EQ(rec.node_incidents(), 1);
  EXPECT_EQ(rec.gpu_incidents(), 1);
  EXPECT_TRUE(rec.escalated());
  ASSERT_GE(r.truth.recovery().preconditions_size(), 2);
  EXPECT_EQ(r.truth.recovery().preconditions(0).action(), "drain_and_rma");
  EXPECT_EQ(r.truth.recovery().preconditions(0).target(), "gpu-0001 GPU 0000:ab:00");
  EXPECT_EQ(r.truth.recovery().preconditions(1).action(), "restart_job");  // reset_gpu replaced
}

TEST(History, TwoHardwareIncidentsOnOtherGpusDrainTheNode) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(
      MustParse(std::string(kHistory) + "history { target: HISTORY_TARGET_SAME_NODE failure_class: FAILURE_CLASS_GPU_NVLINK }\n"
                                        "history { target: HISTORY_TARGET_SAME_NODE days_before: 30 }\n"),
      out);
  const v1::Recurrence& rec = r.truth.recurrence();
  EXPECT_EQ(rec.node_incidents(), 2);
  EXPECT_EQ(rec.gpu_incidents(), 0);
  EXPECT_TRUE(rec.escalated());
  ASSERT_EQ(rec.earlier_size(), 2);
  EXPECT_LT(rec.earlier(0).time(), rec.earlier(1).time());  // oldest first
  EXPECT_NE(rec.earlier(0).gpu(), "0000:ab:00");
  EXPECT_EQ(r.truth.recovery().preconditions(0).action(), "drain_node");
  EXPECT_EQ(r.truth.recovery().preconditions(1).action(), "reset_gpu");
}

TEST(History, ControlsDoNotEscalate) {
  const fs::path out = FreshDir();
  // Another GPU once (counted, not escalated), the same GPU for an application's OOM (never
  // escalates), and hardware on another node (not this node's).
  const SimulateResult r = MustSimulate(
      MustParse(std::string(kHistory) + "history { target: HISTORY_TARGET_SAME_NODE }\n"
                                        "history { target: HISTORY_TARGET_SAME_GPU failure_class: FAILURE_CLASS_CUDA_OOM owner: OWNER_APPLICATION }\n"
                                        "history { target: HISTORY_TARGET_OTHER_NODE }\n"),
      out);
  EXPECT_EQ(r.truth.recurrence().node_incidents(), 2);
  EXPECT_EQ(r.truth.recurrence().gpu_incidents(), 1);
  EXPECT_FALSE(r.truth.recurrence().escalated());
  EXPECT_EQ(r.truth.recovery().preconditions(0).action(), "reset_gpu");
}

TEST(History, NoHistoryNoStoreAndNoRecurrence) {
  const fs::path out = FreshDir();
  const SimulateResult r = MustSimulate(MustParse(kHistory), out);
  EXPECT_FALSE(fs::exists(out / "history.jsonl"));
  EXPECT_FALSE(r.truth.has_recurrence());
}

TEST(History, SameGpuNeedsAFaultOnOneRank) {
  auto s = ParseScenario(std::string(kHistory) + "history { target: HISTORY_TARGET_SAME_GPU }\n", "h.textproto",
                         std::vector<std::string>{"faults[0].kind=FAULT_KIND_NODE_LOSS"});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), ::testing::HasSubstr("history[0]"));
  EXPECT_THAT(s.status().message(), ::testing::HasSubstr("HISTORY_TARGET_SAME_NODE"));
  auto bad = ParseScenario(std::string(kHistory) + "history { days_before: -1 }\n", "h.textproto");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("days_before"));
}

// realism.kernel_ratelimit: the fault node runs printk.time=0; rsyslog folds the identical GSP
// RPC timeouts; an Xid 13 storm is printed in full (NVRM lines bypass printk's rate limit, so
// no `callbacks suppressed` notice); the cited first Xid is always there.
TEST(KernelRateLimit, RsyslogFoldsRepeatsAndAnXidStormIsPrintedInFull) {
  const fs::path gsp = FreshDir("gsp"), app = FreshDir("app");
  MustSimulate(MustParse(kHistory, {"faults[0].kind=FAULT_KIND_XID_GSP", "realism.kernel_ratelimit=1"}), gsp);
  const std::string k = ReadAll(gsp / "incident" / "gpu-0001" / "kern.log");
  EXPECT_THAT(k, ::testing::HasSubstr("gpu-0001 kernel: NVRM: Xid (PCI:0000:ab:00): 120, "));  // no uptime
  EXPECT_THAT(k, ::testing::HasSubstr("gpu-0001 kernel: message repeated 2 times: [ NVRM: Xid (PCI:0000:ab:00): 119, "));
  EXPECT_THAT(k, ::testing::Not(::testing::HasSubstr("kernel: [")));
  const SimulateResult r =
      MustSimulate(MustParse(kHistory, {"faults[0].kind=FAULT_KIND_XID_APP_EXCEPTION", "faults[0].variant=0",
                                        "realism.kernel_ratelimit=1"}),
                   app);
  const auto lines = ReadLines(app / "incident" / "gpu-0001" / "kern.log");
  int xid13 = 0, last13 = -1, xid43 = -1;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("): 13, ") != std::string::npos) {
      ++xid13;
      last13 = static_cast<int>(i);
    }
    if (lines[i].find("): 43, ") != std::string::npos) xid43 = static_cast<int>(i);
    EXPECT_THAT(lines[i], ::testing::Not(::testing::HasSubstr("callbacks suppressed")));
  }
  EXPECT_EQ(xid13, 15);  // variant 0: 5 faulting TPCs, three lines each, none dropped
  EXPECT_EQ(last13 + 1, xid43);  // the channel reset follows the storm
  bool cited = false;
  for (const auto& e : r.truth.evidence()) cited |= e.text().find("): 13, ") != std::string::npos;
  EXPECT_TRUE(cited);
  // Off (the default) or another node: uptime stamps, no folding.
  const fs::path off = FreshDir("off");
  MustSimulate(MustParse(kHistory, {"faults[0].kind=FAULT_KIND_XID_GSP"}), off);
  EXPECT_THAT(ReadAll(off / "incident" / "gpu-0001" / "kern.log"), ::testing::Not(::testing::HasSubstr("message repeated")));
}

// realism.dcgm_diag_level: -r 2 adds PCIe and GPU Memory (the ECC GPU fails GPU Memory), -r 3 the
// Diagnostic, Stress and EUD rows.
TEST(DcgmDiag, LevelsTwoAndThreeAddThePluginTestsAndTheFaultyGpuFailsThem) {
  const fs::path two = FreshDir("two"), three = FreshDir("three"), link = FreshDir("link");
  MustSimulate(MustParse(kHistory, {"realism.dcgm_diag_level=2"}), two);
  const std::string s2 = ReadAll(two / "incident" / "gpu-0001" / "nvidia-smi.log");
  EXPECT_THAT(s2, ::testing::HasSubstr("+-----  Integration  -------+"));
  EXPECT_THAT(s2, ::testing::HasSubstr("| PCIe                      | Pass - All "));
  EXPECT_THAT(s2, ::testing::HasSubstr("| GPU Memory                | Pass - GPUs: 0, 1, 2, 3, 4, 6, 7 "));
  EXPECT_THAT(s2, ::testing::HasSubstr("|                           | Fail - GPU: 5 "));
  EXPECT_THAT(s2, ::testing::HasSubstr("double-bit ECC error has occured on GPU 5."));
  EXPECT_THAT(s2, ::testing::Not(::testing::HasSubstr("Targeted Stress")));
  MustSimulate(MustParse(kHistory, {"realism.dcgm_diag_level=3"}), three);
  const std::string s3 = ReadAll(three / "incident" / "gpu-0001" / "nvidia-smi.log");
  EXPECT_THAT(s3, ::testing::HasSubstr("| Targeted Stress           | Pass - All "));
  EXPECT_THAT(s3, ::testing::HasSubstr("| EUD Test                  | Skip - All "));
  EXPECT_THAT(ReadAll(three / "incident" / "gpu-0002" / "nvidia-smi.log"), ::testing::HasSubstr("| GPU Memory                | Pass - All "));
  MustSimulate(MustParse(kHistory, {"realism.dcgm_diag_level=2", "faults[0].kind=FAULT_KIND_XID_NVLINK"}), link);
  EXPECT_THAT(ReadAll(link / "incident" / "gpu-0001" / "nvidia-smi.log"), ::testing::HasSubstr("GPU 5's NvLink link "));
  EXPECT_FALSE(ParseScenario(kHistory, "d.textproto", std::vector<std::string>{"realism.dcgm_diag_level=4"}).ok());
  // A straggler from a PCIe link downgrade (variant 2): the PCIe test fails on its GPU with
  // DCGM's link-width message (DCGM_FR_PCIE_WIDTH_MSG); a throttled straggler's PCIe passes.
  const fs::path pcie = FreshDir("pcie"), hot = FreshDir("hot");
  MustSimulate(MustParse(kHistory, {"realism.dcgm_diag_level=2", "faults[0].kind=FAULT_KIND_STRAGGLER", "faults[0].variant=2"}),
               pcie);
  const std::string sp = ReadAll(pcie / "incident" / "gpu-0001" / "nvidia-smi.log");
  EXPECT_THAT(sp, ::testing::HasSubstr("| PCIe                      | Pass - GPUs: 0, 1, 2, 3, 4, 6, 7 "));
  EXPECT_THAT(sp, ::testing::HasSubstr("GPU 5 is running at PCI link width 4X, which is below the minimum allowed link "
                                       "generation of 16 (parameter 'min_pci_width')"));
  MustSimulate(MustParse(kHistory, {"realism.dcgm_diag_level=2", "faults[0].kind=FAULT_KIND_STRAGGLER", "faults[0].variant=0"}),
               hot);
  EXPECT_THAT(ReadAll(hot / "incident" / "gpu-0001" / "nvidia-smi.log"), ::testing::HasSubstr("| PCIe                      | Pass - All "));
}

}  // namespace
}  // namespace denpex::sim
