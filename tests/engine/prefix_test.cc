// Stacked prefixes and line headers, on the real shapes of docs/log_formats.md
// §1 and §1h (one test per producer; versions in the test names where the shape changed).
#include <gtest/gtest.h>

#include <string>

#include "parse/headers.h"
#include "parse/parse_log.h"
#include "parse/prefix.h"

namespace denpex::engine {
namespace {

TimeNs At(const char* rfc3339) { return *ParseRfc3339(rfc3339); }
TimeNs Yearless(const char* rest) { return At((std::string("2000-") + rest).c_str()); }

struct Stripped {
  std::string_view body;
  LineOrigin origin;
  int count = 0;
};

Stripped Strip(std::string_view line, PrefixPolicy policy = {}) {
  Stripped s{.body = line};
  s.count = StripPrefixes(&s.body, policy, &s.origin);
  return s;
}

TEST(Prefixes, ContainerStampThenTorchRankPrefix) {
  const auto s = Strip("2025-07-03T14:20:51.565839352Z [rank3]:[E703 14:20:51.565 ProcessGroupNCCL.cpp:607] m");
  EXPECT_EQ(s.count, 2);
  EXPECT_TRUE(s.origin.timed);
  EXPECT_EQ(s.origin.time, At("2025-07-03T14:20:51.565839352Z"));
  EXPECT_EQ(s.origin.rank, 3);
  EXPECT_TRUE(s.body.starts_with("[E703"));
}

TEST(Prefixes, CloudWatchAndMinuteCollectorStamps) {
  auto s = Strip("  | 2024-11-28T07:42:11.525Z | NCCL WARN x");
  EXPECT_EQ(s.origin.time, At("2024-11-28T07:42:11.525Z"));
  EXPECT_EQ(s.body, "NCCL WARN x");
  s = Strip(" 2025-02-18 12:54 host:1:2 [0] NCCL INFO x");
  EXPECT_EQ(s.origin.time, At("2025-02-18T12:54:00Z"));
  EXPECT_EQ(s.body, "host:1:2 [0] NCCL INFO x");
}

TEST(Prefixes, SrunLabelIsATaskIdPaddedToTheWidestTask) {
  auto s = Strip("13: [rank13]:Traceback (most recent call last):");
  EXPECT_EQ(s.origin.task, 13);
  EXPECT_EQ(s.origin.rank, 13);
  EXPECT_EQ(s.body, "Traceback (most recent call last):");
  s = Strip("  3: RuntimeError: boom");
  EXPECT_EQ(s.origin.task, 3);
  EXPECT_EQ(s.body, "RuntimeError: boom");
}

// `kubectl logs --prefix` puts `[pod/<pod>/<container>] ` before each line (and `--timestamps` its
// stamp after that): peeled, the pod not taken for the line's host; a tag of another shape is not.
TEST(Prefixes, KubectlPodTagIsPeeledWithoutNamingAHost) {
  auto s = Strip("[pod/llama-worker-3/pytorch] [rank27]:[E1206 18:44:12.715] x", {.hosts = true});
  EXPECT_EQ(s.origin.rank, 27);
  EXPECT_TRUE(s.origin.host.empty());
  EXPECT_EQ(s.body, "[E1206 18:44:12.715] x");
  s = Strip("[pod/llama-worker-3/pytorch] 2026-03-02T09:00:21.972589808Z 3: RuntimeError: boom");
  EXPECT_EQ(s.origin.time, At("2026-03-02T09:00:21.972589808Z"));
  EXPECT_EQ(s.origin.task, 3);
  EXPECT_EQ(s.body, "RuntimeError: boom");
  EXPECT_EQ(Strip("[pod/llama-worker-3/pytorch] ").body, "");
  EXPECT_EQ(Strip("[pod/llama-worker-3] RuntimeError: boom").count, 0);
  EXPECT_EQ(Strip("[pod/a b/c] RuntimeError: boom").count, 0);
}

// Loki's `logcli query` writes `<stamp> <labels padded to the widest> <line>`: the label set and
// its padding are peeled (no label taken for a host); a JSON line's object is no label set.
TEST(Prefixes, LokiLabelSetIsPeeledAfterItsStamp) {
  auto s = Strip(
      R"(2026-03-02T10:00:21+01:00 {job="trainer", pod="llama-worker-3"}     [rank27]:[E1206 18:44:12.715] x)",
      {.hosts = true});
  EXPECT_EQ(s.origin.time, At("2026-03-02T09:00:21Z"));
  EXPECT_EQ(s.origin.rank, 27);
  EXPECT_TRUE(s.origin.host.empty());
  EXPECT_EQ(s.body, "[E1206 18:44:12.715] x");
  s = Strip(R"(2026-03-02T10:00:21Z {} RuntimeError: boom)");
  EXPECT_EQ(s.body, "RuntimeError: boom");
  s = Strip(R"(2026-03-02T10:00:21Z {msg="a \"quoted\" value, {braced}"} RuntimeError: boom)");
  EXPECT_EQ(s.body, "RuntimeError: boom");
  EXPECT_EQ(Strip(R"({"log": "x", "time": 1})").count, 0);
  EXPECT_EQ(Strip(R"({job="trainer" RuntimeError: boom)").count, 0);
}

// stern's `<pod> <container> ` (every pod a query names in one stream) is learnt from most of a
// file's first lines, or every line of a short one, with one container's name; the pod is not
// taken for a host. Step lines differ in their second word; a first word without `-` is no pod.
TEST(Prefixes, SternPodAndContainerAreLearntAndPeeled) {
  const std::string text =
      "llama-worker-0 pytorch [rank0]:[W1206 18:44:12.715] starting\n"
      "llama-worker-3 pytorch [rank27]:[E1206 18:44:12.715] Watchdog caught collective operation "
      "timeout\n"
      "llama-worker-3 pytorch 2026-03-02 09:00:21,972 INFO step 10\n"
      "llama-worker-1 pytorch Traceback (most recent call last):\n";
  const PrefixPolicy policy = SniffPrefixes(text);
  EXPECT_EQ(policy.PodContainer(), "pytorch");
  auto s = Strip("llama-worker-3 pytorch [rank27]:[E1206 18:44:12.715] x", policy);
  EXPECT_EQ(s.origin.rank, 27);
  EXPECT_TRUE(s.origin.host.empty());
  EXPECT_EQ(s.body, "[E1206 18:44:12.715] x");
  EXPECT_EQ(Strip("llama-worker-3 sidecar RuntimeError: boom", policy).body,
            "llama-worker-3 sidecar RuntimeError: boom");
  EXPECT_EQ(SniffPrefixes("llama-worker-0 pytorch [rank0]: RuntimeError: boom\n").PodContainer(),
            "pytorch");
  EXPECT_EQ(SniffPrefixes("step 1 loss 2.3\nstep 2 loss 2.2\nstep 3 loss 2.1\nstep 4 loss 2.0\n")
                .PodContainer(),
            "");
  EXPECT_EQ(SniffPrefixes("worker ready a\nworker ready b\nworker ready c\nworker ready d\n")
                .PodContainer(),
            "");
  EXPECT_EQ(SniffPrefixes("rank-0 failed: boom\n").PodContainer(), "");
}

// `docker compose logs` puts a container's name padded to the widest and a bar before each line:
// learnt from most of the first lines (or every line of a short file) and peeled, so an srun label
// or a stamp behind it is read; a table's row (`| a | b |`) or one word and a bar now and then is
// not.
TEST(Prefixes, ComposeContainerTagIsLearntAndPeeled) {
  const PrefixPolicy policy = SniffPrefixes(
      "trainer-1       | 3: [rank3]:[E1206 18:44:12.715] Watchdog caught collective operation "
      "timeout\n"
      "trainer-1       | 2026-03-02T09:00:21.972589808Z RuntimeError: boom\n"
      "store-sidecar-1 | ready\n"
      "trainer-1       |\n");
  EXPECT_TRUE(policy.compose);
  auto s = Strip("trainer-1       | 3: [rank3]:[E1206 18:44:12.715] x", policy);
  EXPECT_EQ(s.origin.task, 3);
  EXPECT_EQ(s.origin.rank, 3);
  EXPECT_EQ(s.body, "[E1206 18:44:12.715] x");
  s = Strip("trainer-1       | 2026-03-02T09:00:21.972589808Z RuntimeError: boom", policy);
  EXPECT_EQ(s.origin.time, At("2026-03-02T09:00:21.972589808Z"));
  EXPECT_EQ(s.body, "RuntimeError: boom");
  // srun's labels behind the tag are the file's (the splice repair of a combined srun output).
  const PrefixPolicy labelled =
      SniffPrefixes("launcher-1 | 0: a\nlauncher-1 | 1: b\nlauncher-1 | 0: c\nlauncher-1 | 1: d\n");
  EXPECT_TRUE(labelled.compose);
  EXPECT_TRUE(labelled.srun_labels);
  EXPECT_FALSE(SniffPrefixes("| GPU | Name |\n| 0 | H100 |\n| 1 | H100 |\n| 2 | H100 |\n").compose);
  EXPECT_FALSE(SniffPrefixes("loss | 2.3\nstep 1 done\nstep 2 done\nstep 3 done\n").compose);
}

TEST(Prefixes, HostNamesNeedTheFilePolicyButAddressesDoNot) {
  auto s = Strip("gr064: [2023-04-14 13:11:27,885] [INFO] x");
  EXPECT_TRUE(s.origin.host.empty());
  s = Strip("gr064: [2023-04-14 13:11:27,885] [INFO] x", {.hosts = true});
  EXPECT_EQ(s.origin.host, "gr064");
  s = Strip("192.168.13.81: RuntimeError: x");
  EXPECT_EQ(s.origin.host, "192.168.13.81");
  EXPECT_EQ(s.body, "RuntimeError: x");
  // Words that open ordinary lines are never hosts, whatever the policy.
  s = Strip("RuntimeError: CUDA error: x", {.hosts = true});
  EXPECT_EQ(s.count, 0);
  s = Strip("srun: error: node-1: task 3: Killed", {.hosts = true});
  EXPECT_EQ(s.count, 0);
}

// The first tag is found behind any number of `<` that open no tag (NCCL's `ib0:10.1.2.3<0>`,
// `]<` that is not `]<std`), wherever it falls against the search's 32-byte steps.
TEST(Prefixes, TheFirstOpenMpiTagIsFoundBehindOtherAngleBrackets) {
  const std::string chatter =
      "gpu-0001:7:7 [1] NCCL INFO Bootstrap : Using ib0:10.64.5.182<0>\n[x]<y> [a]<st\n";
  for (std::size_t pad = 0; pad < 70; ++pad) {
    std::string text = std::string(pad, 'x') + "\n";
    for (int i = 0; i < 50; ++i) text += chatter;
    text += "[1,0]<stderr>: a\n[1,1]<stdout>: b\n[1,2]<stdout>: c\n";
    EXPECT_TRUE(SniffPrefixes(text).mpi_tag_space) << pad;
    text.resize(text.size() - 1);  // the tag's line last, unterminated
    EXPECT_TRUE(SniffPrefixes(text).mpi_tag_space) << pad;
  }
  EXPECT_FALSE(SniffPrefixes("[1,0]<std").mpi_tag_space);  // cut short: no tag
}

// A mapped file's probe for its first OpenMPI tag reads the file (ReadBehind::Copy) in 256 KiB
// windows, not through the mapping: a tag that spans two windows is found whole, and a file that
// cannot give its bytes is probed in its text.
TEST(Prefixes, TheFirstOpenMpiTagIsFoundAcrossTheProbesReads) {
  struct Bytes final : ReadBehind {
    std::string_view text;
    bool readable = true;
    void Release(std::uint64_t, std::uint64_t) const override {}
    bool Copy(std::uint64_t offset, std::size_t length, char* into) const override {
      if (!readable || offset + length > text.size()) return false;
      text.copy(into, length, offset);
      return true;
    }
  };
  constexpr std::size_t kWindow = 256 << 10;
  for (std::size_t bracket = kWindow - 8; bracket <= kWindow + 8; ++bracket) {
    const std::size_t line_start = bracket - 4;  // `[1,0]` puts its `]` 4 bytes in
    std::string text(line_start % 64 == 0 ? 64 : line_start % 64, 'x');
    text.back() = '\n';
    while (text.size() < line_start) text += std::string(63, 'x') + "\n";
    text += "[1,0]<stdout>: a\nb\n";  // the only tag
    ASSERT_EQ(text.substr(bracket, 5), "]<std");
    Bytes file;
    file.text = text;
    EXPECT_TRUE(SniffPrefixes(text, &file).mpi_tag_space) << bracket;
    file.readable = false;
    EXPECT_TRUE(SniffPrefixes(text, &file).mpi_tag_space) << bracket;
    file.readable = true;
    text[bracket + 2] = 'S';  // no tag
    EXPECT_FALSE(SniffPrefixes(text, &file).mpi_tag_space) << bracket;
  }
}

TEST(Prefixes, SniffTakesHostsOnlyWhenMostLinesCarryOne) {
  EXPECT_TRUE(SniffPrefixes("rdma-test-gpu-worker-1: a\nrdma-test-gpu-worker-0: b\nrdma-test-gpu-worker-1: c\n").hosts);
  EXPECT_FALSE(SniffPrefixes("RuntimeError: a\nplain line\nanother: b\n").hosts);
}

// A container runtime splits a line over 16 KiB into `P` pieces (DeepSpeed's `--world_info`,
// printed by every node's launcher behind pdsh's host, runs to 60 KB at 1,024 nodes): the pieces
// after a head have no prefix of their own and are not counted against the file's hosts, in either
// stream; a line after a stream's `F` piece is a head again.
TEST(Prefixes, SniffJudgesACriFileAtTheHeadsOfItsSplitLines) {
  std::string text;
  for (int node = 1; node <= 6; ++node) {
    const std::string host = "gpu-000" + std::to_string(node) + ": ";
    text += "2026-03-02T09:00:00.5Z stdout P " + host +
            "cmd = deepspeed.launcher.launch --world_info=eyJn\n";
    for (int piece = 0; piece < 3; ++piece)
      text += "2026-03-02T09:00:00.5Z stdout P " + std::string(40, 'Q') + "\n";
    text += "2026-03-02T09:00:00.5Z stderr F " + host + "[rank0]: a warning\n";
    text += "2026-03-02T09:00:00.5Z stdout F IjogWzAsIDFdfQ==\n";
    text += "2026-03-02T09:00:00.6Z stdout F " + host +
            "[INFO] launch.py: nnodes=1024, num_local_procs=8\n";
  }
  const PrefixPolicy policy = SniffPrefixes(text);
  EXPECT_TRUE(policy.cri);
  EXPECT_TRUE(policy.hosts);
}

// `dmesg -x` puts the record's facility and level before the kernel's stamp.
TEST(Prefixes, DmesgsDecodedFacilityAndLevelArePeeled) {
  EXPECT_EQ(Strip("kern  :warn  : [Tue Dec  8 00:19:02 2026] NVRM: Xid x").body,
            "[Tue Dec  8 00:19:02 2026] NVRM: Xid x");
  EXPECT_EQ(Strip("daemon:info  : [  518.050606] systemd[1]: x").body,
            "[  518.050606] systemd[1]: x");
  EXPECT_EQ(Strip("kern  :loud  : x").body, "kern  :loud  : x");  // no level of syslog's
}

TEST(Prefixes, OpenMpiTagGivesTheRank) {
  const auto s = Strip("[1,3]<stdout>:Epoch 1");
  EXPECT_EQ(s.origin.rank, 3);
  EXPECT_EQ(s.body, "Epoch 1");
  // SageMaker's mpirun tags a line with the rank and its host
  const auto sm = Strip("[1,mpirank:9,algo-2]<stderr>:RuntimeError: CUDA error");
  EXPECT_EQ(sm.origin.rank, 9);
  EXPECT_EQ(sm.origin.host, "algo-2");
  EXPECT_EQ(sm.body, "RuntimeError: CUDA error");
  EXPECT_EQ(Strip("[1,mpirank:9,]<stderr>:x").origin.rank, -1);
  EXPECT_EQ(Strip("[1,mpirank:9 algo-2]<stderr>:x").origin.rank, -1);
}

// PRRTE (Open MPI 5) writes a space after the tag; Open MPI 4 does not, and there a leading
// space is the program's own (Megatron's ` [date] iteration`). The file's tagged lines decide,
// even when they start after mpirun --report-bindings' untagged lines.
TEST(Prefixes, OpenMpi5TagSpaceIsTheTagsNotTheLines) {
  const std::string ompi5 =
      "[gpu-0001:07633] Rank 0 bound to package[0][core:0-11]\n"
      "[1,0]<stderr>: [rank0]:[W302 09:00:02.697196643 socket.cpp:697] x\n"
      "[1,1]<stdout>:  [2026-03-02 09:00:22] iteration 3/ 100 |\n"
      "[1,1]<stdout>: gpu-0001:1:1 [1] NCCL INFO Bootstrap\n";
  const PrefixPolicy five = SniffPrefixes(ompi5);
  EXPECT_TRUE(five.mpi_tag_space);
  EXPECT_EQ(Strip("[1,1]<stdout>:  [2026-03-02 09:00:22] iteration 3", five).body, " [2026-03-02 09:00:22] iteration 3");
  EXPECT_EQ(Strip("[1,0]<stderr>: [rank0]:x", five).origin.rank, 0);
  const PrefixPolicy four = SniffPrefixes("[1,0]<stderr>:[rank0]:x\n[1,1]<stdout>: [2026-03-02 09:00:22] iteration 3\n[1,2]<stdout>:y\n");
  EXPECT_FALSE(four.mpi_tag_space);
  EXPECT_EQ(Strip("[1,1]<stdout>: [2026-03-02 09:00:22] iteration 3", four).body, " [2026-03-02 09:00:22] iteration 3");
}

TEST(Prefixes, TorchrunRoleTagThenGlobalRank) {
  const auto s = Strip("[default3]:[rank11]:RuntimeError: x");
  EXPECT_EQ(s.origin.local_rank, 3);
  EXPECT_EQ(s.origin.rank, 11);
  EXPECT_EQ(s.body, "RuntimeError: x");
}

TEST(Prefixes, TorchXAndNemoRolesCarryTheLocalRank) {
  auto s = Strip("trainer/0 [2]:RuntimeError: x");
  EXPECT_EQ(s.origin.local_rank, 2);
  EXPECT_EQ(s.body, "RuntimeError: x");
  s = Strip("nemo.collections.llm.api.pretrain/0 [default5]:hello");
  EXPECT_EQ(s.origin.local_rank, 5);
  EXPECT_EQ(s.body, "hello");
}

TEST(Prefixes, RayForwardingTagsPlainAndColoured) {
  auto s = Strip("(RayWorkerVllm pid=7046) RuntimeError: x");
  EXPECT_EQ(s.body, "RuntimeError: x");
  s = Strip("\x1b[1;36m(VllmWorker rank=0 pid=13543)\x1b[0;0m INFO x");
  EXPECT_EQ(s.body, "INFO x");
}

TEST(Prefixes, TableEntryOpenerAndMalformedRankPrefix) {
  auto s = Strip("[0]:");
  EXPECT_EQ(s.count, 0);  // a ChildFailedError entry, not a TorchX tag
  s = Strip("[rankX]: hello");
  EXPECT_TRUE(s.origin.malformed);
}

Header Head(std::string_view line) {
  Header h;
  ParseHeader(line, &h);
  return h;
}

TEST(Headers, C10Torch24HasAnUnpaddedMonthAndNoYear) {
  for (auto [line, when] : {std::pair{"[E626 01:02:03.123456789 ProcessGroupNCCL.cpp:607] m", "06-26T01:02:03.123456789Z"},
                            std::pair{"[E1016 01:02:03.000000001 ProcessGroupNCCL.cpp:607] m", "10-16T01:02:03.000000001Z"},
                            std::pair{"[E808 23:59:59.5 x.cpp:1] m", "08-08T23:59:59.5Z"}}) {
    const Header h = Head(line);
    EXPECT_EQ(h.kind, HeaderKind::kC10) << line;
    EXPECT_EQ(h.clock, Clock::kNoYear) << line;
    EXPECT_EQ(h.time, Yearless(when)) << line;
    EXPECT_EQ(h.message, "m") << line;
  }
}

TEST(Headers, C10Torch23AndOlderHasNoTime) {
  const Header h = Head("[E ProcessGroupNCCL.cpp:737] [Rank 3] Watchdog caught collective operation timeout");
  EXPECT_EQ(h.kind, HeaderKind::kC10);
  EXPECT_EQ(h.clock, Clock::kNone);
  EXPECT_EQ(h.severity, 'E');
  EXPECT_EQ(h.source, "ProcessGroupNCCL.cpp");
  EXPECT_EQ(h.message, "[Rank 3] Watchdog caught collective operation timeout");
}

TEST(Headers, GlogPythonOfTorch22AndThreadIdOf24) {
  Header h = Head("W0801 12:06:43.813000 18684 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 1 closing signal SIGTERM");
  EXPECT_EQ(h.kind, HeaderKind::kGlog);
  EXPECT_EQ(h.time, Yearless("08-01T12:06:43.813Z"));
  EXPECT_EQ(h.source, "torch/distributed/elastic/multiprocessing/api.py");
  h = Head("E0302 09:17:03.412000 139785762685568 site-packages/torch/distributed/elastic/agent/server/api.py:1] x");
  EXPECT_EQ(h.kind, HeaderKind::kGlog);
  EXPECT_EQ(h.message, "x");
}

TEST(Headers, PythonLoggingShapesOfTorch19To22) {
  Header h = Head("WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3309 closing signal SIGTERM");
  EXPECT_EQ(h.kind, HeaderKind::kPython);
  EXPECT_EQ(h.source, "torch.distributed.elastic.multiprocessing.api");
  EXPECT_EQ(h.message, "Sending process 3309 closing signal SIGTERM");
  h = Head("[INFO] 2021-09-13 22:17:26,651 run: Using nproc_per_node=8");
  EXPECT_EQ(h.kind, HeaderKind::kPython);
  EXPECT_EQ(h.time, At("2021-09-13T22:17:26.651Z"));
  EXPECT_EQ(h.message, "Using nproc_per_node=8");
  h = Head("[2024-03-18 17:38:50,208] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1)");
  EXPECT_EQ(h.kind, HeaderKind::kPython);
  EXPECT_EQ(h.severity, 'E');
  EXPECT_EQ(h.time, At("2024-03-18T17:38:50.208Z"));
  EXPECT_EQ(h.message, "failed (exitcode: 1)");
}

TEST(Headers, DeepSpeedRayAndBracketedIso) {
  Header h = Head("[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['python'] exits with return code = -9");
  EXPECT_EQ(h.kind, HeaderKind::kDeepSpeed);
  EXPECT_EQ(h.source, "launch.py");
  EXPECT_EQ(h.message, "['python'] exits with return code = -9");
  h = Head("[2021-09-14 10:11:21,947 I 2122527 2122927] actor_manager.cc:153: Actor died");
  EXPECT_EQ(h.kind, HeaderKind::kRay);
  EXPECT_EQ(h.message, "Actor died");
  h = Head("[2025-05-12 17:31:38] host:1:2 [0] transport/net_ib.cc:1 NCCL WARN x");
  EXPECT_EQ(h.kind, HeaderKind::kBracketTime);
  EXPECT_EQ(h.time, At("2025-05-12T17:31:38Z"));
  h = Head("[2020-12-14T09:43:55.500] [63532.0] error: *** x ***");
  EXPECT_EQ(h.time, At("2020-12-14T09:43:55.5Z"));
  EXPECT_EQ(h.message, "[63532.0] error: *** x ***");
}

TEST(Headers, KernelStampsOfEveryDmesgMode) {
  Header h = Head("[  518.050606] NVRM: Xid x");
  EXPECT_EQ(h.kind, HeaderKind::kKernel);
  EXPECT_EQ(h.clock, Clock::kNone);  // uptime: no wall time
  EXPECT_EQ(h.message, "NVRM: Xid x");
  h = Head("[Wed Sep 29 07:12:20 2021] NVRM: Xid x");
  EXPECT_EQ(h.time, At("2021-09-29T07:12:20Z"));
  EXPECT_EQ(h.message, "NVRM: Xid x");
  // a year past what a time holds is no stamp (a corrupt line's), not an overflow
  EXPECT_NE(Head("[Wed Sep 29 07:12:20 9999] NVRM: Xid x").kind, HeaderKind::kKernel);
  h = Head("[  +0.000316] NVRM: x");
  EXPECT_EQ(h.message, "NVRM: x");
  h = Head("[  518.050606] [ T1946] NVRM: y");
  EXPECT_EQ(h.message, "NVRM: y");
  h = Head("May 15 23:09:30 gpu-01 kernel: [ 518.05] Out of memory: Killed process 1 (python)");
  EXPECT_EQ(h.kind, HeaderKind::kSyslog);
  EXPECT_EQ(h.time, Yearless("05-15T23:09:30Z"));
  EXPECT_EQ(h.message, "Out of memory: Killed process 1 (python)");
  h = Head("kwi 15 07:56:59 gpu-01 kernel: NVRM: x");  // a localised month: no time, still read
  EXPECT_EQ(h.kind, HeaderKind::kSyslog);
  EXPECT_EQ(h.message, "NVRM: x");
}

TEST(Headers, IsoKernelStampWithZoneBecomesUtc) {
  const ParsedLog log = ParseLog(
      "2024-04-29T14:55:41,678628+02:00 gpu-01 kernel: Out of memory: Killed process 4242 (python3) total-vm:1kB\n",
      FileContext{});
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].time, At("2024-04-29T12:55:41.678628Z"));
  EXPECT_EQ(log.events[0].kind, Kind::kOomKill);
}

