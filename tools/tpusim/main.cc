// tpusim: a cycle-level simulator of TPU-style chips. Exit codes: 0 ok, 1 a check failed,
// 2 bad input or usage, 3 internal error.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <new>

#include "common/build_info.h"
#include "common/file_util.h"
#include "driver/limits.h"
#include "driver/logging.h"
#include "driver/provenance.h"
#include "tools/tpusim/cli_util.h"
#include "tools/tpusim/commands.h"

namespace {

// SIGINT (Ctrl-C), SIGTERM, SIGHUP, SIGQUIT, SIGUSR1/2, SIGALRM: remove the temporary files of the
// outputs being written, then exit 128 + signal (130 for SIGINT) at once. Outputs are committed
// together at the end of a run with these signals held back (OutputSet::Commit), so an interrupted
// run leaves either all its outputs or none, and no .tmp file. SIGPIPE is ignored: a closed pipe
// on stdout or an output is a failed write, reported with exit 2.
// Async-signal-safe: RemovePendingTemporaryFiles uses only atomics and unlink; then _exit.
void OnTerminationSignal(int signal_number) {
  tpusim::RemovePendingTemporaryFiles();
  ::_exit(128 + signal_number);
}

void InstallTerminationHandlers() {
  struct sigaction action {};
  action.sa_handler = OnTerminationSignal;
  sigemptyset(&action.sa_mask);
  for (int s : tpusim::TerminationSignals()) {
    struct sigaction previous {};
    // A shell starts background jobs with SIGINT ignored; keep that as it is.
    if (::sigaction(s, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
    ::sigaction(s, &action, nullptr);
  }
  ::signal(SIGPIPE, SIG_IGN);
}

// Exit code `rc` of a command, made 2 if its standard output could not be written (a full disk,
// /dev/full, a closed pipe): the user would otherwise believe a report that never arrived.
int WithStandardOutputChecked(int rc) {
  const tpusim::Status s = tpusim::FlushStandardOutput();
  if (s.ok()) return rc;
  std::cerr << "tpusim: error: " << s.message() << std::endl;
  return rc == 0 || rc == 1 ? 2 : rc;
}

}  // namespace

int main(int argc, char** argv) {
  InstallTerminationHandlers();
  tpusim::driver::SetCommandLine(argc, argv);
  CLI::App app{"tpusim: simulate XLA HLO on TPU-style chips, cycle by cycle"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tpusim ") + tpusim::TpusimVersion() + " (commit " +
                                        tpusim::TpusimGitCommit() + ")");
  // Global flags: accepted before or after the subcommand (fallthrough).
  app.fallthrough();
  tpusim::driver::LogOptions log;
  std::string progress = "auto";
  app.add_flag("-v,--verbose", log.verbosity,
               "more log output on stderr: -v per-pass timings and kernel counts, -vv per kernel");
  app.add_flag("-q,--quiet", log.quiet, "errors only: no progress, no summary table");
  app.add_option("--progress", progress,
                 "progress of long simulations on stderr: auto (runs past 2 s), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.parse_complete_callback([&] {
    log.progress = progress == "always"  ? tpusim::driver::ProgressMode::kAlways
                   : progress == "never" ? tpusim::driver::ProgressMode::kNever
                                         : tpusim::driver::ProgressMode::kAuto;
    tpusim::driver::SetUpLogging(log);
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
  tpusim::cli::RegisterReportSchemaCommand(app);
  tpusim::cli::RegisterTraceCheckCommand(app);
  tpusim::cli::RegisterSweepCommand(app);
  tpusim::cli::MakeIntegerOptionsStrict(&app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return WithStandardOutputChecked(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return WithStandardOutputChecked(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return WithStandardOutputChecked(app.exit(e));
  } catch (const CLI::RuntimeError& e) {
    // The subcommand already printed its error.
    return WithStandardOutputChecked(e.get_exit_code());
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the usage error
    return 2;
  } catch (const std::bad_alloc&) {
    // A model or program too big for this machine's memory (or `ulimit -v`): a resource limit of
    // the input, not a bug. Timing-only runs allocate no tensor values (--timing-only).
    std::cerr << "tpusim: error: out of memory in phase '" << tpusim::driver::CurrentPhase()
              << "': the model's values or its compiled program do not fit this machine's "
                 "memory or the --max-memory limit (--timing-only allocates no values; the "
                 "program grows with the number of MXU tiles)"
              << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tpusim: internal error: " << e.what() << std::endl;
    return 3;
  }
  return WithStandardOutputChecked(0);
}
