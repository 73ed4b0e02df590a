// An Xid linked to a rank whose failure carries no time (analyze/hardware.cc): under srun with
// torch <= 2.1 the rank's CUDA error, its traceback, the watchdog lines and srun's task exit are
// all untimed, so the job's span (slurmctld's Allocate to _job_complete) bounds when a fatal
// Xid on the rank's own GPU can have explained it. Controls: an Xid on another GPU, before the
// job, or an application's MMU fault stays the application's CUDA error; with nothing timed the
// engine does not link at all.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "analyze/clocks.h"
#include "analyze/describe.h"
#include "analyze/facts.h"
#include "denpex/engine/engine.h"
#include "diagnose_ok.h"
#include "fixture.h"
#include "ingest/load.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

// 2 nodes x 4 GPUs, srun --label, torch 2.1 shapes; rank 1 (gpu-0001, local rank 1, bus 2a)
// raises a CUDA error, the other ranks' watchdogs time out.
constexpr const char* kBus[] = {"18", "2a", "3a", "5d"};

struct UntimedJob {
  bool ctld = true;          // write slurmctld.log (Allocate 09:00:00, _job_complete 09:10:19)
  bool bus_ids = true;       // NCCL INFO busId lines map the ranks' GPUs
  // A GPU fault's usual symptom, whose message does not itself name the fault (an ECC message
  // would make the GPU the owner with or without the Xid).
  std::string error = "RuntimeError: CUDA error: unspecified launch failure";
};

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::app) << text;
}

void WriteUntimedJob(const fs::path& dir, const UntimedJob& job) {
  std::string out;
  for (int r = 0; r < 8; ++r) {
    const int node = r / 4 + 1, local = r % 4;
    const std::string host = "gpu-000" + std::to_string(node);
    const std::string pid = std::to_string(31240 + r);
    out += std::to_string(r) + ": " + host + ":" + pid + ":" + pid + " [" + std::to_string(local) +
           "] NCCL INFO Bootstrap : Using ib0:10.64.0." + std::to_string(node) + "<0>\n";
    if (job.bus_ids) {
      out += std::to_string(r) + ": " + host + ":" + pid + ":" + pid + " [" + std::to_string(local) + "] NCCL INFO comm 0x55501c358800 rank " +
             std::to_string(r) + " nranks 8 cudaDev " + std::to_string(local) + " nvmlDev " + std::to_string(local) + " busId " +
             kBus[local] + "000 commId 0xda546ef4403c7667 - Init COMPLETE\n";
    }
  }
  out += "1: Traceback (most recent call last):\n"
         "1:   File \"/workspace/megatron-lm/pretrain_gpt.py\", line 278, in <module>\n"
         "1:     pretrain(\n"
         "1: " + job.error + "\n"
         "1: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
         "1: For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
         "srun: error: gpu-0001: task 1: Exited with exit code 1\n";
  for (int r = 0; r < 8; ++r) {
    if (r == 1) continue;
    out += std::to_string(r) + ": [E ProcessGroupNCCL.cpp:475] [Rank " + std::to_string(r) +
           "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=25, OpType=ALLREDUCE, NumelIn=16777216, "
           "NumelOut=16777216, Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n";
  }
  out += "srun: error: gpu-0001: tasks 0,2-3: Aborted\nsrun: error: gpu-0002: tasks 4-7: Aborted\n";
  Write(dir / "slurm-4242001.out", out);
  if (job.ctld) {
    Write(dir / "slurmctld.log",
          "[2026-03-02T09:00:00.000] sched: Allocate JobId=4242001 NodeList=gpu-[0001-0002] #CPUs=224 Partition=gpu\n"
          "[2026-03-02T09:10:19.358] _job_complete: JobId=4242001 WEXITSTATUS 1\n"
          "[2026-03-02T09:10:19.358] _job_complete: JobId=4242001 done\n");
  }
  Write(dir / "gpu-0001" / "kern.log",
        "Feb  5 15:03:43 gpu-0001 kernel: [    0.000000] Linux version 5.15.0-105-generic (buildd@lcy02-amd64-007)\n");
  Write(dir / "gpu-0002" / "kern.log",
        "Feb  5 15:03:43 gpu-0002 kernel: [    0.000000] Linux version 5.15.0-105-generic (buildd@lcy02-amd64-007)\n");
}

void Kernel(const fs::path& dir, const std::string& stamp, const std::string& msg) {
  Write(dir / "gpu-0001" / "kern.log", stamp + " gpu-0001 kernel: [2138194.382209] " + msg + "\n");
}

std::string Xid48(const std::string& bus) {
  return "NVRM: Xid (PCI:0000:" + bus + ":00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been "
         "detected on GPU in the framebuffer at physAddr 0x7ffb8325c partition 7, subpartition 1";
}

