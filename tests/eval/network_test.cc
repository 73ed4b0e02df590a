// The IB error matrix against the simulator: a failed NIC is named (rank, class and owner
// NETWORK) from NCCL's completion WARNs in the 2.19+ shape (with localGid) and the 2.18 shape
// (without), the socket transport's reset link likewise; a single bad link between two nodes is
// named as that link, over IB or NCCL's socket transport, with the end that failed first where
// the evidence says which.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "denpex/engine/engine.h"
#include "denpex/sim/simulator.h"

namespace denpex {
namespace {

namespace fs = std::filesystem;

class Network : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("denpex_network_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Simulate(const std::string& name, std::vector<std::string> sets, std::uint64_t seed) {
    constexpr char kJob[] = R"pb(
      name: "network_test"
      job { nodes: 32 tp: 8 pp: 2 }
      training { warmup_steps: 4 step_time_ms: 400 }
      timeouts { nccl_timeout_ms: 60000 }
      realism { kernel_logs: false }
      faults { kind: FAULT_KIND_NIC_FAILURE }
    )pb";
    if (sets.empty() || sets.front().find("faults[0].kind") == std::string::npos) sets.push_back("faults[0].rank=77");
    auto scenario = sim::ParseScenario(kJob, name, sets);
    EXPECT_TRUE(scenario.ok()) << scenario.status().message();
    auto result = sim::Simulate(*scenario, {.out_dir = dir_ / name, .seed = seed});
    EXPECT_TRUE(result.ok()) << result.status().message();
    if (result.ok()) truth_ = result->truth;
    return dir_ / name / "incident";
  }

  // The error group of the diagnosis' cascade whose signature holds `text`; nullptr when none.
  static const v1::ErrorGroup* Group(const v1::Diagnosis& d, std::string_view text) {
    for (const auto& g : d.cascade().groups()) {
      if (g.signature().find(text) != std::string::npos) return &g;
    }
    return nullptr;
  }

  fs::path dir_;
  v1::Truth truth_;  // of the last Simulate
};

TEST_F(Network, FailedNicIsNamedFromTheIbErrorMatrixInEachNcclShape) {
  for (const std::string version : {"2.21.5", "2.18.5", "2.24.3", "2.26.2", "2.28.9", "2.29.2"}) {
    const std::string nccl = "format.nccl=" + version;
    const fs::path incident = Simulate("nic" + version, {nccl}, 3);
    auto d = engine::Diagnose(incident, {.threads = 2});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->initiator().rank(), 77) << nccl << ": " << d->reason();
    EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_NETWORK) << nccl;
    EXPECT_EQ(d->owner(), v1::OWNER_NETWORK) << nccl;
    ASSERT_GE(d->evidence_size(), 1);
    const std::string& cited = d->evidence(0).text();
    EXPECT_TRUE(cited.find("status=12") != std::string::npos ||
                cited.find("with error 12,") != std::string::npos ||
                cited.find("status=IBV_WC_RETRY_EXC_ERR(12)") != std::string::npos)
        << cited;
    EXPECT_GT(d->cascade().secondary_ranks_size(), 0);
  }
}

// The failed NIC's port goes down with it: every process of its node warns (`NET/IB : mlx5_5:1 Got
// async event : port error`, each release's words), and the NIC is named by that device, the
// line cited (NCCL 2.18 names no device: the NIC of the rank's GPU). Where the node's lines report
// two devices down, neither is taken for the NIC.
TEST_F(Network, FailedNicIsNamedByThePortErrorItsNodeReported) {
  for (const std::string version : {"2.18.5", "2.21.5", "2.24.3", "2.28.9", "2.29.2"}) {
    for (const bool second_device : {false, true}) {
      const std::string name = "port" + version + (second_device ? "two" : "one");
      const fs::path incident =
          Simulate(name, {"format.nccl=" + version}, 3);  // rank 77, gpu-0010, GPU 5
      if (second_device) {  // rank 72 (GPU 0) also reports mlx5_2 down
        std::ofstream(incident / "gpu-0010" / "rank_72.log", std::ios::app)
            << "gpu-0010:4242:4284 [0] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_2:1 Got "
               "async event : port error\n";
      }
      auto d = engine::Diagnose(incident, {.threads = 2});
      ASSERT_TRUE(d.ok()) << d.status().message();
      const std::string what = name + ": " + d->reason();
      EXPECT_EQ(d->initiator().rank(), 77) << what;
      EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_NETWORK) << what;
      const bool named = version != "2.18.5" && !second_device;
      bool cited = false;
      for (const auto& e : d->evidence()) {
        cited = cited || e.text().find("port error") != std::string::npos;
      }
      EXPECT_EQ(cited, named) << what;
      EXPECT_EQ(
          d->reason().find(
              "mlx5_5 on gpu-0010, whose ranks' NCCL reported it down (`port error`, 8 line(s))") !=
              std::string::npos,
          named)
          << what;
      if (version == "2.18.5") {
        EXPECT_NE(d->reason().find("the NIC of GPU 5 on gpu-0010"), std::string::npos) << what;
      }
    }
  }
}

