// DeepSpeed, FSDP and the memory tiers (issue #8): the recognisers on real line shapes (the
// frameworks' own wording, per release), and the engine on small simulated jobs: a checkpoint
// load that every rank fails is one job-level initiator with no cascade; a pinned-memory
// failure is named as that tier; ZeRO offload's see_memory_usage report is cited beside the
// host OOM; DeepSpeed's OVERFLOW notices on rank 0 are never blamed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../sim/sim_test_util.h"
#include "denpex/engine/engine.h"
#include "ingest/chunks.h"
#include "parse/families.h"
#include "parse/parse_log.h"

namespace denpex::engine {
namespace {

using sim::testing_util::FreshDir;
using sim::testing_util::MustParse;
using sim::testing_util::MustSimulate;

ParsedLog Parse(const std::string& text) {
  return ParseLog(text, FileContext{.prefixes = SniffPrefixes(text)});
}

struct Case {
  const char* line;
  Family family;
  Kind kind;
};

void ExpectEach(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const ParsedLog log = Parse(std::string(c.line) + "\n");
    ASSERT_EQ(log.events.size(), 1u) << c.line;
    EXPECT_EQ(FamilyName(log.events[0].family), FamilyName(c.family)) << c.line;
    EXPECT_EQ(KindName(log.events[0].kind), KindName(c.kind)) << c.line;
  }
}

TEST(Frameworks, DeepSpeedAndFsdpErrorsOfEachRelease) {
  ExpectEach({
      {"[rank12]: AssertionError: The parameter 577 has already been reduced. Gradient computed twice for this "
       "partition. Multiple gradient reduction is currently not supported",
       Family::kDeepSpeed, Kind::kZeroError},
      {"AssertionError: {'id': 163, 'status': 'INFLIGHT', 'numel': 16777216, 'ds_numel': 16777216, 'shape': (4096, "
       "4096), 'ds_shape': (4096, 4096), 'requires_grad': True, 'grad_shape': None, 'persist': False, "
       "'active_sub_modules': {371}}",
       Family::kDeepSpeed, Kind::kZeroError},
      {"[rank3]: RuntimeError: Error building extension 'cpu_adam'", Family::kDeepSpeed, Kind::kOffloadError},
      {"[rank3]: deepspeed.runtime.pipe.engine.PipelineError: Only train_batch() is accessible in pipeline mode.",
       Family::kDeepSpeed, Kind::kPipelineError},
      {"AssertionError: ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism", Family::kDeepSpeed,
       Kind::kPipelineError},
      // OpBuilder.jit_load refusing the async_io op NVMe offload needs: before DeepSpeed's builders
      // had an error_log, and after (its value, None for async_io, ends the message)
      {"RuntimeError: Unable to JIT load the async_io op due to it not being compatible due to hardware/software "
       "issue.",
       Family::kDeepSpeed, Kind::kOffloadError},
      {"[rank40]: RuntimeError: Unable to JIT load the async_io op due to it not being compatible due to "
       "hardware/software issue. None",
       Family::kDeepSpeed, Kind::kOffloadError},
      {"RuntimeError: Error building extension 'async_io'", Family::kDeepSpeed, Kind::kOffloadError},
      // FSDP1, 2.1+ and 2.0 wordings
      {"[rank0]: ValueError: Must flatten tensors with uniform dtype but got torch.float16 and torch.float32",
       Family::kFsdp, Kind::kFsdpError},
      {"ValueError: `FlatParameter` requires uniform dtype but got torch.float16 and torch.float32", Family::kFsdp,
       Kind::kFsdpError},
      {"ValueError: Must flatten tensors with uniform requires_grad when use_orig_params=False", Family::kFsdp,
       Kind::kFsdpError},
      // _flat_param.py's own wording (2.1+) and flat_param.py's (1.13-2.0)
      {"[rank4]: ValueError: Must flatten tensors with uniform `requires_grad` when `use_orig_params=False`",
       Family::kFsdp, Kind::kFsdpError},
      {"ValueError: `FlatParameter` requires uniform `requires_grad`", Family::kFsdp, Kind::kFsdpError},
  });
}

TEST(Frameworks, CheckpointLoadErrorsOfDeepSpeedFsdpAndDcp) {
  ExpectEach({
      {"[rank7]: deepspeed.runtime.zero.utils.ZeRORuntimeException: The checkpoint being loaded used a DP world "
       "size of 4 but the current world size is 6.",
       Family::kDeepSpeed, Kind::kCheckpointLoad},
      // one line, as engine.py's _load_zero_checkpoint raises it (DeepSpeed #2898, #6441)
      {"deepspeed.runtime.zero.utils.ZeRORuntimeException: The checkpoint being loaded used a DP world size of 256 "
       "but the current world size is 2. Automatic adjustment of ZeRO's optimizer state partitioning with a new "
       "world size is not currently supported.",
       Family::kDeepSpeed, Kind::kCheckpointLoad},
      {"FileNotFoundError: [Errno 2] No such file or directory: "
       "'/ckpt/global_step3000/zero_pp_rank_37_mp_rank_00_optim_states.pt'",
       Family::kDeepSpeed, Kind::kCheckpointLoad},
      {"RuntimeError: Error(s) in loading state_dict for FullyShardedDataParallel:", Family::kFsdp,
       Kind::kCheckpointLoad},
      {"RuntimeError: Error(s) in loading state_dict for VocabParallelEmbedding:", Family::kPython,
       Kind::kCheckpointLoad},
      {"RuntimeError: Size mismatch between saved torch.Size([257152, 2048]) and current: torch.Size([131661824])",
       Family::kPython, Kind::kCheckpointLoad},
      // A missing file that is not a checkpoint shard stays a plain exception.
      {"FileNotFoundError: [Errno 2] No such file or directory: '/data/train.idx'", Family::kPython,
       Kind::kException},
  });
}

TEST(Frameworks, PinMemoryThreadAndItsOutOfMemory) {
  ExpectEach({
      {"[rank5]: RuntimeError: Caught RuntimeError in pin memory thread for device 5.", Family::kCuda,
       Kind::kPinMemory},
      {"RuntimeError: CUDA error: out of memory", Family::kCuda, Kind::kCudaError},
  });
}

// A direct pin (torch's CachingHostAllocator -> cudaHostAlloc, not the DataLoader's thread): a
// plain CUDA error whose traceback ends in a pin_memory frame is the pinned tier; the same error
// after any other innermost frame stays a CUDA error.
TEST(Frameworks, DirectPinFailureIsThePinnedTierOnlyWhenTheInnermostFrameIsThePin) {
  const std::string direct =
      "[rank9]: Traceback (most recent call last):\n"
      "[rank9]:   File \"/workspace/train.py\", line 412, in <module>\n"
      "[rank9]:     main()\n"
      "[rank9]:   File \"/usr/local/lib/python3.10/dist-packages/deepspeed/accelerator/cuda_accelerator.py\", line 219, "
      "in pin_memory\n"
      "[rank9]:     return tensor.pin_memory()\n"
      "[rank9]:            ^^^^^^^^^^^^^^^^^^^\n"
      "[rank9]: RuntimeError: CUDA error: out of memory\n";
  ParsedLog log = Parse(direct);
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(KindName(log.events[0].kind), KindName(Kind::kPinMemory));
  EXPECT_EQ(log.events[0].line, 7u);
  const std::string staging =
      "Traceback (most recent call last):\n"
      "  File \"/workspace/ckpt/async_stager.py\", line 41, in _alloc\n"
      "    return torch.empty(t.shape, dtype=t.dtype, device=\"cpu\", pin_memory=True)\n"
      "RuntimeError: CUDA error: out of memory\n";
  log = Parse(staging);
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(KindName(log.events[0].kind), KindName(Kind::kPinMemory));
  std::string outer = "Traceback (most recent call last):\n"
                      "  File \"/workspace/train.py\", line 97, in to_device\n"
                      "    batch = {k: v.pin_memory() for k, v in batch.items()}\n";
  for (int i = 0; i < 12; ++i) outer += "  File \"/workspace/model.py\", line 50, in forward\n    return self.block(x)\n";
  outer += "RuntimeError: CUDA error: out of memory\n";
  log = Parse(outer);
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(KindName(log.events[0].kind), KindName(Kind::kCudaError));
}

TEST(Frameworks, DeepSpeedOverflowAndMemoryNotesAreNotErrors) {
  const std::vector<const char*> lines = {
      "[2024-03-08 16:33:21,415] [INFO] [loss_scaler.py:183:update_scale] Grad overflow on iteration 7",
      "[2026-03-02 09:00:31,402] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping "
      "step. Attempted loss scale: 65536, reducing to 32768",
      "[2023-04-02 11:02:03,001] [INFO] [stage_1_and_2.py:1855:step] [deepscale] OVERFLOW! Rank 0 Skipping step. "
      "Attempted loss scale: 4294967296, reducing to 2147483648",
      "[2024-03-08 16:33:21,416] [INFO] [unfused_optimizer.py:207:step] [deepspeed] fp16 dynamic loss scale "
      "overflow! Skipping step. Attempted loss scale: 65536.0, reducing to 32768.0",
  };
  for (const char* line : lines) {
    const ParsedLog log = Parse(std::string(line) + "\n");
    ASSERT_EQ(log.events.size(), 1u) << line;
    EXPECT_EQ(log.events[0].kind, Kind::kOverflow) << line;
    EXPECT_EQ(log.events[0].signature, kNoStr) << line;  // not an error: never grouped or blamed
  }
  const ParsedLog log = Parse(
      "[2024-07-24 02:13:16,632] [INFO] [utils.py:789:see_memory_usage] CPU Virtual Memory:  used = 1956.1 GB, "
      "percent = 97.1%\n");
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].kind, Kind::kMemoryUsage);
  const auto& m = std::get<HostMemory>(log.events[0].detail);
  EXPECT_FLOAT_EQ(m.used_gb, 1956.1f);
  EXPECT_FLOAT_EQ(m.percent, 97.1f);
}

