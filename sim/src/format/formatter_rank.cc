// The lines a worker process prints into its rank_<R>.log: NCCL init lines (§4), Megatron's
// iteration line (§5) of docs/log_formats.md, and the c10 header and process-group prefix
// every ProcessGroupNCCL line starts with (the watchdog block is formatter_watchdog.cc's).
#include <algorithm>
#include <cmath>

#include "formatter.h"
#include "model/checkpoint_frameworks.h"
#include "model/rng.h"

namespace denpex::sim {

namespace {

// DeepSpeed's per-rank timer line by release, keyed on the torch profiles the DeepSpeed
// releases go with (the short names of DeepSpeed >= 0.10.1 beside the torch 2.4 and 2.6
// profiles, docs/log_formats.md): what follows "[Rank <G>] " ({0} the rank), and each timer's
// name with the separator before it.
struct TimerWords {
  std::string_view rank, forward, backward, backward_inner, backward_allreduce;
};

constexpr VersionRow<TimerWords> kTimerWords[] = {
    {{"", "2.1"},
     {"rank={0} ", "forward: ", " | backward: ", " | backward_inner: ", " | backward_allreduce: "}},
    {{"2.2", ""}, {"", "fwd: ", " | bwd: ", " | bwd_inner: ", " | bwd_allreduce: "}},
};
static_assert(CoversEach(kTimerWords, kTorchReleases));

}  // namespace

LineFormatter::LineFormatter(const Job& job, const TorchProfile& torch, const NcclProfile& nccl,
                             const SlurmProfile& slurm)
    : job_(job), torch_(torch), nccl_(nccl), slurm_(slurm) {}

void LineFormatter::Format(const NcclVersionBanner&, LineBuilder& out) const {
  out.Str(nccl_.version_banner).EndLine();
}

void LineFormatter::Format(const TrainerIteration& r, LineBuilder& out) const {
  if (job_.trainer_log == v1::TRAINER_LOG_DEEPSPEED) {
    DeepSpeedStep(r, out);
  } else {
    MegatronIteration(r, out);
  }
}

// Python logging's asctime and DeepSpeed's prefix: "[2026-03-02 09:00:36,123] [INFO] [".
void LineFormatter::DeepSpeedPrefix(LineBuilder& out, int node, TimeNs t) const {
  const CivilTime c = ToCivil(Local(node, t));
  out.Char('[').Zero(c.year, 4).Char('-').Zero(c.month, 2).Char('-').Zero(c.day, 2);
  out.Char(' ').Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2);
  out.Char(',').Zero(c.nanos / 1'000'000, 3).Str("] [INFO] [");
}

// DeepSpeed's engine at steps_per_print (rank 0, stdout through Python logging):
//   [<date> <time>,<ms>] [INFO] [logging.py:96:log_dist] [Rank 0] step=<n>, skipped=0, lr=[<lr>], mom=[[0.9, 0.95]]
//   [<date> <time>,<ms>] [INFO] [timer.py:215:stop] epoch=0/micro_step=<n*M>/global_step=<n>, RunningAvgSamplesPerSec=<f>, CurrSamplesPerSec=<f>, MemAllocated=<f>GB, MaxMemAllocated=<f>GB
void LineFormatter::DeepSpeedStep(const TrainerIteration& r, LineBuilder& out) const {
  const int node = job_.NodeOf(r.rank);
  const double samples = static_cast<double>(job_.dp) * job_.workload.samples_per_replica;
  const double per_sec = r.elapsed_ms > 0 ? samples * 1000.0 / r.elapsed_ms : 0;
  DeepSpeedPrefix(out, node, r.time);
  out.Str("logging.py:96:log_dist] [Rank 0] step=").Int(r.iteration).Str(", skipped=0, lr=[");
  out.PyFloat(r.learning_rate).Str("], mom=[[0.9, 0.95]]").EndLine();
  DeepSpeedPrefix(out, node, r.time + 450 * kNsPerUs);
  out.Str("timer.py:215:stop] epoch=0/micro_step=").Int(std::int64_t{r.iteration} * job_.microbatches);
  out.Str("/global_step=").Int(r.iteration).Str(", RunningAvgSamplesPerSec=").PyFloat(per_sec * 0.998);
  out.Str(", CurrSamplesPerSec=").PyFloat(per_sec).Str(", MemAllocated=");
  out.PyFloat(r.mem_allocated_gb).Str("GB, MaxMemAllocated=").PyFloat(r.max_mem_allocated_gb);
  out.Str("GB").EndLine();
}

