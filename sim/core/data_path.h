// DataPath: applies the data effect of an instruction to the MachineState at the cycle the
// simulator completes it, with isa::Interpreter's semantics, so a simulated program ends in exactly
// the memory state the interpreter computes (tests/sim/equivalence_test.cc).
//
//  * DMA: the strided copy of opcodes.def's descriptor, gathered then scattered (as the
//  interpreter).
//    Sync flags are the sequencers' business, not the data path's.
//  * VPU / XLU and collectives: executed by the interpreter itself. The interpreter does not (yet)
//    expose its per-instruction functions, so the data path runs the one instruction on a scratch
//    isa::Interpreter loaded with the instruction's input and output regions (the scoreboard
//    footprint, footprint.h) as data segments, and copies the output regions back. Same code, same
//    bits; O(region bytes) per instruction.
//  * MXU: load_weights / matmul values come from the MXU model (mxu_model.h); mxu.pop's
//    activation and conversion are here (PopRows), using isa/numerics.h as the interpreter does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "isa/instruction.h"
#include "isa/interpreter.h"
#include "isa/program.h"
#include "sim/core/machine_state.h"
#include "sim/core/mxu_model.h"

namespace tpusim::sim {

class DataPath {
 public:
  /// `values` false: timing-only runs; every effect is skipped (and reports OK).
  DataPath(MachineState& state, const isa::Program& program, bool values = true);
  bool values() const { return values_; }

  MachineState& state() { return state_; }

  /// A DMA's copy (any DMA opcode, including the indirect dma.gather / dma.scatter), issued by
  /// global core `core`.
  Status Dma(int core, const isa::Instruction& inst);
  /// A VPU or XLU instruction of `core`.
  Status Vector(int core, const isa::Instruction& inst);
  /// A collective: `members` in rank order (replica group order; sorted core ids for a
  /// permutation), `insts[r]` the instruction of member r (they differ only in src/dst).
  Status Collective(const std::vector<int>& members, const std::vector<isa::Instruction>& insts);

  /// The MXU operand of a load_weights ([K, N], transposed on the way if asked) or a matmul ([M,
  /// K]) read from VMEM of `core` as the array's input values. InvalidArgument on a bad dtype or
  /// address.
  StatusOr<MxuOp> LoadWeightsOp(int core, const isa::Instruction& inst, bool values);
  StatusOr<MxuOp> MatmulOp(int core, const isa::Instruction& inst, bool values);
  /// mxu.pop: rows [acc, acc + m) of `acc` through the activation into VMEM.
  Status Pop(int core, const isa::Instruction& inst, const MxuAccumulators& acc);

 private:
  Status RunScratch(const std::vector<int>& cores, const std::vector<isa::Instruction>& insts);

  MachineState& state_;
  const isa::Program& program_;
  isa::Interpreter scratch_;
  bool values_;
};

}  // namespace tpusim::sim
