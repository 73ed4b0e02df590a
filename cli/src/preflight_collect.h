// `denpex preflight --collect DIR`: this node's health tools' outputs into DIR/<host>/
// (docs/preflight.md, "Collecting").
#pragma once

#include <iosfwd>

#include "denpex/cli/commands.h"

namespace denpex::cli {

// Runs nvidia-smi -q, nvidia-smi topo -m, ibstat, dmesg and (args.dcgm_level > 0) dcgmi diag
// -j, each with a time limit, into args.collect/<host>/; a tool not on PATH is skipped and
// said so. kExitBadInput when none ran.
int RunPreflightCollect(const PreflightArgs& args, std::ostream& out, std::ostream& err);

}  // namespace denpex::cli