using testing::DiagnoseOk;

bool Cites(const v1::Diagnosis& d, const std::string& text, v1::EvidenceRole role) {
  for (const auto& e : d.evidence()) {
    if (e.text().find(text) != std::string::npos && e.role() == role) return true;
  }
  return false;
}

TEST(UntimedXid, FatalXidOnTheRanksGpuDuringTheJobIsTheGpusFault) {
  TempDir tmp;
  WriteUntimedJob(tmp.path(), {});
  Kernel(tmp.path(), "Mar  2 09:00:17", Xid48("2a"));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_GPU_ECC);
  EXPECT_EQ(d.owner(), v1::OWNER_GPU_HARDWARE);
  EXPECT_TRUE(Cites(d, "Xid (PCI:0000:2a:00): 48", v1::EVIDENCE_ROLE_INITIATING) ||
              Cites(d, "Xid (PCI:0000:2a:00): 48", v1::EVIDENCE_ROLE_CORROBORATING));
  EXPECT_NE(d.reason().find("during the job"), std::string::npos) << d.reason();
}

TEST(UntimedXid, FatalXidOnAnotherGpuOfTheNodeIsNotTheRanks) {
  TempDir tmp;
  WriteUntimedJob(tmp.path(), {});
  Kernel(tmp.path(), "Mar  2 09:00:17", Xid48("3a"));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_CUDA_ERROR);
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
}

TEST(UntimedXid, FatalXidBeforeTheAllocationIsNotThisJobs) {
  TempDir tmp;
  WriteUntimedJob(tmp.path(), {});
  Kernel(tmp.path(), "Mar  1 22:41:05", Xid48("2a"));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_CUDA_ERROR);
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
}

// A healthy GPU: the application's illegal access (Xid 31, then 43) stays the application's.
TEST(UntimedXid, ApplicationsMmuFaultOnTheRanksGpuStaysACudaError) {
  TempDir tmp;
  WriteUntimedJob(tmp.path(), {.error = "RuntimeError: CUDA error: an illegal memory access was encountered"});
  Kernel(tmp.path(), "Mar  2 09:00:17",
         "NVRM: Xid (PCI:0000:2a:00): 31, pid=31241, name=python3, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS "
         "GPCCLIENT_T1_0 faulted @ 0x7f4a_2c000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ");
  Kernel(tmp.path(), "Mar  2 09:00:18", "NVRM: Xid (PCI:0000:2a:00): 43, pid=31241, name=python3, Ch 00000008");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_CUDA_ERROR);
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
}

// Nothing of the job is timed (no slurmctld log): no window, no link; the engine says what the
// rank's own line says.
TEST(UntimedXid, WithNothingTimedTheXidIsNotLinked) {
  TempDir tmp;
  WriteUntimedJob(tmp.path(), {.ctld = false});
  Kernel(tmp.path(), "Mar  2 09:00:17", Xid48("2a"));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_CUDA_ERROR);
}

// No busId lines: nvidia-smi's table skips the index of the GPU it cannot reach, and names it
// unreachable; that maps the fallen GPU to local rank 1.
TEST(UntimedXid, NvidiaSmisSkippedIndexMapsTheFallenGpu) {
  TempDir tmp;
  WriteUntimedJob(tmp.path(), {.bus_ids = false, .error = "RuntimeError: CUDA error: unknown error"});
  Kernel(tmp.path(), "Mar  2 09:00:16", "NVRM: Xid (PCI:0000:2a:00): 79, pid='<unknown>', GPU has fallen off the bus.");
  std::string smi = "Unable to determine the device handle for GPU0000:2A:00.0: Unknown Error\n"
                    "Mon Mar  2 09:10:17 2026       \n"
                    "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
                    "|=========================================+======================+======================|\n";
  for (int i : {0, 2, 3}) {
    smi += "|   " + std::to_string(i) + "  NVIDIA H100 80GB HBM3          On  | 00000000:" + kBus[i] + ":00.0 Off |                    0 |\n";
  }
  Write(tmp.path() / "gpu-0001" / "nvidia-smi.log", smi);
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_GPU_FALLEN_OFF_BUS);
  EXPECT_EQ(d.owner(), v1::OWNER_GPU_HARDWARE);
  EXPECT_NE(d.reason().find("skips index 1"), std::string::npos) << d.reason();
}

