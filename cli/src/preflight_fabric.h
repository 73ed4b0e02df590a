// `denpex preflight --fabric DIR`: runs the fabric probes across the allocation through its
// launcher, round by round (engine::PlanFabric), writes each probe's output into DIR and judges
// DIR as `--from` does (docs/preflight.md, "Fabric").
#pragma once

#include <iosfwd>

#include "denpex/cli/commands.h"
#include "denpex/v1/preflight.pb.h"

namespace denpex::cli {

// kExitUsage for a bad node list or launcher, kExitBadInput when DIR cannot be written;
// otherwise the judgement's exit code (kExitOk, kExitPreflightFail).
int RunPreflightFabric(const PreflightArgs& args, std::ostream& out, std::ostream& err);

// Prints the report (text; none when --json is `-`), writes --json and --exclude-file, and
// returns the verdict's exit code: what --from and --fabric end with (commands.cc).
int WritePreflightReport(const PreflightArgs& args, const v1::PreflightReport& report,
                         std::ostream& out, std::ostream& err);

}  // namespace denpex::cli
