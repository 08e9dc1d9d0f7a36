// Simulator: the API the `tpusim` command calls to run an isa::Program on a chip config, cycle by
// cycle.
//
//   sim::Simulator sim(config, {.mxu_model = sim::MxuModelKind::kFast, .trace = true});
//   StatusOr<sim::SimResult> r = sim.Run(program);          // or Run(program, extra initial
//   segments) sim::WriteReportJson("out.json", *r, program);           // sim/report/
//
// Cores 0..n-1 of the program run on global cores 0..n-1 (chip = core / chip.tensorcores), all on
// one timeline of core-clock cycles (sim/engine/engine.h). The final memories equal
// isa::Interpreter's for the same program (sim/run_and_check.h compares them).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/units.h"
#include "config/chip_config.h"
#include "isa/program.h"
#include "sim/core/mxu_model.h"
#include "sim/engine/engine.h"
#include "sim/sim_result.h"

namespace tpusim::sim {

/// A running simulation's position, for progress reports (SimOptions::progress).
struct SimProgress {
  Cycles cycle;                       // the simulated cycle reached
  uint64_t instructions_retired = 0;  // all cores
  uint64_t instructions_total = 0;    // the program's dynamic instruction count, all cores
                                      // (ctrl.loop counts are static: known before the run)
  uint64_t loop_trips = 0;            // loop iterations completed, all cores
  uint64_t loop_trips_total = 0;
  double elapsed_seconds = 0;  // wall clock since the simulation started
  bool done = false;           // the last call, after the run
};

struct SimOptions {
  MxuModelKind mxu_model = MxuModelKind::kFast;  // --mxu-model fast|pe
  Cycles max_cycles{uint64_t{1} << 50};          // --max-cycles: ResourceExhausted past it
  double max_seconds = 0;      // --max-seconds: wall-clock limit of the run (seconds), 0 = none;
                               // ResourceExhausted past it
  /// --max-instructions: the work budget, all cores, in the interpreter's units (each issued
  /// instruction isa::kInstructionWorkUnits plus its element work: sim/work_budget.h); 0 = none.
  /// A program that surely needs more is refused before the run; ResourceExhausted past it.
  uint64_t max_work = 0;
  bool compute_values = true;  // false (--timing-only): no data effects, no MXU values; memory
                               // addresses are then not checked at run time (run the verifier)
  bool trace = false;  // keep the instruction events in SimResult::trace_events (TraceCollector)
  /// Keep a profile per instruction (CoreResult::instructions: executions, cycles, unit cycles,
  /// FLOP, bytes; 40 bytes per instruction and core) besides the per-op one every run keeps.
  bool instruction_profile = false;
  uint64_t trace_max_events = 4'000'000;  // ... at most this many (then trace_truncated)
  /// Where the timeline goes while the run lasts (sim/trace/trace_writer.h streams it to a file);
  /// not owned. When set, `trace` and `trace_max_events` are unused.
  TraceSink* trace_sink = nullptr;
  /// Called about every `progress_interval_seconds` of wall clock while the run lasts, and once
  /// with `done` at its end. Reads only: results do not depend on it.
  std::function<void(const SimProgress&)> progress;
  double progress_interval_seconds = 0.25;
  /// Skip repeated loop trips whose timing state repeats, exactly (sim/fast_forward.h); only in
  /// timing-only runs with the fast MXU model and no trace. --no-fast-forward turns it off.
  bool fast_forward = true;
  StepOrder step_order = StepOrder::kForward;
  // tests: prove the result does not depend on it
  uint64_t step_seed = 1;
  /// Step every unit at every event cycle instead of only the units with work (engine.h): the
  /// reference stepping, for tests that prove the schedule changes nothing.
  bool step_every_unit = false;
};

/// The dynamic instruction count and loop trips of `core` run to its ctrl.halt, from its static
/// ctrl.loop counts; a loop left by a ctrl.break_unless counts the trips its `trips` field assumes
/// (+1, the trip that takes the branch), which is what a timing-only run does. {instructions,
/// trips}.
std::pair<uint64_t, uint64_t> DynamicCounts(const isa::CoreProgram& core);

/// "fast" or "pe" (the --mxu-model values); InvalidArgument naming the accepted values otherwise.
StatusOr<MxuModelKind> ParseMxuModelKind(std::string_view name);

class Simulator {
 public:
  Simulator(const config::ChipConfig& config, SimOptions options = {})
      : config_(config), options_(options) {}

  /// Runs `program` from its data segments, then `initial` (more segments, written in order on top)
  /// until every core has halted and every instruction has completed. `initial` is released as
  /// soon as it is written (move it in: the run's inputs are then held once, in the simulated
  /// memories, not twice). Errors:
  ///  - InvalidArgument: a chip config outside the schema's ranges or inconsistent
  ///    (config::ValidateChipConfig, naming the key path), a program that does not fit the system
  ///    or is malformed, a runtime error (out-of-bounds address, mismatched collective, ...)
  ///    naming core, instruction and mnemonic, or a deadlock (every core blocked), naming what
  ///    each core waits for;
  ///  - ResourceExhausted: the run passed SimOptions::max_cycles, max_seconds or max_work, or
  ///    surely would pass max_work (the message names the limit).
  StatusOr<SimResult> Run(const isa::Program& program,
                          std::vector<isa::DataSegment> initial = {}) const;

 private:
  config::ChipConfig config_;
  SimOptions options_;
};

}  // namespace tpusim::sim
