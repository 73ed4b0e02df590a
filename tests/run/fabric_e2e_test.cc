// `denpex preflight --fabric` with the gloo probe under real launchers. torchrun: four "nodes",
// each a network namespace of this machine with its own address on one bridge, reached with
// `ip netns exec` as --on; the test slows what it wants with tc (htb for one link, tbf for one
// node's port) and the report must name exactly that: the link on both its ends with nobody
// excluded, the node excluded, a healthy allocation passed. srun: the single-node Slurm of
// scripts/services.sh runs the node's own probe with two ranks.
//
// They need root (network namespaces), iproute2, PyTorch and, for srun, the Slurm services;
// they skip without them, unless DENPEX_REQUIRE_SERVICES=1 (CI), where they fail instead.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "denpex/proto/json_io.h"
#include "denpex/v1/preflight.pb.h"
#include "support/launchers.h"
#include "support/temp_dir.h"

namespace denpex::run_test {
namespace {

namespace fs = std::filesystem;
using namespace denpex::testing::launchers;  // NOLINT(google-build-using-namespace)

constexpr int kNodes = 4;
constexpr auto kLimit = std::chrono::seconds(300);

// `node0`..`node3`: network namespaces `<prefix>-nodeK` with eth0 at 10.213.0.K+1 on a bridge in
// a namespace of its own (`<prefix>-sw`, port pK), and /etc/netns/<ns>/hosts naming every node
// (what `ip netns exec` shows the processes as /etc/hosts). Removed, with what tc added, when the
// object goes.
class NetnsCluster {
 public:
  // nullptr, with `why`, where namespaces cannot be made (not root, no iproute2).
  static std::unique_ptr<NetnsCluster> Make(const fs::path& scratch, std::string* why) {
    if (::geteuid() != 0) {
      *why = "network namespaces need root";
      return nullptr;
    }
    if (!fs::exists("/usr/sbin/ip") && !fs::exists("/sbin/ip")) {
      *why = "iproute2 (ip, tc) is not installed";
      return nullptr;
    }
    std::unique_ptr<NetnsCluster> c(new NetnsCluster(scratch));
    if (!c->Build()) {
      *why = "could not make the network namespaces: " + ReadAll(scratch / "ip.log");
      return nullptr;
    }
    return c;
  }
  ~NetnsCluster() {
    for (int k = 0; k < kNodes; ++k) {
      Ip({"netns", "del", Ns(k)});
      std::error_code ec;
      fs::remove_all("/etc/netns/" + Ns(k), ec);
    }
    Ip({"netns", "del", prefix_ + "-sw"});
  }

  // The --on template: run in the node's namespace, gloo on its eth0.
  std::string On() const {
    return "ip netns exec " + prefix_ + "-{host} env GLOO_SOCKET_IFNAME=eth0";
  }
  // Traffic between nodes a and b (both ways) at `rate`; the rest of their traffic as before.
  bool SlowLink(int a, int b, const std::string& rate) {
    return Classed(a, b, rate) && Classed(b, a, rate);
  }
  // Everything node a sends and receives at `rate`.
  bool SlowNode(int a, const std::string& rate) {
    const std::vector<std::string> tbf = {"root",  "tbf",  "rate",    rate,
                                          "burst", "64kb", "latency", "200ms"};
    std::vector<std::string> out = {"-n", Ns(a), "qdisc", "add", "dev", "eth0"};
    std::vector<std::string> in = {"-n",  prefix_ + "-sw", "qdisc",
                                   "add", "dev",           "p" + std::to_string(a)};
    out.insert(out.end(), tbf.begin(), tbf.end());
    in.insert(in.end(), tbf.begin(), tbf.end());
    return Tc(out) && Tc(in);
  }

 private:
  explicit NetnsCluster(const fs::path& scratch)
      : scratch_(scratch), prefix_("dpx" + std::to_string(::getpid())) {}

  std::string Ns(int k) const { return prefix_ + "-node" + std::to_string(k); }
  static std::string Addr(int k) { return "10.213.0." + std::to_string(k + 1); }

  bool Run(const std::string& tool, std::vector<std::string> args) {
    args.insert(args.begin(),
                fs::exists("/usr/sbin/" + tool) ? "/usr/sbin/" + tool : "/sbin/" + tool);
    return RunToEnd(args, CleanEnv(), scratch_ / "ip.log") == 0;
  }
  bool Ip(std::vector<std::string> args) { return Run("ip", std::move(args)); }
  bool Tc(std::vector<std::string> args) { return Run("tc", std::move(args)); }

