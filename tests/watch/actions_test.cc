#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "support/temp_dir.h"
#include "watch/actions.h"
#include "watch/http_reply.h"

namespace denpex::cli {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using denpex::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// How long the test server waits for anything before it gives up: the client's bugs fail the
// test instead of hanging it.
constexpr int kServerPatienceMs = 3000;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A listening socket on 127.0.0.1 (or ::1) at a port the kernel picks.
int Listen(int family, std::uint16_t* port) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_storage ss{};
  socklen_t len;
  if (family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    len = sizeof *a;
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(fd, 4) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
    ::close(fd);
    return -1;
  }
  *port = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                  : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return fd;
}

bool WaitReadable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, kServerPatienceMs) == 1;
}

// A one-connection HTTP server on a thread: accepts, reads the request until its headers and
// Content-Length bytes of body are in, then sends `reply` (verbatim) and closes; with no reply,
// holds the connection open until the client closes it.
class OneShotServer {
 public:
  explicit OneShotServer(std::optional<std::string> reply, int family = AF_INET)
      : reply_(std::move(reply)) {
    listen_fd_ = Listen(family, &port_);
    if (listen_fd_ >= 0) thread_ = std::thread([this] { Serve(); });
  }
  ~OneShotServer() {
    Join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }
  bool ok() const { return listen_fd_ >= 0; }
  std::uint16_t port() const { return port_; }
  // The request as it arrived; call after the client is done.
  const std::string& Request() {
    Join();
    return request_;
  }

 private:
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  void Serve() {
    if (!WaitReadable(listen_fd_)) return;
    const int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    std::size_t want = std::string::npos;  // the request's full size, once its headers are in
    char buf[65536];
    while (request_.size() < want && WaitReadable(c)) {
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      request_.append(buf, static_cast<std::size_t>(n));
      const std::size_t end = request_.find("\r\n\r\n");
      const std::size_t cl = request_.find("Content-Length: ");
      if (end != std::string::npos && cl != std::string::npos && cl < end) {
        want = end + 4 + std::stoul(request_.substr(cl + 16));
      }
    }
    if (reply_) {
      [[maybe_unused]] const ssize_t n = ::send(c, reply_->data(), reply_->size(), MSG_NOSIGNAL);
    } else {
      while (WaitReadable(c) && ::recv(c, buf, sizeof buf, 0) > 0) {
      }
    }
    ::close(c);
  }

  std::optional<std::string> reply_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::string request_;
};

std::string Url(std::uint16_t port, std::string_view path) {
  return "http://127.0.0.1:" + std::to_string(port) + std::string(path);
}

// ---------------------------------------------------------------------------- ParseHttpUrl

TEST(ParseHttpUrl, TakesHostPortAndPathApart) {
  auto u = ParseHttpUrl("http://relay.local:8080/hooks/denpex?job=7#frag");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->host, "relay.local");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->authority, "relay.local:8080");
  EXPECT_EQ(u->target, "/hooks/denpex?job=7");

  u = ParseHttpUrl("HTTP://10.0.0.1");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->host, "10.0.0.1");
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->target, "/");

  u = ParseHttpUrl("http://[::1]:9000/x");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 9000);
  EXPECT_EQ(u->authority, "[::1]:9000");
  EXPECT_EQ(u->target, "/x");

  u = ParseHttpUrl("http://[fe80::1]");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->host, "fe80::1");
  EXPECT_EQ(u->port, 80);
}

TEST(ParseHttpUrl, RejectsMalformedUrlsWithAMessage) {
  for (const char* url : {"ftp://x", "http://", "http://host:99999/", "http://host:0/",
                          "http://host:/", "http://host:8o/", "relay:8080", "http://[::1/",
                          "http://[]:80/", "http://user@host/", "http://host/a b"}) {
    const auto u = ParseHttpUrl(url);
    ASSERT_FALSE(u.ok()) << url;
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument) << url;
    EXPECT_THAT(u.status().message(), HasSubstr(url)) << url;
  }
  EXPECT_THAT(ParseHttpUrl("http://host:99999/").status().message(), HasSubstr("1 to 65535"));
  EXPECT_THAT(ParseHttpUrl("ftp://x").status().message(), HasSubstr("only http://"));
  EXPECT_THAT(ParseHttpUrl("http://").status().message(), HasSubstr("no host"));
}

