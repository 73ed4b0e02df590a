// ProcessGroupNCCL's other messages (docs/log_formats.md): the abort that
// follows a timeout, the watchdog's termination, the heartbeat monitor and the flight
// recorder's dump signal. The timeout itself and its status line are parsed in lines.cc.
#include "parse/families.h"
#include "parse/scan.h"
#include "parse/triggers.h"

namespace denpex::engine {

bool RecogniseWatchdogNote(std::string_view msg, StringTable* strings, Recognised* out) {
  WatchdogNote n;
  out->family = Family::kNcclWatchdog;
  if (msg.starts_with("Some NCCL operations have failed or timed out")) {
    out->kind = Kind::kTakingDown;
  } else if (msg.starts_with("Process group watchdog thread terminated with exception: ") ||
             msg.starts_with("NCCL watchdog thread terminated with exception: ")) {
    std::string_view what = msg.substr(msg.find("exception: ") + std::string_view("exception: ").size());
    what = what.substr(0, what.find('\n'));  // as TokenAfter(msg, "exception: ", "\n"), without its byte loop
    out->kind = Kind::kWatchdogTerminated;
    if (what.find("CUDA error") != std::string_view::npos) {  // the watchdog reports a CUDA fault
      out->family = Family::kCuda;
      out->kind = Kind::kCudaError;
    }
  } else if (msg.starts_with("Heartbeat monitor timed out") ||
             msg.starts_with("First PG on this rank that detected no heartbeat")) {
    out->kind = Kind::kHeartbeatTimeout;  // its watchdog is stuck: the monitor kills the process
  } else if (msg.find("watchdog got stuck for ") != std::string_view::npos) {
    out->kind = Kind::kWatchdogStuck;
  } else if (msg.starts_with("Failed to check the \"should dump\" flag on TCPStore")) {
    out->family = Family::kTorchrun;  // the heartbeat monitor lost its c10d store
    out->kind = Kind::kStoreError;
  } else if (msg.starts_with("Observed flight recorder dump signal")) {
    // Another rank's signal in the TCPStore: this rank is told, it did not detect anything.
    out->kind = Kind::kDumpSignal;
    out->error = false;
  } else if (msg.starts_with("Received a dump signal")) {
    // `from  rank N` names the first rank whose watchdog fired: a detector (a victim), never
    // the rank that stopped. Kept as a field for timing, not as blame.
    out->kind = Kind::kDumpSignal;
    out->error = false;
    std::int64_t r = -1;
    Scanner s(msg);
    if (s.SkipPast(" from ")) {
      s.SkipSpaces();
      if (s.Lit("rank ") && s.Digits(1, 9, &r)) n.from_rank = static_cast<std::int32_t>(r);
    }
  } else {
    return false;
  }
  n.text = InternShownCapped(strings, msg);  // read by no analysis
  out->detail = n;
  return true;
}

// ProcessGroupNCCL lines the parser reads (the timeout block in file_parser.cc, notes above).
namespace {
constexpr Trigger kWatchdogTriggers[] = {
    {"Watchdog caught collective operation timeout"},  // the timeout (also a hard-wrapped one)
    {"Work WorkNCCL("},                                // blocking-wait timeout
    {"last enqueued "},                                // the status line after a timeout
    {"Some NCCL operations have failed or timed out"},
    {"watchdog thread terminated with exception: "},
    {"Heartbeat monitor timed out"},
    {"watchdog got stuck for "},
    {"Received a dump signal"},
    {"Observed flight recorder dump signal"},
    {"detected no heartbeat of its watchdog"},
    {"flag on TCPStore"},
};
}  // namespace
std::span<const Trigger> WatchdogTriggers() { return kWatchdogTriggers; }

}  // namespace denpex::engine
