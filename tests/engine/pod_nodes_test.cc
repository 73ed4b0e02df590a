// Kubernetes pods to nodes (docs/log_formats.md §24): from what `kubectl describe pod` and the
// scheduler's events say, never from file names. Hand-written incidents, real kubectl shapes.
#include <gtest/gtest.h>

#include <string>

#include "fixture.h"
#include "ingest/load.h"

namespace denpex::engine {
namespace {
using testing::Write;

std::string Describe(const std::string& pod, const std::string& node, const std::string& reason) {
  return "Name:             " + pod + "\nNamespace:        training\nPriority:         0\nService Account:  default\n"
         "Node:             " + node + "/10.128.0.9\nStart Time:       Mon, 02 Mar 2026 08:59:20 +0000\n"
         "Labels:           training.kubeflow.org/replica-type=worker\nStatus:           Failed\n"
         "Controlled By:    PyTorchJob/llama3-70b\nContainers:\n  pytorch:\n    State:          Terminated\n"
         "      Reason:       " + reason + "\n      Exit Code:    137\n    Restart Count:  0\n"
         "Conditions:\n  Type              Status\n  Ready             False\nEvents:            <none>\n";
}

// The node of the events of `kind` (their node names, in event order).
std::vector<std::string> NodesOf(const Incident& inc, Kind kind) {
  std::vector<std::string> out;
  for (const Event& e : inc.events) {
    if (e.kind == kind) out.push_back(e.node < 0 ? "?" : inc.nodes[e.node]);
  }
  return out;
}

// `kubectl describe pods` of a whole job in one file, then the kubelet's log lines and kernel
// lines of other nodes after it (a collection merged into one file): each block's container
// status is its own `Name:`/`Node:`'s, none is the file's.
TEST(PodNodes, EachDescribeBlockInOneFileIsItsOwnPodsNode) {
  testing::TempDir dir;
  Write(dir.path() / "incident.log",
        Describe("llama3-70b-worker-19", "gpu-0021", "Error") + "\n" +
            Describe("llama3-70b-worker-82", "gpu-0084", "OOMKilled") +
            "Jan 21 10:34:14 gpu-0021 kernel: [    0.000000] Linux version 5.15.0-105-generic\n");
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  EXPECT_EQ(NodesOf(*inc, Kind::kOomKilled), std::vector<std::string>{"gpu-0084"});
  EXPECT_EQ(NodesOf(*inc, Kind::kRestartCount), (std::vector<std::string>{"gpu-0021", "gpu-0084"}));
}

// Opaque file names (a renamed collection): the pod log's NCCL `host:pid:tid` prints the pod's
// hostname (a JobSet pod's name without its 5-character suffix), the describe's `Name:` ties
// that pod to its node.
TEST(PodNodes, PodLogTakesTheNodeItsDescribeNamesByContent) {
  testing::TempDir dir;
  Write(dir.path() / "a1/0f3e.txt", Describe("llama-workers-0-76-x7k2p", "gpu-0077", "Error"));
  Write(dir.path() / "b2/9c1d.log",
        "llama-workers-0-76:31247:31247 [3] NCCL INFO comm 0x55d0c8a4e0 rank 611 nranks 1024 cudaDev 3 nvmlDev 3 "
        "busId 5d000 commId 0x8d8c0a1b2c3d4e5f - Init COMPLETE\n");
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  for (const LogFile& f : inc->files) {
    EXPECT_EQ(f.node < 0 ? "?" : inc->nodes[f.node], "gpu-0077") << f.path;
  }
  EXPECT_EQ(inc->nodes, std::vector<std::string>{"gpu-0077"});
}

// A JobSet recreated its gang elsewhere: the gone pod and the new one share a hostname but ran on
// two nodes. The hostname names neither: no line of its log is placed on a node it may not be.
TEST(PodNodes, HostnameOfPodsOnTwoNodesNamesNeither) {
  testing::TempDir dir;
  Write(dir.path() / "a1/0f3e.txt", Describe("llama-workers-0-76-dcmdb", "gpu-0077", "Error"));
  Write(dir.path() / "c3/events.txt",
        "LAST SEEN   TYPE      REASON      OBJECT                          MESSAGE\n"
        "3m42s       Normal    Scheduled   pod/llama-workers-0-76-dkwjq    Successfully assigned "
        "training/llama-workers-0-76-dkwjq to gpu-0012\n");
  Write(dir.path() / "b2/9c1d.log",
        "llama-workers-0-76:31247:31247 [3] NCCL INFO comm 0x55d0c8a4e0 rank 611 nranks 1024 cudaDev 3 nvmlDev 3 "
        "busId 5d000 commId 0x8d8c0a1b2c3d4e5f - Init COMPLETE\n");
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  for (const LogFile& f : inc->files) {
    if (f.path != "b2/9c1d.log") continue;
    const std::string node = f.node < 0 ? "?" : inc->nodes[f.node];
    EXPECT_NE(node, "gpu-0077");
    EXPECT_NE(node, "gpu-0012");
  }
}

}  // namespace
}  // namespace denpex::engine
