// The lines a torchrun agent prints into its node's torchrun.log (docs/log_formats.md §6):
// the OMP_NUM_THREADS banner, SIGTERM notices, and the failure report (the "failed" line,
// Python's traceback of ChildFailedError and its table, laid out as torch.distributed.elastic
// lays it out: rules as wide as the widest line, at most 60).
#include <algorithm>

#include "formatter.h"

namespace denpex::sim {

namespace {

constexpr std::string_view kRunPy = "torch/distributed/run.py";
constexpr std::string_view kApiPy = "torch/distributed/elastic/multiprocessing/api.py";
constexpr std::string_view kRunLogger = "torch.distributed.run";
constexpr std::string_view kApiLogger = "torch.distributed.elastic.multiprocessing.api";
constexpr std::string_view kAgentPy = "torch/distributed/elastic/agent/server/api.py";
constexpr std::string_view kAgentLogger = "torch.distributed.elastic.agent.server.api";
constexpr std::string_view kStars = "*****************************************";
constexpr std::string_view kOmpBanner =
    "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to "
    "avoid your system being overloaded, please further tune the variable for optimal "
    "performance in your application as needed. ";
constexpr std::string_view kScript = "train.py";
constexpr std::string_view kBinary = "/usr/bin/python3";
constexpr int kMaxRuleWidth = 60;

std::string_view SignalName(int signal) {
  switch (signal) {
    case 6:
      return "SIGABRT";
    case 9:
      return "SIGKILL";
    case 11:
      return "SIGSEGV";
    case 15:
      return "SIGTERM";
    default:
      return "SIGNAL";
  }
}

std::int64_t LongestLine(std::string_view text) {
  std::int64_t longest = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(line.size()));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return longest;
}

}  // namespace

namespace {
std::string_view LevelName(char severity) {
  switch (severity) {
    case 'E':
      return "ERROR";
    case 'W':
      return "WARNING";
    default:
      return "INFO";
  }
}
}  // namespace

// The agent's Python logging header in the profile's style (docs/log_formats.md §6):
//   glog (>= 2.2)  <L><MM><DD> <hh>:<mm>:<ss>.<uuuuuu> <pid> <file>:<line>]
//   2.1            [<YYYY>-<MM>-<DD> <hh>:<mm>:<ss>,<mmm>] <logger>: [<LEVEL>]
//   <= 2.0         <LEVEL>:<logger>:
void LineFormatter::AgentHeader(LineBuilder& out, char severity, int node, TimeNs t, Logger logger,
                                int line) const {
  const bool run = logger == Logger::kRun;
  const std::string_view file = run ? kRunPy : logger == Logger::kAgent ? kAgentPy : kApiPy;
  const std::string_view name = run ? kRunLogger : logger == Logger::kAgent ? kAgentLogger : kApiLogger;
  const CivilTime c = ToCivil(Local(node, t));
  switch (torch_.agent_style) {
    case AgentLogStyle::kGlog:
      out.Char(severity).Zero(c.month, 2).Zero(c.day, 2).Char(' ');
      out.Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2).Char('.');
      out.Zero(c.nanos / kNsPerMs * 1000, 6).Char(' ').Int(job_.agent_pid[node]).Char(' ');
      out.Str(file).Char(':').Int(line).Str("] ");
      return;
    case AgentLogStyle::kBracketed:
      out.Char('[').Zero(c.year, 4).Char('-').Zero(c.month, 2).Char('-').Zero(c.day, 2);
      out.Char(' ').Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2);
      out.Char(',').Zero(c.nanos / kNsPerMs, 3).Str("] ").Str(name);
      out.Str(": [").Str(LevelName(severity)).Str("] ");
      return;
    case AgentLogStyle::kLogger:
      out.Str(LevelName(severity)).Char(':').Str(name).Char(':');
      return;
  }
}

void LineFormatter::Format(const AgentBanner& r, LineBuilder& out) const {
  if (job_.gpu_order != v1::GPU_ORDER_UNSPECIFIED) VisibleDevices(r.node, out);
  const bool logger = torch_.agent_style == AgentLogStyle::kLogger;  // one header, then bare
  for (std::string_view text : {std::string_view(), kStars, kOmpBanner, kStars}) {
    if (!logger || text.empty())
      AgentHeader(out, 'W', r.node, r.time, Logger::kRun, torch_.line_run_banner);
    out.Str(text).EndLine();
  }
  if (job_.torchrun_info_logs) RendezvousInfo(r.node, r.time, out);
}

