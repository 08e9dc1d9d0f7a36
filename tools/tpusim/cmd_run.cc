// `tpusim run MODEL.hlo [--config C] [--set k=v] [--replicas N] [--partitions P] [--report R.json]
// [--csv OPS.csv] [--trace T.json [--trace-max-events N] [--trace-window START:END]]
// [--check|--no-check] [--timing-only] [--max-check-bytes B]
// [--max-check-traffic B] [--seed S] [--scaling 1,2,4,8] [--no-megacore]
// [--custom-call-cost TARGET=CYCLES] [--trip-count NAME=N] [--unroll-budget N]
// [--mxu-model fast|pe] [--max-cycles N]
// [--max-seconds S] [--dump-after PASS] [--steps N] [--host-input] [--host-input-params LIST]
// [--json]`: the main job. Compiles the module for the chip, simulates it cycle by cycle and checks
// every output against the CPU evaluator (driver/run_module.h). Exit 0 ok, 1 the check failed
// (the report is still written), 2 bad input, 3 internal error. The outputs are written together,
// and only after a complete run (common/output_set.h).
#include <iostream>
#include <memory>

#include "common/file_util.h"
#include "driver/host_loop.h"
#include "driver/limits.h"
#include "driver/logging.h"
#include "driver/provenance.h"
#include "driver/run_module.h"
#include "driver/run_report.h"
#include "driver/scaling.h"
#include "hlo/load.h"
#include "hlo/parser.h"
#include "sim/report/report.h"
#include "tools/tpusim/cli_util.h"
#include "tools/tpusim/commands.h"
#include "tools/tpusim/trace_output.h"

