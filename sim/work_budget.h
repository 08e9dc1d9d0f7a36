// The simulator's work budget (SimOptions::max_work; `tpusim exec|run|compare
// --max-instructions`): the units the interpreter's budget counts (isa/work_units.h), charged for
// what costs the simulator host time, so that the budget bounds every engine's time in
// instructions executed (docs/fuzzing.md "Limits").
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "config/chip_config.h"
#include "isa/program.h"
#include "sim/simulator.h"

namespace tpusim::sim {

/// The units one issue of `inst` costs the simulator under `options`, each instruction
/// isa::kInstructionWorkUnits plus:
///   - with values (SimOptions::compute_values): isa::InterpreterWorkUnits on the config's
///     isa::MemorySizes (collectives with a group of 1), the element work the simulator does as
///     the interpreter does (its charges are the slower engine's measured time);
///   - on the PE-level MXU model (MxuModelKind::kPe), which steps every PE of the array each cycle
///     it is busy: mxu.matmul rows * cols * (m + rows + cols), mxu.load_weights rows * cols * rows
///     (rows x cols = core.mxu.rows x core.mxu.cols), whether or not values are computed.
/// Timing-only on the fast model, elements cost nothing: only the instruction counts.
/// Saturates at UINT64_MAX.
uint64_t SimulatorWorkUnits(const isa::Instruction& inst, const config::ChipConfig& config,
                            const SimOptions& options);

/// SimulatorWorkUnits of every instruction of `core`, by index (Sequencer::set_work_costs).
std::vector<uint64_t> SimulatorWorkCosts(const isa::CoreProgram& core,
                                         const config::ChipConfig& config,
                                         const SimOptions& options);

/// The least work `program` surely does on the simulator under `options` (isa::MinimumWorkUnits
/// with SimulatorWorkUnits; loop counts are immediates), in work units. Saturates at UINT64_MAX.
uint64_t LeastWorkUnits(const isa::Program& program, const config::ChipConfig& config,
                        const SimOptions& options);

/// Before a run: ResourceExhausted when `program` surely does more than options.max_work units
/// (isa::MinimumWorkUnits with SimulatorWorkUnits; loop counts are immediates), naming the figure
/// and the option that raises the budget. Not when a fast-forward may skip trips (timing-only,
/// fast model, no trace): the trips it skips cost nothing. OK when max_work is 0 (no budget).
Status CheckWorkBeforeRun(const isa::Program& program, const config::ChipConfig& config,
                          const SimOptions& options, bool fast_forward);

/// The error when the units issued so far, `work`, passed options.max_work at cycle `now`.
Status WorkBudgetExhausted(uint64_t work, uint64_t max_work, uint64_t now);

}  // namespace tpusim::sim
