// tpusim: a cycle-level simulator of TPU-style chips. Exit codes: 0 ok, 1 a check failed,
// 2 bad input or usage, 3 internal error.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "tools/tpusim/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"tpusim: simulate XLA HLO on TPU-style chips, cycle by cycle"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tpusim 0.1.0");
  int verbosity = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbosity, "more log output (-vv for debug)");
  app.add_flag("-q,--quiet", quiet, "errors only");
  app.parse_complete_callback([&] {
    spdlog::set_pattern("tpusim: %l: %v");
    if (quiet) {
      spdlog::set_level(spdlog::level::err);
    } else if (verbosity >= 2) {
      spdlog::set_level(spdlog::level::debug);
    } else if (verbosity == 1) {
      spdlog::set_level(spdlog::level::info);
    } else {
      spdlog::set_level(spdlog::level::warn);
    }
  });

  tpusim::cli::RegisterRunCommand(app);
  tpusim::cli::RegisterConfigCommand(app);
  tpusim::cli::RegisterInspectCommand(app);
  tpusim::cli::RegisterAsmCommand(app);
  tpusim::cli::RegisterDisasmCommand(app);
  tpusim::cli::RegisterExecCommand(app);
  tpusim::cli::RegisterCpuCommand(app);
  tpusim::cli::RegisterCompileCommand(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // the subcommand already printed its error
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the usage error
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tpusim: internal error: " << e.what() << std::endl;
    return 3;
  }
  return 0;
}
