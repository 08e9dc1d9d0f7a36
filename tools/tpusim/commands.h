// Each `tpusim` subcommand registers itself on the CLI11 app; main.cc calls these in order.
#pragma once

#include <CLI/CLI.hpp>

namespace tpusim::cli {

void RegisterConfigCommand(CLI::App& app);

}  // namespace tpusim::cli
