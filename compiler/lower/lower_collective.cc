// Collectives as ici.* instructions over HBM buffers: all-reduce, all-gather and reduce-scatter
// along the outermost non-trivial dimension, collective-permute. The replica_groups of the HLO
// become entries of Program::replica_groups (deduplicated); `{}` means all replicas.
#include <fmt/format.h>

#include <algorithm>

#include "compiler/lower/lowerer.h"
#include "hlo/computation.h"
#include "hlo/sharding.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;

StatusOr<uint64_t> Lowerer::GroupIndex(const HloInstruction& inst) {
  auto groups = hlo::ExpandReplicaGroups(inst.replica_groups(), num_replicas_);
  if (!groups.ok()) return Unsupported(inst, groups.status().message());
  isa::ReplicaGroups table;
  for (const auto& g : *groups) {
    std::vector<int32_t> ids;
    for (int64_t id : g) ids.push_back(static_cast<int32_t>(id));
    table.groups.push_back(std::move(ids));
  }
  auto& all = program_->replica_groups;
  auto it = std::find(all.begin(), all.end(), table);
  if (it != all.end()) return static_cast<uint64_t>(it - all.begin());
  all.push_back(std::move(table));
  return static_cast<uint64_t>(all.size() - 1);
}

namespace {

// What a collective's reducer must be (ReducerOp, lower_reduce.cc): another reducer, e.g.
// add(p0, p0), is refused rather than summed.
constexpr const char* kReducerRule =
    "the reducer (to_apply) must be add, maximum or minimum of its two parameters";

// True if concatenating along `dim` of `dims` is a concatenation of contiguous chunks.
bool OuterDim(const std::vector<int64_t>& dims, int64_t dim) {
  for (int64_t i = 0; i < dim; ++i) {
    if (dims[static_cast<size_t>(i)] != 1) return false;
  }
  return true;
}

}  // namespace

Status Lowerer::LowerCollective(const HloInstruction& inst) {
  const auto& outs = Buffers(&inst);
  if (inst.opcode() == HloOpcode::kCollectivePermute) {
    isa::Permutation perm;
    for (const auto& [s, t] : inst.source_target_pairs()) {
      perm.pairs.emplace_back(static_cast<int32_t>(s), static_cast<int32_t>(t));
    }
    auto& all = program_->permutations;
    auto it = std::find(all.begin(), all.end(), perm);
    const uint64_t index = it != all.end() ? static_cast<uint64_t>(it - all.begin()) : all.size();
    if (it == all.end()) all.push_back(perm);
    if (inst.operand_count() != 1 || Buffers(inst.operand(0)).size() != 1 || outs.size() != 1) {
      return Unsupported(inst, "collective-permute of a tuple (or of several operands)");
    }
    const HbmBuffer& in = Buffer(inst.operand(0));
    em_.Emit(isa::op::IciCollectivePermute{.dtype = in.dtype,
                                           .space = isa::MemSpace::kHbm,
                                           .src = in.address,
                                           .dst = outs[0].address,
                                           .count = static_cast<uint64_t>(in.elements()),
                                           .pairs = index});
    return OkStatus();
  }
  TPUSIM_ASSIGN_OR_RETURN(uint64_t group, GroupIndex(inst));
  std::vector<const HbmBuffer*> ins;
  for (const HloInstruction* op : inst.operands()) {
    for (const HbmBuffer& b : Buffers(op)) ins.push_back(&b);
  }
  if (ins.size() != outs.size()) return Unsupported(inst, "operand and result leaf counts differ");
  if (inst.opcode() == HloOpcode::kAllReduce && ins.size() > 1) {
    return LowerTupleAllReduce(inst, ins, outs, group);
  }
  for (size_t i = 0; i < ins.size(); ++i) {
    const HbmBuffer& in = *ins[i];
    const HbmBuffer& out = outs[i];
    switch (inst.opcode()) {
      case HloOpcode::kAllReduce: {
        const auto op = ReducerOp(inst);
        if (!op) return Unsupported(inst, kReducerRule);
        em_.Emit(isa::op::IciAllReduce{.op = *op,
                                       .dtype = in.dtype,
                                       .space = isa::MemSpace::kHbm,
                                       .src = in.address,
                                       .dst = out.address,
                                       .count = static_cast<uint64_t>(in.elements()),
                                       .group = group});
        break;
      }
      case HloOpcode::kAllGather:
        if (!OuterDim(in.dims, inst.dimensions()[0])) {
          return Unsupported(inst, "all-gather along a dimension that is not outermost");
        }
        em_.Emit(isa::op::IciAllGather{.dtype = in.dtype,
                                       .space = isa::MemSpace::kHbm,
                                       .src = in.address,
                                       .dst = out.address,
                                       .count = static_cast<uint64_t>(in.elements()),
                                       .group = group});
        break;
      case HloOpcode::kReduceScatter: {
        const auto op = ReducerOp(inst);
        if (!op) return Unsupported(inst, kReducerRule);
        if (!OuterDim(out.dims, inst.dimensions()[0])) {
          return Unsupported(inst, "reduce-scatter along a dimension that is not outermost");
        }
        em_.Emit(isa::op::IciReduceScatter{.op = *op,
                                           .dtype = in.dtype,
                                           .space = isa::MemSpace::kHbm,
                                           .src = in.address,
                                           .dst = out.address,
                                           .count = static_cast<uint64_t>(out.elements()),
                                           .group = group});
        break;
      }
      default:
        return Unsupported(inst, "collective not supported");
    }
  }
  return OkStatus();
}

