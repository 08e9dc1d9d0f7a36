// The interpreter's work budget (InterpreterOptions::max_instructions, `tpusim exec
// --max-instructions`): what one execution of an instruction costs, so that the budget bounds the
// interpreter's time whatever an instruction's fields say (docs/fuzzing.md "Limits").
#pragma once

#include <cstdint>

#include "isa/instruction.h"
#include "isa/program.h"

namespace tpusim::isa {

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
/// max_instructions counts them over all cores): each instruction its 1 + InterpreterWorkUnits
/// (collectives with a group of 1), times the trips of its enclosing ctrl.loops. A lower bound,
/// exact for straight-line code and counted loops: a loop that a ctrl.break_unless of its own
/// level may leave counts no trip, and code from the ctrl.loop whose body holds a core's first
/// ctrl.halt (or from that ctrl.halt at top level) on counts nothing. Saturates at UINT64_MAX;
/// a core whose loops do not match counts nothing (Interpreter::Load refuses it). `tpusim exec`
/// refuses a program past its budget with this figure before running it.
uint64_t MinimumWorkUnits(const Program& program);

}  // namespace tpusim::isa
