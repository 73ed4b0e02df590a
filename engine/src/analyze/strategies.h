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

}  // namespace denpex::engine
