// The job's checkpoints (scenario `checkpointing`): every `every_steps` steps the job saves
// one in a real on-disk layout (torch.save, a folder of torch.save files, DCP, DeepSpeed,
// Megatron, the HF Trainer, accelerate, Lightning, NeMo 2.0 and 1.x; checkpoint_frameworks.h) into
// incident/checkpoints/, with file times of when each save finished; the scenario's damage
// breaks the newest one (a kill during the save, a missing shard, a world-size change, a save
// finished after the fault, an unknown format, a save in flight that only rank 0's save lines
// show: workers_output.cc prints them) or adds a harmless look-alike. Returns what
// the truth says: which checkpoint is the newest safe one, and why the newer ones are not.
#pragma once

#include <filesystem>

#include "denpex/common/status.h"
#include "denpex/common/time.h"
#include "denpex/v1/scenario.pb.h"
#include "denpex/v1/vocabulary.pb.h"
#include "faults.h"
#include "job.h"

namespace denpex::sim {

struct CheckpointTimes {
  TimeNs fault = 0;  // the initiating fault, true time
  TimeNs end = 0;    // the job's last process exited
};

// How long one save takes: 200 ms, or half the time from its start to the fault when that is
// shorter (a save before the fault finishes before it).
TimeNs SaveDuration(TimeNs until_fault);

// Whether the layout's framework logs its saves on rank 0 (every layout but torch.save, its
// folders and DCP; workers_output.cc emits them, formatter_rank.cc words them).
bool LogsSaves(v1::CheckpointLayout layout);

// Whether the layout is one of the frameworks' own (HF Trainer, accelerate, Lightning, NeMo
// 2.0 and 1.x; checkpoint_frameworks.h).
bool OwnsItsFolders(v1::CheckpointLayout layout);

// Writes `incident_dir`/checkpoints and returns the truth's checkpoint outcome.
Result<v1::CheckpointOutcome> WriteCheckpoints(const v1::Checkpointing& c, const Job& job,
                                               const FaultPlan& fault, const CheckpointTimes& t,
                                               const std::filesystem::path& incident_dir);

// Sets the modification time of every file under `incident_dir` except checkpoints/ to `t`
// (the end of the job), as the logs of a job examined in place carry.
Status StampLogTimes(const std::filesystem::path& incident_dir, TimeNs t);

}  // namespace denpex::sim
