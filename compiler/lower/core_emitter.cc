#include "compiler/lower/core_emitter.h"

#include <algorithm>

#include "common/check.h"

namespace tpusim::compiler {

std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims, int64_t elem_bytes) {
  std::vector<int64_t> s(dims.size());
  int64_t acc = elem_bytes;
  for (size_t i = dims.size(); i-- > 0;) {
    s[i] = acc;
    acc *= dims[i];
  }
  return s;
}

void CoreEmitter::Emit(const isa::Instruction& inst) {
  core_->instructions.push_back(inst);
  core_->hlo_tags.push_back(tag_);
}

int64_t CoreEmitter::AllocVmem(int64_t bytes) {
  const int64_t start = (vmem_top_ + 63) / 64 * 64;
  if (bytes < 0 || start + bytes > vmem_bytes_) return -1;
  vmem_top_ = start + bytes;
  peak_vmem_ = std::max(peak_vmem_, vmem_top_);
  return start;
}

void CoreEmitter::DmaContiguous(isa::Opcode opcode, uint64_t src, uint64_t dst, int64_t bytes,
                                int64_t elem_bytes, uint64_t flag) {
  isa::op::DmaHbmToVmem d;
  d.flag = flag;
  d.src = src;
  d.dst = dst;
  d.elem_bytes = static_cast<uint64_t>(elem_bytes);
  d.n0 = static_cast<uint64_t>(bytes / elem_bytes);
  d.n1 = 1;
  d.n2 = 1;
  EmitDma(opcode, d);
}

uint64_t CoreEmitter::HbmBytes(uint64_t address, uint64_t bytes) const {
  const HbmArray* best = nullptr;
  for (const HbmArray& a : hbm_arrays_) {
    if (address >= a.address && address - a.address < static_cast<uint64_t>(a.bytes) &&
        (best == nullptr || a.address >= best->address)) {
      best = &a;
    }
  }
  if (best == nullptr || best->tiled_bytes <= best->bytes) return bytes;
  __extension__ using U128 = unsigned __int128;  // bytes * tiled_bytes needs up to 2 * 40 bits
  const U128 scaled = static_cast<U128>(bytes) * static_cast<uint64_t>(best->tiled_bytes);
  const uint64_t logical = static_cast<uint64_t>(best->bytes);
  return static_cast<uint64_t>((scaled + logical - 1) / logical);
}

void CoreEmitter::EmitDma(isa::Opcode opcode, isa::op::DmaHbmToVmem d) {
  const bool hbm_src = opcode == isa::Opcode::kDmaHbmToVmem || opcode == isa::Opcode::kDmaHbmToHost;
  const bool hbm_dst = opcode == isa::Opcode::kDmaVmemToHbm || opcode == isa::Opcode::kDmaHostToHbm;
  if (hbm_src || hbm_dst) {
    const uint64_t moved = d.n0 * d.n1 * d.n2 * d.elem_bytes;
    const uint64_t tiled = HbmBytes(hbm_src ? d.src : d.dst, moved);
    d.hbm_bytes = tiled > moved ? tiled : 0;
  }
  isa::Instruction inst = d.ToInstruction();
  inst.opcode = opcode;  // these DMA opcodes share one descriptor layout (isa/opcodes.def)
  Emit(inst);
}

StatusOr<std::vector<DmaBoxPiece>> SplitDmaBox(std::span<const int64_t> src_strides,
                                               std::span<const int64_t> dst_strides,
                                               std::span<const int64_t> dims, int64_t elem_bytes) {
  struct Level {
    int64_t n, ss, ds;
  };
  std::vector<Level> lv;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) return std::vector<DmaBoxPiece>{};
    if (dims[i] != 1) lv.push_back({dims[i], src_strides[i], dst_strides[i]});
  }
  // Merge an outer level into the inner one when both sides are contiguous across them.
  for (size_t i = lv.size(); i-- > 1;) {
    Level& o = lv[i - 1];
    const Level& in = lv[i];
    if (o.ss == in.ss * in.n && o.ds == in.ds * in.n) {
      o = {o.n * in.n, in.ss, in.ds};
      lv.erase(lv.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  DmaBoxPiece base;
  if (!lv.empty() && lv.back().ss == elem_bytes && lv.back().ds == elem_bytes) {
    base.n0 = lv.back().n;
    lv.pop_back();
  }
  if (!lv.empty()) {
    base.n1 = lv.back().n, base.ss1 = lv.back().ss, base.ds1 = lv.back().ds;
    lv.pop_back();
  }
  if (!lv.empty()) {
    base.n2 = lv.back().n, base.ss2 = lv.back().ss, base.ds2 = lv.back().ds;
    lv.pop_back();
  }
  constexpr int64_t kMax24 = (int64_t{1} << 24) - 1;
  if (base.n0 > 0xffffffffll || base.n1 > kMax24 || base.n2 > kMax24) {
    return Unimplemented(
        "a DMA box dimension exceeds the descriptor's field width (n0 < 2^32, n1/n2 < 2^24)");
  }
  // Remaining outer levels: one piece per index (odometer).
  std::vector<DmaBoxPiece> pieces;
  std::vector<int64_t> idx(lv.size(), 0);
  while (true) {
    DmaBoxPiece p = base;
    for (size_t i = 0; i < lv.size(); ++i) {
      p.src_off += idx[i] * lv[i].ss;
      p.dst_off += idx[i] * lv[i].ds;
    }
    pieces.push_back(p);
    if (static_cast<int64_t>(pieces.size()) > kMaxInstructionsPerCore) break;
    size_t k = lv.size();
    bool done = true;
    while (k > 0) {
      --k;
      if (++idx[k] < lv[k].n) {
        done = false;
        break;
      }
      idx[k] = 0;
    }
    if (done) break;
  }
  return pieces;
}

StatusOr<int64_t> CoreEmitter::Dma(isa::Opcode opcode, uint64_t src,
                                   std::span<const int64_t> src_strides, uint64_t dst,
                                   std::span<const int64_t> dst_strides,
                                   std::span<const int64_t> dims, int64_t elem_bytes,
                                   uint64_t flag) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<DmaBoxPiece> pieces,
                          SplitDmaBox(src_strides, dst_strides, dims, elem_bytes));
  int64_t issued = 0;
  for (const DmaBoxPiece& p : pieces) {
    isa::op::DmaHbmToVmem d;
    d.flag = flag;
    SetDmaPiece(d, p, src, dst, elem_bytes);
    EmitDma(opcode, d);
    ++issued;
    if (size() > kMaxInstructionsPerCore) break;
  }
  return issued;
}

void CoreEmitter::Wait(uint64_t flag, int64_t count) {
  if (count <= 0) return;
  Emit(isa::op::SyncWait{.flag = flag, .value = static_cast<uint64_t>(count)});
}

Status CoreEmitter::CheckSize() const {
  if (size() > kMaxInstructionsPerCore) {
    return ResourceExhausted("program too large: more than " +
                             std::to_string(kMaxInstructionsPerCore) + " instructions on one core");
  }
  return OkStatus();
}

}  // namespace tpusim::compiler