// LOGLEVEL=INFO (format.torchrun_info_logs): the agent's INFO lines around the rendezvous, the
// result a multi-line message (`[<role>] Rendezvous complete for workers. Result:` then one
// `  key=value` line each and a blank line; torch.distributed.elastic.agent.server.api's
// _rendezvous, the same shape in every release): the node's group_rank and its workers' ranks.
// torch's glog-style formatter (>= 2.2) starts every line of a multi-line message with the
// header, the blank last one too (`I… api.py:525]   restart_count=0`, a real 2.5 log; the
// banner's lines are the same); Python's plain logging formats (<= 2.1) only the first.
void LineFormatter::RendezvousInfo(int node, TimeNs t, LineBuilder& out) const {
  constexpr int kRendezvousingLine = 677, kResultLine = 525, kStartingLine = 681;
  AgentHeader(out, 'I', node, t, Logger::kAgent, kRendezvousingLine);
  out.Str("[default] Rendezvous'ing worker group").EndLine();
  const TimeNs result_time = t + 180 * kNsPerMs;
  const bool glog = torch_.agent_style == AgentLogStyle::kGlog;
  auto body = [&] {  // a continuation line of the result message
    if (glog) AgentHeader(out, 'I', node, result_time, Logger::kAgent, kResultLine);
  };
  AgentHeader(out, 'I', node, result_time, Logger::kAgent, kResultLine);
  out.Str("[default] Rendezvous complete for workers. Result:").EndLine();
  auto list = [&](std::string_view key, auto value) {
    body();
    out.Str("  ").Str(key).Str("=[");
    for (int l = 0; l < job_.gpus_per_node; ++l) {
      if (l > 0) out.Str(", ");
      out.Int(value(l));
    }
    out.Char(']').EndLine();
  };
  const int first = node * job_.gpus_per_node;
  body();
  out.Str("  restart_count=0").EndLine();
  body();
  out.Str("  master_addr=").Str(job_.hostnames[0]).EndLine();
  body();
  out.Str("  master_port=29500").EndLine();
  body();
  out.Str("  group_rank=").Int(node).EndLine();
  body();
  out.Str("  group_world_size=").Int(job_.nodes).EndLine();
  list("local_ranks", [](int l) { return l; });
  list("role_ranks", [&](int l) { return first + l; });
  list("global_ranks", [&](int l) { return first + l; });
  list("role_world_sizes", [&](int) { return job_.world; });
  list("global_world_sizes", [&](int) { return job_.world; });
  body();
  out.EndLine();
  AgentHeader(out, 'I', node, t + 181 * kNsPerMs, Logger::kAgent, kStartingLine);
  out.Str("[default] Starting worker group").EndLine();
}

void LineFormatter::Format(const AgentSigterm& r, LineBuilder& out) const {
  AgentHeader(out, 'W', r.node, r.time, Logger::kApi, torch_.line_api_sigterm);
  out.Str("Sending process ").Int(job_.worker_pid[r.rank]).Str(" closing signal SIGTERM").EndLine();
}

// torchrun got SIGTERM itself (the kubelet stopping its pod): the agent's warning, and once its
// workers are gone the SignalException its signal handler raised, out of the monitor loop.
void LineFormatter::Format(const AgentSignalled& r, LineBuilder& out) const {
  constexpr int kAgentRunLine = 704, kInvokeRunLine = 860, kHandlerLine = 84;
  if (!r.exception) {
    AgentHeader(out, 'W', r.node, r.time, Logger::kAgent, kAgentRunLine);
    out.Str("Received Signals.SIGTERM death signal, shutting down workers").EndLine();
    return;
  }
  // The launcher's frames down to launch_agent, which was running the agent, not raising.
  out.Str("Traceback (most recent call last):").EndLine();
  const auto& frames = torch_.torchrun_traceback;
  for (std::size_t i = 0; i + 1 < frames.size(); ++i) Frame(out, frames[i]);
  Frame(out, {"torch/distributed/launcher/api.py", frames.empty() ? 255 : frames.back().line - 9, "launch_agent", "result = agent.run()"});
  Frame(out, {"torch/distributed/elastic/metrics/api.py", 124, "wrapper", "result = f(*args, **kwargs)"});
  Frame(out, {kAgentPy, kAgentRunLine - 7, "run", "result = self._invoke_run(role)"});
  Frame(out, {kAgentPy, kInvokeRunLine, "_invoke_run", "time.sleep(monitor_interval)"});
  Frame(out, {kApiPy, kHandlerLine, "_terminate_process_handler",
         "raise SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)"});
  out.Str("torch.distributed.elastic.multiprocessing.api.SignalException: Process ").Int(job_.agent_pid[r.node]);
  out.Str(" got signal: 15").EndLine();
}

