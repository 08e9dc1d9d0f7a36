// Logs and progress on stderr, all through spdlog: warnings by default, `-v` info (per-pass
// timings, kernel counts), `-vv` debug (per-kernel detail), `-q` errors only. A simulation that
// lasts longer than kProgressAfterSeconds shows its progress: on a terminal one line rewritten in
// place, in a pipe or file a line every kPipeProgressSeconds.
#pragma once

#include <functional>
#include <string>

#include "compiler/compile.h"
#include "driver/run_module.h"
#include "sim/simulator.h"

namespace tpusim::driver {

enum class ProgressMode { kAuto, kAlways, kNever };

struct LogOptions {
  int verbosity = 0;                            // -v: 1, -vv: 2
  bool quiet = false;                           // -q: errors only, no progress
  ProgressMode progress = ProgressMode::kAuto;  // --progress auto|always|never
};

inline constexpr double kProgressAfterSeconds = 2.0;  // auto: runs shorter than this show none
inline constexpr double kPipeProgressSeconds = 5.0;   // not a terminal: one line this often

/// Configures spdlog's default logger ("tpusim: LEVEL: message" on stderr) and the progress
/// logger. main() calls it once the command line is parsed.
void SetUpLogging(const LogOptions& options);
/// The options SetUpLogging was last given.
const LogOptions& CurrentLogOptions();
/// False under -q: commands then print no summary table either (only what was asked for by name:
/// --json, --dump-after) — errors still go to stderr.
bool ChattyOutput();

/// "cycle 1234567 · 45.2% of 2.1M instructions retired · loop trips 37/120 · 12.3 s elapsed,
/// about 15 s left" (no loop part without loops; "time left unknown" before 1% is retired).
std::string FormatProgress(const sim::SimProgress& p);

/// A SimOptions::progress callback printing FormatProgress lines for the run called `what`
/// ("simulating"), or an empty function when progress is off (-q, --progress never).
std::function<void(const sim::SimProgress&)> SimProgressPrinter(const std::string& what);

/// "checking: evaluator pass 1/2 (TPU numerics) · 45.2% of 1234 HLO instructions · 12.3 s elapsed,
/// about 15 s left".
std::string FormatCheckProgress(const CheckProgress& p);

/// A RunOptions::check_progress callback printing FormatCheckProgress lines for the check of
/// `what` (the model), shown and throttled as the simulation's, or empty when progress is off.
std::function<void(const CheckProgress&)> CheckProgressPrinter(const std::string& what);

/// -v: one line per compiler pass (name, milliseconds, changed), the lowering time and the kernel
/// count (HLO ops lowered, ISA instructions per core); -vv: one line per kernel (HLO op: opcode,
/// static instructions by unit).
void LogCompiled(const compiler::CompiledModule& compiled);

}  // namespace tpusim::driver