TEST(Headers, UntimedC10EventsBorrowTheTimeOfTheStampedLineBeforeThem) {
  const ParsedLog log = ParseLog(
      "[E ProcessGroupNCCL.cpp:737] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, "
      "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800163 milliseconds before timing out.\n"
      "[2023-01-05 10:00:00,000] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -6) "
      "local_rank: 3 (pid: 9) of binary: /usr/bin/python3\n"
      "[E ProcessGroupNCCL.cpp:737] [Rank 3] Some NCCL operations have failed or timed out.\n",
      FileContext{.name_rank = 3});
  ASSERT_EQ(log.events.size(), 3u);
  EXPECT_EQ(log.events[0].clock, Clock::kNone);  // nothing stamped before it
  EXPECT_FALSE(log.events[1].time_borrowed);
  EXPECT_TRUE(log.events[2].time_borrowed);
  EXPECT_EQ(log.events[2].time, At("2023-01-05T10:00:00Z"));
  EXPECT_EQ(log.untimed, 2);
}

// ---- Collection shapes (issue 19): prefixes a collector or a paste adds -------------------------

ParsedLog ParseText(const std::string& text, std::int32_t name_rank = -1) {
  return ParseLog(text, FileContext{.name_rank = name_rank, .prefixes = SniffPrefixes(text)});
}

