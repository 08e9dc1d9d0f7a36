// The indirect (index-driven) DMAs, dma.gather and dma.scatter (opcodes.def): their data effect and
// the address ranges they may touch. One implementation serves every executor — isa::Interpreter
// (the golden semantics) and the simulator's data path — so both give the same bits by
// construction; the simulator only adds time.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "isa/instruction.h"
#include "isa/memory.h"

namespace tpusim::isa {

/// True for dma.gather and dma.scatter.
bool IsIndirectDma(Opcode op);

/// The descriptor of an indirect DMA, read from either opcode (scatter-only fields are 0 for a
/// gather).
struct IndirectDma {
  bool scatter = false;
  uint64_t src = 0, dst = 0, elem_bytes = 4, n0 = 1, n1 = 1, n2 = 1;
  uint64_t src_s1 = 0, src_s2 = 0, dst_s1 = 0, dst_s2 = 0;
  uint64_t idx = 0, count = 1, idx_scale = 0, bound = 0, slice_stride = 0;
  bool combine = false;
  ReduceOp op = ReduceOp::kSum;
  DType dtype = DType::kF32;

  static IndirectDma From(const Instruction& inst);
  /// Bytes of one box (n0 * n1 * n2 * elem_bytes) and of all `count` boxes.
  uint64_t box_bytes() const { return n0 * n1 * n2 * elem_bytes; }
  uint64_t total_bytes() const { return box_bytes() * count; }
  /// HBM bytes [hbm_base(), hbm_base() + hbm_extent()) every index in [0, bound] may reach (the
  /// gather's source, the scatter's destination): bound * idx_scale + the box's extent.
  uint64_t hbm_base() const { return scatter ? dst : src; }
  uint64_t hbm_extent() const;
  /// VMEM bytes the `count` slices occupy from vmem_base(): (count-1)*slice_stride + box extent.
  uint64_t vmem_base() const { return scatter ? src : dst; }
  uint64_t vmem_extent() const;
  /// VMEM bytes of the index list: count * 4.
  uint64_t idx_bytes() const { return count * 4; }
};

/// Checks the fields an executor relies on (elem_bytes, counts, the combiner's dtype), then runs
/// the instruction: indices from `vmem`, data between `hbm` and `vmem`. InvalidArgument naming the
/// problem (bad field, an address outside a memory).
Status ExecuteIndirectDma(const Instruction& inst, SparseMemory& hbm, SparseMemory& vmem);

}  // namespace tpusim::isa
