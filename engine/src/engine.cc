// Diagnose: ingest + parse (LoadIncident), one strategy (analyze/), report (report/).
#include "denpex/engine/engine.h"

#include <fcntl.h>
#include <malloc.h>
#include <oneapi/tbb/task_arena.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <ostream>
#include <set>

#include "analyze/checkpoint_outcome.h"
#include "analyze/scope.h"
#include "analyze/strategies.h"
#include "ingest/attempts.h"
#include "ingest/load.h"
#include "report/cascade_times.h"
#include "report/diagnosis.h"
#include "report/events_json.h"
#include "stages.h"

namespace denpex::engine {

std::optional<Strategy> ParseStrategy(std::string_view name) {
  if (name == "engine") return Strategy::kEngine;
  if (name == "first-error") return Strategy::kFirstError;
  if (name == "loudest") return Strategy::kLoudest;
  if (name == "elastic-root-cause") return Strategy::kElasticRootCause;
  if (name == "newest-checkpoint") return Strategy::kNewestCheckpoint;
  if (name == "fr-trace") return Strategy::kFrTrace;
  if (name == "fr-wavefront") return Strategy::kFrWavefront;
  if (name == "ras") return Strategy::kRas;
  return std::nullopt;
}

std::string_view StrategyName(Strategy s) {
  switch (s) {
    case Strategy::kEngine: return "engine";
    case Strategy::kFirstError: return "first-error";
    case Strategy::kLoudest: return "loudest";
    case Strategy::kElasticRootCause: return "elastic-root-cause";
    case Strategy::kNewestCheckpoint: return "newest-checkpoint";
    case Strategy::kFrTrace:
      return "fr-trace";
    case Strategy::kFrWavefront:
      return "fr-wavefront";
    case Strategy::kRas:
      return "ras";
  }
  return "engine";
}

void KeepFreedMemory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest; above it a block is mapped on its own
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
}

namespace {

// Whether the kernel gives transparent huge pages on request (`madvise` mode). Read with the C
// library only: the restart may run before any static initialiser (engine.h).
bool HugePagesOnRequest() {
  const int fd = ::open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char modes[128] = {};
  const ssize_t n = ::read(fd, modes, sizeof modes - 1);
  ::close(fd);
  return n > 0 && std::strstr(modes, "[madvise]") != nullptr;
}

}  // namespace

void RestartWithHugePageHeap(char** argv, char** envp) {
  // In a pre-initialiser the C library's `environ` is not set yet: its own initialiser sets it to
  // the array the kernel passed, after. The second start's restore below changes that array in
  // place (it replaces and removes, never adds), so what it does is kept.
  if (envp != nullptr && environ == nullptr) environ = envp;
  static constexpr const char* kTunables = "GLIBC_TUNABLES";
  static constexpr const char* kSaved =
      "DENPEX_SAVED_GLIBC_TUNABLES";  // "=<value>", or "" if unset
  static constexpr const char* kHugeHeap = "glibc.malloc.hugetlb=1";
  if (const char* saved = std::getenv(kSaved)) {  // the second start: put the environment back
    if (saved[0] == '=') {
      ::setenv(kTunables, saved + 1, 1);  // copies the value before kSaved goes
    } else {
      ::unsetenv(kTunables);
    }
    ::unsetenv(kSaved);
    // The process's name (`ps`, `top`, `pgrep -x`) is the name of the file the kernel ran:
    // "exe", after /proc/self/exe. It is given back the name of the program as it was started.
    if (argv != nullptr && argv[0] != nullptr) {
      const char* slash = std::strrchr(argv[0], '/');
      ::prctl(PR_SET_NAME, slash != nullptr ? slash + 1 : argv[0], 0, 0, 0);
    }
    return;
  }
  const char* tunables = std::getenv(kTunables);
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.hugetlb") != nullptr) return;
  if (const char* preload = std::getenv("LD_PRELOAD");
      preload != nullptr && std::strstr(preload, "vgpreload") != nullptr) {
    return;
  }
  if (!HugePagesOnRequest()) return;
  // "=<tunables>" to put back, and the tunables with the huge-page heap added.
  const std::size_t given = tunables != nullptr ? std::strlen(tunables) : 0;
  char* saved = static_cast<char*>(std::malloc(given + 2));
  char* with = static_cast<char*>(std::malloc(given + std::strlen(kHugeHeap) + 2));
  if (saved == nullptr || with == nullptr) {
    std::free(saved);
    std::free(with);
    return;
  }
  saved[0] = '\0', with[0] = '\0';
  if (tunables != nullptr) {
    std::strcat(std::strcat(saved, "="), tunables);
    if (given > 0) std::strcat(std::strcat(with, tunables), ":");
  }
  std::strcat(with, kHugeHeap);
  ::setenv(kSaved, saved, 1);
  ::setenv(kTunables, with, 1);
  ::execv("/proc/self/exe", argv);
  // Not restarted: go on as it was.
  if (tunables != nullptr) {
    ::setenv(kTunables, saved + 1, 1);
  } else {
    ::unsetenv(kTunables);
  }
  ::unsetenv(kSaved);
  std::free(saved);
  std::free(with);
}

