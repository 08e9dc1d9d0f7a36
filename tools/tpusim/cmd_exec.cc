// `tpusim exec PROG.tasm|PROG.tbin --config C [--set k=v] [--dump SPACE[.CORE]:ADDR:COUNT:DTYPE
// ...]
// [--engine sim|interp] [--mxu-model fast|pe] [--report R.json] [--trace T.json]
// [--max-instructions N] [--max-cycles N] [--max-seconds S]`: verifies a hand-written program
// against the chip, runs it on the cycle-level simulator and checks every byte it wrote against the
// ISA interpreter (the golden semantics), prints the cycle report and the requested memory.
// `--engine interp` runs the interpreter alone (exact values, no timing). Exit 1 if the simulator
// and interpreter disagree.
#include <iostream>
#include <memory>

#include "common/file_util.h"
#include "common/output_set.h"
#include "driver/device_slice.h"
#include "driver/limits.h"
#include "driver/logging.h"
#include "driver/provenance.h"
#include "isa/exec.h"
#include "sim/report/report.h"
#include "sim/run_and_check.h"
#include "tools/tpusim/cli_util.h"
#include "tools/tpusim/commands.h"
#include "tools/tpusim/trace_output.h"

namespace tpusim::cli {

void RegisterExecCommand(CLI::App& app) {
  struct Args {
    std::string input;
    ConfigOptions config;
    std::vector<std::string> dumps;
    std::string engine = "sim";
    std::string mxu_model = "fast";
    std::string report;
    TraceArgs trace;
    uint64_t max_instructions = 0;  // AddWorkBudgetOption sets the default
    uint64_t max_cycles = uint64_t{1} << 40;
    double max_seconds = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "exec", "run an ISA program on the simulator, checked against the interpreter; dump memory");
  cmd->add_option("program", args->input, "assembly (.tasm) or program file (.tbin)")->required();
  args->config.AddTo(cmd);
  cmd->add_option(
      "--dump", args->dumps,
      "print memory after the run: SPACE[.CORE]:ADDR:COUNT:DTYPE, e.g. vmem:0x100:8:f32");
  cmd->add_option("--engine", args->engine, "sim (cycle-level, checked) or interp (values only)")
      ->check(CLI::IsMember({"sim", "interp"}));
  cmd->add_option("--mxu-model", args->mxu_model, "MXU model: fast (closed form) or pe (per PE)")
      ->check(CLI::IsMember({"fast", "pe"}));
  cmd->add_option("--report", args->report, "write the JSON report here");
  args->trace.AddTo(cmd);
  AddWorkBudgetOption(cmd, &args->max_instructions);
  cmd->add_option("--max-cycles", args->max_cycles,
                  "simulator: stop with an error past this cycle");
  AddLimitOptions(cmd, &args->max_seconds);
  cmd->callback([args] {
    OutputSet outputs;  // written together after a complete run, or not at all
    if (!args->report.empty()) OrFail(outputs.Declare("--report", args->report));
    std::unique_ptr<TraceOutput> trace = OrFail(TraceOutput::Open(args->trace, outputs));
    std::vector<isa::DumpSpec> dumps;
    for (const std::string& d : args->dumps) dumps.push_back(OrFail(isa::ParseDumpSpec(d)));
    driver::SetPhase("parse and verify");
    isa::Program program = OrFail(isa::LoadProgramFile(args->input));
    const config::ChipConfig loaded = args->config.Load();
    std::string note;
    const config::ChipConfig chip = OrFail(driver::SliceForProgram(program, loaded, &note));
    if (!note.empty()) std::cerr << "tpusim: note: " << note << "\n";
    isa::InterpreterOptions options;
    options.max_instructions = args->max_instructions;
    // The interpreter run verifies the program, produces the dumps and is the state the
    // simulator is checked against (it runs once).
    driver::SetPhase("interpret");
    std::unique_ptr<isa::Interpreter> interp = OrFail(isa::RunProgram(program, chip, options));
    std::string interp_text = OrFail(isa::ExecReport(*interp, program, chip, dumps));
    if (args->engine == "interp") {
      std::cout << interp_text;
      return;
    }
    sim::SimOptions sim_options;
    sim_options.mxu_model = OrFail(sim::ParseMxuModelKind(args->mxu_model));
    sim_options.max_cycles = Cycles(args->max_cycles);
    sim_options.max_work = args->max_instructions;
    sim_options.max_seconds = args->max_seconds;
    sim_options.trace_sink = trace ? trace->sink() : nullptr;
    driver::SetPhase("simulate");
    sim_options.progress = driver::SimProgressPrinter("simulating " + args->input);
    sim::SimResult result = OrFail(sim::RunAndCheck(chip, program, sim_options, *interp));
    Json trace_json;
    if (trace) {
      trace->Finish();
      trace_json = trace->ReportJson();
    }
    if (!args->report.empty()) {
      Json report = driver::WithProvenance(sim::BuildReportJson(result, program), loaded);
      if (trace) report["trace"] = trace_json;
      outputs.Set("--report", report.Dump(2));
    }
    OrFail(outputs.Commit());
    if (driver::ChattyOutput()) {
      std::cout << sim::BuildReportTable(result, program);
      std::cout << "check: simulator final state equals the interpreter's\n";
    }
    // The dump lines (after the interpreter's summary line) are the values both engines agree on.
    std::cout << interp_text.substr(interp_text.find('\n') + 1);
  });
}

}  // namespace tpusim::cli
