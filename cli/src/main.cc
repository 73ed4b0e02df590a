// `denpex`: flag parsing only. Every subcommand is one call into denpex_cli_lib.
#include <CLI/CLI.hpp>

#include <iostream>

#include "denpex/cli/commands.h"
#include "denpex/common/status.h"

namespace {
constexpr const char* kExitCodes =
    "Exit codes: 0 success (an INCONCLUSIVE verdict is a success), 2 usage error, "
    "3 unreadable or invalid input, 1 internal error.";
}

int main(int argc, char** argv) {
  using namespace denpex::cli;
  CLI::App app{"denpex: find patient zero of a failed distributed training job"};
  app.footer(kExitCodes);
  app.require_subcommand(1);
  app.set_version_flag("--version", "denpex 0.1.0");
  int rc = denpex::kExitOk;

  SimulateArgs sim_args;
  auto* sim = app.add_subcommand("simulate", "Simulate a scenario: DIR/incident (logs) and DIR/truth.json");
  sim->add_option("scenario", sim_args.scenario, "Scenario file (.textproto)")->required();
  sim->add_option("--out", sim_args.out, "Output directory")->required();
  sim->add_option("--seed", sim_args.seed, "Seed (overrides the scenario's)");
  sim->add_option("--set", sim_args.overrides, "Override a field: --set job.nodes=64 (repeatable)");
  sim->footer(kExitCodes);
  sim->callback([&] { rc = RunSimulate(sim_args, std::cout, std::cerr); });

  DiagnoseArgs diag_args;
  auto* diag = app.add_subcommand("diagnose", "Diagnose an incident directory (never modifies it)");
  diag->add_option("incident", diag_args.incident, "Incident directory")->required();
  diag->add_option("--json", diag_args.json, "Write the diagnosis JSON here (outside the incident)");
  diag->add_option("--strategy", diag_args.strategy, "engine | first-error (baseline)")
      ->capture_default_str();
  diag->add_option("--threads", diag_args.threads, "Worker threads (0 = all cores)")->capture_default_str();
  diag->footer(kExitCodes);
  diag->callback([&] { rc = RunDiagnose(diag_args, std::cout, std::cerr); });

  ScoreArgs score_args;
  auto* score = app.add_subcommand("score", "Score a diagnosis against ground truth");
  score->add_option("--truth", score_args.truth, "truth.json")->required();
  score->add_option("--diagnosis", score_args.diagnosis, "diagnosis JSON")->required();
  score->add_option("--json", score_args.json, "Write the score JSON here");
  score->footer(kExitCodes);
  score->callback([&] { rc = RunScore(score_args, std::cout, std::cerr); });

  EvalArgs eval_args;
  auto* eval = app.add_subcommand("eval", "Simulate, diagnose and score scenarios; print a table");
  eval->add_option("scenarios", eval_args.scenarios, "Scenario files or directories")->required();
  eval->add_option("--seeds", eval_args.seeds, "Seeds per scenario (seed, seed+1, ...)")->capture_default_str();
  eval->add_option("--json", eval_args.json, "Write the report JSON here");
  eval->add_option("--work-dir", eval_args.work_dir, "Keep the simulated incidents here");
  eval->add_option("--strategies", eval_args.strategies, "Strategies to compare")->capture_default_str();
  eval->footer(kExitCodes);
  eval->callback([&] { rc = RunEval(eval_args, std::cout, std::cerr); });

  DemoArgs demo_args;
  auto* demo = app.add_subcommand("demo", "The embedded default: simulate 4,096 ranks with one "
                                          "SIGKILLed rank, diagnose, score");
  demo->add_option("--out", demo_args.out, "Where to write the incident")->capture_default_str();
  demo->footer(kExitCodes);
  demo->callback([&] { rc = RunDemo(demo_args, std::cout, std::cerr); });

  RunArgs run_args;
  auto* run = app.add_subcommand("run",
                                 "Run a training command and collect its output, identity and exit "
                                 "into an incident directory: denpex run --out DIR -- COMMAND...");
  run->add_option("--out", run_args.out, "Incident directory (DIR/<host>/rank_<R>.log, ...)")
      ->required();
  run->add_option("--max-bytes", run_args.max_bytes, "Cap of each task's log, e.g. 64MiB (0: none)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  run->add_option("--rank-env", run_args.rank_env,
                  "Variables that may hold the global rank, first set wins")
      ->capture_default_str();
  run->add_option("--host", run_args.host, "Name of the node directory (default: the host name)");
  run->add_flag("--no-tee", run_args.no_tee, "Do not copy the command's output to the console");
  run->add_flag("--no-kernel-log", run_args.no_kernel_log,
                "Do not read the kernel log (/dev/kmsg)");
  run->add_flag("--no-nvidia-smi", run_args.no_nvidia_smi,
                "Do not take an nvidia-smi snapshot at the end");
  run->add_option("command", run_args.command, "The command and its arguments, after --")
      ->required();
  run->footer(
      "Exit code: the command's (or its signal); 126/127 when it cannot be started, 2 usage error, "
      "3 when DIR cannot be written.");
  run->callback([&] { rc = RunRun(run_args, std::cout, std::cerr); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return denpex::kExitUsage;
  }
  return rc;
}