// InfiniBand's WARNs carry no GIDs: the status-12 reports of other nodes naming the failed NIC's
// node are matched by address through NCCL's INFO set-up lines (`Bootstrap : Using ib0:<ip>`,
// `NET/IB : Using ... ; OOB ib0:<ip>`), as RoCE's `localGid` matches them: both cite them.
TEST_F(Network, FailedNicKeepsThePeersReportsNamingItsNodeOnInfinibandAsOnRoce) {
  for (const std::string fabric : {"FABRIC_INFINIBAND", "FABRIC_ROCE"}) {
    const fs::path incident = Simulate("nic_" + fabric, {"format.nccl=2.21.5", "format.nccl_debug_info=true", "format.fabric=" + fabric}, 3);
    auto d = engine::Diagnose(incident, {.threads = 2});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->initiator().rank(), 77) << fabric << ": " << d->reason();
    EXPECT_NE(d->reason().find("ranks on other nodes reported status 12 naming"), std::string::npos) << fabric << ": " << d->reason();
    int corroborating = 0;
    for (const auto& e : d->evidence()) {
      corroborating += e.role() == v1::EVIDENCE_ROLE_CORROBORATING && e.text().find("status=12") != std::string::npos ? 1 : 0;
    }
    EXPECT_GT(corroborating, 0) << fabric;
  }
}

// A node whose ranks fail NCCL init is named (rank -1), class NCCL_SETUP; the owner says who
// fixes it: the network for a missing bootstrap interface, the job's launch for a shared GPU. The
// bootstrap connect that timed out, in each release's words (docs/log_formats.md §4c): NCCL
// 2.18-2.23 name neither the peer nor the error (`socketPollConnect: exceeded timeouts (3)`),
// 2.24-2.27 the error (`connect returned Connection timed out, exceeded error retry count (35)`),
// 2.28 on the peer too (`connect to <ip><port> returned ...`, `ncclOsSocketPollConnect` from 2.29).
TEST_F(Network, NcclSetupFailureNamesTheNodeAndWhoFixesIt) {
  struct Case {
    std::string kind, nccl;  // nccl "": the default profile
    v1::Owner owner;
    std::string cited;  // in the first evidence line
  };
  std::vector<Case> cases = {
      {"FAULT_KIND_NCCL_BOOTSTRAP", "", v1::OWNER_NETWORK, " NCCL WARN "},
      {"FAULT_KIND_DUPLICATE_GPU", "", v1::OWNER_APPLICATION, " NCCL WARN "}};
  for (const std::string version : {"2.18.5", "2.21.5", "2.24.3", "2.26.2", "2.28.9", "2.29.2"}) {
    cases.push_back({"FAULT_KIND_BOOTSTRAP_TIMEOUT", version, v1::OWNER_NETWORK, "Connect"});
  }
  for (const Case& c : cases) {
    std::vector<std::string> sets = {"faults[0].kind=" + c.kind, "faults[0].node=5"};
    if (!c.nccl.empty()) sets.push_back("format.nccl=" + c.nccl);
    const std::string what = c.kind + " " + c.nccl;
    const fs::path incident = Simulate(c.kind + c.nccl, sets, 4);
    auto d = engine::Diagnose(incident, {.threads = 2});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->initiator().rank(), -1) << what << ": " << d->reason();
    EXPECT_EQ(d->initiator().node(), "gpu-0006") << what << ": " << d->reason();
    EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_NCCL_SETUP) << what;
    EXPECT_EQ(d->owner(), c.owner) << what;
    ASSERT_GE(d->evidence_size(), 1);
    EXPECT_NE(d->evidence(0).text().find(c.cited), std::string::npos) << d->evidence(0).text();
  }
}

