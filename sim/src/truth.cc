// Builds truth.json (see truth.h) from the model's final state and the writer's citations.
#include "truth.h"

#include "denpex/common/time.h"

namespace denpex::sim {

namespace {

void AddEvidence(const CitedLine& line, v1::Truth* truth) {
  v1::Evidence* e = truth->add_evidence();
  e->set_file(line.file);
  e->set_line(static_cast<std::int32_t>(line.line));
  e->set_text(line.text);
  e->set_role(v1::EVIDENCE_ROLE_INITIATING);
}

// Every other rank that died is a consequence; each watchdog timeout line, and each agent
// failure report on a node other than the initiator's, is one secondary error.
void FillCascade(const TruthInputs& in, int initiator_node, v1::Truth* truth) {
  v1::Cascade* cascade = truth->mutable_cascade();
  const Workers& workers = in.model.workers();
  for (int rank = 0; rank < in.job.world; ++rank) {
    if (rank != in.fault.rank && !workers.alive(rank)) cascade->add_secondary_ranks(rank);
  }
  std::int64_t errors = static_cast<std::int64_t>(workers.watchdog_timeouts());
  for (int node = 0; node < in.job.nodes; ++node) {
    if (node != initiator_node && in.model.launcher().reported(node)) ++errors;
  }
  cascade->set_secondary_errors(static_cast<std::int32_t>(errors));
  cascade->set_grouped_errors(static_cast<std::int32_t>(errors));
}

void FillRecovery(const std::string& host, int rank, v1::Truth* truth) {
  v1::Recovery* recovery = truth->mutable_recovery();
  v1::Precondition* inspect = recovery->add_preconditions();
  inspect->set_action("inspect_host_logs");
  inspect->set_target(host);
  inspect->set_text("Rank " + std::to_string(rank) + " on " + host +
                    " was killed by SIGKILL and printed nothing; check the host's kernel log "
                    "(OOM killer) and the scheduler's records for " +
                    host + " before scheduling work on it again.");
  v1::Precondition* restart = recovery->add_preconditions();
  restart->set_action("restart_job");
  restart->set_text(
      "Every other rank failed as a consequence (NCCL watchdog timeouts and "
      "torchrun teardown); restart the job from its latest checkpoint.");
}

}  // namespace

v1::Truth BuildTruth(const TruthInputs& in) {
  v1::Truth truth;
  const int rank = in.fault.rank;
  const int node = in.job.NodeOf(rank);
  const std::string& host = in.job.hostnames[node];
  const TimeNs fault_time = in.model.workers().fault_time();
  truth.set_scenario(in.scenario.name());
  truth.set_seed(in.job.seed);
  truth.set_verdict(v1::VERDICT_DIAGNOSED);
  v1::Initiator* init = truth.mutable_initiator();
  init->set_rank(rank);
  init->set_node(host);
  init->set_local_rank(in.job.LocalRank(rank));
  init->set_time(FormatRfc3339(fault_time));
  init->set_failure_class(v1::FAILURE_CLASS_SIGNAL_KILL);
  init->set_confidence(1.0);
  truth.set_owner(v1::OWNER_UNKNOWN);  // nothing in the logs says why it was killed
  FillCascade(in, node, &truth);
  const AgentReportCitation& cited = in.writer.citation(node);
  if (cited.present) {
    AddEvidence(cited.failed, &truth);
    AddEvidence(cited.root_rank, &truth);
  }
  truth.mutable_checkpoint()->set_decision(v1::CHECKPOINT_DECISION_NOT_EVALUATED);
  FillRecovery(host, rank, &truth);
  v1::InjectedEvent* event = truth.add_events();
  event->set_kind(v1::FaultKind_Name(v1::FAULT_KIND_SIGKILL));
  event->set_rank(rank);
  event->set_node(host);
  event->set_time(FormatRfc3339(fault_time));
  event->set_step(in.fault.step);
  v1::JobFacts* facts = truth.mutable_job();
  facts->set_world_size(in.job.world);
  facts->set_nodes(in.job.nodes);
  facts->set_gpus_per_node(in.job.gpus_per_node);
  facts->set_start_time(FormatRfc3339(in.job.start));
  facts->set_fault_time(FormatRfc3339(fault_time));
  facts->set_end_time(FormatRfc3339(in.outcome.end_time));
  return truth;
}

}  // namespace denpex::sim
