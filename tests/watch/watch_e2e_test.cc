// `denpex watch` on real jobs (issue 25): a DDP job (corpora/capture/train.py, gloo on CPU,
// world size 4, a 20 s collective timeout, per-step lines flushed) under torchrun on one node and
// under sbatch + srun on the Slurm of scripts/services.sh, with a fault injected in one rank. The
// watcher follows the incident directory from before the job starts until the job ends
// (--until-exit, --slurm-job); the test reads the console itself every 50 ms to know when the
// first line that shows the fault reached the disk. Asserted: the right rank is named within
// 5 s of that line; no provisional answer ever names anyone else; the final diagnosis names the
// rank. A hang names no one until its peers' timeouts say who (step lines of ranks in lockstep
// stop together): only that nothing wrong is committed on the way.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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
};

// The watcher on `incident` from before the job starts; the job's console (a file in
// `incident`) watched for `evidence`.
Outcome WatchTorchrun(const denpex::testing::TempDir& scratch, const std::string& fault, int rank,
                      int step, const std::string& evidence) {
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
  Job job(argv, CleanEnv({{"PYTHONUNBUFFERED", "1"}}), console, scratch.path());
  Job watch({DENPEX_BINARY, "watch", incident.string(), "--json",
             (scratch.path() / "diagnosis.json").string(), "--until-exit",
             std::to_string(job.pid()), "--interval", "0.25", "--timeout", "150"},
            CleanEnv(), scratch.path() / "watch.out", scratch.path());
  const auto deadline = std::chrono::steady_clock::now() + kJobLimit;
  EXPECT_TRUE(job.WaitUntil(deadline)) << "torchrun did not end";
  EXPECT_TRUE(watch.WaitUntil(deadline + std::chrono::seconds(30)))
      << "the watcher did not end after the job";
  o.said = ReadSaid(scratch.path() / "watch.out");
  o.evidence = seen.at();
  o.console = ReadAll(console);
  o.watch_err = ReadAll(scratch.path() / "watch.out");
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
}

// The agent's first line about a failure is the evidence: its `failed (exitcode: -9) local_rank:
// 2` when it polled before the peers died of the lost connection, or `failed (exitcode: 1)
// local_rank: 0` when it saw all four gone in one poll (the failures' timestamps are whole
// seconds, so the "first observed failure" is the lowest local rank), with rank 2's -9 only in
// the summary that follows.
TEST(WatchE2eTorchrun, ASigkilledWorkerIsNamedWithinFiveSecondsOfTheAgentsLine) {
  denpex::testing::TempDir scratch;
  const Outcome o = WatchTorchrun(scratch, "sigkill", 2, 6, "failed (exitcode: ");
  if (!o.unavailable.empty()) SKIP_OR_FAIL(o.unavailable);
  ExpectNamedSoonAndNeverWrong(o, 2);
}

TEST(WatchE2eTorchrun, AnExceptionIsNamedWithinFiveSecondsOfItsTraceback) {
  denpex::testing::TempDir scratch;
  const Outcome o = WatchTorchrun(scratch, "exception", 1, 6, "[default1]:RuntimeError");
  if (!o.unavailable.empty()) SKIP_OR_FAIL(o.unavailable);
  ExpectNamedSoonAndNeverWrong(o, 1);
}

// A silent rank (a hang in its own code, a SIGSTOP): named when its peers' timeouts say who, and
// nothing wrong committed on the way.
void ExpectSilentRankNeverWronglyNamed(const std::string& fault) {
  denpex::testing::TempDir scratch;
  const Outcome o = WatchTorchrun(scratch, fault, 3, 6, "Timed out");
  if (!o.unavailable.empty()) SKIP_OR_FAIL(o.unavailable);
  ASSERT_TRUE(o.evidence.has_value()) << "no peer timed out:\n" << o.console;
  ASSERT_FALSE(o.said.empty()) << o.watch_err;
  for (const Said& s : o.said) {
    if (s.diagnosed && s.rank >= 0) {
      EXPECT_EQ(s.rank, 3) << "a wrong commit: " << s.line << "\n" << o.watch_err;
    }
  }
  ASSERT_TRUE(o.said.back().final);
  std::printf("%s", o.watch_err.c_str());  // what was said, and when, for docs/watch.md
}

TEST(WatchE2eTorchrun, AHangCommitsNothingWrongOnTheWay) {
  ExpectSilentRankNeverWronglyNamed("hang");
}

TEST(WatchE2eTorchrun, ASigstoppedRankCommitsNothingWrongOnTheWay) {
  ExpectSilentRankNeverWronglyNamed("sigstop");
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

// sbatch + srun --label, the watcher beside the job following it by its Slurm id.
TEST(WatchE2eSlurm, ASigkilledTaskIsNamedWithinFiveSecondsAndTheWatchEndsWithTheJob) {
  denpex::testing::TempDir scratch;
  if (!HaveTorch(scratch.path()))
    SKIP_OR_FAIL("PyTorch is not installed (/usr/bin/python3 -c 'import torch')");
  const std::string conf = SlurmConf(scratch.path());
  if (conf.empty()) SKIP_OR_FAIL("no Slurm is running (SLURM_CONF, or scripts/services.sh start)");
  const fs::path incident = scratch.path() / "incident";
  fs::create_directories(incident);
  std::string train = std::string(kPython) + " ";
  for (const std::string& a : Train(scratch.path(), "sigkill", 1, 6)) train += "'" + a + "' ";
  {
    std::ofstream script(scratch.path() / "job.sh");
    script << "#!/bin/bash\n#SBATCH --ntasks=4\n#SBATCH --nodes=1\n#SBATCH --output="
           << (incident / "slurm-%j.out").string()
           << "\nexport MASTER_ADDR=127.0.0.1 MASTER_PORT=" << FreePort() << " PYTHONUNBUFFERED=1\n"
           << "srun --label --kill-on-bad-exit=0 " << train << "\n";
  }
  const auto env = CleanEnv({{"SLURM_CONF", conf}});
  ASSERT_EQ(RunToEnd({"/usr/bin/sbatch", "--parsable", (scratch.path() / "job.sh").string()}, env,
                     scratch.path() / "sbatch.out"),
            0)
      << ReadAll(scratch.path() / "sbatch.out");
  std::string id = ReadAll(scratch.path() / "sbatch.out");
  id = id.substr(0, id.find_first_of(";\n"));
  FirstSeen seen(incident / ("slurm-" + id + ".out"), "task 1: Killed");
  Job watch(
      {DENPEX_BINARY, "watch", incident.string(), "--slurm-job", id, "--json",
       (scratch.path() / "diagnosis.json").string(), "--interval", "0.25", "--timeout", "150"},
      env, scratch.path() / "watch.out", scratch.path());
  ASSERT_TRUE(
      watch.WaitUntil(std::chrono::steady_clock::now() + kJobLimit + std::chrono::seconds(30)))
      << "the watcher did not end with the job";
  Outcome o{.said = ReadSaid(scratch.path() / "watch.out"),
            .evidence = seen.at(),
            .console = ReadAll(incident / ("slurm-" + id + ".out")),
            .watch_err = ReadAll(scratch.path() / "watch.out")};
  EXPECT_NE(o.watch_err.find("job end: Slurm job " + id), std::string::npos) << o.watch_err;
  ExpectNamedSoonAndNeverWrong(o, 1);
}

}  // namespace
}  // namespace denpex
