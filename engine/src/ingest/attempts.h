// Kubernetes restarts (docs/log_formats.md §24, "Restarts"): an incident can hold the pod logs of
// more than one attempt of the job. A container restarted in place leaves `kubectl logs
// --previous` (`pods/<pod>.previous.log`) beside the current `pods/<pod>.log`; a JobSet that
// recreated its gang leaves the first pods' logs (kept by the log collector, the pods gone: no
// `kubectl describe`) beside the new pods' (described; same hostname, new 5-character suffix).
// The engine looks for patient zero in the first attempt: the later attempts' pod logs are set
// aside (their events dropped, their files marked), the platform's files kept.
#pragma once

#include "incident/incident.h"

namespace denpex::engine {

// Marks the later attempts' pod logs (LogFile::later_attempt), drops their events and counts
// them (a rotated log once, its pieces marked with their live piece) in
// Incident::later_attempt_files. Nothing changes when the incident holds one attempt.
void SetAsideLaterAttempts(Incident* inc);

}  // namespace denpex::engine