namespace {

// The finding of one strategy.
Finding Analyze(Strategy strategy, const Incident& incident, const Incident* control) {
  switch (strategy) {
    case Strategy::kEngine:
      return AnalyzeParticipation(incident, control);
    case Strategy::kFirstError:
      return AnalyzeFirstError(incident);
    case Strategy::kLoudest:
      return AnalyzeLoudest(incident);
    case Strategy::kElasticRootCause:
      return AnalyzeElasticRootCause(incident);
    case Strategy::kFrTrace:
      return AnalyzeFrTrace(incident);
    case Strategy::kFrWavefront:
      return AnalyzeFrWavefront(incident);
    case Strategy::kRas:
      return AnalyzeRas(incident);
    case Strategy::kNewestCheckpoint: {
      Finding finding = AnalyzeFirstError(incident);
      finding.strategy = "newest-checkpoint";
      return finding;
    }
  }
  return {};
}

// The diagnosis, and with `times` each rank's first error from the same incident read.
Result<v1::Diagnosis> DiagnoseInto(const std::filesystem::path& incident_dir,
                                   const DiagnoseOptions& options, CascadeTimes* times) {
  Stage load("LoadIncident");
  // A diagnosis reads no text that is only shown (`denpex events` shows them).
  const Texts texts = options.shown_texts ? Texts::kAll : Texts::kAnalysed;
  auto incident = LoadIncident(incident_dir, options.threads, options.checkpoint_dir, false,
                               options.chunk_bytes, texts);
  load.End();
  if (!incident.ok()) return incident.status();
  // What the scoping and the analysis run in parallel runs on as many threads as the load did.
  tbb::task_arena arena(options.threads > 0 ? options.threads : tbb::task_arena::automatic);
  Stage scope("ScopeToJob");  // with the later attempts set aside and the kind index built
  arena.execute([&] {
    // The engine looks for patient zero in a restarted job's first attempt; the baselines read
    // all,
    if (options.strategy == Strategy::kEngine) SetAsideLaterAttempts(&*incident);
    // and only this job's lines of daemon and host logs (other jobs', nodes', processes' left
    // out). The events are then final, and indexed by kind: the detectors read the few of the
    // kinds they look for.
    if (options.strategy == Strategy::kEngine) {
      ScopeToJob(&*incident);  // builds the index
    } else {
      incident->IndexKinds();
    }
  });
  scope.End();
  // Only the engine and the checkpoint baseline judge checkpoints; the log baselines leave
  // them NOT_EVALUATED.
  const bool judges_checkpoints =
      options.strategy == Strategy::kEngine || options.strategy == Strategy::kNewestCheckpoint;
  auto ckpt_dir = FindCheckpointDir(incident->root, options.checkpoint_dir);
  if (!ckpt_dir.ok()) return ckpt_dir.status();
  std::optional<Incident> control;
  if (!options.control.empty()) {
    auto loaded =
        LoadIncident(options.control, options.threads, {}, false, options.chunk_bytes, texts);
    if (!loaded.ok()) {
      return Status::InvalidArgument("--control " + options.control.string() + ": " + loaded.status().message() +
                                     " (give the incident directory of a healthy run of the same job)");
    }
    control = std::move(*loaded);
  }
  Stage analyze("Analyze");
  Finding finding;
  arena.execute(
      [&] { finding = Analyze(options.strategy, *incident, control ? &*control : nullptr); });
  analyze.End();
  Stage report("ToDiagnosis");
  v1::Diagnosis d = ToDiagnosis(*incident, finding);
  report.End();
  if (judges_checkpoints && *ckpt_dir) {
    AttachCheckpoints(*incident, finding, **ckpt_dir,
                      options.strategy == Strategy::kNewestCheckpoint, &d);
  }
  if (times != nullptr) *times = RankFirstErrors(*incident, finding.clock_offsets);
  return d;
}

}  // namespace

