// `tpusim disasm PROG.tbin [-o PROG.tasm]`: prints a program file as assembly (asm of the listing
// gives back the same instructions).
#include <iostream>
#include <memory>

#include "common/file_util.h"
#include "isa/disassembler.h"
#include "isa/exec.h"
#include "tools/tpusim/cli_util.h"
#include "tools/tpusim/commands.h"

namespace tpusim::cli {

void RegisterDisasmCommand(CLI::App& app) {
  struct Args {
    std::string input;
    std::string output;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("disasm", "print a program file (.tbin) as assembly");
  cmd->add_option("input", args->input, "program file (or assembly, which is re-printed)")
      ->required();
  cmd->add_option("-o,--output", args->output, "write the listing here instead of stdout");
  cmd->callback([args] {
    isa::Program program = OrFail(isa::LoadProgramFile(args->input));
    std::string text = isa::Disassemble(program);
    if (args->output.empty()) {
      std::cout << text;
    } else {
      OrFail(WriteFileAtomic(args->output, text));
    }
  });
}

}  // namespace tpusim::cli