TEST(ParseHttpUrl, RejectsHttpsAndSaysToRunARelay) {
  const auto u = ParseHttpUrl("https://hooks.example.com/denpex");
  ASSERT_FALSE(u.ok());
  EXPECT_THAT(u.status().message(), HasSubstr("https is not supported"));
  EXPECT_THAT(u.status().message(), HasSubstr("relay"));
  EXPECT_THAT(u.status().message(), HasSubstr("http://"));
}

// ---------------------------------------------------------------------------- PostJson

TEST(PostJson, SendsMethodPathHeadersAndTheBodyByteExact) {
  OneShotServer server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  ASSERT_TRUE(server.ok());
  // Large enough to take several sends; with bytes a sloppy client might mangle.
  std::string json = "{\"verdict\":\"rank 3\",\"reason\":\"caf\xc3\xa9 \\u0000\\n\",\"pad\":\"";
  for (int i = 0; i < 300'000; ++i) json += static_cast<char>('a' + i % 26);
  json += "\"}\r\n";
  const Status s = PostJson(Url(server.port(), "/hooks/denpex?job=7"), json, 5s);
  ASSERT_TRUE(s.ok()) << s.message();

  const std::string& req = server.Request();
  const std::size_t end = req.find("\r\n\r\n");
  ASSERT_NE(end, std::string::npos);
  const std::string head = req.substr(0, end + 2);
  EXPECT_THAT(head, StartsWith("POST /hooks/denpex?job=7 HTTP/1.1\r\n"));
  EXPECT_THAT(head, HasSubstr("\r\nHost: 127.0.0.1:" + std::to_string(server.port()) + "\r\n"));
  EXPECT_THAT(head, HasSubstr("\r\nContent-Type: application/json\r\n"));
  EXPECT_THAT(head, HasSubstr("\r\nContent-Length: " + std::to_string(json.size()) + "\r\n"));
  EXPECT_THAT(head, HasSubstr("\r\nConnection: close\r\n"));
  EXPECT_THAT(head, HasSubstr("\r\nUser-Agent: denpex-watch/"));
  EXPECT_EQ(req.substr(end + 4), json);  // byte for byte, nothing after it
}

TEST(PostJson, OkOnAny2xxAfterAnInterimReply) {
  OneShotServer server("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n");
  ASSERT_TRUE(server.ok());
  const Status s = PostJson(Url(server.port(), ""), "{}", 5s);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_THAT(server.Request(), StartsWith("POST / HTTP/1.1\r\n"));
}

TEST(PostJson, A500NamesTheUrlTheCodeAndTheBodysFirstLine) {
  OneShotServer server(
      "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n\r\n"
      "relay: upstream \x1b[31mdown\r\nsecond line\r\n");
  ASSERT_TRUE(server.ok());
  const std::string url = Url(server.port(), "/hook");
  const Status s = PostJson(url, "{}", 5s);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(url));
  EXPECT_THAT(s.message(), HasSubstr("HTTP 500"));
  EXPECT_THAT(s.message(), HasSubstr("relay: upstream \\x1b[31mdown"));
  EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("second line")));
}

TEST(PostJson, AChunkedErrorBodysFirstLineSkipsTheChunkSize) {
  OneShotServer server(
      "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nno route\n\r\n0\r\n\r\n");
  ASSERT_TRUE(server.ok());
  const Status s = PostJson(Url(server.port(), "/nope"), "{}", 5s);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("HTTP 404: no route"));
}

TEST(PostJson, ARefusedConnectionFailsQuicklyAndSaysSo) {
  std::uint16_t port = 0;
  const int fd = Listen(AF_INET, &port);
  ASSERT_GE(fd, 0);
  ::close(fd);  // nothing listens there now
  const Status s = PostJson(Url(port, "/"), "{}", 5s);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(Url(port, "/")));
  EXPECT_THAT(s.message(), HasSubstr("refused"));
}

TEST(PostJson, AServerThatNeverRepliesHitsTheTimeout) {
  OneShotServer server(std::nullopt);
  ASSERT_TRUE(server.ok());
  const Status s = PostJson(Url(server.port(), "/"), "{\"a\":1}", 300ms);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("no reply within 300 ms"));
}