// DeepSpeed's other rank-0 logger lines (docs/log_formats.md §10):
//   [<ts>] [INFO] [loss_scaler.py:183:update_scale] Grad overflow on iteration <n>
//   [<ts>] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768
//   [<ts>] [INFO] [utils.py:781:see_memory_usage] After optimizer step
//   [<ts>] [INFO] [utils.py:782:see_memory_usage] MA 38.21 GB         Max_MA 61.05 GB         CA 62.5 GB         Max_CA 63 GB 
//   [<ts>] [INFO] [utils.py:789:see_memory_usage] CPU Virtual Memory:  used = 1956.1 GB, percent = 97.1%
//   [<ts>] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint global_step<n> is about to be saved!
// deepspeed.init_distributed (comm.py, DeepSpeed 0.14): every rank logs `cdb=None`; under mpirun
// no RANK/MASTER_ADDR is set, so it discovers them through MPI (rank 0's `hostname -I`, the local
// rank from the ranks sharing its host) and says so; rank 0 then names the backend. Under srun
// the batch script exported MASTER_ADDR and the script set RANK from SLURM_PROCID.
void LineFormatter::CommInit(const DeepSpeedLine& r, LineBuilder& out) const {
  const int node = job_.NodeOf(r.rank);
  DeepSpeedPrefix(out, node, r.time);
  out.Str("comm.py:637:init_distributed] cdb=None").EndLine();
  if (job_.launcher == v1::LAUNCHER_MPIRUN) {
    DeepSpeedPrefix(out, node, r.time);
    out.Str("comm.py:652:init_distributed] Not using the DeepSpeed or dist launchers, attempting to detect MPI environment...");
    out.EndLine();
    DeepSpeedPrefix(out, node, r.time + 780 * kNsPerMs);
    out.Str("comm.py:702:mpi_discovery] Discovered MPI settings of world_rank=").Int(r.rank);
    out.Str(", local_rank=").Int(job_.LocalRank(r.rank)).Str(", world_size=").Int(job_.world).Str(", master_addr=");
    DeepSpeedMasterIp(out);
    out.Str(", master_port=29500").EndLine();
  }
  if (r.rank != 0) return;
  DeepSpeedPrefix(out, node, r.time + 781 * kNsPerMs);
  out.Str("comm.py:668:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl").EndLine();
}

void LineFormatter::Format(const DeepSpeedLine& r, LineBuilder& out) const {
  const int node = job_.NodeOf(r.rank);
  switch (r.note) {
    case DeepSpeedNote::kOverflow: {
      const auto scale = static_cast<std::int64_t>(r.loss_scale);
      DeepSpeedPrefix(out, node, r.time);
      out.Str("loss_scaler.py:183:update_scale] Grad overflow on iteration ").Int(r.iteration).EndLine();
      DeepSpeedPrefix(out, node, r.time + 90 * kNsPerUs);
      out.Str("loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank ").Int(r.rank);
      out.Str(" Skipping step. Attempted loss scale: ").Int(scale).Str(", reducing to ");
      out.Int(std::max<std::int64_t>(1, scale / 2)).EndLine();
      return;
    }
    case DeepSpeedNote::kMemoryUsage:
      DeepSpeedPrefix(out, node, r.time);
      out.Str("utils.py:781:see_memory_usage] After optimizer step").EndLine();
      DeepSpeedPrefix(out, node, r.time + 60 * kNsPerUs);
      out.Str("utils.py:782:see_memory_usage] MA ").PyFloat(r.mem_allocated_gb);
      out.Str(" GB         Max_MA ").PyFloat(std::round(100 * (r.mem_allocated_gb + 22.8)) / 100);
      out.Str(" GB         CA ").PyFloat(std::round(100 * (r.mem_allocated_gb + 24.3)) / 100);
      out.Str(" GB         Max_CA ").Int(static_cast<std::int64_t>(std::round(r.mem_allocated_gb + 25)));
      out.Str(" GB ").EndLine();
      DeepSpeedPrefix(out, node, r.time + 700 * kNsPerUs);
      out.Str("utils.py:789:see_memory_usage] CPU Virtual Memory:  used = ").PyFloat(r.host_used_gb);
      out.Str(" GB, percent = ").PyFloat(r.host_percent).Str("%").EndLine();
      return;
    case DeepSpeedNote::kCommInit:
      return CommInit(r, out);
    case DeepSpeedNote::kSaving:
      DeepSpeedPrefix(out, node, r.time);
      out.Str("logging.py:96:log_dist] [Rank ").Int(r.rank).Str("] [Torch] Checkpoint global_step");
      out.Int(r.iteration).Str(" is about to be saved!").EndLine();
      return;
  }
}

