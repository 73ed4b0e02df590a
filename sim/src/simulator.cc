// Simulate(): validates the scenario, resolves the job and the fault against the seed, runs
// the model with the incident writer as its record sink, and writes truth.json. The one place
// that wires model, formatter, writer and truth together.
#include "denpex/sim/simulator.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <system_error>

#include "denpex/proto/json_io.h"
#include "format/formatter.h"
#include "format/profiles.h"
#include "model/checkpoints.h"
#include "model/evidence.h"
#include "model/gpu_faults.h"
#include "model/job.h"
#include "model/model.h"
#include "model/noise.h"
#include "model/restarts.h"
#include "output/history.h"
#include "output/ib_counters.h"
#include "output/kubernetes.h"
#include "output/truth.h"
#include "output/writer.h"
#include "scenario/scenario_internal.h"

namespace denpex::sim {

namespace fs = std::filesystem;

namespace {

// A scenario built in code has not been through ParseScenario: fill and check it the same way.
Result<v1::Scenario> Validated(const v1::Scenario& scenario) {
  v1::Scenario s = scenario;
  Locator locator("<scenario '" + s.name() + "'>", nullptr);
  DENPEX_RETURN_IF_ERROR(FillDefaultsAndValidate(&s, locator));
  return s;
}

// The incident directory is replaced, so a rerun never mixes old and new files.
Status PrepareOutDir(const fs::path& out_dir, const fs::path& incident) {
  if (out_dir.empty()) return Status::InvalidArgument("simulate: no output directory given");
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec)) {
    return Status::InvalidArgument(out_dir.string() +
                                   " exists and is not a directory; choose "
                                   "another --out");
  }
  fs::remove_all(incident, ec);
  if (ec) return Status::IoError(incident.string() + ": cannot remove: " + ec.message());
  fs::create_directories(out_dir, ec);
  if (ec) return Status::IoError(out_dir.string() + ": cannot create: " + ec.message());
  return Status::Ok();
}

// One restarted attempt (kubernetes.restarts): its plan, model and writer. Its writer puts only
// its pod logs into the incident, under the names kubectl shows them (Job::PodLogOf).
struct RestartedAttempt {
  std::unique_ptr<KubeAttemptPlan> plan;
  std::unique_ptr<LineFormatter> formatter;
  std::unique_ptr<IncidentWriter> writer;
  std::unique_ptr<Model> model;
  Outcome outcome;
};

// The model's progress as a share of its work, estimated from the plan: the steps up to the
// fault hold most of the events (9/10 at 131,072 ranks), the cascade after it the rest, over the
// watchdog timeout and the teardown's grace.
ModelProgress ProgressOf(const Job& job, const FaultPlan& fault,
                         const std::function<void(double)>& report) {
  if (!report) return {};
  constexpr double kBeforeFault = 0.9;
  const double steps = std::max(1, fault.step + fault.slow_steps);
  const double after = std::max<double>(
      1.0, static_cast<double>(job.nccl_timeout + job.sigterm_grace + job.kill_wait));
  return [steps, after, &report](const ModelPoint& p) {
    const double done =
        p.fault_time < 0
            ? kBeforeFault * std::min(1.0, p.step / steps)
            : kBeforeFault + (1 - kBeforeFault) *
                                 std::min(1.0, static_cast<double>(p.now - p.fault_time) / after);
    report(std::min(done, 0.99));
  };
}

}  // namespace