// The c10d store's host lost (FAULT_KIND_STORE_HOST_LOSS, here on node 3, not the first): every
// other node reports losing the store first, yet the host is named, as a lost node (rank -1,
// NODE_LOSS, HOST). torch 2.4's workers name it as their sockets' remote end; torch 2.1's print
// nothing, and it is the one node whose agent neither raised nor reported.
TEST_F(Network, LostStoreHostIsNamedNotTheFirstToReport) {
  for (const std::string torch : {"2.4", "2.1"}) {
    const fs::path incident =
        Simulate("store" + torch, {"faults[0].kind=FAULT_KIND_STORE_HOST_LOSS", "faults[0].node=3", "format.torch=" + torch}, 6);
    auto d = engine::Diagnose(incident, {.threads = 2});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->initiator().rank(), -1) << torch << ": " << d->reason();
    EXPECT_EQ(d->initiator().node(), "gpu-0004") << torch << ": " << d->reason();
    EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_NODE_LOSS) << torch;
    EXPECT_EQ(d->owner(), v1::OWNER_HOST) << torch;
    EXPECT_NE(d->reason().find("c10d store"), std::string::npos) << d->reason();
    bool names_remote = false;
    for (const auto& e : d->evidence()) names_remote = names_remote || e.text().find("remote=[gpu-0004]") != std::string::npos;
    EXPECT_EQ(names_remote, torch == "2.4") << torch;
    // The cascade: each other agent's RendezvousConnectionError (31) and, at torch 2.4, each
    // worker's store connection reset, exactly as many as the truth counts.
    EXPECT_EQ(d->cascade().grouped_errors(), truth_.cascade().secondary_errors()) << torch;
    const v1::ErrorGroup* agents = Group(*d, "RendezvousConnectionError");
    ASSERT_NE(agents, nullptr) << torch;
    EXPECT_EQ(agents->count(), 31) << torch;
    const v1::ErrorGroup* resets = Group(*d, "recvValue failed on SocketImpl");
    EXPECT_EQ(resets != nullptr, torch == "2.4") << torch;
    if (resets != nullptr) {
      EXPECT_EQ(resets->count(), resets->ranks()) << "one reset per worker";
    }
  }
}

// A node that never joins the c10d rendezvous (FAULT_KIND_RENDEZVOUS_TIMEOUT): 31 agents time out
// (victims), the node that could not reach the endpoint is named, in torch 2.4's and 1.13's words.
TEST_F(Network, NodeThatNeverJoinedTheRendezvousIsNamed) {
  for (const std::string torch : {"2.4", "1.13"}) {
    const fs::path incident =
        Simulate("rdzv" + torch, {"faults[0].kind=FAULT_KIND_RENDEZVOUS_TIMEOUT", "faults[0].node=9", "format.torch=" + torch}, 7);
    auto d = engine::Diagnose(incident, {.threads = 2});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->initiator().rank(), -1) << torch << ": " << d->reason();
    EXPECT_EQ(d->initiator().node(), "gpu-0010") << torch << ": " << d->reason();
    EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_NCCL_SETUP) << torch;
    EXPECT_EQ(d->owner(), v1::OWNER_NETWORK) << torch;
    ASSERT_GE(d->evidence_size(), 1);
    EXPECT_NE(d->evidence(0).text().find("RendezvousConnectionError"), std::string::npos) << d->evidence(0).text();
    // The cascade: the 31 other agents' RendezvousTimeoutError; the node's own error is not one.
    EXPECT_EQ(d->cascade().grouped_errors(), 31) << torch;
    EXPECT_EQ(truth_.cascade().secondary_errors(), 31) << torch;
    const v1::ErrorGroup* timeouts = Group(*d, "RendezvousTimeoutError");
    ASSERT_NE(timeouts, nullptr) << torch;
    EXPECT_EQ(timeouts->count(), 31) << torch;
  }
}

