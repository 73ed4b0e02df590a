// Start here: the scorer. Compares a Diagnosis with the Truth of the same incident and
// aggregates scores per strategy and fault family. Depends only on proto and common.
#pragma once

#include <string>
#include <vector>

#include "denpex/v1/diagnosis.pb.h"
#include "denpex/v1/score.pb.h"
#include "denpex/v1/truth.pb.h"

namespace denpex::scorer {

v1::IncidentScore ScoreIncident(const v1::Truth& truth, const v1::Diagnosis& diagnosis);

// One aggregate per (strategy, group): "overall" and "family:<family>", sorted.
std::vector<v1::AggregateScore> Aggregate(const std::vector<v1::IncidentScore>& scores);

// A fixed-width table of the aggregates, engine first, for terminals and Markdown.
std::string RenderTable(const v1::EvalReport& report);

// The text printed by `denpex score`.
std::string RenderIncident(const v1::IncidentScore& score);

}  // namespace denpex::scorer
