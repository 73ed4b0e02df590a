// The strategies: the engine's analysis and the naive baselines it is measured against.
// Each turns an Incident into a Finding.
#pragma once

#include "analyze/finding.h"
#include "incident/incident.h"

namespace denpex::engine {

// The product: participation per process group plus launcher evidence (participation.cc).
// `control`: a healthy run of the same job, or nullptr (fail-slow detection, straggler.h).
Finding AnalyzeParticipation(const Incident& inc, const Incident* control = nullptr);

// Baseline: the rank of the earliest `Watchdog caught collective operation timeout` line by
// printed timestamp, with no clock-skew correction (first_error.cc).
Finding AnalyzeFirstError(const Incident& inc);

// Baselines: the rank with the most error lines; the rank of the earliest torchrun
// "Root Cause (first observed failure)" entry (baselines.cc).
Finding AnalyzeLoudest(const Incident& inc);
Finding AnalyzeElasticRootCause(const Incident& inc);

// Baselines on the Flight Recorder dumps alone (analyze/flight_recorder.h): torch's analyser
// (`fr_trace --allow-incomplete-ranks`: the first collective of the first process group that a
// dumped member never joined, or whose members disagree) and NVRx's attribution (the missing
// ranks of the group whose stuck collective was created first). Their lowest rank (baselines.cc).
Finding AnalyzeFrTrace(const Incident& inc);
Finding AnalyzeFrWavefront(const Incident& inc);

// Baseline on NCCL RAS reports alone (analyze/nccl_ras.h): the first rank RAS's newest report
// lists one by one, as an operator reads it (baselines.cc).
Finding AnalyzeRas(const Incident& inc);

}  // namespace denpex::engine
