// A fused chain of elementwise ops (lower/fusion.h) as one VPU kernel, optionally ending in a
// reduce of its last member over whole rows (an input fusion). Per chunk of the common
// shape: load each external operand once (scalars and [cols] rows once per kernel, per-row columns
// per chunk), run every member on the VPU out of VMEM in program order, store the members whose
// values are used outside the group. Versus one kernel per op, the intermediates never go to HBM
// and each input is read once.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "compiler/lower/lowerer.h"
#include "hlo/computation.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;

// A fused group's kernel: where each member reads its operands, the external operands, which
// members are stored, its chunks and VMEM buffers.
struct FusedKernel {
  const std::vector<const HloInstruction*>* group = nullptr;
  int64_t n = 0;  // elements of the common shape
  // External operands, deduplicated by (buffer, mode); a virtual pad (which has its operand's
  // address) by itself.
  std::vector<StreamedOperand> ext;
  // For each member and operand: a member index (>= 0) or -1 - external index.
  std::vector<std::vector<int64_t>> source;
  std::vector<bool> stored;  // read by someone outside the group (or the result)
  // An input fusion's reduce (fusion.h) or a row/col/pad operand: whole rows of `cols` per chunk.
  bool by_rows = false;
  int64_t cols = 1;
  bool needs_zero = false;     // is-finite compares with a VMEM 0
  int64_t tmp_bytes = 0;       // clamp / is-finite's temporary, per element
  int64_t bytes_per_elem = 0;  // VMEM bytes per element of a chunk
  uint64_t zero = 0, tmp = 0;
  int64_t chunk = 0;
  std::vector<uint64_t> result;  // each member's chunk in VMEM
  const HloInstruction& first() const { return *group->front(); }
};

FusedKernel Lowerer::PlanFusedOperands(const std::vector<const HloInstruction*>& group,
                                       int64_t n) const {
  FusedKernel k;
  k.group = &group;
  k.n = n;
  auto member_index = [&](const HloInstruction* i) -> int {
    auto it = std::find(group.begin(), group.end(), i);
    return it == group.end() ? -1 : static_cast<int>(it - group.begin());
  };
  std::map<std::pair<uint64_t, isa::Broadcast>, size_t> ext_index;
  std::map<const HloInstruction*, size_t> pad_index;
  k.source.resize(group.size());
  bool needs_tmp = false;
  for (size_t m = 0; m < group.size(); ++m) {
    const HloInstruction& inst = *group[m];
    k.by_rows = k.by_rows || inst.opcode() == HloOpcode::kReduce;
    needs_tmp =
        needs_tmp || inst.opcode() == HloOpcode::kClamp || inst.opcode() == HloOpcode::kIsFinite;
    k.needs_zero = k.needs_zero || inst.opcode() == HloOpcode::kIsFinite;
    for (const HloInstruction* op : inst.operands()) {
      if (const int mi = member_index(op); mi >= 0) {
        k.source[m].push_back(mi);
        continue;
      }
      const StreamedOperand x = StreamOperand(op, k.n);
      k.by_rows = k.by_rows || x.pad != nullptr || x.mode == isa::Broadcast::kRow ||
                  x.mode == isa::Broadcast::kCol;
      // (A virtual pad has its operand's address: it is keyed by itself.)
      const size_t next = k.ext.size();
      const size_t index = x.pad != nullptr
                               ? pad_index.try_emplace(x.pad, next).first->second
                               : ext_index.try_emplace({x.buf->address, x.mode}, next).first->second;
      if (index == next) k.ext.push_back(x);
      k.source[m].push_back(-1 - static_cast<int64_t>(index));
    }
  }
  k.stored.assign(group.size(), false);
  const HloInstruction* root = k.first().parent()->root_instruction();
  k.tmp_bytes = needs_tmp ? 4 : 0;
  k.bytes_per_elem = k.tmp_bytes;
  for (size_t m = 0; m < group.size(); ++m) {
    k.stored[m] = group[m] == root || group[m]->users().empty();
    for (const HloInstruction* u : group[m]->users()) {
      k.stored[m] = k.stored[m] || member_index(u) < 0;
    }
    k.bytes_per_elem += Buffer(group[m]).elem_bytes();
  }
  for (const StreamedOperand& x : k.ext) {
    if (!x.once()) k.bytes_per_elem += x.buf->elem_bytes();
  }
  k.cols = k.by_rows ? k.first().shape().dimensions().back() : 1;
  return k;
}