TEST(Prefixes, CriStreamAndTagFollowTheStamp) {
  auto s = Strip("2024-06-01T09:00:21.972589808Z stdout F [rank3]:[E601 09:00:21.972 ProcessGroupNCCL.cpp:607] m");
  EXPECT_EQ(s.origin.time, At("2024-06-01T09:00:21.972589808Z"));
  EXPECT_EQ(s.origin.stream, 'o');
  EXPECT_FALSE(s.origin.partial);
  EXPECT_EQ(s.origin.rank, 3);
  EXPECT_TRUE(s.body.starts_with("[E601"));
  s = Strip("2024-06-01T11:00:21.972589808+02:00 stderr P Traceback (most recent");
  EXPECT_EQ(s.origin.time, At("2024-06-01T09:00:21.972589808Z"));
  EXPECT_EQ(s.origin.stream, 'e');
  EXPECT_TRUE(s.origin.partial);
  EXPECT_EQ(s.body, "Traceback (most recent");
}

TEST(Prefixes, CriPartialLinesAreJoinedUpToTheirFullLineAndCitedAtTheHead) {
  const ParsedLog log = ParseText(
      "2024-06-01T09:00:21.000000001Z stderr P RuntimeError: CUDA error: an illegal memory access was encou\n"
      "2024-06-01T09:00:21.000000002Z stdout F 2024-06-01 09:00:21.100 rank=3 step=7/20 loss=1.0\n"
      "2024-06-01T09:00:21.000000003Z stderr F ntered\n",
      3);
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].kind, Kind::kCudaError);
  EXPECT_EQ(log.events[0].line, 1u);
  EXPECT_EQ(log.events[0].offset, 0u);
  EXPECT_EQ(log.joined, 1);
}

