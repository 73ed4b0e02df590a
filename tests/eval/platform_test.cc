// Kubernetes and Ray against the simulator (docs/log_formats.md §24 (Kubernetes), §25 (Ray)).
// Kubernetes: the engine tells "the platform
// ended the job" (a pod evicted: owner SCHEDULER) from the platform's word on why a pod died
// (OOMKilled: host OOM; NodeNotReady: node loss), and from "a rank failed and the platform
// cleaned up" (the controller deleting the other pods after an exception), in both pod-log
// shapes (plain, `kubectl logs --timestamps`) and both controllers (PyTorchJob, JobSet).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "denpex/engine/engine.h"
#include "denpex/proto/json_io.h"
#include "denpex/sim/simulator.h"

namespace denpex {
namespace {

namespace fs = std::filesystem;

class Kubernetes : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("denpex_k8s_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Simulate(const std::string& name, std::vector<std::string> sets) {
    constexpr char kJob[] = R"pb(
      name: "k8s_test"
      job { nodes: 16 tp: 8 pp: 2 }
      launcher: LAUNCHER_KUBERNETES
      training { warmup_steps: 4 step_time_ms: 400 }
      timeouts { nccl_timeout_ms: 60000 }
      faults { kind: FAULT_KIND_POD_EVICTION }
    )pb";
    auto scenario = sim::ParseScenario(kJob, name, sets);
    EXPECT_TRUE(scenario.ok()) << scenario.status().message();
    auto result = sim::Simulate(*scenario, {.out_dir = dir_ / name, .seed = 3});
    EXPECT_TRUE(result.ok()) << result.status().message();
    return dir_ / name / "incident";
  }

  fs::path dir_;
};

TEST_F(Kubernetes, PlatformWordOnThePodNamesNodeOwnerAndClass) {
  struct Case {
    const char* kind;
    v1::FailureClass cls;
    v1::Owner owner;
    const char* cited;  // the initiating line's file
  };
  const Case cases[] = {
      {"FAULT_KIND_POD_EVICTION", v1::FAILURE_CLASS_SCHEDULER_EVICTION, v1::OWNER_SCHEDULER, "events.txt"},
      {"FAULT_KIND_POD_OOMKILLED", v1::FAILURE_CLASS_HOST_OOM, v1::OWNER_HOST, "describe/"},
      {"FAULT_KIND_NODE_LOSS", v1::FAILURE_CLASS_NODE_LOSS, v1::OWNER_HOST, "events.txt"},
  };
  for (const Case& c : cases) {
    for (const char* controller : {"KUBE_CONTROLLER_PYTORCHJOB", "KUBE_CONTROLLER_JOBSET"}) {
      SCOPED_TRACE(std::string(c.kind) + " " + controller);
      const fs::path incident =
          Simulate(std::string(c.kind) + controller, {std::string("faults[0].kind=") + c.kind, "faults[0].node=5",
                                                      std::string("kubernetes.controller=") + controller,
                                                      "kubernetes.timestamps=true"});
      auto d = engine::Diagnose(incident, {.threads = 2});
      ASSERT_TRUE(d.ok()) << d.status().message();
      EXPECT_EQ(d->initiator().rank(), -1) << d->reason();
      EXPECT_EQ(d->initiator().node(), "gpu-0006") << d->reason();
      EXPECT_EQ(d->initiator().failure_class(), c.cls) << d->reason();
      EXPECT_EQ(d->owner(), c.owner) << d->reason();
      ASSERT_GE(d->evidence_size(), 1);
      EXPECT_EQ(d->evidence(0).file().rfind(c.cited, 0), 0u) << d->evidence(0).file();
    }
  }
}

// An exception on one rank: its pod ends in Error and the controller deletes the others, whose
// torchruns say they got SIGTERM. That cleanup is not the platform ending the job.
TEST_F(Kubernetes, RankFailureFollowedByCleanupIsTheRanksFault) {
  const fs::path incident = Simulate("exception", {"faults[0].kind=FAULT_KIND_EXCEPTION", "faults[0].rank=45"});
  auto d = engine::Diagnose(incident, {.threads = 2});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->initiator().rank(), 45) << d->reason();
  EXPECT_EQ(d->initiator().node(), "gpu-0006") << d->reason();
  EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_PYTHON_EXCEPTION) << d->reason();
  EXPECT_EQ(d->owner(), v1::OWNER_APPLICATION) << d->reason();
}