TEST(PostJson, AServerThatClosesWithoutAReplyIsAnError) {
  OneShotServer server("");
  ASSERT_TRUE(server.ok());
  const Status s = PostJson(Url(server.port(), "/"), "{}", 5s);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("without a reply"));
}

TEST(PostJson, AReplyThatIsNotHttpIsAnError) {
  OneShotServer server("SSH-2.0-OpenSSH_9.2\r\n");
  ASSERT_TRUE(server.ok());
  const Status s = PostJson(Url(server.port(), "/"), "{}", 5s);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("not HTTP"));
}

TEST(PostJson, PostsToAnIpv6Literal) {
  OneShotServer server("HTTP/1.0 201 Created\r\n\r\n", AF_INET6);
  if (!server.ok()) GTEST_SKIP() << "no IPv6 loopback here";
  const std::string url = "http://[::1]:" + std::to_string(server.port()) + "/v6";
  const Status s = PostJson(url, "{}", 5s);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_THAT(server.Request(), HasSubstr("\r\nHost: [::1]:" + std::to_string(server.port())));
}

TEST(PostJson, RejectsAMalformedUrlWithoutConnecting) {
  for (const char* url : {"ftp://x", "http://", "http://host:99999/", "https://x/"}) {
    const Status s = PostJson(url, "{}", 300ms);
    ASSERT_FALSE(s.ok()) << url;
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << url;
    EXPECT_THAT(s.message(), HasSubstr(url));
  }
}

// ---------------------------------------------------------------------------- the reply

TEST(JudgeReply, WaitsForTheStatusLineAndAFailedReplysFirstBodyLine) {
  using webhook::JudgeReply;
  using webhook::ReplyEnd;
  const std::string reply = "HTTP/1.1 503 Busy\r\nRetry-After: 1\r\n\r\ntry later\r\nmore";
  const std::size_t line_end = reply.find("later\r\n") + 7;  // just past its '\n'
  for (std::size_t n = 0; n < line_end; ++n) {
    EXPECT_FALSE(JudgeReply(std::string_view(reply).substr(0, n), ReplyEnd::kOpen)) << n;
  }
  const auto verdict = JudgeReply(std::string_view(reply).substr(0, line_end), ReplyEnd::kOpen);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->message(), "HTTP 503: try later");
  // A 2xx needs only its status line.
  EXPECT_TRUE(JudgeReply("HTTP/1.1 202 Accepted\r\n", ReplyEnd::kOpen)->ok());
  // Cut off before a status line: no verdict when the reader gives up, one when the server
  // closed.
  EXPECT_FALSE(JudgeReply("HTTP/1.1 2", ReplyEnd::kGaveUp));
  EXPECT_THAT(JudgeReply("HTTP/1.1 2", ReplyEnd::kClosed)->message(), HasSubstr("without a reply"));
}

TEST(JudgeReply, RejectsAStatusCodeThatIsNotThreeDigits) {
  using webhook::JudgeReply;
  using webhook::ReplyEnd;
  for (const char* reply : {"HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n",
                            "HTTP/1.1 -200 OK\r\n\r\n", "HTTP/1.1 099 OK\r\n\r\n"}) {
    const auto verdict = JudgeReply(reply, ReplyEnd::kOpen);
    ASSERT_TRUE(verdict) << reply;
    EXPECT_THAT(verdict->message(), HasSubstr("not HTTP")) << reply;
  }
}

TEST(JudgeReply, CutsALongBodyLine) {
  const std::string reply = "HTTP/1.1 400 Bad Request\r\n\r\n" + std::string(5000, 'x');
  const auto verdict = webhook::JudgeReply(reply, webhook::ReplyEnd::kOpen);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->message(),
            "HTTP 400: " + std::string(webhook::kMaxBodyLineBytes, 'x') + "...");
}

// ---------------------------------------------------------------------------- hooks

