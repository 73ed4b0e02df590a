// `denpex preflight --from DIR`: judges health and fabric tools' outputs that were already
// collected, one folder per node (docs/preflight.md), before an expensive run.
//
//   auto r = engine::PreflightFrom("/shared/preflight/2026-12-04");
//   std::cout << engine::RenderPreflightText(*r);   // r->exclude: `gpu-[0041,0043]`
//
// Every file under a node's folder is tried by every reader and recognised by its lines, never
// its name: `nvidia-smi -q` (and the table, `-L`, `dcgmi diag` text), `nvidia-smi topo -m`,
// `ibstat`, `dcgmi diag -j`, nccl-tests output. Files directly in DIR belong to no node (a
// multi-node nccl-tests run names its hosts itself). A node is judged against the allocation:
// what most nodes show is the norm, and a node that differs from it is named with both values.
// Read-only; no link is followed, special files are skipped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/v1/preflight.pb.h"

namespace denpex::engine {

struct PreflightOptions {
  // A nccl-tests run whose bus bandwidth at its largest message is below this share of the
  // median of the runs of its shape (test, node count, rank count, largest message) is slow.
  double busbw_floor = 0.8;
  // The node/GPU history store (docs/history_format.md); empty: none. A node with two or more
  // earlier hardware incidents there fails (a repeat offender, as `denpex diagnose --history`
  // drains it); with one, it is a warning.
  std::filesystem::path history;
  // Files larger than this are skipped and named in `problems`: a node's tool output is
  // kilobytes, a pdsh collection of 2,048 nodes' `nvidia-smi -q` about 160 MB.
  std::uint64_t max_file_bytes = 1ull << 30;
};

// kNotFound when DIR does not exist, kInvalidInput when it is not a directory or holds no
// folder and no file any reader recognises.
Result<v1::PreflightReport> PreflightFrom(const std::filesystem::path& dir,
                                          const PreflightOptions& options = {});

// The report as `denpex preflight` prints it: the verdict, each failed node's findings with
// their evidence, the warnings, the exclude list.
std::string RenderPreflightText(const v1::PreflightReport& report);

// The fabric probes' plan (`denpex preflight --fabric`, docs/preflight.md "Fabric"): rounds of
// probe groups run at the same time, no node in two groups of one round. Each node alone
// (`node_round`: its ranks talk inside the node), then each node with the next in the given
// order, the ring closed (two rounds, three when the count is odd): a slow node is slow in both
// of its pairs, a slow link in one; N nodes take N pair probes where testing every pair apart
// takes N(N-1)/2.
struct FabricRound {
  std::string name;                              // `node`, `pairs-1`, `pairs-2`, `pairs-3`
  std::vector<std::vector<std::string>> groups;  // each group's nodes; the first holds rank 0
};
std::vector<FabricRound> PlanFabric(const std::vector<std::string>& nodes, bool node_round);
// Probes and rounds that every pair of N nodes apart needs: N(N-1)/2 probes, in N-1 rounds (N
// even) or N (odd), at most N/2 pairs at a time.
struct ProbeCost {
  std::int64_t probes = 0;
  std::int64_t rounds = 0;
};
ProbeCost EveryPairCost(std::int64_t nodes);

// The first line `denpex preflight --fabric` writes into each probe's output file:
// `# denpex fabric probe: round=pairs-1 nodes=gpu-0001,gpu-0002 launcher=srun ranks_per_node=8
// status=exited with code 1`. `status` is `ok` or why the probe did not finish (to the end of the
// line). `--from` reads it back, so a folder judged again later gives the same answer.
struct FabricProbeHeader {
  std::string round;
  std::vector<std::string> nodes;
  std::string launcher;
  std::int32_t ranks_per_node = 0;
  std::string status;
  std::int32_t line = 0;  // 1-based, where it was read
};
// nullopt when none of the text's first five lines is one.
std::optional<FabricProbeHeader> ParseFabricProbeHeader(std::string_view text);
std::string FormatFabricProbeHeader(const FabricProbeHeader& h);

// `gpu-[0001-0003,0007],login1` -> gpu-0001, gpu-0002, gpu-0003, gpu-0007, login1 (Slurm's host
// list syntax, zero padding kept); empty when malformed or past 65,536 hosts.
std::vector<std::string> ExpandSlurmHostList(std::string_view list);

// Host names in Slurm's host list syntax, sorted: `gpu-[0041,0043-0045],login1`. Numeric
// suffixes keep their zero padding; names that differ in padding are not merged.
std::string SlurmHostList(std::vector<std::string> hosts);

}  // namespace denpex::engine