  bool Build() {
    const std::string sw = prefix_ + "-sw";
    if (!Ip({"netns", "add", sw}) || !Ip({"-n", sw, "link", "add", "br0", "type", "bridge"}) ||
        !Ip({"-n", sw, "link", "set", "br0", "up"})) {
      return false;
    }
    std::string hosts = "127.0.0.1 localhost\n";
    for (int k = 0; k < kNodes; ++k) hosts += Addr(k) + " node" + std::to_string(k) + "\n";
    for (int k = 0; k < kNodes; ++k) {
      const std::string ns = Ns(k), port = "p" + std::to_string(k);
      if (!Ip({"netns", "add", ns}) ||
          !Ip({"-n", sw, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns",
               ns}) ||
          !Ip({"-n", sw, "link", "set", port, "master", "br0"}) ||
          !Ip({"-n", sw, "link", "set", port, "up"}) ||
          !Ip({"-n", ns, "addr", "add", Addr(k) + "/24", "dev", "eth0"}) ||
          !Ip({"-n", ns, "link", "set", "eth0", "up"}) ||
          !Ip({"-n", ns, "link", "set", "lo", "up"})) {
        return false;
      }
      fs::create_directories("/etc/netns/" + ns);
      std::ofstream("/etc/netns/" + ns + "/hosts") << hosts;
    }
    return true;
  }

  // On node `from`'s eth0: traffic to `to` in a class of its own at `rate`.
  bool Classed(int from, int to, const std::string& rate) {
    const std::string ns = Ns(from);
    return Tc({"-n", ns, "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default",
               "10"}) &&
           Tc({"-n", ns, "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:10", "htb",
               "rate", "10gbit"}) &&
           Tc({"-n", ns, "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:20", "htb",
               "rate", rate}) &&
           Tc({"-n", ns, "filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio",
               "1", "u32", "match", "ip", "dst", Addr(to) + "/32", "flowid", "1:20"});
  }

  fs::path scratch_;
  std::string prefix_;
};

struct Fabric {
  int rc = -1;
  std::string text;  // what denpex printed
  v1::PreflightReport report;
};

Fabric RunFabric(std::vector<std::string> extra, const fs::path& scratch) {
  const fs::path json = scratch / "report.json";
  std::vector<std::string> argv = {
      DENPEX_BINARY, "preflight", "--fabric", (scratch / "fabric").string(), "--python", kPython,
      "--probe-max-bytes", "4MiB", "--probe-timeout", "90", "--json", json.string(),
      // gloo over veth is bound by CPUs this machine shares: a healthy run varies by up to
      // about 2x, the slowed ones are 30x slower.
      "--busbw-floor", "0.3"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  Fabric f;
  std::map<std::string, std::string> env;
  if (const char* conf = std::getenv("SLURM_CONF")) env["SLURM_CONF"] = conf;
  Job job(argv, CleanEnv(env), scratch / "denpex.txt", scratch);
  if (!job.WaitUntil(std::chrono::steady_clock::now() + kLimit)) {
    ADD_FAILURE() << "denpex preflight --fabric ran past " << kLimit.count() << " s";
    return f;
  }
  f.rc = WIFEXITED(job.status()) ? WEXITSTATUS(job.status()) : -1;
  f.text = ReadAll(scratch / "denpex.txt");
  EXPECT_TRUE(proto::ReadJsonFile(json, &f.report).ok()) << f.text;
  return f;
}

const v1::PreflightNode* NodeOf(const v1::PreflightReport& r, const std::string& name) {
  for (const auto& n : r.nodes())
    if (n.node() == name) return &n;
  return nullptr;
}

std::vector<std::string> Codes(const v1::PreflightReport& r, const std::string& name) {
  std::vector<std::string> out;
  if (const auto* n = NodeOf(r, name))
    for (const auto& f : n->findings()) out.push_back(f.code() + (f.fail() ? "" : " (warn)"));
  return out;
}

class FabricTorchrun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveTorch(scratch_.path())) SKIP_OR_FAIL("PyTorch is not installed (/usr/bin/python3)");
    std::string why;
    cluster_ = NetnsCluster::Make(scratch_.path(), &why);
    if (!cluster_) SKIP_OR_FAIL(why);
  }
  Fabric Run() {
    return RunFabric({"--nodes", "node[0-3]", "--launcher", "torchrun", "--on", cluster_->On()},
                     scratch_.path());
  }
  denpex::testing::TempDir scratch_;
  std::unique_ptr<NetnsCluster> cluster_;
};