// srun's `srun: error: <host>: task(s) <ids>: <status>` lines are secondary errors on both sides
// (the truth counts each task line but the initiator's; the engine groups those that name none
// of its ranks), so cascade compression under srun is complete.
TEST_F(Network, SrunTaskLinesAreGroupedAsTheTruthCountsThem) {
  const fs::path incident = Simulate("srun_sigkill", {"launcher=LAUNCHER_SRUN", "faults[0].kind=FAULT_KIND_SIGKILL"}, 4);
  auto d = engine::Diagnose(incident, {.threads = 2});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->initiator().rank(), 77) << d->reason();
  EXPECT_EQ(d->cascade().grouped_errors(), truth_.cascade().secondary_errors());
  bool srun = false;
  for (const auto& g : d->cascade().groups()) srun = srun || g.family() == "slurm";
  EXPECT_TRUE(srun) << "srun's task lines form a group";
}

// Cascade counts agree with the truth where either side could count differently
// (docs/evaluation.md "Cascade"): torch 2.1's watchdog lines under pdsh carry no rank, yet each
// is a secondary error, as is each other node's launch.py `exits with return code` line; torch
// 2.6's flight-recorder dump-signal lines are no error of their own (not store resets); a
// duplicate GPU's two ranks are the initiator, their node's other ranks victims.
TEST_F(Network, CascadeCountsAgreeOnUnrankedTimeoutsDumpSignalsAndDuplicateGpus) {
  struct Case {
    std::string name;
    std::vector<std::string> sets;
  };
  const std::vector<Case> cases = {
      {"pdsh_loss_torch21", {"launcher=LAUNCHER_PDSH", "format.torch=2.1", "faults[0].kind=FAULT_KIND_NODE_LOSS", "faults[0].node=5",
                             "pdsh.server_alive_interval_s=15", "pdsh.server_alive_count_max=4"}},
      {"hang_dump_torch26", {"format.torch=2.6", "timeouts.dump_on_timeout=true", "faults[0].kind=FAULT_KIND_HANG"}},
      {"duplicate_gpu_srun", {"launcher=LAUNCHER_SRUN", "format.torch=2.1", "faults[0].kind=FAULT_KIND_DUPLICATE_GPU", "faults[0].node=6"}},
  };
  for (const Case& c : cases) {
    const fs::path incident = Simulate(c.name, c.sets, 5);
    auto d = engine::Diagnose(incident, {.threads = 2});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_GT(truth_.cascade().secondary_errors(), 100) << c.name;
    EXPECT_EQ(d->cascade().grouped_errors(), truth_.cascade().secondary_errors()) << c.name << ": " << d->reason();
    if (c.name != "pdsh_loss_torch21") {  // there no timeout names its rank
      EXPECT_EQ(d->cascade().secondary_ranks_size(), truth_.cascade().secondary_ranks_size()) << c.name;
    }
  }
  // pdsh at torch 2.1: the timeouts form groups of their own though no rank is known.
  const fs::path pdsh = dir_ / "pdsh_loss_torch21" / "incident";
  auto d = engine::Diagnose(pdsh, {.threads = 2});
  ASSERT_TRUE(d.ok());
  const v1::ErrorGroup* timeouts = Group(*d, "Watchdog caught collective operation timeout");
  ASSERT_NE(timeouts, nullptr);
  EXPECT_EQ(timeouts->ranks(), 0);
}

// A slow NIC (FAULT_KIND_SLOW_NIC): every rank's timers grow alike, so only the port's counters
// (ib_counters.log) name it; in the control run (slowdown 1) the same counter files name nothing.
TEST_F(Network, SlowNicIsNamedFromItsPortCountersAndItsControlRunFromNothing) {
  const fs::path slow = Simulate("slow_nic", {"faults[0].kind=FAULT_KIND_SLOW_NIC", "faults[0].rank=77", "faults[0].slowdown=1.5"}, 8);
  auto d = engine::Diagnose(slow, {.threads = 2});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->initiator().rank(), 77) << d->reason();
  EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_STRAGGLER);
  EXPECT_EQ(d->owner(), v1::OWNER_NETWORK);
  ASSERT_GE(d->evidence_size(), 1);
  EXPECT_NE(d->evidence(0).text().find("mlx5_5/ports/1/counters/symbol_error:"), std::string::npos) << d->evidence(0).text();
  const fs::path control = Simulate("slow_nic_control", {"faults[0].kind=FAULT_KIND_SLOW_NIC", "faults[0].rank=77", "faults[0].slowdown=1"}, 8);
  auto c = engine::Diagnose(control, {.threads = 2});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NE(c->initiator().failure_class(), v1::FAILURE_CLASS_STRAGGLER) << c->reason();
}