TEST(Prefixes, JournalShortNamesTheHostAndTheProcessAndHasNoYear) {
  auto s = Strip("Nov 29 16:25:31 node-b torchrun[25750]: ERROR:torch.distributed.elastic.multiprocessing.api:failed");
  EXPECT_TRUE(s.origin.yearless);
  EXPECT_EQ(s.origin.yearless_time, Yearless("11-29T16:25:31Z"));
  EXPECT_EQ(s.origin.journal_host, "node-b");
  EXPECT_TRUE(s.origin.host.empty());  // the journal's machine, not the line's node (an srun relay's)
  EXPECT_EQ(s.origin.pid, 25750);
  EXPECT_EQ(s.body, "ERROR:torch.distributed.elastic.multiprocessing.api:failed");
  s = Strip("Nov  9 16:25:31.123456 sn01 python3[4127]: 2: Traceback (most recent call last):");
  EXPECT_EQ(s.origin.yearless_time, Yearless("11-09T16:25:31.123456Z"));
  EXPECT_EQ(s.origin.task, 2);
  EXPECT_EQ(s.body, "Traceback (most recent call last):");
}

TEST(Prefixes, JournalShortIsoIsACoarseStampThenHostAndUnit) {
  const auto s = Strip("2026-11-29T16:25:31+0000 node-b python3[25755]: [rank2]:RuntimeError: boom");
  EXPECT_TRUE(s.origin.timed);
  EXPECT_TRUE(s.origin.coarse);
  EXPECT_EQ(s.origin.time, At("2026-11-29T16:25:31Z"));
  EXPECT_EQ(s.origin.journal_host, "node-b");
  EXPECT_EQ(s.origin.rank, 2);
  EXPECT_EQ(s.body, "RuntimeError: boom");
}

TEST(Prefixes, JournalKernelLinesStayTheKernelHeaders) {
  auto s = Strip("May 15 23:09:30 gpu-01 kernel: NVRM: Xid (PCI:0000:52:00): 79, pid=1, GPU has fallen off the bus.");
  EXPECT_EQ(s.count, 0);
  s = Strip("2024-04-29T14:55:41,678628+02:00 gpu-01 kernel: Out of memory: Killed process 4242");
  EXPECT_EQ(s.body, "gpu-01 kernel: Out of memory: Killed process 4242");
}

TEST(Headers, ALineOwnFinerTimeWinsOverACoarseJournalStamp) {
  const ParsedLog log = ParseText(
      "2026-11-29T16:25:36+0000 node-b python3[1]: [E1129 16:25:36.412345678 ProcessGroupNCCL.cpp:607] [Rank 3] "
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=1800000) ran "
      "for 1800163 milliseconds before timing out.\n"
      "Nov 29 16:25:37 node-b python3[1]: RuntimeError: boom\n",
      3);
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[0].clock, Clock::kNoYear);
  EXPECT_EQ(log.events[0].time, Yearless("11-29T16:25:36.412345678Z"));
  EXPECT_EQ(log.events[1].clock, Clock::kNoYear);  // the journal's own time, not a borrowed one
  EXPECT_FALSE(log.events[1].time_borrowed);
  EXPECT_EQ(log.events[1].time, Yearless("11-29T16:25:37Z"));
}

TEST(Prefixes, SniffFindsAPasteQuotingButNotProgressLinesOrSrunPadding) {
  EXPECT_EQ(SniffPrefixes("> a\n> b\n>\n> > c\n> d\n").Quote(), "> ");
  EXPECT_EQ(SniffPrefixes("    a\n    b\n      c\n    d\n").Quote(), "    ");
  EXPECT_EQ(SniffPrefixes(" [2026-03-02 09:00:31] iteration 1/9\n [2026-03-02 09:00:32] iteration 2/9\n"
                          " [2026-03-02 09:00:33] iteration 3/9\n [2026-03-02 09:00:34] iteration 4/9\n").Quote(),
            "");
  EXPECT_EQ(SniffPrefixes("   5: a\n  42: b\n  17: c\n   3: d\n").Quote(), "");
}