// A chained traceback's cause (`The above exception was the direct cause ...`) is marked so the
// chain's last exception is the rank's; Python's report of an exception a __del__ raised at
// teardown (`Exception ignored in:`) is no event at all.
TEST(Frameworks, ChainedCauseIsMarkedAndAnUnraisableReportIsNoError) {
  const ParsedLog log = Parse(
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3.10/subprocess.py\", line 526, in run\n"
      "    raise CalledProcessError(retcode, process.args,\n"
      "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n"
      "\n"
      "The above exception was the direct cause of the following exception:\n"
      "\n"
      "Traceback (most recent call last):\n"
      "  File \"/usr/local/lib/python3.10/dist-packages/torch/utils/cpp_extension.py\", line 2226, in _run_ninja_build\n"
      "    raise RuntimeError(message) from e\n"
      "RuntimeError: Error building extension 'cpu_adam'\n"
      "Exception ignored in: <function DeepSpeedCPUAdam.__del__ at 0x7f82abc1d8a0>\n"
      "Traceback (most recent call last):\n"
      "  File \"/usr/local/lib/python3.10/dist-packages/deepspeed/ops/adam/cpu_adam.py\", line 102, in __del__\n"
      "    self.ds_opt_adam.destroy_adam(self.opt_id)\n"
      "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'\n");
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_TRUE(std::get<PythonError>(log.events[0].detail).chained);
  EXPECT_FALSE(std::get<PythonError>(log.events[1].detail).chained);
  EXPECT_EQ(KindName(log.events[1].kind), KindName(Kind::kOffloadError));
  EXPECT_EQ(log.events[1].line, 11u);
  // torch >= 2.2 prefixes the traceback's lines with `[rank<G>]: ` (the unraisable report is not).
  const ParsedLog prefixed = Parse(
      "[rank3]: Traceback (most recent call last):\n"
      "[rank3]:   File \"/usr/lib/python3.10/subprocess.py\", line 526, in run\n"
      "[rank3]:     raise CalledProcessError(retcode, process.args,\n"
      "[rank3]: subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n"
      "[rank3]: \n"
      "[rank3]: The above exception was the direct cause of the following exception:\n"
      "[rank3]: \n"
      "[rank3]: Traceback (most recent call last):\n"
      "[rank3]:   File \"/usr/local/lib/python3.10/dist-packages/torch/utils/cpp_extension.py\", line 2226, in _run_ninja_build\n"
      "[rank3]:     raise RuntimeError(message) from e\n"
      "[rank3]: RuntimeError: Error building extension 'cpu_adam'\n");
  ASSERT_EQ(prefixed.events.size(), 2u);
  EXPECT_TRUE(std::get<PythonError>(prefixed.events[0].detail).chained);
  EXPECT_FALSE(std::get<PythonError>(prefixed.events[1].detail).chained);
}

