// `denpex freeze`: the subcommand around freeze/freeze.h (docs/freeze.md).
#include <ostream>

#include "denpex/cli/commands.h"
#include "denpex/common/status.h"
#include "freeze/freeze.h"

namespace denpex::cli {

int RunFreeze(const FreezeArgs& args, std::ostream& out, std::ostream& err) {
  const auto fail = [&](const Status& st) {
    err << "denpex freeze: " << st.message() << "\n";
    return ExitCodeFor(st);
  };
  if (args.confirm) {
    if (!args.out.empty())
      return fail(
          Status::InvalidArgument("--confirm takes the entry itself; --out is for a new freeze"));
    freeze::ConfirmOptions o{.entry = args.path,
                             .map = args.map,
                             .owner = args.owner,
                             .failure_class = args.failure_class,
                             .rank = args.rank,
                             .node = args.node,
                             .checkpoint = args.checkpoint,
                             .resumed_from = args.resumed_from,
                             .recovery = args.recovery,
                             .operator_minutes = args.operator_minutes,
                             .investigation_started = args.investigation_started,
                             .investigation_ended = args.investigation_ended,
                             .process_owner = args.process_owner,
                             .process_failure_class = args.process_failure_class,
                             .notes = args.notes};
    if (const Status st = freeze::Confirm(o); !st.ok()) return fail(st);
    out << (args.path / "expected.json").string() << ": confirmed\n";
    return kExitOk;
  }
  if (args.out.empty())
    return fail(Status::InvalidArgument("--out CORPUS/<name>: the entry to create is required"));
  auto r = freeze::Freeze({.incident = args.path,
                           .entry = args.out,
                           .map = args.map,
                           .threads = args.threads,
                           .drafted_by = "denpex freeze " DENPEX_VERSION});
  if (!r.ok()) return fail(r.status());
  out << "froze " << args.path.string() << " into " << args.out.string() << ": " << r->files
      << " files, " << r->replacements << " names replaced\n";
  out << "  names found:";
  for (const auto& [kind, n] : r->names) {
    if (n > 0) out << " " << kind << " " << n;
  }
  out << "\n  map (keep it private; never inside the entry): " << r->map.string() << "\n";
  for (const std::string& s : r->not_anonymised) err << "  NOT ANONYMISED: " << s << "\n";
  for (const std::string& s : r->notes) out << "  note: " << s << "\n";
  out << "  expected.json: a draft from the engine's diagnosis; confirm or correct it with\n"
      << "    denpex freeze --confirm " << args.out.string()
      << " [--owner O] [--class C] [--rank R] [--node N] ...\n";
  if (!r->diagnosis_identical) {
    err << "denpex freeze: the frozen copy's diagnosis differs from the original's once its names "
           "are mapped back:\n"
        << r->difference << "\n";
    return kExitBadInput;
  }
  out << "  the frozen copy's diagnosis equals the original's (names mapped back)\n";
  return kExitOk;
}

}  // namespace denpex::cli
