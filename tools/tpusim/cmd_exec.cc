// `tpusim exec PROG.tasm|PROG.tbin --config C [--set k=v] [--dump SPACE[.CORE]:ADDR:COUNT:DTYPE
// ...]
// [--max-instructions N]`: verifies the program against the chip and runs it on the ISA interpreter
// (exact values, no timing), then prints the requested memory.
#include <iostream>
#include <memory>

#include "isa/exec.h"
#include "tools/tpusim/cli_util.h"
#include "tools/tpusim/commands.h"

namespace tpusim::cli {

void RegisterExecCommand(CLI::App& app) {
  struct Args {
    std::string input;
    ConfigOptions config;
    std::vector<std::string> dumps;
    uint64_t max_instructions = isa::InterpreterOptions{}.max_instructions;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "exec", "run an ISA program on the interpreter (exact values, no timing) and dump memory");
  cmd->add_option("program", args->input, "assembly (.tasm) or program file (.tbin)")->required();
  args->config.AddTo(cmd);
  cmd->add_option(
      "--dump", args->dumps,
      "print memory after the run: SPACE[.CORE]:ADDR:COUNT:DTYPE, e.g. vmem:0x100:8:f32");
  cmd->add_option("--max-instructions", args->max_instructions,
                  "stop with an error after this many instructions (all cores)");
  cmd->callback([args] {
    std::vector<isa::DumpSpec> dumps;
    for (const std::string& d : args->dumps) dumps.push_back(OrFail(isa::ParseDumpSpec(d)));
    isa::Program program = OrFail(isa::LoadProgramFile(args->input));
    config::ChipConfig chip = args->config.Load();
    isa::InterpreterOptions options;
    options.max_instructions = args->max_instructions;
    std::cout << OrFail(isa::ExecProgram(program, chip, dumps, options));
  });
}

}  // namespace tpusim::cli
