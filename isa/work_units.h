// The interpreter's work budget (InterpreterOptions::max_instructions, `tpusim exec
// --max-instructions`): what one execution of an instruction costs, so that the budget bounds the
// interpreter's time whatever an instruction's fields say (docs/fuzzing.md "Limits").
#pragma once

#include <cstdint>
#include <functional>

#include "isa/instruction.h"
#include "isa/program.h"

namespace tpusim::isa {

/// Work units every executed instruction costs on top of its element operations (ctrl.loop and
/// ctrl.endloop included, at every trip): the host time of one instruction in the slowest engine
/// that runs it, in units of one element step. Measured in the Release build (tpu-v4 and tiny,
/// loops of 10^5-10^7 trips): a bare instruction costs the interpreter 13-25 ns and the
/// simulator 0.1-3 us (nop 0.09 us; a 1-element DMA + sync.wait 0.6 us; a 1x1x1 load_weights +
/// matmul + pop with values 3 us), an element step 0.35-0.8 ns: 4096 units ~ 3 us at 0.7 ns.
/// With it the default budget (kDefaultWorkBudget, 10^11) admits about 2.4e7 instructions, a
/// minute of the simulator's slowest instructions, 2.5 s of nop (a loop of 2^31 nop trips is
/// refused before it runs instead of taking 40 minutes).
inline constexpr uint64_t kInstructionWorkUnits = 4096;

/// Work units one execution of `inst` costs on top of the 1 every instruction counts: the element
/// operations of its semantics (opcodes.def), saturating at UINT64_MAX. One unit is one step of
/// the interpreter's inner loop over elements:
///   - DMA (dma.*, with dma.gather / dma.scatter): elements moved, DmaElementsMoved.
///   - mxu.matmul: multiply-accumulates, m * k * n (each of the [M,N] outputs is a K-term dot
///     product). A MAC, not an LHS element streamed (m * k), because the interpreter's time is
///     the MACs: per element streamed would undercount by N, up to core.mxu.cols (4096); the
///     largest matmul a config allows is 2^24 x 4096 x 4096 = 2^48 MACs.
///   - mxu.load_weights: weights read, k * n. mxu.pop: results written, m * n.
///   - vpu.*, xlu.transpose: elements of the result (count, rows * cols, n0 * n1 * n2; vpu.reduce
///     its rows * cols inputs; vpu.rng_bits its count words).
///   - ici.collective_permute: count; the other ici.*: count * group_size (the elements a member
///     combines or gathers), `group_size` being the cores that meet.
///   - scalar and control instructions: 0.
uint64_t InterpreterWorkUnits(const Instruction& inst, uint64_t group_size = 1);

/// The work units the interpreter charges `program` at the least (InterpreterOptions::
/// max_instructions counts them over all cores): each instruction its kInstructionWorkUnits +
/// InterpreterWorkUnits (collectives with a group of 1), times the trips of its enclosing
/// ctrl.loops. A lower bound,
/// exact for straight-line code and counted loops: a loop that a ctrl.break_unless of its own
/// level may leave counts no trip, and code from the ctrl.loop whose body holds a core's first
/// ctrl.halt (or from that ctrl.halt at top level) on counts nothing. Saturates at UINT64_MAX;
/// a core whose loops do not match counts nothing (Interpreter::Load refuses it). `tpusim exec`
/// refuses a program past its budget with this figure before running it.
uint64_t MinimumWorkUnits(const Program& program);

/// MinimumWorkUnits with `element_units` in place of InterpreterWorkUnits (the simulator's
/// charge, sim::SimOptions::max_work): each instruction kInstructionWorkUnits + element_units.
uint64_t MinimumWorkUnits(const Program& program,
                          const std::function<uint64_t(const Instruction&)>& element_units);

}  // namespace tpusim::isa
