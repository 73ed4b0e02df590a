// `denpex eval --preflight`: preflight scenarios simulated, judged and scored (docs/evaluation.md,
// "Preflight").
#pragma once

#include <iosfwd>

#include "denpex/cli/commands.h"

namespace denpex::cli {

// Simulates each scenario of args.scenarios (files or directories of preflight scenarios) at
// args.seeds seeds from its own, runs `denpex preflight --from` on each cluster and prints, per
// injected fault kind, how often the faulty nodes were failed and how many healthy ones were.
int RunPreflightEval(const EvalArgs& args, std::ostream& out, std::ostream& err);

}  // namespace denpex::cli
