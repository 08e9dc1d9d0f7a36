// The --trace file of `tpusim run` / `exec`: options, the streaming writer and its file, the
// report's `trace` object and the warning when the trace was cut short.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "common/json.h"
#include "common/output_set.h"
#include "common/status.h"
#include "sim/trace/trace_writer.h"

namespace tpusim::cli {

/// --trace PATH, --trace-max-events N, --trace-window START:END.
struct TraceArgs {
  std::string path;
  uint64_t max_events = 4'000'000;
  std::string window;  // "START:END" cycles; "START:" to the end of the run
  void AddTo(CLI::App* cmd);
};

/// "START:END" -> [start, end) in cycles ("START:" -> end of the run). InvalidArgument naming
/// --trace-window unless 0 <= START < END.
Status ParseTraceWindow(const std::string& text, uint64_t* start, uint64_t* end);

/// The trace being written while the run lasts: the writer that is the simulation's TraceSink,
/// streaming into the "--trace" output of `outputs` (OutputSet::Stream), which the command commits
/// with its other outputs after a complete run.
class TraceOutput {
 public:
  /// Null when `args.path` is empty (no trace). Declares "--trace" in `outputs`. InvalidArgument for
  /// a bad --trace-window or a path that cannot be written.
  static StatusOr<std::unique_ptr<TraceOutput>> Open(const TraceArgs& args, OutputSet& outputs);
  sim::TraceWriter* sink() { return writer_.get(); }
  /// After the run: warns on stderr when the event cap cut the trace.
  void Finish() const;
  /// The report's `trace` object: file, events written, truncated, dropped, window.
  Json ReportJson() const;

 private:
  std::string path_;
  sim::TraceWriterOptions options_;
  std::unique_ptr<sim::TraceWriter> writer_;
};

}  // namespace tpusim::cli
