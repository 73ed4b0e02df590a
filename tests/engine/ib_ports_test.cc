// A slow NIC from the nodes' IB port counters (`cat` of /sys/class/infiniband/*/ports/1/*).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "denpex/engine/engine.h"
#include "fixture.h"
#include "diagnose_ok.h"

namespace denpex::engine {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// One node's counters, 8 ports; on `slow` mlx5_4 runs at half rate, flaps and waits long.
std::string Counters(bool slow) {
  std::string out;
  auto port = [](int d) { return "/sys/class/infiniband/mlx5_" + std::to_string(d) + "/ports/1/"; };
  for (int d = 0; d < 8; ++d) {
    out += port(d) + (slow && d == 4 ? "rate:200 Gb/sec (4X HDR)\n" : "rate:400 Gb/sec (4X NDR)\n");
  }
  for (int d = 0; d < 8; ++d) out += port(d) + "state:4: ACTIVE\n";
  for (int d = 0; d < 8; ++d) out += port(d) + "counters/symbol_error:" + (slow && d == 4 ? "39374\n" : "0\n");
  for (int d = 0; d < 8; ++d) out += port(d) + "counters/link_downed:" + (slow && d == 4 ? "2\n" : "0\n");
  for (int d = 0; d < 8; ++d) {
    out += port(d) + "counters/port_xmit_wait:" + (slow && d == 4 ? "418310314\n" : std::to_string(2827657 + d * 1000) + "\n");
  }
  return out;
}

void Write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

using testing::DiagnoseOk;

TEST(SlowPort, NamesTheNodeWhoseCountersStandOut) {
  TempDir tmp;
  Write(tmp.path() / "gpu-0001/ib_counters.log", Counters(false));
  Write(tmp.path() / "gpu-0002/ib_counters.log", Counters(true));
  Write(tmp.path() / "gpu-0003/ib_counters.log", Counters(false));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().node(), "gpu-0002") << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_STRAGGLER) << d.reason();
}

// Every node's counters under one host name (a collector that named them all alike): the slow
// port's machine is not known, and the first rank with its GPU is no answer.
TEST(SlowPort, NoPortNamedWhenOneHostNameHoldsSeveralMachinesCounters) {
  TempDir tmp;
  Write(tmp.path() / "host-0/ib_counters-1.log", Counters(false));
  Write(tmp.path() / "host-0/ib_counters-2.log", Counters(true));
  Write(tmp.path() / "host-0/ib_counters-3.log", Counters(false));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_NE(d.verdict(), v1::VERDICT_DIAGNOSED) << d.reason();
  EXPECT_EQ(d.initiator().node(), "") << d.reason();
}

// The counters are known by what they hold, not by their file's name; a logrotate'd copy's pieces
// (each holding some of the counters, the oldest gzipped) are one node's counters.
TEST(SlowPort, CountersAreReadUnderAnyNameAndAcrossARotatedFilesPieces) {
  TempDir tmp;
  Write(tmp.path() / "gpu-0001/a3f9c2.log", Counters(false));
  const std::string slow = Counters(true);
  const std::size_t third = slow.find('\n', slow.size() / 3) + 1,
                    two_thirds = slow.find('\n', 2 * slow.size() / 3) + 1;
  Write(tmp.path() / "gpu-0002/snapshot.txt.1", slow.substr(0, third));
  Write(tmp.path() / "gpu-0002/snapshot.txt.2", slow.substr(third, two_thirds - third));
  Write(tmp.path() / "gpu-0002/snapshot.txt", slow.substr(two_thirds));
  Write(tmp.path() / "gpu-0003/0be1d7.log", Counters(false));
  const v1::Diagnosis d = DiagnoseOk(tmp.path());
  EXPECT_EQ(d.initiator().node(), "gpu-0002") << d.reason();
  EXPECT_EQ(d.initiator().failure_class(), v1::FAILURE_CLASS_STRAGGLER) << d.reason();
}

}  // namespace
}  // namespace denpex::engine
