#include "isa/work_units.h"

#include <utility>
#include <vector>

#include "common/saturating.h"
#include "isa/footprint.h"
#include "isa/loop_structure.h"
#include "isa/opcode.h"

namespace tpusim::isa {
namespace {

// rows * cols of a region op.
template <class Op>
uint64_t RegionElements(const Instruction& inst) {
  const Op x = inst.As<Op>();
  return SaturatingProduct({x.rows, x.cols});
}

// count * group_size of a collective whose members each combine or gather a group's data.
template <class Op>
uint64_t GroupElements(const Instruction& inst, uint64_t group_size) {
  return SaturatingProduct({inst.As<Op>().count, group_size});
}

// A DMA's bytes (rounded up to kDmaBytesPerUnit) and rows.
uint64_t DmaUnits(const Instruction& inst) {
  const DmaDescriptor d = DmaDescriptorOf(inst);
  const uint64_t elements = DmaElementsMoved(inst);
  const uint64_t rows = d.n0 == 0 ? 0 : elements / d.n0;
  const uint64_t bytes = SaturatingMul(elements, d.elem_bytes);
  const uint64_t byte_units = bytes / kDmaBytesPerUnit + (bytes % kDmaBytesPerUnit != 0);
  return SaturatingAdd(byte_units, SaturatingMul(rows, kDmaRowUnits));
}

// The MXU part: matmul, load_weights, pop (0 for other instructions).
uint64_t MxuUnits(const Instruction& inst, const MemorySizes& sizes) {
  const uint64_t array = SaturatingProduct({static_cast<uint64_t>(sizes.mxu_rows),
                                  static_cast<uint64_t>(sizes.mxu_cols), kMxuArrayUnits});
  switch (inst.opcode) {
    case Opcode::kMxuMatmul: {
      auto mm = inst.As<op::MxuMatmul>();
      const uint64_t per_output =
          SaturatingAdd(SaturatingProduct({mm.k, kMacUnits}), kMxuOutputUnits);
      return SaturatingAdd(SaturatingProduct({mm.m, mm.n, per_output}), mm.latch ? array : 0);
    }
    case Opcode::kMxuLoadWeights: {
      auto w = inst.As<op::MxuLoadWeights>();
      return SaturatingAdd(SaturatingProduct({w.k, w.n, kWeightUnits}), array);
    }
    case Opcode::kMxuPop: {
      auto p = inst.As<op::MxuPop>();
      return SaturatingProduct({p.m, p.n, kPopUnits});
    }
    default:
      return 0;
  }
}

// The elements of a vector, transpose or collective instruction, and the charge of each.
std::pair<uint64_t, uint64_t> VectorElements(const Instruction& inst, uint64_t group_size) {
  switch (inst.opcode) {
    case Opcode::kVpuUnary:
      return {inst.As<op::VpuUnary>().count, kVpuUnaryUnits};
    case Opcode::kVpuConvert:
      return {inst.As<op::VpuConvert>().count, kVpuConvertUnits};
    case Opcode::kVpuFill:
      return {inst.As<op::VpuFill>().count, kVpuFillUnits};
    case Opcode::kVpuRngBits:
      return {inst.As<op::VpuRngBits>().count, kRngBitsUnits};
    case Opcode::kVpuBinary:
      return {RegionElements<op::VpuBinary>(inst), kVpuBinaryUnits};
    case Opcode::kVpuCompare:
      return {RegionElements<op::VpuCompare>(inst), kVpuCompareUnits};
    case Opcode::kVpuSelect:
      return {RegionElements<op::VpuSelect>(inst), kVpuSelectUnits};
    case Opcode::kVpuReduce:
      return {RegionElements<op::VpuReduce>(inst), kVpuReduceUnits};
    case Opcode::kVpuBroadcast:
      return {RegionElements<op::VpuBroadcast>(inst), kVpuBroadcastUnits};
    case Opcode::kVpuIota:
      return {RegionElements<op::VpuIota>(inst), kVpuIotaUnits};
    case Opcode::kXluTranspose:
      return {RegionElements<op::XluTranspose>(inst), kTransposeUnits};
    case Opcode::kVpuCopy: {
      auto v = inst.As<op::VpuCopy>();
      return {SaturatingProduct({v.n0, v.n1, v.n2}), kVpuCopyUnits};
    }
    case Opcode::kIciCollectivePermute:
      return {inst.As<op::IciCollectivePermute>().count, kCollectiveElementUnits};
    case Opcode::kIciAllReduce:
      return {GroupElements<op::IciAllReduce>(inst, group_size), kCollectiveElementUnits};
    case Opcode::kIciAllGather:
      return {GroupElements<op::IciAllGather>(inst, group_size), kCollectiveElementUnits};
    case Opcode::kIciReduceScatter:
      return {GroupElements<op::IciReduceScatter>(inst, group_size), kCollectiveElementUnits};
    case Opcode::kIciAllToAll:
      return {GroupElements<op::IciAllToAll>(inst, group_size), kCollectiveElementUnits};
    default:
      return {0, 0};
  }
}

}  // namespace

uint64_t InterpreterWorkUnits(const Instruction& inst, const MemorySizes& sizes,
                              uint64_t group_size) {
  if (Info(inst.opcode).unit == Unit::kDma) return DmaUnits(inst);
  if (Info(inst.opcode).unit == Unit::kMxu) return MxuUnits(inst, sizes);
  const auto [elements, each] = VectorElements(inst, group_size);
  return SaturatingMul(elements, each);
}

namespace {

// MinimumWorkUnits for one core's code.
uint64_t CoreMinimumWorkUnits(const std::vector<Instruction>& code,
                              const std::function<uint64_t(const Instruction&)>& element_units) {
  constexpr uint64_t kOne = kInstructionWorkUnits;
  const LoopStructure loops(code);
  if (!loops.status().ok()) return 0;
  uint64_t total = 0;
  uint64_t before_outer_loop = 0;  // `total` when the outermost open loop began
  std::vector<uint64_t> trips{1};  // executions of the current instruction, per open loop
  for (size_t i = 0; i < code.size(); ++i) {
    const Instruction& inst = code[i];
    if (inst.opcode == Opcode::kCtrlHalt) {
      // The core stops here, on the first trip of any loop around it.
      return trips.size() > 1 ? before_outer_loop : SaturatingAdd(total, kOne);
    }
    if (inst.opcode == Opcode::kCtrlLoop) {
      if (trips.size() == 1) before_outer_loop = total;
      total = SaturatingAdd(total, SaturatingMul(trips.back(), kOne));
      const bool may_leave = loops.AssumedTrips(i, UINT64_MAX) != UINT64_MAX;
      const uint64_t count = inst.As<op::CtrlLoop>().count;
      trips.push_back(may_leave ? 0 : SaturatingMul(trips.back(), count));
      continue;
    }
    const uint64_t each = SaturatingAdd(kOne, element_units(inst));
    total = SaturatingAdd(total, SaturatingMul(trips.back(), each));
    if (inst.opcode == Opcode::kCtrlEndLoop && trips.size() > 1) trips.pop_back();
  }
  return total;
}

}  // namespace

uint64_t MinimumWorkUnits(const Program& program,
                          const std::function<uint64_t(const Instruction&)>& element_units) {
  uint64_t total = 0;
  for (const CoreProgram& core : program.cores) {
    total = SaturatingAdd(total, CoreMinimumWorkUnits(core.instructions, element_units));
  }
  return total;
}

uint64_t MinimumWorkUnits(const Program& program, const MemorySizes& sizes) {
  return MinimumWorkUnits(program,
                          [&](const Instruction& i) { return InterpreterWorkUnits(i, sizes); });
}

}  // namespace tpusim::isa