// Rank 0's lines of one save, as the checkpoint layout's framework prints them (the start
// lines, or the finish lines). Megatron-LM (print_rank_0):
//   saving checkpoint at iteration      30 to /checkpoints in torch format
//     successfully saved checkpoint from iteration      30 to /checkpoints [ t 1/8, p 1/4 ]
// DeepSpeed (log_dist and its torch checkpoint engine; `latest` is written after the commit):
//   [<time>] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint global_step16 is about to be saved!
//   [<time>] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model checkpoint: /checkpoints/global_step16/mp_rank_00_model_states.pt
//   [<time>] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Saving /checkpoints/global_step16/mp_rank_00_model_states.pt...
//   ... then Saved, the ZeRO shard's Saving / Saved, `zero checkpoint saved`, and
//   [<time>] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch] Checkpoint global_step16 is ready now!
void LineFormatter::Format(const CheckpointSave& r, LineBuilder& out) const {
  if (job_.save_log != v1::CHECKPOINT_LAYOUT_MEGATRON && job_.save_log != v1::CHECKPOINT_LAYOUT_DEEPSPEED)
    return FrameworkSave(r, out);
  if (job_.save_log == v1::CHECKPOINT_LAYOUT_MEGATRON) {
    if (!r.finished) {
      out.Str("saving checkpoint at iteration ").Padded(r.iteration, 7, ' ');
      out.Str(" to /checkpoints in torch format").EndLine();
      return;
    }
    out.Str("  successfully saved checkpoint from iteration ").Padded(r.iteration, 7, ' ');
    out.Str(" to /checkpoints [ t 1/").Int(job_.tp).Str(", p 1/").Int(job_.pp).Str(" ]").EndLine();
    return;
  }
  const int node = job_.NodeOf(r.rank);
  const std::string tag = "global_step" + std::to_string(r.iteration);
  const std::string model = "/checkpoints/" + tag + "/mp_rank_00_model_states.pt";
  const std::string optim = "/checkpoints/" + tag + "/zero_pp_rank_0_mp_rank_00_optim_states.pt";
  TimeNs at = r.time;
  auto line = [&](std::string_view site) -> LineBuilder& {
    DeepSpeedPrefix(out, node, at);
    at += 40 * kNsPerUs;
    return out.Str(site);
  };
  if (!r.finished) {
    line("logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint ").Str(tag).Str(" is about to be saved!").EndLine();
    line("logging.py:96:log_dist] [Rank 0] Saving model checkpoint: ").Str(model).EndLine();
    line("torch_checkpoint_engine.py:21:save] [Torch] Saving ").Str(model).Str("...").EndLine();
    line("torch_checkpoint_engine.py:23:save] [Torch] Saved ").Str(model).Str(".").EndLine();
    line("torch_checkpoint_engine.py:21:save] [Torch] Saving ").Str(optim).Str("...").EndLine();
    return;
  }
  line("torch_checkpoint_engine.py:23:save] [Torch] Saved ").Str(optim).Str(".").EndLine();
  line("engine.py:3463:_save_zero_checkpoint] zero checkpoint saved ").Str(optim).EndLine();
  line("torch_checkpoint_engine.py:33:commit] [Torch] Checkpoint ").Str(tag).Str(" is ready now!").EndLine();
}