// Under srun with NCCL_DEBUG=WARN no line ties a task to its host or GPU; slurmctld's allocation
// (`sched: Allocate ... NodeList=gpu-[0001-0032]`) and srun's block distribution do: the slow
// port's rank is named, not only its node.
TEST_F(Network, SlowNicUnderSrunIsNamedFromTheAllocationOrder) {
  const fs::path slow = Simulate("slow_nic_srun", {"faults[0].kind=FAULT_KIND_SLOW_NIC", "faults[0].rank=77", "faults[0].slowdown=1.5",
                                                   "launcher=LAUNCHER_SRUN", "realism.kernel_logs=true"}, 8);
  auto d = engine::Diagnose(slow, {.threads = 2});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->initiator().rank(), 77) << d->reason();
  EXPECT_EQ(d->initiator().node(), "gpu-0010") << d->reason();
  EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_STRAGGLER);
}

// NET/Socket (FAULT_KIND_SOCKET_RESET): the rank whose sockets were reset is named from the
// socket WARN matrix in NCCL 2.21's wording (peers name its host) and 2.18's (peers name an
// address the WARNs cannot map: its row alone leads).
TEST_F(Network, ResetSocketLinkIsNamedFromTheSocketMatrixInEachNcclShape) {
  for (const std::string version : {"2.21.5", "2.18.5", "2.24.3", "2.26.2", "2.28.9", "2.29.2"}) {
    const std::string nccl = "format.nccl=" + version;
    const fs::path incident = Simulate("socket" + version, {"faults[0].kind=FAULT_KIND_SOCKET_RESET", "faults[0].rank=77", nccl}, 5);
    auto d = engine::Diagnose(incident, {.threads = 2});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->initiator().rank(), 77) << nccl << ": " << d->reason();
    EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_NETWORK) << nccl;
    EXPECT_EQ(d->owner(), v1::OWNER_NETWORK) << nccl;
    ASSERT_GE(d->evidence_size(), 1);
    EXPECT_NE(d->evidence(0).text().find("Connection reset by peer"), std::string::npos) << d->evidence(0).text();
    EXPECT_NE(d->reason().find("socket"), std::string::npos) << d->reason();
  }
}

// A process that dies under NET/Socket leaves its peers each one reset socket naming it: no
// reporter's row stands out, so the socket matrix names none of the victims.
TEST_F(Network, VictimsOfOneDeadPeerAreNotNamed) {
  const fs::path incident = dir_ / "dead_peer";
  auto write = [&](const std::string& host, int rank) {
    fs::create_directories(incident / host);
    std::ofstream(incident / host / ("rank_" + std::to_string(rank) + ".log"))
        << host << ":100:107 [0] misc/socket.cc:64 NCCL WARN socketProgressOpt: Call to recv from 10.64.0.9<41488> failed : "
        << "Connection reset by peer\n";
  };
  write("gpu-0001", 0);
  write("gpu-0002", 8);
  write("gpu-0003", 16);
  auto d = engine::Diagnose(incident, {.threads = 1});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_NE(d->initiator().failure_class(), v1::FAILURE_CLASS_NETWORK) << d->reason();
}