TEST_F(FabricTorchrun, AHealthyAllocationPasses) {
  const Fabric f = Run();
  EXPECT_EQ(f.rc, 0) << f.text;
  EXPECT_EQ(f.report.verdict(), v1::PREFLIGHT_PASS) << f.text;
  EXPECT_EQ(f.report.nodes_size(), kNodes) << f.text;
  for (int k = 0; k < kNodes; ++k) {
    const std::string node = "node" + std::to_string(k);
    EXPECT_TRUE(Codes(f.report, node).empty()) << node << "\n" << f.text;
  }
  const auto& fabric = f.report.fabric();
  EXPECT_EQ(fabric.launcher(), "torchrun");
  EXPECT_EQ(fabric.rounds(), 2);
  EXPECT_EQ(fabric.every_pair_probes(), 6);
  ASSERT_EQ(fabric.probes_size(), 4);
  for (const auto& p : fabric.probes()) EXPECT_EQ(p.status(), "ok") << p.file();
}

TEST_F(FabricTorchrun, ASlowedLinkIsNamedOnBothEndsAndNobodyIsExcluded) {
  ASSERT_TRUE(cluster_->SlowLink(1, 2, "100mbit")) << ReadAll(scratch_.path() / "ip.log");
  const Fabric f = Run();
  EXPECT_EQ(f.rc, 0) << f.text;
  EXPECT_EQ(f.report.exclude(), "") << f.text;
  for (const char* end : {"node1", "node2"}) {
    const auto* n = NodeOf(f.report, end);
    ASSERT_NE(n, nullptr) << f.text;
    ASSERT_EQ(n->findings_size(), 1) << end << "\n" << f.text;
    EXPECT_EQ(n->findings(0).code(), "BUSBW_LOW");
    EXPECT_FALSE(n->findings(0).fail());
    EXPECT_EQ(n->findings(0).device(), "node1<->node2");
    ASSERT_EQ(n->findings(0).evidence_size(), 1);
    EXPECT_NE(n->findings(0).evidence(0).file().find("node1_node2"), std::string::npos);
  }
  for (const char* other : {"node0", "node3"})
    EXPECT_TRUE(Codes(f.report, other).empty()) << other << "\n" << f.text;
}

TEST_F(FabricTorchrun, ASlowedNodeIsExcluded) {
  ASSERT_TRUE(cluster_->SlowNode(3, "100mbit")) << ReadAll(scratch_.path() / "ip.log");
  const Fabric f = Run();
  EXPECT_EQ(f.rc, 5) << f.text;
  EXPECT_EQ(f.report.exclude(), "node3") << f.text;
  EXPECT_EQ(Codes(f.report, "node3"), std::vector<std::string>{"BUSBW_LOW"}) << f.text;
  for (const char* other : {"node0", "node1", "node2"})
    EXPECT_TRUE(Codes(f.report, other).empty()) << other << "\n" << f.text;
  EXPECT_NE(f.text.find("exclude: node3"), std::string::npos) << f.text;
}

// srun on the single-node Slurm: the node's own probe, two ranks, through a job step.
TEST(FabricSrun, TheNodesOwnProbeRunsThroughAStep) {
  denpex::testing::TempDir scratch;
  if (!HaveTorch(scratch.path())) SKIP_OR_FAIL("PyTorch is not installed (/usr/bin/python3)");
  const std::string conf = SlurmConf(scratch.path());
  if (conf.empty()) SKIP_OR_FAIL("no Slurm is running (SLURM_CONF, or scripts/services.sh start)");
  ::setenv("SLURM_CONF", conf.c_str(), 1);
  RunToEnd({"/usr/bin/sinfo", "-h", "-o", "%N"}, CleanEnv({{"SLURM_CONF", conf}}),
           scratch.path() / "node.txt");
  std::string node = ReadAll(scratch.path() / "node.txt");
  node = node.substr(0, node.find_first_of(" \n"));
  ASSERT_FALSE(node.empty());
  const Fabric f =
      RunFabric({"--nodes", node, "--launcher", "srun", "--ranks-per-node", "2"}, scratch.path());
  EXPECT_EQ(f.rc, 0) << f.text;
  ASSERT_EQ(f.report.fabric().probes_size(), 1) << f.text;
  EXPECT_EQ(f.report.fabric().probes(0).status(), "ok") << f.text;
  EXPECT_EQ(f.report.fabric().probes(0).round(), "node");
  const auto* n = NodeOf(f.report, node);
  ASSERT_NE(n, nullptr) << f.text;
  ASSERT_EQ(n->sources_size(), 1);
  EXPECT_EQ(n->sources(0).tool(), "nccl-tests");
  // The probe's table: rank 0 and rank 1 both on the node.
  const std::string run = ReadAll(scratch.path() / "fabric" / f.report.fabric().probes(0).file());
  EXPECT_NE(run.find("#  Rank  1 Group  0 Pid"), std::string::npos) << run;
  EXPECT_NE(run.find("# Avg bus bandwidth"), std::string::npos) << run;
}

}  // namespace
}  // namespace denpex::run_test