// Without busId lines or a gap in nvidia-smi's table, a fatal Xid somewhere on the node during a
// job whose failure has no time is not the rank's; nor is the rank's `unspecified launch failure`
// then the application's: the class is left open.
TEST(UntimedXid, WithoutTopologyAnUntimedFailureIsNotLinkedToTheNodesXid) {
  TempDir tmp;
  WriteUntimedJob(tmp.path(), {.bus_ids = false});
  Kernel(tmp.path(), "Mar  2 09:00:17", Xid48("2a"));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_UNSPECIFIED) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_UNKNOWN);
}

bool HasAction(const v1::Diagnosis& d, const std::string& action) {
  for (const auto& p : d.recovery().preconditions()) {
    if (p.action() == action) return true;
  }
  return false;
}

// The rank's node's kernel log was not collected (only the other nodes' were): `unknown error`
// is what a GPU that fell off the bus raises as readily as a faulty kernel, so the answer names
// the rank, leaves the class open and asks for that node's kernel log. A message that names the
// code's fault (an illegal address) stays the application's.
TEST(UntimedXid, WithoutTheNodesKernelLogAnAmbiguousCudaErrorLeavesTheClassOpen) {
  TempDir tmp;
  WriteUntimedJob(tmp.path(), {.error = "RuntimeError: CUDA error: unknown error"});
  fs::remove_all(tmp.path() / "gpu-0001");
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().node(), "gpu-0001");
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_UNSPECIFIED) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_UNKNOWN);
  EXPECT_NE(d.reason().find("no kernel log of it was read"), std::string::npos) << d.reason();
  EXPECT_TRUE(HasAction(d, "inspect_host_logs"));

  TempDir plain;
  WriteUntimedJob(plain.path(), {.error = "RuntimeError: CUDA error: an illegal memory access was encountered"});
  fs::remove_all(plain.path() / "gpu-0001");
  const v1::Diagnosis app = DiagnoseOk(plain.path());
  EXPECT_EQ(app.initiator().failure_class(), v1::FAILURE_CLASS_CUDA_ERROR);
  EXPECT_EQ(app.owner(), v1::OWNER_APPLICATION);
}

// Every file in one (a merged collection, node after node): the untimed watchdog lines follow
// the last node's kernel boot lines, weeks before the job. Their borrowed stamp says nothing of
// when the ranks stalled, so the job's span still bounds the rank's failure and the Xid on its
// GPU explains it.
TEST(UntimedXid, MergedIntoOneFileAForeignBorrowedStampDoesNotTimeTheStall) {
  TempDir canonical;
  WriteUntimedJob(canonical.path(), {});
  Kernel(canonical.path(), "Mar  2 09:00:17", Xid48("2a"));
  TempDir merged;
  std::string all;
  for (const char* f : {"gpu-0001/kern.log", "gpu-0002/kern.log", "slurm-4242001.out", "slurmctld.log"}) {
    std::ifstream in(canonical.path() / f);
    all += std::string(std::istreambuf_iterator<char>(in), {});
  }
  Write(merged.path() / "incident.log", all);
  const v1::Diagnosis d = DiagnoseOk(merged.path());
  EXPECT_EQ(d.initiator().rank(), 1);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_GPU_ECC) << d.reason();
  EXPECT_EQ(d.owner(), v1::OWNER_GPU_HARDWARE);
}

// The wave's start is the earliest timeout that carries a time: torch 2.1's untimed c10 lines
// (time 0) say nothing about when, so with only those there is none, and one stamped timeout
// beside them is the start (not 0, which would put every exit after the wave).
TEST(UntimedWave, WaveStartIsTheEarliestTimedTimeoutOrNone) {
  TempDir dir;
  WriteUntimedJob(dir.path(), {});
  auto untimed = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(untimed.ok()) << untimed.status().message();
  JobFacts facts = CollectFacts(*untimed);
  ASSERT_TRUE(facts.HasWave());
  EXPECT_FALSE(facts.wave.start.has_value());
  ApplyOffsets(*untimed, AlignClocks(*untimed, facts), &facts);
  EXPECT_FALSE(facts.wave.start.has_value());

  Write(dir.path() / "gpu-0002" / "rank_4.log",
        "[rank4]:[E302 09:10:05.123456789 ProcessGroupNCCL.cpp:632] [Rank 4] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=25, OpType=ALLREDUCE, NumelIn=16777216, NumelOut=16777216, Timeout(ms)=600000) ran for 600010 "
        "milliseconds before timing out.\n");
  auto mixed = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(mixed.ok()) << mixed.status().message();
  facts = CollectFacts(*mixed);
  ApplyOffsets(*mixed, AlignClocks(*mixed, facts), &facts);
  ASSERT_TRUE(facts.wave.start.has_value());
  EXPECT_EQ(ClockTime(*facts.wave.start), "09:10:05.123");
}

}  // namespace
}  // namespace denpex::engine
