// Merging shard reports (`denpex eval --shard I/N` ... `denpex eval merge`): incidents and
// details are concatenated and put in report order, aggregates recomputed from incidents,
// so a merged report equals the report of the same jobs run at once.
#include <algorithm>
#include <set>
#include <tuple>

#include "denpex/scorer/scorer.h"

namespace denpex::scorer {
namespace {

std::string Join(const google::protobuf::RepeatedPtrField<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

void MergeRun(const v1::EvalRun& shard, v1::EvalRun* run) {
  for (const auto& in : shard.inputs()) {
    if (std::find(run->inputs().begin(), run->inputs().end(), in) == run->inputs().end()) {
      run->add_inputs(in);
    }
  }
  run->set_jobs_total(std::max(run->jobs_total(), shard.jobs_total()));
  run->set_jobs_run(run->jobs_run() + shard.jobs_run());
  run->set_wall_seconds(run->wall_seconds() + shard.wall_seconds());
  run->set_shards_merged(run->shards_merged() + std::max(1, shard.shards_merged()));
  for (const auto& f : shard.failures()) run->add_failures(f);
  for (const auto& s : shard.shapes()) {
    if (std::find(run->shapes().begin(), run->shapes().end(), s) == run->shapes().end()) {
      run->add_shapes(s);
    }
  }
}

}  // namespace

Result<v1::EvalReport> MergeReports(const std::vector<v1::EvalReport>& shards) {
  if (shards.empty()) return Status::InvalidArgument("nothing to merge: give report files");
  v1::EvalReport merged;
  v1::EvalRun* run = merged.mutable_run();
  *run->mutable_strategies() = shards[0].run().strategies();
  run->set_seeds(shards[0].run().seeds());
  run->set_threads(shards[0].run().threads());
  run->set_manual_triage_minutes(shards[0].run().manual_triage_minutes());

  std::set<std::tuple<std::string, std::string, std::uint64_t, std::string>> seen;
  for (size_t i = 0; i < shards.size(); ++i) {
    const auto& shard = shards[i];
    if (Join(shard.run().strategies()) != Join(run->strategies())) {
      return Status::InvalidInput("report " + std::to_string(i + 1) + " compares strategies [" +
                                  Join(shard.run().strategies()) + "], report 1 [" +
                                  Join(run->strategies()) +
                                  "]; merge only reports run with the same --strategies");
    }
    for (const auto& s : shard.incidents()) {
      if (!seen.insert({s.suite(), s.incident(), s.seed(), s.strategy()}).second) {
        return Status::InvalidInput("report " + std::to_string(i + 1) + " repeats " +
                                    s.suite() + "/" + s.incident() + " seed " +
                                    std::to_string(s.seed()) + " (" + s.strategy() +
                                    "); were the same shard's files given twice?");
      }
      *merged.add_incidents() = s;
    }
    for (const auto& d : shard.details()) *merged.add_details() = d;
    for (const auto& r : shard.shape_results()) *merged.add_shape_results() = r;
    for (const auto& r : shard.watch_results()) *merged.add_watch_results() = r;
    for (const auto& p : shard.pilot_incidents()) *merged.add_pilot_incidents() = p;
    MergeRun(shard.run(), run);
  }

  std::vector<v1::IncidentScore> all(merged.incidents().begin(), merged.incidents().end());
  const std::vector<std::string> order(run->strategies().begin(), run->strategies().end());
  SortIncidents(order, &all);
  for (auto& a : Aggregate(all)) *merged.add_aggregates() = std::move(a);
  merged.clear_incidents();
  for (auto& s : all) *merged.add_incidents() = std::move(s);
  const std::vector<std::string> shapes(run->shapes().begin(), run->shapes().end());
  auto shape_index = [&shapes](const std::string& s) {
    return std::find(shapes.begin(), shapes.end(), s) - shapes.begin();
  };
  std::stable_sort(merged.mutable_shape_results()->begin(), merged.mutable_shape_results()->end(),
                   [&](const auto& a, const auto& b) {
                     return std::make_tuple(a.suite(), a.incident(), a.seed(), shape_index(a.shape())) <
                            std::make_tuple(b.suite(), b.incident(), b.seed(), shape_index(b.shape()));
                   });
  const std::vector<v1::ShapeResult> results(merged.shape_results().begin(),
                                             merged.shape_results().end());
  for (auto& g : AggregateShapes(results, shapes)) *merged.add_shape_aggregates() = std::move(g);
  const auto by_incident = [](const auto& a, const auto& b) {
    return std::make_tuple(a.suite(), a.incident(), a.seed()) <
           std::make_tuple(b.suite(), b.incident(), b.seed());
  };
  std::stable_sort(merged.mutable_details()->begin(), merged.mutable_details()->end(), by_incident);
  std::stable_sort(merged.mutable_watch_results()->begin(), merged.mutable_watch_results()->end(),
                   by_incident);
  if (merged.pilot_incidents_size() > 0) {
    std::stable_sort(merged.mutable_pilot_incidents()->begin(),
                     merged.mutable_pilot_incidents()->end(), [](const auto& a, const auto& b) {
                       return std::tie(a.suite(), a.incident()) < std::tie(b.suite(), b.incident());
                     });
    *merged.mutable_pilot() =
        SummarizePilot({merged.pilot_incidents().begin(), merged.pilot_incidents().end()});
  }
  return merged;
}

}  // namespace denpex::scorer