Status Lowerer::LowerTupleAllReduce(const HloInstruction& inst,
                                    const std::vector<const HbmBuffer*>& ins,
                                    const std::vector<HbmBuffer>& outs, uint64_t group) {
  const auto op = ReducerOp(inst);
  if (!op) return Unsupported(inst, kReducerRule);
  // Small leaves of one element type are reduced as one ring over a contiguous VMEM staging
  // buffer, so the ring's 2(n-1) hop latencies are paid once for all of them (what XLA's all-reduce
  // combiner buys). Staging costs each leaf 2 * bytes / HBM bandwidth; a leaf joins only while
  // that is less than the ring latency it saves, bytes < (n-1) * hop latency * HBM bytes/cycle
  // (per core, the chip's bandwidth shared by its TensorCores). Larger leaves, and all of them
  // when they do not fit VMEM, run one ring each straight from HBM.
  const int64_t n = static_cast<int64_t>(
      program_->replica_groups[static_cast<size_t>(group)].groups.front().size());
  const double hbm_per_core = config_.HbmBytesPerCyclePerCore();
  const double stage_limit = static_cast<double>(n - 1) *
                             static_cast<double>(config_.system.ici_hop_latency_cycles) *
                             hbm_per_core;
  std::vector<isa::DType> types;
  for (const HbmBuffer* in : ins) {
    if (std::find(types.begin(), types.end(), in->dtype) == types.end()) types.push_back(in->dtype);
  }
  auto ring_in_hbm = [&](size_t i) {
    em_.Emit(isa::op::IciAllReduce{.op = *op,
                                   .dtype = ins[i]->dtype,
                                   .space = isa::MemSpace::kHbm,
                                   .src = ins[i]->address,
                                   .dst = outs[i].address,
                                   .count = static_cast<uint64_t>(ins[i]->elements()),
                                   .group = group});
  };
  for (isa::DType t : types) {
    std::vector<size_t> leaves;
    int64_t bytes = 0;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (ins[i]->dtype != t || ins[i]->elements() == 0) continue;
      if (static_cast<double>(ins[i]->bytes()) >= stage_limit) {
        ring_in_hbm(i);
        continue;
      }
      leaves.push_back(i);
      bytes += ins[i]->bytes();
    }
    if (leaves.empty()) continue;
    const int64_t eb = isa::DTypeBytes(t);
    if (leaves.size() == 1 || bytes > em_.vmem_free()) {
      for (size_t i : leaves) ring_in_hbm(i);
      continue;
    }
    TPUSIM_ASSIGN_OR_RETURN(uint64_t stage, Vmem(inst, bytes, "all-reduce staging buffer"));
    uint64_t offset = 0;
    for (size_t i : leaves) {
      em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, ins[i]->address, stage + offset,
                        ins[i]->bytes(), eb, kLoadFlag);
      offset += static_cast<uint64_t>(ins[i]->bytes());
    }
    em_.Wait(kLoadFlag, static_cast<int64_t>(leaves.size()));
    em_.Emit(isa::op::IciAllReduce{.op = *op,
                                   .dtype = t,
                                   .space = isa::MemSpace::kVmem,
                                   .src = stage,
                                   .dst = stage,
                                   .count = static_cast<uint64_t>(bytes / eb),
                                   .group = group});
    offset = 0;
    for (size_t i : leaves) {
      em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, stage + offset, outs[i].address,
                        ins[i]->bytes(), eb, kStoreFlag);
      offset += static_cast<uint64_t>(ins[i]->bytes());
    }
    em_.Wait(kStoreFlag, static_cast<int64_t>(leaves.size()));
    em_.ResetVmem();
  }
  return OkStatus();
}

}  // namespace tpusim::compiler