// Ray: the driver's ActorDiedError names the actor by pid and ip; the trainer's worker table maps
// it to its rank; the cause line (and the GCS's and raylet's words) say why.
TEST_F(Kubernetes, RayActorDeathNamesRankOrNodeAndCause) {
  struct Case {
    const char* kind;
    std::int32_t rank;  // -1: the node
    v1::FailureClass cls;
    v1::Owner owner;
  };
  const Case cases[] = {
      {"FAULT_KIND_SIGKILL", 45, v1::FAILURE_CLASS_SIGNAL_KILL, v1::OWNER_UNKNOWN},
      {"FAULT_KIND_SIGSEGV", 45, v1::FAILURE_CLASS_SEGFAULT, v1::OWNER_APPLICATION},
      {"FAULT_KIND_RAY_OOM_KILL", 45, v1::FAILURE_CLASS_HOST_OOM, v1::OWNER_HOST},
      {"FAULT_KIND_NODE_LOSS", -1, v1::FAILURE_CLASS_NODE_LOSS, v1::OWNER_HOST},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind);
    const fs::path incident = Simulate(std::string("ray") + c.kind,
                                       {"launcher=LAUNCHER_RAY", std::string("faults[0].kind=") + c.kind,
                                        c.rank < 0 ? "faults[0].node=5" : "faults[0].rank=45"});
    auto d = engine::Diagnose(incident, {.threads = 2});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->initiator().rank(), c.rank) << d->reason();
    EXPECT_EQ(d->initiator().node(), "10.64.0.7") << d->reason();  // Ray names nodes by address
    EXPECT_EQ(d->initiator().failure_class(), c.cls) << d->reason();
    EXPECT_EQ(d->owner(), c.owner) << d->reason();
  }
}

// Ray: a worker's exception reaches the driver as RayTaskError(<Exc>) with the worker's pid and
// ip (the worker table gives its rank); a hung worker is found from its peers' watchdog lines,
// not from the ActorDiedError, which names the first peer whose watchdog aborted its process.
TEST_F(Kubernetes, RayTaskErrorAndHangNameTheWorkersRank) {
  struct Case {
    const char* kind;
    v1::FailureClass cls;
    const char* reason;  // a phrase the reason holds
  };
  const Case cases[] = {
      {"FAULT_KIND_EXCEPTION", v1::FAILURE_CLASS_PYTHON_EXCEPTION, "RayTaskError"},
      {"FAULT_KIND_HANG", v1::FAILURE_CLASS_HANG, "printed no timeout of its own"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind);
    const fs::path incident = Simulate(std::string("ray") + c.kind,
                                       {"launcher=LAUNCHER_RAY", std::string("faults[0].kind=") + c.kind, "faults[0].rank=45"});
    auto d = engine::Diagnose(incident, {.threads = 2});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->verdict(), v1::VERDICT_DIAGNOSED) << d->reason();
    EXPECT_EQ(d->initiator().rank(), 45) << d->reason();
    EXPECT_EQ(d->initiator().node(), "10.64.0.7") << d->reason();
    EXPECT_EQ(d->initiator().failure_class(), c.cls) << d->reason();
    EXPECT_EQ(d->owner(), v1::OWNER_APPLICATION) << d->reason();
    EXPECT_NE(d->reason().find(c.reason), std::string::npos) << d->reason();
  }
}

// Ray under torch 2.1: the worker's own traceback lines carry only `(RayTrainWorker pid=, ip=)`
// (no `[rank<N>]:`); the worker table maps that pid to the rank, so the worker's own exception
// line is cited as initiating beside the driver's RayTaskError, as under torch 2.4.
TEST_F(Kubernetes, RayWorkerLinesAtTorch21AreTheirRanksOwn) {
  const fs::path incident = Simulate("ray21", {"launcher=LAUNCHER_RAY", "format.torch=2.1", "faults[0].kind=FAULT_KIND_EXCEPTION",
                                               "faults[0].rank=45"});
  auto d = engine::Diagnose(incident, {.threads = 2});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->initiator().rank(), 45) << d->reason();
  bool own = false, relayed = false;
  for (const auto& e : d->evidence()) {
    if (e.role() != v1::EVIDENCE_ROLE_INITIATING) continue;
    own = own || (e.text().starts_with("(RayTrainWorker pid=") && e.text().find("RayTaskError") == std::string::npos);
    relayed = relayed || e.text().starts_with("ray.exceptions.RayTaskError(");
  }
  EXPECT_TRUE(own) << "the worker's own exception line is cited";
  EXPECT_TRUE(relayed) << "the driver's RayTaskError is cited";
}

