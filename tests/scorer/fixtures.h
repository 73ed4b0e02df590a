// Truths and diagnoses for the scorer tests: a 4,096-rank SIGKILL incident and helpers to
// build diagnoses of it.
#pragma once

#include <string>

#include "denpex/v1/diagnosis.pb.h"
#include "denpex/v1/truth.pb.h"

namespace denpex::scorer::testing {

inline v1::Truth SigkillTruth() {
  v1::Truth t;
  t.set_scenario("sigkill");
  t.set_seed(7);
  t.set_verdict(v1::VERDICT_DIAGNOSED);
  t.mutable_initiator()->set_rank(1091);
  t.mutable_initiator()->set_node("gpu-0137");
  t.mutable_initiator()->set_failure_class(v1::FAILURE_CLASS_SIGNAL_KILL);
  t.set_owner(v1::OWNER_UNKNOWN);
  for (int line : {12, 40}) {
    auto* e = t.add_evidence();
    e->set_file("gpu-0137/torchrun.log");
    e->set_line(line);
    e->set_role(v1::EVIDENCE_ROLE_INITIATING);
  }
  auto* ev = t.add_events();
  ev->set_kind("FAULT_KIND_SIGKILL");
  ev->set_rank(1091);
  ev->set_step(20);
  auto* job = t.mutable_job();
  job->set_world_size(4096);
  job->set_launcher("torchrun");
  job->set_fault_time("2026-03-02T09:00:30Z");
  job->set_end_time("2026-03-02T09:10:30Z");  // 600 s of cascade
  auto* c = t.mutable_cascade();
  for (int r : {1088, 1089, 1090, 1092}) c->add_secondary_ranks(r);
  c->set_secondary_errors(100);
  return t;
}

inline v1::Diagnosis Diagnosed(int rank, const std::string& node,
                               const std::string& strategy = "engine") {
  v1::Diagnosis d;
  d.set_strategy(strategy);
  d.set_verdict(v1::VERDICT_DIAGNOSED);
  d.mutable_initiator()->set_rank(rank);
  d.mutable_initiator()->set_node(node);
  d.mutable_initiator()->set_failure_class(v1::FAILURE_CLASS_SIGNAL_KILL);
  d.set_owner(v1::OWNER_UNKNOWN);
  auto* c = d.add_candidates();
  c->set_rank(rank);
  c->set_node(node);
  return d;
}

inline void Cite(v1::Diagnosis* d, const std::string& file, int line, v1::EvidenceRole role) {
  auto* e = d->add_evidence();
  e->set_file(file);
  e->set_line(line);
  e->set_role(role);
}

// Truth with checkpoints at steps 10 (safe) and 15 (rejected: torn write).
inline v1::Truth WithCheckpoints(v1::Truth t) {
  auto* ck = t.mutable_checkpoint();
  ck->set_decision(v1::CHECKPOINT_DECISION_RESUME);
  ck->set_path("step_10.pt");
  ck->set_step(10);
  auto* r = ck->add_rejected();
  r->set_path("step_15.pt");
  r->set_step(15);
  r->set_reason("truncated zip");
  return t;
}

inline void Resume(v1::Diagnosis* d, const std::string& path, int step) {
  d->mutable_checkpoint()->set_decision(v1::CHECKPOINT_DECISION_RESUME);
  d->mutable_checkpoint()->set_path(path);
  d->mutable_checkpoint()->set_step(step);
}

}  // namespace denpex::scorer::testing
