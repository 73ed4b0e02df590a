// `denpex watch` on real jobs (issue 25): a DDP job (corpora/capture/train.py, gloo on CPU,
// world size 4, a 20 s collective timeout, per-step lines flushed) under torchrun on one node and
// under sbatch + srun on the Slurm of scripts/services.sh, with a fault injected in one rank
// (SIGKILL, an exception, a kernel OOM kill, a hang, SIGSTOP, under both launchers). The
// watcher follows the incident directory from before the job starts until the job ends
// (--until-exit, --slurm-job); the test reads the console itself every 50 ms to know when the
// first line that shows the fault reached the disk. Asserted: the right rank is named within
// 5 s of that line; no provisional answer ever names anyone else; the final diagnosis names the
// rank. A silent rank (a hang, SIGSTOP) names no one until its peers' timeouts say who (step
// lines of ranks in lockstep stop together): its evidence is the first timeout, or under torchrun
// with a stopped worker the agent's SIGKILL of it (the first line that ties the timeouts' local
// tags to global ranks).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "denpex/common/time.h"
#include "support/launchers.h"
#include "support/temp_dir.h"

namespace denpex {
namespace {
namespace fs = std::filesystem;
using namespace denpex::testing::launchers;  // NOLINT(google-build-using-namespace)

constexpr auto kJobLimit = std::chrono::seconds(300);  // a slow, busy CI machine included

TimeNs WallNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Reads `file` every 50 ms until `needle` is in it; the wall time it first was.
class FirstSeen {
 public:
  FirstSeen(fs::path file, std::string needle)
      : thread_([this, file = std::move(file), needle = std::move(needle)] {
          while (!stop_) {
            if (ReadAll(file).find(needle) != std::string::npos) {
              at_ = WallNow();
              return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
          }
        }) {}
  ~FirstSeen() {
    stop_ = true;
    thread_.join();
  }
  std::optional<TimeNs> at() const {
    return at_ > 0 ? std::optional<TimeNs>(at_.load()) : std::nullopt;
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<TimeNs> at_{0};
  std::thread thread_;
};

// One line of the watcher's stdout: `<stamp> provisional|final VERDICT_... [rank R] ...: reason`.
struct Said {
  TimeNs at = 0;
  bool final = false;
  bool diagnosed = false;
  int rank = -1;
  std::string line;
};

std::vector<Said> ReadSaid(const fs::path& out) {
  std::vector<Said> said;
  std::istringstream in(ReadAll(out));
  for (std::string l; std::getline(in, l);) {
    const std::size_t sp = l.find(' ');
    if (sp == std::string::npos) continue;
    Said s{.line = l};
    const std::string rest = l.substr(sp + 1);
    if (rest.rfind("provisional ", 0) != 0 && rest.rfind("final ", 0) != 0) continue;
    s.at = ParseRfc3339(l.substr(0, sp)).value_or(0);
    s.final = rest.rfind("final ", 0) == 0;
    s.diagnosed = rest.find(" VERDICT_DIAGNOSED") != std::string::npos;
    if (const std::size_t r = rest.find(" rank "); r != std::string::npos && r < rest.find(':'))
      s.rank = std::stoi(rest.substr(r + 6));
    said.push_back(s);
  }
  return said;
}

// train.py and its flags (torchrun runs it with its own Python; srun needs kPython before it).
std::vector<std::string> Train(const fs::path& scratch, const std::string& fault, int rank,
                               int step) {
  return {(fs::path(DENPEX_SOURCE_DIR) / "corpora/capture/train.py").string(),
          "--steps",
          "40",
          "--ckpt-every",
          "100",
          "--ckpt-dir",
          (scratch / "checkpoints").string(),
          "--compute-s",
          "0.2",
          "--timeout-s",
          "20",
          "--fault",
          fault,
          "--fault-rank",
          std::to_string(rank),
          "--fault-step",
          std::to_string(step)};
}

struct Outcome {
  std::string unavailable;
  std::vector<Said> said;
  std::optional<TimeNs> evidence;  // the evidence line reached the disk
  std::string console, watch_err;
  std::string kernel;  // the incident's `dmesg` file, when the job had one
};

// What an OOM test adds to a job: the memory cgroup its faulting rank moves into, and a kernel
// log collector beside it, as an operator's node agent would keep one: `dmesg --follow-new` into
// the incident's `dmesg` file, from before the job starts. The kernel's `Killed process` line
// reaching that file is evidence too (whichever comes first).
struct Extras {
  const MemoryCgroup* cgroup = nullptr;
  bool kernel_log = false;
};
constexpr const char* kKernelKill = "out of memory: Killed process";

std::optional<TimeNs> Earliest(std::optional<TimeNs> a, std::optional<TimeNs> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// The kernel log collector, when asked for (else nothing runs).
std::unique_ptr<Job> KernelLogCollector(const Extras& x, const fs::path& incident,
                                        const fs::path& scratch) {
  if (!x.kernel_log) return nullptr;
  return std::make_unique<Job>(std::vector<std::string>{"/usr/bin/dmesg", "--follow-new"},
                               CleanEnv(), incident / "dmesg", scratch);
}

// The watcher on `incident` from before the job starts; the job's console (a file in
// `incident`) watched for `evidence`.
Outcome WatchTorchrun(const denpex::testing::TempDir& scratch, const std::string& fault, int rank,
                      int step, const std::string& evidence, const Extras& x = {}) {
  Outcome o;
  if (!HaveTorch(scratch.path())) {
    o.unavailable = "PyTorch is not installed (/usr/bin/python3 -c 'import torch')";
    return o;
  }
  const fs::path incident = scratch.path() / "incident";
  fs::create_directories(incident);
  std::vector<std::string> argv = {
      kPython, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", "4",
      "--master_addr", "127.0.0.1", "--master_port", std::to_string(FreePort()),
      // `[default<L>]:` tags on the workers' stderr (torch 1.13 under Python 3.11
      // starts only with a non-zero --redirects, and takes 3 for none)
      "--redirects", "2", "--tee", "2", "--monitor_interval", "0.5", "--log_dir",
      (scratch.path() / "torchelastic").string()};
  for (const std::string& a : Train(scratch.path(), fault, rank, step)) argv.push_back(a);
  const fs::path console = incident / "train.log";
  FirstSeen seen(console, evidence);
  FirstSeen seen_kernel(incident / "dmesg", kKernelKill);
  const std::unique_ptr<Job> kernel_log = KernelLogCollector(x, incident, scratch.path());
  std::map<std::string, std::string> env = {{"PYTHONUNBUFFERED", "1"}};
  if (x.cgroup) env["DENPEX_OOM_CGROUP"] = x.cgroup->path().string();
  Job job(argv, CleanEnv(env), console, scratch.path());
  Job watch({DENPEX_BINARY, "watch", incident.string(), "--json",
             (scratch.path() / "diagnosis.json").string(), "--until-exit",
             std::to_string(job.pid()), "--interval", "0.25", "--timeout", "150"},
            CleanEnv(), scratch.path() / "watch.out", scratch.path());
  const auto deadline = std::chrono::steady_clock::now() + kJobLimit;
  EXPECT_TRUE(job.WaitUntil(deadline)) << "torchrun did not end";
  EXPECT_TRUE(watch.WaitUntil(deadline + std::chrono::seconds(30)))
      << "the watcher did not end after the job";
  o.said = ReadSaid(scratch.path() / "watch.out");
  o.evidence = Earliest(seen.at(), seen_kernel.at());
  o.console = ReadAll(console);
  o.watch_err = ReadAll(scratch.path() / "watch.out");
  o.kernel = ReadAll(incident / "dmesg");
  return o;
}

// Every commit names `rank`; the first (provisional, or the final one when the job ended at once)
// comes within 5 s of the evidence; the final names `rank`.
void ExpectNamedSoonAndNeverWrong(const Outcome& o, int rank) {
  ASSERT_FALSE(o.said.empty()) << o.watch_err;
  std::optional<TimeNs> named;
  for (const Said& s : o.said) {
    if (!s.diagnosed || s.rank < 0) continue;
    EXPECT_EQ(s.rank, rank) << "a wrong commit: " << s.line << "\n" << o.watch_err;
    if (s.rank == rank && !named)
      named = s.at;  // a job that ends at once is named by the final answer
  }
  ASSERT_TRUE(o.said.back().final) << o.watch_err;
  EXPECT_TRUE(o.said.back().diagnosed && o.said.back().rank == rank) << o.said.back().line;
  ASSERT_TRUE(o.evidence.has_value()) << "the evidence never reached the console:\n" << o.console;
  ASSERT_TRUE(named.has_value()) << "no answer named rank " << rank << ":\n" << o.watch_err;
  const double latency = static_cast<double>(*named - *o.evidence) / 1e9;
  std::printf("named rank %d %.2f s after its evidence reached the disk\n", rank, latency);
  EXPECT_LE(latency, 5.0) << o.watch_err;
  std::printf("%s", o.watch_err.c_str());  // what was said, and when, for docs/watch.md
}

// `fault` injected in `rank` at step 6 under torchrun: named within 5 s of `evidence` reaching the
// console, never anyone else.
void ExpectTorchrunRankNamed(const std::string& fault, int rank, const std::string& evidence) {
  denpex::testing::TempDir scratch;
  const Outcome o = WatchTorchrun(scratch, fault, rank, 6, evidence);
  if (!o.unavailable.empty()) SKIP_OR_FAIL(o.unavailable);
  ExpectNamedSoonAndNeverWrong(o, rank);
}

// The agent's first line about a failure is the evidence: its `failed (exitcode: -9) local_rank:
// 2` when it polled before the peers died of the lost connection, or `failed (exitcode: 1)
// local_rank: 0` when it saw all four gone in one poll (the failures' timestamps are whole
// seconds, so the "first observed failure" is the lowest local rank), with rank 2's -9 only in
// the summary that follows.
TEST(WatchE2eTorchrun, ASigkilledWorkerIsNamedWithinFiveSecondsOfTheAgentsLine) {
  ExpectTorchrunRankNamed("sigkill", 2, "failed (exitcode: ");
}

TEST(WatchE2eTorchrun, AnExceptionIsNamedWithinFiveSecondsOfItsTraceback) {
  ExpectTorchrunRankNamed("exception", 1, "[default1]:RuntimeError");
}

// A silent rank (a hang in its own code, a SIGSTOP): its peers time out in gloo after 20 s. The
// hung worker takes the agent's SIGTERM at once, and the agent's summary ties the timed-out
// workers' `[default<L>]:` tags to their global ranks.
TEST(WatchE2eTorchrun, AHangIsNamedWithinFiveSecondsOfThePeersTimeouts) {
  ExpectTorchrunRankNamed("hang", 3, "Timed out");
}

// A stopped worker cannot take the agent's SIGTERM: the agent waits 30 s, then says so (`Unable
// to shutdown process P via 15, forcefully exitting via 9`) and prints its summary. Until then the
// peers' timeouts carry only local-rank tags (no line ties them to global ranks: the rendezvous
// table needs LOGLEVEL=INFO), so the first evidence that names the rank is the agent's line.
TEST(WatchE2eTorchrun, ASigstoppedRankIsNamedWithinFiveSecondsOfItsAgentsSigkill) {
  ExpectTorchrunRankNamed("sigstop", 3, "via 15, forcefully exit");
}

// The kernel's OOM kill of one worker, as a job confined by Slurm's task/cgroup or a Kubernetes
// memory limit meets it: train.py moves the rank into a fresh memory cgroup at its fault step
// and allocates until the kernel kills it. The cgroup's limit counts only what the rank
// allocates after moving in (its earlier pages stay charged where they were): four of train.py's
// 64 MiB tensors. A machine without a writable memory cgroup skips, even in CI: that needs root
// on cgroup v1, or a cgroup v2 that hands the memory controller down, which a CI container may
// not give.
constexpr std::uint64_t kOomLimit = std::uint64_t{256} << 20;

#define SKIP_WITHOUT_CGROUP(cgroup)                                                       \
  do {                                                                                    \
    if (!(cgroup).unavailable().empty())                                                  \
      GTEST_SKIP() << (cgroup).unavailable()                                              \
                   << " (an OOM kill needs a writable memory cgroup: root on cgroup v1, " \
                      "or cgroup v2 with the memory controller handed down)";             \
  } while (0)

// The rank named as a SIGKILL is; and where the kernel's line reached the incident (a readable
// kernel log) and the engine can tie its pid to the rank (`host_oom_class`: torchrun's agent
// names the worker's pid; srun names none), the final diagnosis is that rank's host OOM.
void ExpectOomKillNamed(const Outcome& o, int rank, const Extras& x, bool host_oom_class) {
  ExpectNamedSoonAndNeverWrong(o, rank);
  if (!x.kernel_log) return;
  const std::size_t kill = o.kernel.find(kKernelKill);
  ASSERT_NE(kill, std::string::npos) << "no OOM kill in the kernel log:\n" << o.kernel;
  const std::size_t bol = o.kernel.rfind('\n', kill) + 1;  // 0 when it is the first line
  std::printf("kernel: %s\n", o.kernel.substr(bol, o.kernel.find('\n', kill) - bol).c_str());
  std::printf("final: %s\n", o.said.back().line.c_str());
  if (host_oom_class) {
    EXPECT_NE(o.said.back().line.find(" FAILURE_CLASS_HOST_OOM "), std::string::npos)
        << o.said.back().line << "\n"
        << o.watch_err;
  }
}

// The evidence: the agent's `failed (exitcode: -9)` line, or the kernel's `Memory cgroup out of
// memory: Killed process P (python3)` in the collected `dmesg`, whichever reaches the disk
// first. The agent's line names the worker's pid, which ties the kernel's kill to rank 2.
TEST(WatchE2eTorchrun, AnOomKilledWorkerIsNamedWithinFiveSecondsAsTheHostsOom) {
  denpex::testing::TempDir scratch;
  const MemoryCgroup cgroup(kOomLimit);
  SKIP_WITHOUT_CGROUP(cgroup);
  const Extras x{.cgroup = &cgroup, .kernel_log = KernelLogReadable(scratch.path())};
  const Outcome o = WatchTorchrun(scratch, "oom", 2, 6, "failed (exitcode: ", x);
  if (!o.unavailable.empty()) SKIP_OR_FAIL(o.unavailable);
  ExpectOomKillNamed(o, 2, x, /*host_oom_class=*/true);
}

// A healthy run: no provisional answer commits, and the final one names no one.
TEST(WatchE2eTorchrun, AHealthyRunRaisesNoAlert) {
  denpex::testing::TempDir scratch;
  const Outcome o = WatchTorchrun(scratch, "none", -1, -1, "training finished");
  if (!o.unavailable.empty()) SKIP_OR_FAIL(o.unavailable);
  ASSERT_FALSE(o.said.empty()) << o.watch_err;
  for (const Said& s : o.said)
    EXPECT_FALSE(s.diagnosed) << "an alert on a healthy run: " << s.line << "\n" << o.watch_err;
  EXPECT_TRUE(o.evidence.has_value()) << "the job did not finish:\n" << o.console;
}

// sbatch + srun --label, the watcher beside the job following it by its Slurm id; the job's
// output (slurm-<id>.out in the incident) watched for `evidence`.
Outcome WatchSlurm(const denpex::testing::TempDir& scratch, const std::string& fault, int rank,
                   int step, const std::string& evidence, const std::string& srun_options,
                   const Extras& x = {}) {
  Outcome o;
  if (!HaveTorch(scratch.path())) {
    o.unavailable = "PyTorch is not installed (/usr/bin/python3 -c 'import torch')";
    return o;
  }
  const std::string conf = SlurmConf(scratch.path());
  if (conf.empty()) {
    o.unavailable = "no Slurm is running (SLURM_CONF, or scripts/services.sh start)";
    return o;
  }
  const fs::path incident = scratch.path() / "incident";
  fs::create_directories(incident);
  std::string train = std::string(kPython) + " ";
  for (const std::string& a : Train(scratch.path(), fault, rank, step)) train += "'" + a + "' ";
  {
    std::ofstream script(scratch.path() / "job.sh");
    script << "#!/bin/bash\n#SBATCH --ntasks=4\n#SBATCH --nodes=1\n#SBATCH --output="
           << (incident / "slurm-%j.out").string()
           << "\nexport MASTER_ADDR=127.0.0.1 MASTER_PORT=" << FreePort()
           << " PYTHONUNBUFFERED=1\n";
    if (x.cgroup) script << "export DENPEX_OOM_CGROUP='" << x.cgroup->path().string() << "'\n";
    script << "srun --label " << srun_options << " " << train << "\n";
  }
  FirstSeen seen_kernel(incident / "dmesg", kKernelKill);
  const std::unique_ptr<Job> kernel_log = KernelLogCollector(x, incident, scratch.path());
  const auto env = CleanEnv({{"SLURM_CONF", conf}});
  EXPECT_EQ(RunToEnd({"/usr/bin/sbatch", "--parsable", (scratch.path() / "job.sh").string()}, env,
                     scratch.path() / "sbatch.out"),
            0)
      << ReadAll(scratch.path() / "sbatch.out");
  std::string id = ReadAll(scratch.path() / "sbatch.out");
  id = id.substr(0, id.find_first_of(";\n"));
  if (id.empty()) return o;
  const fs::path console = incident / ("slurm-" + id + ".out");
  FirstSeen seen(console, evidence);
  Job watch(
      {DENPEX_BINARY, "watch", incident.string(), "--slurm-job", id, "--json",
       (scratch.path() / "diagnosis.json").string(), "--interval", "0.25", "--timeout", "150"},
      env, scratch.path() / "watch.out", scratch.path());
  EXPECT_TRUE(
      watch.WaitUntil(std::chrono::steady_clock::now() + kJobLimit + std::chrono::seconds(30)))
      << "the watcher did not end with the job";
  o.said = ReadSaid(scratch.path() / "watch.out");
  o.evidence = Earliest(seen.at(), seen_kernel.at());
  o.console = ReadAll(console);
  o.watch_err = ReadAll(scratch.path() / "watch.out");
  o.kernel = ReadAll(incident / "dmesg");
  EXPECT_NE(o.watch_err.find("job end: Slurm job " + id), std::string::npos) << o.watch_err;
  return o;
}

// `fault` injected in task `task` at step 6 under srun: named within 5 s of `evidence` reaching the
// job's output, never anyone else.
void ExpectSrunTaskNamed(const std::string& fault, int task, const std::string& evidence,
                         const std::string& srun_options) {
  denpex::testing::TempDir scratch;
  const Outcome o = WatchSlurm(scratch, fault, task, 6, evidence, srun_options);
  if (!o.unavailable.empty()) SKIP_OR_FAIL(o.unavailable);
  ExpectNamedSoonAndNeverWrong(o, task);
}

TEST(WatchE2eSlurm, ASigkilledTaskIsNamedWithinFiveSecondsAndTheWatchEndsWithTheJob) {
  ExpectSrunTaskNamed("sigkill", 1, "task 1: Killed", "--kill-on-bad-exit=0");
}

// srun's `task 1: Killed` (no Out Of Memory: the Slurm of scripts/services.sh confines no task,
// and its slurmstepd sees no cgroup event) or the kernel's line, whichever is first.
TEST(WatchE2eSlurm, AnOomKilledTaskIsNamedWithinFiveSeconds) {
  denpex::testing::TempDir scratch;
  const MemoryCgroup cgroup(kOomLimit);
  SKIP_WITHOUT_CGROUP(cgroup);
  const Extras x{.cgroup = &cgroup, .kernel_log = KernelLogReadable(scratch.path())};
  const Outcome o = WatchSlurm(scratch, "oom", 1, 6, "task 1: Killed", "--kill-on-bad-exit=0", x);
  if (!o.unavailable.empty()) SKIP_OR_FAIL(o.unavailable);
  ExpectOomKillNamed(o, 1, x, /*host_oom_class=*/false);
}

// srun --label prefixes the task's traceback with `1: `.
TEST(WatchE2eSlurm, AnExceptionIsNamedWithinFiveSecondsOfItsTraceback) {
  ExpectSrunTaskNamed("exception", 1, "1: RuntimeError", "--kill-on-bad-exit=0");
}

// A silent task: its peers time out after 20 s and exit. Every task's output is the job's one
// file, labelled by task id (the rank): the one task that reported nothing while the others timed
// out is named then, before srun --wait=10 kills it (without --wait, srun would wait for that task
// until the job's time limit).
TEST(WatchE2eSlurm, ASigstoppedTaskIsNamedWithinFiveSecondsOfThePeersTimeouts) {
  ExpectSrunTaskNamed("sigstop", 3, "Timed out", "--kill-on-bad-exit=0 --wait=10");
}

TEST(WatchE2eSlurm, AHangIsNamedWithinFiveSecondsOfThePeersTimeouts) {
  ExpectSrunTaskNamed("hang", 3, "Timed out", "--kill-on-bad-exit=0 --wait=10");
}

}  // namespace
}  // namespace denpex