Result<SimulateResult> Simulate(const v1::Scenario& input, const SimulateOptions& options) {
  auto scenario = Validated(input);
  if (!scenario.ok()) return scenario.status();
  const fs::path incident =
      options.incident_dir.empty() ? options.out_dir / "incident" : options.incident_dir;
  DENPEX_RETURN_IF_ERROR(PrepareOutDir(options.out_dir, incident));

  Job job = Job::Build(*scenario, options.seed.value_or(scenario->seed()));
  const FaultPlan fault = PlanFault(scenario->faults(0), job, 0);
  job.noise = PlanNoise(scenario->realism(), job, fault);
  const TorchProfile& torch = *FindTorchProfile(scenario->format().torch());
  // The loud rank repeats the autograd fallback's warning, which torch 1.13 does not have.
  if (torch.autograd_warning_site.empty()) job.noise.loud_rank = -1;
  // The barrier's device guess is logged at INFO (hidden by default) before torch 2.5.
  job.noise.barrier_device_warning = job.noise.benign_warnings && torch.line_barrier_device != 0;
  const LineFormatter formatter(job, torch,
                                *FindNcclProfile(scenario->format().nccl()),
                                *FindSlurmProfile(scenario->format().slurm()));
  IncidentWriter writer(job, formatter, incident, PlanCitations(job, fault),
                        options.writer_threads);
  DENPEX_RETURN_IF_ERROR(writer.CreateDirectories());

  EmitKernelBoot(job, writer);
  Model model(job, fault, writer);
  const Outcome outcome = model.Run(ProgressOf(job, fault, options.on_model_progress));
  EmitNvidiaSmi(job, fault, outcome.end_time, writer);
  DENPEX_RETURN_IF_ERROR(writer.Finish());

  std::optional<v1::CheckpointOutcome> checkpoints;
  if (scenario->has_checkpointing()) {
    auto written = WriteCheckpoints(scenario->checkpointing(), job, fault,
                                    {model.workers().fault_time(), outcome.end_time}, incident);
    if (!written.ok()) return written.status();
    checkpoints = std::move(*written);
    // The checkpoints' times are compared with the fault: the logs carry the job's times too.
    DENPEX_RETURN_IF_ERROR(StampLogTimes(incident, outcome.end_time));
    DENPEX_RETURN_IF_ERROR(writer.StampRasFile());
  }

  // Fail-slow investigations gather every node's IB port counters after the run, and so do
  // the link failures whose ends failed together (variant 1: the counters tell them apart).
  CitedLine nic;
  if (fault.action() == FaultAction::kSlowdown || LinkCountersCollected(fault)) {
    auto written = WriteIbCounters(job, fault, incident);
    if (!written.ok()) return written.status();
    nic = std::move(*written);
  }

  // kubernetes.restarts: each restarted attempt runs as a model of its own, from the end of the
  // one before, and writes its pod logs beside the first attempt's.
  std::vector<std::unique_ptr<RestartedAttempt>> attempts;
  std::vector<KubeRestart> restarts;
  TimeNs last_end = outcome.end_time;
  for (int k = 1; k <= job.kube_restarts; ++k) {
    const Job& before = k == 1 ? job : attempts.back()->plan->job;
    auto a = std::make_unique<RestartedAttempt>();
    a->plan =
        std::make_unique<KubeAttemptPlan>(PlanKubeAttempt(*scenario, fault, before, last_end));
    const Job& attempt = a->plan->job;
    a->formatter =
        std::make_unique<LineFormatter>(attempt, torch, *FindNcclProfile(scenario->format().nccl()),
                                        *FindSlurmProfile(scenario->format().slurm()));
    a->writer = std::make_unique<IncidentWriter>(attempt, *a->formatter, incident,
                                                 PlanCitations(attempt, a->plan->fault),
                                                 options.writer_threads);
    DENPEX_RETURN_IF_ERROR(a->writer->CreateDirectories());
    a->model = std::make_unique<Model>(attempt, a->plan->fault, *a->writer);
    a->outcome = a->model->Run();
    last_end = a->outcome.end_time;
    DENPEX_RETURN_IF_ERROR(a->writer->Finish());
    restarts.push_back(
        {&attempt, &a->model->launcher(), a->plan->restart, a->plan->unplaced, a->plan->node_lost});
    attempts.push_back(std::move(a));
  }

  std::optional<KubeCitations> kube;
  if (job.launcher == v1::LAUNCHER_KUBERNETES) {
    auto written = WriteKubernetesFiles(job, fault, model, last_end, incident, restarts);
    if (!written.ok()) return written.status();
    kube = std::move(*written);
  }

  SimulateResult result;
  result.truth = BuildTruth({*scenario, job, fault, model, outcome, writer, kube ? &*kube : nullptr, &nic});
  if (checkpoints) *result.truth.mutable_checkpoint() = *checkpoints;
  if (attempts.size() >= 2 && job.KubeRestartsInPlace()) {
    // `kubectl logs --previous` keeps only the attempt before the last: the first attempt's pod
    // lines never landed (the truth above cites none of them), and the same failure's lines in
    // that attempt are what is left to cite (its writer wrote only pod logs).
    const RestartedAttempt& kept = *attempts[attempts.size() - 2];
    const v1::Truth seen = BuildTruth(
        {*scenario, kept.plan->job, kept.plan->fault, *kept.model, kept.outcome, *kept.writer});
    for (const v1::Evidence& e : seen.evidence()) *result.truth.add_evidence() = e;
  }
  DENPEX_RETURN_IF_ERROR(WriteHistory(*scenario, job, fault, model.workers().fault_time(), options.out_dir,
                                      &result.truth));
  DENPEX_RETURN_IF_ERROR(proto::WriteJsonFile(options.out_dir / "truth.json", result.truth));
  result.stats.events = outcome.events;
  result.stats.lines = writer.stats().lines;
  result.stats.bytes = writer.stats().bytes;
  result.stats.files = writer.stats().files;
  return result;
}

}  // namespace denpex::sim