// Both ends of one link report retry exceeded against each other, in NCCL's 2.19+ shape on RoCE
// and on InfiniBand (no GIDs) (the later releases' ` hca mlx5_N` suffix too) and 2.18's (no
// localGid: the two name each other's address): one hot cell. The lines carry no time and no counters say which end failed first,
// so the pair is named (the link, both HCAs where printed), and no rank.
TEST_F(Network, OneBadLinkBetweenTwoNodesNamesThePairNotARank) {
  const std::string v221 =
      " transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {peer}<41488> with status=12 opcode=0 len=0 "
      "vendor err 129 (Send) localGid ::ffff:{self} remoteGids::ffff:{peer}{hca}\n";
  const std::string v221ib =
      " transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {peer}<41488> with status=12 opcode=0 len=0 "
      "vendor err 129 (Send){hca}\n";
  const std::string v218 =
      " transport/net_ib.cc:1335 NCCL WARN NET/IB : Got completion from peer {peer}<41488> with error 12, opcode 0, len 0, "
      "vendor err 129\n";
  // The IB plugin's later wording (nccl-rdma-sharp-plugins' ib_plugin.c): the status and opcode by name.
  const std::string plugin =
      " ib_plugin.c:1615 NCCL WARN NET/IB: Got completion from peer {peer}<41488> with status=IBV_WC_RETRY_EXC_ERR(12) "
      "opcode=IBV_WC_SEND(0) reqSize=0 vendor_err=129 req_type=Send localGid ::ffff:{self} remoteGids::ffff:{peer}{hca}\n";
  for (const auto& [shape, hca] :
       {std::pair{v221, false}, {v221, true}, {v221ib, false}, {v221ib, true}, {v218, false}, {plugin, true}}) {
    const fs::path incident = dir_ / ("link" + std::to_string(shape.size()) + (hca ? "hca" : ""));  // one dir per shape
    auto write = [&](const std::string& host, int rank, const std::string& self, const std::string& peer, const std::string& dev) {
      fs::create_directories(incident / host);
      std::string line = host + ":100:107 [0]" + shape;
      const std::pair<std::string, std::string> subs[] = {
          {"{peer}", peer}, {"{self}", self}, {"{peer}", peer}, {"{hca}", hca ? " hca " + dev : ""}};
      for (const auto& [key, value] : subs) {
        if (const auto at = line.find(key); at != std::string::npos) line.replace(at, key.size(), value);
      }
      std::ofstream(incident / host / ("rank_" + std::to_string(rank) + ".log")) << line;
    };
    write("gpu-0001", 0, "10.64.0.1", "10.64.0.2", "mlx5_0");
    write("gpu-0002", 8, "10.64.0.2", "10.64.0.1", "mlx5_0");
    auto d = engine::Diagnose(incident, {.threads = 1});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->verdict(), v1::VERDICT_DIAGNOSED) << d->reason();
    EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_NETWORK) << d->reason();
    EXPECT_EQ(d->initiator().rank(), -1) << d->reason();
    ASSERT_TRUE(d->has_link()) << d->reason();
    EXPECT_FALSE(d->link().ordered());
    EXPECT_EQ(d->link().node_a(), "gpu-0001");
    EXPECT_EQ(d->link().node_b(), "gpu-0002");
    EXPECT_EQ(d->link().hca_a(), hca ? "mlx5_0" : "");
    ASSERT_GE(d->recovery().preconditions_size(), 1);
    EXPECT_EQ(d->recovery().preconditions(0).action(), "inspect_link");
    EXPECT_NE(d->reason().find("Nothing tells which end failed first"), std::string::npos) << d->reason();
  }
}

// FAULT_KIND_LINK_FAILURE in the simulator: both ends report, every other rank times out. The
// end that failed first is named from the order of the two ends' reports (variant 0: the far
// end's comes seconds later) or, when they come together (variant 1), from the one port whose
// counters err; the link is the truth's. NCCL 2.21 (InfiniBand: no GIDs; RoCE: GIDs) and 2.18 shapes.
TEST_F(Network, BadLinkIsLocalisedAndItsFirstEndNamedInEachNcclShape) {
  for (const std::string shape :
       {"2.21.5", "2.21.5-roce", "2.18.5", "2.26.2", "2.28.9-roce", "2.29.2"}) {
    const std::string version = shape.substr(0, 6);
    const std::string fabric = shape.ends_with("roce") ? "FABRIC_ROCE" : "FABRIC_INFINIBAND";
    for (const char* variant : {"0", "1"}) {
      const std::string name = "link" + shape + "_" + variant;
      const fs::path incident = Simulate(name, {"faults[0].kind=FAULT_KIND_LINK_FAILURE", "faults[0].rank=77",
                                                "faults[0].variant=" + std::string(variant), "format.nccl=" + version,
                                                "format.fabric=" + fabric}, 5);
      auto d = engine::Diagnose(incident, {.threads = 2});
      ASSERT_TRUE(d.ok()) << d.status().message();
      const std::string what = name + ": " + d->reason();
      EXPECT_EQ(d->initiator().rank(), 77) << what;
      EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_NETWORK) << what;
      EXPECT_EQ(d->owner(), v1::OWNER_NETWORK) << what;
      ASSERT_TRUE(d->has_link()) << what;
      EXPECT_TRUE(d->link().ordered()) << what;
      EXPECT_EQ(d->link().rank_a(), 77) << what;
      EXPECT_EQ(d->link().node_a(), "gpu-0010") << what;
      if (std::string(variant) == "1") {
        EXPECT_EQ(d->link().hca_a(), "mlx5_5") << what;
      }
      EXPECT_GT(d->cascade().secondary_ranks_size(), 0) << what;
      std::ifstream truth_file(dir_ / name / "truth.json");
      const std::string truth((std::istreambuf_iterator<char>(truth_file)), std::istreambuf_iterator<char>());
      EXPECT_NE(truth.find("\"node_b\": \"" + d->link().node_b() + "\""), std::string::npos) << truth;
    }
  }
}

