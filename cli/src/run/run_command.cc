// `denpex run` as a subcommand: flags to WrapperOptions, the result to an exit status.
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <iostream>

#include "denpex/cli/commands.h"
#include "denpex/common/status.h"
#include "run/wrapper.h"

namespace denpex::cli {
namespace {

constexpr std::uint64_t kMinMaxBytes = 64 * 1024;

// Ends this process the way the child ended: by the same signal, so that the launcher
// above (torchrun, srun, a container runtime) sees what it would have seen without the
// wrapper. No core file is written for the wrapper itself. Returns only when the signal did
// not end the process (PID 1 in a container ignores signals it has no handler for).
int DieLike(int sig) {
  std::cout.flush();
  std::cerr.flush();
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(sig);
  return 128 + sig;
}

}  // namespace

std::string RunDefaultRankEnv() { return run::DefaultRankEnvText(); }

int RunRun(const RunArgs& args, std::ostream& /*out*/, std::ostream& err) {
  if (args.max_bytes != 0 && args.max_bytes < kMinMaxBytes) {
    err << "denpex run: --max-bytes " << args.max_bytes
        << " is too small; use 0 (no cap) or at least " << kMinMaxBytes << "\n";
    return kExitUsage;
  }
  if (args.error_context_before > run::kMaxContextLines ||
      args.error_context_after > run::kMaxContextLines) {
    err << "denpex run: --error-context-before and --error-context-after take at most "
        << run::kMaxContextLines << " lines\n";
    return kExitUsage;
  }
  run::WrapperOptions o;
  o.out_dir = args.out;
  o.command = args.command;
  o.max_bytes = args.max_bytes;
  o.context_before = args.error_context_before;
  o.context_after = args.error_context_after;
  if (!args.rank_env.empty()) o.rank_env.clear();
  for (std::size_t at = 0; at <= args.rank_env.size();) {
    const std::size_t comma = std::min(args.rank_env.find(',', at), args.rank_env.size());
    if (comma > at) o.rank_env.push_back(args.rank_env.substr(at, comma - at));
    at = comma + 1;
  }
  o.host = args.host;
  if (args.no_tee) o.console_out = o.console_err = -1;
  o.kernel_log = !args.no_kernel_log;
  o.nvidia_smi = !args.no_nvidia_smi;
  err.flush();
  auto result = run::RunWrapped(o);
  if (!result.ok()) {
    err << "denpex run: " << result.status().message() << "\n";
    return ExitCodeFor(result.status());
  }
  const run::ExitInfo& e = result->record.exit;
  if (e.kind == run::ExitInfo::Kind::kSignaled) return DieLike(e.signal);
  return result->exit_code;
}

}  // namespace denpex::cli
