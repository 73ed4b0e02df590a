// Validation of the torch runtime knobs that shape how a timed-out rank ends (async error
// handling, blocking wait, heartbeat monitor) and of srun's line interleaving
// (docs/scenario_format.md, `timeouts` and `realism`). Called by FillDefaultsAndValidate once
// the format profile and the layout are filled in.
#include <string>

#include "format/flight_recorder.h"
#include "format/profiles.h"
#include "scenario_internal.h"

namespace denpex::sim {

namespace {

constexpr std::int64_t kDefaultHeartbeatTimeoutMs = 480'000;  // TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC
constexpr double kMaxInterleavedLineRate = 0.05;

std::string Num(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

Status CheckAsyncMode(v1::Timeouts* t, const TorchProfile& torch, const Locator& loc) {
  if (!t->has_async_error_handling()) {
    t->set_async_error_handling(torch.default_async_error_handling);
    return Status::Ok();
  }
  const int mode = t->async_error_handling();
  if (mode < 0 || mode > 3) {
    return loc.Error("timeouts.async_error_handling",
                     "timeouts.async_error_handling must be 0, 1, 2 or 3 (got " + std::to_string(mode) + ")",
                     "0 NoHandling, 1 TearDown, 2 CleanUpOnly, 3 SkipCleanUp; leave it out for the default");
  }
  if (mode == 3 && !torch.skip_cleanup_mode) {
    return loc.Error({"timeouts.async_error_handling", "format.torch"},
                     "NCCL_ASYNC_ERROR_HANDLING=3 (SkipCleanUp) does not exist in torch " + std::string(torch.name),
                     "use 1 (TearDown) with torch 1.13, or set format.torch to 2.1 or later");
  }
  return Status::Ok();
}

Status CheckHeartbeat(v1::Timeouts* t, const TorchProfile& torch, const Locator& loc) {
  if (t->heartbeat_timeout_ms() < 0) {
    return loc.Error("timeouts.heartbeat_timeout_ms", "timeouts.heartbeat_timeout_ms must not be negative",
                     "leave it out for the default 480000 (8 minutes)");
  }
  if (t->heartbeat_timeout_ms() == 0) t->set_heartbeat_timeout_ms(kDefaultHeartbeatTimeoutMs);
  const double f = t->watchdog_stuck_fraction();
  if (!(f >= 0 && f <= 1)) {
    return loc.Error("timeouts.watchdog_stuck_fraction",
                     "timeouts.watchdog_stuck_fraction must be in [0, 1] (got " + Num(f) + ")",
                     "a share of the timed-out ranks, e.g. 0.5");
  }
  if (f == 0) return Status::Ok();
  if (torch.line_heartbeat_timeout == 0) {
    return loc.Error({"timeouts.watchdog_stuck_fraction", "format.torch"},
                     "a stuck watchdog is ended by the heartbeat monitor, which torch " + std::string(torch.name) +
                         " does not have",
                     "set format.torch to 2.4 or later, or leave watchdog_stuck_fraction out");
  }
  const int mode = t->async_error_handling();
  if ((mode != 1 && mode != 2) || t->blocking_wait()) {
    return loc.Error({"timeouts.watchdog_stuck_fraction", "timeouts.async_error_handling"},
                     "only a watchdog that aborts its communicators (async_error_handling 1 or 2, no "
                     "blocking_wait) can get stuck in ncclCommAbort",
                     "set async_error_handling: 1, or leave watchdog_stuck_fraction out");
  }
  if (t->dump_on_timeout()) {
    return loc.Error({"timeouts.watchdog_stuck_fraction", "timeouts.dump_on_timeout"},
                     "a stuck watchdog together with dump_on_timeout is not simulated yet",
                     "leave one of watchdog_stuck_fraction and dump_on_timeout out");
  }
  return Status::Ok();
}

// Combinations whose logs the simulator does not model yet are refused rather than guessed.
Status CheckCombinations(const v1::Timeouts& t, const Locator& loc) {
  if (t.dump_on_timeout() && (t.blocking_wait() || t.async_error_handling() == 0)) {
    return loc.Error({"timeouts.dump_on_timeout", "timeouts.blocking_wait", "timeouts.async_error_handling"},
                     "dump_on_timeout with blocking_wait or async_error_handling 0 is not simulated yet",
                     "leave dump_on_timeout out, or use async_error_handling 1, 2 or 3");
  }
  return Status::Ok();
}

// timeouts.flight_recorder: the trace buffer is only dumped on a timeout with dump_on_timeout.
constexpr int kMaxTraceBuffer = 1'000'000;

Status CheckFlightRecorder(const v1::Timeouts& t, const Locator& loc) {
  if (!t.has_flight_recorder()) return Status::Ok();
  const v1::FlightRecorder& fr = t.flight_recorder();
  if (fr.buffer_size() < 1 || fr.buffer_size() > kMaxTraceBuffer) {
    return loc.Error(
        "timeouts.flight_recorder.buffer_size",
        "timeouts.flight_recorder.buffer_size must be 1 to 1000000 (got " +
            std::to_string(fr.buffer_size()) + ")",
        "TORCH_NCCL_TRACE_BUFFER_SIZE, e.g. 2000; leave flight_recorder out for no dumps");
  }
  if (!t.dump_on_timeout()) {
    return loc.Error({"timeouts.flight_recorder", "timeouts.dump_on_timeout"},
                     "a flight-recorder trace buffer is only written to files with dump_on_timeout",
                     "set timeouts.dump_on_timeout: true, or leave flight_recorder out");
  }
  if (!fr.version().empty() && FindFlightRecorderFormat(fr.version()) == nullptr) {
    return loc.Error(
        "timeouts.flight_recorder.version",
        "unknown flight-recorder dump version \"" + fr.version() + "\"",
        "use one of " + FlightRecorderVersionList() + ", or leave it out for format.torch's");
  }
  if (!v1::FlightRecorderFormat_IsValid(fr.format()) ||
      !v1::FlightRecorderCoverage_IsValid(fr.coverage())) {
    return loc.Error({"timeouts.flight_recorder.format", "timeouts.flight_recorder.coverage"},
                     "unknown flight-recorder format or coverage",
                     "FLIGHT_RECORDER_FORMAT_PICKLE or _JSON; FLIGHT_RECORDER_COVERAGE_ALL, "
                     "_ALL_BUT_FIRST_FAILED or _RANDOM_HALF");
  }
  return Status::Ok();
}

}  // namespace

Status CheckErrorHandling(v1::Scenario* s, const Locator& loc) {
  const TorchProfile* torch = FindTorchProfile(s->format().torch());
  v1::Timeouts* t = s->mutable_timeouts();
  DENPEX_RETURN_IF_ERROR(CheckAsyncMode(t, *torch, loc));
  DENPEX_RETURN_IF_ERROR(CheckHeartbeat(t, *torch, loc));
  DENPEX_RETURN_IF_ERROR(CheckFlightRecorder(*t, loc));
  if (t->has_flight_recorder() && s->kubernetes().restarts() > 0) {  // each attempt would dump
    return loc.Error({"timeouts.flight_recorder", "kubernetes.restarts"},
                     "flight-recorder dumps of a restarted Kubernetes job are not simulated yet",
                     "leave one of flight_recorder and kubernetes.restarts out");
  }
  return CheckCombinations(*t, loc);
}

// nccl_ras: RAS came with NCCL 2.24, `ncclras -f json` with 2.28.7.
constexpr int kMaxRasEvery = 86'400;
constexpr int kMaxRasQueries = 1'024;  // the engine reads a file of at most 1,024 reports

Status CheckNcclRas(const v1::Scenario& s, const Locator& loc) {
  if (!s.has_nccl_ras()) return Status::Ok();
  const v1::NcclRas& ras = s.nccl_ras();
  if (ras.every_s() < 0 || ras.every_s() > kMaxRasEvery) {
    return loc.Error(
        "nccl_ras.every_s",
        "nccl_ras.every_s must be 1 to 86400 seconds (got " + std::to_string(ras.every_s()) + ")",
        "the poller's interval, e.g. 60; leave it out for 60");
  }
  if (ras.queries() < 0 || ras.queries() > kMaxRasQueries) {
    return loc.Error(
        "nccl_ras.queries",
        "nccl_ras.queries must be 0 to 1024 (got " + std::to_string(ras.queries()) + ")",
        "how many of the last polls the file keeps; 0 (or left out): every poll from the fault on");
  }
  if (!v1::NcclRasFormat_IsValid(ras.format())) {
    return loc.Error("nccl_ras.format", "unknown nccl_ras.format",
                     "NCCL_RAS_FORMAT_TEXT or NCCL_RAS_FORMAT_JSON");
  }
  const std::uint32_t nccl = ReleaseNumber(s.format().nccl());
  if (nccl < ReleaseNumber("2.24")) {
    return loc.Error({"nccl_ras", "format.nccl"},
                     "NCCL RAS (ncclras) came with NCCL 2.24; format.nccl is " + s.format().nccl(),
                     "set format.nccl to 2.24.3 or later (" + std::string(SupportedNcclProfiles()) +
                         "), or leave nccl_ras out");
  }
  if (ras.format() == v1::NCCL_RAS_FORMAT_JSON && nccl < ReleaseNumber("2.28.7")) {
    return loc.Error({"nccl_ras.format", "format.nccl"},
                     "`ncclras -f json` came with NCCL 2.28.7; format.nccl is " + s.format().nccl(),
                     "set format.nccl to 2.28.9 or 2.29.2, or use NCCL_RAS_FORMAT_TEXT");
  }
  return Status::Ok();
}

Status CheckInterleaving(const v1::Scenario& s, const Locator& loc) {
  const double rate = s.realism().interleaved_line_rate();
  if (!(rate >= 0 && rate <= kMaxInterleavedLineRate)) {
    return loc.Error("realism.interleaved_line_rate",
                     "realism.interleaved_line_rate must be in [0, " + Num(kMaxInterleavedLineRate) + "] (got " +
                         Num(rate) + ")",
                     "real srun outputs split well under 1 line in 1000: try 0.0005");
  }
  if (rate > 0 && s.layout() != v1::LAYOUT_SLURM_OUT) {
    return loc.Error({"realism.interleaved_line_rate", "layout"},
                     "realism.interleaved_line_rate needs the combined srun output (LAYOUT_SLURM_OUT)",
                     "set launcher: LAUNCHER_SRUN, or leave interleaved_line_rate out");
  }
  return Status::Ok();
}

}  // namespace denpex::sim
