// `tpusim compare MODEL.hlo [--config C] [--set k=v] [--replicas N] [--repeat R] [--threads T]
// [--seed S] [--top K] [--no-anchor] [--no-check] [--timing-only] [--mxu-model fast|pe]
// [--max-cycles N] [--max-seconds S] [--json] [--csv OPS.csv] [--out COMPARE.json]`: the simulated
// TPU time (1 core and all cores) beside the measured CPU time of the same module on this host, per
// step and per op, with speedups and the host's own GEMM and memory-bandwidth anchor. The logic and
// its definitions are in driver/compare.h. Exit 0 ok, 1 the all-cores run's value check
// failed (the outputs are still written), 2 bad input.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "common/file_util.h"
#include "driver/compare.h"
#include "driver/limits.h"
#include "driver/logging.h"
#include "driver/provenance.h"
#include "hlo/load.h"
#include "tools/tpusim/cli_util.h"
#include "tools/tpusim/commands.h"

namespace tpusim::cli {

void RegisterCompareCommand(CLI::App& app) {
  struct Args {
    std::string model;
    ConfigOptions config;
    driver::CompareOptions compare;
    std::string csv, out;
    SimulatorOptions simulator;
    bool json = false;
    bool no_anchor = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "simulated TPU time (1 core, all cores) beside the measured CPU time, per op");
  cmd->add_option("model", args->model, "HLO text file (XLA dump)")->required();
  args->config.AddTo(cmd);
  cmd->add_option("--replicas", args->compare.replicas,
                  "replicas of a data-parallel step (default: the module's replica_count, else 1)")
      ->check(DeviceCount());
  cmd->add_option("--repeat", args->compare.repeat, "timed CPU runs after one warm-up (default 5)")
      ->check(IntegerOf<int>(1));
  cmd->add_option("--threads", args->compare.threads,
                  "CPU threads (default: all hardware threads)")
      ->check(IntegerOf<int>(0));
  cmd->add_option("--seed", args->compare.seed, "seed of the deterministic inputs");
  cmd->add_option("--top", args->compare.top, "rows of each top-ops table (default 8)")
      ->check(IntegerOf<int>(0));
  cmd->add_flag("--no-anchor", args->no_anchor, "skip the CPU GEMM / memory-bandwidth anchor");
  AddOnOffFlags(cmd, "check", &args->compare.check,
                "check the all-cores run's values against the CPU evaluator (the default)",
                "do not check the values");
  cmd->add_flag("--timing-only", args->compare.timing_only,
                "simulate cycles only (the CPU still computes values: it is being timed)");
  args->simulator.AddTo(cmd, &args->compare.sim);
  cmd->add_flag("--json", args->json, "print the JSON instead of the tables");
  cmd->add_option("--out", args->out, "also write the JSON to this file");
  cmd->add_option("--csv", args->csv, "write the per-op table as CSV");
  cmd->callback([args] {
    OutputSet outputs;  // written together after a complete run, or not at all
    if (!args->out.empty()) OrFail(outputs.Declare("--out", args->out));
    if (!args->csv.empty()) OrFail(outputs.Declare("--csv", args->csv));
    driver::SetPhase("parse and verify");
    std::unique_ptr<hlo::HloModule> module = LoadModuleOrFail(args->model).module;
    config::ChipConfig chip = args->config.Load();
    driver::CompareOptions options = args->compare;
    // Range errors here and in driver::RunCompare name the flag (CLI11 2.1's range messages print
    // DBL_MAX).
    if (options.sim.max_seconds < 0) {
      Fail(InvalidArgument(
          fmt::format("--max-seconds must be >= 0, got {:g}", options.sim.max_seconds)));
    }
    if (options.top < 0)
      Fail(InvalidArgument(fmt::format("--top must be >= 0, got {}", options.top)));
    options.anchor = !args->no_anchor;
    args->simulator.ApplyTo(options.sim);
    options.sim.progress = driver::SimProgressPrinter("simulating " + args->model);
    driver::CompareResult r = OrFail(driver::RunCompare(*module, args->model, chip, options));
    const Json json = driver::WithProvenance(driver::CompareJson(r), chip);
    if (!args->out.empty()) outputs.Set("--out", json.Dump());
    if (!args->csv.empty()) outputs.Set("--csv", driver::CompareOpsCsv(r));
    OrFail(outputs.Commit());
    if (args->json) {
      std::cout << json.Dump() << "\n";
    } else if (driver::ChattyOutput()) {
      std::cout << driver::CompareText(r, options.top);
    }
    if (r.check.performed && !r.check.passed) {
      throw CLI::RuntimeError(ExitCodeFor(StatusCode::kCheckFailed));
    }
  });
}

}  // namespace tpusim::cli
