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

class CoreEmitter {
 public:
  CoreEmitter(isa::CoreProgram* core, int64_t vmem_bytes) : core_(core), vmem_bytes_(vmem_bytes) {}

  /// Tag for the instructions emitted from now on (index into Program::hlo_names).
  void set_tag(int32_t tag) { tag_ = tag; }
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
  /// sync.wait for `count` signals of `flag` (nothing if count == 0).
  void Wait(uint64_t flag, int64_t count);

  Status CheckSize() const;

 private:
  isa::CoreProgram* core_;
  int64_t vmem_bytes_;
  int64_t vmem_top_ = 0;
  int64_t peak_vmem_ = 0;
  int32_t tag_ = isa::kNoHloTag;
};

/// Row-major byte strides of `dims` with `elem_bytes` elements.
std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims, int64_t elem_bytes);

}  // namespace tpusim::compiler