Result<v1::Diagnosis> Diagnose(const std::filesystem::path& incident_dir,
                               const DiagnoseOptions& options) {
  return DiagnoseInto(incident_dir, options, nullptr);
}

Result<DiagnosisWithTimes> DiagnoseWithTimes(const std::filesystem::path& incident_dir,
                                             const DiagnoseOptions& options) {
  DiagnosisWithTimes out;
  auto d = DiagnoseInto(incident_dir, options, &out.times);
  if (!d.ok()) return d.status();
  out.diagnosis = std::move(*d);
  return out;
}

std::vector<std::string> EventFamilies() {
  std::vector<std::string> names;
  for (int f = static_cast<int>(Family::kOther) + 1; FamilyName(static_cast<Family>(f)) != "other"; ++f) {
    names.emplace_back(FamilyName(static_cast<Family>(f)));
  }
  names.emplace_back(FamilyName(Family::kOther));
  return names;
}

Status WriteEvents(const std::filesystem::path& incident_dir, const EventsOptions& options, std::ostream& out) {
  if (!options.family.empty()) {
    const std::vector<std::string> families = EventFamilies();
    if (std::find(families.begin(), families.end(), options.family) == families.end()) {
      std::string known;
      for (const std::string& f : families) {
        if (!known.empty()) known += ", ";
        known += f;
      }
      return Status::InvalidArgument("--family " + options.family + ": not a family; use one of " + known);
    }
  }
  auto incident = LoadIncident(incident_dir, options.threads);
  if (!incident.ok()) return incident.status();
  std::string line;
  for (const Event& e : incident->events) {
    if (!options.family.empty() && FamilyName(e.family) != options.family) continue;
    line.clear();
    AppendEventJson(*incident, e, &line);
    line.push_back('\n');
    out << line;
  }
  return out.good() ? Status::Ok() : Status::IoError("cannot write the events");
}

Result<IncidentNames> NamesIn(const std::filesystem::path& incident_dir, int threads) {
  auto incident = LoadIncident(incident_dir, threads);
  if (!incident.ok()) return incident.status();
  const Incident& inc = *incident;
  std::set<std::string> hosts;
  std::set<std::int64_t> jobs;
  const auto add = [&](StrId id) {
    if (id != kNoStr && !inc.str(id).empty()) hosts.emplace(inc.str(id));
  };
  for (const Event& e : inc.events) {
    add(e.host);
    if (const auto* fe = std::get_if<FailureEntry>(&e.detail)) add(fe->host);
    if (const auto* sn = std::get_if<SlurmNote>(&e.detail)) {
      add(sn->node);
      if (sn->job >= 0) jobs.insert(sn->job);
    }
    if (const auto* ras = std::get_if<RasRank>(&e.detail)) add(ras->node);
  }
  IncidentNames names;
  std::set<std::string> nodes(inc.nodes.begin(), inc.nodes.end());
  nodes.erase("");
  names.nodes.assign(nodes.begin(), nodes.end());
  names.hosts.assign(hosts.begin(), hosts.end());
  names.slurm_jobs.assign(jobs.begin(), jobs.end());
  return names;
}

}  // namespace denpex::engine
