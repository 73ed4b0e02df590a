// ReadTrainingMetrics and the baseline (denpex/engine/metrics.h) on real trainer lines, each with
// its source, and on the real captures of corpora/.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "denpex/engine/metrics.h"
#include "support/temp_dir.h"

namespace denpex::engine {
namespace {

namespace fs = std::filesystem;

void WriteFile(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

TrainingMetrics Read(const std::string& text, const std::string& name = "console.log") {
  testing::TempDir dir;
  WriteFile(dir.path() / name, text);
  auto m = ReadTrainingMetrics(dir.path());
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : TrainingMetrics{};
}

// Megatron-LM's training_log as printed in OpenSeek's README (BAAI, its
// `OpenSeek-Small-v1-Baseline/logs/host_0_localhost.output`), behind torchrun's `[default0]:` tag:
// a MoE model's `load_balancing_loss` beside `lm loss`.
TEST(Metrics, ReadsMegatronIterationLine) {
  const auto m = Read(
      "[default0]: [2025-05-27 15:23:07] iteration        1/    24000 | consumed samples:          "
      "1024 | "
      "elapsed time per iteration (ms): 271607.0 | throughput per GPU (TFLOP/s/GPU): 40.4 | "
      "learning rate: "
      "1.500000E-06 | global batch size:  1024 | lm loss: 1.192634E+01 | load_balancing_loss: "
      "1.041994E+00 | "
      "loss scale: 1.0 | grad norm: 5.960 | num zeros: 0.0 | params norm: 238.330 | number of "
      "skipped "
      "iterations:    0 | number of nan iterations:    0 |\n");
  ASSERT_EQ(m.series.size(), 1u);
  const TrainingSeries& s = m.series[0];
  EXPECT_EQ(s.rank, -1);  // the last rank prints it; the line names none
  EXPECT_EQ(s.shape, TrainerShape::kMegatron);
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_EQ(s.steps[0].step, 1);
  EXPECT_DOUBLE_EQ(*s.steps[0].loss, 11.92634);
  EXPECT_DOUBLE_EQ(*s.steps[0].seconds_per_step, 271.607);
  EXPECT_FALSE(s.steps[0].derived);
  EXPECT_EQ(s.steps[0].Cite(), "console.log:1");
  EXPECT_EQ(*s.steps[0].time, *ParseRfc3339("2025-05-27T15:23:07Z"));
}

// Megatron before its stamp (AscendSpeed/ModelLink's llama README, `pretrain_llama_65b_ptd.sh`'s
// log), its values padded; and Megatron-LM from 2026 (training.py `training_log`, commit
// d98e8a64: `strftime('%Y-%m-%d %H:%M:%S.%f')`), its stamp in microseconds.
TEST(Metrics, ReadsMegatronWithoutStampAndWithMicroseconds) {
  const auto m = Read(
      " iteration  11/50000 | consumed samples: 5632 | consumed tokens:  11534336 | elapsed time "
      "per iteration "
      "(ms):  52728.1 | learning rate:    1.499E-05 | gloabl batch size:  512 | lm loss:  "
      "1.376514E+01 | loss "
      "scale:  65536.0 | grad norm:    459.628 | actual seqlen:  2048 |\n"
      " [2026-04-27 00:00:01.250000] iteration       12/   50000 | consumed samples:         6144 "
      "| elapsed "
      "time per iteration (ms): 4000.0 | learning rate: 1.000000E-04 | global batch size:   512 | "
      "lm loss: "
      "3.000000E+00 | mtp_1 loss: 4.000000E+00 | loss scale: 1.0 | grad norm: 1.000 | number of "
      "skipped "
      "iterations:   0 | number of nan iterations:   0 |\n");
  ASSERT_EQ(m.series.size(), 1u);
  const auto& steps = m.series[0].steps;
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_FALSE(steps[0].time.has_value());
  EXPECT_DOUBLE_EQ(*steps[0].loss, 13.76514);
  EXPECT_DOUBLE_EQ(*steps[0].seconds_per_step, 52.7281);
  EXPECT_EQ(steps[1].step, 12);
  EXPECT_DOUBLE_EQ(*steps[1].loss, 3.0);  // `lm loss`, not `mtp_1 loss`
  EXPECT_EQ(*steps[1].time, *ParseRfc3339("2026-04-27T00:00:01.25Z"));
}

// A Megatron fork that adds the running mean (`elapsed time per iteration (ms): {:.1f}/{:.1f}`, a
// training loop's `log_string` in the code corpus): the interval's own value is the step time.
TEST(Metrics, ReadsMegatronForkWithRunningMean) {
  const auto m = Read(
      " [2025-01-02 10:00:00] iteration       20/     100 | consumed samples:          640 | "
      "elapsed time "
      "per iteration (ms): 812.4/799.9 | learning rate: 1.000000E-04 | global batch size:    32 | "
      "lm loss: "
      "5.123400E+00 | loss scale: 1.0 |\n");
  ASSERT_EQ(m.series.size(), 1u);
  EXPECT_DOUBLE_EQ(*m.series[0].steps.at(0).seconds_per_step, 0.8124);
  EXPECT_EQ(m.malformed, 0);
}

// DeepSpeed 0.9-0.14 on rank 0 (deepspeedai/DeepSpeed#3742's wording, docs/log_formats.md §5):
// the step line names no loss nor time; the seconds per step come from its stamps. The
// SamplesPerSec line of the same step adds nothing (a step per series, the first line's).
TEST(Metrics, DerivesDeepSpeedStepTimeFromItsStamps) {
  const auto m = Read(
      "[2026-03-02 09:00:13,926] [INFO] [logging.py:96:log_dist] [Rank 0] step=2, skipped=0, "
      "lr=[1.5e-07], "
      "mom=[[0.9, 0.95]]\n"
      "[2026-03-02 09:00:13,926] [INFO] [timer.py:215:stop] epoch=0/micro_step=16/global_step=2, "
      "RunningAvgSamplesPerSec=167.6419317915991, CurrSamplesPerSec=167.97788756673256, "
      "MemAllocated=38.06GB, "
      "MaxMemAllocated=61.05GB\n"
      "[2026-03-02 09:00:16,326] [INFO] [logging.py:96:log_dist] [Rank 0] step=4, skipped=0, "
      "lr=[3e-07], "
      "mom=[[0.9, 0.95]]\n");
  ASSERT_EQ(m.series.size(), 1u);
  const TrainingSeries& s = m.series[0];
  EXPECT_EQ(s.rank, 0);
  EXPECT_EQ(s.shape, TrainerShape::kDeepSpeed);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_FALSE(s.steps[0].seconds_per_step.has_value());
  EXPECT_EQ(s.steps[1].step, 4);
  EXPECT_TRUE(s.steps[1].derived);
  EXPECT_NEAR(*s.steps[1].seconds_per_step, 1.2, 1e-9);  // 2.4 s over 2 steps
  EXPECT_FALSE(s.steps[1].loss.has_value());
}

// DeepSpeed's PipelineEngine.train_batch (deepspeed/runtime/pipe/engine.py, `log_str`, at
// 38327e07): `steps: N loss: L iter time (s): T samples/sec: S`, printed by global rank 0.
TEST(Metrics, ReadsDeepSpeedPipelineLine) {
  const auto m = Read("steps: 100 loss: 2.3456 iter time (s): 1.234 samples/sec: 207.455\n");
  ASSERT_EQ(m.series.size(), 1u);
  const auto& st = m.series[0].steps.at(0);
  EXPECT_EQ(m.series[0].shape, TrainerShape::kDeepSpeedPipe);
  EXPECT_EQ(st.step, 100);
  EXPECT_DOUBLE_EQ(*st.loss, 2.3456);
  EXPECT_DOUBLE_EQ(*st.seconds_per_step, 1.234);
}

// torchtitan's MetricsProcessor.log behind `[rank0]:[titan] <asctime> - root - INFO - ` (torchao's
// float8 pre-training tutorial, its llama3_8b run): every 10th step logged; the seconds per step
// from the stamps. The last line as torchtitan prints it to a terminal, in colour
// (torchtitan/components/metrics.py, `color.red}step: ...`).
TEST(Metrics, ReadsTorchtitanLinesAndTheirRankPrefix) {
  const auto m = Read(
      "[rank0]:[titan] 2025-06-04 08:51:48,074 - root - INFO - step:  1  loss: 12.2254  memory: "
      "27.34GiB(28.78%)  tps: 375  tflops: 21.73  mfu: 2.20%\n"
      "[rank0]:[titan] 2025-06-04 08:51:58,557 - root - INFO - step: 10  loss: 10.7069  memory: "
      "30.99GiB(32.62%)  tps: 7,034  tflops: 407.35  mfu: 41.19%\n"
      "[rank0]:[titan] 2025-06-04 08:52:10,224 - root - INFO - \x1b[31mstep: 20  \x1b[32mloss:  "
      "8.9196  "
      "\x1b[38;2;54;234;195mmemory: 30.99GiB(32.62%)  \x1b[34mtps: 7,022  \x1b[36mtflops: 406.65  "
      "\x1b[35mmfu: 41.12%\x1b[39m\n"
      "[rank0]:[titan] 2025-06-04 08:52:10,300 - root - INFO - validate step: 20  loss:  9.1000\n");
  ASSERT_EQ(m.series.size(), 1u);
  const TrainingSeries& s = m.series[0];
  EXPECT_EQ(s.rank, 0);
  EXPECT_EQ(s.shape, TrainerShape::kTorchtitan);
  ASSERT_EQ(s.steps.size(), 3u);
  EXPECT_NEAR(*s.steps[1].seconds_per_step, 10.483 / 9, 1e-9);
  EXPECT_DOUBLE_EQ(*s.steps[2].loss, 8.9196);
  EXPECT_NEAR(*s.steps[2].seconds_per_step, 1.1667, 1e-9);
}

// HF Trainer: the loss dict joined to the training bar by a paste (huggingface/transformers
// issue text, `2%|▏ | 500/22184 [01:40<1:12:54,  4.96it/s]{'loss': 2.5609, ...}`), a slow step's
// `s/it` (a sentence-transformers fit, `1.33s/it]{'loss': 0.0281, ...}`), and transformers 5's
// quoted values.
TEST(Metrics, ReadsHfTrainerLossWithItsBarsStepAndRate) {
  const auto m = Read(
      "  2%|\xe2\x96\x8f         | 500/22184 [01:40<1:12:54,  4.96it/s]{'loss': 2.5609, "
      "'learning_rate': "
      "1.9552830869094844e-05, 'epoch': 0.05}\n"
      "  5%|\xe2\x96\x8d         | 1000/22184 [03:28<1:13:10,  1.33s/it]{'loss': '1.178', "
      "'grad_norm': '1.109', "
      "'learning_rate': '5e-05', 'epoch': '2'}\n");
  ASSERT_EQ(m.series.size(), 1u);
  const auto& steps = m.series[0].steps;
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].step, 500);
  EXPECT_DOUBLE_EQ(*steps[0].loss, 2.5609);
  EXPECT_NEAR(*steps[0].seconds_per_step, 1 / 4.96, 1e-12);
  EXPECT_EQ(steps[1].step, 1000);
  EXPECT_DOUBLE_EQ(*steps[1].loss, 1.178);
  EXPECT_DOUBLE_EQ(*steps[1].seconds_per_step, 1.33);
}

// HF Trainer as a file holds it: tqdm rewrites its bar with `\r`, and tqdm.write clears it before
// the dict. The evaluation bar (another total) and bars of a stream with no loss are not steps.
TEST(Metrics, ReadsHfTrainerFromTqdmCarriageReturns) {
  const auto m = Read(
      "\r  0%|          | 0/400 [00:00<?, ?it/s]\r  2%|2         | 9/400 [00:09<06:37,  1.02s/it]"
      "\r  2%|2         | 10/400 [00:10<06:30,  1.01it/s]\r                                  \r"
      "{'loss': 4.6477, 'grad_norm': 2.48, 'learning_rate': 4.75e-05, 'epoch': 0.0}\n"
      "\r  2%|2         | 10/400 [00:10<06:30,  1.01it/s]\r 50%|#####     | 3/6 [00:01<00:01,  "
      "2.00it/s]\r  2%|2         | 10/400 [00:12<06:30,  1.01it/s]\n");
  ASSERT_EQ(m.series.size(), 1u);
  const auto& steps = m.series[0].steps;
  ASSERT_EQ(steps.size(),
            3u);  // the training bar's steps 0, 9 and 10 (redrawn after the 3/6 bar: one step)
  EXPECT_EQ(steps[0].step, 0);
  EXPECT_FALSE(steps[0].seconds_per_step.has_value());  // `?it/s`
  EXPECT_EQ(steps[1].step, 9);
  EXPECT_DOUBLE_EQ(*steps[1].seconds_per_step, 1.02);
  EXPECT_EQ(steps[2].step, 10);
  EXPECT_DOUBLE_EQ(*steps[2].loss, 4.6477);
  EXPECT_EQ(steps[2].line, 1u);
  const Baseline b = SummarizeBaseline(m, {});
  EXPECT_EQ(b.last_step, 10);
  EXPECT_DOUBLE_EQ(*b.last_loss, 4.6477);
  const auto only_bars = Read("\r 50%|#####     | 3/6 [00:01<00:01,  2.00it/s]\n");
  EXPECT_TRUE(only_bars.series.empty());
}

// Collector prefixes are peeled as the diagnosis peels them: a CRI stamp before a Megatron line.
TEST(Metrics, PeelsCollectorPrefixes) {
  const auto m = Read(
      "2024-06-01T09:00:21.972589808Z stdout F  [2024-06-01 09:00:21] iteration      100/  500000 "
      "| consumed "
      "samples:        12800 | elapsed time per iteration (ms): 1234.5 | learning rate: "
      "3.000000E-04 | global "
      "batch size:   128 | lm loss: 2.345678E+00 | loss scale: 1.0 | grad norm: 1.234 | number of "
      "skipped "
      "iterations:   0 | number of nan iterations:   0 |\n");
  ASSERT_EQ(m.series.size(), 1u);
  EXPECT_EQ(m.series[0].steps.at(0).step, 100);
  EXPECT_DOUBLE_EQ(*m.series[0].steps.at(0).loss, 2.345678);
}

// corpora/real/tr_slow_rank2: train.py's step lines on 4 ranks (torchrun, gloo), rank 2 slowed
// from step 8. Ranks come from `rank=<R>`, not from `rank_<R>.log`.
TEST(Metrics, ReadsTheRealTrainPyCapture) {
  const fs::path dir = fs::path(DENPEX_SOURCE_DIR) / "corpora/real/tr_slow_rank2/incident";
  auto m = ReadTrainingMetrics(dir);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->series.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(m->series[r].rank, r);
    EXPECT_EQ(m->series[r].shape, TrainerShape::kKeyValue);
    EXPECT_EQ(m->series[r].steps.size(), 20u);
  }
  const TrainingSeries& slow = m->series[2];
  const Baseline before = SummarizeSeries(slow, {.not_after_step = 7});
  EXPECT_EQ(before.last_step, 7);
  EXPECT_EQ(before.last_step_cite, "node-b/rank_2.log:14");
  EXPECT_DOUBLE_EQ(*before.last_loss, 7.37167);
  EXPECT_NEAR(*before.median_seconds_per_step, 0.2575, 1e-9);
  EXPECT_EQ(before.steps_measured, 7);
  const Baseline after = SummarizeSeries(slow, {.last_steps = 5});
  EXPECT_NEAR(*after.median_seconds_per_step, 1.7565, 1e-9);  // steps 16-20
  // By time: 16:27:56.804 is step 7's line.
  const Baseline by_time =
      SummarizeSeries(slow, {.not_after_time = *ParseRfc3339("2026-11-29T16:27:57Z")});
  EXPECT_EQ(by_time.last_step, 7);
  // The job's: every rank reached step 20; the lowest rank's series answers.
  const Baseline job = SummarizeBaseline(*m, {});
  EXPECT_EQ(job.rank, 0);
  EXPECT_EQ(job.last_step, 20);
}