void LineFormatter::Traceback(LineBuilder& out) const {
  out.Str("Traceback (most recent call last):").EndLine();
  for (const PythonFrame& f : torch_.torchrun_traceback) Frame(out, f);
}

void LineFormatter::Frame(LineBuilder& out, const PythonFrame& f) const {
  out.Str("  File \"");
  if (!f.file.starts_with('/')) out.Str(torch_.python_lib).Char('/');
  out.Str(f.file).Str("\", line ").Int(f.line).Str(", in ").Str(f.function).EndLine();
  out.Str("    ").Str(f.code).EndLine();
}

// One "[i]:" entry of the ChildFailedError table (7 lines).
std::string LineFormatter::FailureBlock(int index, const AgentFailure& f, int node,
                                        TimeNs poll_time) const {
  std::string text;
  LineBuilder b(&text);
  const CivilTime c = ToCivil(Local(node, poll_time));
  const int pid = job_.worker_pid[f.rank];
  b.Char('[').Int(index).Str("]:").EndLine();
  b.Str("  time      : ").Zero(c.year, 4).Char('-').Zero(c.month, 2).Char('-').Zero(c.day, 2);
  b.Char('_').Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2).EndLine();
  b.Str("  host      : ").Str(job_.hostnames[node]).EndLine();
  b.Str("  rank      : ").Int(f.rank).Str(" (local_rank: ").Int(job_.LocalRank(f.rank));
  b.Char(')').EndLine();
  b.Str("  exitcode  : ").Int(f.exit_code).Str(" (pid: ").Int(pid).Char(')').EndLine();
  b.Str("  error_file: <N/A>").EndLine();
  if (f.exit_code < 0) {
    b.Str("  traceback : Signal ").Int(-f.exit_code).Str(" (").Str(SignalName(-f.exit_code));
    b.Str(") received by PID ").Int(pid).EndLine();
  } else {
    b.Str(
         "  traceback : To enable traceback see: "
         "https://pytorch.org/docs/stable/elastic/errors.html")
        .EndLine();
  }
  return text;
}

ReportLineOffsets LineFormatter::Format(const AgentFailureReport& r, LineBuilder& out) const {
  constexpr std::int64_t kRankLineInBlock = 3;  // "[i]:", time, host, rank
  ReportLineOffsets offsets;
  const std::int64_t first_line = out.lines();
  const AgentFailure& root = r.failures[0];
  AgentHeader(out, 'E', r.node, r.time, Logger::kApi, torch_.line_api_failed);
  out.Str("failed (exitcode: ").Int(root.exit_code).Str(") local_rank: ");
  out.Int(job_.LocalRank(root.rank)).Str(" (pid: ").Int(job_.worker_pid[root.rank]);
  out.Str(") of binary: ").Str(kBinary).EndLine();
  Traceback(out);
  std::string blocks[16];
  std::int64_t width = static_cast<std::int64_t>(kScript.size()) + 7;  // "train.py FAILED"
  for (int i = 0; i < r.failure_count; ++i) {
    blocks[i] = FailureBlock(i, r.failures[i], r.node, r.poll_time);
    width = std::max(width, LongestLine(blocks[i]));
  }
  width = std::min<std::int64_t>(width, kMaxRuleWidth);
  const std::string rule_eq(static_cast<std::size_t>(width), '=');
  const std::string rule_dash(static_cast<std::size_t>(width), '-');
  out.Str("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ").EndLine();
  out.Str(rule_eq).EndLine();
  out.Str(kScript).Str(" FAILED").EndLine();
  out.Str(rule_dash).EndLine();
  out.Str("Failures:").EndLine();
  if (r.failure_count == 1) out.Str("  <NO_OTHER_FAILURES>").EndLine();
  for (int i = 1; i < r.failure_count; ++i) out.Str(blocks[i]).AddLines(7);
  out.Str(rule_dash).EndLine();
  out.Str("Root Cause (first observed failure):").EndLine();
  offsets.root_rank_line = out.lines() - first_line + kRankLineInBlock;
  out.Str(blocks[0]).AddLines(7);
  out.Str(rule_eq).EndLine();
  offsets.failed_line = 0;
  return offsets;
}

}  // namespace denpex::sim
