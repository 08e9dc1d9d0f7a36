// Run a program on the simulator and on isa::Interpreter (the golden semantics) and compare the
// final machine states: every byte an instruction of the program may write (the static write
// footprint of every instruction, remote DMA destinations included, plus the data segments) in
// VMEM, SMEM, HBM and host memory, every accumulator word and every sync flag. The `tpusim exec
// --sim` path calls this.
#pragma once

#include <string>

#include "common/status.h"
#include "config/chip_config.h"
#include "isa/interpreter.h"
#include "isa/program.h"
#include "sim/simulator.h"

namespace tpusim::sim {

/// Compares a finished interpreter with a simulator's final state. OK if identical; CheckFailed
/// naming the first difference (memory, core, address, both byte values) otherwise.
Status CompareFinalState(const isa::Program& program, isa::Interpreter& interpreter,
                         isa::MachineState& state);

/// Runs `program` on both and compares. Returns the simulation result when the states match;
/// the interpreter's or simulator's error if either fails (a program error is reported by both:
/// the interpreter's message is returned); CheckFailed on a mismatch. The interpreter runs under
/// `interpreter_options` (its work budget, `tpusim exec --max-instructions`).
StatusOr<SimResult> RunAndCheck(const config::ChipConfig& config, const isa::Program& program,
                                const SimOptions& options = {},
                                const isa::InterpreterOptions& interpreter_options = {});

/// RunAndCheck against `interpreter`, which has already run `program` to its end (`tpusim exec`
/// runs the interpreter once: isa::RunProgram, its dumps, then this).
StatusOr<SimResult> RunAndCheck(const config::ChipConfig& config, const isa::Program& program,
                                const SimOptions& options, isa::Interpreter& interpreter);

}  // namespace tpusim::sim