// Rank 0's save lines of the frameworks that own their checkpoint folders
// (checkpoint_frameworks.cc; docs/log_formats.md §27). The HF Trainer and Lightning log only a
// start:
//   [INFO|trainer.py:3984] 2026-03-02 09:00:20,200 >> Saving model checkpoint to /checkpoints/checkpoint-20
//   Epoch 0, global step 20: 'step' reached 20.00000 (best 20.00000), saving model to '/checkpoints/epoch=0-step=20.ckpt' as top 3
// (NeMo 1.x: the same line naming /checkpoints/<NemoName>.ckpt)
// accelerate (its examples' logging format; the main process's RNG states are its last file):
//   03/02/2026 09:00:20 - INFO - accelerate.accelerator - Saving current state to /checkpoints/checkpoint_3
//   03/02/2026 09:00:20 - INFO - accelerate.checkpointing - Random states saved in /checkpoints/checkpoint_3/random_states_0.pkl
// NeMo 2.0's async save (its finalize names the next step):
//   [NeMo I 2026-03-02 09:00:20 model_checkpoint:497] Scheduled async checkpoint save for /checkpoints/<name>.ckpt
//   [NeMo I 2026-03-02 09:00:20 model_checkpoint:522] Async checkpoint save for step 21 (/checkpoints/<name>.ckpt) finalized successfully.
void LineFormatter::FrameworkSave(const CheckpointSave& r, LineBuilder& out) const {
  const CivilTime c = ToCivil(Local(job_.NodeOf(r.rank), r.time));
  const auto date = [&] {
    out.Zero(c.year, 4).Char('-').Zero(c.month, 2).Char('-').Zero(c.day, 2);
    out.Char(' ').Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2);
  };
  switch (job_.save_log) {
    case v1::CHECKPOINT_LAYOUT_HF_TRAINER:
      if (r.finished) return;
      out.Str("[INFO|trainer.py:3984] ");
      date();
      out.Char(',').Zero(c.nanos / 1'000'000, 3).Str(" >> Saving model checkpoint to /checkpoints/checkpoint-");
      out.Int(r.iteration).EndLine();
      return;
    case v1::CHECKPOINT_LAYOUT_LIGHTNING:
      if (r.finished) return;
      out.Str("Epoch 0, global step ").Int(r.iteration).Str(": 'step' reached ").Int(r.iteration);
      out.Str(".00000 (best ").Int(r.iteration).Str(".00000), saving model to '/checkpoints/epoch=0-step=");
      out.Int(r.iteration).Str(".ckpt' as top 3").EndLine();
      return;
    case v1::CHECKPOINT_LAYOUT_NEMO_CKPT:  // NeMo 1.x: Lightning's line, NeMo's file name
      if (r.finished) return;
      out.Str("Epoch 0, global step ").Int(r.iteration).Str(": 'step' reached ").Int(r.iteration);
      out.Str(".00000 (best ").Int(r.iteration).Str(".00000), saving model to '/checkpoints/");
      out.Str(NemoName(r.iteration)).Str(".ckpt' as top 3").EndLine();
      return;
    case v1::CHECKPOINT_LAYOUT_ACCELERATE: {
      const int k = r.iteration / job_.save_every - 1;  // automatic naming counts saves
      out.Zero(c.month, 2).Char('/').Zero(c.day, 2).Char('/').Zero(c.year, 4);
      out.Char(' ').Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2);
      if (!r.finished) {
        out.Str(" - INFO - accelerate.accelerator - Saving current state to /checkpoints/checkpoint_").Int(k);
      } else {
        out.Str(" - INFO - accelerate.checkpointing - Random states saved in /checkpoints/checkpoint_").Int(k);
        out.Str("/random_states_0.pkl");
      }
      out.EndLine();
      return;
    }
    case v1::CHECKPOINT_LAYOUT_NEMO:
      out.Str("[NeMo I ");
      date();
      if (!r.finished) {
        out.Str(" model_checkpoint:497] Scheduled async checkpoint save for /checkpoints/");
        out.Str(NemoName(r.iteration)).Str(".ckpt").EndLine();
      } else {
        out.Str(" model_checkpoint:522] Async checkpoint save for step ").Int(r.iteration + 1);
        out.Str(" (/checkpoints/").Str(NemoName(r.iteration)).Str(".ckpt) finalized successfully.").EndLine();
      }
      return;
    default: return;
  }
}

//  [2026-03-02 09:00:36] iteration        1/  100000 | consumed samples: ... |
void LineFormatter::MegatronIteration(const TrainerIteration& r, LineBuilder& out) const {
  const CivilTime c = ToCivil(Local(job_.NodeOf(r.rank), r.time));
  const std::int64_t global_batch = std::int64_t{job_.dp} * job_.workload.samples_per_replica;
  out.Str(" [").Zero(c.year, 4).Char('-').Zero(c.month, 2).Char('-').Zero(c.day, 2);
  out.Char(' ').Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2);
  out.Str("] iteration ").Padded(r.iteration, 8, ' ').Char('/');
  out.Padded(job_.workload.train_iters, 8, ' ');
  out.Str(" | consumed samples: ").Padded(r.iteration * global_batch, 12, ' ');
  out.Str(" | elapsed time per iteration (ms): ").Fixed(r.elapsed_ms, 1);
  out.Str(" | learning rate: ").Sci(r.learning_rate, 6);
  out.Str(" | global batch size: ").Padded(global_batch, 5, ' ');
  out.Str(" | lm loss: ").Sci(r.loss, 6);
  out.Str(" | loss scale: 1.0 | grad norm: ").Fixed(r.grad_norm, 3);
  out.Str(" | number of skipped iterations: ").Padded(0, 3, ' ');
  out.Str(" | number of nan iterations: ").Padded(0, 3, ' ').Str(" |").EndLine();
}

