// What `denpex watch` does each time a job's provisional diagnosis changes, besides writing it:
// POST the diagnosis JSON to `--webhook URL` and run the `--on-diagnosis CMD` hook with the
// diagnosis file's path. Both are bounded by a timeout; neither can hang or kill the watch.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"

namespace denpex::cli {

// ---------------------------------------------------------------------------- webhook

// An `http://host[:port][/path]` URL taken apart. `host` is a name, an IPv4 literal or an IPv6
// literal without its brackets; `authority` is `host[:port]` as the URL wrote it (the Host
// header); `target` is the path with any query, `/` when the URL has none.
struct HttpUrl {
  std::string host;
  std::uint16_t port = 80;
  std::string authority;
  std::string target;
};

// Parses a webhook URL. `https://` is refused (no TLS here: the message says to run a
// plain-HTTP relay on the node), as are other schemes, user info, an empty host and a port
// outside 1-65535. Errors are InvalidArgument and name the URL.
Result<HttpUrl> ParseHttpUrl(std::string_view url);

// POSTs `json` to `url` over HTTP/1.1 (`Content-Type: application/json`, `Connection: close`,
// `User-Agent: denpex-watch/<version>`). A 2xx status is Ok; any other status is an IoError
// naming the URL, the code and the body's first line (at most 200 bytes, control bytes
// escaped); so are a refused or failed connection and a response that does not come in time.
// Connecting (each address in turn), sending and reading the status line share one deadline,
// `timeout` from the call. Resolving a name is getaddrinfo's, bounded by the resolver's own
// timeouts, not by `timeout`: an IP literal or a name in /etc/hosts (localhost) never waits on
// DNS. Writes use MSG_NOSIGNAL: a peer that closes early cannot raise SIGPIPE.
Status PostJson(std::string_view url, std::string_view json, std::chrono::milliseconds timeout);

// ---------------------------------------------------------------------------- hook

// The `--on-diagnosis` hook: `/bin/sh -c COMMAND denpex-watch PATH`, so the command sees the
// diagnosis file as `$1` and as `DENPEX_DIAGNOSIS=PATH` in its environment. Its stdin is
// /dev/null; its stdout and stderr are ours. It runs in a process group of its own, with an
// empty signal mask and SIGPIPE at its default action; it gets SIGKILL if the watch dies.
//
// The runner never blocks the watch loop: Request starts the hook and returns, Poll reaps it.
// At most one hook runs at a time. A Request while one runs is kept as the pending one (a later
// Request replaces it: the watch rewrites one diagnosis file, so the newest path is the one
// worth running for) and started when the running hook ends. A hook still running `timeout`
// after its start has its process group SIGKILLed, and that is its outcome's error.
class HookRunner {
 public:
  HookRunner(std::string command, std::chrono::milliseconds timeout);
  // Kills a running hook's process group and reaps it; a pending one is dropped.
  ~HookRunner();
  HookRunner(const HookRunner&) = delete;
  HookRunner& operator=(const HookRunner&) = delete;

  // Starts the hook for `diagnosis_json` now if none runs, else makes it the pending one. A
  // hook that could not be started is reported by the next Poll.
  void Request(const std::filesystem::path& diagnosis_json);

  // Without blocking: reaps a hook that has ended, kills one past its timeout, starts the
  // pending one. Returns the outcome of each hook that ended or failed to start since the last
  // call, in order (Ok, or an error naming the command and its exit code or signal).
  std::vector<Status> Poll();

  // Blocks until no hook runs and none is pending (each bounded by the timeout); returns the
  // outcomes as Poll does.
  std::vector<Status> Wait();

  // A hook is running or pending.
  bool busy() const { return pid_ > 0 || pending_.has_value(); }

 private:
  void StartNext();
  std::optional<Status> Reap(bool block);

  std::string command_;
  std::chrono::milliseconds timeout_;
  pid_t pid_ = -1;  // the running hook's shell, also its process group; -1 when none runs
  int pidfd_ = -1;  // pidfd of `pid_` when the kernel gives one, to wait without polling
  std::chrono::steady_clock::time_point deadline_;
  std::optional<std::filesystem::path> pending_;
  std::vector<Status> outcomes_;
};

// Runs the hook once and waits for it: HookRunner's Request then Wait, for callers that can
// afford to block for up to `timeout`.
Status RunHook(std::string_view command, const std::filesystem::path& diagnosis_json,
               std::chrono::milliseconds timeout);

}  // namespace denpex::cli