// Kubernetes: a hung rank's peers time out; each pod's torchrun SIGTERMs its workers after the
// first local failure, so silent victims (torn down before their own watchdog fired) sit beside
// the hung rank in the same groups. Seed 12: a victim shares the hung rank's DP group (only the
// hung rank is missing from its TP collective); seed 24: the kind's top group rank never
// reported, so the DP groups are tiled over the world to include it.
TEST_F(Kubernetes, HungRankIsNotConfusedWithTornDownVictims) {
  constexpr char kJob[] = R"pb(
    name: "k8s_hang"
    job { nodes: 128 tp: 8 pp: 2 }
    launcher: LAUNCHER_KUBERNETES
    format { torch: "2.4" }
    training { warmup_steps: 8 step_time_ms: 1500 }
    faults { kind: FAULT_KIND_HANG }
  )pb";
  for (const std::uint64_t seed : {12u, 24u}) {
    SCOPED_TRACE(seed);
    auto scenario = sim::ParseScenario(kJob, "k8s_hang", {});
    ASSERT_TRUE(scenario.ok()) << scenario.status().message();
    const fs::path out = dir_ / ("hang" + std::to_string(seed));
    auto result = sim::Simulate(*scenario, {.out_dir = out, .seed = seed});
    ASSERT_TRUE(result.ok()) << result.status().message();
    auto d = engine::Diagnose(out / "incident", {.threads = 2});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->verdict(), v1::VERDICT_DIAGNOSED) << d->reason();
    EXPECT_EQ(d->initiator().rank(), seed == 12 ? 205 : 506) << d->reason();
    EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_HANG) << d->reason();
  }
}


// Kubernetes restarts (docs/log_formats.md §24, "Restarts"): the controller restarts the failed
// job once and the restarted attempt fails too, louder and later. The engine names the first
// attempt's initiator, cites the scheduler's FailedScheduling of a replacement pod as a capacity
// fact, and says the job ended because the restart budget ran out.
TEST_F(Kubernetes, RestartedJobIsDiagnosedFromItsFirstAttempt) {
  struct Case {
    const char* name;
    std::vector<std::string> sets;
    std::int32_t rank;  // -1: the node
    v1::FailureClass cls;
    const char* first_log;  // the first attempt's pod log of the fault's node
    bool unplaced;          // its replacement pod stays Pending
  };
  const Case cases[] = {
      {"exception_pytorchjob", {"faults[0].kind=FAULT_KIND_EXCEPTION", "faults[0].rank=45"}, 45,
       v1::FAILURE_CLASS_PYTHON_EXCEPTION, "pods/llama-worker-4.previous.log", false},
      {"xid79_jobset", {"faults[0].kind=FAULT_KIND_XID_FALLEN_OFF_BUS", "faults[0].rank=45", "kubernetes.controller=KUBE_CONTROLLER_JOBSET"},
       45, v1::FAILURE_CLASS_GPU_FALLEN_OFF_BUS, "pods/llama-workers-0-5-", true},
      {"node_loss_jobset", {"faults[0].kind=FAULT_KIND_NODE_LOSS", "faults[0].node=5", "kubernetes.controller=KUBE_CONTROLLER_JOBSET",
                            "kubernetes.timestamps=true"},
       -1, v1::FAILURE_CLASS_NODE_LOSS, "pods/llama-workers-0-5-", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> sets = c.sets;
    sets.push_back("kubernetes.restarts=1");
    const fs::path incident = Simulate(c.name, sets);
    // Both attempts' pod logs are there: restarted in place (`--previous`) or recreated (new names).
    int pod_logs = 0;
    for (const auto& e : fs::directory_iterator(incident / "pods")) pod_logs += e.path().filename().string().starts_with(
                                                                                    c.rank >= 0 && !c.unplaced ? "llama-worker-4." : "llama-workers-0-5-");
    EXPECT_EQ(pod_logs, c.unplaced ? 1 : 2);  // a Pending pod left no log
    auto d = engine::Diagnose(incident, {.threads = 2});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->initiator().rank(), c.rank) << d->reason();
    EXPECT_EQ(d->initiator().node(), "gpu-0006") << d->reason();
    EXPECT_EQ(d->initiator().failure_class(), c.cls) << d->reason();
    EXPECT_NE(d->reason().find("restart budget ran out"), std::string::npos) << d->reason();
    bool first_attempt = false, unplaced = false, end = false;
    for (const auto& e : d->evidence()) {
      if (e.role() == v1::EVIDENCE_ROLE_INITIATING) first_attempt |= e.file().starts_with(c.first_log) || !e.file().starts_with("pods/");
      unplaced |= e.text().find("FailedScheduling") != std::string::npos;
      end |= e.role() == v1::EVIDENCE_ROLE_CONTEXT &&
             (e.text().find("ReachedMaxRestarts") != std::string::npos || e.text().find("backoff limit") != std::string::npos);
    }
    EXPECT_TRUE(first_attempt) << d->reason();
    EXPECT_EQ(unplaced, c.unplaced) << d->reason();
    EXPECT_TRUE(end) << d->reason();
  }
}