// The same bad link with the first end's node missing from the incident (only the victims' logs
// were collected): one rank's status 12 against one peer is all the matrix holds, and which end
// failed first cannot be told from one end. The link is named, no rank: never the far end's rank.
TEST_F(Network, BadLinkSeenFromOneEndNamesTheLinkNotTheRankThatReported) {
  for (const std::string fabric : {"FABRIC_ROCE", "FABRIC_INFINIBAND"}) {
    const std::string name = "oneend_" + fabric;
    const fs::path incident = Simulate(name, {"faults[0].kind=FAULT_KIND_LINK_FAILURE", "faults[0].rank=77",
                                              "faults[0].variant=0", "format.nccl=2.21.5", "format.fabric=" + fabric}, 5);
    fs::remove_all(incident / "gpu-0010");  // rank 77's node
    auto d = engine::Diagnose(incident, {.threads = 2});
    ASSERT_TRUE(d.ok()) << d.status().message();
    const std::string what = name + ": " + d->reason();
    EXPECT_EQ(d->verdict(), v1::VERDICT_DIAGNOSED) << what;
    EXPECT_EQ(d->initiator().rank(), -1) << what;
    EXPECT_EQ(d->initiator().node(), "") << what;
    EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_NETWORK) << what;
    ASSERT_TRUE(d->has_link()) << what;
    EXPECT_FALSE(d->link().ordered()) << what;
    EXPECT_EQ(d->link().node_b(), "") << what;  // the missing end: by its address only
    EXPECT_NE(d->reason().find("seen from one end"), std::string::npos) << what;
    std::ifstream truth_file(dir_ / name / "truth.json");
    const std::string truth((std::istreambuf_iterator<char>(truth_file)), std::istreambuf_iterator<char>());
    EXPECT_NE(truth.find("\"node_b\": \"" + d->link().node_a() + "\""), std::string::npos) << truth;
  }
}

// FAULT_KIND_SOCKET_LINK_FAILURE in the simulator (NCCL_IB_DISABLE=1, NCCL_DEBUG=INFO): the TCP
// path between rank 77 and its peer across nodes resets. Variant 0: only rank 77 sees the reset,
// its peer sees the connection closed once it aborted: the link is named, rank 77 first, from
// the NET/Socket lines' addresses. Variant 1: both ends reset at once: the pair, no rank. NCCL
// 2.21 and 2.18 shapes; the ends' interface is the one their NET/Socket line names.
TEST_F(Network, BadSocketPathIsLocalisedFromTheSocketMatrixInEachNcclShape) {
  for (const std::string version : {"2.21.5", "2.18.5", "2.24.3", "2.26.2", "2.28.9", "2.29.2"}) {
    for (const char* variant : {"0", "1"}) {
      const std::string name = "socklink" + version + "_" + variant;
      const fs::path incident = Simulate(name, {"faults[0].kind=FAULT_KIND_SOCKET_LINK_FAILURE", "faults[0].rank=77",
                                                "faults[0].variant=" + std::string(variant), "format.nccl=" + version,
                                                "format.nccl_debug_info=true"}, 5);
      auto d = engine::Diagnose(incident, {.threads = 2});
      ASSERT_TRUE(d.ok()) << d.status().message();
      const std::string what = name + ": " + d->reason();
      const bool ordered = std::string(variant) == "0";
      EXPECT_EQ(d->initiator().rank(), ordered ? 77 : -1) << what;
      EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_NETWORK) << what;
      EXPECT_EQ(d->owner(), v1::OWNER_NETWORK) << what;
      ASSERT_TRUE(d->has_link()) << what;
      EXPECT_EQ(d->link().ordered(), ordered) << what;
      EXPECT_EQ(truth_.link().ordered(), ordered);
      EXPECT_EQ(d->link().node_a(), truth_.link().node_a()) << what;
      EXPECT_EQ(d->link().node_b(), truth_.link().node_b()) << what;
      EXPECT_EQ(d->link().hca_a(), "ib0") << what;
      EXPECT_EQ(d->link().hca_b(), "ib0") << what;
      ASSERT_GE(d->recovery().preconditions_size(), 1);
      EXPECT_EQ(d->recovery().preconditions(0).action(), "inspect_link");
      EXPECT_NE(d->reason().find("socket transport"), std::string::npos) << what;
      ASSERT_GE(d->evidence_size(), 2);
      EXPECT_NE(d->evidence(0).text().find("Connection reset by peer"), std::string::npos) << d->evidence(0).text();
    }
  }
}