// A paste of slurmctld's three lines of the job: `>` quoting opens no log line of its own, so a
// short file is peeled too; so is indentation of four columns on two lines, but not a
// traceback's shallower lines.
TEST(Prefixes, SniffPeelsTheQuotingOfAShortPasteButNotItsIndentation) {
  const std::string ctld = "> [2026-03-02T08:59:59.969] sched: Allocate JobId=4242001 NodeList=gpu-[0001-0256] #CPUs=28672 Partition=gpu\n"
                           "> [2026-03-02T09:10:17.215] _job_complete: JobId=4242001 WEXITSTATUS 1\n"
                           "> [2026-03-02T09:10:17.215] _job_complete: JobId=4242001 done\n";
  EXPECT_EQ(SniffPrefixes(ctld).Quote(), "> ");
  const ParsedLog log = ParseText(ctld);
  ASSERT_EQ(log.events.size(), 3u);
  EXPECT_EQ(log.events[0].kind, Kind::kJobAllocated);
  EXPECT_EQ(SniffPrefixes("  File \"train.py\", line 3, in <module>\n    main()\n").Quote(), "");
  EXPECT_EQ(SniffPrefixes("    [2026-03-02T09:10:17.215] _job_complete: JobId=4242001 WEXITSTATUS 1\n"
                          "    [2026-03-02T09:10:17.215] _job_complete: JobId=4242001 done\n").Quote(),
            "    ");
  EXPECT_EQ(SniffPrefixes("  a\n  b\n").Quote(), "");
  // A title line pasted alone, indented four columns: the whole file shares it, so it is a paste's.
  const std::string title = "    Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, "
                            "NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.\n";
  EXPECT_EQ(SniffPrefixes(title).Quote(), "    ");
  const ParsedLog one = ParseText(title);
  ASSERT_EQ(one.events.size(), 1u);
  EXPECT_EQ(one.events[0].kind, Kind::kWatchdogTimeout);
}

// `kubectl logs --timestamps` kept by a container runtime: the CRI stamp and stream, then kubectl's
// stamp, then torchrun's `[default<L>]:` and torch's `[rank<G>]:`. Both stamps are peeled (the
// first is the line's time), so the local rank is still read.
TEST(Prefixes, ASecondStampAfterTheCriStreamIsPeeledToo) {
  const ParsedLog log = ParseText(
      "2026-03-02T09:10:21.454297515Z stdout F 2026-03-02T09:10:21.454297515Z [default5]:[rank3005]:[E302 09:10:21.454297515 "
      "ProcessGroupNCCL.cpp:616] [PG ID 376 PG GUID 376(TENSOR_MODEL_PARALLEL_GROUP) Rank 5] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=25, OpType=ALLREDUCE, NumelIn=16777216, NumelOut=16777216, Timeout(ms)=600000) ran for 600018 "
      "milliseconds before timing out.\n");
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].rank, 3005);
  EXPECT_EQ(log.events[0].local_rank, 5);
  EXPECT_EQ(log.events[0].time, At("2026-03-02T09:10:21.454297515Z"));
}

TEST(Prefixes, SniffFindsRisingLineNumbersButNotSrunLabels) {
  EXPECT_EQ(SniffPrefixes("[80746] a\n[80747] b\n[80748] c\n[80749] d\n").numbered, '[');
  EXPECT_EQ(SniffPrefixes("12:a\n13:b\n14: c\n15:d\n").numbered, ':');
  EXPECT_EQ(SniffPrefixes("3: a\n1: b\n3: c\n0: d\n").numbered, 0);
  const auto s = Strip("[80747] [rank3]:RuntimeError: x", SniffPrefixes("[80746] a\n[80747] b\n[80748] c\n[80749] d\n"));
  EXPECT_EQ(s.origin.rank, 3);
  EXPECT_EQ(s.body, "RuntimeError: x");
}

// A log viewer numbers the lines a program wrote; a terminal then cuts the long ones: the numbers
// are on the lines that start, not on their pieces.
TEST(Prefixes, ANumberedFileHardWrappedByATerminalLearnsBothAndJoinsThePieces) {
  const std::string line = "[rank3]:[E1129 16:25:36.412345678 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective "
                           "operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) "
                           "ran for 1800163 milliseconds before timing out.";
  std::string text;
  for (int k = 0; k < 6; ++k) {
    text += std::string("[") + std::to_string(1000 + 2 * k) + "] short line\n";
    const std::string numbered = std::string("[") + std::to_string(1001 + 2 * k) + "] " + line;
    for (std::size_t at = 0; at < numbered.size(); at += 100) text += numbered.substr(at, 100) + "\n";
  }
  const PrefixPolicy policy = SniffPrefixes(text);
  EXPECT_EQ(policy.wrap_width, 100u);
  EXPECT_EQ(policy.numbered, '[');
  const ParsedLog log = ParseLog(text, FileContext{.prefixes = policy});
  ASSERT_EQ(log.events.size(), 6u);
  EXPECT_EQ(log.events[0].rank, 3);
  EXPECT_EQ(std::get<WatchdogTimeout>(log.events[0].detail).ran_for_ms, 1800163);
}

// `[80746] ` before a line of a file too short to learn a numbering from (a pid, a viewer's
// number) is peeled; NCCL's own `[<dev>] ` of a debug file without `host:pid:tid` is not.
TEST(Prefixes, ABareBracketNumberIsPeeledButNcclsDeviceIsNot) {
  auto s = Strip("[80746] [rank0]:[E321 10:00:00.000000000 ProcessGroupNCCL.cpp:607] m");
  EXPECT_EQ(s.origin.rank, 0);
  EXPECT_TRUE(s.body.starts_with("[E321"));
  EXPECT_EQ(Strip("[12] RuntimeError: x").body, "RuntimeError: x");
  EXPECT_EQ(Strip("[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed").body,
            "[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed");
  EXPECT_EQ(Strip("[0] NCCL INFO misc/socket.cc:80 -> 6").body, "[0] NCCL INFO misc/socket.cc:80 -> 6");
}

// A node's journal shipped through a container's log, or re-read by a second journal: the
// innermost journal names the machine that wrote the line.
TEST(Prefixes, AJournalLineBehindAnotherCollectorsStampIsPeeledToo) {
  auto s = Strip("2026-03-01T10:00:01.123456789Z stderr F May 28 16:05:50 192-168-250-5 kubelet[2269385]: I0528 x");
  EXPECT_TRUE(s.origin.timed);
  EXPECT_EQ(s.origin.time, At("2026-03-01T10:00:01.123456789Z"));
  EXPECT_EQ(s.origin.journal_host, "192-168-250-5");
  EXPECT_EQ(s.origin.pid, 2269385);
  EXPECT_EQ(s.body, "I0528 x");
  s = Strip("Mar  1 10:00:01 gpu-node-07 python3[4242]: May 28 16:05:50 192-168-250-5 kubelet[2269385]: I0528 x");
  EXPECT_EQ(s.origin.journal_host, "192-168-250-5");
  EXPECT_EQ(s.body, "I0528 x");
}

// A unit without `[pid]` (`host sshd: `) reads like any `Word word: `: one line does not teach it.
TEST(Prefixes, OneLineDoesNotTeachAJournalUnitWithoutPid) {
  const std::string line = "2026-03-01T10:00:00.123456789Z CUDA error: uncorrectable ECC error encountered\n";
  EXPECT_FALSE(SniffPrefixes(line).journal);
  const ParsedLog log = ParseLog(line, FileContext{.prefixes = SniffPrefixes(line)});
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].kind, Kind::kCudaError);
  EXPECT_TRUE(SniffPrefixes("2026-03-01T10:00:00Z n1 sshd: a\n2026-03-01T10:00:01Z n1 sshd: b\n"
                            "2026-03-01T10:00:02Z n1 sshd: c\n2026-03-01T10:00:03Z n1 sshd: d\n")
                  .journal);
}

TEST(Prefixes, AnsiColourAnywhereInALineIsIgnored) {
  const ParsedLog log = ParseText("\x1b[1;31mRuntime\x1b[0mError\x1b[K: CUDA error: an illegal memory access was encountered\n", 3);
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].kind, Kind::kCudaError);
  EXPECT_EQ(log.events[0].length, 80u);  // the line as it is in the file
}

