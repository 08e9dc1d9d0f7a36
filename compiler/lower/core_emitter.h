// CoreEmitter: appends instructions to one core's program, tagged with the HLO instruction being
// lowered, and hands out VMEM for one kernel at a time.
//
// Synchronization convention of the emitted code: loads (HBM -> VMEM) signal sync flag kLoadFlag,
// stores (VMEM -> HBM) signal kStoreFlag; a kernel waits for its loads before computing and for its
// stores before the next kernel starts, so kernels never overlap (DMA/compute overlap inside a
// kernel comes from issuing the next block's loads before the current block's compute).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "isa/instruction.h"
#include "isa/program.h"

namespace tpusim::compiler {

inline constexpr uint64_t kLoadFlag = 0;
inline constexpr uint64_t kStoreFlag = 1;

/// Upper bound on instructions per core, so a pathological module fails instead of exhausting
/// memory.
inline constexpr int64_t kMaxInstructionsPerCore = int64_t{1} << 24;

/// One 3-level strided DMA descriptor of a box cut by SplitDmaBox: byte offsets of its origin on
/// the source and destination sides, element counts n0 (contiguous run), n1, n2 and the byte
/// strides of levels 1 and 2 (isa/opcodes.def, TPUSIM_DMA_DESCRIPTOR_).
struct DmaBoxPiece {
  int64_t src_off = 0, dst_off = 0;
  int64_t n0 = 1, n1 = 1, n2 = 1;
  int64_t ss1 = 0, ss2 = 0, ds1 = 0, ds2 = 0;
};

/// Fills the strided-descriptor fields every DMA opcode shares (a dma.* or indirect dma.gather /
/// dma.scatter operand struct `D`) from `p`, with the box origin at `src` / `dst`.
template <typename D>
void SetDmaPiece(D& d, const DmaBoxPiece& p, uint64_t src, uint64_t dst, int64_t elem_bytes) {
  d.src = src + static_cast<uint64_t>(p.src_off);
  d.dst = dst + static_cast<uint64_t>(p.dst_off);
  d.elem_bytes = static_cast<uint64_t>(elem_bytes);
  d.n0 = static_cast<uint64_t>(p.n0);
  d.n1 = static_cast<uint64_t>(p.n1);
  d.n2 = static_cast<uint64_t>(p.n2);
  d.src_s1 = static_cast<uint64_t>(p.ss1);
  d.src_s2 = static_cast<uint64_t>(p.ss2);
  d.dst_s1 = static_cast<uint64_t>(p.ds1);
  d.dst_s2 = static_cast<uint64_t>(p.ds2);
}

/// The box `dims` (outer to inner) with byte strides per dimension on both sides as few
/// descriptors as possible: dimensions contiguous on both sides across each other are merged, the
/// innermost run becomes n0 when it is contiguous (stride = elem_bytes), the next two levels n1/n2,
/// and any levels beyond are iterated, one piece per index (at most kMaxInstructionsPerCore + 1
/// pieces: the caller's size check fails beyond). Empty for a box with a zero dimension.
/// Unimplemented when a level exceeds the descriptor's fields (n0 < 2^32, n1/n2 < 2^24).
StatusOr<std::vector<DmaBoxPiece>> SplitDmaBox(std::span<const int64_t> src_strides,
                                               std::span<const int64_t> dst_strides,
                                               std::span<const int64_t> dims, int64_t elem_bytes);

/// An HBM array a kernel copies from or to: [address, address + bytes) in the dense layout the
/// simulator's memory holds, and the bytes the array takes in its TPU tiles (hlo/tiled_layout.h;
/// 0 = untiled).
struct HbmArray {
  uint64_t address = 0;
  int64_t bytes = 0;
  int64_t tiled_bytes = 0;
};

class CoreEmitter {
 public:
  CoreEmitter(isa::CoreProgram* core, int64_t vmem_bytes) : core_(core), vmem_bytes_(vmem_bytes) {}

  /// Tag for the instructions emitted from now on (index into Program::hlo_names).
  void set_tag(int32_t tag) { tag_ = tag; }
  int32_t tag() const { return tag_; }
  void Emit(const isa::Instruction& inst);
  template <typename Op>
  void Emit(const Op& op) {
    Emit(op.ToInstruction());
  }
  int64_t size() const { return static_cast<int64_t>(core_->instructions.size()); }

  /// Starts a kernel: all VMEM is free again.
  void ResetVmem() { vmem_top_ = 0; }
  /// VMEM bytes left for the current kernel.
  int64_t vmem_free() const { return vmem_bytes_ - vmem_top_; }
  int64_t vmem_bytes() const { return vmem_bytes_; }
  int64_t peak_vmem() const { return peak_vmem_; }
  /// Allocates `bytes` (64-byte aligned) of VMEM; nullopt-like failure is a ResourceExhausted built
  /// by the caller, so this returns -1 when it does not fit.
  int64_t AllocVmem(int64_t bytes);

  /// One strided copy `opcode` (dma.hbm_to_vmem / dma.vmem_to_hbm) of the box `dims` (outer to
  /// inner) with byte strides `src_strides` / `dst_strides` per dimension, elements of
  /// `elem_bytes`. Merges dimensions, uses the 3-level descriptor and issues one descriptor per
  /// remaining outer index. Returns the number of descriptors issued (each signals `flag` once).
  StatusOr<int64_t> Dma(isa::Opcode opcode, uint64_t src, std::span<const int64_t> src_strides,
                        uint64_t dst, std::span<const int64_t> dst_strides,
                        std::span<const int64_t> dims, int64_t elem_bytes, uint64_t flag);
  /// A contiguous copy of `bytes` bytes (one descriptor).
  void DmaContiguous(isa::Opcode opcode, uint64_t src, uint64_t dst, int64_t bytes,
                     int64_t elem_bytes, uint64_t flag);
  /// The HBM arrays of the kernel being emitted. Every DMA to or from HBM that starts inside one of
  /// them gets `hbm_bytes` = its elements' share of the array's tiled bytes (rounded up): the TPU
  /// moves whole tiles (TPUSIM_DMA_HBM_TILES_ in isa/opcodes.def). Overlapping arrays (a view of
  /// another) resolve to the one starting last.
  void set_hbm_arrays(std::vector<HbmArray> arrays) { hbm_arrays_ = std::move(arrays); }
  /// The HBM bytes a copy of `bytes` logical bytes starting at HBM `address` moves.
  uint64_t HbmBytes(uint64_t address, uint64_t bytes) const;

  /// sync.wait for `count` signals of `flag` (nothing if count == 0).
  void Wait(uint64_t flag, int64_t count);

  Status CheckSize() const;

 private:
  isa::CoreProgram* core_;
  int64_t vmem_bytes_;
  int64_t vmem_top_ = 0;
  int64_t peak_vmem_ = 0;
  int32_t tag_ = isa::kNoHloTag;
  std::vector<HbmArray> hbm_arrays_;

  void EmitDma(isa::Opcode opcode, isa::op::DmaHbmToVmem d);
};

/// Row-major byte strides of `dims` with `elem_bytes` elements.
std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims, int64_t elem_bytes);

}  // namespace tpusim::compiler