// Hand-written NET/Socket shapes: rank 0 (gpu-0001) had its connection to 10.64.0.2 reset; the
// NET/Socket lines place that address on gpu-0002, whose rank 8 saw its connection to gpu-0001
// closed, as did rank 16 on gpu-0003 (gpu-0001's other link closed, it did not reset): one
// bad path, rank 0 first. In NCCL 2.18-2.21's wording and 2.14-2.17's (`Net :`, the closing peer
// named by address where no reverse lookup resolves). Without the interface lines the address
// places nothing, and no link is named; a reset on two paths is a NIC's row, not a link.
TEST_F(Network, SocketPathNeedsTheInterfaceLinesAndOneResetPeer) {
  struct Shape {
    std::string reset, closed;
  };
  const Shape shapes[] = {
      {" misc/socket.cc:30 NCCL WARN socketProgressOpt: Call to recv from {peer}<41488> failed : Connection reset by peer\n",
       " misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer {peer}<56560>\n"},
      {" misc/socket.cc:518 NCCL WARN Net : Call to recv from {peer}<41488> failed : Connection reset by peer\n",
       " misc/socket.cc:521 NCCL WARN Net : Connection closed by remote peer {peer}<56560>\n"},
  };
  auto fill = [](std::string line, const std::string& peer) { return line.replace(line.find("{peer}"), 6, peer); };
  int n = 0;
  for (const Shape& shape : shapes) {
    for (const int kind : {0, 1, 2}) {  // 0: one path; 1: no interface lines; 2: two paths reset
      const fs::path incident = dir_ / ("sockpath" + std::to_string(n++));
      auto write = [&](const std::string& host, int rank, const std::string& text) {
        fs::create_directories(incident / host);
        std::ofstream out(incident / host / ("rank_" + std::to_string(rank) + ".log"));
        const std::string ip = "10.64.0." + std::to_string(rank / 8 + 1);
        if (kind != 1) out << host << ":100:100 [0] NCCL INFO NET/Socket : Using [0]ib0:" << ip << "<0>\n";
        out << text;
      };
      const std::string reset = "gpu-0001:100:107 [0]" + fill(shape.reset, "10.64.0.2") +
                                (kind == 2 ? "gpu-0001:100:107 [0]" + fill(shape.reset, "10.64.0.3") : "");
      write("gpu-0001", 0, reset);
      write("gpu-0002", 8, "gpu-0002:100:107 [0]" + fill(shape.closed, "gpu-0001"));
      write("gpu-0003", 16, "gpu-0003:100:107 [0]" + fill(shape.closed, "10.64.0.1"));
      auto d = engine::Diagnose(incident, {.threads = 1});
      ASSERT_TRUE(d.ok()) << d.status().message();
      const std::string what = std::to_string(kind) + ": " + d->reason();
      EXPECT_EQ(d->initiator().failure_class(), v1::FAILURE_CLASS_NETWORK) << what;
      EXPECT_EQ(d->initiator().rank(), 0) << what;
      ASSERT_EQ(d->has_link(), kind == 0) << what;
      if (kind != 0) continue;
      EXPECT_TRUE(d->link().ordered()) << what;
      EXPECT_EQ(d->link().node_a(), "gpu-0001");
      EXPECT_EQ(d->link().node_b(), "gpu-0002");
      EXPECT_EQ(d->link().rank_b(), 8);
      EXPECT_EQ(d->link().hca_a(), "ib0");
      EXPECT_NE(d->reason().find("only its connection was reset"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace denpex