TEST(Prefixes, HardWrappedPasteIsJoinedAtItsWidthAndCitedAtTheFirstPiece) {
  std::string text;
  const std::string line = "[E1129 16:25:36.412345678 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation "
                           "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for "
                           "1800163 milliseconds before timing out.";
  for (int k = 0; k < 3; ++k) {
    text += "short line " + std::to_string(k) + "\n";
    for (std::size_t at = 0; at < line.size(); at += 80) text += line.substr(at, 80) + "\n";
  }
  const PrefixPolicy policy = SniffPrefixes(text);
  EXPECT_EQ(policy.wrap_width, 80u);
  const ParsedLog log = ParseLog(text, FileContext{.name_rank = 3, .prefixes = policy});
  ASSERT_EQ(log.events.size(), 3u);
  EXPECT_EQ(log.events[0].kind, Kind::kWatchdogTimeout);
  EXPECT_EQ(log.events[0].line, 2u);
  EXPECT_EQ(log.events[1].line, 6u);
  EXPECT_EQ(std::get<WatchdogTimeout>(log.events[0].detail).ran_for_ms, 1800163);
}

// A long paste whose first MiB holds no line long enough to wrap (a worker table, start-up lines):
// the width is found in its last MiB, and the failure's wrapped line there is joined.
TEST(Prefixes, HardWrapFirstSeenPastTheFirstMibIsFoundInTheTail) {
  std::string text;
  for (int k = 0; text.size() < (3u << 20); ++k) text += "(RayTrainWorker pid=" + std::to_string(1000 + k) + ") iteration step\n";
  const std::string line = "[E1129 16:25:36.412345678 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation "
                           "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for "
                           "1800163 milliseconds before timing out.";
  for (int k = 0; k < 3; ++k) {
    text += "short line\n";
    for (std::size_t at = 0; at < line.size(); at += 100) text += line.substr(at, 100) + "\n";
  }
  const PrefixPolicy policy = SniffPrefixes(text);
  EXPECT_EQ(policy.wrap_width, 100u);
  const ParsedLog log = ParseLog(text, FileContext{.name_rank = 3, .prefixes = policy});
  std::size_t timeouts = 0;
  for (const Event& e : log.events) {
    if (e.kind != Kind::kWatchdogTimeout) continue;
    ++timeouts;
    EXPECT_EQ(std::get<WatchdogTimeout>(e.detail).ran_for_ms, 1800163);
  }
  EXPECT_EQ(timeouts, 3u);
}

// A terminal copy of an NCCL_DEBUG=INFO log at 113 columns: each communicator's 16 `Channel NN/0`
// lines are one length a little below the width (a block, not sixteen lines of chance), and the
// IB WARN cut in three is found whole, with its status and its peer.
TEST(Prefixes, HardWrapIsFoundBesideBlocksOfLinesOfOneLength) {
  std::string text;
  const std::string head = "> gpu-0120:2005456:2005456 [4] NCCL INFO ";
  const std::string warn =
      "gpu-0120:2005456:2005467 [4] transport/net_ib.cc:1909 NCCL WARN NET/IB : Got completion "
      "from "
      "peer 10.64.0.119<48136> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid "
      "::ffff:10.64.0.120 remoteGids::ffff:10.64.0.119";
  const auto wrapped = [&](const std::string& line) {
    std::string out;
    for (std::size_t at = 0; at < line.size(); at += 111) out += "> " + line.substr(at, 111) + "\n";
    return out;
  };
  for (int comm = 0; comm < 4; ++comm) {
    text += wrapped(
        "gpu-0120:2005456:2005456 [4] NCCL INFO ncclCommInitRank comm 0x55e47e45a910 rank 23 "
        "nranks 32 "
        "cudaDev 4 nvmlDev 4 busId 9a000 commId 0x6770526dcc2b2571 - Init START");
    for (int c = 0; c < 16; ++c) {
      text += head + "Channel " + (c < 10 ? "0" : "") + std::to_string(c) +
              "/0 : 23[4] -> 24[5] via P2P/CUMEM/read padding padding pad\n";  // 97 columns
    }
  }
  text += wrapped(warn);
  text += wrapped(warn);
  const PrefixPolicy policy = SniffPrefixes(text);
  EXPECT_EQ(policy.wrap_width, 113u);
  const ParsedLog log = ParseLog(text, FileContext{.name_rank = 956, .prefixes = policy});
  ASSERT_GE(log.events.size(), 2u);
  const Event& e = log.events.back();
  ASSERT_TRUE(std::holds_alternative<NcclWarn>(e.detail));
  EXPECT_EQ(std::get<NcclWarn>(e.detail).status, 12);
  EXPECT_EQ(log.strings.Get(std::get<NcclWarn>(e.detail).peer), "10.64.0.119<48136>");
}

// DeepSpeed's timer line cut just before a bar: the tail `> | bwd_inner: ...` is no table row (a
// row ends with the bar it starts with), so the width is found and the pieces joined; an
// nvidia-smi row after a line of that width starts its own line.
TEST(Prefixes, HardWrapBeforeABarIsFoundAndJoinedButATableRowIsNot) {
  std::string text;
  for (int k = 10; k < 22; ++k) {
    const std::string line = "> [2026-03-02 09:00:" + std::to_string(k) +
                             ",706] [INFO] [logging.py:96:log_dist] [Rank 729] time (ms) | fwd: 384.39 | bwd: 1871.72 "
                             "| bwd_inner: 807.42 | bwd_allreduce: 1064.30 | step: 9.17";
    text += line.substr(0, 110) + "\n> " + line.substr(110) + "\n";
  }
  const std::string row = "> | 0  NVIDIA H100 80GB HBM3          On  | 00000000:18:00.0 Off |";
  text += "> [2026-03-02 09:00:23,706] [INFO] [logging.py:96:log_dist] nvidia-smi of rank 729 follows " +
          std::string(110 - 91, '-') + "\n" + row + "\n";
  const PrefixPolicy policy = SniffPrefixes(text);
  EXPECT_EQ(policy.wrap_width, 110u);
  const ParsedLog log = ParseLog(text, FileContext{.name_rank = 729, .prefixes = policy});
  EXPECT_EQ(log.joined, 12);
  ASSERT_EQ(log.events.size(), 13u);  // 12 timer lines and the GPU row, read on its own line
  EXPECT_EQ(log.events[0].line, 1u);
  EXPECT_NEAR(std::get<StepTimers>(log.events[0].detail).wait_ms, 1064.30, 0.01);
  EXPECT_EQ(log.events[12].kind, Kind::kGpuSlot);
  EXPECT_EQ(log.events[12].line, 26u);
  EXPECT_FALSE(StartsOwnLine("> | bwd_inner: 807.42 | bwd_allreduce: 1064.30 | step: 9.17", policy));
  EXPECT_TRUE(StartsOwnLine(row, policy));
}

// pdsh's `<host>: ` before every remote line, under a launcher line so long that its wrapped
// pieces fill the first lines of the copy: the prefixes are sniffed on the lines that start
// after a line shorter than the wrap width, not on the pieces.
TEST(Prefixes, HostPrefixesAreFoundPastTheWrappedPiecesOfALongLine) {
  std::string runner = "> [2026-03-02 08:59:59,853] [INFO] [multinode_runner.py:81:get_cmd] Running on the following workers: ";
  for (int n = 1; n <= 128; ++n) runner += "gpu-" + std::to_string(1000 + n).substr(1) + ",";
  std::string text;
  for (int round = 0; round < 2; ++round) {
    text += runner.substr(0, 143) + "\n";
    for (std::size_t at = 143; at < runner.size(); at += 141) text += "> " + runner.substr(at, 141) + "\n";
  }
  for (int n = 1; n <= 40; ++n) {
    text += "> gpu-" + std::to_string(1000 + n).substr(1) +
            ": [2026-03-02 09:00:00,433] [INFO] [launch.py:151:main] nnodes=128, num_local_procs=8, node_rank=" +
            std::to_string(n - 1) + "\n";
  }
  const PrefixPolicy policy = SniffPrefixes(text);
  EXPECT_EQ(policy.wrap_width, 143u);
  EXPECT_TRUE(policy.hosts);
  const ParsedLog log = ParseLog(text, FileContext{.prefixes = policy});
  ASSERT_FALSE(log.events.empty());
  EXPECT_EQ(log.events.back().kind, Kind::kLauncherLayout);
}

