// Helpers shared by the subcommands: turning a Status into the command's exit code, and the
// --config /
// --set options every simulating command takes.
#pragma once


#include <CLI/CLI.hpp>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/chip_config.h"
#include "hlo/load.h"
#include "sim/simulator.h"

namespace tpusim::cli {

/// Prints `status` to stderr as "tpusim: error: ..." and throws CLI::RuntimeError with its exit
/// code (1 a check failed, 2 bad input, 3 internal). main() returns that code.
[[noreturn]] void Fail(const Status& status);

/// Returns the value, or Fail()s with its status.
template <typename T>
T OrFail(StatusOr<T> v) {
  if (!v.ok()) Fail(v.status());
  return std::move(v).value();
}
inline void OrFail(const Status& s) {
  if (!s.ok()) Fail(s);
}

/// hlo::LoadHloModule, or Fail()s with its status; prints each of its notes as a warning on
/// stderr (a file of several `// -----`-separated modules: which one runs).
hlo::LoadedHloModule LoadModuleOrFail(const std::string& path);

/// A CLI11 check for numeric options that must be >= 0 (rejects NaN):
/// "--replicas: expected a number >= 0, got -5" (exit 2).
CLI::Validator NonNegative();

/// A CLI11 check for a count of devices (--replicas, --partitions): an integer from 0 to
/// hlo::kMaxDevices, checked on the text before it is converted, so no value wraps or saturates:
/// "--replicas: expected a device count from 0 to 1048576, got 99999999999999999999" (exit 2).
CLI::Validator DeviceCount();

/// An integer option's check of its text, before CLI11 converts it (so nothing saturates, wraps or
/// fails to convert): a decimal integer, optional sign, no leading zeros, in [lo, hi]; else a
/// usage error (exit 2) naming the option and the range: "--threads: expected a decimal integer
/// from 0 to 2147483647, got 1.5".
CLI::Validator IntegerIn(int64_t lo, int64_t hi);

/// IntegerIn over what `T` (the option's type, signed) holds from `lo`: IntegerOf<int>(0) for
/// an int count.
template <typename T>
CLI::Validator IntegerOf(int64_t lo = std::numeric_limits<T>::min()) {
  return IntegerIn(lo, std::numeric_limits<T>::max());
}

/// Makes every integer option of `app` and of its subcommands (CLI11 type INT or UINT) strict:
/// its text must be a decimal integer, without leading zeros, that fits the option's 64-bit type,
/// checked before CLI11 converts it, which would otherwise saturate ("99999999999999999999" ->
/// INT64_MAX), wrap ("-1" -> 2^64-1 for an unsigned option) or read "010" as octal 8. Bad text is
/// a usage error (exit 2): "--steps: expected a decimal integer from -9223372036854775808 to
/// 9223372036854775807, got 99999999999999999999". Runs after the option's own checks (so
/// --replicas keeps its "device count" message). Call once, after every subcommand is registered.
void MakeIntegerOptionsStrict(CLI::App* app);

/// Adds --max-memory BYTES (address-space cap, limits.h SetMemoryLimit) and --max-seconds S
/// (whole-command watchdog, limits.h StartDeadline) to `cmd`; both apply as soon as the command
/// line is parsed, so they cover every phase. `max_seconds` receives the value too (the simulator
/// also checks it, to stop with its own message).
void AddLimitOptions(CLI::App* cmd, double* max_seconds);

/// Adds --max-instructions N to a command that interprets or simulates (exec, run, compare) and
/// sets `*max_work` to its default, isa::kDefaultWorkBudget: the work budget of every engine,
/// all cores (the interpreter's InterpreterOptions::max_instructions, the simulator's
/// SimOptions::max_work): each executed instruction isa::kInstructionWorkUnits plus its element
/// work (isa/work_units.h, sim/work_budget.h). 0 is refused (exit 2); 18446744073709551615 is
/// no limit in effect.
void AddWorkBudgetOption(CLI::App* cmd, uint64_t* max_work);

/// `--NAME` (sets *value true) and `--no-NAME` (false) as two flags, so that --help shows each with
/// its own text and no misleading "{false}" default; the last one given wins.
void AddOnOffFlags(CLI::App* cmd, const std::string& name, bool* value, const std::string& on_help,
                   const std::string& off_help);

/// The simulator's options that `run` and `compare` share: --mxu-model fast|pe, --max-cycles N,
/// --max-instructions (AddWorkBudgetOption), --max-memory and --max-seconds (AddLimitOptions) and
/// --fast-forward / --no-fast-forward.
struct SimulatorOptions {
  std::string mxu_model = "fast";
  uint64_t max_cycles = uint64_t{1} << 50;
  /// Registers the options; `*sim` (which must outlive the parse) receives the work budget, the
  /// wall-clock limit and fast-forward as they are parsed.
  void AddTo(CLI::App* cmd, sim::SimOptions* sim);
  /// Sets `sim`'s MXU model (Fail()s with exit 2 on a bad name) and cycle limit.
  void ApplyTo(sim::SimOptions& sim) const;
};

/// --config NAME|PATH (default config::kDefaultConfigName) and repeated --set key.path=value.
struct ConfigOptions {
  std::string config;
  std::vector<std::string> overrides;
  void AddTo(CLI::App* cmd);
  /// Loads and validates the config; Fail()s with exit 2 on any error.
  config::ChipConfig Load() const;
};

/// Repeated --custom-call-cost TARGET=CYCLES: the cost the user gives an unknown custom-call
/// target (compiler::CompileOptions::custom_call_cycles). InvalidArgument naming the bad entry.
StatusOr<std::map<std::string, int64_t>> ParseCustomCallCosts(
    const std::vector<std::string>& entries);

/// Repeated --trip-count NAME=N: trip counts of data-dependent whiles by name
/// (compiler::CompileOptions::trip_counts). InvalidArgument naming the bad entry.
StatusOr<std::map<std::string, int64_t>> ParseTripCounts(const std::vector<std::string>& entries);

}  // namespace tpusim::cli