// --- the engine on simulated jobs (4 nodes x 8 GPUs) ---------------------------------------

constexpr const char* kJob = R"(name: "t"
seed: 5
job { nodes: 4 tp: 2 pp: 1 }
training { warmup_steps: 8 data_parallel: DATA_PARALLEL_ZERO trainer_log: TRAINER_LOG_DEEPSPEED }
realism { deepspeed_overflow: true }
faults { kind: FAULT_KIND_SIGKILL rank: 13 }
)";

v1::Diagnosis SimulateAndDiagnose(std::vector<std::string> overrides, v1::Truth* truth = nullptr) {
  const auto dir = FreshDir();
  const auto r = MustSimulate(MustParse(kJob, std::move(overrides)), dir);
  if (truth != nullptr) *truth = r.truth;
  auto d = Diagnose(dir / "incident", {.threads = 1});
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.ok() ? *d : v1::Diagnosis();
}

TEST(Frameworks, EveryRankFailingTheCheckpointLoadIsTheWholeJobWithNoCascade) {
  for (const char* launcher : {"LAUNCHER_TORCHRUN", "LAUNCHER_SRUN"}) {
    for (int variant = 0; variant < 3; ++variant) {
      SCOPED_TRACE(std::string(launcher) + " variant " + std::to_string(variant));
      v1::Truth truth;
      const v1::Diagnosis d = SimulateAndDiagnose(
          {"launcher=" + std::string(launcher), "faults[0].kind=FAULT_KIND_CHECKPOINT_LOAD_ERROR", "faults[0].step=0",
           "faults[0].variant=" + std::to_string(variant)},
          &truth);
      EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED);
      EXPECT_EQ(d.initiator().rank(), -1);
      EXPECT_EQ(d.initiator().node(), "");
      EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_CHECKPOINT_LOAD);
      EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
      EXPECT_EQ(d.cascade().secondary_ranks_size(), 0);
      ASSERT_GT(d.evidence_size(), 0);
      ASSERT_GT(truth.evidence_size(), 0);
      EXPECT_EQ(d.evidence(0).text(), truth.evidence(0).text());  // the lowest rank's line
    }
  }
}