// Two ranks under torchrun print to one console, unbuffered (print() writes the text, then its
// newline): rank 0's step line runs into rank 1's. Each is its rank's step, at the same line.
TEST(Metrics, ReadsEachRanksStepFromTwoLinesGluedIntoOne) {
  const auto m = Read(
      "2026-12-05 12:56:27.716 rank=0 step=1/40 loss=12.47824 data_ms=2.2 step_ms=110.2\n"
      "2026-12-05 12:56:27.716 rank=1 step=1/40 loss=12.1 data_ms=2.2 step_ms=110.2\n"
      "2026-12-05 12:56:27.826 rank=0 step=2/40 loss=13.62115 data_ms=0.1 step_ms=110.62026-12-05 "
      "12:56:27.826 rank=1 step=2/40 loss=10.38081 data_ms=0.2 step_ms=110.3\n"
      "\n");
  EXPECT_EQ(m.malformed, 0);
  ASSERT_EQ(m.series.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const TrainingSeries& s = m.series[r];
    EXPECT_EQ(s.rank, r);
    ASSERT_EQ(s.steps.size(), 2u);
    EXPECT_EQ(s.steps[1].step, 2);
    EXPECT_EQ(s.steps[1].Cite(), "console.log:3");
    EXPECT_EQ(*s.steps[1].time, *ParseRfc3339("2026-12-05T12:56:27.826Z"));
  }
  EXPECT_DOUBLE_EQ(*m.series[0].steps[1].loss, 13.62115);
  EXPECT_DOUBLE_EQ(*m.series[0].steps[1].seconds_per_step, 0.1106);
  EXPECT_DOUBLE_EQ(*m.series[1].steps[1].loss, 10.38081);
}

