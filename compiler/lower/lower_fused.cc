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

Status Lowerer::LowerFusedElementwise(const std::vector<const HloInstruction*>& group) {
  const HloInstruction& first = *group.front();
  const std::vector<int64_t> dims = first.shape().dimensions();
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (n == 0) return OkStatus();
  auto member_index = [&](const HloInstruction* i) -> int {
    auto it = std::find(group.begin(), group.end(), i);
    return it == group.end() ? -1 : static_cast<int>(it - group.begin());
  };

  // External operands, deduplicated by (buffer, mode).
  struct External {
    const HbmBuffer* buf;
    isa::Broadcast mode;
    uint64_t vmem = 0;
    const HloInstruction* pad = nullptr;  // a virtual pad (IsVirtualPad), read by LoadPaddedRows
    uint64_t pad_value = 0;               // its padding value in VMEM
    bool once() const { return mode == isa::Broadcast::kScalar || mode == isa::Broadcast::kRow; }
  };
  std::vector<External> ext;
  // (A virtual pad has its operand's address: it is keyed by itself.)
  std::map<std::pair<uint64_t, isa::Broadcast>, size_t> ext_index;
  std::map<const HloInstruction*, size_t> pad_index;
  // For each member and operand: a member index (>= 0) or -1 - external index.
  std::vector<std::vector<int64_t>> source(group.size());
  bool by_rows = false, needs_tmp = false, needs_zero = false;
  for (size_t m = 0; m < group.size(); ++m) {
    const HloInstruction& inst = *group[m];
    // An input fusion's reduce (fusion.h) reduces whole rows of each chunk.
    by_rows = by_rows || inst.opcode() == HloOpcode::kReduce;
    needs_tmp =
        needs_tmp || inst.opcode() == HloOpcode::kClamp || inst.opcode() == HloOpcode::kIsFinite;
    needs_zero = needs_zero || inst.opcode() == HloOpcode::kIsFinite;
    for (const HloInstruction* op : inst.operands()) {
      const int mi = member_index(op);
      if (mi >= 0) {
        source[m].push_back(mi);
        continue;
      }
      const HbmBuffer& b = Buffer(op);
      isa::Broadcast mode = VirtualBroadcastKind(*op);
      if (mode == isa::Broadcast::kNone && b.elements() == 1 && n > 1) {
        mode = isa::Broadcast::kScalar;
      }
      if (const HloInstruction* pad = mode == isa::Broadcast::kNone ? VirtualPadOf(op) : nullptr) {
        by_rows = true;
        auto [it, inserted] = pad_index.try_emplace(pad, ext.size());
        if (inserted) ext.push_back({&b, mode, 0, pad});
        source[m].push_back(-1 - static_cast<int64_t>(it->second));
        continue;
      }
      by_rows = by_rows || mode == isa::Broadcast::kRow || mode == isa::Broadcast::kCol;
      auto [it, inserted] = ext_index.try_emplace({b.address, mode}, ext.size());
      if (inserted) ext.push_back({&b, mode});
      source[m].push_back(-1 - static_cast<int64_t>(it->second));
    }
  }
  // Members read by someone outside the group (or the result) are stored.
  std::vector<bool> stored(group.size(), false);
  const HloInstruction* root = first.parent()->root_instruction();
  const int64_t tmp_bytes = needs_tmp ? 4 : 0;
  int64_t bytes_per_elem = tmp_bytes;
  for (size_t m = 0; m < group.size(); ++m) {
    stored[m] = group[m] == root || group[m]->users().empty();
    for (const HloInstruction* u : group[m]->users()) stored[m] = stored[m] || member_index(u) < 0;
    bytes_per_elem += Buffer(group[m]).elem_bytes();
  }
  for (const External& x : ext) {
    if (!x.once()) bytes_per_elem += x.buf->elem_bytes();
  }
  const int64_t cols = by_rows ? dims.back() : 1;

  uint64_t zero = 0;
  if (needs_zero) {
    TPUSIM_ASSIGN_OR_RETURN(zero, Vmem(first, 64, "zero"));
  }
  int64_t once_loads = 0;
  for (External& x : ext) {
    if (x.pad != nullptr) {
      TPUSIM_ASSIGN_OR_RETURN(x.pad_value, LoadPaddingValue(first, *x.pad));
      ++once_loads;
    }
    if (!x.once()) continue;
    const int64_t bytes = x.mode == isa::Broadcast::kScalar ? x.buf->elem_bytes() : x.buf->bytes();
    TPUSIM_ASSIGN_OR_RETURN(x.vmem, Vmem(first, std::max<int64_t>(bytes, 64), "broadcast operand"));
    em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, x.buf->address, x.vmem, bytes,
                      x.buf->elem_bytes(), kLoadFlag);
    ++once_loads;
  }
  const int64_t budget = em_.vmem_free() - 64 * static_cast<int64_t>(ext.size() + group.size() + 4);
  int64_t chunk = std::min<int64_t>(n, budget / std::max<int64_t>(1, bytes_per_elem));
  if (by_rows) chunk = chunk / cols * cols;
  if (chunk < 1) {
    return DoesNotFit(first, fmt::format("VMEM: a fused chain of {} elementwise ops needs {} bytes "
                                         "per element",
                                         group.size(), bytes_per_elem));
  }
  if (!by_rows && chunk < n && chunk > 1024) chunk = chunk / 1024 * 1024;
  for (External& x : ext) {
    if (x.once()) continue;
    const int64_t elems = x.mode == isa::Broadcast::kCol ? chunk / cols : chunk;
    TPUSIM_ASSIGN_OR_RETURN(x.vmem, Vmem(first, elems * x.buf->elem_bytes(), "operand"));
  }
  std::vector<uint64_t> result(group.size());
  for (size_t m = 0; m < group.size(); ++m) {
    const bool reduce = group[m]->opcode() == HloOpcode::kReduce;  // one value per row
    TPUSIM_ASSIGN_OR_RETURN(
        result[m],
        Vmem(*group[m], (reduce ? chunk / cols : chunk) * Buffer(group[m]).elem_bytes(), "result"));
  }
  uint64_t tmp = 0;
  if (tmp_bytes > 0) {
    TPUSIM_ASSIGN_OR_RETURN(tmp, Vmem(first, chunk * tmp_bytes, "temporary"));
  }
  em_.Wait(kLoadFlag, once_loads);

  const int32_t first_tag = TagOf(first);
  for (int64_t off = 0; off < n; off += chunk) {
    const int64_t c = std::min(chunk, n - off);
    em_.set_tag(first_tag);
    int64_t loads = 0;
    for (const External& x : ext) {
      if (x.once()) continue;
      if (x.pad != nullptr) {  // whole rows: by_rows
        TPUSIM_ASSIGN_OR_RETURN(int64_t d, LoadPaddedRows(*x.pad, off / cols, c / cols, x.vmem,
                                                          x.pad_value, kLoadFlag));
        loads += d;
        continue;
      }
      const int64_t e = x.buf->elem_bytes();
      const bool col = x.mode == isa::Broadcast::kCol;
      const int64_t start = col ? off / cols : off, count = col ? c / cols : c;
      em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem,
                        x.buf->address + static_cast<uint64_t>(start * e), x.vmem, count * e, e,
                        kLoadFlag);
      ++loads;
    }
    em_.Wait(kLoadFlag, loads);
    const uint64_t rows = static_cast<uint64_t>(by_rows ? c / cols : 1);
    const uint64_t rcols = static_cast<uint64_t>(by_rows ? cols : c);
    int64_t stores = 0;
    for (size_t m = 0; m < group.size(); ++m) {
      const HloInstruction& inst = *group[m];
      em_.set_tag(TagOf(inst));
      std::vector<VpuOperand> vops;
      for (int64_t s : source[m]) {
        if (s >= 0) {
          vops.push_back({result[static_cast<size_t>(s)], isa::Broadcast::kNone,
                          Buffer(group[static_cast<size_t>(s)]).dtype});
        } else {
          const External& x = ext[static_cast<size_t>(-1 - s)];
          vops.push_back({x.vmem, x.mode, x.buf->dtype});
        }
      }
      const HbmBuffer& out = Buffer(&inst);
      if (inst.opcode() == HloOpcode::kReduce) {
        // The chunk's rows reduced along the lanes into results that start at the init value.
        em_.Emit(RunningResultsFromInit(isa::DType::kF32, result[m], vops[1].vmem,
                                        static_cast<int64_t>(rows)));
        em_.Emit(ReduceInto(*ReducerOp(inst), isa::ReduceAxis::kLanes, isa::DType::kF32, result[m],
                            vops[0].vmem, static_cast<int64_t>(rows),
                            static_cast<int64_t>(rcols)));
        if (stored[m]) {
          em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, result[m],
                            out.address + static_cast<uint64_t>(off / cols * 4),
                            static_cast<int64_t>(rows) * 4, 4, kStoreFlag);
          ++stores;
        }
        continue;
      }
      if (inst.opcode() == HloOpcode::kIsFinite) {  // the 0 it compares with, in its type
        em_.Emit(isa::op::VpuFill{.dtype = vops[0].dtype, .dst = zero, .count = 1, .value = 0});
      }
      EmitVpuOp(inst, out.dtype, vops, result[m], tmp, zero, rows, rcols, static_cast<uint64_t>(c));
      if (stored[m]) {
        const int64_t e = out.elem_bytes();
        em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, result[m],
                          out.address + static_cast<uint64_t>(off * e), c * e, e, kStoreFlag);
        ++stores;
      }
    }
    em_.Wait(kStoreFlag, stores);
  }
  return OkStatus();
}

}  // namespace tpusim::compiler