// Setup errors every rank raises at once (the same wrap or config on every rank, docs/diagnosis_format.md:
// the whole job is the initiator, rank -1, the lowest rank's line cited): FSDP's FlatParameter checks,
// the async_io op for NVMe offload, ZeRO-2/3 under the pipeline engine. Each rank raises a little
// apart from the others (file system, import times), so the first in time is often not rank 0.
TEST(Frameworks, SetupErrorsEveryRankRaisesAreTheWholeJob) {
  for (const char* kind :
       {"FAULT_KIND_FSDP_ERROR", "FAULT_KIND_DEEPSPEED_AIO_INCOMPATIBLE", "FAULT_KIND_DEEPSPEED_ZERO_PIPELINE"}) {
    for (const char* launcher : {"LAUNCHER_TORCHRUN", "LAUNCHER_SRUN"}) {
      // torch 1.13 under srun: only srun's task labels say whose lines they are
      for (int variant = 0; variant < 4; ++variant) {
        const std::string torch = variant < 2 ? "2.4" : "1.13";
        SCOPED_TRACE(std::string(kind) + " " + launcher + " variant " + std::to_string(variant) + " torch " + torch);
        v1::Truth truth;
        const v1::Diagnosis d = SimulateAndDiagnose(
            {"launcher=" + std::string(launcher), "job.pp=2", std::string("faults[0].kind=") + kind,
             "faults[0].variant=" + std::to_string(variant), "format.torch=" + torch, "format.nccl=2.18.5"},
            &truth);
        EXPECT_EQ(truth.initiator().rank(), -1);
        ASSERT_GT(truth.events_size(), 0);
        EXPECT_EQ(truth.events(0).step(), 0);  // before the first step
        EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
        EXPECT_EQ(d.initiator().rank(), -1) << d.reason();
        EXPECT_EQ(d.initiator().node(), "");
        EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_PYTHON_EXCEPTION);
        EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
        EXPECT_EQ(d.cascade().secondary_ranks_size(), 0);
        ASSERT_GT(d.evidence_size(), 0);
        ASSERT_GT(truth.evidence_size(), 0);
        EXPECT_EQ(d.evidence(0).text(), truth.evidence(0).text());  // rank 0's line, whoever raised first
      }
    }
  }
}

// torch <= 2.1 prints no `[rank<G>]:` prefix: in a torchrun log dir (one folder per local rank)
// a rank's lines are placed by its node's first rank, which the agent's failure table shows.
TEST(Frameworks, CheckpointLoadInAnOldTorchLogDirIsTheWholeJob) {
  for (const char* torch : {"2.1", "1.13"}) {
    SCOPED_TRACE(torch);
    const v1::Diagnosis d = SimulateAndDiagnose({"layout=LAYOUT_TORCHRUN_LOG_DIR", std::string("format.torch=") + torch,
                                                 "format.nccl=2.18.5", "faults[0].kind=FAULT_KIND_CHECKPOINT_LOAD_ERROR",
                                                 "faults[0].step=0", "faults[0].variant=0"});
    EXPECT_EQ(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
    EXPECT_EQ(d.initiator().rank(), -1);
    EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_CHECKPOINT_LOAD);
    EXPECT_EQ(d.input().ranks_seen(), 32);
  }
}

