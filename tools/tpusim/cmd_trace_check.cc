// `tpusim trace-check TRACE.json`: validates a trace against the Chrome trace-event rules Perfetto
// relies on (sim/trace/trace_check.h): nesting per thread, monotonic timestamps, named pids and
// tids, well-formed counters. Exit 0 valid, 2 invalid (the message names the event).
#include <iostream>

#include "common/file_util.h"
#include "sim/trace/trace_check.h"
#include "tools/tpusim/cli_util.h"
#include "tools/tpusim/commands.h"

namespace tpusim::cli {

void RegisterTraceCheckCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "trace-check", "check a --trace file against the Chrome trace-event format's rules");
  cmd->add_option("trace", *path, "the trace JSON")->required();
  cmd->callback([path] {
    const std::string text = OrFail(ReadFile(*path));
    auto summary = sim::CheckChromeTrace(text);
    if (!summary.ok()) OrFail(summary.status().WithPrefix(*path));
    std::cout << *path << ": valid: " << summary->slices << " slices, " << summary->counters
              << " counter values on " << summary->threads << " threads of "
              << summary->processes << " processes\n";
  });
}

}  // namespace tpusim::cli