// DeepSpeed's timer line through its log_dist logger, printed by every rank. DeepSpeed
// >= 0.10.1 (torch >= 2.4 profiles) shortened the names; older releases print `rank=R` too:
//   [2026-03-02 09:00:41,512] [INFO] [logging.py:96:log_dist] [Rank 17] time (ms) | fwd: 498.12 |
//     bwd: 1010.40 | bwd_inner: 1002.51 | bwd_allreduce: 7.89 | step: 11.20
//   ... [Rank 17] rank=17 time (ms) | forward: 498.12 | backward: ... | backward_inner: ... |
//     backward_allreduce: ... | step: ...
// The simulator charges every NCCL wait of the step (TP, PP, DP) to bwd_allreduce.
void LineFormatter::Format(const RankTimers& r, LineBuilder& out) const {
  const CivilTime c = ToCivil(Local(job_.NodeOf(r.rank), r.time));
  const TimerWords& words = RowFor(kTimerWords, torch_.name);
  out.Char('[').Zero(c.year, 4).Char('-').Zero(c.month, 2).Char('-').Zero(c.day, 2);
  out.Char(' ').Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2);
  out.Char(',').Zero(c.nanos / 1'000'000, 3).Str("] [INFO] [logging.py:96:log_dist] [Rank ");
  out.Int(r.rank).Str("] ").Fill(words.rank, {r.rank});
  const double fwd = r.compute_ms * r.fwd_share;
  const double bwd_inner = r.compute_ms - fwd;
  out.Str("time (ms) | ").Str(words.forward).Fixed(fwd, 2);
  out.Str(words.backward).Fixed(bwd_inner + r.wait_ms, 2);
  out.Str(words.backward_inner).Fixed(bwd_inner, 2);
  out.Str(words.backward_allreduce).Fixed(r.wait_ms, 2);
  out.Str(" | step: ").Fixed(r.optimizer_ms, 2).EndLine();
}

// The c10 header of the profile's style (docs/log_formats.md §2). torch >= 2.4:
// [rank<G>]:[E<M><DD> <hh>:<mm>:<ss>.<nnnnnnnnn> ProcessGroupNCCL.cpp:<line>]
void LineFormatter::WriteC10Header(LineBuilder& out, int rank, TimeNs t, int source_line) const {
  WriteC10Line(out, rank, job_.NodeOf(rank), t, 'E', "ProcessGroupNCCL.cpp", source_line);
}

void LineFormatter::WriteC10Line(LineBuilder& out, int rank, int node, TimeNs t, char severity,
                                 std::string_view file, int source_line) const {
  switch (torch_.c10_header) {
    case C10Header::kRankPrefixedTimestamped: {
      const CivilTime c = ToCivil(Local(node, t));
      if (rank >= 0) out.Str("[rank").Int(rank).Str("]:");
      out.Char('[').Char(severity).Int(c.month).Zero(c.day, 2).Char(' ');
      out.Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2).Char('.');
      out.Zero(c.nanos, 9).Char(' ').Str(file).Char(':').Int(source_line).Str("] ");
      return;
    }
    case C10Header::kSeverityAndFile:
      out.Char('[').Char(severity).Char(' ').Str(file).Char(':').Int(source_line).Str("] ");
      return;
  }
}

// The process group's log prefix in the profile's style (docs/log_formats.md §3). torch 2.4:
// [PG <uid> (<desc>) Rank <r>]; Megatron gives every group a description.
void LineFormatter::WritePgPrefix(LineBuilder& out, int rank, PgKind group) const {
  switch (torch_.pg_prefix) {
    case PgPrefix::kUidAndDescription:
      out.Str("[PG ").Int(job_.GroupUid(rank, group)).Str(" (").Str(PgDescription(group));
      out.Str(") Rank ").Int(job_.GroupRank(rank, group)).Char(']');
      return;
    case PgPrefix::kRankOnly:
      out.Str("[Rank ").Int(job_.GroupRank(rank, group)).Char(']');
      return;
    case PgPrefix::kIdAndGuid: {
      const int uid = job_.GroupUid(rank, group);
      out.Str("[PG ID ").Int(uid).Str(" PG GUID ").Int(uid).Char('(').Str(PgDescription(group));
      out.Str(") Rank ").Int(job_.GroupRank(rank, group)).Char(']');
      return;
    }
  }
}

}  // namespace denpex::sim
