// tpusim: a cycle-level simulator of TPU-style chips. Exit codes: 0 ok, 1 a check failed,
// 2 bad input or usage, 3 internal error.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <new>

#include "common/file_util.h"
#include "tools/tpusim/commands.h"

namespace {

// SIGINT (Ctrl-C) / SIGTERM: remove the temporary file of an output being written, then exit
// 128 + signal (130 for SIGINT) at once. Outputs are only ever renamed into place complete
// (WriteFileAtomic), so an interrupted run leaves no partial report, trace or .tmp file.
// Async-signal-safe: RemovePendingTemporaryFiles uses only atomics and unlink; then _exit.
void OnTerminationSignal(int signal_number) {
  tpusim::RemovePendingTemporaryFiles();
  ::_exit(128 + signal_number);
}

void InstallTerminationHandlers() {
  struct sigaction action {};
  action.sa_handler = OnTerminationSignal;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGINT, SIGTERM}) {
    struct sigaction previous {};
    // A shell starts background jobs with SIGINT ignored; keep that as it is.
    if (::sigaction(s, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
    ::sigaction(s, &action, nullptr);
  }
}

}  // namespace

int main(int argc, char** argv) {
  InstallTerminationHandlers();
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
  tpusim::cli::RegisterCompareCommand(app);

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
  } catch (const std::bad_alloc&) {
    // A model or program too big for this machine's memory (or `ulimit -v`): a resource limit of
    // the input, not a bug. Timing-only runs allocate no tensor values (--timing-only).
    std::cerr << "tpusim: error: out of memory: the model's values or its compiled program do "
                 "not fit this machine's memory (--timing-only allocates no values; the program "
                 "grows with the number of MXU tiles)"
              << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tpusim: internal error: " << e.what() << std::endl;
    return 3;
  }
  return 0;
}
