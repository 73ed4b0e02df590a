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
#include <string>
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

// Host names in Slurm's host list syntax, sorted: `gpu-[0041,0043-0045],login1`. Numeric
// suffixes keep their zero padding; names that differ in padding are not merged.
std::string SlurmHostList(std::vector<std::string> hosts);

}  // namespace denpex::engine
