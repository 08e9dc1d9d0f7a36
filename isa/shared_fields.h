// Typed access to the operand fields a family of opcodes shares (every MXU instruction's `mxu`,
// every collective's dtype/space/src/dst/count, the replica-group index of sync.barrier and the
// grouped collectives, the memory spaces a strided DMA copies between), for code that handles the
// family without a case per opcode: the simulator's sequencer and collective unit, the semantics,
// footprints and verifier checks of collectives and DMAs. Generated from opcodes.def through
// VisitOperands, so a field is read as a typed member of its op::<Id> struct (instruction.h),
// never looked up by its name string; a new opcode of a family is covered by its row alone (the
// DMA spaces, which no field holds, by one case of DmaSpacesOf). The DMA descriptor's typed view
// is DmaDescriptorOf (footprint.h).
#pragma once

#include <cstdint>
#include <optional>

#include "common/check.h"
#include "isa/instruction.h"

namespace tpusim::isa {

/// Calls `f` with the typed operand struct of `inst` (op::<Id> for inst.opcode) and returns what
/// `f` returns; every instantiation of `f` (one per opcode) must return the same type.
template <typename F>
decltype(auto) VisitOperands(const Instruction& inst, F&& f) {
  switch (inst.opcode) {
#define TPU_F(...)
#define TPU_OP(id, mnemonic, unit, fields, doc) \
  case Opcode::k##id:                           \
    return f(op::id::FromInstruction(inst));
#include "isa/opcodes.def"
#undef TPU_OP
#undef TPU_F
  }
  TPUSIM_CHECK(false) << "VisitOperands: opcode " << static_cast<int>(inst.opcode)
                      << " is not in opcodes.def";
  return f(op::Nop{});  // not reached
}

/// The `mxu` field (which of the core's MXUs) of an instruction of Unit::kMxu. TPUSIM_CHECKs that
/// the opcode has that field.
uint64_t MxuIndexOf(const Instruction& inst);

/// The operands every ici.* collective has, typed.
struct CollectiveOperands {
  Opcode opcode = Opcode::kNop;
  ReduceOp op = ReduceOp::kSum;  // the `op` field where the opcode has one; sum otherwise
  DType dtype = DType::kF32;
  MemSpace space = MemSpace::kHbm;
  uint64_t src = 0, dst = 0;  // byte addresses in `space` of the issuing core
  uint64_t count = 0;         // the `count` field, elements
  /// Elements each member reads at `src` / writes at `dst` in a group of `n` members: `count`,
  /// times n on the side that holds every member's piece (all_gather's output, reduce_scatter's
  /// input, both sides of all_to_all), saturating at UINT64_MAX (common/saturating.h).
  uint64_t InputElements(uint64_t n) const;
  uint64_t OutputElements(uint64_t n) const;
};
/// `inst`'s collective operands. TPUSIM_CHECKs that `inst` runs on Unit::kIci.
CollectiveOperands CollectiveOperandsOf(const Instruction& inst);

/// The memory spaces a strided DMA copies between (every Unit::kDma opcode but dma.gather and
/// dma.scatter, whose sides indirect_dma.h gives): `from` of the issuing core; `to` of the issuing
/// core, or for dma.vmem_to_remote its dst_space of its dst_core (the verifier refuses a space
/// other than vmem or hbm). TPUSIM_CHECKs that `inst` is such a DMA.
struct DmaSpaces {
  MemSpace from = MemSpace::kHbm;
  MemSpace to = MemSpace::kVmem;
};
DmaSpaces DmaSpacesOf(const Instruction& inst);

/// The replica-group table index (`group` field) of sync.barrier and the grouped collectives;
/// nullopt for an opcode without one (ici.collective_permute names a permutation instead).
std::optional<uint64_t> ReplicaGroupOf(const Instruction& inst);

}  // namespace tpusim::isa