TEST(RunHook, TheCommandSeesThePathAsDollarOneAndInItsEnvironment) {
  TempDir dir;
  const fs::path diagnosis = dir.path() / "diag nosis.json";
  const fs::path out = dir.path() / "seen.txt";
  const std::string cmd =
      "printf '%s\\n%s\\n%s\\n' \"$1\" \"$DENPEX_DIAGNOSIS\" \"$(readlink /proc/self/fd/0)\" > '" +
      out.string() + "'";
  const Status s = RunHook(cmd, diagnosis, 5s);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(ReadFile(out), diagnosis.string() + "\n" + diagnosis.string() + "\n/dev/null\n");
}

TEST(RunHook, AFailingCommandReportsItsExitCode) {
  const Status s = RunHook("exit 3", "/tmp/d.json", 5s);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("'exit 3'"));
  EXPECT_THAT(s.message(), HasSubstr("exited with code 3"));
}

TEST(RunHook, ACommandKilledByASignalSaysWhich) {
  const Status s = RunHook("kill -TERM $$", "/tmp/d.json", 5s);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("killed by signal 15 (SIGTERM)"));
}

// True once `pid` is gone (or a zombie no one has reaped yet: it runs no more).
bool Gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const std::size_t paren = line.rfind(')');
  return paren != std::string::npos && line.size() > paren + 2 && line[paren + 2] == 'Z';
}

TEST(RunHook, AHookPastItsTimeoutIsKilledWithItsProcessGroup) {
  TempDir dir;
  const fs::path pidfile = dir.path() / "sleeper.pid";
  // The shell's own child (the sleep it waits on) must die with it.
  const std::string cmd = "sleep 30 & echo $! > '" + pidfile.string() + "'; wait";
  const Status s = RunHook(cmd, "/tmp/d.json", 300ms);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("timeout of 300 ms"));
  EXPECT_THAT(s.message(), HasSubstr("killed"));
  const std::string pid_text = ReadFile(pidfile);
  ASSERT_FALSE(pid_text.empty());
  const pid_t sleeper = std::stoi(pid_text);
  bool gone = false;
  for (int i = 0; i < 100 && !(gone = Gone(sleeper)); ++i) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(gone) << "pid " << sleeper << " still runs";
}

TEST(HookRunner, RunsOneHookAtATimeAndOnlyTheNewestPendingOne) {
  TempDir dir;
  const fs::path log = dir.path() / "runs.txt";
  HookRunner runner("echo \"$1\" >> '" + log.string() + "'; sleep 0.2", 5s);
  runner.Request("/d/1.json");
  EXPECT_TRUE(runner.busy());
  EXPECT_TRUE(runner.Poll().empty());  // still sleeping: Poll does not wait for it
  runner.Request("/d/2.json");
  runner.Request("/d/3.json");  // replaces 2 as the pending one
  const std::vector<Status> outcomes = runner.Wait();
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_TRUE(outcomes[0].ok()) << outcomes[0].message();
  EXPECT_TRUE(outcomes[1].ok()) << outcomes[1].message();
  EXPECT_FALSE(runner.busy());
  EXPECT_EQ(ReadFile(log), "/d/1.json\n/d/3.json\n");
}

TEST(HookRunner, PollReportsTheEndOfTheHookItStarted) {
  HookRunner runner("exit 7", 5s);
  runner.Request("/d/1.json");
  std::vector<Status> outcomes;
  for (int i = 0; i < 400 && outcomes.empty(); ++i) {
    outcomes = runner.Poll();
    if (outcomes.empty()) std::this_thread::sleep_for(2ms);
  }
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_THAT(outcomes[0].message(), HasSubstr("exited with code 7"));
  EXPECT_FALSE(runner.busy());
}

TEST(HookRunner, DestroyingTheRunnerKillsARunningHook) {
  TempDir dir;
  const fs::path pidfile = dir.path() / "hook.pid";
  pid_t hook = 0;
  {
    HookRunner runner("echo $$ > '" + pidfile.string() + "'; exec sleep 30", 60s);
    runner.Request("/d/1.json");
    for (int i = 0; i < 200 && ReadFile(pidfile).empty(); ++i) std::this_thread::sleep_for(2ms);
    ASSERT_FALSE(ReadFile(pidfile).empty());
    hook = std::stoi(ReadFile(pidfile));
  }
  EXPECT_TRUE(Gone(hook));
}

}  // namespace
}  // namespace denpex::cli