// A coloured terminal copy of pdsh's console: a third of the host-prefixed lines open with a
// colour code (`\x1b[2mgpu-0001: `). The policy is sniffed past the codes, as the lines are read.
TEST(Prefixes, HostPrefixesAreFoundPastColourCodes) {
  std::string text;
  for (int n = 1; n <= 40; ++n) {
    text += std::string(n % 3 == 0 ? "\x1b[2m" : "") + "gpu-" + std::to_string(1000 + n).substr(1) +
            ": [2026-03-02 09:00:00,433] [INFO] [launch.py:151:main] nnodes=128, "
            "num_local_procs=8, node_rank=" +
            std::to_string(n - 1) + (n % 3 == 0 ? "\x1b[0m" : "") + "\n";
  }
  const PrefixPolicy policy = SniffPrefixes(text);
  EXPECT_TRUE(policy.hosts);
  const ParsedLog log = ParseLog(text, FileContext{.prefixes = policy});
  ASSERT_FALSE(log.events.empty());
  EXPECT_EQ(log.events.back().kind, Kind::kLauncherLayout);
  EXPECT_EQ(log.strings.Get(log.events.back().host), "gpu-040");
}

// A terminal hard-wraps a watchdog line whose last piece fills the width exactly: the next line,
// opening with torchrun's `--tee` tag (`[default3]:`), starts a line of its own, not a piece.
TEST(Prefixes, TorchrunTagStartsALineAfterAPieceThatFillsTheWidth) {
  PrefixPolicy policy;
  policy.wrap_width = 141;
  EXPECT_TRUE(
      StartsOwnLine("[default3]:[E ProcessGroupNCCL.cpp:475] [Rank 104] Watchdog caught", policy));
  EXPECT_TRUE(StartsOwnLine("\x1b[1;31m[trainer12]:  what():  [Rank 104] NCCL watchdog", policy));
  EXPECT_FALSE(StartsOwnLine("[gpu-0001]:29500 (errno: 98 - Address already in use).", policy));
}

// A pasted mpirun console: the runner's command wrapped once, then one short
// `--report-bindings` line per rank (4,096), and only then the ranks' wrapped lines. The width is
// found past the bindings, and rank 0's DistStoreError is read whole, with its join counts.
TEST(Prefixes, HardWrapIsFoundPastThousandsOfShortBindingLines) {
  const std::string cmd = "    [2026-03-02 09:00:00,054] [INFO] [runner.py:568:main] cmd = mpirun -n 4096 -hostfile hostfile --mca btl "
                          "^openib --mca btl_tcp_if_include eth0 --tag-output --report-bindings --bind-to none";
  std::string text = cmd.substr(0, 106) + "\n    " + cmd.substr(106) + "\n";
  for (int r = 0; r < 4096; ++r) {
    text += "    [gpu-" + std::to_string(10001 + r / 8).substr(1) + ":99967] MCW rank " + std::to_string(r) +
            " is not bound (or bound to all available processors)\n";
  }
  for (int r = 0; r < 8; ++r) {
    const std::string line = "    [1," + std::to_string(100 + r) +
                             "]<stdout>:[2026-03-02 09:00:06,715] [INFO] [comm.py:652:init_distributed] Not using the DeepSpeed "
                             "or dist launchers, attempting to detect MPI environment...";
    text += line.substr(0, 106) + "\n    " + line.substr(106) + "\n";
  }
  text += "    \x1b[1;31m[1,0]<stderr>:[rank0]: torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clien\n"
          "    ts. 4088/4096 clients joined.\x1b[0m\n";
  const PrefixPolicy policy = SniffPrefixes(text);
  EXPECT_EQ(policy.wrap_width, 106u);
  const ParsedLog log = ParseLog(text, FileContext{.prefixes = policy});
  bool whole = false;
  for (const Event& e : log.events) {
    const auto* p = std::get_if<PythonError>(&e.detail);
    if (p != nullptr && log.strings.Get(p->message).ends_with("4088/4096 clients joined.")) whole = true;
  }
  EXPECT_TRUE(whole);
}

// A pasted srun console, every physical line indented 4 spaces, srun's task labels right-aligned
// (`     502: `, `    2864: `): the quote sniff cannot tell the indent from the labels' padding,
// so a wrapped piece's indent is peeled as the head line's: DeepSpeed's timer line cut inside
// `backward_allreduce` is read whole, its allreduce time kept.
TEST(Prefixes, AWrappedPiecesIndentSharedWithItsHeadIsThePastes) {
  std::string text;
  for (int task : {502, 2315, 854, 3805, 914, 2864}) {
    const std::string label = std::string(task < 1000 ? "     " : "    ") + std::to_string(task) + ": ";
    text += label + "[W socket.cpp:697] [c10d] The client socket cannot be initialized to connect to [gpu-0001]:29500 (errno: 97 - "
                    "Address family not supported by protocol).\n";
    const std::string warning = label + "/usr/local/lib/python3.10/dist-packages/torch/_utils.py:831: UserWarning: TypedStorage is "
                                        "deprecated. It will be removed in the future and UntypedStorage will be the only storage class. "
                                        "This should only matter to you if you are using storages directly.";
    text += warning.substr(0, 182) + "\n    " + warning.substr(182) + "\n";
    text += label + "  return self.fget.__get__(instance, owner)()\n";
  }
  const std::string timer = "    2864: [2026-03-02 09:00:09,386] [INFO] [logging.py:96:log_dist] [Rank 2864] rank=2864 time (ms) | forward: "
                            "508.24 | backward: 1129.89 | backward_inner: 994.18 | backward_allreduce: 135.72 | step: 11.35";
  text += timer.substr(0, 182) + "\n    " + timer.substr(182) + "\n";
  const PrefixPolicy policy = SniffPrefixes(text);
  ASSERT_EQ(policy.wrap_width, 182u);
  const ParsedLog log = ParseLog(text, FileContext{.prefixes = policy});
  bool read = false;
  for (const Event& e : log.events) {
    if (const auto* t = std::get_if<StepTimers>(&e.detail)) {
      EXPECT_NEAR(t->wait_ms, 135.72, 0.01);
      read = true;
    }
  }
  EXPECT_TRUE(read);
}

TEST(Prefixes, ProgressLinesOfOneLengthAreNoWrapWidth) {
  std::string text;
  for (int k = 10; k < 40; ++k) {
    text += " [2026-03-02 09:00:" + std::to_string(k) + "] iteration       " + std::to_string(k) +
            "/    100 | consumed samples: 1024 | elapsed time per iteration (ms): 1000.0\n";
  }
  EXPECT_EQ(SniffPrefixes(text).wrap_width, 0u);
}

// Ray Train's worker table, one row per worker (`world_rank=`, `local_rank=`, `node_rank=`), is
// 160-170 columns wide, its longest rows the most numerous: a terminal's wrap by its shape, but
// each row opens with the trainer's tag, which no cut makes by chance. Read as wrapped, the rows
// were joined in pairs and half the workers lost their rank (the 8192-worker Ray hang then
// INCONCLUSIVE between two ranks). A wrapped Ray log's pieces are still joined.
TEST(Prefixes, ARayWorkerTableIsNoWrapButAWrappedRayLogIs) {
  std::string table = "(TorchTrainer pid=428948) Started distributed worker processes: \n";
  for (int rank = 0; rank < 4096; ++rank) {
    const int node = rank / 8;
    table += "(TorchTrainer pid=428948) - (node_id=" +
             std::string(56, static_cast<char>('a' + node % 6)) + ", ip=10.64." +
             std::to_string(node / 250) + "." + std::to_string(2 + node % 250) +
             ", pid=" + std::to_string(1000000 + rank * 7) +
             ") world_rank=" + std::to_string(rank) + ", local_rank=" + std::to_string(rank % 8) +
             ", node_rank=" + std::to_string(node) + "\n";
  }
  const PrefixPolicy policy = SniffPrefixes(table);
  EXPECT_EQ(policy.wrap_width, 0u);
  EXPECT_EQ(ParseLog(table, FileContext{.prefixes = policy}).joined, 0);

  std::string wrapped;
  for (int rank = 0; rank < 8; ++rank) {
    const std::string line =
        "(RayTrainWorker pid=" + std::to_string(646430 + rank) +
        ", ip=10.64.0.185) [E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed "
        "out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run "
        "on corrupted/incomplete data.";
    for (std::size_t at = 0; at < line.size(); at += 120) wrapped += line.substr(at, 120) + "\n";
  }
  EXPECT_EQ(SniffPrefixes(wrapped).wrap_width, 120u);
}