// Each era's wording: FSDP1's FlatParameter checks (flat_param.py in 1.13, _flat_param.py's
// "Must flatten" from 2.1), DeepSpeed's DP world-size check on one line.
TEST(Frameworks, SimulatedLinesFollowEachEra) {
  struct Era {
    const char* torch;
    const char* kind;
    int variant;
    const char* line;
  };
  const Era eras[] = {
      {"1.13", "FAULT_KIND_FSDP_ERROR", 0, "ValueError: `FlatParameter` requires uniform dtype but got torch.float16 and torch.float32\n"},
      {"1.13", "FAULT_KIND_FSDP_ERROR", 1, "ValueError: `FlatParameter` requires uniform `requires_grad`\n"},
      {"2.4", "FAULT_KIND_FSDP_ERROR", 0, "ValueError: Must flatten tensors with uniform dtype but got torch.float16 and torch.float32\n"},
      {"2.6", "FAULT_KIND_FSDP_ERROR", 1, "ValueError: Must flatten tensors with uniform `requires_grad` when `use_orig_params=False`\n"},
      {"2.4", "FAULT_KIND_DEEPSPEED_AIO_INCOMPATIBLE", 0,
       "RuntimeError: Unable to JIT load the async_io op due to it not being compatible due to hardware/software "
       "issue. None\n"},
      {"1.13", "FAULT_KIND_DEEPSPEED_AIO_INCOMPATIBLE", 1,
       "builder.py\", line 463, in jit_load\n    raise RuntimeError(\nRuntimeError: Unable to JIT load the async_io op "
       "due to it not being compatible due to hardware/software issue.\n"},
      {"2.6", "FAULT_KIND_DEEPSPEED_ZERO_PIPELINE", 0,
       "    assert self.zero_optimization_stage(\n[rank13]: AssertionError: ZeRO-2 and ZeRO-3 are incompatible with "
       "pipeline parallelism\n"},
      {"2.1", "FAULT_KIND_DEEPSPEED_ZERO_PIPELINE", 1,
       "    assert self.zero_optimization_stage() < 2, \"ZeRO-2 and ZeRO-3 are incompatible with pipeline "
       "parallelism\"\nAssertionError: ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism\n"},
      {"2.4", "FAULT_KIND_CHECKPOINT_LOAD_ERROR", 0,
       "ZeRORuntimeException: The checkpoint being loaded used a DP world size of 32 but the current world size is 16. "
       "Automatic adjustment of ZeRO's optimizer state partitioning with a new world size is not currently supported.\n"},
  };
  for (const Era& e : eras) {
    SCOPED_TRACE(std::string(e.torch) + " " + e.kind);
    const auto dir = FreshDir();
    MustSimulate(MustParse(kJob, {std::string("format.torch=") + e.torch, std::string("faults[0].kind=") + e.kind,
                                  "faults[0].step=0", "faults[0].variant=" + std::to_string(e.variant)}),
                 dir);
    const std::string log = sim::testing_util::ReadAll(dir / "incident" / "gpu-0002" / "rank_13.log");
    EXPECT_NE(log.find(e.line), std::string::npos) << log;
  }
}

// A pure FSDP job under srun: the hung rank is the last of its node and prints nothing, so
// its node shows 7 contiguous ranks from 0 (a multiple of 7) while the others show 8: the
// node of each block of 8 still places it.
TEST(Frameworks, HungLastRankOfANodeUnderSrunIsPlacedOnItsNode) {
  const v1::Diagnosis d =
      SimulateAndDiagnose({"launcher=LAUNCHER_SRUN", "job.tp=1", "faults[0].kind=FAULT_KIND_HANG", "faults[0].rank=7"});
  EXPECT_EQ(d.initiator().rank(), 7) << d.reason();
  EXPECT_EQ(d.initiator().node(), "gpu-0001");
  EXPECT_EQ(d.initiator().local_rank(), 7);
}

