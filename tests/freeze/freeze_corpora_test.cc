// Freezing keeps every diagnosis (issue #28): every incident of corpora/real and corpora/real2,
// and simulated incidents of several families and launchers, frozen into a corpus entry; the
// frozen copy's diagnosis equals the original's once its names are mapped back, and no file of
// the entry holds a host name, node or address the engine read in the original.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>

#include "denpex/engine/engine.h"
#include "denpex/sim/simulator.h"
#include "freeze/freeze.h"
#include "freeze/name_map.h"
#include "freeze/names.h"
#include "freeze_support.h"
#include "support/temp_dir.h"

// How many seeds of each family: 4 in the slow build of this test (suite FreezeCorpora4Seeds,
// the simulated families only), 1 in the golden one.
#ifdef DENPEX_FREEZE_SEEDS
#define FreezeCorpora FreezeCorpora4Seeds
#define DENPEX_FREEZE_CORPORA 0
#else
#define DENPEX_FREEZE_SEEDS 1
#define DENPEX_FREEZE_CORPORA 1
#endif

namespace denpex::freeze {
namespace {

namespace fs = std::filesystem;
using testing::FilesOf;
using testing::HoldsName;

// The names the engine reads in an incident that must not survive: hosts and nodes (a hostlist
// expanded), and addresses other than loopback and the documentation ranges.
std::set<std::string> Originals(const fs::path& incident) {
  auto names = engine::NamesIn(incident, 2);
  EXPECT_TRUE(names.ok()) << names.status().message();
  std::set<std::string> out;
  if (!names.ok()) return out;
  std::vector<std::string> all = names->nodes;
  all.insert(all.end(), names->hosts.begin(), names->hosts.end());
  for (const std::string& n : all) {
    for (const std::string& h : n.find('[') != std::string::npos ? ExpandHostlist(n, 100000)
                                                                 : std::vector<std::string>{n}) {
      if (IsIpv4(h) ? KeepIpv4(h) : h.find_first_of("0123456789-.") == std::string::npos) continue;
      out.insert(h);
    }
  }
  // and every IPv4 address any file holds (read here by a plain pattern, not by freeze's shapes)
  static const std::regex kIpv4(
      R"((^|[^0-9.])((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3})($|[^0-9.]))");
  for (const auto& [rel, text] : FilesOf(incident)) {
    if (text.find('\0') != std::string::npos) continue;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kIpv4);
         it != std::sregex_iterator(); ++it) {
      const std::string a = (*it)[2].str();
      if (!KeepIpv4(a)) out.insert(a);
    }
  }
  return out;
}

void ExpectFrozenKeepsDiagnosis(const fs::path& incident, const std::string& label) {
  SCOPED_TRACE(label);
  const testing::TempDir dir("denpex-freeze-");
  const fs::path entry = dir.path() / "entry";
  auto r = Freeze({.incident = incident, .entry = entry, .threads = 2, .drafted_by = "test"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->diagnosis_identical) << r->difference;
  EXPECT_THAT(r->not_anonymised, ::testing::IsEmpty());
  EXPECT_FALSE(fs::exists(entry / "entry.map.json"));
  const std::set<std::string> originals = Originals(incident);
  for (const auto& [rel, text] : FilesOf(entry)) {
    for (const std::string& name : originals) {
      EXPECT_FALSE(HoldsName(rel, name)) << rel << " is named with " << name;
      EXPECT_FALSE(HoldsName(text, name)) << rel << " holds " << name;
    }
  }
}

#if DENPEX_FREEZE_CORPORA
std::vector<fs::path> CorpusIncidents() {
  std::vector<fs::path> out;
  for (const char* corpus : {"corpora/real", "corpora/real2"}) {
    for (const auto& e : fs::directory_iterator(fs::path(DENPEX_SOURCE_DIR) / corpus)) {
      if (fs::is_directory(e.path() / "incident")) out.push_back(e.path() / "incident");
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(FreezeCorpora, EveryCorpusIncidentKeepsItsDiagnosisAndLosesItsNames) {
  const std::vector<fs::path> incidents = CorpusIncidents();
  ASSERT_GE(incidents.size(), 60u);
  for (const fs::path& inc : incidents)
    ExpectFrozenKeepsDiagnosis(inc, inc.parent_path().filename().string());
}
#endif

// Launchers and record kinds: torchrun, log dirs, srun, Kubernetes (PyTorchJob, JobSet), Ray,
// Open MPI, pdsh, DeepSpeed under Slurm; kernel logs (Xid, OOM), Flight Recorder dumps, NCCL RAS,
// DCGM / nvidia-smi snapshots, a host loss and the scheduler's endings.
constexpr const char* kFamilies[] = {
    "sigkill_1024_torch21.textproto",
    "sigkill_16384_logdir.textproto",
    "hang_4096_srun.textproto",
    "hang_4096_torch26_dump_on_timeout.textproto",
    "k8s_eviction_2048_pytorchjob.textproto",
    "k8s_node_not_ready_4096_jobset.textproto",
    "ray_actor_died_1024_sigkill.textproto",
    "exception_4096_mpirun.textproto",
    "exception_1024_pdsh.textproto",
    "cuda_oom_2048_deepspeed_slurm.textproto",
    "xid_fallen_off_bus_1024_torchrun.textproto",
    "host_oom_4096_srun_slurm22.textproto",
    "node_loss_4096_srun.textproto",
    "time_limit_2048_srun.textproto",
    "straggler_1024_throttled_smi_query.textproto",
    "socket_reset_1024_torchrun.textproto",
};

TEST(FreezeCorpora, SimulatedFamiliesKeepTheirDiagnosisAndLoseTheirNames) {
  const testing::TempDir dir("denpex-freeze-sim-");
  const std::vector<std::string> small = {"job.nodes=16"};
  for (const char* family : kFamilies) {
    auto scenario =
        sim::LoadScenario(fs::path(DENPEX_SOURCE_DIR) / "scenarios/families" / family, small);
    ASSERT_TRUE(scenario.ok()) << family << ": " << scenario.status().message();
    for (std::uint64_t seed = 1; seed <= DENPEX_FREEZE_SEEDS; ++seed) {
      const fs::path out = dir.path() / (std::string(family) + "-" + std::to_string(seed));
      auto sim = sim::Simulate(*scenario, {.out_dir = out, .seed = seed});
      ASSERT_TRUE(sim.ok()) << family << ": " << sim.status().message();
      ExpectFrozenKeepsDiagnosis(out / "incident",
                                 std::string(family) + " seed " + std::to_string(seed));
      fs::remove_all(out);
    }
  }
}

}  // namespace
}  // namespace denpex::freeze