// mpirun's `--report-bindings` prints a line per rank, `[<host>:<pid>] MCW rank R bound to ...`
// with a socket's map, 160-170 columns on 24-core sockets, the longest the most numerous: read
// as a wrap, 1,548 of 4,096 lines were joined to the next and their ranks' hosts lost.
TEST(Prefixes, AnMpirunBindingReportIsNoWrap) {
  std::string text;
  for (int rank = 0; rank < 4096; ++rank) {
    const int local = rank % 8, core = local * 3 % 24;
    text += "[gpu-" + std::to_string(1001 + rank / 8) + ":" + std::to_string(1000000 + rank * 3) +
            "] MCW rank " + std::to_string(rank) + " bound to socket " + std::to_string(local / 4) +
            "[core " + std::to_string(core) + "[hwt 0]]: ";
    for (int socket = 0; socket < 2; ++socket) {
      std::string map(47, '/');
      for (int c = 0; c < 24; ++c) map[2 * c] = socket == local / 4 && c == core ? 'B' : '.';
      text += "[" + map + "]";
    }
    text += "\n";
  }
  const PrefixPolicy policy = SniffPrefixes(text);
  EXPECT_EQ(policy.wrap_width, 0u);
  const ParsedLog log = ParseLog(text, FileContext{.prefixes = policy});
  EXPECT_EQ(log.joined, 0);
  EXPECT_EQ(log.events.size(), 4096u);
}

// A rank's NCCL_DEBUG=INFO output, its `Channel` lines 100-110 columns wide by the ranks they name,
// the longest the most numerous: read as a wrap, its lines were joined in pairs, and the NCCL
// WARN after a line of that width was taken for a piece of it (no event). The same behind pdsh's
// host, Open MPI's tag and a torchrun tag.
TEST(Prefixes, NcclChatterIsNoWrap) {
  for (const std::string_view prefix : {"", "gpu-0001: ", "[1,6]<stdout>:", "sn01: [default6]:"}) {
    std::string text;
    std::uint32_t state = 1;
    for (int i = 0; i < 12000; ++i) {
      state = state * 1664525u + 1013904223u;
      const std::uint32_t from = state >> 8 & 0x1fff, to = (state >> 4) % 9000 + 1000;
      text += std::string(prefix) + "gpu-0001:2907157:2907157 [6] NCCL INFO Channel " +
              std::to_string(10 + i % 22) + "/0 : " + std::to_string(from) + "[6] -> " +
              std::to_string(to) + "[6] [send] via NET/IB/6/GDRDMA/Shared\n";
    }
    text += std::string(prefix) +
            "gpu-0001:2907157:2907157 [6] NCCL WARN NET/IB : Got completion from peer "
            "10.0.0.2<43422> with error "
            "12, opcode 0, len 0, vendor err 129\n";
    const PrefixPolicy policy = SniffPrefixes(text);
    EXPECT_EQ(policy.wrap_width, 0u) << prefix;
    const ParsedLog log = ParseLog(text, FileContext{.prefixes = policy});
    EXPECT_EQ(log.joined, 0) << prefix;
    ASSERT_EQ(log.events.size(), 1u) << prefix;
    EXPECT_EQ(log.events[0].line, 12001u) << prefix;
  }
}

// Each opener a large job's one-line-per-rank output begins with starts a line on its own, after
// any line (the tables above would be read row by row by OpenAlike alone: these are the openers
// a line of another shape is followed by in a real log), and what a cut makes by chance does not.
TEST(Prefixes, WhatOpensALineOfItsOwn) {
  const PrefixPolicy policy;
  const std::string before = "Some earlier line of another shape entirely, wrapped or not";
  for (const std::string_view line :
       {"(RayTrainWorker pid=1346330, ip=10.64.0.123) [E ProcessGroupNCCL.cpp:475] [Rank 0] "
        "Watchdog caught",
        "(raylet) [2026-03-02 09:00:21,195 E 1346330] worker_pool.cc:550: Some workers of the "
        "worker process",
        "[gpu-0001:1000003] MCW rank 1 bound to socket 0[core 3[hwt 0]]: [./././B/./.]",
        "gpu-0001:2907157:2907157 [6] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<43422> "
        "with error 12",
        "gpu-0001:2907157:2907157 [6] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion "
        "from peer",
        "[1,6]<stdout>:plain output of rank 6", "gpu-0001: [1,6]<stderr>:plain output of rank 6",
        "gpu-0001: gpu-0001:2907157:2907157 [6] NCCL INFO Channel 10/0 : 3[6] -> 4[6] via P2P"}) {
    EXPECT_TRUE(StartsOwnLine(line, policy, before)) << line;
  }
  for (const std::string_view piece :
       {"[gpu-0001]:29500 (errno: 98 - Address already in use).", "gpu-0001: task 3: Killed",
        "pid=1346330, ip=10.64.0.123) plain", "2907157:2907157 [6] NCCL INFO Channel 10/0",
        "[1,6] plain output"}) {
    EXPECT_FALSE(StartsOwnLine(piece, policy, before)) << piece;
  }
  // Alike: the same 8 bytes but for digits, not indented.
  EXPECT_TRUE(StartsOwnLine("worker 17 of 8192 ready", policy, "worker 9999 of 8192 ready"));
  EXPECT_FALSE(StartsOwnLine("worker 17 of 8192 ready", policy, "workers: 9999 of 8192 ready"));
  EXPECT_FALSE(
      StartsOwnLine("        indented alike", policy, "        indented alike, the line before"));
}

// Lines one program prints per rank in a shape no rule knows, their widths apart by a digit or
// two and the longest the most numerous, open alike (the same first bytes but for digits): a
// terminal's piece opens as its head only by chance, so they are no wrap, whatever the program.
TEST(Prefixes, LinesThatOpenAlikeAreNoWrap) {
  std::string text;
  std::uint32_t state = 7;
  for (int i = 0; i < 8192; ++i) {
    state = state * 1664525u + 1013904223u;
    const std::uint32_t rank = state >> 19;  // in the order they came up
    text += "worker " + std::to_string(rank) + " of 8192 ready: host gpu-" +
            std::to_string(1001 + rank / 8) + ", device cuda:" + std::to_string(rank % 8) +
            ", pid " + std::to_string(100000 + rank * 37) + ", store 10.64.0.2:29500 reachable\n";
  }
  const PrefixPolicy policy = SniffPrefixes(text);
  EXPECT_EQ(policy.wrap_width, 0u);
  EXPECT_EQ(ParseLog(text, FileContext{.prefixes = policy}).joined, 0);
}

TEST(Prefixes, HighValueMessagesAreFoundBehindAnUnknownPrefix) {
  const ParsedLog log = ParseText(
      "2024-06-01 09:00:21,123 - trainer - ERROR - RuntimeError: CUDA error: an illegal memory access was encountered\n"
      "trainer-1  | [E1129 16:25:36.412345678 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800163 milliseconds before timing out.\n"
      "[2024-06-01 09:00:22] agent | ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 3 "
      "(pid: 25758) of binary: /usr/bin/python3\n"
      "x | node-b:25758:25758 [3] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<43422> "
      "with error 12, opcode 0, len 0, vendor err 129\n"
      "2024-06-01 09:00:23,000 ERROR Traceback (most recent call last):\n"
      "  File \"train.py\", line 3, in <module>\n"
      "ValueError: bad\n",
      3);
  std::vector<Kind> kinds;
  for (const Event& e : log.events) kinds.push_back(e.kind);
  ASSERT_EQ(kinds.size(), 5u);
  EXPECT_EQ(kinds[0], Kind::kCudaError);
  EXPECT_EQ(kinds[1], Kind::kWatchdogTimeout);
  EXPECT_EQ(kinds[2], Kind::kWorkerFailed);
  EXPECT_EQ(log.events[4].line, 7u);
  EXPECT_TRUE(log.agent);
}

}  // namespace
}  // namespace denpex::engine
