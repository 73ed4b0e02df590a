// Resolution steps run once every file is merged (resolve.cc). Their passes over the events run
// in parallel in the calling task arena (LoadIncident's); their results never depend on it.
#pragma once

#include <string>
#include <vector>

#include "ingest/incident.h"
#include "ingest/walk.h"

namespace denpex::engine {

// Appends to the report's problems (at most a few dozen; the rest are counted).
void AddProblem(InputCounts* in, std::string problem);
// Node names from directories and the hosts lines name; each event's node.
void ResolveNodes(const std::vector<SourceFile>& sources, Incident* inc);
// Ranks of a Ray worker's lines that carry only its `(RayTrainWorker pid=…)` prefix.
void ResolveRayWorkers(Incident* inc);
// Ranks of lines that carry only a task id or a local rank.
void ResolveRanks(Incident* inc);
// The year of year-less stamps, from the latest full date (none known: they stay year-less).
void ResolveYears(Incident* inc);
// Problems that say how many lines were joined, cut short or untimed.
void NoteRecovery(Incident* inc);

}  // namespace denpex::engine