// corpora/real2/sl_slow_task1: train2.py's `step N loss L` through `srun --label`: no rank, no
// time; one series for the file's task 0.
TEST(Metrics, ReadsTheRealTrain2CaptureBehindSrunLabels) {
  const fs::path dir = fs::path(DENPEX_SOURCE_DIR) / "corpora/real2/sl_slow_task1/incident";
  auto m = ReadTrainingMetrics(dir);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->series.size(), 1u);
  EXPECT_EQ(m->series[0].rank, -1);
  EXPECT_EQ(m->series[0].stream, "slurm-5510.out task 0");
  EXPECT_EQ(m->series[0].steps.size(), 20u);
  const Baseline b = SummarizeBaseline(*m, {.not_after_step = 19});
  EXPECT_DOUBLE_EQ(*b.last_loss, 22.6816);
  EXPECT_FALSE(b.median_seconds_per_step.has_value());
}

// Whether a file under `dir` holds a line of train.py's or train2.py's step shape, by a regex that
// shares nothing with the reader (a killed rank's block-buffered stdout may have lost them all).
bool HoldsStepLine(const fs::path& dir) {
  const std::regex shape(R"((^|\n)[^\n]*(rank=\d+ step=\d+/\d+ loss=|(^|\n|: )step \d+ loss \d))");
  for (const auto& f : fs::recursive_directory_iterator(dir)) {
    if (!f.is_regular_file() || f.path().parent_path().filename() == "checkpoints") continue;
    std::ifstream in(f.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (std::regex_search(text, shape)) return true;
  }
  return false;
}

// Every real capture whose training script printed step lines (train.py's `rank=R step=`,
// train2.py's `step N loss L`) yields its series, cited lines and all; a count per corpus is
// printed for docs/metrics.md.
TEST(Metrics, EveryRealCaptureWithStepLinesYieldsSteps) {
  for (const char* corpus : {"corpora/real", "corpora/real2"}) {
    int incidents = 0, with_steps = 0;
    std::int64_t steps = 0;
    for (const auto& e : fs::directory_iterator(fs::path(DENPEX_SOURCE_DIR) / corpus)) {
      if (!fs::is_directory(e.path() / "incident")) continue;
      ++incidents;
      auto m = ReadTrainingMetrics(e.path() / "incident");
      ASSERT_TRUE(m.ok()) << e.path();
      if (!m->series.empty()) ++with_steps;
      for (const auto& s : m->series) steps += static_cast<std::int64_t>(s.steps.size());
      EXPECT_EQ(!m->series.empty(), HoldsStepLine(e.path() / "incident")) << e.path();
      EXPECT_EQ(m->malformed, 0) << e.path();
    }
    std::printf("%s: %d incidents, %d with steps, %lld steps\n", corpus, incidents, with_steps,
                static_cast<long long>(steps));
  }
}

// A restarted run's steps go back: the baseline is of its last stretch.
TEST(Metrics, BaselineStartsAtTheLastRestart) {
  const auto m = Read(
      "rank=0 step=1/4 loss=9.0 step_ms=100.0\nrank=0 step=2/4 loss=8.0 step_ms=100.0\n"
      "rank=0 step=3/4 loss=7.0 step_ms=100.0\nrank=0 step=2/4 loss=8.5 step_ms=300.0\n"
      "rank=0 step=3/4 loss=7.5 step_ms=500.0\n");
  const Baseline b = SummarizeBaseline(m, {});
  EXPECT_EQ(b.last_step, 3);
  EXPECT_DOUBLE_EQ(*b.last_loss, 7.5);
  EXPECT_DOUBLE_EQ(*b.median_seconds_per_step, 0.4);
  EXPECT_EQ(b.steps_measured, 2);
  EXPECT_FALSE(SummarizeBaseline(m, {.not_after_step = 0}).found);
}

TEST(Metrics, MissingPathIsNotFound) {
  EXPECT_FALSE(ReadTrainingMetrics("/nonexistent/denpex-metrics").ok());
}

}  // namespace
}  // namespace denpex::engine
