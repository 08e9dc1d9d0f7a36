// `tpusim inspect MODEL.hlo [--json]`: parses and verifies an HLO module and prints what it
// contains (hlo/inspect.h). Exit 2 with a located message on bad HLO.
#include <iostream>
#include <memory>

#include "common/file_util.h"
#include "hlo/inspect.h"
#include "hlo/load.h"
#include "tools/tpusim/cli_util.h"
#include "tools/tpusim/commands.h"

namespace tpusim::cli {

void RegisterInspectCommand(CLI::App& app) {
  struct Args {
    std::string input;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "summarize an HLO module: ops, shapes, FLOP, bytes, collectives, shardings");
  cmd->add_option("model", args->input, "HLO text file")->required();
  cmd->add_flag("--json", args->json, "print JSON instead of text");
  cmd->callback([args] {
    std::unique_ptr<hlo::HloModule> module = LoadModuleOrFail(args->input).module;
    const hlo::InspectSummary summary = hlo::SummarizeModule(*module);
    if (args->json) {
      std::cout << hlo::InspectToJson(summary).Dump(2) << "\n";
    } else {
      std::cout << hlo::InspectToText(summary);
    }
  });
}

}  // namespace tpusim::cli
