// The interpreter's work budget (InterpreterOptions::max_instructions, `tpusim exec
// --max-instructions`): what one execution of an instruction costs, so that the budget bounds the
// interpreter's time whatever an instruction's fields say (docs/fuzzing.md "Limits").
#pragma once

#include <cstdint>
#include <functional>

#include "isa/instruction.h"
#include "isa/memory_sizes.h"
#include "isa/program.h"

namespace tpusim::isa {

/// One work unit is about 0.3 ns of host time: the default budget (kDefaultWorkBudget, 10^11) is
/// about 30 s of one engine, and `tpusim exec` runs two on a program (the interpreter, then the
/// simulator with values): about a minute. Each charge below is the host time of its item measured
/// in the slower of the two engines (Release build, tpu-v4, CPU time of a loop of one instruction:
/// benchmarks/work_units.sh, figures in benchmarks/RESULTS.md "Work budget"), divided by 0.3 ns
/// and rounded up. Timing-only, the simulator charges only kInstructionWorkUnits (and PE steps).

/// Every executed instruction (ctrl.loop and ctrl.endloop included, at every trip): 1.2 us.
/// Measured: a bare instruction costs the interpreter 13 ns and the simulator 90 ns (nop); the
/// largest fixed cost is the simulator's issue of an MXU or DMA instruction, up to 0.9 us.
inline constexpr uint64_t kInstructionWorkUnits = 4096;

/// Per-item charges, units (measured ns per item in the comment).
inline constexpr uint64_t kDmaBytesPerUnit = 4;   // contiguous bytes moved: 0.04 ns per byte
inline constexpr uint64_t kDmaRowUnits = 52;      // one n0-row of a DMA box: 15.4 ns
inline constexpr uint64_t kMacUnits = 3;          // mxu.matmul multiply-accumulate: 0.74 ns
inline constexpr uint64_t kMxuOutputUnits = 6;    // mxu.matmul output (m x n), past its MACs: 1.8 ns
inline constexpr uint64_t kWeightUnits = 14;      // mxu.load_weights weight read: 4.1 ns
/// An element of the R x C array that mxu.load_weights clears or a latch copies: 2.3 ns at
/// 4096 x 4096, where each load allocates and faults in 64 MiB (0.07 ns at 128 x 128).
inline constexpr uint64_t kMxuArrayUnits = 8;
inline constexpr uint64_t kPopUnits = 10;         // mxu.pop result written: 3.0 ns
inline constexpr uint64_t kVpuBinaryUnits = 48;   // vpu.binary element: 14.3 ns
inline constexpr uint64_t kVpuCompareUnits = 49;  // vpu.compare element: 14.6 ns
inline constexpr uint64_t kVpuSelectUnits = 34;   // vpu.select element: 10.1 ns
inline constexpr uint64_t kVpuUnaryUnits = 27;    // vpu.unary element (tanh, neg): 8.1 ns
inline constexpr uint64_t kVpuConvertUnits = 19;  // vpu.convert element: 5.5 ns
inline constexpr uint64_t kVpuReduceUnits = 12;   // vpu.reduce input element: 3.5 ns
inline constexpr uint64_t kVpuBroadcastUnits = 15;  // vpu.broadcast result element: 4.4 ns
inline constexpr uint64_t kTransposeUnits = 24;   // xlu.transpose element: 7.0 ns
inline constexpr uint64_t kVpuCopyUnits = 65;     // vpu.copy element: 19.3 ns
inline constexpr uint64_t kVpuFillUnits = 12;     // vpu.fill element: 3.5 ns
inline constexpr uint64_t kVpuIotaUnits = 28;     // vpu.iota element: 8.2 ns
inline constexpr uint64_t kRngBitsUnits = 12;     // vpu.rng_bits word: 3.5 ns
/// An element a collective member combines or gathers: not measured (a multi-core loop); assumed
/// a vpu.binary element's, which reads two operands and writes one as a reduction does.
inline constexpr uint64_t kCollectiveElementUnits = kVpuBinaryUnits;

/// Work units one execution of `inst` costs on top of kInstructionWorkUnits, on a chip of
/// `sizes` (its MXU array, R x C = sizes.mxu_rows x sizes.mxu_cols), saturating at UINT64_MAX:
///   - DMA (dma.*, with dma.gather / dma.scatter): its bytes / kDmaBytesPerUnit (rounded up)
///     plus kDmaRowUnits per n0-row (n1 x n2, times `count` for gather/scatter): a row is one
///     memory access, so a box of 1-element rows costs 15 ns an element.
///   - mxu.matmul: m x n x (k x kMacUnits + kMxuOutputUnits), plus R x C kMxuArrayUnits when it
///     latches (the array is copied). The largest a config allows, 2^24 x 4096 x 4096, is 2^50.
///   - mxu.load_weights: k x n kWeightUnits plus R x C kMxuArrayUnits (the array is cleared).
///   - mxu.pop: m x n kPopUnits.
///   - vpu.*, xlu.transpose: the elements of the result (count, rows x cols, n0 x n1 x n2;
///     vpu.reduce its rows x cols inputs; vpu.rng_bits its count words) times the kind's charge.
///   - ici.collective_permute: count; the other ici.*: count x group_size (the elements a member
///     combines or gathers), `group_size` being the cores that meet; each kCollectiveElementUnits.
///   - scalar and control instructions: 0.
uint64_t InterpreterWorkUnits(const Instruction& inst, const MemorySizes& sizes,
                              uint64_t group_size = 1);

/// The work units the interpreter charges `program` on a chip of `sizes` at the least
/// (InterpreterOptions::max_instructions counts them over all cores): each instruction its
/// kInstructionWorkUnits + InterpreterWorkUnits (collectives with a group of 1), times the trips
/// of its enclosing ctrl.loops. A lower bound, exact for straight-line code and counted loops: a loop that a ctrl.break_unless of its own
/// level may leave counts no trip, and code from the ctrl.loop whose body holds a core's first
/// ctrl.halt (or from that ctrl.halt at top level) on counts nothing. Saturates at UINT64_MAX;
/// a core whose loops do not match counts nothing (Interpreter::Load refuses it). `tpusim exec`
/// refuses a program past its budget with this figure before running it.
uint64_t MinimumWorkUnits(const Program& program, const MemorySizes& sizes);

/// MinimumWorkUnits with `element_units` in place of InterpreterWorkUnits (the simulator's
/// charge, sim::SimOptions::max_work): each instruction kInstructionWorkUnits + element_units.
uint64_t MinimumWorkUnits(const Program& program,
                          const std::function<uint64_t(const Instruction&)>& element_units);

}  // namespace tpusim::isa