// The cpu_adam JIT build fails on one node: the rank that held torch's build lock raises `Error
// building extension`, its 7 local peers waited and raise ImportError for the missing .so (any
// of them may exit first, and its agent names that one). The builder is the initiator; the
// waiters are consequences, each way the job is launched.
TEST(Frameworks, FailedJitBuildNamesTheBuilderNotTheRanksThatWaitedOnIt) {
  for (const char* launcher : {"LAUNCHER_TORCHRUN", "LAUNCHER_SRUN"}) {
    for (int rank : {11, 16, 30}) {
      SCOPED_TRACE(std::string(launcher) + " rank " + std::to_string(rank));
      v1::Truth truth;
      const v1::Diagnosis d = SimulateAndDiagnose({"launcher=" + std::string(launcher), "faults[0].kind=FAULT_KIND_DEEPSPEED_ERROR",
                                                   "faults[0].variant=2", "faults[0].step=0",
                                                   "faults[0].rank=" + std::to_string(rank)},
                                                  &truth);
      EXPECT_EQ(truth.initiator().rank(), rank);
      EXPECT_EQ(d.initiator().rank(), rank) << d.reason();
      EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_PYTHON_EXCEPTION);
      EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
      EXPECT_NE(d.reason().find("Its 7 local peers waited on its build"), std::string::npos) << d.reason();
      ASSERT_GT(d.evidence_size(), 0);
      EXPECT_NE(d.evidence(0).text().find("Error building extension 'cpu_adam'"), std::string::npos);
      bool import = false;
      for (const auto& e : d.evidence()) import |= e.text().find("cpu_adam.so: cannot open shared object file") != std::string::npos;
      EXPECT_TRUE(import);
    }
  }
}

TEST(Frameworks, PinnedHostMemoryFailureIsNamedAsItsTier) {
  const v1::Diagnosis d = SimulateAndDiagnose({"faults[0].kind=FAULT_KIND_PINNED_OOM"});
  EXPECT_EQ(d.initiator().rank(), 13);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_PINNED_OOM);
  EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
  EXPECT_NE(d.reason().find("pinned"), std::string::npos) << d.reason();
}

TEST(Frameworks, DirectPinnedHostMemoryFailureIsNamedAsItsTier) {
  for (int variant : {1, 3}) {
    SCOPED_TRACE(variant);
    v1::Truth truth;
    const v1::Diagnosis d = SimulateAndDiagnose(
        {"faults[0].kind=FAULT_KIND_PINNED_OOM", "faults[0].variant=" + std::to_string(variant)}, &truth);
    EXPECT_EQ(d.initiator().rank(), 13);
    EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_PINNED_OOM);
    EXPECT_EQ(d.owner(), v1::OWNER_APPLICATION);
    ASSERT_GT(truth.evidence_size(), 0);
    EXPECT_NE(truth.evidence(0).text().find("RuntimeError: CUDA error: out of memory"), std::string::npos);
  }
}

TEST(Frameworks, OffloadHostOomCitesTheFullestMemoryReport) {
  const v1::Diagnosis d = SimulateAndDiagnose(
      {"faults[0].kind=FAULT_KIND_OFFLOAD_HOST_OOM", "faults[0].rank=5", "training.warmup_steps=30"});
  EXPECT_EQ(d.initiator().rank(), 5);
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_HOST_OOM);
  EXPECT_EQ(d.owner(), v1::OWNER_HOST);
  bool cited = false;
  for (const auto& e : d.evidence()) cited |= e.text().find("CPU Virtual Memory:  used = ") != std::string::npos;
  EXPECT_TRUE(cited);
  EXPECT_NE(d.reason().find("Memory tier: host"), std::string::npos) << d.reason();
}

TEST(Frameworks, DeepSpeedOverflowOnRankZeroIsNotBlamed) {
  for (const char* kind : {"FAULT_KIND_SIGKILL", "FAULT_KIND_EXCEPTION", "FAULT_KIND_DEEPSPEED_ERROR"}) {
    SCOPED_TRACE(kind);
    const auto dir = FreshDir(kind);
    MustSimulate(MustParse(kJob, {std::string("faults[0].kind=") + kind, "training.warmup_steps=30"}), dir);
    const std::string rank0 = sim::testing_util::ReadAll(dir / "incident" / "gpu-0001" / "rank_0.log");
    EXPECT_NE(rank0.find("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768"),
              std::string::npos);
    auto d = Diagnose(dir / "incident", {.threads = 1});
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->initiator().rank(), 13);
  }
}

}  // namespace
}  // namespace denpex::engine
