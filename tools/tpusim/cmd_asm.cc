// `tpusim asm PROG.tasm -o PROG.tbin [--config C]` assembles a program (and verifies it against a
// chip when --config is given); `tpusim asm --doc` prints the ISA reference (docs/isa.md).
#include <iostream>
#include <memory>

#include "common/file_util.h"
#include "config/config_loader.h"
#include "isa/assembler.h"
#include "isa/encoding.h"
#include "isa/isa_doc.h"
#include "isa/memory_sizes.h"
#include "isa/verifier.h"
#include "tools/tpusim/cli_util.h"
#include "tools/tpusim/commands.h"

namespace tpusim::cli {

void RegisterAsmCommand(CLI::App& app) {
  struct Args {
    std::string input;
    std::string output;
    std::string config;
    std::vector<std::string> overrides;
    bool doc = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd =
      app.add_subcommand("asm", "assemble ISA text (.tasm) into a program file (.tbin)");
  cmd->add_option("input", args->input, "assembly file");
  cmd->add_option("-o,--output", args->output, "program file to write (default: input with .tbin)");
  cmd->add_option("--config", args->config, "also verify against this chip config (name or path)");
  cmd->add_option("--set", args->overrides, "override a config key: --set core.mxu.rows=256");
  cmd->add_flag("--doc", args->doc, "print the ISA reference (docs/isa.md) and exit");
  cmd->callback([args] {
    if (args->doc) {
      std::cout << isa::GenerateIsaDoc();
      return;
    }
    if (args->input.empty()) Fail(InvalidArgument("asm: an input file is required"));
    auto text = OrFail(ReadFile(args->input));
    isa::Program program = OrFail(isa::Assemble(text, args->input));
    if (!args->config.empty()) {
      config::ChipConfig chip = OrFail(config::LoadChipConfig(args->config, args->overrides));
      OrFail(isa::Verify(program, isa::MemorySizes::FromChipConfig(chip)));
    }
    std::string out = args->output;
    if (out.empty()) {
      size_t dot = args->input.rfind('.');
      size_t slash = args->input.rfind('/');
      out = (dot != std::string::npos && (slash == std::string::npos || dot > slash)
                 ? args->input.substr(0, dot)
                 : args->input) +
            ".tbin";
    }
    OrFail(WriteFileAtomic(out, isa::EncodeProgram(program)));
    size_t total = 0;
    for (const auto& c : program.cores) total += c.instructions.size();
    std::cerr << "wrote " << out << ": " << program.num_cores() << " core(s), " << total
              << " instruction(s)\n";
  });
}

}  // namespace tpusim::cli
