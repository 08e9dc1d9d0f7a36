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
  isa::Instruction inst = d.ToInstruction();
  inst.opcode = opcode;  // the DMA opcodes share one descriptor layout
  Emit(inst);
}

StatusOr<int64_t> CoreEmitter::Dma(isa::Opcode opcode, uint64_t src,
                                   std::span<const int64_t> src_strides, uint64_t dst,
                                   std::span<const int64_t> dst_strides,
                                   std::span<const int64_t> dims, int64_t elem_bytes,
                                   uint64_t flag) {
  struct Level {
    int64_t n, ss, ds;
  };
  std::vector<Level> lv;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) return int64_t{0};
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
  int64_t n0 = 1;
  if (!lv.empty() && lv.back().ss == elem_bytes && lv.back().ds == elem_bytes) {
    n0 = lv.back().n;
    lv.pop_back();
  }
  Level l1{1, 0, 0}, l2{1, 0, 0};
  if (!lv.empty()) {
    l1 = lv.back();
    lv.pop_back();
  }
  if (!lv.empty()) {
    l2 = lv.back();
    lv.pop_back();
  }
  constexpr int64_t kMax24 = (int64_t{1} << 24) - 1;
  if (n0 > 0xffffffffll || l1.n > kMax24 || l2.n > kMax24) {
    return Unimplemented(
        "a DMA box dimension exceeds the descriptor's field width (n0 < 2^32, "
        "n1/n2 < 2^24)");
  }
  // Remaining outer levels: one descriptor per index (odometer).
  std::vector<int64_t> idx(lv.size(), 0);
  int64_t issued = 0;
  while (true) {
    int64_t so = 0, dof = 0;
    for (size_t i = 0; i < lv.size(); ++i) {
      so += idx[i] * lv[i].ss;
      dof += idx[i] * lv[i].ds;
    }
    isa::op::DmaHbmToVmem d;
    d.flag = flag;
    d.src = src + static_cast<uint64_t>(so);
    d.dst = dst + static_cast<uint64_t>(dof);
    d.elem_bytes = static_cast<uint64_t>(elem_bytes);
    d.n0 = static_cast<uint64_t>(n0);
    d.n1 = static_cast<uint64_t>(l1.n);
    d.n2 = static_cast<uint64_t>(l2.n);
    d.src_s1 = static_cast<uint64_t>(l1.ss);
    d.dst_s1 = static_cast<uint64_t>(l1.ds);
    d.src_s2 = static_cast<uint64_t>(l2.ss);
    d.dst_s2 = static_cast<uint64_t>(l2.ds);
    isa::Instruction inst = d.ToInstruction();
    inst.opcode = opcode;
    Emit(inst);
    ++issued;
    if (size() > kMaxInstructionsPerCore) break;
    size_t k = lv.size();
    while (k > 0) {
      --k;
      if (++idx[k] < lv[k].n) break;
      idx[k] = 0;
      if (k == 0) return issued;
    }
    if (lv.empty()) return issued;
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