namespace tpusim::cli {

namespace {

// The options of `tpusim run`, as parsed.
struct RunArgs {
  std::string model;
  ConfigOptions config;
  driver::RunOptions run;
  std::string report, csv;
  SimulatorOptions simulator;
  TraceArgs trace;
  bool no_check = false;
  std::vector<std::string> custom_call_costs;
  std::vector<std::string> trip_counts;
  int64_t partitions = 0;
  bool json = false;
  std::string scaling;
  int64_t steps = 0;
  bool host_input = false;
  std::vector<int64_t> host_input_params;
};

void AddRunOptions(CLI::App* cmd, RunArgs* args) {
  cmd->add_option("model", args->model, "HLO text file (XLA dump)")->required();
  args->config.AddTo(cmd);
  cmd->add_option("--replicas", args->run.replicas,
                  "cores running the module (default: the module's replica_count, else 1)")
      ->check(DeviceCount());
  cmd->add_option("--partitions", args->partitions,
                  "SPMD partitions: split a module whose sharding= annotations XLA has not "
                  "partitioned yet over N devices (default: the module's num_partitions)")
      ->check(DeviceCount());
  cmd->add_option("--scaling", args->scaling,
                  "run at each of these core counts (e.g. 1,2,4,8) and print the scaling table");
  cmd->add_option("--steps", args->steps,
                  "model a training loop of N steps with its host side: host CPU, PCIe infeed / "
                  "outfeed and device, pipelined (driver/host_loop.h; config keys host.*)")
      ->check(IntegerOf<int64_t>(0));
  CLI::Option* host_input =
      cmd->add_flag("--host-input", args->host_input,
                    "the step's input batch crosses PCIe into HBM every step (infeed, as "
                    "ParallelLoader feeds it); implies --steps 1 when --steps is not given");
  cmd->add_option("--host-input-params", args->host_input_params,
                  "parameter numbers of the batch (default: parameters whose shape matches no "
                  "output, i.e. not weights or optimizer state); needs --host-input")
      ->delimiter(',')
      ->needs(host_input);
  cmd->add_option("--report", args->report, "write the JSON report (docs/report-schema.md)");
  cmd->add_option("--csv", args->csv, "write the per-HLO-op table as CSV");
  args->trace.AddTo(cmd);
  AddOnOffFlags(cmd, "check", &args->run.check,
                "compare every output with the CPU evaluator (the default, when the values fit: "
                "--max-check-bytes, --max-check-traffic)",
                "do not compute the check's reference values");
  cmd->add_flag("--timing-only", args->run.timing_only,
                "cycles only: no values are allocated or computed");
  cmd->add_option("--max-check-bytes", args->run.max_check_bytes,
                  "largest evaluator memory (bytes) for the check; above it the run is timing-only")
      ->check(IntegerOf<int64_t>(0));
  cmd->add_option(
         "--max-check-traffic", args->run.max_check_traffic,
         "largest HBM<->VMEM traffic (bytes, all cores and loop trips) for the check; above "
         "it the run is timing-only (computing values takes time in proportion)")
      ->check(IntegerOf<int64_t>(0));
  cmd->add_option("--seed", args->run.seed, "seed of the deterministic inputs");
  args->simulator.AddTo(cmd, &args->run.sim);
  cmd->add_option("--custom-call-cost", args->custom_call_costs,
                  "TARGET=CYCLES: time an unknown custom-call target as CYCLES cycles of its core "
                  "(repeatable; the run is then timing-only)");
  cmd->add_option("--trip-count", args->trip_counts,
                  "NAME=N: time the while NAME, whose trip count depends on data, as N trips of its "
                  "body and N+1 of its condition (repeatable; the run is then timing-only; the "
                  "report says which counts were given)");
  AddOnOffFlags(cmd, "megacore", &args->run.megacore,
                "split large dots of a single-device module over the chip's TensorCores when they "
                "share its HBM (TPU v4/v5p; the default)",
                "one TensorCore per device");
  cmd->add_option(
         "--unroll-budget", args->run.max_unrolled_instructions,
         "while loops are unrolled while the copies add at most N HLO instructions; longer "
         "loops run as ISA loops (ctrl.loop); 0: every loop an ISA loop")
      ->check(IntegerOf<int64_t>(0));
  cmd->add_option(
      "--dump-after", args->run.dump_after,
      "print the HLO after this compiler pass (fusion: the lowering's fusion decisions)");
  cmd->add_flag("--json", args->json, "print the JSON report on stdout instead of the table");
}

// Runs (or, with --scaling, runs at each core count), writes the outputs, prints the report; exit
// code 1 when a check failed.
void Run(const RunArgs& args) {
  OutputSet outputs;  // written together after a complete run, or not at all
  if (!args.report.empty()) OrFail(outputs.Declare("--report", args.report));
  if (!args.csv.empty()) OrFail(outputs.Declare("--csv", args.csv));
  // --trace streams into `outputs` while the simulation runs (memory stays flat).
  std::unique_ptr<TraceOutput> trace = OrFail(TraceOutput::Open(args.trace, outputs));
  driver::SetPhase("parse and verify");
  hlo::LoadedHloModule loaded = LoadModuleOrFail(args.model);
  const std::string& text = loaded.text;
  std::unique_ptr<hlo::HloModule> module = std::move(loaded.module);
  if (args.partitions > 0) module->set_num_partitions(args.partitions);
  config::ChipConfig chip = args.config.Load();
  driver::RunOptions options = args.run;
  options.custom_call_cycles = OrFail(ParseCustomCallCosts(args.custom_call_costs));
  options.trip_counts = OrFail(ParseTripCounts(args.trip_counts));
  args.simulator.ApplyTo(options.sim);
  options.sim.trace_sink = trace ? trace->sink() : nullptr;  // --scaling: the last count's run
  options.sim.progress = driver::SimProgressPrinter("simulating " + args.model);
  options.check_progress = driver::CheckProgressPrinter("checking " + args.model);
  std::vector<driver::ScalingRow> rows;
  driver::RunModuleResult r;
  const bool host_loop = args.steps > 0 || args.host_input;
  driver::HostLoopOptions host{std::max<int64_t>(1, args.steps), args.host_input,
                               args.host_input_params};
  if (args.scaling.empty()) {
    r = OrFail(driver::RunModule(*module, chip, options));
  } else {
    // One run per core count; the report and the per-run text are those of the last count.
    driver::ScalingRuns runs = OrFail(
        driver::RunScaling(text, args.model, chip, options,
                           OrFail(driver::ParseCoreCounts(args.scaling)), host_loop ? &host : nullptr));
    rows = std::move(runs.rows);
    r = std::move(runs.last);
  }
  if (!options.dump_after.empty()) std::cout << r.compiled.dump;
  Json report = driver::WithProvenance(driver::RunReportJson(r, args.model), chip);
  if (!rows.empty()) report["scaling"] = driver::ScalingJson(rows);
  if (trace) {
    trace->Finish();
    report["trace"] = trace->ReportJson();
  }
  std::string host_text;
  if (host_loop) {
    driver::HostLoop h = OrFail(driver::ComputeHostLoop(r, host));
    report["host_loop"] = driver::HostLoopJson(h, r.config);
    host_text = driver::HostLoopText(h);
  }
  if (!args.report.empty()) outputs.Set("--report", report.Dump());
  if (!args.csv.empty()) {
    sim::ReportOptions ropts;
    ropts.hlo_opcodes = r.hlo_opcodes;
    ropts.compiler_inserted = r.hlo_compiler_inserted;
    outputs.Set("--csv", sim::BuildOpsCsv(r.sim, r.compiled.program, ropts));
  }
  OrFail(outputs.Commit());
  std::string text_out = driver::RunReportText(r, args.model);
  text_out += host_text;
  if (!rows.empty()) text_out += driver::ScalingText(rows);
  if (args.json) {
    std::cout << report.Dump();
  } else if (driver::ChattyOutput()) {
    std::cout << text_out;
  }
  bool failed = r.check.performed && !r.check.passed;
  for (const driver::ScalingRow& row : rows) failed |= row.check_performed && !row.check_passed;
  if (failed) {
    throw CLI::RuntimeError(ExitCodeFor(StatusCode::kCheckFailed));
  }
}

}  // namespace

void RegisterRunCommand(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "compile an HLO module, simulate it cycle by cycle, check it against the CPU");
  AddRunOptions(cmd, args.get());
  cmd->callback([args] { Run(*args); });
}

}  // namespace tpusim::cli
