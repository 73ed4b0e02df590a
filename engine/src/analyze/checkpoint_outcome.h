// The checkpoint part of a diagnosis: find the job's checkpoint directory (given, or a
// `checkpoints/` folder inside the incident), verify it with the world size the logs show and
// the initiating fault's time as `not_after`, and turn the report into the Diagnosis's
// checkpoint outcome and a recovery precondition. docs/checkpoint_verification.md, "In a
// diagnosis".
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "analyze/finding.h"
#include "denpex/common/status.h"
#include "denpex/v1/diagnosis.pb.h"
#include "incident/incident.h"

namespace denpex::engine {

struct CheckpointDir {
  std::filesystem::path path;  // as opened
  std::string shown;           // as the diagnosis names it (relative to the incident when inside)
};

// `given` when not empty (kNotFound when it does not exist); else the first checkpoint
// folder inside the incident; nullopt when there is none.
Result<std::optional<CheckpointDir>> FindCheckpointDir(const std::filesystem::path& incident_root,
                                                       const std::filesystem::path& given);

// Whether file modification times in the incident can be compared with the logged times:
// false when the newest log file was modified long after the last line any log stamped, or
// when every log and checkpoint file was modified within the same 100 ms (the incident was
// copied or checked out, losing the times). `why` says which.
bool FileTimesPreserved(const Incident& inc, const std::filesystem::path& checkpoint_dir,
                        std::string* why);

// Verifies `dir` and fills d->checkpoint and a recovery precondition. `blind`: the
// newest-checkpoint baseline (trusts the pointer or the highest step, reads no file).
void AttachCheckpoints(const Incident& inc, const Finding& f, const CheckpointDir& dir, bool blind,
                       v1::Diagnosis* d);

}  // namespace denpex::engine
