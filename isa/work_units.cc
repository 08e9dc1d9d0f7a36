#include "isa/work_units.h"

#include <initializer_list>

#include "common/saturating.h"
#include "isa/footprint.h"
#include "isa/opcode.h"

namespace tpusim::isa {
namespace {

uint64_t Product(std::initializer_list<uint64_t> factors) {
  uint64_t p = 1;
  for (uint64_t f : factors) p = SaturatingMul(p, f);
  return p;
}

// rows * cols of a region op.
template <class Op>
uint64_t RegionElements(const Instruction& inst) {
  const Op x = inst.As<Op>();
  return Product({x.rows, x.cols});
}

// count * group_size of a collective whose members each combine or gather a group's data.
template <class Op>
uint64_t GroupElements(const Instruction& inst, uint64_t group_size) {
  return Product({inst.As<Op>().count, group_size});
}

}  // namespace

uint64_t InterpreterWorkUnits(const Instruction& inst, uint64_t group_size) {
  if (Info(inst.opcode).unit == Unit::kDma) return DmaElementsMoved(inst);
  switch (inst.opcode) {
    case Opcode::kMxuMatmul: {
      auto mm = inst.As<op::MxuMatmul>();
      return Product({mm.m, mm.k, mm.n});
    }
    case Opcode::kMxuLoadWeights: {
      auto w = inst.As<op::MxuLoadWeights>();
      return Product({w.k, w.n});
    }
    case Opcode::kMxuPop: {
      auto p = inst.As<op::MxuPop>();
      return Product({p.m, p.n});
    }
    case Opcode::kVpuUnary:
      return inst.As<op::VpuUnary>().count;
    case Opcode::kVpuConvert:
      return inst.As<op::VpuConvert>().count;
    case Opcode::kVpuFill:
      return inst.As<op::VpuFill>().count;
    case Opcode::kVpuRngBits:
      return inst.As<op::VpuRngBits>().count;
    case Opcode::kVpuBinary:
      return RegionElements<op::VpuBinary>(inst);
    case Opcode::kVpuCompare:
      return RegionElements<op::VpuCompare>(inst);
    case Opcode::kVpuSelect:
      return RegionElements<op::VpuSelect>(inst);
    case Opcode::kVpuReduce:
      return RegionElements<op::VpuReduce>(inst);
    case Opcode::kVpuBroadcast:
      return RegionElements<op::VpuBroadcast>(inst);
    case Opcode::kVpuIota:
      return RegionElements<op::VpuIota>(inst);
    case Opcode::kXluTranspose:
      return RegionElements<op::XluTranspose>(inst);
    case Opcode::kVpuCopy: {
      auto v = inst.As<op::VpuCopy>();
      return Product({v.n0, v.n1, v.n2});
    }
    case Opcode::kIciCollectivePermute:
      return inst.As<op::IciCollectivePermute>().count;
    case Opcode::kIciAllReduce:
      return GroupElements<op::IciAllReduce>(inst, group_size);
    case Opcode::kIciAllGather:
      return GroupElements<op::IciAllGather>(inst, group_size);
    case Opcode::kIciReduceScatter:
      return GroupElements<op::IciReduceScatter>(inst, group_size);
    case Opcode::kIciAllToAll:
      return GroupElements<op::IciAllToAll>(inst, group_size);
    default:
      return 0;
  }
}

}  // namespace tpusim::isa