// Restart chains (kubernetes.restarts 2): what a kubectl collection keeps differs by controller.
// Restarted in place, `kubectl logs --previous` holds only the attempt before the last (the first
// attempt's pod logs are gone: the engine says so, and names the rank that failed there); a
// recreated JobSet gang leaves every attempt's pod logs (kept by the log collector), and the
// engine picks each hostname's first. Both say how often the controller restarted the job and
// that the restart budget ran out.
TEST_F(Kubernetes, RestartChainsNameTheFirstAttemptsInitiator) {
  struct Case {
    const char* name;
    std::vector<std::string> sets;
    int logs_of_node;        // pod logs of the fault's hostname
    const char* restarted;   // the reason's words on the restarts
    bool first_gone;
  };
  const Case cases[] = {
      {"exception_pytorchjob_x2", {"faults[0].kind=FAULT_KIND_EXCEPTION", "faults[0].rank=45"}, 2,
       "its containers in place, 2 times (Restart Count 2", true},
      {"sigsegv_jobset_x2", {"faults[0].kind=FAULT_KIND_SIGSEGV", "faults[0].rank=45", "kubernetes.controller=KUBE_CONTROLLER_JOBSET"}, 3,
       "restarted the job 2 times", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> sets = c.sets;
    sets.push_back("kubernetes.restarts=2");
    const fs::path incident = Simulate(c.name, sets);
    int pod_logs = 0;
    for (const auto& e : fs::directory_iterator(incident / "pods")) {
      const std::string n = e.path().filename().string();
      pod_logs += n.starts_with("llama-worker-4.") || n.starts_with("llama-workers-0-5-") ? 1 : 0;
    }
    EXPECT_EQ(pod_logs, c.logs_of_node);
    auto d = engine::Diagnose(incident, {.threads = 2});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->initiator().rank(), 45) << d->reason();
    EXPECT_NE(d->reason().find(c.restarted), std::string::npos) << d->reason();
    EXPECT_NE(d->reason().find("restart budget ran out"), std::string::npos) << d->reason();
    EXPECT_EQ(d->reason().find("first attempt's pod logs are gone") != std::string::npos, c.first_gone) << d->reason();
    // The first attempt's failure, as far as the logs keep it: the truth cites those lines.
    v1::Truth truth;
    ASSERT_TRUE(proto::ReadJsonFile(incident.parent_path() / "truth.json", &truth).ok());
    std::set<std::pair<std::string, std::int64_t>> cited;
    for (const auto& e : d->evidence()) cited.insert({e.file(), e.line()});
    for (const auto& e : truth.evidence()) {
      if (e.file().starts_with("pods/")) {
        EXPECT_TRUE(cited.contains({e.file(), e.line()})) << e.file() << ":" << e.line();
      }
    }
  }
}

// kubernetes.restarts takes 0 to 3, under Kubernetes, with a fault that recurs or (JobSet only)
// one that leaves its node unusable; anything else is a clear error naming the field.
TEST(KubernetesRestarts, ScenarioValidationNamesTheField) {
  constexpr char kJob[] = R"pb(
    name: "k8s_restarts"
    job { nodes: 16 tp: 8 pp: 2 }
    launcher: LAUNCHER_KUBERNETES
    faults { kind: FAULT_KIND_EXCEPTION }
  )pb";
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"kubernetes.restarts=4"},
           {"kubernetes.restarts=-1"},
           {"kubernetes.restarts=1", "faults[0].kind=FAULT_KIND_HANG"},
           {"kubernetes.restarts=1", "faults[0].kind=FAULT_KIND_NODE_LOSS"},
       }) {
    auto s = sim::ParseScenario(kJob, "k8s_restarts", bad);
    ASSERT_FALSE(s.ok()) << bad.back();
    EXPECT_NE(s.status().message().find("kubernetes.restarts"), std::string::npos) << s.status().message();
  }
  for (const char* good : {"kubernetes.restarts=1", "kubernetes.restarts=3"}) {
    const std::vector<std::string> sets = {good};
    EXPECT_TRUE(sim::ParseScenario(kJob, "k8s_restarts", sets).ok()) << good;
  }
}

}  // namespace
}  // namespace denpex
