#include "isa/shared_fields.h"

#include <type_traits>

#include "common/saturating.h"

namespace tpusim::isa {

uint64_t MxuIndexOf(const Instruction& inst) {
  return VisitOperands(inst, [&](const auto& o) -> uint64_t {
    if constexpr (requires { o.mxu; }) {
      return o.mxu;
    } else {
      TPUSIM_CHECK(false) << "MxuIndexOf: " << Mnemonic(inst.opcode) << " has no mxu field";
      return 0;
    }
  });
}

uint64_t CollectiveOperands::InputElements(uint64_t n) const {
  return opcode == Opcode::kIciReduceScatter || opcode == Opcode::kIciAllToAll
             ? SaturatingMul(count, n)
             : count;
}

uint64_t CollectiveOperands::OutputElements(uint64_t n) const {
  return opcode == Opcode::kIciAllGather || opcode == Opcode::kIciAllToAll
             ? SaturatingMul(count, n)
             : count;
}

CollectiveOperands CollectiveOperandsOf(const Instruction& inst) {
  TPUSIM_CHECK(Info(inst.opcode).unit == Unit::kIci)
      << "CollectiveOperandsOf: " << Mnemonic(inst.opcode) << " is not a collective";
  return VisitOperands(inst, [&](const auto& o) {
    CollectiveOperands c;
    c.opcode = inst.opcode;
    // Only the ici.* rows have all five (CHECKed above); the branch compiles for every row.
    if constexpr (requires {
                    o.dtype;
                    o.space;
                    o.src;
                    o.dst;
                    o.count;
                  }) {
      c.dtype = o.dtype;
      c.space = o.space;
      c.src = o.src;
      c.dst = o.dst;
      c.count = o.count;
    }
    if constexpr (requires { o.op; }) {
      // decltype of a member is its declared type: vpu.* rows have an `op` of another enum.
      if constexpr (std::is_same_v<decltype(o.op), ReduceOp>) c.op = o.op;
    }
    return c;
  });
}

DmaSpaces DmaSpacesOf(const Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kDmaHbmToVmem:
      return {MemSpace::kHbm, MemSpace::kVmem};
    case Opcode::kDmaVmemToHbm:
      return {MemSpace::kVmem, MemSpace::kHbm};
    case Opcode::kDmaVmemToVmem:
      return {MemSpace::kVmem, MemSpace::kVmem};
    case Opcode::kDmaHostToHbm:
      return {MemSpace::kHost, MemSpace::kHbm};
    case Opcode::kDmaHbmToHost:
      return {MemSpace::kHbm, MemSpace::kHost};
    case Opcode::kDmaVmemToRemote:
      return {MemSpace::kVmem, inst.As<op::DmaVmemToRemote>().dst_space};
    default:
      break;
  }
  TPUSIM_CHECK(false) << "DmaSpacesOf: " << Mnemonic(inst.opcode) << " is not a strided DMA";
  return {};
}

std::optional<uint64_t> ReplicaGroupOf(const Instruction& inst) {
  return VisitOperands(inst, [](const auto& o) -> std::optional<uint64_t> {
    if constexpr (requires { o.group; }) {
      return o.group;
    } else {
      return std::nullopt;
    }
  });
}

}  // namespace tpusim::isa