Status Lowerer::AllocateFusedChunks(FusedKernel& k) {
  const HloInstruction& first = k.first();
  const std::vector<const HloInstruction*>& group = *k.group;
  if (k.needs_zero) {
    TPUSIM_ASSIGN_OR_RETURN(k.zero, Vmem(first, 64, "zero"));
  }
  TPUSIM_ASSIGN_OR_RETURN(const int64_t once_loads, LoadOnceOperands(first, k.ext));
  const int64_t budget =
      em_.vmem_free() - 64 * static_cast<int64_t>(k.ext.size() + group.size() + 4);
  k.chunk = StreamChunkElements(k.n, budget, k.bytes_per_elem, k.by_rows, k.cols);
  if (k.chunk < 1) {
    return DoesNotFit(first, fmt::format("VMEM: a fused chain of {} elementwise ops needs {} bytes "
                                         "per element",
                                         group.size(), k.bytes_per_elem));
  }
  for (StreamedOperand& x : k.ext) {
    if (x.once()) continue;
    const int64_t elems = x.mode == isa::Broadcast::kCol ? k.chunk / k.cols : k.chunk;
    TPUSIM_ASSIGN_OR_RETURN(x.vmem, Vmem(first, elems * x.buf->elem_bytes(), "operand"));
  }
  k.result.resize(group.size());
  for (size_t m = 0; m < group.size(); ++m) {
    const bool reduce = group[m]->opcode() == HloOpcode::kReduce;  // one value per row
    TPUSIM_ASSIGN_OR_RETURN(k.result[m], Vmem(*group[m],
                                              (reduce ? k.chunk / k.cols : k.chunk) *
                                                  Buffer(group[m]).elem_bytes(),
                                              "result"));
  }
  if (k.tmp_bytes > 0) {
    TPUSIM_ASSIGN_OR_RETURN(k.tmp, Vmem(first, k.chunk * k.tmp_bytes, "temporary"));
  }
  em_.Wait(kLoadFlag, once_loads);
  return OkStatus();
}

Status Lowerer::EmitFusedChunk(const FusedKernel& k, int64_t off, int64_t c) {
  const std::vector<const HloInstruction*>& group = *k.group;
  const int64_t cols = k.cols;
  em_.set_tag(TagOf(k.first()));
  int64_t loads = 0;
  for (const StreamedOperand& x : k.ext) {
    if (x.once()) continue;
    TPUSIM_ASSIGN_OR_RETURN(const int64_t d, LoadOperandChunk(x, off, c, cols, x.vmem, kLoadFlag));
    loads += d;
  }
  em_.Wait(kLoadFlag, loads);
  const uint64_t rows = static_cast<uint64_t>(k.by_rows ? c / cols : 1);
  const uint64_t rcols = static_cast<uint64_t>(k.by_rows ? cols : c);
  int64_t stores = 0;
  for (size_t m = 0; m < group.size(); ++m) {
    const HloInstruction& inst = *group[m];
    em_.set_tag(TagOf(inst));
    std::vector<VpuOperand> vops;
    for (int64_t s : k.source[m]) {
      if (s >= 0) {
        vops.push_back({k.result[static_cast<size_t>(s)], isa::Broadcast::kNone,
                        Buffer(group[static_cast<size_t>(s)]).dtype});
      } else {
        const StreamedOperand& x = k.ext[static_cast<size_t>(-1 - s)];
        vops.push_back({x.vmem, x.mode, x.buf->dtype});
      }
    }
    const HbmBuffer& out = Buffer(&inst);
    if (inst.opcode() == HloOpcode::kReduce) {
      // The chunk's rows reduced along the lanes into results that start at the init value.
      em_.Emit(RunningResultsFromInit(isa::DType::kF32, k.result[m], vops[1].vmem,
                                      static_cast<int64_t>(rows)));
      em_.Emit(ReduceInto(*ReducerOp(inst), isa::ReduceAxis::kLanes, isa::DType::kF32,
                          k.result[m], vops[0].vmem, static_cast<int64_t>(rows),
                          static_cast<int64_t>(rcols)));
      if (k.stored[m]) {
        em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, k.result[m],
                          out.address + static_cast<uint64_t>(off / cols * 4),
                          static_cast<int64_t>(rows) * 4, 4, kStoreFlag);
        ++stores;
      }
      continue;
    }
    if (inst.opcode() == HloOpcode::kIsFinite) {  // the 0 it compares with, in its type
      em_.Emit(isa::op::VpuFill{.dtype = vops[0].dtype, .dst = k.zero, .count = 1, .value = 0});
    }
    EmitVpuOp(inst, out.dtype, vops, k.result[m], k.tmp, k.zero, rows, rcols,
              static_cast<uint64_t>(c));
    if (k.stored[m]) {
      const int64_t e = out.elem_bytes();
      em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, k.result[m],
                        out.address + static_cast<uint64_t>(off * e), c * e, e, kStoreFlag);
      ++stores;
    }
  }
  em_.Wait(kStoreFlag, stores);
  return OkStatus();
}

Status Lowerer::LowerFusedElementwise(const std::vector<const HloInstruction*>& group) {
  int64_t n = 1;
  for (int64_t d : group.front()->shape().dimensions()) n *= d;
  if (n == 0) return OkStatus();
  FusedKernel k = PlanFusedOperands(group, n);
  TPUSIM_RETURN_IF_ERROR(AllocateFusedChunks(k));
  for (int64_t off = 0; off < k.n; off += k.chunk) {
    TPUSIM_RETURN_IF_ERROR(EmitFusedChunk(k, off, std::min(k.chunk, k.n - off)));
  }
  return OkStatus();
}

}  // namespace tpusim::compiler
